"""NormAd story generation against the scripted server: deterministic replies (malformed ones included), every
filter rejecting a constructed bad item, the output building with ``build_release(registry.benchmark("normad"), ...)``, and resume."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import REFERENCE

from culturebench.errors import InputError
from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.chat import BackendError
from culturebench.evaluate.runs.cache import ResponseCache
from scripted_server import ScriptedServer
from culturebench import registry
from culturebench.generation import normad as gen
from culturebench.generation import normad_prompts as prompts
from culturebench.raw.normad import STORY_COLUMNS
from culturebench.release import build_release

REPO = Path(__file__).resolve().parents[1]

# The constructed bad items (country, subaxis, label, story number) and what must reject them.
MALFORMED = ("Kestrava", "Eating", "yes", 1)  # not JSON -> unparsed
NO_QUESTION = ("Kestrava", "Eating", "no", 1)  # story without the question -> unparsed
LEAK = ("Veloria", "Eating", "yes", 2)  # "Velorian" in the story -> leak
LEAK_REAL = ("Veloria", "Eating", "no", 2)  # a real demonym in the rule-of-thumb -> leak
NEUTRAL_RETRY = ("Veloria", "Eating", "neutral", 1)  # judged inconsistent on attempt 1, fine on attempt 2
NEUTRAL_BAD = ("Veloria", "Eating", "neutral", 2)  # judged inconsistent on every attempt -> discarded
NOT_ENTAILED = ("Ormund Isles", "Eating", "yes", 1)
JUDGE_GARBLED = ("Ormund Isles", "Eating", "yes", 2)  # entailment judge answers neither yes nor no
NOT_ABSTRACT = ("Ormund Isles", "Eating", "no", 1)
DUPLICATE = ("Ormund Isles", "Eating", "no", 3)  # the same story as ("Ormund Isles", "Eating", "no", 2)
# neutral stories whose rule-of-thumb is entailed by the story's own background (the authors' check 2 fails them):
NEUTRAL_LEAKY = ("Kestrava", "Eating", "neutral", 1)  # repaired by the minimal edit
NEUTRAL_FIX_GARBLED = ("Kestrava", "Eating", "neutral", 2)  # the edit's reply does not parse -> rot_fix_unparsed


_GUIDELINE_LABEL = {'The answer should be "Yes"': "yes", 'The answer should be "No"': "no",
                    'The answer should be "Irrelevant"': "neutral"}
_BLOCK = re.compile(r"^### Country(?: 1)?:\n(.+)\n\n### Cultural background(?: for Country 1)? \[Etiquette\]:\n"
                    r"(### (.+)\n(?:- .*\n)+)", re.MULTILINE)
_OTHER = re.compile(r"^### Country 2:\n(.+)\n\n### Cultural background for Country 2 \[Etiquette\]:\n"
                    r"(### .+\n(?:- .*\n)+)", re.MULTILINE)
_ITEM = re.compile(r"^### Country:\n(.+)\n\n### Cultural background \[Etiquette\]:\n(.+?)### NOTE", re.MULTILINE)
"""A yes / no story's block as collect_stories.py writes it: one atlas item, then the reminder."""
_UNITS = gen.read_units(REPO / "raw")
_UNIT_OF_ITEM = {(u.authors_name, item): u for u in _UNITS for item in u.items}
_COUNTRY = {u.authors_name: u.country for u in _UNITS}


def _case(body: dict) -> tuple[str, str, str, int]:
    """(country, subaxis, label, story number) of a story request: the label from the guidelines in the first
    system message, the country from the last (the country block), the number from the sample index."""
    messages = body["messages"]
    label = next(lab for marker, lab in _GUIDELINE_LABEL.items() if marker in messages[0]["content"])
    country, _, subaxis = _block(messages[-1]["content"])
    return _COUNTRY[country], subaxis, label, body.get("seed", 0) % gen.STORIES_PER_LABEL + 1


def _block(block: str) -> tuple[str, str, str]:
    """(country as written, its whole subsection background, the subsection title) of a story's country block:
    the subsection itself, or (collect_stories.py) the unit whose item it shows."""
    match = _BLOCK.search(block)
    if match:
        return match.groups()
    country, item = _ITEM.search(block).groups()
    unit = _UNIT_OF_ITEM[(country, item)]
    return country, unit.background + "\n", unit.title


def _token(*parts: object) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:40]


def _background_mark(background: str) -> str:
    """What an entailed rule-of-thumb carries: a mark of the background it was written from."""
    return "BG" + _token(background.strip())[:8]


