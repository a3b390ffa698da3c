"""CDEval evaluation and scoring (Wang et al. 2024, arXiv 2311.16421, Sec. 3.2.2, Sec. 4, App. A.3):
``culturebench evaluate cdeval`` and ``culturebench score cdeval``.

``evaluate`` asks a model the six prompts of Table 8 (``cdeval_prompts``) for every question of a CDEval release,
``R`` samples each at temperature 1, through ``runner.run_requests`` with a response cache in the run folder, and
writes responses.jsonl, metrics.json, the plots and run.json. ``score`` recomputes everything from one or more
responses.jsonl files (several models, or language variants of one: the between-model similarities and the PCA).

The computation is a chain of pure functions from tables to tables (polars), one per equation of the paper:

- Eq. 1 (``prompt_likelihood``): P(g|s_t) = (1/R) sum_k 1[a_tk = g], a neutral answer counting 0.5 (App. A.3.1).
- Eq. 6 (``instability``): U_t = sum_x sum_k 1[a_tk^norm != a_tk^reverse], a count over questions x and sample
  indices k of the norm / reverse answers to template t that disagree (the answer as the orientation it picks:
  target, other, or neutral). Eq. 6 prints a sum over t inside U_t as well; U_t is per template, so we read it
  as over x and k only.
- Eq. 7 (``template_weights``): w_t^norm = w_t^reverse = 1/2 exp(U_t/N) / sum_t' exp(U_t'/N), N = -1000; the
  per-template weight w_t^norm + w_t^reverse is Table 4's.
- Eq. 2 (``orientation_likelihood``): P(g|S) = sum over the six prompts of w_t P(g|s_t).
- Table 2 / Table 9 (``domain_likelihood``): the mean P(g|S) per dimension and domain.
- Eq. 3 (``country_similarity``): Sim = 1 / (1 + sqrt(sum_d (beta C_h,d - C_m,d)^2)) over the six dimensions,
  beta = 0.01, C_m,d the mean P(g|S) over the dimension's questions (``dimension_likelihood``). A country or a
  model without all six dimensions is left out and listed with what it lacks.
- Eq. 4 (``model_similarity``): 1 / (1 + sqrt(sum_d (C_a,d - C_b,d)^2)); Eq. 5 (``pairwise_baseline``): the mean
  of Eq. 4 over the n(n-1) ordered pairs of models.
- Sec. 4.4 (``group_similarity``): Eq. 3 against the mean six-dimension vector of each country group (the Hofstede
  table's optional ``group`` column). Fig. 6 (right, ``pca_points``): PCA of models and countries on Eq. 3's scale.
- Sec. 4.2 (language variants): a responses record may carry ``language``; each (model, language) is scored as
  its own respondent, labelled ``model [language]`` (Fig. 4: likelihoods and Eq. 3 similarities per language).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import plots, runs
from culturebench.evaluate import cdeval_prompts as prompts
from culturebench.release import load_manifest

if TYPE_CHECKING:
    from culturebench.evaluate.backends import ChatRequest

DIMENSIONS = ("PDI", "IDV", "UAI", "MAS", "LTO", "IVR")
"""Hofstede's six dimensions, in the paper's order; option_1 of a question is the target orientation (Sec. 3.2.2):
high PDI, individualism, high UAI, masculinity, long-term orientation, indulgence."""
DOMAINS = ("Family", "Education", "Work", "Wellness", "Lifestyle", "Arts", "Scientific")
"""The seven domains, in Table 2's column order."""

INSTABILITY_SCALE = float(prompts.EVALUATION["instability_N"]["value"])
"""N in Eq. 7 (-1000)."""
BETA = float(prompts.EVALUATION["beta"]["value"])
"""beta in Eq. 3 (0.01): brings the 0-100 human scores to the 0-1 likelihood scale."""

QUESTION_COLUMNS = ("id", "dimension", "domain", "question", "option_1", "option_2")
CODE_COLUMNS = ("country_code", "code", "iso3", "iso_code", "ctr")
NAME_COLUMNS = ("country_name", "country", "name")
HOFSTEDE_EXTRA = ("group", "source_file", "version")
"""Optional Hofstede columns kept when present: the Sec. 4.4 group and which Hofstede table a row comes from."""
RESPONSE_FIELDS = ("model", "question_id", "prompt", "sample_index", "response")


