"""A release's configs as a benchmark's evaluation reads them: checked to be the benchmark's release, one config's
splits concatenated, its columns checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.release_reader import Release


def release_configs(release: Path, benchmark: str, described: str) -> dict[str, dict]:
    """Every config of a release as ``{config: {split: DataFrame}}`` (``Release.tables``, as stored); a release of
    another benchmark (``described``, e.g. "a release of that benchmark") or a folder without manifest.json is an
    InputError naming the folder."""
    return Release.open(release).check_benchmark(benchmark, described).tables(lazy=False, typed=False)


def release_config(tables: Mapping[str, dict], config: str, release: Path, *, columns: Sequence[str] = (),
                   split: str | None = None, required: bool = True):
    """One config of ``release_configs``: its splits concatenated in release order (only ``split`` when given), or
    None when the release lacks an optional config. A missing required config, an unknown split or a missing
    column of ``columns`` is an InputError naming the release."""
    if config not in tables:
        if required:
            raise InputError(f"release has no {config!r} config", file=release)
        return None
    splits = tables[config]
    if split is not None:
        if split not in splits:
            raise InputError(f"release has no split {split!r} in config {config!r}; choose from "
                             f"{', '.join(splits)}", file=release)
        splits = {split: splits[split]}
    frame = pl.concat(list(splits.values()), how="diagonal_relaxed")
    for column in columns:
        if column not in frame.columns:
            raise InputError(f"{config} config lacks column {column}", file=release, column=column)
    return frame
