"""CDEval questionnaires (Wang et al., Sec. 3.1 Steps 2-3, Tables 5-6, App. A.2): for every Hofstede dimension x
domain, a zero-shot round (Table 5), then few-shot rounds (Table 6) whose two in-context examples are drawn (seeded)
from the cell's *initial samples*, the items accepted from its zero-shot answers (Sec. 3.1 Step 2: "randomly
selected examples from the initial samples"), never from items the few-shot rounds added; a cell whose zero-shot
answer gave no usable item is asked Table 5 again. Rounds go on until the cell has its target count
(``TARGET_PER_CELL``, or ``--limit``) or ``max_rounds`` rounds were asked.

The prompts are Tables 5 and 6 verbatim, kept in ``facts/cdeval.json`` (``generation``) with the segments the paper
underlines filled per dimension and domain (where the paper prints only the IDV / education example, the facts
file says which fillers are ours). Each answer must hold a JSON list of ``{"Question", "Option 1", "Option 2"}``
with Option 1 the dimension's target orientation. App. A.2's verification is a manual review; what a program can
check of it is done here (rejected: answers without JSON, malformed items, a key missing or empty, exact or near
duplicates of a question already in the cell (rapidfuzz ratio >= 90), (near) identical options) and the four
rules are written into the summary for the human reviewer. Writes ``RAW_DIR/cdeval/generated_CDEval.json`` (the
released format, read by ``culturebench build cdeval``) and reports Distinct-2 and Self-BLEU (Table 1's
definitions, the builder's functions) per dimension and overall.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from rich.console import Console

from culturebench.contract import Generator
from culturebench.options import GenerateOptions
from culturebench.errors import InputError
from culturebench.words import counted
from culturebench.generation.common import (
    GenerationRun,
    NearDuplicates,
    json_items,
    junk_reason,
    only_filter,
    request,
    similar,
    write_atomic,
)

TASK = "cdeval"
TARGET_PER_CELL = 70
"""Ours: about the released 2,953 items / 42 cells."""
TEMPERATURE = 0.9
"""Ours: the paper does not give GPT-4's generation settings."""
KEYS = ("Question", "Option 1", "Option 2")


def prompt_facts() -> dict:
    """``facts/cdeval.json`` ``generation``: Tables 5-6 and App. A.2, each with its source."""
    from culturebench.builders.cdeval import facts

    return facts()["generation"]


GENERATION = prompt_facts()
SYSTEM_PROMPT: str = GENERATION["system"]
"""Table 5 / Table 6 system message."""
ZERO_SHOT: str = GENERATION["zero_shot"]
"""Table 5 user message (placeholders: n, dimension, description, topic, domain, option_1, option_2)."""
FEW_SHOT: str = GENERATION["few_shot"]
"""Table 6 user message (placeholders as Table 5 without description, plus examples)."""
ZERO_SHOT_N: int = GENERATION["zero_shot_n"]
"""Table 5 asks for 5 questionnaires."""
FEW_SHOT_N: int = GENERATION["few_shot_n"]
"""Table 6 asks for 3 questionnaires."""
SHOTS: int = GENERATION["few_shot_examples"]
"""Table 6 shows two in-context examples (case1, case2)."""
PROMPT_SOURCE = GENERATION["source"]

def cells(only: set[str] | None = None) -> list[tuple[dict, str]]:
    """(dimension facts, domain) pairs in facts order; ``only`` keeps the named dimensions (codes) and domains."""
    from culturebench.builders.cdeval import domain_names, facts

    dims = facts()["dimensions"]
    domains = domain_names()
    if only:
        chosen_dims = [d for d in dims if d["code"].casefold() in only or d["name"].casefold() in only]
        chosen_domains = [x for x in domains if x.casefold() in only]
        unknown = only - {d["code"].casefold() for d in dims} - {d["name"].casefold() for d in dims} - {
            x.casefold() for x in domains}
        if unknown:
            raise InputError(f"--only names no CDEval dimension or domain: {sorted(unknown)}")
        dims = chosen_dims or dims
        domains = chosen_domains or domains
    return [(d, domain) for d in dims for domain in domains]


