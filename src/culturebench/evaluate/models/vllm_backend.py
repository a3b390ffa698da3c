"""``--backend vllm``: offline ``vllm.LLM`` wherever vLLM has a platform: a CUDA GPU (``pip install
'culturebench[vllm]'``) or a machine without one through vLLM's CPU build (docs/evaluating.md, "vLLM without a GPU"). vLLM is
imported only when this backend is used, and the engine started only when a request is not in the cache.

The engine arguments are ``engine_arguments``'s: the model, tensor parallelism and seed, on the CPU platform the
settings it needs (``CPU_ENGINE_DEFAULTS``), then the user's ``--engine-args``, checked before vLLM is imported
(``vllm_checks``); run.json records them with the platform and the vLLM and torch versions
(``VLLMBackend.run_info``). Ray's vLLM engine (``ray_backend.py``) builds its engines from the same arguments. The
engine's processes, signals and log are ``vllm_process``'s.
"""

from __future__ import annotations

import atexit
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from culturebench.errors import InputError
from culturebench.evaluate.models import vllm_process
from culturebench.chat import BackendError, BackendStats, ChatRequest, ChatResponse, OnResponse
from culturebench.evaluate.models.vllm_checks import (
    INSTALL_HINT,
    check_engine_argument_names,
    check_model_folder,
    engine_argument_names,
    parse_engine_args,
    vllm_package_folder,
    vllm_version,
)

__all__ = ["INSTALL_HINT", "VLLMBackend", "engine_arguments", "import_vllm", "parse_engine_args", "vllm_platform"]

CPU_KV_CACHE_BYTES = 1 << 30
"""KV cache the CPU platform reserves unless ``--engine-args`` says otherwise. vLLM's CPU default reserves
``gpu_memory_utilization`` (0.92) of the NUMA node's memory less what the process holds, which fails to start when
other processes use that node ("less than desired CPU memory utilization": seen here); 1 GiB holds about 46,000
tokens of SmolLM2-135M (30 layers x 3 KV heads x 64 dims, bf16) and 37,000 of Qwen2.5-1.5B (28 x 2 x 128),
more than a batch of these benchmarks' prompts needs."""
CPU_ENGINE_DEFAULTS = {"enforce_eager": True, "kv_cache_memory_bytes": CPU_KV_CACHE_BYTES,
                       "enable_chunked_prefill": False}
"""The CPU platform's engine arguments: eager mode, since torch.compile's graphs cost about 85 s cold on CPU
(issue #42's measurement) for no gain on these short answers; the KV cache above; and no chunked prefill. vLLM
0.32's model runner rewinds a seeded request's random generator after each partial prefill
(``gen.set_offset(gen.get_offset() - 4)``), which a CPU ``torch.Generator`` refuses ("CPU Generator does not use
offset"): with its CPU default of 4,096 batched tokens, any sampled batch over 4,096 prompt tokens killed the engine
(issue #52). Without chunked prefill vLLM schedules whole prompts only and raises ``max_num_batched_tokens`` to the
model's length, so no prefill is partial."""
CPU_STEP_TIMEOUT_S = 3600
"""vLLM's ``VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS`` on the CPU platform unless set: its default of 300 s killed the
engine ("RPC call to execute_model timed out") during the first step of the issue's sampled run (72 prompts, 6,052
tokens in one prefill, bf16 on an AVX2-only CPU with 2 cores under a load of 21); on a CPU a long step is compute,
not a hung worker, and a dead worker is noticed by its process ending, at once."""
START_WAIT = "about a minute on a quiet CPU machine, several on a busy one or for a large model"
"""What the start line says the engine's start takes: issue #52 measured 50-60 s for SmolLM2-135M on a quiet 2-core
machine; here, under a load of 20-25 on the same 2 cores, ``import vllm`` alone took 52 s and ``vllm.LLM(...)`` 314 s
(run.json's ``engine_load_s``)."""

UNUSED_FLAGS = ("concurrency", "timeout", "max_wait")
"""``evaluate`` flags of the HTTP backends that do nothing here (run.json does not record them for this backend)."""

_ENGINES: dict[str, Any] = {}
"""Loaded engines by their arguments: a second run in the same process (a notebook, the tests) reuses one."""
_PROCESSES: dict[str, vllm_process.EngineProcesses] = {}
"""The processes of each loaded engine, by the same key."""


