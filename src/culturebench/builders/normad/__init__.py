"""NormAd-Eti (Rao et al., 2024) from the Cultural Atlas etiquette pages, the stories file and the Inglehart-Welzel
cultural zones.

raw/cultural_atlas/<country>/*.html + raw/normad/*.{csv,jsonl} + raw/inglehart_welzel/*.csv  ->  stories, atlas.
Zones are the NormAd authors' own map (:func:`authors_zones`, their ``country_iwlist.csv``, shipped with attribution
in ``culturebench/facts/normad_authors/``); the zone tables give a country that map lacks, and win only with the
option ``zones: raw`` (:func:`zones_for`).

The paper's choices are data in ``culturebench/facts/normad.json``: the three labels and the four etiquette
subaxes; the eight Inglehart-Welzel zones and our own list of countries with other names and demonyms (the leak
check) are shared ones in ``facts/countries.json``.

Country names are matched across the three inputs by the *country key* of :mod:`culturebench.countries`
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

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polars as pl

from culturebench import countries
from culturebench.builders.base import BuildOutput, Progress
from culturebench.builders.normad.card import (  # noqa: F401 - CARD, manifest_card: the release's and audit's
    CARD,
    SWAP_ONLY,
    build_card,
    manifest_card,
)
from culturebench.builders.normad.zones import (  # noqa: F401 - the zones are the builder's too (generate normad)
    AUTHORS_GENERATION_ZONES,
    AUTHORS_ZONES,
    ZONE_SOURCES,
    authors_file,
    authors_zones,
    zone_report,
    zones_for,
)
from culturebench.options import BuildOptions, option
from culturebench.countries import compare_key, country_key, normal
from culturebench.errors import InputError
from culturebench.facts import read as read_facts
from culturebench.raw.cultural_atlas import FOLDER as ATLAS_FOLDER
from culturebench.raw.cultural_atlas import AtlasItem, read_atlas
from culturebench.io import input_files
from culturebench.raw import paraphrases
from culturebench.raw.normad import OTHER_COLUMNS, STORIES_FOLDER, StoryRow, closing_question, read_stories
from culturebench.validation.checks import CheckResult, check

NAME = "normad"
STAGES = ("read", "atlas", "stories")
STORIES_SPLIT = "test"
ATLAS_SPLIT = "full"

@cache
def facts() -> dict:
    return read_facts(NAME)


def labels() -> list[str]:
    return list(facts()["labels"])


def subaxes() -> list[str]:
    return list(facts()["subaxes"])


def raw_present(raw: Path) -> bool:
    return (raw / STORIES_FOLDER).is_dir()


# ------------------------------------------------------------------------------------------------ normalising


def subaxis_key(value: str) -> str | None:
    key = re.sub(r"[\s\-]+", "_", value.strip().casefold())
    by_title = {re.sub(r"\s+", "_", title.casefold()): code for code, title in facts()["subaxes"].items()}
    return key if key in facts()["subaxes"] else by_title.get(key)


def story_id(country: str, story: str) -> str:
    text = f"{country_key(country)}\x1f{normal(story).casefold()}"
    return f"normad-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


REVISIONS = ("v1", SWAP_ONLY, "v2_fix_neutral")
"""Build option ``revision``: ``v1`` (default) keeps the stories as read (the published release); ``v2_swap_only``
applies the deterministic steps of the authors' revised release (their ``src/v2_fix_neutral``,
:func:`revise_v2_fix_neutral`: the swap and the Canada background) and is named so, since its rules, values, stories
and explanations are still v1's; ``v2_fix_neutral`` is the revised release itself, a stories file that
``culturebench generate normad_v2_fix`` wrote (every step; :func:`file_revision`): asked of any other file it is an
error. A revised file is ``v2_fix_neutral`` whatever the option says."""


@dataclass(frozen=True, kw_only=True)
class Options(BuildOptions):
    """``culturebench build normad --zones ... --revision ...`` (or the keys of ``--config``)."""

    zones: str = option(ZONE_SOURCES[0], choices=ZONE_SOURCES,
                        help="Where a country's Inglehart-Welzel zone comes from: authors (the NormAd authors' map; "
                             "RAW/inglehart_welzel/ only for a country it lacks) or raw (RAW/inglehart_welzel/ "
                             "wins).")
    revision: str = option(REVISIONS[0], choices=REVISIONS,
                           help="v1 (the stories as read: the published release), v2_swap_only (only the "
                                "deterministic steps of the authors' revised release: the neutral rows' swap and "
                                "Canada's background) or v2_fix_neutral (the revised release: a stories file "
                                "`generate normad_v2_fix` wrote).")


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


def build(raw: Path, seed: int, progress: Progress, options: Options | None = None) -> BuildOutput:
    """``seed`` is unused: nothing is sampled and NormAd has one (test) split. ``options``: ``zones``
    (:data:`ZONE_SOURCES`, default ``authors``)."""
    options = options or Options()
    progress("read")
    stories: list[StoryRow] = []
    inputs = []
    for path in input_files(raw / STORIES_FOLDER, (".csv", ".jsonl"), "NormAd stories files"):
        rows, info = read_stories(path, raw)
        stories += rows
        inputs.append(info)
    zones = zones_for(raw, options.zones)
    inputs += zones.inputs
    items, atlas_inputs = read_atlas(raw / ATLAS_FOLDER, raw)
    inputs += atlas_inputs
    stories, revision = revision_of(stories, items, options.revision)
    zones_used = zone_report(zones, [row.values["Country"] for row in stories
                                     if country_key(row.values["Country"]) in zones.zone_of])
    progress("atlas")
    atlas = atlas_table(items)
    progress("stories")
    table, quarantine = stories_table(stories, zones.zone_of)
    tables = {"stories": {STORIES_SPLIT: table}, "atlas": {ATLAS_SPLIT: atlas}}
    variants, paraphrase_inputs, extra = paraphrases.release_part(raw, NAME, paraphrased_texts(table), STORIES_SPLIT)
    tables.update(variants)
    inputs += paraphrase_inputs
    return BuildOutput(
        tables=tables,
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
            **extra,
        },
        card=build_card(zones_used, revision, bool(variants)),
    )


def paraphrased_texts(stories: pl.DataFrame) -> dict[str, str]:
    """Story id -> the text a paraphrase stands in for (``raw.paraphrases``): the story's closing question
    (``raw.normad.closing_question``), its facts, value, rule-of-thumb and gold label untouched; stories without one
    are not paraphrased."""
    return {i: q for i, story in zip(stories["id"].to_list(), stories["story"].to_list())
            if (q := closing_question(story)) is not None}


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


def revision_of(rows: list[StoryRow], items: list[AtlasItem], asked: str) -> tuple[list[StoryRow], dict]:
    """The stories and the revision they are (REVISIONS): a file ``generate normad_v2_fix`` wrote is
    ``v2_fix_neutral``; otherwise ``v1`` as read or ``v2_swap_only`` (:func:`revise_v2_fix_neutral`); asking
    ``v2_fix_neutral`` of a file that is not revised is an error, not a release misnamed."""
    revision = file_revision(rows)
    if revision is not None:
        return rows, revision
    if asked == "v2_fix_neutral":
        raise InputError("revision v2_fix_neutral is the authors' revised release only once `culturebench generate "
                         f"normad_v2_fix` has run (its stories file has a {REVISION_COLUMN!r} column, this one has "
                         f"none); `revision: {SWAP_ONLY}` applies the swap and the Canada background alone",
                         file=rows[0].file if rows else None, column="revision")
    if asked == SWAP_ONLY:
        return revise_v2_fix_neutral(rows, items)
    return rows, {"name": "v1"}


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
    return out, {"name": SWAP_ONLY, "neutral_rows_swapped": swapped,
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
    for entry in countries.facts()["countries"]:
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
        *([] if paraphrases.CONFIG not in tables
          else paraphrases.checks(pl.concat(tables[paraphrases.CONFIG].values()))),
    ]
