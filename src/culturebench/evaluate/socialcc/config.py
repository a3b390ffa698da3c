"""SocialCC's options (``--config`` JSON/YAML): judge, antagonist, stop rule, rounds, temperatures, zones, dialogue
setup, event stand-ins and Fig. 5's grouping."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from culturebench.errors import InputError
from culturebench.evaluate import runs
from culturebench.evaluate.socialcc import prompts

BENCHMARK = "socialcc"

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

NO_JUDGE = ("socialcc needs a named judge model (the paper's is GPT-4o): give --config with "
            "{\"judge\": \"MODEL\"} or {\"judge\": {\"model\", \"backend\", \"base_url\"}}")


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
