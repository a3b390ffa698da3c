"""One ``Release`` object (issue #65): every command opens a release through ``release_reader.Release``, which
reads manifest.json (the only module besides manifest.py that calls ``load_manifest``), names its errors in one
line, scans its tables lazily and column-filtered, and refuses a changed file; one run reads the manifest once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import one_line_error, write_release
from culturebench import release_reader
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate import normad, wvb
from culturebench.evaluate.runs import engine
from culturebench.chat import ChatResponse
from culturebench.release_reader import Release, opened_once

SRC = Path(__file__).resolve().parents[1] / "src"


def test_load_manifest_is_called_in_at_most_two_modules():
    """manifest.py parses manifest.json and the Release module reads it; every other module opens a Release."""
    calling = sorted(str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
                     if re.search(r"\bload_manifest\(", path.read_text(encoding="utf-8")))
    assert calling == ["culturebench/manifest.py", "culturebench/release_reader.py"]


def test_the_release_module_sits_on_the_ground_floor():
    """release_reader (and manifest.py and hub_release under it) reach nothing of evaluate/, builders/, cards/ or
    validation/ through any chain of imports, function-level and TYPE_CHECKING ones included; the contract and the
    registry it names a benchmark by are cut off here, their own floor is test_import_cycles.py's LAYERS."""
    from test_import_cycles import import_graph, module_names, reachable

    graph = import_graph(module_names())
    graph["culturebench.contract"] = graph["culturebench.registry"] = set()
    above = ("culturebench.evaluate", "culturebench.builders", "culturebench.cards", "culturebench.validation")
    assert sorted(t for t in reachable(graph, "culturebench.release_reader") if t.startswith(above)) == []


def small_release(folder: Path) -> Path:
    return write_release(folder, {"questions": pl.DataFrame({"id": ["q1", "q2", "q3"], "text": ["a", "b", "c"],
                                                             "n": [1, 2, 3]})}, "toy")


def test_a_missing_folder_is_one_line_naming_it(tmp_path):
    with pytest.raises(InputError) as caught:
        Release.open(tmp_path / "absent")
    assert str(caught.value) == f"{tmp_path / 'absent'}: release folder not found"
    line = one_line_error(CliRunner().invoke(app, ["info", str(tmp_path / "absent")]))
    assert line == f"error: {tmp_path / 'absent'}: release folder not found"


def test_a_folder_without_manifest_is_not_a_release(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match=r"folder: not a culturebench release \(no manifest.json\)$"):
        Release.open(tmp_path / "folder")


@pytest.mark.parametrize("text, said", [("{not json", "does not parse as JSON"), ("[1, 2]", "not a JSON object"),
                                         ('{"outputs": []}', "no 'benchmark': not a complete culturebench release")])
def test_an_unreadable_manifest_is_one_line_naming_the_file(tmp_path, text, said):
    release = small_release(tmp_path / "r")
    (release / "manifest.json").write_text(text, encoding="utf-8")
    line = one_line_error(CliRunner().invoke(app, ["info", str(release)]))
    assert line.startswith(f"error: {release / 'manifest.json'}: {said}")


def test_info_asks_for_the_keys_a_build_writes(tmp_path):
    release = small_release(tmp_path / "r")  # benchmark and outputs only
    Release.open(release)
    with pytest.raises(InputError, match=r"manifest.json: no 'accounting', 'inputs', 'seed'"):
        Release.open(release, required=("benchmark", "accounting", "inputs", "seed"))


def test_tables_are_lazy_scans_filtered_to_the_columns_asked(tmp_path):
    release = small_release(tmp_path / "r")
    on_disk = pl.read_parquet(release / "data" / "questions" / "test-00000-of-00001.parquet")
    scans = Release.open(release).tables(columns={"questions": {"n", "id"}})
    frame = scans["questions"]["test"]
    assert isinstance(frame, pl.LazyFrame)
    assert frame.collect_schema().names() == ["id", "n"]  # in file order
    assert frame.collect().equals(on_disk.select("id", "n"))
    every = Release.open(release).tables()["questions"]["test"]
    assert every.collect().equals(on_disk)
    assert Release.open(release).scan("questions", ["text"]).collect()["text"].to_list() == ["a", "b", "c"]
    with pytest.raises(InputError, match="release has no 'answers' config"):
        Release.open(release).scan("answers")


