"""CDEval's scoring chain, one table function per equation (Eq. 1-7, Sec. 4.4, Fig. 6 PCA)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from culturebench.evaluate.cdeval import prompts
from culturebench.evaluate.cdeval.items import BETA, DIMENSIONS, DOMAINS, INSTABILITY_SCALE


def prompt_likelihood(scored: pl.DataFrame) -> pl.DataFrame:
    """Eq. 1: per model, question and prompt, the mean score over the R samples (the orientation likelihood of one
    prompt): model, question_id, dimension, domain, template, order, likelihood, n_samples."""
    return (scored.group_by("model", "question_id", "dimension", "domain", "template", "order", maintain_order=True)
            .agg(pl.col("score").mean().alias("likelihood"), pl.len().alias("n_samples")))


def _template_order() -> pl.Expr:
    return _order("template", prompts.TEMPLATE_KINDS)


def instability(scored: pl.DataFrame) -> pl.DataFrame:
    """Eq. 6: U_t per model and template = the number of (question x, sample k) whose norm and reverse answers
    disagree, an answer being the orientation it picks (its score 1, 0 or 0.5: a neutral answer is a third value).
    Only pairs with both answers count (a partial responses file): model, template, instability, n_pairs."""
    keys = ["model", "question_id", "template", "sample_index"]
    norm = scored.filter(pl.col("order") == "norm").select(*keys, pl.col("score").alias("norm"))
    reverse = scored.filter(pl.col("order") == "reverse").select(*keys, pl.col("score").alias("reverse"))
    pairs = norm.join(reverse, on=keys, how="inner")
    return (pairs.group_by("model", "template")
            .agg((pl.col("norm") != pl.col("reverse")).sum().cast(pl.Int64).alias("instability"),
                 pl.len().alias("n_pairs"))
            .sort("model", _template_order()))


def template_weights(instab: pl.DataFrame, scale: float = INSTABILITY_SCALE) -> pl.DataFrame:
    """Eq. 7 per model: weight = exp(U_t/N) / sum_t' exp(U_t'/N) (N = ``scale``; Table 4's per-template weight,
    computed stably by shifting U_t/N by its maximum) and prompt_weight = weight / 2 = w_t^norm = w_t^reverse:
    model, template, instability, weight, prompt_weight."""
    rows = []
    for (model,), part in instab.partition_by("model", as_dict=True, maintain_order=True).items():
        logits = [u / scale for u in part["instability"]]
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        total = math.fsum(exps)
        for template, u, e in zip(part["template"], part["instability"], exps):
            rows.append({"model": model, "template": template, "instability": u, "weight": e / total,
                         "prompt_weight": e / total / 2})
    return pl.DataFrame(rows, schema={"model": pl.String, "template": pl.String, "instability": pl.Int64,
                                      "weight": pl.Float64, "prompt_weight": pl.Float64})


def orientation_likelihood(prompt_lik: pl.DataFrame, weights: pl.DataFrame) -> pl.DataFrame:
    """Eq. 2: P(g|S) = sum over the six prompts of w_t P(g|s_t) (w_t the prompt weight of Eq. 7). A prompt missing
    for a question (a partial responses file) leaves the weights of the others renormalised: model, question_id,
    dimension, domain, likelihood."""
    joined = prompt_lik.join(weights.select("model", "template", "prompt_weight"), on=["model", "template"],
                             how="left")
    return (joined.group_by("model", "question_id", "dimension", "domain", maintain_order=True)
            .agg(((pl.col("likelihood") * pl.col("prompt_weight")).sum() / pl.col("prompt_weight").sum())
                 .alias("likelihood")))


def domain_likelihood(likelihood: pl.DataFrame) -> pl.DataFrame:
    """Tables 2 and 9: the mean orientation likelihood per model, dimension and domain: model, dimension, domain,
    likelihood, n_questions."""
    return (likelihood.group_by("model", "dimension", "domain")
            .agg(pl.col("likelihood").mean(), pl.len().alias("n_questions"))
            .sort("model", _order("dimension", DIMENSIONS), _order("domain", DOMAINS), "domain"))


def dimension_likelihood(likelihood: pl.DataFrame, by_domain: pl.DataFrame) -> pl.DataFrame:
    """Per model and dimension: likelihood = C_m,d of Eq. 3, the mean P(g|S) over the dimension's questions;
    domain_mean = the mean of its domain likelihoods (Table 2's "Mean" column is this: GPT-4 PDI (0.3099 + 0.1554
    + ... + 0.1982) / 7 = 0.2372); model, dimension, likelihood, domain_mean, n_questions."""
    means = by_domain.group_by("model", "dimension").agg(pl.col("likelihood").mean().alias("domain_mean"))
    return (likelihood.group_by("model", "dimension")
            .agg(pl.col("likelihood").mean(), pl.len().alias("n_questions"))
            .join(means, on=["model", "dimension"], how="left")
            .select("model", "dimension", "likelihood", "domain_mean", "n_questions")
            .sort("model", _order("dimension", DIMENSIONS)))


def _order(column: str, values: Sequence[str]) -> pl.Expr:
    return pl.col(column).replace_strict({v: i for i, v in enumerate(values)}, default=len(values),
                                         return_dtype=pl.Int64)


def model_vectors(dim_lik: pl.DataFrame) -> tuple[dict[str, list[float]], dict[str, list[str]]]:
    """(model -> its six C_m,d in DIMENSIONS order, for models with all six; model -> the dimensions it lacks)."""
    found: dict[str, dict[str, float]] = {}
    for row in dim_lik.iter_rows(named=True):
        found.setdefault(row["model"], {})
        if row["likelihood"] is not None:
            found[row["model"]][row["dimension"]] = row["likelihood"]
    complete = {m: [v[d] for d in DIMENSIONS] for m, v in found.items() if all(d in v for d in DIMENSIONS)}
    missing = {m: [d for d in DIMENSIONS if d not in v] for m, v in found.items() if m not in complete}
    return complete, missing


def country_vectors(hofstede: pl.DataFrame) -> tuple[list[dict], pl.DataFrame]:
    """(countries with all six scores: code, name, group, scores in DIMENSIONS order; the others: country_code,
    country_name, missing (the dimensions without a score))."""
    complete, left_out = [], []
    for row in hofstede.iter_rows(named=True):
        scores = [row[d.lower()] for d in DIMENSIONS]
        missing = [d for d, v in zip(DIMENSIONS, scores) if v is None]
        if missing:
            left_out.append({"country_code": row["country_code"], "country_name": row["country_name"],
                             "missing": missing})
        else:
            complete.append({"code": row["country_code"], "name": row["country_name"], "group": row.get("group"),
                             "scores": scores})
    return complete, pl.DataFrame(left_out, schema={"country_code": pl.String, "country_name": pl.String,
                                                    "missing": pl.List(pl.String)})


def similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """1 / (1 + ||a - b||_2): Eq. 3 (a = beta C_h) and Eq. 4."""
    return 1.0 / (1.0 + math.sqrt(math.fsum((x - y) ** 2 for x, y in zip(a, b))))


def human_vector(scores: Sequence[float], beta: float = BETA) -> list[float]:
    """beta C_h,d: human scores on the likelihood scale (Eq. 3)."""
    return [beta * v for v in scores]


def country_similarity(dim_lik: pl.DataFrame, hofstede: pl.DataFrame, beta: float = BETA) -> pl.DataFrame:
    """Eq. 3 for every model and country with all six dimensions: model, country_code, country_name, distance,
    similarity (most similar first per model)."""
    models, _ = model_vectors(dim_lik)
    countries, _ = country_vectors(hofstede)
    rows = []
    for model, vector in models.items():
        for country in countries:
            sim = similarity(human_vector(country["scores"], beta), vector)
            rows.append({"model": model, "country_code": country["code"], "country_name": country["name"],
                         "distance": 1 / sim - 1, "similarity": sim})
    frame = pl.DataFrame(rows, schema={"model": pl.String, "country_code": pl.String, "country_name": pl.String,
                                       "distance": pl.Float64, "similarity": pl.Float64})
    return frame.sort(["model", "similarity", "country_code"], descending=[False, True, False])


def group_similarity(dim_lik: pl.DataFrame, hofstede: pl.DataFrame, beta: float = BETA) -> pl.DataFrame:
    """Sec. 4.4: Eq. 3 between every model and each country group's mean six-dimension vector (countries with all
    six scores and a group): model, group, n_countries, similarity."""
    models, _ = model_vectors(dim_lik)
    countries, _ = country_vectors(hofstede)
    groups: dict[str, list[list[float]]] = {}
    for country in countries:
        if country["group"]:
            groups.setdefault(country["group"], []).append(country["scores"])
    rows = []
    for model, vector in models.items():
        for group, members in sorted(groups.items()):
            mean = [math.fsum(column) / len(members) for column in zip(*members)]
            rows.append({"model": model, "group": group, "n_countries": len(members),
                         "similarity": similarity(human_vector(mean, beta), vector)})
    return pl.DataFrame(rows, schema={"model": pl.String, "group": pl.String, "n_countries": pl.Int64,
                                      "similarity": pl.Float64})


def model_similarity(dim_lik: pl.DataFrame) -> pl.DataFrame:
    """Eq. 4 for every ordered pair of different models with all six dimensions: model_a, model_b, similarity."""
    models, _ = model_vectors(dim_lik)
    names = sorted(models)
    rows = [{"model_a": a, "model_b": b, "similarity": similarity(models[a], models[b])}
            for a in names for b in names if a != b]
    return pl.DataFrame(rows, schema={"model_a": pl.String, "model_b": pl.String, "similarity": pl.Float64})


def pairwise_baseline(model_sim: pl.DataFrame) -> float | None:
    """Eq. 5: 1/(n(n-1)) times the sum of Eq. 4 over the ordered pairs i != j (None with fewer than two models)."""
    n = len(set(model_sim["model_a"]))
    return math.fsum(model_sim["similarity"]) / (n * (n - 1)) if n >= 2 else None


def pca_points(dim_lik: pl.DataFrame, hofstede: pl.DataFrame, beta: float = BETA) -> tuple[pl.DataFrame, list[float]]:
    """Fig. 6 (right): a 2-component PCA (scikit-learn) of the models' C_m,d and the countries' beta C_h,d (Eq. 3's
    scale), models and countries with all six dimensions only: (kind "model"/"country", name, group, pc1, pc2;
    explained variance ratios)."""
    models, _ = model_vectors(dim_lik)
    countries, _ = country_vectors(hofstede)
    kinds = ["model"] * len(models) + ["country"] * len(countries)
    names = [*models, *(c["name"] or c["code"] for c in countries)]
    groups = [None] * len(models) + [c["group"] for c in countries]
    matrix = [*models.values(), *(human_vector(c["scores"], beta) for c in countries)]
    schema = {"kind": pl.String, "name": pl.String, "group": pl.String, "pc1": pl.Float64, "pc2": pl.Float64}
    if len(matrix) < 2:
        return pl.DataFrame(schema=schema), []
    import numpy as np
    from sklearn.decomposition import PCA

    data = np.asarray(matrix, dtype=float)
    pca = PCA(n_components=min(2, data.shape[0]), svd_solver="full")
    coords = pca.fit_transform(data)
    if coords.shape[1] < 2:
        coords = np.hstack([coords, np.zeros((coords.shape[0], 2 - coords.shape[1]))])
    frame = pl.DataFrame({"kind": kinds, "name": names, "group": groups, "pc1": coords[:, 0], "pc2": coords[:, 1]},
                         schema=schema)
    return frame, [float(v) for v in pca.explained_variance_ratio_]


def hofstede_versions(hofstede: pl.DataFrame) -> list[dict]:
    """Which Hofstede tables the release's scores come from (source_file, version, countries), for metrics.json."""
    if hofstede.height == 0:
        return []
    return (hofstede.group_by("source_file", "version", maintain_order=True).len("countries")
            .to_dicts())
