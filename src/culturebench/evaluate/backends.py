"""Model backends: one interface, batches of chat requests -> responses with token usage.

- ``openai``: any OpenAI-compatible endpoint (OpenAI, vLLM's ``vllm serve``, llama.cpp's server) over ``aiohttp``,
  asynchronous with a bounded number of requests in flight.
- ``vllm``: offline ``vllm.LLM`` with batched ``LLM.chat`` (optional extra, imported only when used).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
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
    """Stop sequences (none by default; WVB App. B stops at a blank line)."""


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


# --------------------------------------------------------------------------------------------------------------
# Implementations
# --------------------------------------------------------------------------------------------------------------


class BackendError(InputError):
    """A model call that cannot succeed (bad key, unknown model, server still failing after every retry).

    One line, never the API key; an ``InputError`` so that the command line reports it without a traceback."""


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

    def copy(self) -> BackendStats:
        return replace(self, transient=dict(self.transient))

    def minus(self, before: BackendStats) -> BackendStats:
        """What happened since the snapshot ``before``."""
        out = BackendStats()
        for f in fields(self):
            now, then = getattr(self, f.name), getattr(before, f.name)
            if f.name == "transient":
                out.transient = {k: v - then.get(k, 0) for k, v in now.items() if v - then.get(k, 0)}
            elif f.name == "cost":
                out.cost = None if now is None else now - (then or 0.0)
            else:
                setattr(out, f.name, now - then)
        return out


def _one_line(text: object, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


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


class _Retryable(Exception):
    def __init__(self, kind: str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.retry_after = kind, detail, retry_after


def _run_coroutine(coro):
    """``asyncio.run``, or the same in a helper thread when this thread already runs an event loop (notebooks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    result: dict = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=target, name="culturebench-backend")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result.get("value")


DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class _Http:
    session: object  # aiohttp.ClientSession
    url: str
    headers: dict = field(repr=False)
    timeout: object  # aiohttp.ClientTimeout


class _AdaptiveLimit:
    """At most ``limit`` requests in flight, lowered on timeouts and raised back on successes (AIMD).

    A server that answers fewer requests at once than we send (llama.cpp's server answers one at a time) makes the
    queued ones time out; halving the limit on a timeout and adding one back after ``limit`` successes in a row
    lets such a run slow down to what the server can take instead of failing."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.limit = maximum
        self.in_flight = 0
        self._successes = 0
        self._free = asyncio.Condition()

    async def acquire(self) -> None:
        async with self._free:
            while self.in_flight >= self.limit:
                await self._free.wait()
            self.in_flight += 1

    async def release(self, outcome: str) -> None:
        """``outcome``: "ok", "timeout" (lower the limit) or anything else (no change)."""
        async with self._free:
            self.in_flight -= 1
            if outcome == "timeout":
                self.limit = max(1, min(self.limit, self.in_flight + 1) // 2)
                self._successes = 0
            elif outcome == "ok" and self.limit < self.maximum:
                self._successes += 1
                if self._successes >= self.limit:
                    self.limit, self._successes = self.limit + 1, 0
            self._free.notify_all()


def _token_logprobs(logprobs: dict | None) -> tuple | None:
    """A choice's ``logprobs.content`` (OpenAI's chat format, also vLLM's) as ``ChatResponse.logprobs``."""
    content = (logprobs or {}).get("content")
    if not content:
        return None
    return tuple((str(t["token"]), float(t["logprob"]),
                  tuple((str(a["token"]), float(a["logprob"])) for a in t.get("top_logprobs") or ()))
                 for t in content)


