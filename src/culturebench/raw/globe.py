"""Readers for LLM-GLOBE's raw inputs (Karinshak et al., 2024, Sec. 3-4, App. A-B).

- ``RAW/globe/*.pdf``: the official GLOBE Phase 2 *Form Alpha* questionnaire (at most one), parsed with
  pdfplumber: the items of sections 1 and 3 (``1-1.`` ... ``3-41.``, 75 in the 2006 copy) with their own 1-7
  anchors. Layout: the item number and stem are set at 12 pt, the anchors at 11 pt in columns above the scale
  row ``1 2 3 4 5 6 7``; each anchor column goes to the nearest of the scale points 1, 4 and 7.
- ``RAW/globe/*.csv`` with an ``item_id`` column: the item table (ours; the official item-to-scale syntax is not
  public): ``item_id, dimension, reverse, text_en, anchor_1_en, anchor_4_en, anchor_7_en, text_zh, anchor_1_zh,
  anchor_4_zh, anchor_7_zh`` (anchors optional: without them the paper's agree/disagree anchors of Sec. 3.1.1;
  ``anchor_2_en`` etc. may be added for items with a label under every point). With a Form Alpha PDF the English text comes from the PDF and ``text_en`` may be empty; without one
  it is required.
- ``RAW/globe/*.csv`` with a ``Country Name`` column: GLOBE 2004 society scores (the official *GLOBE Phase 2
  Aggregated Societal Culture Data* CSV: practices and values per dimension, old-Mac ``\\r`` line ends accepted).
- ``RAW/gics/*.csv``: a GICS structure in the flat format (``sector_code, sector, industry_group_code,
  industry_group, industry_code, industry, sub_industry_code, sub_industry[, sub_industry_description]``), exactly
  one; optionally a translation file with columns ``code, name_zh`` (any GICS level).
- ``RAW/llm_globe/*.csv``: the open prompts (``Question_Num, Dimension, prompt_EN, prompt_zhCN[, origin]``), the
  juror rubrics (``Number, Dimension, Scale_EN, Characteristics_EN, Scale_zhCN, Characteristics_zhCN``) and,
  optionally, the released closed prompts (``Question_Num, Dimension, Prompt_EN, Prompt_zhCN, Industry,
  Organization, Leader_Role``), told apart by their headers.

Every problem is an :class:`~culturebench.errors.InputError` of one line naming the file, the row (1-based data
row, header not counted) or page, and the column.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from culturebench.errors import InputError, excerpt
from culturebench.io import InputFile, input_name, read_csv_rows, read_input_bytes, read_input_text

GLOBE_FOLDER = "globe"
GICS_FOLDER = "gics"
LLM_GLOBE_FOLDER = "llm_globe"

ANCHOR_POINTS = (1, 4, 7)
ALL_POINTS = (1, 2, 3, 4, 5, 6, 7)
ITEM_TABLE_REQUIRED = ("item_id", "dimension", "reverse", "text_zh")
ITEM_TABLE_EN = ("text_en",)
GICS_COLUMNS = ("sector_code", "sector", "industry_group_code", "industry_group", "industry_code", "industry",
                "sub_industry_code", "sub_industry")
GICS_ZH_COLUMNS = ("code", "name_zh")
OPEN_COLUMNS = ("Question_Num", "Dimension", "prompt_EN", "prompt_zhCN")
CLOSED_COLUMNS = ("Question_Num", "Dimension", "Prompt_EN", "Prompt_zhCN", "Industry", "Organization", "Leader_Role")
"""LLM-GLOBE's released closed_prompts.csv, as its README documents it."""
RUBRIC_COLUMNS = ("Number", "Dimension", "Scale_EN", "Characteristics_EN", "Scale_zhCN", "Characteristics_zhCN")
ITEM_ID = re.compile(r"^(\d+)-(\d+)$")
QUESTION_NUM = re.compile(r"^(\d+)-(\d+)$")
TRUE = {"1", "true", "yes", "y", "t", "reverse", "r"}
FALSE = {"0", "false", "no", "n", "f", "", "-"}







