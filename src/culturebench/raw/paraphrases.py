"""Paraphrases of a benchmark's questions (issue #63, docs/robustness.md#wording-variants): the raw file
``culturebench generate paraphrases NAME`` writes (or a person writes by hand) and the release's ``variants`` config
a benchmark's build makes of it.

``RAW/paraphrases/<benchmark>.jsonl``, one JSON object a line, any order:

- ``item``: the item's release id (CDEval: the question's ``id``; NormAd: the story's ``id``);
- ``original``: the text paraphrased, as the release has it (CDEval: the question; NormAd: the story's closing
  question, the rest of the story untouched);
- ``index``: the paraphrase's number, 1 to K (``--variants paraphraseK`` asks it);
- ``paraphrase``: the text asked in place of ``original``;
- ``made_by`` / ``checked_by``: the model that wrote it and the one that judged it equivalent, or ``hand-written``;
- ``check``: the equivalence verdict (``yes``; ``hand-written`` for a paraphrase a person wrote);
- ``seed``: the generation's seed (null for a hand-written one).

The ``variants`` config has one row per line, sorted by item and index, with ``variant`` (``paraphrase<index>``)
and ``matches_release``: whether the release has the item and ``original`` is its text (whitespace collapsed). A
row that does not match is kept and listed by an informational check; ``evaluate --variants paraphrase`` asks that
item in its original wording and marks its records.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from culturebench.builders.base import ConfigInfo
from culturebench.errors import InputError
from culturebench.io import InputFile, input_name, jsonl_objects
from culturebench.validation.checks import CheckResult, check

FOLDER = "paraphrases"
CONFIG = "variants"
HAND_WRITTEN = "hand-written"
VARIANT_PREFIX = "paraphrase"
FIELDS = {"item": str, "original": str, "index": int, "paraphrase": str, "made_by": str, "checked_by": str,
          "check": str, "seed": (int, type(None))}
"""Each line's keys and their JSON types."""
SCHEMA = {"id": pl.String, "variant": pl.String, "paraphrase_index": pl.Int64, "original": pl.String,
          "paraphrase": pl.String, "made_by": pl.String, "checked_by": pl.String, "check": pl.String,
          "seed": pl.Int64, "matches_release": pl.Boolean}
def config_info(redistributable: bool = True, license_name: str | None = None) -> ConfigInfo:
    """The card's description of the config (a builder adds it to its card when the raw file is present), under
    the terms of the texts it paraphrases (``original`` is the release's text)."""
    return ConfigInfo(CONFIG, DESCRIPTION, redistributable=redistributable, license_name=license_name)


DESCRIPTION = (
    "Wording variants (issue #63): per item, K paraphrases of the text it asks (CDEval: the question; "
    "NormAd: the story's closing question), one row each: id (the item's), variant (paraphrase1..K, what "
    "`evaluate --variants` names), paraphrase_index, original (the text paraphrased), paraphrase, made_by and "
    "checked_by (the model that wrote it and the one that judged it equivalent, or hand-written), check (the "
    "verdict), seed, matches_release (the release has the item and original is its text). Read from "
    "RAW/paraphrases/<benchmark>.jsonl (`culturebench generate paraphrases NAME`).")


def file_path(raw: Path, benchmark: str) -> Path:
    return Path(raw) / FOLDER / f"{benchmark}.jsonl"


def normal(text: str) -> str:
    return " ".join(str(text).split())


def read_lines(path: Path, root: Path | None = None) -> tuple[list[dict], InputFile]:
    """The file's lines, each checked (``FIELDS``); an InputError naming the file, the line and the key."""
    data = path.read_bytes()
    rows = []
    for number, row in jsonl_objects(data.decode("utf-8").splitlines(keepends=True), path):
        for key, kind in FIELDS.items():
            if key not in row:
                raise InputError(f"missing key {key!r}", file=path, row=number, column=key)
            if not isinstance(row[key], kind) or isinstance(row[key], bool):
                raise InputError(f"{key} must be {'a number' if key in ('index', 'seed') else 'text'}, got "
                                 f"{row[key]!r}", file=path, row=number, column=key)
        if row["index"] < 1:
            raise InputError(f"index must be at least 1, got {row['index']}", file=path, row=number, column="index")
        if not row["paraphrase"].strip():
            raise InputError("empty paraphrase", file=path, row=number, column="paraphrase")
        rows.append({**row, "_line": number})
    seen: dict[tuple[str, int], int] = {}
    for row in rows:
        key = (row["item"], row["index"])
        if key in seen:
            raise InputError(f"item {row['item']!r} has paraphrase {row['index']} twice (line {seen[key]})",
                             file=path, row=row["_line"], column="index")
        seen[key] = row["_line"]
    return rows, InputFile.from_bytes(path, input_name(path, root), data, len(rows), "utf-8")


