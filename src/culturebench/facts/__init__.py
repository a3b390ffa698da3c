"""The facts files: the papers' settings, printed templates and our own lists as data, one JSON file per benchmark
(``facts/<benchmark>.json``) and shared ones (``countries.json``, ``wvs_countries.csv``, ``croissant_rai/``).
Each benchmark reads its own through :func:`read` (its builder's ``facts()``, its prompts), never through
another stage's module."""

from __future__ import annotations

import json
from importlib import resources


def read(name: str) -> dict:
    """``facts/<name>.json`` as a dict (a new one per call: the caller may cache it)."""
    return json.loads(resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8"))


def file(*parts: str):
    """A file shipped under ``culturebench/facts/`` (e.g. ``file("normad_authors", "inference_prompts.json")``), as
    an importlib.resources Traversable."""
    path = resources.files(__name__)
    for part in parts:
        path = path / part
    return path
