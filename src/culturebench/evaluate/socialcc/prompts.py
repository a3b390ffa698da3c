"""SocialCC prompts and judge-score parsing (Wu, Lian, Wang and Meng, "SocialCC: Interactive Evaluation for Cultural
Competence in Language Agents", ACL 2025; Sec. 3.3-3.4, App. C, Tables 6A-11A).

The six prompts are the paper's tables, transcribed verbatim into ``facts/socialcc.json`` (``prompts``, each with
its table): Table 6A (antagonist, Character 1), Table 7A (protagonist, Character 2, the evaluated model), Tables
8A-11A (judges: cultural awareness, commonsense knowledge, value knowledge, cultural behaviour). Placeholders are
the printed ``{...}`` names; a field the scenario lacks (events, a third character, the commonsense item) leaves an
empty line, which is dropped, except the events, for which Character 2's goals stand in (STAND_INS).

Simulation (Sec. 3.3): the antagonist opens with "Hello" (Table 6A rule 8); then each round is one protagonist and
one antagonist turn, at most 20 rounds (Tables 6A/7A), laid out as AutoGen's two-agent chat (DIALOGUE_SETUPS); a
turn containing "GOOD BYE" ends the dialogue (Table 6A
rule 7, Table 7A; matched case-insensitively). Agents at temperature 1, judges at 0 (Sec. 4.1).

Parsing (ours, ``parse_score``): the last "Score: n" (also "**Score:** n", "score = n", "Score: n/3"); failing
that, a last line ending in ": n" (Table 8A's own example, "No cultural awareness: 0") or an answer that is only a
number. A number outside the judge's scale is ``out_of_range``, an empty answer ``empty``, anything else
``unparsed``; only ``parsed`` judgements carry a score (invalid ones are recorded, never guessed). An echo of the
output format's choices ("Score: [1/0]", Table 8) is no score: it is removed before parsing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from culturebench.facts import read as read_facts
from culturebench.raw.socialcc import portfolio
from culturebench.evaluate.socialcc import DIALOGUE_SETUPS

FACTS = read_facts("socialcc")
SIMULATION = FACTS["simulation"]
MAX_ROUNDS = int(SIMULATION["max_rounds"])
"""Table 6A rule 6 / Table 7A: at most 20 rounds (one protagonist + one antagonist turn each) after the opening."""
OPENING = SIMULATION["opening"]
"""Table 6A rule 8: the antagonist's first sentence (fixed, not generated)."""
END_MARKER = SIMULATION["end_marker"]
_END = re.compile(r"GOOD\s+BYE", re.IGNORECASE)
AGENT_TEMPERATURE = float(SIMULATION["agent_temperature"])  # Sec. 4.1
AGENT_MAX_TOKENS = 256
JUDGE_TEMPERATURE = float(SIMULATION["judge_temperature"])  # Sec. 4.1
JUDGE_MAX_TOKENS = 512

JUDGES = ("awareness", "commonsense", "value", "behaviour")
"""The four judged dimensions, in Table 2's order."""
JUDGE_NAMES = {"awareness": "cultural awareness", "commonsense": "commonsense knowledge",
               "value": "value knowledge", "behaviour": "cultural behaviour"}
JUDGE_SCALES = {"awareness": (0, 1), "commonsense": (0, 1), "value": (0, 1), "behaviour": (0, 3)}
STATUSES = ("parsed", "out_of_range", "empty", "unparsed")
PROMPTS = {name: entry["template"] for name, entry in FACTS["prompts"].items()}
PROMPT_SOURCES = {name: entry["source"] for name, entry in FACTS["prompts"].items()}
PROMPT_SOURCE = "SocialCC Tables 6A-11A, verbatim (facts/socialcc.json prompts)"
BEHAVIOUR_SCALE_NOTE = FACTS["behaviour_scale_note"]

