"""SocialCC evaluation and scoring (Wu et al., "SocialCC: Interactive Evaluation for Cultural Competence in Language
Agents", ACL 2025, Sec. 3.3, App. C): ``culturebench evaluate socialcc`` and ``culturebench score socialcc``.

**Simulation** (Sec. 3.3, App. C.1): for every scenario of a SocialCC release (config ``scenarios``) an antagonist
agent (knows the scenario's events, the commonsense item and the value item) and the evaluated protagonist talk:
the antagonist opens with "Hello", then each round is one protagonist and one antagonist turn, at most 20 rounds,
until a turn contains "GOOD BYE". Both agents at temperature 1. The protagonist is the first character whose
nationality is neither the scenario's country (the commonsense item's culture) nor the value item's country (found
through config ``value_preferences``, else read from "People from X ..."); the antagonist plays every other
character. The value knowledge is the scenario's ``value_item`` (a preference statement), else the country's
preference for ``value_question_id``.

**Every turn is one cached model call**: a ``ChatRequest`` whose messages hold the dialogue so far, sent through
``runner.run_requests`` with the run folder's response cache. All dialogues advance one turn per step (one batch per
step), so a killed run re-run with the same command replays every cached turn (same request, same cached answer)
and continues each dialogue where it stopped.

**Judges** (App. C.2): cultural awareness 0/1, commonsense knowledge 0/1, value knowledge 0/1, cultural behaviour
0-3, at temperature 0, answers parsed by ``socialcc_prompts.parse_score`` (invalid answers are recorded and left
out of the means).

**Models**: the judge and the antagonist come from ``--config`` (JSON/YAML, every key optional)::

    {"judge": {"model": "gpt-4o", "backend": "openai", "base_url": "http://..."},   # or "judge": "gpt-4o"
     "antagonist": {...},          # default: the judge
     "max_rounds": 20, "agent_temperature": 1.0, "agent_max_tokens": 256,
     "judge_temperature": 0.0, "judge_max_tokens": 512,
     "zones": "country_iw_zones.csv"}   # Country,Cultural_Region (relative to the config file)

Without a configured judge **the evaluated model judges itself** (and plays the antagonist); metrics.json and
run.json say so. ``--temperature`` / ``--max-tokens`` override the agents' settings; ``--limit N`` takes the first N
scenarios; ``--split`` one split of the scenarios.

**Report** (Table 2, Fig. 5, Fig. 6): per model the mean of each judged score, the behaviour score distribution
(% of 0/1/2/3), invalid-judgement counts and dialogue lengths; the same means per country (Fig. 5,
``by_country.png``), per WVS / Inglehart-Welzel cultural zone and per commonsense topic (Fig. 6,
``by_zone_topic.png``); ``behaviour_distribution.png``; metrics.json. Zones come from a scenario column
``iw_zone`` / ``cultural_zone`` when the release has one, else from the config's ``zones`` table, else "unknown".

``evaluate`` writes transcripts.jsonl (one line per scenario: the turns, how the dialogue ended, each judge's raw
answer, score and status), metrics.json, the plots and run.json. ``score`` re-aggregates from saved transcripts
(re-parsing the judges' raw answers), or re-judges them when the config names a judge.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import plots, runs
from culturebench.evaluate import socialcc_prompts as prompts
from culturebench.release import load_manifest

BENCHMARK = "socialcc"
SCENARIO_COLUMNS = ("id", "scenario", "events", "characters", "country", "commonsense_item", "commonsense_topic",
                    "value_item", "value_question_id")
PREFERENCE_COLUMNS = ("country", "question_id", "statement")
ZONE_COLUMNS = ("iw_zone", "cultural_zone", "zone")
UNKNOWN = "unknown"
TRANSCRIPTS_FILE = "transcripts.jsonl"
CONFIG_KEYS = {"judge", "antagonist", "max_rounds", "agent_temperature", "agent_max_tokens", "judge_temperature",
               "judge_max_tokens", "zones"}
SELF_JUDGED = "the evaluated model (no judge configured)"


# ---------------------------------------------------------------------------------------------------- config


@dataclass(frozen=True)
class ModelSpec:
    model: str
    backend: str = "openai"
    base_url: str | None = None


@dataclass
class Config:
    judge: ModelSpec | None = None
    antagonist: ModelSpec | None = None
    max_rounds: int = prompts.MAX_ROUNDS
    agent_temperature: float = prompts.AGENT_TEMPERATURE
    agent_max_tokens: int = prompts.AGENT_MAX_TOKENS
    judge_temperature: float = prompts.JUDGE_TEMPERATURE
    judge_max_tokens: int = prompts.JUDGE_MAX_TOKENS
    zones: dict[str, str] = field(default_factory=dict)
    source: str | None = None

    def as_dict(self) -> dict:
        spec = lambda s: None if s is None else s.__dict__
        return {"judge": spec(self.judge), "antagonist": spec(self.antagonist), "max_rounds": self.max_rounds,
                "agent_temperature": self.agent_temperature, "agent_max_tokens": self.agent_max_tokens,
                "judge_temperature": self.judge_temperature, "judge_max_tokens": self.judge_max_tokens,
                "n_zones": len(self.zones), "source": self.source}


def _spec(value: Any, key: str, where: Path | None) -> ModelSpec:
    if isinstance(value, str) and value:
        return ModelSpec(value)
    if not isinstance(value, dict) or not value.get("model"):
        raise InputError(f"{key} needs a model (a name or {{model, backend, base_url}})", file=where, column=key)
    backend = value.get("backend", "openai")
    if backend not in ("openai", "vllm"):
        raise InputError(f"{key}: backend must be openai or vllm, got {backend!r}", file=where, column=key)
    return ModelSpec(str(value["model"]), backend, value.get("base_url"))


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
    if raw.get("zones"):
        zones = Path(raw["zones"])
        config.zones = read_zones(zones if zones.is_absolute() else path.parent / zones)
    return config


def make_backend(spec: ModelSpec, like=None):
    """The judge's or antagonist's backend, with the evaluated backend's client settings (``like``)."""
    return runs.companion_backend(spec.model, spec.base_url, spec.backend, like)


