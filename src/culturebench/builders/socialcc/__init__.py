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

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from culturebench.builders.base import BuildOutput, Progress
from culturebench.builders.socialcc.card import CARD, card, manifest_card  # noqa: F401 - the release's and audit's
from culturebench.builders.socialcc.statements import (  # noqa: F401 - the statements are the builder's too
    SIDES,
    country_info,
    facts,
    iw_zones,
    name_key,
    over_threshold,
    parse_statement,
    question_ids,
    questions,
    resolve,
    side_codes,
    statement,
    threshold,
    wvs_countries,
)
from culturebench.builders.socialcc.values import (  # noqa: F401 - the branches are the builder's too
    released_value,
    value_branch,
    value_branches,
    wvs_consensus,
)
from culturebench.options import BuildOptions, option
from culturebench.countries import compare_key, normal
from culturebench.errors import InputError
from culturebench.io import InputFile, input_name
from culturebench.raw.codebook import Codebook
from culturebench.raw.codebook_files import codebook_input, find_codebook, reading_codebook
from culturebench.raw.inglehart_welzel import read_zone_tables, read_zones
from culturebench.raw.cultural_atlas import FOLDER as ATLAS_FOLDER
from culturebench.raw.cultural_atlas import AtlasItem, read_atlas
from culturebench.raw.socialcc import (
    FOLDER,
    portfolio,
    ScenarioRow,
    read_scenarios,
    scenario_files,
)
from culturebench.raw.wvs import (
    SOURCE_FILE,
    SOURCE_ROW,
    check_codes_in_codebook,
    read_respondents,
    respondent_files,
)
from culturebench.validation.checks import CheckResult, check

NAME = "socialcc"
WVS_FOLDER = "wvs"
STAGES = ("read", "preferences", "scenarios")
SCENARIOS_SPLIT = "test"
PREFERENCES_SPLIT = "full"

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


def raw_present(raw: Path) -> bool:
    return (raw / FOLDER).is_dir()


@dataclass(frozen=True, kw_only=True)
class Options(BuildOptions):
    """``culturebench build socialcc --zones TABLE`` (or the key of ``--config``)."""

    zones: Path | None = option(help="A country -> Inglehart-Welzel zone table (CSV with a country and a zone "
                                     "column, as RAW/inglehart_welzel/*.csv) whose zones the scenarios take instead "
                                     "of RAW/inglehart_welzel/'s (Fig. 6's eight cultural groups); read and hashed "
                                     "as an input. Default: RAW/inglehart_welzel/.")


# ---------------------------------------------------------------------------------------------------- build

_VERSION = re.compile(r"v(\d+)[_.](\d+)", re.IGNORECASE)


def wvs_versions(inputs: list[InputFile]) -> dict[str, str]:
    """File -> WVS-7 datafile version as its name gives it ("v6_0" -> "6.0"; "unknown" otherwise)."""
    out = {}
    for item in inputs:
        found = _VERSION.search(Path(item.name).name)
        out[item.name] = f"{found.group(1)}.{found.group(2)}" if found else "unknown"
    return out


def build(raw: Path, seed: int, progress: Progress, options: Options | None = None) -> BuildOutput:
    """``seed`` is unused: nothing is sampled. ``options.zones``: a zone table instead of RAW/inglehart_welzel/."""
    options = options or Options()
    progress("read")
    wvs_folder = raw / WVS_FOLDER
    files = respondent_files(wvs_folder)
    extra = raw / FOLDER / facts()["extra_respondents_folder"]
    if extra.is_dir():
        files += respondent_files(extra)
    codebook_path = find_codebook(wvs_folder)
    with reading_codebook(codebook_path, cache_dir=Path.home() / ".cache" / "culturebench") as finish_codebook:
        table, wvs_inputs = read_respondents(files, [facts()["country_column"], *question_ids()], root=raw,
                                             weight=facts()["weight_column"])  # beside the PDF's parse
        codebook = finish_codebook()
    check_questions(codebook)
    check_codes_in_codebook(table, codebook, question_ids())
    rows: list[ScenarioRow] = []
    inputs: list[InputFile] = [*wvs_inputs, codebook_input(codebook_path, codebook, raw)]
    for path in scenario_files(raw / FOLDER):
        found, info = read_scenarios(path, raw)
        rows += found
        inputs.append(info)
    items, atlas_inputs = read_atlas(raw / ATLAS_FOLDER, raw)
    inputs += atlas_inputs
    if options.zones is None:
        zone_rows, zone_inputs = read_zone_tables(raw)
    else:
        zone_rows, zone_table_input = read_zones(options.zones, raw)
        zone_inputs = [zone_table_input]
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
            **({} if options.zones is None else {"iw_zone_table": zone_inputs[0].name}),
            "scenarios_by_iw_zone": zone_counts(scenarios),
            "continent_counts": continent_counts(scenarios, atlas_countries),
            "codebook": {"file": input_name(codebook_path, raw), "sha256": codebook.sha256},
        },
    )


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


