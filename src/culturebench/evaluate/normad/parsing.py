"""NormAd's responses.jsonl read and each answer scored against its story's gold label (``UNPARSED_RULES``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError, excerpt
from culturebench.evaluate.runs import saved_records
from culturebench.evaluate.normad import prompts
from culturebench.evaluate.runs.variants import DEFAULT
from culturebench.evaluate.runs.scores import join_release

RESPONSE_FIELDS = ("model", "story_id", "context", "response")
UNPARSED_RULES = {
    "neutral": "an answer that is not one clear Yes / No / Neither is read as Neither (the gold label neutral): the "
               "authors' fallback; Table A.4's rows of models that always land on Neither fit it",
    "wrong": "an answer that is not one clear Yes / No / Neither counts as no label: wrong, a miss for its gold "
             "label and a false positive for none (--unparsed-wrong)",
}
"""How an unparsed answer is scored (metrics.json ``unparsed_rule``); the first is the default."""
DEFAULT_UNPARSED = "neutral"
RESPONSE_KEY = ("model", "variant", "story_id", "context", "sample_index")
"""What identifies one answer of responses.jsonl: a second line with the same is refused, not counted twice."""


def scored_label(answer: prompts.Answer, unparsed: str = DEFAULT_UNPARSED) -> str | None:
    """The label an answer is scored as under the ``unparsed`` rule (UNPARSED_RULES)."""
    if unparsed not in UNPARSED_RULES:
        raise InputError(f"unknown rule for unparsed answers {unparsed!r}; choose from {', '.join(UNPARSED_RULES)}")
    if answer.status == "parsed" or unparsed == "wrong":
        return answer.label
    return "neutral"


def score_answers(responses: pl.DataFrame, stories: pl.DataFrame, unparsed: str = DEFAULT_UNPARSED,
                  answer_rule: str = prompts.DEFAULT_ANSWER_RULE) -> pl.DataFrame:
    """Each answer parsed under ``answer_rule`` (prompts.ANSWER_RULES) and joined to its story: adds country,
    gold_label, iw_zone, subaxis, predicted (under the ``unparsed`` rule), parse_status, correct and
    read_differently (the other answer rule scores the answer as another label)."""
    joined = join_release(responses, stories.select("story_id", "country", "gold_label", "iw_zone", "subaxis"),
                          "story_id", "gold_label", "story id")
    texts = joined["response"].to_list()
    answers = [prompts.parse_answer(text, answer_rule) for text in texts]
    other_rule = prompts.other_answer_rule(answer_rule)
    predicted = [scored_label(a, unparsed) for a in answers]
    other = [scored_label(prompts.parse_answer(text, other_rule), unparsed) for text in texts]
    return joined.with_columns(pl.Series("predicted", predicted, dtype=pl.String),
                               pl.Series("parse_status", [a.status for a in answers], dtype=pl.String),
                               pl.Series("read_differently", [p != o for p, o in zip(predicted, other)],
                                         dtype=pl.Boolean)).with_columns(
        (pl.col("predicted").fill_null("") == pl.col("gold_label")).alias("correct"))


def read_responses(paths: Sequence[Path]) -> pl.DataFrame:
    """responses.jsonl files (evaluate's output) as one table: model, story_id, context, sample_index, response,
    source, row, and the protocol (prompts.PROTOCOLS) whose template the record's prompt is (None without one).
    Records of a ``--variants`` run's other variants are left out: the paper's scores are the default's (issue
    #63)."""
    rows = []
    for path in map(Path, paths):
        before = len(rows)
        for number, record in saved_records.jsonl_records(path, RESPONSE_FIELDS, unique=RESPONSE_KEY):
            if record.get("variant", DEFAULT) != DEFAULT:
                continue
            if record["context"] not in prompts.CONTEXTS:
                raise InputError(f"unknown context {excerpt(repr(record['context']))}", file=path, row=number,
                                 column="context")
            response = record["response"]
            rows.append({"model": str(record["model"]), "story_id": str(record["story_id"]),
                         "context": record["context"], "sample_index": int(record.get("sample_index") or 0),
                         "response": None if response is None else str(response), "source": str(path),
                         "row": number, "protocol": prompts.protocol_of_prompt(record.get("prompt"))})
        if len(rows) == before:
            raise InputError("responses file has no records", file=path)
    return pl.DataFrame(rows, schema={"model": pl.String, "story_id": pl.String, "context": pl.String,
                                      "sample_index": pl.Int64, "response": pl.String, "source": pl.String,
                                      "row": pl.Int64, "protocol": pl.String})


def responses_protocol(responses: pl.DataFrame) -> str | None:
    """The protocol the answers were asked under (their ``protocol`` column), None when no answer records one; answers
    of two protocols cannot be scored together (a one-line error)."""
    if "protocol" not in responses.columns:
        return None
    found = sorted(responses["protocol"].drop_nulls().unique().to_list())
    if len(found) > 1:
        raise InputError(f"the responses were asked under different protocols ({' and '.join(found)}); score the "
                         "runs of each protocol on their own")
    return found[0] if found else None
