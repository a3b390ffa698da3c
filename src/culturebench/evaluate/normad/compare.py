"""NormAd's entry of ``culturebench compare`` (``COMPARE``): accuracy per context and its breakdowns per model
with intervals, paired differences."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import compare, plots, uncertainty
from culturebench.evaluate.normad import prompts
from culturebench.evaluate.normad.intervals import BOOTSTRAP_NOTE, BREAKDOWNS
from culturebench.evaluate.normad.items import release_tables
from culturebench.evaluate.normad.metrics import score_responses
from culturebench.evaluate.normad.parsing import DEFAULT_UNPARSED, read_responses
from culturebench.evaluate.normad.plots import accuracy_by_context_png, accuracy_by_gold_png


def comparison_stories(folders: Sequence[compare.RunFolder], release: Path | None) -> tuple[pl.DataFrame, Path]:
    """The stories the runs are compared against: ``release`` when given, else the runs' releases (with
    --allow-mixed several: their stories joined, a story id taken from the first release that has it)."""
    paths = compare.release_paths(folders, release)
    stories = pl.concat([release_tables(p)["stories"] for p in paths], how="diagonal_relaxed")
    return stories.unique("story_id", keep="first", maintain_order=True), paths[0]


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's responses re-scored together (one bootstrap of stories shared by all models and contexts:
    paired), as the tables of the report; answers read and unparsed answers scored under the runs' rules
    (``answer_rule`` and ``unparsed_rule`` of their metrics.json; a run without ``answer_rule`` predates it and read
    answers the strict way; runs scored under different rules, or asked under different protocols, cannot be
    compared)."""
    stories, release_path = comparison_stories(folders, release)
    responses, sources = compare.relabelled_responses(folders, labels, read_responses)
    rules = sorted({f.metrics.get("unparsed_rule", {}).get("rule", DEFAULT_UNPARSED) for f in folders})
    if len(rules) > 1:
        raise InputError(f"the runs score unparsed answers differently ({' and '.join(rules)}); re-score them with "
                         "one rule (`culturebench score normad`, with or without --unparsed-wrong)")
    check_one_protocol(folders)
    answer_rules = sorted({f.metrics.get("answer_rule", {}).get("rule", "strict") for f in folders})
    if len(answer_rules) > 1:
        raise InputError(f"the runs read answers differently ({' and '.join(answer_rules)}); re-score them with "
                         "one rule (`culturebench score normad --answer-rule RULE`)")
    result = score_responses(responses, stories, sources=sources, release=release_path, bootstrap=settings,
                             unparsed=rules[0], answer_rule=answer_rules[0])
    return compare.Comparison(models=result.metrics["models"], tables=comparison_tables(result.metrics),
                              metrics=result.metrics)


def run_protocol(folder: compare.RunFolder) -> str:
    """The protocol (prompts.PROTOCOLS) a run asked under, from its metrics.json: a run written before protocols were
    recorded asked App. A.3 Fig. 9 (``paper``); one whose responses hold no prompt is ``not recorded``."""
    if "protocol" not in folder.metrics:
        return "paper"
    return folder.metrics["protocol"].get("name") or "not recorded"


def check_one_protocol(folders: Sequence[compare.RunFolder]) -> None:
    """Runs asked under different protocols are not put side by side (a one-line error)."""
    protocols = sorted({run_protocol(f) for f in folders})
    if len(protocols) > 1:
        raise InputError(f"the runs were asked under different protocols ({' and '.join(protocols)}): their "
                         "accuracies are not comparable; compare runs of one protocol (run.json evaluation.protocol)")