class OpenAIBackend:
    """Any OpenAI-compatible chat endpoint (``POST {base_url}/chat/completions``) through ``aiohttp``.

    ``concurrency`` requests in flight at most, a per-request ``timeout`` (seconds, whole request), and retries: 429,
    408/409, 5xx, timeouts, connection errors and malformed replies are retried up to ``max_retries`` times with
    exponential backoff and jitter (a server's ``Retry-After`` is honoured, capped at ``backoff_max``); a refused
    connection (nothing listening) is retried with short waits (at most ``refused_backoff_max`` each) and then
    reported as such; any other 4xx fails at once. A timeout also halves the requests in flight (see
    ``_AdaptiveLimit``): a server slower than expected slows the run down instead of failing it.

    The wire format is the OpenAI chat-completions JSON, sent with ``aiohttp`` directly: through the official
    ``openai`` client (httpx models, URL parsing, option copies) ``bench/eval_overhead.py`` measured 1.35-1.99 ms of
    harness CPU per request, this way 0.37-0.44 ms, run after run on the same machine; that CPU is what capped
    throughput at high concurrency. The API key comes from ``OPENAI_API_KEY``
    only (``"EMPTY"`` when unset, for local servers; without ``base_url`` the key is required) and is never stored
    here or logged. ``base_url`` defaults to ``OPENAI_BASE_URL``, else OpenAI's.

    Every request is sent with ``n=1``; repeated samples (``sample_index`` > 0) with a fixed ``seed`` are sent
    with ``seed + sample_index`` so that they differ.
    """

    name = "openai"
    http_library = "aiohttp"

    def __init__(self, model: str, base_url: str | None = None, concurrency: int = 16, timeout: float = 60.0,
                 max_retries: int = 6, price_per_million: tuple[float, float] | None = None, *,
                 backoff_base: float = 0.5, backoff_max: float = 60.0, refused_backoff_max: float = 0.5,
                 top_logprobs: int | None = None) -> None:
        if concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {concurrency}")
        if max_retries < 0:
            raise InputError(f"max_retries must be 0 or more, got {max_retries}")
        if not timeout > 0:
            raise InputError(f"timeout must be more than 0 seconds, got {timeout}")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if base_url is None and not os.environ.get("OPENAI_API_KEY"):
            raise BackendError("no --base-url given and OPENAI_API_KEY is not set: set the key to use OpenAI's API, "
                               "or give the endpoint of a local server (e.g. --base-url http://127.0.0.1:8080/v1)")
        self.model = model
        self.base_url = base_url
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.price_per_million = price_per_million
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.refused_backoff_max = refused_backoff_max
        self.top_logprobs = top_logprobs  # ask for logprobs with this many alternatives per token (--scoring logprobs)
        self.stats = BackendStats(cost=0.0 if price_per_million else None)
        self.limiter: _AdaptiveLimit | None = None  # of the running ``generate`` (the progress bar shows its limit)
        self._rng = random.Random()

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, concurrency={self.concurrency})"

    def cache_params(self) -> dict:
        if self.top_logprobs is None:  # only when set, so that runs without logprobs keep their keys
            return {"backend": "openai", "model": self.model}
        return {"backend": "openai", "model": self.model, "top_logprobs": self.top_logprobs}

    def run_info(self) -> dict:
        """What run.json records about this backend beyond its cache parameters (no secrets)."""
        return {"base_url": self.where, "concurrency": self.concurrency, "timeout_s": self.timeout,
                "max_retries": self.max_retries, "http_library": self.http_library}

    def like(self, model: str, base_url: str | None, concurrency: int | None = None) -> OpenAIBackend:
        """A backend for another model / endpoint with this one's settings (concurrency, timeout, retries)."""
        return OpenAIBackend(model, base_url=base_url, concurrency=concurrency or self.concurrency, timeout=self.timeout,
                             max_retries=self.max_retries, backoff_base=self.backoff_base,
                             backoff_max=self.backoff_max, refused_backoff_max=self.refused_backoff_max)

    @property
    def where(self) -> str:
        return (self.base_url or DEFAULT_BASE_URL).rstrip("/")

    # --- the HTTP session ---
    def _open(self) -> _Http:
        """The HTTP session of one ``generate`` call (the key is read here and kept only in the session's headers)."""
        import aiohttp

        # no TLS context for plain-http endpoints (building one loads the CA store: 0.1 s of CPU per run)
        plain = self.where.startswith("http://")
        connector = aiohttp.TCPConnector(limit=self.concurrency, ttl_dns_cache=300, **({"ssl": False} if plain else {}))
        headers = {"Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY') or 'EMPTY'}",
                   "Content-Type": "application/json", "Accept": "application/json"}
        return _Http(aiohttp.ClientSession(connector=connector), f"{self.where}/chat/completions", headers,
                     aiohttp.ClientTimeout(total=self.timeout))

    def _request_body(self, request: ChatRequest) -> bytes:
        s = request.sampling
        body = {"model": self.model, "messages": request.message_dicts(), "temperature": s.temperature,
                "max_tokens": s.max_tokens, "top_p": s.top_p}
        if s.seed is not None:
            body["seed"] = s.seed + request.sample_index
        if s.stop:
            body["stop"] = list(s.stop)
        if self.top_logprobs is not None:
            body["logprobs"], body["top_logprobs"] = True, self.top_logprobs
        return json.dumps(body, ensure_ascii=False).encode()

    # --- one request ---
    async def _attempt(self, http: _Http, request: ChatRequest) -> ChatResponse:
        import aiohttp

        try:
            async with http.session.post(http.url, data=self._request_body(request), headers=http.headers,
                                         timeout=http.timeout) as reply:
                content = await reply.read()
                status, headers = reply.status, reply.headers
        except TimeoutError:
            raise _Retryable("timeout", f"no reply within {self.timeout:g} s (--timeout)") from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, ConnectionRefusedError):
                raise _Retryable("refused", f"connection refused: nothing is listening at {self.where}") from None
            raise _Retryable("connection", f"connection error: {_one_line(exc)}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise _Retryable("connection", f"connection error: {_one_line(exc) or type(exc).__name__}") from None
        if status >= 400:
            detail = f"HTTP {status}: {_one_line(_error_message(content))}"
            if status in (408, 409, 429) or status >= 500:
                raise _Retryable(str(status), detail, _retry_after(headers))
            raise self._fatal(status, content)
        return self._parse(content)

    @staticmethod
    def _parse(content: bytes) -> ChatResponse:
        try:
            body = json.loads(content)
        except ValueError:
            raise _Retryable("malformed", f"malformed reply (not JSON): {_one_line(content[:80])}") from None
        try:
            choice = body["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content")
            finish_reason = choice.get("finish_reason")
            if text is None:
                if message.get("refusal") is None and finish_reason != "content_filter":
                    raise _Retryable("malformed", "malformed reply: no message content")
                text = message.get("refusal") or ""
            if not isinstance(text, str):
                raise _Retryable("malformed", "malformed reply: message content is not text")
            usage = body.get("usage") or {}
            return ChatResponse(text=text, prompt_tokens=int(usage.get("prompt_tokens") or 0),
                                completion_tokens=int(usage.get("completion_tokens") or 0),
                                finish_reason=finish_reason, logprobs=_token_logprobs(choice.get("logprobs")))
        except (KeyError, IndexError, TypeError, AttributeError, ValueError):
            raise _Retryable("malformed", "malformed reply: no choices") from None

    def _fatal(self, status: int, content: bytes) -> BackendError:
        message = _one_line(_error_message(content))
        if status == 401:
            hint = "authentication failed (check OPENAI_API_KEY)"
        elif status == 403:
            hint = "permission denied"
        elif status == 404:
            hint = f"model {self.model!r} not found (or no chat completions route)"
        else:
            hint = "request refused"
        return BackendError(f"openai backend at {self.where}: {hint}: HTTP {status}: {message}")

    def _backoff(self, attempt: int, exc: _Retryable) -> float:
        if exc.retry_after is not None:
            return min(self.backoff_max, exc.retry_after) * (1 + 0.1 * self._rng.random())
        cap = self.refused_backoff_max if exc.kind == "refused" else self.backoff_max
        return min(cap, self.backoff_base * 2 ** (attempt - 1)) * (0.5 + 0.5 * self._rng.random())

    async def _complete(self, http: _Http, index: int, request: ChatRequest, limiter: _AdaptiveLimit) -> ChatResponse:
        attempt = 0
        while True:
            await limiter.acquire()
            outcome = "error"
            try:
                response = await self._attempt(http, request)
                outcome = "ok"
                return response
            except _Retryable as exc:
                outcome, failure = exc.kind, exc
                self.stats.transient[exc.kind] = self.stats.transient.get(exc.kind, 0) + 1
                attempt += 1
                if attempt > self.max_retries:
                    self.stats.errors += 1
                    raise BackendError(f"openai backend at {self.where}: request {index} still failing after "
                                       f"{attempt} attempts: {exc.detail}") from None
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
            stats.cost = (stats.cost or 0.0) + (response.prompt_tokens * price_in
                                                + response.completion_tokens * price_out) / 1e6

    async def _generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        http = self._open()
        self.limiter = limiter = _AdaptiveLimit(self.concurrency)
        pending = iter(range(len(requests)))

        async def worker() -> None:
            for index in pending:  # shared iterator: each index goes to exactly one worker
                response = await self._complete(http, index, requests[index], limiter)
                self._account(response)
                on_response(index, response)

        workers = [asyncio.create_task(worker()) for _ in range(min(self.concurrency, len(requests)))]
        try:
            done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await http.session.close()

    def generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        if not requests:
            return
        _run_coroutine(self._generate(requests, on_response))


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


class VLLMBackend:
    """Offline ``vllm.LLM`` on the local GPU(s), batched ``LLM.chat``.

    Requests that share messages and sampling (repeated samples) become one conversation with
    ``SamplingParams(n=K)``; output ``k`` goes to the ``k``-th of them in ``sample_index`` order (greedy requests
    are generated once and copied). ``batch_size`` conversations go to ``LLM.chat`` at a time, so responses reach
    ``on_response`` (and the cache) batch by batch.
    """

    name = "vllm"

    def __init__(self, model: str, tensor_parallel_size: int = 1, dtype: str = "auto",
                 max_model_len: int | None = None, gpu_memory_utilization: float = 0.9, seed: int = 0, *,
                 batch_size: int = 1024) -> None:
        try:
            import vllm
        except ImportError:
            raise InputError("vLLM is not installed: pip install 'culturebench[vllm]'") from None
        try:
            import torch

            has_gpu = bool(torch.cuda.is_available())
        except ImportError:
            has_gpu = False
        if not has_gpu:
            raise InputError("the vllm backend needs a CUDA GPU and none is available "
                             "(use the openai backend against a server instead)")
        self.model = model
        self.dtype = dtype
        self.seed = seed
        self.batch_size = batch_size
        self.stats = BackendStats()
        self._vllm = vllm
        kwargs = {"model": model, "tensor_parallel_size": tensor_parallel_size, "dtype": dtype,
                  "gpu_memory_utilization": gpu_memory_utilization, "seed": seed}
        if max_model_len is not None:
            kwargs["max_model_len"] = max_model_len
        self.llm = vllm.LLM(**kwargs)

    def cache_params(self) -> dict:
        return {"backend": "vllm", "model": self.model, "dtype": self.dtype, "seed": self.seed}

    def generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        groups: dict[tuple, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault((request.messages, request.sampling), []).append(index)
        items = [(key, sorted(indices, key=lambda i: requests[i].sample_index)) for key, indices in groups.items()]
        for start in range(0, len(items), self.batch_size):
            batch = items[start:start + self.batch_size]
            conversations, params = [], []
            for (messages, sampling), indices in batch:
                conversations.append([{"role": role, "content": content} for role, content in messages])
                n = 1 if sampling.temperature == 0 else len(indices)
                stop = {"stop": list(sampling.stop)} if sampling.stop else {}
                params.append(self._vllm.SamplingParams(n=n, temperature=sampling.temperature,
                                                        max_tokens=sampling.max_tokens, top_p=sampling.top_p,
                                                        seed=sampling.seed, **stop))
            outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=False)
            if len(outputs) != len(batch):
                raise BackendError(f"vllm returned {len(outputs)} outputs for {len(batch)} conversations")
            for (_, indices), output in zip(batch, outputs):
                prompt_tokens = len(getattr(output, "prompt_token_ids", None) or [])
                for k, index in enumerate(indices):
                    sample = output.outputs[k if len(output.outputs) > 1 else 0]
                    response = ChatResponse(text=sample.text, prompt_tokens=prompt_tokens,
                                            completion_tokens=len(sample.token_ids or []),
                                            finish_reason=sample.finish_reason)
                    self.stats.requests += 1
                    self.stats.prompt_tokens += response.prompt_tokens
                    self.stats.completion_tokens += response.completion_tokens
                    on_response(index, response)
