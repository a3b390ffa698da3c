"""LLM-GLOBE evaluation and scoring (Karinshak et al. 2024, arXiv 2411.06032, Sec. 4, App. B):
``culturebench evaluate llm_globe`` and ``culturebench score llm_globe``.

**Closed prompts** (Tables 2-3): each prompt asked ``CLOSED_SAMPLES`` = 3 times at temperature 1.0; the whole number
1-7 is read (``llm_globe_prompts.parse_rating``: an invalid answer is recorded with its parse_status, never
guessed); the release's ``reverse`` items are turned around (8 - x: on Sec. 3.1.1's scale 1 = strongly agree, so an
item whose agreement means high on its dimension is reverse) so that 7 is high on the dimension; per model and
dimension the mean and SD; one-sample t-tests (``scipy.stats.ttest_1samp``) of a group's values against the GLOBE
2004 score of a chosen society (societal "values" and "practices", from the release's ``globe_2004`` config), in
the unit the printed numbers imply (``T_UNITS``: one value per prompt, the mean of the group's models and samples;
``t_unit: pooled`` makes every answer a value).

**Open prompts** (Tables 4-5, Fig. 2-3): one answer per prompt and language at temperature 1.0, capped at 100
tokens. LLMs-as-a-Jury: every juror (any backend) rates every answer with the juror prompt (rubric in the juror's
language, question and answer in the original language) on 1-7. The jury score is the least-squares combination

    S(x) = sum_j w_j J_j(x) + w_L L(x) + b        (L = 1 for a zh-CN prompt, 0 for English)

fitted on a file of human ratings (response id, human score) with a seeded 2:1 train/test split; MAE, MSE, RMSE and
R^2 on the test part (the paper: MAE 0.638, R^2 0.882). Without human ratings the weights can be given in the
config (``jury_weights``); without either, S is the plain mean of the jurors (reported as such). Then per model
and dimension mean/SD; group means and t-tests on one value per prompt and model (Tables 4-5); per dimension a
Friedman test across models (blocks: the prompts, each model's score averaged over its samples and whatever
language it answered in, so US models answering in English and Chinese models in Chinese share blocks; needs >= 3
models) with post-hoc pairwise Wilcoxon signed-rank tests (Holm-adjusted too; p-value heatmap
``wilcoxon_PART.png``, Fig. 2, not drawn for a single model); two-sample t-tests between two model groups (e.g. US
vs CN; Student's by default; Sec. 4.2.4's printed t values do not follow from Tables 4-5, ``GROUP_TTEST_NOTE``); a
radar plot of group (or model) means over the nine dimensions (``radar_PART.png``,
Fig. 3).

**Intervals** (issue #18, ``prompt_bootstrap``): every mean of Tables 2-5 (per model and per group, each part) gets
a 95% interval from a seeded bootstrap over prompts, resampled within each dimension and shared by all models and
groups (``mean_ci`` and ``n_prompts`` beside ``mean``; BOOTSTRAP_NOTE); the point estimates are unchanged. The
group t-test rows get the difference of the group means with its interval, and ``model_differences`` lists every
pair of models per dimension with the paired difference, its interval and Fig. 2's tests. ``COMPARE`` is this
benchmark's entry for ``culturebench compare``.

**Options** come from a small JSON or YAML file given with ``--config`` (every key optional)::

    {"part": "closed" | "open" | "both",          # default "closed" ("--split closed|open|both" also works)
     "language": "en" | "zh" | "both",             # prompt languages (default "en")
     "samples": 3, "open_samples": 1, "open_max_tokens": 100,
     "jurors": [{"model": "m", "backend": "openai", "base_url": "http://...", "language": "en", "name": "m-en"}],
     "juror_temperature": 0.0, "juror_max_tokens": 8,
     "human_ratings": "ratings.csv",               # CSV/TSV/JSONL: response_id, human_score (relative to the config)
     "jury_weights": {"weights": {"m-en": 0.5}, "language": 0.1, "intercept": 0.2},   # instead of fitting
     "split_seed": 0, "test_fraction": 0.3333333333333333,
     "groups": {"US": ["gpt-4o"], "CN": ["qwen"]}, "compare": ["US", "CN"], "equal_var": true,
     "society": "United States" or "societies": {"US": "USA", "CN": "China"},
     "t_unit": "paper" | "pooled"}

Every option, the society names included, is checked against the release before the first model call.

``evaluate`` runs one model (and the jurors) through ``runner.run_requests`` with the run folder's response cache
and writes responses.jsonl (one record per closed answer, open answer and juror rating: raw text kept),
metrics.json, radar.png, wilcoxon.png and run.json. ``score`` recomputes every number from one or more
responses.jsonl files (comma-separated; several models give the across-model tests).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import compare, plots, runs, stats, uncertainty
from culturebench.evaluate import llm_globe_prompts as prompts
from culturebench.evaluate.limit import limit_frame
from culturebench.release import load_manifest

BENCHMARK = "llm_globe"
DIMENSIONS = prompts.DIMENSIONS
PARTS = ("closed", "open", "both")
CLOSED_COLUMNS = ("id", "dimension", "reverse", "prompt_en", "prompt_zh")
OPEN_COLUMNS = ("id", "dimension", "prompt_en", "prompt_zh")
RUBRIC_COLUMNS = ("dimension", "scale_en", "characteristics_en", "scale_zh", "characteristics_zh")
GLOBE_COLUMNS = ("country", "dimension", "practices", "values")
GLOBE_MEASURES = ("values", "practices")
CONFIG_KEYS = {"part", "language", "samples", "open_samples", "open_max_tokens", "jurors", "juror_temperature",
               "juror_max_tokens", "human_ratings", "jury_weights", "split_seed", "test_fraction", "groups", "compare",
               "equal_var", "society", "societies", "t_unit"}
T_UNITS = ("paper", "pooled")
"""Unit of the one-sample t-tests, group means and group t-tests. ``paper`` (default) reproduces Tables 2-5: closed,
one value per prompt (its mean over the group's models, samples and languages; Table 2 PO: M 4.356, SD 0.645,
t -125.466 against 5.67 gives n = (125.466 x 0.645 / 1.314)^2 ~ 3,800 prompts, and the printed SD is below every
model's own SD, which only averaging over models gives); open, one value per prompt and model (Table 4 PO: n =
(17.191 x 1.517 / 1.305)^2 ~ 400 = 100 prompts x 4 models, the same in every row of Tables 4-5). ``pooled``: every
answer is a value (Sec. 3.4's text read literally)."""
LANGUAGE_FEATURE = "language_zh"
"""Name of L(x) in the jury regression (1 for zh-CN answers)."""


# ---------------------------------------------------------------------------------------------------- config


@dataclass(frozen=True)
class Juror:
    name: str
    model: str
    backend: str = "openai"
    base_url: str | None = None
    language: str = "en"
    request_shape: dict | None = None  # fixed by the config (runs.request_shape_option; issue #27), else learnt


JUROR_KEYS = {"model", "backend", "base_url", "language", "name"}
"""The keys of one ``jurors`` entry of the config."""


@dataclass
class Config:
    part: str = "closed"
    languages: tuple[str, ...] = ("en",)
    samples: int = prompts.CLOSED_SAMPLES
    open_samples: int = prompts.OPEN_SAMPLES
    open_max_tokens: int = prompts.OPEN_MAX_TOKENS
    jurors: list[Juror] = field(default_factory=list)
    juror_temperature: float = prompts.JUROR_TEMPERATURE
    juror_max_tokens: int = prompts.JUROR_MAX_TOKENS
    human_ratings: Path | None = None
    jury_weights: dict | None = None
    split_seed: int = 0
    test_fraction: float = 1 / 3
    groups: dict[str, list[str]] = field(default_factory=dict)
    compare: tuple[str, str] | None = None
    equal_var: bool = True
    societies: dict[str, str] = field(default_factory=dict)  # group -> society ("*" = every group)
    t_unit: str = "paper"
    source: str | None = None

    def as_dict(self) -> dict:
        return {"part": self.part, "languages": list(self.languages), "samples": self.samples,
                "open_samples": self.open_samples, "open_max_tokens": self.open_max_tokens,
                "jurors": [j.__dict__ for j in self.jurors], "juror_temperature": self.juror_temperature,
                "juror_max_tokens": self.juror_max_tokens,
                "human_ratings": None if self.human_ratings is None else str(self.human_ratings),
                "jury_weights": self.jury_weights, "split_seed": self.split_seed, "test_fraction": self.test_fraction,
                "groups": self.groups, "compare": list(self.compare) if self.compare else None,
                "equal_var": self.equal_var, "societies": self.societies, "t_unit": self.t_unit,
                "source": self.source}


def _number(raw: dict, key: str, default, kind, where):
    """``raw[key]`` as ``kind`` (int or float), or ``default``; anything else is a one-line error."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and value != int(value)):
        raise InputError(f"{key} must be a {'whole ' if kind is int else ''}number, got {value!r}", file=where,
                         column=key)
    return kind(value)


def load_config(path: Path | str | None = None, *, part: str | None = None, samples: int | None = None) -> Config:
    """The options of a JSON or YAML config file (None: the defaults); ``part`` / ``samples`` from the command
    line win over the file."""
    raw: dict = {}
    base = Path(".")
    if path is not None:
        path = Path(path)
        raw = runs.read_options_file(path, CONFIG_KEYS)
        base = path.parent
    where = path
    config = Config(source=None if path is None else str(path))
    chosen_part = part if part in PARTS else raw.get("part", "closed")
    if chosen_part not in PARTS:
        raise InputError(f"part must be one of {', '.join(PARTS)}, got {chosen_part!r}", file=where)
    config.part = chosen_part
    language = raw.get("language", "en")
    config.languages = prompts.LANGUAGES if language == "both" else (language,)
    if any(lang not in prompts.LANGUAGES for lang in config.languages):
        raise InputError(f"language must be en, zh or both, got {language!r}", file=where)
    for key in ("samples", "open_samples", "open_max_tokens", "juror_max_tokens"):
        if key in raw:
            if not isinstance(raw[key], int) or raw[key] < 1:
                raise InputError(f"{key} must be a whole number >= 1, got {raw[key]!r}", file=where)
            setattr(config, key, raw[key])
    if samples is not None:
        runs.check_at_least_one({"--samples": samples})
        config.samples = samples
    config.juror_temperature = _number(raw, "juror_temperature", config.juror_temperature, float, where)
    names = set()
    jurors = raw.get("jurors") or []
    if not isinstance(jurors, list):
        raise InputError("jurors must be a list of {model, base_url, language, name, backend} (see "
                         "examples/llm_globe_jurors.yaml)", file=where, column="jurors")
    for i, entry in enumerate(jurors):
        if isinstance(entry, str):
            entry = {"model": entry}
        if not isinstance(entry, dict) or not entry.get("model"):
            raise InputError(f"juror {i + 1} needs a model", file=where, column="jurors")
        unknown = sorted(set(entry) - JUROR_KEYS)
        if unknown:
            raise InputError(f"juror {i + 1}: unknown key {unknown[0]!r}; known: {', '.join(sorted(JUROR_KEYS))}",
                             file=where, column="jurors")
        lang = entry.get("language", "en")
        if lang not in prompts.LANGUAGES:
            raise InputError(f"juror {i + 1}: language must be en or zh, got {lang!r}", file=where, column="jurors")
        backend = entry.get("backend", "openai")
        if backend not in ("openai", "vllm"):
            raise InputError(f"juror {i + 1}: backend must be openai or vllm, got {backend!r}", file=where)
        name = str(entry.get("name") or f"{entry['model']}:{lang}")
        if name in names:
            raise InputError(f"two jurors are named {name!r} (give them a name)", file=where, column="jurors")
        names.add(name)
        config.jurors.append(Juror(name, str(entry["model"]), backend, entry.get("base_url"), lang,
                                   runs.request_shape_option(entry.get("request_shape"), where, "jurors")))
    if raw.get("human_ratings"):
        ratings = Path(raw["human_ratings"])
        config.human_ratings = ratings if ratings.is_absolute() else base / ratings
    if raw.get("jury_weights") is not None:
        weights = raw["jury_weights"]
        if not isinstance(weights, dict) or not isinstance(weights.get("weights"), dict):
            raise InputError("jury_weights must be {weights: {juror: w}, language: wL, intercept: b}", file=where)
        config.jury_weights = weights
    config.split_seed = _number(raw, "split_seed", 0, int, where)
    config.test_fraction = _number(raw, "test_fraction", 1 / 3, float, where)
    if not 0 < config.test_fraction < 1:
        raise InputError(f"test_fraction must be between 0 and 1, got {config.test_fraction}", file=where)
    groups = raw.get("groups") or {}
    if not isinstance(groups, dict) or not all(isinstance(v, list) for v in groups.values()):
        raise InputError("groups must map a group name to a list of model names", file=where)
    config.groups = {str(k): [str(m) for m in v] for k, v in groups.items()}
    if raw.get("compare") is not None:
        compare = raw["compare"]
        if not isinstance(compare, list) or len(compare) != 2:
            raise InputError("compare must name two groups", file=where)
        config.compare = (str(compare[0]), str(compare[1]))
    config.equal_var = bool(raw.get("equal_var", True))
    if raw.get("society"):
        config.societies["*"] = str(raw["society"])
    societies = raw.get("societies") or {}
    if not isinstance(societies, dict):
        raise InputError("societies must map a group name to a GLOBE society", file=where, column="societies")
    for group, society in societies.items():
        if config.groups and group != "*" and str(group) not in config.groups:
            raise InputError(f"societies names group {group!r}, which is not in groups", file=where,
                             column="societies")
        config.societies[str(group)] = str(society)
    if config.compare is not None and config.groups:
        for g in config.compare:
            if g not in config.groups:
                raise InputError(f"compare names group {g!r}, which is not in groups", file=where, column="compare")
    config.t_unit = str(raw.get("t_unit", "paper"))
    if config.t_unit not in T_UNITS:
        raise InputError(f"t_unit must be one of {', '.join(T_UNITS)}, got {config.t_unit!r}", file=where,
                         column="t_unit")
    return config


# ---------------------------------------------------------------------------------------------------- release


def _dimension_column(frame: pl.DataFrame, config: str, release: Path) -> pl.DataFrame:
    values = frame["dimension"].cast(pl.String).to_list()
    mapped = [prompts.canonical_dimension(v) for v in values]
    for value, canonical in zip(values, mapped):
        if canonical is None:
            raise InputError(f"{config} config has unknown dimension {value!r}", file=release, column="dimension")
    return frame.with_columns(pl.Series("dimension", mapped, dtype=pl.String))


def release_tables(release: Path) -> dict[str, pl.DataFrame | None]:
    """The release's ``closed``, ``open``, ``rubrics`` and ``globe_2004`` tables (all splits concatenated; None
    when the release lacks the config), ids as text and dimensions under the paper's names."""
    release = Path(release)
    tables = runs.release_configs(release, BENCHMARK, "an LLM-GLOBE release")
    out: dict[str, pl.DataFrame | None] = {}
    closed = runs.release_config(tables, "closed", release, columns=CLOSED_COLUMNS, required=False)
    if closed is not None:
        closed = _dimension_column(closed, "closed", release).with_columns(
            pl.col("id").cast(pl.String), pl.col("reverse").cast(pl.Boolean))
        if "item_id" not in closed.columns:
            closed = closed.with_columns(pl.lit(None, pl.String).alias("item_id"))
        for column, default in (("scale_min", prompts.SCALE_MIN), ("scale_max", prompts.SCALE_MAX)):
            if column not in closed.columns:
                closed = closed.with_columns(pl.lit(default, pl.Int64).alias(column))
    out["closed"] = closed
    opened = runs.release_config(tables, "open", release, columns=OPEN_COLUMNS, required=False)
    if opened is not None:
        opened = _dimension_column(opened, "open", release).with_columns(pl.col("id").cast(pl.String))
    out["open"] = opened
    rubrics = runs.release_config(tables, "rubrics", release, columns=RUBRIC_COLUMNS, required=False)
    if rubrics is not None:
        rubrics = _dimension_column(rubrics, "rubrics", release)
    out["rubrics"] = rubrics
    globe = runs.release_config(tables, "globe_2004", release, columns=GLOBE_COLUMNS, required=False)
    if globe is not None:
        globe = _dimension_column(globe, "globe_2004", release).with_columns(
            pl.col("country").cast(pl.String), pl.col("practices").cast(pl.Float64, strict=False),
            pl.col("values").cast(pl.Float64, strict=False))
    out["globe_2004"] = globe
    return out


