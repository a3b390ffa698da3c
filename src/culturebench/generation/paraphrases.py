"""Paraphrases of a benchmark's questions (issue #63, docs/robustness.md#wording-variants): ``culturebench generate
paraphrases NAME --from-release releases/NAME --out RAW_DIR``.

For every item of the release (``--limit``: the first N; ``--only``: item ids), the model writes ``--k``
paraphrases of the text the item asks (CDEval: the question; NormAd: the story's closing question; never the
options, labels or story facts: the benchmark's ``paraphrased`` function says which text), one request per item
(``PROMPT``, ours). Each candidate is dropped when it is empty, a refusal, a piece of the prompt
(``common.junk_reason``), the original again or a repeat of another candidate (case and punctuation ignored), then
judged by the checker (``--checker-model``, default the same model; ``CHECK``, ours, after the pattern of NormAd's
entailment check, App. A.2 Fig. 7: a yes / no question at temperature 0) and kept only on "yes". An item still short
of K is asked once more (``ROUNDS``; as another sample, which the backend sends with the next seed). Writes
``RAW_DIR/paraphrases/NAME.jsonl``
(``culturebench.raw.paraphrases``: one line per kept paraphrase, with the model that made it, the checker and the
seed), which ``culturebench build NAME --raw RAW_DIR`` turns into the release's ``variants`` config; the log and
summary are in ``RAW_DIR/.generation/`` (``common``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from culturebench.contract import Generator
from culturebench.options import GenerateOptions, option
from culturebench.errors import InputError
from culturebench.generation.common import (
    GenerationRun,
    clean_item,
    junk_reason,
    normal_key,
    only_filter,
    parse_yes_no,
    request,
    write_atomic,
)
from culturebench.raw import paraphrases as paraphrase_file

TASK = "paraphrases"
DEFAULT_K = 3
ROUNDS = 2
"""An item short of K paraphrases after the first answer is asked once more (ours)."""
PROMPT = ("Write {k} paraphrases of the question below. Each must ask exactly the same thing in other words, so "
          "that any answer to the question is an equally good answer to the paraphrase: keep its meaning, its "
          "person and its tense, and add or leave out no detail. Write one paraphrase per line and nothing else.\n\n"
          "Question: {text}")
"""Ours (no benchmark paper paraphrases its items)."""
TEMPERATURE = 0.7
"""Ours: varied wordings; the seed fixes them where the server honours it."""
MAX_TOKENS = 400
CHECK = ("Do the two questions below ask exactly the same thing, so that every answer to the first is an equally "
         "good answer to the second? Answer Yes or No.\n\nQuestion 1: {original}\nQuestion 2: {paraphrase}")
"""Ours, after NormAd's entailment check (Rao et al. 2024, App. A.2 Fig. 7: a yes / no judgement at temperature
0)."""
CHECK_MAX_TOKENS = 10


def paraphrase_request(text: str, k: int, seed: int, sample: int):
    return request([("user", PROMPT.format(k=k, text=text))], temperature=TEMPERATURE, max_tokens=MAX_TOKENS,
                   seed=seed, sample_index=sample)


def check_request(original: str, paraphrase: str, seed: int):
    return request([("user", CHECK.format(original=original, paraphrase=paraphrase))], temperature=0.0,
                   max_tokens=CHECK_MAX_TOKENS, seed=seed)


def candidates(answer: str | None) -> list[str]:
    """The paraphrases of an answer: one per non-empty line, numbering and quotes stripped."""
    return [clean_item(line) for line in (answer or "").replace("\r\n", "\n").split("\n") if clean_item(line)]


def generate(backend, checker, texts: dict[str, str], out: Path, benchmark: str, *, k: int = DEFAULT_K,
             seed: int = 0, console: Console | None = None) -> dict:
    """Paraphrase ``texts`` (item id -> text) into ``out/paraphrases/<benchmark>.jsonl``; returns the summary."""
    run = GenerationRun(f"{TASK}_{benchmark}", out, backend, console)
    kept: dict[str, list[str]] = {item: [] for item in texts}
    seen: dict[str, set[str]] = {item: {normal_key(text)} for item, text in texts.items()}
    made_by = getattr(backend, "model", None) or "model"
    checked_by = getattr(checker, "model", None) or made_by
    run.announce(len(texts), "items", ROUNDS, then=", each candidate then checked")
    for sample in range(ROUNDS):
        short = [item for item in texts if len(kept[item]) < k]
        asks = [paraphrase_request(texts[item], k, seed, sample) for item in short]
        pending: list[tuple[str, str]] = []
        for item, req, resp in zip(short, asks, run.ask(asks, f"{benchmark} paraphrases (round {sample + 1})")):
            found = candidates(resp.text)
            for text in found:
                reason = junk_reason(text, req) or ("the original or a repeat"
                                                    if normal_key(text) in seen[item] else None)
                if reason:
                    run.reject(reason)
                else:
                    seen[item].add(normal_key(text))
                    pending.append((item, text))
            run.log("paraphrase", req, resp, item=item, parsed=found)
        checks = [check_request(texts[item], text, seed) for item, text in pending]
        for (item, text), req, resp in zip(pending, checks, run.ask(checks, f"{benchmark} equivalence checks",
                                                                      checker)):
            verdict = parse_yes_no(resp.text or "")
            passed = verdict == "yes" and len(kept[item]) < k
            run.log("check", req, resp, item=item, paraphrase=text, verdict=verdict or "unparsed", kept=passed)
            if passed:
                kept[item].append(text)
            elif verdict != "yes":
                run.reject("not equivalent" if verdict == "no" else "check unparsed")
    lines = [json.dumps({"item": item, "original": texts[item], "index": i, "paraphrase": text,
                         "made_by": made_by, "checked_by": checked_by, "check": "yes", "seed": seed},
                        ensure_ascii=False)
             for item in sorted(texts) for i, text in enumerate(kept[item], start=1)]
    target = paraphrase_file.file_path(out, benchmark)
    if lines:
        write_atomic(target, "".join(line + "\n" for line in lines))
    summary = {"output": str(target) if lines else None, "benchmark": benchmark, "k": k, "seed": seed,
               "items": len(texts),
               "paraphrases": len(lines), "items_short_of_k": sum(len(v) < k for v in kept.values()),
               "made_by": made_by, "checked_by": checked_by}
    summary["summary_file"] = str(run.close(summary))
    return summary


@dataclass(frozen=True, kw_only=True)
class ParaphraseOptions(GenerateOptions):
    """``--limit``: the first N items of the release; ``--only``: item ids (comma-separated)."""

    k: int = option(DEFAULT_K, help="Paraphrases per item.")
    from_release: Path | None = option(help="The release whose items are paraphrased (default releases/NAME).")
    checker_model: str | None = option(help="The model that judges each paraphrase equivalent (default: --model).")
    checker_base_url: str | None = option(help="The checker's endpoint (default: --base-url).")

    def check(self) -> None:
        super().check()
        if self.k < 1:
            raise InputError(f"--k must be at least 1, got {self.k}")


class ParaphraseGenerator(Generator):
    """``culturebench generate paraphrases NAME``: K checked paraphrases of each item's question into
    ``RAW_DIR/paraphrases/NAME.jsonl``; ``texts`` is the benchmark's function giving, for a release folder, item
    id -> the text to paraphrase (each benchmark makes its own in its ``generators``)."""

    name = TASK
    Options = ParaphraseOptions

    def __init__(self, benchmark: str, texts: Callable[[Path], dict[str, str]], what: str) -> None:
        self.benchmark, self.texts, self.title = benchmark, texts, f"Paraphrases of each {what}, checked (issue #63)"

    def generate(self, backend, options: ParaphraseOptions, console: Console | None = None
                 ) -> tuple[str, list[Path]]:
        from culturebench.evaluate.runs.companions import companion_backend

        release = Path(options.from_release or Path("releases") / self.benchmark)
        texts = self.texts(release)
        only = only_filter(options.only)
        if only:
            texts = {i: t for i, t in texts.items() if i.casefold() in only}
        if options.limit is not None:
            texts = dict(list(texts.items())[:options.limit])
        if not texts:
            raise InputError("no item to paraphrase" + (f" for --only {options.only}" if only else ""), file=release)
        checker = backend if not options.checker_model else companion_backend(
            options.checker_model, options.checker_base_url or getattr(backend, "base_url", None), like=backend)
        s = generate(backend, checker, texts, options.out, self.benchmark, k=options.k, seed=options.seed,
                     console=console)
        line = (f"paraphrases {self.benchmark}: {s['paraphrases']} paraphrases of {s['items']} items "
                f"({s['items_short_of_k']} short of {s['k']}), made by {s['made_by']}, checked by "
                f"{s['checked_by']}; rejected: {s['rejected'] or 'none'}")
        return line, [Path(p) for p in (s["output"], s["log"], s["summary_file"]) if p]

