"""Reader for WVS wave-7 respondent files: the official CSV (v5.0/v6.0), .csv.gz, .zip, SPSS .sav and Stata .dta.

Every file in a folder is read and concatenated; only the requested columns are kept, as Int64 codes, plus
``source_file`` and ``source_row`` (1-based data row, header not counted) so that every row can be traced
back. Unknown extra columns (e.g. a leading unnamed index column, v5/v6 differences) are ignored; a missing
requested column is an error naming the file and the column.
"""

from __future__ import annotations

import gzip
import io
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import polars as pl

from culturebench.errors import InputError
from culturebench.io import (InputFile, check_csv_field_counts, compressed_errors, input_name, read_zip_member,
                             sha256_file)

if TYPE_CHECKING:
    from culturebench.raw.codebook import Codebook

SOURCE_FILE = "source_file"
SOURCE_ROW = "source_row"
WEIGHT = "weight"
"""The optional survey-weight column (``read_respondents(..., weight="W_WEIGHT")``), Float64, null where absent."""
CSV_SUFFIXES = (".csv", ".csv.gz")
SPSS_STATA_SUFFIXES = (".sav", ".dta")
SUFFIXES = (*CSV_SUFFIXES, ".zip", *SPSS_STATA_SUFFIXES)


def respondent_files(folder: Path) -> list[Path]:
    """The respondent files in ``folder`` (sorted by name), or an error saying what was expected."""
    if not folder.is_dir():
        raise InputError("folder not found (expected WVS-7 respondent files)", file=folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.lower().endswith(SUFFIXES))
    if not files:
        raise InputError(f"no WVS-7 respondent files ({', '.join(SUFFIXES)}) in this folder", file=folder)
    return files


def read_respondents(files: list[Path], columns: list[str], root: Path | None = None,
                     weight: str | None = None) -> tuple[pl.DataFrame, list[InputFile]]:
    """Read ``columns`` (integer codes) from every file, concatenated in file order, with ``source_file`` /
    ``source_row``; with ``weight`` (e.g. "W_WEIGHT"), also that fractional column as ``weight`` (null in files
    that lack it)."""
    names = {path: input_name(path, root) for path in files}
    with ThreadPoolExecutor(max_workers=1) as hasher:  # hashing (GIL released) overlaps the parse
        digests = hasher.map(sha256_file, files)
        table = _read_files(files, columns, names, weight)
        digests = dict(zip(files, digests))
    counts = dict(table.get_column(SOURCE_FILE).value_counts().iter_rows())  # the column alone: no wide group_by
    inputs = []
    for path in files:
        if counts.get(names[path], 0) == 0:
            raise InputError("file has a header but no data rows", file=path)
        inputs.append(InputFile(path=path, name=names[path], sha256=digests[path], size=path.stat().st_size,
                                rows=counts[names[path]]))
    return table, inputs


def _read_files(files: list[Path], columns: list[str], names: dict[Path, str], weight: str | None) -> pl.DataFrame:
    """Every file's ``columns`` (+ weight), concatenated in file order, checked complete."""
    runs: list[tuple[list[Path], Path | bytes | None, list[str] | None]] = []
    for path in files:  # consecutive plain/gzip CSVs with the same header share one scan
        source, header = _checked_source(path, columns)
        if isinstance(source, Path) and runs and isinstance(runs[-1][1], Path) and runs[-1][2] == header:
            runs[-1][0].append(path)
        else:
            runs.append(([path], source, header))
    parts = [_read_run(paths, source, columns, names, weight if weight in (header or [weight]) else None)
             for paths, source, header in runs]
    if weight:
        parts = [p if WEIGHT in p.columns else p.with_columns(pl.lit(None, dtype=pl.Float64).alias(WEIGHT))
                 for p in parts]
    table = pl.concat([p.select(*columns, *([WEIGHT] if weight else []), SOURCE_FILE, SOURCE_ROW) for p in parts],
                      how="vertical")
    _check_complete(table, columns)
    return table


def header_columns(path: Path) -> list[str] | None:
    """The columns of a CSV respondent file (plain, .gz or .zip), or None for SPSS/Stata files (read whole)."""
    path = Path(path)
    lower = path.name.lower()
    if lower.endswith(SPSS_STATA_SUFFIXES):
        return None
    if lower.endswith(".zip"):
        return _csv_header(io.BytesIO(_zip_csv_bytes(path)), path)
    return _csv_header(path.open("rb") if lower.endswith(".csv") else gzip.open(path, "rb"), path)


