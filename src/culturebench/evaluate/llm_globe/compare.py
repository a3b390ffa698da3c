"""LLM-GLOBE's entry of ``culturebench compare`` (``COMPARE``): closed and open means per model with intervals,
Friedman and pairwise tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.evaluate.reports import compare, plots, uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.llm_globe.config import BENCHMARK, Config, DIMENSIONS
from culturebench.evaluate.llm_globe.intervals import BOOTSTRAP_NOTE
from culturebench.evaluate.llm_globe.items import release_tables
from culturebench.evaluate.llm_globe.jury import apply_jury, jury_table
from culturebench.evaluate.llm_globe.metrics import part_metrics
from culturebench.evaluate.llm_globe.parsing import read_responses, score_closed
from culturebench.evaluate.llm_globe.plots import draw_radar, wilcoxon_png
from culturebench.evaluate.runs.readability import read_counts, status_counts

PART_VALUES = {"closed": ("score", "Tables 2-3: closed-ended mean per dimension (1-7, 7 = high)"),
               "open": ("jury_score", "Tables 4-5: open-generation jury score per dimension")}
"""Per part: the column scored and the title of its table on the compare page."""


def comparison_release(folders: Sequence[compare.RunFolder], release: Path | None) -> tuple[dict, Path]:
    """The release tables the runs are scored against: ``release`` when given, else the runs' releases (with
    --allow-mixed several: their closed and open prompts joined, an id taken from the first release that has it;
    rubrics and GLOBE 2004 of the first)."""
    paths = compare.release_paths(folders, release)
    loaded = [release_tables(p) for p in paths]
    merged = {name: loaded[0][name] for name in ("rubrics", "globe_2004")}
    for name in ("closed", "open"):
        frames = [t[name] for t in loaded if t[name] is not None]
        merged[name] = (pl.concat(frames, how="diagonal_relaxed").unique("id", keep="first", maintain_order=True)
                        if frames else None)
    return merged, paths[0]


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's answers scored together (``part_metrics``: one resample of prompts shared by all models, so
    differences are paired; the across-model tests over all of them): closed answers re-parsed, open answers with
    the jury score of their own run (the jury its metrics.json records: fitted weights, given weights, the jurors'
    mean, or none)."""
    tables, release_path = comparison_release(folders, release)
    closed_records, open_tables, sources, juries = [], [], [], {}
    for folder, mapping in zip(folders, labels):
        paths = folder.responses()
        sources += [run_folder.source_info(p) for p in paths]
        records = [{**r, "model": mapping.get(str(r["model"]), str(r["model"]))} if "model" in r else r
                   for r in read_responses(paths)]
        closed_records += [r for r in records if r["part"] == "closed"]
        answers = [r for r in records if r["part"] == "open"]
        if answers:
            jury = (folder.metrics.get("open") or {}).get("jury") or {"method": "none"}
            table, jurors, _ = jury_table(answers, [r for r in records if r["part"] == "juror"], tables["open"])
            open_tables.append(apply_jury(table, jurors, jury).select(
                "model", "id", "dimension", "language", "sample_index", "jury_score"))
            juries[str(folder.path)] = jury
    config = Config()
    metrics: dict[str, Any] = {"benchmark": BENCHMARK, "release": str(release_path),
                               "release_manifest_sha256": run_folder.release_manifest_sha256(release_path),
                               "responses": sources, "juries": juries,
                               "uncertainty": settings.record(unit="prompt", strata="dimension", **BOOTSTRAP_NOTE)}
    scored = {"closed": score_closed(closed_records, tables["closed"]) if closed_records else None,
              "open": pl.concat(open_tables) if open_tables else None}
    notes = [] if scored["closed"] is None else [closed_counts_note(scored["closed"])]
    for part, frame in scored.items():
        if frame is None:
            notes.append(f"No {part} answers in these runs: the {part} table and figures are empty.")
            continue
        metrics[part] = part_metrics(frame, PART_VALUES[part][0], part, {}, tables, config, settings)
        uncertainty.warn_no_spread(metrics, metrics[part], metrics[part].get("no_spread"), f"llm_globe {part}")
    if len({json.dumps(j, sort_keys=True) for j in juries.values()}) > 1:
        notes.append("The runs' open answers were scored by different juries (see comparison.json, metrics.juries): "
                     "their jury scores are on scales fitted separately.")
    models = sorted({m for f, mapping in zip(folders, labels) for m in mapping.values()}
                    | {m for part in ("closed", "open") for m in metrics.get(part, {}).get("mean_sd", {})})
    metrics["models"] = models
    metrics = run_folder.json_safe(metrics)
    return compare.Comparison(models=models, tables=comparison_tables(metrics, models), metrics=metrics, notes=notes)


