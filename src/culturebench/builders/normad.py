"""NormAd-Eti (Rao et al., 2024) from the Cultural Atlas etiquette pages, the stories file and the Inglehart-Welzel
cultural zones.

raw/cultural_atlas/<country>/*.html + raw/normad/*.{csv,jsonl} + raw/inglehart_welzel/*.csv  ->  stories, atlas.
Zones are the NormAd authors' own map (:func:`authors_zones`, their ``country_iwlist.csv``, shipped with attribution
in ``culturebench/facts/normad_authors/``); the zone tables give a country that map lacks, and win only with the
option ``zones: raw`` (:func:`zones_for`).

The paper's choices are data in ``culturebench/facts/normad.json``: the three labels, the four etiquette subaxes,
the eight Inglehart-Welzel zones, and our own list of countries with other names and demonyms (the leak check).

Country names are matched across the three inputs by a *country key*: casefolded, ``_``/``-`` as spaces,
whitespace collapsed, and every name or other name of a facts country mapped to that country's key
(``south_korea``, ``South Korea`` and ``Korea`` are one country; ``türkiye`` is Turkey).

Background check (``background_matches_atlas``): every text is compared after :func:`compare_key` (Unicode NFKC,
curly quotes and dashes made plain, every run of whitespace incl. no-break spaces one space, outer whitespace
stripped; case kept). Lines of the background that are headings (start with ``#``) must name the atlas page's
topic or one of its subsections; the other lines lose a leading bullet marker (``-``, ``*``, ``•``, ``+``). The
background passes when the remaining lines, joined by one space, are a contiguous part of the country's atlas
*Etiquette* page text (its items in page order joined by one space), or when every remaining line is one item of
that page. A country without an Etiquette page fails.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path

import polars as pl

from culturebench.builders.base import BuildOutput, CardInfo, ConfigInfo, Progress
from culturebench.errors import InputError
from culturebench.raw.cultural_atlas import FOLDER as ATLAS_FOLDER
from culturebench.raw.cultural_atlas import AtlasItem, read_atlas
from culturebench.raw.normad import (
    OTHER_COLUMNS,
    STORIES_FOLDER,
    ZONES_FOLDER,
    StoryRow,
    ZoneRow,
    input_files,
    read_stories,
    read_zones,
)
from culturebench.validation.checks import CheckResult, check

NAME = "normad"
STAGES = ("read", "atlas", "stories")
STORIES_SPLIT = "test"
ATLAS_SPLIT = "full"

CARD = CardInfo(
    pretty_name="NormAd-Eti (rebuilt by culturebench)",
    summary=(
        "NormAd (Rao et al., 2024) measures the cultural adaptability of language models: given a short social "
        "situation (story) and, optionally, its country, an abstract value or a rule-of-thumb, is the protagonist's "
        "action socially acceptable (yes / no / neutral)? NormAd-Eti has 2,633 stories from 75 countries built "
        "from the etiquette pages of the Cultural Atlas (SBS)."
    ),
    rebuilt_from="a stories file, the saved atlas pages and a country -> Inglehart-Welzel cultural zone table",
    license="cc-by-4.0",
    citation=(
        "@article{rao2024normad,\n"
        "  title = {{NormAd}: A Benchmark for Measuring the Cultural Adaptability of Large Language Models},\n"
        "  author = {Rao, Abhinav Sukumar and Yerukola, Akhila and Shah, Vishwa and Reinecke, Katharina and Sap, "
        "Maarten},\n"
        "  journal = {arXiv preprint arXiv:2404.12464},\n  year = {2024}\n}"
    ),
    configs=(
        ConfigInfo("stories", "One row per story: id (normad- + 16 hex of the sha256 of the country key and the "
                   "whitespace-normalised, casefolded story), country (as in the stories file), background (the "
                   "atlas etiquette text the story was made from), axis, subaxis (basic_etiquette, eating, "
                   "visiting, gift_giving), value, rule_of_thumb, story, explanation, gold_label (yes, no, "
                   "neutral) and iw_zone (one of the eight Inglehart-Welzel cultural zones). Not redistributable: `background` "
                   "is Cultural Atlas text, (c) SBS.", redistributable=False, license_name="cultural-atlas-terms"),
        ConfigInfo("atlas", "The parsed Cultural Atlas pages: country (from the folder name), culture (the page "
                   "title), topic, subsection, kind (bullet or paragraph), text, order (1-based on the page) and "
                   "source_file. Page content is (c) SBS.", redistributable=False,
                   license_name="cultural-atlas-terms"),
    ),
    creation=(
        "Stories are read from `RAW/normad/*.csv|*.jsonl` (columns Country, Background, Axis, Subaxis, Value, "
        "Rule-of-Thumb, Story, Explanation, Gold Label as in the NormAd release; extra columns ignored), atlas "
        "pages from `RAW/cultural_atlas/<country>/<page>.html` (parsed with the standard library's HTML parser: "
        "only the open topic card's text is read, scripts and styles ignored, nothing fetched or executed) and the "
        "zones from the NormAd authors' own map of their 75 countries (`src/analysis/country_iwlist.csv`, the "
        "map of their Table 2 and per-zone figures, CC BY 4.0, shipped in `culturebench/facts/normad_authors/`); "
        "`RAW/inglehart_welzel/*.csv` (Country + Cultural_Region; optional) gives the zone of a country that map "
        "lacks, and wins over it only with the build option `zones: raw` (`culturebench build normad --config`); "
        "provenance `zones` and the line at the end of this section name the countries the two place apart. "
        "A missing column, a malformed line, "
        "a page that is not an atlas page or a zone outside the eight stops the build with one line naming the "
        "file, row and column. Outer whitespace of every text is stripped; labels are casefolded; a subaxis is "
        "written in snake_case (`Gift Giving` -> `gift_giving`).\n\n"
        "Quarantined (in `quarantine/`, with a `reason`): stories with an empty field (`empty_text`), a label "
        "outside yes/no/neutral (`bad_label`), a subaxis outside the four (`bad_subaxis`), a country missing from "
        "the zone table (`no_iw_zone`), and every later copy of a story with the same country and story text "
        "(case and whitespace ignored; `duplicate_story`). Rows read (stories + atlas items) = kept + quarantined.\n\n"
        "Neutral stories, in the authors' release as in files `culturebench generate normad` writes, are built as the "
        "authors built them (their collect_irrelevant.py): country and background are the story's, while value and "
        "rule_of_thumb come from a country of another Inglehart-Welzel zone (the generated file names it in "
        "`Other Country` / `Other Background`). The authors' revised release (their src/v2_fix_neutral) swaps country "
        "and background of neutral rows to the rule's country: the build option `revision: v2_fix_neutral` applies "
        "that swap and the Canada gift-giving background (the line at the end of this section names the revision "
        "of this build); its model steps run through `culturebench generate`.\n\n"
        "Checks beyond the schemas: every background is its country's atlas etiquette text (compared after NFKC, "
        "plain quotes and dashes and whitespace normalisation; heading lines must name a subsection; the rest must "
        "be a contiguous part of the page text or each line one item of it); no story or rule-of-thumb names a "
        "country, another name of it or a demonym (our own list in facts/normad.json, whole words, case-sensitive, "
        "plus the story's own country), as the paper's construction requires; label balance per country and "
        "counts per zone and label (Table 2) are reported."
    ),
    considerations=(
        "**Licensing.** NormAd is released under CC BY 4.0 (Rao et al.), but its backgrounds and the `atlas` "
        "config reproduce Cultural Atlas text, (c) SBS: both `stories` (for its `background` column) and `atlas` "
        "are marked *not redistributable* (`cultural-atlas-terms`): `culturebench publish` withholds `atlas` and "
        "uploads `stories` without its `background` column (the rest is NormAd's, CC BY 4.0). The Inglehart-Welzel zone "
        "assignment is the NormAd authors' (their own binning of the 75 countries; 12 of them sit in another zone "
        "in a public cultural-map table and 15 are absent from it: see "
        "`culturebench/facts/normad_authors/README.md`).\n\n"
        "**Use.** Stories were generated by GPT-4 from the atlas text and filtered by humans; they are English "
        "only and describe norms as the atlas states them, which is a simplification of any country's culture."
    ),
    tags=("cultural-norms", "etiquette", "social-acceptability", "llm-evaluation", "inglehart-welzel"),
    source=("the NormAd-Eti stories (normad_etiquette_final_data.csv, akhilayerukola/NormAd), the Cultural Atlas "
            "etiquette pages (culturalatlas.sbs.com.au) and a country -> Inglehart-Welzel zone table"),
    language=("en",),
    task_categories=("text-classification",),
    annotations_creators=("machine-generated", "expert-generated"),
    source_datasets=("extended|akhilayerukola/NormAd",),
    license_details=("NormAd is CC BY 4.0, but the `background` column of `stories` and the whole `atlas` config are "
                     "Cultural Atlas text, (c) SBS: both configs are marked not redistributable, so publishing this "
                     "release uploads neither (rebuild them locally from the raw files)."),
)


@cache
def facts() -> dict:
    return json.loads(resources.files("culturebench.facts").joinpath("normad.json").read_text(encoding="utf-8"))


def labels() -> list[str]:
    return list(facts()["labels"])


def subaxes() -> list[str]:
    return list(facts()["subaxes"])


def zones() -> list[str]:
    return list(facts()["iw_zones"])


def raw_present(raw: Path) -> bool:
    return (raw / STORIES_FOLDER).is_dir()


# ------------------------------------------------------------------------------------------------ normalising


def normal(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split())


def _base_key(name: str) -> str:
    return normal(name.replace("_", " ").replace("-", " ")).casefold()


@cache
def _aliases() -> dict[str, str]:
    out = {}
    for entry in facts()["countries"]:
        canonical = _base_key(entry["country"])
        for name in [entry["country"], *entry["other_names"]]:
            out[_base_key(name)] = canonical
    return out


def country_key(name: str) -> str:
    key = _base_key(name)
    return _aliases().get(key, key)


def subaxis_key(value: str) -> str | None:
    key = re.sub(r"[\s\-]+", "_", value.strip().casefold())
    by_title = {re.sub(r"\s+", "_", title.casefold()): code for code, title in facts()["subaxes"].items()}
    return key if key in facts()["subaxes"] else by_title.get(key)


def zone_name(value: str) -> str | None:
    lookup = {z.casefold(): z for z in zones()} | {k: v for k, v in facts()["iw_zone_aliases"].items()}
    key = normal(value).casefold()
    return lookup.get(key) or lookup.get(key.replace("-", " "))


_PLAIN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
                        "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u200b": None})


def compare_key(text: str) -> str:
    """How backgrounds and atlas texts are compared: NFKC, plain quotes/dashes, whitespace collapsed."""
    return normal(unicodedata.normalize("NFKC", text).translate(_PLAIN))


def story_id(country: str, story: str) -> str:
    text = f"{country_key(country)}\x1f{normal(story).casefold()}"
    return f"normad-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


# ------------------------------------------------------------------------------------------------------ build


ATLAS_SCHEMA = {"country": pl.String, "culture": pl.String, "topic": pl.String, "subsection": pl.String,
                "kind": pl.String, "text": pl.String, "order": pl.Int64, "source_file": pl.String}
STORY_SCHEMA = {"id": pl.String, "country": pl.String, "background": pl.String, "axis": pl.String,
                "subaxis": pl.String, "value": pl.String, "rule_of_thumb": pl.String, "story": pl.String,
                "explanation": pl.String, "gold_label": pl.String, "iw_zone": pl.String}
QUARANTINE_SCHEMA = {"source_file": pl.String, "row": pl.Int64, "country": pl.String, "background": pl.String,
                     "axis": pl.String, "subaxis": pl.String, "value": pl.String, "rule_of_thumb": pl.String,
                     "story": pl.String, "explanation": pl.String, "gold_label": pl.String, "reason": pl.String}
FIELDS = {"Country": "country", "Background": "background", "Axis": "axis", "Subaxis": "subaxis", "Value": "value",
          "Rule-of-Thumb": "rule_of_thumb", "Story": "story", "Explanation": "explanation", "Gold Label": "gold_label"}


def build(raw: Path, seed: int, progress: Progress, options: dict | None = None) -> BuildOutput:
    """``seed`` is unused: nothing is sampled and NormAd has one (test) split. ``options``: ``zones``
    (:data:`ZONE_SOURCES`, default ``authors``)."""
    options = options or {}
    progress("read")
    stories: list[StoryRow] = []
    inputs = []
    for path in input_files(raw / STORIES_FOLDER, (".csv", ".jsonl"), "NormAd stories files"):
        rows, info = read_stories(path, raw)
        stories += rows
        inputs.append(info)
    zones = zones_for(raw, options.get("zones", "authors"))
    inputs += zones.inputs
    items, atlas_inputs = read_atlas(raw / ATLAS_FOLDER, raw)
    inputs += atlas_inputs
    revision = file_revision(stories)
    if revision is None:
        revision = {"name": "v1"}
        if options.get("revision", "v1") == "v2_fix_neutral":
            stories, revision = revise_v2_fix_neutral(stories, items)
    zones_used = zone_report(zones, [row.values["Country"] for row in stories
                                     if country_key(row.values["Country"]) in zones.zone_of])
    progress("atlas")
    atlas = atlas_table(items)
    progress("stories")
    table, quarantine = stories_table(stories, zones.zone_of)
    return BuildOutput(
        tables={"stories": {STORIES_SPLIT: table}, "atlas": {ATLAS_SPLIT: atlas}},
        quarantine=quarantine,
        inputs=inputs,
        rows_read=len(stories) + len(items),
        rows_kept=table.height + atlas.height,
        provenance={
            "stories_read": len(stories),
            "atlas_items_read": len(items),
            "atlas_pages": len(atlas_inputs),
            "zone_rows_read": zones.rows_read,
            "zones": zones_used,
            "revision": revision,
            "paper_counts": facts()["paper_counts"],
            "counts_by_zone_and_label": counts_by_zone_and_label(table),
        },
        card=build_card(zones_used, revision),
    )


def build_card(zones_used: dict, revision: dict) -> CardInfo:
    """:data:`CARD` with this build's revision and zones (their source, the countries the RAW table places
    elsewhere)."""
    differ = zones_used["differing_from_raw_table"]
    moves = ", ".join(f"{c} ({d['authors']} -> {d['raw_table']})" for c, d in differ.items()) or "none"
    if zones_used["source"] == "raw":
        line = (f"This build: zones `raw` (RAW/inglehart_welzel/ wins); {len(differ)} of the stories' countries "
                f"moved from the authors' zone: {moves}.")
    else:
        line = (f"This build: zones `authors` (the authors' `{zones_used['authors_map']}`; RAW/inglehart_welzel/ "
                f"only for {len(zones_used['from_raw_table'])} countries it lacks); {len(differ)} of the stories' "
                f"countries sit in another zone in RAW/inglehart_welzel/ and would move with `zones: raw`: {moves}.")
    if "applied_by" in revision:
        line += f" Revision `v2_fix_neutral` (the authors' src/v2_fix_neutral), applied by {revision['applied_by']}."
    elif revision["name"] == "v2_fix_neutral":
        line += (f" Revision `v2_fix_neutral` (the authors' src/v2_fix_neutral, deterministic steps): "
                 f"{revision['neutral_rows_swapped']} neutral rows swapped to the rule's country and background "
                 f"(the story's in the Other columns), {revision['canada_gift_giving_backgrounds_set']} of Canada's "
                 f"gift-giving rows given its atlas Gift Giving background; {revision['model_steps']}.")
    else:
        line += " Revision `v1`: the stories as read (the published release; neutral rows keep the story's country)."
    return replace(CARD, creation=f"{CARD.creation}\n\n{line}")


def zone_table(rows: list[ZoneRow]) -> dict[str, str]:
    """Country key -> zone; an unknown zone, or one country given two zones, is an input error."""
    out: dict[str, tuple[str, ZoneRow]] = {}
    for row in rows:
        zone = zone_name(row.zone)
        if zone is None:
            raise InputError(f"unknown Inglehart-Welzel zone {row.zone!r}; expected one of {zones()}",
                             file=row.file, row=row.row, column="zone")
        key = country_key(row.country)
        if key in out and out[key][0] != zone:
            earlier = out[key][1]
            raise InputError(f"country {row.country!r} already has zone {out[key][0]!r} in row {earlier.row} of "
                             f"{earlier.file}", file=row.file, row=row.row, column="zone")
        out.setdefault(key, (zone, row))
    return {k: v[0] for k, v in out.items()}


AUTHORS_ZONES = "country_iwlist.csv"
"""The NormAd authors' country -> zone map of their results: ``src/analysis/country_iwlist.csv`` (Table 2, the
per-zone Figs. 5 / 10 / 13), as their analysis script writes it (Malta in Protestant Europe, the Philippines in West
and South Asia); their repository keeps it as a Git LFS pointer, which this copy matches in size and sha256."""
AUTHORS_GENERATION_ZONES = "country_iw_zones.csv"
"""The map their story scripts drew a neutral story's other zone from (``map_iw_bin_to_country`` of
collect_irrelevant.py / collect_stories.py: Malta and the Philippines in Latin America)."""
ZONE_SOURCES = ("authors", "raw")
"""Build / generate option ``zones``: ``authors`` (default) takes a country's zone from the authors' map and
``RAW/inglehart_welzel/`` only for a country that map lacks; ``raw`` lets that folder's tables win."""
REVISIONS = ("v1", "v2_fix_neutral")
"""Build option ``revision``: ``v1`` (default) keeps the stories as read (the published release);
``v2_fix_neutral`` applies the deterministic steps of the authors' revised release (their ``src/v2_fix_neutral``,
:func:`revise_v2_fix_neutral`); its model steps run through ``culturebench generate``."""


