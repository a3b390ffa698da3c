"""The NormAd release from the bundled sample (checks, accounting, `datasets`), the background and leak checks on
constructed bad input, and bad stories / zone files (one-line errors or quarantine)."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from culturebench import registry
from culturebench import countries
from conftest import one_line_error
from culturebench.builders import normad
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.release import build_release

REPO = Path(__file__).resolve().parents[1]
RAW = REPO / "raw"
STORIES_CSV = RAW / "normad" / "SAMPLE_normad_etiquette.csv"
NOOP = lambda stage: None
COLUMNS = ["id", "country", "background", "axis", "subaxis", "value", "rule_of_thumb", "story", "explanation",
           "gold_label", "iw_zone"]


def sample_rows() -> list[dict]:
    with open(STORIES_CSV, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("releases")
    folder, verdict = build_release(registry.benchmark("normad"), RAW, out, seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return folder


@pytest.fixture(scope="module")
def tables(release) -> dict:
    return {"stories": {"test": pl.read_parquet(release / "data" / "stories" / "test-00000-of-00001.parquet")},
            "atlas": {"full": pl.read_parquet(release / "data" / "atlas" / "full-00000-of-00001.parquet")}}


def copy_raw(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    for name in ("normad", "inglehart_welzel", "cultural_atlas"):
        shutil.copytree(RAW / name, raw / name)
    return raw


def write_stories(raw: Path, rows: list[dict], fieldnames: list[str] | None = None) -> None:
    for old in (raw / "normad").glob("*.csv"):
        old.unlink()
    with open(raw / "normad" / "stories.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fieldnames or list(rows[0]), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def failed(results, start: str) -> list:
    return [r for r in results if r.name.startswith(start) and not r.passed]


# ------------------------------------------------------------------------------------------------ the release


def test_release_from_bundled_sample(release):
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["validation"]["failed"] == 0
    rows = sample_rows()
    acc = manifest["accounting"]
    assert acc["rows_read"] == acc["rows_kept"] + acc["rows_quarantined"]
    assert acc["quarantined_by_rule"] == {"duplicate_story": 1}
    assert manifest["provenance"]["stories_read"] == len(rows)
    # background is atlas text; variants: the sample's paraphrases of closing questions (issue 63)
    assert manifest["redistributable"] == {"stories": False, "atlas": False, "variants": True}
    assert "cultural-atlas-terms" in json.dumps([c.license_name for c in normad.CARD.configs])
    names = {i["name"] for i in manifest["inputs"]}
    assert "normad/SAMPLE_normad_etiquette.csv" in names and "cultural_atlas/veloria/etiquette.html" in names
    quarantine = pl.read_parquet(release / "quarantine" / "duplicate_story.parquet")
    assert quarantine["reason"].str.contains("row 2").all()


def test_stories_columns_and_values(tables):
    stories = tables["stories"]["test"]
    assert stories.columns == COLUMNS
    assert set(stories["gold_label"]) <= {"yes", "no", "neutral"}
    assert set(stories["subaxis"]) == {"basic_etiquette", "eating", "visiting", "gift_giving"}
    assert set(stories["iw_zone"]) == {"Protestant Europe", "Confucian", "African-Islamic"}
    for row in stories.iter_rows(named=True):  # id recomputed independently
        text = f"{row['country'].replace('_', ' ')}\x1f{' '.join(row['story'].split()).casefold()}"
        assert row["id"] == "normad-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def test_load_dataset(release):
    from datasets import load_dataset

    stories = load_dataset(str(release), "stories", split="test")
    assert stories.column_names == COLUMNS
    assert stories.num_rows == 12
    atlas = load_dataset(str(release), "atlas", split="full")
    assert "Etiquette" in set(atlas["topic"])


def test_checks_pass_on_the_sample(tables):
    results = normad.checks(tables)
    assert all(r.passed for r in results), [r for r in results if not r.passed]
    balance = next(r for r in results if r.name.startswith("label balance"))
    assert balance.observed["veloria"] == {"yes": 2, "no": 1, "neutral": 1}


# ------------------------------------------------------------------------------------- checks on bad input


def with_story_field(tables: dict, field: str, value: str) -> dict:
    stories = tables["stories"]["test"]
    changed = stories.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit(value))
                                   .otherwise(pl.col(field)).alias(field))
    return {"stories": {"test": changed}, "atlas": tables["atlas"]}


def test_leak_check_fails_on_a_demonym(tables):
    bad = with_story_field(tables, "story", "Lena, who is Japanese, arrived at six sharp. Is this acceptable?")
    [result] = failed(normad.checks(bad), "no story or rule-of-thumb names")
    assert result.observed == 1 and "Japanese" in result.examples[0]
    bad = with_story_field(tables, "rule_of_thumb", "In Veloria people arrive on time.")  # its own country
    assert failed(normad.checks(bad), "no story or rule-of-thumb names")
    bad = with_story_field(tables, "story", "Jordan brought two Canadians to dinner.")
    [result] = failed(normad.checks(bad), "no story or rule-of-thumb names")
    assert "Canadians" in result.examples[0] and "Jordan" not in result.examples[0]  # Jordan: a given name


def test_leak_words():
    assert normad.leaked_names("She spoke to the Thais and went to Viet Nam.") == ["Thais", "Viet Nam"]
    assert normad.leaked_names("He will polish the chinese vase in Indiana.") == []  # lower case; Indiana != India


def test_background_check_fails_on_text_not_in_the_atlas(tables):
    bad = with_story_field(tables, "background", "### Basic Etiquette\n- Always shout greetings across the street.")
    [result] = failed(normad.checks(bad), "every background is its country's atlas")
    assert result.observed == 1 and "not in the atlas page" in result.examples[0]
    bad = with_story_field(tables, "background", "### Naming\n- Arrive exactly at the agreed time; arriving early "
                                                 "is as awkward as arriving late.")
    assert failed(normad.checks(bad), "every background is its country's atlas")
    no_page = {"stories": tables["stories"], "atlas": {"full": tables["atlas"]["full"].filter(
        pl.col("country") != "Veloria")}}
    [result] = failed(normad.checks(no_page), "every background is its country's atlas")
    assert result.observed == 4 and "no atlas Etiquette page" in result.examples[0]


def test_background_comparison_is_robust_to_formatting():
    page = [{"subsection": "Eating", "text": "Wait until the host\u2019s cup is lifted."},
            {"subsection": "Eating", "text": "Bread is torn by hand."}]
    assert normad.background_problem("## Eating\n* Wait until the host's   cup is\u00a0lifted.\n"
                                     "- Bread is torn by hand.", page) is None
    assert normad.background_problem("Wait until the host's cup is lifted. Bread is torn by hand.", page) is None
    assert normad.background_problem("Bread is torn by hand.\nWait until the host's cup is lifted.", page) is None
    assert normad.background_problem("Bread is torn by knife.", page) is not None


# ------------------------------------------------------------------------------------------ bad input files


def test_missing_column_is_one_line_error(tmp_path):
    raw = copy_raw(tmp_path)
    rows = sample_rows()
    write_stories(raw, rows, [c for c in rows[0] if c != "Rule-of-Thumb"])
    with pytest.raises(InputError) as info:
        normad.build(raw, 0, NOOP)
    assert str(info.value).startswith("normad/stories.csv, column Rule-of-Thumb: missing column")
    result = CliRunner().invoke(app, ["build", "normad", "--raw", str(raw), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "column Rule-of-Thumb" in result.output
    assert not (tmp_path / "out" / "normad").exists()


def test_bad_values_are_quarantined(tmp_path):
    raw = copy_raw(tmp_path)
    rows = sample_rows()[:12]
    rows[0]["Gold Label"] = "maybe"
    rows[1]["Gold Label"] = " Yes "
    rows[2]["Subaxis"] = "greetings"
    rows[3]["Subaxis"] = "Gift Giving"
    rows[4]["Country"] = "Atlantis"
    rows[5]["Story"] = "  "
    write_stories(raw, rows)
    out = normad.build(raw, 0, NOOP)
    reasons = {rule: frame["row"].to_list() for rule, frame in out.quarantine.items()}
    assert reasons == {"bad_label": [1], "bad_subaxis": [3], "no_iw_zone": [5], "empty_text": [6]}
    stories = out.tables["stories"]["test"]
    assert stories.height == 8 and out.rows_read == out.rows_kept + out.rows_quarantined
    assert stories.filter(pl.col("story") == rows[1]["Story"])["gold_label"].item() == "yes"
    assert stories.filter(pl.col("story") == rows[3]["Story"])["subaxis"].item() == "gift_giving"
    assert "maybe" in out.quarantine["bad_label"]["reason"].item()


def test_jsonl_stories_and_bad_jsonl(tmp_path):
    raw = copy_raw(tmp_path)
    rows = sample_rows()[:12]
    (raw / "normad" / "SAMPLE_normad_etiquette.csv").unlink()
    path = raw / "normad" / "stories.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = normad.build(raw, 0, NOOP)
    assert out.tables["stories"]["test"].height == 12 and not out.quarantine
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-5]
    path.write_text("\n".join(lines))
    with pytest.raises(InputError, match=r"normad/stories.jsonl, row 3: line is not JSON"):
        normad.build(raw, 0, NOOP)
    bad = dict(rows[0], **{"Gold Label": 1})
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"row 1, column Gold Label: 'Gold Label' is a JSON int"):
        normad.build(raw, 0, NOOP)


def test_ragged_csv_and_unknown_zone(tmp_path):
    raw = copy_raw(tmp_path)
    stories = raw / "normad" / "SAMPLE_normad_etiquette.csv"
    stories.write_text(stories.read_text(encoding="utf-8") + "1,2,3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"SAMPLE_normad_etiquette.csv, row 14, column Axis: has 3 fields"):
        normad.build(raw, 0, NOOP)
    raw = copy_raw(tmp_path / "b")
    zones = raw / "inglehart_welzel" / "SAMPLE_country_iw_zones.csv"
    zones.write_text("Country,Cultural_Region\nVeloria,Nordic Utopia\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 1, column zone: unknown Inglehart-Welzel zone 'Nordic Utopia'"):
        normad.build(raw, 0, NOOP)


def test_country_keys_join_spellings():
    assert normad.country_key("south_korea") == normad.country_key("South Korea") == normad.country_key("Korea")
    assert normad.country_key("türkiye") == normad.country_key("Turkey")
    assert normad.country_key("United States of America") == normad.country_key("United States")
    assert countries.zone_name("west and south asia") == "West & South Asia"


def test_zones_are_the_authors_unless_raw_is_asked_for(tmp_path):
    """The authors' map wins by default (France: Protestant Europe in their country_iwlist.csv, Catholic Europe in
    the RAW table); RAW/inglehart_welzel/ gives the zone of a country the map lacks (the fictional Veloria) and wins
    only with zones: raw; the card and the manifest name the country the two place apart; a country in neither is
    quarantined."""
    raw = copy_raw(tmp_path)
    rows = sample_rows()[:1]
    for country in ("sri_lanka", "France", "Atlantis"):
        rows.append({**rows[0], "Country": country, "Story": f"A story about {len(rows)}."})
    write_stories(raw, rows)
    with open(raw / "inglehart_welzel" / "SAMPLE_country_iw_zones.csv", "a", encoding="utf-8") as handle:
        handle.write("France,Catholic Europe\n")
    default = normad.build(raw, 0, NOOP)  # (the real countries have no atlas page: the release's check would fail)
    asked = normad.build(raw, 0, NOOP, normad.Options(zones="raw"))
    zones = {name: dict(out.tables["stories"]["test"].select("country", "iw_zone").iter_rows())
             for name, out in (("default", default), ("raw", asked))}
    assert zones["default"] == {"veloria": "Protestant Europe", "sri_lanka": "West & South Asia",
                                "France": "Protestant Europe"}
    assert zones["raw"] == {**zones["default"], "France": "Catholic Europe"}
    report = default.provenance["zones"]
    assert report["source"] == "authors" and report["from_raw_table"] == ["veloria"]
    assert report["differing_from_raw_table"] == {"France": {"authors": "Protestant Europe",
                                                             "raw_table": "Catholic Europe"}}
    assert report["moved_by_raw_table"] == [] and asked.provenance["zones"]["moved_by_raw_table"] == ["France"]
    assert "France (Protestant Europe -> Catholic Europe)" in default.card.creation
    assert "moved" in asked.card.creation and "would move" in default.card.creation
    assert default.quarantine["no_iw_zone"]["country"].to_list() == ["Atlantis"]


@pytest.mark.slow
def test_build_config_sets_the_zones_and_refuses_bad_values(tmp_path):
    """Slow: several NormAd builds, one per config."""
    raw = copy_raw(tmp_path)
    rows = sample_rows()
    write_stories(raw, rows)
    with open(raw / "inglehart_welzel" / "SAMPLE_country_iw_zones.csv", "a", encoding="utf-8") as handle:
        handle.write("sri_lanka,Confucian\n")
    config = tmp_path / "build.yaml"
    config.write_text("zones: raw\n")
    result = CliRunner().invoke(app, ["build", "normad", "--raw", str(raw), "--out", str(tmp_path / "out"),
                                      "--config", str(config)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "normad" / "manifest.json").read_text())
    assert manifest["provenance"]["zones"]["source"] == "raw"
    config.write_text("zones: public\n")
    result = CliRunner().invoke(app, ["build", "normad", "--raw", str(raw), "--out", str(tmp_path / "out2"),
                                      "--config", str(config)])
    assert result.exit_code == 2 and "zones" in result.output and "build.yaml" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_authors_zone_maps_cover_their_75_countries():
    story_map = normad.authors_zones(normad.AUTHORS_GENERATION_ZONES)
    results_map = normad.authors_zones()
    for zone_of in (story_map, results_map):
        assert len(zone_of) == 75 and set(zone_of.values()) == set(countries.zones())
    counts = {zone: sum(1 for z in story_map.values() if z == zone) for zone in countries.zones()}
    # map_iw_bin_to_country of collect_irrelevant.py, counted by hand from the authors' code
    assert counts == {"African-Islamic": 19, "Catholic Europe": 7, "Confucian": 5, "English-Speaking": 6,
                      "Latin America": 9, "Orthodox Europe": 7, "Protestant Europe": 4, "West & South Asia": 18}
    # their analysis map (country_iwlist.csv) moves Malta to Protestant Europe, the Philippines to W & S Asia
    assert {k for k in story_map if story_map[k] != results_map[k]} == {"malta", "philippines"}
    assert results_map["malta"] == "Protestant Europe" and results_map["philippines"] == "West & South Asia"


@pytest.mark.reference
@pytest.mark.skipif(not (REPO.parent / "shared" / "reference" / "MANIFEST.md").is_file(),
                    reason="reference data absent")
def test_results_map_is_the_authors_lfs_object():
    """The reference MANIFEST records the LFS pointer of the authors' src/analysis/country_iwlist.csv (size and
    the head of its sha256 oid); the shipped copy must be that object."""
    import re

    text = (REPO.parent / "shared" / "reference" / "MANIFEST.md").read_text(encoding="utf-8")
    size, oid = re.search(r"country_iwlist\.csv` \(real size (\d+) B, oid sha256:([0-9a-f]+)", text).groups()
    data = normad.authors_file(normad.AUTHORS_ZONES).read_bytes()
    assert len(data) == int(size) and hashlib.sha256(data).hexdigest().startswith(oid)


REAL_ZONES = (REPO.parent / "shared" / "reference" / "InglehartWelzel" / "sunshineluyao_cultural-indices-dashboard"
              / "updated_merged_data.csv")


@pytest.mark.reference
@pytest.mark.skipif(not REAL_ZONES.is_file(), reason=f"reference data absent: {REAL_ZONES}")
def test_real_inglehart_welzel_table():
    from culturebench.raw.inglehart_welzel import read_zones, zone_table

    rows, info = read_zones(REAL_ZONES, REAL_ZONES.parent)
    zone_of = zone_table(rows)
    # Great Britain and Northern Ireland are both the United Kingdom (same zone, English-Speaking): 115 keys
    assert info.rows == 116 and len(zone_of) == 115
    assert set(zone_of.values()) == set(countries.zones())
    assert zone_of[normad.country_key("south_korea")] == "Confucian"
    assert zone_of[normad.country_key("türkiye")] == zone_of[normad.country_key("Turkey")]


def test_two_builds_are_byte_identical(release, tmp_path):
    again, _ = build_release(registry.benchmark("normad"), RAW, tmp_path, seed=0, progress=NOOP)
    manifests = [json.loads((f / "manifest.json").read_text()) for f in (release, again)]
    first, second = ({o["path"]: o["sha256"] for o in m["outputs"] if o["path"].endswith(".parquet")}
                     for m in manifests)
    assert first == second and first


@pytest.mark.reference
@pytest.mark.skipif(not REAL_ZONES.is_file(), reason=f"reference data absent: {REAL_ZONES}")
def test_authors_map_against_the_public_zone_table():
    """The public table lacks 15 of the authors' 75 countries (not surveyed: the authors' map is their only zone)
    and puts 13 of the story scripts' map in another zone (12 of the results map: not the Philippines)."""
    from culturebench.raw.inglehart_welzel import read_zones, zone_table

    public = zone_table(read_zones(REAL_ZONES, REAL_ZONES.parent)[0])
    authors = normad.authors_zones(normad.AUTHORS_GENERATION_ZONES)
    results = normad.authors_zones()
    missing = sorted(k for k in authors if k not in public)
    assert missing == sorted(normad.country_key(c) for c in (
        "Afghanistan", "Cambodia", "Fiji", "Laos", "Mauritius", "Nepal", "Papua New Guinea", "Samoa", "Somalia",
        "South Sudan", "Sri Lanka", "Sudan", "Syria", "Timor-Leste", "Tonga"))
    moved = {k for k in authors if k in public and public[k] != authors[k]}
    assert moved == {normad.country_key(c) for c in (
        "Bangladesh", "Iran", "Saudi Arabia", "South Africa", "Turkey", "Croatia", "Hungary", "France", "Malta",
        "Philippines", "Cyprus", "Singapore", "Vietnam")}
    assert {k for k in results if k in public and public[k] != results[k]} == moved - {"philippines"}


