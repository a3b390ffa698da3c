"""Generate NormAd-Eti stories from the Cultural Atlas etiquette pages as the authors did (Rao et al., "NormAd: A
Benchmark for Measuring the Cultural Adaptability of Large Language Models", 2024, Sec. 3.1-3.2, App. A.2; the
authors' released prompts, few-shots and settings, CC BY 4.0, in ``culturebench/facts/normad_authors/``).

RAW/cultural_atlas/<country>/*.html (+ RAW/inglehart_welzel/*.csv)  ->  RAW/normad/generated_normad_etiquette.csv

**Generation (Sec. 3.1).** Every country x etiquette subaxis (Basic Etiquette, Eating, Visiting, Gift Giving) of the
atlas Etiquette page is one *norm unit*; its background is the subsection as the authors' ``get_cultcontext`` writes
it (``### <subsection>`` then ``- <item>`` per atlas item). Per unit and label, ``STORIES_PER_LABEL`` samples of one
prompt (the authors' ``num_story_samples``, 3; prompts in :mod:`culturebench.generation.normad_prompts`). "yes" and
"no" stories come from the country's own background: by default as collect_stories.py writes them (one atlas item
drawn per sample, few_shots_v3, temperature 0.9; option ``yes_no_stories: paper``: the whole subsection, Fig. 14's
v2 few-shots, 0.5). The prompts write a country as the authors' do (``ormund_isles``), as does the output's
``Country``. A "neutral" story is built as the authors' collect_irrelevant.py
builds it: another country is drawn (a seeded hash stands for their ``random``: an Inglehart-Welzel zone other than
the unit's, among the zones of the available countries, then a country of it, then its unit of the same subaxis, else
one of its units; one draw shared by the unit's samples), the prompt shows the unit's background as Country 1 and
the other's as Country 2, and the answer gives **Country 2's Value and Rule-of-Thumb** and a story based on Country 1.
The row keeps the authors' release layout: Country and Background are the unit's (the story's), ``Other Country`` and
``Other Background`` the country the Value and Rule-of-Thumb come from. Zones: the map of the authors' story
scripts (``map_iw_bin_to_country``), ``RAW/inglehart_welzel/`` for a country it lacks, or wherever it lists one with
the option ``zones: raw``.

**Filtration (Sec. 3.2)**, in order; every rejection is logged with its reason:

1. ``unparsed``: the answer lacks the four fields (yes / no: the Value / Rule-of-Thumb / Story / Explanation
   headings or JSON; neutral: the authors' Country 2 / Country 1 headings) or a story that ends in a question about
   a named person (or he / she / they, as the v3 few-shots ask);
2. ``leak``: the story or rule-of-thumb names a country, other name or demonym (the builder's own
   :func:`culturebench.builders.normad.leaked_names`, facts/normad.json), the unit's or the other country, or a word
   derived from those names ("Velorian" for Veloria);
3. ``neutral_inconsistent`` (Check 1): a neutral story that the authors' relevance filter finds relevant to its
   rule-of-thumb (anything but No) is regenerated with a new other country at temperature 0.9 (their
   gpt4_filter_neutral.py, line 135) up to ``NEUTRAL_REGENERATIONS`` (3) times, then discarded;
4. Check 2 (option ``check2``, :data:`CHECK2_ROUTES`). ``authors`` (default: the code that made the published
   rows, ``facts/normad_authors/validation_prompts.json``): the authors' stage-1 prompt with the row's own
   background; a yes / no story whose rule it does not entail is kept and marked in ``Check RoT Entailed`` (none of
   the authors' scripts drops it; the paper calls the step manual), or discarded as ``rot_not_entailed`` with the
   option ``check2_failures: drop``; a neutral story whose rule it entails is not discarded but gets the stage-2
   minimal edit of its Value and Rule-of-Thumb (temperature 1.0; ``rot_fix_unparsed`` when the reply lacks the two
   lines). ``paper`` (Sec. 3.2's
   text, App. A.2 Fig. 7): the background of the country the rule was written for, the other country's for a
   neutral story ("relevance to different country's background"), entailment required, failures discarded;
5. ``value_not_abstraction`` (Check 3, Fig. 8): the value (after any edit) is not an abstraction of the
   rule-of-thumb;
6. ``duplicate``: the same or a near-identical story (rapidfuzz ratio >= 90) already kept for the country.

The kept rows carry the stories file's columns plus ``ID``, ``Other Country``, ``Other Background``, ``Attempts`` and
one verdict column per check (``Check Leak``, ``Check Neutral Consistency``, ``Check RoT Entailed``, ``Check Value
Abstraction``); the builder ignores extra columns. Working state (cache, log, summary) is in ``RAW/.generation/``
(see :mod:`culturebench.generation.common`); the log has every prompt, raw output, parse result and rejection
reason. Requests depend only on the inputs, the seed and earlier answers, so a killed run re-asks nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from culturebench.builders import normad as builder
from culturebench.checkout import bundled_raw
from culturebench.contract import Generator
from culturebench.options import GenerateOptions, option
from culturebench.errors import InputError
from culturebench.generation import normad_prompts as prompts
from culturebench.generation.common import (
    GenerationRun,
    NearDuplicates,
    only_filter,
    request,
    write_atomic,
)
from culturebench.raw.cultural_atlas import FOLDER as ATLAS_FOLDER
from culturebench.raw.cultural_atlas import read_atlas
from culturebench.raw.normad import STORIES_FOLDER, STORY_COLUMNS

TASK = "normad"
OUTPUT_FILE = "generated_normad_etiquette.csv"
STORIES_PER_LABEL = prompts.STORIES_PER_LABEL
NEUTRAL_REGENERATIONS = 3
"""Sec. 3.2: neutral stories are filtered and regenerated three times, then discarded."""
AXIS = "etiquette"
CHECK_COLUMNS = ("Check Leak", "Check Neutral Consistency", "Check RoT Entailed", "Check Value Abstraction")
EXTRA_COLUMNS = ("ID", "Other Country", "Other Background", "Attempts", *CHECK_COLUMNS)
REJECTIONS = ("no_other_zone", "unparsed", "leak", "neutral_inconsistent", "rot_not_entailed", "rot_fix_unparsed",
              "value_not_abstraction", "duplicate")


@dataclass(frozen=True)
class Unit:
    """One country x subaxis norm of the atlas Etiquette page."""

    country: str  # as the atlas folder names it ("Ormund Isles")
    key: str  # builder.country_key
    subaxis: str  # code, e.g. "gift_giving"
    title: str  # the atlas subsection heading
    background: str  # "### <title>\n- item\n- item"
    zone: str | None
    items: tuple[str, ...] = ()  # the subsection's atlas items, in page order
    authors_name: str = ""  # the country as the authors' prompts write it ("ormund_isles")


@dataclass
class Slot:
    """One story to produce: a unit, a label and a story number; ``attempt`` counts regenerations."""

    unit: Unit
    label: str
    number: int
    samples: int = STORIES_PER_LABEL  # stories per label: sample indices of a regeneration start past them
    other: Unit | None = None  # neutral: the country the Value and Rule-of-Thumb come from
    attempt: int = 0
    state: str = "pending"  # pending -> judge (neutral) -> generated -> kept | rejected
    fields: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    reason: str | None = None

    @property
    def ident(self) -> str:
        return f"{self.unit.key.replace(' ', '_')}/{self.unit.subaxis}/{self.label}/{self.number + 1}"


# ------------------------------------------------------------------------------------------------------ inputs


def read_units(raw: Path, zones: str = "authors") -> list[Unit]:
    """Every country x subaxis of the atlas Etiquette pages under ``raw``, with the country's IW zone: the map the
    authors' story scripts drew from, ``RAW/inglehart_welzel/`` for a country it lacks (``zones`` = ``raw``: that
    folder wins; :func:`culturebench.builders.normad.zones_for`)."""
    items, _ = read_atlas(raw / ATLAS_FOLDER, raw)
    zone_of = builder.zones_for(raw, zones, builder.AUTHORS_GENERATION_ZONES).zone_of
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for item in sorted(items, key=lambda i: (i.source_file, i.order)):
        if item.topic != builder.facts()["etiquette_topic"]:
            continue
        code = builder.subaxis_key(item.subsection) if item.subsection else None
        if code is not None:
            groups[(item.country, code)].append(item)
    order = list(builder.facts()["subaxes"])
    units = []
    for (country, code), group in sorted(groups.items(), key=lambda kv: (builder.country_key(kv[0][0]),
                                                                        order.index(kv[0][1]))):
        key = builder.country_key(country)
        texts = [i.text for i in group]
        units.append(Unit(country, key, code, group[0].subsection, builder.background_text(group[0].subsection, texts),
                          zone_of.get(key), tuple(texts), prompts.authors_country(Path(group[0].source_file).parent.name)))
    return units


def _pick(candidates: list, *parts: object):
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return candidates[int.from_bytes(digest[:8], "big") % len(candidates)]


def other_unit(units: list[Unit], unit: Unit, *parts: object) -> Unit | None:
    """The country a neutral story's Value and Rule-of-Thumb come from, drawn as the authors' collect_irrelevant.py
    draws it (a seeded hash of ``parts`` for their ``random.choice``): a zone other than the unit's among those of
    ``units``, a country of that zone, its unit of the same subaxis, else one of its units. None when the unit has
    no zone or no other zone has a country."""
    if unit.zone is None:
        return None
    zones = sorted({u.zone for u in units if u.zone is not None and u.zone != unit.zone})
    if not zones:
        return None
    zone = _pick(zones, *parts, "zone")
    country = _pick(sorted({u.key for u in units if u.zone == zone}), *parts, "country")
    theirs = [u for u in units if u.key == country]
    same = [u for u in theirs if u.subaxis == unit.subaxis]
    return same[0] if same else _pick(theirs, *parts, "subaxis")


def plan(units: list[Unit], targets: list[Unit], seed: int, per_label: int = STORIES_PER_LABEL) -> list[Slot]:
    """The stories to make for ``targets``; a unit's neutral samples share one other country (``other_unit`` from
    all ``units``; None: rejected ``no_other_zone``)."""
    slots = []
    for unit in targets:
        for label in prompts.GEN_LABELS:
            for number in range(per_label):
                slot = Slot(unit, label, number, per_label)
                if label == "neutral":
                    slot.other = other_unit(units, unit, seed, unit.key, unit.subaxis)
                    if slot.other is None:
                        slot.state, slot.reason = "rejected", "no_other_zone"
                slots.append(slot)
    return slots


# ------------------------------------------------------------------------------------------------------ checks


_GENERIC_WORDS = {"united", "states", "kingdom", "republic", "south", "north", "east", "west", "new", "isles",
                  "islands", "island", "saint", "central", "democratic", "arab", "emirates", "sri", "costa", "el"}


def _derived(name: str) -> list[str]:
    """Patterns for words derived from a country name: each non-generic word of 5+ letters, without its final
    vowels, followed by any letters, capitalised ("Veloria" -> "Velorian", "Ormund Isles" -> "Ormundi")."""
    out = []
    for word in name.replace("_", " ").split():
        if len(word) >= 5 and word.casefold() not in _GENERIC_WORDS:
            stem = word.rstrip("aeiouy")
            stem = stem if len(stem) >= 4 else word
            out.append(re.escape(stem[:1].upper() + stem[1:]) + r"\w*")
    return out


def leaks(text: str, countries: list[str]) -> list[str]:
    """Country names / demonyms in ``text``: the builder's leak check (facts/normad.json and the story's own
    country), the other ``countries`` by name (case ignored) and words derived from all of them."""
    found = list(builder.leaked_names(text, countries[0] if countries else ""))
    for country in countries:
        name = " ".join(country.replace("_", " ").split())
        found += [m.group(0) for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, flags=re.IGNORECASE)]
        for pattern in _derived(country):
            found += [m.group(0) for m in re.finditer(rf"(?<!\w){pattern}(?!\w)", text)]
    return sorted(set(found))


# ------------------------------------------------------------------------------------------------------ the run


def story_item(slot: Slot, seed: int) -> str:
    """The atlas item a yes / no story of the ``authors`` route is written from (collect_stories.py's
    ``random.choice`` of the subsection's items: a seeded hash per sample)."""
    return _pick(list(slot.unit.items), seed, slot.unit.key, slot.unit.subaxis, slot.label, slot.number, "item")


def _gen_request(slot: Slot, seed: int, yes_no_stories: str = "authors"):
    u, o = slot.unit, slot.other
    if slot.label == "neutral":  # collect_irrelevant.py
        route = prompts.STORY_ROUTES["neutral"]
        block = prompts.country_block("neutral", u.authors_name, u.background, o.authors_name if o else "",
                                      o.background if o else "")
    else:
        route = prompts.YES_NO_ROUTES[yes_no_stories]
        block = (prompts.item_block(u.authors_name, story_item(slot, seed)) if route["background"] == "one_item"
                 else prompts.country_block(slot.label, u.authors_name, u.background))
    return request(prompts.story_messages(slot.label, block, route["few_shots_file"]),
                   temperature=story_temperature(slot, route), max_tokens=prompts.GEN_MAX_TOKENS, seed=seed,
                   sample_index=slot.number + slot.samples * slot.attempt)


def story_temperature(slot: Slot, route: dict) -> float:
    """The route's temperature; a neutral story asked again after Check 1 found it relevant to its rule is asked at
    0.9, as the authors' gpt4_filter_neutral.py regenerates it (line 135)."""
    if slot.label == "neutral" and slot.attempt > 0:
        return prompts.NEUTRAL_REGENERATION_TEMPERATURE
    return float(route["temperature"])


def _judge_request(text: str, seed: int):
    return request([("user", text)], temperature=prompts.JUDGE_TEMPERATURE, max_tokens=prompts.JUDGE_MAX_TOKENS,
                   seed=seed)


def _relevance_request(slot: Slot, seed: int):
    return request(prompts.relevance_messages(slot.fields["rule_of_thumb"], slot.fields["story"]),
                   temperature=float(prompts.RELEVANCE["temperature"]),
                   max_tokens=int(prompts.RELEVANCE["max_tokens"]), seed=seed)


CHECK2_ROUTES = ("authors", "paper")
"""Option ``check2``. ``authors`` (default; their code made the published rows): every rule-of-thumb against the
row's own background (the story's country), the authors' stage-1 prompt; yes / no stories must be entailed, neutral
ones must not be, and a neutral one that is gets the stage-2 minimal edit of its Value and Rule-of-Thumb
(temperature 1.0) instead of being discarded. ``paper`` (Sec. 3.2's text): Fig. 7 against the background of the
country the rule was written for (a neutral story's other country), entailment required, failures discarded."""


CHECK2_FAILURES = ("keep", "drop")
"""Option ``check2_failures`` (route ``authors``): a yes / no story whose rule-of-thumb the authors' stage 1 does not
find entailed is ``keep`` (default), kept and marked in ``Check RoT Entailed`` (:data:`CHECK2_KEPT_MARK`): none of
the authors' scripts drops it, the paper calls the step manual; or ``drop``, discarded (``rot_not_entailed``).
Route ``paper`` always discards (Sec. 3.2's text)."""
CHECK2_KEPT_MARK = " -> kept, fails Check 2 (check2_failures: drop discards it)"


def keeps_check2_failure(check2: str, check2_failures: str) -> bool:
    """Whether a story that fails Check 2 (and is not repaired) is kept, marked (:data:`CHECK2_FAILURES`)."""
    return check2 == "authors" and check2_failures == "keep"


def rot_background(slot: Slot, check2: str = "authors") -> str:
    """The background Check 2 tests the rule-of-thumb against: the row's own (``authors``), or the country's the
    rule was written for (``paper``, Sec. 3.2: "relevance to different country's background" for a neutral story)."""
    if check2 == "paper" and slot.label == "neutral" and slot.other:
        return slot.other.background
    return slot.unit.background


def _entailment_request(slot: Slot, check2: str, seed: int):
    if check2 == "paper":
        return _judge_request(prompts.entailment_prompt(rot_background(slot, check2), slot.fields["rule_of_thumb"]),
                              seed)
    stage1 = prompts.authors_validation()["stage1_rot"]
    return request([("user", prompts.authors_entailment_prompt(rot_background(slot), slot.fields["rule_of_thumb"]))],
                   temperature=float(stage1["temperature"]), max_tokens=int(stage1["max_tokens"]), seed=seed)


def _entailment_verdict(slot: Slot, check2: str, text: str) -> tuple[str | None, bool]:
    """(the verdict as read, whether the story passes Check 2) under route ``check2``."""
    if check2 == "paper":
        verdict = prompts.parse_yes_no(text)
        return verdict, verdict == "yes"
    reply = prompts.authors_entailment_reply(text)
    return reply.strip() or None, reply == prompts.authors_validation()["stage1_rot"]["wanted"][slot.label]


def _fix_request(slot: Slot, seed: int):
    stage2 = prompts.authors_validation()["stage2_fix_rot"]
    text = prompts.authors_fix_prompt(slot.fields["story"], slot.fields["rule_of_thumb"], slot.fields["value"],
                                      slot.unit.authors_name, slot.other.authors_name if slot.other else "")
    return request([("user", text)], temperature=float(stage2["temperature"]), max_tokens=int(stage2["max_tokens"]),
                   seed=seed)


def _where(slot: Slot) -> dict:
    return {"id": slot.ident, "country": slot.unit.country, "subaxis": slot.unit.subaxis, "label": slot.label,
            "story_number": slot.number + 1, "attempt": slot.attempt,
            "other_country": slot.other.country if slot.other else None}


def _reject(run: GenerationRun, slot: Slot, reason: str) -> None:
    slot.state, slot.reason = "rejected", reason
    run.reject(reason)


def generate(backend, raw_in: Path, out: Path, *, seed: int = 0, only: set[str] | None = None,
             subaxes: set[str] | None = None, limit: int | None = None, per_label: int = STORIES_PER_LABEL,
             zones: str = "authors", check2: str = "authors", check2_failures: str = "keep",
             yes_no_stories: str = "authors", console: Console | None = None) -> dict:
    """Generate, filter and write the stories file into ``out/normad/``; returns the summary (also written).
    ``zones``: :data:`culturebench.builders.normad.ZONE_SOURCES` (the neutral stories' other-zone draws);
    ``check2``: :data:`CHECK2_ROUTES`; ``check2_failures``: :data:`CHECK2_FAILURES`; ``yes_no_stories``:
    :data:`culturebench.generation.normad_prompts.YES_NO_ROUTES`."""
    units = read_units(raw_in, zones)
    only = {builder.country_key(name) for name in only} if only else None
    targets = [u for u in units
               if (only is None or u.key in only)
               and (subaxes is None or u.subaxis in subaxes)]
    if limit is not None:
        targets = targets[:limit]
    if not targets:
        raise InputError("no atlas Etiquette norm (country x subaxis) matches the selection", file=raw_in)
    run = GenerationRun(TASK, out, backend, console)
    slots = plan(units, targets, seed, per_label)
    for slot in slots:
        if slot.state == "rejected":
            run.reject(slot.reason)
            run.log("skip", None, None, **_where(slot), rejection=slot.reason)

    # --- generation rounds: a neutral story the relevance filter refuses is asked again (another other country)
    for attempt in range(NEUTRAL_REGENERATIONS + 1):
        active = [s for s in slots if s.state == "pending"]
        if not active:
            break
        requests = [_gen_request(s, seed, yes_no_stories) for s in active]
        responses = run.ask(requests, f"normad stories (round {attempt + 1})")
        judged: list[Slot] = []
        for slot, req, resp in zip(active, requests, responses):
            fields, status = prompts.parse_story(resp.text, slot.label)
            rejection = None
            if fields is None:
                rejection = "unparsed"
            else:
                names = [slot.unit.country] + ([slot.other.country] if slot.other else [])
                leaked = {f: leaks(fields[f], names) for f in ("story", "rule_of_thumb")}
                slot.fields = fields
                if any(leaked.values()):
                    rejection = "leak"
                    slot.verdicts["Check Leak"] = "fail: " + "; ".join(
                        f"{f}: {', '.join(v)}" for f, v in leaked.items() if v)
                else:
                    slot.verdicts["Check Leak"] = "pass"
            run.log("story", req, resp, **_where(slot), parse=status, fields=fields,
                    leak=slot.verdicts.get("Check Leak"), rejection=rejection)
            if rejection:
                _reject(run, slot, rejection)
            elif slot.label == "neutral":
                judged.append(slot)
            else:
                slot.state = "generated"
                slot.verdicts["Check Neutral Consistency"] = "n/a"
        requests = [_relevance_request(s, seed) for s in judged]
        for slot, req, resp in zip(judged, requests, run.ask(requests, "normad neutral consistency")):
            verdict = prompts.parse_yes_no(resp.text)
            consistent = verdict == "no"  # the story is not relevant to its rule-of-thumb
            rejection = None
            if consistent:
                slot.state = "generated"
                slot.verdicts["Check Neutral Consistency"] = f"pass (attempt {slot.attempt + 1})"
            elif slot.attempt < NEUTRAL_REGENERATIONS:
                slot.state = "pending"
            else:
                rejection = "neutral_inconsistent"
                slot.verdicts["Check Neutral Consistency"] = "fail"
            run.log("judge_neutral_consistency", req, resp, **{**_where(slot), "attempt": attempt},
                    verdict=verdict or "unparsed", passed=consistent, regenerate=slot.state == "pending",
                    rejection=rejection)
            if rejection:
                _reject(run, slot, rejection)
            elif slot.state == "pending":
                slot.attempt += 1
                slot.other = other_unit(units, slot.unit, seed, slot.unit.key, slot.unit.subaxis, slot.number,
                                        slot.attempt)

    # --- Check 2: the rule-of-thumb against a background (the authors' stage 1 / 2, or Fig. 7 as the paper reads it)
    generated = [s for s in slots if s.state == "generated"]
    entail = [_entailment_request(s, check2, seed) for s in generated]
    fixes: list[Slot] = []
    for slot, req, resp in zip(generated, entail, run.ask(entail, "normad check 2 (rule-of-thumb entailment)")):
        verdict, passed = _entailment_verdict(slot, check2, resp.text)
        slot.verdicts["Check RoT Entailed"] = verdict or "unparsed"
        repair = not passed and check2 == "authors" and slot.label == "neutral"
        keep = not (passed or repair) and keeps_check2_failure(check2, check2_failures)
        if keep:
            slot.verdicts["Check RoT Entailed"] += CHECK2_KEPT_MARK
        rejection = None if passed or repair or keep else "rot_not_entailed"
        run.log("judge_entailment", req, resp, **_where(slot), verdict=verdict or "unparsed", passed=passed,
                route=check2, repair=repair, kept_failing=keep, rejection=rejection)
        if repair:
            fixes.append(slot)
        elif rejection:
            _reject(run, slot, rejection)
    requests = [_fix_request(s, seed) for s in fixes]
    for slot, req, resp in zip(fixes, requests, run.ask(requests, "normad check 2 repairs (minimal edit)")):
        fixed = prompts.parse_authors_fix(resp.text)
        run.log("fix_rot", req, resp, **_where(slot), parsed=fixed is not None,
                old={"rule_of_thumb": slot.fields["rule_of_thumb"], "value": slot.fields["value"]},
                rejection=None if fixed else "rot_fix_unparsed")
        if fixed is None:
            _reject(run, slot, "rot_fix_unparsed")
            continue
        slot.fields["rule_of_thumb"], slot.fields["value"] = fixed
        slot.verdicts["Check RoT Entailed"] += " -> fixed (stage 2 minimal edit)"

    # --- Check 3: the value an abstraction of the rule-of-thumb (Fig. 8); near-duplicate stories
    generated = [s for s in slots if s.state == "generated"]
    abstract = [_judge_request(prompts.abstraction_prompt(s.fields["rule_of_thumb"], s.fields["value"]), seed)
                for s in generated]
    seen: dict[str, NearDuplicates] = defaultdict(NearDuplicates)
    for slot, req, resp in zip(generated, abstract, run.ask(abstract, "normad check 3 (value abstraction)")):
        verdict = prompts.parse_yes_no(resp.text)
        slot.verdicts["Check Value Abstraction"] = verdict or "unparsed"
        run.log("judge_abstraction", req, resp, **_where(slot), verdict=verdict or "unparsed",
                passed=verdict == "yes")
        rejection = None
        if verdict != "yes":
            rejection = "value_not_abstraction"
        elif (dup := seen[slot.unit.key].match(slot.fields["story"])) is not None:
            rejection = "duplicate"
            slot.verdicts["duplicate"] = dup
        if rejection:
            _reject(run, slot, rejection)
        else:
            slot.state = "kept"
            seen[slot.unit.key].add(slot.fields["story"], slot.ident)
        run.log("verdict", None, None, **_where(slot), kept=rejection is None, rejection=rejection,
                detail=slot.verdicts.get("duplicate"))

    kept = [s for s in slots if s.state == "kept"]
    target = out / STORIES_FOLDER / OUTPUT_FILE
    if kept:
        write_atomic(target, stories_csv(kept))
    summary = {
        "output": str(target) if kept else None,
        "norm_units": len(targets),
        "stories_planned": len(slots),
        "kept": len(kept),
        "kept_by_label": {lab: sum(s.label == lab for s in kept) for lab in prompts.GEN_LABELS},
        "rejected_by_check": {r: sum(s.reason == r for s in slots) for r in REJECTIONS},
        "neutral_regenerations": sum(s.attempt for s in slots if s.label == "neutral"),
        "rot_fixed": sum("fixed" in s.verdicts.get("Check RoT Entailed", "") for s in kept),
        "check2_failures_kept": sum(s.verdicts.get("Check RoT Entailed", "").endswith(CHECK2_KEPT_MARK) for s in kept),
        "options": {"zones": zones, "check2": check2, "check2_failures": check2_failures,
                    "yes_no_stories": yes_no_stories},
    }
    path = run.close(summary)
    summary["summary_file"] = str(path)
    summary["log"] = str(run.log_path)
    return summary


def stories_csv(kept: list[Slot]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*STORY_COLUMNS, *EXTRA_COLUMNS])
    for s in kept:
        f = s.fields
        row = {"Country": s.unit.authors_name, "Background": s.unit.background, "Axis": AXIS, "Subaxis": s.unit.subaxis,
               "Value": f["value"], "Rule-of-Thumb": f["rule_of_thumb"], "Story": f["story"],
               "Explanation": f["explanation"], "Gold Label": s.label, "ID": s.ident,
               "Other Country": s.other.authors_name if s.other else "",
               "Other Background": s.other.background if s.other else "", "Attempts": str(s.attempt + 1),
               **{c: s.verdicts.get(c, "") for c in CHECK_COLUMNS}}
        writer.writerow([row[c] for c in (*STORY_COLUMNS, *EXTRA_COLUMNS)])
    return buffer.getvalue()


