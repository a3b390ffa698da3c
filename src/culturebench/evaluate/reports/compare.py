"""``culturebench compare RUN_DIR... --out REPORT_DIR`` (issue #18): one self-contained HTML page comparing the
models of several run folders on one benchmark: the paper's main tables with bootstrap intervals, its main figures
with one series per model, and which differences between models are significant.

What is generic lives here: reading run folders (``read_run``), refusing runs of different releases
(``check_releases``), the releases they are compared against (``release_paths``), unique model labels across runs
(``model_labels``) and their responses relabelled (``relabelled_responses``), a value with its interval as flat
columns (``with_interval``), and the report (``write_report``:
report.html with the figures inlined as data URIs, every figure as a PNG, every table as CSV and all of them in
comparison.json). What a benchmark compares is one declarative ``BenchmarkSpec``, its ``Benchmark.comparison()``
(by convention the ``COMPARE`` of its ``compare`` module): a ``build`` function (the run folders and the bootstrap settings ->
a ``Comparison``: models, flat tables, the metrics behind them, notes), the ``tables`` to show (name in
``Comparison.tables``, title citing the paper), the ``figures`` (file name, title, draw function, the table it is
drawn from: the page shows it above that table) and a sentence on how significance is decided. A benchmark without
a comparison is refused with a one-line error.

Tables are flat (one value per cell) so that they go to CSV as they are; a column ``X`` followed by ``X_low`` and
``X_high`` is shown on the page as one cell "X [low, high]". A boolean column ``significant`` is what the page's
"Significant differences" list reads, and the only column it highlights (null: no verdict, where resampling
cannot estimate a spread; the reasons are ``Comparison.metrics["warnings"]``, shown under "Intervals" and
printed).
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from culturebench import registry
from culturebench.errors import InputError
from culturebench.evaluate.runs import run_folder, run_record
from culturebench.evaluate.reports.uncertainty import Bootstrap
from culturebench.io import atomic_directory, write_json
from culturebench.words import plural

REPORT_FILE = "report.html"
JSON_FILE = "comparison.json"
SIGNIFICANT = "significant"
"""The boolean column the page highlights (and lists under "Significant differences"); other flags, such as a
group's "small", are shown plain: most groups of a small run are small, and red on every row says nothing."""


# ------------------------------------------------------------------------------------------------ run folders


@dataclass(frozen=True)
class RunFolder:
    """One run folder as ``compare`` reads it: metrics.json (required), run.json (when ``evaluate`` wrote it), the
    release it scored (path and manifest sha256) and its model labels."""

    path: Path
    benchmark: str
    metrics: dict
    run: dict | None
    release: Path | None
    manifest_sha256: str | None
    models: list[str]

    def responses(self) -> list[Path]:
        """The answers behind the metrics: RUN_DIR/responses.jsonl, else the files metrics.json lists as scored."""
        return self.scored_files(run_folder.RESPONSES_FILE, "responses")

    def scored_files(self, name: str, key: str) -> list[Path]:
        """The files behind the metrics: RUN_DIR/``name``, else the files metrics.json lists under ``key`` (a
        ``score`` folder that only re-aggregated); an InputError when there are neither."""
        own = self.path / name
        if own.is_file():
            return [own]
        listed = [Path(s["path"]) for s in self.metrics.get(key) or [] if s.get("path")]
        if not listed:
            raise InputError(f"run folder has no {name} and its metrics.json lists no {key} file", file=self.path)
        return listed


