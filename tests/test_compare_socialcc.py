"""SocialCC intervals and ``culturebench compare socialcc`` (issue #18): two models' transcripts written here with
judge answers chosen so that every number can be worked out by hand, scored with ``score`` (no judge: the saved
answers re-parsed), then compared. Checked: the point estimates are the paper's plain means, every interval holds
its estimate and equals scipy's bootstrap called here on the same values, the paired differences over common
scenarios with Holm, small countries flagged not ranked, same seed -> same report, and the page holds every model,
table and figure."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats
from typer.testing import CliRunner

from conftest import assert_report_renders, browser_test, parse_report_page, write_release
from culturebench.builders.socialcc import SCENARIO_SCHEMA
from culturebench.cli import app
from culturebench.evaluate import socialcc
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.socialcc import prompts

runner = CliRunner()
RESAMPLES = 300
N = 60  # scenarios s0..s59: the first 40 from Japan (Confucian), the last 20 from Egypt (African-Islamic)


def country(i: int) -> tuple[str, str]:
    return ("Japan", "Confucian") if i < 40 else ("Egypt", "African-Islamic")


def scores(model: str, i: int) -> dict[str, int | None]:
    """The judged scores of scenario i (None: the judge's answer cannot be parsed)."""
    if model == "strong":
        return {"awareness": 1, "commonsense": int(i % 2 == 0), "value": 1, "behaviour": 3}
    return {"awareness": int(i % 10 == 0), "commonsense": int(i % 2 == 0), "value": int(i % 4 == 0),
            "behaviour": None if i == N - 1 else 1}


def scenarios() -> pl.DataFrame:
    person = lambda name: {"name": name, "age": 30, "gender": "female", "nationality": "Japan", "country": "Japan",
                           "occupation": "teacher", "profile": f"{name}: a teacher.", "goals": ["Agree."],
                           "task": None}
    rows = [{"id": f"s{i}", "source_id": str(i), "layout": "culturebench", "scenario": f"Scenario {i}.",
             "events": None, "characters": [person("Ann"), person("Bo")], "commonsense_country": country(i)[0],
             "commonsense_topic": "Etiquette" if i % 3 else "Dates of Significance", "commonsense_item": "An item.",
             "value_item": "A value.", "value_country": country(i)[0], "value_question_id": "Q1",
             "value_table_4a_id": 1, "value_topic": "Social Values", "value_side": "printed", "value_share": 0.9,
             "iw_zone": country(i)[1]} for i in range(N)]
    return pl.DataFrame(rows, schema=SCENARIO_SCHEMA)


def transcripts_file(path: Path, model: str) -> Path:
    lines = []
    for i in range(N):
        judgements = {j: {"raw": "I cannot tell." if s is None else f"Reasoning.\nScore: {s}", "judge_model": "judge"}
                      for j, s in scores(model, i).items()}
        lines.append(json.dumps({"scenario_id": f"s{i}", "model": model, "antagonist_model": "judge",
                                 "country": country(i)[0], "zone": "stale zone", "topic": "Etiquette",
                                 "value_topic": "Social Values", "n_rounds": 2, "ended_by": "good_bye", "turns": [],
                                 "fields": {}, "judgements": judgements}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare_socialcc")
    release = write_release(tmp / "socialcc", {"scenarios": scenarios()}, "socialcc")
    out = {"tmp": tmp, "release": release}
    for model in ("strong", "weak"):
        run = tmp / f"run-{model}"
        result = runner.invoke(app, ["score", "socialcc", "--responses",
                                     str(transcripts_file(tmp / f"{model}.jsonl", model)), "--release", str(release),
                                     "--out", str(run)])
        assert result.exit_code == 0, result.output
        out[model] = run
    return out


def expected_interval(values, seed: int = 0, resamples: int = uncertainty.DEFAULT_RESAMPLES) -> list[float]:
    """scipy's percentile bootstrap of the mean, called here independently of culturebench."""
    found = stats.bootstrap((np.asarray(values, dtype=float),), np.mean, n_resamples=resamples, method="percentile",
                            vectorized=False, rng=np.random.default_rng(seed)).confidence_interval
    return [pytest.approx(found.low), pytest.approx(found.high)]


def test_run_metrics_keep_the_paper_estimates_and_add_intervals(runs):
    metrics = json.loads((runs["weak"] / "metrics.json").read_text())
    t = metrics["per_model"]["weak"]["table2"]
    # by hand: awareness 6/60 (i % 10 == 0), commonsense 30/60, value 15/60, behaviour 1 on the 59 parsed
    assert (t["awareness"], t["commonsense"], t["value"], t["behaviour"]) == (0.1, 0.5, 0.25, 1.0)
    assert t["behaviour_distribution_pct"] == {"0": 0.0, "1": 100.0, "2": 0.0, "3": 0.0}
    assert t["value_ci"] == expected_interval([int(i % 4 == 0) for i in range(N)])
    for judge in prompts.JUDGES:
        low, high = t[f"{judge}_ci"]
        assert low <= t[judge] <= high
    assert t["behaviour_ci"] == [1.0, 1.0]  # every parsed behaviour score is 1: nothing can vary
    record = metrics["uncertainty"]
    assert (record["unit"], record["n_resamples"], record["seed"], record["confidence_level"]) == (
        "scenario", uncertainty.DEFAULT_RESAMPLES, 0, 0.95)
    assert metrics["release_manifest_sha256"] and metrics["model_differences"] == []
    # Fig. 5 with sizes: Japan (40 dialogues) ranked, Egypt (20 < 30) flagged small and not ranked
    rows = {r["group"]: r for r in metrics["per_model"]["weak"]["country_breakdown"]["awareness"]}
    assert (rows["Japan"]["n"], rows["Japan"]["rank"], rows["Japan"]["small"]) == (40, 1, False)
    assert (rows["Egypt"]["n"], rows["Egypt"]["rank"], rows["Egypt"]["small"]) == (20, None, True)
    # Japan's awareness: i % 10 == 0 for i < 40 -> 4/40; Egypt's: i = 40, 50 -> 2/20
    assert rows["Japan"]["estimate"] == 0.1 and rows["Egypt"]["estimate"] == 0.1
    assert rows["Egypt"]["low"] is not None  # flagged, but its interval is still reported
    # zones come from the release (iw_zone), not the transcripts' stale ones
    assert set(metrics["per_model"]["weak"]["by_zone"]) == {"Confucian", "African-Islamic"}
    for name in socialcc.PLOTS:
        assert (runs["weak"] / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_paired_differences_by_hand():
    records = [{"scenario_id": f"s{i}", "model": m, "country": country(i)[0],
                "judgements": {j: {"score": s} for j, s in scores(m, i).items()}}
               for m in ("strong", "weak") for i in range(N)]
    settings = uncertainty.Bootstrap(n_resamples=RESAMPLES, seed=5)
    rows = {r["dimension"]: r for r in socialcc.model_differences(records, ["strong", "weak"], settings)}
    # awareness: 1 - 0.1 = 0.9 over all 60; commonsense: equal on every scenario -> 0, nothing varies, p = 1
    assert rows["awareness"]["difference"] == pytest.approx(0.9) and rows["awareness"]["n_common"] == N
    assert rows["commonsense"]["difference"] == 0.0 and rows["commonsense"]["pvalue"] == 1.0
    assert [rows["commonsense"]["low"], rows["commonsense"]["high"]] == [0.0, 0.0]
    assert not rows["commonsense"]["significant"]
    # behaviour: only the 59 scenarios both were judged on, 3 - 1 = 2 on each
    assert rows["behaviour"]["n_common"] == N - 1 and rows["behaviour"]["difference"] == 2.0
    # value: per-scenario differences 1 - [i % 4 == 0]; one stratum, so the interval is scipy's bootstrap of them
    diffs = [1 - int(i % 4 == 0) for i in range(N)]
    assert rows["value"]["difference"] == 0.75
    assert [rows["value"]["low"], rows["value"]["high"]] == expected_interval(diffs, seed=5, resamples=RESAMPLES)
    # Holm over the 4 rows: commonsense's p = 1 stays 1; the other three differences are far from 0
    assert rows["commonsense"]["pvalue_holm"] == 1.0
    assert all(rows[d]["significant"] for d in ("awareness", "value", "behaviour"))



def compare_report(runs, out: Path, seed: int = 0) -> dict:
    result = runner.invoke(app, ["compare", str(runs["strong"]), str(runs["weak"]), "--out", str(out),
                                 "--n-resamples", str(RESAMPLES), "--seed", str(seed)])
    assert result.exit_code == 0, result.output
    assert "3 significant differences" in result.output
    return json.loads((out / "comparison.json").read_text())


def test_compare_page_holds_every_model_table_and_figure(runs, tmp_path):
    out = tmp_path / "report"
    saved = compare_report(runs, out)
    page = parse_report_page(out / "report.html")
    assert page.models == ["strong", "weak"]
    spec = socialcc.COMPARE
    for table in spec.tables:
        assert f"table-{table.name}" in page.ids, table.name
        rows = list(csv.DictReader((out / f"{table.name}.csv").open(encoding="utf-8")))
        assert len(rows) == len(saved["tables"][table.name]) > 0, table.name
    assert len(page.images) == len(spec.figures) and all(s.startswith("data:image/png;base64,") for s in page.images)
    text = " ".join(page.text)
    assert f"{RESAMPLES} resamples, seed 0" in text
    assert re.search(r"0\.1000 \[\d\.\d{4}, \d\.\d{4}\]", text)  # weak's awareness with its interval
    # Table 2: one row per model, the hand-computed means
    table2 = {r["model"]: r for r in saved["tables"]["table2"]}
    assert list(table2) == ["strong", "weak"]
    assert [table2["strong"][prompts.JUDGE_NAMES[j]] for j in prompts.JUDGES] == [1.0, 0.5, 1.0, 3.0]
    assert [table2["weak"][prompts.JUDGE_NAMES[j]] for j in prompts.JUDGES] == [0.1, 0.5, 0.25, 1.0]
    assert table2["weak"]["behaviour score 1 (%)"] == 100.0 and table2["weak"]["invalid judgements"] == 1
    assert table2["weak"]["value knowledge_low"] == expected_interval([int(i % 4 == 0) for i in range(N)],
                                                                      resamples=RESAMPLES)[0]
    # significant differences: awareness, value, behaviour; commonsense is not
    significant = {r["dimension"] for r in saved["tables"]["differences"] if r["significant"]}
    assert significant == {"cultural awareness", "value knowledge", "cultural behaviour"}
    assert "strong / weak / cultural awareness" in text
    # per country: small groups flagged, not ranked
    countries = [r for r in saved["tables"]["by_country"] if r["dimension"] == "cultural awareness"]
    assert {(r["model"], r["country"], r["rank"], r["small"]) for r in countries} == {
        ("strong", "Japan", 1, False), ("strong", "Egypt", None, True),
        ("weak", "Japan", 1, False), ("weak", "Egypt", None, True)}
    # Fig. 6 cells from the release's zones; Fig. 7: weak is aware without commonsense knowledge on i % 10 == 0
    # and i odd -> none (multiples of 10 are even); strong on the 30 odd scenarios: 50% of the judged ones
    cells = {(r["model"], r["zone"]) for r in saved["tables"]["value_topic_zone"]}
    assert cells == {(m, z) for m in ("strong", "weak") for z in ("Confucian", "African-Islamic")}
    fig7 = {r["model"]: r for r in saved["tables"]["aware_without_knowledge"] if r["topic"] == "(all)"}
    assert fig7["strong"]["pct"] == 50.0 and fig7["weak"]["pct"] == 0.0


def test_the_same_seed_gives_the_same_report_another_seed_other_intervals(runs, tmp_path):
    a = compare_report(runs, tmp_path / "a")["tables"]
    assert compare_report(runs, tmp_path / "b")["tables"] == a
    other = compare_report(runs, tmp_path / "c", seed=1)["tables"]
    assert [r["value knowledge"] for r in other["table2"]] == [r["value knowledge"] for r in a["table2"]]
    assert [r["value knowledge_low"] for r in other["table2"]] != [r["value knowledge_low"] for r in a["table2"]]


@browser_test
def test_the_report_renders_in_headless_chromium(runs, tmp_path):
    out = tmp_path / "report"
    compare_report(runs, out)
    assert_report_renders(out / "report.html", tmp_path, ("strong", "weak"), socialcc.COMPARE)


def test_one_scenario_gives_no_interval_and_no_verdict():
    # issue #46: two models judged on one scenario: a resample of one scenario is that scenario, so the
    # differences had zero-width intervals and p = 0 ("significant"); now none, and metrics.json says why
    records = [{"scenario_id": "s0", "model": m, "country": country(0)[0],
                "judgements": {j: {"score": s} for j, s in scores(m, 0).items()}} for m in ("strong", "weak")]
    settings = uncertainty.Bootstrap(n_resamples=RESAMPLES, seed=5)
    rows = socialcc.model_differences(records, ["strong", "weak"], settings)
    assert any(r["difference"] for r in rows)
    for row in rows:
        assert [row[k] for k in ("low", "high", "pvalue", "pvalue_holm", "significant")] == [None] * 5
    metrics = socialcc.aggregate(records, bootstrap=settings)
    assert metrics["uncertainty"]["no_spread"].startswith("only 1 scenario")
    assert metrics["warnings"] == [f"socialcc: {metrics['uncertainty']['no_spread']}"]
