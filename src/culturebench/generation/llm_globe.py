"""LLM-GLOBE open prompts (Karinshak et al., Sec. 3.1.2, App. A): 90 generated prompts per dimension from the
10 human-written seeds and the dimension's rubric, each translated to zh-CN by the model.

Reads the seeds (numbers 1-10 of each dimension, or ``origin = human``) and the rubrics from ``SOURCE/llm_globe/``
(default: the bundled ``raw/``), writes ``RAW_DIR/llm_globe/open_prompts.csv`` (``Question_Num, Dimension,
prompt_EN, prompt_zhCN, origin, zh_translation``: seeds then generated prompts numbered 11-100) and copies the
rubric file(s) beside it, so ``culturebench build llm_globe --raw RAW_DIR`` reads them (with ``globe/`` and
``gics/`` from elsewhere). The Chinese texts of generated prompts are machine translations (column
``zh_translation``, and ``RAW_DIR/llm_globe/GENERATED.md``).

Per dimension, round r asks for the prompts still missing (App. A prompt, answers separated by ``,,``), parses
the answer (stray numbering, quotes, a trailing ``,,``), and drops empty items and exact or near duplicates
(rapidfuzz ratio >= 90) of each other and of the seeds; at most ``MAX_ROUNDS`` rounds. Then one translation
request per kept prompt (a failed translation is asked again once with another sample; else left empty).

Generation prompt: App. A of the paper, verbatim (facts/llm_globe.json ``generation``, with its source): the
dimension, its rubric (scale then characteristics), the ten seeds one per line, and the number asked (90 in the
first round, as printed; the number still missing in a later round).
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

from rich.console import Console

from culturebench.checkout import bundled_raw
from culturebench.contract import Generator
from culturebench.options import GenerateOptions
from culturebench.errors import InputError
from culturebench.words import counted
from culturebench.generation.common import (
    GenerationRun,
    NearDuplicates,
    clean_translation,
    has_cjk,
    junk_reason,
    only_filter,
    request,
    split_prompts,
    write_atomic,
)

TASK = "llm_globe"
PER_DIMENSION = 90
MAX_ROUNDS = 6
SEEDS_PER_DIMENSION = 10
MIN_WORDS = 4
GENERATION_TEMPERATURE = 0.8
PROMPT_SOURCE = "App. A of the paper, verbatim (facts/llm_globe.json: generation)"


def generation_template() -> str:
    from culturebench.builders.llm_globe import facts

    return facts()["generation"]["prompt_en"]


TRANSLATION_SYSTEM = "You are a professional English-to-Chinese translator."
TRANSLATION_PROMPT = (
    "Translate the following prompt into Simplified Chinese (zh-CN). Keep its meaning and tone. Output only the "
    "translation.\n\n{prompt}"
)


def _dimension_order() -> dict[str, int]:
    from culturebench.builders.llm_globe import dimension_numbers

    return dimension_numbers()


def read_sources(source: Path) -> tuple[dict[str, list], dict[str, object], list[Path]]:
    """(seed prompts per dimension, rubric per dimension, rubric files) from ``source/llm_globe``."""
    from culturebench.builders.llm_globe import dimension_lookup
    from culturebench.raw.globe import (
        LLM_GLOBE_FOLDER,
        input_files,
        is_open_prompts,
        is_rubrics,
        read_csv,
        read_open_prompts,
        read_rubrics,
    )

    lookup = dimension_lookup()
    seeds: dict[str, list] = {}
    rubrics: dict[str, object] = {}
    rubric_files = []
    for path in input_files(source / LLM_GLOBE_FOLDER, "*.csv", "LLM-GLOBE open prompt and rubric files"):
        table = read_csv(path, source)
        if is_open_prompts(table):
            for p in read_open_prompts(table, lookup):
                human = p.origin == "human" if p.origin else p.number <= SEEDS_PER_DIMENSION
                if human:
                    seeds.setdefault(p.dimension, []).append(p)
        elif is_rubrics(table):
            rubric_files.append(path)
            for r in read_rubrics(table, lookup):
                rubrics.setdefault(r.dimension, r)
    if not seeds:
        raise InputError("no human-written seed prompts (numbers 1-10 of a dimension, or origin = human)",
                         file=source / LLM_GLOBE_FOLDER)
    return seeds, rubrics, rubric_files


def generation_request(dimension: str, rubric, seeds: list, n: int, seed: int, round_index: int):
    rubric_text = (f"{rubric.scale_en}\n{rubric.characteristics_en}" if rubric is not None
                   else f"1 = low {dimension} ... 7 = high {dimension}")
    examples = "\n".join(p.prompt_en for p in seeds)
    text = generation_template().format(dimension=dimension, rubric=rubric_text, examples=examples, n=n)
    return request([("user", text)], temperature=GENERATION_TEMPERATURE, max_tokens=min(3000, 70 * n + 100),
                   seed=seed, sample_index=round_index)


def translation_request(prompt: str, seed: int, attempt: int):
    return request([("system", TRANSLATION_SYSTEM), ("user", TRANSLATION_PROMPT.format(prompt=prompt))],
                   temperature=0.0 if attempt == 0 else 0.7, max_tokens=400, seed=seed, sample_index=attempt)


def generate(backend, raw_dir: Path, *, source: Path, seed: int = 0, limit: int | None = None,
             only: set[str] | None = None, console: Console | None = None) -> dict:
    """Generate, translate and write; returns the summary (also in ``RAW_DIR/.generation/llm_globe.summary.json``)."""
    raw_dir, source = Path(raw_dir), Path(source)
    target_dir = raw_dir / "llm_globe"
    if target_dir.resolve() == (source / "llm_globe").resolve():
        raise InputError("--out must not be the seed source folder (the generated file would sit beside the "
                         "published prompts and repeat the seeds)", file=target_dir)
    seeds, rubrics, rubric_files = read_sources(source)
    order = _dimension_order()
    dimensions = sorted(seeds, key=lambda d: order[d])
    if only:
        from culturebench.builders.llm_globe import dimension_lookup, facts

        lookup = dimension_lookup()
        codes = {d["name"]: d["code"].casefold() for d in facts()["dimensions"]}
        dimensions = [d for d in dimensions if d.casefold() in only or codes.get(d) in only
                      or any(lookup.get(o) == d for o in only)]
        if not dimensions:
            raise InputError(f"--only {sorted(only)} names no dimension with seed prompts")
    wanted = min(PER_DIMENSION, limit) if limit else PER_DIMENSION
    run = GenerationRun(TASK, raw_dir, backend, console)
    run.announce(len(dimensions), "dimensions", MAX_ROUNDS, ", then one translation request per prompt kept (a "
                 "failed one asked once more)")
    kept: dict[str, list[str]] = {d: [] for d in dimensions}
    seen = {d: NearDuplicates() for d in dimensions}
    for d in dimensions:
        for p in seeds[d]:
            seen[d].add(p.prompt_en, f"seed {p.question_num}")
    per_round = []
    for round_index in range(MAX_ROUNDS):
        open_dims = [d for d in dimensions if len(kept[d]) < wanted]
        if not open_dims:
            break
        requests = [generation_request(d, rubrics.get(d), seeds[d], wanted - len(kept[d]), seed, round_index)
                    for d in open_dims]
        responses = run.ask(requests, f"llm_globe prompts, round {round_index + 1}")
        round_counts = {"round": round_index + 1, "asked": 0, "parsed": 0, "kept": 0}
        for d, req, resp in zip(open_dims, requests, responses):
            need = wanted - len(kept[d])
            items = split_prompts(resp.text)
            accepted, rejections = [], []
            for item in items:
                reason = None
                if not item:
                    reason = "empty"
                elif len(item.split()) < MIN_WORDS:
                    reason = f"fewer than {MIN_WORDS} words"
                else:
                    reason = seen[d].match(item) or junk_reason(item, req)
                if reason is None and len(accepted) >= need:
                    reason = "beyond the number asked"
                if reason is None:
                    label = f"{order[d]}-{SEEDS_PER_DIMENSION + len(kept[d]) + 1}"
                    seen[d].add(item, f"generated {label}")
                    kept[d].append(item)
                    accepted.append(item)
                else:
                    run.reject(reason.split(" of ")[0] if " of " in reason else reason)
                    rejections.append({"item": item, "reason": reason})
            run.log("generate", req, resp, dimension=d, round=round_index + 1, asked=need, parsed=items,
                    kept=accepted, rejected=rejections)
            round_counts["asked"] += need
            round_counts["parsed"] += len(items)
            round_counts["kept"] += len(accepted)
        per_round.append(round_counts)
    short = {d: wanted - len(kept[d]) for d in dimensions if len(kept[d]) < wanted}

    # translation: one request per prompt; a failed one asked again once with another sample
    flat = [(d, i, text) for d in dimensions for i, text in enumerate(kept[d])]
    translations: dict[tuple[str, int], str] = {}
    pending = flat
    for attempt in range(2):
        if not pending:
            break
        requests = [translation_request(text, seed, attempt) for _, _, text in pending]
        responses = run.ask(requests, "llm_globe translations" + (" (again)" if attempt else ""))
        failed = []
        zh_seen = {v for v in translations.values()}
        for (d, i, text), req, resp in zip(pending, requests, responses):
            zh = clean_translation(resp.text)
            reason = None
            if not zh:
                reason = "empty translation"
            elif not has_cjk(zh):
                reason = "translation has no Chinese characters"
            elif zh in zh_seen:
                reason = "translation identical to another prompt's"
            run.log("translate", req, resp, dimension=d, prompt_en=text, parsed=zh, attempt=attempt,
                    rejected=reason)
            if reason:
                run.reject(reason)
                failed.append((d, i, text))
            else:
                translations[(d, i)] = zh
                zh_seen.add(zh)
        pending = failed
    untranslated = len(pending)

    # write the raw file the builder reads
    model = getattr(backend, "model", "?")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["Question_Num", "Dimension", "prompt_EN", "prompt_zhCN", "origin", "zh_translation"])
    for d in dimensions:
        for p in seeds[d]:
            writer.writerow([p.question_num, d, p.prompt_en, p.prompt_zh or "", "human", "source file"])
        for i, text in enumerate(kept[d]):
            zh = translations.get((d, i), "")
            writer.writerow([f"{order[d]}-{SEEDS_PER_DIMENSION + i + 1}", d, text, zh, "generated",
                             f"machine ({model})" if zh else "none"])
    target_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(target_dir / "open_prompts.csv", buffer.getvalue())
    for path in rubric_files:
        if not (target_dir / path.name).exists():
            shutil.copyfile(path, target_dir / path.name)
    write_atomic(target_dir / "GENERATED.md", (
        "# Generated LLM-GLOBE open prompts (culturebench generate llm_globe)\n\n"
        f"`open_prompts.csv`: the human-written seeds (origin `human`, copied from `{source / 'llm_globe'}`) and "
        f"prompts generated by `{model}` (origin `generated`, numbers 11 and up), {wanted} per dimension asked.\n\n"
        "**The Chinese texts (`prompt_zhCN`) of generated prompts are machine translations** made by the same "
        "model with a translation prompt (column `zh_translation`); they were not reviewed by a translator.\n\n"
        f"Generation prompt: {PROMPT_SOURCE}. Log of every prompt, raw output, parse result and rejection: "
        "`../.generation/llm_globe.log.jsonl`.\n"))
    summary = {
        "output": str(target_dir / "open_prompts.csv"), "prompt_source": PROMPT_SOURCE, "seed": seed,
        "dimensions": dimensions, "wanted_per_dimension": wanted,
        "kept_per_dimension": {d: len(kept[d]) for d in dimensions}, "short_per_dimension": short,
        "rounds": per_round, "translated": len(translations), "untranslated": untranslated,
        "zh_translation": f"machine ({model})",
    }
    summary["summary_file"] = str(run.close(summary))
    return summary


class LLMGlobeGenerator(Generator):
    """``culturebench generate llm_globe``: the open prompts of every dimension, translated (Sec. 3.1.2)."""

    name = "llm_globe"
    title = "LLM-GLOBE open prompts per dimension from the seeds and rubrics, with zh-CN translations (Sec. 3.1.2)"

    def generate(self, backend, options: GenerateOptions, console: Console | None = None) -> tuple[str, list[Path]]:
        out = options.out
        s = generate(backend, out, source=Path(options.source or bundled_raw()), seed=options.seed,
                     limit=options.limit, only=only_filter(options.only), console=console)
        kept = sum(s["kept_per_dimension"].values())
        line = (f"llm_globe: {counted(kept, 'prompts')} kept over {counted(len(s['dimensions']), 'dimensions')} "
                f"({s['wanted_per_dimension']} wanted each; short: {s['short_per_dimension'] or 'none'}), "
                f"{s['translated']} translated; rejected: {s['rejected'] or 'none'}")
        return line, [Path(s["output"]), out / "llm_globe" / "GENERATED.md",
                      out / ".generation" / "llm_globe.log.jsonl", Path(s["summary_file"])]


GENERATOR = LLMGlobeGenerator()
