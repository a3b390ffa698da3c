"""Option parsing (issue #65): the typed options of every command, ``evaluate`` and ``score``'s (``Options``, one
subclass per benchmark) and ``build`` and ``generate``'s (``BuildOptions``, ``GenerateOptions``), each field an
``option(...)`` whose metadata makes its flag and ``--config`` key; ``parse`` reads the config file, then the flags,
and ``check_fields`` checks every value once (type and choices), an InputError naming the option and the file.

Ground floor: imports nothing of ``culturebench.evaluate`` (the command line reads every benchmark's options from it
at start).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from culturebench.config_file import read_options_file
from culturebench.errors import InputError


def option(default: Any = None, *, help: str, cli: bool = True, score: bool = False, evaluate: bool = True,
           choices: Sequence[str] = (), flag: str | None = None) -> Any:
    """A field of a benchmark's ``Options``: ``help`` is its command-line help; ``cli`` makes it a flag of
    ``culturebench evaluate NAME`` (otherwise a ``--config`` key only: lists and mappings); ``score`` a flag (and
    config key) of ``culturebench score NAME`` as well, ``evaluate=False`` of score only; ``choices`` the values it
    takes (checked once, from a flag or the config alike); ``flag`` the flag's spelling when not ``--field-name``
    (``"--demographics/--no-demographics"``)."""
    metadata = {"help": help, "cli": cli, "score": score, "evaluate": evaluate, "choices": tuple(choices),
                "flag": flag}
    if isinstance(default, (list, dict, set)):
        raise TypeError("an option's default must be immutable (a tuple, or None)")
    return field(default=default, metadata=metadata)


@dataclass(frozen=True, kw_only=True)
class Options:
    """What every benchmark's ``evaluate`` and ``score`` take; a benchmark subclasses it with its own fields
    (``option(...)``; a field redeclared in the subclass takes the subclass's default and help). Made once by
    ``parse`` from the command line's flags and the ``--config`` file, checked in ``__post_init__``: an invalid
    value is an InputError naming the option (and the config file)."""

    release: Path = field(default=Path("."), metadata={"cli": False})
    """The release folder (the front end resolves ``--release`` and checks it against its manifest)."""
    out: Path | None = field(default=None, metadata={"cli": False})
    """The run folder (evaluate) or the folder of the results (score)."""
    config_file: Path | None = field(default=None, metadata={"cli": False})
    """The ``--config`` file the options were read from (errors name it)."""
    limit: int | None = option(help="Evaluate N items of the release, spread over its design by --seed (the run "
                                    "says what it covers).")
    seed: int = option(0, help="Sampling seed sent with every request (varied per sample by the backend); also "
                               "picks the --limit items.")
    samples: int | None = option(help="Answers per prompt (default: the paper's).")
    temperature: float | None = option(help="Sampling temperature (default: the paper's).")
    max_tokens: int | None = option(help="Most tokens per answer (default: the paper's setting, else 256).")

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("limit", "samples", "max_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
        self.check()

    def check(self) -> None:
        """The benchmark's own checks of its option values (no release read): raise InputError."""

    @classmethod
    def config_keys(cls) -> tuple[str, ...]:
        """The keys a ``--config`` file may hold: every option, so that one file serves ``evaluate`` and
        ``score`` (each uses the options it takes)."""
        return tuple(f.name for f in option_fields(cls, None, cli_only=False))

    @classmethod
    def parse(cls, given: Mapping[str, Any], config: Path | None = None) -> Options:
        """The options of a command: the ``--config`` file's values, then the flags the user gave
        (``given``: name -> value, none left at its default; a flag wins over the file), checked."""
        return parsed(cls, given, config)

    def replace(self, **changes: Any) -> Options:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)


def option_fields(options: type[Options], command: str | None = "evaluate", cli_only: bool = True
                  ) -> list[dataclasses.Field]:
    """The user-facing fields of ``options`` for ``command`` (evaluate, score, or None for both): flags
    (``cli_only``) or every option."""
    fields = []
    for f in dataclasses.fields(options):
        if f.name in ("release", "out", "config_file"):
            continue
        if cli_only and not f.metadata.get("cli", True):
            continue
        if command == "score" and not f.metadata.get("score"):
            continue
        if command == "evaluate" and not f.metadata.get("evaluate", True):
            continue
        fields.append(f)
    return fields


