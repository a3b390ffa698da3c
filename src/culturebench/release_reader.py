"""A release as every command reads it (issue #65): ``Release.open(folder or ORG/NAME[@REVISION])``, with its typed
manifest (``Manifest``, manifest.json read once per release), its benchmark, its tables (lazy and column-filtered
scans, or read whole with the dtypes its schemas read them as), what a Hub upload withheld, and ``verify()``.

Build, validate, audit, diff, publish, the exports and every benchmark's items read a release through it. It sits on
the ground floor: below the release writer (``release.py``), the checks (``validation``) and ``evaluate``, and imports
none of them. ``read_tables`` is also the build's reader of the files it is writing (no manifest.json yet).

A run's hooks get ``options.release`` as a path: within ``opened_once()`` (the engine's run, the ``evaluate`` and
``score`` commands) each release is opened once, and every later ``Release.open`` of it returns that one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from culturebench import hub_release
from culturebench.errors import InputError
from culturebench.manifest import REQUIRED_KEYS, check_keys, load_manifest, unlisted_files, verify_release

if TYPE_CHECKING:
    from culturebench.contract import Benchmark

def read_dtypes(benchmark: Benchmark) -> dict[str, dict[str, pl.DataType]]:
    """Per config, the columns that ``benchmark``'s schemas read back as another dtype (e.g. Enum)."""
    return getattr(benchmark.schemas_module(), "READ_DTYPES", {})


def read_tables(release: Path, outputs: list[dict], dtypes: dict[str, dict[str, pl.DataType]] | None = None,
                columns: Mapping[str, Collection[str]] | None = None) -> dict[str, dict[str, pl.DataFrame]]:
    """The release's tables read back from parquet, per config and split (shards in order), with the columns in
    ``dtypes[config]`` cast (non-strictly: a value that does not fit becomes null) while reading; with
    ``columns[config]``, only those of its columns (in file order; all of them when the file has none of those)."""
    shards: dict[str, dict[str, list[Path]]] = {}
    for output in outputs:
        if "config" in output:
            path = Path(release) / output["path"]
            if not path.is_file():
                raise InputError("file listed in manifest.json is missing", file=path)
            shards.setdefault(output["config"], {}).setdefault(output["split"], []).append(path)
    tables: dict[str, dict[str, pl.DataFrame]] = {}
    for config, splits in shards.items():
        wanted = (columns or {}).get(config) or ()
        for split, paths in splits.items():
            try:
                frame = pl.scan_parquet(paths)
                if kept := [c for c in (frame.collect_schema().names() if wanted else []) if c in wanted]:
                    frame = frame.select(kept)
                casts = [pl.col(column).cast(dtype, strict=False)
                         for column, dtype in (dtypes or {}).get(config, {}).items() if not kept or column in kept]
                tables.setdefault(config, {})[split] = frame.with_columns(casts).collect()
            except pl.exceptions.PolarsError as exc:
                raise InputError(f"parquet file cannot be read ({str(exc).splitlines()[0]})", file=paths[0]) from None
    return tables


@dataclass(frozen=True)
class Output:
    """One file manifest.json lists: a data shard (with ``config``, ``split`` and ``rows``), a quarantine file
    (``rows``), or the card, Croissant file and validation report."""

    path: str
    sha256: str | None = None
    config: str | None = None
    split: str | None = None
    rows: int | None = None


