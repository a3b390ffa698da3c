"""What every benchmark's figures share (each benchmark draws its own figures in its own module): matplotlib with
the Agg backend, imported on first use so that importing an evaluation module stays cheap (``pyplot``), the end of
every figure function (``save_figure``) and the x positions of grouped bars (``grouped_bar_x``)."""

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
