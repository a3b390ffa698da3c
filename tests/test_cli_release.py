"""``--release ORG/NAME[@revision]``: a release published on the Hub, read from huggingface-hub's cache (pre-filled
here with exactly what ``publish`` uploads; no network: HF_HUB_OFFLINE) and checked against its manifest.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from culturebench.cli import app
from culturebench.publish import plan
from conftest import assert_croissant_records_are_the_parquet_rows, one_line_error

runner = CliRunner()
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    import huggingface_hub.constants

    cache = tmp_path / "hf-cache"
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def prefill(cache: Path, repo_id: str, release: Path, **publish_options) -> Path:
    """The cache as snapshot_download leaves it after fetching ``repo_id``: refs/main and one snapshot holding the
    files ``publish`` would upload for ``release``."""
    planned = plan(release, repo_id, **publish_options)
    repo = cache / f"datasets--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / COMMIT
    for item in planned.files:
        target = snapshot / item.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.content if item.content is not None else item.source.read_bytes())
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    return snapshot


def test_info_and_validate_of_a_cached_hub_release(hub_cache, sample_release):
    prefill(hub_cache, "org/wvb", sample_release, private=True, allow_restricted=("wvs-terms",))
    result = runner.invoke(app, ["info", "org/wvb"])
    assert result.exit_code == 0, result.output
    assert "wvb (org/wvb)" in result.output and "participants" in result.output
    result = runner.invoke(app, ["validate", "org/wvb@main"])
    assert result.exit_code == 0, result.output


def test_score_on_a_hub_release_equals_score_on_the_folder(hub_cache, sample_release, tmp_path):
    prefill(hub_cache, "org/wvb", sample_release, private=True, allow_restricted=("wvs-terms",))
    answers = tmp_path / "answers.tsv"
    answers.write_text("QUESTION_ID\tPARTICIPANT_ID\tSCORE\n" + "".join(
        f"{q}\t{p}\t1\n" for q, p in _probe_pairs(sample_release)), encoding="utf-8")
    runs = {}
    for label, release in (("hub", "org/wvb"), ("local", str(sample_release))):
        result = runner.invoke(app, ["score", "wvb", "--responses", str(answers), "--release", release,
                                     "--out", str(tmp_path / label)])
        assert result.exit_code == 0, result.output
        runs[label] = json.loads((tmp_path / label / "metrics.json").read_text())
    assert runs["hub"]["per_question"] == runs["local"]["per_question"]
    assert runs["hub"]["mean"] == runs["local"]["mean"]


def _probe_pairs(release: Path) -> list[tuple[str, int]]:
    import polars as pl

    from culturebench.manifest import load_manifest
    from culturebench.release_reader import read_tables

    probe = pl.concat(read_tables(release, load_manifest(release)["outputs"])["probe"].values())
    return list(probe.select(pl.col("question_id").cast(pl.String), "participant_id").head(40).iter_rows())


def test_a_public_upload_lacks_only_what_publish_withheld(hub_cache, sample_release):
    snapshot = prefill(hub_cache, "org/wvb", sample_release)  # public: participants, examples, probe withheld
    assert not (snapshot / "data" / "probe").exists()
    result = runner.invoke(app, ["info", "org/wvb"])
    assert result.exit_code == 0, result.output


def test_a_changed_file_in_the_cache_is_refused(hub_cache, sample_release):
    snapshot = prefill(hub_cache, "org/wvb", sample_release, private=True, allow_restricted=("wvs-terms",))
    target = next((snapshot / "data" / "questions").iterdir())
    target.write_bytes(target.read_bytes() + b"\0")
    line = one_line_error(runner.invoke(app, ["info", "org/wvb"]))
    assert "does not match manifest.json" in line and f"data/questions/{target.name}" in line


def test_a_missing_file_not_withheld_is_refused(hub_cache, sample_release):
    snapshot = prefill(hub_cache, "org/wvb", sample_release)
    shutil.rmtree(snapshot / "data" / "questions")  # uploaded by publish, gone from the snapshot
    line = one_line_error(runner.invoke(app, ["info", "org/wvb"]))
    assert "is missing" in line and "not withheld by publish" in line and "data/questions/" in line


def test_offline_without_a_cached_copy_says_what_is_missing(hub_cache):
    line = one_line_error(runner.invoke(app, ["info", "org/absent@v1"]))
    assert "org/absent@v1" in line and "not in the local cache" in line and str(hub_cache) in line


def test_an_upload_without_a_column_matches_its_rewritten_croissant(hub_cache, bundled_release):
    """NormAd's stories go up without the Cultural Atlas background: the uploaded croissant.json gives the uploaded
    files' sha256 and no background field, mlcroissant reads the uploaded rows, and a file changed in the cache
    afterwards is a croissant.json problem (the file checks of validate and audit; the snapshot's manifest cannot
    vouch for a trimmed file)."""
    from culturebench.release import file_problems
    from culturebench.release_reader import Release

    snapshot = prefill(hub_cache, "org/normad", bundled_release("normad"))
    release = Release.open("org/normad")
    assert release.folder == snapshot and release.hub

    def problems() -> list[str]:
        expected = release.by_design()
        return [p for p in file_problems(release) if p.split(": ", 1)[0] not in expected]

    assert problems() == []
    doc = json.loads((snapshot / "croissant.json").read_text(encoding="utf-8"))
    [stories] = [r for r in doc["recordSet"] if r["@id"] == "stories"]
    assert "background" not in [f["name"] for f in stories["field"]]
    assert assert_croissant_records_are_the_parquet_rows(snapshot, configs=("stories",))["stories"] > 0

    target = next((snapshot / "data" / "stories").iterdir())
    target.write_bytes(target.read_bytes() + b"\0")
    assert [p.split(": ", 1)[0] for p in problems()] == [f"croissant.json, FileObject data/stories/{target.name}"]