# ---------------------------------------------------------------------------------------------------- release


def release_tables(release: Path, split: str | None = None) -> dict[str, pl.DataFrame | None]:
    """The release's ``scenarios`` (ids as text; all splits or only ``split``) and ``value_preferences`` (None when
    absent)."""
    release = Path(release)
    tables = runs.release_configs(release, BENCHMARK, "a SocialCC release")
    scenarios = runs.release_config(tables, "scenarios", release, columns=SCENARIO_COLUMNS, split=split)
    scenarios = scenarios.with_columns(pl.col("id").cast(pl.String), pl.col("country").cast(pl.String),
                                       pl.col("value_question_id").cast(pl.String))
    duplicated = scenarios.filter(pl.col("id").is_duplicated())
    if duplicated.height:
        raise InputError(f"scenario id {duplicated['id'][0]!r} occurs more than once", file=release, column="id")
    preferences = None
    if "value_preferences" in tables:
        preferences = pl.concat(list(tables["value_preferences"].values()), how="diagonal_relaxed")
        for column in PREFERENCE_COLUMNS:
            if column not in preferences.columns:
                raise InputError(f"value_preferences config lacks column {column}", file=release, column=column)
        preferences = preferences.with_columns(pl.col("country").cast(pl.String),
                                               pl.col("question_id").cast(pl.String))
    return {"scenarios": scenarios, "value_preferences": preferences}


def _matches(nationality: object, country: str | None) -> bool:
    return bool(country) and str(country).strip().casefold() in str(nationality or "").casefold()


def pick_characters(characters: Sequence[dict] | None, country: str,
                    value_country: str | None = None) -> tuple[dict | None, list[dict]]:
    """(protagonist, the others): the protagonist, played by the evaluated model, is the first character whose
    nationality is neither the scenario's country (the commonsense item's culture) nor the value item's country,
    else the first character not of the scenario's country, else the first; the antagonist plays all the others."""
    chars = [c for c in (characters or []) if isinstance(c, dict)]
    if not chars:
        return None, []
    index = next((i for i, c in enumerate(chars) if not _matches(c.get("nationality"), country)
                  and not _matches(c.get("nationality"), value_country)), None)
    if index is None:
        index = next((i for i, c in enumerate(chars) if not _matches(c.get("nationality"), country)), 0)
    return chars[index], [c for i, c in enumerate(chars) if i != index]


