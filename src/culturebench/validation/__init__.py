"""Validation of a release's tables: pandera on every full table, Great Expectations where pandas can afford it,
the benchmark's own cross-table checks, and the row accounting (rows read = kept + quarantined)."""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import polars as pl

from culturebench.io import child_python_env
from culturebench.validation.checks import CheckResult, check, run_great_expectations, run_pandera

if TYPE_CHECKING:
    from culturebench.contract import Benchmark

GX_MAX_ROWS = 2_000_000
"""Configs larger than this are validated by pandera/polars only (GX 1.x has no polars backend)."""


def validate_tables(benchmark: Benchmark, tables: dict[str, dict[str, pl.DataFrame]], accounting: dict,
                    great_expectations: GreatExpectationsProcess | None = None) -> list[CheckResult]:
    """Every check of a release's tables, in a fixed order (so that the report is deterministic).

    ``great_expectations``: a process already running the GX suites on the same tables as written (a build's);
    without one they run here."""
    builder = benchmark.builder_module()
    schemas = benchmark.schemas_module()
    fulls = {config: pl.concat(list(splits.values())) for config, splits in tables.items()}
    results = [
        check("rows read = rows kept + rows quarantined", "release",
              accounting["rows_read"], accounting["rows_kept"] + accounting["rows_quarantined"]),
    ]
    for config, full in fulls.items():
        results.append(check("config is not empty", config, full.height, ">= 1", passed=full.height > 0))
        results += run_pandera(schemas.SCHEMAS[config], full, config)
    del fulls
    cross_table = builder.checks(tables)
    if great_expectations is None:
        results += run_suites(benchmark, {config: pl.concat(list(splits.values())) for config, splits in tables.items()})
    else:
        results += great_expectations.results()
    return results + cross_table


def run_suites(benchmark: Benchmark, tables: dict[str, pl.DataFrame]) -> list[CheckResult]:
    """The benchmark's Great Expectations suites (``schemas.<name>.expectations()``) on the configs that have a suite
    and at most GX_MAX_ROWS rows (empty configs are skipped: "config is not empty" already fails them)."""
    suites = benchmark.schemas_module().expectations()
    return [result for config, frame in tables.items() if config in suites and 0 < frame.height <= GX_MAX_ROWS
            for result in run_great_expectations(frame, suites[config], config)]


class GreatExpectationsProcess:
    """A second Python process that runs GX suites (:mod:`culturebench.validation.gx_worker`): it imports GX (and
    the suites of the benchmarks in ``preload``) as soon as it starts, so that the slow imports overlap a build;
    :meth:`submit` a release's written files, later fetch the :meth:`results`. Only the configs small enough for GX
    are sent (it reads them back as written)."""

    def __init__(self, preload: tuple[str, ...] = ()) -> None:
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([sys.executable, "-m", "culturebench.validation.gx_worker", *preload],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                         env=child_python_env())

    def alive(self) -> bool:
        return self._process.poll() is None

    def submit(self, name: str, release: Path, outputs: list[dict]) -> None:
        """Send benchmark ``name``'s written table files (manifest ``outputs`` entries) of the configs GX takes."""
        rows: dict[str, int] = {}
        for output in outputs:
            if "config" in output:
                rows[output["config"]] = rows.get(output["config"], 0) + output["rows"]
        small = [o for o in outputs if "config" in o and 0 < rows[o["config"]] <= GX_MAX_ROWS]
        # absolute: the worker outlives this build and keeps the working directory it started in
        self._process.stdin.write(json.dumps({"benchmark": name, "release": str(Path(release).resolve()),
                                              "outputs": small}).encode() + b"\n")
        self._process.stdin.flush()

    def results(self) -> list[CheckResult]:
        answer = self._process.stdout.readline()
        if not answer:
            self._process.wait()
            self._stderr.seek(0)
            lines = self._stderr.read().decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"the Great Expectations worker failed: {lines[-1] if lines else self._process.returncode}")
        return [CheckResult(**result) for result in json.loads(answer)]

    def close(self) -> None:
        """End the worker at once (it writes nothing, so nothing is lost; a user error is not kept waiting while it
        is still importing GX)."""
        self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._stderr):
            stream.close()


_worker: GreatExpectationsProcess | None = None


def start_great_expectations(preload: tuple[str, ...]) -> None:
    """Start this process's GX worker now (preloading the suites of the benchmarks in ``preload``) unless it runs:
    ``build all`` calls this before it imports the builders, so that GX imports while they import and read."""
    global _worker
    if _worker is None or not _worker.alive():
        _worker = GreatExpectationsProcess(preload=preload)


@contextmanager
def great_expectations_process(name: str) -> Iterator[GreatExpectationsProcess]:
    """This process's GX worker, started on first use (preloading benchmark ``name``'s suites) and kept for the next
    build (``build all`` imports GX once); an error or Ctrl-C inside the block ends it (its answer would be
    pending), and so does interpreter exit."""
    global _worker
    start_great_expectations((name,))
    try:
        yield _worker
    except BaseException:
        _worker.close()
        _worker = None
        raise


@atexit.register
def _close_worker() -> None:
    if _worker is not None:
        _worker.close()


def summary(results: list[CheckResult]) -> dict:
    """Check totals, the one definition that build, validate, audit, info, the card and the report all print:
    informational rows (reported numbers) are counted apart, never as passed checks."""
    counted = [r for r in results if not r.informational]
    failed = [r for r in counted if not r.passed]
    return {"checks": len(counted), "passed": len(counted) - len(failed), "failed": len(failed),
            "informational": len(results) - len(counted)}
