"""LLM-GLOBE's options (``--config`` JSON/YAML): parts, languages, samples, jurors, jury, groups, societies and
the t-test unit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from culturebench.errors import InputError
from culturebench.evaluate import runs
from culturebench.evaluate.llm_globe import prompts

BENCHMARK = "llm_globe"
DIMENSIONS = prompts.DIMENSIONS
PARTS = ("closed", "open", "both")

CONFIG_KEYS = {"part", "language", "samples", "open_samples", "open_max_tokens", "jurors", "juror_temperature",
               "juror_max_tokens", "human_ratings", "jury_weights", "split_seed", "test_fraction", "groups", "compare",
               "equal_var", "society", "societies", "t_unit"}
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
    request_shape: dict | None = None  # fixed by the config (runs.request_shape_option; issue #27), else learnt


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


def _number(raw: dict, key: str, default, kind, where):
    """``raw[key]`` as ``kind`` (int or float), or ``default``; anything else is a one-line error."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and value != int(value)):
        raise InputError(f"{key} must be a {'whole ' if kind is int else ''}number, got {value!r}", file=where,
                         column=key)
    return kind(value)


def load_config(path: Path | str | None = None, *, part: str | None = None, samples: int | None = None) -> Config:
    """The options of a JSON or YAML config file (None: the defaults); ``part`` / ``samples`` from the command
    line win over the file."""
    raw: dict = {}
    base = Path(".")
    if path is not None:
        path = Path(path)
        raw = runs.read_options_file(path, CONFIG_KEYS)
        base = path.parent
    where = path
    config = Config(source=None if path is None else str(path))
    chosen_part = part if part in PARTS else raw.get("part", "closed")
    if chosen_part not in PARTS:
        raise InputError(f"part must be one of {', '.join(PARTS)}, got {chosen_part!r}", file=where)
    config.part = chosen_part
    language = raw.get("language", "en")
    config.languages = prompts.LANGUAGES if language == "both" else (language,)
    if any(lang not in prompts.LANGUAGES for lang in config.languages):
        raise InputError(f"language must be en, zh or both, got {language!r}", file=where)
    for key in ("samples", "open_samples", "open_max_tokens", "juror_max_tokens"):
        if key in raw:
            if not isinstance(raw[key], int) or raw[key] < 1:
                raise InputError(f"{key} must be a whole number >= 1, got {raw[key]!r}", file=where)
            setattr(config, key, raw[key])
    if samples is not None:
        runs.check_at_least_one({"--samples": samples})
        config.samples = samples
    config.juror_temperature = _number(raw, "juror_temperature", config.juror_temperature, float, where)
    names = set()
    jurors = raw.get("jurors") or []
    if not isinstance(jurors, list):
        raise InputError("jurors must be a list of {model, base_url, language, name, backend} (see "
                         "examples/llm_globe_jurors.yaml)", file=where, column="jurors")
    for i, entry in enumerate(jurors):
        if isinstance(entry, str):
            entry = {"model": entry}
        if not isinstance(entry, dict) or not entry.get("model"):
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
        config.jurors.append(Juror(name, str(entry["model"]), backend, entry.get("base_url"), lang,
                                   runs.request_shape_option(entry.get("request_shape"), where, "jurors")))
    if raw.get("human_ratings"):
        ratings = Path(raw["human_ratings"])
        config.human_ratings = ratings if ratings.is_absolute() else base / ratings
    if raw.get("jury_weights") is not None:
        weights = raw["jury_weights"]
        if not isinstance(weights, dict) or not isinstance(weights.get("weights"), dict):
            raise InputError("jury_weights must be {weights: {juror: w}, language: wL, intercept: b}", file=where)
        config.jury_weights = weights
    config.split_seed = _number(raw, "split_seed", 0, int, where)
    config.test_fraction = _number(raw, "test_fraction", 1 / 3, float, where)
    if not 0 < config.test_fraction < 1:
        raise InputError(f"test_fraction must be between 0 and 1, got {config.test_fraction}", file=where)
    groups = raw.get("groups") or {}
    if not isinstance(groups, dict) or not all(isinstance(v, list) for v in groups.values()):
        raise InputError("groups must map a group name to a list of model names", file=where)
    config.groups = {str(k): [str(m) for m in v] for k, v in groups.items()}
    if raw.get("compare") is not None:
        compare = raw["compare"]
        if not isinstance(compare, list) or len(compare) != 2:
            raise InputError("compare must name two groups", file=where)
        config.compare = (str(compare[0]), str(compare[1]))
    config.equal_var = bool(raw.get("equal_var", True))
    if raw.get("society"):
        config.societies["*"] = str(raw["society"])
    societies = raw.get("societies") or {}
    if not isinstance(societies, dict):
        raise InputError("societies must map a group name to a GLOBE society", file=where, column="societies")
    for group, society in societies.items():
        if config.groups and group != "*" and str(group) not in config.groups:
            raise InputError(f"societies names group {group!r}, which is not in groups", file=where,
                             column="societies")
        config.societies[str(group)] = str(society)
    if config.compare is not None and config.groups:
        for g in config.compare:
            if g not in config.groups:
                raise InputError(f"compare names group {g!r}, which is not in groups", file=where, column="compare")
    config.t_unit = str(raw.get("t_unit", "paper"))
    if config.t_unit not in T_UNITS:
        raise InputError(f"t_unit must be one of {', '.join(T_UNITS)}, got {config.t_unit!r}", file=where,
                         column="t_unit")
    return config
