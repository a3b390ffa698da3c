"""Figures of a country view (``evaluate.reports.countries``): a sorted dot plot with intervals, one series per model or
per steering mode side by side, and a world map coloured by a measure.

The map's country shapes are Natural Earth's admin-0 countries (public domain), shipped simplified as package data
in ``facts/world_110m.json`` (made by ``scripts/make_world_map.py``, which records the source and licence in the
file): nothing is fetched at run time, and they are drawn as matplotlib polygons (no geopandas)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path

from culturebench.evaluate.reports import plots

Series = tuple[str, Mapping[str, tuple[float | None, Sequence[float | None] | None]]]
"""(label, {code: (value, [low, high] or None)})."""
Reference = tuple[str, Mapping[str, float | None]]
"""(label, {code: value}) of a reference mark per country (a baseline, the ceiling)."""
MARKERS = ("o", "s", "D", "^", "v", "P")


def series(data: Mapping, measure: str | None = None, interval: str | None = None) -> dict:
    """{code: (value, interval)} of a countries.json's ``measure`` (default its primary one) and its interval
    (``interval_<measure without 'similarity_'>`` by default)."""
    measure = measure or data["measure"]
    if interval is None:
        short = f"interval_{measure.removeprefix('similarity_')}"
        interval = short if any(short in e for e in data["countries"].values()) else f"interval_{measure}"
    return {code: (e.get(measure), e.get(interval)) for code, e in data["countries"].items()}


def dot_plot_png(all_series: Sequence[Series], names: Mapping[str, str], path: Path, *, xlabel: str, title: str,
                 higher_is_better: bool = True, references: Sequence[Reference] = ()) -> None:
    """Countries sorted by the first series (best at the top), one row each, every series' value as a dot with
    its interval as a horizontal line (an interval need not contain its value: a resampling's bias may move it),
    offset a little per series so that none hides another; each of ``references`` as a mark on every row."""
    plt = plots.pyplot()
    first = all_series[0][1]
    sign = -1 if higher_is_better else 1
    order = sorted((c for c, (v, _) in first.items() if v is not None), key=lambda c: (sign * first[c][0], c))
    order += sorted(c for c, (v, _) in first.items() if v is None)
    rows = max(len(order), 1)
    fig, ax = plt.subplots(figsize=(7.5, 1.6 + 0.22 * rows), dpi=100)
    step = 0.5 / max(len(all_series), 1)
    for k, (label, values) in enumerate(all_series):
        offset = (k - (len(all_series) - 1) / 2) * step
        ys, xs, spans = [], [], []
        for i, code in enumerate(order):
            value, interval = values.get(code, (None, None))
            if value is None:
                continue
            ys.append(rows - 1 - i + offset)
            xs.append(value)
            lo, hi = interval or (None, None)
            if lo is not None and hi is not None:
                spans.append((ys[-1], lo, hi))
        colour = f"C{k}"
        if spans:
            ax.hlines([y for y, _, _ in spans], [lo for _, lo, _ in spans], [hi for _, _, hi in spans],
                      colors=colour, linewidth=1)
        ax.plot(xs, ys, MARKERS[k % len(MARKERS)], markersize=4, color=colour, label=label, linestyle="none")
    for k, (label, values) in enumerate(references):
        ys = [rows - 1 - i for i, code in enumerate(order) if values.get(code) is not None]
        xs = [values[code] for code in order if values.get(code) is not None]
        ax.plot(xs, ys, REFERENCE_MARKERS[k % len(REFERENCE_MARKERS)], color=f"0.{3 + 2 * k}", markersize=6,
                linestyle="none", label=label)
    ax.set_yticks([rows - 1 - i for i in range(len(order))])
    ax.set_yticklabels([names.get(c) or c for c in order], fontsize=7)
    ax.set_ylim(-1, rows)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    plots.panel_title(ax, title)
    if len(all_series) + len(references) > 1:
        plots.legend_beside(ax, fontsize=7)
    plots.note_if_empty(ax, [v for _, values in all_series for v, _ in values.values()], "no country with a value")
    plots.save_figure(fig, path)


REFERENCE_MARKS = {"uniform": "uniform answer", "others": "other countries' respondents",
                   "ceiling": "ceiling (half vs half)"}
"""The reference points a countries.json may hold per country (``uniform_<m>``, ...), drawn as marks."""
REFERENCE_MARKERS = ("|", "x", "4")


def references(data: Mapping, measure: str | None = None) -> list[Reference]:
    """The reference marks of a countries.json's ``measure`` (default its primary one) that it holds."""
    short = (measure or data["measure"]).removeprefix("similarity_")
    out = []
    for name, label in REFERENCE_MARKS.items():
        values = {code: e.get(f"{name}_{short}") for code, e in data["countries"].items()}
        if any(v is not None for v in values.values()):
            out.append((label, values))
    return out


TINY_AREA = 2.0
"""Square degrees under which a country's polygons are drawn with a marker too (Macao, Maldives, Singapore,
Andorra, ...)."""


def tiny_centre(shape: Mapping) -> tuple[float, float] | None:
    """The mean vertex of a country whose polygons cover under TINY_AREA square degrees, else None."""
    import numpy as np

    rings = [np.asarray(ring, dtype=float) for ring in shape["polygons"] if len(ring) >= 3]
    area = sum(abs(np.dot(r[:, 0], np.roll(r[:, 1], 1)) - np.dot(r[:, 1], np.roll(r[:, 0], 1))) / 2 for r in rings)
    if area >= TINY_AREA or not rings:
        return None
    points = np.concatenate(rings)
    return float(points[:, 0].mean()), float(points[:, 1].mean())


@cache
def country_points() -> dict[str, tuple[float, float]]:
    """ISO alpha-3 -> (lon, lat) of countries the simplified map has no polygon for (``facts/country_points.csv``:
    each one's capital, rounded to 0.01 degree, ours), drawn as dots."""
    import csv

    text = resources.files("culturebench.facts").joinpath("country_points.csv").read_text(encoding="utf-8")
    return {row["iso_alpha3"]: (float(row["lon"]), float(row["lat"])) for row in csv.DictReader(text.splitlines())}


def colour_range(data: Mapping, values: Sequence[float]) -> tuple[float | None, float | None]:
    """The map's colour scale: for a measure in [0, 1], anchored at the mean uniform baseline and the mean
    ceiling when the view holds both and the ceiling is above, else 0..1; other measures their range (None)."""
    if not values or min(values) < 0 or max(values) > 1:
        return None, None
    short = data["measure"].removeprefix("similarity_")
    means = []
    for name in ("uniform", "ceiling"):
        points = [e[f"{name}_{short}"] for e in data["countries"].values() if e.get(f"{name}_{short}") is not None]
        means.append(sum(points) / len(points) if points else None)
    low, high = means
    if low is not None and high is not None and high > low:
        return min(low, min(values)), max(high, max(values))
    return 0.0, 1.0


def reading_line(data: Mapping) -> str:
    """What a country view rests on, for a figure: questions, samples per question and the reading."""
    parts = []
    if data.get("n_questions"):
        parts.append(f"{data['n_questions']} questions")
    samples = data.get("samples_per_question")
    if samples:
        parts.append(f"{samples[0]}{'' if samples[0] == samples[1] else f'-{samples[1]}'} samples per question")
    if data.get("reading"):
        parts.append(f"reading: {data['reading']}")
    return f"; {', '.join(parts)}" if parts else ""


@cache
def world_shapes() -> dict:
    """ISO alpha-3 -> {"name", "polygons": [[[lon, lat], ...], ...]} of ``facts/world_110m.json``."""
    text = resources.files("culturebench.facts").joinpath("world_110m.json").read_text(encoding="utf-8")
    return json.loads(text)["countries"]


def world_map_png(values: Mapping[str, float | None], path: Path, *, label: str, title: str,
                  vmin: float | None = None, vmax: float | None = None) -> list[str]:
    """Every country of the map, those with a value coloured by it (a colour bar says the scale), the others
    grey; returns the codes with a value that the map has no shape for (said on the figure)."""
    from matplotlib import cm, colors
    from matplotlib.collections import PolyCollection

    plt = plots.pyplot()
    shapes = world_shapes()
    known = {c: v for c, v in values.items() if v is not None}
    shown = [v for c, v in known.items() if c in shapes]
    low = min(shown) if vmin is None and shown else (vmin if vmin is not None else 0.0)
    high = max(shown) if vmax is None and shown else (vmax if vmax is not None else 1.0)
    if high <= low:
        low, high = low - 0.01, high + 0.01
    norm, cmap = colors.Normalize(low, high), plt.get_cmap("viridis")
    fig, ax = plt.subplots(figsize=(10, 5.4), dpi=100)
    polygons, faces = [], []
    for code, shape in shapes.items():
        face = cmap(norm(known[code])) if code in known else (0.85, 0.85, 0.85, 1.0)
        for ring in shape["polygons"]:
            polygons.append(ring)
            faces.append(face)
    ax.add_collection(PolyCollection(polygons, facecolors=faces, edgecolors="white", linewidths=0.3))
    points = country_points()
    tiny = [(c, centre) for c in sorted(known)
            if (centre := tiny_centre(shapes[c]) if c in shapes else None) is not None
            or (centre := points.get(c) if not (shapes.get(c) or {}).get("polygons") else None) is not None]
    if tiny:  # too small for a polygon to show its colour: a marker at its centre
        ax.scatter([x for _, (x, _) in tiny], [y for _, (_, y) in tiny], s=18, marker="o", zorder=3,
                   c=[cmap(norm(known[c])) for c, _ in tiny], edgecolors="black", linewidths=0.5)
    ax.set_xlim(-180, 180)
    ax.set_ylim(-60, 85)
    ax.set_aspect("equal")
    ax.set_axis_off()
    bar = fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, orientation="horizontal", fraction=0.05,
                       pad=0.02, aspect=40)
    bar.set_label(label)
    drawn = {c for c, _ in tiny} | {c for c in known if (shapes.get(c) or {}).get("polygons")}
    missing = sorted(c for c in known if c not in drawn)
    subtitle = f"{len(drawn)} countries with a value (grey: none; dots: too small to show as a shape)"
    if missing:
        subtitle += f"; not on the map: {', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}"
    ax.set_title(f"{textwrap.fill(title, 110)}\n{subtitle}", fontsize=10)
    plots.save_figure(fig, path, tight=False)
    return missing


