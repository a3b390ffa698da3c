"""SocialCC's metrics.json: Table 2's judge means and behaviour distribution, Fig. 5 per country, Fig. 6 per
value topic x zone, Fig. 7 aware without knowledge, each with its bootstrap interval (``intervals``); paired model
differences."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


from culturebench.errors import InputError
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.socialcc import BENCHMARK, FIG5_GROUPINGS, prompts
from culturebench.evaluate.socialcc.intervals import (
    BOOTSTRAP_NOTE, judge_score, mean_interval, model_differences, unit_of)
from culturebench.evaluate.socialcc.items import UNKNOWN

TOP_COUNTRIES = 21  # Fig. 5: the 21 countries with the most scenarios

NO_COMMONSENSE_COUNTRY = "(no commonsense country)"
"""Fig. 5's group of a dialogue whose scenario has no commonsense item (CC-Mediation's records): never one of the
21 countries plotted."""


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def score_block(records: Sequence[dict], settings: uncertainty.Bootstrap | None = None, *,
                distribution_ci: bool = False) -> dict:
    """Table 2's numbers for a group of transcripts: mean of each judge over valid judgements, the behaviour
    distribution in %, counts of invalid judgements; with ``settings``, each mean's bootstrap interval over the
    dialogues (one per scenario) beside it as ``<key>_ci``, and with ``distribution_ci`` each percentage's too."""
    out: dict[str, Any] = {"n": len(records)}
    for judge in prompts.JUDGES:
        scores = [judge_score(r, judge) for r in records if judge_score(r, judge) is not None]
        out[judge] = _mean(scores)
        if settings is not None:
            out[f"{judge}_ci"] = mean_interval(scores, settings)
        out[f"n_valid_{judge}"] = len(scores)
        out[f"n_invalid_{judge}"] = len(records) - len(scores)
    behaviour = [judge_score(r, "behaviour") for r in records if judge_score(r, "behaviour") is not None]
    low, high = prompts.JUDGE_SCALES["behaviour"]
    out["behaviour_distribution_pct"] = {str(s): (100 * behaviour.count(s) / len(behaviour) if behaviour else None)
                                         for s in range(low, high + 1)}
    if settings is not None and distribution_ci:
        out["behaviour_distribution_pct_ci"] = {str(s): mean_interval([100.0 * (b == s) for b in behaviour], settings)
                                                for s in range(low, high + 1)}
    return out


def _by(records: Sequence[dict], key, settings: uncertainty.Bootstrap | None = None) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return {k: score_block(groups[k], settings) for k in sorted(groups)}


def fig5_country(record: dict, grouping: str = "commonsense") -> str:
    """Fig. 5's country of a dialogue (FIG5_GROUPINGS): its commonsense item's country (NO_COMMONSENSE_COUNTRY
    where the scenario has none), or with ``grouping`` "value" its value item's."""
    if grouping == "value":
        return str(record.get("country") or UNKNOWN)
    return str(record.get("commonsense_country") or NO_COMMONSENSE_COUNTRY)


def top_countries(counts: dict[str, int]) -> list[str]:
    """Fig. 5's countries: the TOP_COUNTRIES with the most dialogues (ties by name), never NO_COMMONSENSE_COUNTRY."""
    return sorted((c for c in counts if c != NO_COMMONSENSE_COUNTRY), key=lambda c: (-counts[c], c))[:TOP_COUNTRIES]


def country_breakdown(records: Sequence[dict], settings: uncertainty.Bootstrap,
                      grouping: str = "commonsense") -> dict[str, list[dict]]:
    """Fig. 5 with sizes (issue #18): per judge, per country (``fig5_country``) its valid judgements (n), mean,
    interval, and rank, countries under ``uncertainty.MIN_GROUP_SIZE`` dialogues flagged ``small`` and not ranked
    (``uncertainty.group_breakdown``)."""
    countries = [fig5_country(r, grouping) for r in records]
    return {judge: uncertainty.group_breakdown([judge_score(r, judge) for r in records], countries, settings)
            for judge in prompts.JUDGES}


def aware_without_knowledge(records: Sequence[dict], settings: uncertainty.Bootstrap | None = None) -> dict:
    """Fig. 7: the dialogues judged aware (awareness 1) without commonsense knowledge (commonsense 0), their share
    of all dialogues with both judgements, and how they split (%) by commonsense topic and by value topic; with
    ``settings``, the bootstrap interval of the share and of each percentage (``_ci``)."""
    judged = [r for r in records if judge_score(r, "awareness") is not None and judge_score(r, "commonsense") is not None]
    hit = [judge_score(r, "awareness") == 1 and judge_score(r, "commonsense") == 0 for r in judged]
    found = [r for r, h in zip(judged, hit) if h]

    def topic(r: dict, key: str) -> str:
        return str(r.get(key) or UNKNOWN)

    def split(key: str) -> dict[str, float]:
        counts: dict[str, int] = {}
        for r in found:
            counts[topic(r, key)] = counts.get(topic(r, key), 0) + 1
        return {k: 100 * v / len(found) for k, v in sorted(counts.items())}

    out = {"n": len(found), "n_judged": len(judged), "share": len(found) / len(judged) if judged else None,
           "by_topic_pct": split("topic"), "by_value_topic_pct": split("value_topic")}
    if settings is not None:
        out["share_ci"] = mean_interval([float(h) for h in hit], settings)
        for name, key in (("by_topic_pct", "topic"), ("by_value_topic_pct", "value_topic")):
            out[f"{name}_ci"] = {t: mean_interval([100.0 * (topic(r, key) == t) for r in found], settings)
                                 for t in out[name]}
    return out


