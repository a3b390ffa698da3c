"""Readers for NormAd's raw inputs besides the atlas pages and the zone tables: the stories file.

- ``RAW/normad/*.csv`` / ``*.jsonl``: stories with the NormAd release's columns ``Country, Background, Axis,
  Subaxis, Value, Rule-of-Thumb, Story, Explanation, Gold Label`` (other columns, e.g. ``ID`` or an unnamed index,
  are ignored). Several files are read in name order and concatenated.
- ``RAW/inglehart_welzel/*.csv``: the zone tables, read by :mod:`culturebench.raw.inglehart_welzel` (shared with
  SocialCC).

A missing column, a malformed line or a non-text value is an :class:`~culturebench.errors.InputError` of one line
naming the file, the row (1-based data row / JSONL line) and the column. Values are not judged here (labels,
subaxes, countries): the builder quarantines such rows with a reason.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from pathlib import Path

from culturebench.errors import InputError, excerpt
from culturebench.io import InputFile, input_name, jsonl_objects, read_csv_rows, read_input_text

STORIES_FOLDER = "normad"
STORY_COLUMNS = ("Country", "Background", "Axis", "Subaxis", "Value", "Rule-of-Thumb", "Story", "Explanation",
                 "Gold Label")
OTHER_COLUMNS = ("Other Country", "Other Background")
"""Optional: for a neutral row, the country its Value and Rule-of-Thumb come from (the authors' story files and
``generate normad`` carry them; the revision ``v2_swap_only`` and ``generate normad_v2_fix`` need them)."""


@dataclass(frozen=True)
class StoryRow:
    file: str
    row: int  # 1-based data row (CSV, header not counted) or line (JSONL)
    values: dict[str, str]  # STORY_COLUMNS -> text as read
    other: dict[str, str] | None = None  # OTHER_COLUMNS -> text, when the file has them
    extra: dict[str, str] | None = None  # every other named column (text values), e.g. ID, Revision, check flags





def _missing(name: str, header: list[str], wanted: tuple[str, ...]) -> None:
    for column in wanted:
        if column not in header:
            raise InputError(f"missing column {column!r} (columns: {excerpt(header)})", file=name, column=column)


def read_stories(path: Path, root: Path) -> tuple[list[StoryRow], InputFile]:
    name = input_name(path, root)
    data, text, encoding = read_input_text(path, name)
    rows: list[StoryRow] = []
    if path.suffix.lower() == ".jsonl":
        for number, entry in jsonl_objects(text.splitlines(keepends=True), name):
            values = {}
            for column in STORY_COLUMNS:
                if column not in entry:
                    raise InputError(f"missing key {column!r} (keys: {sorted(entry)})", file=name, row=number,
                                     column=column)
                value = entry[column]
                if not isinstance(value, str):
                    raise InputError(f"{column!r} is a JSON {type(value).__name__}, expected a string", file=name,
                                     row=number, column=column)
                values[column] = value
            other = {c: entry[c] for c in OTHER_COLUMNS if isinstance(entry.get(c), str)}
            extra = {k: v for k, v in entry.items() if k not in STORY_COLUMNS and isinstance(v, str)}
            rows.append(StoryRow(name, number, values, other if len(other) == len(OTHER_COLUMNS) else None, extra))
    else:
        header, body = read_csv_rows(text, name)
        _missing(name, header, STORY_COLUMNS)
        index = {column: header.index(column) for column in STORY_COLUMNS}
        others = {column: header.index(column) for column in OTHER_COLUMNS if column in header}
        if len(others) < len(OTHER_COLUMNS):
            others = {}
        extras = {column: i for i, column in enumerate(header) if column and column not in STORY_COLUMNS}
        rows = [StoryRow(name, number, {c: row[i] for c, i in index.items()},
                         {c: row[i] for c, i in others.items()} or None, {c: row[i] for c, i in extras.items()})
                for number, row in body]
    if not rows:
        raise InputError("no stories in the file", file=name)
    return rows, InputFile.from_bytes(path, name, data, len(rows), encoding)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def closing_question(story: str) -> str | None:
    """The story's closing question ("Is what Lena did socially acceptable?"), what a paraphrase of a NormAd item
    stands in for (``raw.paraphrases``; the story's facts before it are gold content and stay); None when its
    last sentence is no question."""
    last = _SENTENCE_END.split(story.strip())[-1]
    return last if last.endswith("?") else None


def with_closing_question(story: str, question: str) -> str:
    """``story`` with its closing question replaced by ``question`` (everything before it kept as is)."""
    original = closing_question(story)
    if original is None:
        raise ValueError("the story ends in no question")
    stripped = story.rstrip()
    return stripped[:len(stripped) - len(original)] + question + story[len(stripped):]

