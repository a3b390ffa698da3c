"""A release folder, the same for every benchmark:

    OUT/<name>/README.md                                   dataset card (YAML configs -> datasets.load_dataset)
    OUT/<name>/data/<config>/<split>-NNNNN-of-NNNNN.parquet
    OUT/<name>/validation/report.json, report.html
    OUT/<name>/quarantine/<rule>.parquet                   rows dropped by a rule, with a ``reason`` column
    OUT/<name>/manifest.json                               inputs and outputs with sha256, versions, seed, accounting
    OUT/<name>/croissant.json                              Croissant 1.1 + RAI metadata (culturebench.croissant)

Written into a temp dir and renamed at the end, so an interrupted build leaves no half release; a build whose
checks fail is not renamed over it (an existing release stays as it was): it goes to ``OUT/.failed/<name>/``, its
report in ``validation/``.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from importlib import import_module, metadata
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from culturebench import __version__, croissant, registry, release_diff
from culturebench.builders.base import BuildOutput, Progress
from culturebench.cards import render_card
from culturebench.checkout import is_bundled_sample, source_commit
from culturebench.contract import Benchmark
from culturebench.options import BuildOptions, option_fields
from culturebench.errors import ChecksFailed, InputError
from culturebench.io import atomic_directory, sha256_file, write_json
from culturebench.manifest import MANIFEST_KEYS, UNLISTED, load_manifest, unlisted_files
from culturebench.release_reader import read_dtypes, read_tables
from culturebench.validation import great_expectations_process, summary, validate_tables
from culturebench.validation.report import left_out_rows, write_report

SHARD_ROWS = 5_000_000
ROW_GROUP_ROWS = 500_000
LIBRARIES = ("polars", "pyarrow", "pandera", "great-expectations", "pyreadstat", "pdfplumber", "pypdfium2",
             "datasets")
WRITE_STAGES = ("write", "validate")
FAILED = ".failed"
"""``OUT/.failed/<name>/``: the last build of ``name`` whose checks failed, report in ``validation/``."""
def build_release(benchmark: Benchmark, raw: Path, out: Path, seed: int, progress: Progress,
                  options: BuildOptions | None = None, previous: str | Path | None = None) -> tuple[Path, dict]:
    """Build ``benchmark`` from ``raw`` into ``out/<its name>``; returns the folder and the validation summary.
    ``options``: its build options (``Benchmark.build_options()``; ``culturebench build NAME --flag``), given to a
    builder that has any. With ``previous`` (an earlier release of the benchmark) the manifest's ``changes`` and the
    card say what changed since.

    An InputError names its file relative to ``raw``. When a check fails, ``out/name`` is left as it was and
    ChecksFailed is raised; the failed build is kept in ``out/.failed/name/`` (report in ``validation/``)."""
    name = benchmark.name
    builder = benchmark.builder_module()
    if not Path(raw).is_dir():
        raise InputError("raw folder not found (--raw names the folder of raw inputs)", file=raw)
    earlier = release_diff.previous_release(previous, name) if previous is not None else None
    with great_expectations_process(name) as great_expectations, atomic_directory(out / name) as folder:
        import_in_background(benchmark.schemas_module, "datasets")  # the checks' and the card's imports
        try:
            takes_options = options is not None and option_fields(type(options), None, cli_only=False)
            output: BuildOutput = builder.build(raw, seed, progress, **({"options": options} if takes_options else {}))
        except InputError as exc:
            raise exc.relative_to(raw) from None
        progress("write")
        outputs = write_tables(folder, output.tables)
        outputs += write_quarantine(folder, output.quarantine)
        accounting = {
            "rows_read": output.rows_read,
            "rows_kept": output.rows_kept,
            "rows_quarantined": output.rows_quarantined,
            "quarantined_by_rule": {rule: frame.height for rule, frame in sorted(output.quarantine.items())},
        }
        progress("validate")
        great_expectations.submit(name, folder, outputs)
        tables = as_read_back(output.tables, read_dtypes(benchmark))
        results = validate_tables(benchmark, tables, accounting, great_expectations)
        rows = {config: {split: frame.height for split, frame in splits.items()} for config, splits in tables.items()}
        origin = {"source_commit": source_commit(),
                  "bundled_sample": is_bundled_sample([{"name": i.name, "sha256": i.sha256} for i in output.inputs])}
        write_report(folder / "validation", name, results, rows, accounting["quarantined_by_rule"],
                     schemas=getattr(benchmark.schemas_module(), "SCHEMAS", {}), tables=tables, quarantine_frames=output.quarantine, inputs=output.inputs, seed=seed, origin=origin,
                     left_out=left_out_rows(builder, output.provenance or {}))
        manifest = {
            "benchmark": name,
            "culturebench_version": __version__,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seed": seed,
            "python": platform.python_version(),
            "libraries": {lib: _version(lib) for lib in LIBRARIES},
            "inputs": [{"name": i.name, "sha256": i.sha256, "size": i.size, "rows": i.rows,
                        **({"encoding": i.encoding} if i.encoding else {})} for i in output.inputs],
            "provenance": output.provenance,
            "accounting": accounting,
            "redistributable": {c.name: c.redistributable for c in (output.card or builder.CARD).configs},
            "validation": summary(results),
            **origin,
        }
        if earlier is not None:
            manifest["changes"] = release_diff.changes_since(earlier, folder, manifest | {"outputs": outputs})
        card = output.card or builder.CARD
        (folder / "README.md").write_text(render_card(card, tables, manifest), encoding="utf-8")
        (folder / croissant.FILE).write_text(
            croissant.render(benchmark, card, manifest | {"outputs": outputs}, folder, tables), encoding="utf-8")
        for extra in ("README.md", croissant.FILE, "validation/report.json", "validation/report.html"):
            outputs.append({"path": extra, "sha256": sha256_file(folder / extra)})
        manifest["outputs"] = sorted(outputs, key=lambda o: o["path"])
        write_json(folder / "manifest.json", manifest)
        if manifest["validation"]["failed"]:
            raise keep_failed_report(folder, out, name, results)
    return out / name, manifest["validation"]


def import_in_background(*modules: str | Callable[[], object]) -> threading.Thread:
    """Import ``modules`` in a thread (a module's name, or a function that imports it: ``Benchmark.schemas_module``): pandera and ``datasets`` take ~1 s of imports that the checks and the card
    need only at the end, while a build spends its first seconds in polars, which releases the GIL (a module the
    main thread imports meanwhile waits for this thread's import of it, as Python's import lock ensures)."""
    def load() -> None:
        for module in modules:
            with contextlib.suppress(Exception):  # a failing import fails again, with its message, in the main thread
                module() if callable(module) else import_module(module)

    thread = threading.Thread(target=load, daemon=True, name="culturebench-imports")
    thread.start()
    return thread


def as_read_back(tables: dict[str, dict[str, pl.DataFrame]], dtypes: dict[str, dict[str, pl.DataType]]
                 ) -> dict[str, dict[str, pl.DataFrame]]:
    """The build's tables exactly as :func:`read_tables` reads them back from the parquet :func:`write_parquet`
    wrote (no Arrow schema stored: Enum and Categorical columns come back as String), with ``dtypes[config]`` cast
    the same way: the checks run on these instead of re-reading ~20M rows (``culturebench validate`` runs the same
    checks on the files; tests compare the two)."""
    out: dict[str, dict[str, pl.DataFrame]] = {}
    for config, splits in tables.items():
        wanted = (dtypes or {}).get(config, {})
        for split, frame in splits.items():
            targets = {column: wanted.get(column, pl.String) for column, dtype in frame.schema.items()
                       if column in wanted or isinstance(dtype, (pl.Enum, pl.Categorical))}
            casts = [pl.col(column).cast(target, strict=False) for column, target in targets.items()
                     if frame.schema[column] != target]
            out.setdefault(config, {})[split] = frame.with_columns(casts) if casts else frame
    return out


def keep_failed_report(folder: Path, out: Path, name: str, results: list) -> ChecksFailed:
    """Move a failed build (its report, data and manifest) to ``out/.failed/name/``, replacing the last one there,
    instead of over ``out/name``."""
    kept = Path(out) / FAILED / name
    shutil.rmtree(kept, ignore_errors=True)
    kept.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    folder.rename(kept)
    failed = [f"{r.config}: {r.name}" for r in results if not r.passed]
    return ChecksFailed(name, failed, kept / "validation" / "report.html")


def write_tables(folder: Path, tables: dict[str, dict[str, pl.DataFrame]]) -> list[dict]:
    """Write every config/split as parquet shards of at most SHARD_ROWS rows, each hashed as soon as written (in
    parallel: pyarrow and hashlib drop the GIL)."""
    jobs = []
    for config, splits in tables.items():
        for split, frame in splits.items():
            shards = max(1, -(-frame.height // SHARD_ROWS))
            for index in range(shards):
                jobs.append((f"data/{config}/{split}-{index:05d}-of-{shards:05d}.parquet", config, split,
                             frame.slice(index * SHARD_ROWS, SHARD_ROWS)))

    def write(path: str, part: pl.DataFrame) -> str:
        write_parquet(part, folder / path)
        return sha256_file(folder / path)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        digests = list(pool.map(write, [job[0] for job in jobs], [job[3] for job in jobs]))
    return [{"path": path, "config": config, "split": split, "rows": part.height, "sha256": digest}
            for (path, config, split, part), digest in zip(jobs, digests)]


def write_quarantine(folder: Path, quarantine: dict[str, pl.DataFrame]) -> list[dict]:
    outputs = []
    for rule, frame in sorted(quarantine.items()):
        relative = f"quarantine/{rule}.parquet"
        write_parquet(frame, folder / relative)
        outputs.append({"path": relative, "rows": frame.height, "sha256": sha256_file(folder / relative)})
    return outputs


def write_parquet(frame: pl.DataFrame, path: Path) -> None:
    """Deterministic parquet (zstd, fixed row groups). No Arrow schema is stored, so readers see plain parquet
    types: a polars Enum/Categorical column is written dictionary-encoded and read back as a plain string."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(frame.to_arrow(), path, compression="zstd", row_group_size=ROW_GROUP_ROWS,
                   write_statistics=True, store_schema=False)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def file_problems(release: Path, manifest: dict) -> list[str]:
    """What ``validate`` and ``audit`` both refuse in a release's files: a listed output missing or with another
    sha256 than recorded, a file the manifest does not list (``load_dataset`` would read a stray shard), and a file
    whose sha256 croissant.json states otherwise (``croissant.problems``)."""
    release = Path(release)
    problems, digests = [], {}
    for output in manifest["outputs"]:
        path = release / output["path"]
        if not path.is_file():
            problems.append(f"{output['path']}: missing")
        elif (actual := digests.setdefault(output["path"], sha256_file(path))) != output.get("sha256"):
            problems.append(f"{output['path']}: sha256 {actual[:16]}… but manifest.json says "
                            f"{str(output.get('sha256'))[:16]}…")
    problems += [f"{relative}: {UNLISTED}" for relative in unlisted_files(release, manifest)]
    return problems + croissant.problems(release, manifest, digests)


def revalidate(release: Path) -> tuple[dict, list, list[str]]:
    """Re-run every check of a release from its files (``culturebench validate``): the same checks the build ran
    (same count), plus the file problems ``audit`` also refuses (``file_problems``: a listed file missing or
    changed, an unlisted file), reported apart and not counted as checks."""
    manifest = load_manifest(release, MANIFEST_KEYS)
    problems = file_problems(release, manifest)
    readable = [o for o in manifest["outputs"] if (Path(release) / o["path"]).is_file()]
    benchmark = registry.benchmark(manifest["benchmark"])
    tables = read_tables(release, readable, read_dtypes(benchmark))
    return manifest, validate_tables(benchmark, tables, manifest["accounting"]), problems