@dataclass
class ScoreResult:
    metrics: dict
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    """scored, prompt_likelihood, instability, template_weights, orientation_likelihood, domain_likelihood,
    dimension_likelihood, country_similarity, countries_left_out, group_similarity, model_similarity, pca_points."""


# ---------------------------------------------------------------------------------------------------- release


def release_tables(release: Path) -> dict[str, pl.DataFrame]:
    """The release's ``questions`` (question_id as text, plus QUESTION_COLUMNS) and ``hofstede`` (country_code,
    country_name, pdi ... ivr as floats; empty when the release has none), all splits concatenated."""
    release = Path(release)
    tables = runs.release_configs(release, "cdeval", "a CDEval release")
    questions = runs.release_config(tables, "questions", release, columns=QUESTION_COLUMNS)
    questions = questions.with_columns(pl.col("id").cast(pl.String).alias("question_id"),
                                       pl.col("dimension").cast(pl.String).str.to_uppercase(),
                                       pl.col("domain").cast(pl.String))
    unknown = sorted(set(questions["dimension"].drop_nulls().to_list()) - set(DIMENSIONS))
    if unknown:
        raise InputError(f"questions config has unknown dimension {unknown[0]!r}", file=release, column="dimension")
    hofstede = runs.release_config(tables, "hofstede", release, required=False)
    hofstede = empty_hofstede() if hofstede is None else normalise_hofstede(hofstede, release)
    return {"questions": questions, "hofstede": hofstede}


def empty_hofstede() -> pl.DataFrame:
    return pl.DataFrame(schema={"country_code": pl.String, "country_name": pl.String,
                                **{d.lower(): pl.Float64 for d in DIMENSIONS}, **{c: pl.String for c in HOFSTEDE_EXTRA}})


def normalise_hofstede(frame: pl.DataFrame, source: Path | str = "hofstede") -> pl.DataFrame:
    """Hofstede scores as country_code, country_name, pdi ... ivr (Float64, null where missing), group,
    source_file, version (null where the table has no such column)."""
    lower = {c.lower(): c for c in frame.columns}
    code = next((lower[c] for c in CODE_COLUMNS if c in lower), None)
    name = next((lower[c] for c in NAME_COLUMNS if c in lower and lower[c] != code), None)
    if code is None and name is None:
        raise InputError("hofstede config has no country code or name column", file=source)
    missing = [d.lower() for d in DIMENSIONS if d.lower() not in lower]
    if missing:
        raise InputError(f"hofstede config lacks column {missing[0]}", file=source, column=missing[0])
    return frame.select(
        pl.col(code or name).cast(pl.String).alias("country_code"),
        pl.col(name or code).cast(pl.String).alias("country_name"),
        *(pl.col(lower[d.lower()]).cast(pl.Float64, strict=False).alias(d.lower()) for d in DIMENSIONS),
        *((pl.col(lower[c]) if c in lower else pl.lit(None)).cast(pl.String).alias(c) for c in HOFSTEDE_EXTRA))


# ---------------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class PlannedRequest:
    question_id: str
    prompt: str  # one of cdeval_prompts.PROMPTS
    sample_index: int
    request: ChatRequest


