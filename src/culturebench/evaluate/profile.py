"""``culturebench profile RUN_DIR...`` (issue #56): one model's runs on any benchmarks as one page, whose values
it holds country by country: per benchmark a world map and a ranked table of its country view (the run's
countries.json, else the benchmark's ``countries`` hook on its metrics.json), and how far the benchmarks agree on
the countries' order (Spearman's rank correlation over the countries both rank, oriented so that a positive value
means agreement, with scipy's p-value).

Writes PROFILE_DIR/profile.html (self-contained: the figures inlined), profile.json and the figures. Names no
benchmark: each reaches it through the registry and the contract."""

from __future__ import annotations

import base64
import html
import json
from itertools import combinations
from pathlib import Path

from culturebench import registry
from culturebench.errors import InputError
from culturebench.evaluate import countries
from culturebench.evaluate.compare import read_run
from culturebench.evaluate.country_plots import write_figures

PAGE = "profile.html"
JSON_FILE = "profile.json"
MIN_SHARED = 3
"""Countries two benchmarks must both rank before their rank correlation is reported."""


def country_view(path: Path) -> tuple[str, dict | None, str | None]:
    """(benchmark, its countries.json object or None, why none) of one run folder."""
    folder = read_run(path)
    if (folder.path / countries.COUNTRIES_FILE).is_file():
        return folder.benchmark, countries.read_countries(folder.path), None
    data = registry.benchmark(folder.benchmark).countries(folder.metrics, folder.release)
    why = None if data else f"{folder.benchmark} run {folder.path} has no country view (see docs/opinions.md)"
    return folder.benchmark, data, why


def oriented(data: dict) -> dict[str, float]:
    """code -> the primary measure, negated where lower is better (higher: closer, for every benchmark)."""
    sign = 1.0 if data.get("higher_is_better", True) else -1.0
    return {code: sign * e[data["measure"]] for code, e in data["countries"].items()
            if e.get(data["measure"]) is not None}


def agreement(views: dict[str, dict]) -> list[dict]:
    """Spearman's rho (scipy) between every two views' country orders over the countries both have."""
    from scipy import stats

    rows = []
    for (a, first), (b, second) in combinations(views.items(), 2):
        x, y = oriented(first), oriented(second)
        shared = sorted(set(x) & set(y))
        row = {"first": a, "second": b, "n_countries": len(shared), "spearman_rho": None, "p_value": None}
        if len(shared) >= MIN_SHARED:
            result = stats.spearmanr([x[c] for c in shared], [y[c] for c in shared])
            rho, p = float(result.statistic), float(result.pvalue)
            row["spearman_rho"], row["p_value"] = (rho, p) if rho == rho else (None, None)
        else:
            row["why_none"] = f"fewer than {MIN_SHARED} countries in common"
        rows.append(row)
    return rows


def profile(run_dirs: list[Path], out: Path) -> tuple[str, list[Path]]:
    """Write the page; returns (summary line, paths written)."""
    if not run_dirs:
        raise InputError("give at least one run folder")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    views, notes, written, images = {}, [], [], {}
    for path in run_dirs:
        benchmark, data, why = country_view(Path(path))
        if data is None:
            notes.append(why)
            continue
        label = benchmark if benchmark not in views else f"{benchmark} ({Path(path).name})"
        views[label] = data
        notes += [f"{label}: {n}" for n in data.get("notes", [])]
        figures = write_figures(data, out, prefix=label.replace(" ", "_").replace("(", "").replace(")", ""))
        written += figures
        images[label] = [base64.b64encode(f.read_bytes()).decode("ascii") for f in figures]
    if not views:
        raise InputError("none of the runs has a country view: " + "; ".join(notes))
    rows = agreement(views)
    payload = {"runs": [str(p) for p in run_dirs], "benchmarks": views, "agreement": rows, "notes": notes}
    (out / JSON_FILE).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / PAGE).write_text(render(views, rows, notes, images), encoding="utf-8")
    written += [out / JSON_FILE, out / PAGE]
    total = sum(len(v["countries"]) for v in views.values())
    return f"profile: {len(views)} benchmarks, {total} country rows; page {out / PAGE}", written


def _number(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def render(views: dict[str, dict], rows: list[dict], notes: list[str], images: dict[str, list[str]]) -> str:
    """The page: models, the agreement table, then per benchmark its map, ranked plot and ranked table."""
    e = html.escape
    models = sorted({str(v.get("model")) for v in views.values()})
    parts = ["<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Whose values: country profile</title>"
             "<style>body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em}"
             "table{border-collapse:collapse;font-size:13px;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;"
             "padding:3px 7px;text-align:right}td.text{text-align:left}img{max-width:100%}.note{color:#555}"
             "</style></head><body>",
             "<h1>Whose values: country profile</h1>",
             f"<p>Model{'s' if len(models) > 1 else ''}: {e(', '.join(models))}. Similarity is not endorsement; "
             "a steered answer can be a stereotype (docs/opinions.md).</p>",
             "<h2 id=agreement>Do the benchmarks agree on the countries' order?</h2>",
             "<table><tr><th>benchmarks</th><th>countries in common</th><th>Spearman rho</th><th>p</th></tr>"]
    for r in rows:
        parts.append(f"<tr><td class=text>{e(r['first'])} / {e(r['second'])}</td><td>{r['n_countries']}</td>"
                     f"<td>{_number(r['spearman_rho'])}</td><td>{_number(r['p_value'])}</td></tr>")
    parts.append("</table>" + ("" if rows else "<p class=note>One benchmark: nothing to correlate.</p>"))
    if notes:
        parts.append("<h2 id=notes>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    for label, data in views.items():
        measure = data["measure"]
        parts.append(f"<h2 id=benchmark-{e(label)}>{e(label)}: {e(measure)}</h2>"
                     f"<p class=note>{e(str(data['measures'].get(measure, '')))}</p>")
        parts += [f"<img alt=\"{e(label)} {kind}\" src=\"data:image/png;base64,{image}\">"
                  for kind, image in zip(("map", "ranked"), images[label])]
        interval = next((k for k in next(iter(data["countries"].values()), {}) if k.startswith("interval_")), None)
        parts.append(f"<table class=ranked><tr><th>rank</th><th>country</th><th>code</th><th>{e(measure)}</th>"
                     "<th>interval</th></tr>")
        for rank, (code, entry) in enumerate(countries.ranked(data), start=1):
            low, high = entry.get(interval) or (None, None) if interval else (None, None)
            shown = "n/a" if low is None else f"[{_number(low)}, {_number(high)}]"
            parts.append(f"<tr><td>{rank}</td><td class=text>{e(str(entry.get('name') or code))}</td>"
                         f"<td class=text>{e(code)}</td><td>{_number(entry[measure])}</td><td>{shown}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
