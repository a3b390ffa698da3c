"""What every benchmark's figures share (each benchmark draws its own figures in its own module): matplotlib with
the Agg backend, imported on first use so that importing an evaluation module stays cheap (``pyplot``), the end of
every figure function (``save_figure``), the x positions of grouped bars (``grouped_bar_x``), a series of bars with
their intervals and a value label on each, visible at 0 (``interval_bars``) on a y axis with room for the labels
(``value_axis``), a legend beside the axes, never over the bars (``legend_beside``), a title wrapped to its panel
(``panel_title``), a heatmap cell's text in a colour that reads on the cell (``text_colour_on``), names beside
scatter points that never overlap (``label_points``) and the note on a panel with nothing to draw
(``note_if_empty``)."""

from __future__ import annotations

import math
import re
import textwrap

import numpy as np
from collections.abc import Sequence
from pathlib import Path


def pyplot():
    """``matplotlib.pyplot`` with the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path, tight: bool = True) -> None:
    """Lay ``fig`` out tightly, write it to ``path`` and close it; ``tight=False`` for a figure tight_layout
    cannot lay out (a colorbar spanning several axes)."""
    if tight:
        fig.tight_layout()
    fig.savefig(path)
    pyplot().close(fig)


def grouped_bar_x(slots: Sequence[float], n_series: int, index: int, width: float) -> list[float]:
    """The x of series ``index``'s bars when ``n_series`` bars of ``width`` stand side by side, centred, at each
    slot position of ``slots``."""
    offset = (index - (n_series - 1) / 2) * width
    return [slot + offset for slot in slots]


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not math.isnan(value)


def interval_bars(ax, xs: Sequence[float], values: Sequence[float | None],
                  intervals: Sequence[Sequence[float | None] | None], width: float, *, label: str, color,
                  hatches: Sequence[str] = (), value_format: str = "{:.2f}", fontsize: float = 7,
                  vertical: bool = False) -> None:
    """One series of bars at ``xs``: a bar per value with its [low, high] interval as an error bar (none where the
    interval is missing), and every bar's value written above its error bar, so that a bar at 0 still shows "0.00";
    a missing value (None) draws no bar and writes "n/a" at the baseline. ``hatches[k]`` hatches bar k (a group
    flagged small); ``vertical`` writes the values upright (many narrow bars)."""
    shown = [k for k, v in enumerate(values) if is_number(v)]
    above = []
    spread = []  # the bars with an interval: only they get an error bar (a cap of zero width reads as certainty)
    for k in shown:
        low, high = intervals[k] or (None, None)
        above.append(max(0.0, high - values[k]) if high is not None else 0.0)
        if is_number(low) and is_number(high):
            spread.append((k, max(0.0, values[k] - low), max(0.0, high - values[k])))
    bars = ax.bar([xs[k] for k in shown], [values[k] for k in shown], width, label=label, color=color)
    if spread:
        ax.errorbar([xs[k] for k, _, _ in spread], [values[k] for k, _, _ in spread],
                    yerr=[[b for _, b, _ in spread], [a for _, _, a in spread]], fmt="none", ecolor="black",
                    elinewidth=0.8, capsize=2)
    for bar, k in zip(bars, shown):
        if k < len(hatches) and hatches[k]:
            bar.set_hatch(hatches[k])
    tops = dict(zip(shown, (values[k] + up for k, up in zip(shown, above))))
    for k, x in enumerate(xs):
        text = value_format.format(values[k]) if k in tops else "n/a"
        ax.annotate(text, (x, tops.get(k, 0.0)), ha="center", va="bottom", fontsize=max(fontsize, MIN_FONTSIZE),
                    rotation=90 if vertical else 0, textcoords="offset points", xytext=(0, 2),
                    color="black" if k in tops else "#777777")


def wrapped(label: str, width: int = 24) -> str:
    """A long label (a model path, a run's name) in lines of at most ``width`` characters where it can break: after
    a space, slash, hyphen or underscore; a part longer than ``width`` keeps its own line."""
    lines = [""]
    for part in re.split(r"(?<=[ /_-])", label):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(line.rstrip() for line in lines)


def draws_intervals(fig) -> bool:
    """Whether ``fig`` draws any interval: an error bar of some length or a band (``fill_between``) of some
    height."""
    from matplotlib.collections import PolyCollection
    from matplotlib.container import ErrorbarContainer

    for ax in fig.axes:
        for container in ax.containers:
            if isinstance(container, ErrorbarContainer):
                for collection in container.lines[2]:
                    if any(abs(seg[0] - seg[-1]).max() > 0 for seg in map(np.asarray, collection.get_segments())):
                        return True
        for collection in ax.collections:
            if isinstance(collection, PolyCollection) and any(
                    path.vertices.size and np.ptp(np.nan_to_num(path.vertices[:, 1])) > 0
                    for path in collection.get_paths()):
                return True
    return False


def interval_words(fig, level: float | None, unit: str) -> str:
    """A title's words on the intervals, said after the figure is drawn: `` (95% bootstrap intervals over
    questions)`` where ``fig`` draws one (``draws_intervals``), else that it shows points only; empty without a
    confidence ``level``."""
    if not level:
        return ""
    if draws_intervals(fig):
        return f" ({level:.0%} bootstrap intervals over {unit})"
    return f" (points only: too few {unit} for a bootstrap interval)"


MIN_FONTSIZE = 7
"""The smallest value label ``interval_bars`` writes (points): smaller is not read at the PNG's 100 dpi."""


