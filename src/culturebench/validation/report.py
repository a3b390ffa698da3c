"""The validation report of a release: ``validation/report.json`` and a self-contained ``report.html``.

The HTML page is for an auditor without tools: per config its schema (columns, types, constraints) and every check
with pass/fail and observed vs expected, the quarantine by reason with a few example rows, the source rows a build
left out of a config without quarantining them (e.g. a released probe set's rows of participants not in the input), the raw
input files with their sha256 and the commands that rebuild and audit the release. It has no external assets (inline CSS, no
scripts) and no timestamps: the same release gives the same bytes, whose sha256 is in ``manifest.json``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Mapping

import polars as pl

from culturebench import __version__
from culturebench.io import write_json
from culturebench.validation import summary
from culturebench.validation.checks import CheckResult, _jsonable

QUARANTINE_EXAMPLES = 3
"""Example rows shown per quarantine rule."""
QUARANTINE_COLUMNS = ("source_file", "source_row", "reason")
"""Besides the first (key) column, the only columns of a quarantined row the report shows: where it came from and
why it was dropped. Quarantined rows are raw source rows (e.g. WVS respondents); the report is published with the
release, so it never copies their answers."""


def write_report(folder: Path, benchmark: str, results: list[CheckResult], rows: dict, quarantine: dict, *,
                 schemas: Mapping[str, Any] | None = None, tables: dict[str, dict[str, pl.DataFrame]] | None = None,
                 quarantine_frames: dict[str, pl.DataFrame] | None = None,
                 inputs: list | None = None, seed: int | None = None, origin: dict | None = None,
                 left_out: dict | None = None) -> dict:
    report = build_report(benchmark, results, rows, quarantine, schemas=schemas, tables=tables,
                          quarantine_frames=quarantine_frames, inputs=inputs, seed=seed, origin=origin,
                          left_out=left_out)
    write_json(folder / "report.json", report)
    (folder / "report.html").write_text(render_html(report), encoding="utf-8")
    return report


def build_report(benchmark: str, results: list[CheckResult], rows: dict, quarantine: dict, *,
                 schemas: Mapping[str, Any] | None = None, tables: dict[str, dict[str, pl.DataFrame]] | None = None,
                 quarantine_frames: dict[str, pl.DataFrame] | None = None,
                 inputs: list | None = None, seed: int | None = None, origin: dict | None = None,
                 left_out: dict | None = None) -> dict:
    """The report of benchmark ``benchmark`` (its name) as a JSON-able dict (deterministic: fixed orders, no
    timestamps). ``schemas``: its declared pandera schemas per config (its schemas module's ``SCHEMAS``), which the
    columns of ``tables`` are described by. ``origin``: the manifest's
    ORIGIN_KEYS (git commit of the checkout, built from the bundled sample or not); ``left_out``: per config, the
    source rows the build left out without quarantining them (``left_out_rows``)."""
    report: dict[str, Any] = {
        "benchmark": benchmark,
        "summary": summary(results),
        "rows": rows,
        "quarantine": quarantine,
        "checks": [r.as_dict() for r in results],
    }
    if tables is not None:
        report["schema"] = {config: schema_of((schemas or {}).get(config), next(iter(splits.values())))
                            for config, splits in tables.items() if splits}
    if quarantine_frames is not None:
        report["quarantine_examples"] = {rule: quarantine_examples(frame)
                                         for rule, frame in sorted(quarantine_frames.items())}
    if inputs is not None:
        report["inputs"] = [_input(i) for i in inputs]
    if seed is not None:
        report["rebuild"] = rebuild_commands(benchmark, seed, report.get("inputs", []), origin)
    if origin is not None:
        report["origin"] = {key: origin.get(key) for key in ORIGIN_KEYS}
    if left_out:
        report["left_out"] = left_out
    return report


def left_out_rows(builder, provenance: dict) -> dict:
    """The builder's ``left_out_rows`` of a build's provenance (manifest ``provenance``): per config, the source
    rows left out without a quarantine, their count by reason and country; empty for a builder that leaves none."""
    read = getattr(builder, "left_out_rows", None)
    return read(provenance) if read else {}


def _left_out_block(config: str, entry: dict) -> str:
    """What the build left out of ``config``: kept of the source's rows, then rows per reason and country."""
    esc = html.escape
    dropped = entry["rows"] - entry["kept"]
    body = [f"<tr><td>{esc(reason)}</td><td>{esc(country)}</td><td class=num>{n:,}</td></tr>"
            for reason, by_country in entry["left_out"].items() for country, n in by_country.items()]
    return (f"<h3 id=left-out-{_anchor(config)}>Config <code>{esc(config)}</code>: {entry['kept']:,} of the "
            f"{entry['rows']:,} rows of <code>{esc(entry['source'])}</code> kept, {dropped:,} left out</h3>"
            + (_table(["reason", "country", "rows"], body) if body else ""))


def schema_of(declared: Any, frame: pl.DataFrame) -> list[dict]:
    """Columns of a config as written: name, type, nullable, unique and the constraints its pandera schema
    (``declared``; None: none) checks."""
    columns = getattr(declared, "columns", {}) or {}
    out = []
    for name, dtype in frame.schema.items():
        column = columns.get(name)
        out.append({
            "column": name,
            "type": type_label(dtype),
            "nullable": bool(getattr(column, "nullable", True)),
            "unique": bool(getattr(column, "unique", False)),
            "constraints": [str(c.error or c.name) for c in getattr(column, "checks", [])],
        })
    return out


def type_label(dtype: pl.DataType) -> str:
    """A short readable type: ``string (one of 239 values)`` for an Enum rather than its whole category list."""
    if isinstance(dtype, pl.Enum):
        return f"string (one of {len(dtype.categories)} values)"
    if isinstance(dtype, pl.Categorical):
        return "string (categorical)"
    return str(dtype).replace("String", "string")


def quarantine_examples(frame: pl.DataFrame) -> dict:
    """Rows per reason and the first few rows of a quarantine table (key column + where from + why)."""
    columns = [c for c in frame.columns[:1] if c not in QUARANTINE_COLUMNS] + [c for c in QUARANTINE_COLUMNS if c in frame.columns]
    reasons: dict[str, int] = {}
    if "reason" in frame.columns and frame.height:
        counts = frame.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
        reasons = {str(r): int(n) for r, n in counts.iter_rows()}
    head = frame.select(columns).head(QUARANTINE_EXAMPLES)
    return {"rows": frame.height, "reasons": reasons, "columns": columns,
            "examples": [[_jsonable(v) for v in row] for row in head.iter_rows()]}


ORIGIN_KEYS = ("source_commit", "bundled_sample")
"""Manifest fields that say where a release came from (``culturebench.checkout``); the rebuild recipe uses them."""


def rebuild_commands(benchmark: str, seed: int, inputs: list[dict], origin: dict | None = None) -> list[str]:
    """A shell recipe that rebuilds the release: culturebench from a checkout at the recorded commit (no package
    index has it and its wheel ships no sample ``raw/``), the raw inputs checked against their sha256, build, audit."""
    origin = origin or {}
    source = origin.get("source_commit") or {}
    if source.get("commit"):
        commands = ["# culturebench at the commit that built this release, from a clone of its repository:",
                    f"git checkout {source['commit']}"
                    + ("    # the build also had uncommitted changes to this commit" if source.get("dirty") else "")]
    else:
        commands = [f"# culturebench {__version__} from its source tree (the build recorded no git commit):"]
    commands.append("pip install -e .    # takes a few minutes (polars, pyarrow, datasets, great-expectations, ...)")
    raw = "raw" if origin.get("bundled_sample") else "RAW"
    if inputs:
        commands.append("# the bundled synthetic sample in the checkout's raw/; check it:" if raw == "raw" else
                        "# put the raw inputs under RAW/ and check them:")
        commands.append("sha256sum -c - <<'EOF'")
        commands += [f"{i['sha256']}  {raw}/{i['name']}" for i in inputs]
        commands.append("EOF")
    commands += [f"culturebench build {benchmark} --raw {raw} --out releases --seed {seed}",
                 f"culturebench audit releases/{benchmark}"]
    return commands


def _input(item: Any) -> dict:
    if isinstance(item, dict):
        return {k: item.get(k) for k in ("name", "size", "rows", "sha256")}
    return {"name": item.name, "size": item.size, "rows": item.rows, "sha256": item.sha256}


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return html.escape(text)


def _table(head: list[str], body: list[str], css: str = "") -> str:
    heads = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    return f"<table{f' class={css}' if css else ''}><thead><tr>{heads}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _checks_table(checks: list[dict]) -> str:
    body = [
        f"<tr class={_status(c)}><td class=result>{_status(c).upper()}</td>"
        f"<td>{html.escape(_clip(c['name']))}</td><td>{html.escape(c['tool'])}</td><td class=mono>{_cell(_clip_value(c['observed']))}</td>"
        f"<td class=mono>{_cell(_clip_value(c['expected']))}</td><td class=num>{c['failures']:,}</td>"
        f"<td class=mono>{html.escape('; '.join(map(str, c['examples'])))}</td></tr>"
        for c in checks
    ]
    widths = "".join(f"<col style='width:{w}'>" for w in ("64px", "32%", "150px", "18%", "18%", "64px", "auto"))
    table = _table(["result", "check", "tool", "observed", "expected", "failing", "examples"], body, "checks")
    return table.replace("<table class=checks>", f"<table class=checks><colgroup>{widths}</colgroup>", 1)


def _status(check: dict) -> str:
    return "info" if check.get("informational") else "pass" if check["passed"] else "fail"


def _clip(text: str, limit: int = 240) -> str:
    """Long constraint text (an isin over hundreds of codes) shortened on the page; report.json keeps it whole."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters; full text in report.json)"


def _clip_value(value: Any, limit: int = 12) -> Any:
    """A long observed/expected list or dict shortened on the page (first ``limit`` entries); report.json keeps it."""
    if isinstance(value, list) and len(value) > limit:
        return [*value[:limit], f"… {len(value) - limit:,} more"]
    if isinstance(value, dict) and len(value) > limit:
        return {**dict(list(value.items())[:limit]), "…": f"{len(value) - limit:,} more"}
    return value


def _anchor(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text)


def _fold(summary: str, body: str, open_: bool) -> str:
    """A collapsible block: open when it holds a failure, folded when everything in it passed."""
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{body}</details>"


def _schema_block(columns: list[dict], checks: list[dict]) -> str:
    """One row per column: its type, nulls, uniqueness, constraints and the result of all its schema checks (the
    dtype, not-null, unique and constraint checks of pandera), instead of one row per check."""
    esc = html.escape
    per_column: dict[str, list[dict]] = {}
    for c in checks:
        per_column.setdefault(c.get("column") or "", []).append(c)
    body = []
    for col in columns:
        mine = per_column.get(col["column"], [])
        failed = [c for c in mine if not c["passed"]]
        result = (f"FAIL {len(failed)}/{len(mine)}" if failed else f"PASS {len(mine)}/{len(mine)}") if mine else "&mdash;"
        detail = "".join(f"<div class=mono>{esc(_clip(c['name']))}: {c['failures']:,} failing "
                         f"({esc('; '.join(map(str, c['examples'])))})</div>" for c in failed)
        body.append(f"<tr class={'fail' if failed else 'pass'}><td><code>{esc(col['column'])}</code></td>"
                    f"<td>{esc(col['type'])}</td><td>{'yes' if col['nullable'] else 'no'}</td>"
                    f"<td>{'yes' if col['unique'] else 'no'}</td>"
                    f"<td>{esc(_clip('; '.join(col['constraints']))) or '&mdash;'}{detail}</td>"
                    f"<td class=result>{result}</td></tr>")
    return _table(["column", "type", "nulls allowed", "unique", "constraints", "schema checks"], body, "schema")


def _config_section(config: str, splits: dict, checks: list[dict], columns: list[dict] | None,
                    left_out: dict | None = None) -> str:
    esc = html.escape
    counted = [c for c in checks if not c.get("informational")]
    reported = [c for c in checks if c.get("informational")]
    failed = sum(not c["passed"] for c in counted)
    schema_checks = [c for c in counted if c["tool"] == "pandera" and c.get("column")] if columns else []
    other = [c for c in counted if c not in schema_checks]
    parts = [f"<section id=config-{_anchor(config)}><h2>Config <code>{esc(config)}</code> "
             f"<span class='badge {'fail' if failed else 'pass'}'>{len(counted) - failed}/{len(counted)} checks pass</span></h2>",
             "<p>Rows: " + esc(", ".join(f"{split} {n:,}" for split, n in splits.items()))
             + f" (all splits {sum(splits.values()):,})."
             + (f" The build kept {left_out['kept']:,} of the {left_out['rows']:,} rows of <code>"
                f"{esc(left_out['source'])}</code> and <a href=#left-out>left out "
                f"{left_out['rows'] - left_out['kept']:,}</a>." if left_out else "") + "</p>"]
    if columns:
        bad = sum(not c["passed"] for c in schema_checks)
        parts.append(_fold(f"<h3>Schema ({len(columns)} columns): {len(schema_checks) - bad}/{len(schema_checks)} "
                           f"column checks pass</h3>", _schema_block(columns, schema_checks), bad > 0))
    if other:
        bad = [c for c in other if not c["passed"]]
        parts.append(_fold(f"<h3>Table checks ({len(other)}): {len(other) - len(bad)}/{len(other)} pass</h3>",
                           _checks_table(bad + [c for c in other if c["passed"]]), bool(bad)))
    if reported:
        parts.append(_fold(f"<h3>Reported numbers ({len(reported)}; informational, not checks)</h3>",
                           _table(["number", "value"], [f"<tr><td>{esc(_clip(c['name']))}</td>"
                                                        f"<td class=mono>{_cell(_clip_value(c['observed']))}</td></tr>"
                                                        for c in reported]), False))
    if not checks:
        parts.append("<p>No checks.</p>")
    parts.append("</section>")
    return "".join(parts)


def render_html(report: dict) -> str:
    esc = html.escape
    s = report["summary"]
    benchmark = esc(report["benchmark"])
    ok = s["failed"] == 0
    checks_by_config: dict[str, list[dict]] = {}
    for c in report["checks"]:
        checks_by_config.setdefault(c["config"], []).append(c)
    configs = list(report["rows"]) + [c for c in checks_by_config if c not in report["rows"] and c != "release"]
    schema = report.get("schema", {})
    failures = [c for c in report["checks"] if not c["passed"]]

    toc = ["<li><a href=#failures>Failing checks</a></li>"] if failures else []
    left_out = report.get("left_out") or {}
    toc += ["<li><a href=#quarantine>Quarantine</a></li>"]
    toc += ["<li><a href=#left-out>Rows left out by the build</a></li>"] if left_out else []
    toc += ["<li><a href=#summary>Summary</a></li>",
            "<li><a href=#release>Release-level checks</a></li>"]
    toc += [f"<li><a href=#config-{_anchor(c)}>Config <code>{esc(c)}</code></a></li>" for c in configs]
    toc += ["<li><a href=#inputs>Input files</a></li>", "<li><a href=#rebuild>Rebuild</a></li>"]

    overview = []
    for config in configs:
        splits = report["rows"].get(config, {})
        mine = [c for c in checks_by_config.get(config, []) if not c.get("informational")]
        failed = sum(not c["passed"] for c in mine)
        overview.append(
            f"<tr class={'fail' if failed else 'pass'}><td><a href=#config-{_anchor(config)}>{esc(config)}</a></td>"
            f"<td>{esc(', '.join(f'{split}: {n:,}' for split, n in splits.items()))}</td>"
            f"<td class=num>{sum(splits.values()):,}</td><td class=num>{len(mine) - failed}/{len(mine)}</td></tr>")
    sections = [_config_section(config, report["rows"].get(config, {}), checks_by_config.get(config, []),
                                schema.get(config), left_out.get(config)) for config in configs]
    left_out_html = (
        "<section id=left-out><h2>Rows left out by the build</h2><p>Rows of a file that lists what a config holds "
        "(e.g. the authors' released probe set) which the config does not hold, because the input files lack what "
        "they point to (a participant, an answer), counted per reason and country (the manifest's "
        "<code>provenance</code> holds the same counts). They are not in the quarantine, which keeps rows of the "
        "input files.</p>"
        + "".join(_left_out_block(config, entry) for config, entry in left_out.items()) + "</section>"
        if left_out else "")

    examples = report.get("quarantine_examples", {})
    quarantine_parts = []
    for rule, n in report["quarantine"].items():
        info = examples.get(rule, {})
        part = [f"<h3><code>{esc(rule)}</code>: {n:,} rows (<code>quarantine/{esc(rule)}.parquet</code>)</h3>"]
        if info.get("reasons"):
            part.append(_table(["reason", "rows"], [f"<tr><td>{esc(r)}</td><td class=num>{k:,}</td></tr>"
                                                    for r, k in info["reasons"].items()]))
        if info.get("examples"):
            part.append(f"<p>First {len(info['examples'])} rows (key and provenance columns only):</p>")
            part.append(_table(info["columns"], ["<tr>" + "".join(f"<td class=mono>{_cell(v)}</td>" for v in row) + "</tr>"
                                                 for row in info["examples"]]))
        quarantine_parts.append("".join(part))
    quarantine_html = "".join(quarantine_parts) or "<p>No rows were quarantined.</p>"

    inputs = report.get("inputs")
    inputs_html = (_table(["file", "bytes", "rows", "sha256"],
                          [f"<tr><td><code>{esc(i['name'])}</code></td><td class=num>{i['size']:,}</td>"
                           f"<td class=num>{i['rows']:,}</td><td class=hash>{esc(i['sha256'])}</td></tr>" for i in inputs])
                   if inputs else "<p>Not recorded in this report; see <code>manifest.json</code>.</p>")
    rebuild = report.get("rebuild")
    rebuild_html = (f"<pre>{esc(chr(10).join(rebuild))}</pre>" if rebuild else
                    f"<pre>culturebench build {benchmark} --raw RAW --out releases\nculturebench audit releases/{benchmark}</pre>")
    release_checks = checks_by_config.get("release", [])
    sample = (report.get("origin") or {}).get("bundled_sample")
    sample_html = ("<p class=sample>Built from the <b>bundled synthetic sample</b> (the repository's <code>raw/</code>, "
                   "written by <code>scripts/make_sample_*.py</code>): these rows test the pipeline; they are not the "
                   "benchmark's data.</p>" if sample else "")
    failures_html = (f"<section id=failures><h2>Failing checks ({len(failures)})</h2>{_checks_table(failures)}</section>"
                     if failures else "")
    informational = s.get("informational", 0)

    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{benchmark} validation report</title>
<style>
body{{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1b1f24;background:#fff;line-height:1.45}}
main{{max-width:1320px;margin:0 auto;padding:24px 32px 64px}}
h1{{font-size:28px;margin:8px 0 4px}} h2{{font-size:21px;margin:28px 0 8px;padding-top:12px;border-top:2px solid #d8dee4}}
h3{{font-size:16px;margin:14px 0 6px}} summary h3{{display:inline}} code,.mono,pre,.hash{{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}}
details{{margin:8px 0}} summary{{cursor:pointer}}
.verdict{{display:inline-block;padding:10px 18px;border-radius:6px;font-size:18px;font-weight:600;margin:12px 0}}
.verdict.pass{{background:#dafbe1;color:#116329;border:1px solid #4ac26b}} .verdict.fail{{background:#ffebe9;color:#a40e26;border:1px solid #ff8182}}
.badge{{font-size:13px;font-weight:600;padding:2px 8px;border-radius:10px;margin-left:8px;vertical-align:middle}}
.badge.pass{{background:#dafbe1;color:#116329}} .badge.fail{{background:#ffebe9;color:#a40e26}}
p.sample{{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;border-radius:6px}}
table{{border-collapse:collapse;margin:6px 0 18px;font-size:13px}} th{{background:#f6f8fa;text-align:left;position:sticky;top:0}}
td,th{{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}} td.num{{text-align:right;white-space:nowrap}}
table.checks{{width:100%;table-layout:fixed}} table.checks td{{overflow-wrap:anywhere}} table.schema td:nth-child(5){{max-width:640px}}
tr.fail td{{background:#ffebe9}} tr.fail td.result{{color:#a40e26;font-weight:700}} tr.pass td.result{{color:#116329;font-weight:700}}
tr.info td.result{{color:#57606a}} td.hash{{overflow-wrap:anywhere}} td.result{{white-space:nowrap}}
pre{{background:#f6f8fa;border:1px solid #d0d7de;padding:12px;overflow-x:auto;white-space:pre-wrap}}
nav ul{{columns:3;padding-left:20px;margin:4px 0}} p.note{{color:#57606a;font-size:13px}}
</style>
</head><body><main>
<h1>{benchmark} validation report</h1>
<p class=note>Written by culturebench when the release was built; <code>culturebench audit</code> recomputes every
check and hash from the files. Same release, same bytes: this page's sha256 is recorded in <code>manifest.json</code>.</p>
{sample_html}<div class="verdict {'pass' if ok else 'fail'}">{'All' if ok else 'FAILED:'} {s['passed']} of {s['checks']} checks passed{'' if ok else f', {s["failed"]} failed'}</div>
<p class=note>{f"{informational} further rows are reported numbers (expected: any), listed per config and not counted as checks. " if informational else ""}Passing detail is folded: open a section to see it.</p>
<nav><h3>Contents</h3><ul>{''.join(toc)}</ul></nav>
{failures_html}
<section id=quarantine><h2>Quarantine</h2>
<p>Rows dropped by a rule, kept in <code>quarantine/&lt;rule&gt;.parquet</code> with a <code>reason</code> column.</p>
{quarantine_html}</section>
{left_out_html}
<section id=summary><h2>Summary</h2>
{_table(["config", "rows per split", "rows", "checks passed"], overview)}</section>
<section id=release><h2>Release-level checks</h2>
{_checks_table(release_checks) if release_checks else '<p>No release-level checks.</p>'}</section>
{''.join(sections)}
<section id=inputs><h2>Input files</h2>{inputs_html}</section>
<section id=rebuild><h2>Rebuild</h2>
<p>The same inputs and seed give byte-identical parquet files; <code>culturebench audit</code> then checks every
file against <code>manifest.json</code> and re-runs every check.</p>{rebuild_html}</section>
</main></body></html>
"""
