"""Every evaluation run ends cleanly (issue #46): one run per run folder, every wait capped, one fault table for every
backend, one error line and nothing else on the way out, nothing written by a run that got no answer. Servers are
the scripted one on 127.0.0.1; the exit paths run as real processes (``python -m culturebench.cli``)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import one_line_error
from culturebench.cli import app
from culturebench.evaluate.runs.run_lock import LOCK_FILE, hold_run_folder
from scripted_server import ScriptedServer
from test_backends import small_normad_release, story_number_reader

SRC = Path(__file__).parents[1] / "src"
N_REQUESTS = 6 * 5  # the small NormAd release: six stories x five contexts


@pytest.fixture(autouse=True)
def own_hash_memo(tmp_path, monkeypatch):
    """Release hashes remembered under the test's folder; no proxy or endpoint of the environment."""
    monkeypatch.setenv("CULTUREBENCH_CACHE", str(tmp_path / "hash-memo"))
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def release(tmp_path) -> Path:
    return small_normad_release(tmp_path / "normad")


def evaluate_normad(release: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["evaluate", "normad", "--model", "scripted-model", "--release", str(release),
                                    "--out", str(out), *extra])


def evaluate_process(release: Path, out: Path, *extra: str) -> subprocess.Popen:
    """``culturebench evaluate normad`` as a process of its own (stdout and stderr apart)."""
    return subprocess.Popen(
        [sys.executable, "-m", "culturebench.cli", "evaluate", "normad", "--model", "scripted-model", "--release",
         str(release), "--out", str(out), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "400"})


# --- 1. one run per run folder ---

def test_a_folder_held_by_a_run_is_refused_naming_its_pid_and_left_as_it_was(release, tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(reply=story_number_reader) as server:
        with hold_run_folder(out):  # another open file of the lock: flock conflicts within one process too
            before = sorted(p.name for p in out.iterdir())
            refused = evaluate_normad(release, out, "--base-url", server.base_url)
            assert sorted(p.name for p in out.iterdir()) == before
        assert server.request_count == 0
    line = one_line_error(refused)
    assert f"held by another run (pid {os.getpid()})" in line and "--wait-for-lock" in line
    assert not out.exists()  # the holder created the folder and nothing was written into it


def test_wait_for_lock_waits_for_the_holder_then_runs(release, tmp_path):
    out = tmp_path / "run"
    held, done = threading.Event(), threading.Event()

    def holder() -> None:
        with hold_run_folder(out):
            held.set()
            done.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    threading.Timer(1.0, done.set).start()
    with ScriptedServer(reply=story_number_reader) as server:
        waited = evaluate_normad(release, out, "--base-url", server.base_url, "--wait-for-lock")
    thread.join()
    assert waited.exit_code == 0, waited.output
    assert f"waiting for the run holding {out} (pid {os.getpid()}) to end" in " ".join(waited.output.split())
    assert server.request_count == N_REQUESTS and (out / "metrics.json").is_file()
    assert not (out / LOCK_FILE).exists()  # removed by the run that held it last


@pytest.mark.slow
def test_two_identical_runs_started_together_never_both_fail(release, tmp_path):
    """Slow: four evaluate processes, two at a time, against a server answering in 0.1 s."""
    with ScriptedServer(reply=story_number_reader, latency=0.1) as server:
        out = tmp_path / "refuse"
        runs = [evaluate_process(release, out, "--base-url", server.base_url, "--concurrency", "2") for _ in "ab"]
        results = [(run.wait(120), *run.communicate()) for run in runs]
        assert sorted(code for code, _, _ in results) == [0, 2], results
        [(_, _, refusal)] = [r for r in results if r[0] == 2]
        [winner] = [run for run, r in zip(runs, results) if r[0] == 0]
        assert refusal.strip() == f"error: {out}: held by another run (pid {winner.pid}); run one command per " \
                                  "--out folder, or give --wait-for-lock to wait for it to end"
        assert server.request_count == N_REQUESTS
        server.reset_counts()
        out = tmp_path / "wait"
        runs = [evaluate_process(release, out, "--base-url", server.base_url, "--concurrency", "2",
                                 "--wait-for-lock") for _ in "ab"]
        results = [(run.wait(120), *run.communicate()) for run in runs]
        assert [code for code, _, _ in results] == [0, 0], results
        assert server.request_count == N_REQUESTS  # the second found every answer in the first one's cache
    assert sum(f"{N_REQUESTS} requests ({N_REQUESTS} cached, 0 queried)" in " ".join(err.split())
               for _, _, err in results) == 1


HOLD_AND_HANG = """
import sys, time
from culturebench.evaluate.runs.run_lock import hold_run_folder
with hold_run_folder(sys.argv[1]):
    print("held", flush=True)
    time.sleep(120)
"""


def test_the_lock_of_a_killed_run_is_harmless(release, tmp_path):
    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_AND_HANG, str(out)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(SRC)})
    assert holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait(30)
    assert (out / LOCK_FILE).read_text().strip() == str(holder.pid)  # left behind, naming a dead process
    with ScriptedServer(reply=story_number_reader) as server:
        result = evaluate_normad(release, out, "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    assert not (out / LOCK_FILE).exists()


# --- 2. every wait capped ---

def test_no_wait_before_a_retry_is_longer_than_the_cap_jitter_and_retry_after_included():
    from culturebench.evaluate.models.backends import OpenAIBackend
    from culturebench.chat import ChatRequest

    faults = [(429, {"Retry-After": "0.3"}), (503, {"Retry-After": "0.3"}), 500, 500, 502]
    with ScriptedServer(faults=faults) as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, backoff_base=5.0, backoff_max=0.3)
        waits = []
        backoff = backend._backoff
        backend._backoff = lambda attempt, exc: waits.append(backoff(attempt, exc)) or waits[-1]
        got = {}
        backend.generate([ChatRequest(messages=(("user", "hi"),))], got.__setitem__)
    assert got[0].text == "echo: hi" and len(waits) == len(faults)
    assert all(0 < wait <= 0.3 for wait in waits), waits


