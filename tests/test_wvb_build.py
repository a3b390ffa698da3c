"""The WorldValuesBench release, checked against the raw files with the tests' own readers (csv/gzip/json):
loading with `datasets`, row accounting and quarantine, examples and recodes, determinism and split stability,
the probe design, atomic writes, the CLI (build all / validate / info) and the dataset card."""

from __future__ import annotations

import re

import hashlib
import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

import culturebench.release as release_module
from conftest import (SAMPLE_RAW, codebook, countries, demographic_variables, expected_answers, facts, make_rows,
                      read_wvs_csv)
from culturebench import registry
from culturebench.builders import wvb
from culturebench.cli import app
from culturebench.release import build_release

SPLITS = ("train", "validation", "test")
RESPONDENT_CONFIGS = ("participants", "examples", "probe")
NOOP = lambda stage: None  # noqa: E731


# ---------------------------------------------------------------------------------------------------------------
# Independent readers of the raw sample and of the release files
# ---------------------------------------------------------------------------------------------------------------


def raw_files(raw: Path = SAMPLE_RAW) -> list[Path]:
    return sorted(p for p in (raw / "wvs").iterdir() if p.name.endswith((".csv", ".csv.gz")))


def raw_records(raw: Path = SAMPLE_RAW) -> list[tuple[str, int, dict]]:
    """(file name relative to raw, 1-based data row, row) for every data row of the raw CSV files."""
    return [(f"wvs/{path.name}", index, row) for path in raw_files(raw)
            for index, row in enumerate(read_wvs_csv(path), start=1)]


def unique_records(records) -> dict[int, dict]:
    counts = Counter(int(row["D_INTERVIEW"]) for _, _, row in records)
    return {int(row["D_INTERVIEW"]): row for _, _, row in records if counts[int(row["D_INTERVIEW"])] == 1}


def manifest_of(release: Path) -> dict:
    return json.loads((release / "manifest.json").read_text(encoding="utf-8"))


def parquet_rows(release: Path) -> dict[tuple[str, str], int]:
    """(config, split) -> rows, from the parquet files on disk (footer metadata)."""
    rows: dict[tuple[str, str], int] = defaultdict(int)
    for path in sorted((release / "data").glob("*/*.parquet")):
        rows[(path.parent.name, path.name.split("-")[0])] += pq.read_metadata(path).num_rows
    return dict(rows)


def manifest_rows(manifest: dict) -> dict[tuple[str, str], int]:
    rows: dict[tuple[str, str], int] = defaultdict(int)
    for output in manifest["outputs"]:
        if "config" in output:
            rows[(output["config"], output["split"])] += output["rows"]
    return dict(rows)


def read_config(release: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((release / "data" / config).glob("*.parquet"))])


