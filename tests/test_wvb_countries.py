"""Whose opinions (issue #56): ``evaluate wvb --no-demographics`` on the bundled sample against a server that always
answers "1" writes countries.json whose similarities equal, for every country, a computation made here from the
release's parquet files alone (numpy and scipy, none of culturebench's scoring); ``--steer country`` names every
country in words in its prompts; a map and a ranked plot are written and readable; bad input is one line."""

from __future__ import annotations

import json
import shutil

import numpy as np
import polars as pl
import pytest
from scipy.spatial.distance import jensenshannon
from typer.testing import CliRunner

from conftest import assert_figure_readable
from culturebench.cli import app
from scripted_server import ScriptedServer

runner = CliRunner()


def evaluate(release, out, *extra, reply="1"):
    with ScriptedServer(reply=reply) as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(release), "--out", str(out), "--no-demographics",
                                     "--samples", "3", "--limit", "20", *extra])
        bodies = list(server.bodies)
    assert result.exit_code == 0, result.output
    return result, bodies


def expected_similarities(release, asked: list[str], stated: dict[int, float] | None = None, weighted: bool = True
                          ) -> dict[str, tuple[float, float, float, int]]:
    """Per country: mean over the asked questions it answered of 1 - Jensen-Shannon distance (scipy's, base 2:
    GlobalOpinionQA's), 1 - JSD (base 2) and 1 - W1/(max - min) between
    the model (a point mass on code 1: every answer "1"; or the ``stated`` shares of the codes on the scale,
    renormalised) and the country's W_WEIGHT-weighted answers (or, not ``weighted``, its answers counted once),
    read from the parquet."""
    data = release / "data"
    people = pl.read_parquet(data / "participants").select("participant_id", "country", "W_WEIGHT")
    answers = pl.read_parquet(data / "examples").filter(pl.col("question_id").is_in(asked))
    scales = {q: (lo, hi) for q, lo, hi in pl.read_parquet(data / "questions")
              .select("question_id", "scale_min", "scale_max").iter_rows()}
    joined = answers.join(people, on="participant_id")
    out = {}
    for country in sorted(people["country"].unique()):
        distance, jsd, w1 = [], [], []
        for question in asked:
            rows = joined.filter((pl.col("country") == country) & (pl.col("question_id") == question))
            if rows.height == 0:
                continue
            low, high = scales[question]
            codes = np.arange(low, high + 1)
            human = np.array([rows.filter(pl.col("answer") == c)["W_WEIGHT"].sum() if weighted
                              else rows.filter(pl.col("answer") == c).height for c in codes], dtype=float)
            human /= human.sum()
            model = (codes == 1).astype(float) if stated is None else np.array([stated.get(c, 0.0) for c in codes])
            model /= model.sum()
            distance.append(1 - jensenshannon(model, human, base=2))
            jsd.append(1 - jensenshannon(model, human, base=2) ** 2)
            w1.append(1 - np.abs(np.cumsum(model) - np.cumsum(human)).sum() / (high - low))
        out[country] = (float(np.mean(distance)), float(np.mean(jsd)), float(np.mean(w1)), len(jsd))
    return out


@pytest.fixture(scope="module")
def runs(sample_release, tmp_path_factory):
    """A run without demographics (every answer "1") and the same run with --steer country, with the prompts
    the server received."""
    folder = tmp_path_factory.mktemp("wvb-countries")
    plain, _ = evaluate(sample_release, folder / "plain")
    steered, bodies = evaluate(sample_release, folder / "steered", "--steer", "country")
    return {"plain": folder / "plain", "steered": folder / "steered", "bodies": bodies}


def test_countries_json_equals_an_independent_computation_from_the_parquet(sample_release, runs):
    out = runs["plain"]
    data = json.loads((out / "countries.json").read_text())
    asked = sorted({json.loads(line)["question_id"] for line in (out / "responses.jsonl").read_text().splitlines()})
    assert len(asked) == 20
    expected = expected_similarities(sample_release, asked)
    assert set(data["countries"]) == set(expected)
    for country, (distance, jsd, w1, n) in expected.items():
        got = data["countries"][country]
        assert got["similarity_js_distance"] == pytest.approx(distance, abs=1e-12), country
        assert got["similarity_jsd"] == pytest.approx(jsd, abs=1e-6), country
        assert got["similarity_w1"] == pytest.approx(w1, abs=1e-6), country
        assert got["n_questions"] == n
        low, high = got["interval_jsd"]
        assert low <= got["similarity_jsd"] <= high
    assert data["measure"] == "similarity_js_distance" and "base 2" in data["measure_label"]
    assert data["weighted"] is True and data["weights"] == "design" and data["reading"] == "samples"
    assert all(got["name"] for got in data["countries"].values())
    metrics = json.loads((out / "metrics.json").read_text())["countries"]
    best = max(expected, key=lambda c: expected[c][0])
    assert metrics["measure"] == "similarity_js_distance" and metrics["weights"] == "design"
    assert metrics["most_similar"][0]["country"] == best and len(metrics["least_similar"]) == 5
    run = json.loads((out / "run.json").read_text())
    assert run["evaluation"]["reading"] == "samples" and run["evaluation"]["weights"] == "design"
    assert (out / "countries_map.png").stat().st_size > 10_000 and (out / "countries_ranked.png").is_file()