ANTAGONIST_START = "[The conversation begins. Open it.]"
"""Ours, only with ``dialogue_setup: user_first``: the user message before the antagonist's fixed opening."""
DIALOGUE_SETUPS_NOTE = {
    "autogen": "default: as AutoGen's two-agent chat, which the authors ran (Sec. 4.1): each agent's prompt (Table "
               "6A / 7A) is its system message, followed by the dialogue; the antagonist's fixed 'Hello' (Table 6A "
               "rule 8) is its own first message (assistant) and the protagonist's first user message; nothing "
               "else is added",
    "user_first": "ours, the earlier behaviour: as autogen, but the antagonist's messages start with the user turn "
                  f"'{ANTAGONIST_START}' before its 'Hello', for chat templates that refuse an "
                  "assistant turn right after the system message",
}
"""How the agents' chat messages are laid out (option ``dialogue_setup``, one of the package's DIALOGUE_SETUPS)."""

STAND_INS = {"Event 1": ("Character 2's Social Goal 1", "protagonist goals", 0),
             "Event 2": ("Character 2's Social Goal 2", "protagonist goals", 1)}
"""What fills an event a scenario lacks (no public copy of the released scenarios carries events): Character 2's
social goal of the same number. The paper's case tables end their scenario rows with the two topics the dialogue
goes through ("Discuss where to celebrate. Discuss how the new policy will help ...", Tables 15A-16A), which
Character 2's goals restate, and Table 10A judges the value in "Event 2", the step Character 2's second goal is
about. ``event_stand_ins: false`` leaves the lines out instead."""
WITHOUT_STAND_IN = ("Cultural Commonsense", "Character 3 Portfolio")
"""Fields nothing in a record can replace: absent, their lines are left out (the commonsense judge, Table 9A, then
has only the value to compare with)."""
SOURCED_FIELDS = ("Event 1", "Event 2", "Cultural Commonsense", "Cultural Value", "Character 3 Portfolio")
"""The fields whose source (``record``, ``stand-in: ...`` or ``absent``) each scenario's fields record."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9 ]+)\}")


STOP_PATTERNS = {"paper": _END, "tolerant": re.compile(r"\bgood[\s-]*bye\b", re.IGNORECASE)}
"""How a turn ends the dialogue (option ``stop``, one of the package's STOP_RULES). ``paper`` (default): the printed
"GOOD BYE" (Tables 6A-7A), any case and spacing. ``tolerant`` (ours): also "Goodbye" / "good-bye", which small
models say instead and which otherwise lets a dialogue run to the turn limit."""


def ends_dialogue(text: str | None, stop: str = "paper") -> bool:
    return bool(text) and STOP_PATTERNS[stop].search(text) is not None


def fill(template: str, fields: dict) -> str:
    """The template with every ``{Printed Name}`` replaced by its field; lines left empty by an absent field
    are dropped."""
    lines = []
    for line in template.splitlines():
        had_placeholder = bool(_PLACEHOLDER.search(line))
        filled = _PLACEHOLDER.sub(lambda m: str(fields.get(m.group(1)) or ""), line)
        if had_placeholder and not filled.strip():
            continue
        lines.append(filled)
    return "\n".join(lines)


def scenario_fields(row: dict, event_stand_ins: bool = True) -> dict:
    """The printed placeholders of one scenario row (release config ``scenarios``), plus each role's goals
    (``Social Goal 1/2`` differ by role: ``antagonist goals`` / ``protagonist goals``) and ``field_sources``: for
    each of SOURCED_FIELDS whether the record gave it, a stand-in did (STAND_INS) or it is absent."""
    characters = [c for c in (row.get("characters") or []) if c]
    events = list(row.get("events") or [])
    names = [str(c.get("name") or f"Character {i}") for i, c in enumerate(characters, 1)]
    fields = {
        "Scenario": str(row.get("scenario") or ""),
        "Character 1": names[0] if names else "Character 1",
        "Character 2": names[1] if len(names) > 1 else "Character 2",
        "Cultural Commonsense": row.get("commonsense_item") or "",
        "Cultural Value": row.get("value_item") or "",
        "antagonist goals": list((characters[0].get("goals") if characters else None) or []),
        "protagonist goals": list((characters[1].get("goals") if len(characters) > 1 else None) or []),
    }
    for i in (1, 2):
        fields[f"Event {i}"] = events[i - 1] if len(events) >= i else ""
    for i in (1, 2, 3):
        fields[f"Character {i} Portfolio"] = portfolio(characters[i - 1]) if len(characters) >= i else ""
    sources = {name: "record" if fields[name] else "absent" for name in SOURCED_FIELDS}
    for name, (label, goals, index) in STAND_INS.items():
        if event_stand_ins and not fields[name] and len(fields[goals]) > index:
            fields[name] = fields[goals][index]
            sources[name] = f"stand-in: {label}"
    fields["field_sources"] = sources
    return fields


def _with_goals(fields: dict, role: str) -> dict:
    goals = fields.get(f"{role} goals") or []
    return {**fields, "Social Goal 1": goals[0] if goals else "",
            "Social Goal 2": " ".join(goals[1:]) if len(goals) > 1 else ""}


def antagonist_system(fields: dict) -> str:
    """Table 6A filled for Character 1 (its own goals)."""
    return fill(PROMPTS["antagonist"], _with_goals(fields, "antagonist"))


def protagonist_system(fields: dict) -> str:
    """Table 7A filled for Character 2 (its own goals)."""
    return fill(PROMPTS["protagonist"], _with_goals(fields, "protagonist"))


def agent_messages(system: str, turns: list[tuple[str, str]], me: str,
                   setup: str = DIALOGUE_SETUPS[0]) -> tuple[tuple[str, str], ...]:
    """Chat messages for agent ``me`` ("antagonist" / "protagonist") given the dialogue so far (role, text): its
    prompt as the system message, its own turns as assistant messages, the other's as user messages; with
    ``setup`` "user_first" the antagonist's start with ANTAGONIST_START (DIALOGUE_SETUPS)."""
    messages: list[tuple[str, str]] = [("system", system)]
    if me == "antagonist" and setup == "user_first":
        messages.append(("user", ANTAGONIST_START))
    for role, text in turns:
        messages.append(("assistant" if role == me else "user", text))
    return tuple(messages)


# ------------------------------------------------------------------------------------------------ judges

AGENT_NUMBER = {"antagonist": 1, "protagonist": 2}


def transcript_text(turns: list[dict]) -> str:
    """The judges' {Dialogue History} (ours): one line per turn, "Agent 1 (Mike): Hello."."""
    return "\n".join(f"Agent {AGENT_NUMBER[t['role']]} ({t['speaker']}): {' '.join(str(t['text']).split())}"
                     for t in turns)


def judge_messages(judge: str, fields: dict, turns: list[dict]) -> tuple[tuple[str, str], ...]:
    """Tables 8A-11A filled: one user message, as printed (no system message)."""
    return (("user", fill(PROMPTS[judge], {**fields, "Dialogue History": transcript_text(turns)})),)


# ------------------------------------------------------------------------------------------------ parsing


@dataclass(frozen=True)
class Judgement:
    score: int | None
    status: str  # one of STATUSES


_SCORE = re.compile(r"score\W{0,4}?\s*(?:[:=]|is)\s*\**\s*\[?\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_LAST_COLON = re.compile(r":\s*\**\s*\[?\s*(-?\d+(?:\.\d+)?)\s*\]?\W*$")
_ONLY_NUMBER = re.compile(r"^\W*(-?\d+(?:\.\d+)?)\W*$")
_TEMPLATE_ECHO = re.compile(r"\[\s*-?\d+(?:\s*/\s*-?\d+)+\s*\]")
"""The output format's bracketed choices ("Score: [1/0]", Table 8): a judge that echoes them has not scored."""


def parse_score(text: str | None, judge: str) -> Judgement:
    """The judge's score: the last "Score: n", else a last line ending in ": n", else an answer that is only a
    number; outside the judge's scale or not whole -> ``out_of_range``; nothing -> ``empty`` / ``unparsed``."""
    low, high = JUDGE_SCALES[judge]
    if text is None or not text.strip():
        return Judgement(None, "empty")
    text = _TEMPLATE_ECHO.sub("", text)  # an echo of the template's "Score: [1/0]" is no score
    if not text.strip():
        return Judgement(None, "unparsed")
    found = _SCORE.findall(text)
    last_line = text.strip().splitlines()[-1]
    if found:
        raw = found[-1]
    elif _LAST_COLON.search(last_line):
        raw = _LAST_COLON.search(last_line).group(1)
    else:
        match = _ONLY_NUMBER.match(text.strip())
        if not match:
            return Judgement(None, "unparsed")
        raw = match.group(1)
    value = float(raw)
    if not value.is_integer() or not low <= value <= high:
        return Judgement(None, "out_of_range")
    return Judgement(int(value), "parsed")
