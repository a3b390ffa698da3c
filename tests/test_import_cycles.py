"""No import circles among culturebench's modules: the graph of the imports each module makes, read with ``ast`` from
the source files, has no cycle. Every import counts: at load time (top-level statements, ``if TYPE_CHECKING:``
blocks and class bodies) and inside functions, which only defer the same dependency (``contract -> run_folder`` and
``croissant <-> publish`` closed a circle of nine shared modules that way, issue #50). A type-only import is counted:
it is still a dependency (the circle backends <-> request_shape was one). One kind of edge is left out: a package's
``__init__`` importing one of its own submodules inside a function, the lazy loading of a benchmark package (PEP
562, ``contract.lazy_exports``): the package is loaded whole before any submodule is, so the submodule importing the
package closes no circle. A failure lists every cycle found."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "culturebench"
BENCHMARKS = PACKAGE / "evaluate"
WINGS = ("models", "runs", "reports")
"""evaluate/'s shared wings, bottom to top (issue #65); every other package of evaluate/ is a benchmark's."""


def module_names(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> source file, for every module and package of the tree under ``root``."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def load_time_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The import statements run when the module is loaded: those not inside a function (or a lambda)."""
    found, pending = [], list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))
    return found


def function_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The import statements inside functions (run when the function is called)."""
    at_load = set(map(id, load_time_imports(tree)))
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in at_load]


def import_graph(modules: dict[str, Path], function_level: bool = True) -> dict[str, set[str]]:
    """Module -> the culturebench modules it imports (at load time; inside functions too with ``function_level``,
    but for a package's lazy imports of its own submodules). ``from X import name`` points at the module ``X.name``
    where that is one, else at ``X``; parent packages loaded along the way are not edges."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = imported(load_time_imports(tree), package, modules)
        if function_level:
            lazy = path.name == "__init__.py"
            targets |= {t for t in imported(function_level_imports(tree), package, modules)
                        if not (lazy and t.startswith(name + "."))}
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def imported(nodes: list[ast.Import | ast.ImportFrom], package: str, modules: dict[str, Path]) -> set[str]:
    """The modules ``nodes`` (import statements of a module of ``package``) name."""
    targets = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        for alias in node.names:
            targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return targets


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): the groups of modules that each reach
    every other one through imports; each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = stack[stack.index(node):]
            del stack[stack.index(node):]
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def closed_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest import path from the component's first module back to itself, e.g. ``[a, b, a]``."""
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & set(component)):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{component} is not a cycle")


