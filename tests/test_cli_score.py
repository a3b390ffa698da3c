"""``score NAME --responses RUN/responses.jsonl`` reads ``evaluate NAME``'s own output (socialcc: transcripts.jsonl)
and gives the metrics ``evaluate`` gave, for every benchmark; ``evaluate`` says what a ``--limit`` run covers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import EVALUATE_ONLY
from culturebench.cli import app
from scripted_server import ScriptedServer
from culturebench.manifest import load_manifest
from culturebench.release_reader import read_tables

SCALE = re.compile(r"On a scale of (-?\d+) to (-?\d+)")


def wvb_reply(text: str, body: dict) -> str:
    """The scale minimum of the question asked, in App. B's JSON."""
    low = SCALE.search(text).group(1)
    return json.dumps({"thoughtful explanation": "Family first.", "answer as a score": low})


REPLIES = {
    "wvb": wvb_reply,
    "cdeval": "A",
    "normad": "Yes",
    "llm_globe": "My rating: 5",
    "socialcc": "Score: 1. GOOD BYE",  # every judge's scale holds 1; every dialogue ends at its first turn
}
OUTPUT = {"socialcc": "transcripts.jsonl"}


def evaluate(name: str, release: Path, out: Path, url: str, *extra: str):
    config = []
    if name == "socialcc":
        path = out.parent / "socialcc.json"
        path.write_text(json.dumps({"judge": {"model": "scripted", "base_url": url}}), encoding="utf-8")
        config = ["--config", str(path)]
    return CliRunner().invoke(app, ["evaluate", name, "--model", "scripted", "--base-url", url, "--release",
                                    str(release), "--out", str(out), *config, *extra])


@pytest.mark.parametrize("name", list(REPLIES))
def test_score_reads_evaluates_own_output_and_gives_the_same_metrics(name, bundled_release, tmp_path):
    release = bundled_release(name)
    with ScriptedServer(reply=REPLIES[name]) as server:
        result = evaluate(name, release, tmp_path / "run", server.base_url, "--limit", "8")
        assert result.exit_code == 0, result.output
    responses = tmp_path / "run" / OUTPUT.get(name, "responses.jsonl")
    result = CliRunner().invoke(app, ["score", name, "--responses", str(responses), "--release", str(release),
                                      "--out", str(tmp_path / "score")])
    assert result.exit_code == 0, result.output
    evaluated = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    scored = json.loads((tmp_path / "score" / "metrics.json").read_text(encoding="utf-8"))
    assert set(scored) - EVALUATE_ONLY == set(evaluated) - EVALUATE_ONLY
    for key in set(scored) - EVALUATE_ONLY:
        assert scored[key] == evaluated[key], key


def probe_questions(release: Path) -> list[str]:
    tables = read_tables(release, load_manifest(release)["outputs"])
    return pl.concat(tables["probe"].values())["question_id"].cast(pl.String).unique().to_list()


def test_wvb_limit_covers_every_question_and_says_so(sample_release, tmp_path):
    questions = probe_questions(sample_release)  # the sample's probe questions, read from its parquet
    limit = 2 * len(questions) + 3
    with ScriptedServer(reply=wvb_reply) as server:
        result = evaluate("wvb", sample_release, tmp_path / "run", server.base_url, "--limit", str(limit))
        assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "run" / "responses.jsonl").read_text().splitlines()]
    per_question = pl.Series([r["question_id"] for r in records]).value_counts()
    assert per_question.height == len(questions)  # every question asked, not the first one or two
    assert sorted(per_question["count"].unique().to_list()) == [2, 3]
    n = len(questions)
    assert f"covers {n}/{n} questions, 2-3 rows per question ({limit} of " in result.output
    assert "warning: 2 rows in the smallest question" in result.output


def test_wvb_score_of_responses_without_demographics(sample_release, tmp_path):
    """Asked without demographics the records name no participant: score pairs them with the rows the run asked,
    which the metrics.json beside them names (split, --limit and seed)."""
    with ScriptedServer(reply=wvb_reply) as server:
        result = evaluate("wvb", sample_release, tmp_path / "run", server.base_url, "--limit", "40", "--seed", "3",
                          "--no-demographics", "--samples", "2")
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(tmp_path / "run" / "responses.jsonl"),
                                      "--release", str(sample_release), "--out", str(tmp_path / "score")])
    assert result.exit_code == 0, result.output
    evaluated = json.loads((tmp_path / "run" / "metrics.json").read_text())
    scored = json.loads((tmp_path / "score" / "metrics.json").read_text())
    assert scored["per_question"] == evaluated["per_question"] and scored["mean"] == evaluated["mean"]
    alone = tmp_path / "alone" / "responses.jsonl"  # the same file without its run folder
    alone.parent.mkdir()
    alone.write_bytes((tmp_path / "run" / "responses.jsonl").read_bytes())
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(alone), "--release", str(sample_release),
                                      "--out", str(tmp_path / "score2")])
    assert result.exit_code == 2 and "metrics.json beside them" in result.output, result.output
