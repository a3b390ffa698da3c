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

Also the steps every benchmark's ``evaluate`` shares: option checks (``check_at_least_one``), the cached model calls
(``ask``; ``stream_records`` and ``StreamedRun`` for a run written out batch by batch, into ``ResponsesWriter``)
and their totals (``total_stats``), the scored files (``source_info``), metrics.json and the plots
(``write_metrics_and_plots``), the backends of judges and jurors
(``companion_backend``) and the command-line bits (``request_counts``, ``split_paths``); run.json is ``run_record``'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import polars as pl

from culturebench.errors import InputError, excerpt
from culturebench.evaluate.memory import return_free_heap
from culturebench.io import jsonl_objects, sha256_file, write_json
from culturebench.release import load_manifest, read_tables

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
RUNNER_STATS = ("n_requests", "n_cached", "n_queried", "n_repeats", "retries", "errors", "transient",
                "prompt_tokens", "completion_tokens", "cached_prompt_tokens", "cached_completion_tokens", "cost",
                "wall_s", "truncated", "failed")
"""The runner fields of run.json, the same for every benchmark (``runner.RunStats``; ``total_stats`` of several)."""


def runner_stats(result: Any) -> dict:
    """The runner's totals as plain JSON values, the RUNNER_STATS fields in that order (0 / None / {} for those a
    result lacks): ``result.stats`` (a dataclass) when it has one, else the attributes of ``result`` itself."""
    source = getattr(result, "stats", result)
    found = asdict(source) if is_dataclass(source) and not isinstance(source, type) else {
        name: getattr(source, name) for name in RUNNER_STATS if hasattr(source, name)}
    if "n_requests" not in found and hasattr(result, "responses"):
        found["n_requests"] = len(result.responses)
    out = {name: found.get(name, _EMPTY_STAT.get(name, 0)) for name in RUNNER_STATS}
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in out.items()}


_EMPTY_STAT = {"cost": None, "transient": {}, "wall_s": 0.0}


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
        from culturebench.evaluate.shards import ParquetShardSink

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


LOCK_FILE = ".lock"
"""The run folder's lock (``hold_run_folder``): present while a run holds the folder, with its pid."""


@contextlib.contextmanager
def hold_run_folder(out: Path, wait: bool = False,
                    on_wait: Callable[[str], None] = lambda holder: None) -> Iterator[Path]:
    """Hold the run folder ``out`` for one run: an exclusive ``flock`` on RUN_DIR/.lock, which holds the pid of the
    run holding it. The kernel releases the lock when the process ends, however it ends (a crash or ``kill -9``
    leaves a stale file that the next run simply locks again). A folder held by another run is an InputError naming
    its pid, or, with ``wait``, waited for (``on_wait(holder)`` is called first). On the way out the lock file is
    removed, and so are the folders this call created when nothing else was written into them (a run that could
    not reach its server leaves no empty folder)."""
    import fcntl

    out = Path(out)
    path = out / LOCK_FILE
    created: list[Path] = []
    while True:
        created += [p for p in (out, *out.parents) if not p.exists() and p not in created]
        out.mkdir(parents=True, exist_ok=True)  # again after waiting: the holder removes a folder it left empty
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _lock_holder(fd)
                if not wait:
                    raise InputError(f"held by another run ({holder}); run one command per --out folder, or give "
                                     "--wait-for-lock to wait for it to end", file=out) from None
                on_wait(holder)
                fcntl.flock(fd, fcntl.LOCK_EX)
            with contextlib.suppress(FileNotFoundError):  # the holder removes the file as it ends: lock the new one
                if os.stat(path).st_ino == os.fstat(fd).st_ino:
                    break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield out
    finally:
        path.unlink(missing_ok=True)  # while still held: a waiting run then finds the file gone and locks anew
        os.close(fd)
        for folder in sorted(created, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):  # not empty: the run wrote something
                folder.rmdir()


LOCK_PID_WAIT_S = 1.0
"""How long a refused run waits for the holder to write its pid (it writes it right after it locks: a run started
at the same moment may look in between)."""


