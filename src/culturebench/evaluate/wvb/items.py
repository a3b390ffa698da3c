"""WorldValuesBench items: the release's configs read lazily (``Release.scan``), the evaluated rows of a
split or the probe (Sec. 3.1) with the ``--limit`` spread, the tables the prompts and the scoring need, and the
planned requests (Sec. 3.5, App. B): one ``PlannedRequest`` per model call, made by a generator (``iter_requests``)
so that a run is never a list of its prompts; the records of responses.jsonl (``parse_records``) and their parquet
schema."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from culturebench import config_file
from culturebench.errors import InputError
from culturebench.evaluate.runs.limit import Coverage, limit_scan
from culturebench.evaluate.wvb import SPLITS
from culturebench.release_reader import Release

if TYPE_CHECKING:
    from culturebench.chat import ChatRequest

PROBE_DIMENSIONS = ("continent", "urban_rural", "education_level")


def question_order(question_id: str) -> tuple:
    """Natural order of question ids: Q2 before Q10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", question_id))


def _collect(frame: pl.LazyFrame, release: Path, config: str) -> pl.DataFrame:
    try:
        return frame.collect(engine="streaming")
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{config} parquet files cannot be read ({str(exc).splitlines()[0]})", file=release) from None


def release_rows(release: Path, answered: pl.LazyFrame) -> dict[str, pl.DataFrame]:
    """The release rows the scoring needs: questions (scales), the examples of the ``answered`` (participant_id,
    question_id) pairs (a filter on the pairs while the scan streams, so the rest of the split is never held; a
    semi-join held 2.3x the memory), and the participants and probe rows of their participants."""
    release = Path(release)
    opened = Release.open(release).check_benchmark("wvb", "a WorldValuesBench release")
    answered = (answered.select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.Categorical))
                .drop_nulls("participant_id").collect())  # the answers are read once, for both filters
    ids = answered["participant_id"].unique().implode()
    pair = pl.struct("participant_id", "question_id")
    wanted = answered.select(pair.alias("pair"))["pair"].implode()
    questions = _collect(opened.scan("questions").select(
        "question_id", "kind", pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64)), release, "questions")
    examples = _collect(opened.scan("examples")
                        .select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.Categorical),
                                pl.col("answer").cast(pl.Int64).alias("human"))
                        .filter(pair.is_in(wanted)), release, "examples")
    participants = _collect(opened.scan("participants")
                            .filter(pl.col("participant_id").is_in(ids))
                            .select(pl.col("participant_id").cast(pl.Int64), pl.col("continent").cast(pl.String),
                                    pl.col("H_URBRURAL").cast(pl.String).alias("urban_rural")), release, "participants")
    if opened.paths("probe"):
        probe = _collect(opened.scan("probe").filter(pl.col("participant_id").is_in(ids))
                         .select(pl.col("participant_id").cast(pl.Int64), *(pl.col(c).cast(pl.String) for c in PROBE_DIMENSIONS))
                         .unique("participant_id", keep="first", maintain_order=True), release, "probe")
    else:
        probe = pl.DataFrame(schema={"participant_id": pl.Int64, **{c: pl.String for c in PROBE_DIMENSIONS}})
    return {"questions": questions, "examples": examples, "participants": participants, "probe": probe}


def release_routes(release: Path) -> dict:
    """Which files built the release's question texts and probe (manifest provenance ``routes``, see
    ``builders.wvb.ROUTES``): recorded in metrics.json and run.json, since prompts and probe depend on them."""
    return Release.open(release).manifest.provenance.get("routes", {})



def check_inputs(release: Path, split: str = "probe", limit: int | None = None) -> Release:
    """Cheap checks of the user's choices before a backend is started; the release opened."""
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    config_file.check_at_least_one({"--limit": limit})
    if not Path(release).is_dir():
        raise InputError("release folder not found (build it with: culturebench build wvb)", file=release)
    return Release.open(release).check_benchmark("wvb", "a WorldValuesBench release")


def evaluation_rows(release: Path, split: str = "probe", limit: int | None = None,
                    seed: int | None = 0) -> pl.DataFrame:
    """The evaluated rows, in release order: participant_id, question_id, human (the participant's answer). The
    probe config for ``probe`` (question-major), else the split's examples; ``limit`` rows spread over the questions
    when given (``limit.spread_positions`` with ``seed``)."""
    return limited_rows(release, split, limit, seed)[0]


def limited_rows(release: Path, split: str = "probe", limit: int | None = None,
                 seed: int | None = 0) -> tuple[pl.DataFrame, Coverage]:
    """``evaluation_rows`` and what they cover (questions asked, rows per question)."""
    release = Path(release)
    opened = check_inputs(release, split, limit)
    if split == "probe":
        frame = opened.scan("probe")
    else:
        frame = opened.scan("examples").filter(pl.col("split").cast(pl.String) == split)
    frame = frame.select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                         pl.col("answer").cast(pl.Int64).alias("human"))
    rows, covers = limit_scan(frame, ["question_id"], limit, seed, item="rows", columns=["questions"],
                              collect=lambda query: _collect(query, release, split))
    if covers.available == 0:
        raise InputError(f"the release has no {split} rows", file=release)
    return rows, covers


