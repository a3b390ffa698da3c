"""croissant.json: every sample release validates with mlcroissant and its records are the parquet rows; the RAI
fields, the FileObjects' sha256 and the withheld configs as the manifest and card state them; the same inputs give
the same bytes; ``validate`` and ``audit`` refuse a release whose data files no longer match it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import SAMPLE_RAW, assert_croissant_records_are_the_parquet_rows
from culturebench import registry
from culturebench.cli import app
from culturebench.croissant import has_synthetic_rows
from culturebench.release import build_release

BENCHMARKS = ("cdeval", "llm_globe", "normad", "socialcc", "wvb")
RAI = ("dataCollection", "dataCollectionType", "dataAnnotationProtocol", "personalSensitiveInformation",
       "dataBiases", "dataLimitations", "dataUseCases", "dataSocialImpact", "dataReleaseMaintenancePlan")
"""The RAI fields issue #45 asks every release to carry (and rai:hasSyntheticData)."""


def load(release: Path, name: str) -> dict:
    return json.loads((release / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "wvb" else n for n in BENCHMARKS])
def test_sample_release_validates_with_mlcroissant_and_its_records_are_the_parquet_rows(bundled_release, name):
    """Slow for wvb: mlcroissant reads every record of the sample's WVB release one by one."""
    release = bundled_release(name)
    compared = assert_croissant_records_are_the_parquet_rows(release)
    manifest = load(release, "manifest.json")
    assert compared == {config: sum(o["rows"] for o in manifest["outputs"] if o.get("config") == config)
                        for config in {o["config"] for o in manifest["outputs"] if "config" in o}}


@pytest.mark.parametrize("name", BENCHMARKS)
def test_distribution_rai_fields_and_withheld_configs(bundled_release, name):
    release = bundled_release(name)
    doc, manifest = load(release, "croissant.json"), load(release, "manifest.json")
    listed = {o["path"]: o for o in manifest["outputs"]}
    assert "croissant.json" in listed  # the manifest vouches for it like for every other output

    objects = {o["contentUrl"]: o for o in doc["distribution"] if o["@type"] == "cr:FileObject"}
    data = sorted(path.relative_to(release).as_posix() for path in (release / "data").rglob("*.parquet"))
    assert sorted(objects) == data
    for path, entry in objects.items():
        assert entry["sha256"] == hashlib.sha256((release / path).read_bytes()).hexdigest() == listed[path]["sha256"]

    for field in RAI:
        value = doc[f"rai:{field}"]
        assert value and (field == "dataCollectionType" or "(Source: " in value), field
    assert doc["rai:hasSyntheticData"] is True  # the bundled sample is synthetic throughout
    assert [i["sha256"] in doc["rai:dataCollectionRawData"] for i in manifest["inputs"]] == [True] * len(manifest["inputs"])
    assert f"culturebench build {name} --raw raw --out releases --seed 0" in doc["rai:dataPreprocessingProtocol"][-1]
    assert doc["version"] == manifest["culturebench_version"] and doc["citeAs"] and doc["license"]
    assert "created_at" not in json.dumps(doc) and manifest["created_at"] not in json.dumps(doc)

    # configs whose terms forbid redistribution are described, and marked as not distributed
    sets = {r["@id"]: r for r in doc["recordSet"]}
    assert set(sets) == set(manifest["redistributable"])
    for config, ok in manifest["redistributable"].items():
        fields_marked = [f["name"] for f in sets[config]["field"] if "conditionsOfAccess" in f]
        whole = "conditionsOfAccess" in sets[config]
        if ok:
            assert not whole and not fields_marked, config
        elif (name, config) == ("normad", "stories"):  # publish uploads it without its Cultural Atlas column
            assert not whole and fields_marked == ["background"]
        else:
            assert whole and "Not distributed" in sets[config]["conditionsOfAccess"], config
            assert all("conditionsOfAccess" in o for o in objects.values() if o["contentUrl"].startswith(f"data/{config}/"))


def test_fields_are_typed_from_the_parquet_schema_and_nested_types_are_arrays_of_subfields(bundled_release):
    doc = load(bundled_release("socialcc"), "croissant.json")
    [scenarios] = [r for r in doc["recordSet"] if r["@id"] == "scenarios"]
    fields = {f["name"]: f for f in scenarios["field"]}
    assert fields["events"]["isArray"] is True and fields["events"]["dataType"] == "sc:Text"
    characters = fields["characters"]
    assert characters["isArray"] is True and "dataType" not in characters
    members = {f["name"]: f for f in characters["subField"]}
    assert members["age"]["dataType"] == "cr:Int64" and members["goals"]["isArray"] is True
    assert members["age"]["source"]["transform"] == {"jsonPath": "age"}
    assert fields["value_share"]["dataType"] == "cr:Float64" and fields["value_table_4a_id"]["dataType"] == "cr:Int64"
    # described from the pandera schema the release is validated with
    from culturebench.schemas.socialcc import SCHEMAS

    [allowed] = [c.statistics["allowed_values"] for c in SCHEMAS["scenarios"].columns["value_side"].checks]
    assert "one of: " + ", ".join(allowed) in fields["value_side"]["description"]
    assert "may be null" in fields["iw_zone"]["description"] and "never null" in fields["id"]["description"]


