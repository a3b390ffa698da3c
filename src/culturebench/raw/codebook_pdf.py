"""Parse the official WVS-7 *Codebook Variables report* PDF into a :class:`Codebook` (words read with PDFium,
as pdfplumber's extract_words gives them: :mod:`culturebench.raw.pdf_words`).

The report is laid out in two columns. A variable starts with a header line in a bold font: the name in the
left column (``Q46``), the short title in the right column (``Feeling of happiness``, sometimes wrapped onto
a second bold line). Below it, in the right column, come the question text (usually italic) and the answer
choices (``1.- Very happy``, missing codes ``-1-.- Don´t know``), which may run on over a page break. A few
technical variables list their codes as tables (``8 - Albania   422 - Lebanon``). The *Annex* at the end holds
long country-specific code lists, each under a heading naming its variables (``Political parties list
(Q223)``); these are merged into the named variables' choices.

Only one pass over each page's words is made (reading a page's characters is what costs the time), in parallel,
one process per CPU (``PAGE_WORKERS``, ``python -m culturebench.raw.codebook_pdf``), each reading runs of pages; the
lines are fed in page order. :class:`CodebookParse` starts the readers at once, so that a build reads its respondents
while they read the pages.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from culturebench.errors import InputError
from culturebench.io import child_python_env
from culturebench.raw.codebook import Codebook, Variable
from culturebench.raw.pdf_words import Fonts, PdfReadError, Word, open_pdf, page_words

HEADER_MARGIN = 90.0  # running header ("The WORLD VALUES SURVEY ASSOCIATION", web address) lies above this
FOOTER_MARGIN = 55.0  # the page number starts within this distance of the page bottom (body lines end above)
HEADING_SIZE = 13.0  # section headings are set at 16 pt and more, body text at 10 pt
LINE_TOLERANCE = 3.0  # words whose tops differ by less belong to the same line
CELL_GAP = 8.0  # a horizontal gap wider than this separates columns (ordinary word spaces are under 5 pt)
COLUMN_SLACK = 3.0  # how far left of the title column a word may start and still belong to it
SEARCH_PAGES = 10  # a codebook has variable headers within its first pages
PAGE_WORKERS = os.cpu_count() or 1
"""Processes reading the pages (1: all in this process)."""
PAGE_RUNS_PER_WORKER = 4  # runs of pages per worker: a slow run (dense tables) does not leave a worker idle
MIN_VARIABLES = 50

CHOICE = re.compile(r"(-?\d+)(?:-\d+)?-?\.-\s*(.*)")  # "1.- Very happy", "-1-.- Don´t know", "7-89.- 7 or more"
CELL_PAIR = re.compile(r"(-?\d+|[A-Z]{2,4})\s+(?:-\s+)?(\S.*)")  # table cell "8 - Albania", "ALB - Albania"
CELL_CODE = re.compile(r"(-?\d+|[A-Z]{2,4})(?:\s*-)?")  # table cell holding only a code; its label follows
ANNEX_CODE = re.compile(r"-?\d+")
PARENTHESES = re.compile(r"\(([^)]*)\)")
ANNEX_NAME_FIXES = {"Q277Q": "Q277A"}  # typo in the V6.0 annex heading "(Q275A, Q276A, Q277Q, Q278A)"


@dataclass
class _Draft:
    """A variable while its lines are being read."""

    name: str
    page: int
    column_x: float
    title: list[str]
    question: list[str] = field(default_factory=list)
    choices: dict[int, str] = field(default_factory=dict)
    last_code: int | None = None

    def variable(self, extra_choices: dict[int, str]) -> Variable:
        choices = dict(self.choices)
        choices.update((code, label) for code, label in extra_choices.items() if code not in choices)
        return Variable(
            name=self.name,
            title=_normalise(" ".join(self.title)),
            question=_normalise(" ".join(self.question)),
            choices={code: _normalise(label) for code, label in choices.items()},
            page=self.page,
        )


@dataclass
class _Parser:
    """Feeds lines in reading order; keeps the variables and the annex code lists."""

    drafts: dict[str, _Draft] = field(default_factory=dict)
    current: _Draft | None = None
    in_annex: bool = False
    heading: str = ""
    previous_was_heading: bool = False
    annex_lists: dict[str, dict[int, str]] = field(default_factory=dict)
    annex_targets: list[str] = field(default_factory=list)
    last_annex_code: int | None = None

    def feed(self, line: list[Word], page: int) -> None:
        if _height(line[0]) >= HEADING_SIZE:
            self._heading(_text(line))
            return
        self.previous_was_heading = False
        if self.in_annex:
            self._annex_line(line)
        elif (header := _header(line)) is not None and self._in_left_column(line[0]):
            self._start(header, page)
        elif self.current is not None:
            self._body_line(self.current, line)

    def _in_left_column(self, word: Word) -> bool:
        """Whether a word lies left of the current variable's title column (a bold title continuation does not)."""
        return self.current is None or word["x0"] < self.current.column_x - COLUMN_SLACK

    def _heading(self, text: str) -> None:
        """Section headings end the current variable; in the annex they name the variables of the code list."""
        self.current = None
        self.heading = f"{self.heading} {text}" if self.previous_was_heading else text
        self.previous_was_heading = True
        if self.heading.strip().lower() == "annex":
            self.in_annex = True
        if self.in_annex:
            names = [n.strip() for group in PARENTHESES.findall(self.heading) for n in group.split(",")]
            self.annex_targets = [ANNEX_NAME_FIXES.get(n, n).upper() for n in names if n]
            self.last_annex_code = None

    def _start(self, header: tuple[str, list[Word], float], page: int) -> None:
        name, title, column_x = header
        self.current = None
        if name in self.drafts:  # a repeated header: keep the first entry, ignore the repeat's lines
            return
        self.current = self.drafts[name] = _Draft(name=name, page=page, column_x=column_x, title=[_text(title)])

    def _body_line(self, draft: _Draft, line: list[Word]) -> None:
        words = [w for w in line if w["x0"] >= draft.column_x - COLUMN_SLACK and not _is_bold_italic(w)]
        if not words:  # left-column notes ("Colombia", "(G310)") and "Country-specific question" tags
            return
        text = _text(words)
        if _is_bold(words[0]) and not draft.question and not draft.choices:
            draft.title.append(text)
        elif match := CHOICE.fullmatch(text):
            draft.last_code = int(match[1])
            draft.choices[draft.last_code] = match[2]
        elif (pairs := _table_pairs(_cells(words))) is not None:
            for code, label in pairs:
                if ANNEX_CODE.fullmatch(code):  # letter codes (ALB - Albania) do not fit int codes: skipped
                    draft.last_code = int(code)
                    draft.choices[draft.last_code] = label
        elif draft.last_code is not None and not _is_italic(words[0]):
            draft.choices[draft.last_code] += " " + text
        else:
            draft.question.append(text)

    def _annex_line(self, line: list[Word]) -> None:
        if not self.annex_targets or _is_bold(line[0]):  # bold lines are country sub-headings
            return
        cells = _cells(line)
        if len(cells) >= 2 and ANNEX_CODE.fullmatch(cells[0]):
            self.last_annex_code = int(cells[0])
            for name in self.annex_targets:
                self.annex_lists.setdefault(name, {})[self.last_annex_code] = " ".join(cells[1:])
        elif self.last_annex_code is not None and len(cells) == 1:  # a wrapped label
            for name in self.annex_targets:
                self.annex_lists[name][self.last_annex_code] += " " + cells[0]

    def codebook(self, path: Path) -> Codebook:
        if len(self.drafts) < MIN_VARIABLES:
            raise InputError(
                f"only {len(self.drafts)} variable headers found (expected at least {MIN_VARIABLES}); "
                "is this the WVS-7 'Codebook Variables report'?",
                file=path,
            )
        variables = {
            name: draft.variable(self.annex_lists.get(name.upper(), {})) for name, draft in self.drafts.items()
        }
        return Codebook(variables=variables, source=str(path))