_VALUE_COUNTRY = re.compile(r"People (?:from|in) (.+?) (?:strongly )?(?:agree|disagree|value)", re.IGNORECASE)


@dataclass
class Scenario:
    id: str
    country: str
    zone: str
    topic: str
    fields: dict  # prompt fields (socialcc_prompts.scenario_fields)


def scenarios_from(tables: dict, config: Config) -> list[Scenario]:
    scenarios = tables["scenarios"]
    statements: dict[tuple[str, str], str] = {}
    countries: dict[str, str] = {}  # statement -> its country
    if tables.get("value_preferences") is not None:
        for row in tables["value_preferences"].select("country", "question_id", "statement").iter_rows():
            if row[2]:
                statements[(row[0], row[1])] = str(row[2])
                countries[" ".join(str(row[2]).split())] = row[0]
    zone_column = next((c for c in ZONE_COLUMNS if c in scenarios.columns), None)
    out = []
    for row in scenarios.iter_rows(named=True):
        country = row["country"] or UNKNOWN
        value = str(row.get("value_item") or "").strip() or statements.get((row["country"],
                                                                              row["value_question_id"]), "")
        value_country = countries.get(" ".join(value.split()))
        if value_country is None:
            match = _VALUE_COUNTRY.search(value)
            value_country = match.group(1) if match else None
        protagonist, others = pick_characters(row.get("characters"), country, value_country)
        zone = (row.get(zone_column) if zone_column else None) or config.zones.get(country) or UNKNOWN
        topic = str(row.get("commonsense_topic") or UNKNOWN)
        out.append(Scenario(row["id"], country, str(zone), topic,
                            prompts.scenario_fields(row, protagonist, others, value)))
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


def simulate(scenarios: Sequence[Scenario], protagonist_backend, antagonist_backend, cache, *,
             max_rounds: int = prompts.MAX_ROUNDS, temperature: float = prompts.AGENT_TEMPERATURE,
             max_tokens: int = prompts.AGENT_MAX_TOKENS, seed: int | None = 0, console=None) -> tuple[list[Dialogue], list]:
    """Play every dialogue to its end: one batch of turns per step (protagonist, antagonist, ...), each turn a
    cached request holding the dialogue so far. Returns the dialogues and the runner results of every step."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams
    from culturebench.evaluate.runner import run_requests

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    dialogues = []
    for scenario in scenarios:
        opening = {"speaker": scenario.fields["antagonist_name"], "role": "antagonist", "text": prompts.OPENING,
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
        requests = [ChatRequest(prompts.agent_messages(systems[id(d)][role], d.history(), role), sampling)
                    for d in active]
        result = run_requests(backend, requests, cache, description=f"socialcc turn {step + 1} ({role})",
                              console=console)
        results.append(result)
        for d, response in zip(active, result.responses):
            name = d.scenario.fields[f"{role}_name"]
            d.turns.append({"speaker": name, "role": role, "text": response.text, "round": step // 2 + 1,
                            "generated": True})
            if prompts.ends_dialogue(response.text):
                d.ended_by = "good_bye"
            elif role == "antagonist" and step // 2 + 1 >= max_rounds:
                d.ended_by = "max_rounds"
    for d in dialogues:  # max_rounds == 0 or loop exhausted
        if d.ended_by is None:
            d.ended_by = "max_rounds"
    return dialogues, results


def judge_transcripts(transcripts: Sequence[dict], judge_backend, cache, *,
                      temperature: float = prompts.JUDGE_TEMPERATURE, max_tokens: int = prompts.JUDGE_MAX_TOKENS,
                      seed: int | None = 0, console=None):
    """Ask the four judges about every transcript (fills ``judgements``); returns the runner result."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams
    from culturebench.evaluate.runner import run_requests

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    planned = [(t, judge) for t in transcripts for judge in prompts.JUDGES]
    requests = [ChatRequest(prompts.judge_messages(judge, t["fields"], t["turns"]), sampling) for t, judge in planned]
    result = run_requests(judge_backend, requests, cache, description="socialcc judges", console=console)
    model = str(getattr(judge_backend, "model", "judge"))
    for (t, judge), response in zip(planned, result.responses):
        parsed = prompts.parse_score(response.text, judge)
        t.setdefault("judgements", {})[judge] = {"score": parsed.score, "status": parsed.status,
                                                 "raw": response.text, "judge_model": model}
    return result