def prompt_field_counts(records: Sequence[dict]) -> dict[str, dict[str, int]]:
    """Per field of ``prompts.SOURCED_FIELDS``, how many dialogues' prompts had it from the record, from a
    stand-in (named) or not at all (transcripts written before fields recorded their sources: "not recorded")."""
    out: dict[str, dict[str, int]] = {}
    for name in prompts.SOURCED_FIELDS:
        for r in records:
            source = ((r.get("fields") or {}).get("field_sources") or {}).get(name, "not recorded")
            out.setdefault(name, {})[source] = out.get(name, {}).get(source, 0) + 1
    return {name: dict(sorted(counts.items())) for name, counts in out.items()}


def aggregate(records: Sequence[dict], *, release: Path | str | None = None, sources: list | None = None,
              judge_note: str | None = None, bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap(),
              fig5_grouping: str = "commonsense") -> dict:
    """metrics.json from transcripts (each with model, country, commonsense_country, zone, topic, value_topic,
    turns, ended_by, judgements). The point estimates are the paper's; beside each a ``bootstrap`` interval over
    scenarios (``<key>_ci``; BOOTSTRAP_NOTE), per Fig. 5 country (``fig5_grouping``, FIG5_GROUPINGS) the sizes and
    ranks (``country_breakdown``), the paired differences between models (``model_differences``) and where each
    prompt field came from (``prompt_fields``)."""
    if not records:
        raise InputError("no transcripts to score")
    models = sorted({str(r["model"]) for r in records})
    per_model = {}
    for model in models:
        mine = [r for r in records if str(r["model"]) == model]
        status = {j: {s: 0 for s in prompts.STATUSES} for j in prompts.JUDGES}
        for r in mine:
            for j in prompts.JUDGES:
                s = (r.get("judgements") or {}).get(j, {}).get("parse_status", "empty")
                status[j][s] = status[j].get(s, 0) + 1
        rounds = [int(r.get("n_rounds") or 0) for r in mine]
        counts: dict[str, int] = {}
        for r in mine:
            counts[fig5_country(r, fig5_grouping)] = counts.get(fig5_country(r, fig5_grouping), 0) + 1
        per_model[model] = {
            "table2": score_block(mine, bootstrap, distribution_ci=True),
            "parse_status": status,
            "dialogue": {"mean_rounds": _mean(rounds), "max_rounds": max(rounds) if rounds else None,
                         "share_good_bye": _mean([1.0 if r.get("ended_by") == "good_bye" else 0.0 for r in mine]),
                         "n_turn_limit": sum(r.get("ended_by") == "max_rounds" for r in mine)},
            "by_country": _by(mine, lambda r: fig5_country(r, fig5_grouping)),
            "fig5_countries": top_countries(counts),
            "country_breakdown": country_breakdown(mine, bootstrap, fig5_grouping),
            "dialogue_setups": sorted({str(r.get("dialogue_setup") or "not recorded") for r in mine}),
            "by_zone": _by(mine, lambda r: str(r.get("zone") or UNKNOWN), bootstrap),
            "by_value_topic": _by(mine, lambda r: str(r.get("value_topic") or UNKNOWN), bootstrap),
            "by_value_topic_zone": _by(mine, lambda r: f"{r.get('value_topic') or UNKNOWN} | "
                                                       f"{r.get('zone') or UNKNOWN}", bootstrap),
            "aware_without_knowledge": aware_without_knowledge(mine, bootstrap),
            "judge_models": sorted({j.get("judge_model") or "?" for r in mine
                                    for j in (r.get("judgements") or {}).values()}),
            "antagonist_models": sorted({str(r.get("antagonist_model")) for r in mine}),
        }
    metrics = {
        "benchmark": BENCHMARK.name, "release": None if release is None else str(release),
        "release_manifest_sha256": run_folder.release_manifest_sha256(release), "transcripts": sources or [],
        "models": models, "judges": list(prompts.JUDGES), "judge_names": dict(prompts.JUDGE_NAMES),
        "judge_scales": {k: list(v) for k, v in prompts.JUDGE_SCALES.items()},
        "constants": {"max_rounds": prompts.MAX_ROUNDS, "opening": prompts.OPENING, "end_marker": prompts.END_MARKER,
                      "agent_temperature": prompts.AGENT_TEMPERATURE,
                      "judge_temperature": prompts.JUDGE_TEMPERATURE, "prompt_source": prompts.PROMPT_SOURCE,
                      "prompt_tables": dict(prompts.PROMPT_SOURCES),
                      "dialogue_setups": prompts.DIALOGUE_SETUPS_NOTE,
                      "behaviour_scale": prompts.BEHAVIOUR_SCALE_NOTE},
        "judge_note": judge_note,
        "fig5": {"grouped_by": fig5_grouping, "why": FIG5_GROUPINGS[fig5_grouping],
                 "countries_plotted": TOP_COUNTRIES, "group_without_country": NO_COMMONSENSE_COUNTRY},
        "prompt_fields": {"sources": prompt_field_counts(records),
                          "stand_ins": {name: label for name, (label, _, _) in prompts.STAND_INS.items()},
                          "without_stand_in": list(prompts.WITHOUT_STAND_IN)},
        "per_model": per_model,
        "model_differences": model_differences(records, models, bootstrap),
        "uncertainty": bootstrap.record(unit="scenario", min_group_size=uncertainty.MIN_GROUP_SIZE,
                                        **BOOTSTRAP_NOTE),
    }
    scenarios = {unit_of(r, i) for i, r in enumerate(records)}
    uncertainty.warn_no_spread(metrics, metrics["uncertainty"],
                               uncertainty.no_spread([len(scenarios)], unit="scenario"), "socialcc")
    return run_folder.json_safe(metrics)
