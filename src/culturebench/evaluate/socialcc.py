"""SocialCC evaluation and scoring (Wu, Lian, Wang and Meng, "SocialCC: Interactive Evaluation for Cultural
Competence in Language Agents", ACL 2025, Sec. 3.3-3.4, App. C): ``culturebench evaluate socialcc`` and
``culturebench score socialcc``.

**Roles** (Sec. 3.3, Tables 6A-7A, Tables 12A-16A): Character 1 is the antagonist (Table 6A: raises the conflict,
questions the knowledge, elicits the value, gives the knowledge when the other side does not notice); Character 2
is the protagonist, played by the **evaluated model** (Table 7A: sees the scenario, events and every character's
profile, and its own goals). Character 3, when a scenario has one, only appears in the profiles.

**Simulation**: the antagonist opens with "Hello", then each round is one protagonist and one antagonist turn, at
most 20 rounds, until a turn contains "GOOD BYE". Both agents at temperature 1. Every turn is one cached model
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
     "max_rounds": 20, "agent_temperature": 1.0, "agent_max_tokens": 256,
     "judge_temperature": 0.0, "judge_max_tokens": 512,
     "zones": "country_iw_zones.csv"}   # Country,Cultural_Region (relative to the config file)

Without a named judge ``evaluate`` stops with a one-line error before any model call (the evaluated model never
judges itself silently; naming it as the judge is allowed and recorded).

**Report**: Table 2 (per model the mean of each judged score and the behaviour score distribution), Fig. 5
(``by_country.png``: awareness and knowledge per value country, the 21 countries with most scenarios), Fig. 6
(``by_value_topic_zone.png``: value knowledge per Table 4A topic x Inglehart-Welzel group of the value country),
Fig. 7 (``aware_without_knowledge.png``: the dialogues scored aware but without commonsense knowledge, by
commonsense topic and value topic), ``behaviour_distribution.png``; metrics.json. A scenario's zone is the release's ``iw_zone`` (``build socialcc``
attaches it from ``RAW/inglehart_welzel/``), else the config's ``zones`` table, else "unknown"; ``score`` looks
zones up the same way (by scenario id), keeping a transcript's own zone where neither has one.
"""

from __future__ import annotations

import csv
import io
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
SCENARIO_COLUMNS = ("id", "scenario", "events", "characters", "commonsense_country", "commonsense_topic",
                    "commonsense_item", "value_item", "value_country", "value_topic")
ZONE_COLUMNS = ("iw_zone", "cultural_zone", "zone")
TOP_COUNTRIES = 21  # Fig. 5: the 21 countries with the most scenarios
UNKNOWN = "unknown"
TRANSCRIPTS_FILE = "transcripts.jsonl"
CONFIG_KEYS = {"judge", "antagonist", "max_rounds", "agent_temperature", "agent_max_tokens", "judge_temperature",
               "judge_max_tokens", "zones"}
NO_JUDGE = ("socialcc needs a named judge model (the paper's is GPT-4o): give --config with "
            "{\"judge\": \"MODEL\"} or {\"judge\": {\"model\", \"backend\", \"base_url\"}}")


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
                            str(row.get("value_topic") or UNKNOWN), prompts.scenario_fields(row)))
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

    def advance(self, n: int = 1) -> None:
        self.bar.advance(self.task, n)

    def drop(self, n: int) -> None:
        self.bar.update(self.task, total=self.bar.tasks[0].total - n)


