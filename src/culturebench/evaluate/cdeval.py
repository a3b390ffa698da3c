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
  ``evaluate`` on a release built from a translated questionnaire (its manifest's ``language``, see
  ``culturebench generate cdeval_translate``) writes that language into every record.
- Intervals (issue #18, ``bootstrap_scores``): a bootstrap over questions within each dimension recomputes the
  chain above (Eq. 7 weights included) on each resample; paired model differences with Holm-adjusted p-values.
  ``COMPARE`` is this benchmark's entry for ``culturebench compare``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import compare, plots, runs, uncertainty
from culturebench.evaluate import cdeval_prompts as prompts
from culturebench.evaluate.limit import counted, limit_frame
from culturebench.raw.cdeval import DEFAULT_LANGUAGE
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
REPEAT_RULE_SOURCE = {
    "nearest": "App. A.3.1: a Repeat answer is the option nearest by edit distance",
    "similar_only": "ours, not the paper's (--config repeat_rule): a Repeat answer whose nearer option has a "
                    f"normalised Levenshtein similarity under {prompts.MIN_REPEAT_SIMILARITY} counts as neutral",
}
"""What metrics.json says of the Repeat rule used (``cdeval_prompts.REPEAT_RULES``)."""
RESPONSE_KEY = ("model", "language", "question_id", "prompt", "sample_index")
"""What identifies one answer of responses.jsonl: a second line with the same is refused, not counted twice."""


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


def release_language(manifest: dict) -> str:
    """The questionnaire's language as the build recorded it (``en`` for the released CDEval.json)."""
    return manifest.get("provenance", {}).get("language", DEFAULT_LANGUAGE)


def respondent(model: str, language: str | None) -> str:
    """The label a (model, language) is scored under (Sec. 4.2): the model, or ``model [language]``."""
    return f"{model} [{language}]" if language else model


def read_responses(paths: Sequence[Path]) -> pl.DataFrame:
    """responses.jsonl files (evaluate's output) as one table: model (a ``language`` field, Sec. 4.2, makes it
    ``model [language]``), question_id, prompt, sample_index, response, source (the file), row."""
    rows = []
    for path in map(Path, paths):
        for number, record in runs.jsonl_records(path, RESPONSE_FIELDS, unique=RESPONSE_KEY):
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


def score_answers(responses: pl.DataFrame, questions: pl.DataFrame, repeat_rule: str = prompts.REPEAT_RULES[0]
                  ) -> pl.DataFrame:
    """Each answer read (App. A.3.1, ``cdeval_prompts.score_answer``; ``repeat_rule``: ``prompts.REPEAT_RULES``):
    adds dimension, domain, template, order, parse_status, shown (displayed option picked) and score (toward the
    target orientation)."""
    joined = responses.join(questions.select("question_id", "dimension", "domain", "option_1", "option_2"),
                            on="question_id", how="left")
    unknown = joined.filter(pl.col("option_1").is_null())
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"question id {first['question_id']!r} is not in the release",
                         file=first.get("source"), row=first.get("row"), column="question_id")
    scores, statuses, shown = [], [], []
    for row in joined.select("prompt", "response", "option_1", "option_2").iter_rows():
        s, status, picked = prompts.score_answer(*row, repeat_rule)
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