BUILD_OPTIONS = {"zones": ZONE_SOURCES, "revision": REVISIONS}
"""``culturebench build normad --config``: option -> allowed values."""


def authors_file(name: str):
    """A file the NormAd authors released (CC BY 4.0), shipped in ``culturebench/facts/normad_authors/`` (its
    README names the repository, commit and licence)."""
    path = resources.files("culturebench.facts") / "normad_authors"
    for part in name.split("/"):
        path = path / part
    return path


@cache
def authors_zones(name: str = AUTHORS_ZONES) -> dict[str, str]:
    """Country key -> zone for the authors' 75 countries (``facts/normad_authors/<name>``: country column
    ``Country`` or ``country``, zone column ``Cultural_Region`` or ``iw_bin``)."""
    text = authors_file(name).read_text(encoding="utf-8-sig")
    where = f"culturebench/facts/normad_authors/{name}"
    rows = [ZoneRow(where, number, row.get("Country") or row["country"], row.get("Cultural_Region") or row["iw_bin"])
            for number, row in enumerate(csv.DictReader(io.StringIO(text)), 1)]
    return zone_table(rows)


def raw_zones(raw: Path) -> tuple[dict[str, str], list, int]:
    """Country key -> zone from ``RAW/inglehart_welzel/*.csv`` (empty when the folder is absent), the files read
    and their row count."""
    if not (raw / ZONES_FOLDER).is_dir():
        return {}, [], 0
    rows: list[ZoneRow] = []
    inputs = []
    for path in input_files(raw / ZONES_FOLDER, (".csv",), "Inglehart-Welzel zone tables"):
        found, info = read_zones(path, raw)
        rows += found
        inputs.append(info)
    return zone_table(rows), inputs, len(rows)