def parse_codebook_pdf(path: Path) -> Codebook:
    """Parse the WVS-7 Codebook Variables report PDF; raise :class:`InputError` for unreadable or foreign PDFs."""
    with contextlib.closing(CodebookParse(path)) as parse:
        return parse.codebook()


class CodebookParse:
    """A parse of the codebook PDF at ``path`` under way. The page readers (PAGE_WORKERS processes, each taking every
    PAGE_WORKERS-th run of pages) start at once, so that whatever the caller does before :meth:`codebook` (a build
    reads the respondents) overlaps them; :meth:`codebook` feeds their pages to the parser in order, :meth:`close`
    stops them. An unreadable file fails here, a foreign PDF in :meth:`codebook`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        total = _page_count(self.path)
        workers = max(1, min(PAGE_WORKERS, total))
        size = max(1, -(-total // (workers * PAGE_RUNS_PER_WORKER)))
        self._runs = [(start, min(start + size, total + 1)) for start in range(1, total + 1, size)]
        self._shares = [self._runs[k::workers] for k in range(workers)]
        self._readers = _start_page_readers(self.path, self._shares) if workers > 1 else []

    def codebook(self) -> Codebook:
        parser = _Parser()
        pages = (_collect_pages(self.path, self._readers, self._shares) if self._readers
                 else _read_pages(str(self.path), self._runs)[1])
        for page_number, lines in _checked(self.path, pages):
            for line in lines:
                parser.feed(line, page_number)
            if page_number == SEARCH_PAGES and not parser.drafts:
                raise InputError(
                    f"no codebook variable headers (bold 'Q46 Feeling of happiness' style lines) on pages "
                    f"1-{SEARCH_PAGES}; is this the WVS-7 'Codebook Variables report'?",
                    file=self.path,
                )
        return parser.codebook(self.path)

    def close(self) -> None:
        """Stop the page readers still running (a foreign PDF, or the caller's own error, leaves them unread)."""
        for process in self._readers:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()


def _page_count(path: Path) -> int:
    try:
        document = open_pdf(str(path))
    except PdfReadError as exc:
        raise InputError(f"not a readable PDF ({_describe(exc)})", file=path) from None
    with document:
        return len(document)


def _start_page_readers(path: Path, shares: list[list[tuple[int, int]]]) -> list[subprocess.Popen]:
    """A process per share of runs, each doing :func:`_read_pages` (``python -m`` this module: unlike a
    multiprocessing worker it never re-imports the caller's main module, and forks nothing of its threads)."""
    command = [sys.executable, "-m", "culturebench.raw.codebook_pdf"]
    processes = []
    for share in shares:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_python_env())
        processes.append(process)
        process.stdin.write(json.dumps({"path": str(path), "runs": share}).encode())
        process.stdin.close()
    return processes