def normal(text: str) -> str:
    """Whitespace collapsed, outer whitespace stripped."""
    return " ".join(text.split())


def _key(text: str) -> str:
    return normal(text).casefold()


@dataclass
class CsvFile:
    """A CSV read as text: header (stripped) and data rows as dicts; ``rows`` keeps 1-based data row numbers."""

    path: Path
    name: str
    data: bytes
    header: list[str]
    rows: list[tuple[int, dict[str, str]]]
    encoding: str | None = None

    def info(self) -> InputFile:
        return InputFile.from_bytes(self.path, self.name, self.data, len(self.rows), self.encoding)


def read_csv(path: Path, root: Path) -> CsvFile:
    """A comma-separated file (``\\n``, ``\\r\\n`` or old-Mac ``\\r`` line ends); a wrong delimiter, a ragged row or
    a malformed quote is an input error."""
    name = input_name(path, root)
    data, text, encoding = read_input_text(path, name)
    header, records = read_csv_rows(text, name)
    rows = [(number, dict(zip(header, record))) for number, record in records]
    return CsvFile(path, name, data, header, rows, encoding)


def _require(table: CsvFile, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in table.header]
    if missing:
        raise InputError(f"missing column(s) {missing} of {what}; header is {table.header}", file=table.name,
                         column=missing[0])


def _text(table: CsvFile, row: int, record: dict[str, str], column: str, required: bool = True) -> str:
    value = normal(record.get(column) or "")
    if required and not value:
        raise InputError("empty value", file=table.name, row=row, column=column)
    return value


def _dimension(table: CsvFile, row: int, value: str, column: str, dimensions: dict[str, str]) -> str:
    found = dimensions.get(_key(value))
    if found is None:
        raise InputError(f"unknown GLOBE dimension {excerpt(repr(value))}; expected one of "
                         f"{sorted(set(dimensions.values()))}", file=table.name, row=row, column=column)
    return found


def input_files(folder: Path, pattern: str, what: str, required: bool = True) -> list[Path]:
    if not folder.is_dir():
        if not required:
            return []
        raise InputError(f"missing folder of {what}", file=folder)
    files = sorted(p for p in folder.glob(pattern) if p.is_file())
    if not files and required:
        raise InputError(f"no {what} ({pattern}) in the folder", file=folder)
    return files


# ------------------------------------------------------------------------------------------- Form Alpha PDF

HEADER_MARGIN = 40.0
FOOTER_MARGIN = 50.0  # page numbers (10 pt, top 746 of 792) sit within this distance of the page bottom
STEM_SIZE = 11.5  # stems are set at 12 pt; anchors and the scale row at 11 pt
MIN_SIZE = 10.5  # footers and notes are smaller
LINE_TOLERANCE = 3.0
CELL_GAP = 8.0  # a horizontal gap wider than this separates two anchor columns on one line
ITEM_START = re.compile(r"^(\d+)-(\d+)\.$")


@dataclass(frozen=True)
class FormItem:
    """One Form Alpha item: ``item_id`` as printed (``1-2``), stem and anchors (scale point -> text)."""

    item_id: str
    section: int
    stem: str
    anchors: dict[int, str]
    page: int


@dataclass
class _Open:
    item_id: str
    section: int
    page: int
    stem: list[str] = field(default_factory=list)
    anchor_lines: list[list[dict]] = field(default_factory=list)


def _lines(words: list[dict]) -> list[list[dict]]:
    lines: list[list[dict]] = []
    for word in sorted(words, key=lambda w: (round(w["top"], 1), w["x0"])):
        if lines and abs(lines[-1][0]["top"] - word["top"]) < LINE_TOLERANCE:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w["x0"]) for line in lines]


def _join(parts: list[str]) -> str:
    text = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if text.endswith("-") and len(text) > 1 and text[-2].isalpha():
            text += part  # "non-" + "aggressive"
        else:
            text = f"{text} {part}" if text else part
    return normal(text)