def front_matter(release: Path) -> dict:
    text = (release / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    header, _, _ = text[4:].partition("\n---\n")
    return yaml.safe_load(header)


def file_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def cli_all(tmp_path_factory):
    """`culturebench build all` from the bundled raw (default --raw), seed 0: (out dir, result)."""
    out = tmp_path_factory.mktemp("cli-all")
    result = CliRunner().invoke(app, ["build", "all", "--out", str(out)])
    return out, result


# ---------------------------------------------------------------------------------------------------------------
# Loading and accounting
# ---------------------------------------------------------------------------------------------------------------


def test_every_config_and_split_of_the_card_loads_with_datasets(sample_release, tmp_path):
    import datasets

    manifest = manifest_of(sample_release)
    on_disk = parquet_rows(sample_release)
    in_manifest = manifest_rows(manifest)
    assert in_manifest == on_disk
    card = front_matter(sample_release)
    declared = {(c["config_name"], f["split"]) for c in card["configs"] for f in c["data_files"]}
    assert declared == set(on_disk)
    assert {"participants", "questions", "examples", "probe"} <= {config for config, _ in declared}

    test_examples = datasets.load_dataset(str(sample_release), "examples", split="test", cache_dir=str(tmp_path))
    assert len(test_examples) == on_disk[("examples", "test")] > 0
    assert set(test_examples.column_names) >= {"participant_id", "question_id", "answer", "split"}
    assert set(test_examples["split"]) == {"test"}
    for config, split in sorted(declared):
        loaded = datasets.load_dataset(str(sample_release), config, split=split, cache_dir=str(tmp_path))
        assert len(loaded) == in_manifest[(config, split)] == on_disk[(config, split)], (config, split)


def test_rows_read_equal_kept_plus_quarantined_and_duplicates_are_quarantined(sample_release):
    records = raw_records()
    counts = Counter(int(row["D_INTERVIEW"]) for _, _, row in records)
    duplicated = [(file, index, int(row["D_INTERVIEW"])) for file, index, row in records
                  if counts[int(row["D_INTERVIEW"])] > 1]
    assert duplicated, "the bundled sample is meant to contain a duplicated D_INTERVIEW"
    kept = len(records) - len(duplicated)

    accounting = manifest_of(sample_release)["accounting"]
    assert accounting["rows_read"] == len(records)
    assert accounting["rows_quarantined"] == len(duplicated)
    assert accounting["rows_kept"] == kept
    assert accounting["rows_read"] == accounting["rows_kept"] + accounting["rows_quarantined"]

    participants = read_config(sample_release, "participants")
    assert participants.height == kept
    assert set(participants["participant_id"]) == {k for k, n in counts.items() if n == 1}

    quarantine = pl.concat([pl.read_parquet(p) for p in sorted((sample_release / "quarantine").glob("*.parquet"))])
    assert quarantine.height == len(duplicated)
    got = sorted(zip(quarantine["source_file"], quarantine["source_row"], quarantine["D_INTERVIEW"]))
    assert got == sorted(duplicated)
    for reason, key in zip(quarantine["reason"], quarantine["D_INTERVIEW"]):
        assert reason and reason.strip()
        assert str(key) in reason
    assert not set(quarantine["D_INTERVIEW"]) & set(participants["participant_id"])


def test_examples_and_participants_match_the_raw_rows(sample_release):
    rows = unique_records(raw_records())
    participants = read_config(sample_release, "participants")
    examples = read_config(sample_release, "examples")
    split_of = dict(zip(participants["participant_id"], participants["split"]))
    assert set(split_of) == set(rows)
    assert set(split_of.values()) == set(SPLITS)

    got: dict[int, dict[str, int]] = defaultdict(dict)
    for pid, question, answer, split in examples.select("participant_id", "question_id", "answer", "split").iter_rows():
        assert question not in got[pid], (pid, question)  # unique per (participant, question)
        got[pid][question] = answer
        assert split == split_of[pid]
    for pid, row in rows.items():
        assert got.get(pid, {}) == expected_answers(row), pid
    assert examples.height == sum(len(expected_answers(row)) for row in rows.values())

    # Demographics as codebook text (negative codes -> null, free codes as their number), country and continent.
    book = codebook()["variables"]
    known = countries()
    for record in participants.iter_rows(named=True):
        row = rows[record["participant_id"]]
        country = known[int(row["B_COUNTRY"])]
        assert (record["country"], record["continent"]) == (country["iso_alpha3"], country["continent"])
        for variable in demographic_variables():
            code = int(row[variable])
            labels = {int(c): label for c, label in book[variable]["choices"].items() if int(c) >= 0}
            expected = None if code < 0 else labels.get(code, str(code)) if labels else str(code)
            assert record[variable] == expected, (record["participant_id"], variable)


def test_recodes_on_codes_the_test_controls(make_raw):
    cycles = {
        "Q119": [0, 1, 2, 3, 4], "Q56": [1, 2, 3], "Q111": [1, 2, 3], "Q221": [1, 2, 3, 4],
        "Q241": [0, 1, 5, 10], "Q254": [1, 2, 3, 4, 5], "Q1": [1, 2, 3, 4],
    }
    rows = make_rows(60, seed=21, missing_rate=0.0)
    for i, row in enumerate(rows):
        for variable, codes in cycles.items():
            row[variable] = codes[i % len(codes)]
    rows[0]["Q119"] = -2  # a missing code stays missing even where a recode exists
    folder = make_raw(rows=rows)
    output = wvb.build(folder.raw, 0, NOOP)
    examples = pl.concat(output.tables["examples"].values())
    answer = {(pid, q): a for pid, q, a in examples.select("participant_id", "question_id", "answer").iter_rows()}

    # WorldValuesBench's recodes (paper, Sec. 3.1): None = the answer is not an example.
    recodes = {
        "Q119": {0: 3, 1: 1, 2: 2, 3: 4, 4: 5}, "Q56": {1: 1, 2: 3, 3: 2}, "Q111": {1: 1, 2: 2, 3: None},
        "Q221": {1: 1, 2: 2, 3: 3, 4: None}, "Q241": {0: 1, 1: 1, 5: 5, 10: 10}, "Q254": {1: 1, 2: 2, 3: 3, 4: 4, 5: None},
        "Q1": {1: 1, 2: 2, 3: 3, 4: 4},
    }
    seen = Counter()
    for row in rows:
        pid = int(row["D_INTERVIEW"])
        for variable, mapping in recodes.items():
            code = int(row[variable])
            expected = None if code < 0 else mapping[code]
            assert answer.get((pid, variable)) == expected, (pid, variable, code)
            seen[(variable, code)] += 1
    assert seen[("Q119", 0)] and seen[("Q111", 3)] and seen[("Q56", 2)]

    # The questions table shows the recoded scale: Q119's old code 0 is now 3, old 3 and 4 are 4 and 5.
    book = codebook()["variables"]
    questions = {r["question_id"]: r for r in output.tables["questions"]["full"].iter_rows(named=True)}

    def label(variable, code):
        return book[variable]["choices"][str(code)]

    q119 = {c["code"]: c["label"] for c in questions["Q119"]["choices"]}
    assert q119 == {1: label("Q119", 1), 2: label("Q119", 2), 3: label("Q119", 0), 4: label("Q119", 3),
                    5: label("Q119", 4)}
    assert (questions["Q119"]["scale_min"], questions["Q119"]["scale_max"]) == (1, 5)
    assert {c["code"] for c in questions["Q111"]["choices"]} == {1, 2}
    q56 = {c["code"]: c["label"] for c in questions["Q56"]["choices"]}
    assert q56 == {1: label("Q56", 1), 2: label("Q56", 3), 3: label("Q56", 2)}


# ---------------------------------------------------------------------------------------------------------------
# Determinism and split stability
# ---------------------------------------------------------------------------------------------------------------


def test_build_all_builds_wvb_from_the_bundled_raw(cli_all):
    out, result = cli_all
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert (out / "wvb" / "manifest.json").is_file()
    manifest = manifest_of(out / "wvb")
    assert manifest["benchmark"] == "wvb"
    assert {i["name"] for i in manifest["inputs"]} >= {f"wvs/{p.name}" for p in raw_files()}
    assert manifest["validation"]["failed"] == 0 and manifest["validation"]["passed"] == manifest["validation"]["checks"]


def test_two_builds_are_byte_identical(sample_release, cli_all):
    out, result = cli_all
    assert result.exit_code == 0, result.output
    other = out / "wvb"
    first = {k: v for k, v in file_hashes(sample_release).items() if k.endswith(".parquet")}
    second = {k: v for k, v in file_hashes(other).items() if k.endswith(".parquet")}
    assert first and first == second
    one, two = manifest_of(sample_release), manifest_of(other)
    assert one.pop("created_at") and two.pop("created_at")
    assert one == two


def test_another_seed_changes_the_split_assignment(sample_release):
    base = read_config(sample_release, "participants")
    seeded = wvb.build(SAMPLE_RAW, 1, NOOP).tables["participants"]
    seeded = pl.concat(seeded.values())
    before = dict(zip(base["participant_id"], base["split"]))
    after = dict(zip(seeded["participant_id"], seeded["split"]))
    assert set(before) == set(after)
    moved = sum(before[k] != after[k] for k in before)
    assert moved > len(before) // 10, moved


@pytest.mark.parametrize("keep", [0, 1], ids=["first-file-only", "second-file-only"])
def test_removing_a_file_keeps_every_remaining_participant_in_its_split(sample_release, tmp_path, keep):
    wvs = tmp_path / "raw" / "wvs"
    wvs.mkdir(parents=True)
    kept_file = raw_files()[keep]
    (wvs / kept_file.name).symlink_to(kept_file)
    (wvs / "codebook.json").symlink_to(SAMPLE_RAW / "wvs" / "codebook.json")
    expected_ids = set(unique_records(raw_records(tmp_path / "raw")))
    base = read_config(sample_release, "participants")
    before = dict(zip(base["participant_id"], base["split"]))
    partial = pl.concat(wvb.build(tmp_path / "raw", 0, NOOP).tables["participants"].values())
    after = dict(zip(partial["participant_id"], partial["split"]))
    assert set(after) == expected_ids and expected_ids
    assert {k: before[k] for k in after} == after


# ---------------------------------------------------------------------------------------------------------------
# Probe
# ---------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def drawn_release(tmp_path_factory) -> Path:
    """The bundled sample without the authors'-format files (question_metadata.json, samples.tsv): the codebook
    question text and our probe draw."""
    raw = tmp_path_factory.mktemp("drawn") / "raw"
    shutil.copytree(SAMPLE_RAW / "wvs", raw / "wvs")
    release, verdict = build_release(registry.benchmark("wvb"), raw, raw.parent / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return release


def test_probe_design(drawn_release):
    design = facts()["probe"]
    probe = read_config(drawn_release, "probe")
    participants = read_config(drawn_release, "participants")
    validation = set(participants.filter(pl.col("split") == "validation")["participant_id"])
    assert probe.height > 0
    assert set(probe["split"]) == {"validation"}
    assert set(probe["participant_id"]) <= validation

    # 36 questions: the first 3 value questions of each category, in facts order.
    first: dict[str, list[str]] = defaultdict(list)
    for entry in facts()["value"]:
        if len(first[entry["category"]]) < 3:
            first[entry["category"]].append(entry["variable"])
    expected_questions = {q: c for c, qs in first.items() for q in qs}
    assert len(expected_questions) == 36
    assert dict(zip(probe["question_id"], probe["category"])) == expected_questions

    # Each row's group and answer, recomputed from the raw row; at most 5 per group, and exactly min(5, available).
    rows = unique_records(raw_records())
    known = countries()
    levels = {code: level for level, codes in design["education_levels"].items() for code in codes}

    def group_of(row):
        urban = {1: "Urban", 2: "Rural"}.get(int(row["H_URBRURAL"]))
        education = levels.get(int(row["Q275"]))
        return (known[int(row["B_COUNTRY"])]["continent"], urban, education)

    for record in probe.iter_rows(named=True):
        row = rows[record["participant_id"]]
        assert (record["continent"], record["urban_rural"], record["education_level"]) == group_of(row)
        assert record["answer"] == expected_answers(row)[record["question_id"]]
    available: Counter = Counter()
    for pid in validation:
        group = group_of(rows[pid])
        if None in group:
            continue
        for question in expected_answers(rows[pid]).keys() & expected_questions.keys():
            available[(question, *group)] += 1
    chosen = Counter(probe.select("question_id", "continent", "urban_rural", "education_level").iter_rows())
    assert max(chosen.values()) <= design["participants_per_group_and_question"]
    assert chosen == {key: min(n, design["participants_per_group_and_question"]) for key, n in available.items()}
    assert probe.select("question_id", "participant_id").is_unique().all()


def test_build_without_any_probe_candidate_fails_cleanly(make_raw, tmp_path):
    rows = make_rows(40, seed=31)
    for row in rows:
        row["H_URBRURAL"] = -1  # urban/rural missing for everyone: no probe group can be formed
    folder = make_raw(rows=rows)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["build", "wvb", "--raw", str(folder.raw), "--out", str(out)])
    assert not isinstance(result.exception, Exception), repr(result.exception)
    # the input is valid (urban/rural may be missing), so this is no input error (2): the release is built, its
    # validation fails (exit 1) on the probe alone, which has no participant to draw, and it is kept apart
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert not (out / "wvb").exists()
    report = json.loads((out / ".failed" / "wvb" / "validation" / "report.json").read_text())
    failed = [(c["config"], c["name"]) for c in report["checks"] if not c["passed"]]
    assert failed and {config for config, _ in failed} == {"probe"}, failed
    assert ("probe", "config is not empty") in failed


# ---------------------------------------------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------------------------------------------


def _boom(*args, **kwargs):
    raise RuntimeError("injected failure")


@pytest.mark.parametrize("target", ["write_report", "validate_tables"])
def test_a_build_failing_midway_leaves_no_release_and_no_temp_folder(monkeypatch, tmp_path, target):
    monkeypatch.setattr(release_module, target, _boom)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="injected failure"):
        build_release(registry.benchmark("wvb"), SAMPLE_RAW, out, seed=0, progress=NOOP)
    assert not out.exists() or sorted(p.name for p in out.iterdir()) == []


