"""SocialCC: value preferences mined from WVS-7 and scenarios checked against the atlas and the preferences."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import REFERENCE, REPO, reference
from typer.testing import CliRunner

from culturebench import registry
from culturebench.builders import socialcc
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.raw.inglehart_welzel import read_zones
from culturebench.raw.socialcc import parse_scenario, read_scenarios
from culturebench.release import build_release

RAW = REPO / "raw"
NOOP = lambda stage: None
SAMPLE = RAW / "socialcc" / "SAMPLE_socialcc_scenarios.jsonl"
SCENARIO_COLUMNS = list(socialcc.SCENARIO_SCHEMA)
PREFERENCE_COLUMNS = ["country", "question_id", "table_4a_id", "topic", "side", "share", "n", "weighted", "statement"]


def sample_records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder, verdict = build_release(registry.benchmark("socialcc"), RAW, tmp_path_factory.mktemp("releases"), seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return folder


def read_config(release: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((release / "data" / config).glob("*.parquet"))])


# ------------------------------------------------------------------------------------------------ sample build


def test_sample_release(release):
    scenarios = read_config(release, "scenarios")
    preferences = read_config(release, "value_preferences")
    assert scenarios.columns == SCENARIO_COLUMNS and preferences.columns == PREFERENCE_COLUMNS
    # 6 of our 7 JSONL scenarios + the 2 per-scenario JSONs of the released layout + 3 CC-Mediation records
    assert scenarios.height == 11 and sorted(scenarios["layout"].to_list()) == (
        ["cc_mediation"] * 3 + ["culturebench"] * 6 + ["released"] * 2)
    assert scenarios["id"].str.contains(r"^socialcc-[0-9a-f]{16}$").all()
    released = scenarios.filter(pl.col("layout") == "released").sort("source_id")
    assert released["events"].to_list() == [None, None] and released["commonsense_item"].to_list() == [None, None]
    assert released["characters"].list.len().to_list() == [2, 2]
    # nationalities resolve: "the Philippines" -> Philippines; Character 2 is the Jordanian protagonist
    second = released["characters"][1].to_list()
    assert [c["country"] for c in second] == ["Philippines", "Jordan"] and second[1]["name"] == "Hadi"
    assert second[0]["goals"] == ["Suggest overruling the patient's wish.",
                                  "Question whether religion should come before science."]
    assert (preferences["share"] > 0.8).all() and not preferences["weighted"].any()
    statements = set(preferences["statement"])
    assert "People from Jordan strongly agree that when a mother works for pay, the children suffer." in statements
    # every value but two is a mined preference: sample-006's Japan Q27 (Table 13A's example; the synthetic Japanese
    # of raw/wvs answer at random) and CC-Mediation 13.json's Jordan Q237 (not skewed in the sample's respondents)
    assert sorted(set(scenarios["value_item"]) - statements) == [
        "People from Japan strongly agree that one of my main goals in life has been to make my parents proud.",
        "People from Jordan agree that having the army rule is good."]
    # the bundled zone table lists only the fictional atlas countries; the value countries are Jordan and Sweden
    assert scenarios["iw_zone"].null_count() == scenarios.height
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["accounting"]["rows_read"] == 12
    assert manifest["accounting"]["quarantined_by_rule"] == {"commonsense_not_in_atlas": 1}
    assert manifest["provenance"]["threshold"] == 0.8 and manifest["provenance"]["layouts_read"] == {
        "cc_mediation": 3, "culturebench": 7, "released": 2}
    assert manifest["provenance"]["absent_fields"]["cc_mediation"] == {
        "records": 3, "events": 3, "commonsense_item": 3, "character_3": 3, "value_country": 3}
    assert set(manifest["provenance"]["wvs_versions"].values()) <= {"6.0", "unknown"}
    # those two are kept and the validation report warns about them
    report = json.loads((release / "validation" / "report.json").read_text())
    warning = next(c for c in report["checks"] if c["name"].startswith("scenarios kept although"))
    assert warning["informational"] and warning["observed"] == {
        "scenarios": 2, "by_layout": {"cc_mediation": 1, "culturebench": 1}, "by_question": {"Q237": 1, "Q27": 1}}
    card = (release / "README.md").read_text()
    assert "Wu, Jincenzi and Lian, Jianxun and Wang, DingDong and Meng, Helen" in card and "Version 6.0" in card


def test_load_dataset(release):
    from datasets import load_dataset

    scenarios = load_dataset(str(release), "scenarios", split="test")
    preferences = load_dataset(str(release), "value_preferences", split="full")
    assert len(scenarios) == 11 and len(preferences) >= 4
    assert set(scenarios[0]["characters"][0]) == set(socialcc.CHARACTER.to_schema())


def test_rebuild_is_byte_identical(release, tmp_path):
    again, _ = build_release(registry.benchmark("socialcc"), RAW, tmp_path, seed=3, progress=NOOP)
    for path in sorted((release / "data").rglob("*.parquet")):
        assert (again / path.relative_to(release)).read_bytes() == path.read_bytes()


def test_cli_build_and_validate(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["build", "socialcc", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["validate", str(tmp_path / "socialcc")]).exit_code == 0


# ------------------------------------------------------------------------------------------------ mining


def test_shares_by_hand():
    table = pl.DataFrame({
        "B_COUNTRY": [400, 400, 400, 400, 400, 554, 554, 554, 554, 156, 156, 156, 156, 156],
        # Q28: printed side "strongly disagree" = codes 3-4, opposite 1-2; -1 is not a valid answer
        "Q28": [1, 1, 2, 3, -1, 3, 4, 4, 1, 1, 2, 3, 4, 4],
        # Q37: printed "strongly disagree" = 4-5, opposite 1-2; 3 = neither stays in the denominator
        "Q37": [1, 2, 3, 1, 1, 5, 5, 4, 4, 3, 3, 3, 1, 5],
        "weight": [2.0, 1.0, 1.0, 1.0, 5.0, 1.0, None, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 2.0],
    })
    shares = socialcc.consensus_shares(table)
    got = {(c, q, d): (round(s, 10), n, w) for c, q, d, s, n, w in
           shares.select("country", "question_id", "side", "share", "n", "weighted").iter_rows()}
    # Sec. 3.2 counts respondents (weights ignored). Jordan Q28: 4 valid, 3 in 1-2, 1 in 3-4
    assert got[("Jordan", "Q28", "opposite")] == (0.75, 4, False)
    assert got[("Jordan", "Q28", "printed")] == (0.25, 4, False)
    # Jordan Q37: 5 valid, 4 in 1-2 -> 0.8, not OVER 80%; the 'neither' counts in the denominator
    assert got[("Jordan", "Q37", "opposite")] == (0.8, 5, False)
    assert got[("New Zealand", "Q28", "printed")] == (0.75, 4, False)
    assert got[("New Zealand", "Q37", "printed")] == (1.0, 4, False)
    assert got[("China", "Q37", "printed")] == (0.2, 5, False) and got[("China", "Q37", "opposite")] == (0.2, 5, False)
    preferences = socialcc.preferences_table(shares)
    assert preferences.columns == PREFERENCE_COLUMNS
    assert preferences.select("country", "question_id", "side").rows() == [("New Zealand", "Q37", "printed")]
    assert preferences["statement"].to_list() == [
        "People from New Zealand strongly disagree that it is a duty towards society to have children."]
    assert preferences["topic"].to_list() == ["Social Values"] and preferences["table_4a_id"].to_list() == [37]
    assert socialcc.preferences_table(shares, limit=0.7).height == 4  # + Jordan Q28/Q37 opposite, NZ Q28


def test_statements_parse_to_table_4a_questions():
    parse = socialcc.parse_statement
    # Table 14A / 15A / 12A
    assert parse("People from Vietnam have a great deal of confidence in the press.")[0] == "Vietnam"
    assert parse("People from Vietnam have a great deal of confidence in the press.")[1]["question_id"] == "Q66"
    found = parse("People from the Netherlands strongly agree that they never have to pay a bribe to local officials "
                  "and service providers, like police officers, lawyers, doctors, teachers, and civil servants.")
    assert found[0] == "the Netherlands" and found[1]["question_id"] == "Q118" and found[2] == "printed"
    assert parse("People from Czechia strongly disagree that whenever science and religion conflict, religion is "
                 "always right.")[2] == "printed"
    assert parse("People from X disagree that having the army rule is bad.")[2] == "opposite"
    assert parse("People from Japan like tea.") is None
    assert [socialcc.resolve(n) for n in ("the UK", "the Philippines", "Chinese", "Taiwan ROC")] == [
        "Great Britain", "Philippines", "China", "Taiwan ROC"]  # WVS-7 names


def test_unknown_country_code_is_an_input_error():
    table = pl.DataFrame({"B_COUNTRY": [999], "Q28": [1], "weight": [1.0],
                          "source_file": ["wvs/x.csv"], "source_row": [1]})
    with pytest.raises(InputError, match=r"wvs/x.csv, row 1, column B_COUNTRY: B_COUNTRY code 999"):
        socialcc.consensus_shares(table)


def test_sample_synthetic_wvs_alone_yields_no_preference():
    """Why raw/socialcc/wvs/ exists: the uniformly random respondents of raw/wvs/ reach 80% only by chance on a
    side that covers at least 2 of 3 answer codes (expected share 2/3; documented in raw/socialcc/README.md)."""
    from culturebench.raw.wvs import read_respondents, respondent_files

    files = respondent_files(RAW / "wvs")
    table, _ = read_respondents(files, ["B_COUNTRY", *socialcc.question_ids()], root=RAW, weight="W_WEIGHT")
    chosen = socialcc.preferences_table(socialcc.consensus_shares(table))
    by_id = {q["question_id"]: q for q in socialcc.questions()}
    book = json.loads((RAW / "wvs" / "codebook.json").read_text())["variables"]
    for q, side in chosen.select("question_id", "side").iter_rows():
        valid = [c for c in book[q]["choices"] if int(c) >= 0]
        assert len(by_id[q][f"{side}_codes"]) / len(valid) >= 2 / 3


# ------------------------------------------------------------------------------------------------ bad inputs


def raw_with(tmp_path: Path, lines: list[str]) -> Path:
    """tmp_path/raw with symlinks to the bundled WVS, atlas and skewed respondents, and our own scenario file."""
    raw = tmp_path / "raw"
    (raw / "socialcc").mkdir(parents=True)
    for name in ("wvs", "cultural_atlas"):
        (raw / name).symlink_to(RAW / name)
    (raw / "socialcc" / "wvs").symlink_to(RAW / "socialcc" / "wvs")
    (raw / "socialcc" / "scenarios.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return raw


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda r: "{not json", "row 2: line is not JSON"),
    (lambda r: "[1, 2]", "row 2: line is a JSON list, expected an object"),
    (lambda r: json.dumps({k: v for k, v in r.items() if k != "value_item"}), "row 2, column value_item: required"),
    (lambda r: json.dumps({**r, "events": ["one"]}), "row 2, column events: events must be a list of 2"),
    (lambda r: json.dumps({**r, "characters": r["characters"][:1]}), "column characters: characters must be a list of 2 or 3"),
    (lambda r: json.dumps({**r, "characters": [{**r["characters"][0], "age": "old"}, *r["characters"][1:]]}),
     "column characters[1].age: age must be a whole number"),
    (lambda r: json.dumps({**r, "characters": [{k: v for k, v in r["characters"][0].items() if k != "goal"},
                                               *r["characters"][1:]]}), "column characters[1].goal: required"),
    (lambda r: json.dumps({**r, "scenario": 5}), "column scenario: scenario must be a string"),
])
def test_malformed_scenario_lines(tmp_path, mutate, message):
    first = sample_records()[0]
    raw = raw_with(tmp_path, [json.dumps(first), mutate(first)])
    with pytest.raises(InputError) as error:
        read_scenarios(raw / "socialcc" / "scenarios.jsonl", raw)
    assert str(error.value).startswith("socialcc/scenarios.jsonl, ") and message in str(error.value)
    assert "\n" not in str(error.value)
    result = CliRunner().invoke(app, ["build", "socialcc", "--raw", str(raw), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "out" / "socialcc").exists()


def test_empty_and_missing_scenario_files(tmp_path):
    raw = raw_with(tmp_path, [])
    with pytest.raises(InputError, match="scenarios.jsonl: file is empty"):
        build_release(registry.benchmark("socialcc"), raw, tmp_path / "out", seed=0, progress=NOOP)
    (raw / "socialcc" / "scenarios.jsonl").unlink()
    with pytest.raises(InputError, match=r"no SocialCC scenario files \(\*.json, \*.jsonl\)"):
        build_release(registry.benchmark("socialcc"), raw, tmp_path / "out", seed=0, progress=NOOP)


def test_quarantine_rules(tmp_path):
    records = sample_records()
    good = records[0]  # Characters: Erik (Sweden, antagonist), Layla (Jordan, protagonist), Mira (Veloria, host)
    chars = good["characters"]
    variants = [
        good,
        good,  # duplicate
        {**good, "commonsense_topic": "Greetings"},
        {**good, "characters": [{**chars[0], "nationality": "Atlantis"}, chars[1], chars[2]]},  # kept: unresolved
        {**good, "characters": [chars[0], {**chars[1], "nationality": "Sweden"}, chars[2]]},  # no Jordanian
        {**good, "country": "Kestrava"},  # item not on Kestrava's page
        {**good, "characters": [chars[0], chars[1], {**chars[2], "nationality": "Kestrava"}]},  # no Velorian
        {**good, "value_item": "People from Jordan like tea."},
        {**good, "value_item": "People from Jordan strongly disagree that when a mother works for pay, the children "
                               "suffer."},  # kept: the side the synthetic Jordanians do not take
        {**good, "scenario": "  "},
        {**good, "characters": [{**chars[0], "nationality": "the Netherlands"}, chars[1], chars[2]],
         "scenario": "A different scenario."},  # kept: an alias of a WVS-7 country
    ]
    raw = raw_with(tmp_path, [json.dumps(v) for v in variants])
    folder, verdict = build_release(registry.benchmark("socialcc"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["accounting"]["quarantined_by_rule"] == {
        "bad_commonsense_topic": 1, "commonsense_not_in_atlas": 1, "country_not_a_character": 1,
        "duplicate_scenario": 1, "empty_text": 1, "value_country_not_a_character": 1,
        "value_not_a_table_4a_statement": 1}
    kept = read_config(folder, "scenarios")
    assert kept.height == 4
    assert sorted(c[0]["country"] for c in kept["characters"].to_list()) == ["Atlantis", "Netherlands", "Sweden",
                                                                             "Sweden"]
    duplicate = pl.read_parquet(folder / "quarantine" / "duplicate_scenario.parquet")
    assert duplicate["reason"].to_list() == ["same scenario as row 1 of socialcc/scenarios.jsonl, which is kept"]


def test_iw_zone_of_the_value_country_from_raw_inglehart_welzel(tmp_path):
    """iw_zone (Fig. 6's group) is the value country's row of RAW/inglehart_welzel/*.csv, read with NormAd's reader;
    names resolve as nationalities do (Jordan given as its ISO code); a country not listed (Sweden) gets null. The
    expected zones are the ones written into the table below."""
    raw = raw_with(tmp_path, [json.dumps(r) for r in sample_records()])
    (raw / "inglehart_welzel").mkdir()
    table = raw / "inglehart_welzel" / "zones.csv"
    table.write_text("Country,Cultural_Region\nJOR,african-islamic\nJapan,Confucian\nVeloria,Confucian\n",
                     encoding="utf-8")
    folder, verdict = build_release(registry.benchmark("socialcc"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    kept = read_config(folder, "scenarios")
    assert set(kept["value_country"]) == {"Jordan", "Sweden", "Japan"}  # Japan kept although its share is 0.49
    zones = dict(kept.select("value_country", "iw_zone").unique().iter_rows())
    assert zones == {"Jordan": "African-Islamic", "Sweden": None, "Japan": "Confucian"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert "inglehart_welzel/zones.csv" in {i["name"] for i in manifest["inputs"]}
    assert manifest["provenance"]["iw_zone_rows_read"] == 3
    # a zone that is not one of the eight is one line naming file, row and column; nothing is written
    table.write_text("Country,Cultural_Region\nJordan,African-Islamic\nSweden,Nordic\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["build", "socialcc", "--raw", str(raw), "--out", str(tmp_path / "out2")])
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output
    assert "inglehart_welzel/zones.csv, row 2, column zone: unknown Inglehart-Welzel zone 'Nordic'" in errors[0]
    assert not (tmp_path / "out2" / "socialcc").exists()


def test_released_layout_folder_and_errors(tmp_path):
    raw = raw_with(tmp_path, [])
    (raw / "socialcc" / "scenarios.jsonl").unlink()
    folder = raw / "socialcc" / "SocialCC_JSON"
    folder.mkdir()
    record = json.loads((RAW / "socialcc" / "SocialCC_JSON" / "1.json").read_text())
    uk = {**record, "agent_1_background": "Tom: A 40-year-old male chef from the UK.",
          "agent_2_background": "Samir: A 35-year-old male engineer from Jordanian"}
    (folder / "7.json").write_text(json.dumps(record), encoding="utf-8")
    (folder / "8.json").write_text(json.dumps({**uk, "scenario": "Another one."}), encoding="utf-8")
    built, verdict = build_release(registry.benchmark("socialcc"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    scenarios = read_config(built, "scenarios").sort("source_id")
    assert scenarios["source_id"].to_list() == ["7", "8"]
    assert [c["country"] for c in scenarios["characters"][1].to_list()] == ["Great Britain", "Jordan"]
    assert scenarios["value_question_id"].to_list() == ["Q66", "Q66"]
    del record["agent_2_background"]
    (folder / "9.json").write_text(json.dumps(record), encoding="utf-8")
    result = CliRunner().invoke(app, ["build", "socialcc", "--raw", str(raw), "--out", str(tmp_path / "out2")])
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output
    assert "socialcc/SocialCC_JSON/9.json, row 1, column agent_2_background" in result.output


# ------------------------------------------------------------------------------------------------ CC-Mediation

CC_SAMPLE = RAW / "socialcc" / "CC_Mediation"


def test_cc_mediation_layout_sample():
    """CC-Mediation's per-scenario metadata (a JSONL of records, a whole dialogue file): Character 1 = agent_1,
    Character 2 = agent_2, the value = agent_2_value; no events, commonsense item, third character or task. The
    expected values are the sample's own text (scripts/make_sample_socialcc.py)."""
    rows, info = read_scenarios(CC_SAMPLE / "SAMPLE_cc_mediation_records.jsonl", RAW)
    assert info.rows == 2 and [r.source_id for r in rows] == ["11", "12"] and {r.layout for r in rows} == {
        "cc_mediation"}
    first, second = rows
    assert first.scenario == "Two neighbours are helping a young couple plan their first child's naming party."
    assert first.value_item == ("People from Jordan strongly agree that when a mother works for pay, the children "
                                "suffer.")
    assert (first.value_country, first.events, first.commonsense_item) == (None, None, None)
    assert [c["goals"] for c in first.characters] == [
        ["Suggest inviting the mother's colleagues.", "Question whether the mother should stay at home."],
        ["Decide whom to invite to the naming party.", "Discuss whether the mother should go back to work."]]
    assert [socialcc.portfolio(c) for c in first.characters] == [
        "Axel: A 44-year-old male carpenter from Sweden.", "Omar: A 38-year-old male teacher from Jordan."]
    # Character 1 of the second record has only a name: its portfolio says only that
    assert [socialcc.portfolio(c) for c in second.characters] == [
        "Britt.", "Lina: A 31-year-old female pharmacist from Jordan."]
    (dialogue,), _ = read_scenarios(CC_SAMPLE / "evaluate" / "13.json", RAW)
    assert dialogue.source_id == "13"
    assert dialogue.value_item == "People from Jordan agree that having the army rule is good."
    # the released wording of Table 4A's Q237 is read as its opposite side (answers 1-2, "good")
    country, question, side = socialcc.parse_statement(dialogue.value_item)
    assert (country, question["question_id"], side) == ("Jordan", "Q237", "opposite")


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda r: {k: v for k, v in r.items() if k != "cultural_axis"}, "row 1, column scenario_context"),
    (lambda r: {**r, "agents": {"agent_1": "Axel", "agent_2": r["agents"]["agent_2"]}},
     "row 1, column agents.agent_1: must be a JSON object"),
    (lambda r: {**r, "cultural_axis": {"agent_1_value": "x"}}, "row 1, column cultural_axis.agent_2_value"),
    (lambda r: {**r, "agents": {**r["agents"], "agent_2": {**r["agents"]["agent_2"], "age": "38"}}},
     "row 1, column agents.agent_2.age: age must be a whole number or null"),
])
def test_cc_mediation_errors_are_one_line(tmp_path, mutate, message):
    record = json.loads((CC_SAMPLE / "SAMPLE_cc_mediation_records.jsonl").read_text().splitlines()[0])
    bad = mutate(record)
    if "cultural_axis" not in bad:  # recognised by its other keys: the missing one is named
        bad = {**bad, "metadata": {k: v for k, v in bad.items() if k != "scenario_context"} | {"cultural_axis": {}}}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_scenarios(path, tmp_path)
    assert str(caught.value).startswith("bad.jsonl, ") and message in str(caught.value)


def test_cc_mediation_value_stays_with_agent_1_where_agent_2s_names_no_country():
    """CC-Mediation gives the flipped copy to agent 2 and keeps the released value with agent 1 when neither
    agent's parsed country is the value country; its parser can leave a sentence in the country ("Jordan who works
    as a nurse"), which then names no country: agent_1_value is the value. Our own record, shaped like record 22."""
    record = json.loads((CC_SAMPLE / "SAMPLE_cc_mediation_records.jsonl").read_text().splitlines()[1])
    record["agents"]["agent_2"]["nationality"] = "Jordan who works as a nurse"
    record["cultural_axis"] = {
        "agent_1_value": "People from Jordan strongly agree that it is a duty towards society to have children.",
        "agent_2_value": "People from Jordan who works as a nurse strongly disagree that it is a duty towards society "
                         "to have children."}
    row = parse_scenario(record, "x.jsonl", 1)
    chosen = socialcc.released_value(row)
    assert chosen.value_item == record["cultural_axis"]["agent_1_value"]
    assert socialcc.released_value(parse_scenario(json.loads(
        (CC_SAMPLE / "SAMPLE_cc_mediation_records.jsonl").read_text().splitlines()[1]), "x.jsonl", 1)).value_item == (
        "People from Jordan strongly agree that whenever science and religion conflict, religion is always right.")


MOTHER = "that when a mother works for pay, the children suffer."


def _cc_record(nationality_1, nationality_2, value_1, value_2):
    record = json.loads((CC_SAMPLE / "SAMPLE_cc_mediation_records.jsonl").read_text().splitlines()[0])
    record["agents"]["agent_1"]["nationality"] = nationality_1
    record["agents"]["agent_2"]["nationality"] = nationality_2
    record["cultural_axis"] = {"agent_1_value": value_1, "agent_2_value": value_2}
    return parse_scenario(record, "x.jsonl", 1)


@pytest.mark.parametrize(("agents", "values", "expected"), [
    # both from Sweden: the builder tests agent 1 first, so agent 1 holds the released value
    (("Sweden", "Sweden"), (f"People from Sweden agree {MOTHER}", f"People from Sweden disagree {MOTHER}"),
     ("agent_1", "countries", f"People from Sweden agree {MOTHER}")),
    # "the Netherlands": no capital after "from", the builder reads no country for agent 1, whose flipped copy
    # keeps the value country, Jordan, agent 2's
    (("the Netherlands", "Jordan"), (f"People from Jordan disagree {MOTHER}", f"People from Jordan agree {MOTHER}"),
     ("agent_2", "countries", f"People from Jordan agree {MOTHER}")),
    # agent 2 has no country for the builder: its flipped copy keeps the value country (Jordan), neither agent is
    # from it, and agent 1's value has the released side with agent 1's country swapped in
    (("Sweden", "the United States"), (f"People from Sweden strongly agree {MOTHER}",
                                       f"People from Jordan strongly disagree {MOTHER}"),
     ("neither", "countries", f"People from Jordan strongly agree {MOTHER}")),
    # each value names its own agent's country: agent 1's is no Table 4A statement, so it is the flipped copy
    (("France", "Bolivia"), ("People from France have a great deal of confidence in the press at all.",
                             "People from Bolivia have no confidence in the press at all."),
     ("agent_2", "table_4a", "People from Bolivia have no confidence in the press at all.")),
])
def test_cc_mediation_value_follows_the_builders_branches(agents, values, expected):
    """CC-Mediation's build_agent_prompts.py run backwards on our own records: the released value verbatim went to
    the agent from the value country (agent 1 tested first), a flipped copy naming its own country to the other;
    neither: agent 1 got it with its country swapped in. The expected values are worked out by hand."""
    row = _cc_record(*agents, *values)
    assert socialcc.value_branch(row) == expected
    assert socialcc.released_value(row).value_item == expected[2]


def test_cc_mediation_branch_between_two_readings_is_decided_by_wvs_consensus():
    """Sweden and Jordan, each value about its agent's country: agent 1 or agent 2 may be from the value country.
    The one whose value is a consensus in the WVS shares wins; without evidence, agent 2's (Character 2's)."""
    row = _cc_record("Sweden", "Jordan", f"People from Sweden strongly disagree {MOTHER}",
                     f"People from Jordan strongly agree {MOTHER}")
    assert socialcc.value_branch(row)[:2] == ("agent_2", "default")
    shares = pl.DataFrame({"country": ["Sweden", "Jordan"], "question_id": ["Q28", "Q28"],
                           "side": ["printed", "opposite"], "share": [0.9, 0.3]})
    sweden = socialcc.parse_statement(f"People from Sweden strongly disagree {MOTHER}")
    jordan = socialcc.parse_statement(f"People from Jordan strongly agree {MOTHER}")
    assert (sweden[1]["question_id"], sweden[2], jordan[1]["question_id"], jordan[2]) == (
        "Q28", "printed", "Q28", "opposite")
    consensus = socialcc.wvs_consensus(shares)
    assert socialcc.value_branch(row, consensus) == ("agent_1", "wvs_consensus",
                                                     f"People from Sweden strongly disagree {MOTHER}")
    counts = socialcc.value_branches([row, _cc_record("Sweden", "Sweden", f"People from Sweden agree {MOTHER}",
                                                      f"People from Sweden disagree {MOTHER}")], consensus)
    assert counts == {"cc_mediation": {"agent_1": 2}, "cc_mediation_evidence": {"countries": 1, "wvs_consensus": 1}}


def test_released_ids_are_different_scenarios(tmp_path):
    """Two CC-Mediation records that differ only in their ids (as records 1 and 1894 of the authors' copy do) are
    two scenarios; the same record read twice is one, the later copy quarantined as a duplicate."""
    raw = raw_with(tmp_path, [])
    record = json.loads((CC_SAMPLE / "SAMPLE_cc_mediation_records.jsonl").read_text().splitlines()[0])
    lines = [json.dumps(record), json.dumps({**record, "scenario_id": 99}), json.dumps(record)]
    (raw / "socialcc" / "scenarios.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder, verdict = build_release(registry.benchmark("socialcc"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    assert sorted(read_config(folder, "scenarios")["source_id"].to_list()) == ["11", "99"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["accounting"]["quarantined_by_rule"] == {"duplicate_scenario": 1}


CC_MEDIATION = REFERENCE / "SocialCC" / "suhyun565_CC-Mediation" / "socialcc_scenario_metadata_from_cc_mediation.jsonl"


@pytest.mark.reference
@reference
def test_authors_cc_mediation_records_fill_every_prompt_field_they_carry():
    """All 1,662 records of CC-Mediation's copy of the released scenarios are read and none is quarantined (no
    atlas, no shares: only structural rules apply); each prompt carries what its record carries: the scenario text,
    one agent's value under Cultural Knowledge (CC-Mediation's rule run backwards, records checked by hand below),
    each agent's goals, Character 2's goals as the events, the agents' parsed fields in the portfolios. Checked
    against the file read with the json module."""
    from culturebench.evaluate.socialcc import prompts

    if not CC_MEDIATION.is_file():
        pytest.skip("CC-Mediation reference records absent")
    records = [json.loads(line) for line in CC_MEDIATION.read_text(encoding="utf-8").splitlines()]
    rows, _ = read_scenarios(CC_MEDIATION, CC_MEDIATION.parent)
    assert len(rows) == len(records) == 1662
    empty = pl.DataFrame(schema={"country": pl.String, "question_id": pl.String, "side": pl.String,
                                 "share": pl.Float64})
    table, quarantine = socialcc.scenarios_table(rows, [], empty)
    assert table.height == 1662 and quarantine == {}
    by_source = {r["source_id"]: r for r in table.iter_rows(named=True)}
    by_hand = {
        # both agents from China, both values about China: the builder tests agent 1 first, so agent 1 got the
        # released value verbatim and agent 2 the flipped copy
        "95": "People from China strongly agree that it is a duty towards society to have children.",
        # agent 2's country is "Indonesia who works as a university professor" (CC-Mediation's parser): not the
        # value country, so the flipped copy went to agent 2 and agent 1 kept the released value
        "22": "People from Indonesia strongly agree that it is a duty towards society to have children.",
        # agent 1's value, "Mexico would like to have drug addicts as neighbors", is no Table 4A statement: the
        # flipped copy; agent 2's is the released value
        "76": "People from Venezuela would not like to have drug addicts as neighbors.",
        # agent 2 ("the United States") got no country from the builder (it wants a capital after "from"), so its
        # flipped copy kept the value country; agent 1's value has the released side with agent 1's country
        "1105": "People from United States place great importance on Leisure time.",
    }
    same_country = 0
    for record in records:
        row = by_source[str(record["scenario_id"])]
        fields = prompts.scenario_fields(row)
        antagonist, protagonist = prompts.antagonist_system(fields), prompts.protagonist_system(fields)
        goals_1 = [g.strip() for g in record["goals"]["agent_1"].values()]
        goals_2 = [g.strip() for g in record["goals"]["agent_2"].values()]
        axis, agents = record["cultural_axis"], record["agents"]
        value = row["value_item"]
        assert value in (axis["agent_1_value"], axis["agent_2_value"]) or value.endswith(
            axis["agent_1_value"].split(agents["agent_1"]["nationality"] or "\0", 1)[-1])
        if str(record["scenario_id"]) in by_hand:
            assert value == by_hand[str(record["scenario_id"])]
        nationality = agents["agent_1"]["nationality"]
        if nationality and nationality == agents["agent_2"]["nationality"] and all(
                v.startswith(f"People from {nationality} ") for v in axis.values()):
            same_country += 1
            assert value == axis["agent_1_value"]
        assert f"Scenario\n{record['scenario_context'].strip()}\nEvents\n{goals_2[0]}\n{goals_2[1]}\n" in protagonist
        assert f"Cultural Knowledge\n{value}\nSocial Goal\n{goals_1[0]}\n{goals_1[1]}\n" in antagonist
        assert f"Social Goal\n{goals_2[0]}\n{goals_2[1]}\nDialogue Rules" in protagonist
        for number, key in ((1, "agent_1"), (2, "agent_2")):
            agent = record["agents"][key]
            portfolio = fields[f"Character {number} Portfolio"]
            assert portfolio.startswith(f"{agent['name']}") and portfolio in antagonist
            for part in (agent["occupation"], agent["nationality"], agent["age"] and f"{agent['age']}-year-old"):
                assert not part or str(part) in portfolio
        assert fields["field_sources"]["Cultural Commonsense"] == "absent"
    assert same_country == 15


@pytest.mark.reference
@reference
def test_no_authors_scenario_is_dropped_for_its_wvs_share(tmp_path):
    """Built with the real WVS-7 country files, every one of CC-Mediation's 1,662 records is kept (none quarantined),
    the paper's Table 13A value (Japan, Q27) among them with the share computed by hand (not over 0.8), and the
    validation report warns about at least the 52 below the threshold the issue counted."""
    if not CC_MEDIATION.is_file():
        pytest.skip("CC-Mediation reference records absent")
    folder = build_on_real_wvs(tmp_path, CC_MEDIATION)
    scenarios = read_config(folder, "scenarios")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert scenarios.height == 1662 and manifest["accounting"]["quarantined_by_rule"] == {}
    japan = _share_by_hand(COUNTRY_FILES / "JPN.csv.gz", "Q27", {1, 2})
    assert japan <= 0.8
    table_13a = scenarios.filter(pl.col("value_item") == "People from Japan strongly agree that one of my main goals "
                                                         "in life has been to make my parents proud.")
    assert table_13a.height >= 1 and table_13a["value_share"].to_list() == pytest.approx([japan] * table_13a.height)
    # record 45: agent 1's nationality is null in the record, its value "Japan strongly disagree", agent 2's
    # "Guatemala strongly agree": agent 1 may be Japanese (the flipped copy) or have no country (the released value);
    # by hand, Guatemala's side is a consensus (over 0.8) and Japan's is not, so agent 2's is the released value
    assert _share_by_hand(COUNTRY_FILES / "GTM.csv.gz", "Q27", {1, 2}) > 0.8
    assert _share_by_hand(COUNTRY_FILES / "JPN.csv.gz", "Q27", {3, 4}) <= 0.8
    assert scenarios.filter(pl.col("source_id") == "45")["value_item"].to_list() == [
        "People from Guatemala strongly agree that one of my main goals in life has been to make my parents proud."]
    branches = manifest["provenance"]["value_branches"]
    assert sum(branches["cc_mediation"].values()) == sum(branches["cc_mediation_evidence"].values()) == 1662
    card = (folder / "README.md").read_text(encoding="utf-8")
    counts = branches["cc_mediation"]
    assert (f"`cc_mediation`: {counts['agent_1']:,} agent_1, {counts['agent_2']:,} agent_2, {counts['neither']:,} "
            "neither") in card
    report = json.loads((folder / "validation" / "report.json").read_text())
    warning = next(c for c in report["checks"] if c["name"].startswith("scenarios kept although"))
    assert warning["observed"]["scenarios"] >= 52


# ------------------------------------------------------------------------------------------------ real WVS-7


WVS7 = REFERENCE / "WVS7"
PDF = WVS7 / "snag18_World-Values-Survey-Data-Analysis" / "F00011055-WVS7_Codebook_Variables_report_V6.0.pdf"
COUNTRY_FILES = WVS7 / "DataSpi_spy-playground" / "wvs_7" / "data" / "processed"


def _share_by_hand(path: Path, column: str, codes: set[int]) -> float:
    """Sec. 3.2 from the raw CSV with the csv module: respondents whose answer is in ``codes`` / valid answers."""
    import csv
    import gzip

    with gzip.open(path, "rt", encoding="utf-8") as handle:
        answers = [int(float(row[column])) for row in csv.DictReader(handle) if row[column] != ""]
    valid = [a for a in answers if a >= 0]
    return sum(a in codes for a in valid) / len(valid)


def build_on_real_wvs(tmp_path: Path, scenarios: Path) -> Path:
    """The release built from the 56 real WVS-7 country files, the codebook PDF, the bundled atlas and the scenario
    file ``scenarios`` (skips when the files are absent); validation must pass."""
    files = sorted(COUNTRY_FILES.glob("*.csv.gz"))
    if len(files) < 56 or not PDF.is_file():
        pytest.skip("real WVS-7 country files or codebook PDF absent")
    raw = tmp_path / "raw"
    (raw / "wvs").mkdir(parents=True)
    for path in [*files, PDF]:
        (raw / "wvs" / path.name).symlink_to(path)
    (raw / "cultural_atlas").symlink_to(RAW / "cultural_atlas")
    (raw / "socialcc").mkdir()
    (raw / "socialcc" / scenarios.name).symlink_to(scenarios)
    folder, verdict = build_release(registry.benchmark("socialcc"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return folder


@pytest.mark.slow
@pytest.mark.reference
@reference
def test_table_4a_preferences_on_the_real_56_country_files(tmp_path):
    """Every Table 4A question with data yields preferences; Fig. 3's Q28 split and Q118's share recomputed by hand.
    Slow: reads the real WVS-7 files of 56 countries."""
    folder = build_on_real_wvs(tmp_path, SAMPLE)
    files = sorted(COUNTRY_FILES.glob("*.csv.gz"))
    preferences = read_config(folder, "value_preferences")
    # every Table 4A question yields preferences, unless by hand no country's share on either side is over 80%
    # (or no country has a valid answer: Q234A is not in these v5.0 files' answers)
    by_id = {q["question_id"]: q for q in socialcc.questions()}
    for question in sorted(set(socialcc.question_ids()) - set(preferences["question_id"])):
        for path in files:
            for side in ("printed", "opposite"):
                try:
                    share = _share_by_hand(path, question, set(by_id[question][f"{side}_codes"]))
                except (ZeroDivisionError, KeyError):
                    continue  # no valid answer in this country
                assert share <= 0.8, (question, path.name, side, share)
    assert len(set(preferences["question_id"])) >= 18
    assert preferences["country"].n_unique() > 40 and (preferences["share"] > 0.8).all()
    got = {(c, q, d): s for c, q, d, s in preferences.select("country", "question_id", "side", "share").iter_rows()}
    jordan = _share_by_hand(COUNTRY_FILES / "JOR.csv.gz", "Q28", {1, 2})  # Fig. 3: Jordan agrees
    assert jordan > 0.8 and got[("Jordan", "Q28", "opposite")] == pytest.approx(jordan)
    new_zealand = _share_by_hand(COUNTRY_FILES / "NZL.csv.gz", "Q28", {3, 4})
    assert ("New Zealand", "Q28", "opposite") not in got
    assert got.get(("New Zealand", "Q28", "printed"), 0.0) == (pytest.approx(new_zealand) if new_zealand > 0.8
                                                               else 0.0)
    # Q118 "never have to pay a bribe" = Never or Rarely (Table 4A's statement, the example)
    q118 = {c: s for (c, q, d), s in got.items() if q == "Q118" and d == "printed"}
    assert q118, "Q118 yields preferences"
    some = sorted(q118)[0]
    alpha = socialcc.wvs_countries().filter(pl.col("name") == some)["alpha3"][0]
    assert q118[some] == pytest.approx(_share_by_hand(COUNTRY_FILES / f"{alpha}.csv.gz", "Q118", {1, 2}))
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["provenance"]["respondents_read"] > 70_000
    assert set(manifest["provenance"]["wvs_versions"].values()) == {"unknown"}  # AND.csv.gz ... name no version


IW_TABLE = REFERENCE / "InglehartWelzel" / "sunshineluyao_cultural-indices-dashboard" / "updated_merged_data.csv"


@pytest.mark.reference
@reference
def test_real_inglehart_welzel_table_gives_every_wvs7_country_a_zone():
    """The public IW map table (116 countries, Cultural_Region) gives each of the 92 WVS-7 countries of
    facts/wvs_countries.csv one of Fig. 6's eight groups; spot checks read by hand from the file."""
    if not IW_TABLE.is_file():
        pytest.skip("Inglehart-Welzel reference table absent")
    rows, _ = read_zones(IW_TABLE, IW_TABLE.parent)
    zones = socialcc.iw_zones(rows)
    names = socialcc.wvs_countries()["name"].to_list()
    assert [n for n in names if n not in zones] == []
    assert len({zones[n] for n in names}) == 8
    assert (zones["Jordan"], zones["Japan"], zones["Bosnia Herzegovina"], zones["Macao SAR"]) == (
        "African-Islamic", "Confucian", "Orthodox Europe", "Confucian")


def test_build_zones_flag_takes_another_zone_table(release, tmp_path):
    """``build socialcc --zones TABLE``: the scenarios take their iw_zone from TABLE (here each value country in a
    zone of its own choosing, none of them in the sample's RAW/inglehart_welzel/) instead of RAW/inglehart_welzel/,
    and the table is hashed as an input; --help lists the flag."""
    from culturebench.countries import zones

    listed = CliRunner().invoke(app, ["build", "socialcc", "--help"])
    assert listed.exit_code == 0 and "--zones" in listed.output
    countries = sorted(set(read_config(release, "scenarios")["value_country"].drop_nulls()))
    assert countries
    table_zones = {country: zones()[i % len(zones())] for i, country in enumerate(countries)}
    table = tmp_path / "other_map.csv"
    table.write_text("Country,Cultural_Region\n" + "".join(f"{c},{z}\n" for c, z in table_zones.items()),
                     encoding="utf-8")
    result = CliRunner().invoke(app, ["build", "socialcc", "--raw", str(RAW), "--out", str(tmp_path / "out"),
                                      "--zones", str(table)])
    assert result.exit_code == 0, result.output
    built = tmp_path / "out" / "socialcc"
    before = read_config(release, "scenarios").select("id", "value_country", "iw_zone").rows()
    after = dict(read_config(built, "scenarios").select("id", "iw_zone").iter_rows())
    assert {i for i, _, _ in before} == after.keys()
    assert all(after[i] == table_zones[country] for i, country, _ in before if country is not None)
    assert [i for i, _, zone in before if zone != after[i]]  # the default build placed them otherwise
    manifest = json.loads((built / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["provenance"]["iw_zone_table"] == "other_map.csv"
    assert "other_map.csv" in {i["name"] for i in manifest["inputs"]}
    assert not any(i["name"].startswith("inglehart_welzel/") for i in manifest["inputs"])