def read_run(path: Path | str) -> RunFolder:
    """A run folder of ``evaluate`` or ``score``; a folder without a readable metrics.json is an InputError."""
    path = Path(path)
    metrics_path = path / run_folder.METRICS_FILE
    if not metrics_path.is_file():
        raise InputError("not a run folder (no metrics.json)", file=path)
    metrics = read_json_object(metrics_path)
    run_path = path / run_record.RUN_FILE
    run = read_json_object(run_path) if run_path.is_file() else None
    release_record = (run or {}).get("release") or {}
    release = release_record.get("path") or metrics.get("release")
    sha = release_record.get("manifest_sha256") or metrics.get("release_manifest_sha256")
    if sha is None:
        sha = run_folder.release_manifest_sha256(release)
    benchmark = metrics.get("benchmark") or (run or {}).get("benchmark")
    if not benchmark:
        raise InputError("metrics.json names no benchmark", file=metrics_path)
    return RunFolder(path, str(benchmark), metrics, run, None if release is None else Path(release), sha,
                     [str(m) for m in metrics.get("models") or []])


def read_json_object(path: Path) -> dict:
    """A JSON file holding one object (metrics.json, run.json); anything else is an InputError naming the file."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not valid JSON ({exc})", file=path) from None
    if not isinstance(value, dict):
        raise InputError("not a JSON object", file=path)
    return value


def check_releases(folders: Sequence[RunFolder], allow_mixed: bool) -> list[str]:
    """One benchmark across the runs, always; one release (manifest sha256) unless ``allow_mixed``. Returns notes
    for the report (the releases when mixed)."""
    benchmarks = sorted({f.benchmark for f in folders})
    if len(benchmarks) > 1:
        raise InputError(f"runs are of different benchmarks ({', '.join(benchmarks)}); compare one at a time")
    hashes = {f.manifest_sha256 for f in folders}
    if len(hashes) == 1 and None not in hashes:
        return []
    described = "; ".join(f"{f.path} ({(f.manifest_sha256 or 'unknown')[:12]})" for f in folders)
    if not allow_mixed:
        unknown = [str(f.path) for f in folders if f.manifest_sha256 is None]
        if unknown:
            raise InputError(f"cannot tell which release run {unknown[0]} scored (no manifest hash in run.json or "
                             f"metrics.json); pass --allow-mixed to compare anyway")
        raise InputError(f"runs come from different releases (manifest sha256: {described}); pass --allow-mixed "
                         f"to compare anyway")
    return [f"Mixed releases, compared with --allow-mixed: {described}."]


def release_paths(folders: Sequence[RunFolder], release: Path | None) -> list[Path]:
    """The releases the runs are compared against: ``release`` when given, else the releases the runs name (first
    seen first, each once; several only with --allow-mixed). An InputError when none is named or one has no
    manifest.json."""
    paths = [Path(release)] if release is not None else list(dict.fromkeys(f.release for f in folders if f.release))
    if not paths:
        raise InputError("the runs name no release; pass --release", file=folders[0].path)
    for path in paths:
        if not (path / "manifest.json").is_file():
            raise InputError("release folder of the runs not found; pass --release", file=path)
    return paths


def relabelled_responses(folders: Sequence[RunFolder], labels: list[dict[str, str]],
                         read: Callable[[list[Path]], pl.DataFrame]) -> tuple[pl.DataFrame, list[dict]]:
    """Every run's responses (``read`` of its ``responses()`` files) in one frame, its models renamed to their
    ``model_labels``, and the source records of the files read."""
    frames, sources = [], []
    for folder, mapping in zip(folders, labels):
        paths = folder.responses()
        frames.append(read(paths).with_columns(pl.col("model").replace(mapping)))
        sources += [run_folder.source_info(p) for p in paths]
    return pl.concat(frames), sources


def model_labels(folders: Sequence[RunFolder]) -> list[dict[str, str]]:
    """Per run, its model label -> the label in the comparison: the same, unless the label occurs in more than one
    run, then ``label (run folder name)`` (``label (run N)`` if the folder names are alike too)."""
    counts: dict[str, int] = {}
    for folder in folders:
        for model in folder.models:
            counts[model] = counts.get(model, 0) + 1
    names = [f.path.name for f in folders]
    out = []
    for i, folder in enumerate(folders):
        suffix = names[i] if names.count(names[i]) == 1 else f"run {i + 1}"
        out.append({m: (f"{m} ({suffix})" if counts[m] > 1 else m) for m in folder.models})
    return out


def with_interval(name: str, value, interval: Sequence | None) -> dict:
    """The flat columns of a value and its interval: ``name``, ``name_low``, ``name_high`` (None without one)."""
    low, high = interval or (None, None)
    return {name: value, f"{name}_low": low, f"{name}_high": high}


# ------------------------------------------------------------------------------------------------ the spec


@dataclass
class Comparison:
    """What a benchmark's ``build`` returns: the models (labels), flat tables by name, the metrics behind them
    (written to comparison.json) and notes for the page."""

    models: list[str]
    tables: dict[str, pl.DataFrame]
    metrics: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Table:
    """A table of the report: ``name`` keys ``Comparison.tables`` and names the CSV file."""

    name: str
    title: str
    caption: str = ""
    empty: str = ""
    """Why the table can have no rows (said on the page in place of an empty table)."""


@dataclass(frozen=True)
class Figure:
    """A figure of the report: ``name`` is the PNG's file name; ``draw(comparison, path)`` writes it."""

    name: str
    title: str
    draw: Callable[[Comparison, Path], None]
    caption: str = ""
    table: str = ""
    """The table whose numbers it draws: the page shows the figure right above it (else after all tables)."""


