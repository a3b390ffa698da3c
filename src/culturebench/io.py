"""The one place for file I/O helpers shared by every stage: strict decoding, CSV rows, JSON Lines records,
compressed members, hashing, atomic directories, JSON."""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import io
import json
import mmap
import os
import re
import shutil
import tempfile
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from culturebench.errors import InputError, excerpt


@dataclass(frozen=True)
class InputFile:
    """A raw input as recorded in the manifest: name relative to the raw folder, hash, size, rows read."""

    path: Path
    name: str
    sha256: str
    size: int
    rows: int
    encoding: str | None = None  # text inputs: the encoding they were decoded with ("utf-8" or FALLBACK_ENCODING)

    @classmethod
    def from_bytes(cls, path: Path, name: str, data: bytes, rows: int, encoding: str | None = None) -> InputFile:
        return cls(path=path, name=name, sha256=hashlib.sha256(data).hexdigest(), size=len(data), rows=rows,
                   encoding=encoding)


def input_name(path: Path, root: Path | None) -> str:
    """How a raw input is named in errors and the manifest: its path relative to the raw folder, else its file name."""
    path = Path(path)
    return str(path.relative_to(root)) if root is not None and path.is_relative_to(root) else path.name


def read_input_bytes(path: Path, name: str) -> bytes:
    """A raw input's bytes; a file that cannot be read or is empty is an InputError naming it (as ``name``)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", file=name) from None
    if not data.strip():
        raise InputError("file is empty", file=name)
    return data


FALLBACK_ENCODING = "cp1252"
"""The one other encoding a text input may be in (as Windows tools save CSV files), used only for a file that is
not UTF-8 at all (no valid multi-byte UTF-8 character anywhere) and decodes in it completely."""

_UTF8_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]"
    rb"|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}")


def decode_text(data: bytes, name: str) -> tuple[str, str]:
    """``(text, encoding)`` of a raw input, decoded strictly: UTF-8 (a BOM is allowed); a file with no valid
    multi-byte UTF-8 character that decodes completely in FALLBACK_ENCODING is read in that. Anything else (e.g.
    one stray byte in a UTF-8 file) is an InputError naming the line and byte offset of the first invalid byte."""
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return data[bom:].decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        offset = bom + exc.start
    if not _UTF8_MULTIBYTE.search(data):
        try:
            return data.decode(FALLBACK_ENCODING), FALLBACK_ENCODING
        except UnicodeDecodeError:
            pass
    line = data.count(b"\n", 0, offset) + 1
    raise InputError(f"line {line}, byte offset {offset}: byte 0x{data[offset]:02x} is not valid UTF-8 (the file is "
                     f"neither UTF-8 throughout nor {FALLBACK_ENCODING} throughout; re-save it as UTF-8)", file=name)


def read_input_text(path: Path, name: str) -> tuple[bytes, str, str]:
    """A raw input's bytes, text and encoding (see :func:`decode_text`)."""
    data = read_input_bytes(path, name)
    return (data, *decode_text(data, name))


def read_csv_rows(text: str, name: str, delimiter: str = ",") -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A delimited text's header (names stripped) and data rows as ``(row, fields)``, ``row`` the 1-based data row
    (header and blank lines not counted, a multi-line quoted field is one row). A header of one field that holds
    another delimiter, a column named twice, a row with more or fewer fields than the header and an unclosed quote
    are InputErrors naming the file, the row ("header" for row 0) and the column."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    row = 0
    try:
        header = [field.strip() for field in next(reader, [])]
        if not any(header):
            raise InputError("file is empty (no header line)", file=name)
        if len(header) == 1:
            for other, label in ((",", "comma"), (";", "semicolon"), ("\t", "tab"), ("|", "pipe")):
                if other != delimiter and other in header[0]:
                    raise InputError(f"wrong delimiter: the header is {label}-separated "
                                     f"({excerpt(repr(header[0]))}), expected {delimiter!r}-separated columns",
                                     file=name, row=0)
        seen = set()
        for column in header:
            if column in seen:
                raise InputError("column name appears more than once in the header", file=name, row=0, column=column)
            seen.add(column)
        rows = []
        for record in reader:
            if not any(field.strip() for field in record):
                continue
            row += 1
            if len(record) != len(header):
                column = missing_field_column(header, len(record))
                raise InputError(f"has {len(record)} fields, the header has {len(header)} (a {delimiter!r} too many "
                                 "or too few, or an unclosed quote?)", file=name, row=row, column=column)
            rows.append((row, record))
    except csv.Error as exc:
        message = str(exc)
        if "unexpected end of data" in message:
            message = "unclosed quote: the quoted field that starts on this row runs to the end of the file"
        elif "expected after" in message:
            message = f"a quote ends a field in the middle ({message}): a stray or unescaped quote?"
        raise InputError(f"malformed CSV: {message}", file=name, row=row + 1 if row or header else 0) from None
    return header, rows


