"""What a reader looks at (issue #45): every plot that ``evaluate`` and ``compare`` write for the bundled sample
releases, with two models of long names answering through the scripted server, passes ``assert_figure_readable``
(no overlapping or cut text, no legend over bars or labels, numeric axes labelled); and the fixes a reader asked
for, each on its own: bars at 0 keep a visible label, one colour bar per heatmap figure at the height of a panel,
the scenarios' missing zones said, not shown as a column "unknown"."""

from __future__ import annotations

import json
import zlib

import pytest
from typer.testing import CliRunner

from conftest import assert_figure_readable
from culturebench.cli import app
from scripted_server import ScriptedServer

runner = CliRunner()
MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3")
"""Names as long as real ones: the titles that carry them must still fit."""


def pick(model: str, text: str, choices: list[str]) -> str:
    """A deterministic answer that differs between models and prompts."""
    return choices[zlib.crc32(f"{model}\n{text}".encode()) % len(choices)]


def reply_for(benchmark: str, model: str):
    if benchmark == "normad":
        return lambda text, body: pick(model, text, ["Yes.", "Yes.", "No.", "Neither."])
    if benchmark == "cdeval":
        return lambda text, body: pick(model, text, ["A", "B", "A"])
    if benchmark == "wvb":
        return lambda text, body: json.dumps({"thoughtful explanation": "x",
                                              "answer as a score": pick(model, text, ["1", "2", "3", "4"])})
    if benchmark == "socialcc":  # judges (one message) score 0 or 1; every dialogue turn ends the dialogue
        return lambda text, body: (f"Score: {pick(model, text, ['0', '1', '1'])}" if len(body["messages"]) == 1
                                   else "Thank you. OK. GOOD BYE!")
    return lambda text, body: pick(model, text, [str(k) for k in range(1, 8)])  # llm_globe's 1-7 ratings


@pytest.mark.parametrize("name", ["normad", "cdeval", pytest.param("wvb", marks=pytest.mark.slow), "socialcc",
                                  "llm_globe"])
def test_every_plot_of_the_sample_runs_and_their_comparison_is_readable(name, bundled_release, saved_figures,
                                                                        tmp_path):
    """Slow for wvb: two WVB runs and their comparison, each with 2,000 bootstrap resamples of W1."""
    release = bundled_release(name)
    run_dirs = []
    for i, model in enumerate(MODELS):
        out = tmp_path / f"run{i}"
        with ScriptedServer(reply=reply_for(name, model), model=model) as server:
            extra = []
            if name == "socialcc":
                config = tmp_path / "socialcc.json"
                config.write_text(json.dumps({"judge": {"model": model, "base_url": server.base_url},
                                              "max_rounds": 2}), encoding="utf-8")
                extra = ["--config", str(config)]
            result = runner.invoke(app, ["evaluate", name, "--model", model, "--base-url", server.base_url,
                                         "--release", str(release), "--out", str(out), *extra])
        assert result.exit_code == 0, result.output
        run_dirs.append(str(out))
    result = runner.invoke(app, ["compare", *run_dirs, "--out", str(tmp_path / "report"), "--n-resamples", "200"])
    assert result.exit_code == 0, result.output
    names = [name for name, _ in saved_figures]
    assert len(names) >= 4 and any(name.startswith(("accuracy", "dimension", "threshold", "table2", "radar"))
                                   for name in names)
    failures = []
    for figure, fig in saved_figures:
        try:
            assert_figure_readable(fig, figure)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------------------------ each fix


def drawn(saved_figures, name: str):
    """The last figure saved under file name ``name``."""
    return [fig for figure, fig in saved_figures if figure == name][-1]


def shown_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts if t.get_visible()]


@pytest.fixture(scope="module")
def normad_metrics(tmp_path_factory) -> dict:
    """NormAd scored for ``sharp`` (right but for 9 refusals) and ``blunt`` (always "Yes.": accuracy 0 on the 20
    gold-no and the 20 gold-neutral stories) in the contexts country and rot (test_compare_normad's stories)."""
    from conftest import write_release
    from culturebench.evaluate import normad
    from culturebench.evaluate.reports import uncertainty
    from test_compare_normad import responses, stories
    import polars as pl

    release = write_release(tmp_path_factory.mktemp("normad"), {"stories": stories()}, "normad")
    frame = pl.concat([responses("sharp"), responses("blunt")])
    return normad.score_responses(frame, normad.release_tables(release)["stories"], unparsed="wrong",
                                  bootstrap=uncertainty.Bootstrap(n_resamples=200, seed=1)).metrics


