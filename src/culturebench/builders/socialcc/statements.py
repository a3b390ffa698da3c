"""SocialCC's Table 4A statements and country names (Sec. 3.2): the facts (``facts/socialcc.json``: questions,
sides, threshold), WVS-7 countries with their aliases and demonyms, a statement's text and its parse, and each
country's Inglehart-Welzel zone."""

from __future__ import annotations

import csv
import re
from functools import cache
from importlib import resources

import polars as pl

from culturebench.countries import country_key, normal
from culturebench.facts import read as read_facts
from culturebench.raw.inglehart_welzel import ZoneRow, zone_table

SIDES = ("printed", "opposite")


@cache
def facts() -> dict:
    return read_facts("socialcc")


def threshold() -> float:
    return float(facts()["threshold"])


def over_threshold(share: pl.Expr | float, limit: float | None = None):
    """Sec. 3.2 "over 80%": strictly above the threshold (``threshold_strict`` false: at or above)."""
    limit = threshold() if limit is None else limit
    return share > limit if facts().get("threshold_strict", True) else share >= limit


def questions() -> list[dict]:
    return list(facts()["questions"])


def question_ids() -> list[str]:
    """The WVS-7 variables behind Table 4A, in its order."""
    return [q["question_id"] for q in questions()]


def side_codes(question: dict, side: str) -> list[int]:
    return list(question[f"{side}_codes"])


@cache
def wvs_countries() -> pl.DataFrame:
    """B_COUNTRY (ISO numeric) -> alpha3, name, continent (facts/wvs_countries.csv, shared with WVB)."""
    text = resources.files("culturebench.facts").joinpath("wvs_countries.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    return pl.DataFrame({"B_COUNTRY": [int(r["iso_numeric"]) for r in rows],
                         "alpha3": [r["iso_alpha3"] for r in rows],
                         "name": [r["name"] for r in rows],
                         "continent": [r["continent"] for r in rows]})


def name_key(name: str) -> str:
    """A country or nationality name as compared: casefolded, ``_`` a space, outer dots and a leading "the " gone."""
    key = normal(name.replace("_", " ")).casefold().strip(" .")
    return key[4:] if key.startswith("the ") else key


@cache
def _known() -> dict[str, tuple[str, str]]:
    """Country key -> (WVS name, continent) for every WVS-7 country name, ISO alpha-3 code, alias and demonym."""
    frame = wvs_countries()
    by_alpha = {a: (n, c) for a, n, c in frame.select("alpha3", "name", "continent").iter_rows()}
    out = {name_key(n): (n, c) for n, c in by_alpha.values()}
    out |= {name_key(a): v for a, v in by_alpha.items()}
    for alias, alpha in facts()["country_aliases"].items():
        if alpha in by_alpha:
            out.setdefault(name_key(alias), by_alpha[alpha])
    return out


def country_info(name: str | None, atlas_countries: set[str] = frozenset()) -> tuple[str, str] | None:
    """(canonical name, continent) of a nationality or country name ("the UK", "Chinese", "Taiwan ROC"); atlas-only
    countries have continent 'unknown'; None when the name is neither a WVS-7 country (or alias) nor an atlas
    country."""
    if not name:
        return None
    key = name_key(name)
    if key in _known():
        return _known()[key]
    if key in {name_key(a) for a in atlas_countries}:
        return normal(name), "unknown"
    return None


def resolve(name: str | None, atlas_countries: set[str] = frozenset()) -> str | None:
    """The canonical country of a name, else the name as given (without a leading 'the ')."""
    if not name:
        return None
    info = country_info(name, atlas_countries)
    return info[0] if info else normal(name)


def statement(country: str, text: str) -> str:
    return facts()["statement_template"].format(country=country, statement=text)


_PEOPLE = re.compile(r"^People (?:from|in) (?P<country>.+?) (?P<form>\S.*?)\.?$", re.IGNORECASE)


@cache
def _forms() -> dict[str, tuple[dict, str]]:
    """Statement text after the country (normalised, no final full stop) -> (question, side): each side's form and
    the other wordings of it that the released statements use (``released_forms``)."""
    forms = {normal(q[side]).casefold().rstrip("."): (q, side) for q in questions() for side in SIDES}
    for q in questions():
        for side, texts in q.get("released_forms", {}).items():
            forms |= {normal(text).casefold().rstrip("."): (q, side) for text in texts}
    return forms


def parse_statement(text: str) -> tuple[str, dict, str] | None:
    """(country as written, question, side) of a Table 4A statement "People from <country> <statement>"."""
    text = normal(text).rstrip(".")
    head = _PEOPLE.match(text)
    if head is None:
        return None
    for form, (question, side) in _forms().items():
        if text.casefold().endswith(" " + form):
            country = text[: len(text) - len(form) - 1]
            country = re.sub(r"^People (?:from|in) ", "", country, flags=re.IGNORECASE).strip()
            if country:
                return country, question, side
    return None


def iw_zones(rows: list[ZoneRow], atlas_countries: set[str] = frozenset()) -> dict[str, str]:
    """Country (resolved as scenarios' countries are: ``resolve``) -> Inglehart-Welzel zone (Fig. 6, App. A.3).
    Zone names and a country given two zones are checked by ``zone_table``."""
    checked = zone_table(rows)
    out: dict[str, str] = {}
    for row in rows:
        out.setdefault(resolve(row.country, atlas_countries), checked[country_key(row.country)])
    return out
