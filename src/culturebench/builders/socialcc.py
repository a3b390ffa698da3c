"""SocialCC (Wu et al.): social scenarios that combine a cultural commonsense item and a cultural value item.

raw/wvs/* (+ optional raw/socialcc/wvs/*) + codebook  ->  value_preferences (WVS-7 consensus statements)
raw/cultural_atlas/<country>/*.html + raw/socialcc/*.jsonl  ->  scenarios (validated against both)

Value preferences (Sec. 3): for each country and each WVS-7 question of ``facts/socialcc.json`` (our reading of
Table 4A, see there), the share of the country's valid answers (negative codes left out) in the question's
*agree* codes and in its *disagree* codes, weighted by W_WEIGHT when every respondent of the group has a
positive weight. A direction whose share is at or above the threshold (``facts/socialcc.json`` ``threshold``,
default 0.8: the CLI has no per-benchmark flags, so the threshold is a facts value) becomes the statement
"People from <country> strongly <agree|disagree> that <statement>".

Scenarios: each names a country whose Cultural Atlas page holds its commonsense item (topic Etiquette or Dates of
Significance; text compared after NFKC, plain quotes/dashes and whitespace normalisation), and a value item that
must be one of the mined preferences, of the nationality of one of its characters. Scenarios that fail a rule go
to quarantine with a reason; malformed files stop the build with one line (file, line, key).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter, defaultdict
from functools import cache
from importlib import resources
from pathlib import Path

import polars as pl

from culturebench.builders.base import BuildOutput, CardInfo, ConfigInfo, Progress
from culturebench.builders.normad import compare_key, normal
from culturebench.builders.wvb import check_codes_in_codebook
from culturebench.errors import InputError
from culturebench.io import InputFile, input_name
from culturebench.raw.codebook import Codebook, codebook_input, find_codebook, load_codebook
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
        "SocialCC (Wu et al.) evaluates whether language-model agents act with cultural competence in social "
        "interactions: each scenario puts three characters of given nationalities, occupations and social goals into "
        "a situation of two events that turns on a piece of cultural commonsense (a Cultural Atlas etiquette or "
        "dates-of-significance item) and a cultural value preference mined from the World Values Survey wave 7 "
        "(\"People from <country> strongly agree that ...\", where over 80% of the country's respondents agree). This "
        "release was rebuilt by culturebench: the value preferences from raw WVS-7 files, the scenarios from a "
        "scenario file checked against the atlas pages and the preferences."
    ),
    license="other",
    citation=(
        "@article{wu2025socialcc,\n"
        "  title = {{SocialCC}: Interactive Evaluation for Cultural Competence in Language Agents},\n"
        "  author = {Wu, Jincenzi and others},\n  year = {2025}\n}\n"
        "@misc{wvs7,\n  title = {World Values Survey: Round Seven -- Country-Pooled Datafile},\n"
        "  author = {Haerpfer, C. and Inglehart, R. and Moreno, A. and Welzel, C. and Kizilova, K. and Diez-Medrano, J. and Lagos, M. and Norris, P. and Ponarin, E. and Puranen, B.},\n"
        "  publisher = {JD Systems Institute and WVSA Secretariat},\n  doi = {10.14281/18241.24},\n  year = {2022}\n}"
    ),
    configs=(
        ConfigInfo("scenarios", "One row per scenario: id (socialcc- + 16 hex of a sha256 of its content), scenario "
                   "text, events (2), characters (3 structs: name, age, gender, nationality, occupation, goal), "
                   "country (whose Cultural Atlas holds the commonsense item), commonsense_item and "
                   "commonsense_topic (Etiquette or Dates of Significance), value_item (a statement of "
                   "value_preferences) and value_question_id (its WVS-7 question).", redistributable=False,
                   license_name="cultural-atlas-terms"),
        ConfigInfo("value_preferences", "Country consensus mined from WVS-7: country, question_id, direction (agree "
                   "or disagree), share (weighted share of valid answers in the direction's codes, at or above the "
                   "threshold), n (valid answers), weighted (W_WEIGHT used) and statement."),
    ),
    creation=(
        "Value preferences are computed from the WVS-7 respondent files in `RAW/wvs/` (read with the same reader as "
        "WorldValuesBench; optional extra files in `RAW/socialcc/wvs/` are read after them) and the codebook. For each "
        "country and each question listed in `culturebench/facts/socialcc.json` (Table 4A of the paper could not be "
        "retrieved: the list is the WVS items behind the statements of the released scenarios plus items of our own, "
        "each marked), the agree and disagree code sets are data in that file; negative codes are not valid answers; "
        "middle codes count in the denominator. Shares are weighted by W_WEIGHT when every respondent of the "
        "(country, question) group has a positive weight (`weighted` says so), unweighted otherwise. A direction "
        "enters at or above the threshold in the facts file (0.8).\n\n"
        "Scenarios are read from `RAW/socialcc/*.jsonl`; a malformed line stops the build with one line naming file, "
        "line and key. Quarantined (with a `reason`): empty text (`empty_text`), a commonsense topic other than "
        "Etiquette / Dates of Significance (`bad_commonsense_topic`), an item not on the country's atlas page of that "
        "topic (`commonsense_not_in_atlas`), a nationality that is neither a WVS-7 country nor an atlas country "
        "(`unknown_nationality`), a scenario country that is no character's nationality "
        "(`country_not_a_character`), a value item that is not a mined preference (`value_not_a_preference`, the "
        "reason gives the share when it is below the threshold), a preference whose country is no character's "
        "nationality (`value_country_not_a_character`), and later copies of the same scenario "
        "(`duplicate_scenario`). Character and scenario counts per continent (Table 1) are reported."
    ),
    considerations=(
        "**Licensing.** Commonsense items reproduce Cultural Atlas text, (c) SBS: the `scenarios` config is marked "
        "not redistributable. `value_preferences` holds country aggregates, no respondent rows.\n\n"
        "**Use.** A consensus statement describes a majority of a national sample, not every person of that "
        "nationality; the agree/disagree code sets are our reading of the questions."
    ),
    tags=("cultural-competence", "social-interaction", "world-values-survey", "cultural-atlas", "llm-agents"),
    source=("SocialCC scenario files (JSONL, see culturebench.raw.socialcc), the World Values Survey wave-7 files and "
            "codebook (worldvaluessurvey.org) and saved Cultural Atlas pages (culturalatlas.sbs.com.au)"),
    language=("en",),
    task_categories=("text-generation",),
    annotations_creators=("expert-generated",),
    license_name="cultural-atlas-terms",
    license_link="https://culturalatlas.sbs.com.au",
    license_details=("Scenarios quote Cultural Atlas text, (c) SBS; the value preferences are country aggregates "
                     "computed from WVS-7 (World Values Survey Association terms)."),
)

SCENARIO_SCHEMA = {
    "id": pl.String, "scenario": pl.String, "events": pl.List(pl.String),
    "characters": pl.List(pl.Struct({"name": pl.String, "age": pl.Int64, "gender": pl.String,
                                     "nationality": pl.String, "occupation": pl.String, "goal": pl.String})),
    "country": pl.String, "commonsense_item": pl.String, "commonsense_topic": pl.String,
    "value_item": pl.String, "value_question_id": pl.String,
}
PREFERENCE_SCHEMA = {"country": pl.String, "question_id": pl.String, "direction": pl.String, "share": pl.Float64,
                     "n": pl.Int64, "weighted": pl.Boolean, "statement": pl.String}
QUARANTINE_SCHEMA = {"source_file": pl.String, "row": pl.Int64, "source_id": pl.String, "country": pl.String,
                     "scenario": pl.String, "commonsense_topic": pl.String, "commonsense_item": pl.String,
                     "value_question_id": pl.String, "value_item": pl.String, "nationalities": pl.String,
                     "reason": pl.String}


@cache
def facts() -> dict:
    return json.loads(resources.files("culturebench.facts").joinpath("socialcc.json").read_text(encoding="utf-8"))


def threshold() -> float:
    return float(facts()["threshold"])


def questions() -> list[dict]:
    return list(facts()["questions"])


def question_ids() -> list[str]:
    return [q["question_id"] for q in questions()]


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
    return normal(name.replace("_", " ")).casefold()


@cache
def _known() -> dict[str, tuple[str, str]]:
    """Country key -> (WVS name, continent) for every WVS-7 country name, ISO alpha-3 code and alias."""
    frame = wvs_countries()
    by_alpha = {a: (n, c) for a, n, c in frame.select("alpha3", "name", "continent").iter_rows()}
    out = {_key(n): (n, c) for n, c in by_alpha.values()}
    out |= {_key(a): v for a, v in by_alpha.items()}
    for alias, alpha in facts()["country_aliases"].items():
        if alpha in by_alpha:
            out.setdefault(_key(alias), by_alpha[alpha])
    return out


def country_info(name: str, atlas_countries: set[str] = frozenset()) -> tuple[str, str] | None:
    """(canonical name, continent) of a nationality or country name; atlas-only countries have continent
    'unknown'; None when the name is neither a WVS-7 country (or alias) nor an atlas country."""
    key = _key(name)
    if key in _known():
        return _known()[key]
    if key in {_key(a) for a in atlas_countries}:
        return normal(name), "unknown"
    return None


def statement(country: str, direction: str, text: str) -> str:
    return facts()["statement_template"].format(country=country, direction=direction, statement=text)


def raw_present(raw: Path) -> bool:
    return (raw / FOLDER).is_dir()


# ---------------------------------------------------------------------------------------------------- build


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
    progress("preferences")
    shares = consensus_shares(table)
    preferences = preferences_table(shares)
    progress("scenarios")
    scenarios, quarantine = scenarios_table(rows, items, preferences, shares)
    atlas_countries = {i.country for i in items}
    return BuildOutput(
        tables={"scenarios": {SCENARIOS_SPLIT: scenarios}, "value_preferences": {PREFERENCES_SPLIT: preferences}},
        quarantine=quarantine,
        inputs=inputs,
        rows_read=len(rows),
        rows_kept=scenarios.height,
        provenance={
            "threshold": threshold(),
            "respondents_read": table.height,
            "respondents_weighted": int(table["weight"].is_not_null().sum()),
            "countries": int(table[facts()["country_column"]].n_unique()),
            "questions": question_ids(),
            "candidates": shares.height,
            "preferences": preferences.height,
            "scenarios_read": len(rows),
            "atlas_items_read": len(items),
            "continent_counts": continent_counts(scenarios, atlas_countries),
            "codebook": {"file": input_name(codebook_path, raw), "sha256": codebook.sha256},
        },
    )




def check_questions(codebook: Codebook) -> None:
    """Every question of the facts is in the codebook, and its agree/disagree codes are choices it lists."""
    for q in questions():
        name = q["question_id"]
        if name not in codebook:
            raise InputError("question of facts/socialcc.json is not in the codebook", file=codebook.source,
                             column=name)
        valid = set(codebook[name].valid_choices())
        outside = sorted((set(q["agree"]) | set(q["disagree"])) - valid)
        if outside:
            raise InputError(f"agree/disagree codes {outside} of facts/socialcc.json are not codebook choices "
                             f"{sorted(valid)}", file=codebook.source, page=codebook[name].page, column=name)


def consensus_shares(table: pl.DataFrame) -> pl.DataFrame:
    """Every (country, question, direction) with its share of valid answers: columns country, alpha3, continent,
    question_id, direction, share, n, weighted. ``table`` has the country column (ISO numeric codes), the
    question columns (codes; negative = missing) and optionally ``weight`` (null = none)."""
    code = facts()["country_column"]
    known = wvs_countries()
    unknown = table.join(known, on=code, how="anti")
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"{code} code {first[code]} is not a WVS-7 country known to culturebench",
                         file=first.get(SOURCE_FILE), row=first.get(SOURCE_ROW), column=code)
    weight = pl.col("weight") if "weight" in table.columns else pl.lit(None, dtype=pl.Float64)
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
            pl.col("_w").filter(answer.is_in(q["agree"])).sum().alias("agree_w"),
            pl.col("_w").filter(answer.is_in(q["disagree"])).sum().alias("disagree_w"),
            answer.is_in(q["agree"]).sum().alias("agree_n"),
            answer.is_in(q["disagree"]).sum().alias("disagree_n"),
        )
        for direction in ("agree", "disagree"):
            share = (pl.when(pl.col("weighted")).then(pl.col(f"{direction}_w") / pl.col("total_w"))
                     .otherwise(pl.col(f"{direction}_n") / pl.col("n")))
            frames.append(grouped.select(code, pl.lit(name).alias("question_id"), pl.lit(direction).alias("direction"),
                                         share.cast(pl.Float64).alias("share"), pl.col("n").cast(pl.Int64),
                                         "weighted"))
    empty = pl.DataFrame(schema={code: pl.Int64, "question_id": pl.String, "direction": pl.String,
                                 "share": pl.Float64, "n": pl.Int64, "weighted": pl.Boolean})
    order = {name: i for i, name in enumerate(question_ids())}
    return (
        pl.concat([f.cast({code: pl.Int64}) for f in frames]) if frames else empty
    ).join(known, on=code, how="left").with_columns(
        pl.col("question_id").replace_strict(order, return_dtype=pl.Int64).alias("_order")
    ).sort("name", "_order", "direction").select(
        pl.col("name").alias("country"), "alpha3", "continent", "question_id", "direction", "share", "n", "weighted")


def preferences_table(shares: pl.DataFrame, at_least: float | None = None) -> pl.DataFrame:
    """The value_preferences config: the candidates at or above the threshold, with their statement."""
    limit = threshold() if at_least is None else at_least
    texts = {q["question_id"]: q["statement"] for q in questions()}
    chosen = shares.filter(pl.col("share") >= limit)
    rows = [(c, q, d, s, n, w, statement(c, d, texts[q]))
            for c, q, d, s, n, w in chosen.select("country", "question_id", "direction", "share", "n",
                                                  "weighted").iter_rows()]
    return pl.DataFrame(rows, schema=PREFERENCE_SCHEMA, orient="row")


def scenario_id(row: ScenarioRow) -> str:
    people = sorted(f"{normal(c['name']).casefold()}|{_key(c['nationality'])}" for c in row.characters)
    text = "\x1f".join([_key(row.country), normal(row.scenario).casefold(), compare_key(row.commonsense_item),
                        row.value_question_id.strip().upper(), normal(row.value_item).casefold(), *people])
    return f"socialcc-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def _empty_fields(row: ScenarioRow) -> list[str]:
    fields = {"scenario": row.scenario, "country": row.country, "commonsense_topic": row.commonsense_topic,
              "commonsense_item": row.commonsense_item, "value_question_id": row.value_question_id,
              "value_item": row.value_item}
    empty = [k for k, v in fields.items() if not v]
    empty += [f"events[{i}]" for i, e in enumerate(row.events, start=1) if not e]
    empty += [f"characters[{i}].{k}" for i, c in enumerate(row.characters, start=1)
              for k in ("name", "gender", "nationality", "occupation", "goal") if not c[k]]
    return empty


def scenarios_table(rows: list[ScenarioRow], items: list[AtlasItem], preferences: pl.DataFrame,
                    shares: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    atlas: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item in items:
        atlas[(_key(item.country), item.topic.casefold())].add(compare_key(item.text))
    atlas_countries = {i.country for i in items}
    topics = {t.casefold(): t for t in facts()["commonsense_topics"]}
    by_statement = {(q, normal(s)): c for c, q, s in preferences.select("country", "question_id",
                                                                         "statement").iter_rows()}
    texts = {q["question_id"]: q["statement"] for q in questions()}
    candidate = {statement(c, d, texts[q]): s for c, q, d, s in
                 shares.select("country", "question_id", "direction", "share").iter_rows()}
    kept, seen = [], {}
    dropped: dict[str, list] = defaultdict(list)
    for row in rows:
        where = (row.file, row.row, row.source_id, row.country, row.scenario, row.commonsense_topic,
                 row.commonsense_item, row.value_question_id, row.value_item,
                 "; ".join(c["nationality"] for c in row.characters))
        empty = _empty_fields(row)
        if empty:
            dropped["empty_text"].append((*where, f"empty {', '.join(empty)}"))
            continue
        topic = topics.get(row.commonsense_topic.casefold())
        if topic is None:
            dropped["bad_commonsense_topic"].append((*where, (f"commonsense_topic {row.commonsense_topic!r} is not "
                                                              f"one of {list(topics.values())}")))
            continue
        if compare_key(row.commonsense_item) not in atlas.get((_key(row.country), topic.casefold()), set()):
            dropped["commonsense_not_in_atlas"].append((*where, (f"commonsense_item is not an item of the Cultural "
                                                                f"Atlas {topic} page of {row.country!r}")))
            continue
        nationalities = [country_info(c["nationality"], atlas_countries) for c in row.characters]
        unknown = [c["nationality"] for c, info in zip(row.characters, nationalities) if info is None]
        if unknown:
            dropped["unknown_nationality"].append((*where, (f"nationality {unknown[0]!r} is neither a WVS-7 country "
                                                           "nor a Cultural Atlas country")))
            continue
        names = {_key(info[0]) for info in nationalities}
        country = country_info(row.country, atlas_countries)
        if country is None or _key(country[0]) not in names:
            dropped["country_not_a_character"].append((*where, (f"country {row.country!r} is no character's "
                                                               "nationality")))
            continue
        qid = row.value_question_id.strip().upper()
        value_country = by_statement.get((qid, normal(row.value_item)))
        if value_country is None:
            share = candidate.get(normal(row.value_item)) if qid in texts else None
            reason = (f"value_question_id {row.value_question_id!r} is not a question of facts/socialcc.json"
                      if qid not in texts else
                      f"share {share:.3f} of the statement is below the threshold {threshold()}"
                      if share is not None else
                      f"value_item is not a mined preference statement of {qid} (no such country/direction/text)")
            dropped["value_not_a_preference"].append((*where, reason))
            continue
        if _key(value_country) not in names:
            dropped["value_country_not_a_character"].append((*where, (f"the value item's country {value_country!r} "
                                                                     "is no character's nationality")))
            continue
        identifier = scenario_id(row)
        if identifier in seen:
            earlier = seen[identifier]
            dropped["duplicate_scenario"].append((*where, (f"same scenario as line {earlier.row} of {earlier.file}, "
                                                          "which is kept")))
            continue
        seen[identifier] = row
        kept.append((identifier, row.scenario, list(row.events), [dict(c) for c in row.characters], row.country,
                     row.commonsense_item, topic, row.value_item, qid))
    table = pl.DataFrame(kept, schema=SCENARIO_SCHEMA, orient="row").sort("id")
    quarantine = {rule: pl.DataFrame(found, schema=QUARANTINE_SCHEMA, orient="row")
                  for rule, found in sorted(dropped.items())}
    return table, quarantine


def continent_counts(scenarios: pl.DataFrame, atlas_countries: set[str] = frozenset()) -> dict:
    """Table 1: characters per continent of their nationality, and scenarios per continent of their country."""
    characters: Counter = Counter()
    countries: Counter = Counter()
    for row in scenarios.select("country", "characters").iter_rows():
        info = country_info(row[0], atlas_countries)
        countries[info[1] if info else "unknown"] += 1
        for character in row[1]:
            info = country_info(character["nationality"], atlas_countries)
            characters[info[1] if info else "unknown"] += 1
    return {"characters": dict(sorted(characters.items())), "scenarios": dict(sorted(countries.items()))}


# ---------------------------------------------------------------------------------------------------- checks


def checks(tables: dict[str, dict[str, pl.DataFrame]]) -> list[CheckResult]:
    scenarios = pl.concat(tables["scenarios"].values())
    preferences = pl.concat(tables["value_preferences"].values())
    texts = {q["question_id"]: q["statement"] for q in questions()}
    pairs = set(preferences.select("question_id", "statement").iter_rows())
    missing_value = [i for i, q, v in scenarios.select("id", "value_question_id", "value_item").iter_rows()
                     if (q, v) not in pairs]
    below = preferences.filter(pl.col("share") < threshold()).height
    wrong_statement = [s for c, q, d, s in preferences.select("country", "question_id", "direction",
                                                              "statement").iter_rows()
                       if q not in texts or s != statement(c, d, texts[q])]
    both = preferences.group_by("country", "question_id").len().filter(pl.col("len") > 1).height
    shapes = scenarios.filter((pl.col("events").list.len() != facts()["events_per_scenario"])
                              | (pl.col("characters").list.len() != facts()["characters_per_scenario"])).height
    atlas_countries = set(scenarios["country"].to_list())
    unknown = sorted({c["nationality"] for chars in scenarios["characters"].to_list() for c in chars
                      if country_info(c["nationality"], atlas_countries) is None})
    return [
        check("every scenario's value item is a value_preferences statement of its question", "scenarios",
              len(missing_value), 0, examples=missing_value[:5], failures=len(missing_value)),
        check(f"every value preference has a share at or above the threshold ({threshold()})", "value_preferences",
              below, 0),
        check("every statement is 'People from <country> strongly <direction> that <question statement>'",
              "value_preferences", len(wrong_statement), 0, examples=wrong_statement[:5],
              failures=len(wrong_statement)),
        check("at most one direction per country and question", "value_preferences", both, 0),
        check("every scenario has 2 events and 3 characters", "scenarios", shapes, 0),
        check("every nationality is a WVS-7 country, an alias of one, or a scenario (atlas) country", "scenarios",
              unknown, []),
        check("characters and scenarios per continent (informational; Table 1 of the paper on the full release)",
              "scenarios", continent_counts(scenarios, atlas_countries), "any", passed=True),
        check("preferences per country (informational)", "value_preferences",
              dict(sorted(Counter(preferences["country"].to_list()).items())), "any", passed=True),
    ]
