"""Bootstrap intervals (issue #18): the shared machinery (``evaluate.reports.uncertainty``) against scipy's own bootstrap
called here independently and against cases with a known answer, and CDEval's intervals over questions (point
estimates unchanged, intervals contain them, shrink with more questions, same seed -> same interval)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from culturebench.evaluate import cdeval
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.cdeval import prompts

FEW = uncertainty.Bootstrap(n_resamples=500, seed=3)


# ------------------------------------------------------------------------------------------------ shared machinery


def test_mean_interval_is_scipys_bootstrap_of_the_mean():
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    got = uncertainty.mean_interval([*values, None, float("nan")], FEW)  # None and NaN dropped
    expected = stats.bootstrap((np.asarray(values),), np.mean, n_resamples=500, method="percentile",
                               rng=np.random.default_rng(3)).confidence_interval
    assert got["n"] == 10 and got["estimate"] == 0.7
    assert (got["low"], got["high"]) == (pytest.approx(expected.low), pytest.approx(expected.high))


def test_resample_units_of_a_mean_equals_scipys_bootstrap_on_the_values():
    # one stratum, statistic = mean of the units at the positions: the same draws as bootstrapping the values
    values = np.asarray([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    got = uncertainty.resample_units([range(8)], lambda pos: np.asarray([values[pos].mean()]), FEW)
    expected = stats.bootstrap((values,), np.mean, n_resamples=500, method="percentile", vectorized=False,
                               rng=np.random.default_rng(3)).confidence_interval
    assert got.estimate[0] == values.mean()
    assert got.interval(0) == [pytest.approx(expected.low), pytest.approx(expected.high)]


def test_positions_beyond_int32_reach_the_statistic_unchanged():
    # positions are narrowed to int32 only when every one fits (scipy's copies of them are its largest arrays);
    # a caller's positions past 2**31 must arrive as given, in every resample
    far = 2 ** 31 + 5
    seen = set()

    def statistic(pos: np.ndarray) -> np.ndarray:
        seen.update(int(p) for p in pos)
        return np.asarray([float(len(pos))])

    uncertainty.resample_units([[far, far + 1, far + 2]], statistic, FEW)
    assert seen == {far, far + 1, far + 2}


def test_degenerate_cases_have_known_intervals():
    # every value equal: the interval is the value itself
    assert uncertainty.mean_interval([0.5] * 7, FEW) == {"n": 7, "estimate": 0.5, "low": 0.5, "high": 0.5}
    # one value: no interval
    assert uncertainty.mean_interval([0.5], FEW)["low"] is None
    # strata of one unit each: nothing can vary, and a resampled spread of 0 is no estimate of the spread (issue
    # #46: it gave zero-width intervals and p = 0): no interval, no p-value, and the reason
    got = uncertainty.resample_units([[0], [1]], lambda pos: np.asarray([float(pos.sum())]), FEW, unit="question",
                                     stratum="dimension")
    assert got.interval(0) == [None, None] and got.pvalue(0) is None
    assert got.no_spread().startswith("2 of 2 dimensions hold fewer than 2 questions")


def test_only_numbers_drawn_on_strata_of_two_or_more_units_get_an_interval_and_a_pvalue():
    # stratum 0 holds three units, stratum 1 one: a number of stratum 0 alone is bootstrapped as before (scipy's
    # own bootstrap of its values), a number that draws on stratum 1 too has no interval, p-value or verdict
    values = np.asarray([0.0, 1.0, 3.0, 10.0])

    def statistic(pos: np.ndarray) -> np.ndarray:
        return np.asarray([values[pos[pos < 3]].mean(), values[pos].mean()])

    got = uncertainty.resample_units([[0, 1, 2], [3]], statistic, FEW)
    expected = stats.bootstrap((values[:3],), np.mean, n_resamples=500, method="percentile", vectorized=False,
                               rng=np.random.default_rng(3)).confidence_interval
    assert got.interval(0, strata=[0]) == [pytest.approx(expected.low), pytest.approx(expected.high)]
    assert got.pvalue(0, strata=[0]) is not None and got.no_spread([0]) is None
    assert got.interval(1) == [None, None] and got.pvalue(1) is None
    assert "1 of 2 strata holds fewer than 2 units" in got.no_spread()
    rows = uncertainty.holm_significance([{"pvalue": None}], FEW, no_spread=[got.no_spread()])
    assert rows == [{"pvalue": None, "pvalue_holm": None, "significant": None}]


def test_strata_are_resampled_within_themselves():
    # stratum A holds 0s, stratum B 1s: every resample keeps 3 of each, so the share of 1s is always exactly 0.5
    values = np.asarray([0, 0, 0, 1, 1, 1], dtype=float)
    got = uncertainty.resample_units([[0, 1, 2], [3, 4, 5]], lambda pos: np.asarray([values[pos].mean()]), FEW)
    assert got.interval(0) == [0.5, 0.5]
    # pooled into one stratum the share varies
    pooled = uncertainty.resample_units([range(6)], lambda pos: np.asarray([values[pos].mean()]), FEW)
    assert pooled.interval(0)[0] < 0.5 < pooled.interval(0)[1]


def test_same_seed_same_interval_other_seed_other_interval():
    rng = np.random.default_rng(0)
    values = rng.normal(size=40)
    a = uncertainty.mean_interval(values, FEW)
    assert uncertainty.mean_interval(values, FEW) == a
    assert uncertainty.mean_interval(values, uncertainty.Bootstrap(n_resamples=500, seed=4)) != a


def test_intervals_contain_the_estimate_and_shrink_with_more_data():
    rng = np.random.default_rng(1)
    small = uncertainty.mean_interval(rng.binomial(1, 0.3, size=30), FEW)
    large = uncertainty.mean_interval(rng.binomial(1, 0.3, size=3000), FEW)
    for r in (small, large):
        assert r["low"] <= r["estimate"] <= r["high"]
    # the width of a mean's interval goes as 1/sqrt(n): 100 times the data, about a tenth of the width
    assert (large["high"] - large["low"]) < 0.2 * (small["high"] - small["low"])


def test_bootstrap_pvalue_by_hand():
    # distribution [-1, 1]: SE = sqrt(2) (ddof 1); estimate 1 -> z = 1/sqrt(2); p = 2 (1 - Phi(z)) = 0.4795
    assert uncertainty.bootstrap_pvalue([-1.0, 1.0], 1.0) == pytest.approx(2 * stats.norm.sf(1 / np.sqrt(2)))
    assert uncertainty.bootstrap_pvalue([-1.0, 1.0], 1.0) == pytest.approx(0.4795, abs=1e-4)
    # an estimate 3 standard errors away: p = 0.0027 whatever the number of resamples
    assert uncertainty.bootstrap_pvalue([2.0, 4.0], 3 * np.sqrt(2)) == pytest.approx(0.0027, abs=1e-4)
    assert uncertainty.bootstrap_pvalue([0.0] * 5, 0.0) == 1.0
    assert uncertainty.bootstrap_pvalue([0.2] * 5, 0.2) == 0.0
    assert uncertainty.bootstrap_pvalue([float("nan")], 0.0) is None


def test_group_breakdown_flags_small_groups_and_ranks_the_others():
    values = [1.0] * 30 + [0.0] * 10 + [0.5, 0.7] * 20 + [1.0] * 3
    groups = ["A"] * 40 + ["B"] * 40 + ["tiny"] * 3
    rows = uncertainty.group_breakdown(values, groups, FEW, minimum=30)
    assert [(r["group"], r["n"], r["rank"], r["small"]) for r in rows] == [
        ("A", 40, 1, False), ("B", 40, 2, False), ("tiny", 3, None, True)]
    assert rows[0]["estimate"] == 0.75 and rows[1]["estimate"] == pytest.approx(0.6)
    assert rows[2]["estimate"] == 1.0  # reported, with its size, but not ranked above A


# ------------------------------------------------------------------------------------------------ CDEval


def cdeval_case(n_per_dimension: int, bias: dict[str, float], seed: int = 0):
    """A release of ``n_per_dimension`` questions per dimension (domains in turn) and answers of models that pick
    the target orientation with probability ``bias[model]`` (3 samples per prompt)."""
    rng = np.random.default_rng(seed)
    questions, responses = [], []
    for d in cdeval.DIMENSIONS:
        for j in range(n_per_dimension):
            questions.append({"id": f"{d}{j}", "question_id": f"{d}{j}", "dimension": d,
                              "domain": cdeval.DOMAINS[j % 7], "question": "Q?", "option_1": "alpha plan",
                              "option_2": "beta plan"})
    for model, p in bias.items():
        for q in questions:
            for prompt in prompts.PROMPTS:
                for k in range(3):
                    target = bool(rng.random() < p)
                    answer = {"ab_norm": "AB"[not target], "ab_reverse": "BA"[not target],
                              "repeat_norm": ("beta plan", "alpha plan")[target],
                              "repeat_reverse": ("beta plan", "alpha plan")[target],
                              "compare_norm": ("No", "Yes")[target], "compare_reverse": ("Yes", "No")[target]}[prompt]
                    responses.append({"model": model, "question_id": q["id"], "prompt": prompt, "sample_index": k,
                                      "response": answer})
    hofstede = cdeval.normalise_hofstede(pl.DataFrame({
        "country_code": ["USA", "CHN"], "country_name": ["United States", "China"], "pdi": [40.0, 80.0],
        "idv": [91.0, 20.0], "uai": [46.0, 30.0], "mas": [62.0, 66.0], "lto": [26.0, 87.0], "ivr": [68.0, 24.0]}))
    return pl.DataFrame(responses), {"questions": pl.DataFrame(questions), "hofstede": hofstede}


def widths(metrics: dict, model: str) -> list[float]:
    ci = metrics["per_model"][model]["dimension_likelihood_ci"]
    return [ci[d][1] - ci[d][0] for d in cdeval.DIMENSIONS]


def test_cdeval_intervals_contain_the_papers_estimates_which_are_unchanged():
    responses, tables = cdeval_case(12, {"m": 0.7})
    with_ci = cdeval.score_responses(responses, tables, bootstrap=FEW).metrics
    m = with_ci["per_model"]["m"]
    # the bootstrap statistic on all questions is the chain score_responses computes (Eq. 1-2, 6-7), and the
    # reported point estimate is that chain's, not a bootstrap mean
    scored = cdeval.score_answers(responses.with_columns(pl.lit("x").alias("source"), pl.lit(0).alias("row")),
                                  tables["questions"])
    weights = cdeval.template_weights(cdeval.instability(scored))
    by_question = cdeval.orientation_likelihood(cdeval.prompt_likelihood(scored), weights)
    for d in cdeval.DIMENSIONS:
        expected = by_question.filter(pl.col("dimension") == d)["likelihood"].mean()
        assert m["dimension_likelihood"][d] == pytest.approx(expected, abs=1e-12)
        low, high = m["dimension_likelihood_ci"][d]
        assert low <= m["dimension_likelihood"][d] <= high and high - low > 0
    for t in prompts.TEMPLATE_KINDS:
        low, high = m["template_weights_ci"][t]
        assert low <= m["template_weights"][t] <= high
    for row in m["country_similarity"]:
        assert row["similarity_low"] <= row["similarity"] <= row["similarity_high"]
    record = with_ci["uncertainty"]
    assert (record["n_resamples"], record["seed"], record["confidence_level"], record["interval_method"],
            record["unit"]) == (500, 3, 0.95, "percentile", "question")


def test_cdeval_intervals_shrink_with_more_questions_and_repeat_with_the_seed():
    small = cdeval.score_responses(*cdeval_case(8, {"m": 0.7}), bootstrap=FEW).metrics
    large = cdeval.score_responses(*cdeval_case(128, {"m": 0.7}), bootstrap=FEW).metrics
    # 16 times the questions: about a quarter of the width (1/sqrt(n)); allow up to a half
    assert sum(widths(large, "m")) < 0.5 * sum(widths(small, "m"))
    again = cdeval.score_responses(*cdeval_case(8, {"m": 0.7}), bootstrap=FEW).metrics
    assert again["per_model"]["m"]["dimension_likelihood_ci"] == small["per_model"]["m"]["dimension_likelihood_ci"]


def test_cdeval_paired_differences_find_a_real_gap_and_not_a_null_one():
    responses, tables = cdeval_case(30, {"likes": 0.9, "dislikes": 0.1, "likes too": 0.9}, seed=2)
    metrics = cdeval.score_responses(responses, tables, bootstrap=FEW).metrics
    rows = {(r["model_a"], r["model_b"], r["dimension"]): r for r in metrics["model_differences"]}
    for d in cdeval.DIMENSIONS:
        gap = rows[("dislikes", "likes", d)]
        expected = (metrics["per_model"]["dislikes"]["dimension_likelihood"][d]
                    - metrics["per_model"]["likes"]["dimension_likelihood"][d])
        assert gap["difference"] == pytest.approx(expected, abs=1e-12) and gap["significant"]
        assert gap["high"] < 0 and gap["n_common"] == 180
    # two models drawn from the same 0.9: at most a chance finding among six Holm-adjusted tests
    assert sum(rows[("likes", "likes too", d)]["significant"] for d in cdeval.DIMENSIONS) <= 1
    low, high = metrics["pairwise_baseline_ci"]
    assert low <= metrics["pairwise_baseline"] <= high


def test_cdeval_with_one_question_per_dimension_gives_no_interval_and_no_verdict():
    # issue #46: one question per dimension is one unit per stratum; the dimension scores, their differences and
    # everything drawn on all dimensions get no interval, p-value or verdict, and metrics.json says why
    metrics = cdeval.score_responses(*cdeval_case(1, {"likes": 0.9, "dislikes": 0.1}), bootstrap=FEW).metrics
    m = metrics["per_model"]["likes"]
    assert all(ci == [None, None] for ci in m["dimension_likelihood_ci"].values())
    assert all(ci == [None, None] for ci in m["template_weights_ci"].values())
    assert all(v is not None for v in m["dimension_likelihood"].values())
    for row in metrics["model_differences"]:
        assert row["difference"] is not None
        assert [row[k] for k in ("low", "high", "pvalue", "pvalue_holm", "significant")] == [None] * 5
    reason = metrics["uncertainty"]["no_spread"]
    assert reason.startswith("6 of 6 dimensions hold fewer than 2 questions")
    assert metrics["warnings"] == [f"cdeval: {reason}"]
    # two questions in every dimension: intervals and verdicts again
    again = cdeval.score_responses(*cdeval_case(2, {"likes": 0.9, "dislikes": 0.1}), bootstrap=FEW).metrics
    assert "warnings" not in again and "no_spread" not in again["uncertainty"]
    assert all(row["significant"] is not None and row["pvalue"] is not None for row in again["model_differences"])
