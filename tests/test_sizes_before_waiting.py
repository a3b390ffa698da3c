"""Issue #55: a long command says how many requests it will send before it starts (generate, export lm-eval), and
generate's warnings advise only what generate can do."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

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


README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLE_BUDGET = 40
"""Requests a README example may send: a minute or two on the local model (README's promise, issue #55)."""


def readme_commands(prefix: str) -> list[list[str]]:
    return [shlex.split(line)[1:] for line in README.read_text(encoding="utf-8").splitlines()
            if line.startswith(prefix)]


def test_readme_evaluate_and_export_examples_fit_the_budget(bundled_release, tmp_path):
    """Every README ``evaluate`` over HTTP, dry-run against a scripted server on the bundled releases, and its
    ``export lm-eval``, plan at most EXAMPLE_BUDGET requests."""
    examples = [c for c in readme_commands("culturebench evaluate ") if "--base-url" in c]
    assert len(examples) >= 2
    for i, args in enumerate(examples):
        args = list(args)
        benchmark = args[1]
        args[args.index("--base-url") + 1] = "BASE"
        args[args.index("--out") + 1] = str(tmp_path / f"run{i}")
        with ScriptedServer(reply="x") as server:
            args = [server.base_url if a == "BASE" else a for a in args]
            result = CliRunner().invoke(app, [*args, "--release", str(bundled_release(benchmark)), "--dry-run"],
                                        env={"OPENAI_API_KEY": "sk-test"})
        assert result.exit_code == 0, result.output
        planned = [int(n.replace(",", "")) for n in re.findall(r"dry run, .*?: ([\d,]+) requests", result.output)]
        assert planned and sum(planned) <= EXAMPLE_BUDGET, (args, result.output)
    (export,) = readme_commands("culturebench export lm-eval ")
    export[export.index("--out") + 1] = str(tmp_path / "lm")
    export[2] = str(bundled_release("cdeval"))
    result = CliRunner().invoke(app, export)
    assert result.exit_code == 0, result.output
    sent = int(re.search(r"lm_eval will send ([\d,]+) requests", result.output).group(1).replace(",", ""))
    assert 0 < sent <= EXAMPLE_BUDGET
