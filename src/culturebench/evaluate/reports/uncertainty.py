"""Uncertainty of the headline numbers (issue #18), shared by every benchmark: seeded bootstrap intervals over the
benchmark's unit of sampling (participants within a question, questions, stories, prompts, scenarios: each
benchmark's ``intervals`` module says which), paired-difference tests, and per-group breakdowns with small groups flagged.

None of the five papers reports an interval; the point estimates stay the papers' own, computed as before, and the
bootstrap only adds an interval around them. Everything goes through ``scipy.stats.bootstrap``:

- ``mean_interval``: a plain mean of independent values (accuracy over stories, a score over scenarios):
  ``scipy.stats.bootstrap((values,), np.mean)``.
- ``resample_units``: any statistic of a set of units (template-weighted likelihoods, a distance over the
  participants of a question): the statistic gets the positions of a resample and recomputes itself from them.
  Units may be split into strata (e.g. the cells of a design), each resampled within itself, as scipy's
  multi-sample bootstrap does with one sample per stratum; a stratum of one unit is held as it is (a resample of
  one unit with replacement is that unit; scipy asks for two or more per sample). The statistic returns a vector,
  so every number derived from the same resamples (differences between models, similarities) shares them: paired.
- ``no_spread``: the rule of when resampling can estimate a spread at all (every stratum a number draws on holds
  at least ``MIN_UNITS_PER_STRATUM`` units); where it cannot, the number gets no interval, no p-value and no
  significance verdict, and the reason is recorded.
- ``bootstrap_pvalue``: the two-sided p-value of "the statistic is 0" from the bootstrap standard error (a normal
  approximation, with no floor set by the number of resamples), and ``stats.holm`` over a family.
- ``group_breakdown``: per group mean, interval and size; groups smaller than a minimum are flagged, not ranked.

``Bootstrap`` holds the settings and ``Bootstrap.record`` is what metrics.json stores beside the intervals:
resamples, seed, confidence level, interval method, unit and strata, and the scipy version.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from culturebench.words import counted, plural
from culturebench.evaluate.runs.limit import MIN_GROUP_SIZE

DEFAULT_RESAMPLES = 2000
"""Bootstrap resamples of the intervals metrics.json reports (``culturebench compare --n-resamples`` changes it)."""
CONFIDENCE_LEVEL = 0.95
MAX_RESAMPLED_POSITIONS = 4_000_000
"""Resampled unit positions scipy holds at once (its ``batch``): all resamples at once for a few hundred
questions, batches for thousands of participant answers. scipy holds its draws (int64) and two resampled
copies of the positions (int32, ``resample_units``) at once, ~64 MB; at 20M int64 (before issue #28) they were the
largest part of an evaluate's peak RSS. The batch sets
how scipy interleaves its draws across strata, so a run above this size gets other (equally valid) resamples
than with another batch."""
MIN_UNITS_PER_STRATUM = 2
"""Units a stratum needs before resampling within it can show any spread (``no_spread``)."""


@dataclass(frozen=True)
class Bootstrap:
    """Settings of every bootstrap of one run: ``method`` is scipy's ('percentile', 'basic' or 'BCa')."""

    n_resamples: int = DEFAULT_RESAMPLES
    confidence_level: float = CONFIDENCE_LEVEL
    seed: int = 0
    method: str = "percentile"

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)

    def record(self, *, unit: str, strata: str | None = None, **extra) -> dict:
        """What metrics.json records about the intervals: these settings, the unit resampled, the strata, the
        scipy version, and ``extra`` (a benchmark's own notes, e.g. what the statistic recomputes)."""
        from scipy import __version__ as scipy_version

        return {"method": "bootstrap", "tool": f"scipy.stats.bootstrap (scipy {scipy_version})",
                "interval_method": self.method, "n_resamples": self.n_resamples, "seed": self.seed,
                "confidence_level": self.confidence_level, "unit": unit, "strata": strata, **extra}


def no_spread(sizes: Sequence[int], *, unit: str = "unit", stratum: str = "stratum") -> str | None:
    """Why resampling within strata of ``sizes`` units cannot estimate the spread of a number drawn from them, or
    None when it can: the rule is that every stratum holding units holds at least MIN_UNITS_PER_STRATUM of them.

    A stratum of one unit is that unit in every resample (drawing one of one with replacement), so it adds no
    variation: with one unit per stratum every interval has zero width and any nonzero difference has a standard
    error of 0 (p = 0), and where only some strata are single the spread is understated by an unknown amount. A
    stratified variance estimate cannot be made from a stratum with a single sampling unit (the variance formula
    gives 0/0): R's survey package refuses such a stratum by default (``options(survey.lonely.psu = "fail")``),
    and so does this rule: no interval, p-value or significance verdict, and this reason said instead."""
    sizes = [int(n) for n in sizes if n]
    few = [n for n in sizes if n < MIN_UNITS_PER_STRATUM]
    if not few and sizes:
        return None
    if not sizes:
        return f"no {plural(unit)} to resample"
    strata = "strata" if stratum == "stratum" else plural(stratum)
    where = (f"only {counted(sizes[0], plural(unit))}" if len(sizes) == 1 else
             f"{len(few)} of {len(sizes)} {strata} {'hold' if len(few) > 1 else 'holds'} fewer than "
             f"{MIN_UNITS_PER_STRATUM} {plural(unit)}")
    return (f"{where}: a resample of a single {unit} is that {unit}, so resampling cannot estimate a spread (no "
            f"interval, p-value or significance; at least {MIN_UNITS_PER_STRATUM} {plural(unit)}"
            f"{f' per {stratum}' if len(sizes) > 1 else ''} are needed)")


