"""``vllm_process`` without vLLM: the first signal kills the engine's processes and raises the command's own stop,
a second one ends the process at once, an engine's child processes are killed and reaped, vLLM's output goes to the
run folder's log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from culturebench.evaluate.models import vllm_process


class Stop(KeyboardInterrupt):
    pass


def test_first_signal_kills_then_raises_the_previous_handlers_stop():
    killed: list[str] = []

    def previous(signum, frame):
        raise Stop(signum)

    old = signal.signal(signal.SIGTERM, previous)
    try:
        with pytest.raises(Stop):
            with vllm_process.stop_on_signals(lambda: killed.append("engine")) as signals:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)  # the handler runs here
        assert killed == ["engine"] and signals.received == [signal.SIGTERM]
        assert signal.getsignal(signal.SIGTERM) is previous  # restored
    finally:
        signal.signal(signal.SIGTERM, old)


def test_a_swallowed_signal_is_raised_again():
    """A wait that catches the interrupt (vLLM's) does not lose it: ``raise_again`` raises the same stop."""
    old = signal.signal(signal.SIGTERM, lambda signum, frame: (_ for _ in ()).throw(Stop(signum)))
    try:
        with pytest.raises(Stop):
            with vllm_process.stop_on_signals(lambda: None) as signals:
                try:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(1)
                except Stop:
                    pass  # swallowed
                signals.raise_again()
    finally:
        signal.signal(signal.SIGTERM, old)


def test_second_signal_exits_at_once_and_children_are_killed(tmp_path):
    """In a process of its own: an engine stand-in (a child sleeping 600 s) is recorded; the first SIGINT's stop is
    caught by a slow cleanup (as a hung engine shutdown would be); a second SIGINT ends the process with 130 at
    once, and the child is gone."""
    pid_file = tmp_path / "child.pid"
    script = textwrap.dedent(f"""
        import subprocess, sys, time
        from culturebench.evaluate.models import vllm_process
        processes = vllm_process.EngineProcesses()
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        processes.record()
        open({str(pid_file)!r}, "w").write(str(child.pid))
        with vllm_process.stop_on_signals(processes.kill):
            try:
                print("ready", flush=True)
                time.sleep(600)
            except KeyboardInterrupt:
                time.sleep(600)  # a cleanup that hangs
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert process.stdout.readline().strip() == "ready"
    child = int(pid_file.read_text())
    process.send_signal(signal.SIGINT)
    time.sleep(1)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=10) == 130
    assert not vllm_process.running(child)  # gone, or a zombie left for the system to reap


def test_output_goes_to_the_log_and_comes_back(tmp_path):
    log = tmp_path / "run" / "vllm.log"
    script = textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        from culturebench.evaluate.models import vllm_process
        with vllm_process.output_to(Path({str(log)!r})):
            print("Triton is installed, but doesn't include CPU backend", flush=True)
            os.write(2, b"RuntimeError: CPU Generator does not use offset\\n")
        print("after", flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0 and done.stdout == "after\n" and done.stderr == ""
    assert "Triton" in log.read_text() and vllm_process.last_error(log) == (
        "RuntimeError: CPU Generator does not use offset")


def test_a_signal_stops_the_wait_for_a_start_that_would_swallow_it():
    """The engine starts in a helper thread (``in_thread``): the signal's stop is raised in the waiting main thread
    at once, whatever the start does with it (here: a start that would block 30 s more)."""
    import threading

    old = signal.signal(signal.SIGTERM, lambda signum, frame: (_ for _ in ()).throw(Stop(signum)))
    try:
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
        started = time.monotonic()
        with pytest.raises(Stop):
            with vllm_process.stop_on_signals(lambda: None):
                vllm_process.in_thread(lambda: time.sleep(30), "start")
        assert time.monotonic() - started < 5
    finally:
        signal.signal(signal.SIGTERM, old)
    assert vllm_process.in_thread(lambda: 7, "value") == 7