# ------------------------------------------------------------------------------------------------ uncertainty


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
                     scale: float = INSTABILITY_SCALE) -> dict[str, pl.DataFrame]:
    """Bootstrap intervals over questions (``uncertainty.resample_units``, resampled within each dimension so
    that every resample keeps each dimension's number of questions, one resample shared by all models;
    BOOTSTRAP_NOTE; a domain cell that some resample misses altogether gets no interval): tables keyed like
    ``score_responses``' with the bounds as ``low``/``high`` columns: dimension_likelihood (model, dimension),
    domain_likelihood (model, dimension, domain), template_weights (model, template), country_similarity (model,
    country_code), group_similarity (model, group), model_similarity (model_a, model_b, both orders),
    pairwise_baseline (one row), differences (model_a < model_b, dimension: difference, low, high, pvalue,
    pvalue_holm, significant, n_common: questions both answered)."""
    from culturebench.evaluate.stats import holm

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

    result = uncertainty.resample_units(strata, statistic, settings)
    spans = iter(range(len(result.estimate)))

    def take(n: int) -> list[int]:
        return [next(spans) for _ in range(n)]

    rows: dict[str, list[dict]] = {k: [] for k in ("dimension_likelihood", "domain_likelihood", "template_weights",
                                                   "country_similarity", "group_similarity", "model_similarity",
                                                   "pairwise_baseline", "differences")}

    def bounds(i: int) -> dict:
        low, high = result.interval(i)
        return {"low": low, "high": high}

    for m in models:
        for d, i in zip(DIMENSIONS, take(len(DIMENSIONS))):
            rows["dimension_likelihood"].append({"model": m, "dimension": d, **bounds(i)})
        for (d, domain), i in zip(cells, take(len(cells))):
            rows["domain_likelihood"].append({"model": m, "dimension": d, "domain": domain, **bounds(i)})
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
    alpha = 1 - settings.confidence_level
    for a, b in diff_pairs:
        common = int((has[a] & has[b]).sum())
        for d, i in zip(DIMENSIONS, take(len(DIMENSIONS))):
            rows["differences"].append({"model_a": a, "model_b": b, "dimension": d,
                                        "difference": uncertainty.finite_or_none(result.estimate[i]), **bounds(i),
                                        "pvalue": result.pvalue(i), "n_common": common})
    for row, adjusted in zip(rows["differences"], holm([r["pvalue"] for r in rows["differences"]])):
        row["pvalue_holm"] = adjusted
        row["significant"] = adjusted is not None and adjusted < alpha
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
    return frames


def with_bounds(frame: pl.DataFrame, bounds: pl.DataFrame, value: str) -> pl.DataFrame:
    """``frame`` with the ``low``/``high`` of ``bounds`` (joined on their other columns) as ``<value>_low`` and
    ``<value>_high`` beside ``value`` (null where there is no interval)."""
    on = [c for c in bounds.columns if c not in ("low", "high")]
    return frame.join(bounds.rename({"low": f"{value}_low", "high": f"{value}_high"}), on=on, how="left")


def interval(row: dict, value: str) -> list[float | None]:
    """[low, high] of ``value`` in a row of a table ``with_bounds`` made."""
    return [row.get(f"{value}_low"), row.get(f"{value}_high")]


# ---------------------------------------------------------------------------------------------------- metrics


