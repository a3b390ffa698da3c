"""``--backend ray``: evaluation spread over a Ray cluster (``pip install 'culturebench[ray]'``, imported only here).

Two engines, chosen by the options:

- **HTTP** (one or more ``base_urls``): the requests are fanned out over OpenAI-compatible endpoints by Ray actors,
  ``replicas`` per endpoint, each running the ``openai`` backend's client (same wire format, same retry rules,
  the endpoint's ``concurrency`` shared among its actors). Work is handed out in chunks, two per actor at a time, so
  a slow endpoint takes fewer chunks than a fast one. Each actor method is a Ray streaming generator: responses
  reach the driver (and the response cache) in batches, each within ``RESULTS_WINDOW_S`` of its first. The cache key
  is the ``openai`` backend's: the same model behind another endpoint or another backend answers from the same cache.
- **vLLM** (no ``base_urls``): ``replicas`` vLLM engines of ``tensor_parallel_size`` GPUs each through Ray Data's LLM
  batch processor (``ray.data.llm.vLLMEngineProcessorConfig`` + ``build_processor``); rows stream back to the driver
  with ``Dataset.iter_rows`` and are cached as they come. Each repeated sample is its own row with seed
  ``seed + sample_index`` (as the ``openai`` backend sends it). On a cluster without GPUs the engines run on CPUs
  (vLLM's CPU build on the nodes): one CPU bundle per engine and ``vllm_backend.engine_arguments``' CPU settings.
  ``top_logprobs`` (``--scoring logprobs``) is asked of the engine per row and returned with each answer.

A request that fails for good (after the client's retries; vLLM: a row with ``__inference_error__``) is answered
empty with ``finish_reason`` ``chat.FAILED`` and the job goes on (``MAX_FAILED_ROWS``); a fault of the endpoint
(``backends.EndpointFault``: authentication, unknown model or route, nothing listening, rate limits or server errors
after every retry) stops the run at once with the ``openai`` backend's line.

The driver only ever sends what the cache lacks (``runner.run_requests``), so a killed run resumes with nothing
re-asked. ``address`` connects to a running cluster (``ray start --head`` on one node, ``ray start --address`` on
the others); without it a local Ray is started on this machine (``num_cpus`` CPUs, default all).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from culturebench.errors import InputError
from culturebench.evaluate.models.backends import OpenAIBackend, _AdaptiveLimit
from culturebench.chat import (
    FAILED,
    BackendError,
    BackendStats,
    ChatRequest,
    ChatResponse,
    EndpointFault,
    OnResponse,
    sent_params,
)
from culturebench.evaluate.models.transport import library_for
from culturebench.evaluate.models.vllm_backend import CPU_STEP_TIMEOUT_S, engine_arguments, token_logprobs
from culturebench.evaluate.models.vllm_checks import (
    check_engine_argument_names,
    check_model_folder,
    engine_argument_names,
    vllm_version,
)

CHUNKS_IN_FLIGHT = 2
"""Chunks handed to each HTTP actor at once (one being drained while the next is queued)."""
RESULTS_WINDOW_S = 0.05
"""How long an HTTP actor gathers answers after the first of a batch before it hands the batch to the driver (the
last of a chunk goes at once). Each batch is a Ray object the actor sends through Ray's executor threads: a batch per
wake-up (about 100 per 1,000 answers at 256 in flight) took a quarter of the actor's py-spy samples (issue #65)."""
MAX_FAILED_ROWS = 20
"""Requests that may fail for good (after every retry) before a run stops. Up to this many, each is answered with
an empty text and ``finish_reason`` ``chat.FAILED`` and the run goes on (vLLM: Ray Data's
``should_continue_on_error``): one bad row (a prompt an endpoint's filter refuses, an engine error on one input)
does not end a job of millions; the benchmark scores it as unanswered, the cache does not keep it, and a rerun asks
it again. A setting that fails every row (a wrong key) stops the run after this many."""


