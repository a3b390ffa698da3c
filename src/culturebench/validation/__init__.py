"""Validation of a release's tables: pandera on every full table, Great Expectations where pandas can afford it,
the benchmark's own cross-table checks, and the row accounting (rows read = kept + quarantined)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib import import_module
from pathlib import Path

import polars as pl

from culturebench.validation.checks import CheckResult, check, run_great_expectations, run_pandera

GX_MAX_ROWS = 2_000_000
"""Configs larger than this are validated by pandera/polars only (GX 1.x has no polars backend)."""


def validate_tables(name: str, tables: dict[str, dict[str, pl.DataFrame]], accounting: dict,
                    great_expectations: GreatExpectationsProcess | None = None) -> list[CheckResult]:
    """Every check of a release's tables, in a fixed order (so that the report is deterministic).

    ``great_expectations``: a process already running the GX suites on the same tables as written (a build's);
    without one they run here."""
    builder = import_module(f"culturebench.builders.{name}")
    schemas = import_module(f"culturebench.schemas.{name}")
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
        results += run_suites(name, {config: pl.concat(list(splits.values())) for config, splits in tables.items()})
    else:
        results += great_expectations.results()
    return results + cross_table


def run_suites(name: str, tables: dict[str, pl.DataFrame]) -> list[CheckResult]:
    """The benchmark's Great Expectations suites (``schemas.<name>.expectations()``) on the configs that have a suite
    and at most GX_MAX_ROWS rows (empty configs are skipped: "config is not empty" already fails them)."""
    suites = import_module(f"culturebench.schemas.{name}").expectations()
    return [result for config, frame in tables.items() if config in suites and 0 < frame.height <= GX_MAX_ROWS
            for result in run_great_expectations(frame, suites[config], config)]


class GreatExpectationsProcess:
    """The GX suites of benchmark ``name`` in a second process (:mod:`culturebench.validation.gx_worker`), started
    at once so that GX's slow import overlaps the build; :meth:`submit` the written files, then :meth:`results`.

    Only the configs small enough for GX are sent (it reads them back from the parquet files as written). Use as a
    context manager: leaving it stops a worker whose results were never fetched (a failed build)."""

    def __init__(self, name: str) -> None:
        package_root = str(Path(__file__).resolve().parents[2])  # the child imports this same culturebench
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([sys.executable, "-m", "culturebench.validation.gx_worker", name],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env)

    def submit(self, release: Path, outputs: list[dict]) -> None:
        """Send the written table files (manifest ``outputs`` entries) of the configs small enough for GX."""
        rows: dict[str, int] = {}
        for output in outputs:
            if "config" in output:
                rows[output["config"]] = rows.get(output["config"], 0) + output["rows"]
        small = [o for o in outputs if "config" in o and 0 < rows[o["config"]] <= GX_MAX_ROWS]
        self._process.stdin.write(json.dumps({"release": str(release), "outputs": small}).encode() + b"\n")
        self._process.stdin.close()

    def results(self) -> list[CheckResult]:
        answer = self._process.stdout.read()
        if self._process.wait() != 0:
            self._stderr.seek(0)
            lines = self._stderr.read().decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"the Great Expectations worker failed: {lines[-1] if lines else self._process.returncode}")
        return [CheckResult(**result) for result in json.loads(answer)]

    def __enter__(self) -> GreatExpectationsProcess:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._stderr):
            stream.close()


def summary(results: list[CheckResult]) -> dict:
    failed = [r for r in results if not r.passed]
    return {"checks": len(results), "passed": len(results) - len(failed), "failed": len(failed)}
