"""The NormAd authors' revised release, ``src/v2_fix_neutral`` of their repository (CC BY 4.0; every prompt verbatim,
with its settings, in ``culturebench/facts/normad_authors/v2_fix_neutral_prompts.json``), run on a stories file.

SOURCE/normad/*.{csv,jsonl} (+ SOURCE/cultural_atlas/)  ->  RAW_DIR/normad/normad_v2_fix_neutral.csv

The steps in the authors' order (their ``build_final_dataset.py``), each on neutral rows only:

1. ``swap`` and the Canada background: :func:`culturebench.builders.normad.revise_v2_fix_neutral` (the same
   deterministic step as ``build normad`` with ``revision: v2_swap_only``): Country / Background become the rule's
   culture, the story's move to Other Country / Other Background;
2. ``rot_value``: a row whose rule-of-thumb entailed the story's background (the authors' stage-1 flag
   ``entail_pred_temp0.0`` = 0.0; a file without it: ``Check RoT Entailed`` of ``generate normad`` names a row
   repaired after failing stage 1; a file with neither is asked stage 1 again, the story's background wanting "no")
   gets a new Rule-of-Thumb and Value anchored in its (post-swap) background;
3. ``canada``: Canada's gift-giving rows get a new Rule-of-Thumb and Value from Canada's Gift Giving background;
4. ``story``: a story that the row's background alone decides (Yes / No, not Neutral) is rewritten from the story's
   culture and checked again, up to three times; the last rewrite is kept, as the authors keep it;
5. ``explanation``: every neutral row's explanation is rewritten (the reply may be the authors' "WRONG").

A reply a step cannot read (the authors' scripts stop there) leaves the row as it was and is counted
(``unparsed`` per step). The output is the stories file's columns, the Other columns, ``Revision``
(``v2_fix_neutral``: the build then swaps nothing and names the revision) and ``V2 Steps`` (what changed the row).
"""

from __future__ import annotations

import csv
import io
import json
import re
from functools import cache
from pathlib import Path

from rich.console import Console

from culturebench.builders import normad as builder
from culturebench.contract import Generator
from culturebench.options import GenerateOptions
from culturebench.errors import InputError
from culturebench.generation import normad_prompts as prompts
from culturebench.generation.common import GenerationRun, request, write_atomic
from culturebench.io import input_files
from culturebench.raw.cultural_atlas import FOLDER as ATLAS_FOLDER
from culturebench.raw.cultural_atlas import read_atlas
from culturebench.raw.normad import OTHER_COLUMNS, STORIES_FOLDER, STORY_COLUMNS, read_stories

TASK = "normad_v2_fix"
OUTPUT_FILE = "normad_v2_fix_neutral.csv"
STEPS_COLUMN = "V2 Steps"
STAGE1_FLAG = "entail_pred_temp0.0"
"""The authors' stage-1 column (1.0 pass, 0.0 fail)."""
GENERATED_FLAG = "Check RoT Entailed"
"""``generate normad``'s verdict column: "... -> fixed ..." where stage 1 failed and stage 2 edited the row."""


@cache
def steps() -> dict:
    """The model steps' prompts and settings (``v2_fix_neutral_prompts.json``)."""
    return json.loads(prompts.authors_text("v2_fix_neutral_prompts.json"))


def _ask(step: str, text_or_messages, seed: int, sample_index: int = 0):
    spec = steps()[step]
    messages = [("user", text_or_messages)] if isinstance(text_or_messages, str) else text_or_messages
    return request(messages, temperature=float(spec["temperature"]), max_tokens=int(spec["max_tokens"]), seed=seed,
                   sample_index=sample_index)


def step_prompt(step: str, row: dict) -> str:
    """``step``'s prompt for a (post-swap) row: Country / Background the rule's culture, Other the story's."""
    return steps()[step]["template"].format(
        story=row["Story"], rot=row["Rule-of-Thumb"], value=row["Value"], country=row["Country"],
        background=row["Background"], other_country=row["Other Country"], other_background=row["Other Background"])


