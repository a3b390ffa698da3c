"""The one list of benchmarks (issue #44). Each is the ``BENCHMARK`` of its package (a
:class:`culturebench.contract.Benchmark`); every front end (``build``, ``evaluate``, ``score``, ``compare``,
``generate``, ``publish``, the inspect tasks, the lm-eval export, ``--scoring logprobs``) finds benchmarks here
and reaches them only through that contract.

A benchmark of another package registers itself through the ``culturebench.benchmarks`` entry point group
(``name = "package.module:BENCHMARK"``); docs/adding-a-benchmark.md shows one.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from importlib.metadata import entry_points

from culturebench.contract import Benchmark, Generator, HarnessTask
from culturebench.errors import InputError

BUILT_IN = ("wvb", "cdeval", "normad", "llm_globe", "socialcc")
"""The benchmarks of this package, in build order: ``culturebench.evaluate.<name>.BENCHMARK``."""
ENTRY_POINT_GROUP = "culturebench.benchmarks"


@cache
def _entries() -> dict[str, str]:
    """name -> "module:attribute" of every benchmark, built-in first."""
    found = {name: f"culturebench.evaluate.{name}:BENCHMARK" for name in BUILT_IN}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point.value)
    return found


def names() -> tuple[str, ...]:
    """Every registered benchmark, in build order."""
    return tuple(_entries())


def module_name(benchmark: str) -> str:
    """Benchmarks are modules, so ``llm-globe`` on the command line is ``llm_globe``."""
    return benchmark.replace("-", "_")


@cache
def _load(name: str) -> Benchmark:
    module, _, attribute = _entries()[name].partition(":")
    benchmark = getattr(import_module(module), attribute or "BENCHMARK")
    if not isinstance(benchmark, Benchmark) or benchmark.name != name:
        raise TypeError(f"{_entries()[name]} is not the Benchmark {name!r}")
    return benchmark


def benchmark(name: str, extra: str = "") -> Benchmark:
    """The registered benchmark ``name`` (``llm-globe`` or ``llm_globe``); an InputError naming the known ones
    (``extra`` ends the list)."""
    name = module_name(name)
    if name not in _entries():
        raise InputError(f"unknown benchmark {name!r}; choose from {', '.join(names())}{extra}")
    return _load(name)


def benchmarks() -> tuple[Benchmark, ...]:
    return tuple(_load(name) for name in names())


def generator_owners() -> dict[str, tuple[Benchmark, ...]]:
    """``culturebench generate`` task -> the benchmarks that list it: one (``generate TASK``), or several for a task
    each benchmark defines for its own items (``generate TASK NAME``, e.g. ``paraphrases``)."""
    owners: dict[str, tuple[Benchmark, ...]] = {}
    for b in benchmarks():
        for task in b.generators:
            owners[task] = (*owners.get(task, ()), b)
    return owners


def generators() -> dict[str, Benchmark]:
    """``culturebench generate`` task -> the benchmark whose items it re-creates (tasks of one benchmark)."""
    return {task: owners[0] for task, owners in generator_owners().items() if len(owners) == 1}


def generator(task: str, benchmark: str | None = None) -> Generator:
    """The generator of ``culturebench generate <task>`` (of ``benchmark`` for a task several list); an InputError
    for an unknown task or benchmark."""
    owners = generator_owners()
    if task not in owners:
        raise InputError(f"unknown generation task {task!r}; choose from {', '.join(owners)}")
    mine = [b for b in owners[task] if benchmark is None or b.name == module_name(benchmark)]
    if len(mine) != 1:
        raise InputError(f"generate {task} needs a benchmark: one of {', '.join(b.name for b in owners[task])}")
    return mine[0].generator(task)


def harness_task(name: str) -> tuple[Benchmark, HarnessTask]:
    """The benchmark and ``HarnessTask`` of an inspect / lm-eval task name."""
    for b in benchmarks():
        if any(task.name == name for task in b.tasks):
            return b, b.task(name)
    known = [t.name for b in benchmarks() for t in b.tasks]
    raise InputError(f"unknown task {name!r}; choose from {', '.join(known)}")
