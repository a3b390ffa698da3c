"""The run folder's lock: one run of ``culturebench evaluate`` holds a run folder at a time (``hold_run_folder``);
the engine (``engine.run``) takes it before any model is made."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from culturebench.errors import InputError

LOCK_FILE = ".lock"
"""The run folder's lock (``hold_run_folder``): present while a run holds the folder, with its pid."""


@contextlib.contextmanager
def hold_run_folder(out: Path, wait: bool = False,
                    on_wait: Callable[[str], None] = lambda holder: None) -> Iterator[Path]:
    """Hold the run folder ``out`` for one run: an exclusive ``flock`` on RUN_DIR/.lock, which holds the pid of the
    run holding it. The kernel releases the lock when the process ends, however it ends (a crash or ``kill -9``
    leaves a stale file that the next run simply locks again). A folder held by another run is an InputError naming
    its pid, or, with ``wait``, waited for (``on_wait(holder)`` is called first). On the way out the lock file is
    removed, and so are the folders this call created when nothing else was written into them (a run that could
    not reach its server leaves no empty folder)."""
    import fcntl

    out = Path(out)
    path = out / LOCK_FILE
    created: list[Path] = []
    while True:
        created += [p for p in (out, *out.parents) if not p.exists() and p not in created]
        out.mkdir(parents=True, exist_ok=True)  # again after waiting: the holder removes a folder it left empty
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _lock_holder(fd)
                if not wait:
                    raise InputError(f"held by another run ({holder}); run one command per --out folder, or give "
                                     "--wait-for-lock to wait for it to end", file=out) from None
                on_wait(holder)
                fcntl.flock(fd, fcntl.LOCK_EX)
            with contextlib.suppress(FileNotFoundError):  # the holder removes the file as it ends: lock the new one
                if os.stat(path).st_ino == os.fstat(fd).st_ino:
                    break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield out
    finally:
        path.unlink(missing_ok=True)  # while still held: a waiting run then finds the file gone and locks anew
        os.close(fd)
        for folder in sorted(created, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):  # not empty: the run wrote something
                folder.rmdir()


LOCK_PID_WAIT_S = 1.0
"""How long a refused run waits for the holder to write its pid (it writes it right after it locks: a run started
at the same moment may look in between)."""


def _lock_holder(fd: int) -> str:
    """Who holds a run folder's lock, as its error names it: "pid N" from the lock file (waiting up to
    LOCK_PID_WAIT_S for a holder that has just locked it)."""
    import time

    deadline = time.monotonic() + LOCK_PID_WAIT_S
    while True:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return f"pid {text}"
        if time.monotonic() >= deadline:
            return "pid unknown: it is starting"
        time.sleep(0.02)
