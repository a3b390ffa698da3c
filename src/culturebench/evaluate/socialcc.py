"""SocialCC evaluation and scoring (Wu, Lian, Wang and Meng, "SocialCC: Interactive Evaluation for Cultural
Competence in Language Agents", ACL 2025, Sec. 3.3-3.4, App. C): ``culturebench evaluate socialcc`` and
``culturebench score socialcc``.

**Roles** (Sec. 3.3, Tables 6A-7A, Tables 12A-16A): Character 1 is the antagonist (Table 6A: raises the conflict,
questions the knowledge, elicits the value, gives the knowledge when the other side does not notice); Character 2
is the protagonist, played by the **evaluated model** (Table 7A: sees the scenario, events and every character's
profile, and its own goals). Character 3, when a scenario has one, only appears in the profiles.

**Simulation**: the antagonist opens with "Hello", then each round is one protagonist and one antagonist turn, at
most 20 rounds, until a turn contains "GOOD BYE". Both agents at temperature 1. The messages are laid out as in
AutoGen's two-agent chat, which the authors used (Sec. 4.1): the agent's prompt as system message, then the
dialogue, nothing added (``dialogue_setup: user_first`` adds our earlier user turn before the antagonist's
"Hello"; socialcc_prompts.DIALOGUE_SETUPS_NOTE). Every turn is one cached model
call (a ``ChatRequest`` holding the dialogue so far, through ``runner.run_requests``); all dialogues advance one
turn per step, so a killed run re-run with the same command replays every cached turn and continues. One overall
progress bar counts turns and judgements.

**Judges** (App. C.2, Tables 8A-11A verbatim, each given the cultural knowledge): cultural awareness 0/1,
commonsense knowledge 0/1, value knowledge 0/1, cultural behaviour 0-3 (scale as Table 11A prints it; Sec. 3.4
swaps 1 and 2, see ``facts/socialcc.json`` ``behaviour_scale_note``), at temperature 0, answers parsed by
``socialcc_prompts.parse_score``; each judgement has a ``parse_status``.

**Models**: the judge must be named, in ``--config`` (JSON/YAML)::

    {"judge": {"model": "gpt-4o", "backend": "openai", "base_url": "http://..."},   # or "judge": "gpt-4o"
     "antagonist": {...},          # default: the judge model
     "stop": "paper",              # or "tolerant": also "Goodbye" / "good-bye" ends a dialogue (socialcc_prompts)
     "max_rounds": 20, "agent_temperature": 1.0, "agent_max_tokens": 256,
     "judge_temperature": 0.0, "judge_max_tokens": 512,
     "zones": "country_iw_zones.csv",   # Country,Cultural_Region (relative to the config file)
     "dialogue_setup": "autogen",       # or "user_first" (socialcc_prompts.DIALOGUE_SETUPS_NOTE)
     "event_stand_ins": true,           # Character 2's goals fill absent events (socialcc_prompts.STAND_INS)
     "fig5_country": "commonsense"}     # or "value" (FIG5_GROUPINGS)

**Prompt fields**: each of Tables 6A-11A's fields is filled from the scenario row; an absent event gets Character
2's social goal of its number (STAND_INS), an absent commonsense item or third character leaves its line out.
Where each field came from is counted in metrics.json and run.json (``prompt_fields``).

Without a named judge ``evaluate`` stops with a one-line error before any model call (the evaluated model never
judges itself silently; naming it as the judge is allowed and recorded).

**Report**: Table 2 (``table2.png``: per model the mean of each judged score; ``behaviour_distribution.png``: the
behaviour score distribution), Fig. 5 (``by_country.png``: awareness and knowledge per country, the 21 countries
with most scenarios; the country of the commonsense item, FIG5_GROUPINGS, or with ``fig5_country: value`` of the
value item), Fig. 6 (``by_value_topic_zone.png``: value knowledge per Table 4A topic x
Inglehart-Welzel group of the value country), Fig. 7 (``aware_without_knowledge.png``: the dialogues scored aware
but without commonsense knowledge, by commonsense topic and value topic); metrics.json. A scenario's zone is the
release's ``iw_zone`` (``build socialcc`` attaches it from ``RAW/inglehart_welzel/``), else the config's ``zones``
table, else "unknown"; ``score`` looks zones up the same way (by scenario id), keeping a transcript's own zone
where neither has one.

**Intervals** (issue #18, BOOTSTRAP_NOTE): every mean and percentage gets a 95% bootstrap interval over scenarios
(``<key>_ci``), per-country tables give sizes and flag countries under ``uncertainty.MIN_GROUP_SIZE`` dialogues
(``country_breakdown``), and ``model_differences`` pairs models over the scenarios both were judged on, Holm over
pairs x dimensions. ``COMPARE`` is this benchmark's entry for ``culturebench compare``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from itertools import combinations
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import compare, plots, runs, uncertainty
from culturebench.evaluate import socialcc_prompts as prompts
from culturebench.evaluate.limit import coverage, spread_positions
from culturebench.release import load_manifest

BENCHMARK = "socialcc"
SCENARIO_COLUMNS = ("id", "scenario", "events", "characters", "commonsense_country", "commonsense_topic",
                    "commonsense_item", "value_item", "value_country", "value_topic")
ZONE_COLUMNS = ("iw_zone", "cultural_zone", "zone")
TOP_COUNTRIES = 21  # Fig. 5: the 21 countries with the most scenarios
UNKNOWN = "unknown"
TRANSCRIPTS_FILE = "transcripts.jsonl"
CONFIG_KEYS = {"judge", "antagonist", "stop", "max_rounds", "agent_temperature", "agent_max_tokens",
               "judge_temperature", "judge_max_tokens", "zones", "dialogue_setup", "event_stand_ins", "fig5_country"}
FIG5_GROUPINGS = {
    "commonsense": "the country of the scenario's commonsense item (Cultural Atlas): Fig. 5 plots cultural awareness "
                   "and commonsense knowledge, which are about that item (Steps 1-2 of Sec. 3.3), and Sec. 5.1 "
                   "discusses Croatia, which is a Cultural Atlas country but not one of the 60 value countries of "
                   "Table 3A",
    "value": "the country of the scenario's value item (ours, the earlier grouping; Table 3A's countries)",
}
"""``fig5_country``: what Fig. 5 groups dialogues by (default ``commonsense``)."""
NO_COMMONSENSE_COUNTRY = "(no commonsense country)"
"""Fig. 5's group of a dialogue whose scenario has no commonsense item (CC-Mediation's records): never one of the
21 countries plotted."""
BOOTSTRAP_NOTE = {
    "statistic": "each mean of Table 2 (and of every group: country, zone, value topic, value topic x zone) over "
                 "the dialogues judged valid, the behaviour score percentages and Fig. 7's shares, each with "
                 "scipy.stats.bootstrap of its dialogues (one dialogue per scenario and model)",
    "paired": "differences between models are means over the scenarios both models were judged on, with one "
              "resample of scenario ids shared by every pair of models",
    "significance": "difference of a Table 2 dimension between two models: two-sided p-value of difference = 0 "
                    "with the standard error of the paired bootstrap distribution over scenarios (normal "
                    "approximation, uncertainty.bootstrap_pvalue), Holm-adjusted over all model pairs x the four "
                    "dimensions; significant when the adjusted p < 1 - confidence level",
}
"""How SocialCC's intervals are computed (recorded in metrics.json under ``uncertainty``; issue #18). None of the
paper's numbers has an interval; the point estimates are unchanged."""
NO_JUDGE = ("socialcc needs a named judge model (the paper's is GPT-4o): give --config with "
            "{\"judge\": \"MODEL\"} or {\"judge\": {\"model\", \"backend\", \"base_url\"}}")


