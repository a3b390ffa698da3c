"""One smoke test per benchmark for the change-by-change loop (issue #60; ``python -m pytest -m smoke``): the
release built from the bundled sample (once per session) validates, ``evaluate --limit 1`` against the scripted
server answers and writes metrics.json, ``score`` of its own output gives the same metrics, and ``compare`` of the
two run folders writes its report. In-process (typer's runner), seconds each; the full checks of each step are in
the benchmark's own test files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import EVALUATE_ONLY
from culturebench.cli import app
from scripted_server import ScriptedServer
from test_cli_score import OUTPUT, REPLIES, evaluate

pytestmark = pytest.mark.smoke


@pytest.mark.parametrize("name", list(REPLIES))
def test_build_validate_evaluate_score_compare(name, bundled_release, tmp_path):
    release = bundled_release(name)
    runner = CliRunner()
    validated = runner.invoke(app, ["validate", str(release)])
    assert validated.exit_code == 0, validated.output
    with ScriptedServer(reply=REPLIES[name]) as server:
        result = evaluate(name, release, tmp_path / "run", server.base_url, "--limit", "1")
        assert result.exit_code == 0, result.output
        assert server.request_count > 0
    evaluated = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    responses = tmp_path / "run" / OUTPUT.get(name, "responses.jsonl")
    scored_run = runner.invoke(app, ["score", name, "--responses", str(responses), "--release", str(release),
                                     "--out", str(tmp_path / "score")])
    assert scored_run.exit_code == 0, scored_run.output
    scored = json.loads((tmp_path / "score" / "metrics.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in scored.items() if k not in EVALUATE_ONLY} == \
        {k: v for k, v in evaluated.items() if k not in EVALUATE_ONLY}
    compared = runner.invoke(app, ["compare", str(tmp_path / "run"), str(tmp_path / "score"), "--out",
                                   str(tmp_path / "report"), "--n-resamples", "50"])
    assert compared.exit_code == 0, compared.output
    assert (tmp_path / "report" / "report.html").is_file()