def test_a_failed_rebuild_leaves_the_existing_release_intact(sample_release, monkeypatch, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(sample_release, out / "wvb")
    before = file_hashes(out / "wvb")
    monkeypatch.setattr(release_module, "write_report", _boom)
    with pytest.raises(RuntimeError, match="injected failure"):
        build_release(registry.benchmark("wvb"), SAMPLE_RAW, out, seed=0, progress=NOOP)
    assert sorted(p.name for p in out.iterdir()) == ["wvb"]
    assert file_hashes(out / "wvb") == before


def test_ctrl_c_during_a_build_exits_130_and_writes_nothing(monkeypatch, tmp_path):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(release_module, "write_report", interrupt)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["build", "wvb", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert "Traceback" not in result.output
    assert not out.exists() or sorted(p.name for p in out.iterdir()) == []


# ---------------------------------------------------------------------------------------------------------------
# validate / info
# ---------------------------------------------------------------------------------------------------------------


def test_validate_passes_on_a_good_release(sample_release):
    result = CliRunner().invoke(app, ["validate", str(sample_release)])
    assert result.exit_code == 0, result.output
    built_with = manifest_of(sample_release)["validation"]["checks"]
    passed, total = map(int, re.search(r"(\d+)/(\d+) checks passed", result.output).groups())
    assert passed == total == built_with  # one definition of the checks for build, validate and audit


def _tampered_copy(sample_release: Path, tmp_path: Path, answer: int) -> Path:
    copy = tmp_path / "wvb"
    shutil.copytree(sample_release, copy)
    path = copy / "data" / "examples" / "train-00000-of-00001.parquet"
    frame = pl.read_parquet(path)
    original = frame["answer"][0]
    new = answer if answer != original else answer + 1
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit(new, dtype=frame["answer"].dtype))
                               .otherwise(pl.col("answer")).alias("answer"))
    frame.write_parquet(path)
    assert pl.read_parquet(path)["answer"][0] == new
    return copy


