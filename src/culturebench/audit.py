"""Audit a release folder from its files alone (``culturebench audit``).

1. every output listed in ``manifest.json`` exists and has the recorded sha256 (a tampered parquet file, card or
   report is caught), no unlisted file sits in the folder (a stray ``data/<config>/<split>-*.parquet`` would be read
   by ``load_dataset``), and every parquet file has the row count the manifest recorded;
2. every check re-runs on the parquet files as they are and must pass, with the same outcome as ``report.json``;
3. the validation report, the dataset card and croissant.json re-render byte for byte from the files (so editing a
   file *and* its hash in the manifest is caught too, as long as the card, report or Croissant describes it);
   croissant.json's FileObjects must carry each data file's sha256 (as ``validate`` checks too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from culturebench import croissant
from culturebench.errors import InputError
from culturebench.manifest import MANIFEST_KEYS
from culturebench.release import file_problems
from culturebench.release_reader import Release, read_dtypes, read_tables
from culturebench.splits import SPLIT_NAMES
from culturebench.validation import summary, validate_tables
from culturebench.validation.report import ORIGIN_KEYS, build_report, left_out_rows, render_html


@dataclass
class Audit:
    release: Path
    benchmark: str
    files: int = 0
    problems: list[str] = field(default_factory=list)
    checks: dict = field(default_factory=dict)
    failed_checks: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.failed_checks

    def verdict(self) -> str:
        c = self.checks
        if self.ok:
            return (f"OK {self.benchmark}: {self.files} files match manifest.json, {c.get('passed', 0)}/{c.get('checks', 0)} "
                    "checks pass, report, card and croissant.json reproduce")
        return (f"FAILED {self.benchmark}: {len(self.problems)} file problems, "
                f"{len(self.failed_checks)} failing checks ({c.get('passed', 0)}/{c.get('checks', 0)} pass)")


def audit(value: str | Path) -> Audit:
    """Audit the release ``value`` names (a folder, or ``ORG/NAME[@REVISION]``: ``Release.open``)."""
    release = Release.open(value, required=MANIFEST_KEYS)
    folder, manifest = release.folder, release.manifest.data
    benchmark = release.benchmark  # the manifest names it: looked up once, here
    result = Audit(folder, benchmark.name, files=len(release.manifest.outputs))
    result.problems = file_problems(release)  # the same file check as ``validate``
    damaged = {problem.split(": ", 1)[0] for problem in result.problems}
    for output in release.manifest.outputs:
        path = folder / output.path
        if output.rows is not None and path.suffix == ".parquet" and output.path not in damaged:
            try:
                rows = pq.ParquetFile(path).metadata.num_rows
            except Exception as exc:  # noqa: BLE001 - unreadable parquet is a finding, not a crash
                result.problems.append(f"{output.path}: not readable parquet ({exc})")
                continue
            if rows != output.rows:
                result.problems.append(f"{output.path}: {rows:,} rows but manifest.json says {output.rows:,}")

    readable = [o for o in manifest["outputs"] if "config" in o and (folder / o["path"]).is_file()]
    try:
        tables = read_tables(folder, readable, read_dtypes(benchmark))
    except InputError as exc:
        result.problems.append(str(exc))
        return result
    builder = benchmark.builder_module()
    card = builder.manifest_card(manifest) if hasattr(builder, "manifest_card") else getattr(builder, "CARD", None)
    tables = ordered(tables, [c.name for c in getattr(card, "configs", ())])
    results = validate_tables(benchmark, tables, manifest["accounting"])
    result.checks = summary(results)
    result.failed_checks = [f"{r.config}: {r.name} (observed {r.observed!r}, expected {r.expected!r})"
                            for r in results if not r.passed]

    rows = {config: {split: frame.height for split, frame in splits.items()} for config, splits in tables.items()}
    quarantine_frames = {}
    for output in manifest["outputs"]:
        if output["path"].startswith("quarantine/") and (folder / output["path"]).is_file():
            quarantine_frames[Path(output["path"]).stem] = pl.read_parquet(folder / output["path"])
    report = build_report(benchmark.name, results, rows, manifest["accounting"]["quarantined_by_rule"],
                          schemas=getattr(benchmark.schemas_module(), "SCHEMAS", {}), tables=tables,
                          quarantine_frames=quarantine_frames, inputs=manifest["inputs"], seed=manifest["seed"],
                          origin={key: manifest.get(key) for key in ORIGIN_KEYS},
                          left_out=left_out_rows(builder, manifest.get("provenance") or {}))
    _compare(result, folder / "validation" / "report.html", render_html(report), "validation report")
    stored = _load_json(folder / "validation" / "report.json")
    if stored is not None:
        recorded = {(c["config"], c["name"]): c["passed"] for c in stored.get("checks", [])}
        rerun = {(r.config, r.name): r.passed for r in results}
        if recorded != rerun:
            differ = sorted(k for k in recorded.keys() | rerun.keys() if recorded.get(k) != rerun.get(k))
            result.problems.append(f"validation/report.json: {len(differ)} checks differ from the re-run "
                                   f"(first: {differ[0][0]}: {differ[0][1]})")
    if summary(results) != manifest.get("validation"):
        result.problems.append(f"manifest.json: validation {manifest.get('validation')} but the re-run gives {summary(results)}")
    if card is not None:
        from culturebench.cards import render_card

        _compare(result, folder / "README.md", render_card(card, tables, manifest), "dataset card")
        data = croissant.data_outputs(manifest)
        if croissant.FILE in {o["path"] for o in manifest["outputs"]} and all((folder / o["path"]).is_file() for o in data):
            _compare(result, folder / croissant.FILE, croissant.render(benchmark, card, manifest, folder, tables),
                     "Croissant metadata")
    return result


def ordered(tables: dict[str, dict[str, pl.DataFrame]], configs: list[str]) -> dict[str, dict[str, pl.DataFrame]]:
    """Tables in the order the build wrote them (the card's config order; splits train, validation, test, then the
    rest by name): the manifest lists files by path, but the report and card follow the build's order."""
    def split_key(split: str) -> tuple:
        return (SPLIT_NAMES.index(split), "") if split in SPLIT_NAMES else (len(SPLIT_NAMES), split)

    names = [c for c in configs if c in tables] + sorted(c for c in tables if c not in configs)
    return {c: {s: tables[c][s] for s in sorted(tables[c], key=split_key)} for c in names}


def _compare(result: Audit, path: Path, expected: str, what: str) -> None:
    if not path.is_file():
        return  # reported as missing above
    if path.read_text(encoding="utf-8", errors="replace") != expected:
        result.problems.append(f"{path.relative_to(result.release).as_posix()}: differs from the {what} "
                               "re-rendered from the files")


def _load_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