def write_figures(data: Mapping, out: Path, *, prefix: str = "countries", extra_series: Sequence[Series] = ()
                  ) -> list[Path]:
    """``<prefix>_map.png`` and ``<prefix>_ranked.png`` of a countries.json (its primary measure; ``extra_series``
    drawn beside it in the dot plot); returns the paths written."""
    measure = data["measure"]
    names = {code: e.get("name") or code for code, e in data["countries"].items()}
    model = f" of {data['model']}" if data.get("model") else ""
    main = series(data)
    label = data.get("measure_label") or measure.replace("_", " ")
    out = Path(out)
    ranked = out / f"{prefix}_ranked.png"
    drawn = [(label, main), *extra_series]
    intervals = any(bounds and None not in bounds for _, values in drawn for _, bounds in values.values())
    kind = "two-stage bootstrap" if data.get("reference_points", {}).get("intervals") == "two_stage" else "bootstrap"
    dot_plot_png(drawn, names, ranked, xlabel=label,
                 title=f"{data['benchmark']}: {label} per country{model}"
                       + (f" (95% {kind} intervals)" if intervals else " (no intervals: too few items)")
                       + reading_line(data),
                 higher_is_better=data.get("higher_is_better", True), references=references(data))
    world = out / f"{prefix}_map.png"
    values = {c: v for c, (v, _) in main.items()}
    low, high = colour_range(data, [v for v in values.values() if v is not None])
    world_map_png(values, world, label=label, title=f"{data['benchmark']}: {label} per country{model}"
                                                      f"{reading_line(data)}", vmin=low, vmax=high)
    return [world, ranked]