# ---------------------------------------------------------------------------------------------------- config


@dataclass(frozen=True)
class ModelSpec:
    model: str
    backend: str = "openai"
    base_url: str | None = None
    request_shape: dict | None = None  # fixed by the config (runs.request_shape_option; issue #27), else learnt


@dataclass
class Config:
    judge: ModelSpec | None = None
    antagonist: ModelSpec | None = None
    max_rounds: int = prompts.MAX_ROUNDS
    stop: str = "paper"
    agent_temperature: float = prompts.AGENT_TEMPERATURE
    agent_max_tokens: int = prompts.AGENT_MAX_TOKENS
    judge_temperature: float = prompts.JUDGE_TEMPERATURE
    judge_max_tokens: int = prompts.JUDGE_MAX_TOKENS
    zones: dict[str, str] = field(default_factory=dict)
    dialogue_setup: str = prompts.DIALOGUE_SETUPS[0]
    event_stand_ins: bool = True
    fig5_country: str = "commonsense"
    source: str | None = None

    def as_dict(self) -> dict:
        spec = lambda s: None if s is None else s.__dict__
        return {"judge": spec(self.judge), "antagonist": spec(self.antagonist), "max_rounds": self.max_rounds,
                "stop": self.stop, "agent_temperature": self.agent_temperature,
                "agent_max_tokens": self.agent_max_tokens,
                "judge_temperature": self.judge_temperature, "judge_max_tokens": self.judge_max_tokens,
                "n_zones": len(self.zones), "dialogue_setup": self.dialogue_setup,
                "event_stand_ins": self.event_stand_ins, "fig5_country": self.fig5_country, "source": self.source}


def _spec(value: Any, key: str, where: Path | None) -> ModelSpec:
    if isinstance(value, str) and value:
        return ModelSpec(value)
    if not isinstance(value, dict) or not value.get("model"):
        raise InputError(f"{key} needs a model (a name or {{model, backend, base_url}})", file=where, column=key)
    backend = value.get("backend", "openai")
    if backend not in ("openai", "vllm"):
        raise InputError(f"{key}: backend must be openai or vllm, got {backend!r}", file=where, column=key)
    return ModelSpec(str(value["model"]), backend, value.get("base_url"),
                     runs.request_shape_option(value.get("request_shape"), where, key))


def read_zones(path: Path) -> dict[str, str]:
    """Country -> cultural zone from a CSV with columns Country and Cultural_Region (or country, zone)."""
    if not path.is_file():
        raise InputError("zones file not found", file=path)
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        names = {n.lower(): n for n in reader.fieldnames or []}
        country = names.get("country")
        zone = names.get("cultural_region") or names.get("zone") or names.get("iw_zone")
        if country is None or zone is None:
            raise InputError("zones file needs columns Country and Cultural_Region", file=path)
        return {row[country].strip(): row[zone].strip() for row in reader if row.get(country) and row.get(zone)}


def load_config(path: Path | str | None = None) -> Config:
    """The options of a JSON or YAML config file (None: the defaults)."""
    if path is None:
        return Config()
    path = Path(path)
    raw = runs.read_options_file(path, CONFIG_KEYS)
    config = Config(source=str(path))
    if raw.get("judge") is not None:
        config.judge = _spec(raw["judge"], "judge", path)
    if raw.get("antagonist") is not None:
        config.antagonist = _spec(raw["antagonist"], "antagonist", path)
    if raw.get("stop", "paper") not in prompts.STOP_RULES:
        raise InputError(f"stop must be one of {', '.join(prompts.STOP_RULES)}, got {raw['stop']!r}", file=path,
                         column="stop")
    config.stop = raw.get("stop", "paper")
    for key in ("max_rounds", "agent_max_tokens", "judge_max_tokens"):
        if key in raw:
            if not isinstance(raw[key], int) or isinstance(raw[key], bool) or raw[key] < 1:
                raise InputError(f"{key} must be a whole number >= 1, got {raw[key]!r}", file=path, column=key)
            setattr(config, key, raw[key])
    for key in ("agent_temperature", "judge_temperature"):
        if key in raw:
            if not isinstance(raw[key], (int, float)) or isinstance(raw[key], bool) or raw[key] < 0:
                raise InputError(f"{key} must be a number >= 0, got {raw[key]!r}", file=path, column=key)
            setattr(config, key, float(raw[key]))
    for key, allowed in (("dialogue_setup", prompts.DIALOGUE_SETUPS), ("fig5_country", tuple(FIG5_GROUPINGS))):
        if key in raw:
            if raw[key] not in allowed:
                raise InputError(f"{key} must be one of {', '.join(allowed)}, got {raw[key]!r}", file=path,
                                 column=key)
            setattr(config, key, raw[key])
    if "event_stand_ins" in raw:
        if not isinstance(raw["event_stand_ins"], bool):
            raise InputError(f"event_stand_ins must be true or false, got {raw['event_stand_ins']!r}", file=path,
                             column="event_stand_ins")
        config.event_stand_ins = raw["event_stand_ins"]
    if raw.get("zones"):
        zones = Path(raw["zones"])
        config.zones = read_zones(zones if zones.is_absolute() else path.parent / zones)
    return config


def make_backend(spec: ModelSpec, like=None):
    """The judge's or antagonist's backend, with the evaluated backend's client settings (``like``)."""
    return runs.companion_backend(spec.model, spec.base_url, spec.backend, like, spec.request_shape)


# ---------------------------------------------------------------------------------------------------- release


def release_tables(release: Path, split: str | None = None) -> dict[str, pl.DataFrame]:
    """The release's ``scenarios`` (ids as text; all splits or only ``split``)."""
    release = Path(release)
    tables = runs.release_configs(release, BENCHMARK, "a SocialCC release")
    scenarios = runs.release_config(tables, "scenarios", release, columns=SCENARIO_COLUMNS, split=split)
    scenarios = scenarios.with_columns(pl.col("id").cast(pl.String), pl.col("value_country").cast(pl.String))
    duplicated = scenarios.filter(pl.col("id").is_duplicated())
    if duplicated.height:
        raise InputError(f"scenario id {duplicated['id'][0]!r} occurs more than once", file=release, column="id")
    short = scenarios.filter(pl.col("characters").list.len() < 2)
    if short.height:
        raise InputError("scenario needs Character 1 (antagonist) and Character 2 (protagonist)", file=release,
                         column="characters", row=None)
    return {"scenarios": scenarios}