def closed_counts_note(scored: pl.DataFrame) -> str:
    """The page's note of every model's closed answers read (on the scale or off it, left out) and unreadable."""
    counts = []
    for model in sorted(set(scored["model"])):
        status = dict(scored.filter(pl.col("model") == model).group_by("parse_status").len().iter_rows())
        read, unreadable = status_counts(status, ("ok", "out_of_range"))
        counts.append(f"{model}: {read_counts(read, unreadable)} ({status.get('out_of_range', 0):,} of those read "
                      "off the scale)")
    return "Closed answers (the means rest on those read on the scale): " + "; ".join(counts) + "."


def means_table(part: dict | None, models: Sequence[str]) -> pl.DataFrame:
    """Tables 2-5 layout: one row per dimension (prompts: how many the models answered, at most), per model its
    mean with ``_low``/``_high`` (the bootstrap interval), its SD and the answers it rests on (``n``)."""
    schema = {"dimension": pl.String, "prompts": pl.Int64}
    for m in models:
        schema.update({m: pl.Float64, f"{m}_low": pl.Float64, f"{m}_high": pl.Float64, f"{m} SD": pl.Float64,
                       f"{m} n": pl.Int64})
    if part is None:
        return pl.DataFrame(schema=schema)
    rows = []
    for dimension in DIMENSIONS:
        cells = {m: part["mean_sd"].get(m, {}).get(dimension) or {} for m in models}
        if not any(cells.values()):
            continue
        row = {"dimension": dimension, "prompts": max(c.get("n_prompts") or 0 for c in cells.values())}
        for m, c in cells.items():
            low, high = c.get("mean_ci") or [None, None]
            row.update({m: c.get("mean"), f"{m}_low": low, f"{m}_high": high, f"{m} SD": c.get("sd"),
                        f"{m} n": c.get("n")})
        rows.append(row)
    return pl.DataFrame(rows, schema=schema)


def comparison_tables(metrics: dict, models: Sequence[str]) -> dict[str, pl.DataFrame]:
    """The compare page's tables: closed and open means (Tables 2-5), the Friedman test per dimension and the
    pairwise differences (Fig. 2's Wilcoxon tests, the paired bootstrap interval, ``significant``)."""
    friedman, differences = [], []
    for part in ("closed", "open"):
        for dimension, tests in (metrics.get(part) or {}).get("model_tests", {}).items():
            f = tests["friedman"]
            friedman.append({"part": part, "dimension": dimension, "models": f["k"], "prompts": f["n_blocks"],
                             "chi2": f["statistic"], "pvalue": f["pvalue"], "reason": f.get("reason")})
        for row in (metrics.get(part) or {}).get("model_differences", []):
            low, high = row["difference_ci"] or [None, None]
            differences.append({"part": part, **{k: row[k] for k in ("model_a", "model_b", "dimension", "difference")},
                                "difference_low": low, "difference_high": high,
                                **{k: row[k] for k in ("wilcoxon_statistic", "n_pairs", "pvalue", "pvalue_holm",
                                                       "friedman_pvalue", "significant")}})
    return {
        "closed_means": means_table(metrics.get("closed"), models),
        "open_means": means_table(metrics.get("open"), models),
        "friedman": pl.DataFrame(friedman, schema={"part": pl.String, "dimension": pl.String, "models": pl.Int64,
                                                   "prompts": pl.Int64, "chi2": pl.Float64, "pvalue": pl.Float64,
                                                   "reason": pl.String}),
        "differences": pl.DataFrame(differences, schema={
            "part": pl.String, "model_a": pl.String, "model_b": pl.String, "dimension": pl.String,
            "difference": pl.Float64, "difference_low": pl.Float64, "difference_high": pl.Float64,
            "wilcoxon_statistic": pl.Float64, "n_pairs": pl.Int64, "pvalue": pl.Float64, "pvalue_holm": pl.Float64,
            "friedman_pvalue": pl.Float64, "significant": pl.Boolean}),
    }


def compared_parts(comparison: compare.Comparison) -> list[str]:
    return [p for p in ("closed", "open") if comparison.metrics.get(p)]


