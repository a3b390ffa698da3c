"""Liu, Kaneko and Chu 2025's released outputs scored under their protocol (issue #61): ``score wvb --responses
THEIR/results/.../results.csv``.

With the reference files (marked ``reference``): the release built once from the 56 WVS-7 v5.0 country files
(``wvs7_release``); the expected scores are computed here from the raw CSVs with pandas and
``scipy.stats.wasserstein_distance`` as their notebook (show_results/country_level.ipynb) defines them, and, for
deepseek-reasoner, are the numbers that notebook prints. Without them: small self-written results.csv files against
the bundled sample for the bad-input paths."""

from __future__ import annotations

import ast
import csv
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance
from typer.testing import CliRunner

from conftest import REFERENCE, SAMPLE_RAW, WVS7_COUNTRY_FILES, reference
from culturebench.cli import app

runner = CliRunner()
LIU = REFERENCE / "LiuKanekoChu2025" / "results"
MODELS = ["gpt-3.5-turbo", "gpt-4", "deepseek-chat", "deepseek-reasoner", "CohereLabs/aya-23-35B",
          "meta-llama/Meta-Llama-3-70B-Instruct", "Qwen/Qwen2.5-72B-Instruct"]
PRINTED_DEEPSEEK_REASONER = {
    "AND": 0.8656, "ARG": 0.8784, "ARM": 0.8255, "AUS": 0.8757, "BGD": 0.7947, "BOL": 0.8486, "BRA": 0.8655,
    "CHL": 0.8948, "COL": 0.8529, "CYP": 0.8841, "CZE": 0.8885, "EGY": 0.7855, "ECU": 0.862, "ETH": 0.8233,
    "DEU": 0.857, "GRC": 0.8664, "GTM": 0.8749, "IRN": 0.8397, "IRQ": 0.8214, "JOR": 0.8033, "JPN": 0.8553,
    "KAZ": 0.8756, "KEN": 0.8666, "KGZ": 0.8239, "LBN": 0.85, "LBY": 0.794, "MYS": 0.866, "MEX": 0.8668,
    "MNG": 0.8921, "MAR": 0.8596, "MMR": 0.7881, "NZL": 0.8656, "NIC": 0.8519, "NGA": 0.8325, "PAK": 0.8245,
    "PER": 0.8394, "PHL": 0.8517, "PRI": 0.8561, "ROU": 0.8627, "RUS": 0.8789, "SGP": 0.8813, "SVK": 0.8933,
    "KOR": 0.8623, "TJK": 0.8281, "THA": 0.884, "TUN": 0.8205, "TWN": 0.8745, "UKR": 0.8895, "URY": 0.8664,
    "VNM": 0.8192, "VEN": 0.8626, "ZWE": 0.8356, "MAC": 0.8725, "MDV": 0.8275, "NIR": 0.8921, "SRB": 0.8619}
"""The per-country scores their show_results/country_level.ipynb prints for deepseek-reasoner (repository
nlply/global-opinion-alignment @ 00679eb, the output of cell 30, 4 decimals), for the 56 countries of the WVS-7
files here (their table has 66; the ten others are not in these files), keyed by the WVS-7 country's ISO code."""


def score(responses: Path, release: Path, raw: Path, out: Path, *extra: str):
    return runner.invoke(app, ["score", "wvb", "--responses", str(responses), "--release", str(release),
                               "--raw", str(raw), "--out", str(out), *extra])


def their_questions(path: Path) -> dict[str, list[str]]:
    frame = pd.read_csv(path)
    frame = frame[frame["type"] == "Opinion-Dependent"]
    return {row["id"]: ast.literal_eval(row["choice_keys"]) for _, row in frame.iterrows()}


def their_stated(path: Path) -> dict[str, dict]:
    """Their notebook's reading of a results.csv (first row per id; literal_eval, else with N: P% quoted)."""
    frame = pd.read_csv(path)
    frame = frame[frame["type"] == "Opinion-Dependent"]
    out = {}
    for question in dict.fromkeys(frame["id"]):
        text = frame[frame["id"] == question]["response"].values[0]
        try:
            shares = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            shares = ast.literal_eval(re.sub(r"(\d+):\s*([\d.]+%)", r"'\1': '\2'", text))
        out[question] = {k: float(v.strip("%")) / 100 for k, v in shares.items()}
    return out


