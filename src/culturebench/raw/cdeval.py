"""Readers for CDEval's raw inputs: the questionnaire JSON as released and the Hofstede 6-D country-score CSV.

- ``RAW/cdeval/*.json``: a JSON list of items ``{"Dimension", "Domain", "Question", "Option 1", "Option 2"}``
  (the authors' ``CDEval.json``; several files are read in name order and concatenated), each with an optional
  ``"Language"`` (ISO 639-1 code of a translated questionnaire, as ``culturebench generate cdeval_translate``
  writes it; absent = English).
- ``RAW/hofstede/*.csv``: ``ctr;country;pdi;idv;mas;uai;ltowvs;ivr`` (+ an optional ``group`` column, Sec. 4.4),
  ``;``-separated, ``#NULL!`` = missing: the official ``6-dimensions-for-website-2015-08-16.csv``, the paper's
  Table 10 rows, or any other Hofstede table written in that shape; several files are read in name order.

Every problem with a file is an :class:`~culturebench.errors.InputError` of one line naming the file, the item
(``row`` = 1-based item number in the JSON list, or 1-based data row of the CSV, header not counted) and the
key or column. Content checks that concern single items (empty text, identical options, duplicates) are not
done here: the builder sends such items to quarantine.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from culturebench.errors import InputError, excerpt
from culturebench.io import InputFile, input_name, read_csv_rows, read_input_text

QUESTIONNAIRE_FOLDER = "cdeval"
HOFSTEDE_FOLDER = "hofstede"
ITEM_KEYS = ("Dimension", "Domain", "Question", "Option 1", "Option 2")
LANGUAGE_KEY = "Language"
"""Optional item key: the questionnaire's language (ISO 639-1); absent means English, the released CDEval.json."""
DEFAULT_LANGUAGE = "en"
HOFSTEDE_COLUMNS = ("ctr", "country", "pdi", "idv", "mas", "uai", "ltowvs", "ivr")
NULL = "#NULL!"


@dataclass(frozen=True)
class Item:
    """One questionnaire item as read (outer whitespace stripped, dimension/domain in canonical spelling)."""

    file: str
    item: int  # 1-based position in its file's JSON list
    dimension: str
    domain: str
    question: str
    option_1: str
    option_2: str
    language: str = DEFAULT_LANGUAGE


def input_files(folder: Path, pattern: str, what: str) -> list[Path]:
    if not folder.is_dir():
        raise InputError(f"missing folder of {what}", file=folder)
    files = sorted(p for p in folder.glob(pattern) if p.is_file())
    if not files:
        raise InputError(f"no {what} ({pattern}) in the folder", file=folder)
    return files


# --------------------------------------------------------------------------------------------- questionnaire


def read_questionnaire(path: Path, root: Path, dimensions: dict[str, str], domains: dict[str, str]
                       ) -> tuple[list[Item], InputFile]:
    """Items of one CDEval JSON file. ``dimensions``/``domains`` map the casefolded spelling to the canonical one;
    a value outside them is an input error (the file is not CDEval, or has a typo)."""
    name = input_name(path, root)
    data, text, encoding = read_input_text(path, name)
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError:
        _locate_json_error(text, name)  # raises with the item index
        raise  # pragma: no cover - _locate_json_error always raises
    if not isinstance(loaded, list):
        raise InputError(f"expected a JSON list of items, found a JSON {type(loaded).__name__}", file=name)
    if not loaded:
        raise InputError("the JSON list has no items", file=name)
    items = []
    for index, entry in enumerate(loaded):
        number = index + 1
        where = f"item {number} (JSON index {index})"
        if not isinstance(entry, dict):
            raise InputError(f"{where} is a JSON {type(entry).__name__}, expected an object with keys "
                             f"{list(ITEM_KEYS)}", file=name, row=number)
        for key in ITEM_KEYS:
            if key not in entry:
                raise InputError(f"{where} has no key {key!r} (keys: {sorted(entry)})", file=name, row=number,
                                 column=key)
            if not isinstance(entry[key], str):
                raise InputError(f"{where}: {key!r} is a JSON {type(entry[key]).__name__}, expected a string",
                                 file=name, row=number, column=key)
        dimension = dimensions.get(entry["Dimension"].strip().casefold())
        if dimension is None:
            raise InputError(f"{where}: unknown dimension {entry['Dimension']!r}; expected one of "
                             f"{sorted(set(dimensions.values()))}", file=name, row=number, column="Dimension")
        domain = domains.get(entry["Domain"].strip().casefold())
        if domain is None:
            raise InputError(f"{where}: unknown domain {entry['Domain']!r}; expected one of "
                             f"{sorted(set(domains.values()))}", file=name, row=number, column="Domain")
        language = entry.get(LANGUAGE_KEY, DEFAULT_LANGUAGE)
        if not isinstance(language, str) or not language.strip():
            raise InputError(f"{where}: {LANGUAGE_KEY!r} must be a language code such as 'de'", file=name,
                             row=number, column=LANGUAGE_KEY)
        items.append(Item(name, number, dimension, domain, entry["Question"].strip(), entry["Option 1"].strip(),
                          entry["Option 2"].strip(), language.strip()))
    return items, InputFile.from_bytes(path, name, data, len(items), encoding)