def jsonl_objects(lines: Iterable[str], name: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line, object)`` for each non-blank line of JSON Lines, ``lines`` with their line ends (an open file, or
    ``text.splitlines(keepends=True)``). A line that is not JSON or not a JSON object is an InputError naming the file
    and the line; a last line without a line end that does not parse is reported as truncated."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            what = "line is not JSON" if line.endswith(("\n", "\r")) else "truncated line (no line end)"
            raise InputError(f"{what} ({exc.msg}, character {exc.colno})", file=name, row=number) from None
        if not isinstance(record, dict):
            raise InputError(f"line is a JSON {type(record).__name__}, expected an object", file=name, row=number)
        yield number, record


def missing_field_column(header: list[str], fields: int, needed: list[str] | None = None) -> str:
    """The column a row of ``fields`` fields lacks (the first one the reader needs, if given), or the extra one."""
    if fields > len(header):
        return f"#{len(header) + 1} (extra)"
    return next((c for c in header[fields:] if needed is None or c in needed), header[fields])


def child_python_env() -> dict[str, str]:
    """The environment for a ``python -m culturebench...`` child process: this culturebench first on PYTHONPATH (so
    that the child imports the same code as its parent, installed or not)."""
    package_root = str(Path(__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))


FIELD_COUNT_CHUNK = 16 << 20
"""Bytes of CSV whose commas are counted at once (cut at a newline)."""


def check_csv_field_counts(source: Path | bytes, name: str, header: list[str], needed: list[str] | None = None
                           ) -> None:
    """Every data row of a comma-separated file (a path, .csv.gz included, or bytes) has the header's number of
    fields, else an InputError naming the row and column; for readers (polars) that read only the columns they
    need and so never see an extra field. Commas are counted per line with numpy (~0.15 s for the 145 MB WVS-7 CSV);
    only a line whose count is off, or that has a quote, is parsed with the csv module (a quoted "Missing, Not
    available" is one field). Blank lines are skipped and not counted as rows."""
    with contextlib.ExitStack() as stack:
        if isinstance(source, bytes):
            data = source
        elif str(source).lower().endswith(".gz"):
            with compressed_errors(name), gzip.open(source, "rb") as handle:
                data = handle.read()
        elif Path(source).stat().st_size == 0:
            return
        else:  # mapped, not copied: the page cache is read in place
            handle = stack.enter_context(open(source, "rb"))
            data = stack.enter_context(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
        problem = _field_count_problem(data, name, header, needed)
    if problem is not None:  # raised once the map is closed (its frame, which views the map, is gone)
        raise problem


def _per_line(hits, starts):
    """How many of the bytes flagged in ``hits`` (a bool array) each line starting at ``starts`` holds: summed per
    line in 16 bits when no line is 65,535 bytes or longer (4x faster than 64 bits), none at all when none is
    flagged (a file without quotes)."""
    import numpy as np

    if not hits.any():
        return np.zeros(len(starts), dtype=np.int64)
    longest = int(np.diff(starts, append=len(hits)).max())
    return np.add.reduceat(hits.view(np.uint8), starts, dtype=np.uint16 if longest < 1 << 16 else np.int64)


def _field_count_problem(data, name: str, header: list[str], needed: list[str] | None) -> InputError | None:
    """The error for the first row of ``data`` (bytes or a map) without the header's number of fields, or None."""
    import numpy as np

    array = np.frombuffer(data, dtype=np.uint8)
    header_end = data.find(b"\n")
    if header_end < 0:
        return None
    odd: list[int] = []  # offsets of the lines whose comma count is not the header's, or that have quotes
    position = header_end + 1
    while position < len(data):
        end = min(position + FIELD_COUNT_CHUNK, len(data))
        if end < len(data):  # cut after the chunk's last newline (or the next one, for a very long line)
            last = data.rfind(b"\n", position, end)
            end = _line_end(data, end) + 1 if last < 0 else last + 1
        chunk = array[position:end]
        starts = np.concatenate(([0], np.flatnonzero(chunk[:-1] == 10) + 1))
        commas, quotes = (_per_line(chunk == byte, starts) for byte in (44, 34))
        odd += (position + starts[(commas != len(header) - 1) | (quotes > 0)]).tolist()
        position = end
    lines = [data[offset:_line_end(data, offset)] for offset in odd]
    blank = [not line.strip() for line in lines]
    blank_before = 0
    for offset, line, is_blank in zip(odd, lines, blank):
        if is_blank:
            blank_before += 1
            continue
        fields = len(next(csv.reader([line.decode("utf-8", "replace").rstrip("\r")]), []))
        if fields != len(header):
            newlines = np.count_nonzero(array[header_end + 1:] == 10)
            rows = newlines + (data[len(data) - 1:] != b"\n") - sum(blank)
            row = int(np.count_nonzero(array[header_end + 1:offset] == 10)) + 1 - blank_before
            what = "truncated last line: " if row == rows and fields < len(header) else ""
            return InputError(f"{what}has {fields} fields, the header has {len(header)} (a ',' too many or too "
                              "few?)", file=name, row=row, column=missing_field_column(header, fields, needed))
    return None


def _line_end(data: bytes, offset: int) -> int:
    """Offset of the newline that ends the line at ``offset`` (the data's length for an unterminated last line)."""
    end = data.find(b"\n", offset)
    return len(data) if end < 0 else end


MAX_INFLATED_BYTES = 4 << 30
"""Largest compressed member inflated (4 GiB: the full WVS-7 CSV is well under 1 GiB)."""
MAX_INFLATE_RATIO = 200
"""Largest ratio of inflated to compressed size (CSV files of codes compress about 10:1; deflate's limit is ~1000:1)."""
_CHUNK = 1 << 20


def read_zip_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, name: str) -> bytes:
    """A zip member's bytes, guarded against decompression bombs: the declared size and ratio are checked before
    anything is inflated, and the stream is cut off where it passes the declared size. Corrupt data (bad CRC,
    truncated stream) is an InputError."""
    where = f"zip member {member.filename!r}"
    ratio = member.file_size / max(member.compress_size, 1)
    if member.file_size > MAX_INFLATED_BYTES or ratio > MAX_INFLATE_RATIO:
        raise InputError(f"{where} would inflate to {member.file_size:,} bytes from {member.compress_size:,} "
                         f"(limit {MAX_INFLATED_BYTES:,} bytes, ratio {MAX_INFLATE_RATIO}:1): refusing a possible "
                         "decompression bomb", file=name)
    buffer = bytearray()
    with compressed_errors(name, where), archive.open(member) as handle:
        while block := handle.read(_CHUNK):
            buffer += block
            if len(buffer) > member.file_size:
                raise InputError(f"{where} inflates to more than its declared {member.file_size:,} bytes: "
                                 "refusing a possible decompression bomb", file=name)
    return bytes(buffer)


