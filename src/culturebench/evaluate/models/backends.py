"""Model backends: one interface (``chat.Backend``), batches of chat requests -> responses with token usage.

- ``openai``: any OpenAI-compatible endpoint (OpenAI, vLLM's ``vllm serve``, llama.cpp's server) over HTTP
  (``transport.py``: pyreqwest for plain-http endpoints reached directly, aiohttp for https and proxies),
  asynchronous with a bounded number of requests in flight; ``azure``: the same for Azure OpenAI's deployment route.
- ``vllm``: offline ``vllm.LLM`` with batched ``LLM.chat`` (``vllm_backend.py``, an optional extra).

A model's request shape (reasoning models) is ``request_shape.py``'s; the secrets every backend redacts,
``redaction.py``'s.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections import deque
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from culturebench.errors import InputError
from culturebench.chat import (
    BackendError,
    BackendStats,
    ChatRequest,
    ChatResponse,
    CostBudget,
    CostLimitReached,
    EndpointFault,
    OnResponse,
    gave_up,
    sent_params,
)
from culturebench.evaluate.models.event_loop import run_coroutine
from culturebench.evaluate.models.redaction import (
    check_header_value,
    proxy_passwords,
    register_secrets,
)
from culturebench.evaluate.models.request_shape import ADAPTABLE, RequestShape, rejected_param
from culturebench.evaluate.models.transport import Retryable, UntrustedCertificate, library_for, one_line, open_transport


# --------------------------------------------------------------------------------------------------------------
# Implementations
# --------------------------------------------------------------------------------------------------------------

def parse_header(value: str) -> tuple[str, str]:
    """``--header 'Name: value'`` as (name, value); anything else is an InputError."""
    name, sep, text = value.partition(":")
    name, text = name.strip(), text.strip()
    if not sep or not name or any(c.isspace() for c in name) or not text:
        raise InputError(f"--header must look like 'Name: value', got {value.split(':')[0].strip()!r}...")
    return name, text


def check_base_url(base_url: str, option: str = "--base-url") -> str:
    """An endpoint URL with an http:// or https:// scheme and a host; anything else is an InputError at once."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"{option} {base_url!r} needs a scheme and a host, e.g. http://{base_url.split('://')[-1]}")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise InputError(f"{option} {base_url!r}: the port is not a number from 0 to 65535") from None
    if parts.path.rstrip("/").endswith("/chat/completions"):
        base = base_url.rstrip("/").removesuffix("/chat/completions")
        raise InputError(f"{option} {base_url!r} is the full endpoint: give its base URL, {base}, without "
                         "/chat/completions (it is added)")
    return base_url


def _retry_after(headers) -> float | None:
    """Seconds a server asked us to wait: ``retry-after-ms``, ``Retry-After`` in seconds or as an HTTP date."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_encode_body = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(body, ensure_ascii=False)`` with one encoder for the process: ``json.dumps`` with any non-default
option builds a new encoder per call, a third of the time of encoding a short request (issue #65)."""


class _Adapted(Exception):
    """The request shape changed after an "unsupported parameter" reply: send the request again at once."""


DEFAULT_BASE_URL = "https://api.openai.com/v1"
ENDPOINT_STATUSES = (401, 403, 404)
"""HTTP statuses that fail at once and are the endpoint's or the settings' fault (``EndpointFault``): the key, the
permission, the model or the route; any other 4xx not retried concerns the request."""


