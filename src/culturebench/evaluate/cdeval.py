"""CDEval evaluation and scoring (Wang et al. 2024, arXiv 2311.16421, Sec. 3-4, App. A): ``culturebench evaluate
cdeval`` and ``culturebench score cdeval``.

``evaluate`` asks a model the six prompts of Table 8 (``cdeval_prompts``) for every question of a CDEval release,
``R`` samples each at temperature 1, through ``runner.run_requests`` with a response cache in the run folder, and
writes responses.jsonl, metrics.json, the plots and run.json. ``score`` recomputes everything from one or more
responses.jsonl files (several models: the between-model similarities and the PCA).

The computation is a chain of pure functions from tables to tables (polars), one per equation:

    scored answers -> prompt_likelihood (Eq. 1) -> instability (Eq. 6) -> template_weights (Eq. 7)
                   -> orientation_likelihood (Eq. 2) -> domain_likelihood (Table 2) / dimension_likelihood
                   -> country_similarity (Eq. 3), model_similarity (Eq. 4), pairwise_baseline (Eq. 5), pca_points

**Where the equations come from.** The paper's Sec. 3-4 and App. A were not retrievable here (only the opening of
the arXiv page was). The forms below are our reading of the brief (N = -1000, beta = 0.01 are the paper's constants
as given to us); each function's docstring says what it computes, so that a reader with the paper can check it:

- Eq. 1: L_p(q) = (1/R) sum_r s_r, s_r in {1, 0, 0.5}: the share of the R answers to prompt p that pick the target
  orientation (option_1), a neutral or unparseable answer counting 0.5.
- Eq. 6: U_t = mean over questions of |L_{t,norm}(q) - L_{t,reverse}(q)|: how much template t's answers move when the
  two options swap places.
- Eq. 7: w_t = exp(N U_t) / sum_t' exp(N U_t'), N = -1000: the more stable a template, the more weight.
- Eq. 2: L(q) = sum_t w_t (L_{t,norm}(q) + L_{t,reverse}(q)) / 2.
- Eq. 3: Sim(M, C) = exp(-beta * ||100 L_M - H_C||_2) over the dimensions the country has (Hofstede 0-100 scale).
- Eq. 4: Sim(M_i, M_j) = exp(-beta * ||100 L_i - 100 L_j||_2) over the six dimensions.
- Eq. 5: the pairwise baseline: the mean of Eq. 4 over all pairs of models.
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
"""Hofstede's six dimensions, in the paper's order; option_1 of a question is the high / first pole: high PDI,
individualism, high UAI, masculinity, long-term orientation, indulgence."""
DOMAINS = ("Education", "Family", "Work", "Lifestyle", "Wellness", "Arts", "Scientific")
"""The seven domains (Table 2 columns)."""

# NOTE: constants as given in the brief; the paper text (Sec. 4, App. A) could not be checked here.
INSTABILITY_SCALE = -1000.0
"""N in Eq. 7."""
BETA = 0.01
"""beta in Eq. 3 and Eq. 4 (distances on the 0-100 Hofstede scale)."""

HOFSTEDE_SCALE = 100.0
"""Hofstede scores are 0-100; a likelihood (0-1) is multiplied by this before comparing."""

QUESTION_COLUMNS = ("id", "dimension", "domain", "question", "option_1", "option_2")
CODE_COLUMNS = ("country_code", "code", "iso3", "iso_code", "ctr")
NAME_COLUMNS = ("country_name", "country", "name")
RESPONSE_FIELDS = ("model", "question_id", "prompt", "sample_index", "response")


@dataclass
class ScoreResult:
    metrics: dict
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    """scored, prompt_likelihood, instability, template_weights, orientation_likelihood, domain_likelihood,
    dimension_likelihood, country_similarity, model_similarity, pca_points."""


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
                                **{d.lower(): pl.Float64 for d in DIMENSIONS}})


def normalise_hofstede(frame: pl.DataFrame, source: Path | str = "hofstede") -> pl.DataFrame:
    """Hofstede scores as country_code, country_name, pdi ... ivr (Float64, null where missing)."""
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
        *(pl.col(lower[d.lower()]).cast(pl.Float64, strict=False).alias(d.lower()) for d in DIMENSIONS))


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


def read_responses(paths: Sequence[Path]) -> pl.DataFrame:
    """responses.jsonl files (evaluate's output) as one table: model, question_id, prompt, sample_index, response,
    source (the file)."""
    rows = []
    for path in map(Path, paths):
        for number, record in runs.jsonl_records(path, RESPONSE_FIELDS):
            if record["prompt"] not in prompts.TEMPLATES:
                raise InputError(f"unknown prompt {record['prompt']!r}", file=path, row=number, column="prompt")
            rows.append({"model": str(record["model"]), "question_id": str(record["question_id"]),
                         "prompt": record["prompt"], "sample_index": int(record["sample_index"]),
                         "response": record["response"], "source": str(path), "row": number})
        if not any(r["source"] == str(path) for r in rows):
            raise InputError("responses file has no records", file=path)
    return pl.DataFrame(rows, schema={"model": pl.String, "question_id": pl.String, "prompt": pl.String,
                                      "sample_index": pl.Int64, "response": pl.String, "source": pl.String,
                                      "row": pl.Int64})


def score_answers(responses: pl.DataFrame, questions: pl.DataFrame) -> pl.DataFrame:
    """Each answer read (App. A.3.1, ``cdeval_prompts.score_answer``): adds dimension, domain, template, order,
    status, shown (displayed option picked) and score (toward the target orientation)."""
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
        pl.Series("status", statuses, dtype=pl.String),
        pl.Series("shown", shown, dtype=pl.Int64),
        pl.Series("score", scores, dtype=pl.Float64))


def prompt_likelihood(scored: pl.DataFrame) -> pl.DataFrame:
    """Eq. 1: per model, question and prompt, the mean score over the R samples (the orientation likelihood of one
    prompt): model, question_id, dimension, domain, template, order, likelihood, n_samples."""
    return (scored.group_by("model", "question_id", "dimension", "domain", "template", "order", maintain_order=True)
            .agg(pl.col("score").mean().alias("likelihood"), pl.len().alias("n_samples")))


def _norm_reverse(prompt_lik: pl.DataFrame) -> pl.DataFrame:
    keys = ["model", "question_id", "template"]
    norm = prompt_lik.filter(pl.col("order") == "norm").select(*keys, pl.col("likelihood").alias("norm"))
    reverse = prompt_lik.filter(pl.col("order") == "reverse").select(*keys, pl.col("likelihood").alias("reverse"))
    return norm.join(reverse, on=keys, how="full", coalesce=True)


def instability(prompt_lik: pl.DataFrame) -> pl.DataFrame:
    """Eq. 6: U_t per model and template = mean over questions of |L_{t,norm}(q) - L_{t,reverse}(q)| (questions
    answered in both orders): model, template, instability, n_questions."""
    pairs = _norm_reverse(prompt_lik).drop_nulls(["norm", "reverse"])
    return (pairs.group_by("model", "template", maintain_order=True)
            .agg((pl.col("norm") - pl.col("reverse")).abs().mean().alias("instability"),
                 pl.len().alias("n_questions"))
            .sort("model", pl.col("template").replace_strict({t: i for i, t in enumerate(prompts.TEMPLATE_KINDS)},
                                                             default=99)))


def template_weights(instab: pl.DataFrame, scale: float = INSTABILITY_SCALE) -> pl.DataFrame:
    """Eq. 7: w_t = exp(N U_t) / sum_t' exp(N U_t') per model (N = ``scale``; computed stably, shifting N U_t by
    its maximum): model, template, instability, weight."""
    rows = []
    for (model,), part in instab.partition_by("model", as_dict=True, maintain_order=True).items():
        logits = [scale * u for u in part["instability"]]
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        total = sum(exps)
        for template, u, e in zip(part["template"], part["instability"], exps):
            rows.append({"model": model, "template": template, "instability": u, "weight": e / total})
    return pl.DataFrame(rows, schema={"model": pl.String, "template": pl.String, "instability": pl.Float64,
                                      "weight": pl.Float64})


def orientation_likelihood(prompt_lik: pl.DataFrame, weights: pl.DataFrame) -> pl.DataFrame:
    """Eq. 2: L(q) = sum_t w_t L_t(q), with L_t(q) the mean of template t's norm and reverse likelihoods (Eq. 1).
    A template missing for a question (a partial responses file) leaves the weights of the others renormalised:
    model, question_id, dimension, domain, likelihood."""
    per_template = (prompt_lik.group_by("model", "question_id", "dimension", "domain", "template", maintain_order=True)
                    .agg(pl.col("likelihood").mean()))
    joined = per_template.join(weights.select("model", "template", "weight"), on=["model", "template"], how="left")
    return (joined.group_by("model", "question_id", "dimension", "domain", maintain_order=True)
            .agg(((pl.col("likelihood") * pl.col("weight")).sum() / pl.col("weight").sum()).alias("likelihood")))


def domain_likelihood(likelihood: pl.DataFrame) -> pl.DataFrame:
    """Table 2: the mean orientation likelihood per model, dimension and domain: model, dimension, domain,
    likelihood, n_questions."""
    return (likelihood.group_by("model", "dimension", "domain")
            .agg(pl.col("likelihood").mean(), pl.len().alias("n_questions"))
            .sort("model", _order("dimension", DIMENSIONS), _order("domain", DOMAINS), "domain"))


def dimension_likelihood(likelihood: pl.DataFrame) -> pl.DataFrame:
    """The mean orientation likelihood per model and dimension over its questions: model, dimension, likelihood,
    n_questions."""
    return (likelihood.group_by("model", "dimension")
            .agg(pl.col("likelihood").mean(), pl.len().alias("n_questions"))
            .sort("model", _order("dimension", DIMENSIONS)))


def _order(column: str, values: Sequence[str]) -> pl.Expr:
    return pl.col(column).replace_strict({v: i for i, v in enumerate(values)}, default=len(values),
                                         return_dtype=pl.Int64)


def _vectors(dim_lik: pl.DataFrame) -> dict[str, dict[str, float]]:
    """model -> dimension -> likelihood on the 0-100 scale."""
    out: dict[str, dict[str, float]] = {}
    for row in dim_lik.iter_rows(named=True):
        if row["likelihood"] is not None:
            out.setdefault(row["model"], {})[row["dimension"]] = HOFSTEDE_SCALE * row["likelihood"]
    return out


def _distance(a: dict[str, float], b: dict[str, float]) -> tuple[float | None, int]:
    shared = [d for d in DIMENSIONS if a.get(d) is not None and b.get(d) is not None]
    if not shared:
        return None, 0
    return math.sqrt(sum((a[d] - b[d]) ** 2 for d in shared)), len(shared)


def similarity(distance: float | None, beta: float = BETA) -> float | None:
    """exp(-beta * distance) (Eq. 3 / Eq. 4)."""
    return None if distance is None else math.exp(-beta * distance)


def country_similarity(dim_lik: pl.DataFrame, hofstede: pl.DataFrame, beta: float = BETA) -> pl.DataFrame:
    """Eq. 3: Sim(M, C) = exp(-beta ||100 L_M - H_C||_2) over the dimensions country C has a score for:
    model, country_code, country_name, n_dimensions, distance, similarity (most similar first per model)."""
    models = _vectors(dim_lik)
    rows = []
    for country in hofstede.iter_rows(named=True):
        scores = {d: country[d.lower()] for d in DIMENSIONS}
        for model, vector in models.items():
            distance, n = _distance(vector, scores)
            if distance is None:
                continue
            rows.append({"model": model, "country_code": country["country_code"],
                         "country_name": country["country_name"], "n_dimensions": n, "distance": distance,
                         "similarity": similarity(distance, beta)})
    frame = pl.DataFrame(rows, schema={"model": pl.String, "country_code": pl.String, "country_name": pl.String,
                                       "n_dimensions": pl.Int64, "distance": pl.Float64, "similarity": pl.Float64})
    return frame.sort(["model", "similarity", "country_code"], descending=[False, True, False])


def model_similarity(dim_lik: pl.DataFrame, beta: float = BETA) -> pl.DataFrame:
    """Eq. 4: Sim(M_i, M_j) = exp(-beta ||100 L_i - 100 L_j||_2) for every pair of models (i before j in name
    order): model_a, model_b, n_dimensions, distance, similarity."""
    models = _vectors(dim_lik)
    names = sorted(models)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            distance, n = _distance(models[a], models[b])
            rows.append({"model_a": a, "model_b": b, "n_dimensions": n, "distance": distance,
                         "similarity": similarity(distance, beta)})
    return pl.DataFrame(rows, schema={"model_a": pl.String, "model_b": pl.String, "n_dimensions": pl.Int64,
                                      "distance": pl.Float64, "similarity": pl.Float64})


def pairwise_baseline(model_sim: pl.DataFrame) -> float | None:
    """Eq. 5: the mean between-model similarity over all pairs (None with fewer than two models)."""
    values = model_sim["similarity"].drop_nulls()
    return float(values.mean()) if values.len() else None


def pca_points(dim_lik: pl.DataFrame, hofstede: pl.DataFrame) -> tuple[pl.DataFrame, list[float]]:
    """Fig. 6: a 2-component PCA (scikit-learn) of the models' six likelihoods (x 100) and the countries with all
    six Hofstede scores: (kind "model"/"country", name, pc1, pc2; explained variance ratios)."""
    names, kinds, matrix = [], [], []
    for model, vector in _vectors(dim_lik).items():
        if all(d in vector for d in DIMENSIONS):
            names.append(model), kinds.append("model"), matrix.append([vector[d] for d in DIMENSIONS])
    for row in hofstede.iter_rows(named=True):
        values = [row[d.lower()] for d in DIMENSIONS]
        if all(v is not None for v in values):
            names.append(row["country_name"] or row["country_code"]), kinds.append("country"), matrix.append(values)
    schema = {"kind": pl.String, "name": pl.String, "pc1": pl.Float64, "pc2": pl.Float64}
    if len(matrix) < 2:
        return pl.DataFrame(schema=schema), []
    import numpy as np
    from sklearn.decomposition import PCA

    data = np.asarray(matrix, dtype=float)
    n_components = min(2, data.shape[0], data.shape[1])
    pca = PCA(n_components=n_components, svd_solver="full")
    coords = pca.fit_transform(data)
    if coords.shape[1] < 2:
        coords = np.hstack([coords, np.zeros((coords.shape[0], 2 - coords.shape[1]))])
    frame = pl.DataFrame({"kind": kinds, "name": names, "pc1": coords[:, 0], "pc2": coords[:, 1]}, schema=schema)
    return frame, [float(v) for v in pca.explained_variance_ratio_]


# ---------------------------------------------------------------------------------------------------- metrics



def score_responses(responses: pl.DataFrame, tables: dict[str, pl.DataFrame], *, sources: list[dict] | None = None,
                    release: Path | str | None = None, beta: float = BETA,
                    scale: float = INSTABILITY_SCALE) -> ScoreResult:
    """Every table and metric from answers (model, question_id, prompt, sample_index, response) and the release
    tables (questions, hofstede)."""
    if responses.height == 0:
        raise InputError("no responses to score")
    scored = score_answers(responses, tables["questions"])
    prompt_lik = prompt_likelihood(scored)
    instab = instability(prompt_lik)
    weights = template_weights(instab, scale)
    likelihood = orientation_likelihood(prompt_lik, weights)
    by_domain = domain_likelihood(likelihood)
    by_dimension = dimension_likelihood(likelihood)
    countries = country_similarity(by_dimension, tables["hofstede"], beta)
    pairs = model_similarity(by_dimension, beta)
    points, explained = pca_points(by_dimension, tables["hofstede"])

    models = sorted(scored["model"].unique().to_list())
    per_model = {}
    for model in models:
        mine = scored.filter(pl.col("model") == model)
        status = {s: 0 for s in prompts.STATUSES}
        for s, n in mine.group_by("status").len().iter_rows():
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
            "n_neutral": int((mine["status"] != "chosen").sum()),
            "instability": dict(zip(w["template"], w["instability"])),
            "template_weights": dict(zip(w["template"], w["weight"])),
            "dimension_likelihood": dict(zip(dims["dimension"], dims["likelihood"])),
            "dimension_n_questions": dict(zip(dims["dimension"], dims["n_questions"])),
            "domain_likelihood": domains,
            "prompt_likelihood": {name: float(mine.filter(pl.col("prompt") == name)["score"].mean())
                                  for name in prompts.PROMPTS if (mine["prompt"] == name).any()},
            "country_similarity": countries.filter(pl.col("model") == model).drop("model").to_dicts(),
        }
    metrics = {
        "benchmark": "cdeval",
        "release": None if release is None else str(release),
        "responses": sources or [],
        "models": models,
        "constants": {"beta": beta, "instability_scale": scale, "neutral_score": prompts.NEUTRAL,
                      "hofstede_scale": HOFSTEDE_SCALE, "temperature": prompts.TEMPERATURE},
        "dimensions": list(DIMENSIONS),
        "domains": list(DOMAINS),
        "per_model": per_model,
        "model_similarity": pairs.to_dicts(),
        "pairwise_baseline": pairwise_baseline(pairs),
        "pca": {"explained_variance_ratio": explained, "points": points.to_dicts()},
    }
    tables_out = {"scored": scored, "prompt_likelihood": prompt_lik, "instability": instab,
                  "template_weights": weights, "orientation_likelihood": likelihood, "domain_likelihood": by_domain,
                  "dimension_likelihood": by_dimension, "country_similarity": countries, "model_similarity": pairs,
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
    """Fig. 6 style: models and countries on the first two principal components of the six dimensions."""
    plt = plots.pyplot()
    points = metrics["pca"]["points"]
    explained = metrics["pca"]["explained_variance_ratio"]
    fig, ax = plt.subplots(figsize=(7, 6), dpi=100)
    if not points:
        ax.text(0.5, 0.5, "fewer than two complete points: no PCA", ha="center", va="center")
        ax.axis("off")
    for kind, colour, marker in (("country", "tab:grey", "o"), ("model", "tab:red", "*")):
        chosen = [p for p in points if p["kind"] == kind]
        if chosen:
            ax.scatter([p["pc1"] for p in chosen], [p["pc2"] for p in chosen], c=colour, marker=marker,
                       s=120 if kind == "model" else 25, label=f"{kind}s", zorder=3 if kind == "model" else 2)
            for p in chosen:
                ax.annotate(p["name"], (p["pc1"], p["pc2"]), fontsize=7 if kind == "model" else 5,
                            textcoords="offset points", xytext=(3, 3))
    if points:
        label = [f"PC{i + 1} ({v:.0%})" for i, v in enumerate(explained)] + ["PC2"]
        ax.set_xlabel(label[0])
        ax.set_ylabel(label[1])
        ax.legend(loc="best", fontsize=8)
        ax.grid(alpha=0.3)
    ax.set_title("CDEval: PCA of models and countries (Hofstede dimensions)")
    plots.save_figure(fig, path)


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
                        "sample_index": plan.sample_index, "response": response.text, "status": status,
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
        closest = m["country_similarity"][0]["country_name"] if m["country_similarity"] else "n/a"
        lines.append(f"cdeval {model}: {m['n_responses']:,} responses ({m['n_neutral']:,} neutral); {dims}; "
                     f"closest country {closest}")
    if metrics.get("pairwise_baseline") is not None:
        lines.append(f"cdeval: {len(metrics['models'])} models, pairwise baseline similarity "
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
