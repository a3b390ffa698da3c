"""``culturebench evaluate wvb`` and the command line's entry points (``cli_check``, ``cli_evaluate``,
``cli_score``): prompts (``requests``) -> the runner, batch by batch -> responses file -> ``score_answers`` -> run.json."""

from __future__ import annotations

from pathlib import Path

from culturebench.errors import InputError
from culturebench.evaluate import run_json, runs
from culturebench.evaluate.wvb.items import check_inputs, limited_rows, prompt_tables
from culturebench.evaluate.wvb.parsing import answers_frame, scan_answers
from culturebench.evaluate.wvb.plots import write_run
from culturebench.evaluate.wvb.requests import (
    PlannedRequest,
    iter_requests,
    parse_records,
    request_count,
    request_sampling,
    response_schema,
)
from culturebench.evaluate.wvb.scoring import MAJORITY_DEFINITIONS, score, score_answers
from culturebench.release import load_manifest

CONFIG_KEYS = ("majority", "prompt_family")
"""Keys of the ``--config`` file: majority (score and evaluate), prompt_family (evaluate: App. B's figures)."""


def evaluate(backend, release: Path, out: Path, *, split: str = "probe", limit: int | None = None,
             samples: int | None = None, temperature: float | None = None, demographics: bool = True,
             seed: int | None = 0, max_tokens: int | None = None, family: str | None = None,
             majority: str = MAJORITY_DEFINITIONS[0], drop_out_of_scale: bool = False,
             drop_non_integer: bool = False, args: dict | None = None, console=None) -> runs.EvaluateResult:
    """Run a model on a WVB release and score it: RUN_DIR/cache.sqlite, responses.jsonl (above
    ``runs.SHARD_THRESHOLD`` requests: responses/, parquet shards), metrics.json, the plots and run.json.
    ``family``: whose App. B prompts (prompts.FAMILIES); ``majority``: MAJORITY_DEFINITIONS;
    ``drop_out_of_scale``: answers off the question's scale are invalid (default: scored as given, as the authors');
    ``drop_non_integer``: answers that are not whole numbers are invalid (default: truncated, as the authors').
    Re-running into the same folder answers every request already made from the cache.

    Streamed: the requests come from a generator (``iter_requests``) in the runner's batches, each batch's parsed
    records are appended to the responses file as it is answered, and the metrics read back the few columns they
    need (``scan_answers``), so memory does not grow with the prompts of a run."""
    from culturebench.evaluate.wvb import prompts
    from datetime import datetime, timezone

    from culturebench.evaluate.wvb.prompts import STATUSES

    started = datetime.now(timezone.utc)
    release, out = Path(release), Path(out)
    manifest = load_manifest(release)
    rows, covers = limited_rows(release, split, limit, seed)
    questions, participants = prompt_tables(release, rows["participant_id"] if demographics else None)
    family = prompts.DEFAULT_FAMILY if family is None else family
    planned = iter_requests(rows, questions, participants, demographics=demographics, samples=samples,
                            temperature=temperature, max_tokens=max_tokens, seed=seed, family=family)
    sampling = request_sampling(demographics, temperature, max_tokens, seed)
    n_requests = request_count(rows, demographics, samples)
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

    responses_path, n_records, stats = runs.stream_records(backend, planned, out, f"wvb {split} ({mode})",
                                                           records_of, total=n_requests, schema=response_schema(),
                                                           console=console)
    label = f"{getattr(backend, 'model', None) or getattr(backend, 'name', 'model')} ({mode})"
    n_rows = rows.height
    answers = answers_frame(None if demographics else rows, scan_answers(responses_path), demographics)
    del rows, planned  # with demographics the scoring needs none of the evaluated rows: memory for a run of millions
    scored = score_answers(answers, release,
                           runs.source_info(responses_path), majority=majority, model=label,
                           drop_out_of_scale=drop_out_of_scale, drop_non_integer=drop_non_integer)
    scored.metrics.update({
        "mode": "with_demographics" if demographics else "without_demographics",
        "prompt_family": family,
        "split": split,
        "n_evaluated_rows": n_rows,
        "n_requests": n_records,
        "n_parsed": n_parsed,
        "n_unparsed": n_records - n_parsed,
        "parse_status": parse_status,
        "covers": [covers.as_dict()],
    })
    stats = runs.runner_stats(stats)
    written = run_json.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="wvb", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"mode": scored.metrics["mode"], "prompt_family": family, "split": split,
                              "n_evaluated_rows": n_rows, "n_requests": n_records,
                              "temperature": sampling.temperature, "max_tokens": sampling.max_tokens,
                              "stop": list(sampling.stop), "seed": seed, "samples": samples,
                              "majority": majority, "out_of_scale_answers": "dropped" if drop_out_of_scale else "kept",
                              "non_integer_answers": "dropped" if drop_non_integer else "truncated"},
               "release_routes": scored.metrics["release_routes"],
               "parse_status": parse_status,
               "metrics": {"mean": scored.metrics["mean"], "std": scored.metrics["std"],
                           "n_questions": scored.metrics["n_questions"], "n_invalid": scored.metrics["n_invalid"]}})
    return runs.EvaluateResult(metrics=scored.metrics, records=[], stats=stats, written=written, score=scored)