@dataclass
class Scenario:
    id: str
    country: str  # the value item's country (Fig. 5)
    zone: str  # its Inglehart-Welzel group (Fig. 6)
    topic: str  # commonsense topic (Fig. 7)
    value_topic: str  # Table 4A category (Fig. 6)
    fields: dict  # prompt fields (socialcc_prompts.scenario_fields)
    commonsense_country: str | None = None  # the commonsense item's country (Fig. 5)

    @property
    def names(self) -> dict[str, str]:
        return {"antagonist": self.fields["Character 1"], "protagonist": self.fields["Character 2"]}


def release_zones(scenarios: pl.DataFrame) -> dict[str, str | None]:
    """Scenario id -> the release's zone of its value country (``iw_zone``; None where null or no such column)."""
    column = next((c for c in ZONE_COLUMNS if c in scenarios.columns), None)
    return dict(zip(scenarios["id"], scenarios[column] if column else [None] * scenarios.height))


def zone_of(release_zone: str | None, country: str | None, config: Config) -> str:
    """Fig. 6's group of a scenario: the release's zone, else the config's zones table, else "unknown"."""
    return str(release_zone or config.zones.get(str(country)) or UNKNOWN)


def scenarios_from(tables: dict, config: Config) -> list[Scenario]:
    scenarios = tables["scenarios"]
    zones = release_zones(scenarios)
    out = []
    for row in scenarios.iter_rows(named=True):
        country = row["value_country"] or UNKNOWN
        zone = zone_of(zones[row["id"]], country, config)
        out.append(Scenario(row["id"], country, zone, str(row.get("commonsense_topic") or UNKNOWN),
                            str(row.get("value_topic") or UNKNOWN),
                            prompts.scenario_fields(row, config.event_stand_ins), row.get("commonsense_country")))
    return out


# ---------------------------------------------------------------------------------------------------- dialogue


@dataclass
class Dialogue:
    scenario: Scenario
    turns: list[dict] = field(default_factory=list)  # speaker, role, text, round
    ended_by: str | None = None  # "good_bye" | "max_rounds"

    def history(self) -> list[tuple[str, str]]:
        return [(t["role"], str(t["text"]).strip()) for t in self.turns]

    @property
    def rounds(self) -> int:
        return sum(1 for t in self.turns if t["role"] == "protagonist")


class OverallProgress:
    """One bar over the whole run (issue #19): every dialogue turn still possible plus the four judgements of each
    dialogue; a dialogue that ends early takes its remaining turns off the total. The runner's own per-batch bars
    are silenced (a non-terminal console)."""

    def __init__(self, console, total: int, backend=None):
        from rich.console import Console

        from culturebench.evaluate.runner import progress_bar

        self.console = console or Console(stderr=True)
        self.quiet = Console(file=io.StringIO())
        self.bar = progress_bar(self.console, backend)
        self.task = self.bar.add_task("socialcc turns + judgements", total=total)

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def done(self, result) -> None:
        """A batch answered: what was asked counts as work done, what the cache (or a repeat) answered leaves the
        total, so that the rate and the eta count only requests that go to a model."""
        self.bar.advance(self.task, result.stats.n_queried)
        self.drop(result.stats.n_requests - result.stats.n_queried)

    def drop(self, n: int) -> None:
        self.bar.update(self.task, total=self.bar.tasks[0].total - n)


def simulate(scenarios: Sequence[Scenario], protagonist_backend, antagonist_backend, cache, *,
             max_rounds: int = prompts.MAX_ROUNDS, temperature: float = prompts.AGENT_TEMPERATURE,
             max_tokens: int = prompts.AGENT_MAX_TOKENS, seed: int | None = 0, stop: str = "paper",
             progress: OverallProgress | None = None,
             setup: str = prompts.DIALOGUE_SETUPS[0]) -> tuple[list[Dialogue], list]:
    """Play every dialogue to its end: one batch of turns per step (protagonist = Character 2, antagonist =
    Character 1, ...), each turn a cached request holding the dialogue so far, its messages laid out as ``setup``
    says (``socialcc_prompts.DIALOGUE_SETUPS``). Returns the dialogues and the runner results of every step."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams
    from culturebench.evaluate.runner import run_requests

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    dialogues = []
    for scenario in scenarios:
        opening = {"speaker": scenario.names["antagonist"], "role": "antagonist", "text": prompts.OPENING,
                   "round": 0, "generated": False}
        dialogues.append(Dialogue(scenario, [opening]))
    systems = {id(d): {"protagonist": prompts.protagonist_system(d.scenario.fields),
                       "antagonist": prompts.antagonist_system(d.scenario.fields)} for d in dialogues}
    results = []
    for step in range(2 * max_rounds):
        role = "protagonist" if step % 2 == 0 else "antagonist"
        backend = protagonist_backend if role == "protagonist" else antagonist_backend
        active = [d for d in dialogues if d.ended_by is None]
        if not active:
            break
        requests = [ChatRequest(prompts.agent_messages(systems[id(d)][role], d.history(), role, setup), sampling)
                    for d in active]
        result = run_requests(backend, requests, cache, description=f"socialcc turn {step + 1} ({role})",
                              console=progress.quiet if progress else None)
        results.append(result)
        if progress:
            progress.done(result)
        for d, response in zip(active, result.responses):
            d.turns.append({"speaker": d.scenario.names[role], "role": role, "text": response.text,
                            "round": step // 2 + 1, "generated": True})
            if prompts.ends_dialogue(response.text, stop):
                d.ended_by = "good_bye"
            elif role == "antagonist" and step // 2 + 1 >= max_rounds:
                d.ended_by = "max_rounds"
            if progress and d.ended_by:
                progress.drop(2 * max_rounds - step - 1)
    for d in dialogues:  # max_rounds == 0 or loop exhausted
        if d.ended_by is None:
            d.ended_by = "max_rounds"
    return dialogues, results


def judge_transcripts(transcripts: Sequence[dict], judge_backend, cache, *,
                      temperature: float = prompts.JUDGE_TEMPERATURE, max_tokens: int = prompts.JUDGE_MAX_TOKENS,
                      seed: int | None = 0, progress: OverallProgress | None = None):
    """Ask the four judges (Tables 8A-11A) about every transcript (fills ``judgements``); returns the runner
    result."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams
    from culturebench.evaluate.runner import run_requests

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    planned = [(t, judge) for t in transcripts for judge in prompts.JUDGES]
    requests = [ChatRequest(prompts.judge_messages(judge, t["fields"], t["turns"]), sampling) for t, judge in planned]
    result = run_requests(judge_backend, requests, cache, description="socialcc judges",
                          console=progress.quiet if progress else None)
    if progress:
        progress.done(result)
    model = str(getattr(judge_backend, "model", "judge"))
    for (t, judge), response in zip(planned, result.responses):
        parsed = prompts.parse_score(response.text, judge)
        t.setdefault("judgements", {})[judge] = {"score": parsed.score, "parse_status": parsed.status,
                                                 "raw": response.text, "judge_model": model}
    return result


