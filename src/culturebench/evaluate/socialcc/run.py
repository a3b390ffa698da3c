"""``culturebench evaluate socialcc`` / ``score socialcc``: the run (dialogues, then judgements), re-scoring saved
transcripts, its summary line and the command line's entry points (``cli_check``, ``cli_evaluate``,
``cli_score``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import run_json, runs, uncertainty
from culturebench.evaluate.limit import limit_frame
from culturebench.evaluate.socialcc import prompts
from culturebench.evaluate.socialcc.config import BENCHMARK, Config, NO_JUDGE, load_config, make_backend
from culturebench.evaluate.socialcc.dialogue import Dialogue, OverallProgress, judge_transcripts, simulate
from culturebench.evaluate.socialcc.items import (
    TRANSCRIPTS_FILE, UNKNOWN, release_tables, release_zones, scenarios_from, zone_of)
from culturebench.evaluate.socialcc.metrics import aggregate
from culturebench.evaluate.socialcc.plots import write_run
from culturebench.release import load_manifest


class EvaluateResult(runs.EvaluateResult):
    """``runs.EvaluateResult`` whose records are the transcripts."""

    @property
    def transcripts(self) -> list[dict]:
        return self.records


def check_inputs(release: Path, limit: int | None, split: str | None = None, samples: int | None = None,
                 max_tokens: int | None = None) -> dict:
    runs.check_at_least_one({"--limit": limit})
    if samples not in (None, 1):
        raise InputError(f"socialcc plays one dialogue per scenario; --samples must be 1, got {samples}")
    runs.check_at_least_one({"--max-tokens": max_tokens})
    tables = release_tables(release, split)
    if tables["scenarios"].height == 0:
        raise InputError("release has no scenarios", file=release)
    return tables


def evaluate(backend, release: Path, out: Path, config: Config | None = None, *, temperature: float | None = None,
             max_tokens: int | None = None, seed: int | None = 0, limit: int | None = None, split: str | None = None,
             antagonist_backend=None, judge_backend=None, args: dict | None = None, console=None,
             bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> EvaluateResult:
    """Play every scenario (``limit`` spread over the value countries: ``limit.spread_positions``) with ``backend``
    as Character 2 (the protagonist), judge the transcripts, score; writes transcripts.jsonl, metrics.json, the
    plots and run.json into ``out``. The judge is the config's (or ``judge_backend``, tests); with neither, an
    InputError before any model call. The antagonist is ``antagonist_backend``, else the config's, else the judge.
    Re-running into the same folder replays every turn already answered from the cache."""
    from culturebench.evaluate.cache import ResponseCache

    started = datetime.now(UTC)
    config = config or Config()
    if judge_backend is None and config.judge is None:
        raise InputError(NO_JUDGE, file=config.source)
    release, out = Path(release), Path(out)
    tables = check_inputs(release, limit, split, None, max_tokens)
    manifest = load_manifest(release)
    scenarios = scenarios_from(tables, config)
    kept, covers = limit_frame(pl.DataFrame({"country": [s.country for s in scenarios]}).with_row_index("scenario"),
                               ["country"], limit, seed, item="scenarios", columns=["countries"])
    scenarios = [scenarios[i] for i in kept["scenario"]]
    temperature = config.agent_temperature if temperature is None else temperature
    max_tokens = config.agent_max_tokens if max_tokens is None else max_tokens
    model = str(getattr(backend, "model", "model"))
    if judge_backend is None:
        judge_backend = make_backend(config.judge, backend)
    if antagonist_backend is None:
        antagonist_backend = (make_backend(config.antagonist, backend) if config.antagonist is not None else judge_backend)
    judge_model = str(getattr(judge_backend, "model", "judge"))
    judge_note = ("the judge is the evaluated model, as named in the config" if judge_model == model
                  else f"judge: {judge_model}")
    antagonist_model = str(getattr(antagonist_backend, "model", "antagonist"))
    total = len(scenarios) * (2 * config.max_rounds + len(prompts.JUDGES))
    with ResponseCache(out / runs.CACHE_FILE) as cache, OverallProgress(console, total, backend) as progress:
        dialogues, results = simulate(scenarios, backend, antagonist_backend, cache, max_rounds=config.max_rounds,
                                      temperature=temperature, max_tokens=max_tokens, seed=seed, stop=config.stop,
                                      progress=progress, setup=config.dialogue_setup)
        transcripts = [transcript_record(d, model, antagonist_model, config.dialogue_setup) for d in dialogues]
        jresult = judge_transcripts(transcripts, judge_backend, cache, temperature=config.judge_temperature,
                                    max_tokens=config.judge_max_tokens, seed=seed, progress=progress)
    totals = runs.total_stats(runs.runner_stats(r) for r in (*results, jresult))
    path = runs.write_jsonl(out / TRANSCRIPTS_FILE, transcripts)
    metrics = aggregate(transcripts, release=release, judge_note=judge_note, sources=[runs.source_info(path)],
                        bootstrap=bootstrap, fig5_grouping=config.fig5_country)
    metrics["covers"] = [covers.as_dict()]
    written = run_json.write_run_record(
        out, [path, *write_run(metrics, out)], benchmark=BENCHMARK, release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=totals,
        extra={"evaluation": {"n_scenarios": len(scenarios), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "split": split, "config": config.as_dict(),
                              "protagonist": "Character 2 (the evaluated model)",
                              "antagonist_model": antagonist_model, "judge_model": judge_model,
                              "judge_note": judge_note, "prompt_source": prompts.PROMPT_SOURCE,
                              "dialogue_setup": {config.dialogue_setup:
                                                 prompts.DIALOGUE_SETUPS_NOTE[config.dialogue_setup]},
                              "prompt_fields": metrics["prompt_fields"], "fig5": metrics["fig5"]},
               "metrics": metrics["per_model"][model]["table2"]})
    return EvaluateResult(metrics=metrics, records=transcripts, stats=totals, written=written)


def transcript_record(d: Dialogue, model: str, antagonist_model: str, setup: str) -> dict:
    s = d.scenario
    return {"scenario_id": s.id, "model": model, "antagonist_model": antagonist_model, "country": s.country,
            "commonsense_country": s.commonsense_country, "zone": s.zone, "topic": s.topic,
            "value_topic": s.value_topic, "n_rounds": d.rounds, "ended_by": d.ended_by, "dialogue_setup": setup,
            "turns": d.turns, "fields": s.fields}


# ---------------------------------------------------------------------------------------------------- score


def read_transcripts(paths: Sequence[Path]) -> list[dict]:
    """The dialogues of transcripts.jsonl files (evaluate's output)."""
    records = []
    for path in map(Path, paths):
        before = len(records)
        required = ("scenario_id", "model", "turns", "fields")
        records.extend(record for _, record in runs.jsonl_records(path, required, what="transcripts file"))
        if len(records) == before:
            raise InputError("transcripts file has no records", file=path)
    return records


def rezone(records: Sequence[dict], scenarios: pl.DataFrame, config: Config) -> None:
    """Each transcript's zone looked up as ``evaluate`` does (``zone_of``: the release's zone by scenario id, then
    the config's), keeping its own where neither has one; and its commonsense country (Fig. 5) from the release
    where the transcript has none (transcripts written before they recorded it)."""
    zones = release_zones(scenarios)
    commonsense = dict(zip(scenarios["id"], scenarios["commonsense_country"]))
    for r in records:
        zone = zone_of(zones.get(str(r["scenario_id"])), r.get("country"), config)
        r["zone"] = zone if zone != UNKNOWN else r.get("zone") or UNKNOWN
        r["commonsense_country"] = r.get("commonsense_country") or commonsense.get(str(r["scenario_id"]))


def reparse(records: Sequence[dict]) -> None:
    """Every saved judgement's score and parse_status parsed again from its raw answer."""
    for r in records:
        for judge, j in (r.get("judgements") or {}).items():
            if judge in prompts.JUDGE_SCALES:
                parsed = prompts.parse_score(j.get("raw"), judge)
                j["score"], j["parse_status"] = parsed.score, parsed.status
                j.pop("status", None)


def score(paths: Sequence[Path], release: Path, out: Path, config: Config | None = None,
          judge_backend=None, bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> dict:
    """Re-aggregate saved transcripts (re-parsing the judges' raw answers), or re-judge them with the config's judge
    (or ``judge_backend``) first, caching in ``out``. Zones are looked up as ``evaluate`` does (``rezone``)."""
    from culturebench.evaluate.cache import ResponseCache

    config = config or Config()
    release = Path(release)
    scenarios = release_tables(release)["scenarios"]
    records = read_transcripts(paths)
    rezone(records, scenarios, config)
    note = None
    if judge_backend is None and config.judge is not None:
        judge_backend = make_backend(config.judge)
    if judge_backend is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        with ResponseCache(Path(out) / runs.CACHE_FILE) as cache:
            for r in records:
                r.pop("judgements", None)
            judge_transcripts(records, judge_backend, cache, temperature=config.judge_temperature,
                              max_tokens=config.judge_max_tokens)
        runs.write_jsonl(Path(out) / TRANSCRIPTS_FILE, records)
    else:
        reparse(records)
        note = "re-aggregated from saved judgements"
    return aggregate(records, release=release, sources=[runs.source_info(p) for p in paths], judge_note=note,
                     bootstrap=bootstrap, fig5_grouping=config.fig5_country)


def _bracket(interval: Sequence[float | None] | None) -> str:
    return f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval and None not in interval else ""


def summary(metrics: dict) -> str:
    lines = []
    for model in metrics["models"]:
        t = metrics["per_model"][model]["table2"]
        d = metrics["per_model"][model]["dialogue"]
        parts = ", ".join(f"{prompts.JUDGE_NAMES[j]} {t[j]:.3f}{_bracket(t.get(f'{j}_ci'))}" if t[j] is not None
                          else f"{prompts.JUDGE_NAMES[j]} n/a" for j in prompts.JUDGES)
        dist = " / ".join(f"{v:.0f}%" if v is not None else "n/a" for v in t["behaviour_distribution_pct"].values())
        invalid = sum(t[f"n_invalid_{j}"] for j in prompts.JUDGES)
        lines.append(f"socialcc {model}: {t['n']:,} dialogues (mean {d['mean_rounds'] or 0:.1f} rounds); {parts}; "
                     f"behaviour 0/1/2/3 {dist}; {invalid} invalid judgements")
        if d.get("n_turn_limit"):
            lines.append(f"socialcc {model}: {d['n_turn_limit']:,} of {t['n']:,} dialogues ran to the turn limit "
                         "without a GOOD BYE (config max_rounds; stop: tolerant also ends on 'Goodbye')")
    if metrics.get("judge_note"):
        lines.append(f"judge: {metrics['judge_note']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made (a named judge included)."""
    if load_config(options.get("config")).judge is None:
        raise InputError(NO_JUDGE, file=options.get("config"))
    check_inputs(options["release"], options.get("limit"), options.get("split"), options.get("samples"),
                 options.get("max_tokens"))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    config = load_config(options.get("config"))
    result = evaluate(model_backend, options["release"], options["out"], config,
                      temperature=options.get("temperature"), max_tokens=options.get("max_tokens"),
                      seed=options.get("seed"), limit=options.get("limit"), split=options.get("split"), args=args,
                      console=console)
    line = f"{summary(result.metrics)}\nsocialcc: {runs.request_counts(result.stats['n_requests'], result.stats)}"
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None) -> tuple[str, list[Path]]:
    """`culturebench score socialcc --responses transcripts.jsonl[,...]`."""
    metrics = score(runs.split_paths(responses), release, out, load_config(config))
    return summary(metrics), write_run(metrics, out)
