"""The cached model calls of a run and their totals, the same for every benchmark: ``ask`` (a small run kept as a
list), ``StreamedRun`` and ``stream_records`` (a run written out batch by batch into ``run_folder.ResponsesWriter``),
the runner's totals as run.json records them (``runner_stats``, ``total_stats`` of several steps) and the line the
command line prints of them (``request_counts``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from culturebench.evaluate.runs.memory import return_free_heap
from culturebench.evaluate.runs.run_folder import CACHE_FILE, ResponsesWriter

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



def ask(backend: Any, requests: Sequence, out: Path, description: str, console: Any = None) -> Any:
    """``runner.run_requests`` through the run folder's response cache (``out``/cache.sqlite); the runner's result."""
    from culturebench.evaluate.runs.cache import ResponseCache
    from culturebench.evaluate.runs.runner import run_requests

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

        from culturebench.evaluate.runs.cache import ResponseCache

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
        from culturebench.evaluate.runs.runner import stream_requests

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


def request_counts(n_requests: int, stats: Mapping) -> str:
    """The "N requests (C cached, Q queried, R repeats; T retries: 12 timeouts, ...)" of the line ``culturebench
    evaluate`` prints; the counts add up to N (repeats: identical requests of one batch, asked once), N being the
    runner's count when it has one; the retries and what they retried are said when there were any (a server that
    answers fewer requests at once than sent shows here as timeouts)."""
    from culturebench.evaluate.runs.runner import retried_errors

    n = int(stats.get("n_requests") or n_requests)
    repeats = int(stats.get("n_repeats") or 0)
    extra = f", {repeats:,} repeats asked once" if repeats else ""
    retries = int(stats.get("retries") or 0)
    if retries:
        extra += f"; {retries:,} retries: {', '.join(retried_errors(stats.get('transient') or {}))}"
    return f"{n:,} requests ({stats.get('n_cached', 0):,} cached, {stats.get('n_queried', 0):,} queried{extra})"
