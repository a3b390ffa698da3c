"""Saved JSONL records (responses.jsonl, transcripts.jsonl) read back for scoring, checked line by line: a bad line
is one InputError naming the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from culturebench.errors import InputError, excerpt
from culturebench.io import jsonl_objects

def jsonl_records(path: Path, required: Sequence[str] = (), what: str = "responses file", *,
                  integers: Sequence[str] = ("sample_index",), texts: Sequence[str] = ("response",),
                  unique: Sequence[str] = ()) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a saved JSONL file (responses.jsonl, transcripts.jsonl).
    One-line InputErrors naming the file, the line and the field: a missing file, a line that is not valid UTF-8 or
    not a JSON object, a record without a ``required`` field, an ``integers`` field that is not a whole number or a
    ``texts`` field (a model's answer) that is not text (each when present and not null), and a record whose
    ``unique`` fields repeat an earlier line's (the same item answered twice would be counted twice)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} not found", file=path)
    seen: dict[tuple, int] = {}
    with open(path, "rb") as handle:
        for number, record in jsonl_objects(_utf8_lines(handle, path), path):
            for name in required:
                if name not in record:
                    raise InputError(f"record lacks field {name!r}", file=path, row=number, column=name)
            for name in integers:
                value = record.get(name)
                if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                    got = excerpt(repr(value)) if isinstance(value, (float, str)) else f"a JSON {_json_kind(value)}"
                    raise InputError(f"{name} must be a whole number, got {got}", file=path, row=number, column=name)
            for name in texts:
                value = record.get(name)
                if value is not None and not isinstance(value, str):
                    raise InputError(f"{name} must be text, got a JSON {_json_kind(value)}", file=path, row=number,
                                     column=name)
            if unique:
                key = tuple(json.dumps(record.get(name), sort_keys=True) for name in unique)
                if key in seen:
                    raise InputError(f"the same item as line {seen[key]} ({', '.join(unique)}): each item is "
                                     "answered once", file=path, row=number, column=unique[-1])
                seen[key] = number
            yield number, record


def _json_kind(value: Any) -> str:
    """What a JSON value is, as an error names it (object, array, number, true / false)."""
    if isinstance(value, bool):
        return "true / false"
    return {dict: "object", list: "array"}.get(type(value), "number")


def _utf8_lines(handle, path: Path) -> Iterator[str]:
    """The lines of a binary file as text; a line that is not valid UTF-8 is an InputError naming the line and,
    when the line is JSON, the field holding the bad bytes."""
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            field = None
            try:
                record = json.loads(raw.decode("utf-8", "replace"))
                field = next((k for k, v in record.items() if "\ufffd" in json.dumps(v, ensure_ascii=False)), None)
            except (ValueError, AttributeError):
                pass
            raise InputError(f"not valid UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the "
                             "line)", file=path, row=number, column=field) from None
