"""Every evaluation run ends cleanly (issue #46): one run per run folder, every wait capped, one fault table for every
backend, one error line and nothing else on the way out, nothing written by a run that got no answer. Servers are
the scripted one on 127.0.0.1; the exit paths run as real processes (``python -m culturebench.cli``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import one_line_error
from culturebench.cli import app
from culturebench.evaluate.runs import LOCK_FILE, hold_run_folder
from culturebench.evaluate.scripted_server import ScriptedServer
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


def test_two_identical_runs_started_together_never_both_fail(release, tmp_path):
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
from culturebench.evaluate.runs import hold_run_folder
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