def _scale_row(line: list[dict]) -> dict[int, float] | None:
    texts = [w["text"] for w in line]
    if texts != [str(i) for i in range(1, 8)]:
        return None
    return {i + 1: (w["x0"] + w["x1"]) / 2 for i, w in enumerate(line)}


def _anchors(lines: list[list[dict]], scale: dict[int, float]) -> dict[int, str]:
    """Anchor words (per line, split into cells at wide gaps) go to the nearest of the scale points 1, 4, 7; on a
    line with more than three cells (item 1-34: a percentage under every point) to the nearest of all seven."""
    cells: dict[int, list[tuple[float, float, str]]] = {}
    for line in lines:
        groups: list[list[dict]] = []
        for word in line:
            if groups and word["x0"] - groups[-1][-1]["x1"] <= CELL_GAP:
                groups[-1].append(word)
            else:
                groups.append([word])
        points = ALL_POINTS if len(groups) > len(ANCHOR_POINTS) else ANCHOR_POINTS  # a label under every point
        for group in groups:
            centre = (group[0]["x0"] + group[-1]["x1"]) / 2
            point = min(points, key=lambda p: abs(scale[p] - centre))
            cells.setdefault(point, []).append((group[0]["top"], group[0]["x0"], " ".join(w["text"] for w in group)))
    return {point: _join([text for _, _, text in sorted(parts)]) for point, parts in sorted(cells.items())}


def read_form_alpha(path: Path, root: Path, sections: tuple[int, ...] = (1, 3)) -> tuple[list[FormItem], InputFile]:
    """The items of ``sections`` of a GLOBE Form Alpha PDF, in print order."""
    import pdfplumber

    name = input_name(path, root)
    data = read_input_bytes(path, name)
    if not data.startswith(b"%PDF"):
        raise InputError("not a PDF file (no %PDF header)", file=name)
    items: list[FormItem] = []
    current: _Open | None = None
    seen: set[str] = set()
    page_number = 0
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for page_number, page in enumerate(pdf.pages, start=1):
                words = page.extract_words(extra_attrs=["size"], keep_blank_chars=False)
                words = [w for w in words if HEADER_MARGIN <= w["top"] < page.height - FOOTER_MARGIN]
                for line in _lines(words):
                    first = line[0]["text"]
                    start = ITEM_START.match(first)
                    if start and line[0]["size"] >= STEM_SIZE and int(start.group(1)) in sections:
                        item_id = f"{int(start.group(1))}-{int(start.group(2))}"
                        if item_id in seen:
                            raise InputError(f"item {item_id} is printed twice", file=name, page=page_number)
                        current = _Open(item_id, int(start.group(1)), page_number,
                                        stem=[" ".join(w["text"] for w in line[1:])])
                        continue
                    if current is None:
                        continue
                    scale = _scale_row(line)
                    if scale is not None:
                        anchors = _anchors(current.anchor_lines, scale)
                        stem = _join(current.stem)
                        if not stem:
                            raise InputError(f"item {current.item_id} has no text", file=name, page=current.page)
                        if 1 not in anchors or 7 not in anchors:
                            raise InputError(f"item {current.item_id} has no anchor at 1 or 7 (found "
                                             f"{sorted(anchors)})", file=name, page=page_number)
                        items.append(FormItem(current.item_id, current.section, stem, anchors, current.page))
                        seen.add(current.item_id)
                        current = None
                        continue
                    stem_words = [w for w in line if w["size"] >= STEM_SIZE]
                    anchor_words = [w for w in line if MIN_SIZE <= w["size"] < STEM_SIZE]
                    if stem_words and not current.anchor_lines:
                        current.stem.append(" ".join(w["text"] for w in stem_words))
                    elif stem_words:
                        current = None  # text after anchors without a scale row: not an item (e.g. an end note)
                        continue
                    if anchor_words:
                        current.anchor_lines.append(anchor_words)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types on a damaged file
        raise InputError(f"cannot parse the PDF ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
                         file=name, page=page_number or None) from None
    if not items:
        raise InputError(f"no GLOBE items of sections {list(sections)} found (expected lines such as '1-1. In this "
                         "organization, ...' followed by anchors and a '1 2 3 4 5 6 7' scale): not a Form Alpha PDF?",
                         file=name)
    return items, InputFile.from_bytes(path, name, data, len(items))


