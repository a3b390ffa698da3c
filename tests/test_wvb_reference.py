"""WorldValuesBench built from real WVS-7 files in ../shared/reference (symlinked into tmp_path, never copied):
three v5.0 country files (AND, URY, NZL), the v6.0 500-row sample and the real Codebook Variables report PDF.
Expectations are counted from the raw files with gzip + csv."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import REFERENCE, as_code, assert_croissant_records_are_the_parquet_rows, countries, expected_answers, reference
from culturebench import registry
from culturebench.builders import wvb
from culturebench.cli import app
from culturebench.evaluate.wvb import score
from culturebench.release import build_release

pytestmark = [pytest.mark.reference, reference]

WVS7 = REFERENCE / "WVS7"
PDF = WVS7 / "snag18_World-Values-Survey-Data-Analysis" / "F00011055-WVS7_Codebook_Variables_report_V6.0.pdf"
V6_SAMPLE = WVS7 / "halsayxi_PSII" / "data" / "WVS_Cross-National_Wave_7_csv_v6_0_500.csv"
V5_COUNTRIES = WVS7 / "DataSpi_spy-playground" / "wvs_7" / "data" / "processed"
V5_FILES = [V5_COUNTRIES / f"{alpha}.csv.gz" for alpha in ("AND", "URY", "NZL")]

def raw_folder(tmp_path: Path, files: list[Path]) -> Path:
    """tmp_path/raw/wvs with symlinks to the given respondent files and to the real codebook PDF."""
    for path in [*files, PDF]:
        if not path.is_file():
            pytest.skip(f"reference file absent: {path}")
    wvs = tmp_path / "raw" / "wvs"
    wvs.mkdir(parents=True)
    for path in [*files, PDF]:
        (wvs / path.name).symlink_to(path)
    return tmp_path / "raw"


def read_rows(path: Path) -> list[dict]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def records(files: list[Path]) -> list[tuple[str, int, dict]]:
    return [(f"wvs/{path.name}", index, row) for path in files for index, row in enumerate(read_rows(path), start=1)]


def read_config(release: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((release / "data" / config).glob("*.parquet"))])


def check_release(release: Path, verdict: dict, files: list[Path]) -> None:
    """All checks pass; URY's rows are quarantined; participants are exactly the rows with a unique D_INTERVIEW."""
    rows = records(files)
    ids = Counter(as_code(row["D_INTERVIEW"]) for _, _, row in rows)
    unique = {as_code(row["D_INTERVIEW"]) for _, _, row in rows if ids[as_code(row["D_INTERVIEW"])] == 1}
    uruguay = [(file, index) for file, index, _ in rows if file == "wvs/URY.csv.gz"]
    assert len(uruguay) == 1000
    assert len({row["D_INTERVIEW"] for file, _, row in rows if file == "wvs/URY.csv.gz"}) == 1

    assert verdict["failed"] == 0 and verdict["passed"] == verdict["checks"] > 0, verdict
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["validation"] == verdict
    accounting = manifest["accounting"]
    assert accounting["rows_read"] == len(rows)
    assert accounting["rows_kept"] == len(unique)
    assert accounting["rows_quarantined"] == len(rows) - len(unique)

    participants = read_config(release, "participants")
    assert participants.height == len(unique)
    assert set(participants["participant_id"]) == unique

    quarantine = pl.concat([pl.read_parquet(p) for p in sorted((release / "quarantine").glob("*.parquet"))])
    assert quarantine.height == len(rows) - len(unique)
    in_quarantine = set(zip(quarantine["source_file"], quarantine["source_row"]))
    assert set(uruguay) <= in_quarantine
    assert all(reason and reason.strip() for reason in quarantine["reason"])


@pytest.fixture(scope="module")
def v5_release(tmp_path_factory):
    """AND, URY and NZL (v5.0 country files) with the real v6.0 codebook PDF, built with seed 0."""
    tmp = tmp_path_factory.mktemp("reference-v5")
    raw = raw_folder(tmp, V5_FILES)
    release, verdict = build_release(registry.benchmark("wvb"), raw, tmp / "out", seed=0, progress=lambda stage: None)
    return release, verdict


def test_v5_country_files_build_with_every_check_passing(v5_release):
    release, verdict = v5_release
    check_release(release, verdict, V5_FILES)
    inputs = {i["name"] for i in json.loads((release / "manifest.json").read_text())["inputs"]}
    assert inputs == {f"wvs/{p.name}" for p in [*V5_FILES, PDF]}
    assert not any(p.is_symlink() for p in release.rglob("*"))


