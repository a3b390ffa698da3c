"""The run folder of ``culturebench evaluate <benchmark>``, the same for every benchmark:

    RUN_DIR/cache.sqlite        response cache (re-running the same command resumes: nothing answered is re-queried)
    RUN_DIR/responses.jsonl     one JSON line per request, in request order (the benchmark decides the fields);
                                a run of more than SHARD_THRESHOLD requests writes RUN_DIR/responses/ instead:
                                zstd parquet shards part-00000.parquet, ... of the same records (``ResponsesWriter``)
    RUN_DIR/run.json            what was run and how: versions, release manifest hash, arguments without secrets,
                                backend cache parameters, runner totals (tokens, cost, retries, cached/queried, time)
    RUN_DIR/metrics.json, *.png the benchmark's metrics and plots

Secrets never reach the folder: run.json is written scrubbed of them (``run_record``), and replies are redacted as
they arrive (``redaction``), so responses and the cache never hold them either.

This module lays the folder out and reads it back: the responses file (``ResponsesWriter``, ``responses_path``,
``read_records``), metrics.json and the plots (``write_metrics_and_plots``, ``json_safe``), the scored files as
metrics.json records them (``source_info``, ``release_manifest_sha256``). Beside it: ``run_lock`` (one run at a
time), ``run_steps`` (the cached model calls and their totals), ``run_record`` (run.json) and ``engine`` (the run).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import polars as pl

from culturebench.errors import InputError
from culturebench.io import sha256_file, write_json

CACHE_FILE = "cache.sqlite"
RESPONSES_FILE = "responses.jsonl"
RESPONSES_DIR = "responses"
SHARD_THRESHOLD = 50_000
"""Runs of more requests than this write their responses as zstd parquet shards (RUN_DIR/responses/), smaller ones
as responses.jsonl: about 3 KB a request as JSON (the prompt is repeated on every line), a tenth of that in parquet,
and a scorer reads the few columns it needs from parquet without parsing the rest."""
SHARD_ROWS = 262_144
"""Records per parquet shard."""
ROW_GROUP_ROWS = 1024
"""Records per row group of a shard: made into a frame this many at a time, which bounds the memory of writing
(a runner batch at once cost four times as much)."""


def write_jsonl(path: Path, records: Iterable[Mapping]) -> Path:
    """One JSON object per line (UTF-8, keys in the given order), written to a temp file and renamed into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False)
    try:
        with handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return path


class ResponsesWriter:
    """The responses file of a run, appended to batch by batch as the answers arrive (``write(records)``): for
    ``total`` requests up to SHARD_THRESHOLD, RUN_DIR/responses.jsonl (one JSON line per record, as ``write_jsonl``);
    above it, RUN_DIR/responses/part-NNNNN.parquet (zstd, SHARD_ROWS records each, ROW_GROUP_ROWS records a row
    group, columns typed by ``schema``, a ``polars.Schema`` of the records; each shard written by polars as it
    fills, ``shards.ParquetShardSink``). Written under a hidden name beside it
    and moved into place by ``close()`` (which removes the other layout of an earlier run), so an interrupted run leaves
    no half file that looks whole; the response cache is what resumes. A context manager: on an exception the hidden
    file is removed."""

    def __init__(self, out: Path, total: int, schema: Any = None, *, threshold: int | None = None,
                 shard_rows: int | None = None) -> None:
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.sharded = total > (SHARD_THRESHOLD if threshold is None else threshold)
        if self.sharded and schema is None:
            raise ValueError("a sharded responses file needs the records' schema")
        self.schema, self.shard_rows = schema, SHARD_ROWS if shard_rows is None else shard_rows
        self.path = self.out / (RESPONSES_DIR if self.sharded else RESPONSES_FILE)
        self._partial = self.out / f".{self.path.name}.partial"
        self._remove(self._partial)
        if self.sharded:
            self._partial.mkdir()
            self._sink, self._shard, self._in_shard = None, 0, 0
        else:
            self._handle = open(self._partial, "w", encoding="utf-8")
        self.n_records = 0

    @staticmethod
    def _remove(path: Path) -> None:
        if path.is_dir():
            for child in path.iterdir():
                child.unlink()
            path.rmdir()
        else:
            path.unlink(missing_ok=True)

    def write(self, records: Sequence[Mapping]) -> None:
        """Append ``records`` (in request order)."""
        self.n_records += len(records)
        if not self.sharded:
            self._handle.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
            return
        from culturebench.evaluate.runs.shards import ParquetShardSink

        start = 0
        while start < len(records):
            part = records[start:start + min(ROW_GROUP_ROWS, self.shard_rows - self._in_shard)]
            if self._sink is None:
                self._sink = ParquetShardSink(self._partial / f"part-{self._shard:05d}.parquet", self.schema,
                                              ROW_GROUP_ROWS)
            self._sink.write(pl.DataFrame(list(part), schema=self.schema))
            start += len(part)
            self._in_shard += len(part)
            if self._in_shard >= self.shard_rows:
                self._close_shard()

    def _close_shard(self) -> None:
        if self._sink is not None:
            sink, self._sink = self._sink, None
            sink.close()
            self._shard, self._in_shard = self._shard + 1, 0

    def close(self) -> Path:
        """Finish the file and move it into place; its path."""
        if self.sharded:
            self._close_shard()
        else:
            self._handle.close()
        for layout in (self.out / RESPONSES_FILE, self.out / RESPONSES_DIR):
            self._remove(layout)
        os.replace(self._partial, self.path)
        return self.path

    def __enter__(self) -> "ResponsesWriter":
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is not None:
            if self.sharded:
                if self._sink is not None:
                    with contextlib.suppress(Exception):  # the error that ends the run is the one to see
                        self._sink.close()
            else:
                self._handle.close()
            self._remove(self._partial)


