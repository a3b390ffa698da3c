"""CDEval prompts and answer extraction (Wang et al. 2024, arXiv 2311.16421, Sec. 3.2.2, Table 8, App. A.3).

Six prompts per question (Table 8): three templates (A/B, Repeat, Compare), each with the two options in the
question's order ("norm": option_1 first) and reversed ("reverse": option_2 first). Each prompt is one user message,
sampled at temperature 1 (App. A.3), ``R`` times. The templates and constants are data in ``facts/cdeval.json``
(``evaluation``), verbatim from Table 8, each with its source.

Extraction (App. A.3.1): a regular expression for the A/B letters and Compare's yes/no (ours: also German and
Chinese yes/no, for a translated questionnaire); for Repeat the option
nearest by edit distance (rapidfuzz Levenshtein on normalised text), whatever the distance (``repeat_rule``
"nearest", the default). Ours, where the paper is silent: an answer that is the start of exactly one option's text
(a truncated repeat, "Point it out politely") picks that option, in every template. The named option
``repeat_rule`` "similar_only" (ours, not the paper's) also makes a Repeat answer near neither option
(MIN_REPEAT_SIMILARITY) not a choice. A neutral, refused or unparseable answer counts 0.5 toward the target
orientation (App. A.3.1); option_1 of every question is the target orientation (Sec. 3.2.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from culturebench.facts import read as read_facts

TEMPLATE_KINDS = ("ab", "repeat", "compare")
"""The three templates, in Table 8 order."""
ORDERS = ("norm", "reverse")
"""Option orders: norm shows option_1 first, reverse shows option_2 first."""


EVALUATION = read_facts("cdeval")["evaluation"]
TEMPLATES: dict[str, str] = dict(EVALUATION["templates"])
"""The six prompts of Table 8, verbatim (placeholders: question, option_1, option_2), keyed ``<template>_<order>``."""

PROMPTS = tuple(f"{kind}_{order}" for kind in TEMPLATE_KINDS for order in ORDERS)
"""Prompt names in request order."""

TEMPERATURE = float(EVALUATION["temperature"]["value"])
"""App. A.3: every prompt is sampled at temperature 1."""
DEFAULT_SAMPLES = int(EVALUATION["samples_R"]["value"])
"""Samples per prompt (R): App. A.3 uses 5 (1 for GPT-4, 3 for ChatGPT and ChatGLM)."""
MAX_TOKENS = 128
"""Ours (the paper keeps other decoding settings at their defaults): enough for a Repeat answer."""
NEUTRAL = float(EVALUATION["neutral_likelihood"]["value"])
"""App. A.3.1: a neutral, refused or unparseable answer counts 0.5 toward the target orientation."""

from culturebench.evaluate.cdeval import REPEAT_RULES  # noqa: E402 - the package's option choices
"""How a Repeat answer is read. "nearest" (default, App. A.3.1): the option at the smaller edit distance, however
far both are. "similar_only" (ours, not the paper's; ``--repeat-rule similar_only``): the same, but an answer whose
nearer option is less similar than MIN_REPEAT_SIMILARITY is unparsed (neutral)."""
MIN_REPEAT_SIMILARITY = 0.5
"""Ours, for ``repeat_rule`` "similar_only" only: a Repeat answer whose nearer option is still this dissimilar
(rapidfuzz normalised Levenshtein similarity, 0-1) repeats neither option ("B", "Sure.") and counts as unparsed
rather than as whichever option happens to be a few edits nearer."""

STATUSES = ("chosen", "both", "refusal", "unparsed")
"""How an answer was read: one option chosen; both options (or A and B, yes and no) given; a refusal or a
neither/both/depends answer; nothing recognisable. Only "chosen" scores 0 or 1, the others NEUTRAL."""
READ_STATUSES = STATUSES[:3]
"""The statuses of answers that were read (all but "unparsed"): the counts beside the means (issue #55)."""


def prompt_text(name: str, question: str, option_1: str, option_2: str) -> str:
    """One of the six prompts for a question (``name`` in PROMPTS)."""
    return TEMPLATES[name].format(question=_strip_end(question), option_1=option_1.strip(), option_2=option_2.strip())


def _strip_end(question: str) -> str:
    """The question without trailing whitespace (Repeat and Compare add a period after it, as Table 8 prints)."""
    return question.strip()


def messages(prompt: str) -> tuple[tuple[str, str], ...]:
    """The conversation: one user message, no system message."""
    return (("user", prompt),)


# ------------------------------------------------------------------------------------------------------ extraction


@dataclass(frozen=True)
class Extraction:
    shown: int | None
    """Which displayed option the answer picks: 1 (the first shown, A, or yes for Compare), 2, or None."""
    status: str


_REFUSAL = re.compile(
    r"\b(?:as an ai|i(?:'m| am) (?:an ai|a language model|sorry|unable|not able)|i (?:cannot|can't|can not|won't|"
    r"do not|don't) (?:choose|answer|pick|select|express|have personal|provide|make)|neither|both options|"
    r"depends on|it depends|no personal (?:preference|opinion)s?|not (?:able|possible) to (?:choose|answer))\b",
    re.IGNORECASE)
_MARKUP = re.compile(r"[*_`#>]+")
_ANSWER_PREFIX = re.compile(r"^\s*(?:answer|response|my answer|final answer)\s*[:\-]\s*", re.IGNORECASE)


def _clean(text: str) -> str:
    return _MARKUP.sub("", text or "").strip()


# A/B: patterns tried in order; the first that finds letters decides (both letters -> "both").
_AB_PATTERNS = (
    re.compile(r"^\W*([AB])\W*$", re.IGNORECASE),  # "B", "(a)", "A."
    re.compile(r"^\W*\(?([AB])(?:\)|\.|:|\s*-)", re.IGNORECASE),  # "A. I would", "(b) ...", "a) ...", "B - ..."
    # "Option A", "Answer: b", "I choose B"; a lower-case letter only when nothing but punctuation follows it
    # ("I choose a." but not "I choose a collective approach")
    re.compile(r"\b(?:option|answer|choice|choose|chose|pick|select|go with|prefer|would do)\s*(?:is|would be|:)?"
               r"\s*[\(\"']?(?:(?-i:([AB]))(?![\w'’-])|([ab])(?=\s*(?:$|[.,;:!)\"'])))", re.IGNORECASE),
    re.compile(r"\(([AB])\)"),  # "(A)" anywhere
    re.compile(r"^([AB])\b"),  # upper-case letter leading the answer: "A I would ..."
    re.compile(r"(?<![\w'’-])([AB])(?![\w'’-])"),  # a standalone capital letter anywhere
)


def _letters(pattern: re.Pattern, text: str) -> set[str]:
    return {next(g for g in m.groups() if g).upper() for m in pattern.finditer(text)}


def extract_ab(text: str | None, first: str = "", second: str = "") -> Extraction:
    """The displayed option an A/B answer picks (A -> 1, B -> 2). ``first``/``second``: the option texts as shown,
    used when the model repeats an option instead of its letter."""
    cleaned = _ANSWER_PREFIX.sub("", _clean(text or ""))
    if not cleaned:
        return Extraction(None, "unparsed")
    for pattern in _AB_PATTERNS:
        found = _letters(pattern, cleaned)
        if len(found) == 1:
            return Extraction(1 if found == {"A"} else 2, "chosen")
        if len(found) > 1:
            return Extraction(None, "both")
    by_text = _contained_option(cleaned, first, second)
    if by_text is not None:
        return by_text
    if _REFUSAL.search(cleaned):
        return Extraction(None, "refusal")
    return Extraction(None, "unparsed")


_YES_NO = re.compile(r"\b(yes|no|ja|nein)\b", re.IGNORECASE)
_LEADING_YES_NO = re.compile(r"^\W*(?:(yes|no|ja|nein)\b|(不是|是|否))", re.IGNORECASE)
_YES = {"yes", "ja", "是"}
"""Yes in English and, for a translated questionnaire's answers (ours: Sec. 4.2's German and Chinese runs), German
and Chinese; the other words of _YES_NO / _LEADING_YES_NO are no (nein, 否, 不是)."""


def extract_yes_no(text: str | None) -> Extraction:
    """A Compare answer: yes -> 1 (the first option shown is preferred), no -> 2 (also ja / nein, and 是 / 否 / 不是
    leading the answer: a model asked about a translated question may answer in its language)."""
    cleaned = _ANSWER_PREFIX.sub("", _clean(text or ""))
    if not cleaned:
        return Extraction(None, "unparsed")
    leading = _LEADING_YES_NO.match(cleaned)
    if leading:
        word = next(g for g in leading.groups() if g).lower()
        return Extraction(1 if word in _YES else 2, "chosen")
    if _REFUSAL.search(cleaned):
        return Extraction(None, "refusal")
    found = {m.group(1).lower() in _YES for m in _YES_NO.finditer(cleaned)}
    if len(found) == 1:
        return Extraction(1 if found == {True} else 2, "chosen")
    if len(found) > 1:
        return Extraction(None, "both")
    return Extraction(None, "unparsed")


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


MIN_PREFIX_WORDS = 2
"""Ours: an answer of at least this many words that starts exactly one option's text picks that option."""


def _contained_option(cleaned: str, first: str, second: str) -> Extraction | None:
    """When the answer contains the full text of exactly one option, or is the start of exactly one option's text
    (at least MIN_PREFIX_WORDS words: "Point it out politely"): that option; contains both: "both"."""
    if not first or not second:
        return None
    text, a, b = _normal(cleaned), _normal(first), _normal(second)
    has_first, has_second = a in text, b in text
    if has_first and has_second:
        return Extraction(None, "both")
    if has_first or has_second:
        return Extraction(1 if has_first else 2, "chosen")
    if len(text.split()) >= MIN_PREFIX_WORDS:
        starts_first, starts_second = _starts(a, text), _starts(b, text)
        if starts_first != starts_second:
            return Extraction(1 if starts_first else 2, "chosen")
    return None


def _starts(option: str, text: str) -> bool:
    """``text`` is the start of ``option`` at a word boundary (both normalised)."""
    return option == text or option.startswith(text + " ")


def extract_repeat(text: str | None, first: str, second: str, rule: str = REPEAT_RULES[0]) -> Extraction:
    """A Repeat answer: the displayed option with the smaller Levenshtein distance to the answer (both normalised:
    lower case, punctuation dropped); equal distances, both options repeated, or a refusal are not a choice; with
    ``rule`` "similar_only" (REPEAT_RULES) neither is an answer too far from both options."""
    cleaned = _ANSWER_PREFIX.sub("", _clean(text or "")).strip().lstrip("-•").strip().strip("\"'").strip()
    if not cleaned:
        return Extraction(None, "unparsed")
    contained = _contained_option(cleaned, first, second)
    if contained is not None:
        return contained
    if _REFUSAL.search(cleaned):
        return Extraction(None, "refusal")
    answer, a, b = _normal(cleaned), _normal(first), _normal(second)
    d1, d2 = Levenshtein.distance(answer, a), Levenshtein.distance(answer, b)
    if d1 == d2:
        return Extraction(None, "unparsed")
    nearer = 1 if d1 < d2 else 2
    if rule == "similar_only" and Levenshtein.normalized_similarity(answer, a if nearer == 1 else b) < \
            MIN_REPEAT_SIMILARITY:
        return Extraction(None, "unparsed")
    return Extraction(nearer, "chosen")


def extract(prompt: str, text: str | None, option_1: str, option_2: str, repeat_rule: str = REPEAT_RULES[0]
            ) -> Extraction:
    """The displayed option an answer to prompt ``prompt`` (in PROMPTS) picks (``repeat_rule``: REPEAT_RULES)."""
    kind, order = prompt.rsplit("_", 1)
    first, second = (option_1, option_2) if order == "norm" else (option_2, option_1)
    if kind == "ab":
        return extract_ab(text, first, second)
    if kind == "repeat":
        return extract_repeat(text, first, second, repeat_rule)
    if kind == "compare":
        return extract_yes_no(text)
    raise ValueError(f"unknown prompt {prompt!r}")


def target_score(prompt: str, extraction: Extraction) -> float:
    """1 when the answer picks option_1 (the target orientation), 0 when it picks option_2, NEUTRAL otherwise.

    norm shows option_1 first, so picking the first shown (A, yes, the first line) is the target; reverse swaps."""
    if extraction.shown is None:
        return NEUTRAL
    order = prompt.rsplit("_", 1)[1]
    picked_option_1 = (extraction.shown == 1) == (order == "norm")
    return 1.0 if picked_option_1 else 0.0


def score_answer(prompt: str, text: str | None, option_1: str, option_2: str, repeat_rule: str = REPEAT_RULES[0]
                 ) -> tuple[float, str, int | None]:
    """(score toward the target orientation, status, displayed option picked) of one answer."""
    extraction = extract(prompt, text, option_1, option_2, repeat_rule)
    return target_score(prompt, extraction), extraction.status, extraction.shown


OPTION_GROUPS = (("A", "B"), ("Yes", "No"))
"""The options a generated token can stand for (``--scoring logprobs``): A / B exactly, Yes / No in any case.
Repeat prompts are answered with an option's text, so they have no option token."""


def read_option_token(text: str) -> tuple[str, tuple[str, ...]] | None:
    """The option a generated token (its text without surrounding spaces and punctuation) stands for, and its
    group (``OptionScoring.read_option``); None for no option."""
    for group in OPTION_GROUPS:
        for option in group:
            if text == option or (len(option) > 1 and text.lower() == option.lower()):
                return option, group
    return None
