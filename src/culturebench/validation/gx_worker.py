"""Great Expectations suites of releases, in a process of their own
(``python -m culturebench.validation.gx_worker [NAME...]``), so that importing GX (pandas, pydantic and GX's own
modules: about 4 CPU s on the 2-core machine, 6 before scipy.stats and altair were deferred) and the suites of the
NAMEd benchmarks overlaps a build instead of following it.

Started by :class:`culturebench.validation.GreatExpectationsProcess`: it imports GX at once, then answers each JSON
line on stdin ``{"benchmark": NAME, "release": DIR, "outputs": [manifest outputs]}`` with one JSON line of check
results on stdout: it reads those parquet files back as the build wrote them and runs the benchmark's suites on
them (only the columns the suites name). It ends at EOF on stdin, or with a traceback on stderr and exit 1 on any error. A plain ``-m`` module: unlike
a multiprocessing "spawn" worker it never re-imports the caller's main module.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
from pathlib import Path

from culturebench import registry

LAZY_MODULES = ("scipy.stats", "altair")
"""Modules GX imports at start but uses only inside expectations no suite of ours names (its KS-test and
KL-divergence ones): run on first use instead (the standard library's LazyLoader). Measured 2026-11-28 on the 2-core
machine, ``import great_expectations`` took 6.0 CPU s, 3.5-4.5 with scipy.stats deferred, 3.7 with both."""


class LazyFinder(importlib.abc.MetaPathFinder):
    """Imports the LAZY_MODULES with importlib's LazyLoader: their code runs on first attribute access."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name not in LAZY_MODULES:
            return None
        sys.meta_path.remove(self)  # the module's real spec, found by the other finders
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is not None and spec.loader is not None:
            spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def main(preload: list[str]) -> None:
    """``preload``: benchmarks whose suites to import before the first request (their pandera schemas too)."""
    sys.meta_path.insert(0, LazyFinder())
    import great_expectations  # noqa: F401  (the slow imports, while the build runs)
    import polars as pl

    from culturebench.release_reader import read_dtypes, read_tables
    from culturebench.validation import run_suites
    from culturebench.validation.checks import suite_columns

    for name in preload:
        registry.benchmark(name).schemas_module().expectations()

    for line in sys.stdin:
        request = json.loads(line)
        benchmark = registry.benchmark(request["benchmark"])  # a name: the request crossed a process boundary
        columns = {config: suite_columns(suite) for config, suite in benchmark.schemas_module().expectations().items()}
        tables = read_tables(Path(request["release"]), request["outputs"], read_dtypes(benchmark), columns)
        results = run_suites(benchmark, {config: pl.concat(list(splits.values())) for config, splits in tables.items()})
        sys.stdout.write(json.dumps([r.as_dict() for r in results]) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
