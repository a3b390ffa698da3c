"""Plot helpers the command's figures share: a panel with nothing to draw says so."""

from __future__ import annotations

import math

from culturebench.evaluate.reports import plots


def test_note_if_empty_writes_only_on_an_empty_panel():
    plt = plots.pyplot()
    fig, (empty, full) = plt.subplots(1, 2)
    plots.note_if_empty(empty, [None, math.nan], "no valid judgement")
    plots.note_if_empty(full, [None, 0.0])  # a zero is a value
    assert [t.get_text() for t in empty.texts] == ["no valid judgement"]
    assert len(full.texts) == 0
    plt.close(fig)