# ---------------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class PlannedRequest:
    part: str  # closed | open | juror
    info: dict
    request: Any  # backends.ChatRequest


def plan_closed(closed: pl.DataFrame, languages: Sequence[str], *, samples: int, temperature: float,
                max_tokens: int, seed: int | None) -> list[PlannedRequest]:
    """Every closed prompt x language x sample, in release order."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    planned = []
    for row in closed.iter_rows(named=True):
        for language in languages:
            text = row[f"prompt_{language}"]
            if text is None or not str(text).strip():
                continue
            for r in range(samples):
                info = {"id": row["id"], "item_id": row["item_id"], "dimension": row["dimension"],
                        "reverse": bool(row["reverse"]), "language": language, "sample_index": r}
                planned.append(PlannedRequest("closed", info, ChatRequest(prompts.messages(text), sampling, r)))
    return planned


def response_id(model: str, prompt_id: str, language: str, sample_index: int) -> str:
    """The id of one open answer (what a human-ratings file refers to)."""
    return f"{model}|{prompt_id}|{language}|{sample_index}"


def plan_open(opened: pl.DataFrame, languages: Sequence[str], model: str, *, samples: int, temperature: float,
              max_tokens: int, seed: int | None) -> list[PlannedRequest]:
    from culturebench.evaluate.backends import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    planned = []
    for row in opened.iter_rows(named=True):
        for language in languages:
            text = row[f"prompt_{language}"]
            if text is None or not str(text).strip():
                continue
            for r in range(samples):
                info = {"id": row["id"], "dimension": row["dimension"], "language": language, "sample_index": r,
                        "response_id": response_id(model, row["id"], language, r), "prompt": text}
                planned.append(PlannedRequest("open", info, ChatRequest(prompts.messages(text), sampling, r)))
    return planned


def plan_jurors(answers: Sequence[dict], rubrics: pl.DataFrame, juror: Juror, *, temperature: float,
                max_tokens: int) -> list[PlannedRequest]:
    """One juror request per open answer (``answers``: records with dimension, prompt, response, response_id)."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams

    rubric = {r["dimension"]: r for r in rubrics.iter_rows(named=True)}
    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=None)
    lang = juror.language
    planned = []
    for answer in answers:
        r = rubric.get(answer["dimension"])
        if r is None:
            raise InputError(f"rubrics config has no rubric for {answer['dimension']!r}", column="dimension")
        text = prompts.juror_prompt(answer["dimension"], r[f"scale_{lang}"], r[f"characteristics_{lang}"],
                                    answer["prompt"], answer["response"], lang)
        info = {"response_id": answer["response_id"], "juror": juror.name, "juror_model": juror.model,
                "juror_language": lang}
        planned.append(PlannedRequest("juror", info, ChatRequest(prompts.messages(text), sampling, 0)))
    return planned