def shutdown_engines() -> None:
    """Stop every loaded engine's core process (registered at exit): left to vLLM's own exit hooks, they are
    force-killed with warnings and a leaked shared-memory segment reported on stderr."""
    while _ENGINES:
        key, llm = _ENGINES.popitem()
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            try:
                core.shutdown()
            except Exception:  # noqa: BLE001 - an engine already dead (killed on a signal): its processes go below
                pass
        processes = _PROCESSES.pop(key, None)
        if processes is not None:
            processes.kill()


def forget_engine(key: str) -> None:
    """Kill one engine's processes and drop it (after a signal: the engine is not reused)."""
    processes = _PROCESSES.pop(key, None)
    if processes is not None:
        processes.kill()
    _ENGINES.pop(key, None)


def import_vllm(level: str = "ERROR"):
    """The ``vllm`` module (its logging at ``level`` unless ``VLLM_LOGGING_LEVEL`` says otherwise: ERROR on the
    terminal, where the run prints its own progress; INFO into a log file), or an InputError saying what to
    install."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", level)
    try:
        import vllm
    except ImportError:
        raise InputError(f"vLLM is not installed: {INSTALL_HINT}") from None
    return vllm


def vllm_platform() -> str:
    """The device vLLM runs on here ("cuda", "cpu", "rocm", ...), or an InputError where it has no platform."""
    from vllm.platforms import current_platform

    if current_platform.is_unspecified() or not current_platform.device_type:
        raise InputError(f"vLLM has no platform on this machine (no GPU it supports, and not its CPU build): "
                         f"{INSTALL_HINT}")
    return str(current_platform.device_type)


def engine_arguments(platform: str, model: str, *, tensor_parallel_size: int = 1, seed: int = 0,
                     overrides: Mapping[str, Any] | None = None) -> dict:
    """``vllm.LLM``'s keyword arguments: the model, tensor parallelism and seed, ``CPU_ENGINE_DEFAULTS`` on the CPU
    platform, then ``overrides`` (``--engine-args``), which win."""
    arguments: dict[str, Any] = {"model": model, "tensor_parallel_size": tensor_parallel_size, "seed": seed}
    if platform == "cpu":
        arguments.update(CPU_ENGINE_DEFAULTS)
    arguments.update(overrides or {})
    return arguments


def check_engine_request(model: str, engine_args: Mapping[str, Any]) -> None:
    """What can be checked before vLLM is imported (``vllm_checks``): vLLM installed, the engine argument names,
    the model folder; an InputError in one line."""
    vllm_package_folder()
    check_engine_argument_names(engine_args, engine_argument_names())
    check_model_folder(model)


def token_logprobs(token_ids: Sequence[int], steps: Sequence[Mapping] | None) -> tuple | None:
    """vLLM's per-token logprobs (for each generated token, a mapping token id -> ``Logprob`` or its dict:
    ``logprob``, ``rank``, ``decoded_token``) as ``ChatResponse.logprobs``: (token, logprob, alternatives by rank),
    the format the openai backend reads from OpenAI's ``logprobs.content``."""
    if not steps:
        return None
    out = []
    for token_id, step in zip(token_ids, steps):
        entries = {int(k): (v if isinstance(v, Mapping) else vars(v)) for k, v in step.items()}
        chosen = entries.get(int(token_id))
        if chosen is None:
            return None
        ranked = sorted(entries.values(), key=lambda e: e.get("rank") or 0)
        out.append((str(chosen["decoded_token"]), float(chosen["logprob"]),
                    tuple((str(e["decoded_token"]), float(e["logprob"])) for e in ranked)))
    return tuple(out)


def model_label(model: str) -> str:
    """How a run names the model the engine loads from ``model``: a local folder by its name (the name
    ``culturebench serve-local --engine vllm`` serves it under, so that the same model offline and over HTTP is one
    model in ``compare``), a Hub id as given."""
    return Path(model).name if Path(model).is_dir() else model