def story_check_messages(background: str, story: str) -> list[tuple[str, str]]:
    """validate_story_vs_background.py's conversation: the seven examples, then the row's background and story."""
    spec = steps()["story_check"]

    def turn(b: str, s: str) -> str:
        return f"Cultural background:\n{b}\n\nStory: {s}\n\n{spec['query']}"

    messages = []
    for example in spec["examples"]:
        messages += [("user", turn(example["background"], example["story"])), ("assistant", example["answer"])]
    return [*messages, ("user", turn(background.strip(), story.strip()))]


def parse_rot_value(text: str) -> tuple[str, str] | None:
    """(rule_of_thumb, value) from "Rule-of-Thumb: ..." and "Value: ..." lines (case ignored), else None."""
    rot = re.search(r"^Rule-of-Thumb:\s*(.+)$", text, flags=re.MULTILINE | re.IGNORECASE)
    value = re.search(r"^Value:\s*(.+)$", text, flags=re.MULTILINE | re.IGNORECASE)
    return (rot.group(1).strip(), value.group(1).strip()) if rot and value else None


def parse_judgment(text: str) -> str:
    """yes, no or neutral, as the authors' ``parse_judgment`` reads the story check's reply."""
    text = (text or "").strip().lower()
    first = text.replace(".", " ").split()[0] if text else ""
    if first in ("yes", "no", "neutral"):
        return first
    if "neutral" in text or "neither" in text or "irrelevant" in text:
        return "neutral"
    if text.startswith("yes"):
        return "yes"
    return "no" if text.startswith("no") else "neutral"


def parse_story_explanation(text: str) -> tuple[str, str] | None:
    """(story, explanation) of a rewrite ("Story: ..." up to "Explanation: ..."), else None."""
    story = re.search(r"^Story:\s*(.+?)(?=^Explanation:|\Z)", text, flags=re.MULTILINE | re.IGNORECASE | re.DOTALL)
    explanation = re.search(r"^Explanation:\s*(.+)$", text, flags=re.MULTILINE | re.IGNORECASE | re.DOTALL)
    if not story:
        return None
    return story.group(1).strip(), explanation.group(1).strip() if explanation else ""


def parse_explanation(text: str) -> str:
    match = re.search(r"^Explanation:\s*(.+)$", text, flags=re.MULTILINE | re.IGNORECASE | re.DOTALL)
    return match.group(1).strip() if match else text.strip()


def stage1_failed(row: dict, extra: dict) -> bool | None:
    """Whether the row's rule entailed the story's background (the authors' flag 0.0), from the file; None when
    the file does not say."""
    if extra.get(STAGE1_FLAG, "").strip():
        return extra[STAGE1_FLAG].strip() in ("0", "0.0")
    if extra.get(GENERATED_FLAG, "").strip():
        return "fixed" in extra[GENERATED_FLAG]
    return None


def read_source(source: Path) -> tuple[list, list]:
    stories = []
    for path in input_files(source / STORIES_FOLDER, (".csv", ".jsonl"), "NormAd stories files"):
        stories += read_stories(path, source)[0]
    if builder.file_revision(stories) is not None:
        raise InputError("the stories file is already revised (its Revision column says v2_fix_neutral)",
                         file=source / STORIES_FOLDER)
    items = read_atlas(source / ATLAS_FOLDER, source)[0] if (source / ATLAS_FOLDER).is_dir() else []
    return stories, items


