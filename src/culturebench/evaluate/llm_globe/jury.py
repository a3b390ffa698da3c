"""LLM-GLOBE's LLMs-as-a-Jury (Sec. 3.3, App. B): the jurors' ratings of the open answers combined into one score
(fitted on human ratings, given weights, or the jurors' mean)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import stats
from culturebench.evaluate.llm_globe import prompts

LANGUAGE_FEATURE = "language_zh"
"""Name of L(x) in the jury regression (1 for zh-CN answers)."""


def jury_table(open_records: Sequence[dict], juror_records: Sequence[dict],
               opened: pl.DataFrame | None) -> tuple[pl.DataFrame, list[str], dict]:
    """One row per open answer: model, id, dimension, language, sample_index, response_id, language_zh and one
    column per juror (its parsed 1-7 rating, null when invalid); the juror names; juror parse statuses."""
    dims = {} if opened is None else dict(zip(opened["id"].to_list(), opened["dimension"].to_list()))
    jurors = sorted({str(r["juror"]) for r in juror_records})
    ratings: dict[str, dict[str, int | None]] = {}
    status_counts: dict[str, dict[str, int]] = {j: {s: 0 for s in prompts.STATUSES} for j in jurors}
    for rec in juror_records:
        value, status = prompts.parse_rating(rec["rating_text"])
        ratings.setdefault(str(rec["response_id"]), {})[str(rec["juror"])] = value
        status_counts[str(rec["juror"])][status] += 1
    rows = []
    for rec in open_records:
        dimension = dims.get(str(rec["id"])) or prompts.canonical_dimension(rec.get("dimension"))
        if dimension is None:
            raise InputError(f"open prompt id {rec['id']!r} is not in the release", file=rec.get("source"),
                             row=rec.get("row"), column="id")
        mine = ratings.get(str(rec["response_id"]), {})
        rows.append({"model": str(rec["model"]), "id": str(rec["id"]), "dimension": dimension,
                     "language": rec["language"], "sample_index": int(rec["sample_index"]),
                     "response_id": str(rec["response_id"]),
                     LANGUAGE_FEATURE: 1.0 if rec["language"] == "zh" else 0.0,
                     **{j: (None if mine.get(j) is None else float(mine[j])) for j in jurors}})
    schema = {"model": pl.String, "id": pl.String, "dimension": pl.String, "language": pl.String,
              "sample_index": pl.Int64, "response_id": pl.String, LANGUAGE_FEATURE: pl.Float64,
              **{j: pl.Float64 for j in jurors}}
    return pl.DataFrame(rows, schema=schema), jurors, status_counts


def constant_jurors(table: pl.DataFrame, jurors: Sequence[str]) -> dict[str, dict]:
    """The jurors whose valid ratings in ``table`` (``jury_table``) do not vary, two or more of them all the same:
    juror -> {rating, n}. Such a juror tells no answer from another (every jury score is the same affine function of
    one number), which points to a juror prompt or parsing that went wrong rather than to the answers."""
    out = {}
    for juror in jurors:
        values = table[juror].drop_nulls()
        if values.len() >= 2 and values.n_unique() == 1:
            out[juror] = {"rating": values[0], "n": values.len()}
    return out


def fit_jury(table: pl.DataFrame, jurors: Sequence[str], human: pl.DataFrame, *, seed: int = 0,
             test_fraction: float = 1 / 3) -> dict:
    """Least squares S(x) = sum_j w_j J_j(x) + w_L L(x) + b on the answers that have a human score and every
    juror's rating, seeded train/test split; MAE, MSE, RMSE, R^2 on the test part (and on the training part)."""
    features = [*jurors, LANGUAGE_FEATURE]
    joined = table.join(human, on="response_id", how="inner").drop_nulls(list(jurors))
    n = joined.height
    if n < len(features) + 3:
        raise InputError(f"only {n} human-rated answers have every juror's rating; the jury regression needs at "
                         f"least {len(features) + 3}")
    X = joined.select(features).to_numpy()
    y = joined["human_score"].to_numpy()
    train, test = stats.train_test_split(n, test_fraction=test_fraction, seed=seed)
    use = features if np.ptp(X[train, -1]) > 0 else list(jurors)  # one language only: no L term
    columns = [features.index(f) for f in use]
    fit = stats.fit_least_squares(X[train][:, columns], y[train], use)
    weights = fit.as_dict()
    return {"method": "least_squares", "features": features,
            "weights": {j: weights["weights"].get(j, 0.0) for j in jurors},
            "language": weights["weights"].get(LANGUAGE_FEATURE, 0.0), "intercept": weights["intercept"],
            "n_rated": n, "n_train": int(train.size), "n_test": int(test.size), "split_seed": seed,
            "test_fraction": test_fraction,
            "train": stats.regression_metrics(y[train], fit.predict(X[train][:, columns])),
            "test": stats.regression_metrics(y[test], fit.predict(X[test][:, columns])) if test.size else None}


def apply_jury(table: pl.DataFrame, jurors: Sequence[str], jury: dict) -> pl.DataFrame:
    """``table`` with ``jury_score`` (null when a juror's rating is missing, or with no jurors)."""
    if jury["method"] == "none":
        return table.with_columns(pl.lit(None, pl.Float64).alias("jury_score"))
    if jury["method"] == "mean":
        expr = pl.when(pl.all_horizontal([pl.col(j).is_not_null() for j in jurors])).then(
            pl.mean_horizontal([pl.col(j) for j in jurors]))
        return table.with_columns(expr.cast(pl.Float64).alias("jury_score"))
    missing = [j for j in jury["weights"] if j not in table.columns]
    if missing:
        raise InputError(f"jury weights name juror {missing[0]!r}, which rated nothing here")
    unweighted = [j for j in jurors if j not in jury["weights"]]
    if unweighted:
        raise InputError(f"juror {unweighted[0]!r} has no weight in jury_weights")
    expr = pl.lit(float(jury.get("intercept", 0.0)))
    for juror, weight in jury["weights"].items():
        expr = expr + float(weight) * pl.col(juror)
    expr = expr + float(jury.get("language", 0.0)) * pl.col(LANGUAGE_FEATURE)
    return table.with_columns(expr.alias("jury_score"))
