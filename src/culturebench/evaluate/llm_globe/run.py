"""``culturebench evaluate llm_globe`` / ``score llm_globe``: the run (the model, then the jurors), its summary
line and the command line's entry points (``cli_check``, ``cli_evaluate``, ``cli_score``)."""

from __future__ import annotations

from datetime import UTC
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import run_json, runs
from culturebench.evaluate.limit import limit_frame
from culturebench.evaluate.llm_globe import prompts
from culturebench.evaluate.llm_globe.config import BENCHMARK, Config, Juror, load_config
from culturebench.evaluate.llm_globe.groups import resolve_societies
from culturebench.evaluate.llm_globe.items import asked_count, plan_closed, plan_jurors, plan_open, release_tables
from culturebench.evaluate.llm_globe.metrics import score, score_records
from culturebench.evaluate.llm_globe.parsing import read_human_ratings, read_responses
from culturebench.evaluate.llm_globe.plots import write_run
from culturebench.release import load_manifest


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


def closed_records(model: str, items: list, responses: list) -> list[dict]:
    """responses.jsonl's records of closed answers: the rating parsed (``prompts.parse_rating``) and reverse-scored
    where the item is reversed (``prompts.reverse_score``)."""
    records = []
    for plan, response in zip(items, responses, strict=True):
        value, status = prompts.parse_rating(response.text)
        records.append({"part": "closed", "model": model, **plan.info, "response": response.text,
                        "parse_status": status, "answer": value,
                        "score": prompts.reverse_score(value, plan.info["reverse"]),
                        "finish_reason": response.finish_reason})
    return records


def open_records(model: str, answers: list[dict], items: list, responses: list) -> list[dict]:
    """responses.jsonl's records of open answers (without the prompt); each answer with its prompt also goes to
    ``answers``, for the jurors."""
    records = []
    for plan, response in zip(items, responses, strict=True):
        info = {k: v for k, v in plan.info.items() if k != "prompt"}
        records.append({"part": "open", "model": model, **info, "response": response.text,
                        "parse_status": prompts.open_status(response.text), "finish_reason": response.finish_reason})
        answers.append({**plan.info, "response": response.text})
    return records


def juror_records(model: str, items: list, responses: list) -> list[dict]:
    """responses.jsonl's records of the jurors' ratings of open answers, parsed."""
    records = []
    for plan, response in zip(items, responses, strict=True):
        value, status = prompts.parse_rating(response.text)
        records.append({"part": "juror", "model": model, **plan.info, "rating_text": response.text,
                        "parse_status": status, "rating": value})
    return records


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
    runner: dict[str, dict] = {}
    covers = []
    answers: list[dict] = []  # the open answers the jurors rate (the open prompts x languages x samples: small)

    # one responses.jsonl for every step, appended batch by batch (runs.StreamedRun)
    with runs.StreamedRun(out, console=console) as run:
        if config.part in ("closed", "both"):
            closed, part_covers = limit_frame(tables["closed"], ["dimension"], limit, seed, item="prompts",
                                              columns=["dimensions"], part="closed")
            covers.append(part_covers.as_dict())
            planned = plan_closed(closed, config.languages, samples=config.samples, temperature=temperature,
                                  max_tokens=max_tokens or prompts.CLOSED_MAX_TOKENS, seed=seed)
            runner["closed"] = runs.runner_stats(run.step(
                backend, planned, "llm_globe closed", partial(closed_records, model),
                total=asked_count(closed, config.languages, config.samples)))
        if config.part in ("open", "both"):
            opened, part_covers = limit_frame(tables["open"], ["dimension"], limit, seed, item="prompts",
                                              columns=["dimensions"], part="open")
            covers.append(part_covers.as_dict())
            planned = plan_open(opened, config.languages, model, samples=config.open_samples,
                                temperature=temperature, max_tokens=config.open_max_tokens, seed=seed)
            runner["open"] = runs.runner_stats(run.step(
                backend, planned, "llm_globe open", partial(open_records, model, answers),
                total=asked_count(opened, config.languages, config.open_samples)))
            for juror in config.jurors:
                juror_backend = (juror_backends or {}).get(juror.name) or make_backend(juror, backend)
                jplanned = plan_jurors(answers, tables["rubrics"], juror, temperature=config.juror_temperature,
                                       max_tokens=config.juror_max_tokens)
                runner[f"juror:{juror.name}"] = runs.runner_stats(run.step(
                    juror_backend, jplanned, f"juror {juror.name}", partial(juror_records, model),
                    total=len(answers)))
        responses_path = run.close()
    human = read_human_ratings(config.human_ratings) if config.human_ratings is not None else None
    scored = score_records(read_responses([responses_path]), tables, config, human=human, release=release,
                           sources=[runs.source_info(responses_path)])
    scored.metrics["covers"] = covers
    totals = runs.total_stats(runner.values())
    written = run_json.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark=BENCHMARK, release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=totals,
        extra={"evaluation": {"config": config.as_dict(), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "n_records": run.writer.n_records},
               "runner_by_part": runner,
               "release_notes": release_notes(manifest, tables, config, limit),
               "jurors": [{"name": j.name, "model": j.model, "backend": j.backend, "language": j.language}
                          for j in config.jurors],
               "parse_status": {"closed": scored.metrics.get("closed", {}).get("parse_status"),
                                "jurors": scored.metrics.get("open", {}).get("juror_parse_status")}})
    return runs.EvaluateResult(metrics=scored.metrics, records=[], stats=totals, written=written, score=scored)


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