def story_reply(body: dict) -> str:
    case = _case(body)
    label, number = case[2], case[3]
    attempt = body.get("seed", 0) // gen.STORIES_PER_LABEL
    if case == MALFORMED:
        return "Sorry, I cannot write that story."
    block = body["messages"][-1]["content"]
    own = _block(block)[1]
    other = _OTHER.search(block)
    name = {NEUTRAL_RETRY: "Rex" if attempt == 0 else "Sam", NEUTRAL_BAD: "Ivo", NEUTRAL_FIX_GARBLED: "Kim"}.get(
        case, "Ann")
    token = _token(*case[:3], 2 if case == DUPLICATE else number, attempt)
    story = f"{name} went to a dinner with friends and did act {token}. Is what {name} did socially acceptable?"
    if case == NO_QUESTION:
        story = f"at dinner a guest did act {token}."  # no question and no name: unparsed
    if case == LEAK:
        story = f"At a Velorian dinner {name} did act {token}. Is what {name} did socially acceptable?"
    # the rule-of-thumb carries the mark of the background it is written from: Country 2's for a neutral story
    written_for = own if not other or case in (NEUTRAL_LEAKY, NEUTRAL_FIX_GARBLED) else other.group(2)
    rot = f"It is polite to wait for the host before drinking ({_background_mark(written_for)})."
    if case == LEAK_REAL:
        rot = "It is polite to drink like the Germans do."
    if case == NOT_ENTAILED:
        rot = "It is polite to NOT-ENTAILED sing loudly."
    if case == JUDGE_GARBLED:
        rot = "It is polite to GARBLED clap twice."
    value = "NOT-ABSTRACT value." if case == NOT_ABSTRACT else "Respect for hosts."
    if other:  # the authors' neutral headings; Country 1's Value and Rule-of-Thumb are not the row's
        value = f"Respect for hosts ({_token(other.group(1))[:6]})."
        return ("---\n## Value for Country 2 (Unrelated to Cultural Background for Country 1): \n" + value +
                "\n\n## Rule-of-Thumb for Country 2 (Unrelated to Cultural Background for Country 1): \n" + rot +
                "\n\n## Value for Country 1 (Unrelated to Cultural Background for Country 2):\nWRONG value"
                "\n\n## Rule-of-Thumb for Country 1 (Unrelated to Cultural Background for Country 2):\nWRONG rot"
                "\n\n## Story based on Country 1 (Unrelated to Cultural Background for Country 2):\n" + story +
                "\n\n## Explanation: \nNot covered.\n")
    if number == 3:  # JSON answers (fenced) are parsed too
        obj = {"value": value, "rule_of_thumb": rot, "story": story, "explanation": f"Because of the norm ({label})."}
        return f"```json\n{json.dumps(obj)}\n```"
    return (f"---\n## Value: \n{value}\n\n## Rule-of-Thumb: \n{rot}\n\n## Story:\n{story}\n\n## Explanation: \n"
            f"Because of the norm ({label}).\n")


def reply(prompt: str, body: dict) -> str:
    last = body["messages"][-1]["content"]
    if last.endswith("Is this story relevant to the rule-of-thumb (Yes/No ONLY)?"):  # Check 1 (authors' filter)
        return "Yes" if ("Rex " in last or "Ivo " in last) else "No"
    if prompt.startswith("Task: You will be given a story, a rule-of-thumb"):  # the authors' stage-2 minimal edit
        return "Here you go." if "Kim " in prompt else "Rule-of-thumb: FIXED rule.\n\nValue: FIXED value."
    if prompt.endswith("entailed by the background? Answer with Yes or No\n"):  # the authors' stage 1, GPT-4 style
        background = prompt.split("\n", 1)[1].split("\nRule-of-thumb:")[0]
        return "Yes" if _background_mark(background) in prompt else "No"
    if prompt.startswith("Background:\n"):  # Fig. 7: entailed only by the background the rule was written from
        if "GARBLED" in prompt:
            return "Hmm, hard to say."
        background = prompt.split("\n", 1)[1].split("\nRule-of-thumb:")[0]
        return "Yes" if _background_mark(background) in prompt else "No."
    if prompt.startswith("Value: "):  # Fig. 8
        return "No" if "NOT-ABSTRACT" in prompt else "Answer: Yes"
    return story_reply(body)


@pytest.fixture
def raw_dir(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    for folder in ("cultural_atlas", "inglehart_welzel"):
        shutil.copytree(REPO / "raw" / folder, raw / folder)
    return raw


def _backend(server: ScriptedServer) -> OpenAIBackend:
    return OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=8, max_retries=3,
                         backoff_base=0.01, backoff_max=0.05)


def _rows(raw: Path) -> list[dict]:
    with (raw / "normad" / gen.OUTPUT_FILE).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _ids(raw: Path) -> set[str]:
    return {row["ID"] for row in _rows(raw)}


def _ident(case) -> str:
    country, subaxis, label, number = case
    return f"{country.casefold()}/{subaxis.casefold()}/{label}/{number}".replace(" ", "_")