@contextmanager
def compressed_errors(name: str, what: str = "compressed file") -> Iterator[None]:
    """Turn a corrupt or truncated compressed stream (gzip, zip; also as polars reports it) into one InputError."""
    try:
        yield
    except (EOFError, zlib.error, gzip.BadGzipFile, zipfile.BadZipFile) as exc:
        raise InputError(f"{what} is corrupt or truncated ({exc or type(exc).__name__})", file=name) from None
    except OSError as exc:
        if exc.errno is not None:  # a real file-system error (permission, missing file), not a bad stream
            raise InputError(f"cannot read file ({exc.strerror})", file=name) from None
        raise InputError(f"{what} is corrupt or truncated ({exc})", file=name) from None


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path: Path, data: object) -> None:
    """Deterministic JSON: sorted keys, two-space indent, trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def output_folder(path: Path, option: str = "--out") -> Path:
    """A folder the user named for output: it may not exist yet, but neither it nor a parent may be a file."""
    path = Path(path)
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            raise InputError(f"{option} must be a folder, but this is a file", file=part)
    return path


def _create_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns those created, deepest first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create folder ({exc.strerror})", file=folder) from None
    return missing


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a temp dir beside ``target``; on success it replaces ``target`` by rename, on any error (or Ctrl-C,
    SIGTERM as the CLI raises it) it is removed, with the parent folders it had to create if they stayed empty.

    A crash or an interrupt therefore never leaves a half-written ``target``, and ``target`` is either the old or
    the new folder.
    """
    target = output_folder(target)
    created = _create_parents(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide a release from everyone else
        if target.exists():
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for folder in created:
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def input_files(folder: Path, suffixes: tuple[str, ...], what: str) -> list[Path]:
    """The files of ``folder`` with one of ``suffixes`` (lower case), in name order; an InputError naming the folder
    when it is missing or has none (``what`` says what they are)."""
    if not folder.is_dir():
        raise InputError(f"missing folder of {what}", file=folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
    if not files:
        raise InputError(f"no {what} ({', '.join('*' + s for s in suffixes)}) in the folder", file=folder)
    return files
