"""WorldValuesBench prompts and answer parsing (Zhao et al. 2024, Sec. 3.5 and App. B).

The prompts are data, ``facts/wvb.json`` -> ``evaluation`` (one user message each), one per model family, as App. B
prints them:

- with demographics (temperature 0): Fig. 5 (``alpaca``), Fig. 6 (``vicuna``), Fig. 7 (``mixtral``), Fig. 8
  (``gpt-3.5``). The three demographic answers are the participant's B_COUNTRY, H_URBRURAL and Q275 (codebook text from
  the release's ``participants`` config), asked with the wording of the release's ``questions`` config
  (``kind == "demographic"``), in that order;
- without demographics (the model assumes them; temperature 0.7, oversampled to the question's number of human
  answers): Fig. 9 (``alpaca``, ``vicuna``, ``mixtral``) and Fig. 10 (``gpt-3.5``).

``FAMILIES`` names the families; ``DEFAULT_FAMILY`` (gpt-3.5) is used for any other model (the paper has no rule
for them: ours). Every request stops at a blank line (App. B: "\\n\\n" as stop token).

:func:`parse_answer` reads the score out of a model reply, tolerantly (strict JSON, JSON-ish, a bare integer, a few
free-text phrasings) and records how it did so. As the authors' ``evaluation/evaluate.py`` (635db74) scores
answers: a whole number off the question's scale is kept as read, never clipped (status ``out_of_scale``; invalid
with ``--drop-out-of-scale``), and a non-whole number is truncated toward zero, its ``astype(int)`` ("2.6" -> 2,
status ``not_integer``; invalid with ``--drop-non-integer``). (App. B fixes unparseable formats by hand and re-runs
the model when no answer can be found; an automatic harness cannot, so the parsing rules are ours and a failed parse
is reported, not re-asked.)
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Sequence

from culturebench.facts import read as read_facts
from culturebench.evaluate.wvb import DEFAULT_FAMILY, FAMILIES  # noqa: F401 - the package's option choices

_FACTS = read_facts("wvb")["evaluation"]

DEMOGRAPHIC_VARIABLES = tuple(_FACTS["demographic_variables"]["variables"])
"""The demographics given to the model, in prompt order: country, urban/rural, highest education level (Sec. 3.5)."""

MISSING_DEMOGRAPHIC = "No answer"
"""Shown as the answer when the participant's demographic is missing in the release (a negative WVS code; ours: the
probe only has participants with all three, a full split may not)."""

WITH_DEMOGRAPHICS_TEMPLATES = {f: v["template"] for f, v in _FACTS["prompts"]["with_demographics"].items()}
"""Figs. 5-8 per family (placeholders demographics, question)."""
WITHOUT_DEMOGRAPHICS_TEMPLATES = {f: v["template"] for f, v in _FACTS["prompts"]["without_demographics"].items()}
"""Figs. 9-10 per family (placeholder question)."""
DEMOGRAPHIC_ITEM = _FACTS["demographic_item"]["template"]
"""One demographic question/answer pair, numbered from 1 (Figs. 5-8)."""

TEMPERATURE_WITH_DEMOGRAPHICS = float(_FACTS["sampling"]["temperature_with_demographics"])
TEMPERATURE_WITHOUT_DEMOGRAPHICS = float(_FACTS["sampling"]["temperature_without_demographics"])
STOP = tuple(_FACTS["sampling"]["stop"])
"""App. B: every request stops at "\\n\\n"."""
MAX_TOKENS = int(_FACTS["sampling"]["max_tokens"])
"""Ours (the paper is silent)."""

SCORE_KEY = "answer as a score"
SHORT_REPLY_WORDS = 12
"""A free-text reply with one number and no score phrase counts only when it is this short ("I'd pick 3.");
in a longer text a lone number is more likely a year or an age than the answer."""

PARSED_STATUSES = ("json", "jsonish", "bare_integer", "text_integer", "out_of_scale", "not_integer")
"""Statuses that come with an answer; "out_of_scale": a whole number off the question's scale, kept as the answer
(scored as given, as the authors' evaluate.py does, unless ``--drop-out-of-scale``); "not_integer": a non-whole
number, the answer its truncation toward zero (the authors' ``astype(int)``; invalid with ``--drop-non-integer``)."""
FAILED_STATUSES = ("no_answer", "ambiguous")
"""Statuses without an answer: nothing found (or a number that is not finite); several different numbers."""
STATUSES = PARSED_STATUSES + FAILED_STATUSES
STATED_STATUSES = ("distribution", "no_distribution")
"""The statuses of a stated distribution (``--reading verbalized``): read (``opinions.parse_distribution``), or
unreadable."""


# ------------------------------------------------------------------------------------------------------- prompts


def demographics_block(pairs: Sequence[tuple[str, str | None]]) -> str:
    """The numbered Question/Answer lines of (question text, answer text) pairs; a missing answer is shown as
    MISSING_DEMOGRAPHIC."""
    return "\n".join(DEMOGRAPHIC_ITEM.format(number=i, question=question, answer=MISSING_DEMOGRAPHIC if answer is None else answer)
                     for i, (question, answer) in enumerate(pairs, start=1))


def _family(family: str) -> str:
    if family not in FAMILIES:
        raise ValueError(f"unknown prompt family {family!r}; choose from {', '.join(FAMILIES)}")
    return family


def with_demographics_prompt(pairs: Sequence[tuple[str, str | None]], question: str,
                             family: str = DEFAULT_FAMILY) -> str:
    """The prompt for one participant and value question (App. B, Figs. 5-8 by family)."""
    return WITH_DEMOGRAPHICS_TEMPLATES[_family(family)].format(demographics=demographics_block(pairs),
                                                               question=question)


def without_demographics_prompt(question: str, family: str = DEFAULT_FAMILY) -> str:
    """The prompt for one value question when the model assumes the demographics (App. B, Figs. 9-10)."""
    return WITHOUT_DEMOGRAPHICS_TEMPLATES[_family(family)].format(question=question)


def messages(prompt: str) -> tuple[tuple[str, str], ...]:
    """The conversation: one user message (no system message, as in the paper)."""
    return (("user", prompt),)


# ------------------------------------------------------------------------------------------------------- parsing

_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_FREE_NUMBER = re.compile(rf"(?<![\w.]){_NUMBER}(?![\w])")
_OUT_OF = re.compile(rf"({_NUMBER})\s*(?:out of|/)\s*\d+", re.IGNORECASE)
_LEADING = re.compile(rf"^\s*({_NUMBER})\s*[-–—:(]")
_SCORE_KEY = re.compile(r"""["'`*]*answer[\s_]+as[\s_]+a[\s_]+score["'`*]*\s*[:=]\s*([^,\n}]*)""", re.IGNORECASE)
_SCORE_PHRASE = re.compile(rf"\b(?:score|answer|rating)\s*(?:is|would be|of|:|=)\s*[\"'*]*\s*({_NUMBER})(?![\w])",
                           re.IGNORECASE)
_BARE = re.compile(rf"^[\s\"'`*(\[]*({_NUMBER})[\s\"'`*)\].]*$")


def _number(text: str) -> float:
    return float(text)


def _value_in(text: str) -> tuple[float | None, str]:
    """The one number a score string gives: '3', '3 - Rather important', '3/4', '3 out of 4', '1 - Lowest (1)' ->
    (value, 'ok'); '2 or 3' -> (None, 'ambiguous'); no number -> (None, 'no_answer')."""
    text = text.strip().strip("\"'`*").strip()
    out_of = _OUT_OF.search(text)
    if out_of:
        return _number(out_of.group(1)), "ok"
    numbers = _FREE_NUMBER.findall(text)
    if not numbers:
        return None, "no_answer"
    if len(set(map(_number, numbers))) == 1:
        return _number(numbers[0]), "ok"
    leading = _LEADING.match(text)
    if leading:
        return _number(leading.group(1)), "ok"
    return None, "ambiguous"


def _checked(value: float | None, reason: str, status: str, scale_min: int, scale_max: int) -> tuple[int | None, str]:
    if value is None:
        return None, reason
    if not math.isfinite(value):
        return None, "no_answer"
    if value != int(value):
        return int(value), "not_integer"
    if not scale_min <= value <= scale_max:
        return int(value), "out_of_scale"
    return int(value), status


def _balanced_objects(text: str) -> list[str]:
    """Substrings from each '{' to its matching '}' (quotes tracked), outermost first."""
    spans = []
    for start, char in enumerate(text):
        if char != "{":
            continue
        depth, quote = 0, None
        for end in range(start, len(text)):
            c = text[end]
            if quote:
                if c == "\\":
                    continue
                if c == quote:
                    quote = None
            elif c in "\"'" and (c == '"' or not text[end - 1].isalpha()):
                quote = c
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    spans.append(text[start:end + 1])
                    break
    return spans


def _normal_key(key: object) -> str:
    return " ".join(str(key).replace("_", " ").lower().split())


def _score_from_dict(obj: dict) -> object:
    """The value of 'answer as a score' (any case/spacing/underscores); else of a key containing 'score', else 'answer'."""
    keys = {_normal_key(k): k for k in obj}
    for wanted in (lambda k: k == SCORE_KEY, lambda k: "score" in k, lambda k: "answer" in k):
        for normal, key in keys.items():
            if wanted(normal):
                return obj[key]
    return _MISSING


_MISSING = object()


def _from_value(value: object) -> tuple[float | None, str]:
    if value is _MISSING or value is None or isinstance(value, bool):
        return None, "no_answer"
    if isinstance(value, (int, float)):
        return float(value), "ok"
    if isinstance(value, (list, tuple)):
        return (_from_value(value[0]) if len(value) == 1 else (None, "ambiguous")) if value else (None, "no_answer")
    return _value_in(str(value))


def _jsonish_load(span: str) -> object:
    """A JSON-ish object: Python literal (single quotes), trailing commas, unquoted keys."""
    repaired = re.sub(r",\s*([}\]])", r"\1", span)
    for attempt in (repaired, re.sub(r"([{,]\s*)([A-Za-z_][\w ]*?)\s*:", r'\1"\2":', repaired)):
        for loader in (json.loads, ast.literal_eval):
            try:
                return loader(attempt)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return None


def parse_answer(text: str | None, scale_min: int, scale_max: int) -> tuple[int | None, str]:
    """The model's score for a question on ``scale_min..scale_max`` and how it was read (one of STATUSES).

    In order: a JSON object anywhere in the text (also in ```json fences) -> "json"; a JSON-ish object or an
    ``answer as a score: N`` line -> "jsonish"; a reply that is only an integer -> "bare_integer"; a free-text
    phrase ("I would say 3 out of 4", "my score is 2") or a short reply with one number -> "text_integer". The score string may carry its label
    ("3 - Rather important"). Failures: "no_answer", "ambiguous" (different numbers, e.g. "2 or 3"). A whole number off
    the scale is returned as read, status "out_of_scale" (never clipped); a non-whole number truncated toward zero,
    status "not_integer" (2.6 -> 2, as the authors' evaluate.py's astype(int))."""
    if text is None or not text.strip():
        return None, "no_answer"
    decoder = json.JSONDecoder()
    failure: tuple[float | None, str] | None = None
    # 1. strict JSON objects
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            value, reason = _from_value(_score_from_dict(obj))
            if value is not None or reason == "ambiguous":
                return _checked(value, reason, "json", scale_min, scale_max)
            failure = failure or (value, reason)
    # 2. JSON-ish objects, then an "answer as a score" key anywhere
    for span in _balanced_objects(text):
        obj = _jsonish_load(span)
        if isinstance(obj, dict):
            value, reason = _from_value(_score_from_dict(obj))
            if value is not None or reason == "ambiguous":
                return _checked(value, reason, "jsonish", scale_min, scale_max)
    key = _SCORE_KEY.search(text)
    if key:
        value, reason = _value_in(key.group(1))
        if value is not None or reason == "ambiguous":
            return _checked(value, reason, "jsonish", scale_min, scale_max)
    if failure:
        return None, failure[1]
    # 3. a bare integer
    bare = _BARE.match(text)
    if bare:
        return _checked(_number(bare.group(1)), "ok", "bare_integer", scale_min, scale_max)
    # 4. free-text phrases: "N out of M", "N/M", "score is N"
    found = {_number(m.group(1)) for m in _OUT_OF.finditer(text)} | {_number(m.group(1)) for m in _SCORE_PHRASE.finditer(text)}
    if len(found) == 1:
        return _checked(found.pop(), "ok", "text_integer", scale_min, scale_max)
    if len(found) > 1:
        return None, "ambiguous"
    numbers = {_number(n) for n in _FREE_NUMBER.findall(text)}
    if len(numbers) > 1:
        return None, "ambiguous"
    if numbers and len(text.split()) <= SHORT_REPLY_WORDS:
        return _checked(numbers.pop(), "ok", "text_integer", scale_min, scale_max)
    return None, "no_answer"


def steered_question(question: str, country: str) -> str:
    """The question as cross-national prompting asks it, naming ``country`` in words (Durmus et al. 2023)."""
    return read_facts("opinions")["cross_national"]["template"].format(country=country, question=question)


def verbalized_prompt(question: str) -> str:
    """The prompt asking for the distribution of answers in words (Liu, Kaneko and Chu 2025; wording ours)."""
    return read_facts("opinions")["verbalized"]["template"].format(question=question)


_SCALE = re.compile(r"On a scale of (-?\d+) to (-?\d+), \1 meaning '(.*?)' and \2 meaning '(.*?)', ")
"""The scale's opening of every value question of the authors' question_metadata.json (``question``): "On a scale
of 1 to 4, 1 meaning 'Strongly agree' and 4 meaning 'Strongly disagree', ..."."""


def reversed_scale(question: str) -> str:
    """``question`` with its ordinal scale listed from the other end, its codes kept (issue #63's ``reversed``:
    "On a scale of 4 to 1, 4 meaning 'Strongly disagree' and 1 meaning 'Strongly agree', ..."); a question whose
    text names no scale this way is asked as it is (the same request as the paper's: counted as identical, asked
    once)."""
    return _SCALE.sub(lambda m: f"On a scale of {m[2]} to {m[1]}, {m[2]} meaning '{m[4]}' and {m[1]} meaning "
                                f"'{m[3]}', ", question, count=1)


VARIANT_QUESTION = {"default": lambda question: question, "reversed": reversed_scale}
"""How each variant WVB defines changes a question's text (every value question is ordinal in the authors'
question_metadata.json: ``answer_data_type``, so ``shuffled`` is not defined: an ordinal scale shuffled is no
scale)."""
