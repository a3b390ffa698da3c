"""WorldValuesBench figures: the threshold curve (Fig. 3) and human vs model answer histograms (Fig. 4)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from culturebench.evaluate.reports import plots
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.runs.limit import counted
from culturebench.evaluate.wvb.items import question_order

if TYPE_CHECKING:
    from culturebench.evaluate.wvb.measures import ScoreResult

MAX_HISTOGRAMS = 6


def _curve(curve: dict) -> tuple[list[float], list[float]]:
    points = [(float(k), v) for k, v in curve.items() if v is not None]
    points.sort()
    return [p[0] for p in points], [p[1] for p in points]


def _band(ax, curve_ci: dict | None, color) -> None:
    """The bootstrap interval of a threshold curve as a shaded band (thresholds without an interval skipped)."""
    points = sorted((float(k), lo, hi) for k, (lo, hi) in (curve_ci or {}).items() if lo is not None and hi is not None)
    if points:
        ax.fill_between([p[0] for p in points], [p[1] for p in points], [p[2] for p in points], color=color,
                        alpha=0.2, linewidth=0)


BASELINE_STYLE = ({"linestyle": "--", "linewidth": 1.8, "zorder": 3}, {"linestyle": ":", "linewidth": 2.2, "zorder": 3})
"""The baselines' curves, over the models' (zorder): a model's curve that runs along one (e.g. every question under
t, as the majority oracle's at 1.0) must not hide it."""


def _threshold_axes(ax) -> None:
    """Fig. 3's axes: threshold t on W1 (0-1) against the share of questions with W1 <= t, grid and legend."""
    ax.set_xlabel("threshold t on W1")
    ax.set_ylabel("share of questions with W1 <= t")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.03, 1.08)  # curves at 0 or 1 (every question under t, a majority oracle's) clear of the frame
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)


def threshold_curve_png(metrics: dict, path: Path) -> None:
    """x = threshold t, y = share of questions with W1 <= t: the run with its bootstrap band and each oracle
    baseline (Fig. 3)."""
    fig, ax = plots.pyplot().subplots(figsize=(6, 4.5), dpi=100)
    x, y = _curve(metrics["threshold_curve"])
    line, = ax.plot(x, y, marker="o", markersize=3, linewidth=2, label=f"model (mean W1 {_fmt(metrics.get('mean'))})")
    _band(ax, metrics.get("threshold_curve_ci"), line.get_color())
    for k, (name, baseline) in enumerate(sorted(metrics.get("baselines", {}).items())):
        bx, by = _curve(baseline["threshold_curve"])
        ax.plot(bx, by, **BASELINE_STYLE[k % len(BASELINE_STYLE)],
                label=f"{name} baseline (mean W1 {_fmt(baseline.get('mean'))})")
    _threshold_axes(ax)
    title = f"WorldValuesBench: {counted(metrics.get('n_questions', 0), 'questions')}"
    if metrics.get("n_rows"):  # coverage: the share of answer rows that matched a row of the release (scored)
        title += (f"\nscored: the {metrics.get('n_covered', 0):,} of {metrics['n_rows']:,} answer rows that match "
                  f"the release ({metrics.get('coverage', 0):.1%})")
    ax.set_title(title, fontsize=10)
    plots.save_figure(fig, path)


def histograms_png(rows: pl.DataFrame, path: Path, questions: list[str] | None = None) -> None:
    """Human vs model answer histograms side by side for up to 6 questions (Fig. 4); the first questions in
    natural order unless ``questions`` names them."""
    available = sorted(rows["question_id"].unique().to_list(), key=question_order)
    chosen = [q for q in (questions or available) if q in set(available)][:MAX_HISTOGRAMS]
    cols = min(3, max(1, len(chosen)))
    nrows = max(1, -(-len(chosen) // cols))
    fig, axes = plots.pyplot().subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), dpi=100, squeeze=False)
    for ax in axes.flat[len(chosen):]:
        ax.axis("off")
    if not chosen:
        axes[0][0].text(0.5, 0.5, "no covered rows", ha="center", va="center")
    for ax, question in zip(axes.flat, chosen):
        part = rows.filter(pl.col("question_id") == question)
        low, high = int(part["scale_min"][0]), int(part["scale_max"][0])
        points = np.arange(low, high + 1)
        human = part["human"].to_numpy()
        model = part["model"].drop_nulls().to_numpy()
        off = int(((model < low) | (model > high)).sum())  # kept off the scale (the authors'), not drawn
        width = 0.4
        for i, (values, label) in enumerate(((human, "human"), (model, "model"))):
            shares = np.array([(values == p).sum() for p in points], dtype=float) / max(len(values), 1)
            ax.bar(plots.grouped_bar_x(points, 2, i, width), shares, width=width, color=f"C{i}", label=label)
        ax.set_xticks(points)
        ax.set_ylim(0, 1.05)
        drawn = f"{counted(len(human), 'human answers')}, {counted(len(model) - off, 'model answers')}"
        ax.set_title(f"{question}: {drawn}" + (f"\n({counted(off, 'model answers')} off the scale, not drawn)"
                                               if off else ""), fontsize=10)
        ax.set_xlabel("answer")
        ax.set_ylabel("share")
    if chosen:  # one legend for the figure, above the panels, never on the bars
        fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="upper center", ncol=2, fontsize=9,
                   bbox_to_anchor=(0.5, 1.0))
        fig.tight_layout(rect=(0, 0, 1, 0.95))
    plots.save_figure(fig, path, tight=not chosen)


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json``, ``threshold_curve.png`` and ``histograms.png``; returns the paths written."""
    return run_folder.write_metrics_and_plots(result.metrics, out, {
        "threshold_curve.png": threshold_curve_png,
        "histograms.png": lambda _metrics, path: histograms_png(_plot_rows(result.plotted), path),
    })


def plotted_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """The rows of the questions ``histograms_png`` draws by default: the first MAX_HISTOGRAMS in natural order."""
    chosen = sorted(rows["question_id"].unique().cast(pl.String).to_list(), key=question_order)[:MAX_HISTOGRAMS]
    return rows.filter(pl.col("question_id").cast(pl.String).is_in(chosen))


def _plot_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """Rows for the histograms (``plotted_rows``): as scored, unless padding rows left a question with null human
    answers (an ``evaluate --no-demographics --samples K`` run with K != human answers); then that question's human
    and model answers are crossed (each human answer once per model row, each model row once per human answer),
    which keeps both shares exact."""
    if rows.height == 0 or rows["human"].null_count() == 0:
        return rows
    parts = []
    for question in sorted(rows["question_id"].unique().to_list(), key=question_order):
        part = rows.filter(pl.col("question_id") == question)
        if part["human"].null_count() == 0:
            parts.append(part.select("question_id", "human", "model", "scale_min", "scale_max"))
            continue
        humans = part["human"].drop_nulls()
        models = part.filter(pl.col("has_model"))["model"] if "has_model" in part.columns else part["model"]
        models = models if models.len() else pl.Series([None], dtype=pl.Int64)
        parts.append(pl.DataFrame({
            "question_id": [question] * (humans.len() * models.len()),
            "human": humans.to_list() * models.len(),
            "model": [m for m in models.to_list() for _ in range(humans.len())],
            "scale_min": [part["scale_min"][0]] * (humans.len() * models.len()),
            "scale_max": [part["scale_max"][0]] * (humans.len() * models.len()),
        }, schema={"question_id": pl.String, "human": pl.Int64, "model": pl.Int64, "scale_min": pl.Int64,
                   "scale_max": pl.Int64}))
    return pl.concat(parts, how="vertical_relaxed")
