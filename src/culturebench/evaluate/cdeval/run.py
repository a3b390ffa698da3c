"""``culturebench evaluate cdeval`` / ``score cdeval``: the run, its summary line and the command line's entry
points (``cli_check``, ``cli_evaluate``, ``cli_score``)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import run_json, runs
from culturebench.evaluate.cdeval import prompts
from culturebench.evaluate.cdeval.items import DIMENSIONS, RESPONSE_FIELDS, iter_requests, release_tables
from culturebench.evaluate.cdeval.metrics import score, score_responses
from culturebench.evaluate.cdeval.parsing import release_language, respondent
from culturebench.evaluate.cdeval.plots import write_run
from culturebench.evaluate.limit import counted, limit_frame
from culturebench.raw.cdeval import DEFAULT_LANGUAGE
from culturebench.release import load_manifest


def check_inputs(release: Path, samples: int | None, limit: int | None) -> dict[str, pl.DataFrame]:
    """The release tables, after checking the options (before a model is loaded)."""
    runs.check_at_least_one({"--samples": samples, "--limit": limit})
    tables = release_tables(release)
    if tables["questions"].height == 0:
        raise InputError("release has no questions", file=release)
    return tables


def evaluate(backend, release: Path, out: Path, *, samples: int | None = None, temperature: float | None = None,
             max_tokens: int = prompts.MAX_TOKENS, seed: int | None = 0, limit: int | None = None,
             repeat_rule: str = prompts.REPEAT_RULES[0], args: dict | None = None, console=None
             ) -> runs.EvaluateResult:
    """Ask ``backend`` the six prompts x ``samples`` for every question (``limit`` spread over dimension x domain:
    ``limit.spread_positions``), then score: writes
    responses.jsonl, metrics.json, the plots and run.json into ``out``. Re-running into the same folder answers
    every request already made from the cache."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out = Path(release), Path(out)
    samples = prompts.DEFAULT_SAMPLES if samples is None else samples
    temperature = prompts.TEMPERATURE if temperature is None else temperature
    tables = check_inputs(release, samples, limit)
    manifest = load_manifest(release)
    questions, covers = limit_frame(tables["questions"], ["dimension", "domain"], limit, seed, item="questions",
                                    columns=["dimensions", "domains"])
    planned = iter_requests(questions, samples=samples, temperature=temperature, max_tokens=max_tokens, seed=seed)
    model = str(getattr(backend, "model", "model"))
    language = release_language(manifest)
    tag = {} if language == DEFAULT_LANGUAGE else {"language": language}
    info = {r["question_id"]: r for r in questions.select("question_id", "dimension", "domain", "option_1",
                                                          "option_2").iter_rows(named=True)}

    def records_of(items: list, responses: list) -> list[dict]:
        records = []
        for plan, response in zip(items, responses, strict=True):
            q = info[plan.question_id]
            s, status, shown = prompts.score_answer(plan.prompt, response.text, q["option_1"], q["option_2"],
                                                    repeat_rule)
            template, order = plan.prompt.rsplit("_", 1)
            records.append({"model": model, **tag, "question_id": plan.question_id, "dimension": q["dimension"],
                            "domain": q["domain"], "prompt": plan.prompt, "template": template, "order": order,
                            "sample_index": plan.sample_index, "response": response.text, "parse_status": status,
                            "shown": shown, "score": s, "finish_reason": response.finish_reason})
        return records

    responses_path, n_records, run_stats = runs.stream_records(
        backend, planned, out, "cdeval", records_of, total=questions.height * len(prompts.PROMPTS) * samples,
        sharded=False, console=console)
    frame = (pl.read_ndjson(responses_path, schema={"question_id": pl.String, "prompt": pl.String,
                                                    "sample_index": pl.Int64, "response": pl.String})
             .select(pl.lit(respondent(model, tag.get("language"))).alias("model"), *RESPONSE_FIELDS[1:]))
    scored = score_responses(frame, tables, release=release, sources=[runs.source_info(responses_path)],
                             repeat_rule=repeat_rule)
    scored.metrics["covers"] = [covers.as_dict()]
    stats = runs.runner_stats(run_stats)
    m = scored.metrics["per_model"][respondent(model, tag.get("language"))]
    written = run_json.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="cdeval", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_questions": questions.height, "prompts": list(prompts.PROMPTS), "samples": samples,
                              "n_requests": n_records, "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "repeat_rule": repeat_rule,
                              "questionnaire_language": language},
               "parse_status": m["parse_status"],
               "metrics": {"dimension_likelihood": m["dimension_likelihood"],
                           "template_weights": m["template_weights"]}})
    return runs.EvaluateResult(metrics=scored.metrics, records=[], stats=stats, written=written, score=scored)


def summary(metrics: dict) -> str:
    """One line per model for the command line."""
    lines = []
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
        lines.append(f"cdeval {model}: {m['n_responses']:,} responses ({m['n_neutral']:,} neutral); {dims}; "
                     f"template weights {weights}; {closest}")
    left = metrics["hofstede"]["countries_left_out"]
    if left:
        lines.append(f"cdeval: {counted(len(left), 'countries')} lacking a Hofstede dimension, not compared "
                     f"(metrics.json hofstede.countries_left_out)")
    if metrics.get("pairwise_baseline") is not None:
        lines.append(f"cdeval: {len(metrics['models'])} models, pairwise baseline similarity (Eq. 5) "
                     f"{metrics['pairwise_baseline']:.4f}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


CONFIG_KEYS = ("repeat_rule",)
"""``--config`` options of ``evaluate`` / ``score cdeval`` (``{"repeat_rule": "similar_only"}``)."""


def read_config(path: Path | None) -> dict:
    """The ``--config`` options (CONFIG_KEYS), checked; {} without a file."""
    if path is None:
        return {}
    config = runs.read_options_file(path, CONFIG_KEYS)
    if config.get("repeat_rule", prompts.REPEAT_RULES[0]) not in prompts.REPEAT_RULES:
        raise InputError(f"unknown repeat_rule {config['repeat_rule']!r}; choose from "
                         f"{', '.join(prompts.REPEAT_RULES)}", file=path, column="repeat_rule")
    return config


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    check_inputs(options["release"], options["samples"], options["limit"])
    read_config(options.get("config"))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    """`culturebench evaluate`: run, score, write the run folder; returns (summary line, paths written)."""
    config = read_config(options.get("config"))
    result = evaluate(model_backend, options["release"], options["out"], samples=options["samples"],
                      temperature=options["temperature"], max_tokens=prompts.MAX_TOKENS if options["max_tokens"] is None else options["max_tokens"],
                      seed=options["seed"], limit=options["limit"], args=args, console=console, **config)
    line = f"{summary(result.metrics)}\ncdeval: {runs.request_counts(result.stats['n_requests'], result.stats)}"
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses; returns (summary line, paths written)."""
    result = score(runs.split_paths(responses), release, **read_config(config))
    return summary(result.metrics), write_run(result, out)