class _AdaptiveLimit:
    """At most ``limit`` requests in flight, lowered on timeouts and raised back on successes (AIMD).

    A server that answers fewer requests at once than we send (llama.cpp's server answers one at a time) makes the
    queued ones time out; halving the limit on a timeout and adding one back after ``limit`` successes in a row
    lets such a run slow down to what the server can take instead of failing.

    Requests beyond the limit wait in line and each freed slot wakes the first of them (an ``asyncio.Condition``
    woken every waiter on each release: with the ray backend's queued chunk behind a full limit, hundreds of
    wake-ups per answer, issue #65)."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.limit = maximum
        self.in_flight = 0
        self._successes = 0
        self._waiting: deque[asyncio.Future] = deque()

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiting:
            self.in_flight += 1
            return
        slot = asyncio.get_running_loop().create_future()
        self._waiting.append(slot)
        try:
            await slot  # resolved by _hand_out, which counts this request in flight
        except asyncio.CancelledError:
            if slot.done() and not slot.cancelled():  # handed a slot, then cancelled before taking it: pass it on
                self.in_flight -= 1
                self._hand_out()
            raise

    async def release(self, outcome: str) -> None:
        """``outcome``: "ok", "timeout" (lower the limit) or anything else (no change)."""
        self.in_flight -= 1
        if outcome == "timeout":
            self.limit = max(1, min(self.limit, self.in_flight + 1) // 2)
            self._successes = 0
        elif outcome == "ok" and self.limit < self.maximum:
            self._successes += 1
            if self._successes >= self.limit:
                self.limit, self._successes = self.limit + 1, 0
        self._hand_out()

    def _hand_out(self) -> None:
        """A free slot to each waiter in line, first come first served, while the limit allows (cancelled waiters
        skipped)."""
        while self._waiting and self.in_flight < self.limit:
            slot = self._waiting.popleft()
            if not slot.done():
                slot.set_result(None)
                self.in_flight += 1


def _token_logprobs(logprobs: dict | None) -> tuple | None:
    """A choice's ``logprobs.content`` (OpenAI's chat format, also vLLM's) as ``ChatResponse.logprobs``; None when
    absent or not in that shape (a reply's text is kept; ``--scoring logprobs`` counts its answer unreadable, and
    ``option_probability`` checks the numbers themselves)."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    try:
        return tuple((str(t["token"]), float(t["logprob"]),
                      tuple((str(a["token"]), float(a["logprob"])) for a in t.get("top_logprobs") or ()))
                     for t in content)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


