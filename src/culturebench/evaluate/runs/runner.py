"""The one place where model calls happen: cache lookup, the missing requests to the backend, each response
written to the cache as it arrives, a progress bar with rate and ETA.

``stream_requests(backend, items, cache, on_batch)`` takes any iterable (a generator: the run is never a list in
memory) in batches of ``BATCH_SIZE`` and hands each batch's responses, in order, to ``on_batch`` as soon as the
batch is answered, so a caller writes them out and forgets them. ``run_requests(backend, requests, cache)`` is the
same for a run small enough to keep: its responses as one list (one batch, so identical requests anywhere in it are
sent once).
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from culturebench.chat import FAILED, Backend, BackendError, BackendStats, ChatRequest, ChatResponse
from culturebench.evaluate.runs.cache import ResponseCache, canonical_json, key_material


@dataclass
class RunStats:
    n_requests: int = 0
    n_cached: int = 0  # answered from the cache
    n_queried: int = 0  # sent to the backend (distinct requests; duplicates in the batch are sent once)
    n_repeats: int = 0  # answered by an identical request of the same batch (n_cached + n_queried + n_repeats = all)
    retries: int = 0
    prompt_tokens: int = 0  # of the responses queried in this run (cached ones cost nothing)
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of the distinct answers taken from the cache (what they cost when asked), so
    cached_completion_tokens: int = 0  # that a rerun's run.json still says what the run's answers took
    cost: float | None = None
    errors: int = 0
    transient: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    truncated: int = 0  # answers cut off by the token limit (finish_reason "length"), cached ones included
    failed: int = 0  # requests a backend gave up on and went past (FAILED): empty answers, not cached

    def summary(self) -> str:
        cost = f", cost {self.cost:.4f}" if self.cost is not None else ""
        retried = f", {self.retries} retries" if self.retries else ""
        repeats = f", {self.n_repeats} repeats" if self.n_repeats else ""
        cut = f"; {self.truncated} cut off by the token limit" if self.truncated else ""
        return (f"{self.n_requests} requests: {self.n_cached} cached, {self.n_queried} queried{repeats}{retried}; "
                f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens{cost}{cut}; "
                f"{self.wall_s:.1f} s")


TRUNCATED_WARNING_SHARE = 0.02
"""Above this share of answers cut off by the token limit (``finish_reason: length``) a run warns on the terminal:
such answers are usually unparsed, and the metrics then describe the limit more than the model."""




def failed_warning(failed: int, n: int, description: str) -> str | None:
    """The terminal warning when requests failed for good and were scored as unanswered, else None."""
    if failed:
        return (f"warning: {description}: {failed:,} of {n:,} requests failed for good and count as unanswered; "
                "they are not cached: run the same command again to ask them again")
    return None


RAISE_MAX_TOKENS = "raise --max-tokens (reasoning models spend tokens thinking)"
"""What ``truncation_warning`` advises by default: evaluate's remedy (a command without --max-tokens, such as
``generate`` whose token limits are its task's, passes its own)."""


def truncation_warning(truncated: int, n: int, description: str, remedy: str = RAISE_MAX_TOKENS) -> str | None:
    """The terminal warning when more than ``TRUNCATED_WARNING_SHARE`` of ``n`` answers were cut off, else None."""
    if n and truncated / n > TRUNCATED_WARNING_SHARE:
        return (f"warning: {description}: {truncated:,} of {n:,} answers ({truncated / n:.0%}) were cut off by the "
                f"token limit (finish_reason length); {remedy}")
    return None


def estimated_tokens(request: ChatRequest) -> int:
    """Prompt tokens of a request, estimated as OpenAI's rule of thumb (4 characters a token) plus 4 per message
    (the chat format's own tokens): a dry run's guess, not a tokenizer's count."""
    return sum(4 + (len(content) + 3) // 4 for _, content in request.messages)


class DryRun(Exception):
    """``evaluate --dry-run`` stops at the first requests it would send: what they are and what they would cost."""

    def __init__(self, description: str, n_requests: int, n_cached: int, n_to_send: int, prompt_tokens: int,
                 completion_tokens: int, prices: tuple[float, float] | None) -> None:
        """``prompt_tokens``: ``estimated_tokens`` of the requests to send; ``completion_tokens``: their
        ``max_tokens`` (at most)."""
        self.description, self.n_requests, self.n_cached = description, n_requests, n_cached
        self.n_to_send, self.prompt_tokens, self.completion_tokens = n_to_send, prompt_tokens, completion_tokens
        self.cost = None if prices is None else (self.prompt_tokens * prices[0]
                                                  + self.completion_tokens * prices[1]) / 1e6
        super().__init__(self.line())

    def line(self) -> str:
        cost = ("" if self.cost is None else
                f"; estimated cost at most {self.cost:.4f} (--price-in / --price-out per 1M tokens)")
        return (f"dry run, {self.description}: {self.n_requests:,} requests, {self.n_cached:,} cached, "
                f"{self.n_to_send:,} to ask; ~{self.prompt_tokens:,} prompt tokens (4 characters a token), at most "
                f"{self.completion_tokens:,} completion tokens{cost}; nothing was sent (later steps that depend on "
                "these answers, such as judges and jurors, are not counted)")


@dataclass
class RunResult:
    responses: list[ChatResponse]  # in request order
    stats: RunStats

    @property
    def texts(self) -> list[str]:
        return [r.text for r in self.responses]


class _RateColumn(ProgressColumn):
    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "-/s", style="progress.data.speed")