def revise(backend, source: Path, out: Path, *, seed: int = 0, console: Console | None = None) -> dict:
    """Run every step on ``source``'s stories; write ``out/normad/OUTPUT_FILE``; returns the summary."""
    stories, items = read_source(source)
    swapped, report = builder.revise_v2_fix_neutral(stories, items)
    rows = [{**s.values, **(s.other or dict.fromkeys(OTHER_COLUMNS, ""))} for s in swapped]
    extras = [s.extra or {} for s in swapped]
    changed: list[list[str]] = [["swap"] if s.other and r["Gold Label"].strip().casefold() == "neutral" else []
                                for s, r in zip(swapped, rows)]
    neutral = [i for i, r in enumerate(rows) if r["Gold Label"].strip().casefold() == "neutral"]
    run = GenerationRun(TASK, out, backend, console)
    counts = {"neutral_rows": len(neutral),
              **{k: v for k, v in report.items() if k not in ("name", "model_steps")}}

    def where(i: int) -> dict:
        return {"row": swapped[i].row, "file": swapped[i].file, "country": rows[i]["Country"],
                "other_country": rows[i]["Other Country"]}

    # --- rot_value: rows whose rule entailed the story's background (stage 1 flag; asked again where unknown)
    known = {i: stage1_failed(rows[i], extras[i]) for i in neutral}
    unknown = [i for i in neutral if known[i] is None]
    stage1 = prompts.authors_validation()["stage1_rot"]
    asked = [request([("user", prompts.authors_entailment_prompt(rows[i]["Other Background"],
                                                                 rows[i]["Rule-of-Thumb"]))],
                     temperature=float(stage1["temperature"]), max_tokens=int(stage1["max_tokens"]), seed=seed)
             for i in unknown]
    for i, req, resp in zip(unknown, asked, run.ask(asked, "normad v2: stage-1 flags")):
        known[i] = prompts.authors_entailment_reply(resp.text) != stage1["wanted"]["neutral"]
        run.log("stage1_flag", req, resp, **where(i), failed=known[i])
    flagged = [i for i in neutral if known[i]]
    counts["stage1_failed"] = len(flagged)
    _rewrite_rot_value(run, "rot_value", flagged, rows, changed, counts, seed, where)
    canada = [i for i in neutral if builder.country_key(rows[i]["Country"]) == "canada"
              and builder.subaxis_key(rows[i]["Subaxis"]) == "gift_giving"]
    _rewrite_rot_value(run, "canada", canada, rows, changed, counts, seed, where)

    # --- story: a story the row's background alone decides is rewritten (three tries; the last rewrite is kept)
    pending = list(neutral)
    counts.update(stories_rejected=0, stories_rewritten=0, stories_still_rejected=0, story_unparsed=0)
    for attempt in range(int(steps()["story_rewrite"]["max_retries"]) + 1):
        asked = [_ask("story_check", story_check_messages(rows[i]["Background"], rows[i]["Story"]), seed)
                 for i in pending]
        rejected = []
        for i, req, resp in zip(pending, asked, run.ask(asked, f"normad v2: story check ({attempt + 1})")):
            judgment = parse_judgment(resp.text)
            run.log("story_check", req, resp, **where(i), attempt=attempt, judgment=judgment)
            if judgment != "neutral":
                rejected.append(i)
        if attempt == 0:
            counts["stories_rejected"] = len(rejected)
        if attempt == int(steps()["story_rewrite"]["max_retries"]) or not rejected:
            counts["stories_still_rejected"] = len(rejected) if attempt else 0
            break
        asked = [_ask("story_rewrite", step_prompt("story_rewrite", rows[i]), seed, sample_index=attempt)
                 for i in rejected]
        pending = []
        for i, req, resp in zip(rejected, asked, run.ask(asked, f"normad v2: story rewrites ({attempt + 1})")):
            parsed = parse_story_explanation(resp.text)
            run.log("story_rewrite", req, resp, **where(i), attempt=attempt, parsed=parsed is not None)
            if parsed is None:
                counts["story_unparsed"] += 1
                continue
            rows[i]["Story"] = parsed[0]
            if parsed[1]:
                rows[i]["Explanation"] = parsed[1]
            if "story" not in changed[i]:
                changed[i].append("story")
                counts["stories_rewritten"] += 1
            pending.append(i)

    # --- explanation: every neutral row's
    asked = [_ask("explanation", step_prompt("explanation", rows[i]), seed) for i in neutral]
    for i, req, resp in zip(neutral, asked, run.ask(asked, "normad v2: explanations")):
        rows[i]["Explanation"] = parse_explanation(resp.text)
        changed[i].append("explanation")
        run.log("explanation", req, resp, **where(i), wrong=rows[i]["Explanation"] == "WRONG")
    counts["explanations_rewritten"] = len(neutral)
    counts["explanations_wrong"] = sum(rows[i]["Explanation"] == "WRONG" for i in neutral)

    target = out / STORIES_FOLDER / OUTPUT_FILE
    write_atomic(target, revised_csv(rows, extras, changed))
    summary = {"output": str(target), "rows": len(rows), **counts}
    path = run.close(summary)
    summary["summary_file"] = str(path)
    summary["log"] = str(run.log_path)
    return summary