# ------------------------------------------------------------------------------------------------ item table


@dataclass(frozen=True)
class ItemRow:
    file: str
    row: int
    item_id: str
    dimension: str
    reverse: bool
    text_en: str
    anchors_en: dict[int, str]
    text_zh: str
    anchors_zh: dict[int, str]


def is_item_table(table: CsvFile) -> bool:
    return "item_id" in table.header


def read_item_table(table: CsvFile, dimensions: dict[str, str], english_required: bool) -> list[ItemRow]:
    _require(table, ITEM_TABLE_REQUIRED + (ITEM_TABLE_EN if english_required else ()), "the GLOBE item table")
    items = []
    seen: dict[str, int] = {}
    for row, record in table.rows:
        item_id = _text(table, row, record, "item_id")
        if not ITEM_ID.match(item_id):
            raise InputError(f"item_id {item_id!r} is not of the form SECTION-NUMBER (e.g. 1-2)", file=table.name,
                             row=row, column="item_id")
        if item_id in seen:
            raise InputError(f"item_id {item_id!r} already on row {seen[item_id]}", file=table.name, row=row,
                             column="item_id")
        seen[item_id] = row
        dimension = _dimension(table, row, _text(table, row, record, "dimension"), "dimension", dimensions)
        flag = (record.get("reverse") or "").strip().casefold()
        if flag in TRUE:
            reverse = True
        elif flag in FALSE:
            reverse = False
        else:
            raise InputError(f"reverse flag {excerpt(repr(record['reverse']))} is not true/false (1/0, yes/no)",
                             file=table.name, row=row, column="reverse")
        anchors = {}
        for language in ("en", "zh"):
            anchors[language] = {
                point: text for point in ALL_POINTS
                if (text := _text(table, row, record, f"anchor_{point}_{language}", required=False))
            }
        text_en = _text(table, row, record, "text_en", required=english_required)
        if not english_required and not text_en and anchors["en"]:
            raise InputError("English anchors without English text", file=table.name, row=row, column="text_en")
        items.append(ItemRow(table.name, row, item_id, dimension, reverse, text_en, anchors["en"],
                             _text(table, row, record, "text_zh"), anchors["zh"]))
    if not items:
        raise InputError("no data rows after the header", file=table.name)
    return items


# ------------------------------------------------------------------------------------------------------- GICS


@dataclass(frozen=True)
class GicsRow:
    file: str
    row: int
    sector_code: str
    sector: str
    industry_group_code: str
    industry_group: str
    industry_code: str
    industry: str
    sub_industry_code: str
    sub_industry: str


def is_gics_translation(table: CsvFile) -> bool:
    return "name_zh" in table.header


def read_gics(table: CsvFile) -> list[GicsRow]:
    _require(table, GICS_COLUMNS, "a GICS flat structure file")
    rows = []
    seen: dict[str, int] = {}
    parents: dict[str, tuple[str, int]] = {}
    for row, record in table.rows:
        values = {c: _text(table, row, record, c) for c in GICS_COLUMNS}
        for column in ("sector_code", "industry_group_code", "industry_code", "sub_industry_code"):
            if not values[column].isdigit():
                raise InputError(f"GICS code {values[column]!r} is not a number", file=table.name, row=row,
                                 column=column)
        code = values["sub_industry_code"]
        if code in seen:
            raise InputError(f"sub-industry code {code} already on row {seen[code]}", file=table.name, row=row,
                             column="sub_industry_code")
        seen[code] = row
        for column, parent in (("industry_code", "industry_group_code"), ("industry_group_code", "sector_code"),
                               ("sub_industry_code", "industry_code")):
            if not values[column].startswith(values[parent]):
                raise InputError(f"code {values[column]} does not start with its parent's code {values[parent]}",
                                 file=table.name, row=row, column=column)
        for column, label in (("sector_code", "sector"), ("industry_group_code", "industry_group"),
                              ("industry_code", "industry")):
            known = parents.setdefault(values[column], (values[label], row))
            if known[0] != values[label]:
                raise InputError(f"code {values[column]} is named {values[label]!r} here and {known[0]!r} on row "
                                 f"{known[1]}", file=table.name, row=row, column=label)
        rows.append(GicsRow(table.name, row, **values))
    if not rows:
        raise InputError("no data rows after the header", file=table.name)
    return rows


