"""WorldValuesBench measures (Zhao et al. 2024, Sec. 3.2-3.3, Table 2, Fig. 3), as pure functions on answer counts
and tables.

Answers of one question are rescaled to [0, 1] by ``(x - scale_min) / (scale_max - scale_min)`` so that questions
with different scales are comparable, and the human and model answer distributions of the question are compared
with the Wasserstein-1 (earth mover's) distance. Distributions are given as counts per answer on one axis of points
(``support_points``), many cells (question, or question x group) at once. A question is "solved" at threshold ``t``
when its W1 <= t; the threshold curve is the share of questions solved for t = 0, 0.05, ..., 1.0 (Fig. 3).
``AnswerCounts`` counts the covered rows per cell; ``by_group`` gives every breakdown's W1 statistics and oracle
baselines (Sec. 3.3) from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np
import polars as pl

from culturebench.evaluate.wvb.items import question_order

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


def score_columns(drop_out_of_scale: bool = False, drop_non_integer: bool = False) -> list[pl.Expr]:
    """As the authors' evaluate.py (635db74) scores SCORE (``pd.to_numeric``, then ``astype(int)``): ``model`` is
    the number truncated toward zero ("2.6" -> 2), null when SCORE is no finite number; with ``drop_non_integer`` a
    non-whole number (or one the reply gave and the parser truncated: ``not_integer``) is null instead. A number off
    the question's scale is kept (rescaled like any other) unless ``drop_out_of_scale``. ``out_of_scale``: the
    answer is off the scale (kept or not); ``not_integer``: it was not a whole number (truncated or dropped)."""
    value = pl.col("score").cast(pl.Float64, strict=False)
    number = value.is_not_null() & value.is_finite()
    not_integer = number & ((value != value.floor()) | pl.col("not_integer").fill_null(False))
    truncated = value.cast(pl.Int64, strict=False)
    counted = number & ~not_integer if drop_non_integer else number
    off_scale = counted & ((truncated < pl.col("scale_min")) | (truncated > pl.col("scale_max")))
    valid = counted & ~off_scale if drop_out_of_scale else counted
    return [pl.when(valid).then(truncated).otherwise(None).alias("model"),
            off_scale.fill_null(False).alias("out_of_scale"), not_integer.fill_null(False).alias("not_integer")]


def out_of_scale_report(covered: pl.DataFrame, drop_out_of_scale: bool) -> dict:
    """metrics.json ``out_of_scale``: whether whole-number answers off the question's scale were kept (the
    authors' evaluate.py) or dropped (``--drop-out-of-scale``), their count, and per question their share of the
    question's model answers (padding rows without a model sample not counted)."""
    per_question = (covered.filter(pl.col("has_model")).group_by("question_id")
                    .agg(pl.col("out_of_scale").sum().alias("n"), pl.col("out_of_scale").mean().alias("share")))
    shares = dict(sorted(per_question.select("question_id", "share").iter_rows(),
                         key=lambda item: question_order(item[0])))
    return {"answers": "dropped" if drop_out_of_scale else "kept", "n": int(per_question["n"].sum()),
            "share_per_question": shares}


def non_integer_report(covered: pl.DataFrame, drop_non_integer: bool) -> dict:
    """metrics.json ``non_integer``: whether answers that are not whole numbers were truncated toward zero (the
    authors' evaluate.py, ``astype(int)``) or dropped (``--drop-non-integer``), and their number."""
    n = int(covered.filter(pl.col("has_model"))["not_integer"].sum())
    return {"answers": "dropped" if drop_non_integer else "truncated", "n": n}


CELL_COLUMNS = ("question_id", "continent", "urban_rural", "probe_continent", "probe_urban_rural", "education_level")
"""The finest cell the covered rows are counted in: every breakdown of metrics.json sums these counts."""
PROBE_GROUP = ("probe_continent", "probe_urban_rural", "education_level")
"""A participant's probe group (Sec. 3.1): the unit of the per-group majority baseline."""
BREAKDOWNS = {"continent": ("continent",), "urban_rural": ("urban_rural",), "probe_group": PROBE_GROUP,
              "probe_education_level": ("education_level",)}