# ---------------------------------------------------------------------------------------------------- reading


def read_responses(paths: Sequence[Path]) -> list[dict]:
    """The records of responses.jsonl files (evaluate's output), each with ``source`` and ``row``."""
    records = []
    for path in map(Path, paths):
        n = 0
        for number, record in runs.jsonl_records(path):
            part = record.get("part")
            needed = {"closed": ("model", "id", "language", "sample_index", "response"),
                      "open": ("model", "id", "language", "sample_index", "response_id", "response"),
                      "juror": ("response_id", "juror", "juror_language", "rating_text")}.get(part)
            if needed is None:
                raise InputError(f"unknown part {part!r}", file=path, row=number, column="part")
            for name in needed:
                if name not in record:
                    raise InputError(f"record lacks field {name!r}", file=path, row=number, column=name)
            records.append({**record, "source": str(path), "row": number})
            n += 1
        if not n:
            raise InputError("responses file has no records", file=path)
    return records


def read_human_ratings(path: Path) -> pl.DataFrame:
    """response_id, human_score (mean over raters of the same response) from a CSV/TSV (delimiter sniffed) or
    JSONL file with columns response_id and human_score (or score)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("human ratings file not found", file=path)
    try:
        if path.suffix.lower() in (".jsonl", ".json"):
            frame = pl.read_ndjson(path)
        else:
            head = path.read_text(encoding="utf-8").split("\n", 1)[0]
            separator = "\t" if head.count("\t") > head.count(",") else ","
            frame = pl.read_csv(path, separator=separator, infer_schema_length=0)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as exc:
        raise InputError(f"human ratings do not parse ({str(exc).splitlines()[0]})", file=path) from None
    score_column = next((c for c in ("human_score", "score", "rating") if c in frame.columns), None)
    if "response_id" not in frame.columns or score_column is None:
        raise InputError("human ratings need columns response_id and human_score", file=path)
    values = frame[score_column].cast(pl.String).to_list()
    scores = []
    for number, value in enumerate(values, start=1):
        try:
            scores.append(float(value))
        except (TypeError, ValueError):
            raise InputError(f"human score {value!r} is not a number", file=path, row=number,
                             column=score_column) from None
    return (frame.select(pl.col("response_id").cast(pl.String)).with_columns(pl.Series("human_score", scores))
            .group_by("response_id", maintain_order=True).agg(pl.col("human_score").mean()))


# ---------------------------------------------------------------------------------------------------- scoring


@dataclass
class ScoreResult:
    metrics: dict
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)


def score_closed(records: Sequence[dict], closed: pl.DataFrame | None) -> pl.DataFrame:
    """Each closed answer parsed and reverse-scored: model, id, item_id, dimension, language, sample_index,
    reverse, status, answer (as given), score (7 = high on the dimension; null when invalid)."""
    rows = []
    info = {} if closed is None else {r["id"]: r for r in closed.select(
        "id", "item_id", "dimension", "reverse", "scale_min", "scale_max").iter_rows(named=True)}
    for rec in records:
        item = info.get(str(rec["id"]))
        if item is None:
            raise InputError(f"closed prompt id {rec['id']!r} is not in the release", file=rec.get("source"),
                             row=rec.get("row"), column="id")
        value, status = prompts.parse_rating(rec["response"])
        if value is not None and not item["scale_min"] <= value <= item["scale_max"]:
            value, status = None, "out_of_range"
        rows.append({"model": str(rec["model"]), "id": str(rec["id"]), "item_id": item["item_id"],
                     "dimension": item["dimension"], "language": rec["language"],
                     "sample_index": int(rec["sample_index"]), "reverse": bool(item["reverse"]), "parse_status": status,
                     "answer": value, "score": prompts.reverse_score(value, bool(item["reverse"]), item["scale_min"],
                                                                     item["scale_max"])})
    return pl.DataFrame(rows, schema={"model": pl.String, "id": pl.String, "item_id": pl.String,
                                      "dimension": pl.String, "language": pl.String, "sample_index": pl.Int64,
                                      "reverse": pl.Boolean, "parse_status": pl.String, "answer": pl.Int64,
                                      "score": pl.Float64})


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


def mean_sd_table(frame: pl.DataFrame, value: str) -> dict[str, dict[str, dict]]:
    """model -> dimension -> {n, mean, sd} (Tables 2-5 layout), dimensions in the paper's order."""
    out: dict[str, dict[str, dict]] = {}
    for model in sorted(frame["model"].unique().to_list()):
        mine = frame.filter(pl.col("model") == model)
        out[model] = {d: stats.mean_sd(mine.filter(pl.col("dimension") == d)[value].to_list())
                      for d in DIMENSIONS if (mine["dimension"] == d).any()}
    return out


def _groups(models: Sequence[str], config: Config) -> dict[str, list[str]]:
    """The configured groups (their models that are present), else one group per model."""
    if config.groups:
        return {g: [m for m in ms if m in models] for g, ms in config.groups.items()}
    return {m: [m] for m in models}