def test_generates_filters_and_builds(raw_dir: Path, tmp_path: Path) -> None:
    assert "normad" in registry.generators()
    # a 500 and a non-JSON 200 first: the backend retries them
    with ScriptedServer(reply=reply, faults=[500, "malformed"]) as server:
        line, written = gen.GENERATOR.generate(_backend(server), gen.NormAdGenerateOptions(out=raw_dir, only="eating"))
    summary = json.loads((raw_dir / ".generation" / "normad.summary.json").read_text())
    assert summary["norm_units"] == 3 and summary["stories_planned"] == 27
    rejected = summary["rejected_by_check"]
    # the authors' check 2: the story's own background; a neutral story it entails is repaired, not discarded; a
    # yes / no story it does not entail is kept, marked (none of their scripts drops it: issue 51)
    assert rejected == {"no_other_zone": 0, "unparsed": 2, "leak": 2, "neutral_inconsistent": 1,
                        "rot_not_entailed": 0, "rot_fix_unparsed": 1, "value_not_abstraction": 1,
                        "duplicate": 1}, rejected
    assert summary["kept"] == 27 - 8 == len(_rows(raw_dir)) and summary["rot_fixed"] == 1
    assert summary["check2_failures_kept"] == 2 and summary["options"]["check2_failures"] == "keep"
    assert summary["neutral_regenerations"] == 1 + gen.NEUTRAL_REGENERATIONS
    ids = _ids(raw_dir)
    for case in (MALFORMED, NO_QUESTION, LEAK, LEAK_REAL, NEUTRAL_BAD, NOT_ABSTRACT, DUPLICATE, NEUTRAL_FIX_GARBLED):
        assert _ident(case) not in ids, case
    rows = {row["ID"]: row for row in _rows(raw_dir)}
    rows_all = dict(rows)
    mark = " -> kept, fails Check 2 (check2_failures: drop discards it)"
    assert rows.pop(_ident(NOT_ENTAILED))["Check RoT Entailed"] == "no" + mark
    assert rows.pop(_ident(JUDGE_GARBLED))["Check RoT Entailed"].endswith(mark)
    zone = {"veloria": "Protestant Europe", "kestrava": "Confucian", "ormund_isles": "African-Islamic"}  # the sample
    retried = rows[_ident(NEUTRAL_RETRY)]
    assert retried["Attempts"] == "2" and retried["Check Neutral Consistency"].startswith("pass")
    assert "Sam" in retried["Story"]
    fixed = rows.pop(_ident(NEUTRAL_LEAKY))
    assert (fixed["Rule-of-Thumb"], fixed["Value"]) == ("FIXED rule.", "FIXED value.")
    assert fixed["Check RoT Entailed"] == "yes -> fixed (stage 2 minimal edit)"
    for row in rows.values():
        assert row["Check Leak"] == "pass" and row["Check Value Abstraction"] == "yes"
        assert row["Check RoT Entailed"] == ("no" if row["Gold Label"] == "neutral" else "yes")
        assert row["Subaxis"] == "eating" and row["Background"].startswith("### Eating\n- ")
        if row["Gold Label"] == "neutral":  # Value and Rule-of-Thumb from the other country, story from Country
            assert row["Other Country"] and row["Other Country"] != row["Country"]
            assert _token(row["Other Country"])[:6] in row["Value"]
            assert "WRONG" not in row["Value"] + row["Rule-of-Thumb"]
            assert _background_mark(row["Other Background"]) in row["Rule-of-Thumb"]
            assert zone[row["Other Country"]] != zone[row["Country"]]
        else:
            assert row["Other Country"] == "" and _background_mark(row["Background"]) in row["Rule-of-Thumb"]
    # neutral sources come from another Inglehart-Welzel zone (the three sample countries are in three zones)
    assert {r["Gold Label"] for r in rows.values()} == {"yes", "no", "neutral"}
    assert written[0] == raw_dir / "normad" / gen.OUTPUT_FILE and "kept" in line

    # the log: every call, with prompt, raw output, parse result and rejection reason
    log = [json.loads(x) for x in (raw_dir / ".generation" / "normad.log.jsonl").read_text().splitlines()]
    stories = [e for e in log if e["kind"] == "story"]
    assert len(stories) == 27 + 1 + gen.NEUTRAL_REGENERATIONS
    bad = next(e for e in stories if e["id"] == _ident(MALFORMED))
    assert bad["output"].startswith("Sorry") and bad["parse"].startswith("unparsed") and bad["rejection"] == "unparsed"
    # the authors' gpt-4 conversation: prefix + guidelines, three few-shot pairs, country block + reminder
    assert [m["role"] for m in bad["messages"]] == ["system"] + ["system", "assistant"] * 3 + ["system"]
    assert bad["messages"][0]["content"].startswith("In this task, we present a country, followed by its cultural")
    # (collect_stories.py: the country as the authors write it, one atlas item of the subsection, the v3 few-shots)
    item = bad["messages"][-1]["content"].split("[Etiquette]:\n")[1].split("### NOTE")[0]
    assert bad["messages"][-1]["content"].startswith("\n---\n### Country:\nkestrava\n\n### Cultural background "
                                                     f"[Etiquette]:\n{item}### NOTE")
    assert f"- {item}\n" in next(r["Background"] for r in rows_all.values() if r["Country"] == "kestrava") + "\n"
    assert bad["sampling"]["temperature"] == 0.9 and "A woman attended a dinner party" in bad["messages"][2]["content"]
    assert {e["rejection"] for e in log if e.get("rejection")} == {
        "unparsed", "leak", "neutral_inconsistent", "rot_fix_unparsed", "value_not_abstraction", "duplicate"}
    # a neutral story is asked at collect_irrelevant.py's 0.5, again after Check 1 at gpt4_filter_neutral.py's 0.9
    retries = [e["sampling"]["temperature"] for e in stories if e["id"] == _ident(NEUTRAL_RETRY)]
    assert retries == [0.5, 0.9]
    # check 2 as the authors' stage 1 / 2 ask it: one user message each, at their temperatures
    leaky = [e for e in log if e["id"] == _ident(NEUTRAL_LEAKY)]
    judged = next(e for e in leaky if e["kind"] == "judge_entailment")["messages"]
    assert len(judged) == 1 and judged[0]["role"] == "user"
    assert judged[0]["content"].startswith(f"Background:\n{fixed['Background']}\n\n\nRule-of-thumb: It is polite")
    assert judged[0]["content"].endswith("\n\nIs the above rule-of-thumb entailed by the background? Answer with "
                                         "Yes or No\n")
    edit = next(e for e in leaky if e["kind"] == "fix_rot")
    assert edit["sampling"]["temperature"] == 1.0 and edit["sampling"]["max_tokens"] == 500
    assert f"Country 1:\n{fixed['Other Country']}\n\nCountry 2:\nkestrava\n" in edit["messages"][0]["content"]

    # the builder reads it (extra columns ignored); every check passes, incl. background and leak checks
    folder, verdict = build_release(registry.benchmark("normad"), raw_dir, tmp_path / "rel", 0, lambda stage: None)
    assert verdict["failed"] == 0, verdict
    import polars as pl

    stories_table = pl.read_parquet(next((folder / "data" / "stories").glob("*.parquet")))
    assert stories_table.height == summary["kept"]
    assert set(STORY_COLUMNS) <= set(_rows(raw_dir)[0])


