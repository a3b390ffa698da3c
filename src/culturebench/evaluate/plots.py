"""What every benchmark's figures share (each benchmark draws its own figures in its own module): matplotlib with
the Agg backend, imported on first use so that importing an evaluation module stays cheap (``pyplot``), the end of
every figure function (``save_figure``), the x positions of grouped bars (``grouped_bar_x``) and the note on a panel
with nothing to draw (``note_if_empty``)."""

from __future__ import annotations

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


def note_if_empty(ax, values: Sequence, why: str = "no valid value to draw") -> None:
    """Write ``why`` across ``ax`` when none of ``values`` is a number (a blank panel reads as a broken plot)."""
    import math

    import textwrap

    if not any(isinstance(v, (int, float)) and not math.isnan(v) for v in values):
        inches = ax.get_position().width * ax.figure.get_figwidth()
        ax.text(0.5, 0.5, textwrap.fill(why, max(12, int(inches * 11))), transform=ax.transAxes, ha="center",
                va="center", fontsize=9, color="#555555")
