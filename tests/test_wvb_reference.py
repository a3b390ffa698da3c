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

from conftest import REFERENCE, as_code, countries, expected_answers, reference
from culturebench.cli import app
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
    release, verdict = build_release("wvb", raw, tmp / "out", seed=0, progress=lambda stage: None)
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


def test_v6_sample_builds_with_every_check_passing(tmp_path):
    raw = raw_folder(tmp_path, [V6_SAMPLE])
    release, verdict = build_release("wvb", raw, tmp_path / "out", seed=0, progress=lambda stage: None)
    assert verdict["failed"] == 0, verdict
    rows = read_rows(V6_SAMPLE)
    participants = read_config(release, "participants")
    ids = Counter(row["D_INTERVIEW"] for row in rows)
    assert participants.height == sum(1 for row in rows if ids[row["D_INTERVIEW"]] == 1)


def test_v6_sample_with_v5_country_files(tmp_path):
    files = [V6_SAMPLE, *V5_FILES]
    raw = raw_folder(tmp_path, files)
    release, verdict = build_release("wvb", raw, tmp_path / "out", seed=0, progress=lambda stage: None)
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
