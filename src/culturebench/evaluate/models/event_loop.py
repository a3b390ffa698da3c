"""A backend's coroutine run from synchronous code: ``asyncio.run`` with SIGTERM and SIGHUP handled as Ctrl-C
(``run_with_signals``), or in a helper thread where an event loop already runs (``run_coroutine``)."""

from __future__ import annotations

import asyncio
import signal
import threading


def run_with_signals(coro):
    """``asyncio.run``, with SIGTERM and SIGHUP handled as asyncio handles Ctrl-C: the running requests are cancelled
    (so no task is left holding the exception), then the signal's own Python handler runs (the command line's
    raises its clean-stop exception, exit 143 / 129)."""
    received: list[int] = []
    handled = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]

    async def main():
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        installed = {}
        for signum in handled:
            previous = signal.getsignal(signum)
            try:
                loop.add_signal_handler(signum, lambda n=signum: (received.append(n), task.cancel()))
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no such support
                continue
            installed[signum] = previous
        try:
            return await coro
        finally:
            for signum, previous in installed.items():
                loop.remove_signal_handler(signum)
                signal.signal(signum, previous)

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if not received:
            raise
        handler = signal.getsignal(received[0])
        if callable(handler):
            handler(received[0], None)
        raise KeyboardInterrupt(signal.Signals(received[0]).name) from None


def run_coroutine(coro):
    """``asyncio.run``, or the same in a helper thread when this thread already runs an event loop (notebooks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_with_signals(coro)
    result: dict = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=target, name="culturebench-backend")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result.get("value")
