"""WorldValuesBench metrics (Zhao et al. 2024, Sec. 3.2-3.5), as pure functions on plain sequences.

Answers of one question are rescaled to [0, 1] by ``(x - scale_min) / (scale_max - scale_min)`` so that questions
with different scales are comparable, and the human and model answer distributions of the question are compared
with the Wasserstein-1 (earth mover's) distance. A question is "solved" at threshold ``t`` when its W1 <= t; the
threshold curve is the share of questions solved for t = 0, 0.05, ..., 1.0 (Fig. 3).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy.stats import wasserstein_distance

THRESHOLD_STEPS = 20
"""The threshold grid is k / THRESHOLD_STEPS for k = 0..THRESHOLD_STEPS (0.00, 0.05, ..., 1.00)."""
EPSILON = 1e-9
"""Tolerance of ``W1 <= t``: a distance computed as 0.30000000000000004 counts as within 0.30."""


def rescale(values: Iterable[float], scale_min: int, scale_max: int) -> np.ndarray:
    """Answers mapped to [0, 1] by (x - scale_min) / (scale_max - scale_min) (Sec. 3.2)."""
    if scale_max <= scale_min:
        raise ValueError(f"scale_max ({scale_max}) must exceed scale_min ({scale_min})")
    return (np.asarray(list(values), dtype=float) - scale_min) / (scale_max - scale_min)


def w1(human: Sequence[int], model: Sequence[int], scale_min: int, scale_max: int) -> float:
    """Wasserstein-1 distance between the rescaled human and model answers of one question (Sec. 3.2, Table 2).

    0 for identical distributions, 1 for all answers at opposite ends of the scale."""
    if len(human) == 0 or len(model) == 0:
        raise ValueError("W1 needs at least one human and one model answer")
    return float(wasserstein_distance(rescale(human, scale_min, scale_max), rescale(model, scale_min, scale_max)))


def w1_from_counts(human: np.ndarray, model: np.ndarray, steps: np.ndarray,
                   gaps: np.ndarray | None = None) -> np.ndarray:
    """``w1`` of many pairs of answer distributions at once, from answer counts (cells x points) and each cell's
    ``steps`` = scale_max - scale_min. The points are answers in increasing order and ``gaps`` the distance from
    each to the next (``support_points``; None: consecutive integers, gaps of 1). Both CDFs are steps at the
    points, so Sec. 3.2's integral of |U - V| over the rescaled axis is sum_k |U(k) - V(k)| * gap_k / steps. NaN for
    a cell without human or without model answers. Used by the scoring and by the bootstrap, which recomputes W1
    on thousands of resamples."""
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.cumsum(human, axis=-1) / human.sum(axis=-1, keepdims=True)
        v = np.cumsum(model, axis=-1) / model.sum(axis=-1, keepdims=True)
        distance = np.abs(u - v) if gaps is None else np.abs(u - v) * gaps
        return distance.sum(axis=-1) / steps


def support_points(offsets: np.ndarray, max_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The points of ``w1_from_counts`` for answers given as offsets from their question's scale_min: every scale
    point 0..max_steps and every other offset answered (a whole-number answer off the scale, however far), sorted;
    and the gap from each point to the next (0 after the last). As many points as distinct answers, not as the
    range they span: an answer of 10**9 adds one point."""
    points = np.union1d(np.arange(max_steps + 1, dtype=np.int64), np.asarray(offsets, dtype=np.int64))
    return points, np.append(np.diff(points), 0)


def uniform_w1(human: Sequence[int], scale_min: int, scale_max: int) -> float:
    """Oracle baseline "uniform": W1 between the human answers and the uniform distribution over the integer scale
    points scale_min..scale_max (exact, with weights; no sampling)."""
    if len(human) == 0:
        raise ValueError("W1 needs at least one human answer")
    points = np.arange(scale_min, scale_max + 1)
    return float(wasserstein_distance(rescale(human, scale_min, scale_max), rescale(points, scale_min, scale_max),
                                      v_weights=np.ones(len(points))))


def majority_answer(human: Sequence[int]) -> int:
    """The most frequent human answer; ties go to the smallest answer (deterministic)."""
    if len(human) == 0:
        raise ValueError("no human answers")
    counts = Counter(int(h) for h in human)
    top = max(counts.values())
    return min(answer for answer, count in counts.items() if count == top)


def majority_w1(human: Sequence[int], scale_min: int, scale_max: int) -> float:
    """Oracle baseline "majority": W1 between the human answers and a model that always gives the group's majority
    human answer (= mean |h - majority| on the rescaled scale)."""
    return w1(human, [majority_answer(human)], scale_min, scale_max)


def per_group_majority_w1(groups: Sequence[Sequence[int]], scale_min: int, scale_max: int) -> float:
    """WVB Sec. 3.3 (2) read per demographic group: every participant is predicted the majority answer of their own
    group; W1 between all groups' human answers and all those predictions (one per human answer)."""
    human = [int(h) for group in groups for h in group]
    predicted = [majority_answer(group) for group in groups for _ in group]
    return w1(human, predicted, scale_min, scale_max)


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