def their_score(model: dict, human: dict, questions) -> list[float]:
    """Per question their 1 - W1 / (N - 1) (scipy), the notebook's pairing of sorted keys."""
    scores = []
    for q in questions:
        if q not in model or q not in human or len(model[q]) != len(human[q]):
            continue
        support = np.array([int(k) for k, _ in sorted(model[q].items())])
        w1 = wasserstein_distance(support, support, [v for _, v in sorted(model[q].items())],
                                  [v for _, v in sorted(human[q].items())])
        scores.append(1 - w1 / (len(model[q]) - 1))
    return scores


@pytest.fixture(scope="module")
def wvs_rows() -> pd.DataFrame:
    """Every row of the 56 raw files: B_COUNTRY, B_COUNTRY_ALPHA and their 144 questions."""
    keys = their_questions(LIU / "RQ1" / "gpt-4" / "results.csv")
    return pd.concat([pd.read_csv(path, usecols=lambda c: c in {"B_COUNTRY_ALPHA", "B_COUNTRY", *keys},
                                  low_memory=False) for path in sorted(WVS7_COUNTRY_FILES.glob("*.csv.gz"))])


@pytest.fixture(scope="module")
def humans(wvs_rows):
    """ISO code -> question -> {choice key: share}: every row of the 56 raw files, unweighted counts on the
    question's choice keys (their notebook's get_human_distribution_by_country_and_question)."""
    keys = their_questions(LIU / "RQ1" / "gpt-4" / "results.csv")
    table = wvs_rows
    alpha = dict(zip(table["B_COUNTRY"], table["B_COUNTRY_ALPHA"]))
    out: dict[str, dict] = {}
    for country, rows in table.groupby("B_COUNTRY"):
        per = {}
        for q, choices in keys.items():
            counts = rows[q].value_counts()
            got = {c: float(counts.get(int(c), 0)) for c in choices}
            if sum(got.values()) > 0:
                per[q] = {c: v / sum(got.values()) for c, v in got.items()}
        out[alpha[country]] = per
    return out


@reference
@pytest.mark.reference
@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_rq1_outputs_score_as_their_notebook_computes(wvs7_release, humans, tmp_path, model):
    """Every RQ1 model on the 56-country release: each country's score equals their formula recomputed here, to
    its four decimals; deepseek-reasoner's equal the numbers their notebook prints. (Slow: the session builds the
    56-country release once, 15-60 s, and each score reads the 56 raw files.)"""
    release, raw = wvs7_release
    path = LIU / "RQ1" / model / "results.csv"
    result = score(path, release, raw, tmp_path / "out")
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "out" / "countries.json").read_text())
    assert data["measure"] == "similarity_w1" and data["weights"] == "none" and data["protocol"] == "liu2025"
    stated = their_stated(path)
    assert set(data["countries"]) == set(humans) and len(humans) == 56
    for country, human in humans.items():
        expected = np.round(np.mean(their_score(stated, human, their_questions(path))), 4)
        assert round(data["countries"][country]["similarity_w1"], 4) == expected, country
        if model == "deepseek-reasoner":
            assert round(data["countries"][country]["similarity_w1"], 4) == PRINTED_DEEPSEEK_REASONER[country]
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["command"] == "culturebench score wvb"


@reference
@pytest.mark.reference
@pytest.mark.slow
def their_rq2_scores(path: Path, rows: pd.DataFrame, code: int, skipped: list[str]) -> dict[str, float]:
    """Per question their rq2_results.py score of one steered country: the response's keys in order, missing
    choice keys appended at 0, the country's counts of those keys, W1 on positions 1..N; ``skipped`` left out."""
    frame = pd.read_csv(path)
    frame = frame[frame["type"] == "Opinion-Dependent"]
    country = rows[rows["B_COUNTRY"] == code]
    out = {}
    for _, row in frame.iterrows():
        try:
            shares = ast.literal_eval(row["response"])
        except (ValueError, SyntaxError):
            shares = ast.literal_eval(re.sub(r"(\d+):\s*([\d.]+%)", r"'\1': '\2'", row["response"]))
        model = {k: float(v.strip("%")) / 100 for k, v in shares.items()}
        for k in ast.literal_eval(row["choice_keys"]):
            if k not in model:
                model[k] = 0
        human = [len(country[country[row["id"]] == int(k)]) for k in model]
        if sum(human) == 0 or row["id"] in skipped:
            continue
        support = np.arange(1, len(model) + 1)
        w1 = wasserstein_distance(support, support, list(model.values()), [h / sum(human) for h in human])
        out[row["id"]] = 1 - w1 / (len(model) - 1)
    return out