def unit_values(frame: pl.DataFrame, value: str, models: Sequence[str], part: str, t_unit: str) -> pl.DataFrame:
    """A group's values in the unit of ``T_UNITS``: ``id`` (the prompt), ``dimension`` and ``value`` columns, one
    row per prompt (closed, paper), per prompt and model (open, paper) or per answer (pooled)."""
    mine = frame.filter(pl.col("model").is_in(list(models))).drop_nulls(value)
    if t_unit == "pooled":
        return mine.select("id", "dimension", value)
    keys = ["dimension", "id"] if part == "closed" else ["dimension", "id", "model"]
    return mine.group_by(keys, maintain_order=True).agg(pl.col(value).mean()).select("id", "dimension", value)


def group_means(frame: pl.DataFrame, value: str, groups: dict[str, list[str]], part: str, t_unit: str
                ) -> dict[str, dict[str, dict]]:
    """Per group and dimension: n, mean, SD of the group's unit values (Tables 2-5, "... Models M SD")."""
    out = {}
    for g, ms in groups.items():
        units = unit_values(frame, value, ms, part, t_unit)
        out[g] = {d: stats.mean_sd(units.filter(pl.col("dimension") == d)[value].to_list()) for d in DIMENSIONS}
    return out


def resolve_societies(globe: pl.DataFrame | None, config: Config) -> dict[str, str]:
    """Configured group (or "*") -> the society as the release's globe_2004 names it; an unknown one is an error."""
    if not config.societies:
        return {}
    if globe is None:
        raise InputError("society given, but the release has no globe_2004 config", column="society")
    countries = {c.lower(): c for c in globe["country"].drop_nulls().to_list()}
    out = {}
    for group, society in config.societies.items():
        country = countries.get(society.lower())
        if country is None:
            raise InputError(f"society {society!r} is not in the release's globe_2004 config (e.g. "
                             f"{', '.join(sorted(countries.values())[:5])})", column="society")
        out[group] = country
    return out


def globe_ttests(frame: pl.DataFrame, value: str, globe: pl.DataFrame | None, groups: dict[str, list[str]],
                 config: Config, part: str) -> list[dict]:
    """One-sample t-tests of each group's unit values per dimension against the GLOBE 2004 societal values and
    practices of the society chosen for that group (Tables 2-5, "Comparison")."""
    societies = resolve_societies(globe, config)
    if not societies:
        return []
    out = []
    for group, models in groups.items():
        country = societies.get(group, societies.get("*"))
        if country is None:
            continue
        reference = globe.filter(pl.col("country") == country)
        units = unit_values(frame, value, models, part, config.t_unit)
        for dimension in DIMENSIONS:
            ref = reference.filter(pl.col("dimension") == dimension)
            scores = units.filter(pl.col("dimension") == dimension)[value].to_list()
            for measure in GLOBE_MEASURES:
                target = ref[measure].drop_nulls()
                if target.len() == 0:
                    continue
                out.append({"group": group, "society": country, "dimension": dimension, "measure": measure,
                            "unit": config.t_unit, **stats.one_sample_t(scores, float(target[0]))})
    return out


def model_tests(scored: pl.DataFrame, value: str) -> dict:
    """Per dimension: Friedman across models with the prompts as blocks (each model's score for a prompt, over its
    samples and whatever language it answered in; Sec. 3.4, Sec. 4.2.3) and post-hoc pairwise Wilcoxon
    signed-rank tests (Fig. 2)."""
    models = sorted(scored["model"].unique().to_list())
    blocks = (scored.group_by("model", "dimension", "id")
              .agg(pl.col(value).mean()).drop_nulls(value))
    out = {}
    for dimension in DIMENSIONS:
        part = blocks.filter(pl.col("dimension") == dimension)
        if part.height == 0:
            continue
        wide = part.pivot(on="model", index="id", values=value).sort("id")
        columns = {m: (wide[m].to_list() if m in wide.columns else [None] * wide.height) for m in models}
        out[dimension] = {"friedman": stats.friedman(columns), "wilcoxon": stats.pairwise_wilcoxon(columns)}
    return out


GROUP_TTEST_NOTE = (
    "Sec. 4.2.4's two-sample t-tests (US vs Chinese models, open generation) cannot be reproduced from the paper's "
    "own numbers: with the group means and SDs of Tables 4-5 and one value per prompt and model (n = 400 per "
    "group, the unit that reproduces every one-sample t of Tables 4-5), Student's t is 1.518 for performance "
    "orientation (printed 2.176) and 9.682 for gender egalitarianism (printed 11.896); the n per group that would "
    "give each printed t ranges from about 535 to 871 over the nine dimensions, so no single unit (per prompt, per "
    "prompt and model, per answer) gives them. What culturebench computes: scipy.stats.ttest_ind (Student's; "
    "Welch's with equal_var: false) per dimension between the two groups of `compare`, on the unit values of "
    "t_unit (paper: one value per prompt and model for open, per prompt for closed; pooled: every answer).")
"""Why Sec. 4.2.4's printed t values are not reproduced, and what ``group_ttests`` computes (metrics.json
``group_ttests_note``; the test recomputes the numbers quoted from Tables 4-5)."""


def group_ttests(frame: pl.DataFrame, value: str, groups: dict[str, list[str]], config: Config, part: str
                 ) -> list[dict]:
    """Two-sample t-tests per dimension between the two groups of ``compare`` (Sec. 4.2.4), on the unit values
    (``T_UNITS``): Student's by default, Welch's with ``equal_var`` false. The paper's printed values are not
    reproducible from its Tables 4-5 (``GROUP_TTEST_NOTE``)."""
    if config.compare is None:
        return []
    a, b = config.compare
    for g in (a, b):
        if g not in groups:
            raise InputError(f"compare names group {g!r}, which is not in groups")
    units = {g: unit_values(frame, value, groups[g], part, config.t_unit) for g in (a, b)}
    out = []
    for dimension in DIMENSIONS:
        if not (frame["dimension"] == dimension).any():
            continue
        out.append({"a": a, "b": b, "dimension": dimension, "unit": config.t_unit, **stats.two_sample_t(
            units[a].filter(pl.col("dimension") == dimension)[value].to_list(),
            units[b].filter(pl.col("dimension") == dimension)[value].to_list(), equal_var=config.equal_var)})
    return out