def value_axis(ax, top: float, label: str) -> None:
    """The y axis of ``interval_bars``: 0 to the scale's ``top`` with a grid, and room above ``top`` for the value
    labels over the bars and their intervals."""
    ax.set_ylim(0, top * 1.22)
    ax.set_yticks([top * k / 5 for k in range(6)])
    ax.set_ylabel(label)
    ax.grid(axis="y", alpha=0.3)


def legend_beside(ax, **options) -> None:
    """The legend of ``ax`` to the right of it, top-aligned: outside the axes, it covers no bar and no label."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=options.pop("fontsize", 8),
              **options)


def panel_title(ax, text: str, fontsize: float = 9) -> None:
    """``text`` as the title of ``ax``, wrapped to the panel's width (a long model name in the titles of panels side
    by side would run into the next one)."""
    inches = ax.get_position().width * ax.figure.get_figwidth()
    ax.set_title(textwrap.fill(text, max(16, int(inches * 72 / (0.62 * fontsize))), break_on_hyphens=False),
                 fontsize=fontsize)


LABEL_OFFSETS = ((4, 3, "left", "bottom"), (4, -3, "left", "top"), (-4, 3, "right", "bottom"),
                 (-4, -3, "right", "top"), (0, 6, "center", "bottom"), (0, -6, "center", "top"))
"""Where ``label_points`` tries a point's name, in order: offsets in points, and the alignment that puts the text
on that side of the point."""


def label_points(ax, points: Sequence[tuple[float, float, str, float]]) -> list[str]:
    """Each point's name (x, y, name, font size) beside it, at the first of LABEL_OFFSETS where it stays inside the
    axes and covers no name placed before and no point (the first points first: put those that matter most first);
    returns the names left unwritten for want of a free place. Call it once the figure is laid out: it measures the
    texts."""
    from matplotlib.transforms import Bbox

    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    centres = ax.transData.transform([(x, y) for x, y, _, _ in points]) if points else []
    markers = [Bbox.from_extents(cx - 5, cy - 5, cx + 5, cy + 5) for cx, cy in centres]
    placed, unwritten = [], []
    for x, y, name, size in points:
        for dx, dy, ha, va in LABEL_OFFSETS:
            text = ax.annotate(name, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                               fontsize=size)
            box = text.get_window_extent(renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(other) for other in placed + markers):
                placed.append(box)
                break
            text.remove()
        else:
            unwritten.append(name)
    return unwritten


def text_colour_on(value: float, vmin: float = 0.0, vmax: float = 1.0) -> str:
    """Black on the light upper part of viridis (from 0.55 of the range: green to yellow), white on its dark part:
    the colour a heatmap cell's number is written in."""
    return "black" if (value - vmin) / ((vmax - vmin) or 1.0) >= 0.55 else "white"


def note_if_empty(ax, values: Sequence, why: str = "no valid value to draw") -> None:
    """Write ``why`` across ``ax`` when none of ``values`` is a number (a blank panel reads as a broken plot)."""
    if not any(is_number(v) for v in values):
        inches = ax.get_position().width * ax.figure.get_figwidth()
        ax.text(0.5, 0.5, textwrap.fill(why, max(12, int(inches * 11))), transform=ax.transAxes, ha="center",
                va="center", fontsize=9, color="#555555")