def test_has_synthetic_data_marks_the_generated_items():
    """NormAd's stories and CDEval's items are all written by GPT-4 (Rao et al. Sec. 3.1.2; Wang et al. Sec. 3.1),
    LLM-GLOBE's open prompts partly (Karinshak et al. Sec. 3.1.2: 90 of 100 per dimension), SocialCC's scenarios only
    where culturebench generated them, WVB's survey answers never; a build from the bundled sample always."""
    def synthetic(benchmark: str, tables: dict, sample: bool = False) -> bool:
        return has_synthetic_rows(registry.benchmark(benchmark), {"benchmark": benchmark, "bundled_sample": sample}, tables)

    def table(config: str, **columns) -> dict:
        return {config: {"test": pl.DataFrame(columns)}}

    assert synthetic("normad", {}) and synthetic("cdeval", {}) and not synthetic("wvb", {})
    assert synthetic("wvb", {}, sample=True)
    assert not synthetic("socialcc", table("scenarios", layout=["released", "cc_mediation"]))
    assert synthetic("socialcc", table("scenarios", layout=["released", "culturebench"]))
    assert not synthetic("llm_globe", table("open", origin=["human"] * 3))
    assert synthetic("llm_globe", table("open", origin=["human", "generated"]))


def test_same_inputs_give_a_byte_identical_croissant(bundled_release, tmp_path):
    again, _ = build_release(registry.benchmark("normad"), SAMPLE_RAW, tmp_path, seed=0, progress=lambda stage: None)
    first = bundled_release("normad")
    assert (again / "croissant.json").read_bytes() == (first / "croissant.json").read_bytes()


def copy_release(bundled_release, tmp_path: Path, benchmark: str = "normad") -> Path:
    release = tmp_path / benchmark
    shutil.copytree(bundled_release(benchmark), release)
    return release


def rewrite_a_value(path: Path) -> str:
    """Change the first row's first text column in place; returns the file's new sha256."""
    frame = pl.read_parquet(path)
    column = next(name for name, dtype in frame.schema.items() if dtype == pl.String)
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("changed after the build"))
                               .otherwise(pl.col(column)).alias(column))
    frame.write_parquet(path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", ["validate", "audit"])
def test_a_data_file_changed_after_the_build_fails_against_croissant(bundled_release, tmp_path, command):
    """The changed file's new sha256 is even written into manifest.json (so the manifest check passes): croissant.json
    still names the build's sha256, and validate and audit fail on it."""
    release = copy_release(bundled_release, tmp_path)
    relative = "data/stories/test-00000-of-00001.parquet"
    digest = rewrite_a_value(release / relative)
    manifest = load(release, "manifest.json")
    for output in manifest["outputs"]:
        if output["path"] == relative:
            output["sha256"] = digest
    (release / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    result = CliRunner().invoke(app, [command, str(release)])
    assert result.exit_code == 1, result.output
    assert f"croissant.json, FileObject {relative}: sha256" in result.output
    assert f"but the file's is {digest[:16]}" in result.output


def test_audit_refuses_a_croissant_edited_with_its_manifest_hash(bundled_release, tmp_path):
    """croissant.json edited and its new sha256 put into manifest.json: audit re-renders it from the files."""
    release = copy_release(bundled_release, tmp_path)
    doc = load(release, "croissant.json")
    doc["rai:dataBiases"] = "none"
    (release / "croissant.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    manifest = load(release, "manifest.json")
    for output in manifest["outputs"]:
        if output["path"] == "croissant.json":
            output["sha256"] = hashlib.sha256((release / "croissant.json").read_bytes()).hexdigest()
    (release / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert CliRunner().invoke(app, ["validate", str(release)]).exit_code == 0
    result = CliRunner().invoke(app, ["audit", str(release)])
    assert result.exit_code == 1 and "croissant.json: differs from the Croissant metadata re-rendered" in result.output


def test_the_card_says_where_the_croissant_is(bundled_release):
    card = (bundled_release("cdeval") / "README.md").read_text(encoding="utf-8")
    assert "`croissant.json`" in card and "Responsible AI" in card