def test_check2_paper_route_tests_the_other_background_and_discards(raw_dir: Path, tmp_path: Path) -> None:
    """check2: paper (Sec. 3.2's text): Fig. 7 against the background of the country the rule was written for (a
    neutral story's other country), entailment required, failures discarded: the two neutral stories whose rule
    the story's own background entails are dropped, nothing is edited."""
    config = tmp_path / "gen.yaml"
    config.write_text("check2: paper\nyes_no_stories: paper\n")
    with ScriptedServer(reply=reply) as server:
        options = gen.NormAdGenerateOptions.parse({"only": "eating"}, config).replace(out=raw_dir)
        gen.GENERATOR.generate(_backend(server), options)
    summary = json.loads((raw_dir / ".generation" / "normad.summary.json").read_text())
    assert summary["rejected_by_check"]["rot_not_entailed"] == 4 and summary["rejected_by_check"]["rot_fix_unparsed"] == 0
    assert summary["rot_fixed"] == 0 and summary["options"]["check2"] == "paper"
    ids = _ids(raw_dir)
    assert _ident(NEUTRAL_LEAKY) not in ids and _ident(NEUTRAL_FIX_GARBLED) not in ids
    log = [json.loads(x) for x in (raw_dir / ".generation" / "normad.log.jsonl").read_text().splitlines()]
    rows = {row["ID"]: row for row in _rows(raw_dir)}
    for entry in log:
        if entry["kind"] == "judge_entailment" and entry["label"] == "neutral" and entry["id"] in rows:
            assert entry["messages"][0]["content"].startswith(
                f"Background:\n{rows[entry['id']]['Other Background'].strip()}\nRule-of-thumb: ")
    assert not [e for e in log if e["kind"] == "fix_rot"]
    # yes_no_stories: paper: Fig. 14's v2 few-shots, the whole subsection, temperature 0.5
    bad = next(e for e in log if e["kind"] == "story" and e["id"] == _ident(MALFORMED))
    assert bad["messages"][-1]["content"].startswith("\n---\n### Country:\nkestrava\n\n### Cultural background "
                                                     "[Etiquette]:\n### Eating\n- ")
    assert bad["sampling"]["temperature"] == 0.5 and "Maria, calmly asked Emma" in bad["messages"][2]["content"]


