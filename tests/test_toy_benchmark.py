"""Adding a benchmark (docs/adding-a-benchmark.md, issue #44): a toy benchmark from one folder
(``tests/toy_benchmark/``: its contract, builder, schema, run and raw sample) and one registry entry (the
``culturebench.benchmarks`` entry point of a distribution on the path) goes through the same command line as the
five real ones: build, evaluate against the scripted server, score, and the lm-eval export, with nothing in
culturebench naming it."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripted_server import ScriptedServer, last_user_message

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
TOY = TESTS / "toy_benchmark"


@pytest.fixture(scope="module")
def registered(tmp_path_factory):
    """The one registry entry: an entry point ``toy = toy_benchmark:BENCHMARK`` of a distribution on the path."""
    site = tmp_path_factory.mktemp("site")
    info = site / "culturebench_toy-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: culturebench-toy\nVersion: 0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[culturebench.benchmarks]\ntoy = toy_benchmark:BENCHMARK\n",
                                           encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(TESTS), str(REPO / "src")]),
            "OPENAI_API_KEY": "sk-test-toy"}


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "culturebench.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def gold() -> dict[str, str]:
    with (TOY / "raw" / "toy" / "questions.csv").open(encoding="utf-8") as handle:
        return {row["question"]: row["answer"] for row in csv.DictReader(handle)}


def reply(text: str, body: dict) -> str:
    """Right on every question but the first, in a sentence ("Yes, it is."), so --strict reads none."""
    question = text.removeprefix("Answer yes or no. ")
    answer = gold()[question]
    if question == next(iter(gold())):
        answer = "no" if answer == "yes" else "yes"
    return f"{answer.capitalize()}, it is."


@pytest.mark.slow
def test_toy_benchmark_builds_evaluates_scores_and_exports(registered, tmp_path):
    """Slow: ten culturebench commands as processes of their own: the plugin must be found through its entry point."""
    env = registered
    listed = cli(env, "evaluate", "--help")
    assert listed.returncode == 0 and "toy" in listed.stdout, listed.stdout + listed.stderr
    own = cli(env, "evaluate", "toy", "--help")
    assert own.returncode == 0 and "--strict" in own.stdout, own.stdout + own.stderr

    built = cli(env, "build", "toy", "--raw", str(TOY / "raw"), "--out", str(tmp_path / "releases"))
    assert built.returncode == 0, built.stderr
    release = tmp_path / "releases" / "toy"
    assert cli(env, "validate", str(release)).returncode == 0
    croissant = json.loads((release / "croissant.json").read_text(encoding="utf-8"))  # no rai_facts() of its own
    assert croissant["rai:dataBiases"].startswith("Not stated") and "url" not in croissant
    assert croissant["rai:hasSyntheticData"] is False and croissant["rai:dataCollectionType"] == []
    own_help = cli(env, "build", "toy", "--help")
    assert own_help.returncode == 0 and "--raw" in own_help.stdout, own_help.stdout + own_help.stderr

    generate_help = cli(env, "generate", "toy", "--help")  # the plugin's own generator and its option
    assert generate_help.returncode == 0 and "--topics" in generate_help.stdout, generate_help.stderr
    with ScriptedServer(reply=lambda text, body: "Is ice cold?", model="toy-model") as server:
        generated = cli(env, "generate", "toy", "--model", "toy-model", "--base-url", server.base_url, "--out",
                        str(tmp_path / "generated"), "--topics", "ice,snow,rain")
    assert generated.returncode == 0, generated.stderr
    rows = (tmp_path / "generated" / "toy" / "questions.csv").read_text(encoding="utf-8").splitlines()
    assert rows[1:] == ["g1,Is ice cold?,yes", "g2,Is ice cold?,yes", "g3,Is ice cold?,yes"]

    n = len(gold())
    with ScriptedServer(reply=reply, model="toy-model") as server:
        run = cli(env, "evaluate", "toy", "--model", "toy-model", "--base-url", server.base_url, "--release",
                  str(release), "--out", str(tmp_path / "run"))
        asked = sorted(last_user_message(body) for body in server.bodies)
    assert run.returncode == 0, run.stderr
    assert asked == sorted(f"Answer yes or no. {q}" for q in gold())
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["n"] == n and metrics["accuracy"] == pytest.approx((n - 1) / n)
    assert json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["benchmark"] == "toy"

    scored = cli(env, "score", "toy", "--responses", str(tmp_path / "run" / "responses.jsonl"), "--release",
                 str(release), "--out", str(tmp_path / "strict"), "--strict")
    assert scored.returncode == 0, scored.stderr
    assert json.loads((tmp_path / "strict" / "metrics.json").read_text(encoding="utf-8"))["accuracy"] == 0

    exported = cli(env, "export", "lm-eval", str(release), "--out", str(tmp_path / "lm-eval"))
    assert exported.returncode == 0, exported.stderr
    docs = (tmp_path / "lm-eval" / "culturebench_toy.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(docs) == n
    task = (tmp_path / "lm-eval" / "culturebench_toy.yaml").read_text(encoding="utf-8")
    assert "metric: accuracy" in task


def test_no_shared_module_names_a_benchmark():
    """The front ends (command line, runner, cache, backends, integrations, release writer) name no benchmark: only
    a benchmark's own packages (``evaluate/<name>/``, ``builders/<name>.py``, ``raw/``, ``schemas/``,
    ``generation/``) do."""
    from culturebench import registry

    package = REPO / "src" / "culturebench"
    own = {"builders", "raw", "schemas", "generation", "facts"}
    names = [name for name in registry.BUILT_IN]
    found = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if parts[0] in own or (parts[0] == "evaluate" and parts[1] in names) or path.name == "registry.py":
            continue
        text = path.read_text(encoding="utf-8").lower()
        found += [f"{path.relative_to(package)}: {name}" for name in names if name in text
                  or name.replace("_", "-") in text]
    assert not found, found
