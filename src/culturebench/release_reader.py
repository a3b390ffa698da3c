"""Reading a release's tables back from its parquet files (``read_tables``, with the dtypes its schemas read them as,
``read_dtypes``): below the release writer (``release.py``) and the checks (``validation``), which read a release
through it without importing the builders' side."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from culturebench.contract import Benchmark
from culturebench.errors import InputError


def read_dtypes(benchmark: Benchmark) -> dict[str, dict[str, pl.DataType]]:
    """Per config, the columns that ``benchmark``'s schemas read back as another dtype (e.g. Enum)."""
    return getattr(benchmark.schemas_module(), "READ_DTYPES", {})


def read_tables(release: Path, outputs: list[dict], dtypes: dict[str, dict[str, pl.DataType]] | None = None,
                columns: dict[str, set[str]] | None = None) -> dict[str, dict[str, pl.DataFrame]]:
    """The release's tables read back from parquet, per config and split (shards in order), with the columns in
    ``dtypes[config]`` cast (non-strictly: a value that does not fit becomes null) while reading; with
    ``columns[config]``, only those of its columns (in file order; all of them when the file has none of those)."""
    shards: dict[str, dict[str, list[Path]]] = {}
    for output in outputs:
        if "config" in output:
            path = Path(release) / output["path"]
            if not path.is_file():
                raise InputError("file listed in manifest.json is missing", file=path)
            shards.setdefault(output["config"], {}).setdefault(output["split"], []).append(path)
    tables: dict[str, dict[str, pl.DataFrame]] = {}
    for config, splits in shards.items():
        wanted = (columns or {}).get(config) or ()
        for split, paths in splits.items():
            try:
                frame = pl.scan_parquet(paths)
                if kept := [c for c in (frame.collect_schema().names() if wanted else []) if c in wanted]:
                    frame = frame.select(kept)
                casts = [pl.col(column).cast(dtype, strict=False)
                         for column, dtype in (dtypes or {}).get(config, {}).items() if not kept or column in kept]
                tables.setdefault(config, {})[split] = frame.with_columns(casts).collect()
            except pl.exceptions.PolarsError as exc:
                raise InputError(f"parquet file cannot be read ({str(exc).splitlines()[0]})", file=paths[0]) from None
    return tables