def retried_errors(transient: dict[str, int]) -> list[str]:
    """Retried errors by kind (``BackendStats.transient``) in words: "12 timeouts", "3 HTTP 500"."""
    parts = []
    for kind, count in sorted(transient.items()):
        label = {"timeout": "timeout", "refused": "refused connection", "connection": "connection error",
                 "malformed": "malformed reply", "dns": "unknown host"}.get(kind, f"HTTP {kind}")
        parts.append(f"{count} {label}{'s' if count > 1 else ''}")
    return parts


def health(backend: Backend) -> str:
    """What the progress bar says about trouble: retried errors by kind ("12 timeouts, 3 HTTP 500") and, when the
    backend lowered its requests in flight after timeouts, the limit now ("2/16 in flight"); "" when all is well."""
    stats = getattr(backend, "stats", None)
    parts = retried_errors(getattr(stats, "transient", {}))
    limiter = getattr(backend, "limiter", None)
    if limiter is not None and limiter.limit < limiter.maximum:
        parts.append(f"{limiter.limit}/{limiter.maximum} in flight")
    return ", ".join(parts)


class _HealthColumn(ProgressColumn):
    """Retried errors and a lowered in-flight limit, so that a stalled run says why (empty when all is well)."""

    def __init__(self, backend: Backend) -> None:
        super().__init__()
        self.backend = backend

    def render(self, task) -> Text:
        return Text(health(self.backend), style="yellow")


def progress_bar(console: Console, backend: Backend | None = None) -> Progress:
    """The run's progress bar: count, rate, elapsed, eta and (with ``backend``) what is going wrong."""
    return Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(), MofNCompleteColumn(),
                    TaskProgressColumn(), _RateColumn(), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                    _HealthColumn(backend), console=console, disable=not console.is_terminal, transient=False)


BATCH_SIZE = 4096
"""Requests taken from the iterable at a time by ``stream_requests``: the memory of a run is this many requests
and answers, whatever its length; large enough that the backend's requests in flight rarely drain between
batches (the last requests of a batch finish before the next batch starts)."""