def score_responses(responses: pl.DataFrame, tables: dict[str, pl.DataFrame], *, sources: list[dict] | None = None,
                    release: Path | str | None = None, beta: float = BETA, scale: float = INSTABILITY_SCALE,
                    bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap(),
                    repeat_rule: str = prompts.REPEAT_RULES[0]) -> ScoreResult:
    """Every table and metric from answers (model, question_id, prompt, sample_index, response) and the release
    tables (questions, hofstede); the point estimates are the paper's, each with a ``bootstrap`` interval
    (``bootstrap_scores``) beside it: ``<metric>_ci`` = [low, high] in metrics.json, ``<value>_low``/``_high``
    columns in the tables, the settings under ``uncertainty``, and the paired model differences under
    ``model_differences``."""
    if responses.height == 0:
        raise InputError("no responses to score")
    hofstede = tables["hofstede"]
    scored = score_answers(responses, tables["questions"], repeat_rule)
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
    bounds = bootstrap_scores(scored, tables["questions"], hofstede, bootstrap, beta=beta, scale=scale)
    by_dimension = with_bounds(by_dimension, bounds["dimension_likelihood"], "likelihood")
    by_domain = with_bounds(by_domain, bounds["domain_likelihood"], "likelihood")
    weights = with_bounds(weights, bounds["template_weights"], "weight")
    countries = with_bounds(countries, bounds["country_similarity"], "similarity")
    groups = with_bounds(groups, bounds["group_similarity"], "similarity")
    pairs = with_bounds(pairs, bounds["model_similarity"], "similarity")
    differences = bounds["differences"]

    models = sorted(scored["model"].unique().to_list())
    per_model = {}
    for model in models:
        mine = scored.filter(pl.col("model") == model)
        status = {s: 0 for s in prompts.STATUSES}
        for s, n in mine.group_by("parse_status").len().iter_rows():
            status[s] = n
        dims = by_dimension.filter(pl.col("model") == model)
        domains: dict[str, dict[str, float]] = {}
        domains_ci: dict[str, dict[str, list]] = {}
        for row in by_domain.filter(pl.col("model") == model).iter_rows(named=True):
            domains.setdefault(row["dimension"], {})[row["domain"]] = row["likelihood"]
            domains_ci.setdefault(row["dimension"], {})[row["domain"]] = interval(row, "likelihood")
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
            "template_weights_ci": {r["template"]: interval(r, "weight") for r in w.iter_rows(named=True)},
            "prompt_weights": {f"{t}_{o}": pw for t, pw in zip(w["template"], w["prompt_weight"])
                               for o in prompts.ORDERS},
            "dimension_likelihood": dict(zip(dims["dimension"], dims["likelihood"])),
            "dimension_likelihood_ci": {r["dimension"]: interval(r, "likelihood") for r in dims.iter_rows(named=True)},
            "dimension_domain_mean": dict(zip(dims["dimension"], dims["domain_mean"])),
            "dimension_n_questions": dict(zip(dims["dimension"], dims["n_questions"])),
            "domain_likelihood": domains,
            "domain_likelihood_ci": domains_ci,
            "prompt_likelihood": {name: float(mine.filter(pl.col("prompt") == name)["score"].mean())
                                  for name in prompts.PROMPTS if (mine["prompt"] == name).any()},
            "missing_dimensions": models_left_out.get(model, []),
            "country_similarity": countries.filter(pl.col("model") == model).drop("model").to_dicts(),
            "group_similarity": groups.filter(pl.col("model") == model).drop("model").to_dicts(),
        }
    metrics = {
        "benchmark": "cdeval",
        "release": None if release is None else str(release),
        "release_manifest_sha256": runs.release_manifest_sha256(release),
        "responses": sources or [],
        "models": models,
        "constants": {"beta": beta, "instability_scale_N": scale, "neutral_score": prompts.NEUTRAL,
                      "temperature": prompts.TEMPERATURE, "repeat_rule": repeat_rule,
                      "repeat_rule_source": REPEAT_RULE_SOURCE[repeat_rule]},
        "dimensions": list(DIMENSIONS),
        "domains": list(DOMAINS),
        "hofstede": {"versions": hofstede_versions(hofstede), "countries_compared": hofstede.height
                     - countries_left_out.height, "countries_left_out": countries_left_out.to_dicts()},
        "per_model": per_model,
        "template_weights": {m: per_model[m]["template_weights"] for m in models},
        "models_left_out": [{"model": m, "missing": d} for m, d in sorted(models_left_out.items())],
        "model_similarity": pairs.to_dicts(),
        "pairwise_baseline": pairwise_baseline(pairs),
        "pairwise_baseline_ci": ([bounds["pairwise_baseline"]["low"][0], bounds["pairwise_baseline"]["high"][0]]
                                 if bounds["pairwise_baseline"].height else None),
        "model_differences": differences.to_dicts(),
        "uncertainty": bootstrap.record(unit="question", strata="dimension", **BOOTSTRAP_NOTE),
        "pca": {"explained_variance_ratio": explained, "points": points.to_dicts(),
                "left_out": ([{"kind": "model", "name": m, "missing": d} for m, d in sorted(models_left_out.items())]
                             + [{"kind": "country", "name": r["country_name"] or r["country_code"],
                                 "missing": r["missing"]} for r in countries_left_out.iter_rows(named=True)])},
    }
    tables_out = {"scored": scored, "prompt_likelihood": prompt_lik, "instability": instab,
                  "template_weights": weights, "orientation_likelihood": likelihood, "domain_likelihood": by_domain,
                  "dimension_likelihood": by_dimension, "country_similarity": countries,
                  "countries_left_out": countries_left_out, "group_similarity": groups, "model_similarity": pairs,
                  "pca_points": points, "model_differences": differences}
    return ScoreResult(metrics=runs.json_safe(metrics), tables=tables_out)