@dataclass
class Resampled:
    """The result of ``resample_units``: per output of the statistic, its value on all units, the interval's
    bounds, the bootstrap distribution (outputs x resamples), and the size of each stratum given (in the given
    order, empty ones included) with the names of the unit and the stratum."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    distribution: np.ndarray
    stratum_sizes: tuple[int, ...] = ()
    unit: str = "unit"
    stratum: str = "stratum"

    def no_spread(self, strata: Sequence[int] | None = None) -> str | None:
        """``no_spread`` of the strata an output draws on (their positions in the given strata; None: all)."""
        if strata is None:
            return self.no_spread_of_all
        return no_spread([self.stratum_sizes[s] for s in strata], unit=self.unit, stratum=self.stratum)

    @cached_property
    def no_spread_of_all(self) -> str | None:
        return no_spread(self.stratum_sizes, unit=self.unit, stratum=self.stratum)

    def interval(self, i: int, strata: Sequence[int] | None = None) -> list[float | None]:
        """[low, high] of output ``i``, drawn on ``strata`` (None: all); [None, None] where ``no_spread``."""
        if self.no_spread(strata):
            return [None, None]
        return [finite_or_none(self.low[i]), finite_or_none(self.high[i])]

    def pvalue(self, i: int, null: float = 0.0, strata: Sequence[int] | None = None) -> float | None:
        """``bootstrap_pvalue`` of output ``i``, drawn on ``strata`` (None: all); None where ``no_spread``."""
        if self.no_spread(strata):
            return None
        return bootstrap_pvalue(self.distribution[i], self.estimate[i], null)


def finite_or_none(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def resample_units(strata: Sequence[Sequence[int]], statistic: Callable[[np.ndarray], np.ndarray],
                   settings: Bootstrap, *, unit: str = "unit", stratum: str = "stratum") -> Resampled:
    """Bootstrap of ``statistic(positions) -> 1-D array`` over units: each stratum (a list of unit positions) is
    resampled with replacement within itself by ``scipy.stats.bootstrap`` (one sample per stratum of two or more
    units; strata of one unit kept as they are); the statistic sees the positions of one resample concatenated
    (a unit drawn twice appears twice). ``estimate`` is the statistic of all units. An output that is NaN in some
    resample (a group the resample missed) has NaN bounds: no interval; nor has one whose strata are too small
    (``Resampled.no_spread``: ``unit`` and ``stratum`` name them in its reason)."""
    from scipy import stats

    sizes = tuple(len(s) for s in strata)
    strata = [np.asarray(s) for s in strata if len(s)]
    if not strata:
        raise ValueError("no units to resample")
    # int32 positions where every one fits: scipy's resampled copies of them are its largest arrays, and its draws
    # (indices into each stratum) do not depend on the data's type; strata already int32 are not copied
    small = np.iinfo(np.int32)
    wide = np.int32 if all(small.min <= s.min() and s.max() <= small.max for s in strata) else np.int64
    strata = [s.astype(wide, copy=False) for s in strata]
    dtype = strata[0].dtype
    varying = [s for s in strata if s.size >= 2]
    fixed = np.concatenate([s for s in strata if s.size < 2] or [np.empty(0, dtype=dtype)])
    estimate = np.atleast_1d(np.asarray(statistic(np.concatenate(strata)), dtype=float))
    if not varying:  # nothing can vary: every resample is the data itself
        distribution = np.repeat(estimate[:, None], settings.n_resamples, axis=1)
        return Resampled(estimate, estimate.copy(), estimate.copy(), distribution, sizes, unit, stratum)

    def on_resample(*samples: np.ndarray) -> np.ndarray:
        positions = np.concatenate([*samples, fixed]).astype(dtype, copy=False)
        return np.atleast_1d(np.asarray(statistic(positions), dtype=float))

    with warnings.catch_warnings():  # an output that is NaN in some resample gets no interval (None), silently
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(tuple(varying), on_resample, vectorized=False, n_resamples=settings.n_resamples,
                                 confidence_level=settings.confidence_level, method=settings.method,
                                 rng=settings.rng(),
                                 batch=max(1, MAX_RESAMPLED_POSITIONS // sum(s.size for s in varying)))
    distribution = np.atleast_2d(result.bootstrap_distribution)
    return Resampled(estimate, np.atleast_1d(result.confidence_interval.low),
                     np.atleast_1d(result.confidence_interval.high), distribution, sizes, unit, stratum)


def mean_interval(values: Sequence[float | None], settings: Bootstrap) -> dict:
    """A plain mean with its bootstrap interval (``scipy.stats.bootstrap((values,), np.mean)``), None and NaN
    dropped: n, estimate, low, high (None where ``no_spread`` of the one stratum of values: below two)."""
    from scipy import stats

    arr = np.asarray([np.nan if v is None else float(v) for v in values], dtype=float)
    arr = arr[np.isfinite(arr)]
    out = {"n": int(arr.size), "estimate": float(arr.mean()) if arr.size else None, "low": None, "high": None}
    if not no_spread([arr.size]):
        if np.ptp(arr) == 0:  # every resample has the same mean (scipy warns on a degenerate distribution)
            out["low"] = out["high"] = out["estimate"]
        else:
            result = stats.bootstrap((arr,), np.mean, n_resamples=settings.n_resamples,
                                     confidence_level=settings.confidence_level, method=settings.method,
                                     rng=settings.rng())
            out["low"], out["high"] = finite_or_none(result.confidence_interval.low), finite_or_none(result.confidence_interval.high)
    return out


def bootstrap_pvalue(distribution: Sequence[float], estimate: float, null: float = 0.0) -> float | None:
    """Two-sided p-value of ``statistic == null`` with the bootstrap standard error: z = (estimate - null) / SE,
    SE the standard deviation (ddof 1) of the bootstrap distribution, p = 2 (1 - Phi(|z|)). Unlike counting the
    resamples on either side of ``null``, this has no floor of 2 / (B + 1), so that Holm's correction over many
    comparisons can still find a difference with a few thousand resamples. SE = 0 (nothing varies): 1 when the
    estimate is ``null``, else 0."""
    from scipy.stats import norm

    d = np.asarray(distribution, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 2 or not np.isfinite(estimate):
        return None
    se = float(d.std(ddof=1))
    if se == 0:
        return 1.0 if estimate == null else 0.0
    return float(2 * norm.sf(abs(estimate - null) / se))


def holm_significance(rows: list[dict], settings: Bootstrap,
                      no_spread: Sequence[str | None] | None = None) -> list[dict]:
    """Each row's ``pvalue`` Holm-adjusted over all ``rows`` (``pvalue_holm``) and ``significant``: the adjusted
    p-value below 1 - the confidence level (a row without a p-value is not significant); returns ``rows``. A row
    whose entry of ``no_spread`` (one per row) is a reason (``no_spread``: resampling could not estimate the
    spread behind it) gets no verdict: ``significant`` None."""
    from culturebench.evaluate.reports.stats import holm

    alpha = 1 - settings.confidence_level
    reasons = no_spread or [None] * len(rows)
    for row, adjusted, reason in zip(rows, holm([r["pvalue"] for r in rows]), reasons):
        row["pvalue_holm"] = adjusted
        row["significant"] = None if reason else adjusted is not None and adjusted < alpha
    return rows


def warn_no_spread(metrics: dict, record: dict, reason: str | None, label: str) -> None:
    """Where resampling could not estimate a spread (``reason``, from ``no_spread``; nothing when None): the reason
    in ``record`` (``no_spread``, beside how the intervals were made) and ``label: reason`` in metrics.json's
    ``warnings``, which ``evaluate`` and ``score`` print."""
    if reason:
        record["no_spread"] = reason
        metrics.setdefault("warnings", []).append(f"{label}: {reason}")


def group_breakdown(values: Sequence[float | None], groups: Sequence[str | None], settings: Bootstrap, *,
                    minimum: int = MIN_GROUP_SIZE) -> list[dict]:
    """Per group (None groups left out): group, n, estimate (the mean), low, high (``mean_interval``), small
    (n < ``minimum``) and rank (1 = highest estimate among the groups that are not small; None for small ones);
    groups in rank order, then the small ones by name."""
    members: dict[str, list[float | None]] = {}
    for value, group in zip(values, groups):
        if group is not None:
            members.setdefault(str(group), []).append(value)
    rows = [{"group": g, **mean_interval(v, settings)} for g, v in sorted(members.items())]
    return rank_groups(rows, minimum=minimum)


def rank_groups(rows: list[dict], *, minimum: int = MIN_GROUP_SIZE, size: str = "n",
                lower_is_better: bool = False) -> list[dict]:
    """``rows`` (group, estimate and ``size``) with ``small`` (size < ``minimum`` or no estimate) and ``rank`` (1 =
    the best estimate among the groups that are not small: the highest, or the lowest with ``lower_is_better``;
    None for small ones); groups in rank order, then the small ones in their given order."""
    for row in rows:
        row["small"] = row[size] < minimum or row["estimate"] is None
    sign = 1 if lower_is_better else -1
    ranked = sorted((r for r in rows if not r["small"]), key=lambda r: (sign * r["estimate"], r["group"]))
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    small = [r for r in rows if r["small"]]
    for row in small:
        row["rank"] = None
    return [*ranked, *small]
