"""The authors' revised release (src/v2_fix_neutral) run by ``culturebench generate normad_v2_fix`` against the
scripted server: the swap, each model step on the rows the authors' scripts pick, the revised file, and the build
reading it without swapping again."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from culturebench import registry
from culturebench.builders import normad as builder
from culturebench.options import GenerateOptions
from culturebench.errors import InputError
from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.generation import normad_v2_fix as v2
from scripted_server import ScriptedServer

REPO = Path(__file__).resolve().parents[1]
QUERY_END = "When unsure, answer Neutral. Prefer Neutral over Yes/No."


def reply(prompt: str, body: dict) -> str:
    last = body["messages"][-1]["content"]
    if last.endswith("entailed by the background? Answer with Yes or No\n"):  # stage 1, for a row without a flag
        return "No"
    if last.startswith("Task: You will be given a story, a rule-of-thumb, and an abstracted value."):
        return "Sure.\nRule-of-Thumb: NEW rule.\nValue: NEW value."
    if last.startswith("Task: Generate a Rule-of-Thumb and Value for a neutral-label example."):
        return "Rule-of-thumb: CANADA rule.\nValue: CANADA value."
    if last.endswith(QUERY_END):  # the story check: "RELEVANT" stories are decided by the background
        story = last.split("\n\nStory: ")[1]
        return "No." if "RELEVANT" in story else "Neutral"
    if last.startswith("Task: Write a short story for a Neutral gold-label example."):
        return "Story: Sam brought tea.\nIs what Sam did socially acceptable?\nExplanation: Unrelated norm."
    if last.startswith("Task: Write an explanation"):
        return "Explanation: The rule comes from elsewhere."
    raise AssertionError(f"unexpected prompt: {last[:80]!r}")


def stories_with_others(raw: Path) -> list[dict]:
    with open(REPO / "raw" / "normad" / "SAMPLE_normad_etiquette.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    background = {(r["Country"], r["Subaxis"]): r["Background"] for r in rows}
    for row in rows:
        row.update({"Other Country": "", "Other Background": "", v2.STAGE1_FLAG: ""})
    rows[2].update({"Other Country": "kestrava", "Other Background": background[("kestrava", "gift_giving")],
                    v2.STAGE1_FLAG: "0.0"})  # flagged by the authors' stage 1
    rows[10].update({"Other Country": "veloria", "Other Background": background[("veloria", "visiting")],
                     "Story": "Ana arrived early RELEVANT. Is what Ana did socially acceptable?"})  # no flag: asked
    canada = {**rows[2], "ID": "99", "Story": "Tom gave a knife. Is what Tom did socially acceptable?",
              "Other Country": "canada", "Other Background": "### Gift Giving\n- old text", v2.STAGE1_FLAG: "1.0"}
    rows.append(canada)
    folder = raw / "normad"
    folder.mkdir(parents=True)
    with open(folder / "stories.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    shutil.copytree(REPO / "raw" / "cultural_atlas", raw / "cultural_atlas")
    return rows


def test_generate_normad_v2_fix_runs_the_authors_steps(tmp_path: Path) -> None:
    assert "normad_v2_fix" in registry.generators()
    source, out = tmp_path / "source", tmp_path / "out"
    given = stories_with_others(source)
    with ScriptedServer(reply=reply) as server:
        backend = OpenAIBackend("scripted", base_url=server.base_url, concurrency=4, max_retries=1)
        line, written = v2.GENERATOR.generate(backend, GenerateOptions(out=out, source=source))
    summary = json.loads((out / ".generation" / "normad_v2_fix.summary.json").read_text())
    assert summary["neutral_rows"] == 3 and summary["neutral_rows_swapped"] == 3
    assert summary["stage1_failed"] == 1 and summary["rot_value_regenerated"] == 1  # the flagged row only
    assert summary["canada_regenerated"] == 1 and summary["canada_gift_giving_without_atlas_page"] == 1
    assert summary["stories_rejected"] == 1 and summary["stories_rewritten"] == 1
    assert summary["stories_still_rejected"] == 0 and summary["explanations_rewritten"] == 3
    with open(out / "normad" / v2.OUTPUT_FILE, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(given) and {r["Revision"] for r in rows} == {"v2_fix_neutral"}
    flagged, relevant, canada = rows[2], rows[10], rows[-1]
    assert (flagged["Country"], flagged["Other Country"]) == ("kestrava", "veloria")  # swapped
    assert (flagged["Rule-of-Thumb"], flagged["Value"]) == ("NEW rule.", "NEW value.")
    assert flagged["V2 Steps"] == "swap; rot_value; explanation"
    assert relevant["Story"] == "Sam brought tea.\nIs what Sam did socially acceptable?"
    assert relevant["Rule-of-Thumb"] == given[10]["Rule-of-Thumb"]  # stage 1 said "no": the rule stays
    assert (canada["Country"], canada["Rule-of-Thumb"]) == ("canada", "CANADA rule.")
    assert {r["Explanation"] for r in (flagged, relevant, canada)} == {"The rule comes from elsewhere."}
    assert rows[0] == {**{k: given[0][k] for k in rows[0] if k in given[0]}, "Revision": "v2_fix_neutral",
                       "V2 Steps": ""}  # a yes / no row is untouched
    log = [json.loads(x) for x in (out / ".generation" / "normad_v2_fix.log.jsonl").read_text().splitlines()]
    check = next(e for e in log if e["kind"] == "story_check")
    assert len(check["messages"]) == 15 and check["sampling"]["max_tokens"] == 5
    assert [e["kind"] for e in log].count("stage1_flag") == 1  # only the row without a flag is asked
    assert "normad_v2_fix" in line and written[0] == out / "normad" / v2.OUTPUT_FILE

    # the build reads the revised file as revised: no second swap, the revision named
    shutil.copytree(source / "cultural_atlas", out / "cultural_atlas")
    shutil.copytree(REPO / "raw" / "inglehart_welzel", out / "inglehart_welzel")  # the fictional countries' zones
    built = builder.build(out, 0, lambda stage: None, builder.Options(revision="v2_fix_neutral"))
    assert built.provenance["revision"]["applied_by"].startswith("culturebench generate normad_v2_fix")
    table = built.tables["stories"]["test"]
    assert table.filter(table["story"] == flagged["Story"])["country"].to_list() == ["kestrava"]


def test_parsers_read_as_the_authors_scripts() -> None:
    assert v2.parse_judgment("Neutral.") == "neutral" and v2.parse_judgment("No, because") == "no"
    assert v2.parse_judgment("It is irrelevant") == "neutral" and v2.parse_judgment("Hmm") == "neutral"
    assert v2.parse_rot_value("Value: v\nrule-of-thumb: r") == ("r", "v") and v2.parse_rot_value("r and v") is None
    assert v2.parse_story_explanation("Story: A.\nB?\nExplanation: C.") == ("A.\nB?", "C.")
    assert v2.parse_explanation("No heading") == "No heading"


def test_same_folder_and_revised_input_are_refused(tmp_path: Path) -> None:
    stories_with_others(tmp_path / "raw")
    with pytest.raises(InputError, match="beside the original"):
        v2.GENERATOR.generate(None, GenerateOptions(out=tmp_path / "raw"))
    with pytest.raises(InputError, match="does not apply"):
        v2.GENERATOR.generate(None, GenerateOptions(out=tmp_path / "o", source=tmp_path / "raw", limit=3))