def test_check2_failures_drop_discards_what_the_default_keeps(raw_dir: Path, tmp_path: Path) -> None:
    """check2_failures: drop (route authors): the two yes stories whose rule the stage-1 reply does not entail (one
    "No", one garbled) are discarded as rot_not_entailed instead of kept and marked."""
    config = tmp_path / "gen.yaml"
    config.write_text("check2_failures: drop\n")
    options = gen.NormAdGenerateOptions.parse({"only": "eating"}, config).replace(out=raw_dir)
    with ScriptedServer(reply=reply) as server:
        gen.GENERATOR.generate(_backend(server), options)
    summary = json.loads((raw_dir / ".generation" / "normad.summary.json").read_text())
    assert summary["rejected_by_check"]["rot_not_entailed"] == 2 and summary["check2_failures_kept"] == 0
    assert summary["kept"] == 27 - 10 and summary["options"]["check2_failures"] == "drop"
    assert _ident(NOT_ENTAILED) not in _ids(raw_dir) and _ident(JUDGE_GARBLED) not in _ids(raw_dir)


def test_authors_stage2_reply_reading() -> None:
    assert prompts.parse_authors_fix("Rule-of-Thumb: Bring a gift.\n \nValue: Generosity.") == (
        "Bring a gift.", "Generosity.")
    assert prompts.parse_authors_fix("Sure:\nRule-of-thumb: x\nValue: y") is None  # the first line must be it
    assert prompts.parse_authors_fix("Rule-of-thumb: x") is None
    assert prompts.authors_entailment_reply("No\n\nBecause ...") == "no"
    assert prompts.authors_entailment_reply("No.") == "no."  # compared exactly: not the wanted "no"


def test_resume_after_interruption_reasks_nothing(raw_dir: Path) -> None:
    fatal_at = 12

    def faults(number: int, body: dict):
        return 400 if number == fatal_at else None  # a 400 is not retried: the run stops like a kill

    with ScriptedServer(reply=reply, faults=faults) as server, pytest.raises(BackendError):
        gen.generate(_backend(server), raw_dir, raw_dir, only={"veloria"}, subaxes={"eating"})
    with ResponseCache(raw_dir / ".generation" / "cache.sqlite") as cache:
        cached_before = len(cache)
    assert 0 < cached_before < fatal_at
    with ScriptedServer(reply=reply) as server:
        gen.generate(_backend(server), raw_dir, raw_dir, only={"veloria"}, subaxes={"eating"})
        sent = server.request_count
    with ResponseCache(raw_dir / ".generation" / "cache.sqlite") as cache:
        assert len(cache) == cached_before + sent  # every request sent was new
    first = (raw_dir / "normad" / gen.OUTPUT_FILE).read_bytes()
    with ScriptedServer(reply=reply) as server:  # a finished run re-run: nothing asked, same file
        summary = gen.generate(_backend(server), raw_dir, raw_dir, only={"veloria"}, subaxes={"eating"})
        assert server.request_count == 0
    assert (raw_dir / "normad" / gen.OUTPUT_FILE).read_bytes() == first
    assert summary["kept"] == len(_rows(raw_dir)) > 0


def test_leak_check_and_selection() -> None:
    assert gen.leaks("Anna ate with Bob.", ["Veloria"]) == []
    assert gen.leaks("A Velorian meal.", ["Veloria"]) == ["Velorian"]
    assert gen.leaks("She met Germans.", ["Veloria"]) == ["Germans"]
    assert gen.leaks("They went to ormund isles.", ["Veloria", "Ormund Isles"]) == ["ormund isles"]
    assert gen.leaks("They walked south.", ["South Korea"]) == []
    countries, subaxes = gen._selection(gen.NormAdGenerateOptions(only="Veloria, gift giving,ormund_isles"))
    assert countries == {"veloria", "ormund isles"} and subaxes == {"gift_giving"}
    assert gen._selection(gen.NormAdGenerateOptions()) == (None, None)


