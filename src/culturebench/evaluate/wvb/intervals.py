"""WorldValuesBench intervals (issue #18): a seeded bootstrap over participants within each question recomputes
every W1 statistic (``W1Bootstrap``); ``add_intervals`` writes them into metrics.json, ``bootstrap_intervals``
serves ``compare`` (paired differences)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.wvb import measures
from culturebench.evaluate.wvb.items import question_order
from culturebench.evaluate.wvb.measures import AnswerCounts

# ------------------------------------------------------------------------------------------------ uncertainty
# Issue #18: intervals by a seeded bootstrap over participants within each question (the unit of sampling of
# Sec. 3.1's probe: 5 answers per demographic group and question). One resample of (question, participant) units
# serves every model scored together, so their differences are paired.

GROUP_COLUMNS = {"continent": "continent", "urban_rural": "urban_rural", "probe_education_level": "education_level"}
"""Breakdowns of metrics.json ``groups`` that get intervals -> the column of the covered rows holding the group."""

BOOTSTRAP_NOTE = {
    "statistic": "per question, W1 (Sec. 3.2) between the resampled participants' human answers and their model "
                 "answers, recomputed on every resample; then Table 2's mean and std over questions, Fig. 3's "
                 "threshold curve, the uniform and pooled majority baselines' means, and per group (continent, "
                 "urban/rural, education level) the mean over questions of the W1 of the group's resampled "
                 "participants",
    "paired": "one resample of (question, participant) units serves every model, so differences are paired",
    "bias": "W1 between two samples is biased upward by sampling noise where it is near 0, and the std over "
            "questions by the noise of each question's W1, so resampled values run above these estimates and a "
            "percentile interval may sit just above them (mean_bootstrap_bias and std_bootstrap_bias: mean of the "
            "resamples minus the estimate)",
    "significance": "difference of mean W1 between two models over the questions both have a W1 (overall and per "
                    "continent / education level, groups small for either model left out): two-sided p-value of "
                    "difference = 0 with the standard error of the paired bootstrap distribution (normal "
                    "approximation, uncertainty.bootstrap_pvalue), Holm-adjusted over all rows; significant when "
                    "the adjusted p < 1 - confidence level",
}
"""How WVB's intervals are computed (recorded in metrics.json under ``uncertainty``)."""
DIFFERENCE_KINDS = ("continent", "probe_education_level")
"""Breakdowns whose per-group differences between models are tested (besides the overall mean)."""


@dataclass
class PatternRows:
    """The answers in the rows of every distinct unit pattern of one model (a pattern: a question and the multiset
    of its rows' answers and groups, every model's; units of one pattern are interchangeable in a resample), each
    already located once: per answer kind (``human``, ``model``) the index ``cell * points + point`` of every answer
    in every cell it counts in (the question's, then its group's of each of GROUP_COLUMNS) and the pattern it
    belongs to."""

    human: tuple[np.ndarray, np.ndarray]  # (cell-point index, pattern)
    model: tuple[np.ndarray, np.ndarray]

    def counts(self, weights: np.ndarray, size: int) -> list[np.ndarray]:
        """Human and model answer counts per (cell, point), ``size`` of them, when pattern ``p`` is drawn
        ``weights[p]`` times."""
        return [np.bincount(index, weights=weights[pattern], minlength=size)
                for index, pattern in (self.human, self.model)]


def _unit_key(rows: pl.DataFrame) -> pl.Expr:
    """``unit``: the participant id, or for a model sample without a participant minus its order among those of
    its question (the window over questions only when ``rows`` has such samples: it holds a column per row)."""
    if rows["participant_id"].null_count() == 0:
        return pl.col("participant_id").alias("unit")
    extra = pl.col("participant_id").is_null().cast(pl.Int64).cum_sum().over("question_id")
    return pl.when(pl.col("participant_id").is_null()).then(-extra).otherwise(pl.col("participant_id")).alias("unit")