def _checked_source(path: Path, columns: list[str]) -> tuple[Path | bytes | None, list[str] | None]:
    """Check a file's header for the required columns; returns what to scan (the path, a zip's CSV member
    bytes, or None for SPSS/Stata files, which pyreadstat reads whole) and the CSV header."""
    lower = path.name.lower()
    if path.stat().st_size == 0:
        raise InputError("file is empty", file=path)
    if lower.endswith(SPSS_STATA_SUFFIXES):
        return None, None
    source: Path | bytes = _zip_csv_bytes(path) if lower.endswith(".zip") else path
    if isinstance(source, bytes):
        handle = io.BytesIO(source)
    else:
        handle = path.open("rb") if lower.endswith(".csv") else gzip.open(path, "rb")
    header = _csv_header(handle, path)
    _require_columns(header, columns, path)
    check_csv_field_counts(source, str(path), header, columns)  # polars reads only the needed columns: no extra field seen
    return source, header


def _read_run(paths: list[Path], source: Path | bytes | None, columns: list[str], names: dict[Path, str],
              weight: str | None = None) -> pl.DataFrame:
    """Read a run of files: codes as Int64 (fast path), else via Float64 (v6.0 writes N_TOWN as '804016.0'),
    else re-read as text to name the cell that is not a number. ``weight``: a Float64 column the files have."""
    if source is None:
        return _read_spss_stata(paths[0], names[paths[0]], columns, weight)
    many = isinstance(source, Path)
    by_path = {str(p): names[p] for p in paths}
    weights = [pl.col(weight).alias(WEIGHT)] if weight else []

    def scan(dtype: pl.DataType) -> pl.LazyFrame:
        overrides = {c: dtype for c in columns} | ({weight: pl.Float64} if weight else {})
        frame = pl.scan_csv(paths if many else source, schema_overrides=overrides, infer_schema=False,
                            include_file_paths=SOURCE_FILE if many else None)
        file = pl.col(SOURCE_FILE).replace_strict(by_path, return_dtype=pl.String) if many else pl.lit(names[paths[0]])
        return frame.select(*columns, *weights, file.alias(SOURCE_FILE)).with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(SOURCE_FILE).alias(SOURCE_ROW)
        )

    try:
        with compressed_errors(str(paths[0])):
            return scan(pl.Int64).collect()
    except pl.exceptions.PolarsError:
        pass
    try:
        with compressed_errors(str(paths[0])):
            return scan(pl.Float64).with_columns(_as_code(c) for c in columns).collect()
    except pl.exceptions.PolarsError:
        for path in paths:
            _locate_parse_error(path, [*columns, *([weight] if weight else [])])
        raise InputError("could not read the respondent files", file=paths[0]) from None


def _as_code(column: str, source: pl.Expr | None = None) -> pl.Expr:
    """Codes are integers; the v6.0 CSV writes some (N_TOWN) as '804016.0'. A fractional code becomes null."""
    value = pl.col(column) if source is None else source
    return pl.when(value == value.floor()).then(value).otherwise(None).cast(pl.Int64).alias(column)


def _csv_header(handle, path: Path) -> list[str]:
    with compressed_errors(str(path)), handle:
        line = handle.readline()
    try:
        text = line.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        raise InputError("header is not UTF-8 text: not a WVS CSV file", file=path, row=0) from None
    if not text:
        raise InputError("file is empty (no header line)", file=path)
    fields = [f.strip().strip('"') for f in text.split(",")]
    repeated = next((f for i, f in enumerate(fields) if f in fields[:i]), None)
    if repeated is not None:
        raise InputError("column name appears more than once in the header", file=path, row=0, column=repeated)
    if len(fields) == 1:
        for delimiter, label in ((";", "semicolon"), ("\t", "tab"), ("|", "pipe")):
            if delimiter in text:
                raise InputError(f"wrong delimiter: the header is {label}-separated, WVS CSV files are comma-separated", file=path, row=0)
    return fields


def _require_columns(header: list[str], columns: list[str], path: Path) -> None:
    present = set(header)
    missing = [c for c in columns if c not in present]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputError(f"required column is missing{more}", file=path, column=missing[0])