def _locate_json_error(text: str, name: str) -> None:
    """Re-scan a JSON list item by item to say which item is malformed; always raises InputError."""
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    if position >= len(text) or text[position] != "[":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}); expected a list "
                             "of items", file=name) from None
    position = _skip_space(text, position + 1)
    index = 0
    if position < len(text) and text[position] == "]":
        position += 1
    else:
        while True:
            where = f"item {index + 1} (JSON index {index})"
            try:
                _, position = decoder.raw_decode(text, position)
            except json.JSONDecodeError as exc:
                raise InputError(f"malformed JSON in {where}: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                                 file=name, row=index + 1) from None
            position = _skip_space(text, position)
            if position < len(text) and text[position] == ",":
                position = _skip_space(text, position + 1)
                index += 1
                continue
            if position < len(text) and text[position] == "]":
                position += 1
                break
            line, column = _line_column(text, position)
            found = repr(text[position]) if position < len(text) else "end of file"
            raise InputError(f"malformed JSON after {where}: expected ',' or ']' but found {found} "
                             f"(line {line}, column {column})", file=name, row=index + 1)
    line, column = _line_column(text, position)
    raise InputError(f"malformed JSON: extra data after the list (line {line}, column {column})", file=name)


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _line_column(text: str, position: int) -> tuple[int, int]:
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


# ------------------------------------------------------------------------------------------------ Hofstede


@dataclass(frozen=True)
class CountryRow:
    file: str
    row: int  # 1-based data row, header not counted
    values: dict[str, str | int | None]  # output column name -> value


def read_hofstede(path: Path, root: Path, columns: dict[str, str], score_columns: set[str],
                  optional: dict[str, str] | None = None) -> tuple[list[CountryRow], InputFile]:
    """Rows of one Hofstede 6-D CSV (``;``, ``#NULL!`` = missing). ``columns`` maps the file's column names to the
    release's, ``optional`` the same for columns a file may lack (their value is then None); other columns are
    ignored; a score that is neither an integer nor ``#NULL!`` is an input error."""
    name = input_name(path, root)
    data, text, encoding = read_input_text(path, name)
    header, records = read_csv_rows(text, name, delimiter=";")
    header = [h.lower() for h in header]
    missing = [c for c in columns if c not in header]
    if missing:
        raise InputError(f"missing column(s) {missing}; header is {excerpt(header)}", file=name, column=missing[0])
    present = {**columns, **{c: t for c, t in (optional or {}).items() if c in header}}
    at = {c: header.index(c) for c in present}
    rows = []
    for number, record in records:
        values: dict[str, str | int | None] = {}
        for source, target in present.items():
            raw = record[at[source]].strip()
            if target in score_columns:
                values[target] = _score(raw, name, number, source)
            else:
                values[target] = raw or None
        rows.append(CountryRow(name, number, values))
    if not rows:
        raise InputError("no data rows after the header", file=name)
    return rows, InputFile.from_bytes(path, name, data, len(rows), encoding)


def _score(raw: str, name: str, row: int, column: str) -> int | None:
    if raw in ("", NULL):
        return None
    try:
        value = float(raw.replace(",", "."))
    except ValueError:
        raise InputError(f"score {excerpt(repr(raw))} is neither a number nor {NULL}", file=name, row=row,
                         column=column) from None
    if not math.isfinite(value) or value != int(value):
        raise InputError(f"score {excerpt(repr(raw))} is not a whole number", file=name, row=row, column=column)
    return int(value)