def test_eager_tables_read_with_the_schemas_dtypes(bundled_release):
    """WVB's schemas read examples' question_id back as an Enum (``READ_DTYPES``): eager tables do, lazy scans
    give the file's types."""
    opened = Release.open(bundled_release("wvb"))
    eager = opened.tables(columns={"examples": {"question_id"}}, lazy=False)["examples"]
    assert {split: frame.columns for split, frame in eager.items()} == {s: ["question_id"] for s in eager}
    assert all(isinstance(frame.schema["question_id"], pl.Enum) for frame in eager.values())
    lazy = opened.tables(columns={"examples": {"question_id"}})["examples"]
    assert all(frame.collect_schema()["question_id"] == pl.String for frame in lazy.values())
    assert sum(frame.height for frame in eager.values()) == sum(
        o["rows"] for o in json.loads((opened.folder / "manifest.json").read_text())["outputs"]
        if o.get("config") == "examples")


def test_verify_refuses_a_changed_file(tmp_path):
    release = small_release(tmp_path / "r")
    Release.open(release).verify()
    shard = release / "data" / "questions" / "test-00000-of-00001.parquet"
    shard.write_bytes(shard.read_bytes() + b"\0")
    with pytest.raises(InputError) as caught:
        Release.open(release).verify()
    assert str(caught.value).startswith(f"{shard}: file does not match manifest.json (sha256 mismatch")
    shard.unlink()
    with pytest.raises(InputError, match="file listed in manifest.json is missing"):
        Release.open(release).verify()


def counting_reads(monkeypatch) -> list[Path]:
    reads: list[Path] = []
    real = release_reader.load_manifest
    monkeypatch.setattr(release_reader, "load_manifest", lambda folder, *a: reads.append(Path(folder)) or real(folder, *a))
    return reads


def test_within_opened_once_a_release_is_read_once(tmp_path, monkeypatch):
    release = small_release(tmp_path / "r")
    reads = counting_reads(monkeypatch)
    with opened_once():
        first = Release.open(release)
        with opened_once():
            assert Release.open(str(release)) is first
    Release.open(release)
    assert reads == [release, release]  # once inside, once after


class Answering:
    """Answers every request with ``reply``."""

    name = "answering"

    def __init__(self, reply: str) -> None:
        self.model, self.reply = "answering-model", reply

    def cache_params(self) -> dict:
        return {"backend": self.name, "model": self.model}

    def generate(self, requests, on_response) -> None:
        for index, _ in enumerate(requests):
            on_response(index, ChatResponse(text=self.reply))


@pytest.mark.parametrize("evaluated, options, reply", [
    (normad.BENCHMARK, lambda release, out: normad.NormAdOptions(release=release, out=out, limit=4, samples=1), "Yes."),
    (wvb.BENCHMARK, lambda release, out: wvb.WVBOptions(release=release, out=out, limit=6), "1"),
])
def test_one_run_reads_the_manifest_once(bundled_release, tmp_path, monkeypatch, evaluated, options, reply):
    """The engine opens the release once (its plan, the items readers, the scoring and run.json share it)."""
    release = bundled_release(evaluated.name)
    reads = counting_reads(monkeypatch)
    engine.run(evaluated, Answering(reply), options(release, tmp_path / "run"))
    assert reads == [release]
    recorded = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["release"]
    assert recorded["path"] == str(release) and recorded["benchmark"] == evaluated.name


def test_the_evaluate_and_score_commands_read_the_manifest_once(bundled_release, tmp_path, monkeypatch):
    """``evaluate`` checks the release's files, checks the options against it and runs the engine; ``score`` checks
    it, scores and writes run.json: one read of manifest.json each (``opened_once``)."""
    from scripted_server import ScriptedServer
    from test_cli_score import evaluate, wvb_reply

    release = bundled_release("wvb")
    reads = counting_reads(monkeypatch)
    with ScriptedServer(reply=wvb_reply) as server:
        result = evaluate("wvb", release, tmp_path / "run", server.base_url, "--limit", "6")
    assert result.exit_code == 0, result.output
    assert reads == [release]
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(tmp_path / "run" / "responses.jsonl"),
                                      "--release", str(release), "--out", str(tmp_path / "score")])
    assert result.exit_code == 0, result.output
    assert reads == [release, release]
