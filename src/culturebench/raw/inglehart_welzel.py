"""Reader of the Inglehart-Welzel zone tables ``RAW/inglehart_welzel/*.csv``, which NormAd and SocialCC both read:
one row per country with a country column (``Country``, ``country`` or ``Country/Territory``) and a zone column
(``Cultural_Region``, ``iw_zone``, ``Zone`` or ``zone``); other columns (e.g. the two survey coordinates) are
ignored. :func:`zone_table` checks the zones (:mod:`culturebench.countries`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from culturebench.countries import country_key, zone_name, zones
from culturebench.errors import InputError, excerpt
from culturebench.io import InputFile, input_files, input_name, read_csv_rows, read_input_text

FOLDER = "inglehart_welzel"
COUNTRY_COLUMNS = ("Country", "country", "Country/Territory")
ZONE_COLUMNS = ("Cultural_Region", "iw_zone", "Zone", "zone", "IW Zone", "Cultural Region")


@dataclass(frozen=True)
class ZoneRow:
    file: str
    row: int
    country: str
    zone: str


def read_zones(path: Path, root: Path) -> tuple[list[ZoneRow], InputFile]:
    name = input_name(path, root)
    data, text, encoding = read_input_text(path, name)
    header, body = read_csv_rows(text, name)
    country = next((c for c in COUNTRY_COLUMNS if c in header), None)
    zone = next((c for c in ZONE_COLUMNS if c in header), None)
    if country is None:
        raise InputError(f"missing country column (one of {list(COUNTRY_COLUMNS)}; columns: {excerpt(header)})",
                         file=name, column=COUNTRY_COLUMNS[0])
    if zone is None:
        raise InputError(f"missing zone column (one of {list(ZONE_COLUMNS)}; columns: {excerpt(header)})", file=name,
                         column=ZONE_COLUMNS[0])
    ci, zi = header.index(country), header.index(zone)
    rows = []
    for number, row in body:
        if not row[ci].strip():
            raise InputError("empty country", file=name, row=number, column=country)
        if not row[zi].strip():
            raise InputError("empty zone", file=name, row=number, column=zone)
        rows.append(ZoneRow(name, number, row[ci].strip(), row[zi].strip()))
    if not rows:
        raise InputError("no countries in the file", file=name)
    return rows, InputFile.from_bytes(path, name, data, len(rows), encoding)


def read_zone_tables(raw: Path) -> tuple[list[ZoneRow], list[InputFile]]:
    """The rows of every ``RAW/inglehart_welzel/*.csv`` in name order, and the files read; none when the folder is
    absent."""
    if not (raw / FOLDER).is_dir():
        return [], []
    rows: list[ZoneRow] = []
    inputs = []
    for path in input_files(raw / FOLDER, (".csv",), "Inglehart-Welzel zone tables"):
        found, info = read_zones(path, raw)
        rows += found
        inputs.append(info)
    return rows, inputs


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