def radar_comparison_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 3 with one series per model, one radar per part compared, the bootstrap intervals as bands."""
    plt = plots.pyplot()
    parts = compared_parts(comparison) or ["closed"]
    fig, axes = plt.subplots(1, len(parts), figsize=(7.5 * len(parts), 8.2), dpi=100, squeeze=False,
                             subplot_kw={"polar": True})
    for ax, part in zip(axes.flat, parts):
        draw_radar(ax, (comparison.metrics.get(part) or {}).get("mean_sd", {}),
                   f"LLM-GLOBE {part}: mean per dimension")
    plots.save_figure(fig, path)


def dimension_bars_png(comparison: compare.Comparison, path: Path) -> None:
    """The radar's companion: per part, grouped bars of each model's mean per dimension with its bootstrap
    interval as error bars."""
    plt = plots.pyplot()
    parts = compared_parts(comparison) or ["closed"]
    models = comparison.models
    fig, axes = plt.subplots(len(parts), 1, figsize=(max(10.0, 0.5 * len(DIMENSIONS) * max(2, len(models))),
                                                     4.5 * len(parts)), dpi=100, squeeze=False)
    width = 0.8 / max(1, len(models))
    slots = list(range(len(DIMENSIONS)))
    for ax, part in zip(axes.flat, parts):
        table = (comparison.metrics.get(part) or {}).get("mean_sd", {})
        for i, model in enumerate(models):
            cells = [(x, table.get(model, {}).get(d) or {}) for x, d in
                     zip(plots.grouped_bar_x(slots, len(models), i, width), DIMENSIONS)]
            shown = [(x, c["mean"], c.get("mean_ci") or [None, None]) for x, c in cells if c.get("mean") is not None]
            ax.bar([x for x, _, _ in shown], [v for _, v, _ in shown], width, label=model, color=f"C{i % 10}")
            spread = [(x, v, lo, hi) for x, v, (lo, hi) in shown if lo is not None and hi is not None]
            if spread:  # error bars only where there is an interval: a cap of zero width reads as certainty
                ax.errorbar([x for x, *_ in spread], [v for _, v, _, _ in spread], fmt="none", ecolor="black",
                            yerr=[[v - lo for _, v, lo, _ in spread], [hi - v for _, v, _, hi in spread]], capsize=2)
        ax.set_xticks(slots)
        ax.set_xticklabels([d.replace(" ", "\n") for d in DIMENSIONS], fontsize=8)
        ax.set_xlim(-0.5, len(DIMENSIONS) - 0.5)
        ax.set_ylim(0, 7)  # from 0: a mean of 1 (the scale's floor) is a bar, not nothing
        plots.note_if_empty(ax, [(table.get(m, {}).get(d) or {}).get("mean") for m in models for d in DIMENSIONS],
                            "no parsed rating from any model")
        ax.set_ylabel("mean (1-7)")
        level = (comparison.metrics.get("uncertainty") or {}).get("confidence_level")
        ax.set_title(f"LLM-GLOBE {part}: mean per dimension" + plots.interval_words(fig, level, "prompts"))
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    plots.save_figure(fig, path)


def wilcoxon_comparison_png(part: str):
    """Fig. 2 for ``part``: the pairwise Wilcoxon p-values per dimension (a figure saying why when there is no
    pair of models to test)."""

    def draw(comparison: compare.Comparison, path: Path) -> None:
        tests = (comparison.metrics.get(part) or {}).get("model_tests")
        if tests and len(comparison.models) >= 2:
            wilcoxon_png(tests, comparison.models, path, f"LLM-GLOBE {part}: pairwise Wilcoxon p-values (Fig. 2)")
            return
        plt = plots.pyplot()
        fig, ax = plt.subplots(figsize=(6, 1.5), dpi=100)
        ax.axis("off")
        ax.text(0.5, 0.5, f"No pairwise tests: {'no ' + part + ' answers' if not tests else 'one model'}.",
                ha="center", va="center")
        plots.save_figure(fig, path)

    return draw


COMPARE = compare.BenchmarkSpec(
    benchmark=BENCHMARK,
    title="LLM-GLOBE (Karinshak et al. 2024, arXiv 2411.06032)",
    build=compare_runs,
    tables=(
        compare.Table("closed_means", PART_VALUES["closed"][1],
                      "Per model: mean over its answers [bootstrap interval over prompts], SD and n, the answers "
                      "on the scale it rests on (the others: the Notes' unreadable counts); prompts: how many "
                      "prompts of the dimension were answered."),
        compare.Table("open_means", PART_VALUES["open"][1],
                      "Per model: mean jury score S(x) over its answers [bootstrap interval over prompts], SD and n, "
                      "the answers the jury scored; each run's answers scored by that run's jury."),
        compare.Table("friedman", "Sec. 4.2.3: Friedman test across models per dimension (prompts as blocks)",
                      "Needs three or more models; blocks are the prompts every model answered."),
        compare.Table("differences", "Fig. 2: pairwise differences between models per dimension",
                      "difference = mean_a - mean_b with its paired bootstrap interval; pvalue: Wilcoxon signed-rank "
                      "over prompts, pvalue_holm over the pairs of the dimension."),
    ),
    figures=(
        compare.Figure("radar.png", "Fig. 3: mean per dimension, one series per model (bands: intervals)",
                       radar_comparison_png, table="closed_means"),
        compare.Figure("dimension_bars.png", "Mean per dimension with bootstrap intervals (error bars)",
                       dimension_bars_png, table="closed_means"),
        compare.Figure("wilcoxon_closed.png", "Fig. 2 (closed): pairwise Wilcoxon p-values",
                       wilcoxon_comparison_png("closed"), table="differences"),
        compare.Figure("wilcoxon_open.png", "Fig. 2 (open): pairwise Wilcoxon p-values",
                       wilcoxon_comparison_png("open"), table="differences"),
    ),
    significance=BOOTSTRAP_NOTE["significance"][0].upper() + BOOTSTRAP_NOTE["significance"][1:] + ".",
)
"""``culturebench compare`` for LLM-GLOBE: every run's answers scored together against the release."""
