"""LLM-GLOBE statistics as the paper prints them (Karinshak et al. 2024, Sec. 3.4, Tables 2-5, Fig. 2): the unit of
the one-sample t-tests derived from the printed numbers, the per-prompt t statistic on a hand-made response set,
Friedman and all 28 pairwise Wilcoxon tests for eight models answering in two languages, and option checks that
run before any model call."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from conftest import write_release
from culturebench.cli import app
from culturebench.evaluate import llm_globe
from culturebench.evaluate.llm_globe import prompts
from scripted_server import ScriptedServer

DIMS = prompts.DIMENSIONS

# (M, SD, GLOBE 2004 score, t) of the group columns, in the paper's dimension order
TABLE_2 = [(4.356, 0.645, 5.67, -125.466), (4.699, 0.801, 3.10, 124.814), (5.079, 0.884, 4.56, 36.741),
           (4.651, 1.028, 5.09, -32.505), (4.225, 1.016, 3.68, 35.107), (4.598, 0.752, 5.28, -52.652),
           (4.927, 0.701, 5.44, -45.719), (4.055, 0.761, 4.73, -51.901), (4.236, 0.494, 5.32, -137.174)]
TABLE_3 = [(2.345, 0.732, 6.14, -319.523), (3.408, 1.090, 2.85, -31.994), (3.834, 1.095, 4.17, -19.183),
           (3.276, 1.449, 5.77, -131.056), (3.770, 1.365, 5.06, -61.857), (3.358, 0.975, 4.00, -38.217),
           (3.393, 0.816, 4.32, -71.061), (2.823, 1.116, 5.31, -130.297), (2.970, 0.871, 5.53, -183.854)]
TABLE_4 = [(4.365, 1.517, 5.67, -17.191), (2.525, 1.422, 3.10, -8.078), (4.844, 1.469, 4.56, 3.878),
           (6.232, 0.944, 3.68, 54.044), (4.483, 1.928, 5.28, -8.260), (3.941, 1.675, 5.44, -17.879),
           (5.535, 1.231, 4.73, 13.090)]  # rows with p < 0.001 (t printed to 3 decimals, enough digits)
TABLE_5 = [(4.532, 1.593, 6.14, -20.175), (2.445, 1.324, 2.85, -6.114), (4.585, 1.689, 4.17, 4.916),
           (4.506, 1.827, 5.77, -13.824), (6.831, 0.800, 5.06, 44.225), (4.470, 2.022, 4.00, 4.657),
           (6.195, 1.179, 5.31, 15.020), (6.289, 1.174, 5.53, 12.941)]
TABLE_2_MODEL_SD = [(1.299, 0.924, 0.914, 1.436), (1.008, 0.828, 1.162, 1.669)]  # PO, PD: GLM-4 ... Qwen
ROLES_X_PAIRS = 3 * 163  # Sec. 3.1.1: each of the 75 items asked for 163 industry/company pairs x 3 roles


def implied_n(row) -> float:
    """t = (M - mu) / (SD / sqrt(n))  =>  n = (t SD / (M - mu))^2."""
    m, sd, mu, t = row
    return (t * sd / (m - mu)) ** 2


def test_printed_numbers_imply_one_value_per_prompt_closed_and_per_prompt_and_model_open():
    # closed: the same n for the Chinese (Table 2) and US (Table 3) groups, dimension by dimension: the unit does
    # not depend on the models or languages, it is the prompt ...
    closed = [implied_n(r) for r in TABLE_2]
    assert all(abs(a - implied_n(b)) / a < 0.005 for a, b in zip(closed, TABLE_3))
    # ... n is about (items of the dimension) x 489 prompts, and the items add up to the 75 of Form Alpha
    items = [round(n / ROLES_X_PAIRS) for n in closed]
    assert sum(items) == 75 and all(0.85 < n / (k * ROLES_X_PAIRS) < 1.01 for n, k in zip(closed, items))  # rounding
    # the group SD is below every model's own SD: only averaging the models per prompt does that
    assert TABLE_2[0][1] < min(TABLE_2_MODEL_SD[0]) and TABLE_2[1][1] < min(TABLE_2_MODEL_SD[1])
    # open: n = 100 prompts x 4 models in every row of Tables 4 and 5
    assert all(abs(implied_n(r) - 400) < 4 for r in TABLE_4 + TABLE_5)


# Tables 4-5's "Chinese Models" / "US Models" columns (M, SD) in every dimension, and Sec. 4.2.4's printed t (US vs CN)
OPEN_CN = [(4.365, 1.517), (2.525, 1.422), (4.844, 1.469), (5.095, 1.689), (6.232, 0.944), (4.483, 1.928),
           (3.941, 1.675), (5.535, 1.231), (5.269, 1.325)]
OPEN_US = [(4.532, 1.593), (2.445, 1.324), (4.585, 1.689), (4.506, 1.827), (6.831, 0.800), (4.470, 2.022),
           (4.293, 1.659), (6.195, 1.179), (6.289, 1.174)]
SEC_4_2_4_T = [2.176, -1.215, -3.020, -6.789, 11.896, -0.131, 4.214, 9.849, 13.328]


def test_sec_4_2_4_two_sample_t_does_not_follow_from_tables_4_5():
    """What GROUP_TTEST_NOTE says: at n = 400 per group (the unit of Tables 4-5's one-sample tests) the printed t
    values are not reached, and the n each printed t implies differs from dimension to dimension."""
    at_400 = [sps.ttest_ind_from_stats(us[0], us[1], 400, cn[0], cn[1], 400).statistic
              for us, cn in zip(OPEN_US, OPEN_CN)]
    assert at_400[0] == pytest.approx(1.518, abs=5e-4) and at_400[4] == pytest.approx(9.682, abs=5e-4)
    assert all(np.sign(a) == np.sign(t) and abs(a) < 0.9 * abs(t) for a, t in zip(at_400, SEC_4_2_4_T))
    # equal n: t = d / sqrt((s1^2 + s2^2) / n)  =>  n = t^2 (s1^2 + s2^2) / d^2
    implied = [t ** 2 * (us[1] ** 2 + cn[1] ** 2) / (us[0] - cn[0]) ** 2
               for t, us, cn in zip(SEC_4_2_4_T, OPEN_US, OPEN_CN)]
    assert 530 < min(implied) < 540 and 865 < max(implied) < 875
    assert "1.518" in llm_globe.GROUP_TTEST_NOTE and "2.176" in llm_globe.GROUP_TTEST_NOTE
    assert "535" in llm_globe.GROUP_TTEST_NOTE and "871" in llm_globe.GROUP_TTEST_NOTE


def frame(values: dict[tuple[str, str], list[float]], dimension: str = "Power Distance") -> pl.DataFrame:
    rows = [{"model": m, "dimension": dimension, "id": p, "score": v}
            for (m, p), vs in values.items() for v in vs]
    return pl.DataFrame(rows)


GLOBE = pl.DataFrame({"country": ["USA"], "dimension": ["Power Distance"], "practices": [3.0], "values": [3.0]})


def test_per_prompt_t_statistic_on_a_hand_made_response_set():
    # two models, three prompts, two samples each; per-prompt means over models and samples: 4, 6, 2
    answers = {("m1", "p1"): [3, 5], ("m2", "p1"): [4, 4], ("m1", "p2"): [6, 6], ("m2", "p2"): [5, 7],
               ("m1", "p3"): [2, 2], ("m2", "p3"): [1, 3]}
    config = llm_globe.Config(societies={"*": "USA"})
    groups = {"G": ["m1", "m2"]}
    tests = llm_globe.globe_ttests(frame(answers), "score", GLOBE, groups, config, "closed")
    t = next(r for r in tests if r["measure"] == "values")
    # by hand: mean 4, SD 2 (ddof 1), n 3; t = (4 - 3) / (2 / sqrt 3) = sqrt(3) / 2
    assert t["n"] == 3 and t["mean"] == pytest.approx(4.0) and t["statistic"] == pytest.approx(math.sqrt(3) / 2)
    means = llm_globe.group_means(frame(answers), "score", groups, "closed", "paper")["G"]["Power Distance"]
    assert means["sd"] == pytest.approx(2.0)
    # pooled option: the 12 answers, mean 4, sum of squared deviations 38, t = 1 / (sqrt(38 / 11) / sqrt 12)
    pooled = llm_globe.Config(societies={"*": "USA"}, t_unit="pooled")
    t = next(r for r in llm_globe.globe_ttests(frame(answers), "score", GLOBE, groups, pooled, "closed")
             if r["measure"] == "values")
    assert t["n"] == 12 and t["statistic"] == pytest.approx(1 / (math.sqrt(38 / 11) / math.sqrt(12)))
    # open: one value per prompt and model (each model's mean over its samples): n = 3 prompts x 2 models
    t = next(r for r in llm_globe.globe_ttests(frame(answers), "score", GLOBE, groups, config, "open")
             if r["measure"] == "values")
    assert t["n"] == 6 and t["statistic"] == pytest.approx(sps.ttest_1samp([4, 4, 6, 6, 2, 2], 3.0).statistic)


US, CN = ["claude", "gemini", "gpt-3.5", "gpt-4"], ["glm-4", "ernie-3.5", "ernie-4.0", "qwen"]
PROMPTS_PER_DIMENSION = 6


def eight_model_records() -> tuple[list[dict], pl.DataFrame]:
    """US models answer in English, Chinese models in Chinese; two samples; answers vary by model and prompt."""
    closed = pl.DataFrame([{"id": f"c{d}-{p}", "item_id": f"{d + 1}-{p + 1}", "dimension": dim, "reverse": False,
                            "scale_min": 1, "scale_max": 7}
                           for d, dim in enumerate(DIMS) for p in range(PROMPTS_PER_DIMENSION)])
    records = []
    for i, model in enumerate(US + CN):
        language = "en" if model in US else "zh"
        for row in closed.iter_rows(named=True):
            p = int(row["id"].split("-")[1])
            for sample in range(2):
                answer = (i * 3 + p * 5 + sample * (i % 3)) % 7 + 1
                records.append({"part": "closed", "model": model, "id": row["id"], "language": language,
                                "sample_index": sample, "response": str(answer)})
    return records, closed


def test_friedman_and_all_28_wilcoxon_pairs_for_eight_models_in_two_languages(tmp_path):
    records, closed = eight_model_records()
    result = llm_globe.score_records(records, {"closed": closed}, llm_globe.Config())
    tests = result.metrics["closed"]["model_tests"]
    assert set(tests) == set(DIMS)
    # expected by hand: each model's mean over its two samples per prompt, the prompts as blocks, scipy's tests
    means = {}
    for r in records:
        means.setdefault((r["model"], r["id"]), []).append(int(r["response"]))
    models = sorted(US + CN)
    for d, dimension in enumerate(DIMS):
        ids = sorted(f"c{d}-{p}" for p in range(PROMPTS_PER_DIMENSION))
        columns = {m: [np.mean(means[(m, i)]) for i in ids] for m in models}
        friedman = tests[dimension]["friedman"]
        assert friedman["k"] == 8 and friedman["n_blocks"] == PROMPTS_PER_DIMENSION
        assert friedman["statistic"] == pytest.approx(sps.friedmanchisquare(*columns.values()).statistic)
        pairs = tests[dimension]["wilcoxon"]
        assert len(pairs) == 28 == math.comb(8, 2)
        assert all(p["n_pairs"] == PROMPTS_PER_DIMENSION for p in pairs)
        assert sum(p["pvalue"] is not None for p in pairs) >= 20  # a pair may tie on every prompt
    llm_globe.write_run(result, tmp_path)
    assert (tmp_path / "wilcoxon_closed.png").stat().st_size > 10_000


def small_release(tmp_path):
    closed = pl.DataFrame([{"id": f"c{d}", "item_id": f"{d + 1}-1", "dimension": dim, "reverse": False,
                            "industry": "Banks", "sub_industry": "Banks", "role": "executive",
                            "prompt_en": f"Item {d}. Rate 1 to 7.", "prompt_zh": f"条目{d}。", "scale_min": 1,
                            "scale_max": 7} for d, dim in enumerate(DIMS)])
    globe = pl.DataFrame({"country": ["USA"] * 9, "dimension": list(DIMS), "practices": [4.0] * 9,
                          "values": [4.0] * 9})
    folder = tmp_path / "release" / "llm_globe"
    folder.mkdir(parents=True)
    return write_release(folder, {"closed": closed, "globe_2004": globe}, "llm_globe")


@pytest.mark.parametrize(("options", "expected"), [
    ({"society": "Atlantis"}, "society 'Atlantis' is not in the release's globe_2004 config"),
    ({"t_unit": "answers"}, "t_unit must be one of paper, pooled"),
    ({"groups": {"US": ["a"]}, "compare": ["US", "CN"]}, "compare names group 'CN'"),
    ({"groups": {"US": ["a"]}, "societies": {"EU": "USA"}}, "societies names group 'EU'"),
    ({"juror_temperature": "hot"}, "juror_temperature must be a number, got 'hot'"),
    ({"split_seed": 1.5}, "split_seed must be a whole number"),
])
def test_bad_options_stop_before_any_model_call(tmp_path, options, expected):
    release = small_release(tmp_path)
    config = tmp_path / "options.json"
    config.write_text(json.dumps(options))
    out = tmp_path / "run"
    with ScriptedServer(reply="4") as server:
        result = CliRunner().invoke(app, ["evaluate", "llm_globe", "--model", "m", "--out", str(out), "--base-url",
                                          server.base_url, "--release", str(release), "--config", str(config)])
        assert server.request_count == 0
    assert result.exit_code == 2 and expected in result.output, result.output
    assert not out.exists() or not any(out.iterdir())