def plan_requests(questions: pl.DataFrame, *, samples: int = prompts.DEFAULT_SAMPLES,
                  temperature: float = prompts.TEMPERATURE, max_tokens: int = prompts.MAX_TOKENS,
                  seed: int | None = 0) -> list[PlannedRequest]:
    """Six prompts x ``samples`` per question, in question order."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    planned = []
    for row in questions.select("question_id", "question", "option_1", "option_2").iter_rows(named=True):
        for name in prompts.PROMPTS:
            text = prompts.prompt_text(name, row["question"], row["option_1"], row["option_2"])
            for r in range(samples):
                planned.append(PlannedRequest(row["question_id"], name, r,
                                              ChatRequest(prompts.messages(text), sampling, sample_index=r)))
    return planned


# ---------------------------------------------------------------------------------------------------- scoring


def respondent(model: str, language: str | None) -> str:
    """The label a (model, language) is scored under (Sec. 4.2): the model, or ``model [language]``."""
    return f"{model} [{language}]" if language else model


def read_responses(paths: Sequence[Path]) -> pl.DataFrame:
    """responses.jsonl files (evaluate's output) as one table: model (a ``language`` field, Sec. 4.2, makes it
    ``model [language]``), question_id, prompt, sample_index, response, source (the file), row."""
    rows = []
    for path in map(Path, paths):
        for number, record in runs.jsonl_records(path, RESPONSE_FIELDS):
            if record["prompt"] not in prompts.TEMPLATES:
                raise InputError(f"unknown prompt {record['prompt']!r}", file=path, row=number, column="prompt")
            language = record.get("language")
            rows.append({"model": respondent(str(record["model"]), None if language is None else str(language)),
                         "question_id": str(record["question_id"]),
                         "prompt": record["prompt"], "sample_index": int(record["sample_index"]),
                         "response": record["response"], "source": str(path), "row": number})
        if not any(r["source"] == str(path) for r in rows):
            raise InputError("responses file has no records", file=path)
    return pl.DataFrame(rows, schema={"model": pl.String, "question_id": pl.String, "prompt": pl.String,
                                      "sample_index": pl.Int64, "response": pl.String, "source": pl.String,
                                      "row": pl.Int64})


def score_answers(responses: pl.DataFrame, questions: pl.DataFrame) -> pl.DataFrame:
    """Each answer read (App. A.3.1, ``cdeval_prompts.score_answer``): adds dimension, domain, template, order,
    parse_status, shown (displayed option picked) and score (toward the target orientation)."""
    joined = responses.join(questions.select("question_id", "dimension", "domain", "option_1", "option_2"),
                            on="question_id", how="left")
    unknown = joined.filter(pl.col("option_1").is_null())
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"question id {first['question_id']!r} is not in the release",
                         file=first.get("source"), row=first.get("row"), column="question_id")
    scores, statuses, shown = [], [], []
    for row in joined.select("prompt", "response", "option_1", "option_2").iter_rows():
        s, status, picked = prompts.score_answer(*row)
        scores.append(s), statuses.append(status), shown.append(picked)
    return joined.drop("option_1", "option_2").with_columns(
        pl.col("prompt").str.extract(r"^(\w+)_(?:norm|reverse)$").alias("template"),
        pl.col("prompt").str.extract(r"_(norm|reverse)$").alias("order"),
        pl.Series("parse_status", statuses, dtype=pl.String),
        pl.Series("shown", shown, dtype=pl.Int64),
        pl.Series("score", scores, dtype=pl.Float64))


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


# ---------------------------------------------------------------------------------------------------- metrics


def score_responses(responses: pl.DataFrame, tables: dict[str, pl.DataFrame], *, sources: list[dict] | None = None,
                    release: Path | str | None = None, beta: float = BETA,
                    scale: float = INSTABILITY_SCALE) -> ScoreResult:
    """Every table and metric from answers (model, question_id, prompt, sample_index, response) and the release
    tables (questions, hofstede)."""
    if responses.height == 0:
        raise InputError("no responses to score")
    hofstede = tables["hofstede"]
    scored = score_answers(responses, tables["questions"])
    prompt_lik = prompt_likelihood(scored)
    instab = instability(scored)
    weights = template_weights(instab, scale)
    likelihood = orientation_likelihood(prompt_lik, weights)
    by_domain = domain_likelihood(likelihood)
    by_dimension = dimension_likelihood(likelihood, by_domain)
    countries = country_similarity(by_dimension, hofstede, beta)
    _, countries_left_out = country_vectors(hofstede)
    _, models_left_out = model_vectors(by_dimension)
    groups = group_similarity(by_dimension, hofstede, beta)
    pairs = model_similarity(by_dimension)
    points, explained = pca_points(by_dimension, hofstede, beta)

    models = sorted(scored["model"].unique().to_list())
    per_model = {}
    for model in models:
        mine = scored.filter(pl.col("model") == model)
        status = {s: 0 for s in prompts.STATUSES}
        for s, n in mine.group_by("parse_status").len().iter_rows():
            status[s] = n
        dims = by_dimension.filter(pl.col("model") == model)
        domains: dict[str, dict[str, float]] = {}
        for row in by_domain.filter(pl.col("model") == model).iter_rows(named=True):
            domains.setdefault(row["dimension"], {})[row["domain"]] = row["likelihood"]
        w = weights.filter(pl.col("model") == model)
        per_model[model] = {
            "n_responses": mine.height,
            "n_questions": mine["question_id"].n_unique(),
            "samples_per_prompt": int(mine.group_by("question_id", "prompt").len()["len"].max()),
            "parse_status": status,
            "n_neutral": int((mine["parse_status"] != "chosen").sum()),
            "instability": dict(zip(w["template"], w["instability"])),
            "instability_pairs": dict(instab.filter(pl.col("model") == model).select("template", "n_pairs").iter_rows()),
            "template_weights": dict(zip(w["template"], w["weight"])),
            "prompt_weights": {f"{t}_{o}": pw for t, pw in zip(w["template"], w["prompt_weight"])
                               for o in prompts.ORDERS},
            "dimension_likelihood": dict(zip(dims["dimension"], dims["likelihood"])),
            "dimension_domain_mean": dict(zip(dims["dimension"], dims["domain_mean"])),
            "dimension_n_questions": dict(zip(dims["dimension"], dims["n_questions"])),
            "domain_likelihood": domains,
            "prompt_likelihood": {name: float(mine.filter(pl.col("prompt") == name)["score"].mean())
                                  for name in prompts.PROMPTS if (mine["prompt"] == name).any()},
            "missing_dimensions": models_left_out.get(model, []),
            "country_similarity": countries.filter(pl.col("model") == model).drop("model").to_dicts(),
            "group_similarity": groups.filter(pl.col("model") == model).drop("model").to_dicts(),
        }
    metrics = {
        "benchmark": "cdeval",
        "release": None if release is None else str(release),
        "responses": sources or [],
        "models": models,
        "constants": {"beta": beta, "instability_scale_N": scale, "neutral_score": prompts.NEUTRAL,
                      "temperature": prompts.TEMPERATURE},
        "dimensions": list(DIMENSIONS),
        "domains": list(DOMAINS),
        "hofstede": {"versions": hofstede_versions(hofstede), "countries_compared": hofstede.height
                     - countries_left_out.height, "countries_left_out": countries_left_out.to_dicts()},
        "per_model": per_model,
        "template_weights": {m: per_model[m]["template_weights"] for m in models},
        "models_left_out": [{"model": m, "missing": d} for m, d in sorted(models_left_out.items())],
        "model_similarity": pairs.to_dicts(),
        "pairwise_baseline": pairwise_baseline(pairs),
        "pca": {"explained_variance_ratio": explained, "points": points.to_dicts(),
                "left_out": ([{"kind": "model", "name": m, "missing": d} for m, d in sorted(models_left_out.items())]
                             + [{"kind": "country", "name": r["country_name"] or r["country_code"],
                                 "missing": r["missing"]} for r in countries_left_out.iter_rows(named=True)])},
    }
    tables_out = {"scored": scored, "prompt_likelihood": prompt_lik, "instability": instab,
                  "template_weights": weights, "orientation_likelihood": likelihood, "domain_likelihood": by_domain,
                  "dimension_likelihood": by_dimension, "country_similarity": countries,
                  "countries_left_out": countries_left_out, "group_similarity": groups, "model_similarity": pairs,
                  "pca_points": points}
    return ScoreResult(metrics=runs.json_safe(metrics), tables=tables_out)



def score(responses: Sequence[Path], release: Path) -> ScoreResult:
    """``culturebench score cdeval``: every metric from saved responses.jsonl files against a CDEval release."""
    release = Path(release)
    tables = release_tables(release)
    frame = read_responses(responses)
    return score_responses(frame, tables, sources=[runs.source_info(p) for p in responses], release=release)


# ---------------------------------------------------------------------------------------------------- plots


def dimensions_png(metrics: dict, path: Path) -> None:
    """Fig. 3 style: one panel per dimension, the models as points on the 0-1 orientation-likelihood axis
    (0.5 dashed: no orientation)."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(2, 3, figsize=(12, max(4.0, 1.2 + 0.45 * len(models)) * 1.4), dpi=100, squeeze=False)
    colours = plt.get_cmap("tab10")
    for ax, dimension in zip(axes.flat, DIMENSIONS):
        for i, model in enumerate(models):
            value = metrics["per_model"][model]["dimension_likelihood"].get(dimension)
            if value is not None:
                ax.scatter([value], [i], color=colours(i % 10), s=50, zorder=3)
                ax.annotate(f"{value:.2f}", (value, i), textcoords="offset points", xytext=(6, 4), fontsize=7)
        ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.8, len(models) - 0.2)
        ax.set_yticks(range(len(models)))
        ax.set_yticklabels(models, fontsize=8)
        ax.set_title(dimension)
        ax.set_xlabel("orientation likelihood")
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle("CDEval: orientation likelihood per dimension")
    plots.save_figure(fig, path)


