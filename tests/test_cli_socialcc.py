"""SocialCC with a model that says "Goodbye!": the paper's "GOOD BYE" stop stays the default, ``stop: tolerant``
ends such dialogues, the run says how many ran to the turn limit, and the progress bar counts only model calls."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from culturebench.cli import app
from culturebench.evaluate import socialcc
from culturebench.evaluate.socialcc import prompts
from culturebench.evaluate.runs.cache import ResponseCache
from scripted_server import ScriptedServer


@pytest.mark.parametrize("text, paper, tolerant", [
    ("OK. GOOD BYE!", True, True),
    ("ok, good  bye", True, True),
    ("Goodbye!", False, True),
    ("Thanks, good-bye.", False, True),
    ("We said our goodbyes yesterday.", False, False),
    ("A good buyer.", False, False),
])
def test_stop_rules(text, paper, tolerant):
    assert prompts.ends_dialogue(text) is paper
    assert prompts.ends_dialogue(text, "tolerant") is tolerant


def config(tmp_path, url, **extra):
    path = tmp_path / "socialcc.json"
    path.write_text(json.dumps({"judge": {"model": "scripted", "base_url": url}, "max_rounds": 3, **extra}),
                    encoding="utf-8")
    return path


def judge_or_goodbye(text: str, body: dict) -> str:
    """Judges (one message) get a valid score; every dialogue turn says "Goodbye!"."""
    return "Score: 1" if len(body["messages"]) == 1 else "Thank you. Goodbye!"


def evaluate(tmp_path, release, url, out, **extra):
    return CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "scripted", "--base-url", url, "--release",
                                    str(release), "--config", str(config(tmp_path, url, **extra)),
                                    "--out", str(tmp_path / out)])


def test_paper_stop_runs_to_the_limit_and_says_so_tolerant_stop_ends_on_goodbye(bundled_release, tmp_path):
    release = bundled_release("socialcc")
    with ScriptedServer(reply=judge_or_goodbye) as server:
        paper = evaluate(tmp_path, release, server.base_url, "paper")
        tolerant = evaluate(tmp_path, release, server.base_url, "tolerant", stop="tolerant")
    assert paper.exit_code == 0 and tolerant.exit_code == 0, paper.output + tolerant.output
    transcripts = [json.loads(line) for line in (tmp_path / "paper" / "transcripts.jsonl").read_text().splitlines()]
    n = len(transcripts)
    assert {t["ended_by"] for t in transcripts} == {"max_rounds"} and {t["n_rounds"] for t in transcripts} == {3}
    assert f"{n} of {n} dialogues ran to the turn limit" in paper.output
    transcripts = [json.loads(line) for line in (tmp_path / "tolerant" / "transcripts.jsonl").read_text().splitlines()]
    assert {t["ended_by"] for t in transcripts} == {"good_bye"} and len(transcripts) == n
    assert all(len(t["turns"]) == 2 for t in transcripts)  # "Hello", then the protagonist's "Goodbye!"
    assert "ran to the turn limit" not in tolerant.output
    run = json.loads((tmp_path / "tolerant" / "run.json").read_text())
    assert run["evaluation"]["config"]["stop"] == "tolerant"


def test_unknown_stop_rule_is_one_line(bundled_release, tmp_path):
    result = evaluate(tmp_path, bundled_release("socialcc"), "http://127.0.0.1:9/v1", "run", stop="lenient")
    assert result.exit_code == 2 and "unknown stop 'lenient'; choose from paper, tolerant" in result.output


class Backend:
    name = "fake"

    def __init__(self, model: str, text: str) -> None:
        self.model, self.text = model, text

    def cache_params(self) -> dict:
        return {"backend": "fake", "model": self.model}

    def generate(self, requests, on_response) -> None:
        from culturebench.chat import ChatResponse

        for i, request in enumerate(requests):
            on_response(i, ChatResponse(f"{self.text} {len(request.messages)}"))


def test_cached_turns_are_not_counted_as_work(bundled_release, tmp_path):
    """A resumed run: the cached turns leave the bar's total instead of being counted as work done (the eta is
    the bar's remaining total over its rate), so a fully cached re-run has nothing to do."""
    scenarios = socialcc.scenarios_from(socialcc.release_tables(bundled_release("socialcc")), socialcc.Config())
    protagonist, antagonist = Backend("p", "p"), Backend("a", "a")
    possible = len(scenarios) * 2 * 2  # two rounds: two turns each
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        with socialcc.OverallProgress(None, possible) as first:
            socialcc.simulate(scenarios, protagonist, antagonist, cache, max_rounds=2, progress=first)
        assert first.bar.tasks[0].completed == first.bar.tasks[0].total == possible  # all asked
        with socialcc.OverallProgress(None, possible) as again:
            socialcc.simulate(scenarios, protagonist, antagonist, cache, max_rounds=2, progress=again)
        assert again.bar.tasks[0].completed == again.bar.tasks[0].total == 0  # all from the cache