def comparison_tables(metrics: dict) -> dict[str, pl.DataFrame]:
    """The report's flat tables from ``score_responses``' metrics: main (Fig. 3: accuracy per model and context),
    table_a4 (accuracy, macro P / R / F1 and the always-Neither F1 per model and context), differences (paired, per
    context), and one table per BREAKDOWNS (zones, gold labels, subaxes, countries: ranked, small groups last)."""
    models = metrics["models"]
    contexts = [c for c in prompts.CONTEXTS if any(c in metrics["per_model"][m]["contexts"] for m in models)]
    main, table_a4 = [], []
    groups: dict[str, list[dict]] = {name: [] for name in BREAKDOWNS}
    for model in models:
        m = metrics["per_model"][model]
        row = {"model": model, "n_stories": m["n_stories"]}
        for c in contexts:
            row.update(compare.with_interval(prompts.CONTEXT_NAMES[c], m["accuracy"].get(c), m["accuracy_ci"].get(c)))
        main.append(row)
        for c in m["contexts"]:
            pc = m["per_context"][c]
            table_a4.append({"model": model, "context": prompts.CONTEXT_NAMES[c], "n": pc["n"],
                             "n_unparsed": pc["n_unparsed"],
                             **compare.with_interval("accuracy", pc["accuracy"], pc["accuracy_ci"]),
                             **{k: v for key in ("precision", "recall", "f1")
                                for k, v in compare.with_interval(key, pc["macro"][key], pc["macro_ci"][key]).items()},
                             "always_neither_f1": pc["baselines"]["always_neither"]["f1"]})
            for name, rows in pc["breakdowns"].items():
                groups[name] += [{"model": model, "context": prompts.CONTEXT_NAMES[c], name: r["group"],
                                  **compare.with_interval("accuracy", r["accuracy"], r["accuracy_ci"]),
                                  "n_stories": r["n_stories"], "n_answers": r["n_answers"], "small": r["small"],
                                  "rank": r["rank"]} for r in rows]
    interval_schema = {"accuracy": pl.Float64, "accuracy_low": pl.Float64, "accuracy_high": pl.Float64}
    differences = pl.DataFrame(metrics["model_differences"], schema={
        "context": pl.String, "model_a": pl.String, "model_b": pl.String, "accuracy_a": pl.Float64,
        "accuracy_b": pl.Float64, "difference": pl.Float64, "low": pl.Float64, "high": pl.Float64,
        "pvalue": pl.Float64, "n_common": pl.Int64, "pvalue_holm": pl.Float64, "significant": pl.Boolean})
    differences = differences.with_columns(pl.col("context").replace(prompts.CONTEXT_NAMES)).select(
        "context", "model_a", "model_b", "accuracy_a", "accuracy_b", "difference",
        pl.col("low").alias("difference_low"), pl.col("high").alias("difference_high"), "pvalue", "pvalue_holm",
        "significant", "n_common")
    tables = {
        "main": pl.DataFrame(main, schema={"model": pl.String, "n_stories": pl.Int64, **{
            f"{prompts.CONTEXT_NAMES[c]}{suffix}": pl.Float64 for c in contexts for suffix in ("", "_low", "_high")}}),
        "table_a4": pl.DataFrame(table_a4, schema={
            "model": pl.String, "context": pl.String, "n": pl.Int64, "n_unparsed": pl.Int64, **interval_schema,
            **{f"{k}{suffix}": pl.Float64 for k in ("precision", "recall", "f1") for suffix in ("", "_low", "_high")},
            "always_neither_f1": pl.Float64}),
        "differences": differences,
    }
    for name in BREAKDOWNS:
        tables[name] = pl.DataFrame(groups[name], schema={
            "model": pl.String, "context": pl.String, name: pl.String, **interval_schema, "n_stories": pl.Int64,
            "n_answers": pl.Int64, "small": pl.Boolean, "rank": pl.Int64})
    return tables


