"""NormAd prompts and answer parsing (Rao et al., "NormAd: A Benchmark for Measuring the Cultural Adaptability of
Large Language Models", 2024, Sec. 3-5, App. A.3 Fig. 9).

Every story is asked once per **context** (how much cultural information the model is given): none (the baseline),
COUNTRY, VALUE, COUNTRY+VALUE and RULE-OF-THUMB. The model judges whether the action in the story is socially
acceptable and answers Yes, No or Neither (Neither = the gold label ``neutral``). One user message.

**Protocols** (``PROTOCOLS``; run.json and metrics.json name the one a run used). ``authors`` (the default) asks as
the authors' ``src/response_collection/run_model_inference.py`` (NormAd repository, commit 9ede851), the script whose
output files their analysis scores, so the protocol behind the published tables: its own template per context (lines
30-79; RULE-OF-THUMB and VALUE share ``task_prompt``, the value shown as "Rule-of-thumb: ..."; COUNTRY+VALUE shows
"Country: ...\nRoT: <value>"; lines 270-291), filled with ``str.format`` from the story's row as it is, at
temperature 0 with ``max_tokens`` 50 (lines 110, 124, 181; ``--max-tokens-70b`` asks the 20 the script asks of a model
whose name holds "70b"). The templates are data: ``facts/normad_authors/inference_prompts.json`` (CC BY 4.0, verbatim).
``paper`` asks App. A.3 Fig. 9 (``facts/normad.json`` -> ``evaluation``), printed once with ``{context_name}`` =
country (COUNTRY) or rule (VALUE, RULE-OF-THUMB) and ``{context}`` the story's country / value / rule-of-thumb; the
paper prints no prompt for the no-context baseline nor for COUNTRY+VALUE, and those two are marked "ours" in the facts
file; temperature 0 and ``max_tokens`` 10 (the authors' story_inference.yaml, which their inference script never
reads). A changed prompt changes the response-cache keys, so re-run into a new folder.

Parsing (``ANSWER_RULES``): App. A.3 prints only the answer format ("Options: 1) Yes 2) No 3) Neither Answer (Yes,
No or Neither):"). By default an answer is read as the authors' script reads it (lines 346-355, the rule that made the
published numbers; ``inference_prompts.json`` ``answer_reading``): "Yes" in the answer or "option 1" in the
lower-cased answer is yes, else "No" or "option 2" is no, else "Neither" or "option 3" is Neither ("Neither. Not
acceptable." is no, "No. Yes, in some cases." is yes, "OPTION 2" is no); an answer that reaches the script's
fallback (Neither) without any of these gets status ``unparsed``. ``--answer-rule strict`` is ours: the first Yes /
No / Neither word after an optional "Answer:" prefix, or an option number ("3) Neither"); otherwise the only one of
those words present anywhere; several different ones are ``ambiguous``, a refusal ("I cannot ...") is ``refusal``,
nothing recognisable (or an empty answer) is ``unparsed``. Only ``parsed`` answers carry a label; the others are scored
as Neither by default (the authors' fallback) or as wrong with ``--unparsed-wrong`` (``parsing.UNPARSED_RULES``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from culturebench.facts import file as facts_file
from culturebench.facts import read as read_facts
from culturebench.errors import InputError
from culturebench.evaluate.normad import (  # the options' choices
    ANSWER_RULES, CONTEXTS, DEFAULT_ANSWER_RULE, DEFAULT_PROTOCOL, PROTOCOLS)

_FACTS = read_facts("normad")["evaluation"]
AUTHORS = json.loads(facts_file("normad_authors", "inference_prompts.json").read_text(encoding="utf-8"))
"""The authors' run_model_inference.py as data: templates, which context fills which, sampling, answer reading."""

