"""``generate`` drops junk items (empty, a refusal, a piece of the prompt it was sent) and counts each reason in
its summary (generation/common.py ``junk_reason``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebench.evaluate.models.backends import OpenAIBackend
from scripted_server import ScriptedServer
from culturebench.generation import llm_globe
from culturebench.generation.common import junk_reason, request

REPO = Path(__file__).resolve().parents[1]
SENT = request([("system", "You write survey prompts."),
                ("user", "Dimension: Power Distance\nWrite 3 prompts, separated by ,,")],
               temperature=1.0, max_tokens=100, seed=0)


@pytest.mark.parametrize("item, reason", [
    ("", "empty"),
    ("   ", "empty"),
    ("I'm sorry, but I can't help with that.", "refusal"),
    ("As an AI language model, I do not have opinions.", "refusal"),
    ("Sorry, I cannot write these prompts.", "refusal"),
    ("Dimension: Power Distance", "template text"),
    ("write 3 prompts separated by", "template text"),
    ("Should a junior employee question a manager's decision in a meeting?", None),
    ("I cannot decide whether to hire my cousin or the better candidate: what should I do?", "refusal"),
    ("Power distance in a family firm: should the founder decide alone?", None),
])
def test_junk_reason(item, reason):
    assert junk_reason(item, SENT) == reason


def test_generation_counts_refusals_and_echoed_template_text(tmp_path):
    """Each generation answer holds a refusal and a line of the App. A prompt it was sent besides real items."""
    counter = {"n": 0}

    def reply(text: str, body: dict) -> str:
        if "Chinese" in text or "中文" in text or "translat" in text.lower():
            return "这是一个提示"
        counter["n"] += 1
        n = counter["n"]
        echoed = next(line for line in text.splitlines() if len(line.split()) >= 6)  # a line of the prompt sent
        real = [f"Scenario {n}-{i}: should the team leader {'consult' if i else 'overrule'} staff number {n * 7 + i} "
                "before deciding on the new budget plan?" for i in range(3)]
        return ",, ".join(["I'm sorry, but I can't help with that.", echoed, *real])

    raw = tmp_path / "raw"
    with ScriptedServer(reply=reply) as server:
        backend = OpenAIBackend(server.model, base_url=server.base_url, concurrency=4, backoff_base=0.01)
        summary = llm_globe.generate(backend, raw, source=REPO / "raw", seed=0, limit=2, only={"power distance"})
    rejected = summary["rejected"]
    assert rejected["refusal"] == counter["n"] and rejected["template text"] == counter["n"], rejected
    saved = json.loads((raw / ".generation" / "llm_globe.summary.json").read_text())
    assert saved["rejected"]["refusal"] == counter["n"]
    kept = (raw / "llm_globe" / "open_prompts.csv").read_text(encoding="utf-8")
    assert "I'm sorry" not in kept