# ------------------------------------------------------------------------------------- the revised release (v2)


def rows_with_other_columns() -> list[dict]:
    """The sample with Other Country / Other Background: a neutral row's rule comes from another sample country
    (its background of the same subaxis), as the authors' story files and `generate normad` write it."""
    rows = sample_rows()
    background = {(r["Country"], r["Subaxis"]): r["Background"] for r in rows}
    other = {"veloria": "kestrava", "ormund_isles": "veloria"}
    for row in rows:
        neutral = row["Gold Label"] == "neutral"
        row["Other Country"] = other[row["Country"]] if neutral else ""
        row["Other Background"] = background[(row["Other Country"], row["Subaxis"])] if neutral else ""
    return rows


def test_revision_v2_swap_only_swaps_neutral_rows(tmp_path):
    """The authors' swap_neutral_country_background.py: a neutral row's Country and Background become the rule's
    culture (Other Country / Background); the other rows are unchanged; the card, the manifest and an evaluation's
    run.json name the revision for what it is: the swap only, not the authors' revised release (issue 51)."""
    raw = copy_raw(tmp_path)
    rows = rows_with_other_columns()
    write_stories(raw, rows)
    config = tmp_path / "build.json"
    config.write_text('{"revision": "v2_swap_only"}')
    result = CliRunner().invoke(app, ["build", "normad", "--raw", str(raw), "--out", str(tmp_path / "out"),
                                      "--config", str(config)])
    assert result.exit_code == 0, result.output
    release = tmp_path / "out" / "normad"
    stories = pl.read_parquet(release / "data" / "stories" / "test-00000-of-00001.parquet")
    neutral = {r["story"]: r for r in stories.filter(pl.col("gold_label") == "neutral").to_dicts()}
    for row in (r for r in rows if r["Gold Label"] == "neutral"):
        kept = neutral[row["Story"].strip()]
        assert (kept["country"], kept["background"]) == (row["Other Country"], row["Other Background"].strip())
        assert kept["iw_zone"] == {"kestrava": "Confucian", "veloria": "Protestant Europe"}[row["Other Country"]]
        assert kept["id"] == normad.story_id(row["Other Country"], row["Story"])
    unchanged = stories.filter(pl.col("gold_label") != "neutral")
    assert set(unchanged["country"].to_list()) <= {"veloria", "kestrava", "ormund_isles"}
    assert unchanged.height == sum(r["Gold Label"] != "neutral" for r in rows) - 1  # one duplicate in the sample
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["provenance"]["revision"]["name"] == "v2_swap_only"
    assert manifest["provenance"]["revision"]["neutral_rows_swapped"] == 2
    card = (release / "README.md").read_text()
    assert "Revision `v2_swap_only`" in card and "not their revised release `v2_fix_neutral`" in card
    from culturebench.evaluate.normad.run import release_build
    assert release_build(manifest)["revision"] == "v2_swap_only"  # what run.json says
    default = normad.build(raw, 0, NOOP)
    assert default.provenance["revision"] == {"name": "v1"}
    assert "Revision `v1`" in default.card.creation
    # v2_fix_neutral is the authors' revised release: only a file `generate normad_v2_fix` wrote is it
    config.write_text('{"revision": "v2_fix_neutral"}')
    line = one_line_error(CliRunner().invoke(app, ["build", "normad", "--raw", str(raw), "--out",
                                                   str(tmp_path / "named"), "--config", str(config)]))
    assert "revision v2_fix_neutral is the authors' revised release only once `culturebench generate " in line
    assert "normad_v2_fix` has run" in line and "revision: v2_swap_only" in line


