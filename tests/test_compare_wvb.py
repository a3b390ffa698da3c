"""WorldValuesBench intervals and ``culturebench compare`` (issue #18): the bootstrap over participants within each
question against scipy's own bootstrap called here on the same data, cases with a known answer (answers equal to
the humans' stay at W1 0 on every resample; a constant answer gives the mean of the rescaled human answers),
point estimates unchanged, same seed -> same interval, small groups flagged and not ranked, and the compare page
(parsed with html.parser, and rendered in headless Chromium: the ``browser`` test) holding every model, table and
figure, with runs of ``score`` and of ``evaluate``."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats
from typer.testing import CliRunner

from conftest import assert_report_renders, browser_test, one_line_error, parse_report_page
from culturebench.cli import app
from culturebench.evaluate import wvb
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.wvb import measures
from culturebench.evaluate.wvb.measures import CELL_COLUMNS, AnswerCounts
from scripted_server import ScriptedServer
from culturebench.manifest import load_manifest
from culturebench.release_reader import read_tables

FEW = uncertainty.Bootstrap(n_resamples=300, seed=5)
RESAMPLES = ["--n-resamples", "300"]
runner = CliRunner()


@pytest.fixture(scope="module")
def release(sample_release) -> Path:
    return sample_release


@pytest.fixture(scope="module")
def probe(release) -> pl.DataFrame:
    return pl.concat(read_tables(release, load_manifest(release)["outputs"])["probe"].values())


@pytest.fixture(scope="module")
def scales(release) -> dict[str, tuple[int, int]]:
    questions = pl.concat(read_tables(release, load_manifest(release)["outputs"])["questions"].values())
    return {q: (lo, hi) for q, lo, hi in questions.select("question_id", "scale_min", "scale_max").iter_rows()}


def write_answers(path: Path, probe: pl.DataFrame, answer) -> Path:
    """A responses TSV with one answer per probe row: ``answer(row)``."""
    lines = ["QUESTION_ID\tPARTICIPANT_ID\tSCORE"]
    lines += [f"{r['question_id']}\t{r['participant_id']}\t{answer(r)}" for r in probe.iter_rows(named=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rows_frame(question: str, human: list[int], model: list[int | None], low: int, high: int,
               education: list[str | None] | None = None) -> pl.DataFrame:
    """Covered rows as ``score_answers`` returns them (participants 1..n) for one question."""
    n = len(human)
    return pl.DataFrame({"question_id": [question] * n, "participant_id": list(range(1, n + 1)), "human": human,
                         "model": model, "scale_min": [low] * n, "scale_max": [high] * n,
                         "continent": [None] * n, "urban_rural": [None] * n,
                         "education_level": education or [None] * n},
                        schema={"question_id": pl.String, "participant_id": pl.Int64, "human": pl.Int64,
                                "model": pl.Int64, "scale_min": pl.Int64, "scale_max": pl.Int64,
                                "continent": pl.String, "urban_rural": pl.String, "education_level": pl.String})


def bootstrap(scored: dict[str, pl.DataFrame]) -> wvb.W1Bootstrap:
    """The ``W1Bootstrap`` of covered rows (``rows_frame``) with each model's ``AnswerCounts``, as ``score_answers``
    makes them (here each participant is a profile of its own, without a probe group)."""
    counts = []
    for rows in scored.values():
        covered = rows.with_columns(pl.lit(None, pl.String).alias("probe_continent"),
                                    pl.lit(None, pl.String).alias("probe_urban_rural"),
                                    pl.lit(True).alias("has_model"), pl.col("participant_id").alias("profile"))
        profiles = covered.select("profile", *CELL_COLUMNS[1:]).unique("profile")
        counts.append(AnswerCounts.of(covered, profiles, rows.select("question_id", "scale_min", "scale_max").unique()))
    return wvb.W1Bootstrap(scored, counts)


# ------------------------------------------------------------------------------------------------ the statistic


def test_w1_from_counts_by_hand():
    # the hand example of test_wvb_score: human {1, 1, 2, 4}, model {2, 2, 3, 3} on 1-5 -> W1 = 1/4;
    # and human {1, 2, 3} vs model {3} on 1-3 -> 1/2 (mean |h - 3| / 2); a cell without model answers -> NaN
    human = np.asarray([[2, 1, 0, 1, 0], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=float)
    model = np.asarray([[0, 2, 2, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]], dtype=float)
    got = measures.w1_from_counts(human, model, np.asarray([4.0, 2.0, 3.0]), np.ones(5))  # consecutive points
    assert got[:2].tolist() == pytest.approx([0.25, 0.5])
    assert np.isnan(got[2])


def test_bootstrap_of_a_constant_answer_is_scipys_bootstrap_of_the_mean():
    # Against a model that always answers the scale minimum, W1 = mean |h - 0| = the mean of the rescaled human
    # answers; one question is one stratum, so the draws are scipy's on the rescaled answers (participant order).
    human = [1, 4, 2, 2, 3, 4, 1, 1, 3, 2, 4, 4, 2, 1, 3, 3, 2, 4, 1, 2]
    boot = bootstrap({"constant": rows_frame("Q1", human, [1] * len(human), 1, 4)})
    result, layout = boot.run(FEW, [])
    at = layout[("constant", "mean")].start
    rescaled = (np.asarray(human) - 1) / 3
    expected = stats.bootstrap((rescaled,), np.mean, n_resamples=300, method="percentile", vectorized=False,
                               rng=np.random.default_rng(5)).confidence_interval
    assert result.estimate[at] == pytest.approx(rescaled.mean())
    assert result.interval(at) == [pytest.approx(expected.low), pytest.approx(expected.high)]


def test_bootstrap_of_participants_with_two_answers_each_is_scipys_bootstrap_of_their_rows():
    # two samples per participant (two rows of one unit, both drawn together): scipy's own bootstrap over the
    # participants, with a statistic that gathers each drawn participant's two rows and asks scipy for the W1
    human = [1, 4, 2, 2, 3, 4, 1, 1, 3, 2, 4, 4]
    first, second = [2, 2, 3, 1, 4, 4, 1, 2, 3, 3, 1, 4], [1, 3, 3, 2, 4, 2, 2, 2, None, 1, 4, 4]
    boot = bootstrap({"model": pl.concat([rows_frame("Q1", human, first, 1, 4),
                                                rows_frame("Q1", human, second, 1, 4)])})
    result, layout = boot.run(FEW, [])

    def w1(participants: np.ndarray) -> float:
        humans = [human[i] for i in participants for _ in range(2)]
        models = [a for i in participants for a in (first[i], second[i]) if a is not None]
        return stats.wasserstein_distance(humans, models) / 3

    expected = stats.bootstrap((np.arange(len(human)),), w1, n_resamples=300, method="percentile",
                               vectorized=False, rng=np.random.default_rng(5)).confidence_interval
    at = layout[("model", "mean")].start
    assert result.estimate[at] == pytest.approx(w1(np.arange(len(human))))
    assert result.interval(at) == [pytest.approx(expected.low), pytest.approx(expected.high)]


def test_bootstrap_estimate_with_answers_off_the_scale_is_the_w1_by_hand():
    # answers kept off the scale (the authors' evaluate.py): humans {1, 2, 3, 4} on 1-4 against models {0, 2, 3, 6}
    # (Q1) and, for a second question on 1-2, humans {1, 2} against {-1, 2}. On the rescaled axis the sorted
    # pairs differ by |0-1|, 0, 0, |6-4| -> (1 + 2) / 4 / 3 = 1/4; and |-1-1|, 0 -> 2 / 2 / 1 = 1.
    # Bootstrapped together with a model answering as the humans (W1 0), named first: the axis holds the points
    # of every model's answers, not only the first's.
    rows = pl.concat([rows_frame("Q1", [1, 2, 3, 4], [0, 2, 3, 6], 1, 4), rows_frame("Q2", [1, 2], [-1, 2], 1, 2)])
    echo = pl.concat([rows_frame("Q1", [1, 2, 3, 4], [1, 2, 3, 4], 1, 4), rows_frame("Q2", [1, 2], [1, 2], 1, 2)])
    boot = bootstrap({"echo": echo, "model": rows})
    result, layout = boot.run(FEW, [])
    assert result.estimate[layout[("model", "per_question")]].tolist() == pytest.approx([0.25, 1.0])
    assert result.estimate[layout[("echo", "per_question")]].tolist() == [0.0, 0.0]


def test_answers_equal_to_the_humans_stay_at_zero_and_identical_models_do_not_differ():
    # a participant's human and model answers are drawn together, so a model repeating every human answer has
    # W1 0 on every resample; two models with the same answers differ by exactly 0 (paired), never significantly
    human = [1, 2, 3, 4, 4, 3, 2, 1, 2, 2]
    scored = {"echo": rows_frame("Q1", human, human, 1, 4), "echo again": rows_frame("Q1", human, human, 1, 4),
              "minimum": rows_frame("Q1", human, [1] * 10, 1, 4)}
    boot = bootstrap(scored)
    result, layout = boot.run(FEW, [("echo", "echo again", None, None), ("echo", "minimum", None, None)])
    assert result.interval(layout[("echo", "mean")].start) == [0.0, 0.0]
    same, other = layout[("difference", 0)], layout[("difference", 1)]
    assert result.interval(same) == [0.0, 0.0] and result.pvalue(same) == 1.0
    # echo - minimum = 0 - mean rescaled human = -(0 + 1 + 2 + 3 + 3 + 2 + 1 + 0 + 1 + 1) / 3 / 10 = -14/30
    assert result.estimate[other] == pytest.approx(-14 / 30)
    assert result.interval(other)[1] < 0


# ----------------------------------------------------------------------------------------------- metrics.json


def without_intervals(value):
    """metrics.json less what the bootstrap adds: ``*_ci`` and ``*_bootstrap_bias`` keys, group_breakdown and
    uncertainty."""
    if isinstance(value, dict):
        return {k: without_intervals(v) for k, v in value.items()
                if not k.endswith(("_ci", "_bootstrap_bias")) and k not in ("group_breakdown", "uncertainty")}
    return value


@pytest.fixture(scope="module")
def minimum_run(tmp_path_factory, release, probe, scales):
    path = write_answers(tmp_path_factory.mktemp("answers") / "minimum.tsv", probe,
                         lambda r: scales[r["question_id"]][0])
    return path, wvb.score(path, release, bootstrap=FEW)


def test_point_estimates_unchanged_and_inside_their_intervals(minimum_run, release, probe, scales):
    path, result = minimum_run
    m = result.metrics
    plain = wvb.score(path, release, bootstrap=None).metrics
    assert without_intervals(m) == plain  # the bootstrap only adds keys
    # the paper's calculation: W1 against a constant minimum answer = mean of the rescaled human answers
    for (q,), part in probe.group_by("question_id"):
        low, high = scales[q]
        assert m["per_question"][q] == pytest.approx(float(((part["answer"] - low) / (high - low)).mean()))
    assert m["mean_ci"][0] <= m["mean"] <= m["mean_ci"][1] and m["mean_ci"][0] < m["mean_ci"][1]
    # the std over questions is inflated by each question's resampling noise (BOOTSTRAP_NOTE "bias"): the
    # percentile interval may sit above it, but not by more than the bootstrap's own bias estimate
    assert m["std_bootstrap_bias"] > 0
    assert m["std_ci"][0] - m["std_bootstrap_bias"] <= m["std"] <= m["std_ci"][1]
    for q, (low, high) in m["per_question_ci"].items():
        assert low <= m["per_question"][q] <= high, q
    assert set(m["threshold_curve_ci"]) == set(m["threshold_curve"])
    # the sample's humans answer almost uniformly: the uniform baseline's W1 is near 0, where resampling only adds
    # distance (BOOTSTRAP_NOTE "bias"), so its percentile interval lies above the estimate rather than around it
    uniform = m["baselines"]["uniform"]
    assert uniform["mean"] < 0.05 and uniform["mean"] <= uniform["mean_ci"][1]
    record = m["uncertainty"]
    assert (record["n_resamples"], record["seed"], record["unit"], record["strata"]) == (300, 5, "participant", "question")
    assert m["models"] == ["minimum"] and m["release_manifest_sha256"]


def test_same_seed_same_interval_other_seed_other(minimum_run, release):
    path, result = minimum_run
    again = wvb.score(path, release, bootstrap=FEW).metrics
    other = wvb.score(path, release, bootstrap=uncertainty.Bootstrap(n_resamples=300, seed=6)).metrics
    assert again["mean_ci"] == result.metrics["mean_ci"] and again["per_question_ci"] == result.metrics["per_question_ci"]
    assert other["mean_ci"] != result.metrics["mean_ci"]


def test_a_bootstrapped_score_keeps_only_the_plotted_questions_rows(minimum_run, release, probe):
    # the covered rows are dropped once the bootstrap is made from them (a run of millions does not hold them while
    # it resamples); the histograms' questions, the first six in natural order (Q2 before Q10), keep theirs
    path, result = minimum_run
    plain = wvb.score(path, release, bootstrap=None)
    assert result.rows is None and plain.rows.height == probe.height
    questions = sorted(set(probe["question_id"]), key=lambda q: (len(q), q))[:6]
    expected = probe.filter(pl.col("question_id").is_in(questions))
    for scored in (result, plain):
        assert sorted(scored.plotted["question_id"].cast(pl.String).unique()) == sorted(questions)
        assert scored.plotted.height == expected.height
        assert sorted(scored.plotted["human"].to_list()) == sorted(expected["answer"].to_list())


def test_small_groups_flagged_not_ranked(minimum_run, probe):
    _, result = minimum_run
    rows = result.metrics["group_breakdown"]["probe_education_level"]
    assert {r["group"] for r in rows} == set(probe["education_level"].drop_nulls())
    for row in rows:  # the median over questions of the group's answers, counted here from the probe
        counts = probe.filter(pl.col("education_level") == row["group"]).group_by("question_id").len()["len"]
        assert row["answers_per_question"] == statistics.median(counts.to_list())
        assert row["small"] == (row["answers_per_question"] < uncertainty.MIN_GROUP_SIZE)
        assert (row["rank"] is None) == row["small"]
    ranked = [r for r in rows if not r["small"]]
    assert ranked and any(r["small"] for r in rows)  # the sample has both kinds (14 to 35 answers per question)
    assert [r["rank"] for r in ranked] == list(range(1, len(ranked) + 1))
    assert [r["estimate"] for r in ranked] == sorted(r["estimate"] for r in ranked)  # W1: lower ranks first
    assert rows[-1]["small"]


# ---------------------------------------------------------------------------------------------------- compare



@pytest.mark.slow
def test_compare_page_of_score_and_evaluate_runs(tmp_path, release, probe, minimum_run):
    # run 1: `score` of constant minimum answers; run 2: `score` of the human answers themselves;
    # run 3: `evaluate --no-demographics` whose samples compare re-pairs with the evaluated rows
    """Slow: three runs and a compare, each with 2,000 bootstrap resamples of W1."""
    score_dir = tmp_path / "minimum"
    assert runner.invoke(app, ["score", "wvb", "--responses", str(minimum_run[0]), "--release", str(release),
                               "--out", str(score_dir)]).exit_code == 0
    echo = write_answers(tmp_path / "echo.tsv", probe, lambda r: r["answer"])
    assert runner.invoke(app, ["score", "wvb", "--responses", str(echo), "--release", str(release),
                               "--out", str(tmp_path / "echo")]).exit_code == 0
    counter = {"n": 0}

    def reply(text: str, body: dict) -> str:
        counter["n"] += 1
        return json.dumps({"thoughtful explanation": "x", "answer as a score": str(1 + counter["n"] % 2)})

    with ScriptedServer(reply=reply) as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "scripted", "--backend", "openai", "--base-url",
                                     server.base_url, "--release", str(release), "--out", str(tmp_path / "sampled"),
                                     "--no-demographics", "--limit", "220"])
        assert result.exit_code == 0, result.output
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", str(score_dir), str(tmp_path / "echo"), str(tmp_path / "sampled"),
                                 "--out", str(out), *RESAMPLES])
    assert result.exit_code == 0, result.output
    page = parse_report_page(out / "report.html")
    models = ["minimum", "echo", "scripted (without demographics)"]
    assert page.models == models
    for table in wvb.COMPARE.tables:
        assert f"table-{table.name}" in page.ids, table.name
        rows = list(csv.DictReader((out / f"{table.name}.csv").open(encoding="utf-8")))
        assert len(rows) == len(json.loads((out / "comparison.json").read_text())["tables"][table.name])
    assert len(page.images) == len(wvb.COMPARE.figures) and all(s.startswith("data:image/png;base64,") for s in page.images)
    main = {r["model"]: r for r in csv.DictReader((out / "main.csv").open(encoding="utf-8"))}
    assert set(models) < set(main) and float(main["echo"]["mean W1"]) == 0.0
    # the evaluate run was asked --no-demographics; the score runs' TSV files do not say how the model was asked
    assert main["scripted (without demographics)"]["mode"] == "without_demographics"
    assert main["minimum"]["mode"] == main["echo"]["mode"] != "scored file"
    assert "not recorded" in main["minimum"]["mode"]
    # point estimates through compare are the runs' own (re-pairing of the evaluate run included)
    for model, folder in zip(models, ("minimum", "echo", "sampled")):
        own = json.loads((tmp_path / folder / "metrics.json").read_text())
        assert float(main[model]["mean W1"]) == pytest.approx(own["mean"])
        assert float(main[model]["mean W1_low"]) == pytest.approx(own["mean_ci"][0], abs=0.05)
    for table in ("continent", "education_level"):
        rows = list(csv.DictReader((out / f"{table}.csv").open(encoding="utf-8")))
        assert {r["model"] for r in rows} == set(models)
        assert all((r["rank"] == "") == (r["small"] == "true") for r in rows)
    differences = list(csv.DictReader((out / "differences.csv").open(encoding="utf-8")))
    overall = {(r["model_a"], r["model_b"]): r for r in differences if r["kind"] == "all"}
    assert overall[("minimum", "echo")]["significant"] == "true"
    assert float(overall[("minimum", "echo")]["difference"]) == pytest.approx(float(main["minimum"]["mean W1"]))
    text = " ".join(page.text)
    assert "minimum / echo / all / all" in text  # listed under "Significant differences"




def evaluate_run(out: Path, release: Path, limit: int, differ: bool) -> str:
    """``evaluate wvb`` of the scripted model answering 1 to every row (with ``differ``: 2 to the first request);
    returns the printed output."""
    asked = {"n": 0}

    def reply(text: str, body: dict) -> str:
        asked["n"] += 1
        answer = "2" if differ and asked["n"] == 1 else "1"
        return json.dumps({"thoughtful explanation": "x", "answer as a score": answer})

    with ScriptedServer(reply=reply) as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "scripted", "--base-url", server.base_url,
                                     "--release", str(release), "--out", str(out), "--limit", str(limit),
                                     "--concurrency", "1"])
    assert result.exit_code == 0, result.output
    return result.output


def test_one_participant_per_question_gives_no_interval_and_no_verdict(tmp_path, release):
    # issue #46: two runs of one model on 20 rows, one per question, one answer apart: a bootstrap over the one
    # participant of each question has no spread, and gave -0.0167 [-0.0167, -0.0167], p = 0, "significant"
    printed = evaluate_run(tmp_path / "a", release, 20, differ=False)
    evaluate_run(tmp_path / "b", release, 20, differ=True)
    own = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert own["n_questions"] == 20 and own["mean"] > 0
    assert own["mean_ci"] == [None, None] and own["std_ci"] == [None, None]
    assert all(ci == [None, None] for ci in own["per_question_ci"].values())
    assert "20 of 20 questions hold fewer than 2 participants" in own["uncertainty"]["no_spread"]
    assert any("fewer than 2 participants" in w for w in own["warnings"])
    assert "warning: wvb: 20 of 20 questions hold fewer than 2 participants" in printed
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), *RESAMPLES])
    assert result.exit_code == 0, result.output
    assert "0 significant differences, 1 without a verdict" in result.output
    assert "warning: wvb: 20 of 20 questions hold fewer than 2 participants" in result.output
    (row,) = json.loads((out / "comparison.json").read_text())["tables"]["differences"]
    assert abs(row["difference"]) == pytest.approx(1 / 60)  # one answer one step apart on a 1-4 scale, 20 questions
    assert [row[k] for k in ("difference_low", "difference_high", "pvalue", "pvalue_holm", "significant")] == [None] * 5
    page = parse_report_page(out / "report.html")
    assert "no-spread" in page.ids
    text = " ".join(page.text)
    assert "fewer than 2 participants" in text and "No difference is significant." not in text


@pytest.mark.slow
def test_two_participants_per_question_give_intervals_again(tmp_path, release):
    # the same runs with two rows per question (36 questions): every stratum can vary, so intervals and a verdict
    """Slow: two evaluate runs and a compare, each with 2,000 bootstrap resamples of W1."""
    printed = evaluate_run(tmp_path / "a", release, 72, differ=False)
    evaluate_run(tmp_path / "b", release, 72, differ=True)
    own = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert own["mean_ci"][0] < own["mean_ci"][1] and "warnings" not in own and "no_spread" not in own["uncertainty"]
    assert "fewer than 2" not in printed
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), *RESAMPLES])
    assert result.exit_code == 0 and "without a verdict" not in result.output
    (row,) = json.loads((out / "comparison.json").read_text())["tables"]["differences"]
    assert row["difference_low"] < row["difference_high"] and row["pvalue"] is not None
    assert row["significant"] is False


@pytest.mark.slow
def test_compare_reads_a_score_run_of_an_evaluate_runs_own_responses(tmp_path, release):
    # issue #46: `score` of an evaluate run's responses.jsonl wrote no run.json, and compare read that file as the
    # authors' TSV ("missing column QUESTION_ID (header has {...the whole JSON record...})")
    """Slow: an evaluate, a score and a compare, each with 2,000 bootstrap resamples of W1."""
    evaluate_run(tmp_path / "evaluated", release, 72, differ=False)
    result = runner.invoke(app, ["score", "wvb", "--responses", str(tmp_path / "evaluated" / "responses.jsonl"),
                                 "--release", str(release), "--out", str(tmp_path / "scored")])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "scored" / "run.json").read_text())
    evaluated = json.loads((tmp_path / "evaluated" / "run.json").read_text())
    assert record["command"] == "culturebench score wvb" and record["benchmark"] == "wvb"
    assert record["release"]["manifest_sha256"] == evaluated["release"]["manifest_sha256"]
    assert record["backend"] is None and "metrics.json" in record["files"]
    assert record["versions"]["culturebench"] == evaluated["versions"]["culturebench"]
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", str(tmp_path / "evaluated"), str(tmp_path / "scored"), "--out", str(out),
                                 *RESAMPLES])
    assert result.exit_code == 0, result.output
    main = {r["model"]: r for r in json.loads((out / "comparison.json").read_text())["tables"]["main"]}
    own = json.loads((tmp_path / "evaluated" / "metrics.json").read_text())["mean"]
    both = [r for name, r in main.items() if "baseline" not in name]
    assert len(both) == 2 and all(r["mean W1"] == pytest.approx(own) for r in both)


def test_an_error_quotes_a_short_excerpt_of_a_line(tmp_path, release):
    # a responses.jsonl record in a file named .tsv is read as the authors' TSV: its header is one long JSON line,
    # of which the error quotes the first 80 characters, not the whole record
    record = {"participant_id": 1, "question_id": "Q1", "output": "x" * 2000, "answer": 1}
    path = tmp_path / "answers.tsv"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["score", "wvb", "--responses", str(path), "--release", str(release),
                                              "--out", str(tmp_path / "scored")]))
    assert "missing column QUESTION_ID" in line and "characters)" in line
    assert "x" * 81 not in line and len(line) < 300


@browser_test
def test_the_report_renders_in_headless_chromium(tmp_path, release, probe, minimum_run):
    runs = []
    for name, path in (("minimum", minimum_run[0]),
                       ("echo", write_answers(tmp_path / "echo.tsv", probe, lambda r: r["answer"]))):
        assert runner.invoke(app, ["score", "wvb", "--responses", str(path), "--release", str(release),
                                   "--out", str(tmp_path / name)]).exit_code == 0
        runs.append(str(tmp_path / name))
    out = tmp_path / "report"
    assert runner.invoke(app, ["compare", *runs, "--out", str(out), *RESAMPLES]).exit_code == 0
    assert_report_renders(out / "report.html", tmp_path, ("minimum", "echo"), wvb.COMPARE)
