"""``culturebench evaluate socialcc`` / ``score socialcc``: the run (dialogues, then judgements), re-scoring saved
transcripts and the summary line (the ``SocialCC`` benchmark's methods). There is no plan: each turn's request holds
the dialogue so far."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.contract import Result
from culturebench.errors import InputError
from culturebench.evaluate import run_folder, run_record
from culturebench.evaluate.limit import counted, limit_frame
from culturebench.evaluate.readability import read_counts, unreadable_warning
from culturebench.evaluate.socialcc import BENCHMARK, SocialCCOptions, prompts
from culturebench.evaluate.socialcc.config import NO_JUDGE, Config, config_from, make_backend
from culturebench.evaluate.socialcc.dialogue import OverallProgress, judge_transcripts, simulate, transcript_record
from culturebench.evaluate.socialcc.items import TRANSCRIPTS_FILE, release_tables, scenarios_from
from culturebench.evaluate.socialcc.metrics import aggregate
from culturebench.evaluate.socialcc.parsing import read_transcripts, reparse, rezone
from culturebench.evaluate.socialcc.plots import write_run
from culturebench.release import load_manifest


def checked_inputs(options: SocialCCOptions, roles: Mapping[str, Any] | None = None
                   ) -> tuple[Config, dict[str, pl.DataFrame]]:
    """The run's settings and the release's scenarios (of ``split``), checked before any model is made: a judge
    named in the options or given as the ``judge`` role, and a release with scenarios."""
    config = config_from(options)
    if (roles or {}).get("judge") is None and config.judge is None:
        raise InputError(NO_JUDGE, file=options.config_file)
    tables = release_tables(options.release, options.split)
    if tables["scenarios"].height == 0:
        raise InputError("release has no scenarios", file=options.release)
    return config, tables


def evaluate(backend, options: SocialCCOptions, *, args: dict | None = None, console=None,
             roles: Mapping[str, Any] | None = None) -> Result:
    """Play every scenario (``limit`` spread over the value countries: ``limit.spread_positions``) with ``backend``
    as Character 2 (the protagonist), judge the transcripts, score; writes transcripts.jsonl, metrics.json, the
    plots and run.json into ``options.out``. The judge is ``roles["judge"]``, else the options' (with neither, an
    InputError before any model call); the antagonist ``roles["antagonist"]``, else the options', else the judge.
    Re-running into the same folder replays every turn already answered from the cache."""
    from culturebench.evaluate.cache import ResponseCache

    started = datetime.now(UTC)
    roles = roles or {}
    config, tables = checked_inputs(options, roles)
    judge_backend, antagonist_backend = roles.get("judge"), roles.get("antagonist")
    release, out, seed = Path(options.release), Path(options.out), options.seed
    manifest = load_manifest(release)
    scenarios = scenarios_from(tables, config)
    kept, covers = limit_frame(pl.DataFrame({"country": [s.country for s in scenarios]}).with_row_index("scenario"),
                               ["country"], options.limit, seed, item="scenarios", columns=["countries"])
    scenarios = [scenarios[i] for i in kept["scenario"]]
    temperature = config.agent_temperature if options.temperature is None else options.temperature
    max_tokens = config.agent_max_tokens if options.max_tokens is None else options.max_tokens
    model = str(getattr(backend, "model", "model"))
    if judge_backend is None:
        judge_backend = make_backend(config.judge, backend)
    if antagonist_backend is None:
        antagonist_backend = (make_backend(config.antagonist, backend) if config.antagonist is not None
                              else judge_backend)
    judge_model = str(getattr(judge_backend, "model", "judge"))
    judge_note = ("the judge is the evaluated model, as named in the config" if judge_model == model
                  else f"judge: {judge_model}")
    antagonist_model = str(getattr(antagonist_backend, "model", "antagonist"))
    total = len(scenarios) * (2 * config.max_rounds + len(prompts.JUDGES))
    with ResponseCache(out / run_folder.CACHE_FILE) as cache, OverallProgress(console, total, backend) as progress:
        dialogues, results = simulate(scenarios, backend, antagonist_backend, cache, max_rounds=config.max_rounds,
                                      temperature=temperature, max_tokens=max_tokens, seed=seed, stop=config.stop,
                                      progress=progress, setup=config.dialogue_setup)
        transcripts = [transcript_record(d, model, antagonist_model, config.dialogue_setup) for d in dialogues]
        jresult = judge_transcripts(transcripts, judge_backend, cache, temperature=config.judge_temperature,
                                    max_tokens=config.judge_max_tokens, seed=seed, progress=progress)
    totals = run_folder.total_stats(run_folder.runner_stats(r) for r in (*results, jresult))
    path = run_folder.write_jsonl(out / TRANSCRIPTS_FILE, transcripts)
    metrics = aggregate(transcripts, release=release, judge_note=judge_note, sources=[run_folder.source_info(path)],
                        fig5_grouping=config.fig5_country)
    metrics["covers"] = [covers.as_dict()]
    written = run_record.write_run_record(
        out, [path, *write_run(metrics, out)], benchmark=BENCHMARK.name, release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=totals,
        extra={"evaluation": {"n_scenarios": len(scenarios), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": options.limit, "split": options.split,
                              "config": config.as_dict(), "protagonist": "Character 2 (the evaluated model)",
                              "antagonist_model": antagonist_model, "judge_model": judge_model,
                              "judge_note": judge_note, "prompt_source": prompts.PROMPT_SOURCE,
                              "dialogue_setup": {config.dialogue_setup:
                                                 prompts.DIALOGUE_SETUPS_NOTE[config.dialogue_setup]},
                              "prompt_fields": metrics["prompt_fields"], "fig5": metrics["fig5"]},
               "metrics": metrics["per_model"][model]["table2"]})
    return Result(metrics=metrics, written=written, stats=totals, score=transcripts)


def score_files(responses: Sequence[Path], options: SocialCCOptions) -> Result:
    """``culturebench score socialcc``: metrics and plots from saved transcripts.jsonl files into ``options.out``,
    re-aggregated from their saved judgements (parsed again), or, with a judge in the options, judged again first
    (cached in ``options.out``, the judged transcripts written there). Zones are looked up as ``evaluate`` does
    (``parsing.rezone``)."""
    from culturebench.evaluate.cache import ResponseCache

    config = config_from(options)
    release, out = Path(options.release), Path(options.out)
    scenarios = release_tables(release)["scenarios"]
    records = read_transcripts(responses)
    rezone(records, scenarios, config)
    note = None
    if config.judge is not None:
        out.mkdir(parents=True, exist_ok=True)
        with ResponseCache(out / run_folder.CACHE_FILE) as cache:
            for r in records:
                r.pop("judgements", None)
            judge_transcripts(records, make_backend(config.judge), cache, temperature=config.judge_temperature,
                              max_tokens=config.judge_max_tokens)
        run_folder.write_jsonl(out / TRANSCRIPTS_FILE, records)
    else:
        reparse(records)
        note = "re-aggregated from saved judgements"
    metrics = aggregate(records, release=release, sources=[run_folder.source_info(p) for p in responses], judge_note=note,
                        fig5_grouping=config.fig5_country)
    return Result(metrics=metrics, written=write_run(metrics, out), score=records)


def _bracket(interval: Sequence[float | None] | None) -> str:
    return f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval and None not in interval else ""


def summary(metrics: dict) -> str:
    """Per model the Table 2 means with their intervals, the behaviour distribution and the invalid judgements;
    the dialogues that ran to the turn limit; the judge; a ``warning:`` per model whose judgements could not all be
    read, naming what each mean rests on (``readability.unreadable_warning``)."""
    lines, warnings = [], []
    for model in metrics["models"]:
        t = metrics["per_model"][model]["table2"]
        d = metrics["per_model"][model]["dialogue"]
        parts = ", ".join(f"{prompts.JUDGE_NAMES[j]} {t[j]:.3f}{_bracket(t.get(f'{j}_ci'))}" if t[j] is not None
                          else f"{prompts.JUDGE_NAMES[j]} n/a" for j in prompts.JUDGES)
        dist = " / ".join(f"{v:.0f}%" if v is not None else "n/a" for v in t["behaviour_distribution_pct"].values())
        invalid = sum(t[f"n_invalid_{j}"] for j in prompts.JUDGES)
        valid = sum(t[f"n_valid_{j}"] for j in prompts.JUDGES)
        lines.append(f"socialcc {model}: {counted(t['n'], 'dialogues')} (mean {d['mean_rounds'] or 0:.1f} rounds); "
                     f"{parts}; "
                     f"behaviour 0/1/2/3 {dist}; judgements {read_counts(valid, invalid)}")
        rests = ", ".join(f"{prompts.JUDGE_NAMES[j]} on {t[f'n_valid_{j}']:,}" for j in prompts.JUDGES)
        warnings += unreadable_warning(f"socialcc {model} judgements", invalid, valid + invalid,
                                       f"each mean rests on the dialogues whose judgement was read ({rests} of "
                                       f"{counted(t['n'], 'dialogues')})")
        if d.get("n_turn_limit"):
            lines.append(f"socialcc {model}: {d['n_turn_limit']:,} of {t['n']:,} dialogues ran to the turn limit "
                         "without a GOOD BYE (config max_rounds; stop: tolerant also ends on 'Goodbye')")
    if metrics.get("judge_note"):
        lines.append(f"judge: {metrics['judge_note']}")
    return "\n".join(lines + warnings)