def stream_requests(backend: Backend, items: Iterable, cache: ResponseCache | None,
                    on_batch: Callable[[list, list[ChatResponse]], None], *,
                    request_of: Callable[[object], ChatRequest] = lambda item: item, total: int | None = None,
                    batch_size: int = BATCH_SIZE, description: str = "model calls",
                    console: Console | None = None, truncation_remedy: str = RAISE_MAX_TOKENS) -> RunStats:
    """Responses to ``items`` (``request_of(item)`` is the request of one), ``batch_size`` items at a time: each
    batch from ``cache`` where present, from ``backend`` for the rest (each one cached as it arrives, so an
    interrupted run resumes where it stopped), then ``on_batch(items, responses)`` in item order. Identical
    requests of one batch are sent once; a later batch finds an earlier batch's answer in the cache. ``total``
    (a cheap count of the items) is the progress bar's. A backend's ``dry_run`` goes through every batch without
    sending anything, then raises ``DryRun``. A backend with a ``runner_batch_size`` attribute sets the batches (the
    integrations' planning backend takes the whole run as one, to see every request before it stops the run); not
    ``batch_size``, which backends use for batches of their own (vLLM's, Ray Data's)."""
    started = time.perf_counter()
    batch_size = getattr(backend, "runner_batch_size", None) or batch_size
    console = console or Console(stderr=True)
    params = backend.cache_params()
    dry_run = bool(getattr(backend, "dry_run", False))
    stats_before = backend.stats.copy() if isinstance(getattr(backend, "stats", None), BackendStats) else None
    stats = RunStats()
    planned_tokens = [0, 0]  # a dry run's estimate: prompt tokens and at most completion tokens of what it would send
    bar: Progress | None = None
    task = None
    iterator = iter(items)
    try:
        while batch := list(itertools.islice(iterator, batch_size)):
            requests = [request_of(item) for item in batch]
            # key -> (canonical request JSON, the positions asking for it)
            groups: dict[str, tuple[str, list[int]]] = {}
            for position, request in enumerate(requests):
                material = canonical_json(key_material(params, request))
                key = hashlib.sha256(material.encode()).hexdigest()
                entry = groups.get(key)
                if entry is None:
                    groups[key] = (material, [position])
                else:
                    entry[1].append(position)
            responses: list[ChatResponse | None] = [None] * len(batch)
            hits = cache.get_many(groups) if cache is not None else {}
            for key, response in hits.items():
                stats.cached_prompt_tokens += response.prompt_tokens
                stats.cached_completion_tokens += response.completion_tokens
                for position in groups[key][1]:
                    responses[position] = response
                    stats.n_cached += 1
            missing = [key for key in groups if key not in hits]
            to_send = [requests[groups[key][1][0]] for key in missing]
            stats.n_requests += len(batch)
            stats.n_queried += len(to_send)
            if dry_run:
                planned_tokens[0] += sum(estimated_tokens(r) for r in to_send)
                planned_tokens[1] += sum(r.sampling.max_tokens for r in to_send)
                continue
            if to_send:
                if bar is None:
                    bar = progress_bar(console, backend)
                    bar.start()
                    task = bar.add_task(description, total=total, completed=stats.n_requests - len(batch))
                bar.advance(task, len(batch) - sum(len(groups[key][1]) for key in missing))  # the cached ones

                def on_response(index: int, response: ChatResponse) -> None:
                    key = missing[index]
                    material, positions = groups[key]
                    if cache is not None and response.finish_reason != FAILED:
                        cache.put(key, material, response)
                    for position in positions:
                        responses[position] = response
                    bar.advance(task, len(positions))

                backend.generate(to_send, on_response)
            elif bar is not None:
                bar.advance(task, len(batch))
            absent = sum(r is None for r in responses)
            if absent:
                raise BackendError(f"{backend.name} backend returned no response for {absent} of {len(batch)} "
                                   "requests")
            if stats_before is None:  # a backend without running totals: count what came back
                queried = [responses[groups[key][1][0]] for key in missing]
                stats.prompt_tokens += sum(r.prompt_tokens for r in queried)
                stats.completion_tokens += sum(r.completion_tokens for r in queried)
            stats.truncated += sum(r.finish_reason == "length" for r in responses)  # type: ignore[union-attr]
            stats.failed += sum(r.finish_reason == FAILED for r in responses)  # type: ignore[union-attr]
            on_batch(batch, responses)  # type: ignore[arg-type]
    finally:
        if bar is not None:
            bar.stop()
        if cache is not None:
            cache.flush()  # whatever happened, every answer received is committed when this returns or raises
        if stats_before is not None:
            delta = backend.stats.minus(stats_before)
            stats.retries, stats.errors, stats.transient = delta.retries, delta.errors, delta.transient
            stats.prompt_tokens, stats.completion_tokens, stats.cost = (delta.prompt_tokens, delta.completion_tokens,
                                                                       delta.cost)
        stats.wall_s = time.perf_counter() - started
    stats.n_repeats = stats.n_requests - stats.n_cached - stats.n_queried
    if dry_run:
        raise DryRun(description, stats.n_requests, stats.n_cached, stats.n_queried, *planned_tokens,
                     getattr(backend, "price_per_million", None))
    if stats.failed and stats.failed == stats.n_requests:  # scores of no answer at all would read as a model's
        errors = getattr(backend, "failed", None) or ["not recorded"]
        raise BackendError(f"{backend.name} backend: none of the {stats.n_requests:,} requests of {description} was "
                           f"answered (the first error: {errors[0]}); no results written")
    for warning in (truncation_warning(stats.truncated, stats.n_requests, description, truncation_remedy),
                    failed_warning(stats.failed, stats.n_requests, description)):
        if warning:
            console.print(Text(warning, style="yellow"), highlight=False, soft_wrap=True)
    return stats


def run_requests(backend: Backend, requests: Iterable[ChatRequest], cache: ResponseCache | None,
                 description: str = "model calls", console: Console | None = None,
                 truncation_remedy: str = RAISE_MAX_TOKENS) -> RunResult:
    """Responses to ``requests`` in order, kept as one list (``stream_requests`` with the whole run as one batch:
    identical requests anywhere in it are sent once); for a run too long to keep, ``stream_requests``."""
    requests = list(requests)
    responses: list[ChatResponse] = []
    stats = stream_requests(backend, requests, cache, lambda _, batch: responses.extend(batch), total=len(requests),
                            batch_size=max(1, len(requests)), description=description, console=console,
                            truncation_remedy=truncation_remedy)
    return RunResult(responses=responses, stats=stats)