class OpenAIBackend:
    """Any OpenAI-compatible chat endpoint (``POST {base_url}/chat/completions``) through ``transport.py``'s client.

    ``concurrency`` requests in flight at most, a per-request ``timeout`` (seconds, whole request), and retries: 429,
    408/409, 5xx, timeouts, connection errors and malformed replies are retried up to ``max_retries`` times with
    exponential backoff and jitter, each wait at most ``backoff_max`` seconds (``--max-wait``), jitter included; a
    server's ``Retry-After`` is honoured up to that cap, and one asking for longer ends the run at once
    (``EndpointFault``: waiting less than asked would only be refused again); a refused
    connection (nothing listening) is retried with short waits (at most ``refused_backoff_max`` each) and then
    reported as such; any other 4xx fails at once. A timeout also halves the requests in flight (see
    ``_AdaptiveLimit``): a server slower than expected slows the run down instead of failing it.

    The wire format is the OpenAI chat-completions JSON, sent with an HTTP client directly: through the official
    ``openai`` client ``bench/eval_overhead.py`` measured more harness CPU per request, with its default transport
    and with its aiohttp one (docs/performance.md, "HTTP clients"); that CPU is what caps throughput at high concurrency. So this
    client does what the ``openai`` package's environment conventions do: the key comes from ``OPENAI_API_KEY``
    (``"EMPTY"`` when unset, for local servers; without ``base_url`` the key is required), ``base_url`` defaults to
    ``OPENAI_BASE_URL``, else OpenAI's; ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID`` are sent as the
    ``OpenAI-Organization`` / ``OpenAI-Project`` headers; ``headers`` are extra headers (``--header``); the proxy
    variables (``HTTPS_PROXY``, ``HTTP_PROXY``, ``NO_PROXY``) are honoured. The key and every header value are
    secrets: replaced by ``<redacted>`` in whatever a server sends back (``redact``), never stored or logged.

    Reasoning models reject ``max_tokens`` and non-default sampling parameters with an HTTP 400 whose ``error.code``
    is "unsupported_parameter" or "unsupported_value": the request shape (``RequestShape``) is then adapted once
    for this model and the request re-sent (``run_info()["request_shape"]`` records what was sent and why). The
    first request of each kind goes alone (``SamplingParams.probe_kind``), so a refusal is met once per model, not once
    per request in flight; every backend of one model made by ``like`` shares its shape.

    Every request is sent with ``n=1``; repeated samples (``sample_index`` > 0) with a fixed ``seed`` are sent
    with ``seed + sample_index`` so that they differ.
    """

    name = "openai"
    key_variable = "OPENAI_API_KEY"

    def __init__(self, model: str, base_url: str | None = None, concurrency: int = 16, timeout: float = 60.0,
                 max_retries: int = 6, price_per_million: tuple[float, float] | None = None, *,
                 backoff_base: float = 0.5, backoff_max: float = 60.0, refused_backoff_max: float = 0.5,
                 headers: Mapping[str, str] | None = None, request_shape: RequestShape | Mapping | None = None,
                 budget: CostBudget | None = None, request_shapes: Mapping[str, RequestShape] | None = None,
                 top_logprobs: int | None = None) -> None:
        if concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {concurrency}")
        if max_retries < 0:
            raise InputError(f"max_retries must be 0 or more, got {max_retries}")
        if not timeout > 0:
            raise InputError(f"timeout must be more than 0 seconds, got {timeout}")
        base_url = self._default_base_url(base_url)
        self.model = model
        self.base_url = base_url
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.price_per_million = price_per_million
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.refused_backoff_max = refused_backoff_max
        self.extra_headers = {name: check_header_value(value, f"--header {name}")
                              for name, value in (headers or {}).items()}
        check_header_value(os.environ.get(self.key_variable) or "", self.key_variable)
        # shapes by model name, shared with the companions made by ``like``: every backend of one model in a run
        # uses (and adapts) the same shape, so a model's shape is learnt once per run
        self.request_shapes = request_shapes if request_shapes is not None else {}
        if request_shape is not None:
            self.shape = request_shape if isinstance(request_shape, RequestShape) else \
                RequestShape.from_options(request_shape)
        else:
            self.shape = self.request_shapes.setdefault(model, RequestShape())
        self.budget = budget or CostBudget()
        if self.budget.limit is not None and not price_per_million:
            raise InputError("--max-cost needs prices: --price-in and --price-out (per 1M tokens)")
        self.top_logprobs = top_logprobs  # ask for logprobs with this many alternatives per token (--scoring logprobs)
        self.stats = BackendStats(cost=0.0 if price_per_million else None)
        self.limiter: _AdaptiveLimit | None = None  # of the running ``generate`` (the progress bar shows its limit)
        self.dry_run = False  # evaluate --dry-run: the runner stops before sending (runner.DryRun)
        self._rng = random.Random()
        self._clients: dict = {}  # pyreqwest clients by settings, reused by every ``generate`` (transport.py)
        register_secrets([os.environ.get(self.key_variable) or "", *self.extra_headers.values(), *proxy_passwords()])

    def _default_base_url(self, base_url: str | None) -> str | None:
        option = "--base-url" if base_url else "OPENAI_BASE_URL"
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if base_url is None and not os.environ.get("OPENAI_API_KEY"):
            raise BackendError("no --base-url given and OPENAI_API_KEY is not set: set the key to use OpenAI's API, "
                               "or give the endpoint of a local server (e.g. --base-url http://127.0.0.1:8080/v1)")
        return None if base_url is None else check_base_url(base_url, option)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
                f"concurrency={self.concurrency})")

    def cache_params(self) -> dict:
        if self.top_logprobs is None:  # only when set, so that runs without logprobs keep their keys
            return {"backend": "openai", "model": self.model}
        return {"backend": "openai", "model": self.model, "top_logprobs": self.top_logprobs}

    def run_info(self) -> dict:
        """What run.json records about this backend beyond its cache parameters (no secrets: header names only)."""
        return {"base_url": self.where, "concurrency": self.concurrency, "timeout_s": self.timeout,
                "max_retries": self.max_retries, "max_wait_s": self.backoff_max, "http_library": library_for(self.where),
                "extra_headers": sorted(self.extra_headers), "request_shape": self.shape.as_dict(),
                "sampling_sent": sent_params(self.stats.sent)}

    def like(self, model: str, base_url: str | None, concurrency: int | None = None,
             request_shape: RequestShape | Mapping | None = None) -> OpenAIBackend:
        """A backend for another model / endpoint with this one's settings (concurrency, timeout, retries, headers,
        prices, cost budget); its own request shape (``request_shape``, else the one ``--request-shape`` fixes for
        that model, else learnt from its errors)."""
        return self._same_settings(OpenAIBackend(
            model, base_url=base_url, concurrency=concurrency or self.concurrency, timeout=self.timeout,
            max_retries=self.max_retries, backoff_base=self.backoff_base, backoff_max=self.backoff_max,
            refused_backoff_max=self.refused_backoff_max, headers=self.extra_headers, request_shape=request_shape,
            price_per_million=self.price_per_million, budget=self.budget, request_shapes=self.request_shapes))

    def _same_settings(self, other: OpenAIBackend) -> OpenAIBackend:
        other.dry_run = self.dry_run
        return other

    @property
    def where(self) -> str:
        return (self.base_url or DEFAULT_BASE_URL).rstrip("/")

    # --- the HTTP session ---
    def _url(self) -> str:
        return f"{self.where}/chat/completions"

    def _auth_headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {os.environ.get(self.key_variable) or 'EMPTY'}"}
        for variable, name in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if os.environ.get(variable):
                headers[name] = os.environ[variable]
        return headers

    def _open(self):
        """The HTTP transport of one ``generate`` call (``transport.open_transport``: pyreqwest for a plain-http
        endpoint without a proxy, else aiohttp); the key is read here and kept only in its headers."""
        headers = {**self._auth_headers(), "Content-Type": "application/json", "Accept": "application/json",
                   **self.extra_headers}
        return open_transport(self._url(), self.where, headers, self.concurrency, self.timeout, self._clients)

    def _sampling(self, request: ChatRequest) -> dict:
        """The sampling parameters of ``request`` as this model's request shape sends them: the token limit by its
        name, the parameters the shape omits left out, the seed + sample_index."""
        s, shape = request.sampling, self.shape
        sampling = {shape.token_limit: s.max_tokens}
        for name, value in (("temperature", s.temperature), ("top_p", s.top_p),
                            ("seed", None if s.seed is None else s.seed + request.sample_index),
                            ("stop", list(s.stop) or None)):
            if value is not None and name not in shape.omit:
                sampling[name] = value
        return sampling

    def _request_body(self, request: ChatRequest, sampling: dict | None = None) -> bytes:
        body = {"model": self.model, "messages": request.message_dicts(), **(sampling or self._sampling(request))}
        if self.top_logprobs is not None:
            body["logprobs"], body["top_logprobs"] = True, self.top_logprobs
        return _encode_body(body).encode()

    # --- one request ---
    async def _attempt(self, http, request: ChatRequest) -> ChatResponse:
        sampling = self._sampling(request)
        try:
            status, headers, content = await http.post(self._request_body(request, sampling))
        except UntrustedCertificate as exc:  # not a passing fault: said at once
            raise EndpointFault(f"{self.name} backend at {self.where}: the server's TLS certificate is not trusted "
                               f"({exc}); behind a company proxy that re-signs traffic, point SSL_CERT_FILE at its "
                               "CA certificate") from None
        if status >= 400:
            return self._refused(status, content, headers)
        response = self._parse(content)
        sent = tuple((name, request.sampling.seed if name == "seed" else tuple(value) if isinstance(value, list)
                      else value) for name, value in sampling.items())
        self.stats.sent[sent] = self.stats.sent.get(sent, 0) + 1
        return response

    def _refused(self, status: int, content: bytes, headers) -> ChatResponse:
        """An HTTP error reply: an unsupported parameter adapts the request shape (``_Adapted``: send again),
        429 / 408 / 409 / 5xx are retried, anything else fails at once."""
        if status == 400:
            param = rejected_param(content)
            if param is not None:
                if param in self.shape.omit or (param == "max_tokens" and self.shape.token_limit != param):
                    raise _Adapted()  # another request in flight already adapted the shape: send again
                if self.shape.adapt(param, one_line(_error_message(content))):
                    raise _Adapted()
        detail = f"HTTP {status}: {one_line(_error_message(content))}"
        if status in (408, 409, 429) or status >= 500:
            raise Retryable(str(status), detail, _retry_after(headers))
        raise self._fatal(status, content)

    def _parse(self, content: bytes) -> ChatResponse:
        try:
            text_body = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Retryable("malformed", f"malformed reply: body is not UTF-8 text (byte 0x{content[exc.start]:02x} "
                                          f"at offset {exc.start})") from None
        try:
            body = json.loads(text_body)
        except ValueError:
            raise Retryable("malformed", f"malformed reply (not JSON): {one_line(text_body[:80])}") from None
        if isinstance(body, dict) and "choices" not in body and body.get("error"):
            # a 200 whose body is an error object (some gateways): the server's message, retried when its code is
            status = _error_status(body["error"])
            detail = f"HTTP 200 with an error body: {one_line(_error_message(content))}"
            if status in (408, 409, 429) or (status or 0) >= 500:
                raise Retryable(str(status), detail)
            raise (EndpointFault if status in ENDPOINT_STATUSES else BackendError)(
                f"{self.name} backend at {self.where}: {detail}")
        try:
            choice = body["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content")
            finish_reason = choice.get("finish_reason")
            if text is None:
                if message.get("refusal") is None and finish_reason not in ("content_filter", "length"):
                    raise Retryable("malformed", "malformed reply: no message content")
                text = message.get("refusal") or ""
            if not isinstance(text, str):
                raise Retryable("malformed", "malformed reply: message content is not text")
            logprobs = _token_logprobs(choice.get("logprobs"))
        except (KeyError, IndexError, TypeError, AttributeError, ValueError):
            raise Retryable("malformed", "malformed reply: no choices") from None
        usage = body.get("usage")
        return ChatResponse(text=text, prompt_tokens=_token_count(usage, "prompt_tokens"),
                            completion_tokens=_token_count(usage, "completion_tokens"),
                            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
                            logprobs=logprobs)

    def _fatal(self, status: int, content: bytes) -> BackendError:
        """The error of a 4xx reply that is not retried: an ``EndpointFault`` for ``ENDPOINT_STATUSES``."""
        message = one_line(_error_message(content))
        if status == 401:
            hint = f"authentication failed (check {self.key_variable})"
        elif status == 403:
            hint = "permission denied"
        elif status == 404 and self.name == "openai" and not urlsplit(self.where).path.endswith("/v1"):
            hint = (f"no chat completions route at {self._url()} (the base URL of an OpenAI-compatible server ends "
                    f"in /v1: give --base-url {self.where}/v1)")
        elif status == 404:
            hint = f"model {self.model!r} not found (or no chat completions route)"
        else:
            hint = "request refused"
        return (EndpointFault if status in ENDPOINT_STATUSES else BackendError)(
            f"{self.name} backend at {self.where}: {hint}: HTTP {status}: {message}")

    def _backoff(self, attempt: int, exc: Retryable) -> float:
        """Seconds to wait before retry ``attempt``: never more than ``backoff_max``."""
        if exc.retry_after is not None:
            return min(self.backoff_max, exc.retry_after * (1 + 0.1 * self._rng.random()))
        cap = min(self.backoff_max, self.refused_backoff_max if exc.kind in ("refused", "dns") else self.backoff_max)
        return min(cap, self.backoff_base * 2 ** (attempt - 1)) * (0.5 + 0.5 * self._rng.random())

    async def _complete(self, http, index: int, request: ChatRequest, limiter: _AdaptiveLimit) -> ChatResponse:
        attempt = adaptations = 0
        while True:
            await limiter.acquire()
            outcome = "error"
            try:
                response = await self._attempt(http, request)
                outcome = "ok"
                return response
            except _Adapted:
                adaptations += 1
                if adaptations <= 2 * len(ADAPTABLE) + 2:  # each parameter at most once, then it is the server
                    continue  # not an attempt: the same request in the adapted shape (the limiter is released)
                self.stats.errors += 1
                raise BackendError(f"{self.name} backend at {self.where}: request {index} still rejected after "
                                   f"adapting the request shape {adaptations - 1} times") from None
            except Retryable as exc:
                outcome, failure = exc.kind, exc
                self.stats.transient[exc.kind] = self.stats.transient.get(exc.kind, 0) + 1
                attempt += 1
                if exc.retry_after is not None and exc.retry_after > self.backoff_max:
                    self.stats.errors += 1
                    raise EndpointFault(f"{self.name} backend at {self.where}: {exc.detail}; the server asks to wait "
                                        f"{exc.retry_after:g} s before retrying, more than --max-wait "
                                        f"{self.backoff_max:g} s: run the same command later (every answer received "
                                        "is cached), or raise --max-wait") from None
                if attempt > self.max_retries:
                    self.stats.errors += 1
                    raise gave_up(exc.kind)(f"{self.name} backend at {self.where}: still failing after {attempt} "
                                            f"attempts: {exc.detail}") from None
                self.stats.retries += 1
            except BackendError:
                self.stats.errors += 1
                raise
            finally:
                await limiter.release(outcome)
            await asyncio.sleep(self._backoff(attempt, failure))

    def _account(self, response: ChatResponse) -> None:
        stats = self.stats
        stats.requests += 1
        stats.prompt_tokens += response.prompt_tokens
        stats.completion_tokens += response.completion_tokens
        if self.price_per_million:
            price_in, price_out = self.price_per_million
            cost = (response.prompt_tokens * price_in + response.completion_tokens * price_out) / 1e6
            stats.cost = (stats.cost or 0.0) + cost
            self.budget.spent += cost

    async def _generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        http = self._open()
        self.limiter = limiter = _AdaptiveLimit(self.concurrency)
        # the first request of each kind not yet answered in this shape goes alone (see RequestShape), then the rest
        kinds = [request.sampling.probe_kind() for request in requests]  # once per request, not per delivery
        probes: dict[tuple, int] = {}
        for index, kind in enumerate(kinds):
            if kind not in self.shape.confirmed:
                probes.setdefault(kind, index)
        probe_indices = set(probes.values())
        pending = iter([i for i in range(len(requests)) if i not in probe_indices])

        async def deliver(index: int) -> None:
            response = await self._complete(http, index, requests[index], limiter)
            self.shape.confirmed.add(kinds[index])
            self._account(response)
            on_response(index, response)
            if self.budget.limit is not None and self.budget.spent > self.budget.limit:
                raise CostLimitReached(f"spent {self.budget.spent:.4f}, more than --max-cost {self.budget.limit:g}")

        async def worker() -> None:
            for index in pending:  # shared iterator: each index goes to exactly one worker
                await deliver(index)

        async def probe_then_work() -> None:
            for index in sorted(probe_indices):
                await deliver(index)
            # every worker a task of ``workers``, so that the first failure cancels them all before the client closes
            others = [asyncio.create_task(worker()) for _ in range(min(self.concurrency, len(requests)))]
            workers.extend(others)
            await asyncio.gather(*others)  # raises the first failure of any worker at once

        workers = [asyncio.create_task(probe_then_work())]
        try:
            await workers[0]
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await http.close()

    def generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        if not requests:
            return
        run_coroutine(self._generate(requests, on_response))