def test_neutral_needs_another_zone(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    shutil.copytree(REPO / "raw" / "cultural_atlas", raw / "cultural_atlas")
    (raw / "inglehart_welzel").mkdir()
    (raw / "inglehart_welzel" / "zones.csv").write_text(
        "Country,Cultural_Region\nVeloria,Confucian\nKestrava,Confucian\nOrmund Isles,Confucian\n")
    units = gen.read_units(raw)
    slots = gen.plan(units, units[:1], seed=0)
    assert [s.reason for s in slots if s.label == "neutral"] == ["no_other_zone"] * 3
    assert all(s.state == "pending" for s in slots if s.label != "neutral")


def test_other_zone_draws_take_the_authors_story_map_unless_raw_is_asked_for(tmp_path: Path) -> None:
    """Malta is in Latin America in the authors' story scripts' map; a RAW table placing it in Catholic Europe
    changes the draws only with zones: raw (and a bad value in --config is one error naming the file)."""
    raw = tmp_path / "raw"
    shutil.copytree(REPO / "raw" / "cultural_atlas" / "veloria", raw / "cultural_atlas" / "malta")
    (raw / "inglehart_welzel").mkdir()
    (raw / "inglehart_welzel" / "zones.csv").write_text("Country,Cultural_Region\nmalta,Catholic Europe\n")
    assert {u.zone for u in gen.read_units(raw)} == {"Latin America"}
    assert {u.zone for u in gen.read_units(raw, "raw")} == {"Catholic Europe"}
    config = tmp_path / "gen.json"
    config.write_text('{"zones": "raw"}')
    assert gen.NormAdGenerateOptions.parse({}, config).zones == "raw"
    assert gen.NormAdGenerateOptions.parse({}).zones == "authors"
    config.write_text('{"zones": "wvs"}')
    with pytest.raises(InputError, match="zones") as info:
        gen.NormAdGenerateOptions.parse({}, config)
    assert "gen.json" in str(info.value)


def test_parsing() -> None:
    ok = '{"value": "v", "Rule-of-Thumb": "r", "story": "Ann sat. Is what Ann did socially acceptable?", ' \
         '"explanation": "e"}'
    assert prompts.parse_story(ok)[1] == "parsed"
    assert prompts.parse_story("Value: v\nRule-of-Thumb: r\nStory: Ann sat. Is what Ann did socially "
                               "acceptable?\nExplanation: e")[0]["rule_of_thumb"] == "r"
    assert prompts.parse_story('{"value": "v"}')[1].startswith("unparsed: missing")
    assert prompts.parse_story("")[0] is None
    added = prompts.parse_story('{"value": "v", "rule_of_thumb": "r", "story": "At noon Mia ate.", "explanation": "e"}')
    assert added[0]["story"] == "At noon Mia ate. Is what Mia did socially acceptable?" and "added" in added[1]
    unescaped = ('```json\n{\n  "value": "v",\n  "rule_of_thumb": "r",\n  "story": "Ann said "thanks" and left.",\n'
                 '  "explanation": "e"\n}\n```')
    assert prompts.parse_story(unescaped) == ({"value": "v", "rule_of_thumb": "r", "story": 'Ann said "thanks" and left. '
                                               "Is what Ann did socially acceptable?", "explanation": "e"},
                                              "parsed (question added for Ann)")
    # real small-model habits: a generic closing question, an answered question, no character at all
    assert prompts.closing_question("Is what Ann did socially acceptable?") == (
        "Is what Ann did socially acceptable?", "parsed")
    assert prompts.closing_question("Later, John left bread on the plate. Is this action socially acceptable?") == (
        "Later, John left bread on the plate. Is what John did socially acceptable?",
        "parsed (question rewritten for John)")
    assert prompts.closing_question("John ate. Is this socially acceptable? No, it is rude. Is what John did socially "
                                    "acceptable?")[0] is None
    assert prompts.closing_question("The wife asks, 'Is what <husband> did socially acceptable?'.")[0] is None
    assert prompts.closing_question("A meal began. Everyone drank. It was socially acceptable.")[0] is None
    assert "names no one" in prompts.closing_question("a meal began and everyone drank.")[1]
    assert prompts.parse_yes_no("Yes, it is.") == "yes" and prompts.parse_yes_no("Answer: no") == "no"
    assert prompts.parse_yes_no("It depends") is None and prompts.parse_yes_no("Maybe yes, maybe no") is None


def test_no_selection_is_an_input_error(raw_dir: Path) -> None:
    with pytest.raises(InputError):
        gen.generate(None, raw_dir, raw_dir, only={"atlantis"})


def test_validation_prompts_as_printed() -> None:
    """App. A.2 Figs. 7-8, typed here from the paper's text (normad.txt)."""
    assert prompts.entailment_prompt("### Eating\n- Eat with the right hand.", " It is polite to eat with the right "
                                     "hand. ") == (
        "Background:\n### Eating\n- Eat with the right hand.\nRule-of-thumb: It is polite to eat with the right "
        "hand.\nIs the above rule-of-thumb entailed\nby the background? Answer with\nYes or No")
    assert prompts.abstraction_prompt("It is polite to eat with the right hand.", "Respect at meals.") == (
        "Value: Respect at meals.\nRule-of-thumb: It is polite to eat with the right hand.\nIs the above value an "
        "abstraction\nof the rule-of-thumb? Answer\nwith Yes or No")


def test_story_prompt_is_the_authors() -> None:
    """The blocks as the authors' collect_irrelevant.py formats them and the conversation as their PromptBuilder's
    gpt-4 route assembles it (typed here from their code), the relevance filter of gpt4_filter_neutral.py."""
    assert prompts.STORIES_PER_LABEL == 3  # conf/prompts/prompts.yaml num_story_samples
    assert prompts.GEN_MAX_TOKENS == 1024
    # collect_stories.py (yes / no, default) 0.9 with few_shots_v3; Fig. 14's v2 few-shots and collect_irrelevant.py 0.5
    assert [(r["temperature"], r["few_shots_file"]) for r in (prompts.YES_NO_ROUTES["authors"],
            prompts.YES_NO_ROUTES["paper"], prompts.STORY_ROUTES["neutral"])] == [
        (0.9, "few_shots_v3.json"), (0.5, "few_shots_v2.json"), (0.5, "few_shots_v2.json")]
    assert prompts.item_block("south_korea", "Bow slightly.") == (
        "\n---\n### Country:\nsouth_korea\n\n### Cultural background [Etiquette]:\nBow slightly.")
    assert [prompts.authors_country(n) for n in ("south_korea", "Timor-Leste", "United States")] == [
        "south_korea", "timor-leste", "united_states"]
    block = prompts.country_block("neutral", "Veloria", "### Eating\n- Wait.", "Kestrava", "### Eating\n- Eat.\n")
    assert block == ("\n---\n### Country 1:\nVeloria\n\n### Cultural background for Country 1 [Etiquette]:\n"
                     "### Eating\n- Wait.\n\n---\n### Country 2:\nKestrava\n\n### Cultural background for Country 2 "
                     "[Etiquette]:\n### Eating\n- Eat.\n")
    yes = prompts.story_messages("yes", prompts.country_block("yes", "Veloria", "### Eating\n- Wait."))
    assert yes[-1] == ("system", "\n---\n### Country:\nVeloria\n\n### Cultural background [Etiquette]:\n### Eating\n"
                                 "- Wait.\n### NOTE  \nAs a reminder \n" + yes[-1][1].split("As a reminder \n", 1)[1])
    assert yes[0][1].startswith("In this task, we present a country, followed by its cultural background over a "
                                "particular axis \n") and yes[0][1].endswith("---")
    assert 'The answer should be "Yes" to this question.' in yes[0][1]
    assert yes[2] == ("assistant", yes[2][1]) and "Maria, calmly asked Emma if she would like to hug her." in yes[2][1]
    neutral = prompts.story_messages("neutral", block)
    assert neutral[0][1].startswith("In this task, we present a country, followed by its, and another country's")
    assert len(neutral) == 1 + 2 * 2 + 1 and neutral[-1][1].startswith(block + "### NOTE")
    check = prompts.relevance_messages(" It is polite to wait. ", "Ann waited. Is what Ann did socially acceptable?")
    assert [role for role, _ in check] == ["system", "assistant", "system", "assistant", "system"]
    assert check[1][1] == "Yes" and check[3][1] == "No"
    assert check[0][1].startswith("Rule-of-Thumb: One should politely decline an offer twice before accepting on the "
                                  "third time.\nStory: During an evening out with friends, Henry immediately accepted")
    assert check[-1][1] == ("Rule-of-Thumb: It is polite to wait.\nStory: Ann waited. Is what Ann did socially "
                            "acceptable?\nIs this story relevant to the rule-of-thumb (Yes/No ONLY)?")


def test_shipped_authors_files_carry_their_attribution() -> None:
    """CC BY 4.0 asks for the source, the licence and the changes: the folder's README names all three."""
    folder = REPO / "src" / "culturebench" / "facts" / "normad_authors"
    notice = (folder / "README.md").read_text()
    for needed in ("https://github.com/Akhila-Yerukola/NormAd", "9ede8512b4d1", "CC BY 4.0",
                   "creativecommons.org/licenses/by/4.0", "changes"):
        assert needed in notice, needed
    shipped = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"README.md"}
    assert all(f"`{name.split('/')[-1]}`" in notice or name.startswith("story_prompts/v2/") for name in shipped)
    assert "`story_prompts/v2/*.txt`" in notice
    rows = list(csv.DictReader((folder / "country_iw_zones.csv").open(encoding="utf-8")))
    assert len(rows) == 75 and {r["Source"] for r in rows} == {
        "Akhila-Yerukola/NormAd, src/story_collection/collect_irrelevant.py, map_iw_bin_to_country (CC BY 4.0)"}