@dataclass(frozen=True)
class Zones:
    """The zone of every country a build or a generation run uses, and where each came from."""

    zone_of: dict[str, str]  # country key -> zone
    source: str  # one of ZONE_SOURCES
    authors_map: str  # the authors' file consulted
    from_table: frozenset[str]  # keys whose zone is RAW/inglehart_welzel's
    differing: dict[str, tuple[str, str]]  # key -> (authors' zone, table's zone) where both name the country
    inputs: tuple = ()
    rows_read: int = 0


def zones_for(raw: Path, source: str = "authors", authors_map: str = AUTHORS_ZONES) -> Zones:
    """Every country's zone under option ``zones`` = ``source`` (:data:`ZONE_SOURCES`)."""
    if source not in ZONE_SOURCES:
        raise InputError(f"unknown zones {source!r}; choose from {', '.join(ZONE_SOURCES)}", column="zones")
    table, inputs, rows = raw_zones(raw)
    authors = authors_zones(authors_map)
    zone_of = {**authors, **table} if source == "raw" else {**table, **authors}
    differing = {key: (authors[key], zone) for key, zone in table.items() if key in authors and authors[key] != zone}
    from_table = frozenset(key for key in table if source == "raw" or key not in authors)
    return Zones(zone_of, source, authors_map, from_table, differing, tuple(inputs), rows)


