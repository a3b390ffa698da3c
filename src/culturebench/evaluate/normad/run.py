"""``culturebench evaluate normad`` / ``score normad``: the plan, the run, scoring saved responses and the summary
line (the ``NormAd`` benchmark's methods)."""

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
from culturebench.evaluate.limit import counted, limit_frame
from culturebench.evaluate.normad import NormAdOptions, prompts
from culturebench.evaluate.normad.items import PlannedRequest, iter_requests, release_tables
from culturebench.evaluate.normad.metrics import score, score_responses
from culturebench.evaluate.normad.parsing import DEFAULT_UNPARSED, scored_label
from culturebench.evaluate.normad.plots import write_run
from culturebench.evaluate.readability import read_counts, unreadable_warning
from culturebench.release import load_manifest


@dataclass(frozen=True)
class Plan:
    """What ``evaluate`` asks: the release's stories (of ``--split``; scored against), the stories asked (after
    ``--limit``) and what they cover, the requests (a generator) and the sampling settings."""

    release_stories: pl.DataFrame
    stories: pl.DataFrame
    covers: Any
    requests: Iterator[PlannedRequest]
    samples: int
    temperature: float
    max_tokens: int


def plan(options: NormAdOptions) -> Plan:
    """Every story (``limit`` spread over the countries: ``limit.spread_positions``) under every context of
    ``options.contexts``, ``samples`` times, read from the release (before a model is loaded)."""
    release_stories = release_tables(options.release, options.split)["stories"]
    if release_stories.height == 0:
        raise InputError("release has no stories", file=options.release)
    samples = prompts.DEFAULT_SAMPLES if options.samples is None else options.samples
    temperature = prompts.TEMPERATURE if options.temperature is None else options.temperature
    max_tokens = prompts.MAX_TOKENS if options.max_tokens is None else options.max_tokens
    stories, covers = limit_frame(release_stories, ["country"], options.limit, options.seed, item="stories",
                                  columns=["countries"])
    requests = iter_requests(stories, contexts=options.contexts, samples=samples, temperature=temperature,
                             max_tokens=max_tokens, seed=options.seed)
    return Plan(release_stories, stories, covers, requests, samples, temperature, max_tokens)


def unparsed_rule(options: NormAdOptions) -> str:
    """The rule for unparsed answers (``parsing.UNPARSED_RULES``): ``wrong`` with ``--unparsed-wrong``."""
    return "wrong" if options.unparsed_wrong else DEFAULT_UNPARSED