def _import_ray():
    try:
        import ray
    except ImportError:
        raise InputError("Ray is not installed: pip install 'culturebench[ray]'") from None
    return ray


class EndpointClient:
    """One Ray actor's share of an endpoint: the ``openai`` backend's client with its own in-flight limit."""

    def __init__(self, backend: OpenAIBackend, api_key: str | None) -> None:
        if api_key:  # this process is the actor's own
            os.environ["OPENAI_API_KEY"] = api_key
        self.backend = backend
        self.http = None
        self.limiter: _AdaptiveLimit | None = None

    def cpu_seconds(self) -> float:
        """CPU time of this actor's process (bench/eval_overhead.py adds it to the driver's)."""
        import time

        return time.process_time()

    async def run(self, items: list[tuple[int, ChatRequest]]):
        """Yield ``(results, stats)`` as items complete (a Ray streaming generator): ``results`` lists ``(index,
        response or None, error or None)`` for the items done since the last yield, gathered for up to
        ``RESULTS_WINDOW_S`` after the first of them and at once when the chunk is done. A request that fails for
        good is a result with its error, ``(message, endpoint)`` (``endpoint``: an ``EndpointFault``, which stops
        the run), and the others go on."""
        import asyncio

        if self.http is None:
            self.http = self.backend._open()
            self.limiter = _AdaptiveLimit(self.backend.concurrency)
        finished: list[tuple] = []
        landed = asyncio.Event()  # ``finished`` holds a result not yet yielded
        complete = asyncio.get_running_loop().create_future()  # every item has its result
        unfinished = len(items)

        async def one(index: int, request: ChatRequest) -> None:
            nonlocal unfinished
            try:
                result = (index, await self.backend._complete(self.http, index, request, self.limiter), None)
            except InputError as exc:  # BackendError included: this row failed for good
                result = (index, None, (str(exc), isinstance(exc, EndpointFault)))
            finished.append(result)
            landed.set()
            unfinished -= 1
            if not unfinished:
                complete.set_result(None)

        tasks = [asyncio.create_task(one(index, request)) for index, request in items]
        try:
            left = len(items)
            while left:
                await landed.wait()
                await asyncio.wait([complete], timeout=RESULTS_WINDOW_S)  # returns at once when the chunk is done
                results = finished[:]
                finished.clear()
                landed.clear()
                left -= len(results)
                yield results, self.backend.stats.copy()
        finally:
            for task in tasks:
                task.cancel()


def vllm_row(index: int, request: ChatRequest, top_logprobs: int | None = None) -> dict:
    """The Ray Data row of one request for the vLLM engine: chat messages and per-row ``sampling_params``."""
    s = request.sampling
    params: dict[str, Any] = {"temperature": float(s.temperature), "max_tokens": int(s.max_tokens),
                              "top_p": float(s.top_p)}
    if s.seed is not None:
        params["seed"] = int(s.seed) + request.sample_index
    if s.stop:
        params["stop"] = list(s.stop)
    if top_logprobs is not None:
        params["logprobs"] = int(top_logprobs)
    return {"index": index, "messages": request.message_dicts(), "sampling_params": params}


def vllm_preprocess(row: dict) -> dict:
    return {"index": row["index"], "messages": row["messages"], "sampling_params": row["sampling_params"]}


def vllm_postprocess(row: dict) -> dict:
    """The engine's output row (``generated_text``, ``num_input_tokens``, ``num_generated_tokens``; with logprobs
    asked, ``generated_tokens`` and ``logprobs``) -> ours, the logprobs as JSON text (``ChatResponse.logprobs``'s
    format) so that Ray Data's columns keep one type."""
    logprobs = token_logprobs(list(row.get("generated_tokens") or []), row.get("logprobs"))
    completion_tokens = int(row.get("num_generated_tokens") or 0)
    return {"index": int(row["index"]), "text": str(row["generated_text"] or ""),
            "prompt_tokens": int(row.get("num_input_tokens") or 0), "completion_tokens": completion_tokens,
            "finish_reason": finish_reason(completion_tokens, (row.get("sampling_params") or {}).get("max_tokens")),
            "logprobs": None if logprobs is None else json.dumps(logprobs)}