def zone_report(zones: Zones, countries: list[str]) -> dict:
    """The build's account of its zones for the stories' ``countries``: the source, the countries whose zone is
    the RAW table's, and those the two maps place differently (moved under ``raw``, kept under ``authors``)."""
    present = sorted(set(countries), key=country_key)
    differ = {c: {"authors": zones.differing[country_key(c)][0], "raw_table": zones.differing[country_key(c)][1]}
              for c in present if country_key(c) in zones.differing}
    return {"source": zones.source, "authors_map": zones.authors_map,
            "from_raw_table": [c for c in present if country_key(c) in zones.from_table],
            "differing_from_raw_table": differ,
            "moved_by_raw_table": sorted(differ) if zones.source == "raw" else []}


def atlas_table(items: list[AtlasItem]) -> pl.DataFrame:
    return pl.DataFrame([(i.country, i.culture, i.topic, i.subsection, i.kind, i.text, i.order, i.source_file)
                         for i in items], schema=ATLAS_SCHEMA, orient="row")


def stories_table(rows: list[StoryRow], zone_of: dict[str, str]) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    kept = []
    dropped: dict[str, list] = defaultdict(list)
    first: dict[tuple[str, str], StoryRow] = {}
    for row in rows:
        v = {FIELDS[k]: text.strip() for k, text in row.values.items()}
        where = (row.file, row.row, *(row.values[k] for k in FIELDS))
        empty = [k for k in FIELDS if k != "Axis" and not v[FIELDS[k]]]
        if empty:
            dropped["empty_text"].append((*where, f"empty {', '.join(empty)}"))
            continue
        label = v["gold_label"].casefold()
        if label not in labels():
            dropped["bad_label"].append((*where, f"Gold Label {row.values['Gold Label']!r} is not one of {labels()}"))
            continue
        subaxis = subaxis_key(v["subaxis"])
        if subaxis is None:
            dropped["bad_subaxis"].append((*where, f"Subaxis {row.values['Subaxis']!r} is not one of {subaxes()}"))
            continue
        zone = zone_of.get(country_key(v["country"]))
        if zone is None:
            dropped["no_iw_zone"].append((*where, (f"country {v['country']!r} is not in the Inglehart-Welzel zone "
                                                  "table")))
            continue
        key = (country_key(v["country"]), normal(v["story"]).casefold())
        if key in first:
            earlier = first[key]
            dropped["duplicate_story"].append((*where, (f"same country and story as row {earlier.row} of "
                                                       f"{earlier.file}, which is kept")))
            continue
        first[key] = row
        kept.append((story_id(v["country"], v["story"]), v["country"], v["background"], v["axis"], subaxis,
                     v["value"], v["rule_of_thumb"], v["story"], v["explanation"], label, zone))
    table = pl.DataFrame(kept, schema=STORY_SCHEMA, orient="row")
    quarantine = {rule: pl.DataFrame(found, schema=QUARANTINE_SCHEMA, orient="row") for rule, found in
                  sorted(dropped.items())}
    return table, quarantine


