"""SocialCC's intervals (issue #18): bootstrap intervals of means over dialogues and the paired model differences over
scenarios, both by ``uncertainty``'s resampling."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.socialcc import prompts

BOOTSTRAP_NOTE = {
    "statistic": "each mean of Table 2 (and of every group: country, zone, value topic, value topic x zone) over "
                 "the dialogues judged valid, the behaviour score percentages and Fig. 7's shares, each with "
                 "scipy.stats.bootstrap of its dialogues (one dialogue per scenario and model)",
    "paired": "differences between models are means over the scenarios both models were judged on, with one "
              "resample of scenario ids shared by every pair of models",
    "significance": "difference of a Table 2 dimension between two models: two-sided p-value of difference = 0 "
                    "with the standard error of the paired bootstrap distribution over scenarios (normal "
                    "approximation, uncertainty.bootstrap_pvalue), Holm-adjusted over all model pairs x the four "
                    "dimensions; significant when the adjusted p < 1 - confidence level",
}
"""How SocialCC's intervals are computed (recorded in metrics.json under ``uncertainty``; issue #18). None of the
paper's numbers has an interval; the point estimates are unchanged."""


def judge_score(record: dict, judge: str) -> int | None:
    """A judge's score of one dialogue (None: no valid judgement)."""
    return (record.get("judgements") or {}).get(judge, {}).get("score")


def mean_interval(values: Sequence[float], settings: uncertainty.Bootstrap) -> list[float | None]:
    """[low, high] of the mean of ``values`` over dialogues (``uncertainty.mean_interval``)."""
    found = uncertainty.mean_interval(values, settings)
    return [found["low"], found["high"]]


def unit_of(record: dict, index: int) -> str:
    """The bootstrap unit of a dialogue: its scenario (a record without a scenario id is a unit of its own)."""
    scenario = record.get("scenario_id")
    return f"scenario {scenario}" if scenario is not None else f"record {index}"


def model_differences(records: Sequence[dict], models: Sequence[str], settings: uncertainty.Bootstrap) -> list[dict]:
    """Paired differences of Table 2's four dimensions between every two models: per pair (model_a < model_b) and
    judge, the mean over the scenarios both were judged on (n_common) of score_a - score_b, its bootstrap interval
    over scenarios (one resample of scenario ids shared by every pair), the two-sided p-value of difference = 0
    (``uncertainty.bootstrap_pvalue``), Holm-adjusted over all pairs x judges, and ``significant`` (adjusted p below
    1 - confidence level). A model with several dialogues of one scenario counts their mean."""
    pairs = list(combinations(models, 2))
    if not pairs:
        return []
    units = {unit_of(r, i): None for i, r in enumerate(records)}
    position = {u: i for i, u in enumerate(units)}
    sums = {m: np.zeros((len(units), len(prompts.JUDGES))) for m in models}
    counts = {m: np.zeros((len(units), len(prompts.JUDGES))) for m in models}
    for i, r in enumerate(records):
        for j, judge in enumerate(prompts.JUDGES):
            if judge_score(r, judge) is not None:
                sums[str(r["model"])][position[unit_of(r, i)], j] += judge_score(r, judge)
                counts[str(r["model"])][position[unit_of(r, i)], j] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        per_unit = {m: sums[m] / counts[m] for m in models}  # NaN where a model has no valid judgement
    blocks = [per_unit[a] - per_unit[b] for a, b in pairs]
    common = np.concatenate([np.isfinite(d) for d in blocks], axis=1)  # units x (pairs x judges)
    differences = np.where(common, np.concatenate(blocks, axis=1), 0.0)

    def statistic(positions: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return differences[positions].sum(axis=0) / common[positions].sum(axis=0)

    result = uncertainty.resample_units([range(len(units))], statistic, settings, unit="scenario")
    rows = []
    for i, ((a, b), judge) in enumerate((pair, judge) for pair in pairs for judge in prompts.JUDGES):
        low, high = result.interval(i)
        rows.append({"model_a": a, "model_b": b, "dimension": judge, "n_common": int(common[:, i].sum()),
                     "difference": uncertainty.finite_or_none(result.estimate[i]), "low": low, "high": high,
                     "pvalue": result.pvalue(i)})
    return uncertainty.holm_significance(rows, settings, [result.no_spread()] * len(rows))
