"""culturebench inside inspect and lm-evaluation-harness (issue #29): against the scripted OpenAI-compatible server
with fixed answers, ``inspect eval`` of each task and ``lm_eval`` of each exported task send the prompts
``culturebench evaluate`` sends, with its sampling settings, and report the headline metrics ``culturebench
evaluate`` writes for the same answers (to 1e-9); one of them is also checked by hand against the release. The
inspect and lm-eval parts skip when their extra is absent (``pip install 'culturebench[inspect,lm-eval]'``)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from culturebench.cli import app
from culturebench.integrations import harness
from culturebench.evaluate import normad
from scripted_server import ScriptedServer, last_user_message

REPO = Path(__file__).resolve().parents[1]
needs_inspect = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None,
                                   reason="pip install 'culturebench[inspect]'")
needs_lm_eval = pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None,
                                   reason="pip install 'culturebench[lm-eval]'")
LIMIT = 3
SAMPLES = {"cdeval": 2, "llm_globe": 2}
"""Small runs: --limit 3 everywhere; CDEval two samples per prompt, LLM-GLOBE two answers per closed prompt."""

ANSWERS = ("A", "B", "Yes", "No", "Neither", "5", "2", '{"answer as a score": 3}', "I cannot say.")
"""Answers the server picks from by a hash of the prompt: some parse as each benchmark's answer, some do not."""


def fixed_answer(text: str, body: dict) -> str:
    return ANSWERS[zlib.crc32(text.encode()) % len(ANSWERS)]


def juror_rating(text: str, body: dict) -> str:
    return str(1 + zlib.crc32(text.encode()) % 7)


@pytest.fixture(scope="module")
def jury(tmp_path_factory):
    """A config naming one juror, served by a scripted server that rates 1-7 by a hash of the juror prompt
    (LLM-GLOBE's open task)."""
    with ScriptedServer(reply=juror_rating, model="juror-model") as server:
        path = tmp_path_factory.mktemp("jury") / "llm_globe.json"
        path.write_text(json.dumps({"jurors": [{"model": "juror-model", "base_url": server.base_url}]}))
        yield path


def config_for(task: harness.Task, jury: Path) -> str | None:
    return str(jury) if task.spec.needs_config else None


def cli_flags(task: harness.Task, jury: Path) -> list[str]:
    flags = ["--limit", str(LIMIT)]
    if config_for(task, jury):
        flags += ["--config", config_for(task, jury)]
    if task.benchmark.name in SAMPLES:
        flags += ["--samples", str(SAMPLES[task.benchmark.name])]
    if task.spec.options.get("demographics") is False:
        flags.append("--no-demographics")
    if task.spec.options.get("split"):
        flags += ["--split", task.spec.options["split"]]
    return flags


def sent(server: ScriptedServer) -> list[tuple]:
    """What reached the server, order left out: prompt, temperature, max tokens, stop sequences."""
    return sorted((last_user_message(b), float(b.get("temperature", 0)), b.get("max_tokens"),
                   tuple(b.get("stop") or ())) for b in server.bodies)


@pytest.fixture(scope="module")
def releases(bundled_release):
    return {name: bundled_release(name) for name in ("cdeval", "wvb", "normad", "llm_globe")}


@pytest.fixture(scope="module")
def reference(releases, jury, tmp_path_factory):
    """Per task: the headline metrics of ``culturebench evaluate`` on the fixed answers, and what it sent (NormAd:
    one run asks all five contexts, each task's headline is its context's)."""
    out, runs = {}, {}
    for spec in harness.tasks():
        name, benchmark = spec.name, spec.benchmark.name
        command = (benchmark, *cli_flags(spec, jury))
        if command not in runs:
            folder = tmp_path_factory.mktemp(f"evaluate-{name}")
            with ScriptedServer(reply=fixed_answer) as server:
                result = CliRunner().invoke(app, ["evaluate", benchmark, "--model", "scripted-model",
                                                  "--base-url", server.base_url, "--release",
                                                  str(releases[benchmark]), "--out", str(folder),
                                                  *cli_flags(spec, jury)],
                                            env={"OPENAI_API_KEY": "sk-test-integrations"})
                assert result.exit_code == 0, result.output
                runs[command] = (json.loads((folder / "metrics.json").read_text()), sent(server))
        metrics, requests = runs[command]
        out[name] = (harness.headline(spec, metrics), requests)
    return out


def same_requests(name: str, got: list[tuple], reference: dict) -> bool:
    """The task sent what ``culturebench evaluate`` sent (a NormAd context task: that run's requests of its
    context, a part of them; ``test_planned_requests_are_those_evaluate_sends`` checks they add up)."""
    expected = set(reference[name][1])
    return bool(got) and (set(got) <= expected if name.startswith("normad_") else set(got) == expected)


