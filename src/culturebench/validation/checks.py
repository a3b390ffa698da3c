"""Check results and the runners that produce them: pandera (polars, full tables) and Great Expectations (pandas).

Every check becomes one :class:`CheckResult` with pass/fail, observed vs expected and a failure count, so the
JSON and HTML reports can list them the same way whichever tool ran them.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl


@dataclass(frozen=True)
class CheckResult:
    name: str
    config: str
    passed: bool
    tool: str
    observed: Any = None
    expected: Any = None
    failures: int = 0
    examples: list = field(default_factory=list)
    column: str | None = None
    """The column a schema check is about (None for a table-level check)."""
    informational: bool = False
    """A number reported beside the checks (expected ``any``): it cannot fail and is not counted as a check."""

    def as_dict(self) -> dict:
        return asdict(self)


INFORMATIONAL = "any"
"""The ``expected`` of a reported number that is not a check (e.g. label counts per zone)."""


def check(name: str, config: str, observed: Any, expected: Any, passed: bool | None = None, **extra) -> CheckResult:
    """A culturebench check: passes when ``observed == expected`` unless ``passed`` is given. With
    ``expected=INFORMATIONAL`` it is a reported number, not a check (``informational``, never counted as passed)."""
    informational = isinstance(expected, str) and expected == INFORMATIONAL
    ok = True if informational else observed == expected if passed is None else passed
    return CheckResult(name=name, config=config, passed=bool(ok), tool="culturebench", observed=observed,
                       expected=expected, informational=informational, **extra)


def run_pandera(schema, frame: pl.DataFrame, config: str) -> list[CheckResult]:
    """Validate ``frame`` lazily (all failures collected); one result per column property and per check."""
    from pandera.errors import SchemaErrors

    failures: dict[tuple[str | None, str], pl.DataFrame] = {}
    try:
        schema.validate(frame, lazy=True)
    except SchemaErrors as exc:
        for (column, check_name), group in exc.failure_cases.group_by(["column", "check"], maintain_order=True):
            failures[(column, str(check_name))] = group

    def result(name: str, column: str | None, matches) -> CheckResult:
        hits = [group for (col, key), group in failures.items() if col == column and matches(key)]
        count = sum(group.height for group in hits)
        return CheckResult(
            name=name, config=config, passed=count == 0, tool="pandera",
            observed="no failures" if count == 0 else f"{count} failing values", expected="no failures",
            failures=count, examples=[str(v) for group in hits for v in group["failure_case"].head(5).to_list()][:5],
            column=column,
        )

    results = [result(f"columns are exactly {list(schema.columns)}", None, lambda key: key.startswith("column_in_"))]
    for name, column in schema.columns.items():
        results.append(result(f"{name} is present with dtype {column.dtype}", name,
                              lambda key: key.startswith("dtype(") or key == "column_in_dataframe"))
        if not column.nullable:
            results.append(result(f"{name} has no nulls", name, lambda key: key == "not_nullable"))
        if column.unique:
            results.append(result(f"{name} is unique", name, lambda key: key == "field_uniqueness"))
        for check_obj in column.checks:
            label = str(check_obj.error or check_obj.name)
            results.append(result(f"{name}: {label}", name, lambda key, label=label: key == label))
    if schema.unique:
        results.append(result(f"rows are unique on {list(schema.unique)}", None, lambda key: key == "multiple_fields_uniqueness"))
    return results


def run_great_expectations(frame: pl.DataFrame, expectations: list, config: str) -> list[CheckResult]:
    """Run a Great Expectations suite on a pandas copy of ``frame`` with an ephemeral context (GX 1.x)."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)  # GX's tqdm bars; ours are rich
    source = context.data_sources.add_pandas(name=f"culturebench_{config}")
    asset = source.add_dataframe_asset(name=config)
    used = suite_columns(expectations)
    columns = [c for c in frame.columns if c in used] or frame.columns
    batch = asset.add_batch_definition_whole_dataframe(config).get_batch(
        batch_parameters={"dataframe": frame.select(columns).to_pandas()}
    )
    suite = gx.ExpectationSuite(name=f"{config}_suite")
    for expectation in expectations:
        suite.add_expectation(expectation)
    outcome = batch.validate(suite)
    for site in (context.variables.data_docs_sites or {}).values():  # the ephemeral context's temp Data Docs dir
        shutil.rmtree(site.get("store_backend", {}).get("base_directory", ""), ignore_errors=True)
    results = []
    for item in outcome.results:
        config_info = item.expectation_config
        kwargs = {k: v for k, v in config_info.kwargs.items() if k not in ("batch_id",)}
        result = dict(item.result or {})
        observed = result.get("observed_value", f"{result.get('unexpected_count', 0)} unexpected")
        if observed is None and "distinct_values" in config_info.type and kwargs.get("column") in frame.columns:
            # GX 1.x reports no observed value for the distinct-values expectations: show the distinct values
            observed = sorted(map(str, frame.get_column(kwargs["column"]).drop_nulls().unique().to_list()))
        results.append(CheckResult(
            name=f"{config_info.type}({', '.join(f'{k}={_short(v)}' for k, v in sorted(kwargs.items()))})",
            config=config, passed=bool(item.success), tool="great_expectations",
            observed=_jsonable(observed), expected=_jsonable(kwargs),
            failures=int(result.get("unexpected_count") or 0),
            examples=[str(v) for v in (result.get("partial_unexpected_list") or [])[:5]],
            column=kwargs.get("column") if isinstance(kwargs.get("column"), str) else None,
        ))
    return results


def suite_columns(expectations: list) -> set[str]:
    """The columns a Great Expectations suite names (only those are handed to pandas; none: every column)."""
    used = {c for e in expectations for key in ("column", "column_A", "column_B") if (c := getattr(e, key, None))}
    return used | {c for e in expectations for c in (getattr(e, "column_list", None) or [])}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    return str(value)
