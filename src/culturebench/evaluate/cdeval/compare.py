"""CDEval's entry of ``culturebench compare`` (``COMPARE``): Table 2 / Fig. 3 likelihoods and Eq. 4 similarities
per model with intervals."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import compare, plots, uncertainty
from culturebench.evaluate.cdeval import prompts
from culturebench.evaluate.cdeval.intervals import BOOTSTRAP_NOTE
from culturebench.evaluate.cdeval.items import DIMENSIONS, DOMAINS, release_tables
from culturebench.evaluate.cdeval.metrics import score_responses
from culturebench.evaluate.cdeval.parsing import read_responses
from culturebench.evaluate.cdeval.plots import pca_png
from culturebench.evaluate.runs.readability import status_counts
from culturebench.evaluate.runs.scores import ScoreResult


def comparison_release(folders: Sequence[compare.RunFolder], release: Path | None) -> tuple[dict[str, pl.DataFrame], Path]:
    """The release tables the runs are compared against: ``release`` when given, else the runs' releases (with
    --allow-mixed several: their questions joined, a question id taken from the first release that has it; the
    Hofstede table of the first)."""
    paths = compare.release_paths(folders, release)
    loaded = [release_tables(p) for p in paths]
    questions = pl.concat([t["questions"] for t in loaded], how="diagonal_relaxed").unique(
        "question_id", keep="first", maintain_order=True)
    return {"questions": questions, "hofstede": loaded[0]["hofstede"]}, paths[0]


def runs_repeat_rule(folders: Sequence[compare.RunFolder]) -> str:
    """The Repeat rule every run was scored with (metrics.json ``constants.repeat_rule``; a run that names none was
    scored before the option existed and is re-scored with the default); runs that differ are refused."""
    rules = {f.metrics.get("constants", {}).get("repeat_rule", prompts.REPEAT_RULES[0]) for f in folders}
    if len(rules) > 1:
        raise InputError(f"the runs were scored with different Repeat rules ({', '.join(sorted(rules))}); score them "
                         "again with one --config repeat_rule")
    return rules.pop()


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's responses re-scored together (one bootstrap of questions shared by all models: paired), as the
    tables of the report."""
    tables, release_path = comparison_release(folders, release)
    responses, sources = compare.relabelled_responses(folders, labels, read_responses)
    result = score_responses(responses, tables, sources=sources, release=release_path, bootstrap=settings,
                             repeat_rule=runs_repeat_rule(folders))
    return compare.Comparison(models=result.metrics["models"], tables=comparison_tables(result),
                              metrics=result.metrics)


def comparison_tables(result: ScoreResult) -> dict[str, pl.DataFrame]:
    """The report's tables from a ScoreResult: main (Table 2/9 with the C_m,d of Eq. 3), template_weights
    (Table 4), model_similarity (Eq. 4, Eq. 5), differences (paired), country_similarity (Eq. 3), group_similarity
    (Sec. 4.4)."""
    t = result.tables
    cells = t["domain_likelihood"]
    domains = [d for d in DOMAINS if d in set(cells["domain"])] + sorted(set(cells["domain"]) - set(DOMAINS))
    counts = pl.DataFrame([{"model": model, **dict(zip(("answers read", "unreadable"), status_counts(
        m["parse_status"], prompts.READ_STATUSES)))} for model, m in result.metrics["per_model"].items()],
        schema={"model": pl.String, "answers read": pl.Int64, "unreadable": pl.Int64})
    main = t["dimension_likelihood"].select("model", "dimension", "n_questions").join(counts, on="model", how="left")
    for domain in domains:
        part = cells.filter(pl.col("domain") == domain).select(
            "model", "dimension", *(pl.col(c).alias(c.replace("likelihood", domain))
                                    for c in ("likelihood", "likelihood_low", "likelihood_high")))
        main = main.join(part, on=["model", "dimension"], how="left")
    main = main.join(t["dimension_likelihood"].select(
        "model", "dimension", pl.col("domain_mean").alias("mean of domains"),
        *(pl.col(c).alias(c.replace("likelihood", "C_m,d")) for c in ("likelihood", "likelihood_low", "likelihood_high"))),
        on=["model", "dimension"], how="left")
    baseline = result.metrics["pairwise_baseline"]
    pairs = t["model_similarity"]
    if baseline is not None:
        low, high = result.metrics["pairwise_baseline_ci"]
        pairs = pl.concat([pairs, pl.DataFrame({"model_a": ["Eq. 5 pairwise baseline"], "model_b": ["(all pairs)"],
                                                "similarity": [baseline], "similarity_low": [low],
                                                "similarity_high": [high]}, schema=pairs.schema)])
    differences = t["model_differences"].rename({"low": "difference_low", "high": "difference_high"})
    countries = t["country_similarity"].with_columns(
        pl.int_range(1, pl.len() + 1).over("model").alias("rank")).select(
        "model", "rank", "country_code", "country_name", "similarity", "similarity_low", "similarity_high")
    return {"main": main, "template_weights": t["template_weights"], "model_similarity": pairs,
            "differences": differences.select("model_a", "model_b", "dimension", "difference", "difference_low",
                                              "difference_high", "pvalue", "pvalue_holm", "significant", "n_common"),
            "country_similarity": countries, "group_similarity": t["group_similarity"]}