def _collect_pages(path: Path, processes: list[subprocess.Popen],
                   shares: list[list[tuple[int, int]]]) -> Iterator[tuple[int, list | str]]:
    """The pages the page readers read, in page order. A reader answers one pickle per run, unpickled only when its
    pages are next: the words of all pages are never in memory at once, which would leave this process (the build)
    some 50 MB larger for the rest of its run."""
    runs: dict[tuple[int, int], bytes] = {}
    for process, share in zip(processes, shares):
        answer = process.stdout.read()
        if process.wait() != 0:
            raise InputError(f"PDF pages cannot be read (a page reader exited with {process.returncode})", file=path)
        runs.update(zip(share, pickle.loads(answer)))
        del answer
    for run in sorted(runs):
        yield from pickle.loads(runs.pop(run))


def _checked(path: Path, pages: Iterable[tuple[int, list[list[Word]] | str]]) -> Iterator[tuple[int, list[list[Word]]]]:
    """The pages of :func:`_read_pages`, raising the first failure as an InputError (page 0: the file)."""
    for number, lines in pages:
        if isinstance(lines, str):
            if number == 0:
                raise InputError(f"not a readable PDF ({lines})", file=path)
            raise InputError(f"PDF page cannot be read ({lines})", file=path, page=number)
        yield number, lines


