"""NormAd's intervals and ``culturebench compare normad`` (issue #18): the bootstrap over stories against
``scipy.stats.bootstrap`` called here independently on the same data (accuracy, scikit-learn's macro F1, the paired
difference of two models, a country's accuracy), point estimates unchanged, intervals containing them, the same
seed giving the same intervals, small countries flagged and not ranked, and the compare page (parsed with
html.parser; rendered in headless Chromium when it is installed) holding every model, table and figure."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import polars as pl
import pytest
from scipy import stats
from sklearn.metrics import f1_score
from typer.testing import CliRunner

from conftest import assert_report_renders, browser_test, one_line_error, parse_report_page, write_release
from culturebench.cli import app
from culturebench.evaluate import normad
from culturebench.evaluate.reports import uncertainty

runner = CliRunner()
FEW = uncertainty.Bootstrap(n_resamples=400, seed=7)
WORDS = {"yes": "Yes.", "no": "No.", "neutral": "Neither."}
COUNTRIES = ("Bigland",) * 40 + ("Midland",) * 15 + ("Tinyland",) * 5
"""60 stories: a country of 40 (ranked), 15 and 5 (both under uncertainty.MIN_GROUP_SIZE = 30: small)."""
ZONES = {"Bigland": "English Speaking", "Midland": "Confucian", "Tinyland": "Confucian"}


def stories() -> pl.DataFrame:
    """Gold yes / no / neutral in turn: 20 of each."""
    return pl.DataFrame([{"id": i, "country": c, "value": f"value {i}", "rule_of_thumb": f"rule {i}",
                          "story": f"Story {i}.", "gold_label": ("yes", "no", "neutral")[i % 3],
                          "iw_zone": ZONES[c], "subaxis": ("Eating", "Gifting")[i % 2]}
                         for i, c in enumerate(COUNTRIES)])


def sharp_answer(i: int, gold: str) -> str:
    """Right except on every 7th story (0, 7, ..., 56: 9 stories), where it refuses (unparsed)."""
    return "I cannot say." if i % 7 == 0 else WORDS[gold]


def responses(model: str, contexts=("country", "rot")) -> pl.DataFrame:
    """``sharp`` (sharp_answer) or ``blunt`` (always "Yes.") on every story in ``contexts``."""
    rows = []
    for i, gold in enumerate(stories()["gold_label"]):
        for context in contexts:
            rows.append({"model": model, "story_id": str(i), "context": context,
                         "response": sharp_answer(i, gold) if model == "sharp" else "Yes."})
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def release_stories(tmp_path_factory) -> pl.DataFrame:
    folder = write_release(tmp_path_factory.mktemp("normad-release"), {"stories": stories()}, "normad")
    return normad.release_tables(folder)["stories"]


@pytest.fixture(scope="module")
def both(release_stories):
    frame = pl.concat([responses("sharp"), responses("blunt")])
    return normad.score_responses(frame, release_stories, bootstrap=FEW, unparsed="wrong").metrics


def scipy_interval(data, statistic, settings=FEW) -> tuple[float, float]:
    """scipy's percentile bootstrap of ``statistic`` over the positions 0..n-1 of ``data``, with the settings'
    resamples and seed: the draws ``uncertainty.resample_units`` makes for one stratum."""
    positions = np.arange(len(data))
    ci = stats.bootstrap((positions,), statistic, vectorized=False, n_resamples=settings.n_resamples,
                         method="percentile", confidence_level=settings.confidence_level,
                         rng=np.random.default_rng(settings.seed)).confidence_interval
    return ci.low, ci.high


def test_point_estimates_are_unchanged_and_inside_their_intervals(both):
    sharp = both["per_model"]["sharp"]["per_context"]["country"]
    # by hand: 9 refusals (stories 0, 7, ..., 56), the other 51 right; blunt is right on the 20 "yes" stories
    assert sharp["accuracy"] == 51 / 60 and sharp["accuracy_parsed"] == 1.0
    assert both["per_model"]["blunt"]["accuracy"]["country"] == 20 / 60
    for model in ("sharp", "blunt"):
        for context in ("country", "rot"):
            m = both["per_model"][model]["per_context"][context]
            pairs = [(m["accuracy"], m["accuracy_ci"]), (m["accuracy_parsed"], m["accuracy_parsed_ci"]),
                     *((m["macro"][k], m["macro_ci"][k]) for k in ("precision", "recall", "f1")),
                     *((m["per_label"][lab][k], m["per_label_ci"][lab][k]) for lab in normad.prompts.LABELS
                       for k in ("precision", "recall", "f1"))]
            for value, (low, high) in pairs:
                assert low <= value <= high
    assert both["uncertainty"]["unit"] == "story" and both["uncertainty"]["n_resamples"] == 400
    assert both["uncertainty"]["seed"] == 7 and both["uncertainty"]["n_units"] == 60


def test_accuracy_and_macro_f1_intervals_are_scipys_bootstrap_over_stories(release_stories):
    metrics = normad.score_responses(responses("sharp", ("value",)), release_stories, bootstrap=FEW,
                                     unparsed="wrong").metrics
    m = metrics["per_model"]["sharp"]["per_context"]["value"]
    gold = np.asarray(stories()["gold_label"].to_list())
    predicted = np.asarray([normad.prompts.parse_answer(sharp_answer(i, g)).label or "unparsed"
                            for i, g in enumerate(gold)])
    correct = (gold == predicted).astype(float)
    low, high = scipy_interval(correct, lambda idx: correct[idx].mean())
    assert m["accuracy_ci"] == [pytest.approx(low), pytest.approx(high)]
    # scikit-learn's macro F1 (labels yes / no / neutral, an unparsed answer a miss) on the same resamples
    low, high = scipy_interval(gold, lambda idx: f1_score(gold[idx], predicted[idx], labels=list(normad.prompts.LABELS),
                                                          average="macro", zero_division=0))
    assert m["macro_ci"]["f1"] == [pytest.approx(low), pytest.approx(high)]
    assert metrics["per_model"]["sharp"]["macro_f1_ci"]["value"] == m["macro_ci"]["f1"]


def test_default_reads_refusals_as_neither_and_keeps_parsed_accuracy_apart(release_stories):
    """By default sharp's 9 refusals are read as Neither: right where the gold is neutral; the accuracy over parsed
    answers stays 51 / 51 in every resample."""
    m = normad.score_responses(responses("sharp", ("value",)), release_stories,
                               bootstrap=FEW).metrics["per_model"]["sharp"]["per_context"]["value"]
    gold = stories()["gold_label"].to_list()
    refused_neutral = sum(1 for i in range(0, 60, 7) if gold[i] == "neutral")
    assert m["accuracy"] == pytest.approx((51 + refused_neutral) / 60) and refused_neutral > 0
    assert m["accuracy_parsed"] == 1.0 and m["accuracy_parsed_ci"] == [1.0, 1.0]
    assert m["unparsed_share"] == pytest.approx(9 / 60)
    gold_array = np.asarray(gold)
    read = np.asarray(["neutral" if i % 7 == 0 else g for i, g in enumerate(gold)])
    correct = (gold_array == read).astype(float)
    low, high = scipy_interval(correct, lambda idx: correct[idx].mean())
    assert m["accuracy_ci"] == [pytest.approx(low), pytest.approx(high)]


def test_paired_differences_and_significance(both):
    rows = {r["context"]: r for r in both["model_differences"]}
    assert set(rows) == {"country", "rot"}
    row = rows["country"]
    # blunt - sharp (models in name order) on the same 60 stories: 20/60 - 51/60
    assert (row["model_a"], row["model_b"], row["n_common"]) == ("blunt", "sharp", 60)
    assert row["difference"] == pytest.approx(20 / 60 - 51 / 60)
    gold = stories()["gold_label"].to_list()
    blunt = np.asarray([g == "yes" for g in gold], dtype=float)
    sharp = np.asarray([i % 7 != 0 for i in range(60)], dtype=float)
    low, high = scipy_interval(blunt, lambda idx: blunt[idx].mean() - sharp[idx].mean())
    assert (row["low"], row["high"]) == (pytest.approx(low), pytest.approx(high))
    # a difference of -0.52 with an SE of about 0.08 is far from 0 in both contexts
    assert all(r["significant"] and r["pvalue_holm"] < 0.05 for r in rows.values())


def test_two_identical_models_differ_by_zero_not_significantly(release_stories):
    frame = pl.concat([responses("sharp"), responses("sharp").with_columns(pl.lit("twin").alias("model"))])
    rows = normad.score_responses(frame, release_stories, bootstrap=FEW).metrics["model_differences"]
    # the same answers on every resample: difference 0 with zero spread, p = 1
    assert [(r["difference"], r["low"], r["high"], r["pvalue"], r["significant"]) for r in rows] == [
        (0.0, 0.0, 0.0, 1.0, False)] * 2


def test_countries_have_sizes_and_small_ones_are_flagged_not_ranked(both):
    m = both["per_model"]["sharp"]["per_context"]["rot"]
    rows = {r["group"]: r for r in m["breakdowns"]["country"]}
    assert [r["group"] for r in m["breakdowns"]["country"]] == ["Bigland", "Midland", "Tinyland"]
    assert {g: (r["n_stories"], r["small"], r["rank"]) for g, r in rows.items()} == {
        "Bigland": (40, False, 1), "Midland": (15, True, None), "Tinyland": (5, True, None)}
    # Bigland = stories 0..39, refusals at 0, 7, 14, 21, 28, 35: 34 of 40 right
    assert rows["Bigland"]["accuracy"] == m["accuracy_by_country"]["Bigland"]["accuracy"] == 34 / 40
    # its interval: scipy's bootstrap of the mean over its own 40 stories, seeded as the run is
    correct = np.asarray([i % 7 != 0 for i in range(40)], dtype=float)
    expected = stats.bootstrap((correct,), np.mean, n_resamples=400, method="percentile",
                               rng=np.random.default_rng(7)).confidence_interval
    assert m["accuracy_by_country_ci"]["Bigland"] == [pytest.approx(expected.low), pytest.approx(expected.high)]
    assert rows["Bigland"]["accuracy_ci"] == m["accuracy_by_country_ci"]["Bigland"]
    # the other breakdowns: every gold label, zone and subaxis has its interval and size in stories
    assert {r["group"]: r["n_stories"] for r in m["breakdowns"]["gold_label"]} == {"yes": 20, "no": 20, "neutral": 20}
    assert {r["group"]: r["n_stories"] for r in m["breakdowns"]["zone"]} == {"English Speaking": 40, "Confucian": 20}
    assert set(m["accuracy_by_subaxis_ci"]) == {"Eating", "Gifting"}


def test_same_seed_same_intervals_other_seed_other_intervals(release_stories, both):
    frame = pl.concat([responses("sharp"), responses("blunt")])
    again = normad.score_responses(frame, release_stories, bootstrap=FEW, unparsed="wrong").metrics
    assert again == both
    other = normad.score_responses(frame, release_stories, bootstrap=uncertainty.Bootstrap(n_resamples=400, seed=8),
                                   unparsed="wrong").metrics
    assert other["per_model"]["sharp"]["accuracy"] == both["per_model"]["sharp"]["accuracy"]
    # (accuracy over 60 stories takes few values, so its percentiles may coincide; macro F1's hardly can)
    assert other["per_model"]["sharp"]["macro_f1_ci"] != both["per_model"]["sharp"]["macro_f1_ci"]


# ------------------------------------------------------------------------------------------------ compare page



@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory):
    """Two run folders written by `culturebench score normad` from responses.jsonl files written here."""
    tmp = tmp_path_factory.mktemp("normad-runs")
    release = write_release(tmp / "release", {"stories": stories()}, "normad")
    out = []
    for model in ("sharp", "blunt"):
        path = tmp / f"{model}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in responses(model).iter_rows(named=True)), encoding="utf-8")
        result = runner.invoke(app, ["score", "normad", "--responses", str(path), "--release", str(release),
                                     "--out", str(tmp / f"run-{model}"), "--unparsed-wrong"])
        assert result.exit_code == 0, result.output
        out.append(tmp / f"run-{model}")
    return out


def test_compare_page_holds_every_model_table_and_figure(run_dirs, tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", *map(str, run_dirs), "--out", str(out), "--n-resamples", "300"])
    assert result.exit_code == 0, result.output
    assert "2 significant differences" in result.output
    page = parse_report_page(out / "report.html")
    assert page.models == ["blunt", "sharp"]
    spec = normad.COMPARE
    saved = json.loads((out / "comparison.json").read_text())
    for table in spec.tables:
        assert f"table-{table.name}" in page.ids, table.name
        rows = list(csv.DictReader((out / f"{table.name}.csv").open(encoding="utf-8")))
        assert len(rows) == len(saved["tables"][table.name]) > 0
    assert len(page.images) == len(spec.figures) and all(s.startswith("data:image/png;base64,") for s in page.images)
    assert not page.tags & {"script", "link", "iframe"}
    for figure in spec.figures:
        assert (out / figure.name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Fig. 3's table: one row per model, each context's accuracy with its interval on the page
    main = {r["model"]: r for r in saved["tables"]["main"]}
    # (the runs were scored with --unparsed-wrong: sharp's refusals count wrong here too)
    assert main["sharp"]["COUNTRY"] == 51 / 60 and main["blunt"]["RULE-OF-THUMB"] == 20 / 60
    assert main["sharp"]["COUNTRY_low"] <= 51 / 60 <= main["sharp"]["COUNTRY_high"]
    text = " ".join(page.text)
    assert re.search(r"0\.8500 \[0\.\d{4}, 0\.\d{4}\]", text) and "300 resamples, seed 0" in text
    assert "COUNTRY / blunt / sharp" in text and "RULE-OF-THUMB / blunt / sharp" in text
    # countries: Bigland ranked, the two small ones flagged with no rank, for each model and context
    countries = saved["tables"]["country"]
    assert {(r["country"], r["small"], r["rank"]) for r in countries} == {
        ("Bigland", False, 1), ("Midland", True, None), ("Tinyland", True, None)}
    assert len(countries) == 2 * 2 * 3


def test_runs_scored_under_different_unparsed_rules_are_not_compared(run_dirs, tmp_path):
    default = tmp_path / "run-blunt-default"
    metrics = json.loads((run_dirs[1] / "metrics.json").read_text())
    responses = metrics["responses"][0]["path"]
    release = metrics["release"]
    result = runner.invoke(app, ["score", "normad", "--responses", responses, "--release", release, "--out",
                                 str(default)])
    assert result.exit_code == 0, result.output
    line = one_line_error(runner.invoke(app, ["compare", str(run_dirs[0]), str(default), "--out",
                                              str(tmp_path / "report")]))
    assert "score unparsed answers differently (neutral and wrong)" in line


def test_runs_read_under_different_answer_rules_are_not_compared(run_dirs, tmp_path):
    strict = tmp_path / "run-blunt-strict"
    metrics = json.loads((run_dirs[1] / "metrics.json").read_text())
    result = runner.invoke(app, ["score", "normad", "--responses", metrics["responses"][0]["path"], "--release",
                                 metrics["release"], "--out", str(strict), "--unparsed-wrong", "--answer-rule",
                                 "strict"])
    assert result.exit_code == 0, result.output
    line = one_line_error(runner.invoke(app, ["compare", str(run_dirs[0]), str(strict), "--out",
                                              str(tmp_path / "report")]))
    assert "read answers differently (authors and strict)" in line


def test_runs_asked_under_different_protocols_are_not_compared(tmp_path):
    """Runs whose answers were asked under different protocols (issue 51: the authors' inference prompts, App. A.3
    Fig. 9) are refused side by side: one line, exit 2; a metrics.json written before protocols were recorded is a
    Fig. 9 run (then culturebench's only prompt); two runs of one protocol compare."""
    release = write_release(tmp_path / "release", {"stories": stories()}, "normad")
    runs = {}
    for model, protocol in (("sharp", "authors"), ("blunt", "paper"), ("other", "authors")):
        rows = []
        for r in responses(model if model != "other" else "sharp").iter_rows(named=True):
            story = stories().row(int(r["story_id"]), named=True)
            rows.append({**r, "model": model, "prompt": normad.prompts.prompt_text(
                r["context"], story["story"], story["country"], story["value"], story["rule_of_thumb"], protocol)})
        path = tmp_path / f"{model}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        runs[model] = tmp_path / f"run-{model}"
        result = runner.invoke(app, ["score", "normad", "--responses", str(path), "--release", str(release),
                                     "--out", str(runs[model])])
        assert result.exit_code == 0, result.output
        assert json.loads((runs[model] / "metrics.json").read_text())["protocol"]["name"] == protocol
    line = one_line_error(runner.invoke(app, ["compare", str(runs["sharp"]), str(runs["blunt"]), "--out",
                                              str(tmp_path / "report")]))
    assert "asked under different protocols (authors and paper)" in line
    assert not (tmp_path / "report").exists()
    older = runs["blunt"] / "metrics.json"
    metrics = json.loads(older.read_text())
    del metrics["protocol"]
    older.write_text(json.dumps(metrics), encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["compare", str(runs["sharp"]), str(runs["blunt"]), "--out",
                                              str(tmp_path / "report")]))
    assert "asked under different protocols (authors and paper)" in line
    result = runner.invoke(app, ["compare", str(runs["sharp"]), str(runs["other"]), "--out", str(tmp_path / "same"),
                                 "--n-resamples", "100"])
    assert result.exit_code == 0, result.output


