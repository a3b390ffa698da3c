"""CDEval's plots: Fig. 3 (orientation likelihood per dimension) and Fig. 6 (PCA)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from culturebench.evaluate.reports import plots
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.cdeval.items import DIMENSIONS
from culturebench.evaluate.runs.scores import ScoreResult


def dimensions_png(metrics: dict, path: Path) -> None:
    """Fig. 3 style: one panel per dimension, the models as points on the 0-1 orientation-likelihood axis with
    their bootstrap interval as error bars (0.5 dashed: no orientation); the models named once per row of panels."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(2, 3, figsize=(12, max(4.0, 1.2 + 0.45 * len(models)) * 1.4), dpi=100, squeeze=False)
    colours = plt.get_cmap("tab10")
    for ax, dimension in zip(axes.flat, DIMENSIONS):
        for i, model in enumerate(models):
            value = metrics["per_model"][model]["dimension_likelihood"].get(dimension)
            if value is not None:
                low, high = metrics["per_model"][model].get("dimension_likelihood_ci", {}).get(dimension,
                                                                                            [None, None])
                if low is not None and high is not None:
                    ax.errorbar([value], [i], xerr=[[max(0.0, value - low)], [max(0.0, high - value)]], color=colours(i % 10),
                                capsize=3, linewidth=1, zorder=2)
                ax.scatter([value], [i], color=colours(i % 10), s=50, zorder=3)
                ax.annotate(f"{value:.2f}", (value, i), textcoords="offset points", xytext=(6, 4), fontsize=7)
        ax.axvline(0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.8, len(models) - 0.2)
        ax.set_yticks(range(len(models)))
        ax.set_yticklabels(models, fontsize=8)
        ax.tick_params(axis="y", labelleft=ax in axes[:, 0])
        ax.set_title(dimension)
        ax.set_xlabel("orientation likelihood")
        ax.grid(axis="x", alpha=0.3)
    level = metrics.get("uncertainty", {}).get("confidence_level")
    fig.suptitle("CDEval: orientation likelihood per dimension" + plots.interval_words(fig, level, "questions"))
    plots.save_figure(fig, path)


def pca_png(metrics: dict, path: Path) -> None:
    """Fig. 6 (right): models and countries on the first two principal components of the six dimensions (Eq. 3's
    scale); legend outside the axes; names beside the points where they fit without overlapping (the models'
    first); under the plot, what was left out (a model or country lacking a dimension) and the names not written."""
    plt = plots.pyplot()
    points = metrics["pca"]["points"]
    explained = metrics["pca"]["explained_variance_ratio"]
    left_out = metrics["pca"]["left_out"]
    fig, ax = plt.subplots(figsize=(9, 6.8), dpi=100)
    if not points:
        ax.text(0.5, 0.5, "fewer than two models or countries with all six dimensions: no PCA", ha="center",
                va="center")
        ax.axis("off")
    for kind, label, colour, marker in (("country", "countries (Hofstede)", "tab:grey", "o"),
                                        ("model", "models", "tab:red", "*")):
        chosen = [p for p in points if p["kind"] == kind]
        if chosen:
            ax.scatter([p["pc1"] for p in chosen], [p["pc2"] for p in chosen], c=colour, marker=marker,
                       s=120 if kind == "model" else 25, label=label, zorder=3 if kind == "model" else 2)
    if points:
        label = [f"PC{i + 1} ({v:.0%})" for i, v in enumerate(explained)] + ["PC2"]
        ax.margins(0.1)  # room for the labels of the outermost points
        ax.set_xlabel(label[0])
        ax.set_ylabel(label[1])
        plots.legend_beside(ax)
        ax.grid(alpha=0.3)
    ax.set_title("CDEval: PCA of models and countries (six Hofstede dimensions)")
    fig.tight_layout(rect=(0, 0.09, 1, 1))  # the footer's room
    unwritten = plots.label_points(ax, [(p["pc1"], p["pc2"], p["name"], 8 if p["kind"] == "model" else 7)
                                        for p in sorted(points, key=lambda p: p["kind"] != "model")])
    footer = []
    if left_out:
        shown = "; ".join(f"{e['kind']} {e['name']} (no {', '.join(e['missing'])})" for e in left_out[:4])
        more = f"; and {len(left_out) - 4} more (metrics.json pca.left_out)" if len(left_out) > 4 else ""
        footer.append(f"Left out, lacking a dimension: {shown}{more}")
    if unwritten:
        more = f" and {len(unwritten) - 8} more" if len(unwritten) > 8 else ""
        footer.append(f"Not named, for want of room beside the point: {', '.join(unwritten[:8])}{more} "
                      "(metrics.json pca.points)")
    if footer:
        fig.text(0.01, 0.01, "\n".join(textwrap.fill(line, 150) for line in footer), fontsize=7, va="bottom")
    plots.save_figure(fig, path, tight=False)


PLOTS = {"dimensions.png": dimensions_png, "pca.png": pca_png}


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json``, ``dimensions.png`` (Fig. 3) and ``pca.png`` (Fig. 6); returns the paths written."""
    return run_folder.write_metrics_and_plots(result.metrics, out, PLOTS)