@pytest.mark.slow
def test_rq2_file_gives_the_steered_similarity_and_the_gain_over_rq1(wvs7_release, wvs_rows, tmp_path):
    """persona / Japan / gpt-4: the steered answers' similarity to Japan and its gain over gpt-4's RQ1 run, per
    question, averaged, both as their rq2_results.py scores them (Japan's five few-shot questions, their skip_dict,
    left out). (Slow: reads the 56 raw files.)"""
    release, raw = wvs7_release
    path = LIU / "RQ2" / "persona" / "Japan" / "gpt-4" / "results.csv"
    result = score(path, release, raw, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "steered similarity to Japan" in result.output
    japan = json.loads((tmp_path / "out" / "countries.json").read_text())["countries"]["JPN"]
    skipped = ["Q60", "Q70", "Q90", "Q110", "Q130"]
    steered = their_rq2_scores(path, wvs_rows, 392, skipped)
    plain = their_rq2_scores(LIU / "RQ1" / "gpt-4" / "results.csv", wvs_rows, 392, skipped)
    assert japan["steered_w1"] == pytest.approx(np.mean(list(steered.values())), abs=1e-12)
    assert japan["similarity_w1"] == pytest.approx(np.mean(list(plain.values())), abs=1e-12)
    assert japan["gain_w1"] == pytest.approx(np.mean([steered[q] - plain[q] for q in steered if q in plain]),
                                             abs=1e-12)
    assert japan["n_questions"] == len(plain) == 144 - 4  # Q130, skipped too, is not among their 144


@reference
@pytest.mark.reference
@pytest.mark.slow
def test_sensitivity_file_says_how_far_each_country_and_question_moved(wvs7_release, humans, tmp_path):
    """order / gpt-4 against gpt-4's RQ1 run: sensitivity.json's change per country and per question. (Slow:
    reads the 56 raw files.)"""
    release, raw = wvs7_release
    path = LIU / "Discussion" / "sensitivity" / "order" / "gpt-4" / "results.csv"
    result = score(path, release, raw, tmp_path / "out")
    assert result.exit_code == 0, result.output
    moved = json.loads((tmp_path / "out" / "sensitivity.json").read_text())
    variant, plain = their_stated(path), their_stated(LIU / "RQ1" / "gpt-4" / "results.csv")
    questions = their_questions(path)
    for country in ("JPN", "DEU", "NGA"):
        pairs = [(their_score(plain, humans[country], [q]), their_score(variant, humans[country], [q]))
                 for q in questions]
        pairs = [(a[0], b[0]) for a, b in pairs if a and b]
        assert moved["countries"][country]["change"] == pytest.approx(
            np.mean([b for _, b in pairs]) - np.mean([a for a, _ in pairs]), abs=1e-12)
    q = "Q1"
    changes = [their_score(variant, humans[c], [q])[0] - their_score(plain, humans[c], [q])[0] for c in humans]
    assert moved["questions"][q]["mean_change"] == pytest.approx(np.mean(changes), abs=1e-12)


def write_results(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A stand-in results.csv in their columns (id, question, choices, choice_keys, answer, type, response)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "choices", "choice_keys", "answer", "type", "response"])
        for question, keys, response in rows:
            writer.writerow([question, "?", "[]", keys, "", "Opinion-Dependent", response])
    return path