def _zip_csv_bytes(path: Path) -> bytes:
    """The single CSV member of a zip, read into memory (nothing is extracted); unsafe member names are refused."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            for member in members:
                parts = PurePosixPath(member.filename.replace("\\", "/")).parts
                if member.filename.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
                    raise InputError(f"zip member {member.filename!r} has an unsafe path (path traversal); refusing the archive", file=path)
            csvs = [m for m in members if m.filename.lower().endswith(".csv") and not PurePosixPath(m.filename).name.startswith(".")]
            if len(csvs) != 1:
                raise InputError(f"expected exactly one .csv member in the zip, found {len(csvs)}", file=path)
            return read_zip_member(archive, csvs[0], str(path))
    except zipfile.BadZipFile as exc:
        raise InputError(f"not a readable zip archive ({exc})", file=path) from None


def _read_spss_stata(path: Path, name: str, columns: list[str], weight: str | None = None) -> pl.DataFrame:
    import pyreadstat

    reader = pyreadstat.read_sav if path.name.lower().endswith(".sav") else pyreadstat.read_dta
    try:
        _, meta = reader(str(path), metadataonly=True)
    except Exception as exc:  # pyreadstat raises its own ReadstatError and others for corrupt files
        raise InputError(f"cannot read as {path.suffix} ({exc})", file=path) from None
    _require_columns(list(meta.column_names), columns, path)
    options = {"user_missing": True} if reader is pyreadstat.read_sav else {}
    weighted = weight is not None and weight in meta.column_names
    frame, _ = reader(str(path), usecols=[*columns, *([weight] if weighted else [])], output_format="polars", **options)
    return frame.select(
        *[_as_code(c, source=pl.col(c).cast(pl.Float64, strict=False)) for c in columns],
        *([pl.col(weight).cast(pl.Float64, strict=False).alias(WEIGHT)] if weighted else []),
        pl.lit(name).alias(SOURCE_FILE),
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias(SOURCE_ROW),
    )


def _locate_parse_error(path: Path, columns: list[str]) -> None:
    """Re-read one file as text to name the row and column of a value that is not a number."""
    source = _zip_csv_bytes(path) if path.name.lower().endswith(".zip") else path
    try:
        with compressed_errors(str(path)):
            text = pl.read_csv(source, infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"not a readable CSV file ({str(exc).splitlines()[0]})", file=path) from None
    for column in columns:
        values = text[column]
        bad = values.is_not_null() & values.cast(pl.Float64, strict=False).is_null()
        if bad.any():
            row = int(bad.arg_true()[0]) + 1
            if row == text.height and text.row(row - 1)[-1] is None:
                raise InputError("truncated last line: fewer fields than the header", file=path, row=row, column=column)
            raise InputError(f"value {values[row - 1]!r} is not a numeric code", file=path, row=row, column=column)


def _check_complete(table: pl.DataFrame, columns: list[str]) -> None:
    """WVS files have a code in every cell; an empty cell is a truncated line or a damaged file."""
    nulls = table.select(pl.any_horizontal(pl.col(columns).is_null()).alias("has_null"), SOURCE_FILE, SOURCE_ROW)
    bad = nulls.filter(pl.col("has_null"))
    if bad.is_empty():
        return
    file, row = bad.row(0)[1], bad.row(0)[2]
    record = table.filter((pl.col(SOURCE_FILE) == file) & (pl.col(SOURCE_ROW) == row)).row(0, named=True)
    column = next(c for c in columns if record[c] is None)
    last_row = table.filter(pl.col(SOURCE_FILE) == file).height
    if row == last_row:
        raise InputError("truncated last line: fewer fields than the header", file=file, row=row, column=column)
    raise InputError("empty or non-integer value where a numeric code is expected", file=file, row=row, column=column)


def check_codes_in_codebook(table: pl.DataFrame, codebook: Codebook, variables: list[str]) -> None:
    """A non-negative code that the codebook does not list is an input error (file, row, column)."""
    for variable in variables:
        if variable not in codebook:
            raise InputError("variable is not in the codebook", file=codebook.source, column=variable)
    outside = {v: (pl.col(v) >= 0) & ~pl.col(v).is_in(list(codebook[v].valid_choices())) for v in variables}
    counts = table.select(expr.sum().alias(v) for v, expr in outside.items()).row(0, named=True)
    for variable, count in counts.items():
        if count:
            first = table.filter(outside[variable]).row(0, named=True)
            raise InputError(
                f"code {first[variable]} is not in the codebook's choices for {variable} "
                f"({sorted(codebook[variable].valid_choices())}); {count} row(s) affected",
                file=first[SOURCE_FILE], row=first[SOURCE_ROW], column=variable,
            )
