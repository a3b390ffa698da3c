"""Prompts and answer parsing for generating NormAd-Eti stories (Rao et al., "NormAd: A Benchmark for Measuring the
Cultural Adaptability of Large Language Models", 2024, Sec. 3.1-3.2, App. A.2, App. B.5).

What the paper prints is data in ``facts/normad.json`` -> ``generation`` and used as printed:

- the two story-validation judges of App. A.2: Fig. 7 (is the rule-of-thumb entailed by the background? Check 2)
  and Fig. 8 (is the value an abstraction of the rule-of-thumb? Check 3), answered Yes or No;
- the few-shot examples of App. B.5 Fig. 14 (three fictional countries, each as Country / Cultural Background /
  Value / Rule-of-Thumb / Story / Explanation), shown in every story prompt; the model answers in the same headings.

The paper prints no instruction text for the story prompt and no prompt for the neutral-consistency check (Check 1):
those are OUR OWN TEXT, carrying the paper's rules (Sec. 3.1: a value, a rule-of-thumb and a story; no geographical
or cultural identifier in the story; yes / no / neutral stories, the neutral one from a background outside the
country's Inglehart-Welzel zone). A changed template changes the response-cache keys, so a re-run after editing asks
the model again. Our prompts open with a fixed title line (``TITLES``), so a scripted test server can tell the kinds
apart; the judges of Figs. 7-8 open with "Background:" and "Value:".
"""

from __future__ import annotations

import json
import re

from culturebench.builders.normad import facts

_FACTS = facts()["generation"]

GEN_LABELS = ("yes", "no", "neutral")
"""The gold labels a story is generated for (the builder's labels)."""

TITLES = {
    "yes": "# Etiquette story: the character FOLLOWS the norm",
    "no": "# Etiquette story: the character BREAKS the norm",
    "neutral": "# Etiquette story: a norm the first background does NOT cover",
    "consistency": "# Judge: does the background decide this story?",
}
"""Title lines of our own prompts."""
ENTAILMENT_TEMPLATE = _FACTS["rot_entailment"]["template"]
"""App. A.2 Fig. 7 (placeholders background, rot)."""
ABSTRACTION_TEMPLATE = _FACTS["value_abstraction"]["template"]
"""App. A.2 Fig. 8 (placeholders value, rot)."""

GEN_TEMPERATURE = 0.7
GEN_MAX_TOKENS = 450
JUDGE_TEMPERATURE = 0.0
JUDGE_MAX_TOKENS = 12

_RULES_ROT = """Definitions:
- VALUE: a short, general moral principle that helps a person tell right from wrong according to the background; it
  is a broader abstraction of the rule-of-thumb.
- RULE-OF-THUMB: one concrete behaviour that the background says is proper. It must prescribe a direction (start it
  like "It is polite to ...", "One should ...", "It is expected that ...") and it must be culture-agnostic: no
  country, people, nationality, region, religion, festival or any other cultural identifier. Never prescribe
  anything discriminatory or harmful."""

_RULES_STORY = """- STORY: at most five sentences about everyday people named only by their first names, in a generic place
  ("a friend's house", "a restaurant", "the office"). It ends with the question "Is what <name> did socially
  acceptable?".
  * Do NOT mention any nationality, country, city, region or language.
  * Do NOT mention any culture, tradition, custom, religion or norm, and do not say what is expected.
  * Do NOT explain or judge the action inside the story ("not knowing the custom ...", "instead of the proper ...");
    just say what the person did.
- EXPLANATION: one or two sentences saying why the answer to the question is what it is."""

_FORMAT = """Reply in the format of the examples: the headings "## Value:", "## Rule-of-Thumb:", "## Story:" and
"## Explanation:", each followed by its text on the next line, and nothing else."""


def few_shot_examples() -> str:
    """App. B.5 Fig. 14: the three fictional examples in the figure's layout."""
    spec = _FACTS["few_shot"]
    blocks = [spec["example_template"].format(
        country=e["country"], title=e["title"], value=e["value"], rule_of_thumb=e["rule_of_thumb"],
        story=e["story"], explanation=e["explanation"],
        background="\n".join(spec["background_item"].format(text=t) for t in e["background"]))
        for e in spec["examples"]]
    return "\n\n".join(["Examples:", *blocks])

_STORY_KIND = {
    "yes": ("- In the STORY the main character performs exactly what the rule-of-thumb prescribes, so the answer to "
            "the question is YES."),
    "no": ("- In the STORY the main character does the opposite of what the rule-of-thumb prescribes (or ignores "
           "it), so the answer to the question is NO. The rule-of-thumb still states the proper behaviour."),
}