def _read_pages(path: str, runs: list[tuple[int, int]]) -> tuple[int, list[tuple[int, list[list[Word]] | str]]]:
    """The PDF's page count and (page number, body lines) for the pages of ``runs`` ([start, stop) each); a failure
    ends the list with (page number, its description), page 0 when the file itself cannot be read."""
    out: list[tuple[int, list[list[Word]] | str]] = []
    try:
        document = open_pdf(path)
    except PdfReadError as exc:
        return 0, [(0, _describe(exc))]
    with document:
        total, fonts = len(document), Fonts()
        for start, stop in runs:
            for number in range(start, min(stop, total + 1)):
                try:
                    height, words = page_words(document, number - 1, fonts)
                except PdfReadError as exc:
                    return total, [*out, (number, _describe(exc))]
                body = [w for w in words if HEADER_MARGIN <= w["top"] < height - FOOTER_MARGIN]
                out.append((number, _group_lines(body)))
        return total, out


def _group_lines(words: list[Word]) -> list[list[Word]]:
    """Words grouped into lines (top to bottom), each sorted left to right."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if lines and word["top"] - lines[-1][0]["top"] < LINE_TOLERANCE:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w["x0"]) for line in lines]


def _header(line: list[Word]) -> tuple[str, list[Word], float] | None:
    """(name, title words, x of the title column) when the line starts a variable, else None.

    A header's first word is a bold variable name (``Q46``, ``B_COUNTRY``, ``DE_Q221a``, ``VERSION``) standing
    alone in the left column; bold left-column notes such as ``Colombia`` or ``(G310)`` are not names.
    """
    first = line[0]
    name = first["text"]
    if not _is_bold(first) or _is_italic(first) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        return None
    if not (name.isupper() or any(c.isdigit() or c == "_" for c in name)):
        return None
    title = line[1:]
    if title and title[0]["x0"] - first["x1"] <= CELL_GAP:
        return None
    return name, title, title[0]["x0"] if title else first["x1"] + CELL_GAP


def _cells(words: list[Word]) -> list[str]:
    """The line's text split at wide horizontal gaps (table columns)."""
    cells: list[list[Word]] = []
    for word in words:
        if cells and word["x0"] - cells[-1][-1]["x1"] <= CELL_GAP:
            cells[-1].append(word)
        else:
            cells.append([word])
    return [_text(cell) for cell in cells]


def _table_pairs(cells: list[str]) -> list[tuple[str, str]] | None:
    """Code/label pairs of a table line with two or more cells, or None when it is not such a line."""
    cells = [cell for cell in cells if cell not in ("-", "–")]  # B_COUNTRY sets "8", "-", "Albania" apart
    if len(cells) < 2:
        return None
    pairs: list[tuple[str, str]] = []
    pending: str | None = None
    for cell in cells:
        if pending is not None:
            pairs.append((pending, cell))
            pending = None
        elif match := CELL_PAIR.fullmatch(cell):
            pairs.append((match[1], match[2]))
        elif match := CELL_CODE.fullmatch(cell):
            pending = match[1]
        else:
            return None
    return pairs if pending is None else None


def _text(words: list[Word]) -> str:
    return " ".join(w["text"] for w in words)


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _height(word: Word) -> float:
    return word["bottom"] - word["top"]


def _is_bold(word: Word) -> bool:
    return "bold" in word["fontname"].lower()


def _is_italic(word: Word) -> bool:
    font = word["fontname"].lower()
    return "italic" in font or "oblique" in font


def _is_bold_italic(word: Word) -> bool:
    return _is_bold(word) and _is_italic(word)


def _describe(exc: Exception) -> str:
    """A one-line description of a library exception."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _pickled_runs(path: str, runs: list[tuple[int, int]]) -> list[bytes]:
    """What a page reader answers: per run, the pickle of its pages as :func:`_read_pages` gives them (a failure
    ends its run's list and leaves the later runs empty; a file that cannot be read is told in the first run)."""
    pages = _read_pages(path, runs)[1]
    return [pickle.dumps([page for page in pages if start <= page[0] < stop or (page[0] == 0 and index == 0)])
            for index, (start, stop) in enumerate(runs)]


if __name__ == "__main__":  # a page reader of _start_page_readers: JSON {path, runs} in, a pickle per run out
    request = json.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(pickle.dumps(_pickled_runs(request["path"], [tuple(run) for run in request["runs"]])))
