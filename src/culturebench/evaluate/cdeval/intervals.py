"""CDEval's intervals (issue #18): a bootstrap over questions within each dimension recomputes the
whole chain, Eq. 7 weights included; paired model differences."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.cdeval import prompts
from culturebench.evaluate.cdeval.measures import country_vectors, human_vector, prompt_likelihood
from culturebench.evaluate.cdeval.items import BETA, DIMENSIONS, DOMAINS, INSTABILITY_SCALE

BOOTSTRAP_NOTE = {
    "statistic": "the whole chain recomputed on each resample of questions: Eq. 6 instabilities and Eq. 7 template "
                 "weights from the resampled questions, Eq. 1-2 per question, then the means per dimension and "
                 "domain and everything derived from them (Eq. 3-5, Sec. 4.4)",
    "paired": "one resample of question ids serves every model, so differences and Eq. 4/5 are paired",
    "significance": "difference of C_m,d between two models per dimension: two-sided p-value of difference = 0 "
                    "with the standard error of the paired bootstrap distribution (normal approximation, "
                    "uncertainty.bootstrap_pvalue), Holm-adjusted over all model pairs x dimensions; significant "
                    "when the adjusted p < 1 - confidence level",
}
"""How CDEval's intervals are computed (recorded in metrics.json under ``uncertainty``). The weights of Eq. 7 are
a function of the questions asked, so they are re-estimated on each resample rather than held fixed: the interval
then covers the weighting as well (with N = -1000 they move little)."""


@dataclass
class QuestionArrays:
    """One model's answers as arrays over the bootstrap units (questions), per template (prompts.TEMPLATE_KINDS
    order): the sum of the Eq. 1 likelihoods of its norm and reverse prompts and how many of the two were asked,
    the Eq. 6 disagreements, and which templates have any norm/reverse pair at all (Eq. 7 is over these)."""

    likelihood_sum: np.ndarray  # units x 3
    prompts_asked: np.ndarray  # units x 3 (0, 1 or 2)
    disagreements: np.ndarray  # units x 3
    templates: np.ndarray  # 3 booleans

    def answered(self) -> np.ndarray:
        return self.prompts_asked.sum(axis=1) > 0


def question_arrays(scored: pl.DataFrame, model: str, units: Sequence[str]) -> QuestionArrays:
    """``QuestionArrays`` of ``model`` over ``units`` (question ids), from ``score_answers``' table."""
    position = {q: i for i, q in enumerate(units)}
    mine = scored.filter(pl.col("model") == model)
    shape = (len(units), len(prompts.TEMPLATE_KINDS))
    likelihood_sum, asked, disagreements = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    for row in prompt_likelihood(mine).iter_rows(named=True):
        at = position[row["question_id"]], prompts.TEMPLATE_KINDS.index(row["template"])
        likelihood_sum[at] += row["likelihood"]
        asked[at] += 1
    keys = ["question_id", "template", "sample_index"]
    pairs = (mine.filter(pl.col("order") == "norm").select(*keys, pl.col("score").alias("norm"))
             .join(mine.filter(pl.col("order") == "reverse").select(*keys, pl.col("score").alias("reverse")),
                   on=keys, how="inner"))
    templates = np.zeros(len(prompts.TEMPLATE_KINDS), dtype=bool)
    for question, template, n in (pairs.group_by("question_id", "template")
                                  .agg((pl.col("norm") != pl.col("reverse")).sum()).iter_rows()):
        t = prompts.TEMPLATE_KINDS.index(template)
        disagreements[position[question], t] = n
        templates[t] = True
    return QuestionArrays(likelihood_sum, asked, disagreements, templates)