def score(responses: Sequence[Path], release: Path, repeat_rule: str = prompts.REPEAT_RULES[0]) -> ScoreResult:
    """``culturebench score cdeval``: every metric from saved responses.jsonl files against a CDEval release."""
    release = Path(release)
    tables = release_tables(release)
    frame = read_responses(responses)
    return score_responses(frame, tables, sources=[runs.source_info(p) for p in responses], release=release,
                           repeat_rule=repeat_rule)


# ---------------------------------------------------------------------------------------------------- plots


def dimensions_png(metrics: dict, path: Path) -> None:
    """Fig. 3 style: one panel per dimension, the models as points on the 0-1 orientation-likelihood axis with
    their bootstrap interval as error bars (0.5 dashed: no orientation)."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(2, 3, figsize=(12, max(4.0, 1.2 + 0.45 * len(models)) * 1.4), dpi=100, squeeze=False)
    colours = plt.get_cmap("tab10")
    for ax, dimension in zip(axes.flat, DIMENSIONS):
        for i, model in enumerate(models):
            value = metrics["per_model"][model]["dimension_likelihood"].get(dimension)
            if value is not None:
                low, high = metrics["per_model"][model].get("dimension_likelihood_ci", {}).get(dimension,
                                                                                            [None, None])
                if low is not None and high is not None:
                    ax.errorbar([value], [i], xerr=[[max(0.0, value - low)], [max(0.0, high - value)]], color=colours(i % 10),
                                capsize=3, linewidth=1, zorder=2)
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
    level = metrics.get("uncertainty", {}).get("confidence_level")
    fig.suptitle("CDEval: orientation likelihood per dimension"
                 + (f" ({level:.0%} bootstrap intervals over questions)" if level else ""))
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
                ax.annotate(p["name"], (p["pc1"], p["pc2"]), fontsize=8 if kind == "model" else 7,
                            textcoords="offset points", xytext=(3, 3))
    if points:
        label = [f"PC{i + 1} ({v:.0%})" for i, v in enumerate(explained)] + ["PC2"]
        ax.margins(0.1)  # room for the labels of the outermost points
        ax.set_xlabel(label[0])
        ax.set_ylabel(label[1])
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, borderaxespad=0)
        ax.grid(alpha=0.3)
    ax.set_title("CDEval: PCA of models and countries (six Hofstede dimensions)")
    footer = 0.0
    if left_out:
        shown = "; ".join(f"{e['kind']} {e['name']} (no {', '.join(e['missing'])})" for e in left_out[:4])
        more = f"; and {len(left_out) - 4} more (metrics.json pca.left_out)" if len(left_out) > 4 else ""
        fig.text(0.01, 0.01, f"Left out, lacking a dimension: {shown}{more}", fontsize=8, wrap=True, va="bottom")
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
             repeat_rule: str = prompts.REPEAT_RULES[0], args: dict | None = None, console=None
             ) -> runs.EvaluateResult:
    """Ask ``backend`` the six prompts x ``samples`` for every question (``limit`` spread over dimension x domain:
    ``limit.spread_positions``), then score: writes
    responses.jsonl, metrics.json, the plots and run.json into ``out``. Re-running into the same folder answers
    every request already made from the cache."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out = Path(release), Path(out)
    samples = prompts.DEFAULT_SAMPLES if samples is None else samples
    temperature = prompts.TEMPERATURE if temperature is None else temperature
    tables = check_inputs(release, samples, limit)
    manifest = load_manifest(release)
    questions, covers = limit_frame(tables["questions"], ["dimension", "domain"], limit, seed, item="questions",
                                    columns=["dimensions", "domains"])
    planned = plan_requests(questions, samples=samples, temperature=temperature, max_tokens=max_tokens, seed=seed)
    result = runs.ask(backend, [p.request for p in planned], out, "cdeval", console)
    model = str(getattr(backend, "model", "model"))
    language = release_language(manifest)
    tag = {} if language == DEFAULT_LANGUAGE else {"language": language}
    info = {r["question_id"]: r for r in questions.select("question_id", "dimension", "domain", "option_1",
                                                          "option_2").iter_rows(named=True)}
    records = []
    for plan, response in zip(planned, result.responses):
        q = info[plan.question_id]
        s, status, shown = prompts.score_answer(plan.prompt, response.text, q["option_1"], q["option_2"],
                                                repeat_rule)
        template, order = plan.prompt.rsplit("_", 1)
        records.append({"model": model, **tag, "question_id": plan.question_id, "dimension": q["dimension"],
                        "domain": q["domain"], "prompt": plan.prompt, "template": template, "order": order,
                        "sample_index": plan.sample_index, "response": response.text, "parse_status": status,
                        "shown": shown, "score": s, "finish_reason": response.finish_reason})
    responses_path = runs.write_jsonl(out / runs.RESPONSES_FILE, records)
    frame = pl.DataFrame([{**{k: r[k] for k in RESPONSE_FIELDS}, "model": respondent(model, tag.get("language"))}
                          for r in records],
                         schema={"model": pl.String, "question_id": pl.String, "prompt": pl.String,
                                 "sample_index": pl.Int64, "response": pl.String})
    scored = score_responses(frame, tables, release=release, sources=[runs.source_info(responses_path)],
                             repeat_rule=repeat_rule)
    scored.metrics["covers"] = [covers.as_dict()]
    stats = runs.runner_stats(result)
    m = scored.metrics["per_model"][respondent(model, tag.get("language"))]
    written = runs.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="cdeval", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_questions": questions.height, "prompts": list(prompts.PROMPTS), "samples": samples,
                              "n_requests": len(records), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "repeat_rule": repeat_rule,
                              "questionnaire_language": language},
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
        lines.append(f"cdeval: {counted(len(left), 'countries')} lacking a Hofstede dimension, not compared "
                     f"(metrics.json hofstede.countries_left_out)")
    if metrics.get("pairwise_baseline") is not None:
        lines.append(f"cdeval: {len(metrics['models'])} models, pairwise baseline similarity (Eq. 5) "
                     f"{metrics['pairwise_baseline']:.4f}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


CONFIG_KEYS = ("repeat_rule",)
"""``--config`` options of ``evaluate`` / ``score cdeval`` (``{"repeat_rule": "similar_only"}``)."""


def read_config(path: Path | None) -> dict:
    """The ``--config`` options (CONFIG_KEYS), checked; {} without a file."""
    if path is None:
        return {}
    config = runs.read_options_file(path, CONFIG_KEYS)
    if config.get("repeat_rule", prompts.REPEAT_RULES[0]) not in prompts.REPEAT_RULES:
        raise InputError(f"unknown repeat_rule {config['repeat_rule']!r}; choose from "
                         f"{', '.join(prompts.REPEAT_RULES)}", file=path, column="repeat_rule")
    return config


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    check_inputs(options["release"], options["samples"], options["limit"])
    read_config(options.get("config"))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    """`culturebench evaluate`: run, score, write the run folder; returns (summary line, paths written)."""
    config = read_config(options.get("config"))
    result = evaluate(model_backend, options["release"], options["out"], samples=options["samples"],
                      temperature=options["temperature"], max_tokens=prompts.MAX_TOKENS if options["max_tokens"] is None else options["max_tokens"],
                      seed=options["seed"], limit=options["limit"], args=args, console=console, **config)
    line = f"{summary(result.metrics)}\ncdeval: {runs.request_counts(len(result.records), result.stats)}"
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses; returns (summary line, paths written)."""
    result = score(runs.split_paths(responses), release, **read_config(config))
    return summary(result.metrics), write_run(result, out)


# --------------------------------------------------------------------------------------------- compare


def comparison_release(folders: Sequence[compare.RunFolder], release: Path | None) -> tuple[dict[str, pl.DataFrame], Path]:
    """The release tables the runs are compared against: ``release`` when given, else the runs' releases (with
    --allow-mixed several: their questions joined, a question id taken from the first release that has it; the
    Hofstede table of the first)."""
    paths = compare.release_paths(folders, release)
    loaded = [release_tables(p) for p in paths]
    questions = pl.concat([t["questions"] for t in loaded], how="diagonal_relaxed").unique(
        "question_id", keep="first", maintain_order=True)
    return {"questions": questions, "hofstede": loaded[0]["hofstede"]}, paths[0]


def runs_repeat_rule(folders: Sequence[compare.RunFolder]) -> str:
    """The Repeat rule every run was scored with (metrics.json ``constants.repeat_rule``; a run that names none was
    scored before the option existed and is re-scored with the default); runs that differ are refused."""
    rules = {f.metrics.get("constants", {}).get("repeat_rule", prompts.REPEAT_RULES[0]) for f in folders}
    if len(rules) > 1:
        raise InputError(f"the runs were scored with different Repeat rules ({', '.join(sorted(rules))}); score them "
                         "again with one --config repeat_rule")
    return rules.pop()


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's responses re-scored together (one bootstrap of questions shared by all models: paired), as the
    tables of the report."""
    tables, release_path = comparison_release(folders, release)
    responses, sources = compare.relabelled_responses(folders, labels, read_responses)
    result = score_responses(responses, tables, sources=sources, release=release_path, bootstrap=settings,
                             repeat_rule=runs_repeat_rule(folders))
    return compare.Comparison(models=result.metrics["models"], tables=comparison_tables(result),
                              metrics=result.metrics)