def question_rows(release: Path, question_ids: Sequence[str], seed: int | None = 0) -> pl.DataFrame:
    """One evaluated row per question of ``question_ids`` (participant_id, question_id, human), from any split's
    examples, spread by ``seed``: the rows a run that asks each question once (``--protocol liu2025``) pairs its
    records with."""
    release = Path(release)
    wanted = pl.Series(list(question_ids), dtype=pl.String).implode()
    frame = (Release.open(release).scan("examples")
             .select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                     pl.col("answer").cast(pl.Int64).alias("human"))
             .filter(pl.col("question_id").is_in(wanted)))
    rows, _ = limit_scan(frame, ["question_id"], len(question_ids), seed, item="rows", columns=["questions"],
                         collect=lambda query: _collect(query, release, "examples"))
    return rows


def prompt_tables(release: Path, participant_ids: pl.Series | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The questions config (question_id, kind, text, scale_min, scale_max) and the demographics of the given
    participants (participant_id + DEMOGRAPHIC_VARIABLES, codebook text) from a WVB release."""
    from culturebench.evaluate.wvb.prompts import DEMOGRAPHIC_VARIABLES

    release = Path(release)
    opened = Release.open(release)
    questions = _collect(opened.scan("questions").select(
        pl.col("question_id").cast(pl.String), pl.col("kind").cast(pl.String), pl.col("text").cast(pl.String),
        pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64)), release, "questions")
    schema = {"participant_id": pl.Int64, **{v: pl.String for v in DEMOGRAPHIC_VARIABLES}}
    if participant_ids is None:
        return questions, pl.DataFrame(schema=schema)
    participants = _collect(opened.scan("participants")
                            .filter(pl.col("participant_id").is_in(participant_ids.unique().implode()))
                            .select(pl.col("participant_id").cast(pl.Int64),
                                    *(pl.col(v).cast(pl.String) for v in DEMOGRAPHIC_VARIABLES)), release, "participants")
    return questions, participants


@dataclass(frozen=True)
class PlannedRequest:
    """One model call: for a (participant, question) row with demographics; for a question (participant None)
    without them."""

    participant_id: int | None
    question_id: str
    sample_index: int
    request: ChatRequest
    steer: str | None = None
    """The country (ISO alpha-3) the prompt names under ``--steer country``; None: not steered."""
    variant: str = "default"
    """The prompt variant asked (``prompts.VARIANT_QUESTION``; issue #63)."""



def request_sampling(demographics: bool = True, temperature: float | None = None, max_tokens: int | None = None,
                     seed: int | None = 0):
    """The sampling of every request of a run (Sec. 3.5, App. B): temperature 0 with demographics, 0.7 without
    (``temperature`` overrides), App. B's token limit and "\\n\\n" stop."""
    from culturebench.chat import SamplingParams
    from culturebench.evaluate.wvb import prompts

    if temperature is None:
        temperature = prompts.TEMPERATURE_WITH_DEMOGRAPHICS if demographics else prompts.TEMPERATURE_WITHOUT_DEMOGRAPHICS
    return SamplingParams(temperature=float(temperature), max_tokens=prompts.MAX_TOKENS if max_tokens is None
                          else max_tokens, seed=seed, stop=prompts.STOP)


def request_count(rows: pl.DataFrame, demographics: bool = True, samples: int | None = None,
                  n_steered: int = 0) -> int:
    """How many requests ``iter_requests`` yields for ``rows``, without building them (the progress bar's total and
    the responses file's layout); ``n_steered``: countries each question is asked again for (``--steer``)."""
    if demographics or samples is None:
        return rows.height * (samples or 1) if demographics else rows.height * (1 + n_steered)
    return rows["question_id"].n_unique() * samples * (1 + n_steered)


def iter_requests(rows: pl.DataFrame, questions: pl.DataFrame, participants: pl.DataFrame, *,
                  demographics: bool = True, samples: int | None = None, temperature: float | None = None,
                  max_tokens: int | None = None, seed: int | None = 0,
                  family: str | None = None, steer: Sequence[tuple[str, str]] = (),
                  reading: str = "samples", variants: Sequence[str] = ("default",)) -> Iterator[PlannedRequest]:
    """The model calls of a run (Sec. 3.5, App. B), with ``family``'s prompts (default DEFAULT_FAMILY), one at a
    time (a generator: a run of millions is never a list); the options are checked before the first is made.

    With demographics: one request per evaluated (participant, question) row (``samples`` per row when given),
    prompt Figs. 5-8, temperature 0. Without: per question, as many samples of the one prompt as the question has
    human answers among the rows (``samples`` overrides), ``sample_index`` 0..K-1, prompt Figs. 9-10, temperature
    0.7. Every request stops at "\\n\\n" (App. B). The seed is the same for every request (the backends vary it
    per sample_index). Without demographics, ``steer`` ((code, name) pairs) asks each question again per country,
    the prompt naming it (``prompts.steered_question``), and ``reading`` "verbalized" asks for the distribution in
    words (``prompts.verbalized_prompt``) instead of one answer. Each of ``variants`` asks every request again with
    the question as the variant words it (``prompts.VARIANT_QUESTION``), after the row's default request."""
    from culturebench.evaluate.wvb import prompts

    config_file.check_at_least_one({"--samples": samples, "--max-tokens": max_tokens})
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
        return _with_demographics(rows, people, blank, text, family, sampling, samples or 1, variants)
    return _without_demographics(rows, text, family, sampling, samples, steer, reading, variants)


def _with_demographics(rows: pl.DataFrame, people: dict, blank: list, text: dict, family: str, sampling,
                       samples: int, variants: Sequence[str]) -> Iterator[PlannedRequest]:
    from culturebench.chat import ChatRequest
    from culturebench.evaluate.wvb import prompts

    for participant_id, question_id in rows.select("participant_id", "question_id").iter_rows():
        for variant in variants:
            question = prompts.VARIANT_QUESTION[variant](text[question_id])
            message = prompts.messages(prompts.with_demographics_prompt(people.get(participant_id, blank), question,
                                                                        family))
            for index in range(samples):
                yield PlannedRequest(participant_id, question_id, index,
                                     ChatRequest(messages=message, sampling=sampling, sample_index=index),
                                     variant=variant)


def _without_demographics(rows: pl.DataFrame, text: dict, family: str, sampling, samples: int | None,
                          steer: Sequence[tuple[str, str]] = (), reading: str = "samples",
                          variants: Sequence[str] = ("default",)) -> Iterator[PlannedRequest]:
    from culturebench.chat import ChatRequest
    from culturebench.evaluate.wvb import prompts

    for question_id, n_human in rows.group_by("question_id", maintain_order=True).len().iter_rows():
        for code, name in ((None, None), *steer):
            for variant in variants:
                question = prompts.VARIANT_QUESTION[variant](text[question_id])
                question = question if name is None else prompts.steered_question(question, name)
                prompt = (prompts.without_demographics_prompt(question, family) if reading == "samples"
                          else prompts.verbalized_prompt(question))
                message = prompts.messages(prompt)
                for index in range(samples or n_human):
                    yield PlannedRequest(None, question_id, index,
                                         ChatRequest(messages=message, sampling=sampling, sample_index=index), code,
                                         variant)


def plan_requests(rows: pl.DataFrame, questions: pl.DataFrame, participants: pl.DataFrame,
                  **options) -> list[PlannedRequest]:
    """``iter_requests`` as a list (for a look at a few rows' requests; a run streams them)."""
    return list(iter_requests(rows, questions, participants, **options))


def parse_records(planned: list[PlannedRequest], responses: list, questions: pl.DataFrame,
                  stated=None) -> list[dict]:
    """responses.jsonl lines: participant_id, question_id, sample_index, messages, raw output, parsed answer and
    parse status, plus finish reason and token counts. With ``stated`` (a reader of a stated distribution,
    ``(text, scale_min, scale_max) -> shares or None``: ``--reading verbalized``'s ``opinions.parse_distribution``,
    ``--protocol liu2025``'s ``opinions.stated_reader``) the output is a distribution, not one answer: no answer,
    and the status says whether it was read (``prompts.STATED_STATUSES``)."""
    from culturebench.evaluate.wvb.prompts import STATED_STATUSES, parse_answer

    scales = {q: (lo, hi) for q, lo, hi in questions.select("question_id", "scale_min", "scale_max").iter_rows()}
    records = []
    for item, response in zip(planned, responses, strict=True):
        low, high = scales[item.question_id]
        if stated is not None:
            read = low is not None and high is not None and stated(response.text, low, high)
            answer, status = None, STATED_STATUSES[0 if read else 1]
        else:
            answer, status = parse_answer(response.text, low, high)
        records.append({
            "participant_id": item.participant_id,
            "question_id": item.question_id,
            "sample_index": item.sample_index,
            "steer": item.steer,
            "variant": item.variant,
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
    (``run_folder.ResponsesWriter``)."""
    return pl.Schema({
        "participant_id": pl.Int64, "question_id": pl.String, "sample_index": pl.Int64, "steer": pl.String,
        "variant": pl.String, "messages": pl.List(pl.Struct({"role": pl.String, "content": pl.String})),
        "sampling": pl.Struct({"temperature": pl.Float64, "max_tokens": pl.Int64, "top_p": pl.Float64,
                               "seed": pl.Int64, "stop": pl.List(pl.String)}),
        "output": pl.String, "answer": pl.Int64, "parse_status": pl.String, "finish_reason": pl.String,
        "prompt_tokens": pl.Int64, "completion_tokens": pl.Int64})