# ---------------------------------------------------------------------------------------------------- metrics


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def score_block(records: Sequence[dict]) -> dict:
    """Table 2's numbers for a group of transcripts: mean of each judge over valid judgements, the behaviour
    distribution in %, counts of invalid judgements."""
    out: dict[str, Any] = {"n": len(records)}
    for judge in prompts.JUDGES:
        scores = [r["judgements"][judge]["score"] for r in records
                  if (r.get("judgements") or {}).get(judge, {}).get("score") is not None]
        out[judge] = _mean(scores)
        out[f"n_valid_{judge}"] = len(scores)
        out[f"n_invalid_{judge}"] = len(records) - len(scores)
    behaviour = [r["judgements"]["behaviour"]["score"] for r in records
                 if (r.get("judgements") or {}).get("behaviour", {}).get("score") is not None]
    low, high = prompts.JUDGE_SCALES["behaviour"]
    out["behaviour_distribution_pct"] = {str(s): (100 * behaviour.count(s) / len(behaviour) if behaviour else None)
                                         for s in range(low, high + 1)}
    return out


def _by(records: Sequence[dict], key) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return {k: score_block(groups[k]) for k in sorted(groups)}



def aggregate(records: Sequence[dict], *, release: Path | str | None = None, sources: list | None = None,
              judge_note: str | None = None) -> dict:
    """metrics.json from transcripts (each with model, country, zone, topic, turns, ended_by, judgements)."""
    if not records:
        raise InputError("no transcripts to score")
    models = sorted({str(r["model"]) for r in records})
    per_model = {}
    for model in models:
        mine = [r for r in records if str(r["model"]) == model]
        status = {j: {s: 0 for s in prompts.STATUSES} for j in prompts.JUDGES}
        for r in mine:
            for j in prompts.JUDGES:
                s = (r.get("judgements") or {}).get(j, {}).get("status", "empty")
                status[j][s] = status[j].get(s, 0) + 1
        rounds = [int(r.get("n_rounds") or 0) for r in mine]
        per_model[model] = {
            "table2": score_block(mine),
            "judge_status": status,
            "dialogue": {"mean_rounds": _mean(rounds), "max_rounds": max(rounds) if rounds else None,
                         "share_good_bye": _mean([1.0 if r.get("ended_by") == "good_bye" else 0.0 for r in mine])},
            "by_country": _by(mine, lambda r: str(r.get("country") or UNKNOWN)),
            "by_zone": _by(mine, lambda r: str(r.get("zone") or UNKNOWN)),
            "by_topic": _by(mine, lambda r: str(r.get("topic") or UNKNOWN)),
            "by_zone_topic": _by(mine, lambda r: f"{r.get('zone') or UNKNOWN} | {r.get('topic') or UNKNOWN}"),
            "judge_models": sorted({j.get("judge_model") or "?" for r in mine
                                    for j in (r.get("judgements") or {}).values()}),
            "antagonist_models": sorted({str(r.get("antagonist_model")) for r in mine}),
        }
    metrics = {
        "benchmark": BENCHMARK, "release": None if release is None else str(release), "transcripts": sources or [],
        "models": models, "judges": list(prompts.JUDGES), "judge_names": dict(prompts.JUDGE_NAMES),
        "judge_scales": {k: list(v) for k, v in prompts.JUDGE_SCALES.items()},
        "constants": {"max_rounds": prompts.MAX_ROUNDS, "opening": prompts.OPENING, "end_marker": prompts.END_MARKER,
                      "agent_temperature": prompts.AGENT_TEMPERATURE,
                      "judge_temperature": prompts.JUDGE_TEMPERATURE, "prompt_source": prompts.PROMPT_SOURCE},
        "judge_note": judge_note,
        "per_model": per_model,
    }
    return runs.json_safe(metrics)


