"""What every backend takes and gives (``backends.Backend``): chat requests with their sampling settings,
responses with token usage, the errors that stop a run and a backend's running totals. The contract and the
benchmarks' plans use these types; the backends (``backends``, ``vllm_backend``, ``ray_backend``) implement them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Protocol

from culturebench.errors import InputError


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.0
    max_tokens: int = 256
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    """Stop sequences (none by default; a benchmark's prompts may stop at a blank line)."""

    def probe_kind(self) -> tuple[str, ...]:
        """The parameters these sampling settings send that a model may refuse (``request_shape.ADAPTABLE``):
        ``temperature`` / ``top_p`` other than 1, ``stop``, ``seed``."""
        return tuple(name for name, set_ in (("temperature", self.temperature != 1), ("top_p", self.top_p != 1),
                                             ("stop", bool(self.stop)), ("seed", self.seed is not None))
                     if set_)


@dataclass(frozen=True)
class ChatRequest:
    """One conversation to complete; ``sample_index`` tells apart repeated samples of the same conversation."""

    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    sampling: SamplingParams = field(default_factory=SamplingParams)
    sample_index: int = 0

    def message_dicts(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]

    def as_dict(self) -> dict:
        return {"messages": self.message_dicts(), "sampling": asdict(self.sampling), "sample_index": self.sample_index}

FAILED = "error"
"""``finish_reason`` of the empty answer a backend that goes on past a failed request gives it (``--backend ray``,
``ray_backend.MAX_FAILED_ROWS``): the benchmark parses it as unanswered, the cache does not keep it (a rerun asks
it again) and the run says how many there were; a step none of whose requests was answered stops the run."""


@dataclass(frozen=True)
class ChatResponse:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    logprobs: tuple | None = None
    """Asked for with ``OpenAIBackend(top_logprobs=k)`` and returned by the endpoint: per generated token
    ``(token, logprob, ((alternative, logprob), ...))`` with the k most probable alternatives; else None (never
    cached: ``--scoring logprobs`` keeps them in its own file)."""


OnResponse = Callable[[int, ChatResponse], None]
"""Called with (index into the request batch, response) as each response arrives."""


class Backend(Protocol):
    name: str
    model: str

    def cache_params(self) -> dict:
        """Backend settings that change what the model returns (they enter the response-cache key)."""

    def generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        """Complete every request, calling ``on_response`` as each one arrives (in any order)."""



@dataclass
class CostBudget:
    """``--max-cost``: what a run may spend (in the currency of ``--price-in/--price-out``), shared by the evaluated
    model's backend and its judges', jurors' and antagonist's (``like``)."""

    limit: float | None = None
    spent: float = 0.0


class CostLimitReached(Exception):
    """Spent cost passed ``--max-cost``: the run stops cleanly (answers kept in the cache; re-run to resume)."""


class BackendError(InputError):
    """A model call that cannot succeed (bad key, unknown model, server still failing after every retry).

    One line, never the API key; an ``InputError`` so that the command line reports it without a traceback."""


class EndpointFault(BackendError):
    """A fault of the endpoint or of the run's settings, not of one request: authentication (401), permission (403),
    unknown model or route (404), an untrusted certificate, and nothing listening, an unknown host, a broken
    connection, rate limiting (429) or server errors (5xx) still there after every retry, a ``Retry-After`` longer
    than the longest wait allowed (``--max-wait``). Every backend stops the
    run at once with its line, the ray backend's HTTP engine too (which goes past a request that fails on its own:
    a 400 for one prompt, a timeout, a malformed reply)."""


def gave_up(kind: str) -> type[BackendError]:
    """The error of a request still failing after every retry with the passing fault ``kind`` (``Retryable.kind``):
    an ``EndpointFault`` when the endpoint is at fault, else a ``BackendError`` of this request."""
    endpoint = kind in ("refused", "dns", "connection", "429") or (kind.isdigit() and int(kind) >= 500)
    return EndpointFault if endpoint else BackendError


@dataclass
class BackendStats:
    """Running totals of one backend (cumulative over ``generate`` calls; see ``minus`` for one run's share)."""

    requests: int = 0  # responses received
    retries: int = 0  # attempts beyond the first
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # in the currency of ``price_per_million``; None when no prices are known
    errors: int = 0  # requests that failed for good
    transient: dict[str, int] = field(default_factory=dict)  # retried errors by kind: "429", "500", "timeout"...
    sent: dict[tuple, int] = field(default_factory=dict)
    """Answered requests by the sampling parameters they were sent with, in the request shape of that moment
    (``OpenAIBackend._sampling``): ((name, value), ...) with the seed before + sample_index (``sent_params``)."""

    def copy(self) -> BackendStats:
        return replace(self, transient=dict(self.transient), sent=dict(self.sent))

    def minus(self, before: BackendStats) -> BackendStats:
        """What happened since the snapshot ``before``."""
        out = BackendStats()
        for f in fields(self):
            now, then = getattr(self, f.name), getattr(before, f.name)
            if isinstance(now, dict):  # counts by kind
                setattr(out, f.name, {k: v - then.get(k, 0) for k, v in now.items() if v - then.get(k, 0)})
            elif f.name == "cost":
                out.cost = None if now is None else now - (then or 0.0)
            else:
                setattr(out, f.name, now - then)
        return out


def sent_params(sent: Mapping[tuple, int]) -> list[dict]:
    """``BackendStats.sent`` as run.json records it: every sampling parameter sent to the endpoint, by name, with
    the requests answered so (``seed``: the run's seed; each request sends it + its sample_index)."""
    return [{"params": {name: list(value) if isinstance(value, tuple) else value for name, value in key},
             "requests": count} for key, count in sorted(sent.items(), key=lambda item: -item[1])]
