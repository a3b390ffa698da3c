"""Readers for SocialCC inputs: scenario files (``RAW/socialcc/*.jsonl``) and WVS-7 survey weights.

Scenario files are JSON Lines, one scenario object per line (blank lines skipped)::

    {"id": "vel-001", "scenario": "...", "events": ["...", "..."],
     "characters": [{"name": "...", "age": 34, "gender": "...", "nationality": "...", "occupation": "...",
                     "goal": "..."}, ... three ...],
     "country": "Veloria", "commonsense_topic": "Etiquette", "commonsense_item": "<atlas item text>",
     "value_question_id": "Q28", "value_item": "People from Jordan strongly agree that ..."}

Extra keys are ignored. A line that is not JSON, not an object, lacks a key or has a value of the wrong type
(``events`` not a list of 2 non-empty strings, ``characters`` not a list of 3 objects with the six keys, an age
that is not a whole number) is an :class:`~culturebench.errors.InputError` naming the file, the 1-based line and
the key. Whether the *content* is right (atlas item, value item, nationalities) is the builder's business: such
scenarios go to quarantine.

Survey weights (``W_WEIGHT``) are read by the WVS reader itself (``read_respondents(..., weight=...)``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


from culturebench.errors import InputError
from culturebench.io import InputFile, input_name, read_input_text

FOLDER = "socialcc"
SUFFIXES = (".jsonl",)
TEXT_KEYS = ("scenario", "country", "commonsense_topic", "commonsense_item", "value_question_id", "value_item")
CHARACTER_KEYS = ("name", "age", "gender", "nationality", "occupation", "goal")
EVENTS = 2
CHARACTERS = 3


@dataclass(frozen=True)
class ScenarioRow:
    file: str
    row: int  # 1-based line number
    source_id: str
    scenario: str
    events: tuple[str, ...]
    characters: tuple[dict, ...]
    country: str
    commonsense_topic: str
    commonsense_item: str
    value_question_id: str
    value_item: str


def scenario_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise InputError("missing folder of SocialCC scenario files", file=folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)
    if not files:
        raise InputError("no SocialCC scenario files (*.jsonl) in the folder", file=folder)
    return files


def _text(value, name: str, file: str, row: int, column: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, not {type(value).__name__}", file=file, row=row, column=column)
    return value.strip()


def parse_scenario(record, file: str, row: int) -> ScenarioRow:
    if not isinstance(record, dict):
        raise InputError(f"line is not a JSON object (found {type(record).__name__})", file=file, row=row)
    for key in ("id", *TEXT_KEYS, "events", "characters"):
        if key not in record:
            raise InputError("required key is missing", file=file, row=row, column=key)
    source_id = record["id"]
    if not isinstance(source_id, (str, int)) or isinstance(source_id, bool):
        raise InputError("id must be a string or an integer", file=file, row=row, column="id")
    texts = {key: _text(record[key], key, file, row, key) for key in TEXT_KEYS}
    events = record["events"]
    if not isinstance(events, list) or len(events) != EVENTS:
        raise InputError(f"events must be a list of {EVENTS} strings", file=file, row=row, column="events")
    events = tuple(_text(e, "every event", file, row, "events") for e in events)
    characters = record["characters"]
    if not isinstance(characters, list) or len(characters) != CHARACTERS:
        raise InputError(f"characters must be a list of {CHARACTERS} objects", file=file, row=row,
                         column="characters")
    parsed = []
    for index, character in enumerate(characters, start=1):
        where = f"characters[{index}]"
        if not isinstance(character, dict):
            raise InputError("character must be a JSON object", file=file, row=row, column=where)
        for key in CHARACTER_KEYS:
            if key not in character:
                raise InputError("required key is missing", file=file, row=row, column=f"{where}.{key}")
        age = character["age"]
        if isinstance(age, float) and age.is_integer():
            age = int(age)
        if not isinstance(age, int) or isinstance(age, bool) or not 0 <= age <= 130:
            raise InputError(f"age must be a whole number of years (0-130), not {age!r}", file=file, row=row,
                             column=f"{where}.age")
        parsed.append({"name": _text(character["name"], "name", file, row, f"{where}.name"), "age": age,
                       **{k: _text(character[k], k, file, row, f"{where}.{k}")
                          for k in ("gender", "nationality", "occupation", "goal")}})
    return ScenarioRow(file, row, str(source_id), texts["scenario"], events, tuple(parsed), texts["country"],
                       texts["commonsense_topic"], texts["commonsense_item"], texts["value_question_id"],
                       texts["value_item"])


def read_scenarios(path: Path, root: Path) -> tuple[list[ScenarioRow], InputFile]:
    name = input_name(path, root)
    data, text, encoding = read_input_text(path, name)
    rows = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            what = "truncated line" if number == len(lines) and not text.endswith("\n") else "malformed JSON"
            raise InputError(f"{what} ({exc.msg} at character {exc.colno})", file=name, row=number) from None
        rows.append(parse_scenario(record, name, number))
    if not rows:
        raise InputError("file has no scenarios", file=name)
    return rows, InputFile.from_bytes(path, name, data, len(rows), encoding)


# ------------------------------------------------------------------------------------------------ survey weights
