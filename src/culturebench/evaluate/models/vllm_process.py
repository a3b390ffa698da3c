"""The processes and output of an in-process vLLM engine: its core process (and the workers under it) tracked and
killed, signals that stop a run at any moment (engine start included), and vLLM's log kept in the run folder.

vLLM's offline engine starts an engine-core child process and waits for it with a ZeroMQ poll loop; a SIGTERM or
Ctrl-C that lands in that loop, or in a step, was swallowed or turned into "engine did not start" minutes later, and
the core was left behind (issue #52). ``stop_on_signals`` kills the engine's processes at the first signal, so that
whatever vLLM is waiting for ends at once, and raises the command's own interrupt; a second signal ends the process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
LOG_NAME = "vllm.log"
"""vLLM's own output in the run folder: its log (INFO), the engine core's, and what its libraries print."""
NOISE = ("Triton", "triton", "NUMA", "numa", "FutureWarning", "core_worker")
"""Words of the lines vLLM and its libraries print on every CPU run that are no fault of the run (Triton not
installed, NUMA binding, FutureWarnings of transformers/torch, Ray's ``E core_worker`` at start): kept in the log,
never echoed to the terminal."""


def descendants() -> set[int]:
    """The process ids of every live process under this one (psutil: a vLLM dependency), or of the direct
    ``multiprocessing`` children without it."""
    try:
        import psutil
    except ImportError:
        import multiprocessing

        return {p.pid for p in multiprocessing.active_children() if p.pid}
    try:
        return {child.pid for child in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


def kill_processes(pids: set[int], grace_s: float = 5.0) -> None:
    """SIGKILL ``pids`` (those still alive) and wait, at most ``grace_s``, until each is gone or a zombie. Not reaped
    here: the engine core is a ``multiprocessing`` child, and a child reaped behind its back stays "alive" to it (its
    ``poll`` takes the missing child for one not yet started), so vLLM's shutdown would wait on it forever; vLLM
    reaps it, or the system does once this process ends."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + grace_s
    for pid in pids:
        while time.monotonic() < deadline and running(pid):
            time.sleep(0.05)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie), from ``/proc`` where there is one."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


class EngineProcesses:
    """The processes one engine started: those under this process that were not there before it was made."""

    def __init__(self) -> None:
        self.before = descendants()
        self.pids: set[int] = set()

    def record(self) -> None:
        """Take the processes started since ``__init__`` as the engine's (call once it has started)."""
        self.pids = descendants() - self.before

    def kill(self) -> None:
        kill_processes(self.pids | (descendants() - self.before))
        self.pids = set()


def in_thread(make: Callable[[], object], name: str) -> object:
    """``make()`` in a daemon thread while this (the main) thread waits in short joins, so that a signal's exception
    is raised here, in our code, and not inside vLLM's start-up wait, which swallowed it and went on polling for an
    engine core the signal had killed (issue #52); the thread, left behind, fails on the dead core. ``make``'s
    exception is raised here."""
    result: dict[str, object] = {}

    def target() -> None:
        try:
            result["value"] = make()
        except BaseException as exc:  # noqa: BLE001 - raised in the waiting thread
            result["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return result["value"]


class Signals:
    """The stop signals received inside ``stop_on_signals`` and the handlers that were there before."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.previous: dict[int, object] = {}

    def raise_again(self) -> None:
        """Raise the first signal's interrupt once more (when the wait it interrupted swallowed it or turned it into
        an error of its own); nothing when no signal came."""
        if self.received:
            raise_interrupt(self.received[0], self.previous.get(self.received[0]))


@contextlib.contextmanager
def stop_on_signals(on_first: Callable[[], None]) -> Iterator[Signals]:
    """While inside: SIGINT, SIGTERM and SIGHUP call ``on_first()`` (kill the engine's processes), then the handler
    that was there before (the command line's raises its clean stop: "interrupted; N new answers kept", exit
    130/143/129; Python's own raises KeyboardInterrupt); a second signal ends the process at once with 128 + its
    number. Outside the main thread the signals are left alone."""
    signals = Signals()

    def on_signal(signum: int, frame) -> None:
        signals.received.append(signum)
        on_first()
        if len(signals.received) > 1:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(128 + signum)
        raise_interrupt(signum, signals.previous.get(signum))

    try:
        for signum in STOP_SIGNALS:
            signals.previous[signum] = signal.signal(signum, on_signal)
    except ValueError:  # not the main thread
        signals.previous = {}
    try:
        yield signals
    finally:
        for signum, handler in signals.previous.items():
            signal.signal(signum, handler)


def raise_interrupt(signum: int, handler) -> None:
    """Raise what ``handler`` (the signal's handler before ours) raises for ``signum``, else KeyboardInterrupt."""
    if callable(handler) and handler not in (signal.SIG_DFL, signal.SIG_IGN):
        handler(signum, None)
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def output_to(log: Path | None) -> Iterator[None]:
    """While inside, file descriptors 1 and 2 write to ``log`` (appended): what vLLM and its libraries print while
    the engine starts, and everything its engine core prints for its whole life (it inherits them), goes to the run
    folder instead of the terminal. Nothing changes without ``log``."""
    if log is None:
        yield
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    target = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 1)
        os.dup2(target, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, target):
            os.close(fd)


def last_error(log: Path | None, limit: int = 300) -> str | None:
    """The last line of ``log`` that names an error (``Error``/``error``, not the known noise), for the one-line
    message of an engine that did not start; None when there is none."""
    if log is None or not log.is_file():
        return None
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in reversed(lines):
        if ("Error" in line or "error" in line) and not any(word in line for word in NOISE):
            return " ".join(line.split())[:limit]
    return None