class VLLMBackend:
    """Offline ``vllm.LLM``, driven step by step.

    Requests that share messages and sampling (repeated samples) become one conversation with
    ``SamplingParams(n=K)``; output ``k`` goes to the ``k``-th of them in ``sample_index`` order (greedy requests
    are generated once and copied). Up to ``batch_size`` conversations are in the engine at a time
    (``LLM.enqueue_chat``, topped up as they finish) and each one reaches ``on_response`` (and the cache) as soon as
    the engine finishes it (``LLMEngine.step``): an interrupt loses only the conversations in flight. The engine
    starts at the first ``generate`` with something to ask, so a run whose answers are all cached loads nothing.
    ``top_logprobs`` (``--scoring logprobs``) asks the engine for that many alternatives per generated token
    (``SamplingParams.logprobs``). ``log_dir``: where vLLM's output goes (``vllm_process.LOG_NAME``), the run folder.
    """

    name = "vllm"

    def __init__(self, model: str, tensor_parallel_size: int = 1, seed: int = 0, *,
                 engine_args: Mapping[str, Any] | None = None, batch_size: int = 256,
                 log_dir: Path | None = None) -> None:
        self.model = model_label(model)  # the label of the run's metrics and plots, as `vllm serve` names it
        self.model_source = model
        self.tensor_parallel_size = tensor_parallel_size
        self.seed = seed
        self.batch_size = batch_size
        self.top_logprobs: int | None = None
        self.engine_overrides = dict(engine_args or {})
        self.log_dir = None if log_dir is None else Path(log_dir)
        self.stats = BackendStats()
        check_engine_request(model, self.engine_overrides)
        self.platform: str | None = None
        self.engine_args: dict | None = None
        self.load_s: float | None = None
        self.llm = None
        self._key: str | None = None
        self._vllm = None

    @property
    def log_path(self) -> Path | None:
        return None if self.log_dir is None else self.log_dir / vllm_process.LOG_NAME

    def cache_params(self) -> dict:
        params = {"backend": "vllm", "model": self.model_source, "dtype": self.engine_overrides.get("dtype", "auto"),
                  "seed": self.seed}
        if self.top_logprobs is not None:  # only when set, so that runs without logprobs keep their keys
            params["top_logprobs"] = self.top_logprobs
        return params

    def run_info(self) -> dict:
        """The engine, platform, library versions and engine arguments (run.json's ``backend``); an engine not
        started (every answer cached) is recorded as such, with the arguments it would have had."""
        from importlib import metadata

        try:
            torch_version = metadata.version("torch")
        except metadata.PackageNotFoundError:
            torch_version = None
        info = {"engine": "vllm.LLM", "platform": self.platform, "vllm": vllm_version(), "torch": torch_version,
                "engine_args": self.engine_args, "engine_load_s": self.load_s, "batch_size": self.batch_size,
                "started": self.llm is not None}
        if self.engine_args is None:
            info["engine_args"] = {"model": self.model_source, "tensor_parallel_size": self.tensor_parallel_size,
                                   "seed": self.seed, **self.engine_overrides}
        if self.log_path is not None and self.log_path.is_file():
            info["log"] = str(self.log_path)
        return info

    def start(self) -> None:
        """Import vLLM and start the engine (once; an engine with the same arguments in this process is reused),
        saying so first with its expected wait. Runs under ``generate``'s signal handling."""
        if self.llm is not None:
            return
        announced = "vllm" not in sys.modules  # importing vLLM is half of the wait: say so before it
        if announced:
            self._announce()
        with vllm_process.output_to(self.log_path):
            self._vllm = vllm = import_vllm("INFO" if self.log_path is not None else "ERROR")
            self.platform = vllm_platform()
        self.engine_args = engine_arguments(self.platform, self.model_source, tensor_parallel_size=self.tensor_parallel_size,
                                            seed=self.seed, overrides=self.engine_overrides)
        self._key = key = json.dumps(self.engine_args, sort_keys=True, default=str)
        started = time.perf_counter()
        if key not in _ENGINES:
            if not announced:
                self._announce()
            if self.platform == "cpu":  # read by the engine core when it runs a step
                os.environ.setdefault("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", str(CPU_STEP_TIMEOUT_S))
            _PROCESSES[key] = vllm_process.EngineProcesses()
            try:
                with vllm_process.output_to(self.log_path):
                    engine = vllm_process.in_thread(lambda: vllm.LLM(**self.engine_args), "vllm-engine-start")
            except (OSError, ValueError, RuntimeError, TypeError) as exc:  # no memory, a bad value, a dead core
                forget_engine(key)
                raise BackendError(f"vllm backend: the engine for {self.model_source!r} did not start: "
                                   f"{' '.join(str(exc).split())[:300]}{self._log_cause()}") from None
            _PROCESSES[key].record()
            logging.getLogger("vllm").setLevel(logging.ERROR)  # the log file has the start; the run prints its own
            if not _ENGINES:  # registered after the engine's own exit hooks, so it runs before them
                atexit.register(shutdown_engines)
            _ENGINES[key] = engine
        self.load_s = round(time.perf_counter() - started, 3)
        self.llm = _ENGINES[key]

    def _announce(self) -> None:
        """The start line: what is starting, how long it takes, where vLLM's log goes."""
        where = f"; its log: {self.log_path}" if self.log_path is not None else ""
        print(f"starting the vLLM engine for {self.model} (importing vLLM, loading the weights, reserving the KV "
              f"cache: {START_WAIT}){where}", file=sys.stderr, flush=True)

    def _log_cause(self) -> str:
        """"; the log's last error: ..." from vLLM's log in the run folder (its engine core's traceback is there)."""
        cause = vllm_process.last_error(self.log_path)
        return f"; the last error in {self.log_path}: {cause}" if cause else ""

    def _on_signal(self) -> None:
        """The first SIGINT / SIGTERM / SIGHUP: kill the engine (started or starting) so that nothing waits on it."""
        if self._key is not None:
            forget_engine(self._key)
        self.llm = None

    def _sampling(self, sampling, n: int):
        extra: dict[str, Any] = {}
        if sampling.stop:
            extra["stop"] = list(sampling.stop)
        if self.top_logprobs is not None:
            extra["logprobs"] = self.top_logprobs
        return self._vllm.SamplingParams(n=n, temperature=sampling.temperature, max_tokens=sampling.max_tokens,
                                         top_p=sampling.top_p, seed=sampling.seed, **extra)

    def generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        if not requests:
            return
        with vllm_process.stop_on_signals(self._on_signal) as signals:
            try:
                self.start()
                self._generate(requests, on_response)
            except InputError:
                signals.raise_again()
                raise
            except Exception as exc:  # noqa: BLE001 - vLLM's own (EngineDeadError: its core process died)
                signals.raise_again()  # the wait our signal interrupted turned it into an error of its own
                if self._key is not None:
                    forget_engine(self._key)
                self.llm = None
                raise BackendError(f"vllm backend: the engine failed ({type(exc).__name__}: "
                                   f"{' '.join(str(exc).split())[:200]}){self._log_cause()}; every answer received "
                                   "is cached: run the same command again to ask only the rest") from None
            signals.raise_again()  # swallowed on the way

    def _generate(self, requests: Sequence[ChatRequest], on_response: OnResponse) -> None:
        groups: dict[tuple, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault((request.messages, request.sampling), []).append(index)
        items = iter([sorted(indices, key=lambda i: requests[i].sample_index) for indices in groups.values()])
        engine = self.llm.llm_engine
        in_engine: dict[str, list[int]] = {}

        def top_up() -> None:
            batch = list(itertools.islice(items, self.batch_size - len(in_engine)))
            if not batch:
                return
            conversations = [requests[indices[0]].message_dicts() for indices in batch]
            params = [self._sampling(requests[indices[0]].sampling,
                                     1 if requests[indices[0]].sampling.temperature == 0 else len(indices))
                      for indices in batch]
            ids = self.llm.enqueue_chat(conversations, sampling_params=params, use_tqdm=False)
            # vLLM returns its internal ids ("<n>-<8 random characters>"); outputs carry the external "<n>"
            in_engine.update((str(request_id).split("-", 1)[0], indices) for request_id, indices in zip(ids, batch))

        top_up()
        while in_engine:
            if not engine.has_unfinished_requests():
                raise BackendError(f"vllm backend: the engine dropped {len(in_engine)} requests unanswered")
            for output in engine.step():
                if not output.finished:
                    continue
                self._deliver(output, in_engine.pop(output.request_id), on_response)
            if len(in_engine) <= self.batch_size // 2:
                top_up()

    def _deliver(self, output, indices: list[int], on_response: OnResponse) -> None:
        prompt_tokens = len(getattr(output, "prompt_token_ids", None) or [])
        for k, index in enumerate(indices):
            sample = output.outputs[k if len(output.outputs) > 1 else 0]
            token_ids = list(sample.token_ids or [])
            response = ChatResponse(text=sample.text, prompt_tokens=prompt_tokens, completion_tokens=len(token_ids),
                                    finish_reason=sample.finish_reason,
                                    logprobs=token_logprobs(token_ids, getattr(sample, "logprobs", None)))
            self.stats.requests += 1
            self.stats.prompt_tokens += response.prompt_tokens
            self.stats.completion_tokens += response.completion_tokens
            on_response(index, response)