def background_text(title: str, texts: list[str]) -> str:
    """An atlas subsection as a story's background (the authors' ``get_cultcontext``: ``### <subsection>`` then
    ``- <item>`` per item)."""
    return "\n".join([f"### {title}", *(f"- {t}" for t in texts)])


REVISION_COLUMN = "Revision"
"""Written by ``culturebench generate normad_v2_fix`` (``v2_fix_neutral`` on every row): the file is revised."""


def file_revision(rows: list[StoryRow]) -> dict | None:
    """The revision a stories file says it already is (its ``Revision`` column: ``generate normad_v2_fix`` applied
    every step, deterministic and model), None for a file without one; a mix is an input error."""
    marks = {(row.extra or {}).get(REVISION_COLUMN, "") for row in rows}
    if marks == {""}:
        return None
    if marks != {"v2_fix_neutral"}:
        row = next(r for r in rows if (r.extra or {}).get(REVISION_COLUMN, "") != "v2_fix_neutral")
        raise InputError(f"{REVISION_COLUMN!r} must be 'v2_fix_neutral' on every row or absent, not "
                         f"{(row.extra or {}).get(REVISION_COLUMN, '')!r}", file=row.file, row=row.row,
                         column=REVISION_COLUMN)
    return {"name": "v2_fix_neutral", "applied_by": "culturebench generate normad_v2_fix (every step, deterministic "
            "and model; the build swaps nothing)", "neutral_rows": sum(
                r.values["Gold Label"].strip().casefold() == "neutral" for r in rows)}


