"""Great Expectations suites of a release, in a process of their own (``python -m culturebench.validation.gx_worker
NAME``), so that importing GX (~2.6 s of pandas, scipy, altair, pydantic) overlaps a build instead of following it.

Started with :class:`culturebench.validation.GreatExpectationsProcess`: it imports GX and the benchmark's suites at
once, then waits for one JSON line on stdin ``{"release": DIR, "outputs": [manifest outputs]}``, reads those
parquet files back as the build wrote them, runs the suites on the configs small enough for pandas and answers with
one JSON list of check results on stdout. A plain ``-m`` module: unlike a multiprocessing "spawn" worker it never
re-imports the caller's main module.
"""

from __future__ import annotations

import json
import sys
from importlib import import_module
from pathlib import Path

import polars as pl


def main(name: str) -> None:
    import_module(f"culturebench.schemas.{name}").expectations()  # the slow imports, while the build runs
    from culturebench.release import read_dtypes, read_tables
    from culturebench.validation import run_suites

    request = json.loads(sys.stdin.readline())
    tables = read_tables(Path(request["release"]), request["outputs"], read_dtypes(name))
    results = run_suites(name, {config: pl.concat(list(splits.values())) for config, splits in tables.items()})
    sys.stdout.write(json.dumps([r.as_dict() for r in results]))


if __name__ == "__main__":
    main(sys.argv[1])