def scenario_id(row: ScenarioRow) -> str:
    """socialcc- + 16 hex of a sha256 of the scenario's content: text, commonsense and value items, every
    character's name, profile and goals, and, for the authors' layouts, the record's own id (released scenarios
    with different ids are different scenarios even where the fields a copy kept coincide: CC-Mediation's records
    1 and 1894 differ only in fields it did not keep)."""
    people = [f"{normal(c.get('name') or '').casefold()}|{normal(portfolio(c)).casefold()}|"
              f"{'|'.join(normal(g).casefold() for g in c.get('goals') or [])}" for c in row.characters]
    released_id = row.source_id if row.layout != "culturebench" else ""
    text = "\x1f".join([normal(row.scenario).casefold(), compare_key(row.commonsense_item or ""),
                        normal(row.value_item).casefold(), name_key(row.value_country or ""), released_id, *people])
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


def scenarios_table(rows: list[ScenarioRow], items: list[AtlasItem], shares: pl.DataFrame,
                    zones: dict[str, str] | None = None) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """The scenarios config and the quarantine; ``zones`` (``iw_zones``) gives each value country's iw_zone."""
    zones = zones or {}
    atlas: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item in items:
        atlas[(name_key(item.country), item.topic.casefold())].add(compare_key(item.text))
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
        names = {name_key(c["country"]) for c in characters if c["country"]}
        topic = None
        if row.commonsense_item:
            topic = topics.get((row.commonsense_topic or "").casefold())
            if row.commonsense_topic is not None and topic is None:
                dropped["bad_commonsense_topic"].append((*where, (f"commonsense_topic {row.commonsense_topic!r} is "
                                                                  f"not one of {list(topics.values())}")))
                continue
            if topic is not None and row.commonsense_country and compare_key(row.commonsense_item) not in atlas.get(
                    (name_key(row.commonsense_country), topic.casefold()), set()):
                dropped["commonsense_not_in_atlas"].append((*where, (f"commonsense_item is not an item of the "
                                                                    f"Cultural Atlas {topic} page of "
                                                                    f"{row.commonsense_country!r}")))
                continue
        commonsense_country = resolve(row.commonsense_country, atlas_countries)
        if commonsense_country and name_key(commonsense_country) not in names:
            dropped["country_not_a_character"].append((*where, (f"country {row.commonsense_country!r} is no "
                                                               "character's nationality")))
            continue
        parsed = parse_statement(row.value_item)
        value_country = resolve(row.value_country or (parsed[0] if parsed else None), atlas_countries)
        if parsed is None or name_key(resolve(parsed[0], atlas_countries)) != name_key(value_country):
            reason = ("value_item is not a Table 4A statement 'People from <country> <statement>'" if parsed is None
                      else f"value_item is about {parsed[0]!r}, cultural_value_country is {row.value_country!r}")
            dropped["value_not_a_table_4a_statement"].append((*where, reason))
            continue
        question, side = parsed[1], parsed[2]
        share = share_of.get((value_country, question["question_id"], side))  # kept whatever it is: see checks
        if len(characters) == 3 and name_key(value_country) not in names:
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
