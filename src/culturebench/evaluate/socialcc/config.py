"""SocialCC's run settings made from its options (``SocialCCOptions``): the judge and antagonist models, the stop
rule, rounds, temperatures, the zones table, the dialogue setup, event stand-ins and Fig. 5's grouping, with the
paper's values where an option is not given."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from culturebench.errors import InputError
from culturebench.evaluate.runs import companions
from culturebench.evaluate.socialcc import DIALOGUE_SETUPS, FIG5_GROUPINGS, STOP_RULES, SocialCCOptions, prompts

NO_JUDGE = ("socialcc needs a named judge model (the paper's is GPT-4o): give --config with "
            "{\"judge\": \"MODEL\"} or {\"judge\": {\"model\", \"backend\", \"base_url\"}}")


@dataclass(frozen=True)
class ModelSpec:
    model: str
    backend: str = "openai"
    base_url: str | None = None
    request_shape: dict | None = None  # fixed by the config (companions.request_shape_option; issue #27), else learnt


@dataclass
class Config:
    judge: ModelSpec | None = None
    antagonist: ModelSpec | None = None
    max_rounds: int = prompts.MAX_ROUNDS
    stop: str = STOP_RULES[0]
    agent_temperature: float = prompts.AGENT_TEMPERATURE
    agent_max_tokens: int = prompts.AGENT_MAX_TOKENS
    judge_temperature: float = prompts.JUDGE_TEMPERATURE
    judge_max_tokens: int = prompts.JUDGE_MAX_TOKENS
    zones: dict[str, str] = field(default_factory=dict)
    dialogue_setup: str = DIALOGUE_SETUPS[0]
    event_stand_ins: bool = True
    fig5_country: str = tuple(FIG5_GROUPINGS)[0]
    source: str | None = None

    def as_dict(self) -> dict:
        spec = lambda s: None if s is None else s.__dict__
        return {"judge": spec(self.judge), "antagonist": spec(self.antagonist), "max_rounds": self.max_rounds,
                "stop": self.stop, "agent_temperature": self.agent_temperature,
                "agent_max_tokens": self.agent_max_tokens,
                "judge_temperature": self.judge_temperature, "judge_max_tokens": self.judge_max_tokens,
                "n_zones": len(self.zones), "dialogue_setup": self.dialogue_setup,
                "event_stand_ins": self.event_stand_ins, "fig5_country": self.fig5_country, "source": self.source}


def model_spec(value: Any, key: str, where: Path | None) -> ModelSpec:
    """The ``judge`` or ``antagonist`` option (a model name, or {model, backend, base_url, request_shape})."""
    if isinstance(value, str) and value:
        return ModelSpec(value)
    if not isinstance(value, dict) or not value.get("model"):
        raise InputError(f"{key} needs a model (a name or {{model, backend, base_url}})", file=where, column=key)
    backend = value.get("backend", "openai")
    if backend not in ("openai", "vllm"):
        raise InputError(f"{key}: backend must be openai or vllm, got {backend!r}", file=where, column=key)
    return ModelSpec(str(value["model"]), backend, value.get("base_url"),
                     companions.request_shape_option(value.get("request_shape"), where, key))


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


def config_from(options: SocialCCOptions) -> Config:
    """The run's settings: the options (checked when they were made) with the paper's values where one is not
    given, the named models as ``ModelSpec``s and the zones table read."""
    given = {key: getattr(options, key) for key in ("max_rounds", "agent_temperature", "agent_max_tokens",
                                                    "judge_temperature", "judge_max_tokens")
             if getattr(options, key) is not None}
    where = options.config_file
    zones = options.zones_file()
    return Config(judge=None if options.judge is None else model_spec(options.judge, "judge", where),
                  antagonist=None if options.antagonist is None else model_spec(options.antagonist, "antagonist",
                                                                                where),
                  stop=options.stop, zones={} if zones is None else read_zones(zones),
                  dialogue_setup=options.dialogue_setup, event_stand_ins=options.event_stand_ins,
                  fig5_country=options.fig5_country, source=None if where is None else str(where), **given)


def make_backend(spec: ModelSpec, like=None):
    """The judge's or antagonist's backend, with the evaluated backend's client settings (``like``)."""
    return companions.companion_backend(spec.model, spec.base_url, spec.backend, like, spec.request_shape)