# ---------------------------------------------------------------------------------------------------- plots


def _bars(ax, groups: dict[str, dict], title: str) -> None:
    """Each judged mean (scaled to [0, 1]) per entry of ``groups``: one bar group per entry, a bar per judge."""
    names = list(groups)
    width = 0.8 / len(prompts.JUDGES)
    colours = plots.pyplot().get_cmap("tab10")
    for i, judge in enumerate(prompts.JUDGES):
        high = prompts.JUDGE_SCALES[judge][1]
        xs = plots.grouped_bar_x(range(len(names)), len(prompts.JUDGES), i, width)
        ax.bar(xs, [((groups[n].get(judge) or 0.0) / high) for n in names], width, color=colours(i),
               label=f"{prompts.JUDGE_NAMES[judge]} (/ {high})")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean score / scale maximum")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=6, loc="upper left")


def by_country_png(metrics: dict, path: Path) -> None:
    """Fig. 5 style: per model, each judged mean per country (scaled to [0, 1])."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 1, figsize=(12, 4 * len(models)), dpi=100, squeeze=False)
    for ax, model in zip(axes[:, 0], models):
        by = metrics["per_model"][model]["by_country"]
        _bars(ax, by, f"{model}: SocialCC scores per country")
    plots.save_figure(fig, path)


def by_zone_topic_png(metrics: dict, path: Path) -> None:
    """Fig. 6 style: per model, judged means per cultural zone and per commonsense topic."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 2, figsize=(14, 4 * len(models)), dpi=100, squeeze=False)
    for row, model in zip(axes, models):
        m = metrics["per_model"][model]
        _bars(row[0], m["by_zone"], f"{model}: per WVS cultural zone")
        _bars(row[1], m["by_topic"], f"{model}: per commonsense topic")
    plots.save_figure(fig, path)


