"""NormAd prompts and answer parsing (Rao et al., "NormAd: A Benchmark for Measuring the Cultural Adaptability of
Large Language Models", 2024, Sec. 3-5, App. A.3 Fig. 9).

Every story is asked once per **context** (how much cultural information the model is given): none (the baseline),
COUNTRY, VALUE, COUNTRY+VALUE and RULE-OF-THUMB. The model judges whether the action in the story is socially
acceptable and answers Yes, No or Neither (Neither = the gold label ``neutral``). One user message.

The wording is data: ``facts/normad.json`` -> ``evaluation``. Fig. 9 is printed once, with ``{context_name}`` =
country (COUNTRY) or rule (VALUE, RULE-OF-THUMB) and ``{context}`` the story's country / value / rule-of-thumb
(App. A.3); the paper prints no prompt for the no-context baseline nor for COUNTRY+VALUE, and those two choices are
marked "ours" in the facts file next to their text. Decoding (temperature 0, ``max_tokens`` 10) is not in the paper:
it is the authors' inference config (facts file, ``sampling``). A changed prompt changes the response-cache keys, so
re-run into a new folder.

Parsing (``ANSWER_RULES``): App. A.3 prints only the answer format ("Options: 1) Yes 2) No 3) Neither Answer (Yes,
No or Neither):"). By default an answer is read as the authors' ``run_model_inference.py`` (NormAd repository,
``src/``, commit 9ede851) reads it, the rule that made the published numbers: "Yes" or "option 1" anywhere in the
text is yes, else "No" or "option 2" anywhere is no, else Neither (case-sensitive substrings, in that order: "Neither.
Not acceptable." is no, "No. Yes, in some cases." is yes); an answer that reaches that fallback without saying
"Neither" gets status ``unparsed``. ``--answer-rule strict`` is ours: the first Yes / No / Neither word after an
optional "Answer:" prefix, or an option number ("3) Neither"); otherwise the only one of those words present
anywhere; several different ones are ``ambiguous``, a refusal ("I cannot ...") is ``refusal``, nothing recognisable
(or an empty answer) is ``unparsed``. Only ``parsed`` answers carry a label; the others are scored as Neither by
default (the authors' fallback) or as wrong with ``--unparsed-wrong`` (``parsing.UNPARSED_RULES``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from culturebench.facts import read as read_facts
from culturebench.errors import InputError
from culturebench.evaluate.normad import ANSWER_RULES, CONTEXTS, DEFAULT_ANSWER_RULE  # the options' choices

_FACTS = read_facts("normad")["evaluation"]

LABELS = ("yes", "no", "neutral")
"""Gold and predicted labels, in the paper's order (Neither = neutral, Sec. 3.1.3)."""
OPTION_WORDS = {**_FACTS["answers"]["words"], "neutral": "neutral"}
"""Answer words and the label each stands for (Fig. 9's Yes / No / Neither; "neutral", the gold label's own name,
is read as Neither: ours)."""
OPTION_NUMBERS = dict(_FACTS["answers"]["option_numbers"])
"""Fig. 9's numbered options 1) Yes 2) No 3) Neither."""
AUTHORS_SUBSTRINGS = {label: tuple(found) for label, found in _FACTS["answers"]["authors_substrings"].items()}
"""The authors' reading: the first label (in this order) one of whose case-sensitive substrings the answer holds."""


def check_answer_rule(rule: str) -> str:
    """``rule`` when it is one of ANSWER_RULES; a one-line error otherwise."""
    if rule not in ANSWER_RULES:
        raise InputError(f"unknown answer rule {rule!r}; choose from {', '.join(ANSWER_RULES)}")
    return rule


def other_answer_rule(rule: str) -> str:
    """The answer rule that is not ``rule`` (metrics.json counts the answers the two read differently)."""
    return next(r for r in ANSWER_RULES if r != rule)


CONTEXT_NAMES = {"none": "no context", "country": "COUNTRY", "value": "VALUE", "country_value": "COUNTRY+VALUE",
                 "rot": "RULE-OF-THUMB"}
"""How plots and summaries name each context (the paper's names)."""
CONTEXT_FIELDS = {c: tuple(_FACTS["contexts"][c].get("fields", ())) for c in CONTEXTS}
"""The story's columns each context shows (besides the story itself)."""

TEMPERATURE = float(_FACTS["sampling"]["temperature"])
"""Authors' inference config: temperature 0 (the paper prints none)."""
MAX_TOKENS = int(_FACTS["sampling"]["max_tokens"])
"""Authors' inference config: max_tokens 10 (the answer is one word)."""
DEFAULT_SAMPLES = 1
"""One answer per story and context (greedy decoding)."""
PROMPT_SOURCE = "App. A.3 Fig. 9 (facts/normad.json evaluation.prompt); no-context and COUNTRY+VALUE: ours"
"""What run.json and metrics.json record as the prompt's source."""

