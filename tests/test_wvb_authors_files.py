"""WorldValuesBench with and without the authors' released files in RAW/wvs (issue #26): question text and scales
from question_metadata.json, the probe from samples.tsv, each route named in the manifest, card, `info` and a
scored run. The bundled sample has self-written files in the authors' layout (scripts/make_sample_wvs.py); the
expectations are computed here from those files and the raw CSVs with csv/json, not with the builder."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import SAMPLE_RAW, countries, expected_answers, one_line_error, read_wvs_csv
from culturebench import registry
from culturebench.builders import wvb
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate.wvb import score
from culturebench.release import build_release

WVS = SAMPLE_RAW / "wvs"
AUTHORS = SAMPLE_RAW / wvb.AUTHORS_FOLDER
NOOP = lambda stage: None  # noqa: E731


def read_config(release: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((release / "data" / config).glob("*.parquet"))])


def manifest_of(release: Path) -> dict:
    return json.loads((release / "manifest.json").read_text(encoding="utf-8"))


def sample_tsv_rows(path: Path = AUTHORS / "samples.tsv") -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def raw_rows(folder: Path = WVS) -> list[dict]:
    return [row for path in sorted(folder.iterdir()) if path.name.endswith((".csv", ".csv.gz"))
            for row in read_wvs_csv(path)]


def copy_raw(tmp_path: Path, without: tuple[str, ...] = ()) -> Path:
    raw = tmp_path / "raw"
    shutil.copytree(WVS, raw / "wvs")
    shutil.copytree(AUTHORS, raw / wvb.AUTHORS_FOLDER, ignore=shutil.ignore_patterns(*without) if without else None)
    return raw


@pytest.fixture(scope="module")
def codebook_release(tmp_path_factory) -> Path:
    """The sample without question_metadata.json and samples.tsv."""
    tmp = tmp_path_factory.mktemp("codebook-route")
    raw = copy_raw(tmp, without=(wvb.QUESTION_METADATA, wvb.PROBE_SAMPLES))
    release, verdict = build_release(registry.benchmark("wvb"), raw, tmp / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return release


# ------------------------------------------------------------------------------------------- the authors' route


def test_questions_use_question_metadata_text_and_scales(sample_release):
    metadata = json.loads((AUTHORS / "question_metadata.json").read_text(encoding="utf-8"))
    questions = read_config(sample_release, "questions")
    assert questions.height == 281
    for row in questions.iter_rows(named=True):
        entry = metadata[row["question_id"]]
        assert row["text"] == entry["question"], row["question_id"]
        if row["kind"] == "value":
            assert (row["scale_min"], row["scale_max"]) == (entry["answer_scale_min"], entry["answer_scale_max"])
    assert "sample metadata wording" in questions.filter(pl.col("question_id") == "Q1")["text"][0]


def test_probe_is_exactly_the_samples_rows_whose_participant_is_in_the_input(sample_release):
    rows = raw_rows()
    ids = Counter(int(r["D_INTERVIEW"]) for r in rows)
    people = {int(r["D_INTERVIEW"]): r for r in rows if ids[int(r["D_INTERVIEW"])] == 1}
    known = countries()
    expected, left_out = [], {}
    for record in sample_tsv_rows():
        pid, question = int(record["D_INTERVIEW"]), record["Question"]
        if pid not in people:
            reason = ("participant quarantined (D_INTERVIEW shared by several rows)" if pid in ids
                      else "participant not in the input files")
        elif question not in expected_answers(people[pid]):
            reason = "no answer to the question in the input"
        else:
            expected.append((question, record["Question Category"], record["Continent"], record["Urban / Rural"],
                             record["Education"], pid, expected_answers(people[pid])[question]))
            continue
        country = known[pid // 1_000_000]["iso_alpha3"]
        left_out.setdefault(reason, Counter())[country] += 1
    # the sample holds one row of each kind left out (scripts/make_sample_wvs.py)
    assert {reason: dict(c) for reason, c in left_out.items()} == {
        "participant not in the input files": {"USA": 1},
        "participant quarantined (D_INTERVIEW shared by several rows)": {"ARG": 1},
        "no answer to the question in the input": {"ARG": 1}}

    probe = read_config(sample_release, "probe")
    got = probe.select("question_id", "category", "continent", "urban_rural", "education_level", "participant_id",
                       "answer").rows()
    assert got == expected  # same rows, same order
    splits = dict(read_config(sample_release, "participants").select("participant_id", "split").iter_rows())
    assert probe["split"].to_list() == [splits[pid] for pid in probe["participant_id"]]
    assert len(set(probe["split"])) > 1  # the authors' probe is not our validation split

    provenance = manifest_of(sample_release)["provenance"]
    assert provenance["probe_left_out"] == {
        "rows": len(sample_tsv_rows()), "kept": len(expected),
        "left_out": {r: dict(sorted(c.items())) for r, c in sorted(left_out.items())}}


def test_the_routes_are_named_in_manifest_card_and_info(sample_release, codebook_release):
    for release, question_route, probe_route in ((sample_release, "authors", "authors"),
                                                 (codebook_release, "codebook", "drawn")):
        routes = manifest_of(release)["provenance"]["routes"]
        assert routes == {"question_text": wvb.ROUTES["question_text"][question_route],
                          "probe": wvb.ROUTES["probe"][probe_route]}
        card = (release / "README.md").read_text(encoding="utf-8")
        info = CliRunner().invoke(app, ["info", str(release)])
        assert info.exit_code == 0, info.output
        for part, text in routes.items():
            assert f"{part}: {text}" in info.output
        if question_route == "codebook":
            assert "NOT the paper's wording" in card and "NOT the paper's prompt wording" in info.output
            assert "NOT the authors' probe" in card
        else:
            assert "the authors' `question_metadata.json`" in card and "released probe (`samples.tsv`)" in card
            left = manifest_of(release)["provenance"]["probe_left_out"]
            assert f"kept {left['kept']:,} of the file's {left['rows']:,} rows" in card
            assert "participant not in the input files: USA 1" in card
            assert "NOT" not in routes["question_text"] + routes["probe"]


def test_without_the_files_questions_come_from_the_codebook_and_the_probe_is_drawn(codebook_release):
    book = json.loads((WVS / "codebook.json").read_text(encoding="utf-8"))["variables"]
    questions = read_config(codebook_release, "questions").filter(pl.col("kind") == "value")
    for row in questions.iter_rows(named=True):
        stem = book[row["question_id"]]["question"]
        assert row["text"].startswith(f"On a scale of {row['scale_min']} to {row['scale_max']}, ")
        assert row["text"].endswith(stem[0].lower() + stem[1:]), row["question_id"]
    assert set(read_config(codebook_release, "probe")["split"]) == {"validation"}


def test_scored_run_records_the_routes(sample_release, codebook_release, tmp_path):
    for release in (sample_release, codebook_release):
        probe = read_config(release, "probe")
        path = tmp_path / f"{release.parent.name}.tsv"
        path.write_text("QUESTION_ID\tPARTICIPANT_ID\tSCORE\n" + "".join(
            f"{q}\t{p}\t{a}\n" for q, p, a in probe.select("question_id", "participant_id", "answer").rows()))
        m = score(path, release, bootstrap=None).metrics
        assert m["release_routes"] == manifest_of(release)["provenance"]["routes"]
        assert m["mean"] == 0.0


# ------------------------------------------------------------------------------------------------------- errors


def test_scale_differences_are_reported():
    metadata = {v: {"scale": list(scale)} for v, scale in
                ((e["variable"], e["scale"]) for e in wvb.facts()["value"])}
    metadata["Q48"] = {"scale": [0, 10]}
    assert wvb.scale_differences(metadata) == [{"question_id": "Q48", "facts": [1, 10],
                                                "question_metadata.json": [0, 10]}]


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def build_error(raw: Path, tmp_path: Path) -> str:
    result = CliRunner().invoke(app, ["build", "wvb", "--raw", str(raw), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    return one_line_error(result)


@pytest.mark.parametrize("name", [wvb.QUESTION_METADATA, wvb.PROBE_SAMPLES])
def test_authors_file_left_beside_the_wvs_files_is_one_line(tmp_path, name):
    raw = copy_raw(tmp_path)
    (raw / wvb.AUTHORS_FOLDER / name).rename(raw / "wvs" / name)
    line = build_error(raw, tmp_path)
    assert str(raw / "wvs" / name) in line and f"{raw / wvb.AUTHORS_FOLDER}/" in line, line


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("Q46"), ["question_metadata.json", "Q46", "no entry"]),
    (lambda d: d["Q2"].update(answer_scale_max=""), ["question_metadata.json", "Q2", "answer_scale_min"]),
    (lambda d: d["Q3"].update(answer_scale_max=9), ["question_metadata.json", "Q3", "no label for code 9"]),
])
def test_bad_question_metadata_is_one_line(tmp_path, change, words):
    raw = copy_raw(tmp_path)
    edit_json(raw / wvb.AUTHORS_FOLDER / wvb.QUESTION_METADATA, change)
    line = build_error(raw, tmp_path)
    assert all(word in line for word in words), line


@pytest.mark.parametrize("edit, words", [
    (lambda lines: [lines[0].replace("\tEducation", "\tSchooling"), *lines[1:]],
     ["samples.tsv", "Education", "missing"]),
    (lambda lines: [lines[0], lines[1].replace("Tertiary", "College").replace("Secondary", "College"), *lines[2:]],
     ["samples.tsv", "row 1", "Education", "College"]),
    (lambda lines: [*lines[:3], lines[3].rsplit("\t", 1)[0] + "\tabc", *lines[4:]],
     ["samples.tsv", "row 3", "D_INTERVIEW"]),
    (lambda lines: [*lines, lines[1]], ["samples.tsv", "repeats", "D_INTERVIEW"]),
])
def test_bad_samples_tsv_is_one_line(tmp_path, edit, words):
    raw = copy_raw(tmp_path)
    path = raw / wvb.AUTHORS_FOLDER / wvb.PROBE_SAMPLES
    path.write_text("\n".join(edit(path.read_text(encoding="utf-8").rstrip("\n").split("\n"))) + "\n", encoding="utf-8")
    line = build_error(raw, tmp_path)
    assert all(word in line for word in words), line


def test_read_question_metadata_refuses_a_list(tmp_path):
    path = tmp_path / wvb.QUESTION_METADATA
    path.write_text("[]")
    with pytest.raises(InputError, match="not a JSON object"):
        wvb.read_question_metadata(path)
