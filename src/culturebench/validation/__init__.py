"""Validation of a release's tables: pandera on every full table, Great Expectations where pandas can afford it,
the benchmark's own cross-table checks, and the row accounting (rows read = kept + quarantined)."""

from __future__ import annotations

from importlib import import_module

import polars as pl

from culturebench.validation.checks import CheckResult, check, run_great_expectations, run_pandera

GX_MAX_ROWS = 2_000_000
"""Configs larger than this are validated by pandera/polars only (GX 1.x has no polars backend)."""


def validate_tables(name: str, tables: dict[str, dict[str, pl.DataFrame]], accounting: dict) -> list[CheckResult]:
    """Every check of a release's tables, in a fixed order (so that the report is deterministic)."""
    builder = import_module(f"culturebench.builders.{name}")
    schemas = import_module(f"culturebench.schemas.{name}")
    fulls = {config: pl.concat(list(splits.values())) for config, splits in tables.items()}
    small = {config: frame for config, frame in fulls.items() if 0 < frame.height <= GX_MAX_ROWS}
    results = [
        check("rows read = rows kept + rows quarantined", "release",
              accounting["rows_read"], accounting["rows_kept"] + accounting["rows_quarantined"]),
    ]
    for config, full in fulls.items():
        results.append(check("config is not empty", config, full.height, ">= 1", passed=full.height > 0))
        results += run_pandera(schemas.SCHEMAS[config], full, config)
    results += run_suites(name, small)
    results += builder.checks(tables)
    return results


def run_suites(name: str, tables: dict[str, pl.DataFrame]) -> list[CheckResult]:
    """The benchmark's Great Expectations suites (``schemas.<name>.expectations()``) on the given configs."""
    suites = import_module(f"culturebench.schemas.{name}").expectations()
    return [result for config, frame in tables.items() if config in suites
            for result in run_great_expectations(frame, suites[config], config)]


def summary(results: list[CheckResult]) -> dict:
    """Check totals, the one definition that build, validate, audit, info, the card and the report all print:
    informational rows (reported numbers) are counted apart, never as passed checks."""
    counted = [r for r in results if not r.informational]
    failed = [r for r in counted if not r.passed]
    return {"checks": len(counted), "passed": len(counted) - len(failed), "failed": len(failed),
            "informational": len(results) - len(counted)}
