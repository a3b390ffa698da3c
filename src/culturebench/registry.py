"""The one list of benchmarks: which have a builder, an evaluation and generators (issue #28).

``build``, ``evaluate``, ``score``, ``generate``, ``compare`` and the command line's help read their names here, and
find each part by convention: the builder is the module ``culturebench.builders.<name>``, the evaluation the
package ``culturebench.evaluate.<name>`` (``cli_check``, ``cli_evaluate``, ``cli_score``, ``COMPARE``), a generator
the module ``culturebench.generation.<task>`` (``cli_generate``). A new benchmark is one ``Benchmark`` entry below.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from types import ModuleType

from culturebench.errors import InputError


@dataclass(frozen=True)
class Benchmark:
    """One benchmark and the parts it has."""

    name: str
    """Its module name (``llm-globe`` on the command line is ``llm_globe``)."""
    builder: bool = True
    """Has ``culturebench.builders.<name>`` (``culturebench build``)."""
    evaluation: bool = True
    """Has ``culturebench.evaluate.<name>`` (``evaluate``, ``score``, ``compare``)."""
    generators: tuple[str, ...] = ()
    """Tasks of ``culturebench generate`` that re-create its synthetic items (modules of
    ``culturebench.generation``)."""
    build_imports: tuple[str, ...] = ()
    """Modules its build imports that take a second or more: ``build all`` imports them in a thread from the start,
    so that they load while the earlier builds wait on the Great Expectations worker (issue #31)."""


REGISTRY = (
    Benchmark("wvb"),
    Benchmark("cdeval", generators=("cdeval", "cdeval_translate"),
              build_imports=("nltk.tokenize", "nltk.translate.bleu_score")),  # ~1 s: nltk imports scipy.stats, sklearn
    Benchmark("normad", generators=("normad", "normad_v2_fix")),
    Benchmark("llm_globe", generators=("llm_globe",)),
    Benchmark("socialcc"),
)
"""Every benchmark, in build order."""

BUILDERS = tuple(b.name for b in REGISTRY if b.builder)
EVALUATIONS = tuple(b.name for b in REGISTRY if b.evaluation)
GENERATORS = tuple(task for b in REGISTRY for task in b.generators)
BUILD_IMPORTS = {b.name: b.build_imports for b in REGISTRY if b.builder}


def module_name(benchmark: str) -> str:
    """Benchmarks are modules, so ``llm-globe`` on the command line is ``llm_globe``."""
    return benchmark.replace("-", "_")


def _known(name: str, names: tuple[str, ...], what: str, extra: str = "") -> str:
    if name not in names:
        raise InputError(f"unknown {what}; choose from {', '.join(names)}{extra}")
    return name


def builder(name: str, extra: str = "") -> ModuleType:
    """``culturebench.builders.<name>``; an InputError for a name without a builder (``extra`` ends its list)."""
    return import_module(f"culturebench.builders.{_known(name, BUILDERS, f'benchmark {name!r}', extra)}")


def evaluation(name: str, command: str = "evaluate") -> ModuleType:
    """``culturebench.evaluate.<name>``; an InputError naming ``command`` for a name without an evaluation."""
    return import_module(f"culturebench.evaluate.{_known(name, EVALUATIONS, f'benchmark {name!r} for {command}')}")


def generator(task: str) -> ModuleType:
    """``culturebench.generation.<task>``; an InputError for an unknown task."""
    return import_module(f"culturebench.generation.{_known(task, GENERATORS, f'generation task {task!r}')}")
