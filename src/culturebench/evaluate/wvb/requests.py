"""WorldValuesBench requests (Sec. 3.5, App. B): one ``PlannedRequest`` per model call, made by a generator
(``iter_requests``) so that a run is never a list of its prompts; the records of responses.jsonl (``parse_records``)
and their parquet schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import runs

if TYPE_CHECKING:
    from culturebench.evaluate.backends import ChatRequest


@dataclass(frozen=True)
class PlannedRequest:
    """One model call: for a (participant, question) row with demographics; for a question (participant None)
    without them."""

    participant_id: int | None
    question_id: str
    sample_index: int
    request: ChatRequest



def request_sampling(demographics: bool = True, temperature: float | None = None, max_tokens: int | None = None,
                     seed: int | None = 0):
    """The sampling of every request of a run (Sec. 3.5, App. B): temperature 0 with demographics, 0.7 without
    (``temperature`` overrides), App. B's token limit and "\\n\\n" stop."""
    from culturebench.evaluate.backends import SamplingParams
    from culturebench.evaluate.wvb import prompts

    if temperature is None:
        temperature = prompts.TEMPERATURE_WITH_DEMOGRAPHICS if demographics else prompts.TEMPERATURE_WITHOUT_DEMOGRAPHICS
    return SamplingParams(temperature=float(temperature), max_tokens=prompts.MAX_TOKENS if max_tokens is None
                          else max_tokens, seed=seed, stop=prompts.STOP)


def request_count(rows: pl.DataFrame, demographics: bool = True, samples: int | None = None) -> int:
    """How many requests ``iter_requests`` yields for ``rows``, without building them (the progress bar's total and
    the responses file's layout)."""
    if demographics or samples is None:
        return rows.height * (samples or 1) if demographics else rows.height
    return rows["question_id"].n_unique() * samples


def iter_requests(rows: pl.DataFrame, questions: pl.DataFrame, participants: pl.DataFrame, *,
                  demographics: bool = True, samples: int | None = None, temperature: float | None = None,
                  max_tokens: int | None = None, seed: int | None = 0,
                  family: str | None = None) -> Iterator[PlannedRequest]:
    """The model calls of a run (Sec. 3.5, App. B), with ``family``'s prompts (default DEFAULT_FAMILY), one at a
    time (a generator: a run of millions is never a list); the options are checked before the first is made.

    With demographics: one request per evaluated (participant, question) row (``samples`` per row when given),
    prompt Figs. 5-8, temperature 0. Without: per question, as many samples of the one prompt as the question has
    human answers among the rows (``samples`` overrides), ``sample_index`` 0..K-1, prompt Figs. 9-10, temperature
    0.7. Every request stops at "\\n\\n" (App. B). The seed is the same for every request (the backends vary it
    per sample_index)."""
    from culturebench.evaluate.wvb import prompts

    runs.check_at_least_one({"--samples": samples, "--max-tokens": max_tokens})
    family = prompts.DEFAULT_FAMILY if family is None else family
    if family not in prompts.FAMILIES:
        raise InputError(f"unknown prompt_family {family!r}; choose from {', '.join(prompts.FAMILIES)}")
    sampling = request_sampling(demographics, temperature, max_tokens, seed)
    text = dict(zip(questions["question_id"], questions["text"]))
    unknown = sorted(set(rows["question_id"]) - {q for q, k in zip(questions["question_id"], questions["kind"]) if k == "value"})
    if unknown:
        raise InputError(f"questions {', '.join(unknown[:5])} are not value questions of the release's questions config")
    if demographics:
        demographic_questions = [text.get(v) or v for v in prompts.DEMOGRAPHIC_VARIABLES]
        people = {r[0]: list(zip(demographic_questions, r[1:])) for r in
                  participants.select("participant_id", *prompts.DEMOGRAPHIC_VARIABLES).iter_rows()}
        blank = [(q, None) for q in demographic_questions]
        return _with_demographics(rows, people, blank, text, family, sampling, samples or 1)
    return _without_demographics(rows, text, family, sampling, samples)


def _with_demographics(rows: pl.DataFrame, people: dict, blank: list, text: dict, family: str, sampling,
                       samples: int) -> Iterator[PlannedRequest]:
    from culturebench.evaluate.backends import ChatRequest
    from culturebench.evaluate.wvb import prompts

    for participant_id, question_id in rows.select("participant_id", "question_id").iter_rows():
        message = prompts.messages(prompts.with_demographics_prompt(people.get(participant_id, blank),
                                                                    text[question_id], family))
        for index in range(samples):
            yield PlannedRequest(participant_id, question_id, index,
                                 ChatRequest(messages=message, sampling=sampling, sample_index=index))


def _without_demographics(rows: pl.DataFrame, text: dict, family: str, sampling,
                          samples: int | None) -> Iterator[PlannedRequest]:
    from culturebench.evaluate.backends import ChatRequest
    from culturebench.evaluate.wvb import prompts

    for question_id, n_human in rows.group_by("question_id", maintain_order=True).len().iter_rows():
        message = prompts.messages(prompts.without_demographics_prompt(text[question_id], family))
        for index in range(samples or n_human):
            yield PlannedRequest(None, question_id, index,
                                 ChatRequest(messages=message, sampling=sampling, sample_index=index))


def plan_requests(rows: pl.DataFrame, questions: pl.DataFrame, participants: pl.DataFrame,
                  **options) -> list[PlannedRequest]:
    """``iter_requests`` as a list (for a look at a few rows' requests; a run streams them)."""
    return list(iter_requests(rows, questions, participants, **options))


def parse_records(planned: list[PlannedRequest], responses: list, questions: pl.DataFrame) -> list[dict]:
    """responses.jsonl lines: participant_id, question_id, sample_index, messages, raw output, parsed answer and
    parse status, plus finish reason and token counts."""
    from culturebench.evaluate.wvb.prompts import parse_answer

    scales = {q: (lo, hi) for q, lo, hi in questions.select("question_id", "scale_min", "scale_max").iter_rows()}
    records = []
    for item, response in zip(planned, responses, strict=True):
        low, high = scales[item.question_id]
        answer, status = parse_answer(response.text, low, high)
        records.append({
            "participant_id": item.participant_id,
            "question_id": item.question_id,
            "sample_index": item.sample_index,
            "messages": item.request.message_dicts(),
            "sampling": {"temperature": item.request.sampling.temperature, "max_tokens": item.request.sampling.max_tokens,
                         "top_p": item.request.sampling.top_p, "seed": item.request.sampling.seed,
                         "stop": list(item.request.sampling.stop)},
            "output": response.text,
            "answer": answer,
            "parse_status": status,
            "finish_reason": response.finish_reason,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
        })
    return records


def response_schema() -> pl.Schema:
    """The polars schema of responses.jsonl's records (``parse_records``), for the parquet shards of a large run
    (``runs.ResponsesWriter``)."""
    return pl.Schema({
        "participant_id": pl.Int64, "question_id": pl.String, "sample_index": pl.Int64,
        "messages": pl.List(pl.Struct({"role": pl.String, "content": pl.String})),
        "sampling": pl.Struct({"temperature": pl.Float64, "max_tokens": pl.Int64, "top_p": pl.Float64,
                               "seed": pl.Int64, "stop": pl.List(pl.String)}),
        "output": pl.String, "answer": pl.Int64, "parse_status": pl.String, "finish_reason": pl.String,
        "prompt_tokens": pl.Int64, "completion_tokens": pl.Int64})