LABELS = ("yes", "no", "neutral")
"""Gold and predicted labels, in the paper's order (Neither = neutral, Sec. 3.1.3)."""
OPTION_WORDS = {**_FACTS["answers"]["words"], "neutral": "neutral"}
"""Answer words and the label each stands for (Fig. 9's Yes / No / Neither; "neutral", the gold label's own name,
is read as Neither: ours)."""
OPTION_NUMBERS = dict(_FACTS["answers"]["option_numbers"])
"""Fig. 9's numbered options 1) Yes 2) No 3) Neither."""
AUTHORS_READING = tuple((rule["label"], tuple(rule["case_sensitive"]), tuple(rule["lower_cased"]))
                        for rule in AUTHORS["answer_reading"]["rules"])
"""The authors' reading (run_model_inference.py lines 346-355): the first label (in this order) with a substring of
the answer as given (case-sensitive) or of the answer lower-cased."""


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

@dataclass(frozen=True)
class ProtocolSettings:
    """What a protocol asks with: decoding and where its prompts come from (run.json, metrics.json)."""

    temperature: float
    max_tokens: int
    prompt_source: str


PROTOCOL_SETTINGS = {
    "authors": ProtocolSettings(
        float(AUTHORS["sampling"]["temperature"]), int(AUTHORS["sampling"]["max_tokens"]),
        f"the authors' {AUTHORS['source']['path']} at {AUTHORS['source']['commit'][:7]}: its template per context "
        "(facts/normad_authors/inference_prompts.json), one user message"),
    "paper": ProtocolSettings(
        float(_FACTS["sampling"]["temperature"]), int(_FACTS["sampling"]["max_tokens"]),
        "App. A.3 Fig. 9 (facts/normad.json evaluation.prompt); no-context and COUNTRY+VALUE: ours"),
}
"""Each protocol's temperature, ``max_tokens`` and prompt source (``PROTOCOLS``)."""
MAX_TOKENS_70B = int(AUTHORS["sampling"]["max_tokens_70b"])
"""``--max-tokens-70b``: the authors' script asks 20 tokens of a model whose name holds "70b" (lines 110, 124, 181)."""
TEMPERATURE = PROTOCOL_SETTINGS[DEFAULT_PROTOCOL].temperature
"""The default protocol's temperature (0: the published tables read prediction_label_temp0.0)."""
MAX_TOKENS = PROTOCOL_SETTINGS[DEFAULT_PROTOCOL].max_tokens
"""The default protocol's max_tokens (50, the authors' script)."""
DEFAULT_SAMPLES = 1
"""One answer per story and context (greedy decoding)."""


def check_protocol(protocol: str) -> str:
    """``protocol`` when it is one of PROTOCOLS; a one-line error otherwise."""
    if protocol not in PROTOCOLS:
        raise InputError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    return protocol


def protocol_record(protocol: str | None, temperature: float | None = None, max_tokens: int | None = None) -> dict:
    """metrics.json's ``protocol``: its name, what it is, its prompt source and decoding (the protocol's, or what a
    run asked when given); a protocol not recorded (responses without their prompts) is named None."""
    if protocol is None:
        return {"name": None, "meaning": "not recorded: the responses hold no prompt of a known protocol"}
    settings = PROTOCOL_SETTINGS[check_protocol(protocol)]
    return {"name": protocol, "meaning": PROTOCOLS[protocol], "prompt_source": settings.prompt_source,
            "temperature": settings.temperature if temperature is None else temperature,
            "max_tokens": settings.max_tokens if max_tokens is None else max_tokens}


STATUSES = ("parsed", "ambiguous", "refusal", "unparsed")
"""How an answer was read; only "parsed" carries a label."""

FIG9_TEMPLATE = _FACTS["prompt"]["template"]
"""App. A.3 Fig. 9 (placeholders context_name, context, story)."""
AUTHORS_TEMPLATES = {name: t["text"] for name, t in AUTHORS["templates"].items()}
"""The authors' four templates (run_model_inference.py lines 30-79), by their variable names."""


