"""A command's ``--config`` file (JSON or YAML options) and the checks of option values shared by its readers."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from culturebench.errors import InputError

def read_options_file(path: Path, known: Iterable[str]) -> dict:
    """The ``--config`` file of an evaluation: a JSON or YAML mapping whose keys are all in ``known``."""
    path = Path(path)
    if not path.is_file():
        raise InputError("config file not found", file=path)
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            raw = yaml.safe_load(text) or {}
        else:
            raw = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - any parse error is the user's file
        raise InputError(f"config does not parse ({' '.join(str(exc).split())[:200]})", file=path) from None
    if not isinstance(raw, dict):
        raise InputError("config must be a mapping of options", file=path)
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise InputError(f"unknown config key {unknown[0]!r}; known: {', '.join(sorted(known))}", file=path)
    return raw


def check_at_least_one(options: Mapping[str, int | None]) -> None:
    """An InputError for the first option (``--name`` -> value, None when not given) below 1."""
    for name, value in options.items():
        if value is not None and value < 1:
            raise InputError(f"{name} must be at least 1, got {value}")