def _rewrite_rot_value(run: GenerationRun, step: str, targets: list[int], rows: list[dict],
                       changed: list[list[str]], counts: dict, seed: int, where) -> None:
    """Steps ``rot_value`` and ``canada``: a new Rule-of-Thumb and Value for each target row."""
    asked = [_ask(step, step_prompt(step, rows[i]), seed) for i in targets]
    counts[f"{step}_unparsed"] = 0
    for i, req, resp in zip(targets, asked, run.ask(asked, f"normad v2: {step}")):
        parsed = parse_rot_value(resp.text)
        run.log(step, req, resp, **where(i), parsed=parsed is not None,
                old={"rule_of_thumb": rows[i]["Rule-of-Thumb"], "value": rows[i]["Value"]})
        if parsed is None:
            counts[f"{step}_unparsed"] += 1
            continue
        rows[i]["Rule-of-Thumb"], rows[i]["Value"] = parsed
        changed[i].append(step)
    counts[f"{step}_regenerated"] = len(targets) - counts[f"{step}_unparsed"]


def revised_csv(rows: list[dict], extras: list[dict], changed: list[list[str]]) -> str:
    columns = ["ID", *STORY_COLUMNS, *OTHER_COLUMNS, builder.REVISION_COLUMN, STEPS_COLUMN]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row, extra, steps_done in zip(rows, extras, changed):
        full = {**row, "ID": extra.get("ID", ""), builder.REVISION_COLUMN: "v2_fix_neutral",
                STEPS_COLUMN: "; ".join(steps_done)}
        writer.writerow([full[c] for c in columns])
    return buffer.getvalue()


class RevisionGenerator(Generator):
    """``culturebench generate normad_v2_fix --out RAW_DIR --source DIR``: DIR/normad/ holds the stories file (with
    Other Country / Other Background) and DIR/cultural_atlas/ the atlas pages (Canada's Gift Giving); the revised
    file goes to RAW_DIR/normad/, which must not be DIR/normad/ (the build would read both)."""

    name = TASK
    title = "The NormAd authors' revised release (src/v2_fix_neutral) of a stories file"

    def generate(self, backend, options: GenerateOptions, console: Console | None = None) -> tuple[str, list[Path]]:
        for name in ("limit", "only"):
            if getattr(options, name):
                raise InputError(f"--{name} does not apply to normad_v2_fix (it revises a whole stories file)")
        out = options.out
        source = Path(options.source or out)
        if (source / STORIES_FOLDER).resolve() == (out / STORIES_FOLDER).resolve():
            raise InputError("the revised stories file would sit beside the original in the folder the build "
                             "reads: give the stories' folder as --source and another --out",
                             file=out / STORIES_FOLDER)
        summary = revise(backend, source, out, seed=options.seed, console=console)
        message = (f"normad_v2_fix: {summary['rows']} rows, {summary['neutral_rows']} neutral swapped; rules "
                   f"regenerated {summary['rot_value_regenerated']} (stage 1 failed {summary['stage1_failed']}), "
                   f"Canada {summary['canada_regenerated']}; stories rewritten {summary['stories_rewritten']} of "
                   f"{summary['stories_rejected']} rejected; explanations {summary['explanations_rewritten']}")
        return message, [Path(summary["output"]), Path(summary["log"]), Path(summary["summary_file"])]


GENERATOR = RevisionGenerator()