# ------------------------------------------------------------------------------------------------ uncertainty


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
    bootstrap p-value) for ``pairs``."""
    frames = [f.drop_nulls(value).select("id", "dimension", pl.col(value).cast(pl.Float64).alias("value"),
                                         pl.lit(i).alias("series")) for i, f in enumerate(series.values())]
    values = pl.concat(frames) if frames else pl.DataFrame(schema={"id": pl.String, "dimension": pl.String,
                                                                    "value": pl.Float64, "series": pl.Int32})
    if values.height == 0:
        return {"means": {}, "differences": {(a, b, d): (None, None, None) for a, b in pairs for d in DIMENSIONS}}
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
    result = uncertainty.resample_units(strata, statistic, settings)
    n_prompts = (counts > 0) @ dimension_of
    out: dict = {"means": {}, "differences": {}}
    for k, key in enumerate(keys):
        for d, dimension in enumerate(DIMENSIONS):
            if n_prompts[k, d]:
                out["means"][(key, dimension)] = (int(n_prompts[k, d]), result.interval(k * len(DIMENSIONS) + d))
    start = len(keys) * len(DIMENSIONS)
    for p, (a, b) in enumerate(pairs):
        for d, dimension in enumerate(DIMENSIONS):
            i = start + p * len(DIMENSIONS) + d
            out["differences"][(a, b, dimension)] = (uncertainty.finite_or_none(result.estimate[i]),
                                                     result.interval(i), result.pvalue(i))
    return out


def model_differences(model_tests_: dict, differences: dict, models: Sequence[str], alpha: float) -> list[dict]:
    """Per dimension and pair of models (a < b): the difference of their means with its paired bootstrap interval,
    the Wilcoxon test over prompts (Fig. 2) and the dimension's Friedman p-value; ``significant`` as
    BOOTSTRAP_NOTE["significance"] says."""
    rows = []
    for dimension, tests in model_tests_.items():
        friedman = tests["friedman"]
        gate = len(models) < 3 or (friedman["pvalue"] is not None and friedman["pvalue"] < alpha)
        for test in tests["wilcoxon"]:
            difference, interval, _ = differences.get((("model", test["a"]), ("model", test["b"]), dimension),
                                                      (None, None, None))
            rows.append({"model_a": test["a"], "model_b": test["b"], "dimension": dimension,
                         "difference": difference, "difference_ci": interval,
                         "wilcoxon_statistic": test["statistic"], "n_pairs": test["n_pairs"],
                         "pvalue": test["pvalue"], "pvalue_holm": test["pvalue_holm"],
                         "friedman_pvalue": friedman["pvalue"],
                         "significant": bool(gate and test["pvalue_holm"] is not None and test["pvalue_holm"] < alpha)})
    return rows


def part_metrics(frame: pl.DataFrame, value: str, part: str, groups: dict[str, list[str]], tables: dict,
                 config: Config, bootstrap: uncertainty.Bootstrap) -> dict:
    """The metrics of one part (closed: ``score``; open: ``jury_score``) of every model in ``frame``: Tables 2-5
    (mean_sd per model, by language, group_means, globe_ttests), the across-model tests (model_tests, Fig. 2) and
    the group t-tests, with the bootstrap intervals over prompts (``prompt_bootstrap``) beside the means
    (``mean_ci``, ``n_prompts``), the group difference (``difference``, ``difference_ci``) and the paired model
    differences (``model_differences``)."""
    models = sorted(frame["model"].unique().to_list())
    out = {
        "mean_sd": mean_sd_table(frame, value),
        "mean_sd_by_language": {lang: mean_sd_table(frame.filter(pl.col("language") == lang), value)
                                for lang in prompts.LANGUAGES if (frame["language"] == lang).any()},
        "group_means": group_means(frame, value, groups, part, config.t_unit),
        "globe_ttests": globe_ttests(frame, value, tables.get("globe_2004"), groups, config, part),
        "model_tests": model_tests(frame, value),
        "group_ttests": group_ttests(frame, value, groups, config, part),
    }
    if out["group_ttests"]:
        out["group_ttests_note"] = GROUP_TTEST_NOTE
    series = {("model", m): frame.filter(pl.col("model") == m).drop_nulls(value).select("id", "dimension", value)
              for m in models}
    series.update({("group", g): unit_values(frame, value, ms, part, config.t_unit) for g, ms in groups.items()})
    model_pairs = [(("model", a), ("model", b)) for i, a in enumerate(models) for b in models[i + 1:]]
    group_pair = [(("group", config.compare[0]), ("group", config.compare[1]))] if config.compare else []
    boot = prompt_bootstrap(series, value, [*model_pairs, *group_pair], bootstrap)
    for kind, table in (("model", out["mean_sd"]), ("group", out["group_means"])):
        for name, dims in table.items():
            for dimension, cell in dims.items():
                cell["n_prompts"], cell["mean_ci"] = boot["means"].get(((kind, name), dimension), (0, None))
    for row in out["group_ttests"]:
        row["difference"], row["difference_ci"] = boot["differences"][(*group_pair[0], row["dimension"])][:2]
    out["model_differences"] = model_differences(out["model_tests"], boot["differences"], models,
                                                 1 - bootstrap.confidence_level)
    return out


def score_records(records: Sequence[dict], tables: dict, config: Config | None = None, *,
                  human: pl.DataFrame | None = None, sources: list[dict] | None = None,
                  release: Path | str | None = None,
                  bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> ScoreResult:
    """Every table and metric from the records of responses.jsonl files and the release tables; every mean with
    its ``bootstrap`` interval over prompts (``part_metrics``; settings under ``uncertainty``)."""
    config = config or Config()
    if not records:
        raise InputError("no responses to score")
    closed_recs = [r for r in records if r["part"] == "closed"]
    open_recs = [r for r in records if r["part"] == "open"]
    juror_recs = [r for r in records if r["part"] == "juror"]
    metrics: dict[str, Any] = {"benchmark": BENCHMARK, "release": None if release is None else str(release),
                               "release_manifest_sha256": runs.release_manifest_sha256(release),
                               "responses": sources or [], "dimensions": list(DIMENSIONS),
                               "config": config.as_dict(),
                               "uncertainty": bootstrap.record(unit="prompt", strata="dimension", **BOOTSTRAP_NOTE)}
    tables_out: dict[str, pl.DataFrame] = {}
    models = sorted({str(r["model"]) for r in closed_recs + open_recs})
    metrics["models"] = models
    groups = _groups(models, config)
    metrics["groups"] = groups

    if closed_recs:
        scored = score_closed(closed_recs, tables.get("closed"))
        tables_out["closed"] = scored
        status = {m: {s: int(((scored["model"] == m) & (scored["parse_status"] == s)).sum()) for s in prompts.STATUSES}
                  for m in models if (scored["model"] == m).any()}
        metrics["closed"] = {
            "n_answers": scored.height, "n_valid": int(scored["score"].is_not_null().sum()), "parse_status": status,
            **part_metrics(scored, "score", "closed", groups, tables, config, bootstrap),
        }

    if open_recs:
        table, jurors, juror_status = jury_table(open_recs, juror_recs, tables.get("open"))
        if human is not None and jurors:
            jury = fit_jury(table, jurors, human, seed=config.split_seed, test_fraction=config.test_fraction)
        elif config.jury_weights is not None:
            jury = {"method": "given", "weights": dict(config.jury_weights["weights"]),
                    "language": float(config.jury_weights.get("language", 0.0)),
                    "intercept": float(config.jury_weights.get("intercept", 0.0))}
        elif jurors:
            jury = {"method": "mean", "note": "no human ratings and no jury_weights: S(x) is the mean of the jurors"}
        else:
            jury = {"method": "none", "note": "no juror ratings (no jurors in the options file): open answers are "
                                              "saved, not scored"}
        table = apply_jury(table, jurors, jury)
        tables_out["open"] = table
        metrics["open"] = {
            "n_answers": table.height, "jurors": jurors, "juror_parse_status": juror_status,
            "n_scored": int(table["jury_score"].is_not_null().sum()), "jury": jury,
            **part_metrics(table, "jury_score", "open", groups, tables, config, bootstrap),
        }
    return ScoreResult(metrics=runs.json_safe(metrics), tables=tables_out)


def score(responses: Sequence[Path], release: Path, config: Config | None = None, *,
          bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> ScoreResult:
    """``culturebench score llm_globe``: every metric from saved responses.jsonl files against a release."""
    config = config or Config()
    tables = release_tables(release)
    records = read_responses(responses)
    human = read_human_ratings(config.human_ratings) if config.human_ratings is not None else None
    sources = [runs.source_info(p) for p in responses]
    return score_records(records, tables, config, human=human, sources=sources, release=release,
                         bootstrap=bootstrap)


# ---------------------------------------------------------------------------------------------------- plots


def draw_radar(ax, series: dict[str, dict[str, dict]], title: str) -> None:
    """Fig. 3 on a polar ``ax``: each series' mean per dimension on the 1-7 scale over the nine dimensions, its
    bootstrap interval (``mean_ci``) as a band around the line (without intervals: the area, lightly filled)."""
    plt = plots.pyplot()
    angles = np.linspace(0, 2 * np.pi, len(DIMENSIONS), endpoint=False).tolist()
    around = angles + angles[:1]
    for i, (name, dims) in enumerate(series.items()):
        color = plt.get_cmap("tab10")(i % 10)
        cells = [dims.get(d, {}) for d in DIMENSIONS]
        values = [np.nan if c.get("mean") is None else c["mean"] for c in cells]
        ax.plot(around, values + values[:1], color=color, label=name, marker="o", markersize=3)  # a point alone shows
        bounds = [c.get("mean_ci") or [None, None] for c in cells]
        if any(b[0] is not None for b in bounds):
            low = [np.nan if b[0] is None else b[0] for b in bounds]
            high = [np.nan if b[1] is None else b[1] for b in bounds]
            ax.fill_between(around, low + low[:1], high + high[:1], color=color, alpha=0.2, linewidth=0)
        else:
            ax.fill(around, values + values[:1], color=color, alpha=0.08)
    ax.set_xticks(angles)
    ax.set_xticklabels([d.replace(" ", "\n") for d in DIMENSIONS], fontsize=8)
    ax.set_ylim(0, 7)  # the 1-7 scale with room inside: a mean of 1 is a ring, not the centre point
    ax.set_yticks(range(1, 8))
    ax.set_title(title, pad=28)
    if series:  # below the plot, clear of the title and the dimension labels
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=min(4, len(series)), fontsize=8)


def radar_png(group_means_: dict[str, dict[str, dict]], path: Path, title: str) -> None:
    """Fig. 3 style: each group's mean per dimension on a 1-7 radar, with its bootstrap interval as a band."""
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 7.5), dpi=100, subplot_kw={"polar": True})
    draw_radar(ax, group_means_, title)
    plots.save_figure(fig, path)