def responses_path(folder: Path) -> Path | None:
    """The responses of an ``evaluate`` run folder: RUN_DIR/responses.jsonl or its parquet shards RUN_DIR/responses/
    (``ResponsesWriter``); None when it has neither."""
    for name in (RESPONSES_FILE, RESPONSES_DIR):
        if (Path(folder) / name).exists():
            return Path(folder) / name
    return None


def shard_paths(path: Path) -> list[Path]:
    """The parquet files of a sharded responses folder (or the one file ``path``), in order; an InputError naming
    the folder when it holds none."""
    path = Path(path)
    shards = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not shards:
        raise InputError("responses folder holds no parquet shards", file=path)
    return shards


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_records(folder: Path) -> list[dict]:
    """Every record of a run folder's responses (``responses_path``: responses.jsonl or its parquet shards) as a
    list, for the steps that take a run as a whole (``--scoring logprobs``); an InputError when it has none."""
    path = responses_path(folder)
    if path is None:
        raise InputError(f"run folder has no {RESPONSES_FILE} or {RESPONSES_DIR}/", file=folder)
    if path.is_dir():
        return pl.read_parquet(shard_paths(path)).to_dicts()
    return read_jsonl(path)


METRICS_FILE = "metrics.json"


def write_metrics_and_plots(metrics: dict, out: Path, plots: Mapping[str, Callable[[dict, Path], None]]) -> list[Path]:
    """``out``/metrics.json, then each of ``plots`` (file name -> function drawing it from the metrics) into
    ``out``; returns the paths written, in that order. It lives here, beside run.json and responses.jsonl, because
    it lays out the run folder; ``plots`` holds only what figures share and imports no benchmark."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / METRICS_FILE, metrics)
    written = [out / METRICS_FILE]
    for name, draw in plots.items():
        draw(metrics, out / name)
        written.append(out / name)
    return written


def source_info(path: Path) -> dict:
    """A scored file as metrics.json records it: its path and sha256 (a folder of parquet shards: the sha256 of
    its shards' names and sha256s, one ``name sha256`` line each, in order)."""
    path = Path(path)
    if not path.is_dir():
        return {"path": str(path), "sha256": sha256_file(path)}
    lines = "".join(f"{shard.name} {sha256_file(shard)}\n" for shard in shard_paths(path))
    return {"path": str(path), "sha256": hashlib.sha256(lines.encode()).hexdigest()}


def json_safe(value: Any, none_key: str = "null") -> Any:
    """Metrics made JSON-safe: NaN and infinities become None, dict keys text (a None key becomes ``none_key``)."""
    if isinstance(value, dict):
        return {(none_key if k is None else str(k)): json_safe(v, none_key) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, none_key) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def split_paths(value: Path | str) -> list[Path]:
    """The files of a comma-separated ``--responses`` value."""
    return [Path(part.strip()) for part in str(value).split(",") if part.strip()]


def release_manifest_sha256(release: Path | str | None) -> str | None:
    """The sha256 of a release's manifest.json (pins the whole release, as in run.json's ``release``), for the
    metrics.json of ``score``, which has no run.json; None without a release or manifest."""
    if release is None or not (Path(release) / "manifest.json").is_file():
        return None
    return sha256_file(Path(release) / "manifest.json")
