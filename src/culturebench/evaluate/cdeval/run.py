"""``culturebench evaluate cdeval`` / ``score cdeval``: the plan, the run, scoring saved responses and the summary
line (the ``CDEval`` benchmark's methods)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.contract import Result
from culturebench.errors import InputError
from culturebench.evaluate import run_folder, run_record
from culturebench.evaluate.cdeval import CDEvalOptions, prompts
from culturebench.evaluate.cdeval.items import (
    DIMENSIONS, RESPONSE_FIELDS, PlannedRequest, iter_requests, release_tables)
from culturebench.evaluate.cdeval.metrics import score, score_responses
from culturebench.evaluate.cdeval.parsing import release_language, respondent
from culturebench.evaluate.cdeval.plots import write_run
from culturebench.evaluate.limit import counted, limit_frame
from culturebench.evaluate.readability import read_counts, status_counts, unreadable_warning
from culturebench.raw.cdeval import DEFAULT_LANGUAGE
from culturebench.release import load_manifest


@dataclass(frozen=True)
class Plan:
    """What ``evaluate`` asks: the release's tables, the questions (after ``--limit``) and what they cover, the
    requests (a generator) and the sampling settings."""

    tables: dict[str, pl.DataFrame]
    questions: pl.DataFrame
    covers: Any
    requests: Iterator[PlannedRequest]
    samples: int
    temperature: float
    max_tokens: int


def plan(options: CDEvalOptions) -> Plan:
    """The six prompts x R samples for every question (``limit`` spread over dimension x domain:
    ``limit.spread_positions``), read from the release (before a model is loaded)."""
    tables = release_tables(options.release)
    if tables["questions"].height == 0:
        raise InputError("release has no questions", file=options.release)
    samples = prompts.DEFAULT_SAMPLES if options.samples is None else options.samples
    temperature = prompts.TEMPERATURE if options.temperature is None else options.temperature
    max_tokens = prompts.MAX_TOKENS if options.max_tokens is None else options.max_tokens
    questions, covers = limit_frame(tables["questions"], ["dimension", "domain"], options.limit, options.seed,
                                    item="questions", columns=["dimensions", "domains"])
    requests = iter_requests(questions, samples=samples, temperature=temperature, max_tokens=max_tokens,
                             seed=options.seed)
    return Plan(tables, questions, covers, requests, samples, temperature, max_tokens)


def evaluate(backend, options: CDEvalOptions, *, args: dict | None = None, console=None) -> Result:
    """Ask ``backend`` the planned requests, then score: writes responses.jsonl, metrics.json, the plots and
    run.json into ``options.out``. Re-running into the same folder answers every request already made from the
    cache."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out, repeat_rule = Path(options.release), Path(options.out), options.repeat_rule
    planned = plan(options)
    tables, questions = planned.tables, planned.questions
    manifest = load_manifest(release)
    model = str(getattr(backend, "model", "model"))
    language = release_language(manifest)
    tag = {} if language == DEFAULT_LANGUAGE else {"language": language}
    info = {r["question_id"]: r for r in questions.select("question_id", "dimension", "domain", "option_1",
                                                          "option_2").iter_rows(named=True)}

    def records_of(items: list, responses: list) -> list[dict]:
        records = []
        for item, response in zip(items, responses, strict=True):
            q = info[item.question_id]
            s, status, shown = prompts.score_answer(item.prompt, response.text, q["option_1"], q["option_2"],
                                                    repeat_rule)
            template, order = item.prompt.rsplit("_", 1)
            records.append({"model": model, **tag, "question_id": item.question_id, "dimension": q["dimension"],
                            "domain": q["domain"], "prompt": item.prompt, "template": template, "order": order,
                            "sample_index": item.sample_index, "response": response.text, "parse_status": status,
                            "shown": shown, "score": s, "finish_reason": response.finish_reason})
        return records

    responses_path, n_records, run_stats = run_folder.stream_records(
        backend, planned.requests, out, "cdeval", records_of,
        total=questions.height * len(prompts.PROMPTS) * planned.samples, sharded=False, console=console)
    frame = (pl.read_ndjson(responses_path, schema={"question_id": pl.String, "prompt": pl.String,
                                                    "sample_index": pl.Int64, "response": pl.String})
             .select(pl.lit(respondent(model, tag.get("language"))).alias("model"), *RESPONSE_FIELDS[1:]))
    scored = score_responses(frame, tables, release=release, sources=[run_folder.source_info(responses_path)],
                             repeat_rule=repeat_rule)
    scored.metrics["covers"] = [planned.covers.as_dict()]
    stats = run_folder.runner_stats(run_stats)
    m = scored.metrics["per_model"][respondent(model, tag.get("language"))]
    written = run_record.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="cdeval", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_questions": questions.height, "prompts": list(prompts.PROMPTS),
                              "samples": planned.samples, "n_requests": n_records,
                              "temperature": planned.temperature, "max_tokens": planned.max_tokens,
                              "seed": options.seed, "limit": options.limit, "repeat_rule": repeat_rule,
                              "questionnaire_language": language},
               "parse_status": m["parse_status"],
               "metrics": {"dimension_likelihood": m["dimension_likelihood"],
                           "template_weights": m["template_weights"]}})
    return Result(metrics=scored.metrics, written=written, stats=stats, score=scored)


def score_files(responses: Sequence[Path], options: CDEvalOptions) -> Result:
    """``culturebench score cdeval``: metrics and plots from saved responses.jsonl files into ``options.out``."""
    scored = score(list(responses), options.release, repeat_rule=options.repeat_rule)
    return Result(metrics=scored.metrics, written=write_run(scored, Path(options.out)), score=scored)


def summary(metrics: dict) -> str:
    """One line per model for the command line, its responses read and unreadable beside its likelihoods; a
    ``warning:`` per model with unreadable answers (``readability.unreadable_warning``)."""
    lines, warnings = [], []
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
        read, unreadable = status_counts(m["parse_status"], prompts.READ_STATUSES)
        lines.append(f"cdeval {model}: {counted(m['n_responses'], 'responses')} ({read_counts(read, unreadable)}; "
                     f"{m['n_neutral']:,} neutral); {dims}; template weights {weights}; {closest}")
        warnings += unreadable_warning(
            f"cdeval {model}", unreadable, m["n_responses"],
            f"the dimension likelihoods rest on {counted(m['parse_status']['chosen'], 'answers')} that chose an "
            f"option, the other {counted(m['n_neutral'], 'answers')} (unreadable, both options or a refusal) "
            f"score neutral ({prompts.NEUTRAL:g})")
    left = metrics["hofstede"]["countries_left_out"]
    if left:
        lines.append(f"cdeval: {counted(len(left), 'countries')} lacking a Hofstede dimension, not compared "
                     f"(metrics.json hofstede.countries_left_out)")
    if metrics.get("pairwise_baseline") is not None:
        lines.append(f"cdeval: {len(metrics['models'])} models, pairwise baseline similarity (Eq. 5) "
                     f"{metrics['pairwise_baseline']:.4f}")
    return "\n".join(lines + warnings)