def behaviour_distribution_png(metrics: dict, path: Path) -> None:
    """Table 2's behaviour distribution: % of dialogues scored 0, 1, 2, 3 per model (stacked)."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, ax = plt.subplots(figsize=(max(5, 1.5 * len(models)), 4), dpi=100)
    bottom = [0.0] * len(models)
    colours = {"0": "tab:red", "1": "tab:orange", "2": "tab:olive", "3": "tab:green"}
    for s in ("0", "1", "2", "3"):
        values = [metrics["per_model"][m]["table2"]["behaviour_distribution_pct"].get(s) or 0.0 for m in models]
        ax.bar(models, values, bottom=bottom, color=colours[s], label=f"behaviour {s}")
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_ylabel("% of dialogues")
    ax.set_ylim(0, 101)
    ax.set_title("SocialCC: cultural behaviour score distribution")
    ax.legend(fontsize=7)
    plots.save_figure(fig, path)


PLOTS = {"by_country.png": by_country_png, "by_zone_topic.png": by_zone_topic_png,
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
             antagonist_backend=None, judge_backend=None, args: dict | None = None, console=None) -> EvaluateResult:
    """Play every scenario (the first ``limit``) with ``backend`` as protagonist, judge the transcripts, score;
    writes transcripts.jsonl, metrics.json, the plots and run.json into ``out``. ``antagonist_backend`` /
    ``judge_backend`` replace the backends the config would make (tests). Re-running into the same folder replays
    every turn already answered from the cache."""
    from culturebench.evaluate.cache import ResponseCache

    started = datetime.now(UTC)
    config = config or Config()
    release, out = Path(release), Path(out)
    tables = check_inputs(release, limit, split, None, max_tokens)
    manifest = load_manifest(release)
    scenarios = scenarios_from(tables, config)
    scenarios = scenarios if limit is None else scenarios[:limit]
    temperature = config.agent_temperature if temperature is None else temperature
    max_tokens = config.agent_max_tokens if max_tokens is None else max_tokens
    model = str(getattr(backend, "model", "model"))
    if judge_backend is None:
        judge_backend = backend if config.judge is None else make_backend(config.judge, backend)
    if antagonist_backend is None:
        antagonist_backend = (make_backend(config.antagonist, backend) if config.antagonist is not None else judge_backend)
    judge_note = SELF_JUDGED if judge_backend is backend else None
    antagonist_model = str(getattr(antagonist_backend, "model", "antagonist"))
    with ResponseCache(out / runs.CACHE_FILE) as cache:
        dialogues, results = simulate(scenarios, backend, antagonist_backend, cache, max_rounds=config.max_rounds,
                                      temperature=temperature, max_tokens=max_tokens, seed=seed, console=console)
        transcripts = [transcript_record(d, model, antagonist_model) for d in dialogues]
        jresult = judge_transcripts(transcripts, judge_backend, cache, temperature=config.judge_temperature,
                                    max_tokens=config.judge_max_tokens, seed=seed, console=console)
    totals = runs.total_stats(runs.runner_stats(r) for r in (*results, jresult))
    path = runs.write_jsonl(out / TRANSCRIPTS_FILE, transcripts)
    metrics = aggregate(transcripts, release=release, judge_note=judge_note, sources=[runs.source_info(path)])
    written = runs.write_run_record(
        out, [path, *write_run(metrics, out)], benchmark=BENCHMARK, release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=totals,
        extra={"evaluation": {"n_scenarios": len(scenarios), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "split": split, "config": config.as_dict(),
                              "antagonist_model": antagonist_model,
                              "judge_model": str(getattr(judge_backend, "model", "judge")),
                              "judge_note": judge_note, "prompt_source": prompts.PROMPT_SOURCE},
               "metrics": metrics["per_model"][model]["table2"]})
    return EvaluateResult(metrics=metrics, records=transcripts, stats=totals, written=written)


def transcript_record(d: Dialogue, model: str, antagonist_model: str) -> dict:
    s = d.scenario
    return {"scenario_id": s.id, "model": model, "antagonist_model": antagonist_model, "country": s.country,
            "zone": s.zone, "topic": s.topic, "n_rounds": d.rounds, "ended_by": d.ended_by, "turns": d.turns,
            "fields": s.fields}


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


def score(paths: Sequence[Path], release: Path, out: Path, config: Config | None = None,
          judge_backend=None) -> dict:
    """Re-aggregate saved transcripts (re-parsing the judges' raw answers), or re-judge them with the config's judge
    (or ``judge_backend``) first, caching in ``out``."""
    from culturebench.evaluate.cache import ResponseCache

    config = config or Config()
    release = Path(release)
    release_tables(release)  # it must be a SocialCC release
    records = read_transcripts(paths)
    if config.zones:
        for r in records:
            r["zone"] = config.zones.get(str(r.get("country")), r.get("zone") or UNKNOWN)
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
        for r in records:
            for judge, j in (r.get("judgements") or {}).items():
                if judge in prompts.JUDGE_SCALES:
                    parsed = prompts.parse_score(j.get("raw"), judge)
                    j["score"], j["status"] = parsed.score, parsed.status
        note = "re-aggregated from saved judgements"
    return aggregate(records, release=release, sources=[runs.source_info(p) for p in paths], judge_note=note)


def summary(metrics: dict) -> str:
    lines = []
    for model in metrics["models"]:
        t = metrics["per_model"][model]["table2"]
        d = metrics["per_model"][model]["dialogue"]
        parts = ", ".join(f"{prompts.JUDGE_NAMES[j]} {t[j]:.3f}" if t[j] is not None else f"{prompts.JUDGE_NAMES[j]} n/a"
                          for j in prompts.JUDGES)
        dist = " / ".join(f"{v:.0f}%" if v is not None else "n/a" for v in t["behaviour_distribution_pct"].values())
        invalid = sum(t[f"n_invalid_{j}"] for j in prompts.JUDGES)
        lines.append(f"socialcc {model}: {t['n']:,} dialogues (mean {d['mean_rounds'] or 0:.1f} rounds); {parts}; "
                     f"behaviour 0/1/2/3 {dist}; {invalid} invalid judgements")
    if metrics.get("judge_note"):
        lines.append(f"judge: {metrics['judge_note']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    load_config(options.get("config"))
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
