"""``culturebench evaluate normad`` / ``score normad``: the run, its summary line and the command line's entry
points (``cli_check``, ``cli_evaluate``, ``cli_score``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import run_json, runs
from culturebench.evaluate.limit import limit_frame
from culturebench.evaluate.normad import prompts
from culturebench.evaluate.normad.items import iter_requests, release_tables
from culturebench.evaluate.normad.metrics import score, score_responses
from culturebench.evaluate.normad.parsing import DEFAULT_UNPARSED, RESPONSE_FIELDS, scored_label
from culturebench.evaluate.normad.plots import write_run
from culturebench.release import load_manifest


def check_inputs(release: Path, samples: int | None, limit: int | None, max_tokens: int | None = None,
                 split: str | None = None) -> pl.DataFrame:
    """The release's stories, after checking the options (before a model is made)."""
    runs.check_at_least_one({"--samples": samples, "--limit": limit, "--max-tokens": max_tokens})
    stories = release_tables(release, split)["stories"]
    if stories.height == 0:
        raise InputError("release has no stories", file=release)
    return stories


def evaluate(backend, release: Path, out: Path, *, contexts: Sequence[str] = prompts.CONTEXTS,
             samples: int | None = None, temperature: float | None = None, max_tokens: int = prompts.MAX_TOKENS,
             seed: int | None = 0, limit: int | None = None, split: str | None = None, args: dict | None = None,
             console=None, unparsed: str = DEFAULT_UNPARSED,
             answer_rule: str = prompts.DEFAULT_ANSWER_RULE) -> runs.EvaluateResult:
    """Ask ``backend`` every story (``limit`` spread over the countries: ``limit.spread_positions``) under every
    context, then score: writes responses.jsonl, metrics.json, the plots and run.json into ``out``. Re-running into
    the same folder answers every request already made from the cache."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out = Path(release), Path(out)
    samples = prompts.DEFAULT_SAMPLES if samples is None else samples
    temperature = prompts.TEMPERATURE if temperature is None else temperature
    prompts.check_answer_rule(answer_rule)
    unknown = [c for c in contexts if c not in prompts.CONTEXTS]
    if unknown:
        raise InputError(f"unknown context {unknown[0]!r}; choose from {', '.join(prompts.CONTEXTS)}")
    release_stories = check_inputs(release, samples, limit, max_tokens, split)
    manifest = load_manifest(release)
    stories, covers = limit_frame(release_stories, ["country"], limit, seed, item="stories", columns=["countries"])
    planned = iter_requests(stories, contexts=contexts, samples=samples, temperature=temperature,
                            max_tokens=max_tokens, seed=seed)
    model = str(getattr(backend, "model", "model"))
    info = {r["story_id"]: r for r in stories.select("story_id", "country", "gold_label", "iw_zone", "subaxis")
            .iter_rows(named=True)}

    def records_of(items: list, responses: list) -> list[dict]:
        records = []
        for plan, response in zip(items, responses, strict=True):
            story = info[plan.story_id]
            answer = prompts.parse_answer(response.text, answer_rule)
            label = scored_label(answer, unparsed)
            records.append({"model": model, "story_id": plan.story_id, "country": story["country"],
                            "iw_zone": story["iw_zone"], "subaxis": story["subaxis"], "context": plan.context,
                            "sample_index": plan.sample_index, "prompt": plan.prompt, "response": response.text,
                            "answer": answer.label, "parse_status": answer.status, "gold_label": story["gold_label"],
                            "correct": label == story["gold_label"], "finish_reason": response.finish_reason})
        return records

    responses_path, n_records, run_stats = runs.stream_records(
        backend, planned, out, "normad", records_of, total=stories.height * len(contexts) * samples, sharded=False,
        console=console)
    frame = pl.read_ndjson(responses_path, schema={"model": pl.String, "story_id": pl.String, "context": pl.String,
                                                   "response": pl.String, "sample_index": pl.Int64})
    scored = score_responses(frame, release_stories, release=release, sources=[runs.source_info(responses_path)],
                             unparsed=unparsed, answer_rule=answer_rule)
    scored.metrics["covers"] = [covers.as_dict()]
    stats = runs.runner_stats(run_stats)
    m = scored.metrics["per_model"][model]
    written = run_json.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="normad", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_stories": stories.height, "contexts": list(contexts), "samples": samples,
                              "n_requests": n_records, "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "split": split, "unparsed": unparsed,
                              "answer_rule": answer_rule,
                              "prompt_source": scored.metrics["constants"]["prompt_source"]},
               "release_build": release_build(manifest),
               "parse_status": {c: m["per_context"][c]["parse_status"] for c in m["contexts"]},
               "metrics": {"accuracy": m["accuracy"], "macro_f1": m["macro_f1"]}})
    return runs.EvaluateResult(metrics=scored.metrics, records=[], stats=stats, written=written, score=scored)


def release_build(manifest: dict) -> dict:
    """What run.json records of how the release was built: the NormAd revision (``v1``, the stories as read, or
    the authors' ``v2_fix_neutral``) and the zone source; a release built before these were recorded is ``v1``
    with zones unrecorded."""
    provenance = manifest.get("provenance") or {}
    return {"revision": (provenance.get("revision") or {}).get("name", "v1"),
            "zones": (provenance.get("zones") or {}).get("source")}


def summary(metrics: dict) -> str:
    """One line per model for the command line."""
    lines = []
    for model in metrics["models"]:
        m = metrics["per_model"][model]
        parts = ", ".join(f"{prompts.CONTEXT_NAMES[c]} {m['accuracy'][c]:.3f}" for c in m["contexts"]
                          if m["accuracy"][c] is not None)
        unparsed = sum(m["per_context"][c]["n_unparsed"] for c in m["contexts"])
        read_as = "read as Neither" if metrics["unparsed_rule"]["rule"] == "neutral" else "counted wrong"
        lines.append(f"normad {model}: {m['n_responses']:,} responses ({unparsed:,} unparsed, {read_as}), "
                     f"{m['n_stories']:,} stories; accuracy {parts}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


def _split(options: dict) -> str | None:
    return options.get("split")


def _max_tokens(options: dict) -> int:
    value = options.get("max_tokens")
    return prompts.MAX_TOKENS if value is None else value


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    prompts.check_answer_rule(options.get("answer_rule") or prompts.DEFAULT_ANSWER_RULE)
    check_inputs(options["release"], options["samples"], options["limit"], _max_tokens(options), _split(options))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    """`culturebench evaluate`: run, score, write the run folder; returns (summary line, paths written)."""
    result = evaluate(model_backend, options["release"], options["out"], samples=options["samples"],
                      temperature=options["temperature"], max_tokens=_max_tokens(options), seed=options["seed"],
                      limit=options["limit"], split=_split(options), args=args, console=console,
                      unparsed=_unparsed(options.get("unparsed_wrong")),
                      answer_rule=options.get("answer_rule") or prompts.DEFAULT_ANSWER_RULE)
    line = f"{summary(result.metrics)}\nnormad: {runs.request_counts(result.stats['n_requests'], result.stats)}"
    return line, result.written


def _unparsed(wrong: bool | None) -> str:
    return "wrong" if wrong else DEFAULT_UNPARSED


def cli_score(responses: Path, release: Path, out: Path, unparsed_wrong: bool = False,
              answer_rule: str | None = None) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses; returns (summary line, paths written)."""
    result = score(runs.split_paths(responses), release, _unparsed(unparsed_wrong),
                   answer_rule or prompts.DEFAULT_ANSWER_RULE)
    return summary(result.metrics), write_run(result, out)