# ------------------------------------------------------------------------------------------------ command line


def _input_raw(options: NormAdGenerateOptions, out: Path) -> Path:
    if options.source:
        return Path(options.source)
    if (out / ATLAS_FOLDER).is_dir():
        return out
    return bundled_raw()


def _selection(options: NormAdGenerateOptions) -> tuple[set[str] | None, set[str] | None]:
    """``--only``: country names (any spelling the builder's country key accepts) and/or subaxes (codes or
    titles), comma-separated; each kind not named is not filtered."""
    names = only_filter(options.only)
    if not names:
        return None, None
    subaxes = {builder.subaxis_key(n) for n in names} - {None}
    countries = {builder.country_key(n) for n in names if builder.subaxis_key(n) is None}
    return (countries or None), (subaxes or None)


@dataclass(frozen=True, kw_only=True)
class NormAdGenerateOptions(GenerateOptions):
    """``culturebench generate normad``: ``--source`` is a folder with cultural_atlas/ and an optional
    inglehart_welzel/ (default RAW_DIR when it has cultural_atlas/, else the bundled sample raw/); ``--only``
    countries and/or subaxes; ``--limit`` at most this many country x subaxis norms."""

    zones: str = option(builder.ZONE_SOURCES[0], choices=builder.ZONE_SOURCES,
                        help="Where a neutral story's other zone comes from: authors (their map) or raw "
                             "(RAW/inglehart_welzel/ wins), as the build option.")
    check2: str = option(CHECK2_ROUTES[0], choices=CHECK2_ROUTES,
                         help="The rule-of-thumb entailment check: authors (their code) or paper (Sec. 3.2's text).")
    check2_failures: str = option(CHECK2_FAILURES[0], choices=CHECK2_FAILURES,
                                  help="Under --check2 authors, a yes / no story that fails Check 2: keep (kept, "
                                       "marked in Check RoT Entailed: none of the authors' scripts drops it) or "
                                       "drop.")
    yes_no_stories: str = option(tuple(prompts.YES_NO_ROUTES)[0], choices=tuple(prompts.YES_NO_ROUTES),
                                 help="The yes / no stories' few-shots, temperature and background: authors "
                                      "(collect_stories.py) or paper (Fig. 14).")
    per_label: int = option(STORIES_PER_LABEL, help="Stories per norm and label (Sec. 3.1: three).")

    def check(self) -> None:
        super().check()
        if self.per_label < 1:
            raise InputError(f"--per-label must be at least 1, got {self.per_label}")


