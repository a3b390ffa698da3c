"""``culturebench diff OLD NEW`` (issue #53): rows added, removed and changed per config and split, matched on the
schema's key columns; what the scores depend on; the "Changes since" section ``build --previous`` writes; the
diff ``publish`` shows before it uploads; and one-line errors for another benchmark or a damaged release."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from culturebench.cli import app
from conftest import REPO, SAMPLE_RAW, one_line_error

runner = CliRunner()
STORIES = Path("normad") / "SAMPLE_normad_etiquette.csv"


def read_rows(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames), list(reader)


def write_rows(path: Path, header: list[str], rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        writer.writerows(rows)


def gold_shares(rows: list[dict]) -> dict[str, Counter]:
    """Gold labels per country of the raw rows, each (country, story) once (the builder quarantines repeats)."""
    seen, shares = set(), {}
    for row in rows:
        if (row["Country"], row["Story"]) not in seen:
            seen.add((row["Country"], row["Story"]))
            shares.setdefault(row["Country"], Counter())[row["Gold Label"]] += 1
    return shares


@pytest.fixture(scope="module")
def revised(tmp_path_factory) -> dict:
    """The bundled NormAd sample as is, and rebuilt from a copy of raw/ with the explanation of one story and the
    rule of thumb of another edited, one story dropped and one new story."""
    from culturebench import registry
    from culturebench.release import build_release

    root = tmp_path_factory.mktemp("normad-revision")
    raw = Path(shutil.copytree(SAMPLE_RAW, root / "raw"))
    header, rows = read_rows(raw / STORIES)
    original = [dict(r) for r in rows]
    rows[0]["Explanation"] += " Being early is as awkward as being late."
    rows[4]["Rule-of-Thumb"] = "Take a form from a teacher with both hands."
    dropped = rows.pop(9)
    new = dict(rows[5], ID="99", Story="Tomas brought flowers to a dinner and left them at the door without a "
                                       "word. Is what Tomas did socially acceptable?", **{"Gold Label": "no"})
    rows.append(new)
    write_rows(raw / STORIES, header, rows)
    old, _ = build_release(registry.benchmark("normad"), SAMPLE_RAW, root / "old", seed=0, progress=lambda stage: None)
    rebuilt, _ = build_release(registry.benchmark("normad"), raw, root / "new", seed=0, progress=lambda stage: None)
    return {"old": old, "new": rebuilt, "root": root, "raw": raw, "original": original, "edited": rows,
            "dropped": dropped, "added": new}


def run_diff(old: Path | str, new: Path | str, out: Path):
    return runner.invoke(app, ["diff", str(old), str(new), "--out", str(out)])


def test_a_revised_normad_sample_gives_one_added_one_removed_and_two_changed_stories(revised, tmp_path):
    result = run_diff(revised["old"], revised["new"], tmp_path / "d")
    assert result.exit_code == 0, result.output
    assert "stories/test: 1 added, 1 removed, 2 changed (rule_of_thumb 1, explanation 1)" in result.output
    assert "atlas/full: unchanged" in result.output
    written = json.loads((tmp_path / "d" / "diff.json").read_text())
    assert written["changed"] is True
    [stories] = [t for t in written["tables"] if t["config"] == "stories" and t["split"] == "test"]
    assert (stories["added"], stories["removed"], stories["changed"]) == (1, 1, 2)
    assert stories["changed_by_column"] == {"rule_of_thumb": 1, "explanation": 1}
    [atlas] = [t for t in written["tables"] if t["config"] == "atlas"]
    assert (atlas["added"], atlas["removed"], atlas["changed"]) == (0, 0, 0)
    assert not any(atlas["columns"][k] for k in ("added", "removed", "retyped"))
    # the examples quote the edits
    [explanation] = stories["examples"]["changed"]["explanation"]
    assert "courtesy. Being early is as awkward" in explanation["new"]
    assert "Being early" not in explanation["old"] and "courtesy." in explanation["old"]
    [rule] = stories["examples"]["changed"]["rule_of_thumb"]
    assert rule["new"] == revised["edited"][4]["Rule-of-Thumb"] and rule["old"] == revised["original"][4]["Rule-of-Thumb"]
    # gold-label shares per country: the counts of the raw files, before and after
    gold = written["score_inputs"]["gold labels per country"]
    before, after = gold_shares(revised["original"]), gold_shares(revised["edited"])
    moved = {c for c in before.keys() | after.keys() if before.get(c) != after.get(c)}
    assert moved == {revised["dropped"]["Country"], revised["added"]["Country"]}
    assert {g["group"] for g in gold["top"]} == moved and gold["groups_distribution_changed"] == len(moved)
    for group in gold["top"]:
        p, q = before[group["group"]], after[group["group"]]
        total_variation = sum(abs(p[k] / p.total() - q[k] / q.total()) for k in p.keys() | q.keys()) / 2
        assert group["distance"] == pytest.approx(total_variation)
    # the raw input that changed, and diff.md says the same as the summary
    assert [i["name"] for i in written["provenance"]["inputs_changed"]] == [STORIES.as_posix()]
    md = (tmp_path / "d" / "diff.md").read_text()
    assert "`explanation` changed in 1 rows" in md and "### atlas / full" in md


def test_a_release_diffed_with_itself_reports_no_change(revised, tmp_path):
    result = run_diff(revised["new"], revised["new"], tmp_path / "d")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "no change"
    written = json.loads((tmp_path / "d" / "diff.json").read_text())
    assert written["changed"] is False
    assert all(t["added"] == t["removed"] == t["changed"] == 0 for t in written["tables"])


@pytest.mark.parametrize("name", ["wvb", "cdeval", "llm_globe", "socialcc"])
def test_every_benchmarks_sample_diffed_with_itself_is_no_change(bundled_release, name, tmp_path):
    """Each benchmark declares its keys and score inputs; SocialCC's scenarios without a value country (null
    groups) match themselves."""
    result = run_diff(bundled_release(name), bundled_release(name), tmp_path / "d")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "d" / "diff.json").read_text())
    assert written["changed"] is False and result.output.splitlines()[0] == "no change"
    assert written["score_inputs"] and "not_compared" not in written["score_inputs"]
    assert all(s["groups_old"] == s["groups_new"] > 0 for s in written["score_inputs"].values())


def test_another_benchmark_is_one_line_and_exit_2(revised, bundled_release, tmp_path):
    line = one_line_error(run_diff(revised["old"], bundled_release("cdeval"), tmp_path / "d"))
    assert "'normad'" in line and "'cdeval'" in line and "one benchmark" in line
    assert not (tmp_path / "d" / "diff.json").exists()


def test_a_damaged_release_is_one_line_and_exit_2(revised, tmp_path):
    damaged = Path(shutil.copytree(revised["new"], tmp_path / "normad"))
    shard = next((damaged / "data" / "stories").iterdir())
    shard.write_bytes(shard.read_bytes()[:-9] + b"corrupted")
    line = one_line_error(run_diff(revised["old"], damaged, tmp_path / "d"))
    assert shard.name in line and "sha256" in line


def test_build_previous_writes_the_changes_into_card_and_manifest(revised, tmp_path):
    out = tmp_path / "releases"
    result = runner.invoke(app, ["build", "normad", "--raw", str(revised["raw"]), "--out", str(out),
                                 "--previous", str(revised["old"])])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "normad" / "manifest.json").read_text())
    changes = manifest["changes"]
    assert changes["changed"] is True and changes["previous"]["release"] == str(revised["old"])
    assert "stories/test: 1 added, 1 removed, 2 changed (rule_of_thumb 1, explanation 1)" in changes["lines"]
    card = (out / "normad" / "README.md").read_text()
    assert f"## Changes since {revised['old']}'s version" in card
    assert "stories/test: 1 added, 1 removed, 2 changed" in card
    # the section renders from the manifest alone (``audit`` re-renders the card from it)
    from culturebench.cards import changes_section

    assert changes_section(manifest) in card and changes_section({}) == ""


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants

    from hub_standin import HubStandIn

    with HubStandIn() as server:
        monkeypatch.setenv("HF_TOKEN", "hf_standinSECRETtoken0123456789")
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)  # the stand-in speaks LFS only
        yield server


def test_publish_shows_the_diff_against_the_hubs_current_revision(revised, hub):
    first = runner.invoke(app, ["publish", str(revised["old"]), "--repo-id", "org/normad"])
    assert first.exit_code == 0, first.output
    assert "changes since" not in first.output  # a new repo: nothing to compare with
    writes = len(hub.writes())
    dry = runner.invoke(app, ["publish", str(revised["new"]), "--repo-id", "org/normad", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert len(hub.writes()) == writes  # a dry run sends nothing
    lines = dry.output.splitlines()
    assert ("changes since org/normad@main: stories/test: 1 added, 1 removed, 2 changed (rule_of_thumb 1, "
            "explanation 1)") in lines
    assert not any("atlas" in line for line in lines if line.startswith("changes since"))  # withheld: not compared
    # shown before anything is sent, then published; the same release again shows no change
    real = runner.invoke(app, ["publish", str(revised["new"]), "--repo-id", "org/normad"])
    assert real.exit_code == 0, real.output
    assert real.output.index("changes since") < real.output.index("committed")
    again = runner.invoke(app, ["publish", str(revised["new"]), "--repo-id", "org/normad", "--dry-run"])
    assert "changes since org/normad@main: no change" in again.output.splitlines()


@pytest.mark.slow
def test_bench_tiny_diffs_the_wvb_sample_without_one_country(release_diff_tiny):
    """bench/release_diff.py --tiny: the rows the diff says were removed are the dropped country's, counted in
    OLD's parquet; its answer groups are removed and no other country's distribution moves. Slow: the bench's two
    WVB builds, diff and validate as processes (``release_diff_tiny``: once per run, shared with test_benches)."""
    import polars as pl

    done = release_diff_tiny
    folder = done.kept
    assert done.returncode == 0, done.stderr[-2000:]
    assert "median diff" in done.stdout and "tree RSS" in done.stdout
    written = json.loads((folder / "diff" / "diff.json").read_text())
    old = folder / "old" / "wvb"
    participants = pl.read_parquet(old / "data" / "participants" / "*.parquet")
    kept = pl.read_parquet(folder / "new" / "wvb" / "data" / "participants" / "*.parquet")
    [gone] = set(participants["country"]) - set(kept["country"])
    lost = participants.filter(pl.col("country") == gone)
    removed = {t["split"]: t["removed"] for t in written["tables"] if t["config"] == "participants"}
    assert removed == {split: lost.filter(pl.col("split") == split).height for split in ("train", "validation", "test")}
    examples = pl.read_parquet(old / "data" / "examples" / "*.parquet").join(lost.select("participant_id"),
                                                                             on="participant_id")
    assert sum(t["removed"] for t in written["tables"] if t["config"] == "examples") == examples.height
    scores = written["score_inputs"]["answers per question and country"]
    assert scores["groups_removed"] == examples["question_id"].n_unique()
    assert scores["groups_distribution_changed"] == 0 and scores["groups_added"] == 0


def test_the_docs_worked_example_runs_as_written_and_prints_what_the_docs_show(tmp_path, monkeypatch):
    """docs/release-format.md's worked example: its commands run as written (the edit step as its comment and text
    describe it) in a folder holding a copy of raw/, and the diff prints exactly the docs' text block."""
    import shlex

    page = (REPO / "docs" / "release-format.md").read_text(encoding="utf-8")
    example = page.split("### Worked example", 1)[1]
    commands = example.split("```bash", 1)[1].split("```", 1)[0].strip().splitlines()
    shown = example.split("The diff prints:", 1)[1].split("```text", 1)[1].split("```", 1)[0].strip().splitlines()
    shutil.copytree(SAMPLE_RAW, tmp_path / "raw")
    monkeypatch.chdir(tmp_path)
    printed = []
    for command in commands:
        words = shlex.split(command.split("#", 1)[0])
        if words[0] == "cp":  # cp -r raw raw_v2, then the edits the docs describe
            shutil.copytree(words[2], words[3])
            header, rows = read_rows(Path(words[3]) / STORIES)
            rows[0]["Explanation"] += " Being early is as awkward as being late."
            rows[4]["Rule-of-Thumb"] = "Take a form from a teacher with both hands."
            rows.pop(9)
            rows.append(dict(rows[5], ID="99", Story="Tomas brought flowers to a dinner and left them at the door "
                             "without a word. Is what Tomas did socially acceptable?", **{"Gold Label": "no"}))
            write_rows(Path(words[3]) / STORIES, header, rows)
            continue
        assert words[0] == "culturebench", command
        result = runner.invoke(app, words[1:])
        assert result.exit_code == 0, (command, result.output)
        printed = [line for line in result.output.splitlines() if not line.startswith("  wrote ")]
    assert printed == shown