def _benchmark_package(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["culturebench", "evaluate"] and parts[2] not in WINGS and (BENCHMARKS / parts[2]).is_dir() else None


def _found(graph: dict[str, set[str]], components: list[list[str]]) -> str:
    return "import cycles: " + "; ".join(f"{' -> '.join(closed_path(graph, component))} (modules in the cycle: "
                                         f"{', '.join(component)})" for component in components)


def test_the_cycle_finder_finds_a_circle_of_three_and_a_pair_and_passes_a_chain() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "f"}, "f": set(), "g": {"a"}}
    assert cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert closed_path(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_reads_load_time_and_function_level_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("def part():\n    from pkg import three\n")
    (package / "one.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import two\n")
    (package / "two.py").write_text("def later():\n    from pkg.one import thing\n")
    (package / "three.py").write_text("from . import one\nfrom .two import later\nimport pkg.one\n")
    modules = module_names(package)
    assert import_graph(modules, function_level=False) == {
        "pkg": set(), "pkg.one": {"pkg.two"}, "pkg.two": set(), "pkg.three": {"pkg.one", "pkg.two"}}
    # later()'s import closes one -> two -> one; the package's lazy import of its own part is no edge
    graph = import_graph(modules)
    assert graph == {"pkg": set(), "pkg.one": {"pkg.two"}, "pkg.two": {"pkg.one"},
                     "pkg.three": {"pkg.one", "pkg.two"}}
    assert cycles(graph) == [["pkg.one", "pkg.two"]]


def test_no_import_cycle_among_the_shared_modules() -> None:
    """Shared modules (everything outside the benchmark packages ``evaluate/<benchmark>/``) import in one direction."""
    graph = import_graph(module_names())
    shared = [component for component in cycles(graph) if not any(map(_benchmark_package, component))]
    assert not shared, _found(graph, shared)


@pytest.mark.parametrize("package", sorted(p.name for p in BENCHMARKS.iterdir()
                                            if (p / "__init__.py").is_file() and p.name not in WINGS))
def test_no_import_cycle_touching_a_benchmark_package(package: str) -> None:
    """No cycle runs through ``evaluate/<package>/``'s modules (``package`` is each benchmark's folder)."""
    graph = import_graph(module_names())
    found = [component for component in cycles(graph)
             if any(_benchmark_package(module) == package for module in component)]
    assert not found, _found(graph, found)


STAGES = ("builders", "raw", "schemas", "generation", "evaluate")


def _owner(module: str, benchmarks: set[str]) -> str | None:
    """The benchmark a stage module belongs to (``builders.normad.zones``, ``raw.socialcc``, ``evaluate.wvb.run``,
    ``generation.normad_v2_fix``: normad's), or None for a shared one (``raw.wvs``, ``raw.cultural_atlas``)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] not in STAGES:
        return None
    return next((b for b in sorted(benchmarks, key=len, reverse=True)
                 if parts[2] == b or parts[1] == "generation" and parts[2].startswith(b + "_")), None)


def test_no_benchmark_imports_another_benchmarks_modules() -> None:
    """A benchmark's stage modules (builder, reader, schemas, generators, evaluate package) import shared modules and
    their own, never another benchmark's (socialcc's builder took country keys from normad's and a codebook check
    from wvb's before issue #50): what they share is a shared module."""
    benchmarks = {p.name for p in BENCHMARKS.iterdir() if (p / "__init__.py").is_file() and p.name not in WINGS}
    graph = import_graph(module_names())
    crossing = sorted(f"{module} -> {target}" for module, targets in graph.items() for target in targets
                      if None not in (_owner(module, benchmarks), _owner(target, benchmarks))
                      and _owner(module, benchmarks) != _owner(target, benchmarks))
    assert crossing == []


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others (every import counted, as in ``import_graph``)."""
    seen, pending = set(), [start]
    while pending:
        for target in graph[pending.pop()] - seen:
            seen.add(target)
            pending.append(target)
    return seen


LAYERS = (
    # (modules, what they may not reach, why)
    (("culturebench.contract", "culturebench.options", "culturebench.chat"), "culturebench.evaluate",
     "the contract lies under the engine, which names its types (issue #65)"),
    (("culturebench.cards",), "culturebench.evaluate", "a dataset card is written before any model is evaluated"),
    (("culturebench.validation",), "culturebench.release",
     "the checks read a release through release_reader, below the release writer that runs them"),
    (("culturebench.evaluate.models",), "culturebench.evaluate.runs",
     "model backends lie under the run machinery that drives them (issue #65)"),
    (("culturebench.evaluate.models", "culturebench.evaluate.runs"), "culturebench.evaluate.reports",
     "reports read run records; the machinery that writes them never needs a report (issue #65)"),
)


@pytest.mark.parametrize(("modules", "below", "why"), LAYERS, ids=[layer[0][0] for layer in LAYERS])
def test_the_ground_floor_imports_nothing_of_the_floors_above(modules: tuple[str, ...], below: str, why: str) -> None:
    """Each module of ``modules`` (a package: each of its modules) reaches no module of ``below`` through any chain of
    imports, function-level and ``TYPE_CHECKING`` ones included: ``why``."""
    names = module_names()
    graph = import_graph(names)
    starts = [name for name in names for module in modules if name == module or name.startswith(module + ".")]
    assert starts, modules
    upward = sorted(f"{start} -> {target}" for start in starts for target in reachable(graph, start)
                    if target == below or target.startswith(below + "."))
    assert not upward, f"{why}: {', '.join(upward)}"


def test_the_layer_check_follows_chains_and_function_level_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "up").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "up" / "__init__.py").write_text("")
    (package / "up" / "engine.py").write_text("")
    (package / "ground.py").write_text("def later():\n    from pkg import middle\n")
    (package / "middle.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.up import engine\n")
    graph = import_graph(module_names(package))
    assert reachable(graph, "pkg.ground") == {"pkg.middle", "pkg.up.engine"}
    assert reachable(graph, "pkg.up.engine") == set()


def test_no_wing_of_evaluate_reaches_a_benchmark() -> None:
    """evaluate/'s shared wings (backends, run machinery, reports) name no benchmark: no module of theirs reaches a
    benchmark's package through any chain of imports (a benchmark plugs in through the contract)."""
    names = module_names()
    graph = import_graph(names)
    starts = [name for name in names if name.split(".")[:3][-1] in WINGS and name.startswith("culturebench.evaluate.")]
    assert starts
    reached = sorted(f"{start} -> {target}" for start in starts for target in reachable(graph, start)
                     if _benchmark_package(target))
    assert not reached, ", ".join(reached)