def test_unreadable_responses_and_questions_the_survey_lacks_are_one_line_each(sample_release, tmp_path):
    """Bad input: a response that does not read is counted and warned, a question the WVS-7 files lack is left out
    and said; the rest is scored (one country checked by hand from the raw CSV)."""
    keys = "['1', '2', '3', '4']"
    path = write_results(tmp_path / "results" / "RQ1" / "m" / "results.csv", [
        ("Q1", keys, "{'1': '40%', '2': '30%', '3': '20%', '4': '10%'}"),
        ("Q2", keys, "{1: 25%, 2: 25%, 3: 25%, 4: 25%}"),  # their second reading: N: P% quoted
        ("Q3", keys, "I cannot answer that."),
        ("Q42", "['1', '2', '3']", "{'1': '50%', '2': '25%', '3': '25%'}")])
    result = score(path, sample_release, SAMPLE_RAW, tmp_path / "out")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert sum("1 responses do not read as a distribution" in line and "row 3 (Q3)" in line for line in lines) == 1
    assert sum("lack, left out: Q42" in line for line in lines) == 1
    assert "Traceback" not in result.output
    data = json.loads((tmp_path / "out" / "countries.json").read_text())
    assert data["n_unreadable"] == 1 and data["n_questions"] == 3
    rows = [r for f in sorted((SAMPLE_RAW / "wvs").glob("*.csv*"))
            for r in pd.read_csv(f, usecols=["B_COUNTRY_ALPHA", "Q1", "Q2"]).to_dict("records")]
    country = sorted(data["countries"])[0]
    expected = []
    for q, model in (("Q1", [0.4, 0.3, 0.2, 0.1]), ("Q2", [0.25] * 4)):
        counts = np.array([sum(r["B_COUNTRY_ALPHA"] == country and r[q] == c for r in rows) for c in (1, 2, 3, 4)])
        expected.append(1 - wasserstein_distance([1, 2, 3, 4], [1, 2, 3, 4], model, counts) / 3)
    assert data["countries"][country]["similarity_w1"] == pytest.approx(np.mean(expected), abs=1e-12)


def test_rq2_file_without_its_rq1_run_is_one_line(sample_release, tmp_path):
    path = write_results(tmp_path / "results" / "RQ2" / "persona" / "Japan" / "m" / "results.csv",
                         [("Q1", "['1', '2', '3', '4']", "{'1': '40%', '2': '30%', '3': '20%', '4': '10%'}")])
    result = score(path, sample_release, SAMPLE_RAW, tmp_path / "out")
    assert result.exit_code != 0
    assert "RQ1 results.csv" in result.output and "--liu-baseline" in result.output
    assert "Traceback" not in result.output


def test_raw_folder_without_the_releases_files_is_one_line(sample_release, tmp_path):
    path = write_results(tmp_path / "results.csv",
                         [("Q1", "['1', '2', '3', '4']", "{'1': '40%', '2': '30%', '3': '20%', '4': '10%'}")])
    result = score(path, sample_release, tmp_path / "empty", tmp_path / "out")
    assert result.exit_code != 0
    assert "not in the raw folder" in result.output and "Traceback" not in result.output


def their_modal(shares: dict) -> str:
    """The code with the largest share, the lowest code on a tie."""
    best = max(shares.values())
    return str(min(int(k) for k, v in shares.items() if v == best))


def expected_across(model: str) -> dict:
    """Per question, from their CSVs with pandas and scipy: the share of the model's runs (RQ1 and every
    sensitivity variant) whose modal code is the most frequent one, and the mean over pairs of runs of
    1 - W1 / (N - 1) between the stated distributions; per run the share of modal codes at each listed position."""
    runs = {"RQ1": LIU / "RQ1" / model / "results.csv"}
    runs |= {v.name: v / model / "results.csv" for v in sorted((LIU / "Discussion" / "sensitivity").iterdir())
             if (v / model / "results.csv").is_file()}
    stated = {name: their_stated(path) for name, path in runs.items()}
    keys = {name: their_questions(path) for name, path in runs.items()}
    consistency, similarity, positions = {}, {}, {name: {} for name in runs}
    for q in stated["RQ1"]:
        modal = [their_modal(stated[name][q]) for name in runs if q in stated[name]]
        consistency[q] = max(modal.count(m) for m in modal) / len(modal)
        pairs = []
        names = [n for n in runs if q in stated[n]]
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if sorted(stated[a][q]) == sorted(stated[b][q]) and len(stated[a][q]) > 1:
                    codes = sorted(int(k) for k in stated[a][q])
                    p = [stated[a][q][str(c)] for c in codes]
                    r = [stated[b][q][str(c)] for c in codes]
                    pairs.append(1 - wasserstein_distance(codes, codes, p, r) / (len(codes) - 1))
        if pairs:
            similarity[q] = np.mean(pairs)
        for name in names:
            position = str([str(k) for k in keys[name][q]].index(their_modal(stated[name][q])) + 1)
            positions[name][position] = positions[name].get(position, 0) + 1
    shares = {name: {p: n / sum(c.values()) for p, n in c.items()} for name, c in positions.items()}
    return {"runs": list(runs), "consistency": consistency, "similarity": similarity, "positions": shares}