def pca_png(metrics: dict, path: Path) -> None:
    """Fig. 6 (right): models and countries on the first two principal components of the six dimensions (Eq. 3's
    scale); legend outside the axes; what was left out (a model or country lacking a dimension) is written under
    the plot."""
    plt = plots.pyplot()
    points = metrics["pca"]["points"]
    explained = metrics["pca"]["explained_variance_ratio"]
    left_out = metrics["pca"]["left_out"]
    fig, ax = plt.subplots(figsize=(9, 6.5), dpi=100)
    if not points:
        ax.text(0.5, 0.5, "fewer than two models or countries with all six dimensions: no PCA", ha="center",
                va="center")
        ax.axis("off")
    for kind, label, colour, marker in (("country", "countries (Hofstede)", "tab:grey", "o"),
                                        ("model", "models", "tab:red", "*")):
        chosen = [p for p in points if p["kind"] == kind]
        if chosen:
            ax.scatter([p["pc1"] for p in chosen], [p["pc2"] for p in chosen], c=colour, marker=marker,
                       s=120 if kind == "model" else 25, label=label, zorder=3 if kind == "model" else 2)
            for p in chosen:
                ax.annotate(p["name"], (p["pc1"], p["pc2"]), fontsize=7 if kind == "model" else 5,
                            textcoords="offset points", xytext=(3, 3))
    if points:
        label = [f"PC{i + 1} ({v:.0%})" for i, v in enumerate(explained)] + ["PC2"]
        ax.set_xlabel(label[0])
        ax.set_ylabel(label[1])
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, borderaxespad=0)
        ax.grid(alpha=0.3)
    ax.set_title("CDEval: PCA of models and countries (six Hofstede dimensions)")
    footer = 0.0
    if left_out:
        shown = "; ".join(f"{e['kind']} {e['name']} (no {', '.join(e['missing'])})" for e in left_out[:4])
        more = f"; and {len(left_out) - 4} more (metrics.json pca.left_out)" if len(left_out) > 4 else ""
        fig.text(0.01, 0.01, f"Left out, lacking a dimension: {shown}{more}", fontsize=6, wrap=True, va="bottom")
        footer = 0.07
    fig.tight_layout(rect=(0, footer, 1, 1))
    plots.save_figure(fig, path, tight=False)


