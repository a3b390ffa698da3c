"""Issue #55: pictures and tables show only what the data holds. Each case is a figure or table drawn from
hand-made numbers, checked for what it claims (titles, heads, error bars) and with the plot checker."""

from __future__ import annotations

import polars as pl
import pytest

from conftest import assert_figure_readable
from culturebench.evaluate.reports import compare, plots


def shown_texts(fig) -> list[str]:
    from matplotlib.text import Text

    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def cdeval_metrics(with_interval: bool) -> dict:
    from culturebench.evaluate.cdeval.items import DIMENSIONS

    ci = {d: [0.4, 0.8] if with_interval else [None, None] for d in DIMENSIONS}
    return {"models": ["m"], "uncertainty": {"confidence_level": 0.95},
            "per_model": {"m": {"dimension_likelihood": {d: 0.6 for d in DIMENSIONS}, "dimension_likelihood_ci": ci}}}


@pytest.mark.parametrize("with_interval", [True, False])
def test_cdeval_dimensions_title_says_intervals_only_when_drawn(with_interval, saved_figures, tmp_path):
    from culturebench.evaluate.cdeval.plots import dimensions_png

    dimensions_png(cdeval_metrics(with_interval), tmp_path / "dimensions.png")
    (_, fig), = saved_figures
    title = fig._suptitle.get_text()
    assert ("95% bootstrap intervals" in title) is with_interval, title
    assert with_interval or "points only" in title
    assert_figure_readable(fig, "dimensions.png")


def test_bars_without_an_interval_get_no_error_bar_and_a_readable_label():
    from matplotlib.container import ErrorbarContainer

    fig, ax = plots.pyplot().subplots()
    plots.interval_bars(ax, [0, 1, 2], [0.5, 0.6, 0.7], [[0.4, 0.6], None, [None, None]], 0.8, label="m", color="C0",
                        fontsize=5)
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segments = [s for c in bars for collection in c.lines[2] for s in collection.get_segments()]
    assert len(segments) == 1 and segments[0][0][1] == pytest.approx(0.4) and segments[0][1][1] == pytest.approx(0.6)
    assert {t.get_fontsize() for t in ax.texts} == {plots.MIN_FONTSIZE}


def test_compare_heads_say_ci_only_over_intervals():
    frame = pl.DataFrame({"model": ["a", "b"], "mean": [0.1, 0.2], "mean_low": [0.05, None],
                          "mean_high": [0.15, None], "std": [0.3, 0.4], "std_low": [None, None],
                          "std_high": [None, None]}, schema_overrides={"std_low": pl.Float64, "std_high": pl.Float64})
    page = compare.table_html(compare.Table("main", "t"), frame, 0.95)
    assert "<th>mean [95% CI]</th>" in page and "<th>std</th>" in page and "std [95% CI]" not in page


def test_model_similarity_keeps_a_long_label_and_its_title_inside_the_figure(saved_figures, tmp_path):
    from culturebench.evaluate.cdeval.compare import model_similarity_png

    models = ["/root/.cache/culturebench/vllm/SmolLM2-135M-Instruct (run0)", "smollm2-135m-instruct"]
    table = pl.DataFrame([{"model_a": a, "model_b": b, "similarity": 0.9, "similarity_low": 0.85,
                           "similarity_high": 0.95} for a in models for b in models if a != b])
    model_similarity_png(compare.Comparison(models=models, tables={"model_similarity": table}), tmp_path / "s.png")
    (_, fig), = saved_figures
    assert_figure_readable(fig, "model_similarity.png")


def test_wvb_histograms_say_which_answers_are_not_drawn(saved_figures, tmp_path):
    from culturebench.evaluate.wvb.plots import histograms_png

    rows = pl.DataFrame({"question_id": ["Q1"] * 4, "human": [1, 2, 3, 4], "model": [1, 2, 9, None],
                         "scale_min": [1] * 4, "scale_max": [4] * 4})
    histograms_png(rows, tmp_path / "h.png")
    (_, fig), = saved_figures
    title = fig.axes[0].get_title()
    assert "4 human answers, 2 model answers" in title and "1 model answer off the scale, not drawn" in title
    assert_figure_readable(fig, "histograms.png")


def test_wvb_threshold_curve_draws_baselines_over_a_model_curve_at_one(saved_figures, tmp_path):
    from culturebench.evaluate.wvb.plots import threshold_curve_png

    ones = {f"{t / 20:.2f}": 1.0 for t in range(21)}
    metrics = {"threshold_curve": ones, "mean": 0.0, "n_questions": 3,
               "baselines": {"majority": {"threshold_curve": ones, "mean": 0.0},
                             "uniform": {"threshold_curve": ones, "mean": 0.3}}}
    threshold_curve_png(metrics, tmp_path / "t.png")
    (_, fig), = saved_figures
    ax = fig.axes[0]
    model, *baselines = ax.get_lines()
    assert all(line.get_zorder() > model.get_zorder() for line in baselines)
    assert ax.get_ylim()[1] > 1.05  # the curves at 1.0 clear of the frame
    assert_figure_readable(fig, "threshold_curve.png")


def test_an_offline_model_folder_is_named_as_vllm_serve_names_it(tmp_path):
    from culturebench.evaluate.models.local_model import VLLM_MODEL_NAME
    from culturebench.evaluate.models.vllm_backend import model_label

    folder = tmp_path / "cache" / VLLM_MODEL_NAME
    folder.mkdir(parents=True)
    assert model_label(str(folder)) == VLLM_MODEL_NAME
    assert model_label("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"  # a Hub id