def close(got: dict, expected: dict) -> bool:
    return got.keys() == expected.keys() and all(math.isclose(got[k], expected[k], rel_tol=0, abs_tol=1e-9)
                                                 for k in expected)


def test_planned_requests_are_those_evaluate_sends(releases, reference, jury):
    normad = set()
    for spec in harness.tasks():
        name, benchmark = spec.name, spec.benchmark.name
        requests = harness.requests_of(spec, releases[benchmark], limit=LIMIT, samples=SAMPLES.get(benchmark),
                                       config=config_for(spec, jury))
        planned = [(r.messages[-1][1], r.sampling.temperature, r.sampling.max_tokens, r.sampling.stop)
                   for r in requests]
        assert same_requests(name, planned, reference), name
        if benchmark == "normad":
            normad |= set(planned)
    assert normad == set(reference["normad_country"][1])


def test_replayed_answers_score_by_hand(releases):
    """NormAd COUNTRY, every answer "Yes": accuracy is the share of gold "yes" among the first LIMIT stories."""
    spec = harness.task("normad_country")
    requests = harness.requests_of(spec, releases["normad"], limit=LIMIT)
    metrics = harness.score_answers(spec, releases["normad"], {r: "Yes" for r in requests}, limit=LIMIT)
    golds = normad.release_tables(releases["normad"])["stories"]["gold_label"].head(LIMIT).to_list()
    assert harness.headline(spec, metrics)["accuracy"] == pytest.approx(golds.count("yes") / len(golds))
    assert len(requests) == LIMIT


def test_task_metadata_pins_the_release(releases):
    meta = harness.task_metadata("cdeval", harness.task("cdeval").benchmark, releases["cdeval"])
    import hashlib

    assert meta["release_manifest_sha256"] == hashlib.sha256(
        (releases["cdeval"] / "manifest.json").read_bytes()).hexdigest()


def test_open_task_needs_the_jurors(releases, tmp_path):
    result = CliRunner().invoke(app, ["export", "lm-eval", str(releases["llm_globe"]), "--out", str(tmp_path / "x"),
                                      "--task", "llm_globe_open"])
    assert result.exit_code == 2, result.output
    assert "llm_globe_open needs a config" in result.output
    result = CliRunner().invoke(app, ["export", "lm-eval", str(releases["llm_globe"]), "--out", str(tmp_path / "y")])
    assert result.exit_code == 0 and not (tmp_path / "y" / "culturebench_llm_globe_open.yaml").exists()


def test_unknown_task_and_wrong_release_are_one_line_errors(releases, tmp_path):
    result = CliRunner().invoke(app, ["export", "lm-eval", str(releases["cdeval"]), "--out", str(tmp_path / "x"),
                                      "--task", "normad_country"])
    assert result.exit_code == 2, result.output
    assert [line for line in result.output.splitlines() if line.strip()] == [
        f"error: {releases['cdeval']}: task 'normad_country' is for normad, the release is cdeval"]
    result = CliRunner().invoke(app, ["export", "lm-eval", str(tmp_path / "none"), "--out", str(tmp_path / "y")])
    assert result.exit_code == 2 and f"{tmp_path / 'none'}: release folder not found" in result.output


# ------------------------------------------------------------------------------------------------------- inspect


@pytest.mark.slow
@needs_inspect
def test_inspect_tasks_give_evaluate_headline(releases, reference, jury, tmp_path, monkeypatch):
    """Slow: one inspect eval per task (every task of every benchmark), each with inspect's own start-up of a run."""
    from inspect_ai import eval as inspect_eval

    from culturebench.integrations import inspect_tasks

    monkeypatch.setenv("SCRIPTED_API_KEY", "sk-test-integrations")
    for spec in harness.tasks():
        name, benchmark = spec.name, spec.benchmark.name
        task = inspect_tasks.culturebench_task(name, str(releases[benchmark]), limit=LIMIT,
                                               samples=SAMPLES.get(benchmark), config_file=config_for(spec, jury))
        with ScriptedServer(reply=fixed_answer) as server:
            (log,) = inspect_eval(task, model="openai-api/scripted/scripted-model", model_base_url=server.base_url,
                                  log_dir=str(tmp_path / "logs"), display="none", log_samples=False)
            requests = sent(server)
        assert log.status == "success", (name, log.error)
        assert same_requests(name, requests, reference), name
        (score,) = log.results.scores
        got = {key: metric.value for key, metric in score.metrics.items()}
        assert close(got, reference[name][0]), (name, got, reference[name][0])
        assert log.eval.metadata["release_manifest_sha256"] == harness.task_metadata(
            name, spec.benchmark, releases[benchmark])["release_manifest_sha256"]