def test_the_map_and_the_ranked_plot_are_readable(runs, tmp_path, saved_figures):
    from culturebench.evaluate.reports.country_plots import series, write_figures

    data = json.loads((runs["steered"] / "countries.json").read_text())
    write_figures(data, tmp_path, extra_series=[("steered", series(data, "steered_jsd", "interval_steered_jsd"))])
    assert {name for name, _ in saved_figures} == {"countries_map.png", "countries_ranked.png"}
    for name, fig in saved_figures:
        assert_figure_readable(fig, name)


def test_steer_country_names_every_country_in_its_prompts_and_reports_the_gain(runs):
    out, bodies = runs["steered"], runs["bodies"]
    names = {code: entry["name"] for code, entry in
             json.loads((out / "countries.json").read_text())["countries"].items()}
    prompts = [body["messages"][-1]["content"] for body in bodies]
    for code, name in names.items():
        named = [p for p in prompts if f"someone from {name} " in p]
        assert len(named) == 20 * 3, (code, name)  # every question asked, --samples 3
        assert not any(f" {code} " in p or f"{code}?" in p for p in named)
    unsteered = [p for p in prompts if "someone from" not in p]
    assert len(unsteered) == 20 * 3 and len(prompts) == 20 * 3 * (1 + len(names))
    data = json.loads((out / "countries.json").read_text())
    for entry in data["countries"].values():  # the server answers "1" whatever the country: no gain
        assert entry["gain_jsd"] == pytest.approx(0.0, abs=1e-12)
        assert entry["steered_jsd"] == pytest.approx(entry["similarity_jsd"], abs=1e-12)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["countries"]["mean_gain_jsd"] == pytest.approx(0.0, abs=1e-12)
    # the pooled W1 of the run is the unsteered answers' only: as without --steer
    assert metrics["mean"] == json.loads((runs["plain"] / "metrics.json").read_text())["mean"]


def test_specificity_compares_the_steered_country_with_every_other(sample_release, runs):
    """Every answer is "1" whatever the country named, so the model steered to c is the point mass on code 1 and
    its similarity to each country d is d's unsteered one (computed here from the parquet): specificity is c's
    minus the mean of the others', rank c's place among all (issue #61)."""
    out = runs["steered"]
    asked = sorted({json.loads(line)["question_id"] for line in (out / "responses.jsonl").read_text().splitlines()})
    expected = expected_similarities(sample_release, asked)
    data = json.loads((out / "countries.json").read_text())["countries"]
    for code, entry in data.items():
        for index, measure in ((0, "js_distance"), (1, "jsd"), (2, "w1")):
            own = expected[code][index]
            others = [value[index] for other, value in expected.items() if other != code]
            assert entry[f"steered_others_{measure}"] == pytest.approx(np.mean(others), abs=1e-9), code
            assert entry[f"specificity_{measure}"] == pytest.approx(own - np.mean(others), abs=1e-9), code
            assert entry[f"rank_{measure}"] == 1 + sum(value > own + 1e-12 for value in others), code
        assert entry["n_others"] == len(expected) - 1
    headline = json.loads((out / "metrics.json").read_text())["countries"]
    assert headline["n_steered"] == len(expected)
    assert headline["mean_specificity_jsd"] == pytest.approx(
        np.mean([e["specificity_jsd"] for e in data.values()]), abs=1e-12)


def test_steer_countries_steers_a_subset(sample_release, tmp_path):
    out = tmp_path / "subset"
    _, bodies = evaluate(sample_release, out, "--steer", "country", "--steer-countries", "KEN,ARG")
    prompts = [body["messages"][-1]["content"] for body in bodies]
    assert len([p for p in prompts if "someone from Kenya " in p]) == 20 * 3
    assert len([p for p in prompts if "someone from Argentina " in p]) == 20 * 3
    assert len(prompts) == 20 * 3 * 3
    data = json.loads((out / "countries.json").read_text())["countries"]
    assert sorted(code for code, entry in data.items() if entry.get("steered_jsd") is not None) == ["ARG", "KEN"]


