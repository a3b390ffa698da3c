"""Human reference points of the country view (issue #62): on the bundled sample, a run's countries.json holds per
country a uniform and an other-countries baseline equal to a computation made here from the release's parquet alone
(numpy and scipy), a ceiling within three of its standard errors of an independent 200-split computation of the
documented definition (two random halves of the country's respondents), a rank among countries equal to the one
the neighbour matrix it writes implies, and two-stage intervals at least as wide as the question-only ones; bad
input (a country too small to split, a question a country did not answer) is one line each."""

from __future__ import annotations

import itertools
import json
import os
import threading

import numpy as np
import polars as pl
import pytest
from scipy.spatial.distance import jensenshannon
from typer.testing import CliRunner

from culturebench.cli import app
from scripted_server import ScriptedServer

runner = CliRunner()
MEASURES = ("js_distance", "jsd", "w1")


def similarity(measure: str, p: np.ndarray, q: np.ndarray, width: int) -> np.ndarray:
    """1 - the Jensen-Shannon distance or divergence (base 2, scipy) or 1 - W1 / width between rows of p and q."""
    if measure == "js_distance":
        return 1 - jensenshannon(p, q, base=2, axis=-1)
    if measure == "jsd":
        return 1 - jensenshannon(p, q, base=2, axis=-1) ** 2
    return 1 - np.abs(np.cumsum(p, axis=-1) - np.cumsum(q, axis=-1)).sum(axis=-1) / width


@pytest.fixture(scope="module")
def run(sample_release, tmp_path_factory):
    """A run without demographics whose answers cycle through 1, 2, 3 (the model's own samples vary)."""
    folder = tmp_path_factory.mktemp("wvb-reference-points")
    answers, lock = itertools.cycle("123"), threading.Lock()

    def reply(text, body):
        with lock:
            return next(answers)

    before = os.environ.get("CULTUREBENCH_CACHE")
    os.environ["CULTUREBENCH_CACHE"] = str(folder / "cache")
    try:
        with ScriptedServer(reply=reply) as server:
            result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url,
                                         "--release", str(sample_release), "--out", str(folder / "run"),
                                         "--no-demographics", "--samples", "3", "--limit", "20"])
    finally:
        if before is None:
            os.environ.pop("CULTUREBENCH_CACHE")
        else:
            os.environ["CULTUREBENCH_CACHE"] = before
    assert result.exit_code == 0, result.output
    out = folder / "run"
    asked = sorted({json.loads(line)["question_id"] for line in (out / "responses.jsonl").read_text().splitlines()})
    return {"out": out, "data": json.loads((out / "countries.json").read_text()), "asked": asked,
            "cache": folder / "cache"}


@pytest.fixture(scope="module")
def humans(sample_release, run):
    """Per country and asked question: the W_WEIGHT-weighted distribution over the scale's codes and the
    respondents' (weight, code) rows; and the scales. From the parquet files only."""
    data = sample_release / "data"
    people = pl.read_parquet(data / "participants").select("participant_id", "country", "W_WEIGHT")
    answers = (pl.read_parquet(data / "examples").filter(pl.col("question_id").is_in(run["asked"]))
               .drop_nulls("answer").join(people, on="participant_id"))
    scales = {q: (lo, hi) for q, lo, hi in pl.read_parquet(data / "questions")
              .select("question_id", "scale_min", "scale_max").iter_rows()}
    return people, answers, scales


def weighted_shares(rows: pl.DataFrame, low: int, high: int) -> np.ndarray | None:
    codes = np.arange(low, high + 1)
    weights = np.array([rows.filter(pl.col("answer") == c)["W_WEIGHT"].sum() for c in codes], dtype=float)
    return weights / weights.sum() if weights.sum() > 0 else None


def test_baselines_equal_an_independent_computation_from_the_parquet(run, humans):
    people, answers, scales = humans
    data = run["data"]
    assert set(data["countries"]) == set(people["country"].unique())
    for country, entry in data["countries"].items():
        expected = {f"{kind}_{m}": [] for kind in ("uniform", "others") for m in MEASURES}
        for question in run["asked"]:
            low, high = scales[question]
            rows = answers.filter(pl.col("question_id") == question)
            own = weighted_shares(rows.filter(pl.col("country") == country), low, high)
            if own is None:
                continue
            uniform = np.full(high - low + 1, 1 / (high - low + 1))
            elsewhere = weighted_shares(rows.filter(pl.col("country") != country), low, high)
            for m in MEASURES:
                expected[f"uniform_{m}"].append(similarity(m, uniform, own, high - low))
                expected[f"others_{m}"].append(similarity(m, elsewhere, own, high - low))
        for key, values in expected.items():
            assert entry[key] == pytest.approx(float(np.mean(values)), abs=1e-9), (country, key)
            m = key.split("_", 1)[1]
            assert entry[f"margin_{key}"] == pytest.approx(entry[f"similarity_{m}"] - entry[key], abs=1e-12)
    metrics = json.loads((run["out"] / "metrics.json").read_text())["countries"]
    assert metrics["mean_uniform_jsd"] == pytest.approx(
        np.mean([e["uniform_jsd"] for e in data["countries"].values()]), abs=1e-12)