def prompt_text(context: str, story: str, country: str = "", value: str = "", rule_of_thumb: str = "",
                protocol: str = DEFAULT_PROTOCOL) -> str:
    """The prompt of ``context`` (in CONTEXTS) for one story under ``protocol`` (PROTOCOLS): the authors' template
    of the context filled from the row (``authors_prompt``), or Fig. 9 filled with the context's name and text."""
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}")
    row = {"story": story, "country": country, "value": value, "rule_of_thumb": rule_of_thumb}
    if check_protocol(protocol) == "authors":
        return authors_prompt(context, row)
    spec = _FACTS["contexts"][context]
    if "template" in spec:
        return spec["template"].format(story=_text(story))
    shown = spec.get("joiner", "").join(_text(row[f]) for f in spec["fields"])
    return FIG9_TEMPLATE.format(context_name=spec["context_name"], context=shown, story=_text(story))


def authors_prompt(context: str, row: dict) -> str:
    """The authors' prompt of ``context`` for a release row (lines 270-291): the context's template with each
    placeholder filled from its column as the row has it (``str.format``; a missing value as "", their
    ``fillna('')``)."""
    spec = AUTHORS["contexts"][context]
    values = {placeholder: "" if row.get(column) is None else str(row[column])
              for placeholder, column in spec["fill"].items()}
    return AUTHORS_TEMPLATES[spec["template"]].format(**values)


def protocol_of_prompt(prompt: str | None) -> str | None:
    """The protocol (PROTOCOLS) whose template ``prompt`` is, None when it is none of them (or no prompt)."""
    if prompt:
        for protocol, patterns in _PROTOCOL_PATTERNS.items():
            if any(p.fullmatch(prompt) for p in patterns):
                return protocol
    return None


def _pattern(template: str) -> re.Pattern:
    """``template`` as a regular expression: its text literally, each placeholder any text."""
    parts = re.split(r"\{\w+\}", template)
    return re.compile("(?s:.*)".join(re.escape(p) for p in parts))


_PROTOCOL_PATTERNS = {
    "authors": tuple(_pattern(t) for t in AUTHORS_TEMPLATES.values()),
    "paper": (_pattern(FIG9_TEMPLATE), *(_pattern(c["template"]) for c in _FACTS["contexts"].values()
                                         if "template" in c)),
}


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
    text = text or ""
    lowered = text.lower()
    for label, as_given, lower_cased in AUTHORS_READING:
        if any(s in text for s in as_given) or any(s in lowered for s in lower_cased):
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
_LISTED_OPTION = re.compile(r"(?<=\s)([123])\) (?:Yes|No|Neither)\b")
"""One numbered option of the list after "Options:" (Fig. 9 and the authors' templates: 1) Yes 2) No 3) Neither)."""


def relisted(prompt: str, order: tuple[int, ...], labels: tuple[str, ...] | None = None) -> str:
    """``prompt`` with its three numbered options listed in ``order`` (positions into LABELS, the order both
    protocols list them in), their numbers (or ``labels`` in their place, first to last: the ``letters``
    variant's A) B) C)) and everything else kept (issue #63's variants). The answer is read by its word, whatever
    the order or the labels; an answer by number ("option 1") is read by the paper's order, one by letter alone
    is not read."""
    head, mark, options = prompt.rpartition("Options:")
    words = iter(OPTION_TEXT[LABELS[i]] for i in order)
    names = iter(labels or ())
    listed, n = _LISTED_OPTION.subn(lambda m: f"{next(names, m.group(1))}) {next(words)}", options)
    if not mark or n != len(LABELS):
        raise ValueError("the prompt lists no three numbered options after 'Options:'")
    return head + mark + listed


def read_option_token(text: str) -> tuple[str, tuple[str, ...]] | None:
    """The option a generated token (its text without surrounding spaces and punctuation) stands for, as the text
    the replay answers with, and its group (``OptionScoring.read_option``); None for no option. The options are the
    words and option numbers of the strict parser (OPTION_WORDS in any case, OPTION_NUMBERS: "3" and "neither" are
    both Neither), whichever answer rule reads the text: they find the answer token."""
    label = OPTION_WORDS.get(text.lower()) or OPTION_NUMBERS.get(text)
    return None if label is None else (OPTION_TEXT[label], OPTION_GROUP)