def revise_v2_fix_neutral(rows: list[StoryRow], items: list[AtlasItem]) -> tuple[list[StoryRow], dict]:
    """The authors' ``swap_neutral_country_background.py`` and the deterministic half of
    ``fix_canada_gift_giving.py``: a neutral row's Country and Background become its Other Country and Other
    Background (the rule's culture) and the story's move to the Other columns; a neutral row then of Canada's
    gift giving takes Canada's atlas Gift Giving subsection as its Background (the authors type their scrape of it
    into the script; here it comes from ``RAW/cultural_atlas/``, not shipped: (c) SBS). A neutral row without the
    Other columns stops the build, as the authors' script does. Returns the rows and counts."""
    canada = [i for i in sorted(items, key=lambda i: (i.source_file, i.order))
              if country_key(i.country) == "canada" and i.topic == facts()["etiquette_topic"]
              and subaxis_key(i.subsection or "") == "gift_giving"]
    canada_background = background_text(canada[0].subsection, [i.text for i in canada]) if canada else None
    out, swapped, fixed, unfixed = [], 0, 0, 0
    for row in rows:
        if row.values["Gold Label"].strip().casefold() != "neutral":
            out.append(row)
            continue
        if row.other is None:
            raise InputError("revision v2_fix_neutral swaps a neutral row's Country / Background with its "
                             f"{' / '.join(OTHER_COLUMNS)}, which this file lacks", file=row.file, row=row.row,
                             column=OTHER_COLUMNS[0])
        empty = next((c for c in OTHER_COLUMNS if not row.other[c].strip()), None)
        if empty:
            raise InputError(f"neutral row with an empty {empty!r} (revision v2_fix_neutral swaps it in)",
                             file=row.file, row=row.row, column=empty)
        values = {**row.values, "Country": row.other["Other Country"], "Background": row.other["Other Background"]}
        swapped += 1
        if country_key(values["Country"]) == "canada" and subaxis_key(values["Subaxis"]) == "gift_giving":
            if canada_background is None:
                unfixed += 1
            else:
                values["Background"] = canada_background
                fixed += 1
        out.append(StoryRow(row.file, row.row, values, {"Other Country": row.values["Country"],
                                                        "Other Background": row.values["Background"]}, row.extra))
    return out, {"name": "v2_fix_neutral", "neutral_rows_swapped": swapped,
                 "canada_gift_giving_backgrounds_set": fixed,
                 "canada_gift_giving_without_atlas_page": unfixed,
                 "model_steps": "not applied by the build (rules and values regenerated where they fail entailment, "
                                "Canada's gift-giving rules and values, stories checked against their background, "
                                "explanations): `culturebench generate normad_v2_fix`"}


