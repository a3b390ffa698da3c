"""NormAd's plots: Fig. 3 (accuracy per context), Figs. 5 / 10 / 13 (by zone), Figs. 6 / 11 (by gold label)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from culturebench.evaluate import plots, runs
from culturebench.evaluate.normad import prompts
from culturebench.evaluate.scores import ScoreResult


def error_bars(values: Sequence[float | None], intervals: Sequence[Sequence[float | None] | None]) -> list[list[float]]:
    """matplotlib's ``yerr`` (distances below and above each value) from [low, high] intervals; 0 where a value
    has no interval (metrics of a run scored before intervals existed, a group of one story)."""
    below, above = [], []
    for value, bounds in zip(values, intervals):
        low, high = bounds or (None, None)
        below.append(max(0.0, value - low) if value is not None and low is not None else 0.0)
        above.append(max(0.0, high - value) if value is not None and high is not None else 0.0)
    return [below, above]


def accuracy_by_context_png(metrics: dict, path: Path) -> None:
    """Fig. 3: accuracy per context, one bar group per context and a bar per model with its bootstrap interval."""
    plt = plots.pyplot()
    models = metrics["models"]
    contexts = list(prompts.CONTEXTS)
    width = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 * len(contexts)), 4.5), dpi=100)
    colours = plt.get_cmap("tab10")
    for i, model in enumerate(models):
        m = metrics["per_model"][model]
        xs = plots.grouped_bar_x(range(len(contexts)), len(models), i, width)
        values = [m["accuracy"].get(c) for c in contexts]
        err = error_bars(values, [m.get("accuracy_ci", {}).get(c) for c in contexts])
        bars = ax.bar(xs, [v or 0.0 for v in values], width, yerr=err, capsize=3, color=colours(i % 10),
                      label=model)
        for bar, v, up in zip(bars, values, err[1]):
            if v is not None:
                ax.annotate(f"{v:.2f}", (bar.get_x() + bar.get_width() / 2, v + up), ha="center", va="bottom",
                            fontsize=7, textcoords="offset points", xytext=(0, 2))
    ax.axhline(1 / 3, color="grey", linestyle="--", linewidth=1, label="chance (1/3)")
    ax.set_xticks(range(len(contexts)))
    ax.set_xticklabels([prompts.CONTEXT_NAMES[c] for c in contexts])
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("accuracy")
    level = metrics.get("uncertainty", {}).get("confidence_level")
    ax.set_title("NormAd: accuracy per context"
                 + (f" ({level:.0%} bootstrap intervals over stories)" if level else ""))
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    plots.save_figure(fig, path)


def accuracy_by_zone_png(metrics: dict, path: Path) -> None:
    """Fig. 5 style: per model, accuracy per Inglehart-Welzel zone (bars grouped by zone, one bar per context, with
    bootstrap intervals over the zone's stories)."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 1, figsize=(11, 3.8 * len(models)), dpi=100, squeeze=False)
    colours = plt.get_cmap("viridis")
    for ax, model in zip(axes[:, 0], models):
        m = metrics["per_model"][model]
        contexts = m["contexts"]
        zones = sorted({z for c in contexts for z in m["per_context"][c]["accuracy_by_zone"]})
        width = 0.8 / max(1, len(contexts))
        for i, context in enumerate(contexts):
            by_zone = m["per_context"][context]["accuracy_by_zone"]
            values = [(by_zone.get(z) or {}).get("accuracy") for z in zones]
            cis = m["per_context"][context].get("accuracy_by_zone_ci", {})
            xs = plots.grouped_bar_x(range(len(zones)), len(contexts), i, width)
            ax.bar(xs, [v or 0.0 for v in values], width, yerr=error_bars(values, [cis.get(z) for z in zones]),
                   capsize=2, color=colours(i / max(1, len(prompts.CONTEXTS) - 1)),
                   label=prompts.CONTEXT_NAMES[context])
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(zones, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.set_title(f"{model}: accuracy by Inglehart-Welzel zone")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=len(contexts), loc="upper left")
    plots.save_figure(fig, path)


def accuracy_by_gold_png(metrics: dict, path: Path) -> None:
    """Fig. 6 style: per model, accuracy per gold label (yes / no / neutral) in each context, with bootstrap
    intervals over the label's stories."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4), dpi=100, squeeze=False)
    colours = {"yes": "tab:green", "no": "tab:red", "neutral": "tab:grey"}
    for ax, model in zip(axes[0], models):
        m = metrics["per_model"][model]
        contexts = m["contexts"]
        width = 0.8 / len(prompts.LABELS)
        for i, label in enumerate(prompts.LABELS):
            xs = plots.grouped_bar_x(range(len(contexts)), len(prompts.LABELS), i, width)
            values = [m["per_context"][c]["accuracy_by_gold"][label]["accuracy"] for c in contexts]
            cis = [m["per_context"][c].get("accuracy_by_gold_ci", {}).get(label) for c in contexts]
            ax.bar(xs, [v or 0.0 for v in values], width, yerr=error_bars(values, cis), capsize=2,
                   color=colours[label], label=f"gold {label}")
        ax.set_xticks(range(len(contexts)))
        ax.set_xticklabels([prompts.CONTEXT_NAMES[c] for c in contexts], fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{model}: accuracy by gold label")
        ax.legend(fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    plots.save_figure(fig, path)


PLOTS = {"accuracy_by_context.png": accuracy_by_context_png, "accuracy_by_zone.png": accuracy_by_zone_png,
         "accuracy_by_gold.png": accuracy_by_gold_png}


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json`` and the PLOTS; returns the paths written."""
    return runs.write_metrics_and_plots(result.metrics, out, PLOTS)