def wilcoxon_png(model_tests_: dict, models: Sequence[str], path: Path, title: str) -> None:
    """Fig. 2 style: per dimension, the matrix of pairwise Wilcoxon p-values between models."""
    plt = plots.pyplot()
    fig, axes = plt.subplots(3, 3, figsize=(13, 12), dpi=100, squeeze=False)
    index = {m: i for i, m in enumerate(models)}
    image = None
    for ax, dimension in zip(axes.flat, DIMENSIONS):
        matrix = np.full((len(models), len(models)), np.nan)
        for row in model_tests_.get(dimension, {}).get("wilcoxon", []):
            if row["pvalue"] is not None and row["a"] in index and row["b"] in index:
                matrix[index[row["a"]], index[row["b"]]] = matrix[index[row["b"]], index[row["a"]]] = row["pvalue"]
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis")
        for i in range(len(models)):
            for j in range(len(models)):
                if np.isfinite(matrix[i, j]):
                    ax.text(j, i, f"{matrix[i, j]:.2g}", ha="center", va="center", fontsize=6, color="white")
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, rotation=45, ha="right", fontsize=6)
        ax.set_yticks(range(len(models)))
        ax.set_yticklabels(models, fontsize=6)
        ax.set_title(dimension, fontsize=9)
    fig.subplots_adjust(top=0.92, hspace=0.45, wspace=0.45, right=0.85)
    if image is not None:
        fig.colorbar(image, cax=fig.add_axes((0.88, 0.3, 0.02, 0.4)), label="Wilcoxon p-value")
    fig.suptitle(title)
    plots.save_figure(fig, path, tight=False)


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """metrics.json, then radar_PART.png and wilcoxon_PART.png for each part scored (closed, open); returns the
    paths written."""
    figures = {}
    for part in ("closed", "open"):
        if part in result.metrics:
            figures[f"radar_{part}.png"] = lambda m, path, part=part: radar_png(
                m[part]["group_means"], path, f"LLM-GLOBE {part}: mean per dimension")
            if len(result.metrics["models"]) < 2:  # nothing to compare: no figure, and metrics.json says why
                result.metrics[part]["wilcoxon_figure"] = "not drawn: one model (Fig. 2 compares pairs of models)"
                continue
            figures[f"wilcoxon_{part}.png"] = lambda m, path, part=part: wilcoxon_png(
                m[part]["model_tests"], m["models"], path, f"LLM-GLOBE {part}: pairwise Wilcoxon p-values")
    return runs.write_metrics_and_plots(result.metrics, out, figures)


# ---------------------------------------------------------------------------------------------------- evaluate


def check_inputs(release: Path, config: Config, limit: int | None) -> dict:
    runs.check_at_least_one({"--limit": limit})
    tables = release_tables(release)
    if config.part in ("closed", "both") and (tables["closed"] is None or tables["closed"].height == 0):
        raise InputError("release has no closed prompts", file=release)
    if config.part in ("open", "both"):
        if tables["open"] is None or tables["open"].height == 0:
            raise InputError("release has no open prompts", file=release)
        if config.jurors and tables["rubrics"] is None:
            raise InputError("release has no rubrics config (the jurors need it)", file=release)
    if config.human_ratings is not None:
        read_human_ratings(config.human_ratings)
    resolve_societies(tables["globe_2004"], config)
    return tables


def make_backend(juror: Juror, like=None):
    """The juror's backend, with the evaluated backend's client settings (``like``: --concurrency, --timeout)."""
    return runs.companion_backend(juror.model, juror.base_url, juror.backend, like, juror.request_shape)


ITEM_TABLE_NOTE = (
    "The release's closed prompts were built by culturebench from a GLOBE item table x GICS x roles with Sec. "
    "3.1.1's wording (the item-table route), not taken from LLM-GLOBE's own closed_prompts.csv: their items, "
    "dimension map, reverse flags, company types and Chinese text are not the paper's, so closed scores are not "
    "comparable with Tables 2-3.")
"""run.json's ``release_notes`` for a release whose ``closed`` is the item table's (its card says the same:
``builders.llm_globe.CONSIDERATIONS_ITEM_TABLE``)."""


def release_notes(manifest: dict, tables: dict, config: Config, limit: int | None) -> dict:
    """What run.json says about the release beside the results: where ``closed`` came from (ITEM_TABLE_NOTE for the
    item-table route) and, for a run in Chinese, the prompts not asked in Chinese because the release has no
    Chinese text for them (the published open_prompts.csv: 9-95 to 9-100)."""
    notes: dict[str, Any] = {}
    route = manifest.get("provenance", {}).get("closed_source")
    if config.part in ("closed", "both") and route is not None:
        notes["closed_source"] = route if route in ("released", "item_table") else "none"
        if route == "item_table":
            notes["closed_comparable_with_tables_2_3"] = False
            notes["closed_note"] = ITEM_TABLE_NOTE
    if "zh" in config.languages:
        for part in ("closed", "open"):
            if config.part not in (part, "both") or tables.get(part) is None:
                continue
            asked = tables[part] if limit is None else tables[part].head(limit)
            missing = asked.filter(pl.col("prompt_zh").is_null() | (pl.col("prompt_zh").str.strip_chars() == ""))
            notes[f"{part}_without_chinese"] = missing["id"].to_list()
        notes["without_chinese_note"] = ("prompts listed under *_without_chinese have no Chinese text in the release "
                                         "and were not asked in zh (the published open_prompts.csv has none for "
                                         "9-95 to 9-100)")
    return notes


def evaluate(backend, release: Path, out: Path, config: Config | None = None, *, temperature: float | None = None,
             max_tokens: int | None = None, seed: int | None = 0, limit: int | None = None,
             juror_backends: dict[str, Any] | None = None, args: dict | None = None,
             console=None) -> runs.EvaluateResult:
    """Ask ``backend`` the closed and/or open prompts (``limit`` of each, spread over the dimensions:
    ``limit.spread_positions``), the jurors to rate the open answers, then score; writes responses.jsonl,
    metrics.json, plots and run.json into ``out``. Re-running into the same folder answers every request already
    made from the cache. ``juror_backends`` (name -> backend)
    replaces the backends the config's jurors would get (tests)."""
    from datetime import datetime

    started = datetime.now(UTC)
    config = config or Config()
    release, out = Path(release), Path(out)
    temperature = prompts.TEMPERATURE if temperature is None else temperature
    tables = check_inputs(release, config, limit)
    manifest = load_manifest(release)
    model = str(getattr(backend, "model", "model"))
    records: list[dict] = []
    runner: dict[str, dict] = {}
    covers = []
    if config.part in ("closed", "both"):
        closed, part_covers = limit_frame(tables["closed"], ["dimension"], limit, seed, item="prompts",
                                          columns=["dimensions"], part="closed")
        covers.append(part_covers.as_dict())
        planned = plan_closed(closed, config.languages, samples=config.samples, temperature=temperature,
                              max_tokens=max_tokens or prompts.CLOSED_MAX_TOKENS, seed=seed)
        result = runs.ask(backend, [p.request for p in planned], out, "llm_globe closed", console)
        runner["closed"] = runs.runner_stats(result)
        for plan, response in zip(planned, result.responses):
            value, status = prompts.parse_rating(response.text)
            records.append({"part": "closed", "model": model, **plan.info, "response": response.text,
                            "parse_status": status, "answer": value,
                            "score": prompts.reverse_score(value, plan.info["reverse"]),
                            "finish_reason": response.finish_reason})
    if config.part in ("open", "both"):
        opened, part_covers = limit_frame(tables["open"], ["dimension"], limit, seed, item="prompts",
                                          columns=["dimensions"], part="open")
        covers.append(part_covers.as_dict())
        planned = plan_open(opened, config.languages, model, samples=config.open_samples,
                            temperature=temperature, max_tokens=config.open_max_tokens, seed=seed)
        result = runs.ask(backend, [p.request for p in planned], out, "llm_globe open", console)
        runner["open"] = runs.runner_stats(result)
        answers = []
        for plan, response in zip(planned, result.responses):
            info = {k: v for k, v in plan.info.items() if k != "prompt"}
            records.append({"part": "open", "model": model, **info, "response": response.text,
                            "parse_status": prompts.open_status(response.text),
                            "finish_reason": response.finish_reason})
            answers.append({**plan.info, "response": response.text})
        for juror in config.jurors:
            juror_backend = (juror_backends or {}).get(juror.name) or make_backend(juror, backend)
            jplanned = plan_jurors(answers, tables["rubrics"], juror, temperature=config.juror_temperature,
                                   max_tokens=config.juror_max_tokens)
            jresult = runs.ask(juror_backend, [p.request for p in jplanned], out, f"juror {juror.name}", console)
            runner[f"juror:{juror.name}"] = runs.runner_stats(jresult)
            for plan, response in zip(jplanned, jresult.responses):
                value, status = prompts.parse_rating(response.text)
                records.append({"part": "juror", "model": model, **plan.info, "rating_text": response.text,
                                "parse_status": status, "rating": value})
    responses_path = runs.write_jsonl(out / runs.RESPONSES_FILE, records)
    human = read_human_ratings(config.human_ratings) if config.human_ratings is not None else None
    scored = score_records(read_responses([responses_path]), tables, config, human=human, release=release,
                           sources=[runs.source_info(responses_path)])
    scored.metrics["covers"] = covers
    totals = runs.total_stats(runner.values())
    written = runs.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark=BENCHMARK, release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=totals,
        extra={"evaluation": {"config": config.as_dict(), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "n_records": len(records)},
               "runner_by_part": runner,
               "release_notes": release_notes(manifest, tables, config, limit),
               "jurors": [{"name": j.name, "model": j.model, "backend": j.backend, "language": j.language}
                          for j in config.jurors],
               "parse_status": {"closed": scored.metrics.get("closed", {}).get("parse_status"),
                                "jurors": scored.metrics.get("open", {}).get("juror_parse_status")}})
    return runs.EvaluateResult(metrics=scored.metrics, records=records, stats=totals, written=written, score=scored)