def dimension_bars_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 3 as grouped bars: C_m,d per dimension, one bar per model with its bootstrap interval."""
    plt = plots.pyplot()
    frame = comparison.tables["main"]
    models = comparison.models
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(DIMENSIONS) * max(1, len(models)) / 3) + 2.5, 5), dpi=100)
    width = 0.8 / max(1, len(models))
    slots = list(range(len(DIMENSIONS)))
    for i, model in enumerate(models):
        mine = {r["dimension"]: r for r in frame.filter(pl.col("model") == model).iter_rows(named=True)}
        rows = [mine.get(d, {}) for d in DIMENSIONS]
        plots.interval_bars(ax, plots.grouped_bar_x(slots, len(models), i, width), [r.get("C_m,d") for r in rows],
                            [[r.get("C_m,d_low"), r.get("C_m,d_high")] for r in rows], width, label=model,
                            color=f"C{i % 10}", vertical=len(models) > 3)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xticks(slots)
    ax.set_xticklabels(DIMENSIONS)
    plots.value_axis(ax, 1, "orientation likelihood C_m,d")
    level = (comparison.metrics.get("uncertainty") or {}).get("confidence_level")
    plots.panel_title(ax, "CDEval: orientation likelihood per dimension"
                      + plots.interval_words(fig, level, "questions"), fontsize=11)
    plots.legend_beside(ax)
    plots.save_figure(fig, path)


def model_similarity_png(comparison: compare.Comparison, path: Path) -> None:
    """Eq. 4 between every two models as a heatmap, each cell with its value and bootstrap interval."""
    plt = plots.pyplot()
    models = comparison.models
    values = {(r["model_a"], r["model_b"]): r for r in comparison.tables["model_similarity"].iter_rows(named=True)}
    labels = [plots.wrapped(m) for m in models]  # a long label (a model's path) wraps, not cut at the edge
    size = max(4.0, 1.3 * len(models) + 2)
    longest = max(len(line) for label in labels for line in label.splitlines())
    fig, ax = plt.subplots(figsize=(size + 1.5 + 0.06 * longest, size + 0.04 * longest), dpi=100)
    grid = [[None if a == b else (values.get((a, b)) or {}).get("similarity") for b in models] for a in models]
    found = [v for row in grid for v in row if v is not None]
    # colours span the pairs' own range (Eq. 4 values of similar models all sit near 1); the diagonal is grey
    low = min(found, default=0.0)
    low = max(0.0, low - 0.1 * (1.0 - low)) if low < 1.0 else 0.9
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#dddddd")
    image = ax.imshow([[float("nan") if v is None else v for v in row] for row in grid], cmap=cmap, vmin=low,
                      vmax=1)
    for i, a in enumerate(models):
        for j, b in enumerate(models):
            row = values.get((a, b))
            if a == b:
                ax.text(j, i, "same model", ha="center", va="center", fontsize=7, color="#555555")
                continue
            if row is None or row["similarity"] is None:
                continue
            text = f"{row['similarity']:.3f}"
            if row["similarity_low"] is not None:
                text += f"\n[{row['similarity_low']:.3f}, {row['similarity_high']:.3f}]"
            light = (row["similarity"] - low) / ((1.0 - low) or 1.0) > 0.6  # viridis is light at its top end
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="black" if light else "white")
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(models)))
    ax.set_yticklabels(labels, fontsize=8)
    fig.colorbar(image, ax=ax, label="Eq. 4 similarity")
    fig.suptitle("CDEval: model-model similarity (Eq. 4)")  # over the figure: clear of the colour bar
    plots.save_figure(fig, path)


COMPARE = compare.BenchmarkSpec(
    benchmark="cdeval",
    title="CDEval (Wang et al. 2024, arXiv 2311.16421)",
    build=compare_runs,
    tables=(
        compare.Table("main", "Table 2 / Table 9: orientation likelihood per dimension and domain",
                      "Mean P(g|S) per dimension and domain; C_m,d is the mean over all the dimension's questions "
                      "(Eq. 3); 'mean of domains' is Table 2's Mean column (no interval). answers read / "
                      "unreadable: all the model's answers (an unreadable one scores neutral, as both options or "
                      "a refusal do)."),
        compare.Table("template_weights", "Table 4: template weights (Eq. 6-7)"),
        compare.Table("model_similarity", "Eq. 4: model-model similarity, and the Eq. 5 pairwise baseline"),
        compare.Table("differences", "Paired differences of C_m,d between models",
                      "difference = C_a,d - C_b,d on the questions both answered; pvalue_holm over all rows."),
        compare.Table("country_similarity", "Eq. 3: similarity to each country (Hofstede), most similar first",
                      empty="Eq. 3 needs all six dimensions: a model missing one (a small --limit) is left out "
                            "(comparison.json: models_left_out)."),
        compare.Table("group_similarity", "Sec. 4.4: similarity to each country group's mean",
                      empty="The Hofstede table of the release has no group column (the paper prints no list of "
                            "groups): add one to RAW/hofstede/ and rebuild."),
    ),
    figures=(
        compare.Figure("dimensions.png", "Fig. 3: orientation likelihood per dimension", dimension_bars_png,
                       table="main"),
        compare.Figure("model_similarity.png", "Eq. 4: model-model similarity", model_similarity_png,
                       table="model_similarity"),
        compare.Figure("pca.png", "Fig. 6 (right): PCA of models and countries", lambda c, p: pca_png(c.metrics, p),
                       table="country_similarity"),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for CDEval: every run's responses re-scored together against the release."""
