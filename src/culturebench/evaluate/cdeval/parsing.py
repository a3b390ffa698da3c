"""CDEval's responses.jsonl read and each answer scored (App. A.3.1, Sec. 4.2 language variants)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError, excerpt
from culturebench.evaluate.runs import saved_records
from culturebench.evaluate.cdeval import prompts
from culturebench.evaluate.cdeval.items import RESPONSE_FIELDS, RESPONSE_KEY
from culturebench.evaluate.runs.scores import join_release
from culturebench.evaluate.runs.variants import DEFAULT
from culturebench.raw.cdeval import DEFAULT_LANGUAGE


def release_language(manifest: dict) -> str:
    """The questionnaire's language as the build recorded it (``en`` for the released CDEval.json)."""
    return manifest.get("provenance", {}).get("language", DEFAULT_LANGUAGE)


def respondent(model: str, language: str | None) -> str:
    """The label a (model, language) is scored under (Sec. 4.2): the model, or ``model [language]``."""
    return f"{model} [{language}]" if language else model


def read_responses(paths: Sequence[Path]) -> pl.DataFrame:
    """responses.jsonl files (evaluate's output) as one table: model (a ``language`` field, Sec. 4.2, makes it
    ``model [language]``), question_id, prompt, sample_index, response, source (the file), row. Records of a
    ``--variants`` run's other variants are left out: the paper's scores are the default's (issue #63)."""
    rows = []
    for path in map(Path, paths):
        for number, record in saved_records.jsonl_records(path, RESPONSE_FIELDS, unique=RESPONSE_KEY):
            if record.get("variant", DEFAULT) != DEFAULT:
                continue
            if record["prompt"] not in prompts.TEMPLATES:
                raise InputError(f"unknown prompt {excerpt(repr(record['prompt']))}", file=path, row=number,
                                 column="prompt")
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
    """Each answer read (App. A.3.1, ``prompts.score_answer``; ``repeat_rule``: ``prompts.REPEAT_RULES``):
    adds dimension, domain, template, order, parse_status, shown (displayed option picked) and score (toward the
    target orientation)."""
    joined = join_release(responses, questions.select("question_id", "dimension", "domain", "option_1", "option_2"),
                          "question_id", "option_1", "question id")
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