def test_v5_examples_and_countries_match_the_raw_rows(v5_release):
    release, _ = v5_release
    rows = records(V5_FILES)
    ids = Counter(as_code(row["D_INTERVIEW"]) for _, _, row in rows)
    unique = {as_code(row["D_INTERVIEW"]): row for _, _, row in rows if ids[as_code(row["D_INTERVIEW"])] == 1}

    participants = read_config(release, "participants")
    for pid, country in zip(participants["participant_id"], participants["country"]):
        assert country == unique[pid]["B_COUNTRY_ALPHA"], pid
    assert set(participants["country"]) == {"AND", "NZL"}

    got: dict[int, dict[str, int]] = {}
    for pid, question, answer in read_config(release, "examples").select("participant_id", "question_id", "answer").iter_rows():
        got.setdefault(pid, {})[question] = answer
    mismatched = [pid for pid, row in unique.items() if got.get(pid, {}) != expected_answers(row)]
    assert mismatched == []


def test_validate_cli_on_the_reference_release(v5_release):
    release, _ = v5_release
    result = CliRunner().invoke(app, ["validate", str(release)])
    assert result.exit_code == 0, result.output


def test_croissant_of_the_reference_release_reads_as_its_parquet_rows(v5_release):
    """mlcroissant validates the croissant.json of a release built from real WVS files; every record of the small
    configs and the first 20,000 of examples equal the parquet rows; real survey rows are not synthetic."""
    release, _ = v5_release
    compared = assert_croissant_records_are_the_parquet_rows(release, limit=20_000)
    assert compared["examples"] == 20_000 and compared["participants"] == read_config(release, "participants").height
    croissant = json.loads((release / "croissant.json").read_text(encoding="utf-8"))
    assert croissant["rai:hasSyntheticData"] is False
    assert {r["@id"] for r in croissant["recordSet"] if "conditionsOfAccess" in r} == {"participants", "examples", "probe"}


def test_v6_sample_builds_with_every_check_passing(tmp_path):
    raw = raw_folder(tmp_path, [V6_SAMPLE])
    release, verdict = build_release(registry.benchmark("wvb"), raw, tmp_path / "out", seed=0, progress=lambda stage: None)
    assert verdict["failed"] == 0, verdict
    rows = read_rows(V6_SAMPLE)
    participants = read_config(release, "participants")
    ids = Counter(row["D_INTERVIEW"] for row in rows)
    assert participants.height == sum(1 for row in rows if ids[row["D_INTERVIEW"]] == 1)


def test_v6_sample_with_v5_country_files(tmp_path):
    files = [V6_SAMPLE, *V5_FILES]
    raw = raw_folder(tmp_path, files)
    release, verdict = build_release(registry.benchmark("wvb"), raw, tmp_path / "out", seed=0, progress=lambda stage: None)
    check_release(release, verdict, files)


def test_country_table_agrees_with_the_wvs_files():
    """Every (B_COUNTRY, B_COUNTRY_ALPHA) in the reference files is in facts/wvs_countries.csv, spelled the same."""
    if not V6_SAMPLE.is_file() or not V5_COUNTRIES.is_dir():
        pytest.skip("reference WVS files absent")
    seen = {(as_code(row["B_COUNTRY"]), row["B_COUNTRY_ALPHA"]) for row in read_rows(V6_SAMPLE)}
    for path in sorted(V5_COUNTRIES.glob("*.csv.gz")):
        with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
            first = next(csv.DictReader(handle))
        seen.add((as_code(first["B_COUNTRY"]), first["B_COUNTRY_ALPHA"]))
    known = {code: row["iso_alpha3"] for code, row in countries().items()}
    assert sorted((code, alpha, known.get(code)) for code, alpha in seen if known.get(code) != alpha) == []


# ------------------------------------------------------------------ the authors' released files (issue #26)
# question_metadata.json and samples.tsv in RAW/wvb, the 56 public v5.0 country files (only the rows of the
# probe's participants, written to tmp_path), and the eight published model outputs scored against that release.
# Expectations come from the authors' files and the raw rows (csv/gzip/json), with W1 written out from Sec. 3.2.

AUTHORS = REFERENCE / "WorldValuesBench"
METADATA = AUTHORS / "dataset_construction" / "question_metadata.json"
ADJUSTMENT = AUTHORS / "dataset_construction" / "answer_adjustment.json"
SAMPLES = AUTHORS / "WorldValuesBench" / "probe" / "samples.tsv"
MODEL_OUTPUTS = AUTHORS / "evaluation" / "model_outputs"