def counts_by_zone_and_label(stories: pl.DataFrame) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for zone, label in stories.select("iw_zone", "gold_label").iter_rows():
        counts.setdefault(zone, {lab: 0 for lab in labels()})[label] += 1
    return dict(sorted(counts.items()))


# ---------------------------------------------------------------------------------------------------- checks


_HEADING = re.compile(r"^\s*#+\s*")
_BULLET = re.compile(r"^\s*(?:[-*\u2022+]|\d+[.)])\s+")


def background_problem(background: str, page: list[dict] | None) -> str | None:
    """Why ``background`` is not its country's atlas etiquette text (None when it is); ``page``: the country's
    Etiquette items in page order (dicts with subsection, text)."""
    if not page:
        return "no atlas Etiquette page for the country"
    headings = {compare_key(item["subsection"]) for item in page} | {"Etiquette"}
    texts = [compare_key(item["text"]) for item in page]
    lines = []
    for line in background.splitlines():
        if not line.strip():
            continue
        if _HEADING.match(line):
            heading = compare_key(_HEADING.sub("", line)).rstrip(":")
            if heading not in headings:
                return f"heading {heading!r} is not a subsection of the atlas page"
            continue
        lines.append(compare_key(_BULLET.sub("", line)))
    if not lines:
        return "background has no text"
    joined = " ".join(lines)
    if joined in " ".join(texts):
        return None
    known = set(texts)
    missing = [line for line in lines if line not in known]
    return None if not missing else f"not in the atlas page: {missing[0][:80]!r}"