def comparison_tables(result: ScoreResult) -> dict[str, pl.DataFrame]:
    """The report's tables from a ScoreResult: main (Table 2/9 with the C_m,d of Eq. 3), template_weights
    (Table 4), model_similarity (Eq. 4, Eq. 5), differences (paired), country_similarity (Eq. 3), group_similarity
    (Sec. 4.4)."""
    t = result.tables
    cells = t["domain_likelihood"]
    domains = [d for d in DOMAINS if d in set(cells["domain"])] + sorted(set(cells["domain"]) - set(DOMAINS))
    main = t["dimension_likelihood"].select("model", "dimension", "n_questions")
    for domain in domains:
        part = cells.filter(pl.col("domain") == domain).select(
            "model", "dimension", *(pl.col(c).alias(c.replace("likelihood", domain))
                                    for c in ("likelihood", "likelihood_low", "likelihood_high")))
        main = main.join(part, on=["model", "dimension"], how="left")
    main = main.join(t["dimension_likelihood"].select(
        "model", "dimension", pl.col("domain_mean").alias("mean of domains"),
        *(pl.col(c).alias(c.replace("likelihood", "C_m,d")) for c in ("likelihood", "likelihood_low", "likelihood_high"))),
        on=["model", "dimension"], how="left")
    baseline = result.metrics["pairwise_baseline"]
    pairs = t["model_similarity"]
    if baseline is not None:
        low, high = result.metrics["pairwise_baseline_ci"]
        pairs = pl.concat([pairs, pl.DataFrame({"model_a": ["Eq. 5 pairwise baseline"], "model_b": ["(all pairs)"],
                                                "similarity": [baseline], "similarity_low": [low],
                                                "similarity_high": [high]}, schema=pairs.schema)])
    differences = t["model_differences"].rename({"low": "difference_low", "high": "difference_high"})
    countries = t["country_similarity"].with_columns(
        pl.int_range(1, pl.len() + 1).over("model").alias("rank")).select(
        "model", "rank", "country_code", "country_name", "similarity", "similarity_low", "similarity_high")
    return {"main": main, "template_weights": t["template_weights"], "model_similarity": pairs,
            "differences": differences.select("model_a", "model_b", "dimension", "difference", "difference_low",
                                              "difference_high", "pvalue", "pvalue_holm", "significant", "n_common"),
            "country_similarity": countries, "group_similarity": t["group_similarity"]}


