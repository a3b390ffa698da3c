"""WorldValuesBench metrics (Zhao et al. 2024, Sec. 3.2-3.5), as pure functions on answer counts.

Answers of one question are rescaled to [0, 1] by ``(x - scale_min) / (scale_max - scale_min)`` so that questions
with different scales are comparable, and the human and model answer distributions of the question are compared
with the Wasserstein-1 (earth mover's) distance. Distributions are given as counts per answer on one axis of points
(``support_points``), many cells (question, or question x group) at once. A question is "solved" at threshold ``t``
when its W1 <= t; the threshold curve is the share of questions solved for t = 0, 0.05, ..., 1.0 (Fig. 3).
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np

THRESHOLD_STEPS = 20
"""The threshold grid is k / THRESHOLD_STEPS for k = 0..THRESHOLD_STEPS (0.00, 0.05, ..., 1.00)."""
EPSILON = 1e-9
"""Tolerance of ``W1 <= t``: a distance computed as 0.30000000000000004 counts as within 0.30."""


def support_points(offsets: np.ndarray, max_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The axis of the counts, for answers given as offsets from their question's scale_min: every scale point
    0..max_steps and every other offset answered (a whole-number answer off the scale, however far), sorted; and
    the gap from each point to the next (0 after the last). As many points as distinct answers, not as the range
    they span: an answer of 10**9 adds one point."""
    points = np.union1d(np.arange(max_steps + 1, dtype=np.int64), np.asarray(offsets, dtype=np.int64))
    return points, np.append(np.diff(points), 0)


def w1_from_counts(human: np.ndarray, model: np.ndarray, steps: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """Sec. 3.2's W1 between the human and the model answers of each cell (rows of the counts, cells x points on
    the axis of ``support_points`` with its ``gaps``; ``steps``: each cell's scale_max - scale_min). Both CDFs are
    steps at the points, so the integral of |U - V| over the rescaled axis is sum_k |U(k) - V(k)| * gap_k / steps.
    NaN for a cell without human or without model answers."""
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.cumsum(human, axis=-1) / human.sum(axis=-1, keepdims=True)
        v = np.cumsum(model, axis=-1) / model.sum(axis=-1, keepdims=True)
        return (np.abs(u - v) * gaps).sum(axis=-1) / steps


def uniform_w1_from_counts(human: np.ndarray, points: np.ndarray, steps: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """Oracle baseline (1) of Sec. 3.3: W1 between each cell's human answers and the uniform distribution over its
    scale's points (offsets 0..steps); NaN for a cell without human answers."""
    uniform = ((points >= 0) & (points <= steps[:, None])).astype(float)
    return np.where(human.sum(axis=-1) > 0, w1_from_counts(human, uniform, steps, gaps), np.nan)


def majority_counts(human: np.ndarray) -> np.ndarray:
    """One prediction per cell at its most frequent human answer (Sec. 3.3 (2)); ties go to the smallest answer
    (the first point: ``argmax`` takes the first maximum)."""
    predicted = np.zeros_like(human, dtype=float)
    predicted[np.arange(human.shape[0]), human.argmax(axis=1)] = 1.0
    return predicted


def majority_w1_from_counts(human: np.ndarray, steps: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """Oracle baseline (2) of Sec. 3.3: W1 between each cell's human answers and a model that always gives the cell's
    majority answer (``majority_counts``); NaN for a cell without human answers."""
    return np.where(human.sum(axis=-1) > 0, w1_from_counts(human, majority_counts(human), steps, gaps), np.nan)


def threshold_grid() -> list[tuple[str, float]]:
    """The thresholds of the curve as (key, value): ("0.00", 0.0), ("0.05", 0.05), ..., ("1.00", 1.0)."""
    return [(f"{k / THRESHOLD_STEPS:.2f}", k / THRESHOLD_STEPS) for k in range(THRESHOLD_STEPS + 1)]


def threshold_curve(distances: Iterable[float]) -> dict[str, float | None]:
    """Share of questions with W1 <= t for t on the grid (Fig. 3); None for every t when there are no questions.
    Distances that are None or NaN (no valid model answer) are left out."""
    values = [d for d in distances if d is not None and not math.isnan(d)]
    return {key: (sum(d <= t + EPSILON for d in values) / len(values) if values else None) for key, t in threshold_grid()}


def mean_std(distances: Iterable[float]) -> tuple[float | None, float | None]:
    """Mean and (population, ddof=0) standard deviation of the per-question W1 over questions (Table 2)."""
    values = [d for d in distances if d is not None and not math.isnan(d)]
    if not values:
        return None, None
    return float(np.mean(values)), float(np.std(values))


def summary(per_question: Mapping[str, float | None]) -> dict:
    """``{"per_question", "mean", "std", "threshold_curve", "n_questions"}`` of per-question distances."""
    mean, std = mean_std(per_question.values())
    return {
        "per_question": dict(per_question),
        "mean": mean,
        "std": std,
        "threshold_curve": threshold_curve(per_question.values()),
        "n_questions": sum(1 for d in per_question.values() if d is not None and not math.isnan(d)),
    }