def evaluate(backend, options: NormAdOptions, *, args: dict | None = None, console=None) -> Result:
    """Ask ``backend`` the planned requests, then score: writes responses.jsonl, metrics.json, the plots and
    run.json into ``options.out``. Re-running into the same folder answers every request already made from the
    cache."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out = Path(options.release), Path(options.out)
    unparsed, answer_rule, contexts = unparsed_rule(options), options.answer_rule, options.contexts
    planned = plan(options)
    stories = planned.stories
    manifest = load_manifest(release)
    model = str(getattr(backend, "model", "model"))
    info = {r["story_id"]: r for r in stories.select("story_id", "country", "gold_label", "iw_zone", "subaxis")
            .iter_rows(named=True)}

    def records_of(items: list, responses: list) -> list[dict]:
        records = []
        for item, response in zip(items, responses, strict=True):
            story = info[item.story_id]
            answer = prompts.parse_answer(response.text, answer_rule)
            label = scored_label(answer, unparsed)
            records.append({"model": model, "story_id": item.story_id, "country": story["country"],
                            "iw_zone": story["iw_zone"], "subaxis": story["subaxis"], "context": item.context,
                            "sample_index": item.sample_index, "prompt": item.prompt, "response": response.text,
                            "answer": answer.label, "parse_status": answer.status, "gold_label": story["gold_label"],
                            "correct": label == story["gold_label"], "finish_reason": response.finish_reason})
        return records

    responses_path, n_records, run_stats = run_folder.stream_records(
        backend, planned.requests, out, "normad", records_of, total=stories.height * len(contexts) * planned.samples,
        sharded=False, console=console)
    frame = pl.read_ndjson(responses_path, schema={"model": pl.String, "story_id": pl.String, "context": pl.String,
                                                   "response": pl.String, "sample_index": pl.Int64})
    scored = score_responses(frame, planned.release_stories, release=release,
                             sources=[run_folder.source_info(responses_path)], unparsed=unparsed, answer_rule=answer_rule)
    scored.metrics["covers"] = [planned.covers.as_dict()]
    stats = run_folder.runner_stats(run_stats)
    m = scored.metrics["per_model"][model]
    written = run_record.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="normad", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_stories": stories.height, "contexts": list(contexts), "samples": planned.samples,
                              "n_requests": n_records, "temperature": planned.temperature,
                              "max_tokens": planned.max_tokens, "seed": options.seed, "limit": options.limit,
                              "split": options.split, "unparsed": unparsed, "answer_rule": answer_rule,
                              "prompt_source": scored.metrics["constants"]["prompt_source"]},
               "release_build": release_build(manifest),
               "parse_status": {c: m["per_context"][c]["parse_status"] for c in m["contexts"]},
               "metrics": {"accuracy": m["accuracy"], "macro_f1": m["macro_f1"]}})
    return Result(metrics=scored.metrics, written=written, stats=stats, score=scored)


def score_files(responses: Sequence[Path], options: NormAdOptions) -> Result:
    """``culturebench score normad``: metrics and plots from saved responses.jsonl files into ``options.out``."""
    scored = score(list(responses), options.release, unparsed_rule(options), options.answer_rule)
    return Result(metrics=scored.metrics, written=write_run(scored, Path(options.out)), score=scored)


def release_build(manifest: dict) -> dict:
    """What run.json records of how the release was built: the NormAd revision (``v1``, the stories as read, or
    the authors' ``v2_fix_neutral``) and the zone source; a release built before these were recorded is ``v1``
    with zones unrecorded."""
    provenance = manifest.get("provenance") or {}
    return {"revision": (provenance.get("revision") or {}).get("name", "v1"),
            "zones": (provenance.get("zones") or {}).get("source")}


def summary(metrics: dict) -> str:
    """One line per model for the command line: per context its accuracy, with the answers read and unreadable
    where some could not be read; then a ``warning:`` per model with unreadable answers, naming what the accuracies
    then rest on (``readability.unreadable_warning``)."""
    lines, warnings = [], []
    neither = metrics["unparsed_rule"]["rule"] == "neutral"
    read_as = "read as Neither" if neither else "counted wrong"
    others = ("scored as Neither (right only where the gold label is neutral; --unparsed-wrong: wrong)" if neither
              else "scored wrong")
    for model in metrics["models"]:
        m = metrics["per_model"][model]
        unparsed = sum(m["per_context"][c]["n_unparsed"] for c in m["contexts"])
        counts = {c: f" ({read_counts(pc['n'] - pc['n_unparsed'], pc['n_unparsed'])})" if unparsed else ""
                  for c, pc in m["per_context"].items()}
        parts = ", ".join(f"{prompts.CONTEXT_NAMES[c]} {m['accuracy'][c]:.3f}{counts[c]}" for c in m["contexts"]
                          if m["accuracy"][c] is not None)
        lines.append(f"normad {model}: {counted(m['n_responses'], 'responses')} ({unparsed:,} unparsed, "
                     f"{read_as}), "
                     f"{counted(m['n_stories'], 'stories')}; accuracy {parts}")
        rests = (f"the accuracies rest on {counted(m['n_responses'] - unparsed, 'answers')}, the others {others} "
                 "(metrics.json accuracy_parsed: the read answers alone)")
        warnings += unreadable_warning(f"normad {model}", unparsed, m["n_responses"], rests)
    lines += warnings
    return "\n".join(lines)

