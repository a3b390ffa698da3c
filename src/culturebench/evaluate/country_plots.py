"""Figures of a country view (``evaluate.countries``): a sorted dot plot with intervals, one series per model or
per steering mode side by side, and a world map coloured by a measure.

The map's country shapes are Natural Earth's admin-0 countries (public domain), shipped simplified as package data
in ``facts/world_110m.json`` (made by ``scripts/make_world_map.py``, which records the source and licence in the
file): nothing is fetched at run time, and they are drawn as matplotlib polygons (no geopandas)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path

from culturebench.evaluate import plots

Series = tuple[str, Mapping[str, tuple[float | None, Sequence[float | None] | None]]]
"""(label, {code: (value, [low, high] or None)})."""
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
                 higher_is_better: bool = True) -> None:
    """Countries sorted by the first series (best at the top), one row each, every series' value as a dot with
    its interval as a horizontal bar, offset a little per series so that none hides another."""
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
        ys, xs, low, high = [], [], [], []
        for i, code in enumerate(order):
            value, interval = values.get(code, (None, None))
            if value is None:
                continue
            ys.append(rows - 1 - i + offset)
            xs.append(value)
            lo, hi = interval or (None, None)
            low.append(value - lo if lo is not None else 0.0)
            high.append(hi - value if hi is not None else 0.0)
        ax.errorbar(xs, ys, xerr=[low, high], fmt=MARKERS[k % len(MARKERS)], markersize=4, capsize=2,
                    linewidth=1, label=label)
    ax.set_yticks([rows - 1 - i for i in range(len(order))])
    ax.set_yticklabels([names.get(c) or c for c in order], fontsize=7)
    ax.set_ylim(-1, rows)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    plots.panel_title(ax, title)
    if len(all_series) > 1:
        plots.legend_beside(ax, fontsize=7)
    plots.note_if_empty(ax, [v for _, values in all_series for v, _ in values.values()], "no country with a value")
    plots.save_figure(fig, path)


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
    ax.set_xlim(-180, 180)
    ax.set_ylim(-60, 85)
    ax.set_aspect("equal")
    ax.set_axis_off()
    bar = fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, orientation="horizontal", fraction=0.05,
                       pad=0.02, aspect=40)
    bar.set_label(label)
    missing = sorted(c for c in known if c not in shapes)
    subtitle = f"{len(shown)} countries with a value (grey: none)"
    if missing:
        subtitle += f"; not on the map: {', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}"
    ax.set_title(f"{title}\n{subtitle}", fontsize=10)
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
    label = measure.replace("_", " ")
    out = Path(out)
    ranked = out / f"{prefix}_ranked.png"
    drawn = [(label, main), *extra_series]
    intervals = any(bounds and None not in bounds for _, values in drawn for _, bounds in values.values())
    dot_plot_png(drawn, names, ranked, xlabel=label,
                 title=f"{data['benchmark']}: {label} per country{model}"
                       + (" (95% bootstrap intervals)" if intervals else " (no intervals: too few items)"),
                 higher_is_better=data.get("higher_is_better", True))
    world = out / f"{prefix}_map.png"
    world_map_png({c: v for c, (v, _) in main.items()}, world, label=label,
                  title=f"{data['benchmark']}: {label} per country{model}")
    return [world, ranked]


def side_by_side(views: Mapping[str, Mapping]) -> tuple[dict[str, dict], dict[str, str]]:
    """The series of several runs' countries.json (label -> data), for ``compare``: label -> {code: (value,
    interval)} of each primary measure, plus "<label> (steered)" where the run steered to each country; and the
    countries' names."""
    out, names = {}, {}
    for label, data in views.items():
        out[label] = series(data)
        if any("steered_jsd" in e for e in data["countries"].values()):
            out[f"{label} (steered)"] = series(data, "steered_jsd", "interval_steered_jsd")
        names.update({code: e.get("name") or code for code, e in data["countries"].items()})
    return out, names
