"""How CC-Mediation gave a released value to its two agents (its ``build_agent_prompts.py``, efc3115), run backwards
on its records: :func:`value_branch` and the counts the manifest and card report."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import replace

import polars as pl

from culturebench.builders.socialcc.statements import over_threshold, parse_statement, resolve
from culturebench.raw.socialcc import ScenarioRow


VALUE_BRANCHES = {
    "agent_1": "the value country is agent 1's: its value is the released value verbatim, agent 2's a flipped copy",
    "agent_2": "the value country is agent 2's: its value is the released value verbatim, agent 1's a flipped copy",
    "neither": "neither agent is from the value country: agent 1's value is the released value with agent 1's country "
               "swapped in, agent 2's a flipped copy",
}
"""The branches of CC-Mediation's ``build_agent_prompts.py`` (efc3115): how it gave the released ``cultural_value``
to the two agents, by comparing ``cultural_value_country`` with the country at the end of each agent's background
(agent 1 first; an agent whose background ends in no capitalised country gets no country, and a statement about it
keeps the value country)."""
BRANCH_EVIDENCE = {
    "countries": "the countries the two values and the agents' parsed nationalities name leave one branch",
    "table_4a": "of two possible branches, one takes a value that is no Table 4A statement (a flipped copy)",
    "wvs_consensus": "of two possible branches, one takes a value that is a WVS consensus of its country",
    "default": "two possible branches and no evidence: the one the record's parsed nationalities give (agent 2's "
               "where each value names its own agent's country: Character 2 holds the value country in the paper's "
               "scenarios, Tables 12A-16A)",
    "cultural_value_country": "the released record names the value country (released layout)",
}
"""How the branch of a record was decided (manifest ``provenance.value_branches``, ``<layout>_evidence``)."""
_NAMED = re.compile(r"^People from\s+([\w\s]+?)(?=\s+(?:strongly|agree|disagree|would|have|place|never|are)\b)")
"""The country a CC-Mediation value names, as its ``replace_country_in_statement`` finds (and swaps) it."""


def _same(a: str | None, b: str | None) -> bool:
    """Two country names the way CC-Mediation compares them (case and spacing ignored); None is no country."""
    return a is not None and b is not None and " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def value_branch(row: ScenarioRow, consensus=None) -> tuple[str | None, str | None, str]:
    """(branch, evidence, released value) of a scenario row (VALUE_BRANCHES, BRANCH_EVIDENCE): CC-Mediation's
    rule run backwards on a ``cc_mediation`` record, which keeps both agents' values but not the value country.
    Agent i's value names the builder's country for agent i, or the value country where it read none, so a value
    naming another country than its agent's parsed nationality names the value country; where the record's
    parser left a nationality out (null) the builder may still have read one, which leaves two branches, decided
    by a value that is no Table 4A statement (the other one is the released value), else by ``consensus`` (a parsed
    statement -> whether it is a WVS consensus of its country), else the first (BRANCH_EVIDENCE["default"]). A
    released record: the branch ``cultural_value_country`` takes, the value unchanged. Our layout: (None, None,
    value)."""
    if row.layout == "released":
        countries = [c.get("nationality") for c in row.characters[:2]]
        branch = next((f"agent_{i}" for i, c in enumerate(countries, start=1) if _same(c, row.value_country)),
                      "neither")
        return branch, "cultural_value_country", row.value_item
    if row.layout != "cc_mediation" or not row.other_value:
        return None, None, row.value_item
    v1, v2 = row.other_value, row.value_item
    n1, n2 = (c.get("nationality") for c in row.characters[:2])
    k1, k2 = (m.group(1) if (m := _NAMED.match(v)) else None for v in (v1, v2))
    if k1 is None or k2 is None:
        return "agent_2", "default", v2
    # own: the builder read the country the agent's value names; a null nationality may be either (the record's
    # reading, no country, first)
    readings = [[False, True] if n is None else [_same(k, n)] for n, k in ((n1, k1), (n2, k2))]
    candidates: dict[str, str] = {}  # released value -> the first branch that gives it
    for own1 in readings[0]:
        for own2 in readings[1]:
            for branch, value in _branches(own1, own2, _same(k1, k2), v1, v2, k2):
                candidates.setdefault(value, branch)
    values = list(candidates)
    if len(values) == 1:
        return candidates[values[0]], "countries", values[0]
    parsed = {value: parse_statement(value) for value in values}
    readable = [v for v in values if parsed[v] is not None]
    if len(readable) == 1:
        return candidates[readable[0]], "table_4a", readable[0]
    agreed = [v for v in readable if consensus is not None and consensus(parsed[v])]
    if len(agreed) == 1:
        return candidates[agreed[0]], "wvs_consensus", agreed[0]
    return candidates[values[0]], "default", values[0]


def _branches(own1: bool, own2: bool, same: bool, v1: str, v2: str, k2: str) -> list[tuple[str, str]]:
    """(branch, released value) pairs the builder's rule allows when it read the country agent i's value names
    (``own``i; else none, and that value names the value country), ``same``: both values name one country."""
    if own1 and own2:
        return [("agent_1", v1)] if same else [("agent_2", v2), ("agent_1", v1)]
    if own2:  # agent 1's (flipped or verbatim) value kept the value country
        return [("agent_2", v2)] if same else [("neither", v1)]
    if own1:  # agent 2's flipped value kept the value country: agent 1's has the released side, its own country
        return [("agent_1", v1)] if same else [("neither", _NAMED.sub(f"People from {k2}", v1, count=1))]
    return [("neither", v1)]


def released_value(row: ScenarioRow, consensus=None) -> ScenarioRow:
    """The row with the released value as its value item (``value_branch``)."""
    value = value_branch(row, consensus)[2]
    if value == row.value_item:
        return row
    return replace(row, value_item=value, other_value=row.value_item)


def wvs_consensus(shares: pl.DataFrame, atlas_countries: set[str] = frozenset()):
    """parsed Table 4A statement (country, question, side) -> whether its share in the WVS files is over the
    threshold (Sec. 3.2)."""
    share_of = {(c, q, d): s for c, q, d, s in shares.select("country", "question_id", "side", "share").iter_rows()}

    def consensus(parsed: tuple[str, dict, str]) -> bool:
        share = share_of.get((resolve(parsed[0], atlas_countries), parsed[1]["question_id"], parsed[2]))
        return share is not None and bool(over_threshold(share))
    return consensus


def value_branches(rows: list[ScenarioRow], consensus=None) -> dict[str, dict[str, int]]:
    """Per layout, the records read that took each branch of CC-Mediation's rule (VALUE_BRANCHES) and how the
    branch was decided (BRANCH_EVIDENCE): manifest ``provenance.value_branches``."""
    out: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        branch, evidence, _ = value_branch(row, consensus)
        if branch is not None:
            out[row.layout][branch] += 1
            out[f"{row.layout}_evidence"][evidence] += 1
    return {key: dict(sorted(counts.items())) for key, counts in sorted(out.items())}