def summary(metrics: dict) -> str:
    """One line per model and part for the command line."""
    lines = []
    for part in ("closed", "open"):
        if part not in metrics:
            continue
        for model, dims in metrics[part]["mean_sd"].items():
            text = "; ".join(f"{d} {v['mean']:.2f}" for d, v in dims.items() if v["mean"] is not None)
            lines.append(f"llm_globe {part} {model}: {text or 'nothing scored'}")
        if part == "open":
            jury = metrics["open"]["jury"]
            if jury["method"] == "none":
                lines.append(f"llm_globe jury: {jury['note']}")
            elif jury["method"] == "least_squares" and jury["test"]:
                lines.append(f"llm_globe jury: test MAE {jury['test']['mae']:.3f}, R^2 "
                             f"{jury['test']['r2'] if jury['test']['r2'] is None else round(jury['test']['r2'], 3)}")
            else:
                lines.append(f"llm_globe jury: {jury['method']}")
    return "\n".join(lines) or "llm_globe: nothing scored"


# --------------------------------------------------------------------------------------------- command line


def _config(options: dict) -> Config:
    return load_config(options.get("config"), part=options.get("split"), samples=options.get("samples"))


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    check_inputs(options["release"], _config(options), options.get("limit"))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    config = _config(options)
    result = evaluate(model_backend, options["release"], options["out"], config,
                      temperature=options.get("temperature"), max_tokens=options.get("max_tokens"),
                      seed=options.get("seed"),
                      limit=options.get("limit"), args=args, console=console)
    line = f"{summary(result.metrics)}\nllm_globe: {runs.request_counts(result.stats['n_requests'], result.stats)}"
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None) -> tuple[str, list[Path]]:
    result = score(runs.split_paths(responses), release, load_config(config))
    return summary(result.metrics), write_run(result, out)


# --------------------------------------------------------------------------------------------- compare

PART_VALUES = {"closed": ("score", "Tables 2-3: closed-ended mean per dimension (1-7, 7 = high)"),
               "open": ("jury_score", "Tables 4-5: open-generation jury score per dimension")}
"""Per part: the column scored and the title of its table on the compare page."""