@dataclass(frozen=True)
class BenchmarkSpec:
    """How one benchmark is compared (its ``Benchmark.comparison()``)."""

    benchmark: str
    title: str
    """The paper: name, authors, year, arXiv id."""
    build: Callable[[Sequence[RunFolder], list[dict[str, str]], Bootstrap, Path | None], Comparison]
    """(run folders, their ``model_labels``, bootstrap settings, the --release override or None) -> Comparison."""
    tables: tuple[Table, ...]
    figures: tuple[Figure, ...]
    significance: str
    """How the page decides that a difference is significant (one or two sentences)."""


def spec_for(benchmark: str) -> BenchmarkSpec:
    """The benchmark's ``comparison()`` (``registry.benchmark``); an InputError when it has none yet."""
    known = registry.benchmark(benchmark) if benchmark in registry.names() else None
    spec = known.comparison() if known is not None else None
    if spec is None:
        raise InputError(f"compare does not know benchmark {benchmark!r} yet")
    return spec


# ------------------------------------------------------------------------------------------------ the command


def compare(run_dirs: Sequence[Path], out: Path, *, settings: Bootstrap = Bootstrap(), allow_mixed: bool = False,
            release: Path | None = None) -> tuple[str, list[Path]]:
    """``culturebench compare``: read and check the runs, build the benchmark's comparison, write the report;
    returns (summary line, paths written)."""
    if not run_dirs:
        raise InputError("give at least one run folder")
    folders = [read_run(p) for p in run_dirs]
    notes = check_releases(folders, allow_mixed)
    spec = spec_for(folders[0].benchmark)
    labels = model_labels(folders)
    comparison = spec.build(folders, labels, settings, release)
    comparison.notes[:0] = notes
    spread = variant_spread_table(folders, labels)
    if spread is not None:
        comparison.tables[VARIANT_SPREAD_TABLE.name] = spread
        spec = dataclasses.replace(spec, tables=(*spec.tables, VARIANT_SPREAD_TABLE))
    written = write_report(spec, comparison, folders, settings, Path(out))
    verdicts = [t[SIGNIFICANT] for t in comparison.tables.values() if SIGNIFICANT in t.columns]
    significant = sum(int(v.sum()) for v in verdicts)
    undecided = sum(v.null_count() for v in verdicts)
    line = (f"{spec.benchmark}: compared {len(comparison.models)} models from {len(folders)} runs; "
            f"{significant} significant differences"
            f"{f', {undecided} without a verdict (see the warnings)' if undecided else ''}; "
            f"report {Path(out) / REPORT_FILE}")
    if spread is not None:
        exceeds = spread[EXCEEDS].drop_nulls()
        line += (f"\n{spec.benchmark}: {int(exceeds.sum())} of {exceeds.len()} model differences exceed the prompt "
                 f"variants' spread ({VARIANT_SPREAD_TABLE.name}.csv)")
    return "\n".join([line, *(f"warning: {w}" for w in no_spread_warnings(comparison))]), written


