"""One shape for every benchmark's country view (issue #56): ``RUN_DIR/countries.json``, its reader, and the
figures drawn from it (a sorted dot plot with intervals and a world map, ``country_plots``).

countries.json::

    {"benchmark": NAME, "model": ..., "measure": the primary measure (ranks the countries),
     "higher_is_better": true, "measures": {measure: what it is}, "notes": [one line per problem],
     "countries": {ISO alpha-3: {"name": ..., MEASURE: value, "interval_...": [low, high], "n_questions": ...}}}

A benchmark gives its view either by writing the file from its run (an opinions protocol that asks each country) or through the
contract's ``Benchmark.countries(metrics, release)`` hook, which ``culturebench profile`` calls on a run folder
without the file. Country names become ISO alpha-3 codes through ``country_code`` (Natural Earth's names and ISO
codes shipped in ``facts/world_110m.json``, WVS-7's names, and a few aliases). Names no benchmark.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path

from culturebench.errors import InputError

COUNTRIES_FILE = "countries.json"
ALIASES = {
    "usa": "USA", "us": "USA", "united states of america": "USA", "america": "USA", "uk": "GBR",
    "britain": "GBR", "great britain": "GBR", "england": "GBR", "south korea": "KOR", "korea": "KOR",
    "republic of korea": "KOR", "north korea": "PRK", "russia": "RUS", "russian federation": "RUS",
    "iran": "IRN", "vietnam": "VNM", "viet nam": "VNM", "czech republic": "CZE", "czechia": "CZE",
    "taiwan": "TWN", "hong kong": "HKG", "hong kong sar": "HKG", "macau": "MAC", "macao": "MAC",
    "macao sar": "MAC", "bosnia": "BIH", "bosnia and herzegovina": "BIH", "north macedonia": "MKD",
    "macedonia": "MKD", "ivory coast": "CIV", "cote d'ivoire": "CIV", "laos": "LAO", "syria": "SYR",
    "bolivia": "BOL", "venezuela": "VEN", "tanzania": "TZA", "moldova": "MDA", "palestine": "PSE",
    "palestinian territories": "PSE", "the netherlands": "NLD", "holland": "NLD", "uae": "ARE",
    "emirates": "ARE", "kyrgyzstan": "KGZ", "kyrgyz republic": "KGZ", "east timor": "TLS", "timor-leste": "TLS",
    "dr congo": "COD", "democratic republic of the congo": "COD", "republic of the congo": "COG",
    "slovak republic": "SVK", "brunei": "BRN", "cape verde": "CPV", "eswatini": "SWZ", "swaziland": "SWZ",
    "turkiye": "TUR", "türkiye": "TUR", "burma": "MMR", "myanmar": "MMR", "german": "DEU",
    "great britain and northern ireland": "GBR", "northern ireland": "GBR", "mainland china": "CHN",
    "prc": "CHN", "ksa": "SAU", "saudi": "SAU", "the philippines": "PHL", "philippines": "PHL",
    "new zealand": "NZL", "south africa": "ZAF", "el salvador": "SLV", "costa rica": "CRI",
    "puerto rico": "PRI", "sri lanka": "LKA", "saudi arabia": "SAU", "united arab emirates": "ARE",
    "czech rep": "CZE", "korea south": "KOR", "kyrgyz rep": "KGZ", "macedonia rep": "MKD", "slovak rep": "SVK",
}
"""Spellings of country names in the benchmarks' files that neither Natural Earth's nor WVS-7's table holds (the
last line: Hofstede's "6-dimensions-for-website-2015-08-16.csv"; its regions, e.g. "Belgium French", stay unmatched)."""


@cache
def _name_table() -> dict[str, str]:
    """Lower-case name -> ISO alpha-3 from WVS-7's countries, Natural Earth's names (when the map is shipped) and
    ALIASES."""
    table: dict[str, str] = {}
    text = resources.files("culturebench.facts").joinpath("wvs_countries.csv").read_text(encoding="utf-8")
    for row in csv.DictReader(text.splitlines()):
        table[row["name"].lower()] = row["iso_alpha3"]
    world = resources.files("culturebench.facts").joinpath("world_110m.json")
    if world.is_file():
        for code, shape in json.loads(world.read_text(encoding="utf-8"))["countries"].items():
            for name in (shape["name"], shape.get("long_name")):
                if name:
                    table.setdefault(name.lower(), code)
    table.update(ALIASES)
    return table


def country_code(name: str | None) -> str | None:
    """The ISO alpha-3 code of a country ``name`` (any case, underscores for spaces, "the" dropped; a code given
    as such is returned as it is), or None when unknown."""
    if not name:
        return None
    text = str(name).strip()
    if re.fullmatch(r"[A-Z]{3}", text):
        return text
    key = re.sub(r"\s+", " ", text.replace("_", " ").replace("-", " ").replace(".", "").lower()).strip()
    table = _name_table()
    for candidate in (key, key.removeprefix("the "), text.lower()):
        if candidate in table:
            return table[candidate]
    return None