def test_compare_puts_runs_and_steering_side_by_side_per_country(runs, tmp_path, saved_figures):
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", str(runs["plain"]), str(runs["steered"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    table = pl.read_csv(out / "countries.csv")
    plain = json.loads((runs["plain"] / "countries.json").read_text())["countries"]
    assert table["run"].n_unique() == 3 and table.height == 3 * len(plain)  # plain, steered run, its steered answers
    first = table.filter(pl.col("run") == table["run"][0])
    assert set(table["measure"]) == {"similarity_js_distance"}
    assert dict(zip(first["country"], first["similarity"])) == pytest.approx(
        {c: e["similarity_js_distance"] for c, e in plain.items()})
    assert_figure_readable(dict(saved_figures)["countries.png"], "countries.png")


def test_verbalized_reading_reads_the_stated_distribution(sample_release, tmp_path):
    out = tmp_path / "verbalized"
    evaluate(sample_release, out, "--reading", "verbalized", reply='{"1": 0.25, "2": 0.75}')
    data = json.loads((out / "countries.json").read_text())
    assert data["reading"] == "verbalized"
    asked = sorted({json.loads(line)["question_id"] for line in (out / "responses.jsonl").read_text().splitlines()})
    for country, (_, jsd, w1, _) in expected_similarities(sample_release, asked, {1: 0.25, 2: 0.75}).items():
        assert data["countries"][country]["similarity_jsd"] == pytest.approx(jsd, abs=1e-6), country
        assert data["countries"][country]["similarity_w1"] == pytest.approx(w1, abs=1e-6), country


def test_weights_none_counts_each_respondent_once(sample_release, tmp_path):
    """--weights none (Liu, Kaneko and Chu 2025's count): the countries' distributions unweighted, said in
    countries.json, metrics.json and run.json; the numbers differ from the design-weighted ones."""
    out = tmp_path / "unweighted"
    evaluate(sample_release, out, "--weights", "none")
    data = json.loads((out / "countries.json").read_text())
    assert data["weights"] == "none" and data["weighted"] is False
    assert json.loads((out / "run.json").read_text())["evaluation"]["weights"] == "none"
    assert json.loads((out / "metrics.json").read_text())["countries"]["weights"] == "none"
    asked = sorted({json.loads(line)["question_id"] for line in (out / "responses.jsonl").read_text().splitlines()})
    unweighted = expected_similarities(sample_release, asked, weighted=False)
    weighted = expected_similarities(sample_release, asked)
    for country, (distance, jsd, w1, _) in unweighted.items():
        got = data["countries"][country]
        assert got["similarity_js_distance"] == pytest.approx(distance, abs=1e-12), country
        assert got["similarity_jsd"] == pytest.approx(jsd, abs=1e-6), country
        assert got["similarity_w1"] == pytest.approx(w1, abs=1e-6), country
    assert any(abs(unweighted[c][0] - weighted[c][0]) > 1e-6 for c in unweighted)


def test_verbalized_reading_counts_read_distributions_and_scores_no_overflowing_one(sample_release, tmp_path):
    """Every stated distribution read: no "unreadable" warning and each record's status says so; shares of 1e308
    (their sum overflows) are unreadable, counted in the notes, and no country gets a similarity from them."""
    result, _ = evaluate(sample_release, tmp_path / "read", "--reading", "verbalized", reply='{"1": 0.25, "2": 0.75}')
    records = [json.loads(line) for line in (tmp_path / "read" / "responses.jsonl").read_text().splitlines()]
    assert {r["parse_status"] for r in records} == {"distribution"}
    assert f"{len(records)} read, 0 unreadable" in result.output and "unreadable" not in result.output.split("\n", 1)[1]
    metrics = json.loads((tmp_path / "read" / "metrics.json").read_text())
    assert metrics["n_unparsed"] == 0 and metrics["n_parsed"] == len(records)
    result, _ = evaluate(sample_release, tmp_path / "huge", "--reading", "verbalized", reply='{"1": 1e308, "2": 1e308}')
    records = [json.loads(line) for line in (tmp_path / "huge" / "responses.jsonl").read_text().splitlines()]
    assert {r["parse_status"] for r in records} == {"no_distribution"}
    data = json.loads((tmp_path / "huge" / "countries.json").read_text())
    assert all(e["similarity_jsd"] is None for e in data["countries"].values())
    assert any(f"{len(records)} of {len(records)} verbalized distributions unreadable" in n for n in data["notes"])
    assert f"{len(records)} of {len(records)}" in " ".join(result.output.split())


def test_steer_on_a_release_without_country_names_is_one_line(sample_release, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(sample_release, release)
    for path in (release / "data" / "participants").glob("*.parquet"):
        pl.read_parquet(path).with_columns(pl.lit("XXA").alias("country")).write_parquet(path)
    with ScriptedServer(reply="1") as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url, "--release",
                                     str(release), "--out", str(tmp_path / "run"), "--no-demographics", "--steer",
                                     "country", "--limit", "5", "--samples", "1",
                                     "--allow-modified-release"])
    assert result.exit_code != 0
    assert "no names culturebench knows" in result.output and "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) <= 2


