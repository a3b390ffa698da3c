"""Intervals and ``culturebench compare`` for LLM-GLOBE (issue #18): bootstrap intervals over prompts (stratified by
dimension) beside every mean of metrics.json, checked against scipy's own bootstrap called here on the per-prompt
values; point estimates unchanged; the same seed gives the same interval; the compare page (parsed with
html.parser) holds every model, table and figure, and marks as significant exactly the pairs the Friedman and
Wilcoxon tests separate, derived by hand below."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from conftest import assert_report_renders, browser_test, parse_report_page, write_release
from culturebench.cli import app
from culturebench.evaluate import llm_globe
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.llm_globe import prompts

runner = CliRunner()
RESAMPLES = ["--n-resamples", "300"]
FEW = uncertainty.Bootstrap(n_resamples=400, seed=5)
DIMS = prompts.DIMENSIONS
PROMPTS = 8  # closed prompts per dimension
OPEN_PROMPTS = 4  # open prompts per dimension
SAMPLES = 3

# Closed answers by model for prompt k (every sample the same): alpha 5 or 6 by k's parity, gamma the other way
# round (same mean 5.5, differences +1/-1 in equal numbers), beta three below alpha on every prompt (2 or 3).
CLOSED = {"alpha": lambda k: 5 + k % 2, "beta": lambda k: 2 + k % 2, "gamma": lambda k: 5 + (k + 1) % 2}
# Open answers are rated by two jurors: "j1" gives ANSWER digit, "j2" the digit + 1 (jury = their mean)
OPEN = {"alpha": lambda k: 4 + k % 2, "beta": lambda k: 2, "gamma": lambda k: 5 - k % 2}


def closed_prompts() -> pl.DataFrame:
    return pl.DataFrame([{"id": f"c{d}-{k}", "item_id": f"{d + 1}-{k + 1}", "dimension": dim, "reverse": False,
                          "prompt_en": f"CLOSED {d} {k}", "prompt_zh": f"封闭 {d} {k}", "scale_min": 1,
                          "scale_max": 7} for d, dim in enumerate(DIMS) for k in range(PROMPTS)])


def open_prompts() -> pl.DataFrame:
    return pl.DataFrame([{"id": f"o{d}-{k}", "dimension": dim, "prompt_en": f"OPEN {d} {k}",
                          "prompt_zh": f"开放 {d} {k}"} for d, dim in enumerate(DIMS) for k in range(OPEN_PROMPTS)])


def globe() -> pl.DataFrame:
    return pl.DataFrame([{"country": "United States", "dimension": d, "practices": 4.0, "values": 4.5} for d in DIMS])


def records(model: str, closed_answer=None) -> list[dict]:
    closed_answer = closed_answer or CLOSED[model]
    out = []
    for d in range(len(DIMS)):
        for k in range(PROMPTS):
            out += [{"part": "closed", "model": model, "id": f"c{d}-{k}", "language": "en", "sample_index": s,
                     "response": str(closed_answer(k)), "parse_status": "ok"} for s in range(SAMPLES)]
        for k in range(OPEN_PROMPTS):
            rid = llm_globe.response_id(model, f"o{d}-{k}", "en", 0)
            digit = OPEN[model](k)
            out.append({"part": "open", "model": model, "id": f"o{d}-{k}", "language": "en", "sample_index": 0,
                        "response_id": rid, "response": f"ANSWER {digit}", "parse_status": "ok"})
            out += [{"part": "juror", "model": model, "response_id": rid, "juror": j, "juror_language": "en",
                     "rating_text": str(digit + plus), "parse_status": "ok"} for j, plus in (("j1", 0), ("j2", 1))]
    return out


def write_records(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def score_run(tmp: Path, release: Path, model: str, name: str | None = None, config: Path | None = None) -> Path:
    out = tmp / (name or f"run-{model}")
    args = ["score", "llm_globe", "--responses", str(write_records(tmp / f"{out.name}.jsonl", records(model))),
            "--release", str(release), "--out", str(out)]
    result = runner.invoke(app, [*args, *(["--config", str(config)] if config else [])])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare-llm-globe")
    folder = tmp / "llm_globe"
    folder.mkdir()
    release = write_release(folder, {"closed": closed_prompts(), "open": open_prompts(), "globe_2004": globe()},
                            "llm_globe")
    return {"tmp": tmp, "release": release, **{m: score_run(tmp, release, m) for m in CLOSED}}


def tables() -> dict:
    """The release tables as ``release_tables`` gives them, for ``score_records``."""
    return {"closed": closed_prompts(), "open": open_prompts(), "globe_2004": None}


# ------------------------------------------------------------------------------------------------ metrics.json


def test_metrics_json_has_an_interval_beside_every_mean(runs):
    metrics = json.loads((runs["alpha"] / "metrics.json").read_text())
    record = metrics["uncertainty"]
    assert (record["n_resamples"], record["seed"], record["unit"], record["strata"]) == (2000, 0, "prompt",
                                                                                      "dimension")
    assert record["confidence_level"] == 0.95 and record["interval_method"] == "percentile"
    assert re.fullmatch(r"[0-9a-f]{64}", metrics["release_manifest_sha256"])
    for part, expected in (("closed", 5.5), ("open", 5.0)):
        # closed: alpha answers 5 and 6 on half the prompts each; open: juror ratings 4, 5 / 5, 6: mean 5
        for dimension in DIMS:
            cell = metrics[part]["mean_sd"]["alpha"][dimension]
            assert cell["mean"] == pytest.approx(expected)
            low, high = cell["mean_ci"]
            assert low <= cell["mean"] <= high and low < high  # the answers vary from prompt to prompt
            assert cell["n_prompts"] == (PROMPTS if part == "closed" else OPEN_PROMPTS)
            group = metrics[part]["group_means"]["alpha"][dimension]  # no groups configured: one per model
            assert group["mean_ci"][0] <= group["mean"] <= group["mean_ci"][1]


def test_the_interval_is_scipys_bootstrap_of_the_per_prompt_means():
    # alpha's closed mean of a dimension is the mean over its 8 prompts (3 equal samples each); resampling the
    # prompts within each dimension is scipy's 9-sample bootstrap, one sample of per-prompt values per dimension
    result = llm_globe.score_records(records("alpha", lambda k: (k * 3) % 7 + 1), tables(), bootstrap=FEW)
    values = [np.asarray([(k * 3) % 7 + 1 for k in range(PROMPTS)], dtype=float) for _ in DIMS]
    for d, dimension in enumerate(DIMS):
        expected = sps.bootstrap(tuple(values), lambda *samples, d=d: np.mean(samples[d]), vectorized=False,
                                 n_resamples=400, method="percentile", rng=np.random.default_rng(5))
        cell = result.metrics["closed"]["mean_sd"]["alpha"][dimension]
        assert cell["mean"] == pytest.approx(np.mean(values[d]))  # the paper's point estimate, unchanged
        assert cell["mean_ci"] == [pytest.approx(expected.confidence_interval.low),
                                   pytest.approx(expected.confidence_interval.high)]


def test_same_seed_same_interval_other_seed_other_interval():
    answer = lambda k: (k * 3) % 7 + 1  # noqa: E731
    first, again, other = (llm_globe.score_records(records("alpha", answer), tables(), bootstrap=b).metrics
                           for b in (FEW, FEW, uncertainty.Bootstrap(n_resamples=400, seed=6)))
    cell = lambda m: m["closed"]["mean_sd"]["alpha"]["Power Distance"]  # noqa: E731
    assert cell(first) == cell(again) and cell(first)["mean"] == cell(other)["mean"]
    assert cell(first)["mean_ci"] != cell(other)["mean_ci"]


def test_group_means_and_the_group_difference_get_intervals(tmp_path):
    rows = records("alpha") + records("beta") + records("gamma")
    config = llm_globe.Config(groups={"US": ["alpha", "gamma"], "CN": ["beta"]}, compare=("US", "CN"))
    metrics = llm_globe.score_records(rows, tables(), config, bootstrap=FEW).metrics["closed"]
    # per prompt the US value is the mean of alpha and gamma (5.5 on every prompt), CN's beta's 2 or 3: the
    # difference is the mean of 3.5 and 2.5 over the prompts, its interval scipy's bootstrap of those per dimension
    per_prompt = [np.asarray([5.5 - (2 + k % 2) for k in range(PROMPTS)]) for _ in DIMS]
    for row in metrics["group_ttests"]:
        d = DIMS.index(row["dimension"])
        expected = sps.bootstrap(tuple(per_prompt), lambda *samples, d=d: np.mean(samples[d]), vectorized=False,
                                 n_resamples=400, method="percentile", rng=np.random.default_rng(5))
        assert row["difference"] == pytest.approx(3.0)
        assert row["difference_ci"] == [pytest.approx(expected.confidence_interval.low),
                                        pytest.approx(expected.confidence_interval.high)]
        assert row["difference_ci"][0] < 3.0 < row["difference_ci"][1]
    us = metrics["group_means"]["US"]["Power Distance"]
    assert us["mean"] == pytest.approx(5.5) and us["mean_ci"] == [pytest.approx(5.5), pytest.approx(5.5)]


# ------------------------------------------------------------------------------------------------ compare



def compare(runs, out: Path, *names: str) -> Path:
    result = runner.invoke(app, ["compare", *(str(runs[n]) for n in names), "--out", str(out), *RESAMPLES])
    assert result.exit_code == 0, result.output
    return out


def test_report_holds_every_model_table_and_figure_and_the_significant_pairs(runs, tmp_path):
    out = compare(runs, tmp_path / "report", "alpha", "beta", "gamma")
    page = parse_report_page(out / "report.html")
    assert page.models == ["alpha", "beta", "gamma"]
    spec = llm_globe.COMPARE
    for table in spec.tables:
        assert f"table-{table.name}" in page.ids, table.name
        assert (out / f"{table.name}.csv").is_file()
    assert len(page.images) == len(spec.figures) and all(s.startswith("data:image/png;base64,") for s in page.images)
    for figure in spec.figures:
        assert (out / figure.name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = " ".join(page.text)
    assert "300 resamples, seed 0" in text and re.search(r"5\.5000 \[\d\.\d{4}, \d\.\d{4}\]", text)
    saved = json.loads((out / "comparison.json").read_text())
    # point estimates unchanged: each model's closed and open means are those of its own run's metrics.json
    for model in CLOSED:
        own = json.loads((runs[model] / "metrics.json").read_text())
        for part in ("closed", "open"):
            rows = {r["dimension"]: r for r in saved["tables"][f"{part}_means"]}
            for dimension in DIMS:
                assert rows[dimension][model] == own[part]["mean_sd"][model][dimension]["mean"]
    # By hand, every dimension, closed: per prompt beta is the lowest, alpha and gamma alternate 2nd/3rd, so the
    # rank sums over 8 prompts are 8, 20, 20 and Friedman's chi2 = 12 / (8 * 3 * 4) * (64 + 400 + 400) - 3 * 8 * 4
    # = 12 (p = e^-6 < 0.05). alpha - beta = 3 on every prompt, beta - gamma -4 or -2: one sign on all 8 prompts
    # (Wilcoxon p = 2 / 2^8, Holm x 3 = 0.023 < 0.05): significant; alpha - gamma is +1 on four prompts and -1 on
    # four: p = 1, not significant.
    friedman = [r for r in saved["tables"]["friedman"] if r["part"] == "closed"]
    assert len(friedman) == 9 and all(r["chi2"] == pytest.approx(12.0) for r in friedman)
    closed = [r for r in saved["tables"]["differences"] if r["part"] == "closed"]
    assert len(closed) == 9 * 3
    for row in closed:
        pair = (row["model_a"], row["model_b"])
        expected = {("alpha", "beta"): 3.0, ("alpha", "gamma"): 0.0, ("beta", "gamma"): -3.0}[pair]
        assert row["difference"] == pytest.approx(expected) and row["n_pairs"] == PROMPTS
        assert row["significant"] == (pair != ("alpha", "gamma")), row
        if row["significant"]:
            assert row["pvalue"] == pytest.approx(2 / 2**8) and row["pvalue_holm"] == pytest.approx(3 * 2 / 2**8)
        if pair == ("alpha", "beta"):  # the same difference on every prompt: no resample moves it
            assert (row["difference_low"], row["difference_high"]) == (pytest.approx(expected),
                                                                        pytest.approx(expected))
        else:
            assert row["difference_low"] < expected < row["difference_high"]
    assert "closed / alpha / beta / Power Distance" in text and "closed / alpha / gamma" not in text


def test_one_model_compares_without_pairs(runs, tmp_path):
    out = compare(runs, tmp_path / "one", "alpha")
    saved = json.loads((out / "comparison.json").read_text())
    assert saved["models"] == ["alpha"] and saved["tables"]["differences"] == []
    assert "No difference is significant." in (out / "report.html").read_text(encoding="utf-8")
    assert (out / "wilcoxon_closed.png").stat().st_size > 1000


def test_each_run_keeps_its_own_jury(runs, tmp_path):
    # a run scored with given jury weights (S = j1 - 1): its open means follow them, the others stay the mean
    config = tmp_path / "given.json"
    config.write_text(json.dumps({"jury_weights": {"weights": {"j1": 1.0, "j2": 0.0}, "intercept": -1.0}}))
    given = score_run(runs["tmp"], runs["release"], "beta", name="run-beta-given", config=config)
    out = tmp_path / "r"
    result = runner.invoke(app, ["compare", str(runs["alpha"]), str(given), "--out", str(out), *RESAMPLES])
    assert result.exit_code == 0, result.output
    rows = {r["dimension"]: r for r in json.loads((out / "comparison.json").read_text())["tables"]["open_means"]}
    # beta's answers say 2: juror j1 rates 2, so S = 1; alpha's mean of (4, 5) and (5, 6) is 5
    assert rows["Power Distance"]["beta"] == pytest.approx(1.0) and rows["Power Distance"]["alpha"] == 5.0
    assert "different juries" in (out / "report.html").read_text(encoding="utf-8")


def test_the_csv_and_the_page_agree(runs, tmp_path):
    out = compare(runs, tmp_path / "report", "alpha", "beta")
    saved = json.loads((out / "comparison.json").read_text())["tables"]
    for name in ("closed_means", "open_means", "friedman", "differences"):
        assert len(list(csv.DictReader((out / f"{name}.csv").open(encoding="utf-8")))) == len(saved[name])
    # two models: no Friedman test (it needs three), the Wilcoxon test alone decides
    assert all(r["pvalue"] is None for r in saved["friedman"])
    assert all(r["significant"] for r in saved["differences"] if r["part"] == "closed")


@browser_test
def test_the_report_renders_in_headless_chromium(runs, tmp_path):
    out = compare(runs, tmp_path / "report", "alpha", "beta", "gamma")
    assert_report_renders(out / "report.html", tmp_path, CLOSED, llm_globe.COMPARE)


def test_mixed_releases_need_allow_mixed_and_are_scored_against_their_prompts_joined(runs, tmp_path):
    folder = tmp_path / "llm_globe"
    folder.mkdir()
    other = write_release(folder, {"closed": closed_prompts(), "open": open_prompts()}, "llm_globe")  # no GLOBE
    elsewhere = score_run(tmp_path, other, "beta", name="run-beta-other")
    args = ["compare", str(runs["alpha"]), str(elsewhere), "--out", str(tmp_path / "r"), *RESAMPLES]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "different releases" in refused.output
    result = runner.invoke(app, [*args, "--allow-mixed"])
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "r" / "comparison.json").read_text())
    assert saved["models"] == ["alpha", "beta"] and len(saved["tables"]["closed_means"]) == len(DIMS)
    assert "Mixed releases" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")


def test_one_prompt_per_dimension_gives_no_interval_and_no_verdict():
    # issue #46: one prompt per dimension is one unit per stratum: every resample is the data itself, so every
    # interval had zero width (beta - alpha = -3 [-3, -3]); now no interval, no p-value, no verdict, and why
    one = [r for m in ("alpha", "beta") for r in records(m) if r["part"] == "closed" and r["id"].endswith("-0")]
    m = llm_globe.score_records(one, tables(), bootstrap=FEW).metrics
    closed = m["closed"]
    assert closed["mean_sd"]["alpha"][DIMS[0]]["mean"] == 5 and closed["mean_sd"]["alpha"][DIMS[0]]["n_prompts"] == 1
    assert all(cell["mean_ci"] == [None, None] for dims in closed["mean_sd"].values() for cell in dims.values())
    assert len(closed["model_differences"]) == len(DIMS)
    for row in closed["model_differences"]:
        assert row["difference"] == 3 and row["difference_ci"] == [None, None]
        assert (row["pvalue"], row["pvalue_holm"], row["significant"]) == (None, None, None)
    assert closed["no_spread"].startswith(f"{len(DIMS)} of {len(DIMS)} dimensions hold fewer than 2 prompts")
    assert m["warnings"] == [f"llm_globe closed: {closed['no_spread']}"]
    # two prompts per dimension: intervals and verdicts again (beta three below alpha on both prompts)
    two = [r for m in ("alpha", "beta") for r in records(m) if r["part"] == "closed" and r["id"][-2:] in ("-0", "-1")]
    m = llm_globe.score_records(two, tables(), bootstrap=FEW).metrics
    assert "warnings" not in m and "no_spread" not in m["closed"]
    assert all(cell["mean_ci"][0] < cell["mean_ci"][1] for cell in m["closed"]["mean_sd"]["alpha"].values())
    assert all(row["significant"] is not None for row in m["closed"]["model_differences"])


def test_a_juror_whose_ratings_never_vary_is_warned_about(runs, tmp_path):
    # issue #46: a jury rating every answer "6" scored 6.00 on every dimension without a word
    rows = [{**r, "rating_text": "6"} if r["part"] == "juror" and r["juror"] == "j1" else r for r in records("alpha")]
    out = tmp_path / "constant"
    result = runner.invoke(app, ["score", "llm_globe", "--responses", str(write_records(tmp_path / "c.jsonl", rows)),
                                 "--release", str(runs["release"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    n_answers = len(DIMS) * OPEN_PROMPTS
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["open"]["constant_jurors"] == {"j1": {"rating": 6.0, "n": n_answers}}
    warning = f"llm_globe jury: juror j1 rated all {n_answers} answers 6: its ratings do not vary"
    assert [w for w in metrics["warnings"] if w.startswith("llm_globe jury")] == [
        next(w for w in metrics["warnings"] if warning in w)]
    assert f"warning: {warning}" in " ".join(result.output.split())
    # j2's ratings vary (digit + 1): no warning for it, nor for a run whose jurors both vary
    assert "juror j2" not in result.output
    plain = json.loads((runs["alpha"] / "metrics.json").read_text())
    assert plain["open"]["constant_jurors"] == {} and "warnings" not in plain