@reference
@pytest.mark.reference
@pytest.mark.parametrize("model", ["gpt-4", "deepseek-chat"])
def test_order_sensitivity_per_question_across_their_variants(model):
    """Item 5 of issue #63: a model's consistency per question across its RQ1 run and their sensitivity variants
    (order: options shuffled with their codes kept; number; prob), as the variants report reads it, against an
    independent pandas / scipy recomputation from their CSVs."""
    from culturebench.evaluate.wvb.liu_outputs import across_variants, read_stated, sensitivity_files

    expected = expected_across(model)
    siblings = sensitivity_files(LIU / "Discussion" / "sensitivity" / "order" / model / "results.csv")
    block = across_variants({"RQ1": read_stated(LIU / "RQ1" / model / "results.csv"),
                             **{v: read_stated(p) for v, p in siblings.items()}})
    assert block["variants"] == expected["runs"] == ["RQ1", "number", "order", "prob"]
    assert block["per_item"] == pytest.approx(expected["consistency"], abs=1e-12)
    assert block["consistency"] == pytest.approx(np.mean(list(expected["consistency"].values())), abs=1e-12)
    assert block["mean_pairwise_similarity"] == pytest.approx(expected["similarity"], abs=1e-12)
    assert block["position_share"].keys() == expected["positions"].keys()
    for run, shares in expected["positions"].items():
        assert block["position_share"][run] == pytest.approx(shares, abs=1e-12)
    assert block["headlines"]["RQ1"]["mean_similarity_to_rq1"] == 1.0


def test_a_sensitivity_file_is_scored_with_the_consistency_across_its_siblings(sample_release, tmp_path):
    """Stand-in files in their tree: the RQ1 run and two sensitivity variants of model m; sensitivity.json of the
    order file holds the consistency across the three (counted here by hand)."""
    keys = "['1', '2', '3', '4']"
    root = tmp_path / "results"
    write_results(root / "RQ1" / "m" / "results.csv", [("Q1", keys, "{'1': '40%', '2': '30%', '3': '20%', '4': '10%'}"),
                                                      ("Q2", keys, "{'1': '10%', '2': '20%', '3': '30%', '4': '40%'}")])
    order = write_results(root / "Discussion" / "sensitivity" / "order" / "m" / "results.csv",
                          [("Q1", "['3', '1', '4', '2']", "{'1': '40%', '2': '30%', '3': '20%', '4': '10%'}"),
                           ("Q2", "['3', '1', '4', '2']", "{'1': '10%', '2': '20%', '3': '60%', '4': '10%'}")])
    write_results(root / "Discussion" / "sensitivity" / "number" / "m" / "results.csv",
                  [("Q1", keys, "{'1': '20%', '2': '50%', '3': '20%', '4': '10%'}"),
                   ("Q2", keys, "{'1': '25%', '2': '25%', '3': '25%', '4': '25%'}")])
    result = score(order, sample_release, SAMPLE_RAW, tmp_path / "out")
    assert result.exit_code == 0, result.output
    across = json.loads((tmp_path / "out" / "sensitivity.json").read_text())["across_variants"]
    assert across["variants"] == ["RQ1", "number", "order"]
    # Q1: modal codes 1, 2, 1 -> 2/3; Q2: 4, 1 (a four-way tie: the lowest code), 3 -> 1/3
    assert across["per_item"] == {"Q1": pytest.approx(2 / 3), "Q2": pytest.approx(1 / 3)}
    # the order run lists 3, 1, 4, 2: its modal codes 1 (Q1) and 3 (Q2) sit at positions 2 and 1
    assert across["position_share"]["order"] == {"1": 0.5, "2": 0.5}
    assert "across the runs RQ1, number, order: mean consistency of the modal answer per question 0.5000" in \
        result.output