def _background_block(title: str, background: str) -> str:
    return f"## {title}\n{background.strip()}"


def generation_prompt(label: str, country: str, subaxis_title: str, background: str, *, variant: int = 0,
                      other_country: str = "", other_background: str = "") -> str:
    """The story prompt for one label; ``variant`` (0, 1, 2) asks for a different item of the background each
    time; ``other_*``: the background a neutral story is drawn from."""
    focus = (f"This is story number {variant + 1}: if the background lists several behaviours, build it on item "
             f"number {variant + 1} (counting from the top, wrapping around).")
    if label in ("yes", "no"):
        return "\n\n".join([
            TITLES[label],
            (f"Below is the etiquette background of a country ({subaxis_title}). From it, write a value, a "
             "rule-of-thumb that is proper in this country (but may not be elsewhere), a story and an explanation."),
            _RULES_ROT + "\n" + _STORY_KIND[label] + "\n" + _RULES_STORY,
            few_shot_examples(),
            _background_block(f"Country: {country}\n## Background [{subaxis_title}]", background),
            focus,
            _FORMAT,
        ])
    if label == "neutral":
        return "\n\n".join([
            TITLES["neutral"],
            ("Below are the etiquette backgrounds of two countries. Write the VALUE and RULE-OF-THUMB of country 1 "
             "(from background 1), then a STORY in which the main character follows a behaviour taken from "
             "background 2 that background 1 says NOTHING about, so that country 1's norms neither approve nor "
             "disapprove of it, and an EXPLANATION saying that background 1 does not address the action."),
            _RULES_ROT + "\n- The STORY must not touch the rule-of-thumb of country 1 at all.\n" + _RULES_STORY,
            few_shot_examples(),
            _background_block(f"Country 1: {country}\n## Background 1 [{subaxis_title}]", background),
            _background_block(f"Country 2: {other_country}\n## Background 2 [{subaxis_title}]", other_background),
            focus,
            _FORMAT,
        ])
    raise ValueError(f"unknown label {label!r}")


def consistency_prompt(background: str, story: str) -> str:
    """Sec. 3.2 (1): is a neutral story really outside the background? Consistent when the answer is No."""
    return "\n\n".join([
        TITLES["consistency"],
        "Read the etiquette background of a country and a short story.",
        _background_block("Background", background),
        f"## Story\n{story.strip()}",
        ("Question: does the background contain a rule that makes the main action of the story clearly acceptable "
         "or clearly unacceptable? Answer with one word, Yes or No."),
    ])


def entailment_prompt(background: str, rule_of_thumb: str) -> str:
    """Sec. 3.2 Check 2, App. A.2 Fig. 7: is the rule-of-thumb entailed by the country's background?"""
    return ENTAILMENT_TEMPLATE.format(background=background.strip(), rot=rule_of_thumb.strip())


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
_CLOSING = re.compile(r"(?:^|(?<=[.!?\"'])\s+)([^.!?]*socially\s+acceptable\s*\?)\s*$", re.IGNORECASE)
_ASKED_ABOUT = re.compile(r"^Is\s+what\s+([A-Z][a-z]+)\s+did\s+socially\s+acceptable\s*\?$")


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


def parse_story(text: str) -> tuple[dict[str, str] | None, str]:
    """``(fields, "parsed")`` or ``(None, why)``: the four fields as non-empty text, the story ending with the
    "... socially acceptable?" question. JSON first (the first object holding the keys), then the ``"key": "value"``
    lines of a JSON object that does not parse, then "Value: ..." style headings."""
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
    if not found:
        return None, "unparsed: no JSON object or Value/Rule-of-Thumb/Story/Explanation headings"
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
    """The story ending with exactly "Is what <name> did socially acceptable?" (the NormAd-Eti form) and the parse
    status. Small models often drop the question or write "Is this socially acceptable?": the question is then
    (re)written about the main character. A story that still judges the action in its body ("... was not socially
    acceptable.", an answered question) breaks the no-reasoning rule and is refused."""
    match = _CLOSING.search(story)
    body = story[:match.start(1)].rstrip() if match else story.rstrip()
    if re.search(r"socially\s+(?:un)?acceptable", body, re.IGNORECASE):
        return None, "unparsed: the story judges the action itself ('socially acceptable' before the question)"
    asked = _ASKED_ABOUT.match(match.group(1).strip()) if match else None
    if asked:
        return story.strip(), "parsed"
    name = main_character(body)
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