STATUSES = ("parsed", "ambiguous", "refusal", "unparsed")
"""How an answer was read; only "parsed" carries a label."""

FIG9_TEMPLATE = _FACTS["prompt"]["template"]
"""App. A.3 Fig. 9 (placeholders context_name, context, story)."""


def prompt_text(context: str, story: str, country: str = "", value: str = "", rule_of_thumb: str = "") -> str:
    """The prompt of ``context`` (in CONTEXTS) for one story: Fig. 9 filled with the context's name and text, or
    the no-context template."""
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}")
    spec = _FACTS["contexts"][context]
    if "template" in spec:
        return spec["template"].format(story=_text(story))
    values = {"country": country, "value": value, "rule_of_thumb": rule_of_thumb}
    shown = spec.get("joiner", "").join(_text(values[f]) for f in spec["fields"])
    return FIG9_TEMPLATE.format(context_name=spec["context_name"], context=shown, story=_text(story))


def _text(value: object) -> str:
    return " ".join(str(value or "").split())


def messages(prompt: str) -> tuple[tuple[str, str], ...]:
    """The conversation: one user message, no system message."""
    return (("user", prompt),)


# ------------------------------------------------------------------------------------------------------ parsing


@dataclass(frozen=True)
class Answer:
    label: str | None
    """yes / no / neutral, or None when the answer is not parsed."""
    status: str


_MARKUP = re.compile(r"[*_`#>\"'“”‘’]+")
_PREFIX = re.compile(r"^\s*(?:(?:final\s+|my\s+)?answer|response|label)\s*(?:\([^)]*\))?\s*[:\-]\s*", re.IGNORECASE)
_NUMBER = re.compile(r"^\s*(?:option\s*)?\(?([123])(?:\s*[).:]|\s*$)", re.IGNORECASE)
_WORD = re.compile(r"\b(yes|no|neither|neutral)\b", re.IGNORECASE)
_LEADING = re.compile(r"^\W*(yes|no|neither|neutral)\b", re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(?:i\s+(?:cannot|can't|can\s+not|won't|am\s+unable|'m\s+unable|am\s+not\s+able|do\s+not|don't)\b|"
    r"as\s+an\s+ai|i'm\s+sorry|i\s+am\s+sorry|it\s+depends|depends\s+on)", re.IGNORECASE)


def parse_answer(text: str | None, rule: str = DEFAULT_ANSWER_RULE) -> Answer:
    """The label an answer gives under ``rule`` (ANSWER_RULES; the module docstring gives both)."""
    if check_answer_rule(rule) == "strict":
        return _strict_answer(text)
    for label, substrings in AUTHORS_SUBSTRINGS.items():
        if any(s in (text or "") for s in substrings):
            return Answer(label, "parsed")
    return Answer(None, "unparsed")


def _strict_answer(text: str | None) -> Answer:
    cleaned = _MARKUP.sub("", text or "").strip()
    cleaned = _PREFIX.sub("", cleaned).strip()
    if not cleaned:
        return Answer(None, "unparsed")
    leading = _LEADING.match(cleaned)
    if leading:
        return Answer(OPTION_WORDS[leading.group(1).lower()], "parsed")
    number = _NUMBER.match(cleaned)
    if number:
        return Answer(OPTION_NUMBERS[number.group(1)], "parsed")
    if _REFUSAL.search(cleaned):
        return Answer(None, "refusal")
    found = {OPTION_WORDS[m.group(1).lower()] for m in _WORD.finditer(cleaned)}
    if len(found) == 1:
        return Answer(found.pop(), "parsed")
    if len(found) > 1:
        return Answer(None, "ambiguous")
    return Answer(None, "unparsed")


def normalise_label(value: object) -> str | None:
    """A gold label as one of LABELS (case-insensitive; "neither" -> neutral), or None when it is none of them."""
    return OPTION_WORDS.get(str(value).strip().lower()) if value is not None else None


OPTION_TEXT = {"yes": "Yes", "no": "No", "neutral": "Neither"}
"""Each label as the option text ``--scoring logprobs`` replays: both ANSWER_RULES read "Yes", "No" and "Neither" as
yes, no and neutral."""
OPTION_GROUP = tuple(OPTION_TEXT.values())


def read_option_token(text: str) -> tuple[str, tuple[str, ...]] | None:
    """The option a generated token (its text without surrounding spaces and punctuation) stands for, as the text
    the replay answers with, and its group (``OptionScoring.read_option``); None for no option. The options are the
    words and option numbers of the strict parser (OPTION_WORDS in any case, OPTION_NUMBERS: "3" and "neither" are
    both Neither), whichever answer rule reads the text: they find the answer token."""
    label = OPTION_WORDS.get(text.lower()) or OPTION_NUMBERS.get(text)
    return None if label is None else (OPTION_TEXT[label], OPTION_GROUP)