def user_message(dimension: dict, domain: str, n: int, examples: list[dict]) -> str:
    """Table 5 (no examples) or Table 6 with its underlined segments filled for a dimension (facts entry) and
    domain."""
    poles = dimension["generation_poles"]
    fields = {"n": n, "dimension": dimension["generation_name"], "topic": GENERATION["topics"].get(
        domain, GENERATION["default_topic"]), "domain": domain.lower(), "option_1": poles[0], "option_2": poles[1]}
    if not examples:
        return ZERO_SHOT.format(description=dimension["description"], **fields)
    shown = GENERATION["few_shot_example_separator"].join(
        GENERATION["few_shot_example"].format(**{key: json.dumps(e[k], ensure_ascii=False) for key, k in
                                                 zip(("question", "option_1", "option_2"), KEYS)})
        for e in examples)
    return FEW_SHOT.format(examples=shown, **fields)


def cell_request(dimension: dict, domain: str, n: int, examples: list[dict], seed: int, round_index: int):
    user = user_message(dimension, domain, n, examples)
    return request([("system", SYSTEM_PROMPT), ("user", user)], temperature=TEMPERATURE,
                   max_tokens=min(3000, 90 * n + 100), seed=seed, sample_index=round_index)


_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"'})


def answer_items(text: str) -> tuple[list | None, str | None]:
    """The JSON list of an answer (``json_items``); an answer that copies Tables 5-6's curly quotes is read with
    them made straight."""
    items, problem = json_items(text)
    if items is None or problem:
        straight, straight_problem = json_items(text.translate(_CURLY))
        if straight is not None and (items is None or len(straight) > len(items)):
            return straight, straight_problem
    return items, problem


def _item_problem(entry) -> str | None:
    if not isinstance(entry, dict):
        return "malformed item (not an object)"
    for key in KEYS:
        value = entry.get(key)
        if value is None:
            return f"malformed item (no {key!r})"
        if not isinstance(value, str) or not value.strip():
            return f"malformed item ({key!r} empty or not text)"
    return None


def statistics(items: list[dict]) -> dict:
    """Distinct-2 and Self-BLEU (the CDEval builder's functions) per dimension and overall."""
    from culturebench.builders.cdeval import distinct_n, prompt_tokens, self_bleu_scores

    def stats(group: list[dict]) -> dict:
        docs = [prompt_tokens(i["Question"], i["Option 1"], i["Option 2"]) for i in group]
        return {"items": len(group), "distinct_2": distinct_n(docs, 2),
                "self_bleu": math.fsum(self_bleu_scores(docs)) / len(docs) if len(docs) >= 2 else None}

    out = {"all": stats(items)}
    for code in dict.fromkeys(i["Dimension"] for i in items):
        out[code] = stats([i for i in items if i["Dimension"] == code])
    return out


