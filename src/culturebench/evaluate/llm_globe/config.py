"""LLM-GLOBE's run configuration (``Config``) made from its options (``LLMGlobeOptions``: flags and the ``--config``
JSON/YAML): parts, languages, samples, jurors, jury, groups, societies and the t-test unit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from culturebench.errors import InputError
from culturebench.evaluate.runs import companions
from culturebench.evaluate.llm_globe import PARTS, prompts

if TYPE_CHECKING:
    from culturebench.evaluate.llm_globe import LLMGlobeOptions

BENCHMARK = "llm_globe"
DIMENSIONS = prompts.DIMENSIONS
T_UNITS = ("paper", "pooled")
"""Unit of the one-sample t-tests, group means and group t-tests. ``paper`` (default) reproduces Tables 2-5: closed,
one value per prompt (its mean over the group's models, samples and languages; Table 2 PO: M 4.356, SD 0.645,
t -125.466 against 5.67 gives n = (125.466 x 0.645 / 1.314)^2 ~ 3,800 prompts, and the printed SD is below every
model's own SD, which only averaging over models gives); open, one value per prompt and model (Table 4 PO: n =
(17.191 x 1.517 / 1.305)^2 ~ 400 = 100 prompts x 4 models, the same in every row of Tables 4-5). ``pooled``: every
answer is a value (Sec. 3.4's text read literally)."""


@dataclass(frozen=True)
class Juror:
    name: str
    model: str
    backend: str = "openai"
    base_url: str | None = None
    language: str = "en"
    request_shape: dict | None = None  # fixed by the config (companions.request_shape_option; issue #27), else learnt


JUROR_KEYS = {"model", "backend", "base_url", "language", "name"}
"""The keys of one ``jurors`` entry of the config."""


@dataclass
class Config:
    part: str = "closed"
    languages: tuple[str, ...] = ("en",)
    samples: int = prompts.CLOSED_SAMPLES
    open_samples: int = prompts.OPEN_SAMPLES
    open_max_tokens: int = prompts.OPEN_MAX_TOKENS
    jurors: list[Juror] = field(default_factory=list)
    juror_temperature: float = prompts.JUROR_TEMPERATURE
    juror_max_tokens: int = prompts.JUROR_MAX_TOKENS
    human_ratings: Path | None = None
    jury_weights: dict | None = None
    split_seed: int = 0
    test_fraction: float = 1 / 3
    groups: dict[str, list[str]] = field(default_factory=dict)
    compare: tuple[str, str] | None = None
    equal_var: bool = True
    societies: dict[str, str] = field(default_factory=dict)  # group -> society ("*" = every group)
    t_unit: str = "paper"
    source: str | None = None

    def as_dict(self) -> dict:
        return {"part": self.part, "languages": list(self.languages), "samples": self.samples,
                "open_samples": self.open_samples, "open_max_tokens": self.open_max_tokens,
                "jurors": [j.__dict__ for j in self.jurors], "juror_temperature": self.juror_temperature,
                "juror_max_tokens": self.juror_max_tokens,
                "human_ratings": None if self.human_ratings is None else str(self.human_ratings),
                "jury_weights": self.jury_weights, "split_seed": self.split_seed, "test_fraction": self.test_fraction,
                "groups": self.groups, "compare": list(self.compare) if self.compare else None,
                "equal_var": self.equal_var, "societies": self.societies, "t_unit": self.t_unit,
                "source": self.source}


def config_of(options: LLMGlobeOptions) -> Config:
    """The run's Config from its options (``LLMGlobeOptions``: the flags and the ``--config`` file, already
    type-checked): languages, jurors, jury weights, groups, comparison and societies checked; a relative
    ``human_ratings`` is relative to the config file."""
    where = options.config_file
    base = Path(".") if where is None else Path(where).parent
    if options.evaluated_part not in PARTS:
        raise InputError(f"part must be one of {', '.join(PARTS)}, got {options.evaluated_part!r}", file=where)
    config = Config(part=options.evaluated_part, source=None if where is None else str(where))
    config.languages = prompts.LANGUAGES if options.language == "both" else (options.language,)
    if any(lang not in prompts.LANGUAGES for lang in config.languages):
        raise InputError(f"language must be en, zh or both, got {options.language!r}", file=where)
    for key, default in (("samples", prompts.CLOSED_SAMPLES), ("open_samples", prompts.OPEN_SAMPLES),
                         ("open_max_tokens", prompts.OPEN_MAX_TOKENS), ("juror_max_tokens", prompts.JUROR_MAX_TOKENS)):
        value = getattr(options, key)
        if value is not None and value < 1:
            raise InputError(f"{key} must be a whole number >= 1, got {value!r}", file=where, column=key)
        setattr(config, key, default if value is None else value)
    if options.juror_temperature is not None:
        config.juror_temperature = options.juror_temperature
    config.jurors = jurors_of(options.jurors, where)
    if options.human_ratings is not None:
        ratings = Path(options.human_ratings)
        config.human_ratings = ratings if ratings.is_absolute() else base / ratings
    if options.jury_weights is not None:
        if not isinstance(options.jury_weights.get("weights"), dict):
            raise InputError("jury_weights must be {weights: {juror: w}, language: wL, intercept: b}", file=where)
        config.jury_weights = dict(options.jury_weights)
    config.split_seed = options.split_seed
    config.test_fraction = options.test_fraction
    if not 0 < config.test_fraction < 1:
        raise InputError(f"test_fraction must be between 0 and 1, got {config.test_fraction}", file=where)
    groups = options.groups or {}
    if not all(isinstance(v, (list, tuple)) for v in groups.values()):
        raise InputError("groups must map a group name to a list of model names", file=where)
    config.groups = {str(k): [str(m) for m in v] for k, v in groups.items()}
    if options.compare is not None:
        compare = options.compare
        if not isinstance(compare, (list, tuple)) or len(compare) != 2:
            raise InputError("compare must name two groups", file=where)
        config.compare = (str(compare[0]), str(compare[1]))
    config.equal_var = options.equal_var
    if options.society:
        config.societies["*"] = options.society
    for group, society in (options.societies or {}).items():
        if config.groups and group != "*" and str(group) not in config.groups:
            raise InputError(f"societies names group {group!r}, which is not in groups", file=where,
                             column="societies")
        config.societies[str(group)] = str(society)
    if config.compare is not None and config.groups:
        for g in config.compare:
            if g not in config.groups:
                raise InputError(f"compare names group {g!r}, which is not in groups", file=where, column="compare")
    config.t_unit = options.t_unit
    if config.t_unit not in T_UNITS:
        raise InputError(f"t_unit must be one of {', '.join(T_UNITS)}, got {config.t_unit!r}", file=where,
                         column="t_unit")
    return config


def jurors_of(entries: Sequence | None, where: Path | None) -> list[Juror]:
    """The ``jurors`` option checked: each a model name or a mapping of JUROR_KEYS, names unique."""
    if entries is None:
        return []
    if isinstance(entries, str) or not isinstance(entries, Sequence):
        raise InputError("jurors must be a list of {model, base_url, language, name, backend} (see "
                         "examples/llm_globe_jurors.yaml)", file=where, column="jurors")
    jurors, names = [], set()
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            entry = {"model": entry}
        if not isinstance(entry, Mapping) or not entry.get("model"):
            raise InputError(f"juror {i + 1} needs a model", file=where, column="jurors")
        unknown = sorted(set(entry) - JUROR_KEYS)
        if unknown:
            raise InputError(f"juror {i + 1}: unknown key {unknown[0]!r}; known: {', '.join(sorted(JUROR_KEYS))}",
                             file=where, column="jurors")
        lang = entry.get("language", "en")
        if lang not in prompts.LANGUAGES:
            raise InputError(f"juror {i + 1}: language must be en or zh, got {lang!r}", file=where, column="jurors")
        backend = entry.get("backend", "openai")
        if backend not in ("openai", "vllm"):
            raise InputError(f"juror {i + 1}: backend must be openai or vllm, got {backend!r}", file=where)
        name = str(entry.get("name") or f"{entry['model']}:{lang}")
        if name in names:
            raise InputError(f"two jurors are named {name!r} (give them a name)", file=where, column="jurors")
        names.add(name)
        jurors.append(Juror(name, str(entry["model"]), backend, entry.get("base_url"), lang,
                            companions.request_shape_option(entry.get("request_shape"), where, "jurors")))
    return jurors
