"""Issue #55: a headline resting on few readable answers says so. Against a server that answers 1 request in 20
readably (the rest: text no parser reads), ``evaluate`` prints a ``warning:`` line with the unreadable count and
``compare`` shows the answers read and unreadable beside the means; the shared warning's wording."""

from __future__ import annotations

import html
import inspect
import itertools
import json
import re
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from culturebench import registry
from culturebench.cli import app
from scripted_server import ScriptedServer

SCALE = re.compile(r"Question: On a scale of (-?\d+) to (-?\d+)")
REFUSAL = "I would rather not say which."


def one_in_twenty(readable):
    """A reply script: the 1st, 21st, 41st... request answered by ``readable(text)``, every other one REFUSAL
    (which neither WVB's nor NormAd's parser reads). Counted under a lock: the count, not the order, is what the
    tests check."""
    counter, lock = itertools.count(), threading.Lock()

    def reply(text: str, body: dict) -> str:
        with lock:
            n = next(counter)
        return readable(text) if n % 20 == 0 else REFUSAL

    return reply


def wvb_minimum(text: str) -> str:
    low = SCALE.search(text).group(1)
    return json.dumps({"thoughtful explanation": "As most do.", "answer as a score": low})


def evaluate(benchmark: str, server: ScriptedServer, release: Path, out: Path, limit: int):
    result = CliRunner().invoke(app, ["evaluate", benchmark, "--model", "scripted", "--backend", "openai",
                                      "--base-url", server.base_url, "--release", str(release), "--out", str(out),
                                      "--limit", str(limit)], env={"OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == 0, result.output
    return result.output


def warning_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("warning:")]


def table_rows(page: str, table: str) -> list[list[str]]:
    """The cells (text) of every row of the report table ``table`` (its head first)."""
    body = re.search(rf"<table id=table-{table}>(.*?)</table>", page, re.S).group(1)
    return [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_wvb_warns_of_unreadable_answers_and_compare_shows_the_counts(bundled_release, tmp_path):
    release = bundled_release("wvb")
    with ScriptedServer(reply=one_in_twenty(wvb_minimum)) as server:
        output = evaluate("wvb", server, release, tmp_path / "few", 20)
        assert server.request_count == 20
    warnings = [w for w in warning_lines(output) if "unreadable" in w]
    assert len(warnings) == 1 and "19 of 20 answers unreadable" in warnings[0], output
    assert "mean W1 rests on 1 answer" in warnings[0]
    assert "1 read, 19 unreadable answers" in output and "0 off the scale (kept)" in output
    assert "1 questions" not in output
    with ScriptedServer(reply=lambda text, body: wvb_minimum(text)) as server:
        readable = evaluate("wvb", server, release, tmp_path / "all", 20)
    assert not [w for w in warning_lines(readable) if "unreadable" in w], readable

    result = CliRunner().invoke(app, ["compare", str(tmp_path / "few"), str(tmp_path / "all"), "--out",
                                      str(tmp_path / "report"), "--n-resamples", "200"])
    assert result.exit_code == 0, result.output
    head, *rows = table_rows((tmp_path / "report" / "report.html").read_text(encoding="utf-8"), "main")
    read, unreadable = head.index("answers read"), head.index("unreadable")
    models = {row[0]: (row[read], row[unreadable]) for row in rows if "baseline" not in row[0]}
    assert sorted(models.values()) == [("1", "19"), ("20", "0")], models


def test_normad_warns_of_unreadable_answers(bundled_release, tmp_path):
    with ScriptedServer(reply=one_in_twenty(lambda text: "Yes")) as server:
        output = evaluate("normad", server, bundled_release("normad"), tmp_path / "run", 6)
        assert server.request_count == 30  # 6 stories x 5 contexts: 2 read (the 1st and the 21st)
    warnings = [w for w in warning_lines(output) if "unreadable" in w]
    assert len(warnings) == 1 and "28 of 30 answers unreadable" in warnings[0], output
    assert "rest on 2 answers" in warnings[0] and "Neither" in warnings[0]


def test_the_warning_names_count_share_and_what_the_headline_rests_on():
    from culturebench.evaluate.runs.readability import read_counts, status_counts, unreadable_warning

    assert unreadable_warning("x", 0, 10, "anything") == []
    assert unreadable_warning("x", 0, 0, "anything") == []
    (line,) = unreadable_warning("wvb probe", 3, 4, "mean W1 rests on 1 answer")
    assert line == "warning: wvb probe: 3 of 4 answers unreadable (75%); mean W1 rests on 1 answer"
    assert unreadable_warning("x", 1, 1, "y")[0].startswith("warning: x: 1 of 1 answer unreadable (100%)")
    assert read_counts(1_234, 5) == "1,234 read, 5 unreadable"
    assert status_counts({"ok": 3, "out_of_range": 1, "no_number": 2, "empty": 1}, ("ok", "out_of_range")) == (4, 3)


@pytest.mark.parametrize("name", ["cdeval", "llm_globe", "normad", "socialcc", "wvb"])
def test_every_summary_uses_the_shared_warning(name):
    """One function, not five copies: each benchmark's summary module calls ``unreadable_warning``."""
    hooks = type(registry.benchmark(name).hooks())
    assert "unreadable_warning(" in inspect.getsource(hooks.summary)
    assert "def unreadable_warning" not in inspect.getsource(inspect.getmodule(hooks))


REPO = Path(__file__).resolve().parents[1]


def test_docs_do_not_say_the_vllm_engines_are_refused_for_logprobs():
    """option_probability.check_scoring accepts --backend vllm and ray (either engine) with --scoring logprobs;
    docs/evaluating.md's section says so and refuses neither."""
    from culturebench import registry
    from culturebench.evaluate.runs.option_probability import check_scoring

    benchmark = registry.benchmark("normad")
    for backend in ("vllm", "ray"):
        check_scoring(benchmark, benchmark.Options(), "logprobs", backend)  # no InputError
    text = " ".join((REPO / "docs" / "evaluating.md").read_text(encoding="utf-8").split())
    section = text.split("## Scoring by option probability", 1)[1].split(" ## ", 1)[0]
    refused = [s for s in section.split(". ") if "refused" in s]
    assert refused and not any("vllm" in s.lower() or "ray" in s.lower() for s in refused), refused


def test_gitignore_covers_every_folder_the_readme_examples_write():
    """Every top folder a README command writes (--out, --raw's releases, --out of export) is ignored."""
    ignored = {line.strip().strip("/") for line in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()}
    outs = set()
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words[:1] == ["culturebench"] and "--out" in words:
            outs.add(words[words.index("--out") + 1].split("/")[0])
    assert {"runs", "reports", "lm_tasks", "raw_generated", "releases"} <= outs
    assert outs <= ignored, outs - ignored