# ---------------------------------------------------------------------------------------------------- metrics


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _score(record: dict, judge: str) -> int | None:
    return (record.get("judgements") or {}).get(judge, {}).get("score")


def _interval(values: Sequence[float], settings: uncertainty.Bootstrap) -> list[float | None]:
    """[low, high] of the mean of ``values`` over dialogues (``uncertainty.mean_interval``)."""
    found = uncertainty.mean_interval(values, settings)
    return [found["low"], found["high"]]


def score_block(records: Sequence[dict], settings: uncertainty.Bootstrap | None = None, *,
                distribution_ci: bool = False) -> dict:
    """Table 2's numbers for a group of transcripts: mean of each judge over valid judgements, the behaviour
    distribution in %, counts of invalid judgements; with ``settings``, each mean's bootstrap interval over the
    dialogues (one per scenario) beside it as ``<key>_ci``, and with ``distribution_ci`` each percentage's too."""
    out: dict[str, Any] = {"n": len(records)}
    for judge in prompts.JUDGES:
        scores = [_score(r, judge) for r in records if _score(r, judge) is not None]
        out[judge] = _mean(scores)
        if settings is not None:
            out[f"{judge}_ci"] = _interval(scores, settings)
        out[f"n_valid_{judge}"] = len(scores)
        out[f"n_invalid_{judge}"] = len(records) - len(scores)
    behaviour = [_score(r, "behaviour") for r in records if _score(r, "behaviour") is not None]
    low, high = prompts.JUDGE_SCALES["behaviour"]
    out["behaviour_distribution_pct"] = {str(s): (100 * behaviour.count(s) / len(behaviour) if behaviour else None)
                                         for s in range(low, high + 1)}
    if settings is not None and distribution_ci:
        out["behaviour_distribution_pct_ci"] = {str(s): _interval([100.0 * (b == s) for b in behaviour], settings)
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
    return {judge: uncertainty.group_breakdown([_score(r, judge) for r in records], countries, settings)
            for judge in prompts.JUDGES}


def aware_without_knowledge(records: Sequence[dict], settings: uncertainty.Bootstrap | None = None) -> dict:
    """Fig. 7: the dialogues judged aware (awareness 1) without commonsense knowledge (commonsense 0), their share
    of all dialogues with both judgements, and how they split (%) by commonsense topic and by value topic; with
    ``settings``, the bootstrap interval of the share and of each percentage (``_ci``)."""
    judged = [r for r in records if _score(r, "awareness") is not None and _score(r, "commonsense") is not None]
    hit = [_score(r, "awareness") == 1 and _score(r, "commonsense") == 0 for r in judged]
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
        out["share_ci"] = _interval([float(h) for h in hit], settings)
        for name, key in (("by_topic_pct", "topic"), ("by_value_topic_pct", "value_topic")):
            out[f"{name}_ci"] = {t: _interval([100.0 * (topic(r, key) == t) for r in found], settings)
                                 for t in out[name]}
    return out


def unit_of(record: dict, index: int) -> str:
    """The bootstrap unit of a dialogue: its scenario (a record without a scenario id is a unit of its own)."""
    scenario = record.get("scenario_id")
    return f"scenario {scenario}" if scenario is not None else f"record {index}"


def model_differences(records: Sequence[dict], models: Sequence[str], settings: uncertainty.Bootstrap) -> list[dict]:
    """Paired differences of Table 2's four dimensions between every two models: per pair (model_a < model_b) and
    judge, the mean over the scenarios both were judged on (n_common) of score_a - score_b, its bootstrap interval
    over scenarios (one resample of scenario ids shared by every pair), the two-sided p-value of difference = 0
    (``uncertainty.bootstrap_pvalue``), Holm-adjusted over all pairs x judges, and ``significant`` (adjusted p below
    1 - confidence level). A model with several dialogues of one scenario counts their mean."""
    from culturebench.evaluate.stats import holm

    pairs = list(combinations(models, 2))
    if not pairs:
        return []
    units = {unit_of(r, i): None for i, r in enumerate(records)}
    position = {u: i for i, u in enumerate(units)}
    sums = {m: np.zeros((len(units), len(prompts.JUDGES))) for m in models}
    counts = {m: np.zeros((len(units), len(prompts.JUDGES))) for m in models}
    for i, r in enumerate(records):
        for j, judge in enumerate(prompts.JUDGES):
            if _score(r, judge) is not None:
                sums[str(r["model"])][position[unit_of(r, i)], j] += _score(r, judge)
                counts[str(r["model"])][position[unit_of(r, i)], j] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        per_unit = {m: sums[m] / counts[m] for m in models}  # NaN where a model has no valid judgement
    blocks = [per_unit[a] - per_unit[b] for a, b in pairs]
    common = np.concatenate([np.isfinite(d) for d in blocks], axis=1)  # units x (pairs x judges)
    differences = np.where(common, np.concatenate(blocks, axis=1), 0.0)

    def statistic(positions: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return differences[positions].sum(axis=0) / common[positions].sum(axis=0)

    result = uncertainty.resample_units([range(len(units))], statistic, settings)
    rows = []
    for i, ((a, b), judge) in enumerate((pair, judge) for pair in pairs for judge in prompts.JUDGES):
        low, high = result.interval(i)
        rows.append({"model_a": a, "model_b": b, "dimension": judge, "n_common": int(common[:, i].sum()),
                     "difference": uncertainty.finite_or_none(result.estimate[i]), "low": low, "high": high,
                     "pvalue": result.pvalue(i)})
    alpha = 1 - settings.confidence_level
    for row, adjusted in zip(rows, holm([r["pvalue"] for r in rows])):
        row["pvalue_holm"] = adjusted
        row["significant"] = adjusted is not None and adjusted < alpha
    return rows


def prompt_field_counts(records: Sequence[dict]) -> dict[str, dict[str, int]]:
    """Per field of ``socialcc_prompts.SOURCED_FIELDS``, how many dialogues' prompts had it from the record, from a
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
        "benchmark": BENCHMARK, "release": None if release is None else str(release),
        "release_manifest_sha256": runs.release_manifest_sha256(release), "transcripts": sources or [],
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
    return runs.json_safe(metrics)


# ---------------------------------------------------------------------------------------------------- plots


def _bar_series(ax, slots: Sequence[float], n_series: int, index: int, values: Sequence[float | None],
                intervals: Sequence[Sequence[float | None] | None], label: str, hatches: Sequence[str] = (),
                colour: int | None = None) -> None:
    """Series ``index`` of ``n_series`` side by side at ``slots``: a bar per value (None left out) with its
    interval as an error bar (none where the interval is missing), colour tab10[``colour``, default ``index``]."""
    width = 0.8 / max(1, n_series)
    xs = plots.grouped_bar_x(slots, n_series, index, width)
    shown = [k for k, v in enumerate(values) if v is not None]
    err = [[0.0] * len(shown), [0.0] * len(shown)]
    for e, k in enumerate(shown):
        low, high = (intervals[k] or [None, None])
        err[0][e] = max(0.0, values[k] - low) if low is not None else 0.0
        err[1][e] = max(0.0, high - values[k]) if high is not None else 0.0
    tab10 = plots.pyplot().get_cmap("tab10")
    bars = ax.bar([xs[k] for k in shown], [values[k] for k in shown], width, yerr=err, capsize=2, label=label,
                  color=tab10((index if colour is None else colour) % 10), error_kw={"linewidth": 0.8})
    for bar, k in zip(bars, shown):
        if k < len(hatches) and hatches[k]:
            bar.set_hatch(hatches[k])


def _level(metrics: dict) -> str:
    level = (metrics.get("uncertainty") or {}).get("confidence_level")
    return f" ({level:.0%} bootstrap intervals over scenarios)" if level else ""


def table2_png(metrics: dict, path: Path) -> None:
    """Table 2 as bars: awareness, commonsense and value knowledge (0-1, left) and cultural behaviour (0-3, right),
    one series per model, each with its bootstrap interval."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(1, 2, figsize=(max(9.0, 3 + 1.2 * len(models)), 4.5), dpi=100,
                             gridspec_kw={"width_ratios": [3, 1]})
    for ax, judges in ((axes[0], prompts.JUDGES[:3]), (axes[1], prompts.JUDGES[3:])):
        for i, model in enumerate(models):
            t = metrics["per_model"][model]["table2"]
            _bar_series(ax, range(len(judges)), len(models), i, [t[j] for j in judges],
                        [t.get(f"{j}_ci") for j in judges], model)
        ax.set_xticks(range(len(judges)))
        ax.set_xticklabels([prompts.JUDGE_NAMES[j] for j in judges], fontsize=8)
        ax.set_xlim(-0.5, len(judges) - 0.5)
        ax.set_ylim(0, prompts.JUDGE_SCALES[judges[0]][1] * 1.05)
        plots.note_if_empty(ax, [metrics["per_model"][m]["table2"][j] for m in models for j in judges],
                            "no valid judgement (see parse_status in metrics.json)")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("mean score (0-1)")
    axes[1].set_ylabel("mean score (0-3)")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("SocialCC Table 2: cultural competence per model" + _level(metrics), fontsize=10)
    plots.save_figure(fig, path)


def fig5_countries(metrics: dict) -> list[str]:
    """Fig. 5's countries across the models: the 21 with the most dialogues of all models together (``top_countries``);
    for one model its own ``fig5_countries``."""
    counts: dict[str, int] = {}
    for model in metrics["models"]:
        for country, block in metrics["per_model"][model]["by_country"].items():
            counts[country] = counts.get(country, 0) + block["n"]
    return top_countries(counts)


def fig5_label(metrics: dict) -> str:
    """What Fig. 5's countries are, for titles: "commonsense country" or "value country" (metrics ``fig5``)."""
    return f"{(metrics.get('fig5') or {}).get('grouped_by', 'value')} country"


def by_country_png(metrics: dict, path: Path) -> None:
    """Fig. 5: cultural awareness and the two kinds of cultural knowledge per country (``fig5_country``: by default
    the commonsense item's; the 21 countries with the most scenarios), one series per model with bootstrap
    intervals; hatched bars are countries with fewer than ``uncertainty.MIN_GROUP_SIZE`` valid judgements (flagged
    small, not ranked)."""
    plt = plots.pyplot()
    models = metrics["models"]
    countries = fig5_countries(metrics)
    judges = prompts.JUDGES[:3]
    fig, axes = plt.subplots(len(judges), 1, figsize=(max(10.0, 0.5 * len(countries) * max(1, len(models)) / 2 + 4),
                                                      3.2 * len(judges)), dpi=100, squeeze=False)
    for ax, judge in zip(axes[:, 0], judges):
        for i, model in enumerate(models):
            rows = {r["group"]: r for r in (metrics["per_model"][model].get("country_breakdown") or {}).get(judge, [])}
            found = [rows.get(c) or {} for c in countries]
            _bar_series(ax, range(len(countries)), len(models), i, [r.get("estimate") for r in found],
                        [[r.get("low"), r.get("high")] for r in found], model,
                        ["//" if r.get("small") else "" for r in found])
        ax.set_xticks(range(len(countries)))
        ax.set_xticklabels(countries, rotation=30, ha="right", fontsize=7)
        ax.set_xlim(-0.5, len(countries) - 0.5)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("mean score")
        plots.note_if_empty(ax, [r.get("estimate") for m in models for r in
                                 (metrics["per_model"][m].get("country_breakdown") or {}).get(judge, [])],
                            "no valid judgement (see parse_status in metrics.json)")
        ax.set_title(f"{prompts.JUDGE_NAMES[judge]} per {fig5_label(metrics)} (hatched: fewer than "
                     f"{uncertainty.MIN_GROUP_SIZE} judged dialogues)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"SocialCC Fig. 5: per {fig5_label(metrics)}" + _level(metrics), fontsize=10)
    plots.save_figure(fig, path)


def by_value_topic_zone_png(metrics: dict, path: Path) -> None:
    """Fig. 6: per model, the mean value-knowledge score per Table 4A value topic (rows) and Inglehart-Welzel
    group of the value country (columns); blank where no dialogue."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(1, len(models), figsize=(7 * len(models), 5), dpi=100, squeeze=False)
    for ax, model in zip(axes[0], models):
        m = metrics["per_model"][model]
        topics = sorted(m["by_value_topic"])
        zones = sorted(m["by_zone"])
        cells = [[(m["by_value_topic_zone"].get(f"{t} | {z}") or {}).get("value") for z in zones] for t in topics]
        image = ax.imshow([[float("nan") if v is None else v for v in row] for row in cells], vmin=0, vmax=1,
                          cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(zones, rotation=30, ha="right", fontsize=7)
        ax.set_yticks(range(len(topics)))
        ax.set_yticklabels(topics, fontsize=7)
        for i, row in enumerate(cells):  # the value in each cell: the colour alone is hard to read
            for j, value in enumerate(row):
                if value is not None:
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                            color="black" if value > 0.6 else "white")
        plots.note_if_empty(ax, [v for row in cells for v in row], "no valid value-knowledge judgement")
        ax.set_title(f"{model}: value knowledge by value topic x cultural group", fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.04)
    plots.save_figure(fig, path)


def aware_without_knowledge_png(metrics: dict, path: Path) -> None:
    """Fig. 7: of the dialogues judged aware without commonsense knowledge, the % per commonsense topic and per
    value topic, per model, with bootstrap intervals."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 2, figsize=(12, 3.5 * len(models)), dpi=100, squeeze=False)
    for row, model in zip(axes, models):
        found = metrics["per_model"][model]["aware_without_knowledge"]
        for ax, key, what in ((row[0], "by_topic_pct", "commonsense topic"),
                              (row[1], "by_value_topic_pct", "value topic")):
            topics = list(found[key])
            intervals = found.get(f"{key}_ci") or {}
            _bar_series(ax, range(len(topics)), 1, 0, [found[key][t] for t in topics],
                        [intervals.get(t) for t in topics], model, colour=4)
            ax.set_xticks(range(len(topics)))
            ax.set_xticklabels(topics, rotation=30, ha="right", fontsize=7)
            ax.set_ylim(0, 101)
            ax.set_ylabel("% of aware-without-knowledge dialogues")
            ax.set_title(f"{model}: aware without knowledge (n = {found['n']}) by {what}", fontsize=9)
            plots.note_if_empty(ax, [found[key][t] for t in topics], "no dialogue judged aware without commonsense "
                                "knowledge (or no valid judgement)")
    plots.save_figure(fig, path)


def behaviour_distribution_png(metrics: dict, path: Path) -> None:
    """Table 2's behaviour distribution: % of dialogues scored 0, 1, 2, 3, one series per model with bootstrap
    intervals."""
    plt = plots.pyplot()
    models = metrics["models"]
    scores = [str(s) for s in range(prompts.JUDGE_SCALES["behaviour"][0], prompts.JUDGE_SCALES["behaviour"][1] + 1)]
    fig, ax = plt.subplots(figsize=(max(6.0, 2 + len(models)), 4), dpi=100)
    for i, model in enumerate(models):
        t = metrics["per_model"][model]["table2"]
        intervals = t.get("behaviour_distribution_pct_ci") or {}
        _bar_series(ax, range(len(scores)), len(models), i, [t["behaviour_distribution_pct"].get(s) for s in scores],
                    [intervals.get(s) for s in scores], model)
    ax.set_xticks(range(len(scores)))
    ax.set_xticklabels([f"score {s}" for s in scores])
    ax.set_ylabel("% of dialogues")
    ax.set_ylim(0, 101)
    ax.set_title("SocialCC Table 2: behaviour scores" + _level(metrics), fontsize=9)
    ax.legend(fontsize=7)
    plots.save_figure(fig, path)


PLOTS = {"table2.png": table2_png, "by_country.png": by_country_png,
         "by_value_topic_zone.png": by_value_topic_zone_png, "aware_without_knowledge.png": aware_without_knowledge_png,
         "behaviour_distribution.png": behaviour_distribution_png}


def write_run(metrics: dict, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json`` and the PLOTS; returns the paths written."""
    return runs.write_metrics_and_plots(metrics, out, PLOTS)


# ---------------------------------------------------------------------------------------------------- evaluate


class EvaluateResult(runs.EvaluateResult):
    """``runs.EvaluateResult`` whose records are the transcripts."""

    @property
    def transcripts(self) -> list[dict]:
        return self.records


def check_inputs(release: Path, limit: int | None, split: str | None = None, samples: int | None = None,
                 max_tokens: int | None = None) -> dict:
    runs.check_at_least_one({"--limit": limit})
    if samples not in (None, 1):
        raise InputError(f"socialcc plays one dialogue per scenario; --samples must be 1, got {samples}")
    runs.check_at_least_one({"--max-tokens": max_tokens})
    tables = release_tables(release, split)
    if tables["scenarios"].height == 0:
        raise InputError("release has no scenarios", file=release)
    return tables


def evaluate(backend, release: Path, out: Path, config: Config | None = None, *, temperature: float | None = None,
             max_tokens: int | None = None, seed: int | None = 0, limit: int | None = None, split: str | None = None,
             antagonist_backend=None, judge_backend=None, args: dict | None = None, console=None,
             bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> EvaluateResult:
    """Play every scenario (``limit`` spread over the value countries: ``limit.spread_positions``) with ``backend``
    as Character 2 (the protagonist), judge the transcripts, score; writes transcripts.jsonl, metrics.json, the
    plots and run.json into ``out``. The judge is the config's (or ``judge_backend``, tests); with neither, an
    InputError before any model call. The antagonist is ``antagonist_backend``, else the config's, else the judge.
    Re-running into the same folder replays every turn already answered from the cache."""
    from culturebench.evaluate.cache import ResponseCache

    started = datetime.now(UTC)
    config = config or Config()
    if judge_backend is None and config.judge is None:
        raise InputError(NO_JUDGE, file=config.source)
    release, out = Path(release), Path(out)
    tables = check_inputs(release, limit, split, None, max_tokens)
    manifest = load_manifest(release)
    scenarios = scenarios_from(tables, config)
    countries = [(s.country,) for s in scenarios]
    kept = spread_positions(countries, limit, seed)
    scenarios = [scenarios[i] for i in kept]
    covers = coverage([countries[i] for i in kept], countries, limit, seed, item="scenarios", columns=["countries"])
    temperature = config.agent_temperature if temperature is None else temperature
    max_tokens = config.agent_max_tokens if max_tokens is None else max_tokens
    model = str(getattr(backend, "model", "model"))
    if judge_backend is None:
        judge_backend = make_backend(config.judge, backend)
    if antagonist_backend is None:
        antagonist_backend = (make_backend(config.antagonist, backend) if config.antagonist is not None else judge_backend)
    judge_model = str(getattr(judge_backend, "model", "judge"))
    judge_note = ("the judge is the evaluated model, as named in the config" if judge_model == model
                  else f"judge: {judge_model}")
    antagonist_model = str(getattr(antagonist_backend, "model", "antagonist"))
    total = len(scenarios) * (2 * config.max_rounds + len(prompts.JUDGES))
    with ResponseCache(out / runs.CACHE_FILE) as cache, OverallProgress(console, total, backend) as progress:
        dialogues, results = simulate(scenarios, backend, antagonist_backend, cache, max_rounds=config.max_rounds,
                                      temperature=temperature, max_tokens=max_tokens, seed=seed, stop=config.stop,
                                      progress=progress, setup=config.dialogue_setup)
        transcripts = [transcript_record(d, model, antagonist_model, config.dialogue_setup) for d in dialogues]
        jresult = judge_transcripts(transcripts, judge_backend, cache, temperature=config.judge_temperature,
                                    max_tokens=config.judge_max_tokens, seed=seed, progress=progress)
    totals = runs.total_stats(runs.runner_stats(r) for r in (*results, jresult))
    path = runs.write_jsonl(out / TRANSCRIPTS_FILE, transcripts)
    metrics = aggregate(transcripts, release=release, judge_note=judge_note, sources=[runs.source_info(path)],
                        bootstrap=bootstrap, fig5_grouping=config.fig5_country)
    metrics["covers"] = [covers.as_dict()]
    written = runs.write_run_record(
        out, [path, *write_run(metrics, out)], benchmark=BENCHMARK, release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=totals,
        extra={"evaluation": {"n_scenarios": len(scenarios), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "split": split, "config": config.as_dict(),
                              "protagonist": "Character 2 (the evaluated model)",
                              "antagonist_model": antagonist_model, "judge_model": judge_model,
                              "judge_note": judge_note, "prompt_source": prompts.PROMPT_SOURCE,
                              "dialogue_setup": {config.dialogue_setup:
                                                 prompts.DIALOGUE_SETUPS_NOTE[config.dialogue_setup]},
                              "prompt_fields": metrics["prompt_fields"], "fig5": metrics["fig5"]},
               "metrics": metrics["per_model"][model]["table2"]})
    return EvaluateResult(metrics=metrics, records=transcripts, stats=totals, written=written)


def transcript_record(d: Dialogue, model: str, antagonist_model: str, setup: str) -> dict:
    s = d.scenario
    return {"scenario_id": s.id, "model": model, "antagonist_model": antagonist_model, "country": s.country,
            "commonsense_country": s.commonsense_country, "zone": s.zone, "topic": s.topic,
            "value_topic": s.value_topic, "n_rounds": d.rounds, "ended_by": d.ended_by, "dialogue_setup": setup,
            "turns": d.turns, "fields": s.fields}


# ---------------------------------------------------------------------------------------------------- score


def read_transcripts(paths: Sequence[Path]) -> list[dict]:
    """The dialogues of transcripts.jsonl files (evaluate's output)."""
    records = []
    for path in map(Path, paths):
        before = len(records)
        required = ("scenario_id", "model", "turns", "fields")
        records.extend(record for _, record in runs.jsonl_records(path, required, what="transcripts file"))
        if len(records) == before:
            raise InputError("transcripts file has no records", file=path)
    return records


def rezone(records: Sequence[dict], scenarios: pl.DataFrame, config: Config) -> None:
    """Each transcript's zone looked up as ``evaluate`` does (``zone_of``: the release's zone by scenario id, then
    the config's), keeping its own where neither has one; and its commonsense country (Fig. 5) from the release
    where the transcript has none (transcripts written before they recorded it)."""
    zones = release_zones(scenarios)
    commonsense = dict(zip(scenarios["id"], scenarios["commonsense_country"]))
    for r in records:
        zone = zone_of(zones.get(str(r["scenario_id"])), r.get("country"), config)
        r["zone"] = zone if zone != UNKNOWN else r.get("zone") or UNKNOWN
        r["commonsense_country"] = r.get("commonsense_country") or commonsense.get(str(r["scenario_id"]))


def reparse(records: Sequence[dict]) -> None:
    """Every saved judgement's score and parse_status parsed again from its raw answer."""
    for r in records:
        for judge, j in (r.get("judgements") or {}).items():
            if judge in prompts.JUDGE_SCALES:
                parsed = prompts.parse_score(j.get("raw"), judge)
                j["score"], j["parse_status"] = parsed.score, parsed.status
                j.pop("status", None)


def score(paths: Sequence[Path], release: Path, out: Path, config: Config | None = None,
          judge_backend=None, bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> dict:
    """Re-aggregate saved transcripts (re-parsing the judges' raw answers), or re-judge them with the config's judge
    (or ``judge_backend``) first, caching in ``out``. Zones are looked up as ``evaluate`` does (``rezone``)."""
    from culturebench.evaluate.cache import ResponseCache

    config = config or Config()
    release = Path(release)
    scenarios = release_tables(release)["scenarios"]
    records = read_transcripts(paths)
    rezone(records, scenarios, config)
    note = None
    if judge_backend is None and config.judge is not None:
        judge_backend = make_backend(config.judge)
    if judge_backend is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        with ResponseCache(Path(out) / runs.CACHE_FILE) as cache:
            for r in records:
                r.pop("judgements", None)
            judge_transcripts(records, judge_backend, cache, temperature=config.judge_temperature,
                              max_tokens=config.judge_max_tokens)
        runs.write_jsonl(Path(out) / TRANSCRIPTS_FILE, records)
    else:
        reparse(records)
        note = "re-aggregated from saved judgements"
    return aggregate(records, release=release, sources=[runs.source_info(p) for p in paths], judge_note=note,
                     bootstrap=bootstrap, fig5_grouping=config.fig5_country)


def _bracket(interval: Sequence[float | None] | None) -> str:
    return f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval and None not in interval else ""


def summary(metrics: dict) -> str:
    lines = []
    for model in metrics["models"]:
        t = metrics["per_model"][model]["table2"]
        d = metrics["per_model"][model]["dialogue"]
        parts = ", ".join(f"{prompts.JUDGE_NAMES[j]} {t[j]:.3f}{_bracket(t.get(f'{j}_ci'))}" if t[j] is not None
                          else f"{prompts.JUDGE_NAMES[j]} n/a" for j in prompts.JUDGES)
        dist = " / ".join(f"{v:.0f}%" if v is not None else "n/a" for v in t["behaviour_distribution_pct"].values())
        invalid = sum(t[f"n_invalid_{j}"] for j in prompts.JUDGES)
        lines.append(f"socialcc {model}: {t['n']:,} dialogues (mean {d['mean_rounds'] or 0:.1f} rounds); {parts}; "
                     f"behaviour 0/1/2/3 {dist}; {invalid} invalid judgements")
        if d.get("n_turn_limit"):
            lines.append(f"socialcc {model}: {d['n_turn_limit']:,} of {t['n']:,} dialogues ran to the turn limit "
                         "without a GOOD BYE (config max_rounds; stop: tolerant also ends on 'Goodbye')")
    if metrics.get("judge_note"):
        lines.append(f"judge: {metrics['judge_note']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made (a named judge included)."""
    if load_config(options.get("config")).judge is None:
        raise InputError(NO_JUDGE, file=options.get("config"))
    check_inputs(options["release"], options.get("limit"), options.get("split"), options.get("samples"),
                 options.get("max_tokens"))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    config = load_config(options.get("config"))
    result = evaluate(model_backend, options["release"], options["out"], config,
                      temperature=options.get("temperature"), max_tokens=options.get("max_tokens"),
                      seed=options.get("seed"), limit=options.get("limit"), split=options.get("split"), args=args,
                      console=console)
    line = f"{summary(result.metrics)}\nsocialcc: {runs.request_counts(result.stats['n_requests'], result.stats)}"
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None) -> tuple[str, list[Path]]:
    """`culturebench score socialcc --responses transcripts.jsonl[,...]`."""
    metrics = score(runs.split_paths(responses), release, out, load_config(config))
    return summary(metrics), write_run(metrics, out)


# --------------------------------------------------------------------------------------------- compare


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's transcripts re-aggregated together from their saved judgements (as ``score`` without a judge),
    so that one bootstrap of scenarios serves all models (paired differences); zones looked up in the release
    (--release, else the first run's) where it is at hand, else the transcripts' own."""
    records, sources = [], []
    for folder, mapping in zip(folders, labels):
        paths = folder.scored_files(TRANSCRIPTS_FILE, "transcripts")
        found = read_transcripts(paths)
        for r in found:
            r["model"] = mapping.get(str(r["model"]), str(r["model"]))
        records += found
        sources += [runs.source_info(p) for p in paths]
    release = release or folders[0].release
    notes = []
    if release is not None and (Path(release) / "manifest.json").is_file():
        rezone(records, release_tables(Path(release))["scenarios"], Config())
    else:
        notes.append("Release not at hand: Fig. 6 uses the zones the transcripts recorded.")
        release = None
    reparse(records)
    metrics = aggregate(records, release=release, sources=sources, judge_note="re-aggregated from saved judgements",
                        bootstrap=settings)
    judges = sorted({j for m in metrics["models"] for j in metrics["per_model"][m]["judge_models"]})
    notes.append(f"Judge models: {', '.join(judges)}.")
    return compare.Comparison(models=metrics["models"], tables=comparison_tables(metrics), metrics=metrics,
                              notes=notes)


def comparison_tables(metrics: dict) -> dict[str, pl.DataFrame]:
    """The report's tables from metrics.json: table2 (Table 2, one row per model), differences (paired),
    by_country (Fig. 5 with sizes, small countries flagged, not ranked), value_topic_zone (Fig. 6) and
    aware_without_knowledge (Fig. 7)."""
    ci = lambda name: {name: pl.Float64, f"{name}_low": pl.Float64, f"{name}_high": pl.Float64}
    scores = [str(s) for s in range(prompts.JUDGE_SCALES["behaviour"][0], prompts.JUDGE_SCALES["behaviour"][1] + 1)]
    table2, countries, cells, fig7 = [], [], [], []
    for model in metrics["models"]:
        m = metrics["per_model"][model]
        t = m["table2"]
        row = {"model": model, "dialogues": t["n"]}
        for j in prompts.JUDGES:
            row |= compare.with_interval(prompts.JUDGE_NAMES[j], t[j], t.get(f"{j}_ci"))
        for s in scores:
            row |= compare.with_interval(f"behaviour score {s} (%)", t["behaviour_distribution_pct"][s],
                                  (t.get("behaviour_distribution_pct_ci") or {}).get(s))
        row["invalid judgements"] = sum(t[f"n_invalid_{j}"] for j in prompts.JUDGES)
        table2.append(row)
        for j in prompts.JUDGES:
            for g in m["country_breakdown"][j]:
                countries.append({"model": model, "dimension": prompts.JUDGE_NAMES[j], "rank": g["rank"],
                                  "country": g["group"], "n": g["n"], **compare.with_interval("score", g["estimate"],
                                                                                       [g["low"], g["high"]]),
                                  "small": g["small"]})
        for key, block in m["by_value_topic_zone"].items():
            topic, zone = key.split(" | ", 1)
            cells.append({"model": model, "value topic": topic, "zone": zone, "n": block["n_valid_value"],
                          **compare.with_interval("value knowledge", block["value"], block.get("value_ci"))})
        found = m["aware_without_knowledge"]
        fig7.append({"model": model, "of": "judged dialogues", "topic": "(all)", "n": found["n_judged"],
                     **compare.with_interval("pct", None if found["share"] is None else 100 * found["share"],
                                      [None if v is None else 100 * v for v in found.get("share_ci") or [None, None]])})
        for key, what in (("by_topic_pct", "commonsense topic"), ("by_value_topic_pct", "value topic")):
            for topic, pct in found[key].items():
                fig7.append({"model": model, "of": f"aware without knowledge, by {what}", "topic": topic,
                             "n": found["n"],
                             **compare.with_interval("pct", pct, (found.get(f"{key}_ci") or {}).get(topic))})
    table2_schema = {"model": pl.String, "dialogues": pl.Int64}
    for j in prompts.JUDGES:
        table2_schema |= ci(prompts.JUDGE_NAMES[j])
    for s in scores:
        table2_schema |= ci(f"behaviour score {s} (%)")
    table2_schema["invalid judgements"] = pl.Int64
    differences = [{"model_a": d["model_a"], "model_b": d["model_b"], "dimension": prompts.JUDGE_NAMES[d["dimension"]],
                    "n_common": d["n_common"],
                    **compare.with_interval("difference", d["difference"], [d["low"], d["high"]]),
                    "pvalue": d["pvalue"], "pvalue_holm": d["pvalue_holm"], "significant": d["significant"]}
                   for d in metrics["model_differences"]]
    return {
        "table2": pl.DataFrame(table2, schema=table2_schema),
        "differences": pl.DataFrame(differences, schema={
            "model_a": pl.String, "model_b": pl.String, "dimension": pl.String, "n_common": pl.Int64,
            **ci("difference"), "pvalue": pl.Float64, "pvalue_holm": pl.Float64, "significant": pl.Boolean}),
        "by_country": pl.DataFrame(countries, schema={
            "model": pl.String, "dimension": pl.String, "rank": pl.Int64, "country": pl.String, "n": pl.Int64,
            **ci("score"), "small": pl.Boolean}),
        "value_topic_zone": pl.DataFrame(cells, schema={
            "model": pl.String, "value topic": pl.String, "zone": pl.String, "n": pl.Int64,
            **ci("value knowledge")}),
        "aware_without_knowledge": pl.DataFrame(fig7, schema={
            "model": pl.String, "of": pl.String, "topic": pl.String, "n": pl.Int64, **ci("pct")}),
    }


COMPARE = compare.BenchmarkSpec(
    benchmark=BENCHMARK,
    title="SocialCC (Wu et al., ACL 2025)",
    build=compare_runs,
    tables=(
        compare.Table("table2", "Table 2: cultural competence per model",
                      "Mean judged score per dimension (awareness, commonsense and value knowledge 0/1, behaviour "
                      "0-3) and the behaviour score distribution, over the dialogues with a valid judgement."),
        compare.Table("differences", "Paired differences between models per Table 2 dimension",
                      "difference = mean over the scenarios both models were judged on of score_a - score_b; "
                      "pvalue_holm over all rows."),
        compare.Table("by_country", "Fig. 5: per country (of the commonsense item unless the runs' fig5_country "
                      "says value), with sizes",
                      f"n = dialogues with a valid judgement; countries with n < {uncertainty.MIN_GROUP_SIZE} are "
                      "flagged small and not ranked; rank 1 = highest score per model and dimension."),
        compare.Table("value_topic_zone", "Fig. 6: value knowledge per value topic x Inglehart-Welzel group"),
        compare.Table("aware_without_knowledge", "Fig. 7: aware without commonsense knowledge",
                      "First row per model: % of judged dialogues scored aware (1) without commonsense knowledge "
                      "(0); then how those split (%) by commonsense topic and by value topic."),
    ),
    figures=(
        compare.Figure("table2.png", "Table 2: the four dimensions per model", lambda c, p: table2_png(c.metrics, p)),
        compare.Figure("behaviour_distribution.png", "Table 2: behaviour score distribution",
                       lambda c, p: behaviour_distribution_png(c.metrics, p)),
        compare.Figure("by_country.png", "Fig. 5: awareness and knowledge per country",
                       lambda c, p: by_country_png(c.metrics, p)),
        compare.Figure("by_value_topic_zone.png", "Fig. 6: value knowledge by value topic x cultural group",
                       lambda c, p: by_value_topic_zone_png(c.metrics, p)),
        compare.Figure("aware_without_knowledge.png", "Fig. 7: aware without commonsense knowledge",
                       lambda c, p: aware_without_knowledge_png(c.metrics, p)),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for SocialCC: every run's transcripts re-aggregated together."""