def test_normad_bars_at_zero_keep_their_label_and_every_plot_is_readable(normad_metrics, saved_figures, tmp_path):
    from culturebench.evaluate.normad import plots as normad_plots

    for name, draw in normad_plots.PLOTS.items():
        draw(normad_metrics, tmp_path / name)
    for name, fig in saved_figures:
        assert_figure_readable(fig, name)
    blunt = [ax for ax in drawn(saved_figures, "accuracy_by_gold.png").axes if ax.get_title().startswith("blunt")]
    # by hand: blunt is wrong on every gold-no and gold-neutral story, in both contexts: four bars at 0
    assert len(blunt) == 1 and shown_texts(blunt[0]).count("0.00") == 4
    assert blunt[0].get_ylabel() == "accuracy"


def relative_luminance(rgb) -> float:
    """WCAG 2's relative luminance of an sRGB colour (0-1 channels)."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first, second) -> float:
    light, dark = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_normad_zone_heatmap_numbers_read_on_their_cells_and_one_colour_bar_as_tall_as_a_panel(
        normad_metrics, saved_figures, tmp_path):
    import matplotlib
    from matplotlib.colors import to_rgb

    from culturebench.evaluate.reports import compare
    from culturebench.evaluate.normad import compare as normad_compare

    comparison = compare.Comparison(models=normad_metrics["models"],
                                    tables=normad_compare.comparison_tables(normad_metrics), metrics=normad_metrics)
    normad_compare.zone_heatmap_png(comparison, tmp_path / "zone_heatmap.png")
    fig = drawn(saved_figures, "zone_heatmap.png")
    assert_figure_readable(fig, "zone_heatmap.png")
    panels = [ax for ax in fig.axes if ax.images]
    viridis = matplotlib.colormaps["viridis"]
    cells = 0
    for ax in panels:
        for text in ax.texts:
            value = float(text.get_text().split("\n")[0])
            background = viridis(value)  # the cell's colour, from the value written in it
            assert contrast(to_rgb(text.get_color()), background) >= 4.5, (text.get_text(), text.get_color())
            assert text.get_fontsize() >= 8
            cells += 1
    assert cells == 2 * len(panels) * 2  # two models x two zones per context (English Speaking, Confucian)
    renderer = fig.canvas.get_renderer()
    bars = [ax for ax in fig.axes if ax not in panels and ax.get_visible()]
    assert len(bars) == 1 and bars[0].get_ylabel() == "accuracy"
    assert bars[0].get_window_extent(renderer).height <= 1.01 * panels[0].get_window_extent(renderer).height


def socialcc_record(model: str, country: str, zone: str, value_topic: str, score: int) -> dict:
    from culturebench.evaluate.socialcc import prompts

    judgements = {j: {"score": score, "parse_status": "parsed", "raw": ""} for j in prompts.JUDGES}
    return {"model": model, "country": country, "zone": zone, "topic": "Etiquette", "value_topic": value_topic,
            "commonsense_country": country, "judgements": judgements, "n_rounds": 3, "ended_by": "good_bye"}


def test_socialcc_zero_bars_are_labelled_and_scenarios_without_zones_are_said_so(saved_figures, tmp_path):
    from culturebench.evaluate import socialcc
    from culturebench.evaluate.socialcc import plots as socialcc_plots
    from culturebench.evaluate.socialcc.items import UNKNOWN

    # by hand: model m scores 1 on every judge in Japan, 0 in Egypt; no scenario has a zone
    records = [socialcc_record(MODELS[0], country, UNKNOWN, topic, score) for country, score in
               (("Japan", 1), ("Egypt", 0)) for topic in ("Migration", "Social Values")]
    metrics = socialcc.aggregate(records)
    for name, draw in socialcc_plots.PLOTS.items():
        draw(metrics, tmp_path / name)
    for name, fig in saved_figures:
        assert_figure_readable(fig, name)
    by_country = drawn(saved_figures, "by_country.png")
    for ax in by_country.axes:  # awareness, commonsense, value knowledge: Egypt's 0 is written, Japan's 1
        assert shown_texts(ax).count("0.00") == 1 and shown_texts(ax).count("1.00") == 1
    heatmap = drawn(saved_figures, "by_value_topic_zone.png").axes[0]
    assert [t.get_text() for t in heatmap.get_xticklabels()] == ["no zone"]
    assert "carry no Inglehart-Welzel zone" in heatmap.get_title().replace("\n", " ")


def test_cdeval_dimensions_name_the_models_once_per_row_of_panels(saved_figures, tmp_path):
    from culturebench.evaluate.cdeval import plots as cdeval_plots
    from culturebench.evaluate.cdeval.items import DIMENSIONS

    metrics = {"models": list(MODELS), "per_model": {m: {"dimension_likelihood": {d: 0.3 + 0.1 * i for d in DIMENSIONS}}
                                                     for i, m in enumerate(MODELS)}}
    cdeval_plots.dimensions_png(metrics, tmp_path / "dimensions.png")
    fig = drawn(saved_figures, "dimensions.png")
    assert_figure_readable(fig, "dimensions.png")
    fig.canvas.draw()
    named = [ax for ax in fig.axes if any(t.get_visible() and t.get_text() == MODELS[0]
                                          for t in ax.get_yticklabels())]
    assert len(named) == 2  # the first panel of each of the two rows


def test_wvb_threshold_curve_says_what_its_coverage_counts(sample_release, saved_figures, tmp_path):
    from culturebench.evaluate import wvb
    from culturebench.evaluate.wvb import plots as wvb_plots
    from culturebench.manifest import load_manifest
    from culturebench.release_reader import read_tables
    import polars as pl

    probe = pl.concat(read_tables(sample_release, load_manifest(sample_release)["outputs"])["probe"].values())
    answers = tmp_path / "answers.tsv"
    kept = probe.head(probe.height // 2)  # half the rows answered, and 7 rows of no probe participant
    answers.write_text("QUESTION_ID\tPARTICIPANT_ID\tSCORE\n" + "".join(
        f"{r['question_id']}\t{r['participant_id']}\t1\n" for r in kept.iter_rows(named=True))
        + "".join(f"Q1\t{9_000_000 + k}\t1\n" for k in range(7)), encoding="utf-8")
    metrics = wvb.score(answers, sample_release, bootstrap=None).metrics
    wvb_plots.threshold_curve_png(metrics, tmp_path / "threshold_curve.png")
    fig = drawn(saved_figures, "threshold_curve.png")
    assert_figure_readable(fig, "threshold_curve.png")
    title = fig.axes[0].get_title()
    assert "coverage" not in title and f"{kept.height:,} of {kept.height + 7:,} answer rows" in title


def tall_normad_metrics() -> dict:
    """Every accuracy 0.9 with the interval [0.8, 1.0]: bars as tall as the axes, in every context and zone."""
    from culturebench.evaluate.normad import prompts

    zones = ("African-Islamic", "Confucian", "English Speaking")
    per_model = {m: {"accuracy": {c: 0.9 for c in prompts.CONTEXTS},
                     "accuracy_ci": {c: [0.8, 1.0] for c in prompts.CONTEXTS}, "contexts": list(prompts.CONTEXTS),
                     "per_context": {c: {"accuracy_by_zone": {z: {"accuracy": 0.9} for z in zones},
                                         "accuracy_by_zone_ci": {z: [0.8, 1.0] for z in zones}}
                                     for c in prompts.CONTEXTS}} for m in MODELS}
    return {"models": list(MODELS), "per_model": per_model}


def tall_wvb_groups():
    """WVB's continent and education tables of a comparison, every mean W1 0.5 with the interval [0.45, 0.55]."""
    import polars as pl

    from culturebench.evaluate.reports import compare
    from culturebench.evaluate.wvb.compare import GROUP_TABLES

    tables = {title.replace(" ", "_"): pl.DataFrame(
        [{"model": m, title: g, "mean W1": 0.5, "mean W1_low": 0.45, "mean W1_high": 0.55, "small": False}
         for m in MODELS for g in ("Africa", "Asia", "Europe", "Oceania")]) for title in GROUP_TABLES.values()}
    return compare.Comparison(models=list(MODELS), tables=tables)