@pytest.mark.slow
@needs_inspect
def test_inspect_command_line_runs_a_task(releases, reference, tmp_path):
    """``inspect eval culturebench/normad_rot -T release=... -T limit=...`` in a separate process: the task found
    through the inspect_ai entry point of the installed package (the tasks are made from the registry, so there is no
    FILE@TASK form). The ``inspect`` script is the one installed beside this Python (``VENV/bin/python -m pytest`` runs
    without the venv's bin on PATH). Slow: the inspect command as a process of its own: inspect-ai's imports and its
    registry of tasks."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    inspect_script = Path(sys.executable).with_name("inspect")
    assert inspect_script.is_file(), f"inspect-ai is installed but its script is not beside {sys.executable}"
    with ScriptedServer(reply=fixed_answer) as server:
        run = subprocess.run(
            [str(inspect_script), "eval", "culturebench/normad_rot", "-T",
             f"release={releases['normad']}", "-T", f"limit={LIMIT}", "--model", "openai-api/scripted/scripted-model",
             "--model-base-url", server.base_url, "--log-dir", str(tmp_path / "logs"), "--display", "none"],
            capture_output=True, text=True, timeout=600,
            env={**os.environ, "SCRIPTED_API_KEY": "sk-test-integrations"})  # the installed package: its entry point
    assert run.returncode == 0, run.stderr[-2000:]
    (info,) = list_eval_logs(str(tmp_path / "logs"))
    (score,) = read_eval_log(info).results.scores
    assert close({k: m.value for k, m in score.metrics.items()}, reference["normad_rot"][0])


@needs_inspect
def test_inspect_registers_the_tasks():
    from culturebench.integrations import inspect_tasks

    assert all(callable(getattr(inspect_tasks, task.name)) for task in harness.tasks())
    text = (REPO / "pyproject.toml").read_text()
    assert '[project.entry-points.inspect_ai]\nculturebench = "culturebench.integrations.inspect_tasks"' in text


# ------------------------------------------------------------------------------------------------------- lm-eval


def lm_eval_results(folder: Path, tasks: list[str], server: ScriptedServer) -> dict:
    import lm_eval
    from lm_eval.tasks import TaskManager

    results = lm_eval.simple_evaluate(
        model="local-chat-completions", model_args={"model": "scripted-model", "base_url": f"{server.base_url}/chat/"
                                                    "completions", "num_concurrent": 1, "max_retries": 1,
                                                    "tokenizer_backend": None},
        tasks=[f"culturebench_{t}" for t in tasks], task_manager=TaskManager(include_path=str(folder),
                                                                               include_defaults=False),
        apply_chat_template=True, bootstrap_iters=0, log_samples=False)
    return results


@pytest.mark.slow
@needs_lm_eval
def test_lm_eval_tasks_give_evaluate_headline(releases, reference, jury, tmp_path):
    """Slow: one lm_eval simple_evaluate per task, each with lm-eval's task loading."""
    folder = tmp_path / "tasks"
    for benchmark, release in releases.items():
        flags = ["--samples", str(SAMPLES[benchmark])] if benchmark in SAMPLES else []
        flags += ["--config", str(jury)] if benchmark == "llm_globe" else []
        result = CliRunner().invoke(app, ["export", "lm-eval", str(release), "--out", str(folder),
                                          "--limit", str(LIMIT), *flags])
        assert result.exit_code == 0, result.output
    for spec in harness.tasks():
        name = spec.name
        with ScriptedServer(reply=fixed_answer) as server:
            output = lm_eval_results(folder, [name], server)
            requests = sent(server)
        results = output["results"][f"culturebench_{name}"]
        assert output["configs"][f"culturebench_{name}"]["metadata"]["release_manifest_sha256"] == \
            harness.task_metadata(name, spec.benchmark, releases[spec.benchmark.name])["release_manifest_sha256"]
        assert same_requests(name, requests, reference), name
        got = {key.removesuffix(",none"): value for key, value in results.items()
               if key.endswith(",none") and "_stderr" not in key and not math.isnan(value)}
        assert close(got, reference[name][0]), (name, got, reference[name][0])