EXCEEDS = "exceeds_variant_spread"
VARIANT_SPREAD_TABLE = Table(
    "variant_spread", "Model differences against the prompt variants' spread (issue #63, docs/robustness.md)",
    caption="Per pair of runs asked with --variants and per headline: the difference of their paper-protocol "
            "(default) values and each run's spread of that headline across its variants (max - min); a "
            "difference exceeds the spread when it is larger than both runs' spreads (no verdict where a run "
            "lacks the headline).")
"""The table ``compare`` adds where two or more runs carry a ``variants`` block."""


def variant_spread_table(folders: Sequence[RunFolder], labels: list[dict[str, str]]) -> pl.DataFrame | None:
    """Per pair of runs with a metrics.json ``variants`` block (``evaluate --variants``) and per headline both
    report: the default variant's values, their difference, each run's spread across its variants and whether
    the difference's size exceeds both spreads; None with fewer than two such runs."""
    with_variants = [(f, mapping) for f, mapping in zip(folders, labels) if f.metrics.get("variants")]
    if len(with_variants) < 2:
        return None
    rows = []
    for i, (a, label_a) in enumerate(with_variants):
        for b, label_b in with_variants[i + 1:]:
            block_a, block_b = a.metrics["variants"], b.metrics["variants"]
            for name in sorted(set(block_a["spread"]) & set(block_b["spread"])):
                value_a, value_b = block_a["headlines"]["default"].get(name), block_b["headlines"]["default"].get(name)
                spread_a = block_a["spread"][name]["max_minus_min"]
                spread_b = block_b["spread"][name]["max_minus_min"]
                difference = None if value_a is None or value_b is None else value_a - value_b
                rows.append({"model_a": _run_label(a, label_a), "model_b": _run_label(b, label_b), "headline": name,
                             "value_a": value_a, "value_b": value_b, "difference": difference,
                             "variants_a": ", ".join(block_a["variants"]), "variants_b": ", ".join(block_b["variants"]),
                             "spread_a": spread_a, "spread_b": spread_b,
                             EXCEEDS: None if difference is None else abs(difference) > max(spread_a, spread_b)})
    return pl.DataFrame(rows, schema={"model_a": pl.String, "model_b": pl.String, "headline": pl.String,
                                      "value_a": pl.Float64, "value_b": pl.Float64, "difference": pl.Float64,
                                      "variants_a": pl.String, "variants_b": pl.String, "spread_a": pl.Float64,
                                      "spread_b": pl.Float64, EXCEEDS: pl.Boolean})


def _run_label(folder: RunFolder, mapping: dict[str, str]) -> str:
    """A run's model as the comparison labels it (its folder name where metrics.json names no model)."""
    return next(iter(mapping.values()), folder.path.name)


def no_spread_warnings(comparison: Comparison) -> list[str]:
    """Why some numbers of the comparison have no interval and some differences no verdict: the benchmark's
    ``warnings`` (``uncertainty.warn_no_spread``)."""
    return list(comparison.metrics.get("warnings") or [])


