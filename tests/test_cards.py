"""Dataset cards as the Hugging Face ecosystem reads them: parsed by ``huggingface_hub.DatasetCard``, every config
loaded by ``datasets.load_dataset`` (the default one without a name), the loading example run as written; and the
``info`` / ``--help`` / ``publish --dry-run`` output a reader meets first."""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import polars as pl
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard
from typer.testing import CliRunner

from culturebench.cli import app
from culturebench import registry

# The Hub's size buckets by number of examples (dataset card metadata spec), written out here for the test.
BUCKETS = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
HUB_ANNOTATIONS = {"found", "crowdsourced", "expert-generated", "machine-generated", "no-annotation", "other"}


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def rows_per_config(folder: Path) -> dict[str, int]:
    """Rows per config counted from the parquet files' own metadata (not from the card or the manifest)."""
    counts: dict[str, int] = {}
    for path in sorted((folder / "data").glob("*/*.parquet")):
        counts[path.parent.name] = counts.get(path.parent.name, 0) + pq.ParquetFile(path).metadata.num_rows
    return counts


@pytest.fixture(scope="module", params=registry.BUILT_IN)
def release(request, bundled_release) -> Path:
    return bundled_release(request.param)


def test_the_card_parses_with_the_hub_metadata_a_reader_expects(release):
    card = DatasetCard.load(release / "README.md")
    data = card.data.to_dict()
    benchmark = manifest_of(release)["benchmark"]
    assert data["language"] == (["en", "zh"] if benchmark == "llm_globe" else ["en"])
    assert data["multilinguality"] == ("multilingual" if benchmark == "llm_globe" else "monolingual")
    largest = max(rows_per_config(release).values())
    assert data["size_categories"] == [next(label for bound, label in BUCKETS if largest < bound)]
    assert data["task_categories"] and data["source_datasets"]
    assert set(data["annotations_creators"]) <= HUB_ANNOTATIONS and data["annotations_creators"]
    if data["license"] == "other":
        assert data["license_name"] and data["license_link"].startswith("https://")
    if data["license"] in ("other", "unknown"):
        assert data["license_details"]  # what the terms are, in words
    defaults = [c["config_name"] for c in data["configs"] if c.get("default")]
    assert defaults == [data["configs"][0]["config_name"]]


def test_every_config_loads_and_the_card_states_its_feature_types(release, tmp_path):
    body = (release / "README.md").read_text(encoding="utf-8")
    header = DatasetCard.load(release / "README.md").data.to_dict()
    cache = str(tmp_path / "cache")
    default = datasets.load_dataset(str(release), cache_dir=cache)  # no config name: the card's default config
    first = header["configs"][0]
    assert set(default) == {f["split"] for f in first["data_files"]}
    for config in header["configs"]:
        name = config["config_name"]
        loaded = datasets.load_dataset(str(release), name, cache_dir=cache)
        section = body[body.index(f"#### `{name}`"):]
        section = section[:section.index("\n#### ") if "\n#### " in section else section.index("### Loading")]
        for split in loaded:
            assert loaded[split].num_rows == sum(pq.ParquetFile(p).metadata.num_rows
                                                 for p in (release / "data" / name).glob(f"{split}-*.parquet"))
        for column, feature in next(iter(loaded.values())).features.items():
            assert f"| `{column}` | `{feature!r}` |" in section, (name, column)
    fields = body[body.index("### Data Fields"):body.index("### Loading")]
    assert not re.search(r"\b(String|Int64|Int8|Float64|Enum\(|Categorical|List\(String)", fields.replace("Value(", ""))


def test_the_loading_example_runs_as_written(release, tmp_path, monkeypatch):
    body = (release / "README.md").read_text(encoding="utf-8")
    loading = body[body.index("### Loading"):body.index("## Dataset Creation")]
    code = re.search(r"```python\n(.*?)```", loading, re.S)[1]
    benchmark = manifest_of(release)["benchmark"]
    assert f'load_dataset("releases/{benchmark}"' in code
    (tmp_path / "releases").mkdir()
    shutil.copytree(release, tmp_path / "releases" / benchmark)  # where `culturebench build` puts it by default
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - the card's own example
    [loaded] = [v for v in scope.values() if isinstance(v, datasets.Dataset)]
    assert loaded.num_rows > 0


def test_the_card_says_it_was_built_from_the_bundled_sample(release):
    body = (release / "README.md").read_text(encoding="utf-8")
    assert manifest_of(release)["bundled_sample"] is True
    assert "Built from the bundled synthetic sample" in body
    summary = body.split("## Dataset Summary", 1)[1].split("\n## ", 1)[0]  # issue #55: one story of the source
    assert "rebuilt by culturebench from the bundled synthetic sample" in summary
    assert "from the released" not in summary
    assert "pip install 'culturebench==" not in body  # no package index has it
    assert "--raw raw " in body  # the recipe rebuilds from the checkout's raw/