@dataclass(frozen=True)
class Manifest:
    """A release's manifest.json (``release.build_release`` writes it; docs/release-format.md): typed accessors
    over ``data``, the JSON as read, which the card, Croissant and report renderers take whole (read only)."""

    data: dict

    @property
    def benchmark(self) -> str:
        return str(self.data["benchmark"])

    @cached_property
    def outputs(self) -> tuple[Output, ...]:
        """Every listed file, in manifest order (by path)."""
        return tuple(Output(o["path"], o.get("sha256"), o.get("config"), o.get("split"), o.get("rows"))
                     for o in self.data["outputs"])

    @cached_property
    def configs(self) -> dict[str, dict[str, list[Output]]]:
        """The data shards per config and split, in manifest order."""
        configs: dict[str, dict[str, list[Output]]] = {}
        for output in self.outputs:
            if output.config is not None:
                configs.setdefault(output.config, {}).setdefault(str(output.split), []).append(output)
        return configs

    @property
    def hashes(self) -> dict[str, str | None]:
        """The sha256 manifest.json records per listed path."""
        return {o.path: o.sha256 for o in self.outputs}

    @property
    def seed(self) -> int | None:
        return self.data.get("seed")

    @property
    def inputs(self) -> list[dict]:
        """The raw files the build read (name, sha256, size, rows, encoding)."""
        return self.data.get("inputs") or []

    @property
    def provenance(self) -> dict:
        """What the builder recorded of its sources (a survey's file routes, a revision)."""
        return self.data.get("provenance") or {}

    @property
    def redistributable(self) -> dict[str, bool]:
        return self.data.get("redistributable") or {}

    @property
    def validation(self) -> dict:
        """The build's check summary (checks, passed, failed)."""
        return self.data.get("validation") or {}

    @property
    def created_at(self) -> str | None:
        return self.data.get("created_at")


_opened: ContextVar[dict[Any, Release] | None] = ContextVar("culturebench_opened_releases", default=None)


@contextmanager
def opened_once() -> Iterator[None]:
    """Within it, ``Release.open`` of a folder (or Hub id) opened before returns that Release: one command (or one
    run of the engine, whose hooks get ``options.release`` as a path) reads a manifest.json once. Nested uses share
    the outer one; outside, every open reads the files as they are now."""
    if _opened.get() is not None:
        yield
        return
    token = _opened.set({})
    try:
        yield
    finally:
        _opened.reset(token)