def dimension_bars_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 3 as grouped bars: C_m,d per dimension, one bar per model with its bootstrap interval."""
    plt = plots.pyplot()
    frame = comparison.tables["main"]
    models = comparison.models
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(DIMENSIONS) * max(1, len(models)) / 3), 5), dpi=100)
    width = 0.8 / max(1, len(models))
    slots = list(range(len(DIMENSIONS)))
    for i, model in enumerate(models):
        mine = {r["dimension"]: r for r in frame.filter(pl.col("model") == model).iter_rows(named=True)}
        rows = [mine.get(d, {}) for d in DIMENSIONS]
        values = [r.get("C_m,d") for r in rows]
        x = [xi for xi, v in zip(plots.grouped_bar_x(slots, len(models), i, width), values) if v is not None]
        shown = [(v, r) for v, r in zip(values, rows) if v is not None]
        err = [[max(0.0, v - (r.get("C_m,d_low") if r.get("C_m,d_low") is not None else v)) for v, r in shown],
               [max(0.0, (r.get("C_m,d_high") if r.get("C_m,d_high") is not None else v) - v) for v, r in shown]]
        ax.bar(x, [v for v, _ in shown], width, yerr=err, capsize=3, label=model)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xticks(slots)
    ax.set_xticklabels(DIMENSIONS)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("orientation likelihood C_m,d")
    ax.set_title("CDEval: orientation likelihood per dimension (bootstrap intervals over questions)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    plots.save_figure(fig, path)


def model_similarity_png(comparison: compare.Comparison, path: Path) -> None:
    """Eq. 4 between every two models as a heatmap, each cell with its value and bootstrap interval."""
    plt = plots.pyplot()
    models = comparison.models
    values = {(r["model_a"], r["model_b"]): r for r in comparison.tables["model_similarity"].iter_rows(named=True)}
    size = max(4.0, 1.3 * len(models) + 2)
    fig, ax = plt.subplots(figsize=(size + 1.5, size), dpi=100)
    grid = [[None if a == b else (values.get((a, b)) or {}).get("similarity") for b in models] for a in models]
    found = [v for row in grid for v in row if v is not None]
    # colours span the pairs' own range (Eq. 4 values of similar models all sit near 1); the diagonal is grey
    low = min(found, default=0.0)
    low = max(0.0, low - 0.1 * (1.0 - low)) if low < 1.0 else 0.9
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#dddddd")
    image = ax.imshow([[float("nan") if v is None else v for v in row] for row in grid], cmap=cmap, vmin=low,
                      vmax=1)
    for i, a in enumerate(models):
        for j, b in enumerate(models):
            row = values.get((a, b))
            if a == b:
                ax.text(j, i, "same model", ha="center", va="center", fontsize=7, color="#555555")
                continue
            if row is None or row["similarity"] is None:
                continue
            text = f"{row['similarity']:.3f}"
            if row["similarity_low"] is not None:
                text += f"\n[{row['similarity_low']:.3f}, {row['similarity_high']:.3f}]"
            light = (row["similarity"] - low) / ((1.0 - low) or 1.0) > 0.6  # viridis is light at its top end
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="black" if light else "white")
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(models)))
    ax.set_yticklabels(models, fontsize=8)
    fig.colorbar(image, ax=ax, label="Eq. 4 similarity")
    ax.set_title("CDEval: model-model similarity (Eq. 4)")
    plots.save_figure(fig, path)


COMPARE = compare.BenchmarkSpec(
    benchmark="cdeval",
    title="CDEval (Wang et al. 2024, arXiv 2311.16421)",
    build=compare_runs,
    tables=(
        compare.Table("main", "Table 2 / Table 9: orientation likelihood per dimension and domain",
                      "Mean P(g|S) per dimension and domain; C_m,d is the mean over all the dimension's questions "
                      "(Eq. 3); 'mean of domains' is Table 2's Mean column (no interval)."),
        compare.Table("template_weights", "Table 4: template weights (Eq. 6-7)"),
        compare.Table("model_similarity", "Eq. 4: model-model similarity, and the Eq. 5 pairwise baseline"),
        compare.Table("differences", "Paired differences of C_m,d between models",
                      "difference = C_a,d - C_b,d on the questions both answered; pvalue_holm over all rows."),
        compare.Table("country_similarity", "Eq. 3: similarity to each country (Hofstede), most similar first",
                      empty="Eq. 3 needs all six dimensions: a model missing one (a small --limit) is left out "
                            "(comparison.json: models_left_out)."),
        compare.Table("group_similarity", "Sec. 4.4: similarity to each country group's mean",
                      empty="The Hofstede table of the release has no group column (the paper prints no list of "
                            "groups): add one to RAW/hofstede/ and rebuild."),
    ),
    figures=(
        compare.Figure("dimensions.png", "Fig. 3: orientation likelihood per dimension", dimension_bars_png),
        compare.Figure("model_similarity.png", "Eq. 4: model-model similarity", model_similarity_png),
        compare.Figure("pca.png", "Fig. 6 (right): PCA of models and countries", lambda c, p: pca_png(c.metrics, p)),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for CDEval: every run's responses re-scored together against the release."""
