"""Prompts and answer parsing for generating NormAd-Eti stories (Rao et al., "NormAd: A Benchmark for Measuring the
Cultural Adaptability of Large Language Models", 2024, Sec. 3.1-3.2, App. A.2).

Story prompts are the authors' released ones (CC BY 4.0, shipped in ``culturebench/facts/normad_authors/``, whose
README names the repository, commit 9ede8512b4d1 and the licence), assembled as the authors' ``PromptBuilder`` does
for gpt-4 (``facts/normad.json`` -> ``generation.story_generation`` cites every piece):

- a system message: ``story_prompts/v2/prefix.txt`` (``prefix_irrelevant.txt`` for a neutral story) + the label's
  guidelines (``guidelines_affirm.txt`` yes, ``guidelines_negate.txt`` no, ``guidelines_irrelevant.txt`` neutral);
- each few-shot of ``few_shots_v2.json`` (``few_shots_gpt4_affirm`` / ``_no`` / ``_irrel``) as a system message
  (country and background) and an assistant message (the answer);
- a system message: the country block + ``reminder.txt``. Yes / no: ``### Country:`` and ``### Cultural background
  [Etiquette]:``; neutral: Country 1 (the story's country) and Country 2 (another Inglehart-Welzel zone), the
  answer giving Country 2's Value and Rule-of-Thumb and a story based on Country 1 (the authors' headings).

``STORIES_PER_LABEL`` is ``num_story_samples`` of the authors' ``conf/prompts/prompts.yaml`` (3); 1024 tokens.
Yes / no stories (option ``yes_no_stories``, :data:`YES_NO_ROUTES`): ``authors`` (default) as collect_stories.py,
the authors' only script that writes them (``few_shots_v3``, temperature 0.9, one atlas item drawn per sample as the
background: :func:`item_block`); ``paper``: the v2 few-shots Fig. 14 prints, temperature 0.5, the whole subsection.
Neutral stories as collect_irrelevant.py (v2 few-shots, 0.5, both subsections). Countries are written as the
authors' prompts write them (:func:`authors_country`: ``ormund_isles``). The checks: App. A.2 Fig. 7 (rule-of-thumb entailed by a background,
Check 2) and Fig. 8 (value an abstraction of the rule-of-thumb, Check 3) as printed; Check 1 for neutral stories
(the paper prints no prompt) is the authors' ``gpt4_filter_neutral.py`` prompt (is the story relevant to the
rule-of-thumb? two examples), kept as data in ``facts/normad.json``. A changed template changes the response-cache
keys, so a re-run after editing asks the model again.
"""

from __future__ import annotations

import json
import re
from functools import cache

import yaml

from culturebench.builders.normad import authors_file, facts
from culturebench.generation.common import parse_yes_no  # noqa: F401 - the judges' reading

_FACTS = facts()["generation"]
_STORY = _FACTS["story_generation"]

GEN_LABELS = ("yes", "no", "neutral")
"""The gold labels a story is generated for (the builder's labels)."""
ENTAILMENT_TEMPLATE = _FACTS["rot_entailment"]["template"]
"""App. A.2 Fig. 7 (placeholders background, rot)."""
ABSTRACTION_TEMPLATE = _FACTS["value_abstraction"]["template"]
"""App. A.2 Fig. 8 (placeholders value, rot)."""
RELEVANCE = _FACTS["neutral_relevance"]
"""Check 1: the authors' relevance filter for neutral stories (examples, template, max_tokens, temperature)."""


@cache
def authors_text(name: str) -> str:
    """A shipped file of the authors (``facts/normad_authors/<name>``) as text."""
    return authors_file(name).read_text(encoding="utf-8")


@cache
def authors_settings() -> dict:
    """The authors' story-generation config, ``conf/prompts/prompts.yaml``."""
    return yaml.safe_load(authors_text("prompts.yaml"))


@cache
def authors_validation() -> dict:
    """The authors' rule-of-thumb validation: stage 1 (entailment) and stage 2 (the minimal edit of a neutral row
    that fails it), prompts verbatim with their settings (``validation_prompts.json``)."""
    return json.loads(authors_text("validation_prompts.json"))


@cache
def few_shots(name: str = "few_shots_v2.json") -> dict:
    """The string literals of the authors' ``few_shots_v2.py`` (or ``few_shots_v3.json``: ``few_shots_v3.py``)."""
    return json.loads(authors_text(name))


