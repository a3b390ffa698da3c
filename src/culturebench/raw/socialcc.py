"""Readers for SocialCC scenario files under ``RAW/socialcc/`` (any depth; the ``wvs/`` folder of extra respondents
is skipped). Three layouts are accepted, in ``*.json`` files (one scenario object, or a list of them) and ``*.jsonl``
files (one scenario object a line, blank lines skipped); each object is recognised by its keys:

**released** (the SocialCC release as it is distributed, one JSON per scenario, ``data/SocialCC_JSON/<id>.json``
as downstream projects read it)::

    {"scenario": "...", "cultural_value": "People from Japan strongly agree that ...",
     "cultural_value_country": "Japan",
     "agent_1_background": "Mike: A 17-year-old male high school student from China.",
     "agent_2_background": "Kim: A 17-year-old male high school student from Japan.",
     "prompts": {"agent_1": {"task": "...", "goals": {"goal_1": "...", "goal_2": "..."}},
                 "agent_2": {"task": "...", "goals": {"goal_1": "...", "goal_2": "..."}}}}

Optional: ``agent_1`` / ``agent_2`` (names), ``agent_3_background`` (+ ``prompts.agent_3``), ``events`` (list) or
``event_1`` / ``event_2``, ``cultural_knowledge`` (the commonsense item), ``cultural_knowledge_country``,
``commonsense_topic``, ``id``. What the paper describes but a record lacks (events, a third character, the
commonsense item) is None, not an error.

**cc_mediation** (the per-scenario metadata that suhyun565/CC-Mediation's committed dialogue files
``data/{training,evaluate}/<id>.json`` embed under ``metadata``, or one such record a line as in
``socialcc_scenario_metadata_from_cc_mediation.jsonl``; CC-Mediation does not commit the released SocialCC JSONs
it was built from)::

    {"scenario_id": 1, "scenario_context": "...",
     "agents": {"agent_1": {"name", "age", "gender", "occupation", "nationality"}, "agent_2": {...}},
     "cultural_axis": {"agent_1_value": "People from ...", "agent_2_value": "People from ..."},
     "goals": {"agent_1": {"goal_1": "...", "goal_2": "..."}, "agent_2": {...}}}

CC-Mediation parsed the released ``agent_N_background`` into the agent fields (any may be null), copied the
released ``scenario`` and goals, and gave each agent a value (its ``build_agent_prompts.py``): the released
``cultural_value`` verbatim to the agent from ``cultural_value_country`` and a flipped copy naming its own country to
the other; when neither agent is from it, agent 1 got the released value with its country swapped in and agent 2 the
flipped copy. The reader keeps ``agent_2_value`` as the value (VALUE_AGENT) and ``agent_1_value`` as
``other_value``; the builder runs CC-Mediation's rule backwards to find which is the released value
(``builders.socialcc.value_branch``). The record has no events, no commonsense item, no third character, no
``task`` and no ``cultural_value_country`` (the value's country is the one its statement names): these are None.

**culturebench** (our JSONL, used by the bundled sample)::

    {"id": "vel-001", "scenario": "...", "events": ["...", "..."],
     "characters": [{"name", "age", "gender", "nationality", "occupation", "goal"}, ... 2 or 3 ...],
     "country": "Veloria", "commonsense_topic": "Etiquette", "commonsense_item": "<atlas item text>",
     "value_item": "People from Jordan strongly agree that ..."}   (+ optional "value_country")

The characters are in the paper's order: Character 1 (the antagonist, Table 6A), Character 2 (the evaluated
protagonist, Table 7A), optional Character 3. A line or file that is not JSON, not an object, lacks a required key
or has a value of the wrong type is an :class:`~culturebench.errors.InputError` naming the file, the 1-based line
(JSONL) or list position, and the key. Whether the *content* is right is the builder's business (quarantine).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from culturebench.errors import InputError
from culturebench.facts import read as read_facts
from culturebench.io import InputFile, input_name, jsonl_objects, read_input_text

FOLDER = "socialcc"
SUFFIXES = (".jsonl", ".json")
SKIP_FOLDERS = ("wvs",)
RELEASED_KEYS = ("scenario", "cultural_value", "cultural_value_country", "agent_1_background", "agent_2_background",
                 "prompts")
OUR_KEYS = ("id", "scenario", "characters", "country", "commonsense_topic", "commonsense_item", "value_item")
CHARACTER_KEYS = ("name", "age", "gender", "nationality", "occupation", "goal")
CC_MEDIATION_KEYS = ("scenario_context", "agents", "cultural_axis", "goals")
PROFILE_KEYS = ("name", "age", "gender", "nationality", "occupation")
VALUE_AGENT = "agent_2"
"""The CC-Mediation agent whose value the reader takes as the value (the builder's ``value_branch`` may take the
other's: see the module docstring)."""
EVENTS = 2
_AGE = re.compile(r"(\d{1,3})-year-old")
_FROM = re.compile(r"\bfrom\s+(.+?)[\s.]*$", re.IGNORECASE | re.DOTALL)
_NAME = re.compile(r"^\s*([^:]{1,60}?)\s*:")


@dataclass(frozen=True)
class ScenarioRow:
    file: str
    row: int  # 1-based line (JSONL) or position in the file (JSON)
    source_id: str
    layout: str  # "released", "cc_mediation" or "culturebench"
    scenario: str
    events: tuple[str, ...] | None
    characters: tuple[dict, ...]  # Character 1, 2 (, 3): name, age, gender, nationality, occupation, profile, goals, task
    commonsense_country: str | None
    commonsense_topic: str | None
    commonsense_item: str | None
    value_item: str
    value_country: str | None
    other_value: str | None = None  # cc_mediation: the other agent's value (builders.socialcc.value_branch)


def scenario_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise InputError("missing folder of SocialCC scenario files", file=folder)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                   and not any(part in SKIP_FOLDERS for part in p.relative_to(folder).parts[:-1]))
    if not files:
        raise InputError("no SocialCC scenario files (*.json, *.jsonl) in the folder", file=folder)
    return files