def write_report(spec: BenchmarkSpec, comparison: Comparison, folders: Sequence[RunFolder], settings: Bootstrap,
                 out: Path) -> list[Path]:
    """REPORT_DIR: every figure (PNG), every table (CSV), comparison.json (tables as records, metrics, runs,
    settings, notes) and report.html (self-contained: the PNGs inlined), written as one step (a temporary sibling
    renamed: a failure or a signal leaves the previous report or none); returns the paths written."""
    names, images = [], {}
    with atomic_directory(out) as folder:
        for figure in spec.figures:
            figure.draw(comparison, folder / figure.name)
            images[figure.name] = base64.b64encode((folder / figure.name).read_bytes()).decode("ascii")
            names.append(figure.name)
        for table in spec.tables:
            comparison.tables[table.name].write_csv(folder / f"{table.name}.csv")
            names.append(f"{table.name}.csv")
        runs_info = [{"path": str(f.path), "models": f.models,
                      "release": None if f.release is None else str(f.release),
                      "manifest_sha256": f.manifest_sha256} for f in folders]
        payload = {"benchmark": spec.benchmark, "title": spec.title, "models": comparison.models, "runs": runs_info,
                   "uncertainty": comparison.metrics.get("uncertainty") or settings.record(unit="unit"),
                   "significance": spec.significance, "notes": comparison.notes,
                   "tables": {t.name: comparison.tables[t.name].to_dicts() for t in spec.tables},
                   "metrics": comparison.metrics}
        write_json(folder / JSON_FILE, run_folder.json_safe(payload))
        page = render_html(spec, comparison, runs_info, payload["uncertainty"], images)
        (folder / REPORT_FILE).write_text(page, encoding="utf-8")
    return [out / name for name in (*names, JSON_FILE, REPORT_FILE)]


# ------------------------------------------------------------------------------------------------ the page

