"""``culturebench evaluate socialcc`` / ``score socialcc``: the engine's hooks (the plan: the scenarios; the answers:
dialogues, then judgements; the run's metrics and run.json's ``evaluation``; ``evaluate.runs.engine`` runs them),
re-scoring saved transcripts and the summary line (the ``SocialCC`` benchmark's methods). There are no planned
requests: each turn's request holds the dialogue so far."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.contract import Answers, Hooks, Result, Run, RunPlan
from culturebench.errors import InputError
from culturebench.evaluate.runs import run_folder, run_steps
from culturebench.evaluate.runs.limit import counted, limit_frame
from culturebench.evaluate.runs.readability import read_counts, unreadable_warning
from culturebench.evaluate.socialcc import SocialCCOptions, prompts
from culturebench.evaluate.socialcc.config import NO_JUDGE, Config, config_from, make_backend
from culturebench.evaluate.socialcc.dialogue import OverallProgress, judge_transcripts, simulate, transcript_record
from culturebench.evaluate.socialcc.items import TRANSCRIPTS_FILE, release_tables, scenarios_from
from culturebench.evaluate.socialcc.metrics import aggregate
from culturebench.evaluate.socialcc.parsing import read_transcripts, reparse, rezone
from culturebench.evaluate.socialcc.plots import write_run


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


@dataclass(frozen=True, kw_only=True)
class Plan(RunPlan):
    """What ``evaluate`` plays: the scenarios (after ``--limit``), the run's settings and the agents' sampling; no
    requests (each turn's request holds the dialogue so far: ``answer`` plays them)."""

    config: Config
    scenarios: list
    temperature: float
    max_tokens: int


@dataclass(frozen=True)
class Played:
    """What the dialogues leave for scoring: the transcripts (judged) and who played and judged."""

    transcripts: list[dict]
    judge_model: str
    judge_note: str
    antagonist_model: str


def score_saved(responses: Sequence[Path], options: SocialCCOptions) -> Result:
    """``culturebench score socialcc``'s scoring of saved transcripts.jsonl files (``SocialCCHooks.score``)."""
    from culturebench.evaluate.runs.cache import ResponseCache

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
    return Result(metrics=metrics, written=[], score=records)


def _bracket(interval: Sequence[float | None] | None) -> str:
    return f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval and None not in interval else ""


class SocialCCHooks(Hooks):
    """SocialCC's hooks of the engine (``contract.Hooks``)."""

    def plan(self, options: SocialCCOptions, model: str = "model", *, roles: Mapping[str, Any] | None = None
             ) -> Plan:
        """Every scenario (``limit`` spread over the value countries: ``limit.spread_positions``), checked before any
        model is made: a judge named in the options or given as the ``judge`` role, a release with scenarios."""
        config, tables = checked_inputs(options, roles)
        scenarios = scenarios_from(tables, config)
        kept, covers = limit_frame(pl.DataFrame({"country": [s.country for s in scenarios]}).with_row_index("scenario"),
                                   ["country"], options.limit, options.seed, item="scenarios", columns=["countries"])
        return Plan(options=options, model=model, requests=None, description="socialcc", covers=(covers,),
                    config=config, scenarios=[scenarios[i] for i in kept["scenario"]],
                    temperature=config.agent_temperature if options.temperature is None else options.temperature,
                    max_tokens=config.agent_max_tokens if options.max_tokens is None else options.max_tokens)

    def answer(self, run: Run, plan: Plan) -> Answers:
        """Play every scenario with the evaluated backend as Character 2 (the protagonist), judge the transcripts;
        transcripts.jsonl. The judge is ``run.roles["judge"]``, else the options'; the antagonist
        ``run.roles["antagonist"]``, else the options', else the judge. Re-running into the same folder replays every
        turn already answered from the cache."""
        from culturebench.evaluate.runs.cache import ResponseCache

        config, backend, model, seed = plan.config, run.backend, plan.model, plan.options.seed
        judge_backend, antagonist_backend = run.roles.get("judge"), run.roles.get("antagonist")
        if judge_backend is None:
            judge_backend = make_backend(config.judge, backend)
        if antagonist_backend is None:
            antagonist_backend = (make_backend(config.antagonist, backend) if config.antagonist is not None
                                  else judge_backend)
        judge_model = str(getattr(judge_backend, "model", "judge"))
        judge_note = ("the judge is the evaluated model, as named in the config" if judge_model == model
                      else f"judge: {judge_model}")
        antagonist_model = str(getattr(antagonist_backend, "model", "antagonist"))
        total = len(plan.scenarios) * (2 * config.max_rounds + len(prompts.JUDGES))
        with (ResponseCache(run.out / run_folder.CACHE_FILE) as cache,
              OverallProgress(run.console, total, backend) as progress):
            dialogues, results = simulate(plan.scenarios, backend, antagonist_backend, cache,
                                          max_rounds=config.max_rounds, temperature=plan.temperature,
                                          max_tokens=plan.max_tokens, seed=seed, stop=config.stop, progress=progress,
                                          setup=config.dialogue_setup)
            transcripts = [transcript_record(d, model, antagonist_model, config.dialogue_setup) for d in dialogues]
            jresult = judge_transcripts(transcripts, judge_backend, cache, temperature=config.judge_temperature,
                                        max_tokens=config.judge_max_tokens, seed=seed, progress=progress)
        totals = run_steps.total_stats(run_steps.runner_stats(r) for r in (*results, jresult))
        path = run_folder.write_jsonl(run.out / TRANSCRIPTS_FILE, transcripts)
        return Answers(path, len(transcripts), totals,
                       state=Played(transcripts, judge_model, judge_note, antagonist_model))

    def score(self, plan: RunPlan, answers: Answers) -> Result:
        """Table 2's means, the dialogues' figures (``metrics.aggregate``) of the judged transcripts: a fresh run's
        (``Played``, left by ``answer``), or saved transcripts.jsonl files (``culturebench score``), re-aggregated
        from their saved judgements (parsed again), or, with a judge in the options, judged again first (cached in
        ``options.out``, the judged transcripts written there). Zones are looked up as ``evaluate`` does
        (``parsing.rezone``)."""
        if answers.saved:
            return score_saved(answers.saved, plan.options)
        played = answers.state
        metrics = aggregate(played.transcripts, release=Path(plan.options.release), judge_note=played.judge_note,
                            sources=[run_folder.source_info(answers.path)], fig5_grouping=plan.config.fig5_country)
        return Result(metrics=metrics, written=[], score=played.transcripts)

    def write(self, result: Result, out: Path) -> list[Path]:
        return write_run(result.metrics, out)

    def evaluation(self, plan: Plan, result: Result, answers: Answers) -> dict:
        """run.json's ``evaluation`` (the scenarios, sampling, settings and who played and judged) and Table 2."""
        options, config, metrics, played = plan.options, plan.config, result.metrics, answers.state
        return {"evaluation": {"n_scenarios": len(plan.scenarios), "temperature": plan.temperature,
                               "max_tokens": plan.max_tokens, "seed": options.seed, "limit": options.limit,
                               "split": options.split, "config": config.as_dict(),
                               "protagonist": "Character 2 (the evaluated model)",
                               "antagonist_model": played.antagonist_model, "judge_model": played.judge_model,
                               "judge_note": played.judge_note, "prompt_source": prompts.PROMPT_SOURCE,
                               "dialogue_setup": {config.dialogue_setup:
                                                  prompts.DIALOGUE_SETUPS_NOTE[config.dialogue_setup]},
                               "prompt_fields": metrics["prompt_fields"], "fig5": metrics["fig5"]},
                "metrics": metrics["per_model"][plan.model]["table2"]}

    def summary(self, metrics: dict) -> str:
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
