"""The Inglehart-Welzel zone of every NormAd country: the NormAd authors' own map (:func:`authors_zones`, their
``country_iwlist.csv``, shipped with attribution in ``culturebench/facts/normad_authors/``), and the zone tables
``RAW/inglehart_welzel/*.csv`` for a country that map lacks (or winning, with the option ``zones: raw``:
:func:`zones_for`)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from culturebench.countries import country_key
from culturebench.errors import InputError
from culturebench.raw.inglehart_welzel import ZoneRow, read_zone_tables, zone_table

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
    rows, inputs = read_zone_tables(raw)
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