STORIES_PER_LABEL = int(authors_settings()["num_story_samples"])
"""Stories per norm and label (prompts.yaml ``num_story_samples``; Sec. 3.1: three per norm and label)."""
STORY_ROUTES = {"neutral": _STORY["neutral_route"]}
"""Neutral stories: collect_irrelevant.py's few-shots file and temperature."""
NEUTRAL_REGENERATION_TEMPERATURE = float(_STORY["neutral_regeneration"]["temperature"])
"""A neutral story asked again after Check 1 refused it: gpt4_filter_neutral.py line 135, temperature 0.9."""
YES_NO_ROUTES = _STORY["yes_no_routes"]
"""Option ``yes_no_stories``: ``authors`` (default: collect_stories.py, few_shots_v3, temperature 0.9, one atlas item
per sample) or ``paper`` (Fig. 14's v2 few-shots, 0.5, the whole subsection), each with its few-shots file,
temperature and background (``one_item`` / ``subsection``)."""
GEN_MAX_TOKENS = int(_STORY["max_tokens"])
JUDGE_TEMPERATURE = 0.0
JUDGE_MAX_TOKENS = 12


def authors_background(background: str) -> str:
    """A subaxis background as the authors' ``get_cultcontext`` writes it: every line ends in a newline."""
    return background.strip("\n") + "\n"


def country_block(label: str, country: str, background: str, other_country: str = "",
                  other_background: str = "") -> str:
    """The last prompt part before the reminder: the country (neutral: Country 1, the story's, and Country 2,
    whose Value and Rule-of-Thumb are asked for) with its subaxis background."""
    if label == "neutral":
        return _STORY["neutral_block"].format(country=country, background=authors_background(background),
                                              other_country=other_country,
                                              other_background=authors_background(other_background))
    if label in GEN_LABELS:
        return _STORY["country_block"].format(country=country, background=authors_background(background))
    raise ValueError(f"unknown label {label!r}")


def item_block(country: str, item: str) -> str:
    """The country block of collect_stories.py: one atlas item as the whole background (no heading, no bullet)."""
    return _STORY["country_block"].format(country=country, background=item)


def authors_country(folder: str) -> str:
    """A country as the authors' scripts write it in a prompt (the key of their scraped file's name:
    ``south_korea``, ``timor-leste``), from the atlas folder's name."""
    return "_".join(folder.split()).casefold()


def story_messages(label: str, block: str, few_shots_file: str = "few_shots_v2.json") -> list[tuple[str, str]]:
    """The conversation for one story (the authors' gpt-4 prompt): system prefix + guidelines, the few-shots of
    ``few_shots_file`` as system / assistant pairs, system ``block`` + reminder."""
    files = _STORY["prompt_files"]
    prefix = authors_text(files["prefix_neutral" if label == "neutral" else "prefix"])
    messages = [("system", prefix + authors_text(files["guidelines"][label]))]
    for shot in few_shots(few_shots_file)[_STORY["few_shots"][label]]:
        messages += [("system", shot["system"]), ("assistant", shot["assistant"])]
    messages.append(("system", block + authors_text(files["reminder"])))
    return messages


def relevance_messages(rule_of_thumb: str, story: str) -> list[tuple[str, str]]:
    """Sec. 3.2 Check 1 as the authors ran it: is the neutral story relevant to the rule-of-thumb (Yes / No)?"""
    messages = []
    for example in RELEVANCE["examples"]:
        messages += [("system", RELEVANCE["template"].format(rot=example["rot"], story=example["story"])),
                     ("assistant", example["answer"])]
    messages.append(("system", RELEVANCE["template"].format(rot=rule_of_thumb.strip(), story=story.strip())))
    return messages


def entailment_prompt(background: str, rule_of_thumb: str) -> str:
    """Sec. 3.2 Check 2, App. A.2 Fig. 7: is the rule-of-thumb entailed by the country's background?"""
    return ENTAILMENT_TEMPLATE.format(background=background.strip(), rot=rule_of_thumb.strip())


def authors_entailment_prompt(background: str, rule_of_thumb: str) -> str:
    """Check 2 as the authors' ``run_model_validation_stage1_rot.py`` asks it: the row's own background as their
    file holds it (``get_cultcontext``: every line ends in a newline) and the rule-of-thumb."""
    return authors_validation()["stage1_rot"]["template"].format(background=authors_background(background),
                                                                 rot=rule_of_thumb)


def authors_entailment_reply(text: str) -> str:
    """The stage-1 reply as the authors compare it: up to its first blank line, lowercased (a story passes only
    when this is exactly the wanted "yes" / "no")."""
    return text.split("\n\n")[0].lower()


