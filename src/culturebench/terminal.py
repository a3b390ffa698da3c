"""The command line's terminal: user text printed as written (``say``), one-line errors and exit codes
(``user_errors``), reports on stdout (``plain_console``) and the ``--release`` help the commands share."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from culturebench.errors import ChecksFailed, InputError

console = Console(stderr=True)


RELEASE_HELP = ("A release folder (e.g. releases/NAME), or a published one: a Hub dataset repo ORG/NAME[@revision], "
                "fetched into the huggingface-hub cache and checked against its manifest.json (offline: the cache). "
                "Written as a path (./x, x/y/z, or under a folder that exists here) it is always a folder.")
"""A str, not a Path, in the commands that take it: ``./relases/NAME`` must reach ``release_reader.Release.open`` as
typed (a Path drops the ``./`` that marks it a folder)."""


def say(text: str, style: str | None = None, out: Console = console) -> None:
    """Print user text (paths, messages, model output) as it is: no rich markup, so ``[local]`` or ``raw[v2]`` stay."""
    out.print(Text(str(text), style=style or ""), highlight=False, soft_wrap=True)


def say_written(line: str, written: list[Path]) -> None:
    """A command's summary line, then one ``  wrote PATH`` line per file it wrote."""
    say(line)
    for path in written:
        say(f"  wrote {path}")


def error_line(exc: BaseException) -> None:
    """The one line of a user error: ``error: <file>, row <n>, column <c>: <message>``."""
    from culturebench.evaluate.models.redaction import redact

    console.print(Text.assemble(("error:", "bold red"), " ", redact(str(exc))), highlight=False, soft_wrap=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like Ctrl-C so that a release being written is discarded the same way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _terminate(signum: int, frame) -> None:
    raise Terminated(signum)


@contextmanager
def user_errors() -> Iterator[None]:
    """Report an input or path problem as one line and exit 2, failed release checks as one line and exit 1;
    Ctrl-C, SIGTERM and SIGHUP exit 130 / 143 / 129 (an output folder being written is discarded)."""
    handled = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    previous = {}
    try:
        for signum in handled:
            previous[signum] = signal.signal(signum, _terminate)
    except ValueError:  # not the main thread: leave the signals alone
        previous = {}
    try:
        yield
    except InputError as exc:
        error_line(exc)
        raise typer.Exit(2) from None
    except ChecksFailed as exc:
        error_line(exc)
        raise typer.Exit(1) from None
    except OSError as exc:  # a path the user gave cannot be read or written (a file where a folder is needed, ...)
        where = f"{exc.filename}: " if exc.filename else ""
        error_line(InputError(f"{where}{exc.strerror or exc}"))
        raise typer.Exit(2) from None
    except KeyboardInterrupt as exc:
        say("interrupted; what was being written was discarded (earlier outputs are unchanged)", style="yellow")
        raise typer.Exit(128 + exc.signum if isinstance(exc, Terminated) else 130) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def plain_console() -> Console:
    """stdout for reports: in a pipe or file no wrapping (a line is one record, tables at their natural width)."""
    terminal = Console()
    return terminal if terminal.is_terminal else Console(width=100_000, soft_wrap=True)