def check_fields(options: Any) -> None:
    """Check every option of an options dataclass (``Options``, ``BuildOptions``, ``GenerateOptions``): each
    value made its field's type (``_checked_value``) and one of its ``choices``; an InputError naming the option
    and the ``--config`` file."""
    hints = typing.get_type_hints(type(options))
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        if f.metadata.get("cli") is False and f.name in ("release", "out", "config_file"):
            continue
        checked = _checked_value(f.name, value, hints[f.name], options.config_file)
        if checked is not value:
            object.__setattr__(options, f.name, checked)
        choices = f.metadata.get("choices")
        if choices and checked is not None and checked not in choices:
            raise InputError(f"unknown {f.name} {checked!r}; choose from {', '.join(choices)}",
                             file=options.config_file, column=f.name)


def parsed(cls: type, given: Mapping[str, Any], config: Path | None = None) -> Any:
    """``cls`` (an options dataclass) from the ``--config`` file's values, then the flags the user gave (``given``:
    name -> value, none left at its default; a flag wins over the file), checked."""
    values: dict[str, Any] = {}
    if config is not None:
        values.update(read_options_file(Path(config), cls.config_keys()))
    values.update(given)
    return cls(**values, config_file=None if config is None else Path(config))


@dataclass(frozen=True, kw_only=True)
class StageOptions:
    """The options of ``build`` and ``generate``, typed as evaluate's ``Options`` are: a benchmark (or generator)
    subclasses ``BuildOptions`` / ``GenerateOptions`` with ``option(...)`` fields, which become the flags of its
    command (``culturebench build NAME --flag``) and the keys of ``--config`` (a flag wins); checked once, in
    ``__post_init__`` (field types and choices, then ``check``)."""

    config_file: Path | None = field(default=None, metadata={"cli": False})
    """The ``--config`` file the options were read from (errors name it)."""

    def __post_init__(self) -> None:
        check_fields(self)
        self.check()

    def check(self) -> None:
        """The benchmark's own checks of its option values: raise InputError."""

    @classmethod
    def config_keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in option_fields(cls, None, cli_only=False))

    @classmethod
    def parse(cls, given: Mapping[str, Any], config: Path | None = None) -> StageOptions:
        return parsed(cls, given, config)

    def replace(self, **changes: Any) -> StageOptions:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, kw_only=True)
class BuildOptions(StageOptions):
    """What a benchmark's build takes besides RAW, OUT and the seed (none by default): its builder module's
    ``Options`` (``Benchmark.build_options()``; a zone source, a revision of the items), given to its builder's
    ``build(raw, seed, progress, options)``."""


@dataclass(frozen=True, kw_only=True)
class GenerateOptions(StageOptions):
    """What every ``culturebench generate TASK`` takes besides the model and its endpoint; a generator subclasses
    it with its own options."""

    out: Path = field(default=Path("."), metadata={"cli": False})
    """RAW_DIR: receives the raw files the benchmark's builder reads, and ``.generation/``."""
    seed: int = option(0, help="Sampling seed and seed of the few-shot example draws.")
    limit: int | None = option(help="Cap per group of the task's design, for demos (docs/benchmarks/NAME.md says "
                                    "which group).")
    only: str | None = option(help="Comma-separated groups of the task's design to generate (e.g. dimensions by "
                                   "name or code, domains, countries).")
    source: Path | None = option(help="Raw folder the task reads its inputs from (seed items, items to translate or "
                                      "revise, atlas pages; default: the bundled raw/ or RAW_DIR, as the task "
                                      "says).")

    def check(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise InputError(f"--limit must be at least 1, got {self.limit}")


_SCALARS = {int: "a whole number", float: "a number", str: "text", bool: "true or false", Path: "a path"}


def _checked_value(name: str, value: Any, hint: Any, file: Path | None) -> Any:
    """``value`` as the field's type (an int for a float field, a tuple for a list from JSON, a Path for a
    string); an InputError when it is not of that type."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (hint,) = [a for a in args if a is not type(None)] or (Any,)
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or value is None and hint is not bool:
        return value
    if origin is tuple:
        if isinstance(value, str):
            value = tuple(part.strip() for part in value.split(",") if part.strip())
        if not isinstance(value, (list, tuple)):
            raise InputError(f"option {name} must be a list, got {value!r}", file=file, column=name)
        return tuple(_checked_value(name, v, args[0], file) for v in value)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise InputError(f"option {name} must be a mapping, got {value!r}", file=file, column=name)
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is Path and isinstance(value, str):
        return Path(value)
    if hint in _SCALARS and (not isinstance(value, hint) or hint is int and isinstance(value, bool)):
        raise InputError(f"option {name} must be {_SCALARS[hint]}, got {value!r}", file=file, column=name)
    return value