def simulate(scenarios: Sequence[Scenario], protagonist_backend, antagonist_backend, cache, *,
             max_rounds: int = prompts.MAX_ROUNDS, temperature: float = prompts.AGENT_TEMPERATURE,
             max_tokens: int = prompts.AGENT_MAX_TOKENS, seed: int | None = 0,
             progress: OverallProgress | None = None) -> tuple[list[Dialogue], list]:
    """Play every dialogue to its end: one batch of turns per step (protagonist = Character 2, antagonist =
    Character 1, ...), each turn a cached request holding the dialogue so far. Returns the dialogues and the
    runner results of every step."""
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
        requests = [ChatRequest(prompts.agent_messages(systems[id(d)][role], d.history(), role), sampling)
                    for d in active]
        result = run_requests(backend, requests, cache, description=f"socialcc turn {step + 1} ({role})",
                              console=progress.quiet if progress else None)
        results.append(result)
        for d, response in zip(active, result.responses):
            d.turns.append({"speaker": d.scenario.names[role], "role": role, "text": response.text,
                            "round": step // 2 + 1, "generated": True})
            if prompts.ends_dialogue(response.text):
                d.ended_by = "good_bye"
            elif role == "antagonist" and step // 2 + 1 >= max_rounds:
                d.ended_by = "max_rounds"
            if progress:
                progress.advance()
                if d.ended_by:
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
        progress.advance(len(planned))
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


def score_block(records: Sequence[dict]) -> dict:
    """Table 2's numbers for a group of transcripts: mean of each judge over valid judgements, the behaviour
    distribution in %, counts of invalid judgements."""
    out: dict[str, Any] = {"n": len(records)}
    for judge in prompts.JUDGES:
        scores = [_score(r, judge) for r in records if _score(r, judge) is not None]
        out[judge] = _mean(scores)
        out[f"n_valid_{judge}"] = len(scores)
        out[f"n_invalid_{judge}"] = len(records) - len(scores)
    behaviour = [_score(r, "behaviour") for r in records if _score(r, "behaviour") is not None]
    low, high = prompts.JUDGE_SCALES["behaviour"]
    out["behaviour_distribution_pct"] = {str(s): (100 * behaviour.count(s) / len(behaviour) if behaviour else None)
                                         for s in range(low, high + 1)}
    return out


def _by(records: Sequence[dict], key) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return {k: score_block(groups[k]) for k in sorted(groups)}


def aware_without_knowledge(records: Sequence[dict]) -> dict:
    """Fig. 7: the dialogues judged aware (awareness 1) without commonsense knowledge (commonsense 0), their share
    of all dialogues with both judgements, and how they split (%) by commonsense topic and by value topic."""
    judged = [r for r in records if _score(r, "awareness") is not None and _score(r, "commonsense") is not None]
    found = [r for r in judged if _score(r, "awareness") == 1 and _score(r, "commonsense") == 0]

    def split(key: str) -> dict[str, float]:
        counts: dict[str, int] = {}
        for r in found:
            counts[str(r.get(key) or UNKNOWN)] = counts.get(str(r.get(key) or UNKNOWN), 0) + 1
        return {k: 100 * v / len(found) for k, v in sorted(counts.items())}

    return {"n": len(found), "n_judged": len(judged), "share": len(found) / len(judged) if judged else None,
            "by_topic_pct": split("topic"), "by_value_topic_pct": split("value_topic")}


def aggregate(records: Sequence[dict], *, release: Path | str | None = None, sources: list | None = None,
              judge_note: str | None = None) -> dict:
    """metrics.json from transcripts (each with model, country, zone, topic, value_topic, turns, ended_by,
    judgements)."""
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
            counts[str(r.get("country") or UNKNOWN)] = counts.get(str(r.get("country") or UNKNOWN), 0) + 1
        top = set(sorted(counts, key=lambda c: (-counts[c], c))[:TOP_COUNTRIES])
        per_model[model] = {
            "table2": score_block(mine),
            "parse_status": status,
            "dialogue": {"mean_rounds": _mean(rounds), "max_rounds": max(rounds) if rounds else None,
                         "share_good_bye": _mean([1.0 if r.get("ended_by") == "good_bye" else 0.0 for r in mine])},
            "by_country": _by(mine, lambda r: str(r.get("country") or UNKNOWN)),
            "fig5_countries": sorted(top, key=lambda c: (-counts[c], c)),
            "by_zone": _by(mine, lambda r: str(r.get("zone") or UNKNOWN)),
            "by_value_topic": _by(mine, lambda r: str(r.get("value_topic") or UNKNOWN)),
            "by_value_topic_zone": _by(mine, lambda r: f"{r.get('value_topic') or UNKNOWN} | "
                                                       f"{r.get('zone') or UNKNOWN}"),
            "aware_without_knowledge": aware_without_knowledge(mine),
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
                      "judge_temperature": prompts.JUDGE_TEMPERATURE, "prompt_source": prompts.PROMPT_SOURCE,
                      "prompt_tables": dict(prompts.PROMPT_SOURCES),
                      "behaviour_scale": prompts.BEHAVIOUR_SCALE_NOTE},
        "judge_note": judge_note,
        "per_model": per_model,
    }
    return runs.json_safe(metrics)


# ---------------------------------------------------------------------------------------------------- plots


def _bars(ax, groups: dict[str, dict], title: str, judges: Sequence[str] = prompts.JUDGES) -> None:
    """Each judged mean (scaled to [0, 1]) per entry of ``groups``: one bar group per entry, a bar per judge."""
    names = list(groups)
    width = 0.8 / len(judges)
    colours = plots.pyplot().get_cmap("tab10")
    for i, judge in enumerate(judges):
        high = prompts.JUDGE_SCALES[judge][1]
        xs = plots.grouped_bar_x(range(len(names)), len(judges), i, width)
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
    """Fig. 5: per model, cultural awareness (left) and cultural knowledge (right: commonsense and value) per value
    country, the 21 countries with the most scenarios."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 2, figsize=(16, 4 * len(models)), dpi=100, squeeze=False)
    for row, model in zip(axes, models):
        m = metrics["per_model"][model]
        groups = {c: m["by_country"][c] for c in m["fig5_countries"]}
        _bars(row[0], groups, f"{model}: cultural awareness per country", ("awareness",))
        _bars(row[1], groups, f"{model}: cultural knowledge per country", ("commonsense", "value"))
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
        ax.set_title(f"{model}: value knowledge by value topic x cultural group", fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.04)
    plots.save_figure(fig, path)


def aware_without_knowledge_png(metrics: dict, path: Path) -> None:
    """Fig. 7: of the dialogues judged aware without commonsense knowledge, the % per commonsense topic and per
    value topic, per model."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 2, figsize=(12, 3.5 * len(models)), dpi=100, squeeze=False)
    for row, model in zip(axes, models):
        found = metrics["per_model"][model]["aware_without_knowledge"]
        for ax, key, what in ((row[0], "by_topic_pct", "commonsense topic"),
                              (row[1], "by_value_topic_pct", "value topic")):
            ax.bar(list(found[key]), list(found[key].values()), color="tab:purple")
            ax.set_ylim(0, 101)
            ax.set_ylabel("% of aware-without-knowledge dialogues")
            ax.set_title(f"{model}: aware without knowledge (n = {found['n']}) by {what}", fontsize=9)
            ax.tick_params(axis="x", labelrotation=30, labelsize=7)
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
    ax.set_title("SocialCC: cultural behaviour score distribution (Table 2)")
    ax.legend(fontsize=7)
    plots.save_figure(fig, path)


PLOTS = {"by_country.png": by_country_png, "by_value_topic_zone.png": by_value_topic_zone_png,
         "aware_without_knowledge.png": aware_without_knowledge_png,
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
    """Play every scenario (the first ``limit``) with ``backend`` as Character 2 (the protagonist), judge the
    transcripts, score; writes transcripts.jsonl, metrics.json, the plots and run.json into ``out``. The judge is
    the config's (or ``judge_backend``, tests); with neither, an InputError before any model call. The antagonist is
    ``antagonist_backend``, else the config's, else the judge. Re-running into the same folder replays every turn
    already answered from the cache."""
    from culturebench.evaluate.cache import ResponseCache

    started = datetime.now(UTC)
    config = config or Config()
    if judge_backend is None and config.judge is None:
        raise InputError(NO_JUDGE, file=config.source)
    release, out = Path(release), Path(out)
    tables = check_inputs(release, limit, split, None, max_tokens)
    manifest = load_manifest(release)
    scenarios = scenarios_from(tables, config)
    scenarios = scenarios if limit is None else scenarios[:limit]
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
                                      temperature=temperature, max_tokens=max_tokens, seed=seed, progress=progress)
        transcripts = [transcript_record(d, model, antagonist_model) for d in dialogues]
        jresult = judge_transcripts(transcripts, judge_backend, cache, temperature=config.judge_temperature,
                                    max_tokens=config.judge_max_tokens, seed=seed, progress=progress)
    totals = runs.total_stats(runs.runner_stats(r) for r in (*results, jresult))
    path = runs.write_jsonl(out / TRANSCRIPTS_FILE, transcripts)
    metrics = aggregate(transcripts, release=release, judge_note=judge_note, sources=[runs.source_info(path)])
    written = runs.write_run_record(
        out, [path, *write_run(metrics, out)], benchmark=BENCHMARK, release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=totals,
        extra={"evaluation": {"n_scenarios": len(scenarios), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "split": split, "config": config.as_dict(),
                              "protagonist": "Character 2 (the evaluated model)",
                              "antagonist_model": antagonist_model, "judge_model": judge_model,
                              "judge_note": judge_note, "prompt_source": prompts.PROMPT_SOURCE},
               "metrics": metrics["per_model"][model]["table2"]})
    return EvaluateResult(metrics=metrics, records=transcripts, stats=totals, written=written)


def transcript_record(d: Dialogue, model: str, antagonist_model: str) -> dict:
    s = d.scenario
    return {"scenario_id": s.id, "model": model, "antagonist_model": antagonist_model, "country": s.country,
            "zone": s.zone, "topic": s.topic, "value_topic": s.value_topic, "n_rounds": d.rounds,
            "ended_by": d.ended_by, "turns": d.turns, "fields": s.fields}


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
    (or ``judge_backend``) first, caching in ``out``. Zones are looked up as ``evaluate`` does (``zone_of``)."""
    from culturebench.evaluate.cache import ResponseCache

    config = config or Config()
    release = Path(release)
    zones = release_zones(release_tables(release)["scenarios"])
    records = read_transcripts(paths)
    for r in records:
        zone = zone_of(zones.get(str(r["scenario_id"])), r.get("country"), config)
        r["zone"] = zone if zone != UNKNOWN else r.get("zone") or UNKNOWN
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
                    j["score"], j["parse_status"] = parsed.score, parsed.status
                    j.pop("status", None)
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