class NormAdGenerator(Generator):
    """``culturebench generate normad --out RAW_DIR``: the stories of every country x subaxis norm."""

    name = TASK
    title = "NormAd-Eti stories from the Cultural Atlas etiquette pages (Sec. 3.1-3.2, App. A.2)"
    Options = NormAdGenerateOptions

    def generate(self, backend, options: NormAdGenerateOptions, console: Console | None = None
                 ) -> tuple[str, list[Path]]:
        out = options.out
        countries, subaxes = _selection(options)
        summary = generate(backend, _input_raw(options, out), out, seed=options.seed, only=countries,
                           subaxes=subaxes, limit=options.limit, per_label=options.per_label, console=console,
                           zones=options.zones, check2=options.check2, check2_failures=options.check2_failures,
                           yes_no_stories=options.yes_no_stories)
        rejected = ", ".join(f"{k} {v}" for k, v in summary["rejected_by_check"].items() if v) or "none"
        message = (f"normad: {summary['kept']} of {summary['stories_planned']} stories kept over "
                   f"{summary['norm_units']} country x subaxis norms "
                   f"({', '.join(f'{k} {v}' for k, v in summary['kept_by_label'].items())}); rejected: {rejected}")
        paths = [Path(p) for p in (summary["output"], summary["log"], summary["summary_file"]) if p]
        return message, paths


GENERATOR = NormAdGenerator()