def test_revision_v2_needs_the_other_columns(tmp_path):
    raw = copy_raw(tmp_path)
    write_stories(raw, sample_rows())  # no Other columns
    with pytest.raises(InputError, match="Other Country") as error:
        normad.build(raw, 0, NOOP, normad.Options(revision="v2_swap_only"))
    assert error.value.row == 3 and error.value.column == "Other Country"  # the first neutral row
    rows = rows_with_other_columns()
    rows[10]["Other Background"] = " "
    write_stories(raw, rows)
    with pytest.raises(InputError, match="empty 'Other Background'") as error:
        normad.build(raw, 0, NOOP, normad.Options(revision="v2_swap_only"))
    assert error.value.row == 11


def test_revision_v2_canada_gift_giving_takes_the_atlas_subsection():
    """fix_canada_gift_giving.py's deterministic half: a neutral row that is Canada's gift giving after the swap
    gets Canada's Gift Giving subsection as background (here from the atlas pages); others keep theirs."""
    from culturebench.raw.cultural_atlas import AtlasItem
    from culturebench.raw.normad import StoryRow

    items = [AtlasItem("Canada", "Canadian Culture", "Etiquette", "Gift Giving", "bullet", text, order,
                       "cultural_atlas/canada/etiquette.html")
             for order, text in ((2, "Token gifts may be given."), (1, "Gifts come with a card."))]
    def row(number, label, subaxis, other):
        values = {"Country": "veloria", "Background": "### Eating\n- Wait.", "Axis": "etiquette", "Subaxis": subaxis,
                  "Value": "v", "Rule-of-Thumb": "r", "Story": f"s{number}", "Explanation": "e", "Gold Label": label}
        return StoryRow("stories.csv", number, values, {"Other Country": other, "Other Background": "### old"})
    rows = [row(1, "neutral", "gift_giving", "canada"), row(2, "neutral", "eating", "canada"),
            row(3, "yes", "gift_giving", "")]
    revised, report = normad.revise_v2_fix_neutral(rows, items)
    assert revised[0].values["Background"] == "### Gift Giving\n- Gifts come with a card.\n- Token gifts may be given."
    assert revised[0].other == {"Other Country": "veloria", "Other Background": "### Eating\n- Wait."}
    assert revised[1].values["Background"] == "### old" and revised[2] is rows[2]
    assert report["neutral_rows_swapped"] == 2 and report["canada_gift_giving_backgrounds_set"] == 1
    assert normad.revise_v2_fix_neutral(rows, [])[1]["canada_gift_giving_without_atlas_page"] == 1


@pytest.mark.slow
def test_build_normad_flags_come_from_its_options_and_win_over_the_config(tmp_path):
    """``build normad --help`` lists its build options (``--zones``, ``--revision``) with their choices; a flag given
    wins over the same key of ``--config``; a flag of another benchmark's build is named as such. Slow: several NormAd
    builds through the command line."""
    listed = CliRunner().invoke(app, ["build", "normad", "--help"])
    assert listed.exit_code == 0
    assert "--zones" in listed.output and "--revision" in listed.output and "v2_fix_neutral" in listed.output
    raw = copy_raw(tmp_path)
    write_stories(raw, sample_rows())
    config = tmp_path / "build.yaml"
    config.write_text("zones: raw\n")
    result = CliRunner().invoke(app, ["build", "normad", "--raw", str(raw), "--out", str(tmp_path / "out"),
                                      "--config", str(config), "--zones", "authors"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "normad" / "manifest.json").read_text())
    assert manifest["provenance"]["zones"]["source"] == "authors"
    other = CliRunner().invoke(app, ["build", "cdeval", "--revision", "v1"])
    assert other.exit_code == 2 and "--revision is a normad option" in other.output