def test_neutral_answer_keeps_country_2_value_and_rule() -> None:
    answer = ("---\n## Value for Country 2 (Unrelated to Cultural Background for Country 1): \nHygiene.\n\n"
              "## Rule-of-Thumb for Country 2 (Unrelated to Cultural Background for Country 1): \nRemove shoes.\n\n"
              "## Value for Country 1 (Unrelated to Cultural Background for Country 2):\nSpace.\n\n"
              "## Rule-of-Thumb for Country 1 (Unrelated to Cultural Background for Country 2):\nNo hugs.\n\n"
              "## Story based on Country 1 (Unrelated to Cultural Background for Country 2):\nMaria hugged "
              "her friend.\nIs Maria justified in doing so?\n\n## Explanation: \nNot covered.")
    assert prompts.parse_story(answer, "neutral") == (
        {"value": "Hygiene.", "rule_of_thumb": "Remove shoes.", "story": "Maria hugged her friend. Is what Maria did "
         "socially acceptable?", "explanation": "Not covered."}, "parsed (question rewritten for Maria)")
    # plain headings are a yes / no answer's, not a neutral one's
    assert prompts.parse_story("Value: v\nRule-of-Thumb: r\nStory: Ann sat. Is what Ann did socially "
                               "acceptable?\nExplanation: e", "neutral")[0] is None
    # the authors' own few-shot endings ("Is what John did acceptable?") get the NormAd-Eti question
    assert prompts.closing_question("John rushed in. Is what John did acceptable?") == (
        "John rushed in. Is what John did socially acceptable?", "parsed (question rewritten for John)")