@cache
def _leak_pattern_parts() -> tuple[tuple[str, str], ...]:
    skip = set(facts()["leak_check"]["not_checked"])
    words = []
    for entry in facts()["countries"]:
        for name in [entry["country"], *entry["other_names"]]:
            if name not in skip:
                words.append((name, re.escape(name)))
        for demonym in entry["demonyms"]:
            if demonym not in skip:
                words.append((demonym, re.escape(demonym) + "(?:s|es)?"))
    return tuple(words)


@cache
def _leak_regex() -> re.Pattern:
    parts = sorted(_leak_pattern_parts(), key=lambda p: -len(p[0]))
    return re.compile(r"(?<![\w])(?:" + "|".join(p for _, p in parts) + r")(?![\w])")


def leaked_names(text: str, own_country: str = "") -> list[str]:
    """Country names / demonyms named in ``text`` (whole words, case-sensitive), and the story's own country."""
    found = [m.group(0) for m in _leak_regex().finditer(text)]
    own = normal(own_country.replace("_", " "))
    if (own and own.casefold() not in {f.casefold() for f in found}
            and re.search(r"(?<![\w])" + re.escape(own) + r"(?![\w])", text, flags=re.IGNORECASE)):
        found.append(own)
    return found


def checks(tables: dict[str, dict[str, pl.DataFrame]]) -> list[CheckResult]:
    stories = pl.concat(tables["stories"].values())
    atlas = pl.concat(tables["atlas"].values())
    records = stories.to_dicts()
    pages: dict[str, list[dict]] = defaultdict(list)
    for item in atlas.filter(pl.col("topic") == facts()["etiquette_topic"]).sort("source_file", "order").to_dicts():
        pages[country_key(item["country"])].append(item)
    bad_background = []
    for r in records:
        problem = background_problem(r["background"], pages.get(country_key(r["country"])))
        if problem:
            bad_background.append(f"{r['id']} ({r['country']}): {problem}")
    leaks = [f"{r['id']} {field}: {', '.join(sorted(set(names)))}" for r in records
             for field in ("story", "rule_of_thumb")
             if (names := leaked_names(r[field], r["country"]))]
    keys = Counter((country_key(r["country"]), normal(r["story"]).casefold()) for r in records)
    duplicates = sorted(f"{k[0]}: {k[1][:60]}" for k, c in keys.items() if c > 1)
    wrong_id = [r["id"] for r in records if r["id"] != story_id(r["country"], r["story"])]
    balance: dict[str, dict[str, int]] = {}
    for r in records:
        balance.setdefault(r["country"], {lab: 0 for lab in labels()})[r["gold_label"]] += 1
    subsections = sorted({f"{country}: {sub}" for country, sub in atlas.filter(
        pl.col("topic") == facts()["etiquette_topic"]).select("country", "subsection").unique().iter_rows()
        if subaxis_key(sub) is None})
    empty_atlas = atlas.filter(pl.col("text").str.strip_chars() == "").height
    return [
        check("every gold_label is yes, no or neutral", "stories",
              sorted({r["gold_label"] for r in records} - set(labels())), []),
        check("every subaxis is one of basic_etiquette, eating, visiting, gift_giving", "stories",
              sorted({r["subaxis"] for r in records} - set(subaxes())), []),
        check("every background is its country's atlas Etiquette text (NFKC, plain quotes/dashes, whitespace "
              "collapsed; contiguous part of the page or every line an item)", "stories",
              len(bad_background), 0, examples=bad_background[:5], failures=len(bad_background)),
        check("no story or rule-of-thumb names a country, nationality or demonym (facts/normad.json) or its own "
              "country", "stories", len(leaks), 0, examples=leaks[:5], failures=len(leaks)),
        check("no two stories have the same country and story text (case and whitespace ignored)", "stories",
              duplicates, []),
        check("every id is the hash of its country key and story", "stories", wrong_id, []),
        check("label balance per country (informational: yes / no / neutral counts)", "stories",
              dict(sorted(balance.items())), "any", passed=True),
        check("stories per Inglehart-Welzel zone and label (informational; the paper's Table 2 on the full "
              "release)", "stories", counts_by_zone_and_label(stories), "any", passed=True),
        check("atlas Etiquette subsections outside the four subaxes (informational)", "atlas", subsections, "any",
              passed=True),
        check("no atlas item has empty text", "atlas", empty_atlas, 0),
    ]
