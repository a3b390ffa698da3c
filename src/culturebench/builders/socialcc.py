"""SocialCC (Wu et al., ACL 2025): intercultural scenarios played by an antagonist and the evaluated protagonist.

raw/wvs/* (+ optional raw/socialcc/wvs/*) + codebook  ->  value_preferences (Table 4A statements, Sec. 3.2)
raw/socialcc/**/*.json[l] (released layout or ours) + raw/cultural_atlas/ (+ optional raw/inglehart_welzel/)
    ->  scenarios

Value preferences (Sec. 3.2, Table 4A): for each question of Table 4A (``facts/socialcc.json``), each country and
each side of the statement (the printed one and its opposite), the share of the country's respondents with a
valid answer whose answer is in the side's codes (unweighted: "over 80% of respondents"; ``use_weights`` in the
facts switches to W_WEIGHT). A side whose share is strictly over the threshold (0.8) becomes the statement
"People from <country> <statement>".

Scenarios: each record is normalised to Character 1 (antagonist), Character 2 (protagonist), optional Character 3,
with nationalities resolved to WVS-7 countries (aliases, "the ...", demonyms). A commonsense item, when the record
has one, must be an item of its country's Cultural Atlas page; the value item must be a Table 4A statement about
``cultural_value_country``. Scenarios that fail a rule go to quarantine with a reason. The value's share in the
WVS files is recorded (``value_share``) but never a reason to drop a scenario: the paper's own Table 13A example
(Japan, Q27) is not over 80% in the WVS-7 files; validation reports such scenarios as a warning, with counts.
Each scenario gets the Inglehart-Welzel zone of its value country (Fig. 6's eight cultural groups, App. A.3) from
``RAW/inglehart_welzel/*.csv`` (NormAd's reader and zone checks), null when the folder is absent or does not list
the country.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path

import polars as pl

from culturebench.builders.base import BuildOutput, CardInfo, ConfigInfo, Progress
from culturebench.builders.normad import compare_key, country_key, normal, zone_table
from culturebench.builders.wvb import check_codes_in_codebook
from culturebench.errors import InputError
from culturebench.io import InputFile, input_name
from culturebench.raw.codebook import Codebook
from culturebench.raw.codebook_files import codebook_input, find_codebook, load_codebook
from culturebench.raw.normad import ZONES_FOLDER, ZoneRow, input_files, read_zones
from culturebench.raw.cultural_atlas import FOLDER as ATLAS_FOLDER
from culturebench.raw.cultural_atlas import AtlasItem, read_atlas
from culturebench.raw.socialcc import (
    FOLDER,
    ScenarioRow,
    read_scenarios,
    scenario_files,
)
from culturebench.raw.wvs import (
    SOURCE_FILE,
    SOURCE_ROW,
    read_respondents,
    respondent_files,
)
from culturebench.validation.checks import CheckResult, check

NAME = "socialcc"
WVS_FOLDER = "wvs"
STAGES = ("read", "preferences", "scenarios")
SCENARIOS_SPLIT = "test"
PREFERENCES_SPLIT = "full"

CARD = CardInfo(
    pretty_name="SocialCC (rebuilt by culturebench)",
    summary=(
        "SocialCC (Wu, Lian, Wang and Meng, ACL 2025) evaluates the cultural competence of language-model agents in "
        "intercultural social interactions: in each scenario an antagonist agent (Character 1) raises a cultural "
        "conflict built on a cultural commonsense item (Cultural Atlas: etiquette or dates of significance) and a "
        "cultural value preference mined from the World Values Survey wave 7 (Table 4A: \"People from <country> "
        "strongly agree that ...\", over 80% of the country's respondents), and the evaluated protagonist "
        "(Character 2) is judged on cultural awareness, knowledge and behaviour."
    ),
    rebuilt_from="raw WVS-7 files (the value preferences) and the released per-scenario JSON files, CC-Mediation's "
                 "copy of them or our JSONL (the scenarios), checked against the atlas pages; no released scenario "
                 "is dropped for its value's WVS share",
    license="other",
    citation=(
        "@inproceedings{wu2025socialcc,\n"
        "  title = {{SocialCC}: Interactive Evaluation for Cultural Competence in Language Agents},\n"
        "  author = {Wu, Jincenzi and Lian, Jianxun and Wang, DingDong and Meng, Helen},\n"
        "  booktitle = {Proceedings of the 63rd Annual Meeting of the Association for Computational Linguistics "
        "(Volume 1: Long Papers)},\n"
        "  publisher = {Association for Computational Linguistics},\n  year = {2025}\n}\n"
        "@misc{wvs7,\n  title = {World Values Survey: Round Seven -- Country-Pooled Datafile Version 6.0},\n"
        "  author = {Haerpfer, C. and Inglehart, R. and Moreno, A. and Welzel, C. and Kizilova, K. and Diez-Medrano, J. and Lagos, M. and Norris, P. and Ponarin, E. and Puranen, B.},\n"
        "  publisher = {JD Systems Institute and WVSA Secretariat},\n  doi = {10.14281/18241.24},\n  year = {2022}\n}"
    ),
    configs=(
        ConfigInfo("scenarios", "One row per scenario: id (socialcc- + 16 hex of a sha256 of its content), source_id, "
                   "layout (released, cc_mediation or culturebench), scenario text, events (null when the record has "
                   "none), characters (Character 1 = antagonist, Character 2 = evaluated protagonist, optional "
                   "Character 3; "
                   "structs name, age, gender, nationality, country (resolved), occupation, profile, goals, task; "
                   "unknown fields null), commonsense_country / commonsense_topic / commonsense_item (null when the "
                   "record has no commonsense item), value_item, value_country, value_question_id (WVS-7 variable), "
                   "value_table_4a_id, value_topic (Table 4A category), value_side (printed or opposite) and "
                   "value_share (the country's share from the WVS files, null without data) and iw_zone (the "
                   "Inglehart-Welzel cultural zone of value_country, Fig. 6's groups; null when RAW/inglehart_welzel/ "
                   "is absent or does not list the country).",
                   redistributable=False, license_name="cultural-atlas-terms"),
        ConfigInfo("value_preferences", "Country consensus mined from WVS-7 (Sec. 3.2, Table 4A): country, "
                   "question_id (WVS-7 variable), table_4a_id, topic, side (printed or opposite), share (share of the "
                   "country's respondents with a valid answer whose answer is on that side, strictly over the "
                   "threshold), n (valid answers), weighted (W_WEIGHT used) and statement."),
    ),
    creation=(
        "Value preferences are computed from the WVS-7 respondent files in `RAW/wvs/` (read with the same reader as "
        "WorldValuesBench; optional extra files in `RAW/socialcc/wvs/` are read after them) and the codebook. The "
        "questions, their Table 4A statements and topics are transcribed in `culturebench/facts/socialcc.json`; "
        "the answer codes on each side of a statement are ours (the half of the scale on the statement's side; "
        "Table 4A's ID 56 and 234 are read from WVS variables Q57 and Q234A, whose wording the printed statements "
        "match). Share = respondents in the side's codes / respondents with a valid answer (negative codes left out, "
        "unweighted as Sec. 3.2 counts respondents); a side enters when its share is over 0.8. The paper used the "
        "WVS-7 Country-Pooled Datafile v6.0; the files this release read and the version their names give are in "
        "the manifest's provenance (`wvs_versions`).\n\n"
        "Scenarios are read from `RAW/socialcc/` (any depth, `wvs/` skipped): per-scenario JSON files in the "
        "released layout (scenario, cultural_value, cultural_value_country, agent_1_background, agent_2_background, "
        "prompts.agent_1/agent_2.task/goals), JSONL of such records, the per-scenario metadata of "
        "suhyun565/CC-Mediation's dialogue files (`cc_mediation`: scenario_context, agents, cultural_axis, goals; "
        "its 1,662 records are the public copy of the released scenarios we could find), or our JSONL layout. Fields a "
        "record lacks (events, a third character, the commonsense item) are null; the manifest's provenance counts "
        "them per layout (`absent_fields`). In the `cc_mediation` layout: the characters' portfolios are rebuilt "
        "from the agent fields CC-Mediation parsed out of the released backgrounds (Tables 12A-16A's form, a field "
        "it could not parse left out); the value is the released `cultural_value`, recovered by running "
        "CC-Mediation's `build_agent_prompts.py` backwards: it gave the released value verbatim to the agent from "
        "`cultural_value_country` (agent 1 tested first) and a flipped copy naming its own country to the other; "
        "when neither agent is from it, agent 1 got the released value with its country swapped in and agent 2 "
        "the flipped copy; an agent whose background ends in no capitalised country got no country swapped in. "
        "A value that names another country than its agent's parsed nationality therefore names the value "
        "country. Two branches can remain where the record's own parser left a nationality null, and where the "
        "agents are from different countries and each value names its own agent's: the one whose value is a "
        "Table 4A statement wins (the other is a flipped copy no table prints), else the one whose value is a "
        "consensus in the WVS files, else the one the parsed nationalities give (agent 2's in the second case: "
        "Character 2 holds the value country in the paper's scenarios). The manifest counts the records per "
        "branch and per kind of evidence (`value_branches`; released records: the branch their "
        "`cultural_value_country` takes, the value as released). The value's country is the one the statement "
        "names, and there are no events, no commonsense item, no third character and no task. The released "
        "layout has no events either, and no commonsense item unless a record adds one. "
        "For any scenario without them, `evaluate` fills the prompts of Tables 6A-11A as follows, and each run's "
        "run.json and metrics.json count it (`prompt_fields`): Character 2's social goals stand in for Events 1-2; "
        "nothing stands in for the commonsense item or a third character (their lines are left out, so the "
        "commonsense judge of Table 9A sees only the value, and Fig. 5, which groups by the commonsense item's "
        "country, leaves the scenario out). A malformed file stops the "
        "build with one line naming file, line and key. Quarantined (with a `reason`): empty text (`empty_text`), "
        "fewer than two characters (`missing_character`), a commonsense topic other than Etiquette / Dates of "
        "Significance (`bad_commonsense_topic`), a commonsense item not on the country's atlas page of that topic "
        "(`commonsense_not_in_atlas`), a commonsense country that is no character's nationality "
        "(`country_not_a_character`), a value item that is not a Table 4A statement about its country "
        "(`value_not_a_table_4a_statement`), a value country that is no character's nationality when all "
        "three characters are given (`value_country_not_a_character`), and later copies of the same scenario "
        "(`duplicate_scenario`: same content and, for the authors' layouts, the same record id). A value whose share "
        "in the WVS files is not over the threshold is no reason to drop a scenario: the paper's own Table 13A "
        "example (Japan, Q27) is such a value; validation reports their number as a warning. Statements the "
        "released files word differently from Table 4A (`released_forms` in the facts) are read as their side. "
        "Scenario counts per continent (Table 1) are reported.\n\n"
        "The `iw_zone` of a scenario is its value country's zone in `RAW/inglehart_welzel/*.csv` (Country + "
        "Cultural_Region, read and checked as for NormAd; country names resolved like the nationalities), the eight "
        "cultural groups of the paper's Fig. 6 (App. A.3); null when the folder is absent or lacks the country."
    ),
    considerations=(
        "**Licensing.** Commonsense items reproduce Cultural Atlas text, (c) SBS, and the scenario texts are the "
        "SocialCC authors': the `scenarios` config is marked not redistributable. `value_preferences` holds country "
        "aggregates, no respondent rows.\n\n"
        "**Use.** A consensus statement describes a majority of a national sample, not every person of that "
        "nationality; the answer codes on each side of a statement are our reading of the questions."
    ),
    tags=("cultural-competence", "social-interaction", "world-values-survey", "cultural-atlas", "llm-agents"),
    source=("SocialCC scenario files (per-scenario JSON as released, or JSONL; see culturebench.raw.socialcc), the "
            "World Values Survey wave-7 files and codebook (worldvaluessurvey.org) and saved Cultural Atlas pages "
            "(culturalatlas.sbs.com.au)"),
    language=("en",),
    task_categories=("text-generation",),
    annotations_creators=("expert-generated",),
    license_name="cultural-atlas-terms",
    license_link="https://culturalatlas.sbs.com.au",
    license_details=("Scenarios quote Cultural Atlas text, (c) SBS; the value preferences are country aggregates "
                     "computed from WVS-7 (World Values Survey Association terms)."),
)

CHARACTER = pl.Struct({"name": pl.String, "age": pl.Int64, "gender": pl.String, "nationality": pl.String,
                       "country": pl.String, "occupation": pl.String, "profile": pl.String,
                       "goals": pl.List(pl.String), "task": pl.String})
SCENARIO_SCHEMA = {
    "id": pl.String, "source_id": pl.String, "layout": pl.String, "scenario": pl.String,
    "events": pl.List(pl.String), "characters": pl.List(CHARACTER), "commonsense_country": pl.String,
    "commonsense_topic": pl.String, "commonsense_item": pl.String, "value_item": pl.String,
    "value_country": pl.String, "value_question_id": pl.String, "value_table_4a_id": pl.Int64,
    "value_topic": pl.String, "value_side": pl.String, "value_share": pl.Float64, "iw_zone": pl.String,
}
PREFERENCE_SCHEMA = {"country": pl.String, "question_id": pl.String, "table_4a_id": pl.Int64, "topic": pl.String,
                     "side": pl.String, "share": pl.Float64, "n": pl.Int64, "weighted": pl.Boolean,
                     "statement": pl.String}
QUARANTINE_SCHEMA = {"source_file": pl.String, "row": pl.Int64, "source_id": pl.String, "layout": pl.String,
                     "scenario": pl.String, "commonsense_country": pl.String, "commonsense_item": pl.String,
                     "value_item": pl.String, "value_country": pl.String, "nationalities": pl.String,
                     "reason": pl.String}
SIDES = ("printed", "opposite")


@cache
def facts() -> dict:
    return json.loads(resources.files("culturebench.facts").joinpath("socialcc.json").read_text(encoding="utf-8"))


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


def _key(name: str) -> str:
    key = normal(name.replace("_", " ")).casefold().strip(" .")
    return key[4:] if key.startswith("the ") else key


@cache
def _known() -> dict[str, tuple[str, str]]:
    """Country key -> (WVS name, continent) for every WVS-7 country name, ISO alpha-3 code, alias and demonym."""
    frame = wvs_countries()
    by_alpha = {a: (n, c) for a, n, c in frame.select("alpha3", "name", "continent").iter_rows()}
    out = {_key(n): (n, c) for n, c in by_alpha.values()}
    out |= {_key(a): v for a, v in by_alpha.items()}
    for alias, alpha in facts()["country_aliases"].items():
        if alpha in by_alpha:
            out.setdefault(_key(alias), by_alpha[alpha])
    return out


def country_info(name: str | None, atlas_countries: set[str] = frozenset()) -> tuple[str, str] | None:
    """(canonical name, continent) of a nationality or country name ("the UK", "Chinese", "Taiwan ROC"); atlas-only
    countries have continent 'unknown'; None when the name is neither a WVS-7 country (or alias) nor an atlas
    country."""
    if not name:
        return None
    key = _key(name)
    if key in _known():
        return _known()[key]
    if key in {_key(a) for a in atlas_countries}:
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


def raw_present(raw: Path) -> bool:
    return (raw / FOLDER).is_dir()


def read_iw_zones(raw: Path) -> tuple[list[ZoneRow], list[InputFile]]:
    """The rows of ``RAW/inglehart_welzel/*.csv`` (NormAd's reader); none when the folder is absent."""
    if not (raw / ZONES_FOLDER).is_dir():
        return [], []
    rows, inputs = [], []
    for path in input_files(raw / ZONES_FOLDER, (".csv",), "Inglehart-Welzel zone tables"):
        found, info = read_zones(path, raw)
        rows += found
        inputs.append(info)
    return rows, inputs


def iw_zones(rows: list[ZoneRow], atlas_countries: set[str] = frozenset()) -> dict[str, str]:
    """Country (resolved as scenarios' countries are: ``resolve``) -> Inglehart-Welzel zone (Fig. 6, App. A.3).
    Zone names and a country given two zones are checked by NormAd's ``zone_table``."""
    checked = zone_table(rows)
    out: dict[str, str] = {}
    for row in rows:
        out.setdefault(resolve(row.country, atlas_countries), checked[country_key(row.country)])
    return out


# ---------------------------------------------------------------------------------------------------- build

_VERSION = re.compile(r"v(\d+)[_.](\d+)", re.IGNORECASE)


def wvs_versions(inputs: list[InputFile]) -> dict[str, str]:
    """File -> WVS-7 datafile version as its name gives it ("v6_0" -> "6.0"; "unknown" otherwise)."""
    out = {}
    for item in inputs:
        found = _VERSION.search(Path(item.name).name)
        out[item.name] = f"{found.group(1)}.{found.group(2)}" if found else "unknown"
    return out


def build(raw: Path, seed: int, progress: Progress) -> BuildOutput:
    """``seed`` is unused: nothing is sampled."""
    progress("read")
    wvs_folder = raw / WVS_FOLDER
    files = respondent_files(wvs_folder)
    extra = raw / FOLDER / facts()["extra_respondents_folder"]
    if extra.is_dir():
        files += respondent_files(extra)
    codebook_path = find_codebook(wvs_folder)
    codebook = load_codebook(codebook_path, cache_dir=Path.home() / ".cache" / "culturebench")
    check_questions(codebook)
    table, wvs_inputs = read_respondents(files, [facts()["country_column"], *question_ids()], root=raw,
                                         weight=facts()["weight_column"])
    check_codes_in_codebook(table, codebook, question_ids())
    rows: list[ScenarioRow] = []
    inputs: list[InputFile] = [*wvs_inputs, codebook_input(codebook_path, codebook, raw)]
    for path in scenario_files(raw / FOLDER):
        found, info = read_scenarios(path, raw)
        rows += found
        inputs.append(info)
    items, atlas_inputs = read_atlas(raw / ATLAS_FOLDER, raw)
    inputs += atlas_inputs
    zone_rows, zone_inputs = read_iw_zones(raw)
    inputs += zone_inputs
    atlas_countries = {i.country for i in items}
    progress("preferences")
    shares = consensus_shares(table)
    preferences = preferences_table(shares)
    progress("scenarios")
    scenarios, quarantine = scenarios_table(rows, items, shares, iw_zones(zone_rows, atlas_countries))
    branches = value_branches(rows, wvs_consensus(shares, atlas_countries))
    return BuildOutput(
        card=card(branches),
        tables={"scenarios": {SCENARIOS_SPLIT: scenarios}, "value_preferences": {PREFERENCES_SPLIT: preferences}},
        quarantine=quarantine,
        inputs=inputs,
        rows_read=len(rows),
        rows_kept=scenarios.height,
        provenance={
            "threshold": threshold(),
            "threshold_strict": bool(facts().get("threshold_strict", True)),
            "use_weights": bool(facts().get("use_weights", False)),
            "respondents_read": table.height,
            "countries": int(table[facts()["country_column"]].n_unique()),
            "questions": question_ids(),
            "wvs_versions": wvs_versions(wvs_inputs),
            "wvs_version_in_paper": facts()["wvs_version_in_paper"],
            "candidates": shares.height,
            "preferences": preferences.height,
            "scenarios_read": len(rows),
            "layouts_read": dict(sorted(Counter(r.layout for r in rows).items())),
            "absent_fields": absent_fields(rows),
            "value_branches": branches,
            "atlas_items_read": len(items),
            "iw_zone_rows_read": len(zone_rows),
            "scenarios_by_iw_zone": zone_counts(scenarios),
            "continent_counts": continent_counts(scenarios, atlas_countries),
            "codebook": {"file": input_name(codebook_path, raw), "sha256": codebook.sha256},
        },
    )


def card(branches: dict | None = None) -> CardInfo:
    """The card, with the build's count of records per branch of CC-Mediation's rule (``value_branches``)."""
    if not branches:
        return CARD
    parts = []
    for layout in ("cc_mediation", "released"):
        if layout in branches:
            counts, evidence = branches[layout], branches.get(f"{layout}_evidence", {})
            parts.append(f"`{layout}`: " + ", ".join(f"{counts.get(b, 0):,} {b}" for b in VALUE_BRANCHES)
                         + " (decided by " + ", ".join(f"{n:,} {e}" for e, n in evidence.items()) + ")")
    return replace(CARD, creation=f"{CARD.creation}\n\nThis build's records per branch of CC-Mediation's rule "
                                  f"(agent_1, agent_2, neither: the agent from the value country): {'; '.join(parts)}.")


def manifest_card(manifest: dict) -> CardInfo:
    """The card a release's manifest says its build wrote (``audit`` re-renders it)."""
    return card(manifest.get("provenance", {}).get("value_branches"))


def check_questions(codebook: Codebook) -> None:
    """Every question of the facts is in the codebook, and the codes of both sides are choices it lists."""
    for q in questions():
        name = q["question_id"]
        if name not in codebook:
            raise InputError("question of facts/socialcc.json is not in the codebook", file=codebook.source,
                             column=name)
        valid = set(codebook[name].valid_choices())
        outside = sorted((set(q["printed_codes"]) | set(q["opposite_codes"])) - valid)
        if outside:
            raise InputError(f"side codes {outside} of facts/socialcc.json are not codebook choices "
                             f"{sorted(valid)}", file=codebook.source, page=codebook[name].page, column=name)


def consensus_shares(table: pl.DataFrame) -> pl.DataFrame:
    """Every (country, question, side) with its share (Sec. 3.2): columns country, alpha3, continent, question_id,
    side, share, n, weighted. ``table`` has the country column (ISO numeric codes), the question columns (codes;
    negative = missing) and optionally ``weight`` (null = none). Unweighted (respondents) unless the facts say
    ``use_weights``, then W_WEIGHT when every respondent of the group has a positive weight."""
    code = facts()["country_column"]
    known = wvs_countries()
    unknown = table.join(known, on=code, how="anti")
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"{code} code {first[code]} is not a WVS-7 country known to culturebench",
                         file=first.get(SOURCE_FILE), row=first.get(SOURCE_ROW), column=code)
    use_weights = bool(facts().get("use_weights", False))
    weight = pl.col("weight") if use_weights and "weight" in table.columns else pl.lit(None, dtype=pl.Float64)
    frames = []
    for q in questions():
        name = q["question_id"]
        if name not in table.columns:
            continue
        answer = pl.col(name)
        valid = table.filter(answer >= 0).with_columns(weight.cast(pl.Float64).alias("_w"))
        grouped = valid.group_by(code).agg(
            pl.len().alias("n"),
            (pl.col("_w").is_not_null() & (pl.col("_w") > 0)).all().alias("weighted"),
            pl.col("_w").sum().alias("total_w"),
            *[pl.col("_w").filter(answer.is_in(side_codes(q, side))).sum().alias(f"{side}_w") for side in SIDES],
            *[answer.is_in(side_codes(q, side)).sum().alias(f"{side}_n") for side in SIDES],
        )
        for side in SIDES:
            share = (pl.when(pl.col("weighted")).then(pl.col(f"{side}_w") / pl.col("total_w"))
                     .otherwise(pl.col(f"{side}_n") / pl.col("n")))
            frames.append(grouped.select(code, pl.lit(name).alias("question_id"), pl.lit(side).alias("side"),
                                         share.cast(pl.Float64).alias("share"), pl.col("n").cast(pl.Int64),
                                         "weighted"))
    empty = pl.DataFrame(schema={code: pl.Int64, "question_id": pl.String, "side": pl.String,
                                 "share": pl.Float64, "n": pl.Int64, "weighted": pl.Boolean})
    order = {name: i for i, name in enumerate(question_ids())}
    return (
        pl.concat([f.cast({code: pl.Int64}) for f in frames]) if frames else empty
    ).join(known, on=code, how="left").with_columns(
        pl.col("question_id").replace_strict(order, return_dtype=pl.Int64).alias("_order")
    ).sort("name", "_order", "side").select(
        pl.col("name").alias("country"), "alpha3", "continent", "question_id", "side", "share", "n", "weighted")


def preferences_table(shares: pl.DataFrame, limit: float | None = None) -> pl.DataFrame:
    """The value_preferences config: the (country, question, side) shares over the threshold, with the statement."""
    by_id = {q["question_id"]: q for q in questions()}
    chosen = shares.filter(over_threshold(pl.col("share"), limit))
    rows = [(c, q, by_id[q]["table_4a_id"], by_id[q]["topic"], d, s, n, w, statement(c, by_id[q][d]))
            for c, q, d, s, n, w in chosen.select("country", "question_id", "side", "share", "n",
                                                  "weighted").iter_rows()]
    return pl.DataFrame(rows, schema=PREFERENCE_SCHEMA, orient="row")


def portfolio(character: dict) -> str:
    """A character's profile text: as given (released backgrounds), else Tables 12A-16A's "Name: A 25-year-old
    male IT programmer from China." from its fields.
    A field the record lacks (CC-Mediation's agents have nulls where it could not parse the released background)
    is left out with its words: {"name": "Lucas", "age": 29, "occupation": "accountant", "nationality": "Egypt"}
    gives "Lucas: A 29-year-old accountant from Egypt.", a name alone "Lucas."."""
    if character.get("profile"):
        return str(character["profile"])
    fields = {k: character.get(k) for k in ("name", "age", "gender", "occupation", "nationality")}
    if all(v not in (None, "") for v in fields.values()):
        return facts()["portfolio_template"].format(**fields)
    words = [f"{fields['age']}-year-old" if fields["age"] is not None else "", fields["gender"] or "",
             fields["occupation"] or "", f"from {fields['nationality']}" if fields["nationality"] else ""]
    described = " ".join(w for w in words if w)
    if not described:
        return f"{fields['name'] or ''}."
    article = "" if described.startswith("from ") else "A "
    return f"{fields['name'] or ''}: {article}{described}."


def scenario_id(row: ScenarioRow) -> str:
    """socialcc- + 16 hex of a sha256 of the scenario's content: text, commonsense and value items, every
    character's name, profile and goals, and, for the authors' layouts, the record's own id (released scenarios
    with different ids are different scenarios even where the fields a copy kept coincide: CC-Mediation's records
    1 and 1894 differ only in fields it did not keep)."""
    people = [f"{normal(c.get('name') or '').casefold()}|{normal(portfolio(c)).casefold()}|"
              f"{'|'.join(normal(g).casefold() for g in c.get('goals') or [])}" for c in row.characters]
    released_id = row.source_id if row.layout != "culturebench" else ""
    text = "\x1f".join([normal(row.scenario).casefold(), compare_key(row.commonsense_item or ""),
                        normal(row.value_item).casefold(), _key(row.value_country or ""), released_id, *people])
    return f"socialcc-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def _empty_fields(row: ScenarioRow) -> list[str]:
    fields = {"scenario": row.scenario, "value_item": row.value_item}
    if row.layout == "culturebench":
        fields |= {"country": row.commonsense_country, "commonsense_topic": row.commonsense_topic,
                   "commonsense_item": row.commonsense_item}
    empty = [k for k, v in fields.items() if not v]
    empty += [f"events[{i}]" for i, e in enumerate(row.events or (), start=1) if not e]
    empty += [f"character {i} profile" for i, c in enumerate(row.characters, start=1) if not portfolio(c).strip()]
    return empty


VALUE_BRANCHES = {
    "agent_1": "the value country is agent 1's: its value is the released value verbatim, agent 2's a flipped copy",
    "agent_2": "the value country is agent 2's: its value is the released value verbatim, agent 1's a flipped copy",
    "neither": "neither agent is from the value country: agent 1's value is the released value with agent 1's country "
               "swapped in, agent 2's a flipped copy",
}
"""The branches of CC-Mediation's ``build_agent_prompts.py`` (efc3115): how it gave the released ``cultural_value``
to the two agents, by comparing ``cultural_value_country`` with the country at the end of each agent's background
(agent 1 first; an agent whose background ends in no capitalised country gets no country, and a statement about it
keeps the value country)."""
BRANCH_EVIDENCE = {
    "countries": "the countries the two values and the agents' parsed nationalities name leave one branch",
    "table_4a": "of two possible branches, one takes a value that is no Table 4A statement (a flipped copy)",
    "wvs_consensus": "of two possible branches, one takes a value that is a WVS consensus of its country",
    "default": "two possible branches and no evidence: the one the record's parsed nationalities give (agent 2's "
               "where each value names its own agent's country: Character 2 holds the value country in the paper's "
               "scenarios, Tables 12A-16A)",
    "cultural_value_country": "the released record names the value country (released layout)",
}
"""How the branch of a record was decided (manifest ``provenance.value_branches``, ``<layout>_evidence``)."""
_NAMED = re.compile(r"^People from\s+([\w\s]+?)(?=\s+(?:strongly|agree|disagree|would|have|place|never|are)\b)")
"""The country a CC-Mediation value names, as its ``replace_country_in_statement`` finds (and swaps) it."""


def _same(a: str | None, b: str | None) -> bool:
    """Two country names the way CC-Mediation compares them (case and spacing ignored); None is no country."""
    return a is not None and b is not None and " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def value_branch(row: ScenarioRow, consensus=None) -> tuple[str | None, str | None, str]:
    """(branch, evidence, released value) of a scenario row (VALUE_BRANCHES, BRANCH_EVIDENCE): CC-Mediation's
    rule run backwards on a ``cc_mediation`` record, which keeps both agents' values but not the value country.
    Agent i's value names the builder's country for agent i, or the value country where it read none, so a value
    naming another country than its agent's parsed nationality names the value country; where the record's
    parser left a nationality out (null) the builder may still have read one, which leaves two branches, decided
    by a value that is no Table 4A statement (the other one is the released value), else by ``consensus`` (a parsed
    statement -> whether it is a WVS consensus of its country), else the first (BRANCH_EVIDENCE["default"]). A
    released record: the branch ``cultural_value_country`` takes, the value unchanged. Our layout: (None, None,
    value)."""
    if row.layout == "released":
        countries = [c.get("nationality") for c in row.characters[:2]]
        branch = next((f"agent_{i}" for i, c in enumerate(countries, start=1) if _same(c, row.value_country)),
                      "neither")
        return branch, "cultural_value_country", row.value_item
    if row.layout != "cc_mediation" or not row.other_value:
        return None, None, row.value_item
    v1, v2 = row.other_value, row.value_item
    n1, n2 = (c.get("nationality") for c in row.characters[:2])
    k1, k2 = (m.group(1) if (m := _NAMED.match(v)) else None for v in (v1, v2))
    if k1 is None or k2 is None:
        return "agent_2", "default", v2
    # own: the builder read the country the agent's value names; a null nationality may be either (the record's
    # reading, no country, first)
    readings = [[False, True] if n is None else [_same(k, n)] for n, k in ((n1, k1), (n2, k2))]
    candidates: dict[str, str] = {}  # released value -> the first branch that gives it
    for own1 in readings[0]:
        for own2 in readings[1]:
            for branch, value in _branches(own1, own2, _same(k1, k2), v1, v2, k2):
                candidates.setdefault(value, branch)
    values = list(candidates)
    if len(values) == 1:
        return candidates[values[0]], "countries", values[0]
    parsed = {value: parse_statement(value) for value in values}
    readable = [v for v in values if parsed[v] is not None]
    if len(readable) == 1:
        return candidates[readable[0]], "table_4a", readable[0]
    agreed = [v for v in readable if consensus is not None and consensus(parsed[v])]
    if len(agreed) == 1:
        return candidates[agreed[0]], "wvs_consensus", agreed[0]
    return candidates[values[0]], "default", values[0]


def _branches(own1: bool, own2: bool, same: bool, v1: str, v2: str, k2: str) -> list[tuple[str, str]]:
    """(branch, released value) pairs the builder's rule allows when it read the country agent i's value names
    (``own``i; else none, and that value names the value country), ``same``: both values name one country."""
    if own1 and own2:
        return [("agent_1", v1)] if same else [("agent_2", v2), ("agent_1", v1)]
    if own2:  # agent 1's (flipped or verbatim) value kept the value country
        return [("agent_2", v2)] if same else [("neither", v1)]
    if own1:  # agent 2's flipped value kept the value country: agent 1's has the released side, its own country
        return [("agent_1", v1)] if same else [("neither", _NAMED.sub(f"People from {k2}", v1, count=1))]
    return [("neither", v1)]


def released_value(row: ScenarioRow, consensus=None) -> ScenarioRow:
    """The row with the released value as its value item (``value_branch``)."""
    value = value_branch(row, consensus)[2]
    if value == row.value_item:
        return row
    return replace(row, value_item=value, other_value=row.value_item)


def wvs_consensus(shares: pl.DataFrame, atlas_countries: set[str] = frozenset()):
    """parsed Table 4A statement (country, question, side) -> whether its share in the WVS files is over the
    threshold (Sec. 3.2)."""
    share_of = {(c, q, d): s for c, q, d, s in shares.select("country", "question_id", "side", "share").iter_rows()}

    def consensus(parsed: tuple[str, dict, str]) -> bool:
        share = share_of.get((resolve(parsed[0], atlas_countries), parsed[1]["question_id"], parsed[2]))
        return share is not None and bool(over_threshold(share))
    return consensus


def value_branches(rows: list[ScenarioRow], consensus=None) -> dict[str, dict[str, int]]:
    """Per layout, the records read that took each branch of CC-Mediation's rule (VALUE_BRANCHES) and how the
    branch was decided (BRANCH_EVIDENCE): manifest ``provenance.value_branches``."""
    out: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        branch, evidence, _ = value_branch(row, consensus)
        if branch is not None:
            out[row.layout][branch] += 1
            out[f"{row.layout}_evidence"][evidence] += 1
    return {key: dict(sorted(counts.items())) for key, counts in sorted(out.items())}


def scenarios_table(rows: list[ScenarioRow], items: list[AtlasItem], shares: pl.DataFrame,
                    zones: dict[str, str] | None = None) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """The scenarios config and the quarantine; ``zones`` (``iw_zones``) gives each value country's iw_zone."""
    zones = zones or {}
    atlas: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item in items:
        atlas[(_key(item.country), item.topic.casefold())].add(compare_key(item.text))
    atlas_countries = {i.country for i in items}
    topics = {t.casefold(): t for t in facts()["commonsense_topics"]}
    share_of = {(c, q, d): s for c, q, d, s in shares.select("country", "question_id", "side", "share").iter_rows()}
    consensus = wvs_consensus(shares, atlas_countries)
    kept, seen = [], {}
    dropped: dict[str, list] = defaultdict(list)
    for row in rows:
        row = released_value(row, consensus)
        where = (row.file, row.row, row.source_id, row.layout, row.scenario, row.commonsense_country,
                 row.commonsense_item, row.value_item, row.value_country,
                 "; ".join(str(c.get("nationality")) for c in row.characters))
        empty = _empty_fields(row)
        if empty:
            dropped["empty_text"].append((*where, f"empty {', '.join(empty)}"))
            continue
        if len(row.characters) < 2:
            dropped["missing_character"].append((*where, "Character 1 and Character 2 are both needed"))
            continue
        characters = [{**c, "country": resolve(c.get("nationality"), atlas_countries)} for c in row.characters]
        names = {_key(c["country"]) for c in characters if c["country"]}
        topic = None
        if row.commonsense_item:
            topic = topics.get((row.commonsense_topic or "").casefold())
            if row.commonsense_topic is not None and topic is None:
                dropped["bad_commonsense_topic"].append((*where, (f"commonsense_topic {row.commonsense_topic!r} is "
                                                                  f"not one of {list(topics.values())}")))
                continue
            if topic is not None and row.commonsense_country and compare_key(row.commonsense_item) not in atlas.get(
                    (_key(row.commonsense_country), topic.casefold()), set()):
                dropped["commonsense_not_in_atlas"].append((*where, (f"commonsense_item is not an item of the "
                                                                    f"Cultural Atlas {topic} page of "
                                                                    f"{row.commonsense_country!r}")))
                continue
        commonsense_country = resolve(row.commonsense_country, atlas_countries)
        if commonsense_country and _key(commonsense_country) not in names:
            dropped["country_not_a_character"].append((*where, (f"country {row.commonsense_country!r} is no "
                                                               "character's nationality")))
            continue
        parsed = parse_statement(row.value_item)
        value_country = resolve(row.value_country or (parsed[0] if parsed else None), atlas_countries)
        if parsed is None or _key(resolve(parsed[0], atlas_countries)) != _key(value_country):
            reason = ("value_item is not a Table 4A statement 'People from <country> <statement>'" if parsed is None
                      else f"value_item is about {parsed[0]!r}, cultural_value_country is {row.value_country!r}")
            dropped["value_not_a_table_4a_statement"].append((*where, reason))
            continue
        question, side = parsed[1], parsed[2]
        share = share_of.get((value_country, question["question_id"], side))  # kept whatever it is: see checks
        if len(characters) == 3 and _key(value_country) not in names:
            dropped["value_country_not_a_character"].append((*where, (f"the value item's country {value_country!r} "
                                                                     "is no character's nationality")))
            continue
        identifier = scenario_id(row)
        if identifier in seen:
            earlier = seen[identifier]
            dropped["duplicate_scenario"].append((*where, (f"same scenario as row {earlier.row} of {earlier.file}, "
                                                          "which is kept")))
            continue
        seen[identifier] = row
        kept.append((identifier, row.source_id, row.layout, row.scenario,
                     None if row.events is None else list(row.events),
                     [{**c, "profile": portfolio(c), "goals": list(c["goals"])} for c in characters],
                     commonsense_country, topic, row.commonsense_item or None, row.value_item, value_country,
                     question["question_id"], question["table_4a_id"], question["topic"], side, share,
                     zones.get(value_country)))
    table = pl.DataFrame(kept, schema=SCENARIO_SCHEMA, orient="row").sort("id")
    quarantine = {rule: pl.DataFrame(found, schema=QUARANTINE_SCHEMA, orient="row")
                  for rule, found in sorted(dropped.items())}
    return table, quarantine


def absent_fields(rows: list[ScenarioRow]) -> dict[str, dict[str, int]]:
    """Per layout, how many records read lack each field that Tables 6A-11A fill in (events, the commonsense item,
    a third character) or that the value's country comes from (cultural_value_country); ``evaluate`` names what
    stands in for each (``culturebench.evaluate.socialcc.prompts.STAND_INS``)."""
    out: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        out[row.layout]["records"] += 1
        out[row.layout]["events"] += row.events is None
        out[row.layout]["commonsense_item"] += not row.commonsense_item
        out[row.layout]["character_3"] += len(row.characters) < 3
        out[row.layout]["value_country"] += not row.value_country
    return {layout: dict(counts) for layout, counts in sorted(out.items())}


def continent_counts(scenarios: pl.DataFrame, atlas_countries: set[str] = frozenset()) -> dict:
    """Table 1 and 3A: scenarios per continent and per country of their value item."""
    continents: Counter = Counter()
    countries: Counter = Counter()
    for (country,) in scenarios.select("value_country").iter_rows():
        info = country_info(country, atlas_countries)
        continents[info[1] if info else "unknown"] += 1
        countries[country or "unknown"] += 1
    return {"scenarios_by_continent": dict(sorted(continents.items())),
            "scenarios_by_value_country": dict(sorted(countries.items()))}


def below_threshold_counts(below: pl.DataFrame) -> dict:
    """How many scenarios (in all, per layout, per WVS question) have a value whose share in the WVS files is not
    over the threshold: Sec. 3.2's 80% describes how the authors chose questions, and their own Table 13A
    example (Japan, Q27) is one such scenario, so these are kept and only reported."""
    count = lambda column: dict(sorted(Counter(below[column].to_list()).items()))
    return {"scenarios": below.height, "by_layout": count("layout"), "by_question": count("value_question_id")}


def zone_counts(scenarios: pl.DataFrame) -> dict[str, int]:
    """Scenarios per Inglehart-Welzel zone of their value country (Fig. 6's groups); "null" without a zone."""
    return dict(sorted(Counter(z or "null" for z in scenarios["iw_zone"].to_list()).items()))


# ---------------------------------------------------------------------------------------------------- checks


def checks(tables: dict[str, dict[str, pl.DataFrame]]) -> list[CheckResult]:
    scenarios = pl.concat(tables["scenarios"].values())
    preferences = pl.concat(tables["value_preferences"].values())
    by_id = {q["question_id"]: q for q in questions()}
    not_statement = [i for i, v, c in scenarios.select("id", "value_item", "value_country").iter_rows()
                     if parse_statement(v) is None]
    not_over = preferences.filter(~over_threshold(pl.col("share"))).height
    below = scenarios.filter(pl.col("value_share").is_not_null() & ~over_threshold(pl.col("value_share")))
    wrong_statement = [s for c, q, d, s in preferences.select("country", "question_id", "side",
                                                              "statement").iter_rows()
                       if q not in by_id or s != statement(c, by_id[q][d])]
    both = preferences.group_by("country", "question_id").len().filter(pl.col("len") > 1).height
    shapes = scenarios.filter(~pl.col("characters").list.len().is_between(2, 3)).height
    atlas_countries = set(scenarios["commonsense_country"].drop_nulls().to_list())
    unresolved = sorted({str(c["nationality"]) for chars in scenarios["characters"].to_list() for c in chars
                         if country_info(c["nationality"], atlas_countries) is None})
    return [
        check("every scenario's value item is a Table 4A statement", "scenarios", len(not_statement), 0,
              examples=not_statement[:5], failures=len(not_statement)),
        check(f"scenarios kept although their value's WVS share is not over {threshold()} (warning, "
              "informational: a released scenario is never dropped for our threshold)", "scenarios",
              below_threshold_counts(below), "any", passed=True,
              examples=below.select("id", "value_country", "value_question_id", "value_side",
                                    "value_share").head(5).rows()),
        check(f"every value preference has a share over the threshold ({threshold()})", "value_preferences",
              not_over, 0),
        check("every statement is 'People from <country> <Table 4A statement of its side>'",
              "value_preferences", len(wrong_statement), 0, examples=wrong_statement[:5],
              failures=len(wrong_statement)),
        check("at most one side per country and question", "value_preferences", both, 0),
        check("every scenario has Character 1 and 2 (and at most a Character 3)", "scenarios", shapes, 0),
        check("nationalities that resolve to no WVS-7 or atlas country (informational)", "scenarios", unresolved,
              "any", passed=True),
        check("scenarios per continent and value country (informational; Tables 1 and 3A of the paper)",
              "scenarios", continent_counts(scenarios, atlas_countries), "any", passed=True),
        check("scenarios per Inglehart-Welzel zone of the value country (informational; Fig. 6)", "scenarios",
              zone_counts(scenarios), "any", passed=True),
        check("preferences per Table 4A question (informational)", "value_preferences",
              dict(sorted(Counter(preferences["question_id"].to_list()).items())), "any", passed=True),
    ]
