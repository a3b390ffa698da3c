"""LLM-GLOBE's plots: Fig. 3 (radar of the dimension means) and Fig. 2 (pairwise Wilcoxon p-values)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from culturebench.evaluate.reports import plots
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.llm_globe.config import DIMENSIONS
from culturebench.evaluate.runs.scores import ScoreResult


def draw_radar(ax, series: dict[str, dict[str, dict]], title: str) -> None:
    """Fig. 3 on a polar ``ax``: each series' mean per dimension on the 1-7 scale over the nine dimensions, its
    bootstrap interval (``mean_ci``) as a band around the line (without intervals: the area, lightly filled)."""
    plt = plots.pyplot()
    angles = np.linspace(0, 2 * np.pi, len(DIMENSIONS), endpoint=False).tolist()
    around = angles + angles[:1]
    for i, (name, dims) in enumerate(series.items()):
        color = plt.get_cmap("tab10")(i % 10)
        cells = [dims.get(d, {}) for d in DIMENSIONS]
        values = [np.nan if c.get("mean") is None else c["mean"] for c in cells]
        ax.plot(around, values + values[:1], color=color, label=name, marker="o", markersize=3)  # a point alone shows
        bounds = [c.get("mean_ci") or [None, None] for c in cells]
        if any(b[0] is not None for b in bounds):
            low = [np.nan if b[0] is None else b[0] for b in bounds]
            high = [np.nan if b[1] is None else b[1] for b in bounds]
            ax.fill_between(around, low + low[:1], high + high[:1], color=color, alpha=0.2, linewidth=0)
        else:
            ax.fill(around, values + values[:1], color=color, alpha=0.08)
    ax.set_xticks(angles)
    ax.set_xticklabels([d.replace(" ", "\n") for d in DIMENSIONS], fontsize=8)
    ax.set_ylim(0, 7)  # the 1-7 scale with room inside: a mean of 1 is a ring, not the centre point
    ax.set_yticks(range(1, 8))
    ax.set_title(title, pad=28)
    if series:  # below the plot, clear of the title and the dimension labels
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=min(4, len(series)), fontsize=8)


def radar_png(group_means_: dict[str, dict[str, dict]], path: Path, title: str) -> None:
    """Fig. 3 style: each group's mean per dimension on a 1-7 radar, with its bootstrap interval as a band."""
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 7.5), dpi=100, subplot_kw={"polar": True})
    draw_radar(ax, group_means_, title)
    plots.save_figure(fig, path)


def wilcoxon_png(model_tests_: dict, models: Sequence[str], path: Path, title: str) -> None:
    """Fig. 2 style: per dimension, the matrix of pairwise Wilcoxon p-values between models (laid out by
    matplotlib's constrained layout: the models' names never run into the panel below; one colour bar)."""
    plt = plots.pyplot()
    fig, axes = plt.subplots(3, 3, figsize=(13, 12), dpi=100, squeeze=False, layout="constrained")
    index = {m: i for i, m in enumerate(models)}
    image = None
    for ax, dimension in zip(axes.flat, DIMENSIONS):
        matrix = np.full((len(models), len(models)), np.nan)
        for row in model_tests_.get(dimension, {}).get("wilcoxon", []):
            if row["pvalue"] is not None and row["a"] in index and row["b"] in index:
                matrix[index[row["a"]], index[row["b"]]] = matrix[index[row["b"]], index[row["a"]]] = row["pvalue"]
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis")
        for i in range(len(models)):
            for j in range(len(models)):
                if np.isfinite(matrix[i, j]):
                    ax.text(j, i, f"{matrix[i, j]:.2g}", ha="center", va="center", fontsize=7,
                            color=plots.text_colour_on(matrix[i, j]))
        ax.set_xticks(range(len(models)))
        ax.set_xticklabels(models, rotation=45, ha="right", fontsize=6)
        ax.set_yticks(range(len(models)))
        ax.set_yticklabels(models, fontsize=6)
        ax.set_title(dimension, fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.4, label="Wilcoxon p-value")
    fig.suptitle(title)
    plots.save_figure(fig, path, tight=False)


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """metrics.json, then radar_PART.png and wilcoxon_PART.png for each part scored (closed, open); returns the
    paths written."""
    figures = {}
    for part in ("closed", "open"):
        if part in result.metrics:
            figures[f"radar_{part}.png"] = lambda m, path, part=part: radar_png(
                m[part]["group_means"], path, f"LLM-GLOBE {part}: mean per dimension")
            if len(result.metrics["models"]) < 2:  # nothing to compare: no figure, and metrics.json says why
                result.metrics[part]["wilcoxon_figure"] = "not drawn: one model (Fig. 2 compares pairs of models)"
                continue
            figures[f"wilcoxon_{part}.png"] = lambda m, path, part=part: wilcoxon_png(
                m[part]["model_tests"], m["models"], path, f"LLM-GLOBE {part}: pairwise Wilcoxon p-values")
    return run_folder.write_metrics_and_plots(result.metrics, out, figures)