def variants_table(raw: Path, benchmark: str, originals: Mapping[str, str]) -> tuple[pl.DataFrame | None,
                                                                                    InputFile | None]:
    """The ``variants`` config from ``RAW/paraphrases/<benchmark>.jsonl`` (None, None without the file);
    ``originals``: item id -> the text the release asks (what a paraphrase stands in for)."""
    path = file_path(raw, benchmark)
    if not path.is_file():
        return None, None
    rows, info = read_lines(path, Path(raw))
    records = sorted(((r["item"], f"{VARIANT_PREFIX}{r['index']}", r["index"], r["original"], r["paraphrase"],
                       r["made_by"], r["checked_by"], r["check"], r["seed"],
                       r["item"] in originals and normal(originals[r["item"]]) == normal(r["original"]))
                      for r in rows), key=lambda t: (t[0], t[2]))
    return pl.DataFrame(records, schema=SCHEMA, orient="row"), info


def release_part(raw: Path, benchmark: str, originals: Mapping[str, str], split: str
                 ) -> tuple[dict[str, dict[str, pl.DataFrame]], list[InputFile], dict]:
    """What a build adds for its paraphrases (``variants_table``): the ``variants`` config (under ``split``), its
    input file and the manifest's ``paraphrases`` provenance, keyed as ``BuildOutput`` takes them; all empty
    without the file."""
    table, info = variants_table(raw, benchmark, originals)
    if table is None:
        return {}, [], {}
    return {CONFIG: {split: table}}, [info], {"paraphrases": provenance(table)}


def provenance(table: pl.DataFrame) -> dict:
    """The manifest's ``paraphrases``: rows, items, K, who wrote and checked them, rows not matching the release."""
    return {"file": f"{FOLDER}/<benchmark>.jsonl", "rows": table.height, "items": table["id"].n_unique(),
            "k": int(table["paraphrase_index"].max()) if table.height else 0,
            "made_by": sorted(set(table["made_by"])), "checked_by": sorted(set(table["checked_by"])),
            "seeds": sorted({s for s in table["seed"] if s is not None}),
            "not_matching_release": int((~table["matches_release"]).sum())}


def pandera_schema():
    """The pandera schema of the ``variants`` config (the same for every benchmark that has one)."""
    import pandera.polars as pa

    text = pa.Check.str_length(min_value=1)
    return pa.DataFrameSchema(
        {"id": pa.Column(pl.String, text), "variant": pa.Column(pl.String, pa.Check.str_matches(r"^paraphrase\d+$")),
         "paraphrase_index": pa.Column(pl.Int64, pa.Check.ge(1)), "original": pa.Column(pl.String, text),
         "paraphrase": pa.Column(pl.String, text), "made_by": pa.Column(pl.String, text),
         "checked_by": pa.Column(pl.String, text), "check": pa.Column(pl.String, text),
         "seed": pa.Column(pl.Int64, nullable=True), "matches_release": pa.Column(pl.Boolean)},
        strict=True, ordered=True, unique=["id", "paraphrase_index"])


def checks(table: pl.DataFrame) -> list[CheckResult]:
    """Informational: the rows that do not match the release, and paraphrases equal to their original or to another
    paraphrase of the item (``repeated``; asked once, the response cache keys on the request)."""
    mismatched = sorted(f"{r['id']} {r['variant']}" for r in table.filter(~pl.col("matches_release")).to_dicts())
    return [
        check("paraphrases whose item the release lacks or whose original is not the item's text (informational: "
              "evaluate asks those items in the original wording)", CONFIG, mismatched, "any", passed=True),
        check("paraphrases identical to their original or to another paraphrase of the item (informational: asked "
              "once)", CONFIG, [f"{i} {v}: {what}" for i, v, what in repeated(table)], "any", passed=True),
    ]


def repeated(table: pl.DataFrame) -> list[tuple[str, str, str]]:
    """(id, paraphraseK, what it repeats: ``the original`` or an earlier paraphraseJ) for each paraphrase whose text,
    outer whitespace aside, is its item's original or an earlier paraphrase: a request identical to another's."""
    out = []
    for (item,), rows in table.sort("id", "paraphrase_index").group_by(["id"], maintain_order=True):
        seen = {rows["original"][0].strip(): "the original"}
        for variant, text in rows.select("variant", "paraphrase").iter_rows():
            if text.strip() in seen:
                out.append((item, variant, seen[text.strip()]))
            else:
                seen[text.strip()] = variant
    return out
