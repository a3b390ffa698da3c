"""SocialCC's plots: Table 2, Fig. 5, Fig. 6, Fig. 7 and the behaviour score distribution."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from culturebench.evaluate.reports import plots, uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.socialcc import prompts
from culturebench.evaluate.socialcc.items import UNKNOWN
from culturebench.evaluate.socialcc.metrics import top_countries


def _bar_series(ax, slots: Sequence[float], n_series: int, index: int, values: Sequence[float | None],
                intervals: Sequence[Sequence[float | None] | None], label: str, hatches: Sequence[str] = (),
                colour: int | None = None, value_format: str = "{:.2f}") -> None:
    """Series ``index`` of ``n_series`` side by side at ``slots`` (``plots.interval_bars``: a bar and value label
    per value, its interval as an error bar), colour tab10[``colour``, default ``index``]; values written upright
    where the bars are many."""
    width = 0.8 / max(1, n_series)
    tab10 = plots.pyplot().get_cmap("tab10")
    plots.interval_bars(ax, plots.grouped_bar_x(slots, n_series, index, width), values, intervals, width, label=label,
                        color=tab10((index if colour is None else colour) % 10), hatches=hatches,
                        value_format=value_format, fontsize=6, vertical=len(values) * n_series > 16)


def _level(metrics: dict, fig) -> str:
    return plots.interval_words(fig, (metrics.get("uncertainty") or {}).get("confidence_level"), "scenarios")


def table2_png(metrics: dict, path: Path) -> None:
    """Table 2 as bars: awareness, commonsense and value knowledge (0-1, left) and cultural behaviour (0-3, right),
    one series per model, each with its bootstrap interval."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(1, 2, figsize=(max(9.0, 3 + 1.2 * len(models)), 4.5), dpi=100,
                             gridspec_kw={"width_ratios": [3, 1]})
    for ax, judges in ((axes[0], prompts.JUDGES[:3]), (axes[1], prompts.JUDGES[3:])):
        for i, model in enumerate(models):
            t = metrics["per_model"][model]["table2"]
            _bar_series(ax, range(len(judges)), len(models), i, [t[j] for j in judges],
                        [t.get(f"{j}_ci") for j in judges], model)
        ax.set_xticks(range(len(judges)))
        ax.set_xticklabels([prompts.JUDGE_NAMES[j] for j in judges], fontsize=8)
        ax.set_xlim(-0.5, len(judges) - 0.5)
        top = prompts.JUDGE_SCALES[judges[0]][1]
        plots.value_axis(ax, top, f"mean score (0-{top})")
        plots.note_if_empty(ax, [metrics["per_model"][m]["table2"][j] for m in models for j in judges],
                            "no valid judgement (see parse_status in metrics.json)")
    plots.legend_beside(axes[1], fontsize=7)
    fig.suptitle("SocialCC Table 2: cultural competence per model" + _level(metrics, fig), fontsize=10)
    plots.save_figure(fig, path)


def fig5_countries(metrics: dict) -> list[str]:
    """Fig. 5's countries across the models: the 21 with the most dialogues of all models together (``top_countries``);
    for one model its own ``fig5_countries``."""
    counts: dict[str, int] = {}
    for model in metrics["models"]:
        for country, block in metrics["per_model"][model]["by_country"].items():
            counts[country] = counts.get(country, 0) + block["n"]
    return top_countries(counts)


def fig5_label(metrics: dict) -> str:
    """What Fig. 5's countries are, for titles: "commonsense country" or "value country" (metrics ``fig5``)."""
    return f"{(metrics.get('fig5') or {}).get('grouped_by', 'value')} country"


def by_country_png(metrics: dict, path: Path) -> None:
    """Fig. 5: cultural awareness and the two kinds of cultural knowledge per country (``fig5_country``: by default
    the commonsense item's; the 21 countries with the most scenarios), one series per model with bootstrap
    intervals; hatched bars are countries with fewer than ``uncertainty.MIN_GROUP_SIZE`` valid judgements (flagged
    small, not ranked)."""
    plt = plots.pyplot()
    models = metrics["models"]
    countries = fig5_countries(metrics)
    judges = prompts.JUDGES[:3]
    fig, axes = plt.subplots(len(judges), 1, figsize=(max(10.0, 0.5 * len(countries) * max(1, len(models)) / 2 + 4),
                                                      3.2 * len(judges)), dpi=100, squeeze=False)
    for ax, judge in zip(axes[:, 0], judges):
        for i, model in enumerate(models):
            rows = {r["group"]: r for r in (metrics["per_model"][model].get("country_breakdown") or {}).get(judge, [])}
            found = [rows.get(c) or {} for c in countries]
            _bar_series(ax, range(len(countries)), len(models), i, [r.get("estimate") for r in found],
                        [[r.get("low"), r.get("high")] for r in found], model,
                        ["//" if r.get("small") else "" for r in found])
        ax.set_xticks(range(len(countries)))
        ax.set_xticklabels(countries, rotation=30, ha="right", fontsize=7)
        ax.set_xlim(-0.5, len(countries) - 0.5)
        plots.value_axis(ax, 1, "mean score")
        plots.note_if_empty(ax, [r.get("estimate") for m in models for r in
                                 (metrics["per_model"][m].get("country_breakdown") or {}).get(judge, [])],
                            "no valid judgement (see parse_status in metrics.json)")
        plots.panel_title(ax, f"{prompts.JUDGE_NAMES[judge]} per {fig5_label(metrics)} (hatched: fewer than "
                              f"{uncertainty.MIN_GROUP_SIZE} judged dialogues)")
    plots.legend_beside(axes[0, 0], fontsize=7)
    fig.suptitle(f"SocialCC Fig. 5: per {fig5_label(metrics)}" + _level(metrics, fig), fontsize=10)
    plots.save_figure(fig, path)