def read_gics_translation(table: CsvFile) -> dict[str, str]:
    _require(table, GICS_ZH_COLUMNS, "a GICS translation file")
    names = {}
    for row, record in table.rows:
        code = _text(table, row, record, "code")
        if code in names:
            raise InputError(f"code {code} is translated twice", file=table.name, row=row, column="code")
        names[code] = _text(table, row, record, "name_zh")
    return names


# ------------------------------------------------------------------------------------------ GLOBE 2004 scores


@dataclass(frozen=True)
class SocietyRow:
    file: str
    row: int
    country: str
    code: str | None
    cluster: str | None
    scores: dict[str, tuple[float, float]]  # dimension -> (practices, values)


def is_society_scores(table: CsvFile, names: list[str]) -> bool:
    header = {_key(h) for h in table.header}
    return any(_key(n) in header for n in names)


def _column(table: CsvFile, names: list[str], what: str, required: bool = True) -> str | None:
    by_key = {_key(h): h for h in table.header}
    for name in names:
        if _key(name) in by_key:
            return by_key[_key(name)]
    if required:
        raise InputError(f"missing column {names[0]!r} ({what}); header is {table.header}", file=table.name,
                         column=names[0])
    return None


def read_society_scores(table: CsvFile, facts: dict) -> list[SocietyRow]:
    """``facts`` is facts/llm_globe.json: dimensions with their practices/values column names."""
    globe = facts["globe_2004"]
    low, high = globe["score_range"]
    country = _column(table, globe["country_column"], "society name")
    code = _column(table, globe["code_column"], "society code", required=False)
    cluster = _column(table, globe["cluster_column"], "cluster", required=False)
    columns = {d["name"]: (_column(table, d["globe_practices"], f"{d['name']} practices"),
                           _column(table, d["globe_values"], f"{d['name']} values")) for d in facts["dimensions"]}
    rows = []
    for row, record in table.rows:
        scores = {}
        for dimension, pair in columns.items():
            numbers = []
            for column in pair:
                raw = record[column].strip()
                try:
                    value = float(raw.replace(",", "."))
                except ValueError:
                    raise InputError(f"score {excerpt(repr(raw))} is not a number", file=table.name, row=row,
                                     column=column) from None
                if not math.isfinite(value) or not low <= value <= high:
                    raise InputError(f"score {excerpt(repr(raw))} is outside the GLOBE scale {low:g}-{high:g}",
                                     file=table.name, row=row, column=column)
                numbers.append(value)
            scores[dimension] = (numbers[0], numbers[1])
        rows.append(SocietyRow(table.name, row, _text(table, row, record, country),
                               normal(record[code]) or None if code else None,
                               normal(record[cluster]) or None if cluster else None, scores))
    if not rows:
        raise InputError("no data rows after the header", file=table.name)
    return rows


# ------------------------------------------------------------------------------------ open prompts, rubrics


@dataclass(frozen=True)
class OpenPrompt:
    file: str
    row: int
    question_num: str
    prefix: int
    number: int
    dimension: str
    prompt_en: str
    prompt_zh: str | None  # None where the file has no translation (9-95 ... 9-100 in the published file)
    origin: str | None


@dataclass(frozen=True)
class Rubric:
    file: str
    row: int
    number: str
    dimension: str
    scale_en: str
    characteristics_en: str
    scale_zh: str
    characteristics_zh: str