"""metrics.json ``groups``: breakdown -> the columns whose values name a group (rows with a null left out)."""


@dataclass
class AnswerCounts:
    """Covered rows counted per cell (CELL_COLUMNS): ``human`` by human answer (null: a model sample without a
    participant), ``model`` by model answer and has_model (null: invalid, or a padding row when has_model is
    false); each with ``n``. ``scales``: question_id, scale_min, scale_max (the release's). ``offsets``: the distinct
    answers' offsets from scale_min (human and model); ``points``/``gaps``: them and the scales' points on one axis
    (``support_points``). Small: cells x answers, whatever the rows."""

    human: pl.DataFrame
    model: pl.DataFrame
    scales: pl.DataFrame
    offsets: np.ndarray
    points: np.ndarray
    gaps: np.ndarray

    @classmethod
    def of(cls, covered: pl.DataFrame, profiles: pl.DataFrame, scales: pl.DataFrame) -> AnswerCounts:
        """Counts of the covered rows, whose ``profile`` numbers a row of ``profiles`` (its CELL_COLUMNS but the
        question: a participant's groups, coded once per participant so that the rows are grouped by integers)."""
        human, model = pl.collect_all(  # the streaming engine: half the peak memory of the in-memory group_by
            [covered.lazy().group_by("question_id", "profile", *answer).len("n")
             .join(profiles.lazy(), on="profile", how="left").drop("profile")
             for answer in (["human"], ["model", "has_model"])], engine="streaming")
        offsets = pl.concat([
            human.join(scales, on="question_id").select((pl.col("human") - pl.col("scale_min")).alias("offset")),
            model.join(scales, on="question_id").select((pl.col("model") - pl.col("scale_min")).alias("offset"))])
        offsets = offsets["offset"].drop_nulls().unique().sort().to_numpy()
        steps = (scales["scale_max"] - scales["scale_min"]).max()
        return cls(human, model, scales, offsets, *support_points(offsets, int(steps or 0)))

    def histograms(self, frame: pl.DataFrame, answer: str, cells: pl.DataFrame, keys: list[str]) -> np.ndarray:
        """Counts of ``answer`` (non-null) per row of ``cells`` (its ``cell`` column numbers them) x point."""
        known = (frame.filter(pl.col(answer).is_not_null())
                 .join(cells, on=keys).join(self.scales, on="question_id")
                 .select("cell", (pl.col(answer) - pl.col("scale_min")).alias("offset"), "n"))
        at = np.searchsorted(self.points, known["offset"].to_numpy())
        flat = np.bincount(known["cell"].to_numpy() * self.points.size + at, weights=known["n"].to_numpy(),
                           minlength=cells.height * self.points.size)
        return flat.reshape(cells.height, self.points.size)