def by_value_topic_zone_png(metrics: dict, path: Path) -> None:
    """Fig. 6: per model, the mean value-knowledge score per Table 4A value topic (rows) and Inglehart-Welzel
    group of the value country (columns); blank where no dialogue. Scenarios without a zone (neither the release nor
    the config's zones table has one) are the column "no zone"; when none has a zone, the title says so."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(1, len(models), figsize=(7 * len(models), 5.5), dpi=100, squeeze=False)
    for ax, model in zip(axes[0], models):
        m = metrics["per_model"][model]
        topics = sorted(m["by_value_topic"])
        zones = sorted(m["by_zone"], key=lambda z: (z == UNKNOWN, z))
        cells = [[(m["by_value_topic_zone"].get(f"{t} | {z}") or {}).get("value") for z in zones] for t in topics]
        image = ax.imshow([[float("nan") if v is None else v for v in row] for row in cells], vmin=0, vmax=1,
                          cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(["no zone" if z == UNKNOWN else z for z in zones], rotation=30, ha="right", fontsize=7)
        ax.set_yticks(range(len(topics)))
        ax.set_yticklabels(topics, fontsize=7)
        for i, row in enumerate(cells):  # the value in each cell: the colour alone is hard to read
            for j, value in enumerate(row):
                if value is not None:
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                            color=plots.text_colour_on(value))
        plots.note_if_empty(ax, [v for row in cells for v in row], "no valid value-knowledge judgement")
        title = f"{model}: value knowledge by value topic x cultural group"
        if zones == [UNKNOWN]:
            title += (" (the scenarios carry no Inglehart-Welzel zone: give the release one, or the config "
                      "a zones table)")
        plots.panel_title(ax, title)
        fig.colorbar(image, ax=ax, fraction=0.04, label="mean value-knowledge score")
    plots.save_figure(fig, path)


def aware_without_knowledge_png(metrics: dict, path: Path) -> None:
    """Fig. 7: of the dialogues judged aware without commonsense knowledge, the % per commonsense topic and per
    value topic, per model, with bootstrap intervals."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 2, figsize=(12, 3.5 * len(models)), dpi=100, squeeze=False)
    for row, model in zip(axes, models):
        found = metrics["per_model"][model]["aware_without_knowledge"]
        for ax, key, what in ((row[0], "by_topic_pct", "commonsense topic"),
                              (row[1], "by_value_topic_pct", "value topic")):
            topics = list(found[key])
            intervals = found.get(f"{key}_ci") or {}
            _bar_series(ax, range(len(topics)), 1, 0, [found[key][t] for t in topics],
                        [intervals.get(t) for t in topics], model, colour=4, value_format="{:.0f}%")
            ax.set_xticks(range(len(topics)))
            ax.set_xticklabels(topics, rotation=30, ha="right", fontsize=7)
            plots.value_axis(ax, 100, "% of these dialogues")
            plots.panel_title(ax, f"{model}: aware without knowledge (n = {found['n']}) by {what}")
            plots.note_if_empty(ax, [found[key][t] for t in topics], "no dialogue judged aware without commonsense "
                                "knowledge (or no valid judgement)")
    plots.save_figure(fig, path)


def behaviour_distribution_png(metrics: dict, path: Path) -> None:
    """Table 2's behaviour distribution: % of dialogues scored 0, 1, 2, 3, one series per model with bootstrap
    intervals."""
    plt = plots.pyplot()
    models = metrics["models"]
    scores = [str(s) for s in range(prompts.JUDGE_SCALES["behaviour"][0], prompts.JUDGE_SCALES["behaviour"][1] + 1)]
    fig, ax = plt.subplots(figsize=(max(6.0, 2 + len(models)) + 3, 4), dpi=100)
    for i, model in enumerate(models):
        t = metrics["per_model"][model]["table2"]
        intervals = t.get("behaviour_distribution_pct_ci") or {}
        _bar_series(ax, range(len(scores)), len(models), i, [t["behaviour_distribution_pct"].get(s) for s in scores],
                    [intervals.get(s) for s in scores], model, value_format="{:.0f}%")
    ax.set_xticks(range(len(scores)))
    ax.set_xticklabels([f"score {s}" for s in scores])
    plots.value_axis(ax, 100, "% of dialogues")
    plots.panel_title(ax, "SocialCC Table 2: behaviour scores" + _level(metrics, fig))
    plots.legend_beside(ax, fontsize=7)
    plots.save_figure(fig, path)


PLOTS = {"table2.png": table2_png, "by_country.png": by_country_png,
         "by_value_topic_zone.png": by_value_topic_zone_png, "aware_without_knowledge.png": aware_without_knowledge_png,
         "behaviour_distribution.png": behaviour_distribution_png}


def write_run(metrics: dict, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json`` and the PLOTS; returns the paths written."""
    return run_folder.write_metrics_and_plots(metrics, out, PLOTS)