def test_a_country_whose_steered_answers_do_not_parse_is_named_in_the_notes(sample_release, tmp_path):
    """Steered to the first country, the model answers nothing readable: that country has no steered value, and the
    notes (and the console) say so; every other country keeps its steered value."""
    from culturebench.evaluate.wvb.opinions import steering_countries

    (code, name), *_ = steering_countries(sample_release)[0]
    out = tmp_path / "run"
    result, _ = evaluate(sample_release, out, "--steer", "country",
                         reply=lambda text, body: "I cannot say." if f"someone from {name} " in text else "1")
    data = json.loads((out / "countries.json").read_text())
    assert data["countries"][code]["steered_jsd"] is None
    assert all(e["steered_jsd"] is not None for c, e in data["countries"].items() if c != code)
    line = f"no steered value (no readable answer when steered to the country): {code}"
    assert line in data["notes"] and line in " ".join(result.output.split())


def test_steer_needs_no_demographics(sample_release, tmp_path):
    result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                 "--release", str(sample_release), "--out", str(tmp_path / "run"), "--steer",
                                 "country"])
    assert result.exit_code != 0 and "--no-demographics" in result.output


def test_scoring_logprobs_reads_the_options_probabilities(sample_release, tmp_path):
    """Every answer says "1" while the model puts 0.25 on "1" and 0.75 on "2": under --scoring logprobs the
    model's distribution is the probabilities', not the point mass of the text."""
    import math

    out = tmp_path / "logprobs"
    with ScriptedServer(reply="1", logprobs=lambda text, body, reply: [{"1": math.log(0.25), "2": math.log(0.75)}]
                        ) as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(sample_release), "--out", str(out), "--no-demographics",
                                     "--samples", "2", "--limit", "8", "--scoring", "logprobs"],
                               env={"OPENAI_API_KEY": "sk-test-logprobs"})
    assert result.exit_code == 0, result.output
    data = json.loads((out / "countries.json").read_text())
    assert data["reading"] == "logprobs"
    asked = sorted({json.loads(line)["question_id"] for line in (out / "responses.jsonl").read_text().splitlines()})
    for country, (_, jsd, w1, _) in expected_similarities(sample_release, asked, {1: 0.25, 2: 0.75}).items():
        assert data["countries"][country]["similarity_jsd"] == pytest.approx(jsd, abs=1e-6), country
        assert data["countries"][country]["similarity_w1"] == pytest.approx(w1, abs=1e-6), country


def test_globalopinionqa_measure_is_one_minus_scipys_jensenshannon_base_2_per_question():
    """similarity_table on random distributions (zeros included): js_distance = 1 - scipy's jensenshannon(base=2),
    jsd its square's complement, w1 = 1 - W1 / (N - 1) (scipy's wasserstein_distance), per question."""
    from scipy.stats import wasserstein_distance

    from culturebench.evaluate.wvb.opinions import similarity_table

    rng = np.random.default_rng(7)
    model, humans, questions, expected = [], [], [], {}
    for i, (low, high) in enumerate([(1, 4), (1, 10), (0, 2), (1, 2)]):
        question, codes = f"Q{i + 1}", np.arange(low, high + 1)
        p, q = rng.random(len(codes)), rng.random(len(codes))
        p[rng.integers(len(codes))] = 0.0
        p, q = p / p.sum(), q / q.sum()
        model += [(None, question, int(c), float(v)) for c, v in zip(codes, p) if v > 0]
        humans += [("ARG", question, int(c), float(v)) for c, v in zip(codes, q)]
        questions.append((question, low, high))
        expected[question] = (1 - jensenshannon(p, q, base=2), 1 - jensenshannon(p, q, base=2) ** 2,
                              1 - wasserstein_distance(codes, codes, p, q) / (len(codes) - 1))
    table = similarity_table(
        pl.DataFrame(model, schema={"steer": pl.String, "question_id": pl.String, "code": pl.Int64,
                                    "share": pl.Float64}, orient="row"),
        pl.DataFrame(humans, schema={"country": pl.String, "question_id": pl.String, "code": pl.Int64,
                                     "share": pl.Float64}, orient="row"),
        pl.DataFrame(questions, schema={"question_id": pl.String, "scale_min": pl.Int64, "scale_max": pl.Int64},
                     orient="row"))
    assert table.height == len(expected)
    for row in table.iter_rows(named=True):
        distance, jsd, w1 = expected[row["question_id"]]
        assert row["js_distance"] == pytest.approx(distance, abs=1e-12)
        assert row["jsd"] == pytest.approx(jsd, abs=1e-12)
        assert row["w1"] == pytest.approx(w1, abs=1e-12)
