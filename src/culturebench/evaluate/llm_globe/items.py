"""LLM-GLOBE's release tables (closed and open prompts, rubrics, GLOBE scores) and the requests planned from
them: closed answers, open answers and the jurors' ratings."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.runs import release_configs
from culturebench.evaluate.llm_globe import prompts
from culturebench.evaluate.llm_globe.config import BENCHMARK, Juror

CLOSED_COLUMNS = ("id", "dimension", "reverse", "prompt_en", "prompt_zh")
OPEN_COLUMNS = ("id", "dimension", "prompt_en", "prompt_zh")
RUBRIC_COLUMNS = ("dimension", "scale_en", "characteristics_en", "scale_zh", "characteristics_zh")
GLOBE_COLUMNS = ("country", "dimension", "practices", "values")
GLOBE_MEASURES = ("values", "practices")


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
    tables = release_configs.release_configs(release, BENCHMARK, "an LLM-GLOBE release")
    out: dict[str, pl.DataFrame | None] = {}
    closed = release_configs.release_config(tables, "closed", release, columns=CLOSED_COLUMNS, required=False)
    if closed is not None:
        closed = _dimension_column(closed, "closed", release).with_columns(
            pl.col("id").cast(pl.String), pl.col("reverse").cast(pl.Boolean))
        if "item_id" not in closed.columns:
            closed = closed.with_columns(pl.lit(None, pl.String).alias("item_id"))
        for column, default in (("scale_min", prompts.SCALE_MIN), ("scale_max", prompts.SCALE_MAX)):
            if column not in closed.columns:
                closed = closed.with_columns(pl.lit(default, pl.Int64).alias(column))
    out["closed"] = closed
    opened = release_configs.release_config(tables, "open", release, columns=OPEN_COLUMNS, required=False)
    if opened is not None:
        opened = _dimension_column(opened, "open", release).with_columns(pl.col("id").cast(pl.String))
    out["open"] = opened
    rubrics = release_configs.release_config(tables, "rubrics", release, columns=RUBRIC_COLUMNS, required=False)
    if rubrics is not None:
        rubrics = _dimension_column(rubrics, "rubrics", release)
    out["rubrics"] = rubrics
    globe = release_configs.release_config(tables, "globe_2004", release, columns=GLOBE_COLUMNS, required=False)
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


def _asked(prompts_frame: pl.DataFrame, languages: Sequence[str], samples: int) -> Iterator[tuple[dict, str, str, int]]:
    """(row, language, text, sample index) of every prompt x language with text x sample, in release order."""
    for row in prompts_frame.iter_rows(named=True):
        for language in languages:
            text = row[f"prompt_{language}"]
            if text is None or not str(text).strip():
                continue
            for r in range(samples):
                yield row, language, text, r


def asked_count(prompts_frame: pl.DataFrame, languages: Sequence[str], samples: int) -> int:
    """How many requests ``_asked`` plans (the progress bar's total), without planning them."""
    return samples * sum(1 for _ in _asked(prompts_frame, languages, 1))


def plan_closed(closed: pl.DataFrame, languages: Sequence[str], *, samples: int, temperature: float,
                max_tokens: int, seed: int | None, variants: Sequence[str] = ("default",)
                ) -> Iterator[PlannedRequest]:
    """Every closed prompt x language x sample, in release order (a generator), under each of ``variants``
    (``prompts.VARIANT_PROMPT``; issue #63)."""
    from culturebench.chat import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    for row, language, text, r in _asked(closed, languages, samples):
        for variant in variants:
            info = {"id": row["id"], "item_id": row["item_id"], "dimension": row["dimension"],
                    "reverse": bool(row["reverse"]), "language": language, "sample_index": r, "variant": variant}
            yield PlannedRequest("closed", info, ChatRequest(
                prompts.messages(prompts.VARIANT_PROMPT[variant](text, language)), sampling, r))


def response_id(model: str, prompt_id: str, language: str, sample_index: int) -> str:
    """The id of one open answer (what a human-ratings file refers to)."""
    return f"{model}|{prompt_id}|{language}|{sample_index}"


def plan_open(opened: pl.DataFrame, languages: Sequence[str], model: str, *, samples: int, temperature: float,
              max_tokens: int, seed: int | None) -> Iterator[PlannedRequest]:
    """Every open prompt x language x sample, in release order (a generator)."""
    from culturebench.chat import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    for row, language, text, r in _asked(opened, languages, samples):
        info = {"id": row["id"], "dimension": row["dimension"], "language": language, "sample_index": r,
                "response_id": response_id(model, row["id"], language, r), "prompt": text}
        yield PlannedRequest("open", info, ChatRequest(prompts.messages(text), sampling, r))


def plan_jurors(answers: Sequence[dict], rubrics: pl.DataFrame, juror: Juror, *, temperature: float,
                max_tokens: int) -> Iterator[PlannedRequest]:
    """One juror request per open answer (``answers``: records with dimension, prompt, response, response_id), as a
    generator; every answer's rubric is checked first."""
    from culturebench.chat import ChatRequest, SamplingParams

    rubric = {r["dimension"]: r for r in rubrics.iter_rows(named=True)}
    for dimension in dict.fromkeys(answer["dimension"] for answer in answers):  # before any juror is asked
        if dimension not in rubric:
            raise InputError(f"rubrics config has no rubric for {dimension!r}", column="dimension")
    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=None)
    lang = juror.language

    def planned() -> Iterator[PlannedRequest]:
        for answer in answers:
            r = rubric[answer["dimension"]]
            text = prompts.juror_prompt(answer["dimension"], r[f"scale_{lang}"], r[f"characteristics_{lang}"],
                                        answer["prompt"], answer["response"], lang)
            info = {"response_id": answer["response_id"], "juror": juror.name, "juror_model": juror.model,
                    "juror_language": lang}
            yield PlannedRequest("juror", info, ChatRequest(prompts.messages(text), sampling, 0))

    return planned()