def comparison_release(folders: Sequence[compare.RunFolder], release: Path | None) -> tuple[dict, Path]:
    """The release tables the runs are scored against: ``release`` when given, else the runs' releases (with
    --allow-mixed several: their closed and open prompts joined, an id taken from the first release that has it;
    rubrics and GLOBE 2004 of the first)."""
    paths = compare.release_paths(folders, release)
    loaded = [release_tables(p) for p in paths]
    merged = {name: loaded[0][name] for name in ("rubrics", "globe_2004")}
    for name in ("closed", "open"):
        frames = [t[name] for t in loaded if t[name] is not None]
        merged[name] = (pl.concat(frames, how="diagonal_relaxed").unique("id", keep="first", maintain_order=True)
                        if frames else None)
    return merged, paths[0]


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's answers scored together (``part_metrics``: one resample of prompts shared by all models, so
    differences are paired; the across-model tests over all of them): closed answers re-parsed, open answers with
    the jury score of their own run (the jury its metrics.json records: fitted weights, given weights, the jurors'
    mean, or none)."""
    tables, release_path = comparison_release(folders, release)
    closed_records, open_tables, sources, juries = [], [], [], {}
    for folder, mapping in zip(folders, labels):
        paths = folder.responses()
        sources += [runs.source_info(p) for p in paths]
        records = [{**r, "model": mapping.get(str(r["model"]), str(r["model"]))} if "model" in r else r
                   for r in read_responses(paths)]
        closed_records += [r for r in records if r["part"] == "closed"]
        answers = [r for r in records if r["part"] == "open"]
        if answers:
            jury = (folder.metrics.get("open") or {}).get("jury") or {"method": "none"}
            table, jurors, _ = jury_table(answers, [r for r in records if r["part"] == "juror"], tables["open"])
            open_tables.append(apply_jury(table, jurors, jury).select(
                "model", "id", "dimension", "language", "sample_index", "jury_score"))
            juries[str(folder.path)] = jury
    config = Config()
    metrics: dict[str, Any] = {"benchmark": BENCHMARK, "release": str(release_path),
                               "release_manifest_sha256": runs.release_manifest_sha256(release_path),
                               "responses": sources, "juries": juries,
                               "uncertainty": settings.record(unit="prompt", strata="dimension", **BOOTSTRAP_NOTE)}
    scored = {"closed": score_closed(closed_records, tables["closed"]) if closed_records else None,
              "open": pl.concat(open_tables) if open_tables else None}
    notes = []
    for part, frame in scored.items():
        if frame is None:
            notes.append(f"No {part} answers in these runs: the {part} table and figures are empty.")
            continue
        metrics[part] = part_metrics(frame, PART_VALUES[part][0], part, {}, tables, config, settings)
    if len({json.dumps(j, sort_keys=True) for j in juries.values()}) > 1:
        notes.append("The runs' open answers were scored by different juries (see comparison.json, metrics.juries): "
                     "their jury scores are on scales fitted separately.")
    models = sorted({m for f, mapping in zip(folders, labels) for m in mapping.values()}
                    | {m for part in ("closed", "open") for m in metrics.get(part, {}).get("mean_sd", {})})
    metrics["models"] = models
    metrics = runs.json_safe(metrics)
    return compare.Comparison(models=models, tables=comparison_tables(metrics, models), metrics=metrics, notes=notes)


def means_table(part: dict | None, models: Sequence[str]) -> pl.DataFrame:
    """Tables 2-5 layout: one row per dimension (prompts: how many the models answered, at most), per model its
    mean with ``_low``/``_high`` (the bootstrap interval) and its SD."""
    schema = {"dimension": pl.String, "prompts": pl.Int64}
    for m in models:
        schema.update({m: pl.Float64, f"{m}_low": pl.Float64, f"{m}_high": pl.Float64, f"{m} SD": pl.Float64})
    if part is None:
        return pl.DataFrame(schema=schema)
    rows = []
    for dimension in DIMENSIONS:
        cells = {m: part["mean_sd"].get(m, {}).get(dimension) or {} for m in models}
        if not any(cells.values()):
            continue
        row = {"dimension": dimension, "prompts": max(c.get("n_prompts") or 0 for c in cells.values())}
        for m, c in cells.items():
            low, high = c.get("mean_ci") or [None, None]
            row.update({m: c.get("mean"), f"{m}_low": low, f"{m}_high": high, f"{m} SD": c.get("sd")})
        rows.append(row)
    return pl.DataFrame(rows, schema=schema)


def comparison_tables(metrics: dict, models: Sequence[str]) -> dict[str, pl.DataFrame]:
    """The compare page's tables: closed and open means (Tables 2-5), the Friedman test per dimension and the
    pairwise differences (Fig. 2's Wilcoxon tests, the paired bootstrap interval, ``significant``)."""
    friedman, differences = [], []
    for part in ("closed", "open"):
        for dimension, tests in (metrics.get(part) or {}).get("model_tests", {}).items():
            f = tests["friedman"]
            friedman.append({"part": part, "dimension": dimension, "models": f["k"], "prompts": f["n_blocks"],
                             "chi2": f["statistic"], "pvalue": f["pvalue"], "reason": f.get("reason")})
        for row in (metrics.get(part) or {}).get("model_differences", []):
            low, high = row["difference_ci"] or [None, None]
            differences.append({"part": part, **{k: row[k] for k in ("model_a", "model_b", "dimension", "difference")},
                                "difference_low": low, "difference_high": high,
                                **{k: row[k] for k in ("wilcoxon_statistic", "n_pairs", "pvalue", "pvalue_holm",
                                                       "friedman_pvalue", "significant")}})
    return {
        "closed_means": means_table(metrics.get("closed"), models),
        "open_means": means_table(metrics.get("open"), models),
        "friedman": pl.DataFrame(friedman, schema={"part": pl.String, "dimension": pl.String, "models": pl.Int64,
                                                   "prompts": pl.Int64, "chi2": pl.Float64, "pvalue": pl.Float64,
                                                   "reason": pl.String}),
        "differences": pl.DataFrame(differences, schema={
            "part": pl.String, "model_a": pl.String, "model_b": pl.String, "dimension": pl.String,
            "difference": pl.Float64, "difference_low": pl.Float64, "difference_high": pl.Float64,
            "wilcoxon_statistic": pl.Float64, "n_pairs": pl.Int64, "pvalue": pl.Float64, "pvalue_holm": pl.Float64,
            "friedman_pvalue": pl.Float64, "significant": pl.Boolean}),
    }


def compared_parts(comparison: compare.Comparison) -> list[str]:
    return [p for p in ("closed", "open") if comparison.metrics.get(p)]


def radar_comparison_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 3 with one series per model, one radar per part compared, the bootstrap intervals as bands."""
    plt = plots.pyplot()
    parts = compared_parts(comparison) or ["closed"]
    fig, axes = plt.subplots(1, len(parts), figsize=(7.5 * len(parts), 8.2), dpi=100, squeeze=False,
                             subplot_kw={"polar": True})
    for ax, part in zip(axes.flat, parts):
        draw_radar(ax, (comparison.metrics.get(part) or {}).get("mean_sd", {}),
                   f"LLM-GLOBE {part}: mean per dimension")
    plots.save_figure(fig, path)


def dimension_bars_png(comparison: compare.Comparison, path: Path) -> None:
    """The radar's companion: per part, grouped bars of each model's mean per dimension with its bootstrap
    interval as error bars."""
    plt = plots.pyplot()
    parts = compared_parts(comparison) or ["closed"]
    models = comparison.models
    fig, axes = plt.subplots(len(parts), 1, figsize=(max(10.0, 0.5 * len(DIMENSIONS) * max(2, len(models))),
                                                     4.5 * len(parts)), dpi=100, squeeze=False)
    width = 0.8 / max(1, len(models))
    slots = list(range(len(DIMENSIONS)))
    for ax, part in zip(axes.flat, parts):
        table = (comparison.metrics.get(part) or {}).get("mean_sd", {})
        for i, model in enumerate(models):
            cells = [(x, table.get(model, {}).get(d) or {}) for x, d in
                     zip(plots.grouped_bar_x(slots, len(models), i, width), DIMENSIONS)]
            shown = [(x, c["mean"], c.get("mean_ci") or [None, None]) for x, c in cells if c.get("mean") is not None]
            err = [[v - (lo if lo is not None else v) for _, v, (lo, _) in shown],
                   [(hi if hi is not None else v) - v for _, v, (_, hi) in shown]]
            ax.bar([x for x, _, _ in shown], [v for _, v, _ in shown], width, yerr=err, capsize=2, label=model,
                   color=f"C{i % 10}")
        ax.set_xticks(slots)
        ax.set_xticklabels([d.replace(" ", "\n") for d in DIMENSIONS], fontsize=8)
        ax.set_xlim(-0.5, len(DIMENSIONS) - 0.5)
        ax.set_ylim(0, 7)  # from 0: a mean of 1 (the scale's floor) is a bar, not nothing
        plots.note_if_empty(ax, [(table.get(m, {}).get(d) or {}).get("mean") for m in models for d in DIMENSIONS],
                            "no parsed rating from any model")
        ax.set_ylabel("mean (1-7)")
        ax.set_title(f"LLM-GLOBE {part}: mean per dimension (bootstrap intervals over prompts)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    plots.save_figure(fig, path)


def wilcoxon_comparison_png(part: str):
    """Fig. 2 for ``part``: the pairwise Wilcoxon p-values per dimension (a figure saying why when there is no
    pair of models to test)."""

    def draw(comparison: compare.Comparison, path: Path) -> None:
        tests = (comparison.metrics.get(part) or {}).get("model_tests")
        if tests and len(comparison.models) >= 2:
            wilcoxon_png(tests, comparison.models, path, f"LLM-GLOBE {part}: pairwise Wilcoxon p-values (Fig. 2)")
            return
        plt = plots.pyplot()
        fig, ax = plt.subplots(figsize=(6, 1.5), dpi=100)
        ax.axis("off")
        ax.text(0.5, 0.5, f"No pairwise tests: {'no ' + part + ' answers' if not tests else 'one model'}.",
                ha="center", va="center")
        plots.save_figure(fig, path)

    return draw


COMPARE = compare.BenchmarkSpec(
    benchmark=BENCHMARK,
    title="LLM-GLOBE (Karinshak et al. 2024, arXiv 2411.06032)",
    build=compare_runs,
    tables=(
        compare.Table("closed_means", PART_VALUES["closed"][1],
                      "Per model: mean over its answers [bootstrap interval over prompts] and SD; prompts: how many "
                      "prompts of the dimension were answered."),
        compare.Table("open_means", PART_VALUES["open"][1],
                      "Per model: mean jury score S(x) over its answers [bootstrap interval over prompts] and SD; "
                      "each run's answers scored by that run's jury."),
        compare.Table("friedman", "Sec. 4.2.3: Friedman test across models per dimension (prompts as blocks)",
                      "Needs three or more models; blocks are the prompts every model answered."),
        compare.Table("differences", "Fig. 2: pairwise differences between models per dimension",
                      "difference = mean_a - mean_b with its paired bootstrap interval; pvalue: Wilcoxon signed-rank "
                      "over prompts, pvalue_holm over the pairs of the dimension."),
    ),
    figures=(
        compare.Figure("radar.png", "Fig. 3: mean per dimension, one series per model (bands: intervals)",
                       radar_comparison_png),
        compare.Figure("dimension_bars.png", "Mean per dimension with bootstrap intervals (error bars)",
                       dimension_bars_png),
        compare.Figure("wilcoxon_closed.png", "Fig. 2 (closed): pairwise Wilcoxon p-values",
                       wilcoxon_comparison_png("closed")),
        compare.Figure("wilcoxon_open.png", "Fig. 2 (open): pairwise Wilcoxon p-values",
                       wilcoxon_comparison_png("open")),
    ),
    significance=BOOTSTRAP_NOTE["significance"][0].upper() + BOOTSTRAP_NOTE["significance"][1:] + ".",
)
"""``culturebench compare`` for LLM-GLOBE: every run's answers scored together against the release."""
