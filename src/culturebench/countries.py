"""Country names and Inglehart-Welzel cultural zones, shared by the benchmarks that match countries across sources
(stories, Cultural Atlas pages, scenarios and zone tables). The lists are data in
``culturebench/facts/countries.json``: the eight zones, spellings of zone names that zone tables use, and our own
list of countries with other names and demonyms.

Country names are matched by a *country key*: casefolded, ``_``/``-`` as spaces, whitespace collapsed, and every
name or other name of a listed country mapped to that country's key (``south_korea``, ``South Korea`` and ``Korea``
are one country; ``türkiye`` is Turkey)."""

from __future__ import annotations

import unicodedata
from functools import cache

from culturebench.facts import read


@cache
def facts() -> dict:
    return read("countries")


def zones() -> list[str]:
    """The eight Inglehart-Welzel zones."""
    return list(facts()["iw_zones"])


def normal(text: str) -> str:
    """Whitespace (no-break spaces included) collapsed to one space, outer whitespace stripped."""
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


def zone_name(value: str) -> str | None:
    """The zone a table's spelling names (``facts/countries.json`` ``iw_zone_aliases``), or None."""
    lookup = {z.casefold(): z for z in zones()} | {k: v for k, v in facts()["iw_zone_aliases"].items()}
    key = normal(value).casefold()
    return lookup.get(key) or lookup.get(key.replace("-", " "))


_PLAIN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
                        "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u200b": None})


def compare_key(text: str) -> str:
    """How backgrounds and atlas texts are compared: NFKC, plain quotes/dashes, whitespace collapsed."""
    return normal(unicodedata.normalize("NFKC", text).translate(_PLAIN))