@dataclass(frozen=True)
class Release:
    """A release folder and its manifest (``open`` reads one); for a verified Hub snapshot (``hub``) also the
    configs and columns its upload withheld on purpose (its card's ``culturebench`` block), which ``tables`` and
    ``diff`` leave out."""

    folder: Path
    manifest: Manifest
    label: str = ""
    """How the release was named (the folder, or ``ORG/NAME@REVISION``)."""
    hub: bool = False
    withheld_configs: frozenset[str] = frozenset()
    withheld_columns: Mapping[str, frozenset[str]] = field(default_factory=dict)
    card: bool = True
    """Whether its README.md is the release's card (False while ``build --previous`` has not written it yet)."""

    @classmethod
    def open(cls, value: str | Path, *, required: Collection[str] = REQUIRED_KEYS) -> Release:
        """The release ``value`` names: a local folder, else the Hub dataset repo ``ORG/NAME[@REVISION]``, fetched
        (``hub_release.snapshot``) and verified (``snapshot``). A missing folder, a folder without manifest.json,
        a manifest.json that cannot be read, is not JSON or lacks the ``required`` keys (``manifest.MANIFEST_KEYS``
        for ``validate``, ``audit`` and ``info``): an InputError naming it."""
        path = Path(value)
        local = path.exists()
        opened = _opened.get()
        key = path.resolve() if local else str(value)
        release = opened.get(key) if opened is not None else None
        if release is None:
            if local:
                release = cls(path, Manifest(load_manifest(path)), str(value))
            else:
                release = cls.snapshot(hub_release.snapshot(str(value)), str(value))
            if opened is not None:  # a Hub snapshot also under its folder, which a run's options name
                opened[key] = opened[release.folder.resolve()] = release
        check_keys(release.manifest.data, required, release.folder / "manifest.json")
        return release

    @classmethod
    def snapshot(cls, folder: Path, label: str) -> Release:
        """A Hub snapshot in ``folder``, verified: every file it holds that manifest.json lists has the manifest's
        sha256, less what the upload differs in by design (``by_design``); else an InputError naming the file."""
        block = hub_release.card_block(folder)
        release = cls(Path(folder), Manifest(load_manifest(folder)), label, hub=True,
                      withheld_configs=frozenset(block.get("withheld_configs") or ()),
                      withheld_columns={c: frozenset(cols) for c, cols in (block.get("withheld_columns") or {}).items()})
        release.verify(exempt=release.by_design(), remedy=f"{label} on the Hub is not the release its manifest "
                       "describes (not withheld by publish); re-publish it, or delete its cached snapshot and fetch again")
        return release

    @property
    def benchmark(self) -> Benchmark:
        """The registry's benchmark that manifest.json names."""
        from culturebench import registry

        return registry.benchmark(self.manifest.benchmark)

    def check_benchmark(self, name: str, described: str) -> Release:
        """This release when it is one of benchmark ``name``; else an InputError naming the folder (``described``,
        e.g. "a release of that benchmark")."""
        if self.manifest.data.get("benchmark") != name:
            raise InputError(f"not {described} (benchmark {self.manifest.data.get('benchmark')!r})", file=self.folder)
        return self

    def paths(self, config: str) -> list[Path]:
        """The parquet shards of ``config`` (every split, in manifest order); [] for a config the release lacks or
        its upload withheld. A listed shard that is missing is an InputError naming it."""
        if config in self.withheld_configs:
            return []
        paths = [self.folder / o.path for o in self.manifest.outputs if o.config == config]
        for path in paths:
            if not path.is_file():
                raise InputError("file listed in manifest.json is missing", file=path)
        return paths

    def scan(self, config: str, columns: Collection[str] | None = None) -> pl.LazyFrame:
        """``config``'s rows, every split in manifest order, as one lazy scan (``columns``: only those): what a
        streaming read filters and collects. A config the release lacks is an InputError naming the folder."""
        paths = self.paths(config)
        if not paths:
            raise InputError(f"release has no {config!r} config", file=self.folder)
        frame = pl.scan_parquet(paths)
        return frame.select(list(columns)) if columns is not None else frame

    def tables(self, columns: Mapping[str, Collection[str]] | None = None, *, lazy: bool = True, typed: bool = True
               ) -> dict[str, dict[str, pl.LazyFrame]] | dict[str, dict[str, pl.DataFrame]]:
        """Every config and split it holds (less what a Hub upload withheld): lazy scans of its shards (in order),
        or with ``lazy=False`` read whole, with the dtypes its schemas read them as (``read_dtypes``; ``typed=False``:
        as stored, without importing the schemas and their pandera, for an evaluation's items). With
        ``columns[config]``, only those of a config's columns (in file order; all when the files have none)."""
        if not lazy:
            outputs = [o for o in self.manifest.data["outputs"] if o.get("config") not in self.withheld_configs]
            return read_tables(self.folder, outputs, read_dtypes(self.benchmark) if typed else None, columns)
        scans: dict[str, dict[str, pl.LazyFrame]] = {}
        for config, splits in self.manifest.configs.items():
            if config in self.withheld_configs:
                continue
            wanted = (columns or {}).get(config) or ()
            for split, shards in splits.items():
                frame = pl.scan_parquet([self.folder / o.path for o in shards])
                if wanted:
                    kept = [c for c in frame.collect_schema().names() if c in wanted]
                    frame = frame.select(kept) if kept else frame
                scans.setdefault(config, {})[split] = frame
        return scans

    def verify(self, *, exempt: Collection[str] = (),
               remedy: str = "rebuild or re-download the release, or --allow-modified-release to use it anyway"
               ) -> None:
        """Every listed file is present with the sha256 manifest.json records (``manifest.verify_release``): else an
        InputError naming the file and ``remedy``. ``exempt``: paths that differ on purpose."""
        verify_release(self.folder, self.manifest.data, exempt=exempt, remedy=remedy)

    def unlisted(self) -> list[str]:
        """Its files (relative, sorted) that manifest.json does not list (``manifest.unlisted_files``)."""
        return unlisted_files(self.folder, self.manifest.data)

    def by_design(self) -> set[str]:
        """The listed paths in which a Hub upload differs from its release on purpose (``hub_release.by_design``);
        none for a local folder."""
        return hub_release.by_design(self.folder, self.manifest.data["outputs"]) if self.hub else set()
