"""SocialCC's dialogues: the evaluated model against the antagonist, round by round, their transcripts, then
judged."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from culturebench.evaluate.socialcc import DIALOGUE_SETUPS, prompts
from culturebench.evaluate.socialcc.items import Scenario


@dataclass
class Dialogue:
    scenario: Scenario
    turns: list[dict] = field(default_factory=list)  # speaker, role, text, round
    ended_by: str | None = None  # "good_bye" | "max_rounds"

    def history(self) -> list[tuple[str, str]]:
        return [(t["role"], str(t["text"]).strip()) for t in self.turns]

    @property
    def rounds(self) -> int:
        return sum(1 for t in self.turns if t["role"] == "protagonist")


class OverallProgress:
    """One bar over the whole run (issue #19): every dialogue turn still possible plus the four judgements of each
    dialogue; a dialogue that ends early takes its remaining turns off the total. The runner's own per-batch bars
    are silenced (a non-terminal console)."""

    def __init__(self, console, total: int, backend=None):
        from rich.console import Console

        from culturebench.evaluate.runs.runner import progress_bar

        self.console = console or Console(stderr=True)
        self.quiet = Console(file=io.StringIO())
        self.bar = progress_bar(self.console, backend)
        self.task = self.bar.add_task("socialcc turns + judgements", total=total)

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def done(self, result) -> None:
        """A batch answered: what was asked counts as work done, what the cache (or a repeat) answered leaves the
        total, so that the rate and the eta count only requests that go to a model."""
        self.bar.advance(self.task, result.stats.n_queried)
        self.drop(result.stats.n_requests - result.stats.n_queried)

    def drop(self, n: int) -> None:
        self.bar.update(self.task, total=self.bar.tasks[0].total - n)


def simulate(scenarios: Sequence[Scenario], protagonist_backend, antagonist_backend, cache, *,
             max_rounds: int = prompts.MAX_ROUNDS, temperature: float = prompts.AGENT_TEMPERATURE,
             max_tokens: int = prompts.AGENT_MAX_TOKENS, seed: int | None = 0, stop: str = "paper",
             progress: OverallProgress | None = None,
             setup: str = DIALOGUE_SETUPS[0]) -> tuple[list[Dialogue], list]:
    """Play every dialogue to its end: one batch of turns per step (protagonist = Character 2, antagonist =
    Character 1, ...), each turn a cached request holding the dialogue so far, its messages laid out as ``setup``
    says (``prompts.DIALOGUE_SETUPS_NOTE``). Returns the dialogues and the runner results of every step."""
    from culturebench.chat import ChatRequest, SamplingParams
    from culturebench.evaluate.runs.runner import run_requests

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    dialogues = []
    for scenario in scenarios:
        opening = {"speaker": scenario.names["antagonist"], "role": "antagonist", "text": prompts.OPENING,
                   "round": 0, "generated": False}
        dialogues.append(Dialogue(scenario, [opening]))
    systems = {id(d): {"protagonist": prompts.protagonist_system(d.scenario.fields),
                       "antagonist": prompts.antagonist_system(d.scenario.fields)} for d in dialogues}
    results = []
    for step in range(2 * max_rounds):
        role = "protagonist" if step % 2 == 0 else "antagonist"
        backend = protagonist_backend if role == "protagonist" else antagonist_backend
        active = [d for d in dialogues if d.ended_by is None]
        if not active:
            break
        requests = [ChatRequest(prompts.agent_messages(systems[id(d)][role], d.history(), role, setup), sampling)
                    for d in active]
        result = run_requests(backend, requests, cache, description=f"socialcc turn {step + 1} ({role})",
                              console=progress.quiet if progress else None)
        results.append(result)
        if progress:
            progress.done(result)
        for d, response in zip(active, result.responses):
            d.turns.append({"speaker": d.scenario.names[role], "role": role, "text": response.text,
                            "round": step // 2 + 1, "generated": True})
            if prompts.ends_dialogue(response.text, stop):
                d.ended_by = "good_bye"
            elif role == "antagonist" and step // 2 + 1 >= max_rounds:
                d.ended_by = "max_rounds"
            if progress and d.ended_by:
                progress.drop(2 * max_rounds - step - 1)
    for d in dialogues:  # max_rounds == 0 or loop exhausted
        if d.ended_by is None:
            d.ended_by = "max_rounds"
    return dialogues, results


def transcript_record(d: Dialogue, model: str, antagonist_model: str, setup: str) -> dict:
    """A line of transcripts.jsonl: the dialogue, its scenario's groups (Figs. 5-7) and prompt fields."""
    s = d.scenario
    return {"scenario_id": s.id, "model": model, "antagonist_model": antagonist_model, "country": s.country,
            "commonsense_country": s.commonsense_country, "zone": s.zone, "topic": s.topic,
            "value_topic": s.value_topic, "n_rounds": d.rounds, "ended_by": d.ended_by, "dialogue_setup": setup,
            "turns": d.turns, "fields": s.fields}


def judge_transcripts(transcripts: Sequence[dict], judge_backend, cache, *,
                      temperature: float = prompts.JUDGE_TEMPERATURE, max_tokens: int = prompts.JUDGE_MAX_TOKENS,
                      seed: int | None = 0, progress: OverallProgress | None = None):
    """Ask the four judges (Tables 8A-11A) about every transcript (fills ``judgements``); returns the runner
    result."""
    from culturebench.chat import ChatRequest, SamplingParams
    from culturebench.evaluate.runs.runner import run_requests

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    planned = [(t, judge) for t in transcripts for judge in prompts.JUDGES]
    requests = [ChatRequest(prompts.judge_messages(judge, t["fields"], t["turns"]), sampling) for t, judge in planned]
    result = run_requests(judge_backend, requests, cache, description="socialcc judges",
                          console=progress.quiet if progress else None)
    if progress:
        progress.done(result)
    model = str(getattr(judge_backend, "model", "judge"))
    for (t, judge), response in zip(planned, result.responses):
        parsed = prompts.parse_score(response.text, judge)
        t.setdefault("judgements", {})[judge] = {"score": parsed.score, "parse_status": parsed.status,
                                                 "raw": response.text, "judge_model": model}
    return result