@browser_test
def test_the_normad_report_renders_in_headless_chromium(run_dirs, tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", *map(str, run_dirs), "--out", str(out), "--n-resamples", "300"])
    assert result.exit_code == 0, result.output
    assert_report_renders(out / "report.html", tmp_path, ("blunt", "sharp"), normad.COMPARE)


def test_one_story_gives_no_interval_and_no_verdict(release_stories):
    # issue #46: one story is one unit: every resample is that story, so the intervals had zero width and the
    # difference p = 0; now none, and metrics.json says why
    frame = pl.concat([responses("sharp"), responses("blunt")]).filter(pl.col("story_id") == "1")
    metrics = normad.score_responses(frame, release_stories, bootstrap=FEW).metrics
    assert metrics["per_model"]["sharp"]["accuracy"]["country"] == 1.0
    assert metrics["per_model"]["sharp"]["accuracy_ci"]["country"] == [None, None]
    for row in metrics["model_differences"]:
        assert row["difference"] == -1.0  # blunt says Yes to story 1, whose gold label is no
        assert [row[k] for k in ("low", "high", "pvalue", "pvalue_holm", "significant")] == [None] * 5
    assert metrics["uncertainty"]["no_spread"].startswith("only 1 story: a resample of a single story is that story")
    assert metrics["warnings"] == [f"normad: {metrics['uncertainty']['no_spread']}"]