def side_by_side(views: Mapping[str, Mapping]) -> tuple[dict[str, dict], dict[str, str]]:
    """The series of several runs' countries.json (label -> data), for ``compare``: label -> {code: (value,
    interval)} of each primary measure, plus "<label> (steered)" where the run steered to each country; and the
    countries' names."""
    out, names = {}, {}
    for label, data in views.items():
        out[label] = series(data)
        steered = f"steered_{data['measure'].removeprefix('similarity_')}"
        if any(steered in e for e in data["countries"].values()):
            out[f"{label} (steered)"] = series(data, steered, f"interval_{steered}")
        names.update({code: e.get("name") or code for code, e in data["countries"].items()})
    return out, names


def similarity_order(matrix, codes: Sequence[str]) -> list[int]:
    """The countries ordered so that similar ones sit together: the leaves of an average-linkage clustering
    (scipy) of 1 - the symmetrised similarity (missing pairs: the farthest); the given order below three."""
    import numpy as np
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    values = np.asarray(matrix, dtype=float)
    if len(codes) < 3:
        return list(range(len(codes)))
    distance = 1 - (values + values.T) / 2
    distance = np.where(np.isfinite(distance), distance, np.nanmax(distance, initial=1.0))
    np.fill_diagonal(distance, 0.0)
    return [int(i) for i in leaves_list(linkage(squareform(np.clip(distance, 0, None), checks=False), "average"))]


def neighbour_heatmap_png(rows: Sequence[Sequence[float | None]], codes: Sequence[str], names: Mapping[str, str],
                          path: Path, *, label: str, title: str) -> None:
    """The country x country similarity matrix (``rows``: one per country, the model's last), countries ordered
    by ``similarity_order``, the model's row on top, set apart by a line and its label in bold; each column's
    colour scale shared (one colour bar)."""
    import numpy as np

    plt = plots.pyplot()
    values = np.asarray([[np.nan if v is None else v for v in row] for row in rows], dtype=float)
    order = similarity_order(values[:-1], codes)
    shown = np.vstack([values[-1:, order], values[:-1][np.ix_(order, order)]])
    n = len(codes)
    size = 3.0 + 0.16 * n
    fig, ax = plt.subplots(figsize=(size + 1.5, size + 0.6), dpi=110)
    image = ax.imshow(shown, cmap="viridis", aspect="equal", interpolation="nearest")
    labels = [names.get(codes[i]) or codes[i] for i in order]
    ax.set_xticks(range(n))
    ax.set_xticklabels(labels, rotation=90, fontsize=6)
    ax.set_yticks(range(n + 1))
    ax.set_yticklabels(["MODEL", *labels], fontsize=6)
    ax.get_yticklabels()[0].set_fontweight("bold")
    ax.axhline(0.5, color="white", linewidth=2)
    ax.set_xlabel("country compared with (its respondents)", fontsize=8)
    ax.set_ylabel("whose answers: the model, or each country's respondents", fontsize=8)
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label(label, fontsize=8)
    plots.panel_title(ax, title)
    plots.save_figure(fig, path)
