"""NormAd's plots: Fig. 3 (accuracy per context), Figs. 5 / 10 / 13 (by zone), Figs. 6 / 11 (by gold label)."""

from __future__ import annotations

from pathlib import Path

from culturebench.evaluate.reports import plots
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.normad import prompts
from culturebench.evaluate.runs.scores import ScoreResult


def accuracy_by_context_png(metrics: dict, path: Path) -> None:
    """Fig. 3: accuracy per context, one bar group per context and a bar per model with its bootstrap interval."""
    plt = plots.pyplot()
    models = metrics["models"]
    contexts = list(prompts.CONTEXTS)
    width = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 * len(contexts)) + 2.5, 4.5), dpi=100)
    colours = plt.get_cmap("tab10")
    for i, model in enumerate(models):
        m = metrics["per_model"][model]
        plots.interval_bars(ax, plots.grouped_bar_x(range(len(contexts)), len(models), i, width),
                            [m["accuracy"].get(c) for c in contexts],
                            [m.get("accuracy_ci", {}).get(c) for c in contexts], width, label=model,
                            color=colours(i % 10), vertical=len(models) > 3)
    ax.axhline(1 / 3, color="grey", linestyle="--", linewidth=1, label="chance (1/3)")
    ax.set_xticks(range(len(contexts)))
    ax.set_xticklabels([prompts.CONTEXT_NAMES[c] for c in contexts])
    plots.value_axis(ax, 1, "accuracy")
    level = metrics.get("uncertainty", {}).get("confidence_level")
    ax.set_title("NormAd: accuracy per context" + plots.interval_words(fig, level, "stories"))
    plots.legend_beside(ax)
    plots.save_figure(fig, path)


def accuracy_by_zone_png(metrics: dict, path: Path) -> None:
    """Fig. 5 style: per model, accuracy per Inglehart-Welzel zone (bars grouped by zone, one bar per context, with
    bootstrap intervals over the zone's stories)."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 1, figsize=(13, 4.0 * len(models)), dpi=100, squeeze=False)
    colours = plt.get_cmap("viridis")
    for ax, model in zip(axes[:, 0], models):
        m = metrics["per_model"][model]
        contexts = m["contexts"]
        zones = sorted({z for c in contexts for z in m["per_context"][c]["accuracy_by_zone"]})
        width = 0.8 / max(1, len(contexts))
        for i, context in enumerate(contexts):
            by_zone = m["per_context"][context]["accuracy_by_zone"]
            cis = m["per_context"][context].get("accuracy_by_zone_ci", {})
            plots.interval_bars(ax, plots.grouped_bar_x(range(len(zones)), len(contexts), i, width),
                                [(by_zone.get(z) or {}).get("accuracy") for z in zones], [cis.get(z) for z in zones],
                                width, label=prompts.CONTEXT_NAMES[context],
                                color=colours(i / max(1, len(prompts.CONTEXTS) - 1)), fontsize=6,
                                vertical=len(zones) * len(contexts) > 20)
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(zones, rotation=20, ha="right", fontsize=8)
        plots.value_axis(ax, 1, "accuracy")
        plots.panel_title(ax, f"{model}: accuracy by Inglehart-Welzel zone", fontsize=11)
        plots.legend_beside(ax, fontsize=7)
    plots.save_figure(fig, path)


def accuracy_by_gold_png(metrics: dict, path: Path) -> None:
    """Fig. 6 style: per model, accuracy per gold label (yes / no / neutral) in each context, with bootstrap
    intervals over the label's stories (one legend, beside the last panel)."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models) + 1.5, 4.3), dpi=100, squeeze=False)
    colours = {"yes": "tab:green", "no": "tab:red", "neutral": "tab:grey"}
    for ax, model in zip(axes[0], models):
        m = metrics["per_model"][model]
        contexts = m["contexts"]
        width = 0.8 / len(prompts.LABELS)
        for i, label in enumerate(prompts.LABELS):
            plots.interval_bars(ax, plots.grouped_bar_x(range(len(contexts)), len(prompts.LABELS), i, width),
                                [m["per_context"][c]["accuracy_by_gold"][label]["accuracy"] for c in contexts],
                                [m["per_context"][c].get("accuracy_by_gold_ci", {}).get(label) for c in contexts],
                                width, label=f"gold {label}", color=colours[label], fontsize=6)
        ax.set_xticks(range(len(contexts)))
        ax.set_xticklabels([prompts.CONTEXT_NAMES[c] for c in contexts], fontsize=7)
        plots.value_axis(ax, 1, "accuracy")
        plots.panel_title(ax, f"{model}: accuracy by gold label", fontsize=11)
    plots.legend_beside(axes[0, -1], fontsize=7)
    plots.save_figure(fig, path)


PLOTS = {"accuracy_by_context.png": accuracy_by_context_png, "accuracy_by_zone.png": accuracy_by_zone_png,
         "accuracy_by_gold.png": accuracy_by_gold_png}


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json`` and the PLOTS; returns the paths written."""
    return run_folder.write_metrics_and_plots(result.metrics, out, PLOTS)