def test_a_release_from_other_files_has_no_sample_note(bundled_release, tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(Path(__file__).resolve().parents[1] / "raw" / "cdeval", raw / "cdeval")
    shutil.copytree(Path(__file__).resolve().parents[1] / "raw" / "hofstede", raw / "hofstede")
    sample = raw / "cdeval" / "SAMPLE_CDEval.json"
    sample.write_text(sample.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # same items, other bytes
    from culturebench.release import build_release

    folder, _ = build_release(registry.benchmark("cdeval"), raw, tmp_path / "out", seed=0, progress=lambda stage: None)
    body = (folder / "README.md").read_text(encoding="utf-8")
    assert manifest_of(folder)["bundled_sample"] is False
    assert "bundled synthetic sample" not in body and "--raw RAW " in body
    assert "rebuilt by culturebench from the released CDEval.json and the Hofstede 6-D country scores" in body


def test_license_sentences_agree_in_number_and_normad_withholds_its_atlas_text(bundled_release):
    from culturebench.builders.base import CardInfo, ConfigInfo
    from culturebench.cards import licensing

    def card(*configs):
        return CardInfo("x", "", "other", "", configs, "", "", license_name="t", license_link="https://example.org")

    one = licensing(card(ConfigInfo("atlas", "", redistributable=False), ConfigInfo("stats", "")))
    assert "The config `atlas` contains data" in one and "withholds it" in one
    two = licensing(card(ConfigInfo("a", "", redistributable=False), ConfigInfo("b", "", redistributable=False)))
    assert "The configs `a` and `b` contain data" in two and "withholds them" in two
    assert "License: `other (t, https://example.org)`." in two
    normad = bundled_release("normad")
    # background = atlas text; the sample's paraphrases of closing questions (issue 63's variants config) are NormAd's
    assert manifest_of(normad)["redistributable"] == {"stories": False, "atlas": False, "variants": True}
    assert "The configs `stories` and `atlas` contain data" in (normad / "README.md").read_text(encoding="utf-8")


def test_a_long_category_list_is_folded(bundled_release):
    body = (bundled_release("wvb") / "README.md").read_text(encoding="utf-8")
    examples = body[body.index("#### `examples`"):body.index("#### `probe`")]
    questions = pq.read_table(next((bundled_release("wvb") / "data" / "questions").glob("*.parquet")))
    values = sum(1 for kind in questions.column("kind").to_pylist() if kind == "value")
    assert f"<details><summary>one of {values} values</summary>`Q1`" in examples  # question_id, 239 in the paper
    assert "one of: `train`, `validation`, `test`" in examples  # a short list stays inline


# ----------------------------------------------------------------------------------------- what a reader meets first


def test_info_in_a_pipe_prints_one_line_per_record(bundled_release):
    release = bundled_release("wvb")
    result = CliRunner().invoke(app, ["info", str(release)])  # CliRunner's stdout is not a terminal
    assert result.exit_code == 0, result.output
    manifest = manifest_of(release)
    for item in manifest["inputs"]:
        assert any(item["name"] in line and item["sha256"] in line for line in result.output.splitlines())
    for config in rows_per_config(release):  # one table row per config and split, never wrapped mid-field
        assert any(f" {config} " in line and re.search(r"\b(yes|no)\b", line) for line in result.output.splitlines())
    assert "built from the bundled synthetic sample" in result.output


def test_top_level_help_gives_each_command_one_sentence():
    # a real process: CliRunner forces click's help to 80 columns, where long lines are cut with "..."
    result = subprocess.run([sys.executable, "-m", "culturebench.cli", "--help"], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "220"}, check=True)
    section = result.stdout[result.stdout.index("Commands:"):]
    rows = [line.strip() for line in section.splitlines()[1:] if line.strip()]
    assert len(rows) == len(app.registered_commands) + len(app.registered_groups)  # no description wraps
    for row in rows:
        assert row.endswith("."), row  # a whole sentence, not the first lines of a docstring


def test_publish_dry_run_works_offline(bundled_release, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on port 9 (discard)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["publish", str(bundled_release("wvb")), "--repo-id", "org/wvb", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "the Hub cannot be reached" in result.output and "planned against an empty repo" in result.output
    assert "would upload README.md" in result.output and "dry run: one commit" in result.output
    real = CliRunner().invoke(app, ["publish", str(bundled_release("wvb")), "--repo-id", "org/wvb"])
    assert real.exit_code == 2 and "cannot reach http://127.0.0.1:9" in real.output  # a real publish still needs it


def test_num_bytes_is_the_arrow_size_of_the_values_whatever_the_frame_layout():
    """``dataset_info``'s num_bytes: pyarrow's own ``nbytes`` of freshly built arrays (32-bit offsets), and equal for
    a filtered frame that still shares its parent's buffers."""
    import pyarrow as pa

    from culturebench.cards import arrow_bytes

    table = pa.table({
        "id": pa.array([1, 2, None, 4], pa.int64()),
        "small": pa.array([1, 2, 3, 4], pa.int8()),
        "text": pa.array(["a", "bé", None, "long text"], pa.string()),
        "flag": pa.array([True, False, True, True]),
        "choices": pa.array([[{"code": 1, "label": "x"}], [], [{"code": 2, "label": "yz"}, {"code": 3, "label": ""}],
                             [{"code": 4, "label": "w"}]],
                            pa.list_(pa.struct({"code": pa.int16(), "label": pa.string()}))),
    })
    assert arrow_bytes(pl.from_arrow(table)) == table.nbytes
    wide = pl.DataFrame({"text": [f"value {i}" * 20 for i in range(1000)], "n": range(1000)})
    kept = wide.filter(pl.col("n") % 10 == 0)
    assert arrow_bytes(kept) == pa.table({"text": pa.array(kept["text"].to_list(), pa.string()),
                                          "n": pa.array(kept["n"].to_list(), pa.int64())}).nbytes
    assert arrow_bytes(kept.with_columns(pl.col("text").cast(pl.Categorical))) == arrow_bytes(kept)
    with_null = kept.with_columns(pl.when(pl.col("n") != 10).then(pl.col("text")).alias("text"))
    as_enum = with_null.with_columns(pl.col("text").cast(pl.Enum(sorted(set(wide["text"])))))
    assert arrow_bytes(as_enum) == arrow_bytes(with_null)
