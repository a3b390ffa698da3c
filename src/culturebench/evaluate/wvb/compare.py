"""``culturebench compare`` for WorldValuesBench (``COMPARE``): every run's answers re-scored against its release
and bootstrapped together (paired), Table 2's rows, Fig. 3's curves with bands, per-group tables and bars."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import compare, plots, uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.wvb import MAJORITY_DEFINITIONS, measures, reference_points
from culturebench.evaluate.wvb.intervals import BOOTSTRAP_NOTE, W1Bootstrap, bootstrap_intervals
from culturebench.evaluate.wvb.items import question_order
from culturebench.evaluate.wvb.measures import ScoreResult
from culturebench.evaluate.wvb.metrics import read_answers, score_answers, unreadable_answers
from culturebench.evaluate.wvb.parsing import evaluate_answers
from culturebench.evaluate.wvb.plots import BASELINE_STYLE, _threshold_axes

def run_answers(folder: compare.RunFolder, release: Path) -> tuple[pl.DataFrame, dict]:
    """A run's answers as ``score_answers`` input, and their source: an ``evaluate`` run's responses (paired
    with the evaluated rows again as ``evaluate`` paired them), else the responses file a ``score`` run names, read
    as ``score`` read it (``read_answers``: an ``evaluate`` run's responses.jsonl or shards, or a TSV/CSV)."""
    own = run_folder.responses_path(folder.path)
    if own is not None:
        return evaluate_answers(own, release, folder.metrics), run_folder.source_info(own)
    source = folder.metrics.get("responses")
    path = source.get("path") if isinstance(source, dict) else None
    if not path:
        raise InputError("run folder has no responses.jsonl and its metrics.json names no responses file",
                         file=folder.path)
    return read_answers(Path(path), release)[0], run_folder.source_info(Path(path))


def compare_runs(folders, labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's answers re-scored against its release (or ``release``) with the majority reading and the
    out-of-scale and non-integer rules it used, then one bootstrap of participants within questions over all of them (paired), as
    the report's tables."""
    scored: dict[str, ScoreResult] = {}
    for folder, mapping in zip(folders, labels):
        path = Path(release) if release is not None else folder.release
        if path is None or not (path / "manifest.json").is_file():
            raise InputError("release folder of the run not found; pass --release", file=path or folder.path)
        name = mapping[folder.models[0]] if folder.models else folder.path.name
        majority = ((folder.metrics.get("baselines") or {}).get("majority") or {}).get("definition",
                                                                                         MAJORITY_DEFINITIONS[0])
        dropped = (folder.metrics.get("out_of_scale") or {}).get("answers") == "dropped"
        # a run without ``non_integer`` predates the authors' truncation: it left such answers out
        non_integer = (folder.metrics.get("non_integer") or {"answers": "dropped"}).get("answers") == "dropped"
        inputs, source = run_answers(folder, path)
        scored[name] = score_answers(inputs, path, source, majority=majority, model=name, bootstrap=None,
                                     drop_out_of_scale=dropped, drop_non_integer=non_integer)
        scored[name].metrics["mode"] = folder.metrics.get("mode")  # how evaluate asked; a score run does not know
    intervals = bootstrap_intervals(W1Bootstrap({m: s.rows for m, s in scored.items()},
                                                [s.counts for s in scored.values()]),
                                    {m: s.metrics for m, s in scored.items()}, settings)
    tables = comparison_tables(scored, intervals)
    tables["countries"] = countries_table(folders, list(scored))
    tables["country_differences"] = reference_points.differences(country_views(folders, list(scored)))
    notes = [f"Baselines (uniform, majority) are those of the human answers {next(iter(scored))} was scored on."]
    summary = {m: {k: s.metrics.get(k) for k in ("mode", "n_questions", "coverage", "n_invalid", "mean", "std")}
               | {k: intervals["models"][m][k] for k in ("mean_ci", "std_ci")} for m, s in scored.items()}
    record = {"uncertainty": settings.record(unit="participant", strata="question", **BOOTSTRAP_NOTE),
              "per_model": summary, "differences": intervals["differences"]}
    uncertainty.warn_no_spread(record, record["uncertainty"], intervals["no_spread"], "wvb")
    return compare.Comparison(models=list(scored), tables=tables, notes=notes, metrics=record)


NO_MODE = "not recorded (score of a responses file)"
"""The main table's mode of a ``score`` run: the paper's QUESTION_ID, PARTICIPANT_ID, SCORE file does not say
whether the model saw the demographics (an ``evaluate`` run's metrics.json does: with_demographics or
without_demographics)."""
REPORT_THRESHOLDS = ("0.10", "0.20")
"""The thresholds Sec. 4 quotes (share of questions with W1 below 0.1 and 0.2), columns of the main table."""
GROUP_TABLES = {"continent": "continent", "probe_education_level": "education level"}


def comparison_tables(scored: dict[str, ScoreResult], intervals: dict) -> dict[str, pl.DataFrame]:
    """The report's tables: main (Table 2's Mean row per model and baseline, with std and Sec. 4's shares under
    0.1 and 0.2), per_question (Table 2's model columns), threshold_curve (Fig. 3), continent and
    education_level (group sizes, mean W1, small, rank), differences (paired)."""
    first = next(iter(scored.values())).metrics
    main = []
    for model, result in scored.items():
        m, ci = result.metrics, intervals["models"][model]
        unreadable = unreadable_answers(m)
        main.append({"model": model, "mode": m.get("mode") or NO_MODE, "answers read": m["n_rows"] - unreadable,
                     "unreadable": unreadable, "n_questions": m["n_questions"], "coverage": m["coverage"],
                     **compare.with_interval("mean W1", m["mean"], ci["mean_ci"]),
                     **compare.with_interval("std", m["std"], ci["std_ci"]),
                     **{k: v for t in REPORT_THRESHOLDS for k, v in compare.with_interval(
                         f"share W1<={t}", m["threshold_curve"][t], ci["threshold_curve_ci"][t]).items()}})
    first_ci = intervals["models"][next(iter(scored))]["baselines"]
    for name, baseline in first["baselines"].items():
        label = f"{name} baseline" + (f" ({baseline['definition']})" if "definition" in baseline else "")
        main.append({"model": label, "mode": "baseline", "answers read": None, "unreadable": None,
                     "n_questions": baseline["n_questions"], "coverage": None,
                     **compare.with_interval("mean W1", baseline["mean"], first_ci[name]),
                     **compare.with_interval("std", baseline["std"], None),
                     **{k: v for t in REPORT_THRESHOLDS for k, v in compare.with_interval(
                         f"share W1<={t}", baseline["threshold_curve"][t], None).items()}})
    questions = sorted({q for r in scored.values() for q in r.metrics["per_question"]}, key=question_order)
    per_question = [{"question_id": q, **{k: v for model, r in scored.items() for k, v in compare.with_interval(
        model, r.metrics["per_question"].get(q), intervals["models"][model]["per_question_ci"].get(q)).items()},
        "uniform baseline": first["baselines"]["uniform"]["per_question"].get(q),
        "majority baseline": first["baselines"]["majority"]["per_question"].get(q)} for q in questions]
    curve = [{"threshold": key, **{k: v for model, r in scored.items() for k, v in compare.with_interval(
        model, r.metrics["threshold_curve"][key], intervals["models"][model]["threshold_curve_ci"][key]).items()},
        **{f"{name} baseline": baseline["threshold_curve"][key] for name, baseline in first["baselines"].items()}}
        for key, _ in measures.threshold_grid()]
    tables = {"main": pl.DataFrame(main, infer_schema_length=None),
              "per_question": pl.DataFrame(per_question, infer_schema_length=None),
              "threshold_curve": pl.DataFrame(curve, infer_schema_length=None)}
    for kind, title in GROUP_TABLES.items():
        rows = [{"model": model, title: r["group"], "rank": r["rank"], "n_rows": r["n_rows"],
                 "n_participants": r["n_participants"], "answers_per_question": r["answers_per_question"],
                 **compare.with_interval("mean W1", r["estimate"], [r["low"], r["high"]]), "small": r["small"]}
                for model in scored for r in intervals["models"][model]["group_breakdown"][kind]]
        tables[title.replace(" ", "_")] = pl.DataFrame(rows, schema={
            "model": pl.String, title: pl.String, "rank": pl.Int64, "n_rows": pl.Int64, "n_participants": pl.Int64,
            "answers_per_question": pl.Float64, "mean W1": pl.Float64, "mean W1_low": pl.Float64,
            "mean W1_high": pl.Float64, "small": pl.Boolean})
    tables["differences"] = pl.DataFrame(
        [{k: r[k] for k in ("model_a", "model_b", "kind", "group")}
         | compare.with_interval("difference", r["difference"], [r["low"], r["high"]])
         | {k: r[k] for k in ("pvalue", "pvalue_holm", "significant", "n_common_questions")}
         for r in intervals["differences"]],
        schema={"model_a": pl.String, "model_b": pl.String, "kind": pl.String, "group": pl.String,
                "difference": pl.Float64, "difference_low": pl.Float64, "difference_high": pl.Float64,
                "pvalue": pl.Float64, "pvalue_holm": pl.Float64, "significant": pl.Boolean,
                "n_common_questions": pl.Int64})
    return tables


def countries_table(folders, models: list[str]) -> pl.DataFrame:
    """Per country and run (and steered, where the run steered): the run's headline similarity (its countries.json
    ``measure``, named in the ``measure`` column) with the run's own interval (two-stage where the run made them),
    and the run's reference points in that measure (uniform and other-countries baselines, ceiling; issue #62),
    from each run's countries.json (runs without one, asked with demographics, are left out)."""
    from culturebench.evaluate.reports.country_plots import side_by_side

    views = country_views(folders, models)
    all_series, names = side_by_side(views)
    measure = {name: data["measure"] for label, data in views.items() for name in (label, f"{label} (steered)")}
    references = ("uniform", "others", "ceiling")

    def reference(label: str, code: str, name: str) -> float | None:
        data = views.get(label, {})
        short = str(data.get("measure", "")).removeprefix("similarity_")
        return data.get("countries", {}).get(code, {}).get(f"{name}_{short}")

    rows = [{"country": code, "name": names.get(code), "run": label,
             "measure": measure.get(label),
             **compare.with_interval("similarity", value, interval),
             **{name: reference(label, code, name) for name in references}}
            for label, values in all_series.items() for code, (value, interval) in sorted(values.items())]
    return pl.DataFrame(rows, schema={"country": pl.String, "name": pl.String, "run": pl.String,
                                      "measure": pl.String, "similarity": pl.Float64, "similarity_low": pl.Float64,
                                      "similarity_high": pl.Float64, **{name: pl.Float64 for name in references}})


def country_views(folders, models: list[str]) -> dict[str, dict]:
    """model -> its run's countries.json, for the runs that have one."""
    from culturebench.evaluate.reports.countries import COUNTRIES_FILE, read_countries

    return {m: read_countries(f.path) for f, m in zip(folders, models) if (f.path / COUNTRIES_FILE).is_file()}


def countries_png(comparison: compare.Comparison, path: Path) -> None:
    """The runs' headline similarity per country side by side (sorted by the first), each with its interval, and
    the first run's reference points as marks."""
    from culturebench.evaluate.reports.country_plots import REFERENCE_MARKS, dot_plot_png

    frame = comparison.tables["countries"]
    runs = list(dict.fromkeys(frame["run"].to_list()))
    all_series = [(run, {r["country"]: (r["similarity"], [r["similarity_low"], r["similarity_high"]])
                         for r in frame.filter(pl.col("run") == run).iter_rows(named=True)}) for run in runs]
    first = frame.filter(pl.col("run") == runs[0]) if runs else frame
    marks = [(label, dict(zip(first["country"], first[name]))) for name, label in REFERENCE_MARKS.items()
             if first[name].null_count() < first.height]
    dot_plot_png(all_series or [("no run without demographics", {})], dict(zip(frame["country"], frame["name"])),
                 path, xlabel=" / ".join(sorted(set(frame["measure"]))).replace("_", " ") or "similarity",
                 title="WorldValuesBench: similarity to each country's answers (runs without demographics)",
                 references=marks)


def threshold_curves_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 3 with one solid line per model and its bootstrap band, and the baselines dashed."""
    plt = plots.pyplot()
    frame = comparison.tables["threshold_curve"]
    x = [float(t) for t in frame["threshold"]]
    fig, ax = plt.subplots(figsize=(7.5, 5), dpi=100)
    for model in comparison.models:
        line, = ax.plot(x, frame[model].to_list(), marker="o", markersize=3, linewidth=2, label=model)
        ax.fill_between(x, [v if v is not None else np.nan for v in frame[f"{model}_low"]],
                        [v if v is not None else np.nan for v in frame[f"{model}_high"]], color=line.get_color(),
                        alpha=0.2, linewidth=0)
    for k, column in enumerate(c for c in frame.columns if c.endswith(" baseline")):
        ax.plot(x, frame[column].to_list(), **BASELINE_STYLE[k % len(BASELINE_STYLE)],
                color="grey" if "uniform" in column else "black", label=column)
    _threshold_axes(ax)
    level = (comparison.metrics.get("uncertainty") or {}).get("confidence_level")
    ax.set_title("WorldValuesBench: threshold curves" + plots.interval_words(fig, level, "participants"))
    plots.save_figure(fig, path)


def groups_png(comparison: compare.Comparison, path: Path) -> None:
    """Mean W1 per continent and per education level, one bar per model with its bootstrap interval and value;
    groups flagged small are hatched and marked in the axis label; the legend beside the panels."""
    plt = plots.pyplot()
    models = comparison.models
    fig, axes = plt.subplots(1, len(GROUP_TABLES), figsize=(15, 5), dpi=100, squeeze=False)
    width = 0.8 / max(1, len(models))
    for ax, title in zip(axes[0], GROUP_TABLES.values()):
        frame = comparison.tables[title.replace(" ", "_")]
        groups = sorted(set(frame[title].to_list()))
        small = set(frame.filter(pl.col("small"))[title].to_list())
        for i, model in enumerate(models):
            mine = {r[title]: r for r in frame.filter(pl.col("model") == model).iter_rows(named=True)}
            rows = [mine.get(group) or {} for group in groups]
            plots.interval_bars(ax, plots.grouped_bar_x(range(len(groups)), len(models), i, width),
                                [r.get("mean W1") for r in rows], [[r.get("mean W1_low"), r.get("mean W1_high")]
                                                                    for r in rows], width, label=model,
                                color=f"C{i % 10}", hatches=["//" if r.get("small") else "" for r in rows],
                                fontsize=6, vertical=len(groups) * len(models) > 12)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{g}\n(small)" if g in small else g for g in groups], rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.15)  # room for the value labels
        ax.set_ylabel("mean W1 (lower is better)")
        ax.set_title(f"per {title} (hatched: small)")
    plots.legend_beside(axes[0][-1])
    plots.save_figure(fig, path)


COMPARE = compare.BenchmarkSpec(
    benchmark="wvb",
    title="WorldValuesBench (Zhao et al. 2024, LREC-COLING 2024)",
    build=compare_runs,
    tables=(
        compare.Table("main", "Table 2 (Mean row): mean and std of the per-question W1, and Sec. 4's shares of "
                              "questions with W1 <= 0.1 and 0.2",
                      "Lower is better. answers read / unreadable: the model's answers a score was read from, and "
                      "those none could be read from (left out of every mean). Baselines: Sec. 3.3's oracles (their "
                      "std and shares have no interval)."),
        compare.Table("per_question", "Table 2: W1 per question and model",
                      "Baseline columns are point values (not bootstrapped)."),
        compare.Table("threshold_curve", "Fig. 3: share of questions with W1 <= t",
                      "Baseline columns are point values (not bootstrapped)."),
        compare.Table("continent", "Mean W1 per continent (lower is better)",
                      "Small: fewer than 30 answers per question in the group; listed with their size, not ranked."),
        compare.Table("education_level", "Mean W1 per education level (probe participants; lower is better)",
                      "Small: fewer than 30 answers per question in the group; listed with their size, not ranked."),
        compare.Table("differences", "Paired differences of mean W1 between models",
                      "difference = mean over the questions both have a W1 of W1_a - W1_b (negative: model_a closer "
                      "to the humans); pvalue_holm over all rows."),
        compare.Table("countries", "Similarity to each country's answers (each run's headline measure, named in the measure column: 1 - Jensen-Shannon distance, base 2, GlobalOpinionQA's, unless the run says otherwise; issue #56)",
                      "From each run's countries.json, with its own interval (two-stage: respondents, model samples "
                      "and questions resampled, or questions only), its uniform and other-countries baselines and "
                      "its half-split ceiling in the same measure (issue #62); (steered): the run asked with --steer "
                      "country, each country named.",
                      empty="No run was asked without demographics (evaluate wvb --no-demographics writes the "
                            "country view)."),
        compare.Table("country_differences", "Per country: each run's similarity minus the first run's",
                      "significant: the two runs' two-stage 95% intervals do not overlap (a conservative test; null "
                      "unless both runs made two-stage intervals).",
                      empty="Fewer than two runs without demographics."),
    ),
    figures=(
        compare.Figure("threshold_curves.png", "Fig. 3: threshold curves, one per model, with bootstrap bands",
                       threshold_curves_png, table="threshold_curve"),
        compare.Figure("groups.png", "Mean W1 per continent and per education level", groups_png,
                       table="education_level"),
        compare.Figure("countries.png", "Similarity per country, runs side by side", countries_png,
                       table="countries"),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for WorldValuesBench: every run's answers re-scored together against the release."""