# --------------------------------------------------------------------------------------------- command line


def read_config(path: Path | None) -> dict:
    """The ``--config`` options (CONFIG_KEYS), checked; {} without a file."""
    from culturebench.evaluate.wvb import prompts

    if path is None:
        return {}
    config = runs.read_options_file(path, CONFIG_KEYS)
    choices = {"majority": MAJORITY_DEFINITIONS, "prompt_family": prompts.FAMILIES}
    for key, value in config.items():
        if value not in choices[key]:
            raise InputError(f"unknown {key} {value!r}; choose from {', '.join(choices[key])}", file=path,
                             column=key)
    return config


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    check_inputs(options["release"], options["split"] or "probe", options["limit"])
    read_config(options.get("config"))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    """`culturebench evaluate`: run, score, write the run folder; returns (summary line, paths written)."""
    split = options["split"] or "probe"
    config = read_config(options.get("config"))
    result = evaluate(model_backend, options["release"], options["out"], split=split,
                      limit=options["limit"], samples=options["samples"], temperature=options["temperature"],
                      demographics=options["demographics"], seed=options["seed"], max_tokens=options["max_tokens"],
                      family=config.get("prompt_family"), majority=config.get("majority", MAJORITY_DEFINITIONS[0]),
                      drop_out_of_scale=bool(options.get("drop_out_of_scale")),
                      drop_non_integer=bool(options.get("drop_non_integer")), args=args, console=console)
    m = result.metrics
    mean = "n/a" if m["mean"] is None else f"{m['mean']:.4f}"
    line = (f"wvb {split} ({m['mode'].replace('_', ' ')}): {runs.request_counts(m['n_requests'], result.stats)}, "
            f"{m['n_unparsed']:,} unparsed, {m['n_questions']} questions, mean W1 {mean}")
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None,
              drop_out_of_scale: bool = False, drop_non_integer: bool = False) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses (``config``: ``{"majority": "per_group"}`` for Sec. 3.3's
    per-group majority baseline; ``drop_out_of_scale``: answers off the scale are invalid; ``drop_non_integer``:
    answers that are not whole numbers are invalid); returns (summary line, paths written)."""
    result = score(responses, release, read_config(config).get("majority", MAJORITY_DEFINITIONS[0]),
                   drop_out_of_scale=drop_out_of_scale, drop_non_integer=drop_non_integer)
    written = write_run(result, out)
    m = result.metrics
    mean = "n/a" if m["mean"] is None else f"{m['mean']:.4f}"
    return (f"wvb: {m['n_rows']:,} rows, coverage {m['coverage']:.3f}, {m['n_invalid']:,} invalid, "
            f"{m['out_of_scale']['n']:,} off the scale ({m['out_of_scale']['answers']}), "
            f"{m['non_integer']['n']:,} not whole numbers ({m['non_integer']['answers']}), "
            f"{m['n_questions']} questions, mean W1 {mean}"), written
