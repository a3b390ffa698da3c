"""The command line prints text as written: help, errors and reports keep their square brackets (rich markup would
eat ``[local]`` and print a wrong install command)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from culturebench.cli import app
from conftest import one_line_error

runner = CliRunner()
WIDE = {"COLUMNS": "1000"}


def flat(text: str) -> str:
    """Help text with its wrapping undone (click wraps at 80 columns, between words only)."""
    return " ".join(text.split())


def commands() -> list[str]:
    import typer.main

    return sorted(typer.main.get_command(app).commands)


def bracketed(text: str) -> set[str]:
    """Every ``word[word]`` in a text (install extras like culturebench[local], raw[v2] paths)."""
    return set(re.findall(r"[\w.-]+\[[\w,.-]+\]", text))


def test_top_level_help_lists_every_command():
    result = runner.invoke(app, ["--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    for name in ("build", "validate", "info", "evaluate", "score", "compare", "serve-local", "generate", "audit",
                 "publish"):
        assert re.search(rf"^\s+{re.escape(name)}\s", result.output, re.M), (name, result.output)


@pytest.mark.parametrize("command", commands())
def test_help_keeps_every_bracket_of_its_source(command):
    import typer.main

    click_command = typer.main.get_command(app).commands[command]
    written = " ".join([click_command.help or ""] + [getattr(p, "help", None) or "" for p in click_command.params])
    expected = bracketed(written)
    result = runner.invoke(app, [command, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    for phrase in expected:
        assert phrase in result.output, (command, phrase, result.output)


def test_install_commands_in_help_are_whole():
    """The install commands a newcomer copies from --help, checked by hand: printed as written (no markup escape
    such as ``culturebench\\[lm-eval]``)."""
    serve = flat(runner.invoke(app, ["serve-local", "--help"], env=WIDE).output)
    assert "pip install 'culturebench[local]'" in serve
    evaluate = flat(runner.invoke(app, ["evaluate", "cdeval", "--help"], env=WIDE).output)
    assert "pip install 'culturebench[ray]'" in evaluate
    export = flat(runner.invoke(app, ["export", "lm-eval", "--help"], env=WIDE).output)
    assert "pip install 'culturebench[lm-eval]'" in export and "\\[" not in export


def test_error_message_keeps_its_brackets(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp.server", None)  # the server package is not installed
    line = one_line_error(runner.invoke(app, ["serve-local"]))
    assert line.startswith("error: llama.cpp's server is not installed: pip install 'culturebench[local]' ")


def test_error_naming_a_bracketed_path(tmp_path):
    missing = tmp_path / "raw[v2]" / "answers.tsv"
    line = one_line_error(runner.invoke(app, ["score", "wvb", "--responses", str(missing), "--release",
                                              str(tmp_path), "--out", str(tmp_path / "run")]))
    assert "raw[v2]" in line, line


# ------------------------------------------------------------------------------------ LLM-GLOBE jurors config

EXAMPLE_JURORS = Path(__file__).resolve().parents[1] / "examples" / "llm_globe_jurors.yaml"


def test_shipped_jurors_example_loads_as_written():
    import yaml

    from culturebench.evaluate.llm_globe import LLMGlobeOptions, config_of

    written = yaml.safe_load(EXAMPLE_JURORS.read_text(encoding="utf-8"))
    config = config_of(LLMGlobeOptions.parse({}, EXAMPLE_JURORS))
    assert config.part == written["part"]
    assert [(j.name, j.model, j.base_url, j.language) for j in config.jurors] == [
        (j["name"], j["model"], j["base_url"], j["language"]) for j in written["jurors"]]


@pytest.mark.parametrize("text, message", [
    ("jurors: gpt-4o\n", "jurors must be a list"),
    ("jurors:\n  - {model: m, url: http://x/v1}\n", "juror 1: unknown key 'url'"),
    ("jurors:\n  - {base_url: http://x/v1}\n", "juror 1 needs a model"),
    ("jurors:\n  - model: m\n   language: en\n", "config does not parse"),
    ("juror:\n  - model: m\n", "unknown config key 'juror'"),
])
def test_a_wrong_jurors_config_is_one_line(tmp_path, bundled_release, text, message):
    config = tmp_path / "jurors.yaml"
    config.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["evaluate", "llm_globe", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                 "--release", str(bundled_release("llm_globe")), "--config", str(config),
                                 "--out", str(tmp_path / "run")])
    line = one_line_error(result)
    assert str(config) in line and message in line, line
    assert not (tmp_path / "run").exists()