def resampled_likelihood(arrays: QuestionArrays, positions: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 6-7 from the questions at ``positions`` (repeats count again), then Eq. 2 per question, the weights of
    the prompts asked renormalised as ``orientation_likelihood`` does (w^norm = w^reverse = w_t / 2, so per
    question sum_t w_t L_t / sum_t w_t n_t with L_t the template's likelihood sum and n_t its prompts asked):
    (P(g|S) per position, NaN where the model answered nothing; the three template weights, NaN for a template
    without pairs)."""
    logits = np.where(arrays.templates, arrays.disagreements[positions].sum(axis=0) / scale, -np.inf)
    if arrays.templates.any():
        exps = np.exp(logits - logits[arrays.templates].max())
        weights = exps / exps.sum()
    else:
        weights = np.zeros(len(prompts.TEMPLATE_KINDS))
    with np.errstate(invalid="ignore", divide="ignore"):
        per_question = (arrays.likelihood_sum[positions] @ weights) / (arrays.prompts_asked[positions] @ weights)
    return per_question, np.where(arrays.templates, weights, np.nan)


def _group_means(values: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    ok = np.isfinite(values)
    counts = np.bincount(codes[ok], minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(codes[ok], weights=values[ok], minlength=n_groups) / np.where(counts, counts, np.nan)


def bootstrap_scores(scored: pl.DataFrame, questions: pl.DataFrame, hofstede: pl.DataFrame,
                     settings: uncertainty.Bootstrap, *, beta: float = BETA,
                     scale: float = INSTABILITY_SCALE) -> tuple[dict[str, pl.DataFrame], str | None]:
    """Bootstrap intervals over questions (``uncertainty.resample_units``, resampled within each dimension so
    that every resample keeps each dimension's number of questions, one resample shared by all models;
    BOOTSTRAP_NOTE; a domain cell that some resample misses altogether gets no interval): tables keyed like
    ``score_responses``' with the bounds as ``low``/``high`` columns: dimension_likelihood (model, dimension),
    domain_likelihood (model, dimension, domain), template_weights (model, template), country_similarity (model,
    country_code), group_similarity (model, group), model_similarity (model_a, model_b, both orders),
    pairwise_baseline (one row), differences (model_a < model_b, dimension: difference, low, high, pvalue,
    pvalue_holm, significant, n_common: questions both answered); and why some have no interval (or None):
    ``uncertainty.no_spread`` over the dimensions (a number of one dimension needs only that dimension's
    questions; template weights and similarities draw on all)."""
    answered = set(scored["question_id"].unique().to_list())
    release_order = questions.filter(pl.col("question_id").is_in(answered)).unique("question_id", keep="first",
                                                                                   maintain_order=True)
    units = release_order["question_id"].to_list()
    cells = list(dict.fromkeys(zip(release_order["dimension"], release_order["domain"])))
    cells.sort(key=lambda c: (DIMENSIONS.index(c[0]), DOMAINS.index(c[1]) if c[1] in DOMAINS else len(DOMAINS),
                              str(c[1])))
    cell_code = np.asarray([cells.index(c) for c in zip(release_order["dimension"], release_order["domain"])])
    dim_code = np.asarray([DIMENSIONS.index(d) for d in release_order["dimension"]])
    strata = [np.flatnonzero(dim_code == i) for i in range(len(DIMENSIONS))]
    models = sorted(scored["model"].unique().to_list())
    arrays = {m: question_arrays(scored, m, units) for m in models}
    has = {m: arrays[m].answered() for m in models}
    countries, _ = country_vectors(hofstede)
    human = np.asarray([human_vector(c["scores"], beta) for c in countries]).reshape(len(countries), len(DIMENSIONS))
    group_names = sorted({c["group"] for c in countries if c["group"]})
    group_human = np.asarray([np.mean([human[i] for i, c in enumerate(countries) if c["group"] == g], axis=0)
                              for g in group_names]).reshape(len(group_names), len(DIMENSIONS))

    def per_model(positions: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        out = {}
        for m in models:
            lik, weights = resampled_likelihood(arrays[m], positions, scale)
            out[m] = (_group_means(lik, dim_code[positions], len(DIMENSIONS)),
                      _group_means(lik, cell_code[positions], len(cells)), weights)
        return out

    full = per_model(np.arange(len(units)))
    complete = [m for m in models if np.isfinite(full[m][0]).all()]
    pairs = [(a, b) for i, a in enumerate(complete) for b in complete[i + 1:]]
    diff_pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]

    def distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.sqrt(((x - y) ** 2).sum(axis=-1)))

    def statistic(positions: np.ndarray) -> np.ndarray:
        values = per_model(positions)
        blocks = []
        for m in models:
            dims, by_cell, weights = values[m]
            blocks += [dims, by_cell, weights]
        for m in complete:
            blocks += [distance(human, values[m][0]), distance(group_human, values[m][0])]
        eq4 = np.asarray([distance(values[a][0], values[b][0]) for a, b in pairs])
        blocks += [eq4, np.asarray([eq4.mean()]) if pairs else np.empty(0)]
        blocks += [values[a][0] - values[b][0] for a, b in diff_pairs]
        return np.concatenate(blocks)

    result = uncertainty.resample_units(strata, statistic, settings, unit="question", stratum="dimension")
    spans = iter(range(len(result.estimate)))

    def take(n: int) -> list[int]:
        return [next(spans) for _ in range(n)]

    rows: dict[str, list[dict]] = {k: [] for k in ("dimension_likelihood", "domain_likelihood", "template_weights",
                                                   "country_similarity", "group_similarity", "model_similarity",
                                                   "pairwise_baseline", "differences")}

    def bounds(i: int, dimension: str | None = None) -> dict:
        """The interval of output ``i``: drawn on one ``dimension``'s questions, or (None) on all."""
        low, high = result.interval(i, strata=None if dimension is None else [DIMENSIONS.index(dimension)])
        return {"low": low, "high": high}

    for m in models:
        for d, i in zip(DIMENSIONS, take(len(DIMENSIONS))):
            rows["dimension_likelihood"].append({"model": m, "dimension": d, **bounds(i, d)})
        for (d, domain), i in zip(cells, take(len(cells))):
            rows["domain_likelihood"].append({"model": m, "dimension": d, "domain": domain, **bounds(i, d)})
        for t, i in zip(prompts.TEMPLATE_KINDS, take(len(prompts.TEMPLATE_KINDS))):
            rows["template_weights"].append({"model": m, "template": t, **bounds(i)})
    for m in complete:
        for c, i in zip(countries, take(len(countries))):
            rows["country_similarity"].append({"model": m, "country_code": c["code"], **bounds(i)})
        for g, i in zip(group_names, take(len(group_names))):
            rows["group_similarity"].append({"model": m, "group": g, **bounds(i)})
    for (a, b), i in zip(pairs, take(len(pairs))):
        rows["model_similarity"] += [{"model_a": a, "model_b": b, **bounds(i)}, {"model_a": b, "model_b": a, **bounds(i)}]
    if pairs:
        rows["pairwise_baseline"].append(bounds(take(1)[0]))
    for a, b in diff_pairs:
        common = int((has[a] & has[b]).sum())
        for d, i in zip(DIMENSIONS, take(len(DIMENSIONS))):
            rows["differences"].append({"model_a": a, "model_b": b, "dimension": d,
                                        "difference": uncertainty.finite_or_none(result.estimate[i]), **bounds(i, d),
                                        "pvalue": result.pvalue(i, strata=[DIMENSIONS.index(d)]), "n_common": common})
    uncertainty.holm_significance(rows["differences"], settings,
                                  [result.no_spread([DIMENSIONS.index(r["dimension"])]) for r in rows["differences"]])
    schemas = {"low": pl.Float64, "high": pl.Float64}
    keys = {"dimension_likelihood": ("model", "dimension"), "domain_likelihood": ("model", "dimension", "domain"),
            "template_weights": ("model", "template"), "country_similarity": ("model", "country_code"),
            "group_similarity": ("model", "group"), "model_similarity": ("model_a", "model_b"),
            "pairwise_baseline": (),
            "differences": ("model_a", "model_b", "dimension")}
    frames = {name: pl.DataFrame(rows[name], schema={**{k: pl.String for k in keys[name]}, **schemas})
              for name in keys if name != "differences"}
    frames["differences"] = pl.DataFrame(rows["differences"], schema={
        "model_a": pl.String, "model_b": pl.String, "dimension": pl.String, "difference": pl.Float64,
        **schemas, "pvalue": pl.Float64, "n_common": pl.Int64, "pvalue_holm": pl.Float64, "significant": pl.Boolean})
    return frames, result.no_spread()


def with_bounds(frame: pl.DataFrame, bounds: pl.DataFrame, value: str) -> pl.DataFrame:
    """``frame`` with the ``low``/``high`` of ``bounds`` (joined on their other columns) as ``<value>_low`` and
    ``<value>_high`` beside ``value`` (null where there is no interval)."""
    on = [c for c in bounds.columns if c not in ("low", "high")]
    return frame.join(bounds.rename({"low": f"{value}_low", "high": f"{value}_high"}), on=on, how="left")


def interval(row: dict, value: str) -> list[float | None]:
    """[low, high] of ``value`` in a row of a table ``with_bounds`` made."""
    return [row.get(f"{value}_low"), row.get(f"{value}_high")]