def test_the_ceiling_is_within_three_standard_errors_of_an_independent_200_split_computation(run, humans):
    people, answers, scales = humans
    rng = np.random.default_rng(20261201)
    asked = run["asked"]
    for country, entry in run["data"]["countries"].items():
        ids = people.filter(pl.col("country") == country)["participant_id"].to_numpy()
        mine = answers.filter(pl.col("country") == country)
        # respondents x questions: code (or -1) and weight
        pid = {p: i for i, p in enumerate(ids)}
        codes = np.full((ids.size, len(asked)), -1)
        weight = dict(zip(people["participant_id"], people["W_WEIGHT"]))
        for p, q, a in mine.select("participant_id", "question_id", "answer").iter_rows():
            codes[pid[p], asked.index(q)] = a
        w = np.array([weight[p] for p in ids])
        per_split = {m: [] for m in MEASURES}
        for _ in range(200):
            first = np.zeros(ids.size, dtype=bool)
            first[rng.permutation(ids.size)[: ids.size // 2]] = True
            values = {m: [] for m in MEASURES}
            for j, question in enumerate(asked):
                low, high = scales[question]
                halves = []
                for part in (first, ~first):
                    counts = np.array([w[part & (codes[:, j] == c)].sum() for c in range(low, high + 1)])
                    halves.append(counts / counts.sum() if counts.sum() > 0 else None)
                if halves[0] is None or halves[1] is None:
                    continue
                for m in MEASURES:
                    values[m].append(similarity(m, halves[0], halves[1], high - low))
            for m in MEASURES:
                per_split[m].append(np.mean(values[m]))
        for m in MEASURES:
            assert entry[f"ceiling_se_{m}"] > 0
            assert abs(entry[f"ceiling_{m}"] - np.mean(per_split[m])) <= 3 * entry[f"ceiling_se_{m}"], (country, m)


def test_the_rank_among_countries_is_the_one_the_written_matrix_implies(run, humans):
    people, answers, scales = humans
    data = run["data"]
    written = json.loads((run["out"] / data["reference_points"]["neighbours_file"]).read_text())
    codes = written["countries"]
    assert written["rows"] == [*codes, "model"] and sorted(codes) == sorted(data["countries"])
    for m in MEASURES:
        matrix = np.array(written["measures"][f"similarity_{m}"], dtype=float)
        for j, country in enumerate(codes):
            model = matrix[-1, j]
            assert model == pytest.approx(data["countries"][country][f"similarity_{m}"], abs=1e-12)
            others = np.delete(matrix[:-1, j], j)
            rank = data["countries"][country][f"rank_among_countries_{m}"]
            assert rank == {"rank": 1 + int((others > model).sum()), "closer_than": int((others < model).sum()),
                            "of": codes.__len__() - 1}
            nearest = [codes[a] for a in sorted((a for a in range(len(codes)) if a != j),
                                                key=lambda a: (-matrix[a, j], codes[a]))[:3]]
            assert data["countries"][country][f"nearest_{m}"] == nearest
    # one entry of the matrix from the parquet: Argentina's respondents in the model's place, compared with Brazil
    pair = []
    for question in run["asked"]:
        low, high = scales[question]
        rows = answers.filter(pl.col("question_id") == question)
        a, b = (weighted_shares(rows.filter(pl.col("country") == c), low, high) for c in ("ARG", "BRA"))
        if a is not None and b is not None:
            pair.append(similarity("jsd", a, b, high - low))
    matrix = written["measures"]["similarity_jsd"]
    assert matrix[codes.index("ARG")][codes.index("BRA")] == pytest.approx(float(np.mean(pair)), abs=1e-9)
    assert list(run["cache"].glob("neighbours/*.npz")), "the per-question matrices are cached"
    assert (run["out"] / "countries_neighbours.png").stat().st_size > 10_000


def test_two_stage_intervals_are_at_least_as_wide_as_the_question_only_ones(run):
    data = run["data"]
    assert data["reference_points"]["intervals"] == "two_stage"
    for country, entry in data["countries"].items():
        for m in MEASURES:
            low, high = entry[f"interval_{m}"]
            q_low, q_high = entry[f"interval_questions_{m}"]
            assert high - low >= q_high - q_low, (country, m)
            assert entry[f"model_spread_{m}"] > 0  # the model's answers vary: its samples' spread is reported


def test_a_country_too_small_to_split_and_an_unanswered_question_are_one_line_each():
    from culturebench.evaluate.reports import uncertainty
    from culturebench.evaluate.wvb.reference_points import ModelRequests, Respondents, reference_points

    # country A: 6 respondents answering both questions; country B: one respondent, who skipped question 2
    answers = np.array([[0, 1], [1, 2], [2, 0], [0, 0], [1, 1], [2, 2], [1, -1]], dtype=np.int8)
    respondents = Respondents(["q1", "q2"], ["A", "B"], answers, np.array([0, 0, 0, 0, 0, 0, 1]),
                              np.ones(7), np.array([2.0, 2.0]))
    model = ModelRequests(np.array([[[1, 0, 0], [0, 1, 0]], [[0, 0, 1], [0, 0, 1]]], dtype=float), np.array([2, 2]))
    view = {"A": {"similarity_jsd": 0.5, "interval_jsd": [0.4, 0.6]},
            "B": {"similarity_jsd": 0.5, "interval_jsd": [None, None]}}
    neighbours = {"jsd": np.full((2, 2, 2), 0.5)}
    points = reference_points(view, respondents, model, neighbours,
                              settings=uncertainty.Bootstrap(n_resamples=50), intervals="two_stage")
    assert points.fields["A"]["ceiling_jsd"] is not None and points.fields["B"]["ceiling_jsd"] is None
    assert len(points.notes) == 2
    assert "no ceiling: B" in points.notes[0] and "B (1)" in points.notes[1]
    assert points.fields["B"]["uniform_jsd"] == pytest.approx(
        1 - jensenshannon([1 / 3] * 3, [0, 1, 0], base=2) ** 2, abs=1e-12)


def test_compare_calls_a_country_difference_significant_only_when_the_two_stage_intervals_part():
    from culturebench.evaluate.wvb.reference_points import differences

    def view(intervals, entries):
        return {"measure": "similarity_jsd", "reference_points": {"intervals": intervals},
                "countries": {c: {"similarity_jsd": v, "interval_jsd": b} for c, (v, b) in entries.items()}}

    first = view("two_stage", {"ARG": (0.5, [0.45, 0.55]), "BRA": (0.5, [0.45, 0.55])})
    second = view("two_stage", {"ARG": (0.7, [0.6, 0.8]), "BRA": (0.56, [0.5, 0.6])})
    table = differences({"a": first, "b": second}).sort("country")
    assert table["difference"].to_list() == pytest.approx([0.2, 0.06])
    assert table["significant"].to_list() == [True, False]
    questions_only = view("questions", {"ARG": (0.7, [0.6, 0.8]), "BRA": (0.56, [0.5, 0.6])})
    assert differences({"a": first, "b": questions_only})["significant"].to_list() == [None, None]


def test_the_neighbour_heatmap_is_readable(run, tmp_path, saved_figures):
    from conftest import assert_figure_readable
    from culturebench.evaluate.reports.country_plots import neighbour_heatmap_png

    written = json.loads((run["out"] / "countries_neighbours.json").read_text())
    names = {c: e["name"] for c, e in run["data"]["countries"].items()}
    neighbour_heatmap_png(written["measures"]["similarity_jsd"], written["countries"], names, tmp_path / "n.png",
                          label="similarity jsd", title="respondents' similarity")
    assert_figure_readable(dict(saved_figures)["n.png"], "n.png")


def test_profile_states_what_the_view_rests_on_and_places_the_model(run, tmp_path):
    result = runner.invoke(app, ["profile", str(run["out"]), "--out", str(tmp_path / "profile")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "profile" / "profile.html").read_text()
    n = [e["n_questions"] for e in run["data"]["countries"].values()]
    low, high = run["data"]["samples_per_question"]
    assert high == 3 and 1 <= low <= 3  # --samples 3; answers off a question's scale are not counted
    assert f"items per country: {min(n)}" in page and f"samples per question: {low}{'' if low == 3 else '-3'}" in page
    assert "reading: samples" in page and "intervals: two-stage" in page
    assert "Intervals on fewer than 30 items" in page  # 20 questions asked
    short = run["data"]["measure"].removeprefix("similarity_")
    arg = run["data"]["countries"]["ARG"][f"rank_among_countries_{short}"]
    assert f"{arg['closer_than']} of {arg['of']} countries" in page


def test_country_intervals_questions_keeps_the_question_only_interval(sample_release, tmp_path, monkeypatch):
    monkeypatch.setenv("CULTUREBENCH_CACHE", str(tmp_path / "cache"))
    with ScriptedServer(reply="1") as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(sample_release), "--out", str(tmp_path / "run"),
                                     "--no-demographics", "--samples", "2", "--limit", "12",
                                     "--country-intervals", "questions"])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "run" / "countries.json").read_text())
    assert data["reference_points"]["intervals"] == "questions"
    for entry in data["countries"].values():
        for m in MEASURES:
            assert entry[f"interval_{m}"] == entry[f"interval_questions_{m}"]
            low, high = entry[f"interval_{m}"]
            assert low <= entry[f"similarity_{m}"] <= high
            assert entry[f"model_spread_{m}"] == pytest.approx(0.0, abs=1e-12)  # every answer "1": no spread