@pytest.mark.slow
@needs_lm_eval
def test_lm_eval_command_line_runs_the_export(releases, reference, tmp_path):
    """The README's command: ``lm_eval --include_path DIR --tasks culturebench_cdeval --model local-chat-completions
    ...`` in a separate process. Slow: the lm_eval command indexes its ~14,000 built-in task YAML files before it reads
    --include_path (about 28 s of its 34 s)."""
    folder = tmp_path / "tasks"
    result = CliRunner().invoke(app, ["export", "lm-eval", str(releases["normad"]), "--out", str(folder),
                                      "--limit", str(LIMIT), "--task", "normad_rot"])
    assert result.exit_code == 0, result.output
    with ScriptedServer(reply=fixed_answer) as server:
        run = subprocess.run(
            [sys.executable, "-m", "lm_eval", "--include_path", str(folder), "--tasks", "culturebench_normad_rot",
             "--model", "local-chat-completions", "--model_args",
             f"model=scripted-model,base_url={server.base_url}/chat/completions,num_concurrent=1,max_retries=1",
             "--apply_chat_template", "--output_path", str(tmp_path / "out")],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")}, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    (path,) = (tmp_path / "out").rglob("results_*.json")
    got = json.loads(path.read_text())["results"]["culturebench_normad_rot"]
    expected = reference["normad_rot"][0]
    assert all(math.isclose(got[f"{k},none"], v, abs_tol=1e-9) for k, v in expected.items()), (got, expected)


def test_lm_eval_aggregation_of_a_part_of_the_answers_says_why(releases, tmp_path):
    """lm_eval --limit answers a part of the docs: the aggregation names the task and the fix, no wrong numbers."""
    from culturebench.errors import InputError
    from culturebench.integrations import lm_eval_export

    folder = tmp_path / "tasks"
    lm_eval_export.export(releases["normad"], folder, limit=LIMIT, tasks=["normad_value"])
    docs = [json.loads(line) for line in (folder / "culturebench_normad_value.jsonl").read_text().splitlines()]
    items = [lm_eval_export.process_results(doc, ["Yes"])["accuracy"] for doc in docs]
    aggregate = lm_eval_export.aggregation(folder, "normad_value", "accuracy")
    golds = normad.release_tables(releases["normad"])["stories"]["gold_label"].head(LIMIT).to_list()
    assert aggregate(items) == pytest.approx(golds.count("yes") / LIMIT)
    with pytest.raises(InputError, match="culturebench_normad_value: no answer to request .* not lm_eval --limit"):
        aggregate(items[:-1])


@needs_inspect
def test_inspect_socialcc_with_model_roles_gives_evaluate_table2(bundled_release, tmp_path, monkeypatch):
    """SocialCC in inspect: the task's model plays Character 2, ``--model-role judge`` judges and plays the
    antagonist; Table 2 equals ``culturebench evaluate socialcc`` with the same scripted servers."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from culturebench.evaluate.socialcc.prompts import JUDGES
    from culturebench.integrations import inspect_tasks
    from test_socialcc_evaluate import judge_reply, protagonist_reply

    release = bundled_release("socialcc")
    monkeypatch.setenv("SCRIPTED_API_KEY", "sk-test-integrations")
    monkeypatch.setenv("JUDGE_API_KEY", "sk-test-integrations")
    with ScriptedServer(reply=protagonist_reply, model="evaluated") as model, \
            ScriptedServer(reply=judge_reply, model="judge-model") as judge:
        config = tmp_path / "socialcc.json"
        config.write_text(json.dumps({"judge": {"model": "judge-model", "base_url": judge.base_url}}))
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "evaluated", "--base-url",
                                          model.base_url, "--release", str(release), "--out", str(tmp_path / "run"),
                                          "--limit", "2", "--config", str(config)],
                                    env={"OPENAI_API_KEY": "sk-test-integrations"})
        assert result.exit_code == 0, result.output
        table2 = json.loads((tmp_path / "run" / "metrics.json").read_text())["per_model"]["evaluated"]["table2"]
        expected = {j: table2[j] for j in JUDGES if table2[j] is not None}  # Table 2's four means
        asked = (model.request_count, judge.request_count)
        model.reset_counts(), judge.reset_counts()
        (log,) = inspect_eval(inspect_tasks.socialcc(str(release), limit=2),
                              model="openai-api/scripted/evaluated", model_base_url=model.base_url,
                              model_roles={"judge": get_model("openai-api/judge/judge-model",
                                                              base_url=judge.base_url)},
                              log_dir=str(tmp_path / "logs"), display="none")
        assert (model.request_count, judge.request_count) == asked
        (unjudged,) = inspect_eval(inspect_tasks.socialcc(str(release), limit=2),
                                   model="openai-api/scripted/evaluated", model_base_url=model.base_url,
                                   log_dir=str(tmp_path / "logs"), display="none")
    assert unjudged.status == "error" and "judge" in unjudged.error.message
    assert log.status == "success", log.error
    (score,) = log.results.scores
    assert expected and close({k: m.value for k, m in score.metrics.items()}, expected)