def is_closed_prompts(table: CsvFile) -> bool:
    return "Leader_Role" in table.header or "Prompt_EN" in table.header


def is_open_prompts(table: CsvFile) -> bool:
    return "Question_Num" in table.header and not is_closed_prompts(table)


def is_rubrics(table: CsvFile) -> bool:
    return "Scale_EN" in table.header


def _multiline(value: str) -> str:
    """Rubric texts keep their line breaks (one criterion per line); lines are stripped, blank lines dropped."""
    return "\n".join(line.strip() for line in value.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                     if line.strip())


def read_open_prompts(table: CsvFile, dimensions: dict[str, str]) -> list[OpenPrompt]:
    _require(table, OPEN_COLUMNS, "the LLM-GLOBE open prompts")
    has_origin = "origin" in table.header
    prompts = []
    for row, record in table.rows:
        number = _text(table, row, record, "Question_Num")
        match = QUESTION_NUM.match(number)
        if not match:
            raise InputError(f"Question_Num {number!r} is not of the form DIMENSION-NUMBER (e.g. 1-1)",
                             file=table.name, row=row, column="Question_Num")
        origin = None
        if has_origin:
            origin = _text(table, row, record, "origin").casefold()
            if origin not in ("human", "generated"):
                raise InputError(f"origin {excerpt(repr(record['origin']))} is neither 'human' nor 'generated'",
                                 file=table.name, row=row, column="origin")
        prompts.append(OpenPrompt(
            table.name, row, number, int(match.group(1)), int(match.group(2)),
            _dimension(table, row, _text(table, row, record, "Dimension"), "Dimension", dimensions),
            _text(table, row, record, "prompt_EN"), _text(table, row, record, "prompt_zhCN", required=False) or None,
            origin))
    if not prompts:
        raise InputError("no data rows after the header", file=table.name)
    return prompts


@dataclass(frozen=True)
class ClosedPrompt:
    file: str
    row: int
    question_num: str
    dimension: str
    prompt_en: str
    prompt_zh: str | None
    industry: str
    organization: str
    leader_role: str


def read_closed_prompts(table: CsvFile, dimensions: dict[str, str]) -> list[ClosedPrompt]:
    """LLM-GLOBE's ``closed_prompts.csv`` (README columns ``Question_Num, Dimension, Prompt_EN, Prompt_zhCN,
    Industry, Organization, Leader_Role``); an empty Chinese prompt is kept as None."""
    _require(table, CLOSED_COLUMNS, "the LLM-GLOBE closed prompts")
    prompts = []
    for row, record in table.rows:
        number = _text(table, row, record, "Question_Num")
        if not QUESTION_NUM.match(number):
            raise InputError(f"Question_Num {number!r} is not of the form DIMENSION-NUMBER (e.g. 1-1)",
                             file=table.name, row=row, column="Question_Num")
        prompts.append(ClosedPrompt(
            table.name, row, number,
            _dimension(table, row, _text(table, row, record, "Dimension"), "Dimension", dimensions),
            _text(table, row, record, "Prompt_EN"), _text(table, row, record, "Prompt_zhCN", required=False) or None,
            _text(table, row, record, "Industry"), _text(table, row, record, "Organization"),
            _text(table, row, record, "Leader_Role")))
    if not prompts:
        raise InputError("no data rows after the header", file=table.name)
    return prompts


def read_rubrics(table: CsvFile, dimensions: dict[str, str]) -> list[Rubric]:
    _require(table, RUBRIC_COLUMNS, "the LLM-GLOBE juror rubrics")
    rubrics = []
    for row, record in table.rows:
        for column in RUBRIC_COLUMNS:
            _text(table, row, record, column)
        rubrics.append(Rubric(
            table.name, row, normal(record["Number"]),
            _dimension(table, row, record["Dimension"], "Dimension", dimensions),
            *(_multiline(record[c]) for c in RUBRIC_COLUMNS[2:])))
    if not rubrics:
        raise InputError("no data rows after the header", file=table.name)
    return rubrics
