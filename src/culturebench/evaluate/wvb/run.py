"""``culturebench evaluate wvb`` / ``score wvb``: the plan (App. B's prompts, ``items.iter_requests``), the run
(the runner, batch by batch -> responses file -> ``score_answers`` -> run.json), scoring saved responses and the
summary line (the ``WVB`` benchmark's methods)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from culturebench.contract import Result
from culturebench.errors import InputError
from culturebench.evaluate import run_folder, run_record
from culturebench.evaluate.limit import Coverage
from culturebench.evaluate.wvb import WVBOptions
from culturebench.evaluate.wvb.items import (
    PlannedRequest,
    iter_requests,
    limited_rows,
    parse_records,
    prompt_tables,
    request_count,
    request_sampling,
    response_schema,
)
from culturebench.evaluate.wvb.metrics import score, score_answers
from culturebench.evaluate.wvb.opinions import opinion_requests, write_country_view
from culturebench.evaluate.wvb.parsing import answers_frame, scan_answers
from culturebench.evaluate.wvb.plots import write_run
from culturebench.evaluate.wvb.prompts import STATUSES
from culturebench.release import load_manifest

if TYPE_CHECKING:
    from culturebench.evaluate.backends import SamplingParams


@dataclass(frozen=True)
class Plan:
    """What ``evaluate`` asks: the evaluated rows (after ``--limit``) and what they cover, the questions (their
    scales read the answers), the requests (a generator), their number and their sampling."""

    rows: pl.DataFrame
    covers: Coverage
    questions: pl.DataFrame
    requests: Iterator[PlannedRequest]
    n_requests: int
    sampling: SamplingParams


def plan(options: WVBOptions) -> Plan:
    """The requests of a run (Sec. 3.5, App. B) on the probe or a split (``limit`` rows spread over the questions:
    ``limit.spread_positions`` with ``seed``), read from the release (before a model is loaded)."""
    rows, covers = limited_rows(options.release, options.split, options.limit, options.seed)
    questions, participants = prompt_tables(options.release, rows["participant_id"] if options.demographics else None)
    steer, samples = opinion_requests(options)
    requests = iter_requests(rows, questions, participants, demographics=options.demographics,
                             samples=samples, temperature=options.temperature,
                             max_tokens=options.max_tokens, seed=options.seed, family=options.prompt_family,
                             steer=steer, reading=options.reading)
    return Plan(rows, covers, questions, requests, request_count(rows, options.demographics, samples, len(steer)),
                request_sampling(options.demographics, options.temperature, options.max_tokens, options.seed))


def evaluate(backend, options: WVBOptions, *, args: dict | None = None, console=None) -> Result:
    """Run a model on a WVB release and score it: RUN_DIR/cache.sqlite, responses.jsonl (above
    ``run_folder.SHARD_THRESHOLD`` requests: responses/, parquet shards), metrics.json, the plots and run.json.
    ``prompt_family``: whose App. B prompts (prompts.FAMILIES); ``majority``: MAJORITY_DEFINITIONS;
    ``drop_out_of_scale``: answers off the question's scale are invalid (default: scored as given, as the authors');
    ``drop_non_integer``: answers that are not whole numbers are invalid (default: truncated, as the authors').
    Re-running into the same folder answers every request already made from the cache.

    Streamed: the requests come from a generator (``plan``) in the runner's batches, each batch's parsed records are
    appended to the responses file as it is answered, and the metrics read back the few columns they need
    (``scan_answers``), so memory does not grow with the prompts of a run."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out, split, demographics = Path(options.release), Path(options.out), options.split, options.demographics
    manifest = load_manifest(release)
    planned = plan(options)
    rows, questions, sampling = planned.rows, planned.questions, planned.sampling
    mode = "with demographics" if demographics else "without demographics"
    parse_status = {status: 0 for status in STATUSES}
    n_parsed = 0

    def records_of(items: list[PlannedRequest], responses: list) -> list[dict]:
        nonlocal n_parsed
        records = parse_records(items, responses, questions)
        for record in records:
            parse_status[record["parse_status"]] = parse_status.get(record["parse_status"], 0) + 1
            n_parsed += record["answer"] is not None
        return records

    responses_path, n_records, stats = run_folder.stream_records(backend, planned.requests, out, f"wvb {split} ({mode})",
                                                           records_of, total=planned.n_requests,
                                                           schema=response_schema(), console=console)
    label = f"{getattr(backend, 'model', None) or getattr(backend, 'name', 'model')} ({mode})"
    n_rows, covers = rows.height, planned.covers
    answers = answers_frame(None if demographics else rows, scan_answers(responses_path), demographics)
    del rows, planned  # with demographics the scoring needs none of the evaluated rows: memory for a run of millions
    scored = score_answers(answers, release,
                           run_folder.source_info(responses_path), majority=options.majority, model=label,
                           drop_out_of_scale=options.drop_out_of_scale, drop_non_integer=options.drop_non_integer)
    scored.metrics.update({
        "mode": "with_demographics" if demographics else "without_demographics",
        "prompt_family": options.prompt_family,
        "split": split,
        "n_evaluated_rows": n_rows,
        "n_requests": n_records,
        "n_parsed": n_parsed,
        "n_unparsed": n_records - n_parsed,
        "parse_status": parse_status,
        "covers": [covers.as_dict()],
    })
    country_files = [] if demographics else write_country_view(backend, options, responses_path, questions,
                                                                  scored.metrics, label, console)
    stats = run_folder.runner_stats(stats)
    written = run_record.write_run_record(
        out, [responses_path, *write_run(scored, out), *country_files], benchmark="wvb", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"mode": scored.metrics["mode"], "prompt_family": options.prompt_family, "split": split,
                              "n_evaluated_rows": n_rows, "n_requests": n_records,
                              "temperature": sampling.temperature, "max_tokens": sampling.max_tokens,
                              "stop": list(sampling.stop), "seed": options.seed, "samples": options.samples,
                              "majority": options.majority, "steer": options.steer,
                              "reading": scored.metrics.get("countries", {}).get("reading"),
                              "out_of_scale_answers": "dropped" if options.drop_out_of_scale else "kept",
                              "non_integer_answers": "dropped" if options.drop_non_integer else "truncated"},
               "release_routes": scored.metrics["release_routes"],
               "parse_status": parse_status,
               "metrics": {"mean": scored.metrics["mean"], "std": scored.metrics["std"],
                           "n_questions": scored.metrics["n_questions"], "n_invalid": scored.metrics["n_invalid"]}})
    return Result(metrics=scored.metrics, written=written, stats=stats, score=scored)


