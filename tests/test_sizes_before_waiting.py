"""Issue #55: a long command says how many requests it will send before it starts (generate, export lm-eval), and
generate's warnings advise only what generate can do."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from culturebench.cli import app
from scripted_server import ScriptedServer


def test_generate_announces_its_requests_and_its_truncation_warning_names_no_missing_flag(tmp_path):
    """One CDEval cell, --limit 1: at most 4 rounds (2 * ceil(1 / 5) + 2); a model that is always cut off gives
    no item, so every round asks the cell again: exactly the announced maximum is sent."""
    with ScriptedServer(reply="Sorry, I", faults=lambda n, body: "length") as server:
        result = CliRunner().invoke(app, ["generate", "cdeval", "--model", server.model, "--base-url",
                                          server.base_url, "--limit", "1", "--only", "MAS,Education",
                                          "--out", str(tmp_path / "raw")])
        sent = server.request_count
    assert result.exit_code == 0, result.output
    announced = re.search(r"generate cdeval: at most (\d+) requests \(1 cell x up to 4 rounds", result.output)
    assert announced, result.output
    assert result.output.index("generate cdeval: at most") < result.output.index("warning:")
    assert sent == int(announced.group(1)) == 4
    assert "cut off by the token limit" in result.output and "--max-tokens" not in result.output


def test_export_lm_eval_says_how_many_requests_lm_eval_sends(bundled_release, tmp_path):
    """CDEval: 6 prompts x 5 samples per question (Sec. 3.2), so --limit 2 plans 60 requests: the line says so,
    and the requests file holds that many."""
    out = tmp_path / "lm"
    result = CliRunner().invoke(app, ["export", "lm-eval", str(bundled_release("cdeval")), "--out", str(out),
                                      "--limit", "2"])
    assert result.exit_code == 0, result.output
    lines = (out / "culturebench_cdeval.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * 6 * 5
    assert "culturebench_cdeval (60 requests); lm_eval will send 60 requests" in result.output


def test_export_help_says_how_limit_picks_and_where_the_tasks_are_listed():
    result = CliRunner().invoke(app, ["export", "lm-eval", "--help"], terminal_width=200)
    text = " ".join(result.output.split())
    assert "the first N" not in text and "spread over the benchmark's design by --seed" in text
    assert "docs/integrations.md lists them" in text