def _lock_holder(fd: int) -> str:
    """Who holds a run folder's lock, as its error names it: "pid N" from the lock file (waiting up to
    LOCK_PID_WAIT_S for a holder that has just locked it)."""
    import time

    deadline = time.monotonic() + LOCK_PID_WAIT_S
    while True:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return f"pid {text}"
        if time.monotonic() >= deadline:
            return "pid unknown: it is starting"
        time.sleep(0.02)


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


def release_configs(release: Path, benchmark: str, described: str) -> dict[str, dict]:
    """Every config of a release as ``{config: {split: DataFrame}}``; a release of another benchmark (``described``,
    e.g. "a release of that benchmark") or a folder without manifest.json is an InputError naming the folder."""
    manifest = load_manifest(release)
    if manifest.get("benchmark") != benchmark:
        raise InputError(f"not {described} (benchmark {manifest.get('benchmark')!r})", file=release)
    return read_tables(release, manifest.get("outputs", []))


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


def source_info(path: Path) -> dict:
    """A scored file as metrics.json records it: its path and sha256 (a folder of parquet shards: the sha256 of
    its shards' names and sha256s, one ``name sha256`` line each, in order)."""
    path = Path(path)
    if not path.is_dir():
        return {"path": str(path), "sha256": sha256_file(path)}
    lines = "".join(f"{shard.name} {sha256_file(shard)}\n" for shard in shard_paths(path))
    return {"path": str(path), "sha256": hashlib.sha256(lines.encode()).hexdigest()}


