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
import re
from itertools import combinations
from pathlib import Path

from culturebench import registry
from culturebench.contract import NoCountryView
from culturebench.errors import InputError
from culturebench.io import atomic_directory
from culturebench.evaluate.reports import countries, uncertainty
from culturebench.evaluate.reports.compare import read_run
from culturebench.evaluate.reports.country_plots import write_figures

PAGE = "profile.html"
JSON_FILE = "profile.json"
MIN_SHARED = 3
"""Countries two benchmarks must both rank before their rank correlation is reported."""


def country_view(path: Path) -> tuple[str, dict | None, str | None]:
    """(benchmark, its countries.json object or None, why none) of one run folder."""
    path = Path(path)
    if not path.is_dir():
        raise InputError("no such run folder" if not path.exists() else "not a folder (a run folder is expected)",
                         file=path)
    folder = read_run(path)
    if (folder.path / countries.COUNTRIES_FILE).is_file():
        return folder.benchmark, countries.read_countries(folder.path), None
    try:
        data = registry.benchmark(folder.benchmark).countries(folder.metrics, folder.release)
    except NoCountryView as why:
        return folder.benchmark, None, f"{folder.benchmark} run {folder.path} has no country view: {why}"
    if not data:
        return folder.benchmark, None, f"{folder.benchmark} run {folder.path} has no country view (see docs/opinions.md)"
    return folder.benchmark, countries.checked_view(data, folder.path / "metrics.json"), None


def run_labels(run_dirs: list[Path], benchmarks: list[str]) -> tuple[list[str], list[str]]:
    """One label per run, unique: the benchmark's name, with the run folder's path added to every run of a benchmark
    that more than one run gives (and a number where even those collide); the notes say which were disambiguated."""
    labels, notes = [], []
    for path, benchmark in zip(run_dirs, benchmarks):
        label = benchmark if benchmarks.count(benchmark) == 1 else f"{benchmark} ({Path(path)})"
        base, n = label, 2
        while label in labels:
            label, n = f"{base} #{n}", n + 1
        labels.append(label)
    repeated = sorted({b for b in benchmarks if benchmarks.count(b) > 1})
    if repeated:
        notes.append(f"more than one run of {', '.join(repeated)}: each labelled by its run folder")
    return labels, notes


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
    """Write the page into ``out`` as one step (a temporary sibling renamed: a failure or a signal leaves the
    previous page or none); returns (summary line, paths written)."""
    if not run_dirs:
        raise InputError("give at least one run folder")
    read = [country_view(Path(path)) for path in run_dirs]
    labels, notes = run_labels(list(run_dirs), [benchmark for benchmark, _, _ in read])
    views = {label: data for label, (_, data, _) in zip(labels, read) if data is not None}
    notes += [why for _, data, why in read if data is None]
    if not views:
        raise InputError("none of the runs has a country view: " + "; ".join(notes))
    for label, data in views.items():
        notes += [f"{label}: {n}" for n in data.get("notes", [])]
    rows = agreement(views)
    payload = {"runs": [str(p) for p in run_dirs], "benchmarks": views, "agreement": rows, "notes": notes}
    out = Path(out)
    written, images = [], {}
    with atomic_directory(out) as folder:
        for label, data in views.items():
            figures = write_figures(data, folder, prefix=re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_"))
            written += [out / f.name for f in figures]
            images[label] = [base64.b64encode(f.read_bytes()).decode("ascii") for f in figures]
        (folder / JSON_FILE).write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (folder / PAGE).write_text(render(views, rows, notes, images), encoding="utf-8")
    written += [out / JSON_FILE, out / PAGE]
    total = sum(len(v["countries"]) for v in views.values())
    return f"profile: {len(views)} benchmarks, {total} country rows; page {out / PAGE}", written


def rests_on(data: dict) -> str:
    """What a country view rests on, for the page: items per country (questions, stories, dialogues, ...), samples
    per question, the reading and the intervals' kind; and the countries whose interval rests on fewer than
    ``uncertainty.MIN_GROUP_SIZE`` items (flagged)."""
    entries = list(data["countries"].values())
    sizes = [n for e in entries if isinstance(n := e.get("n_questions", e.get("n")), int)]
    parts = [f"items per country: {min(sizes)}{'' if min(sizes) == max(sizes) else f'-{max(sizes)}'}"] if sizes \
        else ["items per country: not recorded"]
    samples = data.get("samples_per_question")
    if samples:
        parts.append(f"samples per question: {samples[0]}{'' if samples[0] == samples[1] else f'-{samples[1]}'}")
    if data.get("reading"):
        parts.append(f"reading: {data['reading']}")
    kind = (data.get("reference_points") or {}).get("intervals")
    if kind:
        parts.append(f"intervals: {kind.replace('_', '-')}")
    few = sorted(code for code, e in data["countries"].items()
                 if isinstance(n := e.get("n_questions", e.get("n")), int) and n < uncertainty.MIN_GROUP_SIZE)
    text = "Rests on " + "; ".join(parts) + "."
    if few:
        text += (f" Intervals on fewer than {uncertainty.MIN_GROUP_SIZE} items (read with care): "
                 f"{len(few)} of {len(entries)} countries.")
    return text


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
                     f"<p class=note>{e(str(data['measures'].get(measure, '')))}</p>"
                     f"<p class=rests>{e(rests_on(data))}</p>")
        parts += [f"<img alt=\"{e(label)} {kind}\" src=\"data:image/png;base64,{image}\">"
                  for kind, image in zip(("map", "ranked"), images[label])]
        interval = next((k for k in next(iter(data["countries"].values()), {}) if k.startswith("interval_")), None)
        short = measure.removeprefix("similarity_")
        extra = [(k, label) for k, label in ((f"uniform_{short}", "uniform"), (f"ceiling_{short}", "ceiling"))
                 if any(k in entry for entry in data["countries"].values())]
        placed = any(f"rank_among_countries_{short}" in entry for entry in data["countries"].values())
        parts.append(f"<table class=ranked><tr><th>rank</th><th>country</th><th>code</th><th>{e(measure)}</th>"
                     "<th>interval</th>" + "".join(f"<th>{label}</th>" for _, label in extra)
                     + ("<th>model closer than</th>" if placed else "") + "</tr>")
        for rank, (code, entry) in enumerate(countries.ranked(data), start=1):
            low, high = entry.get(interval) or (None, None) if interval else (None, None)
            shown = "n/a" if low is None else f"[{_number(low)}, {_number(high)}]"
            among = entry.get(f"rank_among_countries_{short}")
            parts.append(f"<tr><td>{rank}</td><td class=text>{e(str(entry.get('name') or code))}</td>"
                         f"<td class=text>{e(code)}</td><td>{_number(entry[measure])}</td><td>{shown}</td>"
                         + "".join(f"<td>{_number(entry.get(k))}</td>" for k, _ in extra)
                         + (f"<td>{among['closer_than']} of {among['of']} countries</td>" if among
                            else "<td>n/a</td>" if placed else "") + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