def _rehash(copy: Path, relative: str) -> None:
    """Record a tampered file's new sha256 in the copy's croissant.json and manifest (with croissant.json's new
    sha256), so only the checks can catch the change."""
    digest = hashlib.sha256((copy / relative).read_bytes()).hexdigest()
    croissant = json.loads((copy / "croissant.json").read_text())
    for entry in croissant["distribution"]:
        if entry.get("contentUrl") == relative:
            entry["sha256"] = digest
    (copy / "croissant.json").write_text(json.dumps(croissant))
    manifest = json.loads((copy / "manifest.json").read_text())
    for output in manifest["outputs"]:
        if output["path"] in (relative, "croissant.json"):
            output["sha256"] = hashlib.sha256((copy / output["path"]).read_bytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest))


def test_validate_fails_on_an_answer_off_the_scale(sample_release, tmp_path):
    """The scale check itself fails: the manifest is updated to the tampered file's hash, so no file check can."""
    copy = _tampered_copy(sample_release, tmp_path, 99)
    _rehash(copy, "data/examples/train-00000-of-00001.parquet")
    first_question = pl.read_parquet(copy / "data/examples/train-00000-of-00001.parquet")["question_id"][0]
    result = CliRunner().invoke(app, ["validate", str(copy)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    failing = [line for line in result.output.splitlines() if "FAIL" in line]
    # 99 is off every WVS scale (at most 10 points): the per-question scale check names the row's question, and
    # pandera's answer range (0-10) fails on the same value; nothing else fails
    assert any("every answer lies on its question's scale" in line and repr([first_question]) in line for line in failing)
    assert any("answer: in_range(0, 10)" in line for line in failing), failing
    assert len(failing) == 2, failing
    assert f"{len(manifest_of(copy)['outputs'])}/{len(manifest_of(copy)['outputs'])} files match" in result.output


def test_validate_fails_on_a_file_that_differs_from_the_manifest(sample_release, tmp_path):
    """An answer changed to another on-scale value passes every check; only the manifest comparison catches it."""
    copy = _tampered_copy(sample_release, tmp_path, 1)
    result = CliRunner().invoke(app, ["validate", str(copy)])
    assert result.exit_code == 1, result.output
    checks = manifest_of(sample_release)["validation"]["checks"]
    assert f"{checks}/{checks} checks passed" in result.output
    files = len(manifest_of(copy)["outputs"])
    assert f"{files - 1}/{files} files match manifest.json" in result.output
    assert "FAIL data/examples/train-00000-of-00001.parquet: sha256" in result.output


def test_validate_on_a_folder_that_is_not_a_release(tmp_path):
    result = CliRunner().invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("error:") == 1 and str(tmp_path) in result.output
    assert "Traceback" not in result.output


def test_info_prints_configs_and_row_counts(sample_release):
    result = CliRunner().invoke(app, ["info", str(sample_release)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for (config, split), rows in parquet_rows(sample_release).items():
        assert any(config in line and split in line and f"{rows:,}" in line for line in lines), (config, split, rows)
    records = raw_records()
    counts = Counter(int(row["D_INTERVIEW"]) for _, _, row in records)
    quarantined = sum(n for n in counts.values() if n > 1)
    assert f"rows read {len(records):,} = kept {len(records) - quarantined:,} + quarantined {quarantined:,}" in result.output


# ---------------------------------------------------------------------------------------------------------------
# Dataset card
# ---------------------------------------------------------------------------------------------------------------


def test_card_front_matter_and_redistribution_notice(sample_release):
    header = front_matter(sample_release)
    assert header["pretty_name"] and header["license"]
    configs = {c["config_name"]: c for c in header["configs"]}
    for config, split in parquet_rows(sample_release):
        entries = {f["split"]: f["path"] for f in configs[config]["data_files"]}
        assert split in entries, (config, split)
        matched = sorted(p.relative_to(sample_release) for p in sample_release.glob(entries[split]))
        on_disk = sorted(p.relative_to(sample_release) for p in (sample_release / "data" / config).glob(f"{split}-*.parquet"))
        assert matched == on_disk and matched, (config, split)
    infos = {i["config_name"]: i for i in header["dataset_info"]}
    for (config, split), rows in parquet_rows(sample_release).items():
        assert {s["name"]: s["num_examples"] for s in infos[config]["splits"]}[split] == rows

    text = (sample_release / "README.md").read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    for config in ("participants", "questions", "examples", "probe"):
        line = next(line for line in body.splitlines() if line.startswith(f"- **{config}**"))
        assert ("not redistributable" in line) == (config in RESPONDENT_CONFIGS), line
    assert "not redistributable" in body.lower()
    redistributable = manifest_of(sample_release)["redistributable"]
    assert redistributable == {"participants": False, "questions": True, "examples": False, "probe": False}


# ---------------------------------------------------------------------------------------------------------------
# Great Expectations in its own process; the cross-table checks' order and stray counts
# ---------------------------------------------------------------------------------------------------------------


def test_great_expectations_run_by_the_build_process_equal_an_in_process_run(sample_release):
    """The build runs the GX suites in a worker process; re-running every check here, in this process, must give
    the same results, in the same order, as the report the build wrote."""
    from culturebench.audit import ordered
    from culturebench.release_reader import read_dtypes, read_tables
    from culturebench.validation import validate_tables

    manifest = manifest_of(sample_release)
    tables = ordered(read_tables(sample_release, manifest["outputs"], read_dtypes(registry.benchmark("wvb"))),  # the build's order
                     [c.name for c in wvb.CARD.configs])
    in_process = [r.as_dict() for r in validate_tables(registry.benchmark("wvb"), tables, manifest["accounting"])]
    written = json.loads((sample_release / "validation" / "report.json").read_text(encoding="utf-8"))["checks"]
    assert json.loads(json.dumps(in_process)) == written
    # The sample's participants, questions and probe each have a suite (schemas.wvb.expectations()).
    assert {c["config"] for c in written if c["tool"] == "great_expectations"} == {"participants", "questions", "probe"}


def test_a_failing_great_expectations_worker_is_an_error_not_a_silent_pass(tmp_path):
    from culturebench.validation import GreatExpectationsProcess

    worker = GreatExpectationsProcess()
    try:
        worker.submit("no_such_benchmark", tmp_path, [])  # the worker cannot import this benchmark's suites
        with pytest.raises(RuntimeError, match="Great Expectations worker failed"):
            worker.results()
        assert not worker.alive()
    finally:
        worker.close()


def test_the_great_expectations_worker_defers_what_no_suite_uses():
    """The worker imports GX with scipy.stats and altair deferred (GX imports them for its KS and KL expectations,
    which no suite names): after GX and the WVB suites are imported neither has run, and both still work when asked."""
    import subprocess
    import sys

    code = ("import sys, culturebench.validation.gx_worker as w; sys.meta_path.insert(0, w.LazyFinder()); "
            "import great_expectations; from culturebench import registry; "
            "registry.benchmark('wvb').schemas_module().expectations(); "
            "print(sorted(m for m in ('scipy.stats._stats_py', 'altair.vegalite') if m in sys.modules)); "
            "from scipy import stats; import altair; print(round(float(stats.entropy([0.5, 0.5], base=2)), 6), "
            "altair.Chart.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "1.0 Chart"


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
def test_order_check_counts_each_disordered_neighbour_once_whatever_the_slices(chunk):
    # (question, participant) by hand, rows 0-based: a repeat at row 2, a step back at row 4 (Q1 after Q2), a participant step
    # back at row 6 (Q2: 7 after 9): 3 rows out of order.
    rows = [("Q1", 1), ("Q1", 2), ("Q1", 2), ("Q2", 1), ("Q1", 5), ("Q2", 9), ("Q2", 7)]
    frame = pl.DataFrame({"question_id": [q for q, _ in rows], "participant_id": [p for _, p in rows]},
                         schema={"question_id": pl.Enum(["Q1", "Q2"]), "participant_id": pl.Int64})
    assert wvb._out_of_order(frame, chunk=chunk) == 3
    assert wvb._out_of_order(frame.head(1), chunk=chunk) == 0 and wvb._out_of_order(frame.clear(), chunk=chunk) == 0


def test_stray_examples_are_counted_including_a_null_participant(sample_release):
    from culturebench.release_reader import read_dtypes, read_tables

    tables = read_tables(sample_release, manifest_of(sample_release)["outputs"], read_dtypes(registry.benchmark("wvb")))
    test = tables["examples"]["test"]
    # Two rows that belong to no test participant: one of a train participant, one without a participant id.
    train_id = tables["participants"]["train"]["participant_id"][0]
    extra = test.head(2).with_columns(pl.Series("participant_id", [train_id, None], dtype=pl.Int64))
    tables["examples"]["test"] = pl.concat([test, extra])
    by_name = {r.name: r for r in wvb.checks(tables)}
    assert by_name["every example's participant exists, in the same split"].observed == 2


def test_read_tables_keeps_only_the_named_columns_that_the_files_have(sample_release):
    """What the GX worker reads: the suites' columns in file order (with the Enum casts of those read), every column
    of a config whose files have none of the named ones, and every column of a config not named."""
    from culturebench.release_reader import read_dtypes, read_tables

    outputs = manifest_of(sample_release)["outputs"]
    everything = read_tables(sample_release, outputs, read_dtypes(registry.benchmark("wvb")))
    some = read_tables(sample_release, outputs, read_dtypes(registry.benchmark("wvb")),
                       {"participants": {"split", "participant_id", "no_such_column"}, "examples": {"question_id"},
                        "questions": {"no_such_column"}})
    assert some["participants"]["train"].columns == ["participant_id", "split"]
    assert some["examples"]["test"].columns == ["question_id"]
    assert some["examples"]["test"]["question_id"].dtype == read_dtypes(registry.benchmark("wvb"))["examples"]["question_id"]
    assert some["examples"]["test"]["question_id"].equals(everything["examples"]["test"]["question_id"])
    for config in ("questions", "probe"):
        assert some[config]["full" if config == "questions" else "validation"].equals(
            everything[config]["full" if config == "questions" else "validation"])