def jsonl_records(path: Path, required: Sequence[str] = (), what: str = "responses file", *,
                  integers: Sequence[str] = ("sample_index",), texts: Sequence[str] = ("response",),
                  unique: Sequence[str] = ()) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a saved JSONL file (responses.jsonl, transcripts.jsonl).
    One-line InputErrors naming the file, the line and the field: a missing file, a line that is not valid UTF-8 or
    not a JSON object, a record without a ``required`` field, an ``integers`` field that is not a whole number or a
    ``texts`` field (a model's answer) that is not text (each when present and not null), and a record whose
    ``unique`` fields repeat an earlier line's (the same item answered twice would be counted twice)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} not found", file=path)
    seen: dict[tuple, int] = {}
    with open(path, "rb") as handle:
        for number, record in jsonl_objects(_utf8_lines(handle, path), path):
            for name in required:
                if name not in record:
                    raise InputError(f"record lacks field {name!r}", file=path, row=number, column=name)
            for name in integers:
                value = record.get(name)
                if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                    got = excerpt(repr(value)) if isinstance(value, (float, str)) else f"a JSON {_json_kind(value)}"
                    raise InputError(f"{name} must be a whole number, got {got}", file=path, row=number, column=name)
            for name in texts:
                value = record.get(name)
                if value is not None and not isinstance(value, str):
                    raise InputError(f"{name} must be text, got a JSON {_json_kind(value)}", file=path, row=number,
                                     column=name)
            if unique:
                key = tuple(json.dumps(record.get(name), sort_keys=True) for name in unique)
                if key in seen:
                    raise InputError(f"the same item as line {seen[key]} ({', '.join(unique)}): each item is "
                                     "answered once", file=path, row=number, column=unique[-1])
                seen[key] = number
            yield number, record


def _json_kind(value: Any) -> str:
    """What a JSON value is, as an error names it (object, array, number, true / false)."""
    if isinstance(value, bool):
        return "true / false"
    return {dict: "object", list: "array"}.get(type(value), "number")


def _utf8_lines(handle, path: Path) -> Iterator[str]:
    """The lines of a binary file as text; a line that is not valid UTF-8 is an InputError naming the line and,
    when the line is JSON, the field holding the bad bytes."""
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            field = None
            try:
                record = json.loads(raw.decode("utf-8", "replace"))
                field = next((k for k, v in record.items() if "\ufffd" in json.dumps(v, ensure_ascii=False)), None)
            except (ValueError, AttributeError):
                pass
            raise InputError(f"not valid UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the "
                             "line)", file=path, row=number, column=field) from None


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


def json_safe(value: Any, none_key: str = "null") -> Any:
    """Metrics made JSON-safe: NaN and infinities become None, dict keys text (a None key becomes ``none_key``)."""
    if isinstance(value, dict):
        return {(none_key if k is None else str(k)): json_safe(v, none_key) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v, none_key) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ------------------------------------------------------------------------------- shared steps of evaluate


def check_at_least_one(options: Mapping[str, int | None]) -> None:
    """An InputError for the first option (``--name`` -> value, None when not given) below 1."""
    for name, value in options.items():
        if value is not None and value < 1:
            raise InputError(f"{name} must be at least 1, got {value}")


def ask(backend: Any, requests: Sequence, out: Path, description: str, console: Any = None) -> Any:
    """``runner.run_requests`` through the run folder's response cache (``out``/cache.sqlite); the runner's result."""
    from culturebench.evaluate.cache import ResponseCache
    from culturebench.evaluate.runner import run_requests

    with ResponseCache(Path(out) / CACHE_FILE) as cache:
        return run_requests(backend, requests, cache, description=description, console=console)


class StreamedRun:
    """The response cache (``out``/cache.sqlite) and the responses file (``ResponsesWriter``) of one run, for its
    steps: ``step`` streams planned items through the runner and appends their records as each batch is answered;
    ``close()`` moves the file into place. A context manager: on an exception the partial file is removed and the
    cache (what resumes the run) is kept. ``total``: the run's requests, which choose the layout (parquet shards
    above SHARD_THRESHOLD, with ``schema``); None: responses.jsonl at any size. One step in ``stream_records``
    (a single-step run); several steps (e.g. closed, open and juror answers) may share one file."""

    def __init__(self, out: Path, total: int | None = None, schema: Any = None, console: Any = None) -> None:
        self.out, self.total, self.schema, self.console = Path(out), total, schema, console

    def __enter__(self) -> StreamedRun:
        from contextlib import ExitStack

        from culturebench.evaluate.cache import ResponseCache

        with ExitStack() as stack:
            self.writer = stack.enter_context(
                ResponsesWriter(self.out, self.total or 0, self.schema, threshold=None if self.total else 0))
            self.cache = stack.enter_context(ResponseCache(self.out / CACHE_FILE))
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.__exit__(*exc)

    def step(self, backend: Any, planned: Iterable, description: str,
             records_of: Callable[[list, list], list[dict]], *, total: int) -> Any:
        """``planned`` (items, each with its ``request``; ``total`` of them, for the progress bar) through
        ``runner.stream_requests``; each batch's answers become records (``records_of(items, responses)``) appended
        to the file. Returns the runner's totals; what the step freed goes back to the system
        (``memory.return_free_heap``)."""
        from culturebench.evaluate.runner import stream_requests

        stats = stream_requests(backend, planned, self.cache,
                                lambda items, responses: self.writer.write(records_of(items, responses)),
                                request_of=lambda item: item.request, total=total, description=description,
                                console=self.console)
        return_free_heap()
        return stats

    def close(self) -> Path:
        """Finish the responses file and move it into place; its path."""
        return self.writer.close()


def stream_records(backend: Any, planned: Iterable, out: Path, description: str,
                   records_of: Callable[[list, list], list[dict]], *, total: int, schema: Any = None,
                   sharded: bool = True, console: Any = None) -> tuple[Path, int, Any]:
    """A benchmark's one-step run, streamed (``StreamedRun``): the planned items go through the runner batch by
    batch, each batch's records (``records_of(items, responses)``) appended to the responses file as they come
    (parquet shards above SHARD_THRESHOLD when ``sharded``, with ``schema``; else responses.jsonl at any size).
    Nothing of the run is kept; returns the file, its number of records and the runner's totals."""
    with StreamedRun(out, total if sharded else None, schema, console) as run:
        stats = run.step(backend, planned, description, records_of, total=total)
        path = run.close()
    return path, run.writer.n_records, stats


def total_stats(parts: Iterable[Mapping]) -> dict:
    """The totals of several runs' ``runner_stats``, with the same fields: counts, tokens and wall_s added up,
    retried errors merged by kind, cost added up (None when no part has one)."""
    parts = list(parts)
    totals: dict[str, Any] = {}
    for name in RUNNER_STATS:
        if name == "transient":
            merged: dict[str, int] = {}
            for part in parts:
                for kind, count in (part.get("transient") or {}).items():
                    merged[kind] = merged.get(kind, 0) + int(count)
            totals[name] = merged
        elif name == "cost":
            costs = [float(p["cost"]) for p in parts if p.get("cost") is not None]
            totals[name] = round(sum(costs), 6) if costs else None
        elif name == "wall_s":
            totals[name] = round(sum(float(p.get("wall_s") or 0.0) for p in parts), 6)
        else:
            totals[name] = sum(int(p.get(name) or 0) for p in parts)
    return totals


def companion_backend(model: str, base_url: str | None, kind: str = "openai", like: Any = None,
                      request_shape: Any = None) -> Any:
    """The backend of a judge, juror or antagonist (``kind`` "openai" or "vllm"): an ``openai`` backend with the
    evaluated backend's client settings (``like``: its ``--concurrency``, ``--timeout``, retries, headers, prices)
    when it has them, and the role's ``request_shape`` (``request_shape_option``) when the config fixes one. A vllm
    companion takes an evaluated vllm backend's ``--engine-args`` (the same model shares its loaded engine)."""
    if kind == "vllm":
        from culturebench.evaluate.vllm_backend import VLLMBackend

        return VLLMBackend(model, engine_args=getattr(like, "engine_overrides", None),
                           log_dir=getattr(like, "log_dir", None))
    if hasattr(like, "like"):
        return like.like(model, base_url, request_shape=request_shape)
    from culturebench.evaluate.backends import OpenAIBackend

    return OpenAIBackend(model, base_url=base_url, request_shape=request_shape)


def request_shape_option(value: Any, file: Path | None, column: str) -> dict | None:
    """A role's ``request_shape`` in a config file (``{"token_limit": "max_completion_tokens", "omit": [...]}``),
    checked (``request_shape.RequestShape.from_options``) and kept as that mapping (run.json records the config as
    JSON); None when not given; anything else is an InputError naming the file and the key."""
    from culturebench.evaluate.request_shape import RequestShape

    if value is None:
        return None
    try:
        RequestShape.from_options(value)
    except InputError as exc:
        raise InputError(exc.message, file=file, column=column) from None
    return dict(value)


def request_counts(n_requests: int, stats: Mapping) -> str:
    """The "N requests (C cached, Q queried, R repeats; T retries: 12 timeouts, ...)" of the line ``culturebench
    evaluate`` prints; the counts add up to N (repeats: identical requests of one batch, asked once), N being the
    runner's count when it has one; the retries and what they retried are said when there were any (a server that
    answers fewer requests at once than sent shows here as timeouts)."""
    from culturebench.evaluate.runner import retried_errors

    n = int(stats.get("n_requests") or n_requests)
    repeats = int(stats.get("n_repeats") or 0)
    extra = f", {repeats:,} repeats asked once" if repeats else ""
    retries = int(stats.get("retries") or 0)
    if retries:
        extra += f"; {retries:,} retries: {', '.join(retried_errors(stats.get('transient') or {}))}"
    return f"{n:,} requests ({stats.get('n_cached', 0):,} cached, {stats.get('n_queried', 0):,} queried{extra})"


def split_paths(value: Path | str) -> list[Path]:
    """The files of a comma-separated ``--responses`` value."""
    return [Path(part.strip()) for part in str(value).split(",") if part.strip()]


def release_manifest_sha256(release: Path | str | None) -> str | None:
    """The sha256 of a release's manifest.json (pins the whole release, as in run.json's ``release``), for the
    metrics.json of ``score``, which has no run.json; None without a release or manifest."""
    if release is None or not (Path(release) / "manifest.json").is_file():
        return None
    return sha256_file(Path(release) / "manifest.json")