def zone_heatmap_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 5 / 10 / 13 as a heatmap: one panel per context, a row per model, a column per Inglehart-Welzel zone;
    each cell its accuracy and bootstrap interval, in black or white as reads on its colour (zones under the minimum
    of stories marked "small"); one colour bar, as tall as a panel, beside the first."""
    plt = plots.pyplot()
    frame = comparison.tables["zone"]
    models = comparison.models
    contexts = list(dict.fromkeys(frame["context"].to_list()))
    zones = sorted(set(frame["zone"].to_list()))
    cells = {(r["context"], r["model"], r["zone"]): r for r in frame.iter_rows(named=True)}
    height = sum(0.7 * len(models) + 1.8 for _ in contexts) or 3.0
    fig, axes = plt.subplots(max(1, len(contexts)), 1, squeeze=False, dpi=100, layout="constrained",
                             figsize=(max(8.0, 1.7 * len(zones) + 4), height))
    for k, (ax, context) in enumerate(zip(axes[:, 0], contexts)):
        grid = [[(cells.get((context, m, z)) or {}).get("accuracy") for z in zones] for m in models]
        image = ax.imshow([[float("nan") if v is None else v for v in row] for row in grid], cmap="viridis", vmin=0,
                          vmax=1, aspect="auto")
        for i, model in enumerate(models):
            for j, zone in enumerate(zones):
                row = cells.get((context, model, zone))
                if row is None or row["accuracy"] is None:
                    continue
                text = f"{row['accuracy']:.2f}"
                if row["accuracy_low"] is not None:
                    text += f"\n[{row['accuracy_low']:.2f}, {row['accuracy_high']:.2f}]"
                if row["small"]:
                    text += "\nsmall"
                ax.text(j, i, text, ha="center", va="center", fontsize=8,
                        color=plots.text_colour_on(row["accuracy"]))
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(zones, rotation=20, ha="right", fontsize=8)
        ax.set_yticks(range(len(models)))
        ax.set_yticklabels(models, fontsize=8)
        ax.set_title(f"{context}: accuracy by Inglehart-Welzel zone", fontsize=10)
        colour_bar = fig.colorbar(image, ax=ax, label="accuracy", fraction=0.04, pad=0.02)
        if k:  # one colour bar is enough: the others keep the panels' widths equal, unseen
            colour_bar.ax.set_visible(False)
    plots.save_figure(fig, path, tight=False)


COMPARE = compare.BenchmarkSpec(
    benchmark="normad",
    title="NormAd (Rao et al. 2024)",
    build=compare_runs,
    tables=(
        compare.Table("main", "Fig. 3: accuracy per context",
                      "Accuracy over Yes / No / Neither per model and context (an unparsed answer read as "
                      "Neither, the authors' fallback)."),
        compare.Table("table_a4", "Table A.4: accuracy and macro precision / recall / F1 per context",
                      "always_neither_f1: Table A.4's model that answers Neither to every story, on the same "
                      "stories (no interval)."),
        compare.Table("differences", "Paired accuracy differences between models per context",
                      "difference = accuracy_a - accuracy_b on the n_common stories both models answered in that "
                      "context; pvalue_holm over all rows."),
        compare.Table("zone", "Fig. 5 / 10 / 13: accuracy by Inglehart-Welzel zone"),
        compare.Table("gold_label", "Fig. 6 / 11: accuracy by gold label"),
        compare.Table("subaxis", "Sec. 5.3: accuracy by subaxis"),
        compare.Table("country", "Accuracy by country (ours; the paper has no per-country figure)",
                      f"Ranked within each model and context; countries with fewer than {uncertainty.MIN_GROUP_SIZE} "
                      "stories are flagged small and not ranked."),
    ),
    figures=(
        compare.Figure("accuracy_by_context.png", "Fig. 3: accuracy per context",
                       lambda c, p: accuracy_by_context_png(c.metrics, p), table="main"),
        compare.Figure("zone_heatmap.png", "Fig. 5 / 10 / 13: accuracy by Inglehart-Welzel zone", zone_heatmap_png,
                       table="zone"),
        compare.Figure("accuracy_by_gold.png", "Fig. 6 / 11: accuracy by gold label",
                       lambda c, p: accuracy_by_gold_png(c.metrics, p), table="gold_label"),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for NormAd: every run's responses re-scored together against the release."""