PLOTS = {"dimensions.png": dimensions_png, "pca.png": pca_png}


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json``, ``dimensions.png`` (Fig. 3) and ``pca.png`` (Fig. 6); returns the paths written."""
    return runs.write_metrics_and_plots(result.metrics, out, PLOTS)


# ---------------------------------------------------------------------------------------------------- evaluate


def check_inputs(release: Path, samples: int | None, limit: int | None) -> dict[str, pl.DataFrame]:
    """The release tables, after checking the options (before a model is loaded)."""
    runs.check_at_least_one({"--samples": samples, "--limit": limit})
    tables = release_tables(release)
    if tables["questions"].height == 0:
        raise InputError("release has no questions", file=release)
    return tables


def evaluate(backend, release: Path, out: Path, *, samples: int | None = None, temperature: float | None = None,
             max_tokens: int = prompts.MAX_TOKENS, seed: int | None = 0, limit: int | None = None,
             args: dict | None = None, console=None) -> runs.EvaluateResult:
    """Ask ``backend`` the six prompts x ``samples`` for every question (the first ``limit``), then score: writes
    responses.jsonl, metrics.json, the plots and run.json into ``out``. Re-running into the same folder answers
    every request already made from the cache."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out = Path(release), Path(out)
    samples = prompts.DEFAULT_SAMPLES if samples is None else samples
    temperature = prompts.TEMPERATURE if temperature is None else temperature
    tables = check_inputs(release, samples, limit)
    manifest = load_manifest(release)
    questions = tables["questions"] if limit is None else tables["questions"].head(limit)
    planned = plan_requests(questions, samples=samples, temperature=temperature, max_tokens=max_tokens, seed=seed)
    result = runs.ask(backend, [p.request for p in planned], out, "cdeval", console)
    model = str(getattr(backend, "model", "model"))
    info = {r["question_id"]: r for r in questions.select("question_id", "dimension", "domain", "option_1",
                                                          "option_2").iter_rows(named=True)}
    records = []
    for plan, response in zip(planned, result.responses):
        q = info[plan.question_id]
        s, status, shown = prompts.score_answer(plan.prompt, response.text, q["option_1"], q["option_2"])
        template, order = plan.prompt.rsplit("_", 1)
        records.append({"model": model, "question_id": plan.question_id, "dimension": q["dimension"],
                        "domain": q["domain"], "prompt": plan.prompt, "template": template, "order": order,
                        "sample_index": plan.sample_index, "response": response.text, "parse_status": status,
                        "shown": shown, "score": s, "finish_reason": response.finish_reason})
    responses_path = runs.write_jsonl(out / runs.RESPONSES_FILE, records)
    frame = pl.DataFrame([{k: r[k] for k in RESPONSE_FIELDS} for r in records],
                         schema={"model": pl.String, "question_id": pl.String, "prompt": pl.String,
                                 "sample_index": pl.Int64, "response": pl.String})
    scored = score_responses(frame, tables, release=release, sources=[runs.source_info(responses_path)])
    stats = runs.runner_stats(result)
    m = scored.metrics["per_model"][model]
    written = runs.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="cdeval", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_questions": questions.height, "prompts": list(prompts.PROMPTS), "samples": samples,
                              "n_requests": len(records), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit},
               "parse_status": m["parse_status"],
               "metrics": {"dimension_likelihood": m["dimension_likelihood"],
                           "template_weights": m["template_weights"]}})
    return runs.EvaluateResult(metrics=scored.metrics, records=records, stats=stats, written=written, score=scored)


