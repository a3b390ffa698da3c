"""User-facing errors: one line that names the file, the row or page and the column."""

from __future__ import annotations

from pathlib import Path


EXCERPT_CHARACTERS = 80
"""The most characters of the user's text (a line, a header, a value) an error message quotes."""


def excerpt(text: object, limit: int = EXCERPT_CHARACTERS) -> str:
    """``str(text)`` for an error message, cut to its first ``limit`` characters when longer (with ``...`` and its
    length): a header or value read from a file of another kind (a JSON record taken for a CSV header) stays one
    short line."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


class InputError(Exception):
    """A problem with the user's input (a file, a flag), reported as one line without a traceback.

    ``row`` is the 1-based data row (header not counted); ``row=0`` is the header and is shown as "header"."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        row: int | None = None,
        page: int | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.row = row
        self.page = page
        self.column = column
        super().__init__(str(self))

    def relative_to(self, root: Path) -> InputError:
        """The same error with its file named relative to ``root`` (the raw folder) when it lies inside it."""
        if self.file is not None:
            path, root = Path(self.file), Path(root)
            for base in (root, root.resolve()):
                if path.is_absolute() == base.is_absolute() and path.is_relative_to(base) and path != base:
                    self.file = path.relative_to(base).as_posix()
                    break
            self.args = (str(self),)
        return self

    def __str__(self) -> str:
        row = None if self.row is None else "header" if self.row == 0 else f"row {self.row}"
        where = [part for part in (
            self.file,
            row,
            f"page {self.page}" if self.page is not None else None,
            f"column {self.column}" if self.column is not None else None,
        ) if part]
        return f"{', '.join(where)}: {self.message}" if where else self.message


class ChecksFailed(Exception):
    """A build whose release fails validation checks: the release is not written (an existing one is kept); the
    validation report is kept in ``report`` for the user to read."""

    def __init__(self, benchmark: str, failed: list[str], report: Path) -> None:
        self.benchmark = benchmark
        self.failed = failed
        self.report = Path(report)
        shown = "; ".join(failed[:3]) + (f"; and {len(failed) - 3} more" if len(failed) > 3 else "")
        super().__init__(f"{benchmark}: {len(failed)} check(s) failed ({shown}); release not written, "
                         f"report in {self.report}")