STYLE = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px;
text-align:right}th{background:#f2f2f2}td.text{text-align:left}.yes{color:#a00;font-weight:600}
img{max-width:100%;border:1px solid #ddd}.note{color:#555;font-size:13px}caption{text-align:left;color:#555;
font-size:13px;caption-side:bottom;padding-top:4px}"""


def cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def display_columns(columns: Sequence[str]) -> list[tuple[str, str | None, str | None]]:
    """(column, its low column, its high column) in order, ``X_low``/``X_high`` folded into ``X``."""
    shown = []
    for c in columns:
        if c.endswith(("_low", "_high")) and c.rsplit("_", 1)[0] in columns:
            continue
        low, high = f"{c}_low", f"{c}_high"
        shown.append((c, low if low in columns else None, high if high in columns else None))
    return shown


def has_interval(frame: pl.DataFrame, low: str | None, high: str | None) -> bool:
    """Whether a column's ``low``/``high`` columns hold any interval: a head says "[95% CI]" only over one that
    does (point values under it would read as intervals the data cannot give)."""
    return bool(low and high) and (frame[low].null_count() < frame.height or frame[high].null_count() < frame.height)


def table_html(table: Table, frame: pl.DataFrame, level: float) -> str:
    columns = display_columns(frame.columns)
    head = "".join(f"<th>{html.escape(c)}{f' [{level:.0%} CI]' if has_interval(frame, low, high) else ''}</th>"
                   for c, low, high in columns)
    body = []
    for row in frame.iter_rows(named=True):
        cells = []
        for c, low, high in columns:
            value = row[c]
            text = cell(value)
            if low and (row[low] is not None or row[high] is not None):
                text += f" [{cell(row[low])}, {cell(row[high])}]"
            klass = "text" if isinstance(value, str) else ("yes" if value is True and c == SIGNIFICANT else "")
            cells.append(f"<td class={klass or 'num'}>{html.escape(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    if not body:
        why = f" {table.empty}" if table.empty else ""
        return (f"<h3 id=heading-{table.name}>{html.escape(table.title)}</h3>\n<p class=note id=table-{table.name}>"
                f"No rows for these run_folder.{html.escape(why)}</p>")
    return (f"<h3 id=heading-{table.name}>{html.escape(table.title)}</h3>\n<table id=table-{table.name}>{caption}"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def significant_lines(comparison: Comparison) -> list[str]:
    """One line per row marked significant in any table: its text columns, then its value and interval."""
    lines = []
    for frame in comparison.tables.values():
        if SIGNIFICANT not in frame.columns:
            continue
        for row in frame.filter(pl.col(SIGNIFICANT)).iter_rows(named=True):
            what = " / ".join(str(v) for k, v in row.items() if isinstance(v, str))
            numbers = [(c, low, high) for c, low, high in display_columns(frame.columns) if low]
            value = "; ".join(f"{c} {cell(row[c])} [{cell(row[low])}, {cell(row[high])}]" for c, low, high in numbers)
            lines.append(f"{what}: {value}" if value else what)
    return lines


def figure_html(figure: Figure, image: str) -> str:
    """A figure of the page: its title, caption and the PNG inlined (base64 ``image``)."""
    e = html.escape
    caption = f"<p class=note>{e(figure.caption)}</p>" if figure.caption else ""
    return (f"<h3 id=figure-{e(figure.name.rsplit('.', 1)[0])}>{e(figure.title)}</h3>{caption}"
            f"<img alt=\"{e(figure.title)}\" src=\"data:image/png;base64,{image}\">")


def render_html(spec: BenchmarkSpec, comparison: Comparison, runs_info: list[dict], record: dict,
                images: dict[str, str]) -> str:
    """The report page: models and runs, how the intervals were computed, significant differences, the tables,
    each under the figures drawn from it (inlined PNGs), then any other figure. No scripts, no external
    resources, no timestamps."""
    e = html.escape
    level = record["confidence_level"]
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{e(spec.title)}: model comparison"
             f"</title><style>{STYLE}</style></head><body>",
             f"<h1>{e(spec.title)}: model comparison</h1>",
             "<h2 id=models>Models</h2><ul>" + "".join(f"<li class=model>{e(m)}</li>" for m in comparison.models)
             + "</ul>",
             "<h2 id=runs>Runs</h2><ul>" + "".join(
                 f"<li>{e(r['path'])}: {e(', '.join(r['models']))}; release {e(str(r['release']))} (manifest sha256 "
                 f"{e(str(r['manifest_sha256']))})</li>" for r in runs_info) + "</ul>",
             f"<h2 id=uncertainty>Intervals</h2><p class=note>{level:.0%} intervals from a seeded bootstrap over "
             f"{e(plural(str(record['unit'])))} ({e(record['tool'])}, method {e(record['interval_method'])}, "
             f"{record['n_resamples']} resamples, seed {record['seed']}). Point estimates are the paper's.</p>"]
    for key in ("strata", "statistic", "paired"):
        if record.get(key):
            parts.append(f"<p class=note>{e(key)}: {e(str(record[key]))}</p>")
    unsupported = no_spread_warnings(comparison)
    if unsupported:
        parts.append("<p id=no-spread>Where resampling cannot estimate a spread, no interval and no significance "
                     "verdict are given:</p><ul>" + "".join(f"<li>{e(w)}</li>" for w in unsupported) + "</ul>")
    parts.append(f"<h2 id=significance>Significant differences</h2><p class=note>{e(spec.significance)}</p>")
    lines = significant_lines(comparison)
    none = ("<p>No difference with a verdict is significant; the others have none (see Intervals).</p>"
            if unsupported else "<p>No difference is significant.</p>")
    parts.append("<ul>" + "".join(f"<li>{e(line)}</li>" for line in lines) + "</ul>" if lines else none)
    if comparison.notes:
        parts.append("<h2 id=notes>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in comparison.notes) + "</ul>")
    parts.append("<h2 id=tables>Tables and figures</h2>")
    tables = {t.name for t in spec.tables}
    for table in spec.tables:
        parts += [figure_html(f, images[f.name]) for f in spec.figures if f.table == table.name]
        parts.append(table_html(table, comparison.tables[table.name], level))
    rest = [f for f in spec.figures if f.table not in tables]
    if rest:
        parts.append("<h2 id=figures>Figures</h2>")
        parts += [figure_html(f, images[f.name]) for f in rest]
    parts.append("</body></html>\n")
    return "\n".join(parts)