@pytest.mark.parametrize("figure", ["accuracy_by_context.png", "accuracy_by_zone.png", "groups.png"])
def test_a_legend_covers_no_bar_even_when_the_bars_are_tall(figure, saved_figures, tmp_path):
    from culturebench.evaluate.normad import plots as normad_plots
    from culturebench.evaluate.wvb.compare import groups_png

    if figure == "groups.png":
        groups_png(tall_wvb_groups(), tmp_path / figure)
    else:
        normad_plots.PLOTS[figure](tall_normad_metrics(), tmp_path / figure)
    assert_figure_readable(drawn(saved_figures, figure), figure)


def test_normad_gold_label_panels_keep_long_run_labels_apart(normad_metrics, saved_figures, tmp_path):
    """Figs. 6 / 11 side by side, labelled as ``compare`` labels a model that two runs share: "model (run
    folder)"; the titles wrap within their panels instead of running into each other."""
    from culturebench.evaluate.normad import plots as normad_plots

    labels = {m: f"meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo ({m}-run-2026-11-27)" for m in normad_metrics["models"]}
    metrics = {**normad_metrics, "models": list(labels.values()),
               "per_model": {labels[m]: block for m, block in normad_metrics["per_model"].items()}}
    normad_plots.accuracy_by_gold_png(metrics, tmp_path / "accuracy_by_gold.png")
    assert_figure_readable(drawn(saved_figures, "accuracy_by_gold.png"), "accuracy_by_gold.png")
