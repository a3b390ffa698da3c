"""Shared plumbing of the generators: the run folder, the log, the cache and resume, and parsing helpers.

A generator writes into ``RAW_DIR`` (the folder the builders read) and keeps its working state beside it:

```
RAW_DIR/.generation/cache.sqlite          every model response, keyed like `evaluate`'s cache (resume)
RAW_DIR/.generation/<task>.log.jsonl      one line per model call: prompt, raw output, parse result, rejections
RAW_DIR/.generation/<task>.summary.json   counts (asked, kept, rejected by reason), statistics, token totals
```

Every model call goes through :func:`culturebench.evaluate.runs.runner.run_requests` (same client, cache, retries and
token accounting as ``evaluate``). Request lists are built deterministically from the inputs, the seed and the
responses already received, so a killed generator restarted with the same command makes the same requests and
gets every one it already asked from the cache: it re-asks nothing. The log is rewritten by each run from the
start (answers from the cache are logged again), so after a finished run it is complete.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from culturebench.chat import Backend, ChatRequest, ChatResponse, SamplingParams
from culturebench.evaluate.runs.cache import ResponseCache
from culturebench.evaluate.runs.runner import RunStats, run_requests

STATE_FOLDER = ".generation"
GENERATE_TRUNCATION = ("generate's token limits are its task's (sized to the items asked for): a model that writes "
                       "longer answers loses items, rejected or asked again (RAW_DIR/.generation/TASK.log.jsonl "
                       "holds the answers)")
"""What the truncation warning advises for ``generate``, which has no --max-tokens."""
NEAR_DUPLICATE_RATIO = 90.0
"""rapidfuzz ``fuzz.ratio`` (0-100) on normalised texts at or above which two texts count as near duplicates."""


# --------------------------------------------------------------------------------------------------- the run


@dataclass
class GenerationRun:
    """One generator run into ``raw_dir``: ``ask`` sends requests (cache first), ``log`` writes one JSON line,
    ``reject`` counts a rejection reason; ``close`` writes the summary."""

    task: str
    raw_dir: Path
    backend: Backend
    console: Console | None = None
    rejected: Counter = field(default_factory=Counter)
    totals: RunStats = field(default_factory=RunStats)

    def __post_init__(self) -> None:
        self.raw_dir = Path(self.raw_dir)
        self.state = self.raw_dir / STATE_FOLDER
        self.state.mkdir(parents=True, exist_ok=True)
        self.cache = ResponseCache(self.state / "cache.sqlite")
        self.log_path = self.state / f"{self.task}.log.jsonl"
        self._log = self.log_path.open("w", encoding="utf-8")
        self.console = self.console or Console(stderr=True)

    def ask(self, requests: Sequence[ChatRequest], description: str, backend: Backend | None = None
            ) -> list[ChatResponse]:
        """The responses of ``backend`` (default: the run's) to ``requests``, from the cache where it has them."""
        if not requests:
            return []
        result = run_requests(backend or self.backend, requests, self.cache, description=description, console=self.console,
                              truncation_remedy=GENERATE_TRUNCATION)
        s, t = result.stats, self.totals
        t.n_requests += s.n_requests
        t.n_cached += s.n_cached
        t.n_queried += s.n_queried
        t.retries += s.retries
        t.prompt_tokens += s.prompt_tokens
        t.completion_tokens += s.completion_tokens
        t.errors += s.errors
        t.wall_s += s.wall_s
        if s.cost is not None:
            t.cost = (t.cost or 0.0) + s.cost
        return result.responses

    def log(self, kind: str, request: ChatRequest | None, response: ChatResponse | None, **fields: Any) -> None:
        entry: dict[str, Any] = {"task": self.task, "kind": kind}
        if request is not None:
            entry["messages"] = request.message_dicts()
            entry["sampling"] = {"temperature": request.sampling.temperature,
                                 "max_tokens": request.sampling.max_tokens, "seed": request.sampling.seed}
            entry["sample_index"] = request.sample_index
        if response is not None:
            entry["output"] = response.text
            entry["finish_reason"] = response.finish_reason
        entry.update(fields)
        self._log.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._log.flush()

    def announce(self, groups: int, group: str, rounds: int, then: str = "") -> None:
        """Before the first request, the run's size: one request per ``group`` (plural noun) still short of its
        target in each of at most ``rounds`` rounds (``then``: what follows, e.g. translations)."""
        from culturebench.evaluate.runs.limit import counted

        at_most = f"at most {counted(groups * rounds, 'requests')}" if rounds > 1 else counted(groups, "requests")
        self.console.print(Text(
            f"generate {self.task}: {at_most} ({counted(groups, group)}"
            + (f" x up to {rounds} rounds; a round asks only the {group} still short of their target" if rounds > 1
               else "") + f"){then}; --limit and --only make it smaller", style=""), highlight=False, soft_wrap=True)

    def reject(self, reason: str, n: int = 1) -> None:
        self.rejected[reason] += n

    def close(self, summary: dict) -> Path:
        self._log.close()
        self.cache.close()
        summary.update({"task": self.task, "model": getattr(self.backend, "model", None),
                   "backend": self.backend.cache_params(),
                   "rejected": dict(sorted(self.rejected.items())),
                   "model_calls": {"requests": self.totals.n_requests, "cached": self.totals.n_cached,
                                   "queried": self.totals.n_queried, "retries": self.totals.retries,
                                   "prompt_tokens": self.totals.prompt_tokens,
                                   "completion_tokens": self.totals.completion_tokens, "cost": self.totals.cost},
                   "log": str(self.log_path)})
        path = self.state / f"{self.task}.summary.json"
        write_atomic(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        return path


def request(messages: Iterable[tuple[str, str]], *, temperature: float, max_tokens: int, seed: int,
            sample_index: int = 0) -> ChatRequest:
    return ChatRequest(messages=tuple(messages), sampling=SamplingParams(temperature=temperature,
                                                                          max_tokens=max_tokens, seed=seed),
                       sample_index=sample_index)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it and a rename (never half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.part-{os.getpid()}")
    partial.write_text(text, encoding="utf-8", newline="")
    partial.replace(path)


def only_filter(value: str | None) -> set[str] | None:
    """``--only a,b``: the casefolded names to keep (None: everything)."""
    if not value:
        return None
    return {part.strip().casefold() for part in str(value).split(",") if part.strip()}


# ------------------------------------------------------------------------------------------------ parsing

_NUMBERING = re.compile(r"^\s*(?:(?:prompt|question|q)\s*)?(?:\(?\d{1,3}[.):\]]|\d{1,3}\s*[-–]|[-*•·]+)\s*",
                        re.IGNORECASE)
QUOTES = "\"'“”‘’「」『』`"
"""Quotation marks a model may wrap a text in (stripped from its ends by the cleaners)."""
_FENCE = re.compile(r"```[a-zA-Z]*\s*|```")
_PREAMBLE = re.compile(r"^\s*(?:sure|here (?:are|is)|certainly|okay|ok)\b[^\n]*?:\s*$", re.IGNORECASE)


def clean_item(text: str) -> str:
    """One generated prompt without stray numbering ("1.", "(2)", "- "), surrounding quotes and spaces."""
    text = _FENCE.sub("", text)
    text = " ".join(text.split())
    for _ in range(3):
        before = text
        text = _NUMBERING.sub("", text).strip()
        if len(text) >= 2 and text[0] in QUOTES and text[-1] in QUOTES:
            text = text[1:-1].strip()
        text = text.strip(QUOTES + " ").strip()
        if text == before:
            break
    return text


def split_prompts(text: str, separator: str = ",,") -> list[str]:
    """The items of a ``separator``-separated answer, cleaned (empty ones kept as ``""`` so they can be counted).

    A preamble line ("Here are 5 prompts:") is dropped; when the model ignored the separator, blank-line-separated
    paragraphs are the items (a prompt may hold a list of options on its own lines), else single lines."""
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if not _PREAMBLE.match(line)]
    body = "\n".join(lines).strip()
    if separator in body:
        parts = body.split(separator)
    elif re.search(r"\n\s*\n", body):
        parts = re.split(r"\n\s*\n", body)
    else:
        parts = body.split("\n")
    items = [clean_item(part) for part in parts]
    while items and not items[-1]:  # a trailing separator
        items.pop()
    return items


REFUSAL = re.compile(r"^\W*(?:i'?m sorry|i am sorry|sorry,|i apologi[sz]e|i cannot|i can'?t|i can not|i'?m unable|"
                     r"i am unable|i'?m not able|i am not able|i won'?t|as an ai\b|as a language model|"
                     r"unfortunately,? i\b)", re.IGNORECASE)
"""The start of a refusal or apology, which is no item (ours)."""


def junk_reason(item: str, sent: ChatRequest) -> str | None:
    """Why a generated item is junk, or None: ``empty``, ``refusal`` (``REFUSAL``), or ``template text`` (the item
    is a piece of the messages ``sent``: an echoed instruction, rubric line or example). Ours: the papers have their
    items checked by people (LLM-GLOBE Sec. 3.1.2: three reviewers; CDEval Sec. 3.1 step 3 and App. A.2) before
    use; this drops what no reviewer would keep, and every generator counts each reason in its summary."""
    if not item.strip():
        return "empty"
    if REFUSAL.match(item):
        return "refusal"
    key = normal_key(item)
    if key and f" {key} " in f" {normal_key(' '.join(text for _, text in sent.messages))} ":
        return "template text"
    return None


def normal_key(text: str) -> str:
    """Casefolded letters and digits only (NFKC), single spaces: what exact duplicates are compared on."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", text).split())


class NearDuplicates:
    """Texts seen so far; ``match(text)`` names an exact or near duplicate (rapidfuzz ratio >= threshold)."""

    def __init__(self, threshold: float = NEAR_DUPLICATE_RATIO) -> None:
        self.threshold = threshold
        self.keys: list[str] = []
        self.labels: list[str] = []
        self.exact: dict[str, str] = {}

    def add(self, text: str, label: str) -> None:
        key = normal_key(text)
        self.exact.setdefault(key, label)
        self.keys.append(key)
        self.labels.append(label)

    def match(self, text: str) -> str | None:
        """None, or the reason: ``exact duplicate of LABEL`` / ``near duplicate of LABEL (ratio R)``."""
        from rapidfuzz import fuzz, process

        key = normal_key(text)
        if key in self.exact:
            return f"exact duplicate of {self.exact[key]}"
        if not self.keys:
            return None
        best = process.extractOne(key, self.keys, scorer=fuzz.ratio, score_cutoff=self.threshold)
        if best is None:
            return None
        return f"near duplicate of {self.labels[best[2]]} (ratio {best[1]:.0f})"


def similar(a: str, b: str, threshold: float = NEAR_DUPLICATE_RATIO) -> float | None:
    """The rapidfuzz ratio of two texts when they are (near) identical, else None."""
    from rapidfuzz import fuzz

    ka, kb = normal_key(a), normal_key(b)
    ratio = 100.0 if ka == kb else fuzz.ratio(ka, kb)
    return ratio if ratio >= threshold else None


def json_items(text: str) -> tuple[list[Any] | None, str | None]:
    """The JSON list in a model answer, tolerating code fences, text around it, numbering and a dict holding the
    list; else the objects that parse on their own. Returns (items or None, what was wrong or None)."""
    stripped = _FENCE.sub("", text).strip()
    candidates = [stripped]
    start, end = stripped.find("["), stripped.rfind("]")
    if 0 <= start < end:
        candidates.append(stripped[start:end + 1])
    for candidate in candidates:
        try:
            loaded = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(loaded, list):
            return loaded, None
        if isinstance(loaded, dict):
            lists = [v for v in loaded.values() if isinstance(v, list)]
            if len(lists) == 1:
                return lists[0], None
            return [loaded], None
    # broken JSON: salvage the objects that parse on their own
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = stripped.find("{")
    while position >= 0:
        try:
            obj, stop = decoder.raw_decode(stripped, position)
        except json.JSONDecodeError:
            position = stripped.find("{", position + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        position = stripped.find("{", stop)
    if found:
        return found, "not valid JSON; kept the objects that parse"
    return None, "no JSON list in the answer"


_WORD = re.compile(r"[a-z]+")


def parse_yes_no(text: str) -> str | None:
    """``"yes"``, ``"no"`` or None: the first word (after an optional "Answer:"), else the only one present."""
    words = _WORD.findall(text.lower())
    if words and words[0] == "answer":
        words = words[1:]
    if words and words[0] in ("yes", "no"):
        return words[0]
    present = {w for w in words if w in ("yes", "no")}
    return present.pop() if len(present) == 1 else None


def has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" for ch in text)


def clean_translation(text: str) -> str:
    """A translation answer without code fences, a label ("翻译：", "Translation:") and quotes."""
    text = _FENCE.sub("", text).strip()
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        return ""
    line = max(lines, key=lambda l: sum(has_cjk(c) for c in l)) if len(lines) > 1 else lines[0]
    line = re.sub(r"^(?:translation|chinese|zh-cn|simplified chinese|译文|翻译|中文)\s*[:：]\s*", "", line,
                  flags=re.IGNORECASE)
    return line.strip(QUOTES + " ").strip()


def unusable_translation(text: str, english: str) -> str | None:
    """Why a translation read from an answer cannot stand (empty, or the English text again), or None."""
    if not text:
        return "empty translation"
    if " ".join(text.split()).casefold() == " ".join(english.split()).casefold():
        return "translation is the English text"
    return None