def test_a_retry_after_beyond_max_wait_ends_the_run_at_once_with_one_line(release, tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(reply=story_number_reader, faults=[None, (429, {"Retry-After": "3600"})]) as server:
        started = time.monotonic()
        result = evaluate_normad(release, out, "--base-url", server.base_url, "--concurrency", "1",
                                 "--max-wait", "2")
        took = time.monotonic() - started
    line = one_line_error(result)
    assert "HTTP 429" in line and "asks to wait 3600 s" in line and "more than --max-wait 2 s" in line
    assert took < 30 and server.request_count == 2  # not waited for, not asked again
    with sqlite3.connect(out / "cache.sqlite") as db:  # the first answer is kept
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 1


# --- 4. every exit path ends with its own output only ---

def slow_after_the_probe_then(fault):
    """The first request (which goes alone) answered, the second answered with ``fault``, every other held 2 s: the
    fault ends the run with requests in flight."""
    return lambda number, body: None if number == 1 else fault if number == 2 else "slow"


EXIT_PATHS = {  # name: (faults of the server or "refused", extra options, words of the one line)
    "authentication": (lambda number, body: 401, (), "authentication failed (check OPENAI_API_KEY): HTTP 401"),
    "authentication with requests in flight": (slow_after_the_probe_then(401), (), "HTTP 401"),
    "unknown model or route": (lambda number, body: 404, (), "HTTP 404"),
    "rate limit": (lambda number, body: (429, {"Retry-After": "3600"}), (), "asks to wait 3600 s"),
    "server errors": (lambda number, body: 500, ("--max-wait", "0.05"), "still failing after 7 attempts: HTTP 500"),
    "refused connection": ("refused", (), "connection refused"),
    "ray backend, authentication": (lambda number, body: 401, ("--backend", "ray"), "HTTP 401"),
}


@pytest.mark.parametrize("path", EXIT_PATHS)
def test_each_fault_ends_the_process_with_its_one_error_line_and_nothing_else(release, tmp_path, path):
    from culturebench.evaluate.models.local_model import free_port

    faults, extra, words = EXIT_PATHS[path]
    out = tmp_path / "run"
    with ScriptedServer(reply=story_number_reader, faults=None if faults == "refused" else faults,
                        slow_seconds=2.0) as server:
        base_url = f"http://127.0.0.1:{free_port()}/v1" if faults == "refused" else server.base_url
        process = evaluate_process(release, out, "--base-url", base_url, "--concurrency", "8", *extra)
        stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 2, stderr
    assert stdout == "" and stderr.count("\n") == 1 and stderr.startswith("error: ") and words in stderr, stderr
    assert not out.exists() or not (out / "metrics.json").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
@pytest.mark.parametrize(("signal_name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_ends_the_process_with_its_one_line(release, tmp_path, signal_name, code):
    arrived, let_go = threading.Event(), threading.Event()

    def hold_the_third(text: str, body: dict) -> str:
        if server.request_count >= 3:
            arrived.set()
            let_go.wait(30)
        return story_number_reader(text, body)

    with ScriptedServer(reply=hold_the_third) as server:
        process = evaluate_process(release, tmp_path / "run", "--base-url", server.base_url, "--concurrency", "1")
        try:
            assert arrived.wait(60), process.communicate(timeout=5)
            process.send_signal(getattr(signal, signal_name))
            stdout, stderr = process.communicate(timeout=60)
        finally:
            let_go.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == code and stdout == "", stderr
    assert stderr.count("\n") == 1 and stderr.startswith("interrupted; 2 new answers kept in"), stderr


def test_a_successful_run_prints_what_the_command_prints_and_nothing_else(release, tmp_path):
    with ScriptedServer(reply=story_number_reader) as server:
        in_process = evaluate_normad(release, tmp_path / "a", "--base-url", server.base_url)
        process = evaluate_process(release, tmp_path / "b", "--base-url", server.base_url)
        stdout, stderr = process.communicate(timeout=300)
    assert in_process.exit_code == 0 and process.returncode == 0, stderr
    assert stdout == "" and stderr == in_process.output.replace(str(tmp_path / "a"), str(tmp_path / "b"))


def test_a_fault_leaves_no_request_of_the_backend_running():
    """Every worker of the openai backend is cancelled before its client closes (one was not: it went on asking
    through the closed client and printed "unhandled exception during asyncio.run() shutdown")."""
    import asyncio

    from culturebench.evaluate.models.backends import OpenAIBackend
    from culturebench.chat import BackendError, ChatRequest

    requests = [ChatRequest(messages=(("user", f"q{i}"),)) for i in range(12)]
    with ScriptedServer(faults=slow_after_the_probe_then(401), slow_seconds=2.0) as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=4)

        async def run() -> set:
            with pytest.raises(BackendError, match="HTTP 401"):
                await backend._generate(requests, lambda index, response: None)
            return {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}

        left = asyncio.run(run())
    assert left == set()


# --- 6. a model's answer that is not text ---

@pytest.mark.parametrize(("name", "field", "message"), [
    ("normad", "response", "response must be text, got a JSON object"),
    ("cdeval", "response", "response must be text, got a JSON object"),
    ("wvb", "output", "output must be text, got a JSON object"),
    ("wvb", "answer", "answer must be a whole number, got a JSON object"),
])
def test_score_refuses_an_answer_that_is_not_text_naming_file_line_and_field(bundled_release, tmp_path, name,
                                                                            field, message):
    release = bundled_release(name)
    with ScriptedServer(reply=story_number_reader) as server:
        run = CliRunner().invoke(app, ["evaluate", name, "--model", "scripted-model", "--release", str(release),
                                       "--base-url", server.base_url, "--limit", "2", "--samples", "1",
                                       "--out", str(tmp_path / "run")])
    assert run.exit_code == 0, run.output
    lines = (tmp_path / "run" / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    assert field in record
    record[field] = {"text": record[field]}
    altered = tmp_path / "altered.jsonl"
    altered.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["score", name, "--responses", str(altered), "--release", str(release),
                                      "--out", str(tmp_path / "scored")])
    assert one_line_error(result) == f"error: {altered}, row 2, column {field}: {message}"
    assert not (tmp_path / "scored" / "metrics.json").exists()


# --- 8. what a newcomer meets ---

@pytest.mark.parametrize(("typed", "said"), [
    ("./relases/wvb", "./relases/wvb: release folder not found"),
    ("releases/cdevall", "releases/cdevall: release folder not found; releases/ holds: cdeval"),  # releases/ is here
    ("releases/cdeval/extra/", "releases/cdeval/extra/: release folder not found"),
])
@pytest.mark.parametrize("command", ["info", "evaluate"])
def test_a_mistyped_release_folder_is_said_missing_not_looked_up_on_the_hub(tmp_path, monkeypatch, typed, said,
                                                                           command):
    import culturebench.hub_release as hub

    monkeypatch.chdir(tmp_path)
    (tmp_path / "releases" / "cdeval").mkdir(parents=True)
    (tmp_path / "releases" / "cdeval" / "manifest.json").write_text("{}")
    monkeypatch.setattr(hub, "fetch", lambda *args: pytest.fail("looked up on the Hub"))
    args = {"info": ["info", typed],
            "evaluate": ["evaluate", "cdeval", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--release",
                         typed, "--out", "run"]}[command]
    assert one_line_error(CliRunner().invoke(app, args)) == f"error: {said}"


def test_a_run_that_cannot_connect_leaves_no_folder(release, tmp_path):
    from culturebench.evaluate.models.local_model import free_port

    out = tmp_path / "runs" / "first"
    result = evaluate_normad(release, out, "--base-url", f"http://127.0.0.1:{free_port()}/v1")
    assert "connection refused" in one_line_error(result)
    assert not (tmp_path / "runs").exists()  # nor the parent it created


@pytest.mark.slow
def test_the_printed_summary_says_how_many_retries_and_why(release, tmp_path):
    """A one-slot server (as serve-local's) behind 8 requests in flight: the queued ones time out and are retried, and
    the summary line says so, as run.json counts them. Slow: requests queue behind a one-slot server until they time out
    and are retried."""
    out = tmp_path / "run"
    with ScriptedServer(reply=story_number_reader, parallel=1, latency=0.15) as server:
        result = evaluate_normad(release, out, "--base-url", server.base_url, "--concurrency", "8", "--timeout",
                                 "0.6", "--max-wait", "0.05")
    assert result.exit_code == 0, result.output
    runner = json.loads((out / "run.json").read_text())["runner"]
    assert runner["retries"] > 0 and runner["transient"]["timeout"] > 0
    timeouts = runner["transient"]["timeout"]
    assert f"queried; {runner['retries']} retries: {timeouts} timeout{'s' * (timeouts > 1)}" in result.output


# --- 5. the endpoint given wrong ---

def test_a_full_endpoint_url_is_refused_naming_the_base_url_to_give(release, tmp_path):
    line = one_line_error(evaluate_normad(release, tmp_path / "run", "--base-url",
                                          "http://127.0.0.1:8080/v1/chat/completions"))
    assert "is the full endpoint: give its base URL, http://127.0.0.1:8080/v1, without /chat/completions" in line


def test_a_404_at_a_base_url_without_v1_says_which_base_url_to_give(release, tmp_path):
    with ScriptedServer(faults=lambda number, body: 404) as server:  # as vLLM answers POST /chat/completions
        root = server.base_url.removesuffix("/v1")
        line = one_line_error(evaluate_normad(release, tmp_path / "run", "--base-url", root))
    assert f"no chat completions route at {root}/chat/completions" in line and "HTTP 404" in line
    assert f"give --base-url {root}/v1" in line
