"""Every registered benchmark gives the parts the contract requires (issue #65): its hooks (a ``contract.Hooks``
subclass of its own run module, each hook the engine calls its own or the contract's default where it has one), its
builder and schemas modules (imported by the ``Benchmark``, each with what the release writer and the checks read),
its RAI facts file where it names one, and, where its requests can be planned, a plan of the bundled release whose
requests are ``ChatRequest``s."""

from __future__ import annotations

import inspect
from importlib import resources
from pathlib import Path

import pytest

from culturebench import registry
from culturebench.chat import ChatRequest
from culturebench.contract import Hooks, RunPlan
from culturebench.options import Options

HOOKS_WITHOUT_DEFAULT = ("plan", "score_run", "write", "score_files", "summary")
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
    if benchmark.rai_facts_file is not None:
        assert resources.files("culturebench.facts").joinpath("croissant_rai", benchmark.rai_facts_file).is_file()


@pytest.mark.parametrize("name", [n for n in registry.names() if registry.benchmark(n).has_plan])
def test_a_planned_benchmark_plans_chat_requests_of_its_bundled_release(name: str, bundled_release, tmp_path: Path
                                                                         ) -> None:
    benchmark = registry.benchmark(name)
    options = benchmark.Options(release=bundled_release(name), out=tmp_path, limit=2)
    plan = benchmark.hooks().plan(options)
    assert isinstance(plan, RunPlan) and plan.options is options
    first = next(iter(benchmark.requests(options)))
    assert isinstance(first, ChatRequest) and first.messages