def authors_fix_prompt(story: str, rule_of_thumb: str, value: str, country: str, other_country: str) -> str:
    """The authors' stage-2 minimal edit of a neutral row's Value and Rule-of-Thumb (``run_model_validation_stage2_
    fix_rot.py``): ``other_country`` (Country 1) is the rule's country, ``country`` (Country 2) the story's."""
    return authors_validation()["stage2_fix_rot"]["template"].format(
        story=story, rot=rule_of_thumb, value=value, other_country=other_country, country=country)


def parse_authors_fix(text: str) -> tuple[str, str] | None:
    """(rule_of_thumb, value) of a stage-2 reply read as the authors read it: its non-empty lines, the first
    "Rule-of-thumb: <text>", the second "Value: <text>" (each the part after the first ": " up to any next one);
    None where their asserts would stop."""
    lines = [line for line in text.replace("\n \n", "\n\n").split("\n") if line]
    if len(lines) < 2:
        return None
    parts = [line.split(": ") for line in lines[:2]]
    if any(len(p) < 2 for p in parts) or [p[0].lower() for p in parts] != ["rule-of-thumb", "value"]:
        return None
    rule_of_thumb, value = parts[0][1].strip(), parts[1][1].strip()
    return (rule_of_thumb, value) if rule_of_thumb and value else None


def abstraction_prompt(rule_of_thumb: str, value: str) -> str:
    """Sec. 3.2 Check 3, App. A.2 Fig. 8: is the value an abstraction of the rule-of-thumb?"""
    return ABSTRACTION_TEMPLATE.format(value=value.strip(), rot=rule_of_thumb.strip())


# ------------------------------------------------------------------------------------------------------ parsing

FIELDS = ("value", "rule_of_thumb", "story", "explanation")
_KEY_ALIASES = {"value": "value", "rule of thumb": "rule_of_thumb", "ruleofthumb": "rule_of_thumb",
                "rot": "rule_of_thumb", "story": "story", "explanation": "explanation"}


def _key(name: str) -> str | None:
    return _KEY_ALIASES.get(" ".join(re.sub(r"[-_*#:]+", " ", str(name)).lower().split()))
_HEADED = re.compile(r"^\s*(?:#+\s*|\*\*)?(value|rule[- _]of[- _]thumb|story|explanation)\s*(?:\*\*)?\s*:?\s*(?:\*\*)?"
                     r"\s*(.*)$", re.IGNORECASE)
_CLOSING = re.compile(r"(?:^|(?<=[.!?\"'])\s+)([^.!?]*\?)\s*$")
_ASKED_ABOUT = re.compile(r"^Is\s+what\s+([A-Z][a-z]+|he|she|they)\s+did\s+socially\s+acceptable\s*\?$")
_PRONOUN = re.compile(r"\b(he|she|they)\b")
"""The few_shots_v3 stories (collect_stories.py's) name no one: "Is what she did socially acceptable?"."""


def _json_objects(text: str):
    """Every top-level ``{...}`` JSON object in ``text`` (code fences and prose around it tolerated)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            yield obj
        start = text.find("{", end)


_LOOSE_JSON_LINE = re.compile(r'^\s*"([^"]+)"\s*:\s*"(.*)"\s*,?\s*$')


def _from_loose_json(text: str) -> dict[str, str]:
    """``"key": "value",`` lines of a JSON object that does not parse (small models leave quotes inside a value
    unescaped): each known key's value runs to the line's last quote."""
    out = {}
    for line in text.splitlines():
        match = _LOOSE_JSON_LINE.match(line)
        if match and _key(match.group(1)):
            out[_key(match.group(1))] = match.group(2).replace('\\"', '"')
    return out


def _from_headings(text: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        match = _HEADED.match(line)
        if match:
            current = _key(match.group(1))
            out.setdefault(current, [])
            if match.group(2).strip():
                out[current].append(match.group(2).strip())
        elif current and line.strip() and not line.strip().startswith("```"):
            out[current].append(line.strip())
    return {k: " ".join(v) for k, v in out.items()}


_HEADING_LINE = re.compile(r"^\s*(?:#+\s*|\*\*)?([^:\n]+?)\s*(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.*)$")


def _neutral_headings() -> dict[str, str | None]:
    spec = _STORY["neutral_headings"]
    table: dict[str, str | None] = {" ".join(h.casefold().split()): None for h in spec["ignored"]}
    table.update({" ".join(spec[k].casefold().split()): k for k in FIELDS})
    return table


def _from_neutral_headings(text: str) -> dict[str, str]:
    """A neutral answer's sections under the authors' headings (``neutral_headings``: Country 2's Value and
    Rule-of-Thumb, the story based on Country 1, the explanation; Country 1's Value and Rule-of-Thumb are read and
    dropped); a heading given twice keeps its last section, as the authors' ``rindex`` parsing does."""
    table = _neutral_headings()
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _HEADING_LINE.match(line)
        name = " ".join(match.group(1).casefold().split()) if match else None
        if name in table:
            current = table[name]
            if current is not None:
                out[current] = [match.group(2).strip()] if match.group(2).strip() else []
        elif current is not None and line.strip() and line.strip() != "---":
            out[current].append(line.strip())
    return {k: " ".join(v) for k, v in out.items()}