def score_files(responses: Sequence[Path], options: WVBOptions) -> Result:
    """``culturebench score wvb``: metrics and plots from a saved responses file (``metrics.read_answers``: an
    ``evaluate`` run's responses.jsonl or shards, or the paper's TSV/CSV) into ``options.out``."""
    if len(responses) != 1:
        raise InputError(f"wvb scores one responses file at a time, got {len(responses)} (compare several runs with "
                         "culturebench compare)")
    (path,) = responses
    scored = score(path, options.release, options.majority, drop_out_of_scale=options.drop_out_of_scale,
                   drop_non_integer=options.drop_non_integer)
    return Result(metrics=scored.metrics, written=write_run(scored, Path(options.out)), score=scored)


def summary(metrics: dict) -> str:
    """The command line's line: of an ``evaluate`` run (its metrics name the mode) its unparsed answers, questions
    and mean W1 (the request counts are the runner's line); of ``score`` the rows, coverage, invalid, off-scale and
    non-integer answers, questions and mean W1."""
    mean = "n/a" if metrics["mean"] is None else f"{metrics['mean']:.4f}"
    if "mode" in metrics:
        return (f"wvb {metrics['split']} ({metrics['mode'].replace('_', ' ')}): {metrics['n_unparsed']:,} unparsed, "
                f"{metrics['n_questions']} questions, mean W1 {mean}")
    return (f"wvb: {metrics['n_rows']:,} rows, coverage {metrics['coverage']:.3f}, {metrics['n_invalid']:,} invalid, "
            f"{metrics['out_of_scale']['n']:,} off the scale ({metrics['out_of_scale']['answers']}), "
            f"{metrics['non_integer']['n']:,} not whole numbers ({metrics['non_integer']['answers']}), "
            f"{metrics['n_questions']} questions, mean W1 {mean}")