def _error_status(error) -> int | None:
    """The HTTP status an error object of a 200 reply carries in ``code`` (OpenRouter, LiteLLM), if any."""
    code = error.get("code") if isinstance(error, Mapping) else None
    try:
        return int(code) if code is not None and 100 <= int(code) < 600 else None
    except (TypeError, ValueError):
        return None


def _token_count(usage, name: str) -> int:
    """A token count of a reply's ``usage``, 0 when ``usage`` or the count is missing or not a whole number >= 0
    (a malformed ``usage`` never fails a good answer)."""
    value = usage.get(name) if isinstance(usage, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        return 0
    return int(value) if float(value).is_integer() else 0


def _error_message(content: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body's start."""
    try:
        body = json.loads(content)
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        if isinstance(body, dict) and message is None:
            message = body.get("message") or body.get("detail")
        if message:
            return str(message)
    except (ValueError, AttributeError):
        pass
    return content[:200].decode("utf-8", "replace")


class AzureOpenAIBackend(OpenAIBackend):
    """Azure OpenAI: ``POST {endpoint}/openai/deployments/{model}/chat/completions?api-version=...`` with the key
    in an ``api-key`` header, as ``openai.AsyncAzureOpenAI`` sends it. ``model`` is the deployment name;
    ``base_url`` the resource endpoint (``https://NAME.openai.azure.com``, default ``AZURE_OPENAI_ENDPOINT``);
    ``api_version`` defaults to ``OPENAI_API_VERSION``; the key comes from ``AZURE_OPENAI_API_KEY``."""

    name = "azure"
    key_variable = "AZURE_OPENAI_API_KEY"

    def __init__(self, model: str, base_url: str | None = None, *args, api_version: str | None = None,
                 **kwargs) -> None:
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION")
        if not self.api_version:
            raise InputError("the azure backend needs an API version: --api-version or OPENAI_API_VERSION "
                             "(e.g. 2024-10-21)")
        super().__init__(model, base_url, *args, **kwargs)

    def _default_base_url(self, base_url: str | None) -> str | None:
        option = "--base-url" if base_url else "AZURE_OPENAI_ENDPOINT"
        base_url = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not base_url:
            raise InputError("the azure backend needs the resource endpoint: --base-url "
                             "https://NAME.openai.azure.com or AZURE_OPENAI_ENDPOINT")
        if not os.environ.get(self.key_variable):
            raise BackendError(f"the azure backend needs {self.key_variable}")
        return check_base_url(base_url, option)

    def cache_params(self) -> dict:
        return {"backend": "azure", "deployment": self.model, "endpoint": self.where}

    def run_info(self) -> dict:
        return {**super().run_info(), "api_version": self.api_version}

    def like(self, model: str, base_url: str | None, concurrency: int | None = None,
             request_shape: RequestShape | Mapping | None = None) -> OpenAIBackend:
        """A judge / juror on the same Azure resource (another deployment) unless it names another endpoint."""
        if base_url is not None and base_url.rstrip("/") != self.where:
            return super().like(model, base_url, concurrency, request_shape)
        return self._same_settings(AzureOpenAIBackend(
            model, self.base_url, concurrency=concurrency or self.concurrency, timeout=self.timeout,
            max_retries=self.max_retries, backoff_base=self.backoff_base, backoff_max=self.backoff_max,
            refused_backoff_max=self.refused_backoff_max, headers=self.extra_headers, request_shape=request_shape,
            price_per_million=self.price_per_million, budget=self.budget, api_version=self.api_version,
            request_shapes=self.request_shapes))

    def _url(self) -> str:
        from urllib.parse import quote

        return (f"{self.where}/openai/deployments/{quote(self.model, safe='')}/chat/completions"
                f"?api-version={quote(self.api_version, safe='')}")

    def _auth_headers(self) -> dict[str, str]:
        return {"api-key": os.environ.get(self.key_variable) or ""}