def finish_reason(completion_tokens: int, max_tokens: int | None) -> str | None:
    """The finish reason Ray's engine stage does not pass on (its output row has none): vLLM stops a greedy or
    sampled answer at its token limit ("length") or at an end-of-turn token or stop string ("stop"); None when the
    row does not say its limit."""
    if not max_tokens:
        return None
    return "length" if completion_tokens >= int(max_tokens) else "stop"


class RayBackend:
    """See the module docstring. ``engine`` is "http" when ``base_urls`` are given, else "vllm"."""

    name = "ray"

    def __init__(self, model: str, base_urls: Sequence[str] = (), *, address: str | None = None, replicas: int = 1,
                 tensor_parallel_size: int = 1, concurrency: int = 16, timeout: float = 60.0, max_retries: int = 6,
                 num_cpus: int | None = None, batch_size: int = 64, max_failed_rows: int = MAX_FAILED_ROWS,
                 seed: int = 0, engine_args: dict | None = None, **client_options: Any) -> None:
        for option, value in (("replicas", replicas), ("tensor-parallel-size", tensor_parallel_size),
                              ("concurrency", concurrency)):
            if value < 1:
                raise InputError(f"--{option} must be at least 1, got {value}")
        self.model = model
        self.base_urls = [url.rstrip("/") for url in base_urls]
        self.engine = "http" if self.base_urls else "vllm"
        if self.engine == "vllm":
            check_vllm_engine(model, engine_args or {}, local=address is None)
        self._ray = _import_ray()
        self.address = address
        self.replicas = replicas
        self.tensor_parallel_size = tensor_parallel_size
        self.concurrency = concurrency
        self.num_cpus = num_cpus
        self.batch_size = batch_size
        self.seed = seed
        self.engine_overrides = dict(engine_args or {})
        self.engine_platform: str | None = None  # "cuda" or "cpu" once the vLLM engine has started
        self._top_logprobs: int | None = None  # the vLLM engine's; the HTTP engine's live on its endpoints
        self.max_failed_rows = max_failed_rows
        self.failed: list[str] = []
        """The errors of the requests that failed for good so far, in order (one line each)."""
        # One client per endpoint, built here so that bad settings fail before Ray starts.
        self.endpoints = [OpenAIBackend(model, base_url=url, concurrency=concurrency, timeout=timeout,
                                        max_retries=max_retries, **client_options) for url in self.base_urls]
        self.timeout = timeout
        self.max_retries = max_retries
        self.client_options = client_options
        self.stats = BackendStats()
        self._base = BackendStats()  # totals of the actors killed before (their snapshots are gone)
        self._snapshots: dict[int, BackendStats] = {}
        self._actors: list[tuple[int, Any]] | None = None  # (endpoint number, actor handle)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RayBackend(model={self.model!r}, engine={self.engine!r}, replicas={self.replicas})"

    @property
    def top_logprobs(self) -> int | None:
        """``--scoring logprobs``: asked of every endpoint (HTTP engine) or of the vLLM engine per row, returned with
        each answer."""
        return self.endpoints[0].top_logprobs if self.endpoints else self._top_logprobs

    @top_logprobs.setter
    def top_logprobs(self, value: int | None) -> None:
        self._top_logprobs = value
        for endpoint in self.endpoints:
            endpoint.top_logprobs = value

    def cache_params(self) -> dict:
        if self.engine == "http":
            return self.endpoints[0].cache_params()
        params = {"backend": "vllm", "engine": "ray.data.llm", "model": self.model}
        if self._top_logprobs is not None:  # only when set, so that runs without logprobs keep their keys
            params["top_logprobs"] = self._top_logprobs
        return params

    def like(self, model: str, base_url: str | None, request_shape=None) -> OpenAIBackend:
        """A judge / juror / antagonist backend with this one's client settings (and its own request shape)."""
        return OpenAIBackend(model, base_url=base_url, concurrency=self.concurrency, timeout=self.timeout,
                             max_retries=self.max_retries, **{**self.client_options, "request_shape": request_shape})

    # --- the cluster ---
    def connect(self) -> None:
        ray = self._ray
        if ray.is_initialized():
            return
        import logging

        # what ray.init's logging_level asks for, from the start: its notices (a local cluster's token authentication)
        # are not this run's output
        logging.getLogger("ray").setLevel(logging.ERROR)
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR",
                                   "configure_logging": False}
        if self.address:
            options["address"] = self.address
        elif self.num_cpus:
            options["num_cpus"] = self.num_cpus
        elif self.engine == "vllm" and not _local_gpus():
            # the CPU engine: each replica's actor holds a CPU bundle and the chat-template, tokenize and detokenize
            # stages an actor each; with only the machine's cores Ray's read task waits behind them forever
            options["num_cpus"] = (os.cpu_count() or 1) + 4 * self.replicas
        try:
            ray.init(**options)
        except ConnectionError as exc:
            raise InputError(f"cannot connect to the Ray cluster at {self.address}: {' '.join(str(exc).split())}"
                             ) from None

    def cluster(self) -> dict:
        """Nodes, CPUs and GPUs of the connected cluster (run.json)."""
        ray = self._ray
        if not ray.is_initialized():
            return {"address": self.address or "local"}
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        resources = ray.cluster_resources()
        return {"address": self.address or "local", "nodes": len(nodes), "cpus": resources.get("CPU", 0),
                "gpus": resources.get("GPU", 0)}

    def run_info(self) -> dict:
        info = {"engine": self.engine, "ray": getattr(self._ray, "__version__", None), "replicas": self.replicas,
                "cluster": self.cluster(),
                "concurrency": self.concurrency, "timeout_s": self.timeout, "max_retries": self.max_retries}
        if self.engine == "http":
            info["endpoints"] = self.base_urls
            info["http_library"] = ", ".join(sorted({library_for(url) for url in self.base_urls}))
            info["sampling_sent"] = sent_params(self.stats.sent)  # as the actors' clients sent them
        else:
            info["tensor_parallel_size"] = self.tensor_parallel_size
            info["batch_size"] = self.batch_size
            info["platform"] = self.engine_platform
            info["vllm"] = vllm_version()  # the driver's (the nodes run the same build)
            info["engine_args"] = self._engine_kwargs(self.engine_platform or "cuda")
        return info

    def _engine_kwargs(self, platform: str) -> dict:
        """The engine arguments each replica gets (``vllm_backend.engine_arguments`` without the model, which Ray's
        config names ``model_source``)."""
        arguments = engine_arguments(platform, self.model, tensor_parallel_size=self.tensor_parallel_size,
                                     seed=self.seed, overrides=self.engine_overrides)
        arguments.pop("model")
        return arguments

    def close(self) -> None:
        """Kill the HTTP actors (a later ``generate`` starts new ones)."""
        with self._lock:
            actors, self._actors = self._actors, None
            for snapshot in self._snapshots.values():
                self._add(self._base, snapshot)
            self._snapshots.clear()
        for _, actor in actors or []:
            self._ray.kill(actor)

    # --- generate ---
    def generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        if not requests:
            return
        self.connect()
        if self.engine == "http":
            self._generate_http(requests, on_response)
        else:
            self._generate_vllm(requests, on_response)

    def _row_failed(self, index: int, error: str, on_response: OnResponse) -> None:
        """A request that failed for good: answered empty (``chat.FAILED``) and the run goes on, until more than
        ``max_failed_rows`` have failed in this backend's life; then the run stops with the first error."""
        self.failed.append(" ".join(str(error).split())[:300])
        if len(self.failed) > self.max_failed_rows:
            raise BackendError(f"ray backend: stopped after {len(self.failed)} requests failed for good (more than "
                               f"{self.max_failed_rows}); the first: {self.failed[0]}; every answer received is "
                               "cached: run the same command again to ask only the rest")
        on_response(index, ChatResponse(text="", finish_reason=FAILED))

    def _start_actors(self) -> list[tuple[int, Any]]:
        if self._actors is None:
            ray = self._ray
            remote = ray.remote(num_cpus=0.1, scheduling_strategy="SPREAD")(EndpointClient)
            key = os.environ.get("OPENAI_API_KEY")
            actors = []
            for number, endpoint in enumerate(self.endpoints):
                client = endpoint.like(endpoint.model, endpoint.base_url,
                                       concurrency=max(1, endpoint.concurrency // self.replicas))
                client.top_logprobs = endpoint.top_logprobs
                actors += [(number, remote.remote(client, key)) for _ in range(self.replicas)]
            self._actors = actors
        return self._actors

    @staticmethod
    def _add(total: BackendStats, part: BackendStats) -> None:
        total.retries += part.retries
        total.errors += part.errors
        for counts, more in ((total.transient, part.transient), (total.sent, part.sent)):
            for kind, count in more.items():
                counts[kind] = counts.get(kind, 0) + count

    def _refresh_stats(self) -> None:
        """Retries, errors, retried-error kinds and sampling sent: the killed actors' totals plus each live actor's
        last snapshot."""
        merged = BackendStats()
        for part in (self._base, *self._snapshots.values()):
            self._add(merged, part)
        self.stats.retries, self.stats.errors, self.stats.transient = merged.retries, merged.errors, merged.transient
        self.stats.sent = merged.sent

    def _generate_http(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        ray = self._ray
        actors = self._start_actors()
        chunk = max(1, self.concurrency // self.replicas)
        chunks: Iterator[list[tuple[int, ChatRequest]]] = iter(
            [list(enumerate(requests))[start:start + chunk] for start in range(0, len(requests), chunk)])
        failure: list[BaseException] = []
        stop = threading.Event()

        def drive(slot: int, actor) -> None:
            try:
                while not stop.is_set():
                    with self._lock:
                        items = next(chunks, None)
                    if items is None:
                        return
                    for ref in actor.run.remote(items):
                        results, snapshot = ray.get(ref)
                        with self._lock:
                            if _events(snapshot) >= _events(self._snapshots.get(slot)):  # two threads per actor
                                self._snapshots[slot] = snapshot
                            self._refresh_stats()
                            for index, response, error in results:
                                if error is not None:
                                    message, endpoint = error
                                    if endpoint:  # the endpoint or the settings: the openai backend's line
                                        raise EndpointFault(message)
                                    self._row_failed(index, message, on_response)
                                    continue
                                self.stats.requests += 1
                                self.stats.prompt_tokens += response.prompt_tokens
                                self.stats.completion_tokens += response.completion_tokens
                                on_response(index, response)
                        if stop.is_set():
                            return
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                if not stop.is_set():
                    failure.append(exc)
                stop.set()

        threads = [threading.Thread(target=drive, args=(slot, actor), name=f"ray-endpoint-{number}", daemon=True)
                   for slot, (number, actor) in enumerate(actors) for _ in range(CHUNKS_IN_FLIGHT)]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)  # short joins: Ctrl-C reaches this thread
        except BaseException:
            stop.set()
            self.close()
            raise
        if failure:
            self.close()
            error = failure[0]
            if isinstance(error, (BackendError, InputError, KeyboardInterrupt)):
                raise error
            raise BackendError(f"ray backend: {type(error).__name__}: {' '.join(str(error).split())[:300]}")

    def _generate_vllm(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        ray = self._ray
        needed = self.replicas * self.tensor_parallel_size
        gpus = ray.cluster_resources().get("GPU", 0)
        if 0 < gpus < needed:
            raise InputError(f"the ray backend's vLLM engine needs {needed} GPU(s) ({self.replicas} replicas x "
                             f"tensor-parallel size {self.tensor_parallel_size}) and the Ray cluster has {gpus:g} "
                             "(give --base-url to send the requests to OpenAI-compatible servers instead)")
        self.engine_platform = "cuda" if gpus else "cpu"
        try:
            from ray.data import llm

            build = getattr(llm, "build_processor", None) or llm.build_llm_processor  # the name before Ray 2.5x
            config_class = llm.vLLMEngineProcessorConfig
        except (ImportError, AttributeError) as exc:
            raise InputError(f"ray.data.llm is not usable ({exc}): pip install 'culturebench[ray,vllm]'") from None
        # on CPUs: a CPU bundle (without it the stage waits for a GPU forever) and the CPU step timeout
        placement = ({"placement_group_config": {"bundles": [{"CPU": 1}] * self.tensor_parallel_size},
                      "runtime_env": {"env_vars": {"VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": os.environ.get(
                          "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", str(CPU_STEP_TIMEOUT_S))}}}
                     if self.engine_platform == "cpu" else {})
        config = config_class(model_source=self.model, concurrency=self.replicas, batch_size=self.batch_size,
                              engine_kwargs=self._engine_kwargs(self.engine_platform),
                              should_continue_on_error=True,  # a failed row comes back with __inference_error__
                              log_engine_metrics=False,  # its import needs ray[llm]'s extras; the runner counts
                              **placement)
        processor = build(config, preprocess=vllm_preprocess, postprocess=vllm_postprocess)
        ray.data.DataContext.get_current().enable_progress_bars = False  # the runner shows its own
        dataset = ray.data.from_items([vllm_row(index, request, self._top_logprobs)
                                       for index, request in enumerate(requests)])
        for row in processor(dataset).iter_rows():
            if row.get("__inference_error__"):  # such rows skip the postprocess
                self._row_failed(int(row["index"]), row["__inference_error__"], on_response)
                continue
            logprobs = row.get("logprobs")
            response = ChatResponse(text=row["text"], prompt_tokens=int(row["prompt_tokens"]),
                                    completion_tokens=int(row["completion_tokens"]),
                                    finish_reason=row.get("finish_reason"),
                                    logprobs=None if logprobs is None else _as_tuples(json.loads(logprobs)))
            self.stats.requests += 1
            self.stats.prompt_tokens += response.prompt_tokens
            self.stats.completion_tokens += response.completion_tokens
            on_response(int(row["index"]), response)


def check_vllm_engine(model: str, engine_args: dict, local: bool) -> None:
    """Before Ray starts: ``--engine-args`` names vLLM takes (where vLLM is installed on this machine, as the driver
    of Ray's vLLM engine needs it) and, on a local Ray, the model folder (``vllm_checks``)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        check_engine_argument_names(engine_args, engine_argument_names())
    if local:
        check_model_folder(model)


def _as_tuples(value):
    """JSON lists back into the nested tuples of ``ChatResponse.logprobs``."""
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list) else value


def _local_gpus() -> int:
    """CUDA GPUs this machine has (0 without torch or CUDA): decides the local Ray's CPUs for the vLLM engine."""
    try:
        import torch

        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except ImportError:
        return 0


def _events(stats: BackendStats | None) -> int:
    """Answered, retried and failed requests so far: grows with every snapshot an actor sends, so the newest wins
    when the actor's two driver threads hand theirs over out of order (answers alone once left an older snapshot, with
    fewer ``sent`` counts, in place of a newer one)."""
    return -1 if stats is None else stats.errors + sum(stats.transient.values()) + sum(stats.sent.values())