class W1Bootstrap:
    """The bootstrap of every model's W1 statistics over the same units (``resample_units`` with one stratum per
    question). ``scored``: model -> covered rows of ``score_answers`` (ScoreResult.rows), ``counts``: each model's
    ``AnswerCounts`` of them (ScoreResult.counts), in the same order; nothing of the rows is kept:
    the dict is emptied once they are coded, so that rows handed over with their only reference are freed before
    the units are sorted (``score_answers``).

    A resample is a count per unit pattern (``unit_pattern``: the pattern of each unit, 4 bytes a unit), from which
    the answer counts of every cell follow through the patterns' rows (``PatternRows``): the memory is the
    distinct patterns', not the rows'. The units, their numbering and scipy's draws are the same as resampling
    the rows themselves, so are the intervals."""

    def __init__(self, scored: dict[str, pl.DataFrame], counts: Sequence[AnswerCounts]):
        self.models = list(scored)
        self.sizes = {m: {kind: group_sizes(rows, kind) for kind in GROUP_COLUMNS} for m, rows in scored.items()}
        """model -> breakdown -> ``group_sizes``: what the group tables report beside the intervals."""
        # the questions, their scales, the answers' axis and the groups from each model's ``AnswerCounts`` of the
        # same rows (cells x answers), not from the rows: three passes over them took 13-22 MiB at 600k rows
        covered = [c.human.select(pl.col(column).cast(pl.String) for column in ("question_id", *GROUP_COLUMNS.values()))
                   for c in counts]
        scales = pl.concat([c.scales.select(pl.col("question_id").cast(pl.String), "scale_min", "scale_max")
                            .join(q.select("question_id").unique(), on="question_id")
                            for c, q in zip(counts, covered)], how="vertical_relaxed").unique("question_id", keep="first")
        self.questions = sorted(scales["question_id"].to_list(), key=question_order)
        position = {q: i for i, q in enumerate(self.questions)}
        lows = dict(zip(scales["question_id"], scales["scale_min"]))
        self.steps = np.asarray([dict(zip(scales["question_id"], scales["scale_max"]))[q] - lows[q]
                                 for q in self.questions], dtype=float)
        # answers kept off the scale (score_answers) add points to the axis, one per distinct answer
        self.support, self.gaps = measures.support_points(np.concatenate([c.offsets for c in counts]),
                                                         int(self.steps.max()))
        self.points = self.support.size
        self.groups = {kind: sorted(pl.concat([q[column].drop_nulls().unique() for q in covered]).unique().to_list())
                       for kind, column in GROUP_COLUMNS.items()}
        n_q = len(self.questions)
        self.n_cells = n_q * (1 + sum(len(g) for g in self.groups.values()))
        self.cell_steps = np.tile(self.steps, self.n_cells // n_q)
        # each row as one integer (its question, model, answers and groups in mixed radix); a unit's pattern is the
        # sorted list of its rows' codes; units numbered in (question, unit) order, as the distinct units sorted
        self.radices = [n_q, len(self.models), self.points + 1, self.points + 1,
                        *(len(self.groups[kind]) + 1 for kind in GROUP_COLUMNS)]
        if math.prod(self.radices) >= 2 ** 63:
            raise ValueError(f"too many distinct answers ({self.points}) to code the bootstrap's rows")
        # the in-memory engine: on rows already in memory the streaming one took ~60 MB more at 600k rows
        coded = pl.concat([self._coded(rows, position, m) for m, rows in enumerate(scored.values())]
                          ).collect(engine="in-memory")
        scored.clear()
        self.strata, self.unit_pattern, pattern, codes = unit_patterns_by_question(coded)
        del coded
        self.n_patterns = int(self.unit_pattern.max()) + 1 if self.unit_pattern.size else 0
        model = self._digit(codes, 1)
        self.data = {name: self._pattern_rows(pattern[model == m], codes[model == m])
                     for m, name in enumerate(self.models)}

    def _digit(self, codes: np.ndarray, i: int) -> np.ndarray:
        """Digit ``i`` of rows' codes (``self.radices``)."""
        return (codes // math.prod(self.radices[i + 1:])) % self.radices[i]

    def _pattern_rows(self, pattern: np.ndarray, codes: np.ndarray) -> PatternRows:
        """One model's rows of the patterns (their pattern and code) with their cells located (``PatternRows``)."""
        n_q, p = len(self.questions), self.points
        q = self._digit(codes, 0)
        cells, offset = [q], n_q  # the question's cell, then each kind's (group x question)
        for k, kind in enumerate(GROUP_COLUMNS):
            g = self._digit(codes, 4 + k) - 1
            cells.append(np.where(g >= 0, offset + g * n_q + q, -1))
            offset += len(self.groups[kind]) * n_q
        located = []
        for point in (self._digit(codes, 2) - 1, self._digit(codes, 3) - 1):
            index = np.concatenate([np.where((cell >= 0) & (point >= 0), cell * p + point, -1) for cell in cells])
            of = np.tile(pattern, len(cells))
            located.append((index[index >= 0], of[index >= 0]))
        return PatternRows(human=located[0], model=located[1])

    def _coded(self, rows: pl.DataFrame, position: dict[str, int], model: int) -> pl.LazyFrame:
        """One model's covered rows as q (question position), unit and code: the row's question, model, human
        and model answers (positions on the axis + 1, 0: none) and a group code per kind (+ 1, 0: none) in the
        mixed radix of ``self.radices``."""
        digits = [pl.col("question_id").replace_strict(position, return_dtype=pl.Int64), pl.lit(model, pl.Int64),
                  *(_point_index(pl.col(answer) - pl.col("scale_min"), self.support).cast(pl.Int64) + 1
                    for answer in ("human", "model")),
                  *(pl.col(column).replace_strict({g: i for i, g in enumerate(self.groups[kind])}, default=-1,
                                                  return_dtype=pl.Int64).fill_null(-1) + 1
                    for kind, column in GROUP_COLUMNS.items())]
        code = digits[0]
        for digit, radix in zip(digits[1:], self.radices[1:]):
            code = code * radix + digit
        return rows.lazy().select(pl.col("question_id").replace_strict(position, return_dtype=pl.Int32).alias("q"),
                                  _unit_key(rows), code.alias("code"))

    def cells(self, model: str, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """W1 per cell when pattern ``p`` is drawn ``weights[p]`` times: the questions, then each group of each kind
        (group x question); NaN where a cell has no human or no valid model answer. Also the questions' human
        answer counts."""
        human, answers = (c.reshape(self.n_cells, self.points)
                          for c in self.data[model].counts(weights, self.n_cells * self.points))
        return measures.w1_from_counts(human, answers, self.cell_steps, self.gaps), human[:len(self.questions)]

    def per_model(self, model: str, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Every statistic of one model when pattern ``p`` is drawn ``weights[p]`` times."""
        w1, human = self.cells(model, weights)
        n_q = len(self.questions)
        out = {"per_question": w1[:n_q]}
        out["mean"], out["std"] = _nan_mean_std(w1[:n_q])
        values = w1[:n_q][np.isfinite(w1[:n_q])]
        out["curve"] = (np.asarray([np.mean(values <= t + measures.EPSILON) for _, t in measures.threshold_grid()])
                        if values.size else np.full(measures.THRESHOLD_STEPS + 1, np.nan))
        out["uniform"] = _nan_mean_std(measures.uniform_w1_from_counts(human, self.support, self.steps, self.gaps))[0]
        out["majority"] = _nan_mean_std(measures.majority_w1_from_counts(human, self.steps, self.gaps))[0]
        offset = n_q
        for kind, names in self.groups.items():
            out[kind] = w1[offset:offset + len(names) * n_q].reshape(len(names), n_q)
            offset += len(names) * n_q
        return out

    def run(self, settings: uncertainty.Bootstrap, pairs: list[tuple[str, str, str | None, str | None]]
            ) -> tuple[uncertainty.Resampled, dict]:
        """The bootstrap; ``pairs``: (model a, model b, kind or None for all questions, group) whose difference of
        mean W1 (over the questions both have a W1) is tested. Returns the result and where each statistic sits
        in its vector: (model, name) -> slice, ("difference", i) -> index of pairs[i]."""
        layout: dict = {}

        def statistic(units: np.ndarray) -> np.ndarray:
            weights = np.bincount(self.unit_pattern[units], minlength=self.n_patterns).astype(float)
            values = {m: self.per_model(m, weights) for m in self.models}
            blocks = []
            for m in self.models:
                v = values[m]
                group_means = {kind: _nan_mean_std(v[kind])[0] for kind in self.groups}
                for name, block in (("per_question", v["per_question"]), ("mean", v["mean"]), ("std", v["std"]),
                                    ("curve", v["curve"]), ("uniform", v["uniform"]), ("majority", v["majority"]),
                                    *group_means.items()):
                    block = np.atleast_1d(block)
                    start = sum(b.size for b in blocks)
                    layout[(m, name)] = slice(start, start + block.size)
                    blocks.append(block)
            for i, (a, b, kind, group) in enumerate(pairs):
                if kind is None:
                    x, y = values[a]["per_question"], values[b]["per_question"]
                else:
                    g = self.groups[kind].index(group)
                    x, y = values[a][kind][g], values[b][kind][g]
                layout[("difference", i)] = sum(b.size for b in blocks)
                blocks.append(np.atleast_1d(_nan_mean_std(x - y)[0]))
            return np.concatenate(blocks)

        return uncertainty.resample_units(self.strata, statistic, settings, unit="participant",
                                          stratum="question"), layout


def unit_patterns_by_question(coded: pl.DataFrame) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """The units of ``coded`` (q, unit, code: one row each) and their patterns, a question at a time (a pattern
    holds its question, so no two questions share one; a question's rows at once hold a fraction of the memory of
    all rows): the units of each question (its stratum: their positions, int32 where they fit, units numbered in
    (question, unit) order, the distinct units sorted), the pattern of each unit (int32, dense from 0), and the rows
    of one unit of each pattern: their pattern and code."""
    q, unit, codes = (coded[column].to_numpy() for column in ("q", "unit", "code"))
    position = np.int32 if q.size <= np.iinfo(np.int32).max else np.int64  # of a unit (there are no more than rows)
    by_question = np.argsort(q, kind="stable")
    sizes = np.bincount(q)
    strata = []
    unit_pattern, pattern = [np.zeros(0, dtype=np.int32)], [np.zeros(0, dtype=np.int32)]
    pattern_codes = [np.zeros(0, dtype=np.int64)]
    n_units = n_patterns = 0
    for end, size in zip(np.cumsum(sizes), sizes):
        if not size:
            continue
        at = by_question[end - size:end]
        at = at[np.lexsort((codes[at], unit[at]))]
        units, question_codes = unit[at], codes[at]
        first = np.flatnonzero(np.append(True, units[1:] != units[:-1]))
        keys, rows, of = unit_patterns(question_codes, first)
        strata.append(np.arange(n_units, n_units + first.size, dtype=position))
        unit_pattern.append(keys + n_patterns)
        pattern.append(of + n_patterns)
        pattern_codes.append(question_codes[rows])
        n_units += first.size
        n_patterns += int(keys.max()) + 1
    return strata, np.concatenate(unit_pattern), np.concatenate(pattern), np.concatenate(pattern_codes)


def unit_patterns(codes: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pattern of each unit (int32, dense from 0), and the rows of one unit of each pattern: their positions
    in ``codes`` and their pattern. The units
    are the runs of ``codes`` that start at ``first``, each run sorted: two units have one pattern when their runs
    are equal. Column j of the units' runs is folded into the pattern at a time (one np.unique per row a unit
    can have), so nothing but a few integers per unit is held."""
    sizes = np.diff(np.append(first, codes.size))
    key = np.zeros(first.size, dtype=np.int64)
    representative = np.zeros(0, dtype=np.intp)  # the first unit of each pattern (none without units)
    for j in range(int(sizes.max()) if first.size else 0):
        column = np.full(first.size, -1, dtype=np.int64)
        column[sizes > j] = codes[first[sizes > j] + j]
        pairs = np.column_stack([key, column]) if j else column
        _, representative, key = np.unique(pairs, axis=0 if j else None, return_index=True, return_inverse=True)
        key = key.ravel()
    counts = sizes[representative]
    ends = np.cumsum(counts)
    rows = np.repeat(first[representative] - ends + counts, counts) + np.arange(ends[-1] if ends.size else 0)
    return key.astype(np.int32), rows, np.repeat(np.arange(representative.size, dtype=np.int32), counts)


def _point_index(offset: pl.Expr, support: np.ndarray) -> pl.Expr:
    """Int32 position of each answer offset among the sorted ``support`` points (-1: no answer)."""
    return offset.replace_strict(pl.Series(support), pl.Series(np.arange(support.size, dtype=np.int32)), default=-1,
                                 return_dtype=pl.Int32).fill_null(-1)


def _nan_mean_std(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population std over the last axis of the finite values (NaN where there are none), as
    ``measures.mean_std`` leaves out questions without a W1."""
    ok = np.isfinite(values)
    n = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, values, 0.0).sum(axis=-1) / np.where(n, n, np.nan)
        spread = np.where(ok, (values - np.expand_dims(mean, -1)) ** 2, 0.0).sum(axis=-1) / np.where(n, n, np.nan)
    return mean, np.sqrt(spread)


def group_sizes(rows: pl.DataFrame, kind: str) -> list[dict]:
    """Per group of ``kind``: n_rows (covered rows), n_participants, n_questions and answers_per_question (the
    median over its questions of its human answers: the sample behind each of its W1s)."""
    column = GROUP_COLUMNS[kind]
    keyed = rows.lazy().filter(pl.col(column).is_not_null())
    per_question = (keyed.filter(pl.col("human").is_not_null()).group_by(column, "question_id").len()
                    .group_by(column).agg(pl.col("len").median().alias("answers_per_question"),
                                          pl.len().alias("n_questions")))
    sizes = keyed.group_by(column).agg(pl.len().alias("n_rows"), pl.col("participant_id").n_unique().alias("n_participants"))
    joined = (sizes.join(per_question, on=column, how="left").with_columns(pl.col(column).cast(pl.String))
              .sort(column).collect(engine="streaming"))  # the streaming engine: a fraction of the memory
    return [{"group": r[column], "n_rows": r["n_rows"], "n_participants": r["n_participants"],
             "n_questions": r["n_questions"] or 0, "answers_per_question": r["answers_per_question"] or 0}
            for r in joined.iter_rows(named=True)]


def bootstrap_intervals(boot: W1Bootstrap, scored: dict[str, dict], settings: uncertainty.Bootstrap,
                        minimum: int = uncertainty.MIN_GROUP_SIZE) -> dict:
    """Intervals of every model's metrics (``scored``: model -> its metrics.json, in the order of ``boot``'s
    models) and the paired differences between models, from the ``W1Bootstrap`` of their covered rows:
    per model {per_question_ci, mean_ci, std_ci, threshold_curve_ci, baselines: {uniform, majority} mean_ci (the
    pooled majority only; None for per_group), group_breakdown: kind -> rows (sizes, mean W1 and interval, small,
    rank; small: fewer than ``minimum`` answers per question)}, ``differences`` (model_a, model_b, kind,
    group, difference, low, high, pvalue, pvalue_holm, significant, n_common_questions), and ``no_spread``: why
    the numbers over all questions have no interval and the differences no p-value or verdict, or None
    (``uncertainty.no_spread``: a question of one participant; a question's own W1 needs only its own two)."""
    breakdowns = boot.sizes
    small = {m: {kind: {r["group"] for r in rows if r["answers_per_question"] < minimum}
                 for kind, rows in kinds.items()} for m, kinds in breakdowns.items()}
    models = list(scored)
    pairs = [(a, b, None, None) for i, a in enumerate(models) for b in models[i + 1:]]
    pairs += [(a, b, kind, g) for i, a in enumerate(models) for b in models[i + 1:] for kind in DIFFERENCE_KINDS
              for g in boot.groups[kind] if g not in small[a][kind] | small[b][kind]
              and any(r["group"] == g for r in breakdowns[a][kind]) and any(r["group"] == g for r in breakdowns[b][kind])]
    result, layout = boot.run(settings, pairs)

    def span(model: str, name: str, own_question: bool = False) -> list[list[float | None]]:
        """The intervals of a statistic's outputs; ``own_question``: output k is question k's W1, drawn on its
        stratum alone (one stratum per question, in boot.questions order), else on every question."""
        at = range(*layout[(model, name)].indices(result.estimate.size))
        return [result.interval(i, strata=[k] if own_question else None) for k, i in enumerate(at)]

    out: dict = {"models": {}}
    for model in models:
        group_ci = {kind: dict(zip(boot.groups[kind], span(model, kind))) for kind in GROUP_COLUMNS}
        majority = scored[model]["baselines"]["majority"]["definition"] == "pooled"
        tables = {}
        for kind, rows in breakdowns[model].items():
            for row in rows:
                mean = scored[model]["groups"][kind].get(row["group"], {}).get("mean")
                low, high = group_ci[kind][row["group"]]
                row.update({"estimate": mean, "low": low, "high": high})
            tables[kind] = uncertainty.rank_groups(rows, minimum=minimum, size="answers_per_question",
                                                   lower_is_better=True)
        out["models"][model] = {
            "per_question_ci": dict(zip(boot.questions, span(model, "per_question", own_question=True))),
            "mean_ci": span(model, "mean")[0], "std_ci": span(model, "std")[0],
            **{f"{name}_bootstrap_bias": _bias(result, layout[(model, name)].start) for name in ("mean", "std")},
            "threshold_curve_ci": dict(zip((k for k, _ in measures.threshold_grid()), span(model, "curve"))),
            "baselines": {"uniform": span(model, "uniform")[0], "majority": span(model, "majority")[0] if majority else None},
            "groups_ci": group_ci, "group_breakdown": tables}
    rows = []
    for i, (a, b, kind, group) in enumerate(pairs):
        at = layout[("difference", i)]
        both = (np.isfinite(_per_question(scored[a], kind, group, boot.questions))
                & np.isfinite(_per_question(scored[b], kind, group, boot.questions)))
        low, high = result.interval(at)
        rows.append({"model_a": a, "model_b": b, "kind": kind or "all", "group": group or "all",
                     "difference": uncertainty.finite_or_none(result.estimate[at]), "low": low, "high": high,
                     "pvalue": result.pvalue(at), "n_common_questions": int(both.sum())})
    out["no_spread"] = result.no_spread()
    out["differences"] = uncertainty.holm_significance(rows, settings, [out["no_spread"]] * len(rows))
    return out


def _bias(result: uncertainty.Resampled, i: int) -> float | None:
    """Mean of the bootstrap distribution minus the estimate (BOOTSTRAP_NOTE "bias")."""
    values = result.distribution[i][np.isfinite(result.distribution[i])]
    return uncertainty.finite_or_none(values.mean() - result.estimate[i]) if values.size else None


def _per_question(metrics: dict, kind: str | None, group: str | None, questions: list[str]) -> np.ndarray:
    values = (metrics if kind is None else metrics["groups"][kind].get(group, {})).get("per_question") or {}
    return np.asarray([np.nan if values.get(q) is None else values[q] for q in questions], dtype=float)


def add_intervals(m: dict, boot: W1Bootstrap, settings: uncertainty.Bootstrap) -> None:
    """Write one run's intervals into its metrics ``m`` beside the values (``<key>_ci``), the group breakdowns,
    and how they were computed (``uncertainty``); ``boot``: the ``W1Bootstrap`` of its covered rows."""
    model = boot.models[0]
    both = bootstrap_intervals(boot, {model: m}, settings)
    mine = {**both["models"][model], "no_spread": both["no_spread"]}
    m["per_question_ci"] = {q: mine["per_question_ci"].get(q) for q in m["per_question"]}
    m["mean_ci"], m["std_ci"], m["threshold_curve_ci"] = mine["mean_ci"], mine["std_ci"], mine["threshold_curve_ci"]
    m["mean_bootstrap_bias"], m["std_bootstrap_bias"] = mine["mean_bootstrap_bias"], mine["std_bootstrap_bias"]
    for name, ci in mine["baselines"].items():
        m["baselines"][name]["mean_ci"] = ci
    for kind, cis in mine["groups_ci"].items():
        for group, ci in cis.items():
            if group in m["groups"][kind]:
                m["groups"][kind][group]["mean_ci"] = ci
    m["group_breakdown"] = mine["group_breakdown"]
    m["uncertainty"] = settings.record(unit="participant", strata="question",
                                       small_group="fewer than {} answers per question".format(uncertainty.MIN_GROUP_SIZE),
                                       statistic=BOOTSTRAP_NOTE["statistic"], bias=BOOTSTRAP_NOTE["bias"])
    uncertainty.warn_no_spread(m, m["uncertainty"], mine["no_spread"], "wvb")
