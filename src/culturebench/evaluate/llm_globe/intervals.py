"""LLM-GLOBE's intervals (issue #18): a bootstrap over prompts, paired model differences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.llm_globe.config import DIMENSIONS

BOOTSTRAP_NOTE = {
    "statistic": "every mean recomputed from the values of the resampled prompts: a prompt drawn twice counts twice, "
                 "with all its samples, languages and (open, per group) models; the open jury's weights are held "
                 "as fitted",
    "paired": "one resample of prompts per part serves every model and group, so their differences are paired",
    "significance": "per dimension, a difference between two models is significant when the post-hoc Wilcoxon "
                    "signed-rank test over prompts (Fig. 2; Holm-adjusted over the model pairs of the dimension) "
                    "gives p < 1 - confidence level and, with three or more models, the dimension's Friedman test "
                    "does too (Sec. 3.4, Sec. 4.2.3: post-hoc tests on the dimensions where Friedman finds a "
                    "difference); the bootstrap interval of the difference of means is shown beside it",
}
"""How LLM-GLOBE's intervals are computed (recorded in metrics.json under ``uncertainty``)."""


def prompt_bootstrap(series: dict[Any, pl.DataFrame], value: str, pairs: Sequence[tuple[Any, Any]],
                     settings: uncertainty.Bootstrap) -> dict:
    """Bootstrap over prompts (``uncertainty.resample_units``), resampled within each dimension, one resample
    shared by every series: ``series`` maps a key to its values (columns id, dimension, ``value``); each series'
    mean per dimension is recomputed on a resample as the sum of the drawn prompts' values over their count (on
    all prompts: the plain mean of the values, Tables 2-5). Returns ``means``: (key, dimension) -> (number of
    prompts, [low, high]); ``differences``: (key_a, key_b, dimension) -> (mean_a - mean_b, [low, high],
    bootstrap p-value) for ``pairs``; ``no_spread``: dimension -> why its numbers have no interval (a dimension
    of one prompt, ``uncertainty.no_spread``) for such dimensions, and ``all`` -> the reason over all of them."""
    frames = [f.drop_nulls(value).select("id", "dimension", pl.col(value).cast(pl.Float64).alias("value"),
                                         pl.lit(i).alias("series")) for i, f in enumerate(series.values())]
    values = pl.concat(frames) if frames else pl.DataFrame(schema={"id": pl.String, "dimension": pl.String,
                                                                    "value": pl.Float64, "series": pl.Int32})
    if values.height == 0:
        return {"means": {}, "differences": {(a, b, d): (None, None, None) for a, b in pairs for d in DIMENSIONS},
                "no_spread": {}}
    units = (values.select("dimension", "id").unique()
             .with_columns(pl.col("dimension").replace_strict(DIMENSIONS, list(range(len(DIMENSIONS))),
                                                              return_dtype=pl.Int64).alias("code"))
             .sort("code", "id").with_row_index("unit"))
    per_unit = (values.group_by("series", "dimension", "id").agg(pl.col("value").sum().alias("sum"), pl.len())
                .join(units, on=["dimension", "id"]))
    keys = list(series)
    sums, counts = np.zeros((len(keys), units.height)), np.zeros((len(keys), units.height))
    at = (per_unit["series"].to_numpy(), per_unit["unit"].to_numpy())
    sums[at], counts[at] = per_unit["sum"].to_numpy(), per_unit["len"].to_numpy()
    code = units["code"].to_numpy()
    dimension_of = np.eye(len(DIMENSIONS))[code]  # units x dimensions, one-hot
    index = {k: i for i, k in enumerate(keys)}

    def statistic(positions: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (sums[:, positions] @ dimension_of[positions]) / (counts[:, positions] @ dimension_of[positions])
        return np.concatenate([means.ravel(), *(means[index[a]] - means[index[b]] for a, b in pairs)])

    strata = [np.flatnonzero(code == d) for d in range(len(DIMENSIONS))]
    result = uncertainty.resample_units(strata, statistic, settings, unit="prompt", stratum="dimension")
    n_prompts = (counts > 0) @ dimension_of
    out: dict = {"means": {}, "differences": {}, "no_spread": {}}
    for k, key in enumerate(keys):
        for d, dimension in enumerate(DIMENSIONS):
            if n_prompts[k, d]:
                out["means"][(key, dimension)] = (int(n_prompts[k, d]),
                                                  result.interval(k * len(DIMENSIONS) + d, strata=[d]))
    start = len(keys) * len(DIMENSIONS)
    for p, (a, b) in enumerate(pairs):
        for d, dimension in enumerate(DIMENSIONS):
            i = start + p * len(DIMENSIONS) + d
            out["differences"][(a, b, dimension)] = (uncertainty.finite_or_none(result.estimate[i]),
                                                     result.interval(i, strata=[d]), result.pvalue(i, strata=[d]))
    for d, dimension in enumerate(DIMENSIONS):
        if result.no_spread([d]):
            out["no_spread"][dimension] = result.no_spread([d])
    if out["no_spread"]:
        out["no_spread"]["all"] = result.no_spread()
    return out


def model_differences(model_tests_: dict, differences: dict, models: Sequence[str], alpha: float,
                      no_spread: dict[str, str]) -> list[dict]:
    """Per dimension and pair of models (a < b): the difference of their means with its paired bootstrap interval,
    the Wilcoxon test over prompts (Fig. 2) and the dimension's Friedman p-value; ``significant`` as
    BOOTSTRAP_NOTE["significance"] says. A dimension in ``no_spread`` (too few prompts to resample,
    ``prompt_bootstrap``) gets no p-value and no verdict (None), and its reason (``no_spread``)."""
    rows = []
    for dimension, tests in model_tests_.items():
        friedman = tests["friedman"]
        gate = len(models) < 3 or (friedman["pvalue"] is not None and friedman["pvalue"] < alpha)
        for test in tests["wilcoxon"]:
            difference, interval, _ = differences.get((("model", test["a"]), ("model", test["b"]), dimension),
                                                      (None, None, None))
            row = {"model_a": test["a"], "model_b": test["b"], "dimension": dimension,
                   "difference": difference, "difference_ci": interval,
                   "wilcoxon_statistic": test["statistic"], "n_pairs": test["n_pairs"],
                   "pvalue": test["pvalue"], "pvalue_holm": test["pvalue_holm"],
                   "friedman_pvalue": friedman["pvalue"],
                   "significant": bool(gate and test["pvalue_holm"] is not None and test["pvalue_holm"] < alpha)}
            if dimension in no_spread:
                row.update(pvalue=None, pvalue_holm=None, significant=None, no_spread=no_spread[dimension])
            rows.append(row)
    return rows