AUTHORS = REFERENCE / "NormAd"


@pytest.mark.reference
@pytest.mark.skipif(not AUTHORS.is_dir(), reason=f"reference data absent: {AUTHORS}")
def test_against_the_authors_files() -> None:
    """The shipped files are the authors' (byte-identical), the settings theirs, and every story prompt is the
    authors' files assembled as their gpt-4 PromptBuilder does; their few-shot answers parse to their fields."""
    import yaml

    shipped = REPO / "src" / "culturebench" / "facts" / "normad_authors"
    for name in ("prefix.txt", "prefix_irrelevant.txt", "guidelines_affirm.txt", "guidelines_negate.txt",
                 "guidelines_irrelevant.txt", "reminder.txt"):
        assert (shipped / "story_prompts" / "v2" / name).read_bytes() == \
            (AUTHORS / "story_prompts" / "v2" / name).read_bytes(), name
    assert (shipped / "prompts.yaml").read_bytes() == (AUTHORS / "conf" / "prompts" / "prompts.yaml").read_bytes()
    for version in ("few_shots_v2.json", "few_shots_v3.json"):
        assert json.loads((shipped / version).read_text()) == \
            json.loads((AUTHORS / "derived_fewshots" / version).read_text()), version
    v3 = json.loads((AUTHORS / "derived_fewshots" / "few_shots_v3.json").read_text())
    item = prompts.item_block("veloria", "Wait.")
    for label, key in (("yes", "few_shots_gpt4_affirm"), ("no", "few_shots_gpt4_no")):
        conversation = prompts.story_messages(label, item, prompts.YES_NO_ROUTES["authors"]["few_shots_file"])
        assert conversation[1:-1] == [(role, shot[role]) for shot in v3[key] for role in ("system", "assistant")]
    config = yaml.safe_load((AUTHORS / "conf" / "prompts" / "prompts.yaml").read_text())
    assert config["prompts_dir"] == "story_prompts/v2" and gen.STORIES_PER_LABEL == config["num_story_samples"]
    shots = json.loads((AUTHORS / "derived_fewshots" / "few_shots_v2.json").read_text())
    v2 = AUTHORS / "story_prompts" / "v2"
    block = prompts.country_block("no", "Veloria", "### Eating\n- Wait.")
    for label, prefix, guidelines, key in (("yes", "prefix.txt", "guidelines_affirm.txt", "few_shots_gpt4_affirm"),
                                           ("no", "prefix.txt", "guidelines_negate.txt", "few_shots_gpt4_no"),
                                           ("neutral", "prefix_irrelevant.txt", "guidelines_irrelevant.txt",
                                            "few_shots_gpt4_irrel")):
        expected = [("system", (v2 / prefix).read_text() + (v2 / guidelines).read_text())]
        for shot in shots[key]:
            expected += [("system", shot["system"]), ("assistant", shot["assistant"])]
        expected.append(("system", block + (v2 / "reminder.txt").read_text()))
        assert prompts.story_messages(label, block) == expected, label
    first = prompts.parse_story(shots["few_shots_gpt4_irrel"][0]["assistant"], "neutral")[0]
    assert first["value"] == "Respect for personal health and hygiene."  # Country 2's (Kalevonia), read by hand
    assert first["rule_of_thumb"] == "It is expected to remove your shoes when entering a home."
    for key, label in (("few_shots_gpt4_affirm", "yes"), ("few_shots_gpt4_no", "no")):
        for shot in shots[key]:
            fields, status = prompts.parse_story(shot["assistant"], label)
            assert fields is not None and fields["rule_of_thumb"] in shot["assistant"], status
        # the v3 stories name no one ("Is she justified in doing so?"): asked about the pronoun, never a stray word
        for shot in v3[key]:
            fields, status = prompts.parse_story(shot["assistant"], label)
            assert re.search(r"Is what (he|she|they) did socially acceptable\?$", fields["story"]), fields["story"]