def by_group(counts: AnswerCounts, by: tuple[str, ...], majority: str) -> dict[tuple, dict]:
    """Per group of ``by`` (() for all rows; rows with a null in ``by`` left out) the metrics of its rows:
    per-question W1 of the model and of the uniform and majority baselines, their mean, std and threshold curves
    (``summary``), n_rows and n_invalid. A question whose model answers are all invalid gets W1 None (left
    out of the mean and the curve); with ``majority="per_group"`` a question without probe rows gets a majority W1
    of None. Groups in sorted order, questions in natural order."""
    keys = [*by, "question_id"]
    human = counts.human.drop_nulls(list(by))
    model = counts.model.drop_nulls(list(by))
    cells = human.group_by(keys).agg(pl.col("n").sum().alias("n_rows"))
    names = cells.select(keys).rows()
    cells = cells[sorted(range(cells.height), key=lambda i: (names[i][:-1], question_order(names[i][-1])))]
    cells = cells.with_row_index("cell")
    steps = (cells.join(counts.scales, on="question_id", maintain_order="left")
             .select(pl.col("scale_max") - pl.col("scale_min")).to_series().to_numpy().astype(float))
    human_counts = counts.histograms(human, "human", cells, keys)
    w1 = w1_from_counts(human_counts, counts.histograms(model, "model", cells, keys), steps, counts.gaps)
    baselines = {"uniform": uniform_w1_from_counts(human_counts, counts.points, steps, counts.gaps),
                 "majority": (majority_w1_from_counts(human_counts, steps, counts.gaps) if majority == "pooled"
                              else per_group_majority(counts, human, cells, keys, steps))}
    invalid_rows = model.filter(pl.col("has_model") & pl.col("model").is_null())
    invalid = ({tuple(row[:-1]): row[-1] for row in invalid_rows.group_by(list(by)).agg(pl.col("n").sum()).iter_rows()}
               if by else {(): invalid_rows["n"].sum()})
    out: dict[tuple, dict] = {}
    for key, part in (cells.group_by(list(by), maintain_order=True) if by else [((), cells)]):
        at = part["cell"].to_numpy()
        questions = part["question_id"].to_list()
        result = summary({q: finite(w1[i]) for q, i in zip(questions, at)})
        result["n_rows"] = int(part["n_rows"].sum())
        result["n_invalid"] = int(invalid.get(tuple(key), 0))
        result["baselines"] = {
            "uniform": summary({q: finite(baselines["uniform"][i]) for q, i in zip(questions, at)}),
            "majority": {"definition": majority,
                         **summary({q: finite(baselines["majority"][i]) for q, i in zip(questions, at)})}}
        out[tuple(key)] = result
    return out


def per_group_majority(counts: AnswerCounts, human: pl.DataFrame, cells: pl.DataFrame, keys: list[str],
                       steps: np.ndarray) -> np.ndarray:
    """Sec. 3.3 (2) read per demographic group, per cell: W1 between the human answers of the cell's probe rows and
    a prediction per answer of its probe group's majority answer (ties: the smallest); NaN without probe rows."""
    probe = human.drop_nulls([*PROBE_GROUP, "human"])
    group_keys = list(dict.fromkeys([*keys, *PROBE_GROUP]))  # ``keys`` may hold the probe group already
    groups = (probe.select(group_keys).unique(maintain_order=True)
              .join(cells.select(*keys, pl.col("cell").alias("owner")), on=keys).with_row_index("cell"))
    per_group = counts.histograms(probe, "human", groups.drop("owner"), group_keys)
    owner = groups["owner"].to_numpy()
    human_counts = np.zeros((cells.height, counts.points.size))
    np.add.at(human_counts, owner, per_group)
    predicted = np.zeros_like(human_counts)
    np.add.at(predicted, owner, majority_counts(per_group) * per_group.sum(axis=1, keepdims=True))
    return np.where(human_counts.sum(axis=1) > 0,
                    w1_from_counts(human_counts, predicted, steps, counts.gaps), np.nan)


def finite(value: float) -> float | None:
    """A float, or None for NaN or an infinity (metrics.json holds no NaN)."""
    return float(value) if np.isfinite(value) else None


@dataclass
class ScoreResult:
    metrics: dict
    plotted: pl.DataFrame
    """The covered rows of the questions histograms.png draws (``plots.plotted_rows``)."""
    rows: pl.DataFrame | None = None
    """Covered rows: question_id, participant_id, human, model (null when invalid), scale_min, scale_max, has_model,
    the groups of GROUP_COLUMNS (continent, urban_rural, education_level; null when unknown); text columns
    categorical. Kept only when no bootstrap was asked (``compare`` bootstraps its runs together from them); else
    None: the run's bootstrap is made from them before it resamples, and a run of millions does not hold them
    while it does."""
    counts: AnswerCounts | None = None
    """The ``AnswerCounts`` of ``rows`` (the bootstrap's questions, axis and groups), kept with them."""