def read_tsv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture(scope="module")
def authors_release(tmp_path_factory):
    """(release, raw rows of the probe's participants by D_INTERVIEW with their count in the files)."""
    files = sorted(V5_COUNTRIES.glob("*.csv.gz"))
    for path in [PDF, METADATA, SAMPLES, ADJUSTMENT]:
        if not path.is_file():
            pytest.skip(f"reference file absent: {path}")
    wanted = {int(r["D_INTERVIEW"]) for r in read_tsv(SAMPLES)}
    header, kept, counts = None, [], Counter()
    for path in files:
        for row in read_rows(path):
            pid = as_code(row["D_INTERVIEW"])
            if pid in wanted:
                header = header or list(row)
                kept.append(row)
                counts[pid] += 1
    tmp = tmp_path_factory.mktemp("authors")
    wvs = tmp / "raw" / "wvs"
    wvs.mkdir(parents=True)
    common = [c for c in header if all(c in row for row in kept)]
    with open(wvs / "probe_participants.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=common, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
    (wvs / PDF.name).symlink_to(PDF)
    (tmp / "raw" / wvb.AUTHORS_FOLDER).mkdir()
    for path in [METADATA, SAMPLES]:
        (tmp / "raw" / wvb.AUTHORS_FOLDER / path.name).symlink_to(path)
    release, verdict = build_release(registry.benchmark("wvb"), tmp / "raw", tmp / "out", seed=0, progress=lambda stage: None)
    assert verdict["failed"] == 0, verdict
    return release, {as_code(row["D_INTERVIEW"]): row for row in kept}, counts


def authors_answer(row: dict, question: str, adjustment: dict) -> int | None:
    """The participant's answer as the authors' data_preparation makes it: answer_adjustment.json's recode, then
    negative codes (and codes recoded to "") missing."""
    code = str(as_code(row[question]))
    code = adjustment.get(question, {}).get(code, code)
    return None if code == "" or int(code) < 0 else int(code)


def w1_sec_3_2(human: list[int], model: list[int], low: int, high: int) -> float:
    """W1 of answers rescaled by (x - low) / (high - low), anywhere on the line: the integral of |U - V|, with both
    CDFs flat between consecutive answer values a < b."""
    points = sorted(set(human) | set(model))
    return sum(abs(sum(h <= a for h in human) / len(human) - sum(m <= a for m in model) / len(model)) * (b - a)
               for a, b in zip(points, points[1:])) / (high - low)


def test_authors_question_text_and_scales(authors_release):
    release, _, _ = authors_release
    metadata = json.loads(METADATA.read_text(encoding="utf-8"))
    questions = read_config(release, "questions")
    assert questions.height == 281
    for row in questions.iter_rows(named=True):
        assert row["text"] == metadata[row["question_id"]]["question"], row["question_id"]
        if row["kind"] == "value":
            entry = metadata[row["question_id"]]
            assert (row["scale_min"], row["scale_max"]) == (entry["answer_scale_min"], entry["answer_scale_max"])
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["provenance"]["scale_differences"] == []  # the file agrees with facts/wvb.json
    assert "the authors' question_metadata.json" in manifest["provenance"]["routes"]["question_text"]


def test_authors_probe_rows_and_the_rows_left_out(authors_release):
    release, people, counts = authors_release
    adjustment = json.loads(ADJUSTMENT.read_text(encoding="utf-8"))
    known = countries()
    expected, left_out = [], {}
    for record in read_tsv(SAMPLES):
        pid, question = int(record["D_INTERVIEW"]), record["Question"]
        if counts[pid] == 1 and authors_answer(people[pid], question, adjustment) is not None:
            expected.append((question, pid, authors_answer(people[pid], question, adjustment)))
            continue
        reason = ("participant not in the input files" if counts[pid] == 0 else
                  "participant quarantined (D_INTERVIEW shared by several rows)" if counts[pid] > 1 else
                  "no answer to the question in the input")
        left_out.setdefault(reason, Counter())[known[pid // 1_000_000]["iso_alpha3"]] += 1
    probe = read_config(release, "probe")
    print(f"\nauthors' probe: {probe.height} of 8280 rows in the 56 public v5.0 files; left out "
          f"{ {r: dict(c) for r, c in left_out.items()} }")
    assert probe.select("question_id", "participant_id", "answer").rows() == expected
    report = json.loads((release / "manifest.json").read_text(encoding="utf-8"))["provenance"]["probe_left_out"]
    assert report == {"rows": 8280, "kept": len(expected),
                      "left_out": {r: dict(sorted(c.items())) for r, c in sorted(left_out.items())}}


@pytest.mark.parametrize("name", ["alpaca", "alpaca_with_demographics", "gpt-3.5", "gpt-3.5_with_demographics",
                                  "mixtral", "mixtral_with_demographics", "vicuna", "vicuna_with_demographics"])
def test_published_outputs_score_as_the_paper_defines_w1(authors_release, name):
    """`score wvb` on a published output file: per question, W1 between the covered participants' answers and
    the file's whole-number scores (off the scale too, as the authors' evaluate.py keeps them) on the authors'
    scales, to 0.002; the off-scale count is the file's."""
    release, people, counts = authors_release
    metadata = json.loads(METADATA.read_text(encoding="utf-8"))
    adjustment = json.loads(ADJUSTMENT.read_text(encoding="utf-8"))
    path = MODEL_OUTPUTS / f"{name}.tsv"
    human, model, off_scale = {}, {}, 0
    for record in read_tsv(path):
        pid, question = int(record["PARTICIPANT_ID"]), record["QUESTION_ID"]
        answer = authors_answer(people[pid], question, adjustment) if counts[pid] == 1 else None
        if answer is None:
            continue
        human.setdefault(question, []).append(answer)
        try:
            value = float(record["SCORE"])
        except ValueError:
            continue
        low, high = metadata[question]["answer_scale_min"], metadata[question]["answer_scale_max"]
        model.setdefault(question, []).append(int(value))
        off_scale += not low <= int(value) <= high
    expected = {q: w1_sec_3_2(human[q], model[q], metadata[q]["answer_scale_min"], metadata[q]["answer_scale_max"])
                for q in human if model.get(q)}
    m = score(path, release, bootstrap=None).metrics
    assert len(expected) == 36
    worst = max(abs(m["per_question"][q] - expected[q]) for q in expected)
    print(f"\n{name}: {sum(map(len, human.values()))} covered rows, {off_scale} off the scale, max |diff| {worst:.2e}")
    assert worst <= 0.002
    assert m["out_of_scale"]["n"] == off_scale and m["out_of_scale"]["answers"] == "kept"
    if name == "alpaca_with_demographics":  # the issue's example: dropping Q177's off-scale answers moves W1
        dropped = score(path, release, bootstrap=None, drop_out_of_scale=True).metrics["per_question"]["Q177"]
        assert abs(dropped - expected["Q177"]) > 0.4


def test_prompts_of_the_authors_release_are_the_papers_figures(authors_release):
    """Figs. 9-10 print Q3's prompt without demographics: built from the release, it is the figure, word for word."""
    from culturebench.evaluate import wvb as evaluate
    from test_wvb_evaluate import FIG9, FIG10, _words

    release, _, _ = authors_release
    rows = evaluate.evaluation_rows(release, "probe").filter(pl.col("question_id") == "Q3")
    questions, participants = evaluate.prompt_tables(release, None)
    for family, figure in (("gpt-3.5", FIG10), ("alpaca", FIG9)):
        planned = evaluate.plan_requests(rows, questions, participants, demographics=False, samples=1, family=family)
        assert _words(planned[0].request.messages[0][1]) == figure


def test_facts_transcribe_the_authors_recodes_and_probe_questions():
    """facts/wvb.json's 15 recodes are answer_adjustment.json ("" = missing), and the first 3 value questions of
    each category are value_questions.json's 36."""
    questions_file = AUTHORS / "dataset_construction" / "probe_set_construction" / "value_questions.json"
    if not ADJUSTMENT.is_file() or not questions_file.is_file():
        pytest.skip("reference files absent")
    adjustment = json.loads(ADJUSTMENT.read_text(encoding="utf-8"))
    theirs = {q: {code: None if new == "" else int(new) for code, new in m.items()} for q, m in adjustment.items()}
    ours = {v["variable"]: v["recode"] for v in wvb.facts()["value"] if v.get("recode")}
    assert ours == theirs and len(ours) == 15
    first: dict[str, list[str]] = {}
    for entry in wvb.facts()["value"]:
        first.setdefault(entry["category"], [])
        if len(first[entry["category"]]) < 3:
            first[entry["category"]].append(entry["variable"])
    expected = sorted(q for qs in first.values() for q in qs)
    assert sorted(json.loads(questions_file.read_text(encoding="utf-8"))) == expected