def parse_story(text: str, label: str = "yes") -> tuple[dict[str, str] | None, str]:
    """``(fields, "parsed")`` or ``(None, why)``: the four fields as non-empty text, the story ending with the
    "... socially acceptable?" question. A neutral answer is read under the authors' Country 2 / Country 1 headings
    only. Otherwise JSON first (the first object holding the keys), then the ``"key": "value"`` lines of a JSON
    object that does not parse, then "Value: ..." style headings (the authors' few-shot answers' form)."""
    if label == "neutral":
        return _checked(_from_neutral_headings(text) or None,
                        "unparsed: no 'Value for Country 2 ...' / 'Story based on Country 1 ...' headings")
    found: dict[str, str] | None = None
    for obj in _json_objects(text):
        fields = {}
        for key, value in obj.items():
            name = _key(key)
            if name and isinstance(value, str):
                fields[name] = value
        if fields:
            found = fields
            break
    if found is None:
        found = _from_loose_json(text) or _from_headings(text) or None
    return _checked(found, "unparsed: no JSON object or Value/Rule-of-Thumb/Story/Explanation headings")


def _checked(found: dict[str, str] | None, why_none: str) -> tuple[dict[str, str] | None, str]:
    if not found:
        return None, why_none
    fields = {k: " ".join(str(found.get(k, "")).split()) for k in FIELDS}
    missing = [k for k in FIELDS if not fields[k]]
    if missing:
        return None, f"unparsed: missing or empty {', '.join(missing)}"
    story, status = closing_question(fields["story"])
    if story is None:
        return None, status
    fields["story"] = story
    return fields, status


def closing_question(story: str) -> tuple[str | None, str]:
    """The story ending with exactly "Is what <name> did socially acceptable?" (the NormAd-Eti form; <name> may be
    he / she / they, as the few_shots_v3 stories ask) and the parse status. A story ending in another question (the
    authors' own few-shots end "Is Maria justified in doing so?", "Is what John did acceptable?", "Is she justified
    in doing so?"; small models write "Is this socially acceptable?") gets the NormAd-Eti question about the name
    (else the pronoun) that question asks about, else the story's main character; one without a question gets it
    added. A story that still judges the action in its body ("... was not socially acceptable.", an answered
    question) breaks the no-reasoning rule and is refused."""
    match = _CLOSING.search(story)
    body = story[:match.start(1)].rstrip() if match else story.rstrip()
    if re.search(r"socially\s+(?:un)?acceptable", body, re.IGNORECASE):
        return None, "unparsed: the story judges the action itself ('socially acceptable' before the question)"
    asked = _ASKED_ABOUT.match(match.group(1).strip()) if match else None
    if asked:
        return story.strip(), "parsed"
    pronoun = _PRONOUN.search(match.group(1)) if match else None
    name = ((main_character(match.group(1)) or (pronoun.group(1) if pronoun else None)) if match else None) \
        or main_character(body)
    if name is None:
        return None, "unparsed: the story does not end with 'Is what ... did socially acceptable?' and names no one"
    question = f"Is what {name} did socially acceptable?"
    return f"{body} {question}", f"parsed (question {'rewritten' if match else 'added'} for {name})"


_NOT_NAMES = {"at", "the", "in", "on", "when", "after", "during", "while", "before", "everyone", "it", "this", "he",
              "she", "they", "his", "her", "there", "one", "as", "then", "an", "once", "later", "today",
              "yesterday", "finally", "however", "but", "and", "so", "we", "i", "you", "their", "someone", "is",
              "what", "why", "how", "who", "does", "did", "was", "were", "no", "yes", "instead", "without",
              "upon", "each", "every", "some", "all", "that", "these", "those", "if", "because", "since"}


def main_character(story: str) -> str | None:
    """The first capitalised word of the story that is not a common sentence opener (the model forgot the closing
    question; small models often do): it is asked about in the added question."""
    for word in re.findall(r"\b([A-Z][a-z]+)\b", story):
        if word.casefold() not in _NOT_NAMES:
            return word
    return None