def summary(metrics: dict) -> str:
    """One line per model for the command line."""
    lines = []
    for model in metrics["models"]:
        m = metrics["per_model"][model]
        dims = ", ".join(f"{d} {m['dimension_likelihood'][d]:.2f}" for d in DIMENSIONS
                         if m["dimension_likelihood"].get(d) is not None)
        weights = ", ".join(f"{t} {w:.3f}" for t, w in m["template_weights"].items())
        if m["missing_dimensions"]:
            closest = f"no country similarity (no {', '.join(m['missing_dimensions'])})"
        elif m["country_similarity"]:
            best = m["country_similarity"][0]
            closest = f"closest country {best['country_name']} (Eq. 3: {best['similarity']:.3f})"
        else:
            closest = "no country with all six scores"
        lines.append(f"cdeval {model}: {m['n_responses']:,} responses ({m['n_neutral']:,} neutral); {dims}; "
                     f"template weights {weights}; {closest}")
    left = metrics["hofstede"]["countries_left_out"]
    if left:
        lines.append(f"cdeval: {len(left)} countries lack a Hofstede dimension and are not compared "
                     f"(metrics.json hofstede.countries_left_out)")
    if metrics.get("pairwise_baseline") is not None:
        lines.append(f"cdeval: {len(metrics['models'])} models, pairwise baseline similarity (Eq. 5) "
                     f"{metrics['pairwise_baseline']:.4f}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    check_inputs(options["release"], options["samples"], options["limit"])


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    """`culturebench evaluate`: run, score, write the run folder; returns (summary line, paths written)."""
    result = evaluate(model_backend, options["release"], options["out"], samples=options["samples"],
                      temperature=options["temperature"], max_tokens=prompts.MAX_TOKENS if options["max_tokens"] is None else options["max_tokens"],
                      seed=options["seed"], limit=options["limit"], args=args, console=console)
    line = f"{summary(result.metrics)}\ncdeval: {runs.request_counts(len(result.records), result.stats)}"
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses; returns (summary line, paths written)."""
    result = score(runs.split_paths(responses), release)
    return summary(result.metrics), write_run(result, out)