def country_name(code: str) -> str:
    """A code's English name (WVS-7's or Natural Earth's), else the code."""
    for name, known in _name_table().items():
        if known == code and name not in ALIASES:
            return name.title() if name.islower() else name
    return code


def view(countries: Mapping[str, Mapping], *, benchmark: str, measure: str, measures: Mapping[str, str],
         higher_is_better: bool = True, model: str | None = None, notes: Sequence[str] = (), **extra) -> dict:
    """A countries.json object (module docstring); ``countries`` keyed by ISO alpha-3, sorted."""
    return {"benchmark": benchmark, "model": model, "measure": measure, "higher_is_better": higher_is_better,
            "measures": dict(measures), "notes": list(notes), **extra,
            "countries": {code: dict(countries[code]) for code in sorted(countries)}}


def write_countries(out: Path, data: Mapping) -> Path:
    """``out``/countries.json (written whole to a temporary file, then renamed)."""
    return write_json_file(Path(out) / COUNTRIES_FILE, data)


def write_json_file(path: Path, data: Mapping) -> Path:
    """``path`` as JSON (no NaN), written whole to a temporary sibling, then renamed."""
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path


def read_countries(path: Path) -> dict:
    """A countries.json (or a run folder holding one), checked: an object with ``measure`` and ``countries``
    whose entries carry the measure."""
    path = Path(path)
    if path.is_dir():
        path = path / COUNTRIES_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no countries.json", file=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"does not parse as JSON ({exc})", file=path) from None
    return checked_view(data, path)


def checked_view(data: object, path: Path | None = None) -> dict:
    """A country view (a countries.json object, read or from a benchmark's ``countries`` hook) whose numbers can be
    drawn and ranked: ``measure`` and ``countries``, each entry an object carrying the measure, every measure a finite
    number or null, every ``interval_*`` two of them; else an InputError naming the file and the country."""
    if not isinstance(data, dict) or not isinstance(data.get("countries"), dict) or not isinstance(data.get("measure"), str):
        raise InputError("not a countries.json (needs measure and countries)", file=path)
    numeric = set(data.get("measures") or {}) | {data["measure"]}
    for code, entry in data["countries"].items():
        if not isinstance(entry, dict) or data["measure"] not in entry:
            raise InputError(f"country {code!r} has no {data['measure']}", file=path, column=code)
        for key, value in entry.items():
            values = value if key.startswith("interval_") else [value] if key in numeric else []
            if key.startswith("interval_") and not (isinstance(value, list) and len(value) == 2):
                raise InputError(f"country {code!r}: {key} is not a [low, high] pair ({value!r})", file=path,
                                 column=key)
            bad = [v for v in values if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool)
                                                               and math.isfinite(v))]
            if bad:
                raise InputError(f"country {code!r}: {key} is {bad[0]!r}, not a finite number or null", file=path,
                                 column=key)
    return data


def ranked(data: Mapping) -> list[tuple[str, dict]]:
    """The countries with a value of the primary measure, best first (ties by code)."""
    measure, sign = data["measure"], (-1 if data.get("higher_is_better", True) else 1)
    rows = [(code, e) for code, e in data["countries"].items() if e.get(measure) is not None]
    return sorted(rows, key=lambda row: (sign * row[1][measure], row[0]))


def from_named(rows: Sequence[tuple[str, float | None, Sequence[float | None] | None, int | None]], *,
               benchmark: str, measure: str, measures: Mapping[str, str], higher_is_better: bool = True,
               model: str | None = None, notes: Sequence[str] = (), **extra) -> dict:
    """A countries.json object from (country name as the benchmark writes it, value, [low, high] or None, n)
    rows: keyed by ISO alpha-3 where ``country_code`` knows the name, else by the name itself (listed in
    ``notes``: not on the map); a second name of the same code (GLOBE's "Germany (WEST)" and "(EAST)") keeps its
    own name as key."""
    countries: dict[str, dict] = {}
    unknown = []
    interval = f"interval_{measure}"
    for name, value, bounds, n in rows:
        code = country_code(re.sub(r"\s*\(.*\)$", "", str(name)))
        if code is None or code in countries:
            unknown += [str(name)] if code is None else []
            code = str(name)
        label = str(name).replace("_", " ")
        countries[code] = {"name": label.title() if label.islower() else label, measure: value,
                           interval: list(bounds) if bounds else [None, None], "n": n}
    if unknown:
        notes = [*notes, f"no ISO code for {', '.join(sorted(unknown))}: in the table, not on the map"]
    return view(countries, benchmark=benchmark, measure=measure, measures=measures,
                higher_is_better=higher_is_better, model=model, notes=notes, **extra)