def generate(backend, raw_dir: Path, *, seed: int = 0, limit: int | None = None, only: set[str] | None = None,
             target: int | None = None, max_rounds: int | None = None, console: Console | None = None) -> dict:
    """Generate every cell and write ``RAW_DIR/cdeval/generated_CDEval.json``; returns the summary."""
    raw_dir = Path(raw_dir)
    wanted = target or TARGET_PER_CELL
    if limit:
        wanted = min(wanted, limit)
    rounds_cap = max_rounds or (2 * math.ceil(wanted / FEW_SHOT_N) + 2)
    todo = cells(only)
    run = GenerationRun(TASK, raw_dir, backend, console)
    run.announce(len(todo), "cells", rounds_cap)
    kept: dict[tuple[str, str], list[dict]] = {(d["code"], dom): [] for d, dom in todo}
    initial: dict[tuple[str, str], list[dict]] = {key: [] for key in kept}  # the cell's zero-shot items
    seen = {key: NearDuplicates() for key in kept}
    per_round = []
    for round_index in range(rounds_cap):
        open_cells = [(d, dom) for d, dom in todo if len(kept[(d["code"], dom)]) < wanted]
        if not open_cells:
            break
        requests = []
        for d, dom in open_cells:
            have, pool = kept[(d["code"], dom)], initial[(d["code"], dom)]
            examples = []
            if pool:
                rng = random.Random(f"{seed}|{d['code']}|{dom}|{round_index}")
                examples = rng.sample(pool, min(SHOTS, len(pool)))
            batch = FEW_SHOT_N if examples else ZERO_SHOT_N
            requests.append(cell_request(d, dom, min(batch, wanted - len(have)), examples, seed, round_index))
        responses = run.ask(requests, f"cdeval questions, round {round_index + 1}")
        counts = {"round": round_index + 1, "cells": len(open_cells), "parsed": 0, "kept": 0}
        for (d, dom), req, resp in zip(open_cells, requests, responses):
            key = (d["code"], dom)
            zero_shot = not initial[key]
            need = wanted - len(kept[key])
            entries, problem = answer_items(resp.text)
            accepted, rejections = [], []
            if problem:
                run.reject("answer not valid JSON" if entries else "answer without a JSON list")
            for entry in entries or []:
                reason = _item_problem(entry)
                if reason is None:
                    q, o1, o2 = (" ".join(entry[k].split()) for k in KEYS)
                    if similar(o1, o2) is not None:
                        reason = "options (near) identical"
                    else:
                        reason = seen[key].match(q) or junk_reason(q, req)
                    if reason is None and len(accepted) >= need:
                        reason = "beyond the number asked"
                if reason is None:
                    item = {"Dimension": d["code"], "Domain": dom, "Question": q, "Option 1": o1, "Option 2": o2}
                    seen[key].add(q, f"{d['code']}/{dom} #{len(kept[key]) + 1}")
                    kept[key].append(item)
                    accepted.append(item)
                    if zero_shot:
                        initial[key].append(item)
                else:
                    run.reject(reason.split(" of ")[0] if " of " in reason else reason)
                    rejections.append({"item": entry, "reason": reason})
            run.log("generate", req, resp, dimension=d["code"], domain=dom, round=round_index + 1,
                    shots=not zero_shot, asked=need, parse_problem=problem,
                    parsed=len(entries or []), kept=accepted, rejected=rejections)
            counts["parsed"] += len(entries or [])
            counts["kept"] += len(accepted)
        per_round.append(counts)

    items = [item for key in kept for item in kept[key]]
    target_dir = raw_dir / "cdeval"
    target_dir.mkdir(parents=True, exist_ok=True)
    output = target_dir / "generated_CDEval.json"
    write_atomic(output, json.dumps(items, indent=4, ensure_ascii=False) + "\n")
    summary = {
        "output": str(output), "prompt_source": PROMPT_SOURCE, "seed": seed, "wanted_per_cell": wanted,
        "manual_verification": GENERATION["verification_rules"],
        "cells": [f"{code}/{dom}" for code, dom in kept], "items": len(items),
        "few_shot_pool": "each cell's zero-shot items (Sec. 3.1 Step 2: examples from the initial samples)",
        "initial_per_cell": {f"{code}/{dom}": len(v) for (code, dom), v in initial.items()},
        "kept_per_cell": {f"{code}/{dom}": len(v) for (code, dom), v in kept.items()},
        "short_per_cell": {f"{code}/{dom}": wanted - len(v) for (code, dom), v in kept.items() if len(v) < wanted},
        "rounds": per_round,
        "statistics": statistics(items) if items else {},
    }
    summary["summary_file"] = str(run.close(summary))
    return summary


class CDEvalGenerator(Generator):
    """``culturebench generate cdeval``: the questionnaire items of every dimension x domain (Sec. 3.1)."""

    name = TASK
    title = "CDEval questionnaire items per Hofstede dimension x domain (Sec. 3.1, Tables 5-6)"

    def generate(self, backend, options: GenerateOptions, console: Console | None = None) -> tuple[str, list[Path]]:
        out = options.out
        s = generate(backend, out, seed=options.seed, limit=options.limit, only=only_filter(options.only),
                     console=console)
        return _summary_line(s), [Path(s["output"]), out / ".generation" / "cdeval.log.jsonl", Path(s["summary_file"])]


GENERATOR = CDEvalGenerator()


def _summary_line(s: dict) -> str:
    overall = s["statistics"].get("all", {})

    def fmt(x):
        return "n/a" if x is None else f"{x:.3f}"

    return (f"cdeval: {counted(s['items'], 'items')} over {counted(len(s['cells']), 'cells')} "
            f"({s['wanted_per_cell']} wanted each; short: {counted(len(s['short_per_cell']), 'cells')}); "
            f"Distinct-2 {fmt(overall.get('distinct_2'))}, Self-BLEU {fmt(overall.get('self_bleu'))}; "
            f"rejected: {s['rejected'] or 'none'}")