def _text(value, file: str, row: int, column: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InputError(f"{column} must be a string, not {type(value).__name__}", file=file, row=row, column=column)
    return value.strip()


def _goals(value, file: str, row: int, column: str) -> list[str]:
    """Goals as given: {goal_1, goal_2, ...} (key order), a list, a string or None (no goals)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value.strip()]
    items = list(value.values()) if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise InputError("goals must be an object, a list or a string", file=file, row=row, column=column)
    return [_text(g, file, row, column) for g in items if g is not None]


def profile_fields(background: str) -> dict:
    """name, age, nationality read from a background like "Mike: A 25-year-old male IT programmer from China."
    (None where absent)."""
    name = _NAME.match(background)
    age = _AGE.search(background)
    origin = _FROM.search(background)
    return {"name": name.group(1) if name else None, "age": int(age.group(1)) if age else None,
            "nationality": origin.group(1).strip() if origin else None}


def _released_character(record: dict, number: int, file: str, row: int) -> dict | None:
    key = f"agent_{number}"
    background = record.get(f"{key}_background")
    if background is None and number > 2:
        return None
    background = _text(background, file, row, f"{key}_background")
    prompts = record["prompts"].get(key) or {}
    if not isinstance(prompts, dict):
        raise InputError("must be an object with task and goals", file=file, row=row, column=f"prompts.{key}")
    found = profile_fields(background)
    name = record.get(key) if isinstance(record.get(key), str) and record.get(key).strip() else found["name"]
    return {"name": name.strip() if name else None, "age": found["age"], "gender": None,
            "nationality": found["nationality"], "occupation": None, "profile": background,
            "goals": _goals(prompts.get("goals"), file, row, f"prompts.{key}.goals"),
            "task": _text(prompts.get("task"), file, row, f"prompts.{key}.task", optional=True)}


def _events(record: dict, file: str, row: int) -> tuple[str, ...] | None:
    if record.get("events") is not None:
        events = record["events"]
        if not isinstance(events, list):
            raise InputError("events must be a list of strings", file=file, row=row, column="events")
        return tuple(_text(e, file, row, "events") for e in events)
    found = [record.get(f"event_{i}") for i in range(1, EVENTS + 1)]
    if all(e is None for e in found):
        return None
    return tuple(_text(e, file, row, f"event_{i}") for i, e in enumerate(found, 1) if e is not None)


def parse_released(record: dict, file: str, row: int, source_id: str) -> ScenarioRow:
    for key in RELEASED_KEYS:
        if key not in record:
            raise InputError("required key of the released layout is missing", file=file, row=row, column=key)
    if not isinstance(record["prompts"], dict):
        raise InputError("prompts must be an object with agent_1 and agent_2", file=file, row=row, column="prompts")
    characters = tuple(c for c in (_released_character(record, n, file, row) for n in (1, 2, 3)) if c is not None)
    commonsense = record.get("cultural_knowledge", record.get("cultural_commonsense"))
    return ScenarioRow(file, row, str(record.get("id", source_id)), "released",
                       _text(record["scenario"], file, row, "scenario"), _events(record, file, row), characters,
                       _text(record.get("cultural_knowledge_country"), file, row, "cultural_knowledge_country", True),
                       _text(record.get("commonsense_topic"), file, row, "commonsense_topic", True),
                       _text(commonsense, file, row, "cultural_knowledge", True),
                       _text(record["cultural_value"], file, row, "cultural_value"),
                       _text(record["cultural_value_country"], file, row, "cultural_value_country"))


def _object(value, file: str, row: int, column: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"must be a JSON object, not {type(value).__name__}", file=file, row=row, column=column)
    return value


def _cc_mediation_character(record: dict, key: str, file: str, row: int) -> dict:
    agent = _object(_object(record["agents"], file, row, "agents").get(key), file, row, f"agents.{key}")
    fields = {k: _text(agent.get(k), file, row, f"agents.{key}.{k}", optional=True) for k in PROFILE_KEYS
              if k != "age"}
    age = agent.get("age")
    if age is not None and (not isinstance(age, int) or isinstance(age, bool)):
        raise InputError(f"age must be a whole number or null, not {age!r}", file=file, row=row,
                         column=f"agents.{key}.age")
    goals = _object(record["goals"], file, row, "goals").get(key)
    return {**fields, "age": age, "profile": None, "goals": _goals(goals, file, row, f"goals.{key}"), "task": None}


def parse_cc_mediation(record: dict, file: str, row: int, source_id: str) -> ScenarioRow:
    """A CC-Mediation record (its ``metadata`` when it is a whole dialogue file): Character 1 = agent_1, Character 2
    = agent_2, the value = ``cultural_axis.agent_2_value`` (VALUE_AGENT), ``agent_1_value`` the other; what it
    lacks is None."""
    identifier = record.get("scenario_id", source_id)
    if "metadata" in record and "cultural_axis" not in record:
        record = _object(record["metadata"], file, row, "metadata")
    for key in CC_MEDIATION_KEYS:
        if key not in record:
            raise InputError("required key of the CC-Mediation layout is missing", file=file, row=row, column=key)
    axis = _object(record["cultural_axis"], file, row, "cultural_axis")
    characters = tuple(_cc_mediation_character(record, key, file, row) for key in ("agent_1", "agent_2"))
    return ScenarioRow(file, row, str(identifier), "cc_mediation",
                       _text(record["scenario_context"], file, row, "scenario_context"), None, characters,
                       None, None, None,
                       _text(axis.get(f"{VALUE_AGENT}_value"), file, row, f"cultural_axis.{VALUE_AGENT}_value"),
                       None, _text(axis.get("agent_1_value"), file, row, "cultural_axis.agent_1_value", True))


def _our_character(character, index: int, file: str, row: int) -> dict:
    where = f"characters[{index}]"
    if not isinstance(character, dict):
        raise InputError("character must be a JSON object", file=file, row=row, column=where)
    for key in CHARACTER_KEYS:
        if key not in character:
            raise InputError("required key is missing", file=file, row=row, column=f"{where}.{key}")
    age = character["age"]
    if isinstance(age, float) and age.is_integer():
        age = int(age)
    if not isinstance(age, int) or isinstance(age, bool) or not 0 <= age <= 130:
        raise InputError(f"age must be a whole number of years (0-130), not {age!r}", file=file, row=row,
                         column=f"{where}.age")
    fields = {k: _text(character[k], file, row, f"{where}.{k}") for k in ("name", "gender", "nationality",
                                                                         "occupation")}
    return {**fields, "age": age, "profile": None, "goals": _goals(character["goal"], file, row, f"{where}.goal"),
            "task": None}


def parse_ours(record: dict, file: str, row: int) -> ScenarioRow:
    for key in OUR_KEYS:
        if key not in record:
            raise InputError("required key is missing", file=file, row=row, column=key)
    source_id = record["id"]
    if not isinstance(source_id, (str, int)) or isinstance(source_id, bool):
        raise InputError("id must be a string or an integer", file=file, row=row, column="id")
    characters = record["characters"]
    if not isinstance(characters, list) or not 2 <= len(characters) <= 3:
        raise InputError("characters must be a list of 2 or 3 objects", file=file, row=row, column="characters")
    parsed = tuple(_our_character(c, i, file, row) for i, c in enumerate(characters, start=1))
    events = _events(record, file, row)
    if events is not None and len(events) != EVENTS:
        raise InputError(f"events must be a list of {EVENTS} strings", file=file, row=row, column="events")
    return ScenarioRow(file, row, str(source_id), "culturebench", _text(record["scenario"], file, row, "scenario"),
                       events, parsed, _text(record["country"], file, row, "country"),
                       _text(record["commonsense_topic"], file, row, "commonsense_topic"),
                       _text(record["commonsense_item"], file, row, "commonsense_item"),
                       _text(record["value_item"], file, row, "value_item"),
                       _text(record.get("value_country"), file, row, "value_country", optional=True))


def parse_scenario(record, file: str, row: int, source_id: str = "") -> ScenarioRow:
    if not isinstance(record, dict):
        raise InputError(f"scenario is not a JSON object (found {type(record).__name__})", file=file, row=row)
    if "cultural_value" in record or "agent_1_background" in record:
        return parse_released(record, file, row, source_id)
    if "cultural_axis" in record or isinstance(record.get("metadata"), dict) and "cultural_axis" in record["metadata"]:
        return parse_cc_mediation(record, file, row, source_id)
    return parse_ours(record, file, row)


def read_scenarios(path: Path, root: Path) -> tuple[list[ScenarioRow], InputFile]:
    name = input_name(path, root)
    data, text, encoding = read_input_text(path, name)
    rows = []
    if path.suffix.lower() == ".json":
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON ({exc.msg} at line {exc.lineno}, character {exc.colno})",
                             file=name) from None
        records = record if isinstance(record, list) else [record]
        rows = [parse_scenario(r, name, i, path.stem if len(records) == 1 else f"{path.stem}-{i}")
                for i, r in enumerate(records, start=1)]
    else:
        rows = [parse_scenario(record, name, number, f"{path.stem}-{number}")
                for number, record in jsonl_objects(text.splitlines(keepends=True), name)]
    if not rows:
        raise InputError("file has no scenarios", file=name)
    return rows, InputFile.from_bytes(path, name, data, len(rows), encoding)


@cache
def _portfolio_template() -> str:
    return read_facts("socialcc")["portfolio_template"]


def portfolio(character: dict) -> str:
    """A character's profile text: as given (released backgrounds), else Tables 12A-16A's "Name: A 25-year-old
    male IT programmer from China." from its fields.
    A field the record lacks (CC-Mediation's agents have nulls where it could not parse the released background)
    is left out with its words: {"name": "Lucas", "age": 29, "occupation": "accountant", "nationality": "Egypt"}
    gives "Lucas: A 29-year-old accountant from Egypt.", a name alone "Lucas."."""
    if character.get("profile"):
        return str(character["profile"])
    fields = {k: character.get(k) for k in ("name", "age", "gender", "occupation", "nationality")}
    if all(v not in (None, "") for v in fields.values()):
        return _portfolio_template().format(**fields)
    words = [f"{fields['age']}-year-old" if fields["age"] is not None else "", fields["gender"] or "",
             fields["occupation"] or "", f"from {fields['nationality']}" if fields["nationality"] else ""]
    described = " ".join(w for w in words if w)
    if not described:
        return f"{fields['name'] or ''}."
    article = "" if described.startswith("from ") else "A "
    return f"{fields['name'] or ''}: {article}{described}."
