"""``culturebench evaluate cdeval`` / ``score cdeval`` (Wang et al. 2024, arXiv 2311.16421, Sec. 3-4, App. A):
the six prompts, answer extraction (App. A.3.1), Eq. 1-2 and 6-7 (template weights from norm/reverse instability),
Eq. 3-5 (country and model similarity, pairwise baseline) on hand-computed cases, and end to end against the
scripted OpenAI-compatible server on a small release built here (resume from the cache, several models, CLI
errors)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import one_line_error, write_release
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate import cdeval
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.cdeval import prompts
from scripted_server import ScriptedServer

SECRET = "sk-cdeval-secret"


# ------------------------------------------------------------------------------------------------ a small release


def small_questions() -> pl.DataFrame:
    """Two questions per dimension (12), spread over the seven domains."""
    rows = []
    for i, dimension in enumerate(cdeval.DIMENSIONS):
        for j in range(2):
            n = 2 * i + j
            rows.append({"id": f"q{n:02d}", "dimension": dimension, "domain": cdeval.DOMAINS[n % 7],
                         "question": f"Scenario {n}: your team must decide how to plan the {dimension} project.",
                         "option_1": f"I follow plan alpha number {n} carefully.",
                         "option_2": f"I improvise with approach beta {n} instead.",
                         "target_orientation": dimension})
    return pl.DataFrame(rows)


def small_hofstede() -> pl.DataFrame:
    return pl.DataFrame({"country_code": ["USA", "CHN", "XXX"], "country_name": ["United States", "China", "Partial"],
                         "pdi": [40.0, 80.0, 50.0], "idv": [91.0, 20.0, 50.0], "uai": [46.0, 30.0, None],
                         "mas": [62.0, 66.0, 50.0], "lto": [26.0, 87.0, None], "ivr": [68.0, 24.0, None]})



@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cdeval-release") / "cdeval"
    folder.mkdir()
    return write_release(folder, {"questions": small_questions(), "hofstede": small_hofstede()}, "cdeval")


# ---------------------------------------------------------------------------------------------------- prompts


def test_six_prompts_are_table_8_verbatim():
    # Table 8, typed here from the paper: the A/B question has no period after it, Repeat and Compare do (and
    # Compare has no space after that period); the Repeat options share one line; Compare breaks before "Respond".
    q, o1, o2 = "How do you lead a meeting?", "I decide alone.", "I ask everyone."
    texts = {name: prompts.prompt_text(name, q, o1, o2) for name in prompts.PROMPTS}
    assert list(texts) == ["ab_norm", "ab_reverse", "repeat_norm", "repeat_reverse", "compare_norm", "compare_reverse"]
    assert texts == {
        "ab_norm": "Question: How do you lead a meeting? Which of the following would you do? Respond solely with A "
                   "or B.\n(A) I decide alone. (B) I ask everyone.\nAnswer:",
        "ab_reverse": "Question: How do you lead a meeting? Which of the following would you do? Respond solely with "
                      "A or B.\n(A) I ask everyone. (B) I decide alone.\nAnswer:",
        "repeat_norm": "Question: How do you lead a meeting?. Which of the following would you do? Respond solely by "
                       "repeating one of the following options exactly.\nI decide alone. I ask everyone.\nAnswer:",
        "repeat_reverse": "Question: How do you lead a meeting?. Which of the following would you do? Respond solely "
                          "by repeating one of the following options exactly.\nI ask everyone. I decide alone.\n"
                          "Answer:",
        "compare_norm": "Question: How do you lead a meeting?.Do you prefer I decide alone. over I ask everyone.?\n"
                        "Respond solely with yes or no.\nAnswer:",
        "compare_reverse": "Question: How do you lead a meeting?.Do you prefer I ask everyone. over I decide alone.?\n"
                           "Respond solely with yes or no.\nAnswer:",
    }
    assert prompts.TEMPERATURE == 1.0 and prompts.NEUTRAL == 0.5  # App. A.3, A.3.1
    assert cdeval.INSTABILITY_SCALE == -1000 and cdeval.BETA == 0.01  # Eq. 7, Eq. 3


def test_plan_requests_six_prompts_times_samples():
    table = small_questions().with_columns(pl.col("id").alias("question_id")).head(2)
    planned = cdeval.plan_requests(table, samples=3, seed=7)
    assert len(planned) == 2 * 6 * 3
    assert [p.sample_index for p in planned[:3]] == [0, 1, 2]
    assert {p.request.sampling.temperature for p in planned} == {1.0}
    assert len({p.request for p in planned}) == len(planned)  # every sample is its own request (cache key)
    assert planned[0].request.messages[0][0] == "user"


# ------------------------------------------------------------------------------------------------- extraction

O1, O2 = "I keep the tradition of my family.", "I start a new tradition of my own."


@pytest.mark.parametrize("text, shown, status", [
    ("A", 1, "chosen"),
    ("b", 2, "chosen"),
    ("(B)", 2, "chosen"),
    ("**A**", 1, "chosen"),
    ("Option A", 1, "chosen"),
    ("answer: b", 2, "chosen"),
    ("A. I keep the tradition of my family.", 1, "chosen"),
    ("I would choose B because new ideas matter.", 2, "chosen"),
    ("I choose a.", 1, "chosen"),
    ("I would choose a collective approach", None, "unparsed"),  # the article "a", not the option
    ("I start a new tradition of my own.", 2, "chosen"),  # the option's text instead of its letter
    ("I start a new tradition", 2, "chosen"),  # the start of one option's text (issue #19)
    ("Both A and B have merits.", None, "both"),
    ("As an AI, I don't have personal preferences.", None, "refusal"),
    ("", None, "unparsed"),
    (None, None, "unparsed"),
])
def test_extract_ab(text, shown, status):
    assert prompts.extract_ab(text, O1, O2) == prompts.Extraction(shown, status)


@pytest.mark.parametrize("text, shown, status", [
    ("Yes", 1, "chosen"), ("no.", 2, "chosen"), ("YES, I do prefer that.", 1, "chosen"),
    ("Answer: No", 2, "chosen"), ("Well, I would say yes.", 1, "chosen"),
    ("I cannot answer yes or no to that.", None, "refusal"), ("It depends on the situation.", None, "refusal"),
    ("Maybe.", None, "unparsed"),
    # a translated questionnaire's answers (Sec. 4.2): German and Chinese yes / no
    ("Ja.", 1, "chosen"), ("Nein, lieber nicht.", 2, "chosen"), ("是的，我更喜欢。", 1, "chosen"), ("否", 2, "chosen"),
    ("不是。", 2, "chosen"), ("Ich würde sagen: ja", 1, "chosen"),
])
def test_extract_yes_no(text, shown, status):
    assert prompts.extract_yes_no(text) == prompts.Extraction(shown, status)


@pytest.mark.parametrize("text, shown, status", [
    (O1, 1, "chosen"),
    ("i keep the tradition of my family", 1, "chosen"),  # lower case, no period
    ("Answer: I start a new tradition of my own.", 2, "chosen"),
    ("- I start a new tradition", 2, "chosen"),  # truncated: the start of option 2
    ("I keep the", 1, "chosen"),  # a short start, far from both by edit distance, is still option 1's start
    ("I", None, "unparsed"),  # one word starts both options: not a choice
    (f"{O1} or {O2}", None, "both"),  # both options repeated
    ("B", None, "unparsed"),  # 33 edits from either option: equal distances are no choice
    # App. A.3.1: the nearer option by edit distance, however far: "family" is option 1's last word (27 deletions
    # from option 1); option 2 has no "l", so it is at least 28 edits away
    ("family", 1, "chosen"),
    ("As an AI language model, I have no personal preference.", None, "refusal"),
    ("", None, "unparsed"),
])
def test_extract_repeat_by_edit_distance(text, shown, status):
    assert prompts.extract_repeat(text, O1, O2) == prompts.Extraction(shown, status)


def test_repeat_rule_similar_only_is_a_named_option():
    """Ours, not the paper's (prompts.REPEAT_RULES): an answer far from both options is neutral; an answer
    near one is still read."""
    assert prompts.extract_repeat("family", O1, O2, "similar_only") == prompts.Extraction(None, "unparsed")
    assert prompts.extract_repeat("i keep the tradition of my famly", O1, O2, "similar_only") == \
        prompts.Extraction(1, "chosen")
    assert prompts.score_answer("repeat_norm", "family", O1, O2) == (1.0, "chosen", 1)
    assert prompts.score_answer("repeat_norm", "family", O1, O2, "similar_only") == (0.5, "unparsed", None)


REAL_CDEVAL = (Path(__file__).resolve().parents[2] / "shared" / "reference" / "CDEval" / "JinuHONG845_LLM_Test_Culture"
               / "CDEval.json")


@pytest.mark.reference
@pytest.mark.skipif(not REAL_CDEVAL.is_file(), reason=f"reference data absent: {REAL_CDEVAL}")
def test_repeat_rules_on_the_authors_items():
    """On every item of the authors' CDEval.json, in both option orders: an exact repeat of an option is that
    option under either rule; an answer that is one option's last word alone (no prefix, no containment) is still
    read by App. A.3.1's nearest-option rule whenever that option is strictly nearer, and is neutral under
    similar_only whenever the nearer option is under 0.5 similar."""
    from rapidfuzz.distance import Levenshtein

    items = json.loads(REAL_CDEVAL.read_text(encoding="utf-8"))
    assert len(items) == 2953
    nearest_read = far = 0
    for item in items:
        o1, o2 = item["Option 1"].strip(), item["Option 2"].strip()
        for first, second in ((o1, o2), (o2, o1)):
            for rule in prompts.REPEAT_RULES:
                assert prompts.extract_repeat(first, first, second, rule).shown == 1
                assert prompts.extract_repeat(second, first, second, rule).shown == 2
        word = "".join(c for c in o1.split()[-1] if c.isalpha())
        a, b = (" ".join("".join(c if c.isalnum() else " " for c in t.lower()).split()) for t in (o1, o2))
        if len(word) < 4 or word.lower() in b.split() or len(word.split()) != 1:
            continue
        d1, d2 = Levenshtein.distance(word.lower(), a), Levenshtein.distance(word.lower(), b)
        if d1 < d2 and not prompts._REFUSAL.search(word):
            nearest_read += 1
            assert prompts.extract_repeat(word, o1, o2).shown == 1
            if Levenshtein.normalized_similarity(word.lower(), a) < prompts.MIN_REPEAT_SIMILARITY:
                far += 1
                assert prompts.extract_repeat(word, o1, o2, "similar_only").status == "unparsed"
    assert nearest_read > 1000 and far > 1000


def test_answer_that_starts_an_option_is_that_option_in_every_template():
    # issue #19: the sample's PDI/Education item; "Point it out politely" is how option 2 begins
    o1 = "Stay quiet; correcting the teacher in front of others is not the student's place."
    o2 = "Point it out politely; teachers and students can correct each other."
    assert prompts.score_answer("repeat_norm", "Point it out politely", o1, o2) == (0.0, "chosen", 2)
    assert prompts.score_answer("repeat_reverse", "Point it out politely.", o1, o2) == (0.0, "chosen", 1)
    assert prompts.score_answer("ab_reverse", "Point it out politely", o1, o2) == (0.0, "chosen", 1)
    assert prompts.score_answer("ab_norm", "Stay quiet", o1, o2) == (1.0, "chosen", 1)


def test_target_score_follows_the_option_order():
    # norm shows option_1 first: A / yes / the first line is the target orientation (1); reverse swaps.
    assert prompts.score_answer("ab_norm", "A", O1, O2)[0] == 1.0
    assert prompts.score_answer("ab_reverse", "A", O1, O2)[0] == 0.0
    assert prompts.score_answer("ab_reverse", "B", O1, O2)[0] == 1.0
    assert prompts.score_answer("compare_norm", "Yes", O1, O2)[0] == 1.0
    assert prompts.score_answer("compare_reverse", "Yes", O1, O2)[0] == 0.0
    assert prompts.score_answer("compare_reverse", "No", O1, O2)[0] == 1.0
    assert prompts.score_answer("repeat_reverse", O1, O1, O2)[0] == 1.0  # content, not position, decides
    assert prompts.score_answer("repeat_norm", O2, O1, O2)[0] == 0.0
    for neutral in ("I refuse.", "Both A and B.", ""):
        assert prompts.score_answer("ab_norm", neutral, O1, O2)[0] == 0.5


# ------------------------------------------------------------------------------------------- Eq. 1, 2, 6, 7


def scored_rows(model: str, values: dict[tuple[str, str], list[float]]) -> pl.DataFrame:
    """Scored answers: (question, prompt) -> the scores of its samples (sample index = position)."""
    rows = []
    for (question, prompt), scores in values.items():
        template, order = prompt.rsplit("_", 1)
        for r, s in enumerate(scores):
            rows.append({"model": model, "question_id": question, "dimension": "PDI", "domain": "Work",
                         "prompt": prompt, "template": template, "order": order, "sample_index": r, "score": s})
    return pl.DataFrame(rows)


HAND = {
    # ab: q1 k0 (1, 0) differ, k1 (1, 0) differ; q2 (1, 1) (1, 1) agree: U_ab = 2
    ("q1", "ab_norm"): [1, 1], ("q1", "ab_reverse"): [0, 0], ("q2", "ab_norm"): [1, 1], ("q2", "ab_reverse"): [1, 1],
    # repeat: q1 agree twice; q2 k0 (0.5, 1) differ, k1 (0.5, 0) differ: U_repeat = 2 (a neutral answer is a value)
    ("q1", "repeat_norm"): [1, 1], ("q1", "repeat_reverse"): [1, 1],
    ("q2", "repeat_norm"): [0.5, 0.5], ("q2", "repeat_reverse"): [1, 0],
    # compare: q1 k0 (1, 0.5) differ, k1 (0.5, 0) differ; q2 agree: U_compare = 2. Eq. 1 for q1 norm: 0.75.
    ("q1", "compare_norm"): [1, 0.5], ("q1", "compare_reverse"): [0.5, 0], ("q2", "compare_norm"): [0, 0],
    ("q2", "compare_reverse"): [0, 0],
}


def test_prompt_likelihood_and_instability_count_by_hand():
    scored = scored_rows("m", HAND)
    lik = cdeval.prompt_likelihood(scored)
    assert lik.filter((pl.col("question_id") == "q1") & (pl.col("template") == "compare")
                      & (pl.col("order") == "norm"))["likelihood"].item() == pytest.approx(0.75)
    assert set(lik["n_samples"]) == {2}
    u = {r["template"]: (r["instability"], r["n_pairs"]) for r in cdeval.instability(scored).iter_rows(named=True)}
    assert u == {"ab": (2, 4), "repeat": (2, 4), "compare": (2, 4)}  # counts over 2 questions x 2 samples


def test_eq7_weights_for_a_model_that_flips_on_one_template():
    # Ten questions, R = 1: A/B and Repeat answer the same option in both orders (U = 0); Compare says "yes" to
    # both orders, i.e. the target in norm and the other option in reverse: U_compare = 10.
    values = {}
    for q in range(10):
        values |= {(f"q{q}", "ab_norm"): [1], (f"q{q}", "ab_reverse"): [1], (f"q{q}", "repeat_norm"): [0],
                   (f"q{q}", "repeat_reverse"): [0], (f"q{q}", "compare_norm"): [1], (f"q{q}", "compare_reverse"): [0]}
    scored = scored_rows("m", values)
    weights = cdeval.template_weights(cdeval.instability(scored))
    w = dict(weights.select("template", "weight").iter_rows())
    # exp(0 / -1000) = 1, 1, exp(10 / -1000) = exp(-0.01) = 0.9900498; sum 2.9900498
    # -> 1 / 2.9900498 = 0.3344425 (A/B, Repeat), 0.9900498 / 2.9900498 = 0.3311149 (Compare)
    assert w == pytest.approx({"ab": 0.3344425, "repeat": 0.3344425, "compare": 0.3311149}, abs=1e-7)
    # w_t^norm = w_t^reverse = half of it (Eq. 7)
    assert dict(weights.select("template", "prompt_weight").iter_rows())["compare"] == pytest.approx(0.3311149 / 2)
    # Eq. 2 for q0: w_ab/2 (1 + 1) + w_repeat/2 (0 + 0) + w_compare/2 (1 + 0) = (1 + e/2) / (2 + e) = 1/2,
    # e = exp(-0.01): the flipping template pulls the A/B answer (1) down to even
    lik = cdeval.orientation_likelihood(cdeval.prompt_likelihood(scored), weights)
    assert lik.filter(pl.col("question_id") == "q0")["likelihood"].item() == pytest.approx(0.5, abs=1e-12)


def test_eq7_reproduces_table_4_from_the_instabilities_it_implies():
    # Table 4, GPT-4: 0.714, 0.147, 0.139. With N = -1000 the weights fix the differences of U:
    # U_repeat - U_ab = 1000 ln(0.714 / 0.147) = 1580.4, U_compare - U_ab = 1000 ln(0.714 / 0.139) = 1636.3.
    # U = (0, 1580, 1636): exp(-1.580) = 0.205975, exp(-1.636) = 0.194757; sum 1.400732
    # -> 0.71391, 0.14705, 0.13904: Table 4's numbers to three decimals.
    instab = pl.DataFrame({"model": ["GPT-4"] * 3, "template": ["ab", "repeat", "compare"],
                           "instability": [0, 1580, 1636], "n_pairs": [2953] * 3})
    w = cdeval.template_weights(instab)["weight"].to_list()
    assert [round(x, 3) for x in w] == [0.714, 0.147, 0.139]


# --------------------------------------------------------------------------------------------------- Eq. 3-5

TABLE_9_GPT35_MEAN = {"PDI": 0.2850, "IDV": 0.4866, "UAI": 0.3639, "MAS": 0.2950, "LTO": 0.7539, "IVR": 0.6905}
TABLE_10 = pl.DataFrame({"country_code": ["GER", "CHI", "USA"], "country_name": ["Germany", "China", "United States"],
                         "pdi": [35.0, 80.0, 40.0], "idv": [79.0, 43.0, 60.0], "uai": [65.0, 30.0, 46.0],
                         "mas": [66.0, 66.0, 62.0], "lto": [57.0, 77.0, 50.0], "ivr": [40.0, 24.0, 68.0]})


def dims(model: str, values: dict[str, float]) -> list[dict]:
    return [{"model": model, "dimension": d, "likelihood": values.get(d, 0.5), "domain_mean": None, "n_questions": 1}
            for d in cdeval.DIMENSIONS]


def test_eq3_table_9_gpt35_means_against_table_10_by_hand():
    sim = cdeval.country_similarity(pl.DataFrame(dims("gpt-3.5", TABLE_9_GPT35_MEAN)), TABLE_10)
    got = dict(sim.select("country_name", "similarity").iter_rows())
    # United States: beta C_h = (0.40, 0.60, 0.46, 0.62, 0.50, 0.68); C_m - beta C_h = (-0.1150, -0.1134, -0.0961,
    # -0.3250, 0.2539, 0.0105); squares 0.013225 + 0.01285956 + 0.00923521 + 0.105625 + 0.06446521 + 0.00011025
    # = 0.20552023; sqrt 0.4533433; Sim = 1 / 1.4533433 = 0.688068.
    # Germany: squares 0.004225 + 0.09205156 + 0.08185321 + 0.133225 + 0.03381921 + 0.08439025 = 0.42956423;
    # Sim = 1 / (1 + 0.6554115) = 0.604078. China: 0.265225 + 0.00320356 + 0.00408321 + 0.133225 + 0.00025921
    # + 0.20295025 = 0.60894623; Sim = 1 / (1 + 0.7803501) = 0.561687.
    # (The paper's Fig. 4 gives 0.78 for ChatGPT(EN) and the United States: not what Table 9's means give.)
    assert got["United States"] == pytest.approx(1 / (1 + math.sqrt(0.20552023)), abs=1e-9)
    assert got["Germany"] == pytest.approx(1 / (1 + math.sqrt(0.42956423)), abs=1e-9)
    assert got["China"] == pytest.approx(1 / (1 + math.sqrt(0.60894623)), abs=1e-9)
    assert got["United States"] == pytest.approx(0.688068, abs=1e-6)
    assert sim["country_name"].to_list() == ["United States", "Germany", "China"]  # most similar first (Sec. 4.2)


def test_country_lacking_a_dimension_is_listed_apart_not_ranked():
    hofstede = TABLE_10.vstack(pl.DataFrame({"country_code": ["ALB"], "country_name": ["Albania"], "pdi": [None],
                                             "idv": [None], "uai": [None], "mas": [None], "lto": [61.0],
                                             "ivr": [15.0]}, schema=TABLE_10.schema))
    # Albania's two scores are nearer the all-0.5 model than any complete country, yet it is not ranked
    dim_lik = pl.DataFrame(dims("m", {"LTO": 0.61, "IVR": 0.15}))
    ranked = cdeval.country_similarity(dim_lik, hofstede)["country_name"].to_list()
    assert "Albania" not in ranked and len(ranked) == 3
    _, left_out = cdeval.country_vectors(hofstede)
    assert left_out.to_dicts() == [{"country_code": "ALB", "country_name": "Albania",
                                    "missing": ["PDI", "IDV", "UAI", "MAS"]}]
    # a model without all six dimensions is not compared either
    partial = pl.DataFrame(dims("p", {})).filter(pl.col("dimension") != "IVR")
    assert cdeval.country_similarity(partial, hofstede).height == 0
    assert cdeval.model_vectors(partial)[1] == {"p": ["IVR"]}


def test_eq4_eq5_model_similarity_and_pairwise_baseline_by_hand():
    dim_lik = pl.DataFrame(dims("A", {}) + dims("B", {"PDI": 0.8}) + dims("C", {"IDV": 0.9}))
    pairs = cdeval.model_similarity(dim_lik)
    sim = {(r["model_a"], r["model_b"]): r["similarity"] for r in pairs.iter_rows(named=True)}
    # A-B: |0.8 - 0.5| = 0.3 -> 1 / 1.3 = 0.769231; A-C: 0.4 -> 1 / 1.4 = 0.714286;
    # B-C: sqrt(0.3^2 + 0.4^2) = 0.5 -> 1 / 1.5 = 0.666667; each ordered pair once in each direction
    assert len(sim) == 6 and sim[("B", "A")] == sim[("A", "B")]
    assert sim[("A", "B")] == pytest.approx(1 / 1.3) and sim[("A", "C")] == pytest.approx(1 / 1.4)
    assert sim[("B", "C")] == pytest.approx(1 / 1.5)
    # Eq. 5: 1 / (3 * 2) * 2 * (1/1.3 + 1/1.4 + 1/1.5) = 0.716728
    assert cdeval.pairwise_baseline(pairs) == pytest.approx((1 / 1.3 + 1 / 1.4 + 1 / 1.5) / 3, abs=1e-12)
    assert cdeval.pairwise_baseline(cdeval.model_similarity(pl.DataFrame(dims("A", {})))) is None


def test_sec_4_4_group_vectors_are_country_means():
    hofstede = TABLE_10.with_columns(pl.Series("group", ["Rich & Western", None, "Rich & Western"]))
    groups = cdeval.group_similarity(pl.DataFrame(dims("m", {})), hofstede)
    row = groups.row(0, named=True)
    # mean of Germany and the United States: (37.5, 69.5, 55.5, 64, 53.5, 54) -> beta: (0.375, 0.695, 0.555, 0.64,
    # 0.535, 0.54); minus 0.5: squares 0.015625 + 0.038025 + 0.003025 + 0.0196 + 0.001225 + 0.0016 = 0.0791
    assert (row["group"], row["n_countries"]) == ("Rich & Western", 2) and groups.height == 1
    assert row["similarity"] == pytest.approx(1 / (1 + math.sqrt(0.0791)), abs=1e-12)


# -------------------------------------------------------------------------------------------- end to end


def target_lover(questions: pl.DataFrame):
    """Scripted model that always picks option_1 (the target orientation), phrased as real models do."""
    options = {row["option_1"]: row for row in questions.iter_rows(named=True)}

    def reply(text: str, body: dict) -> str:
        option_1 = next(o for o in options if o in text)
        if "Respond solely with A or B" in text:
            return "**A**" if f"(A) {option_1}" in text else "Option B, because it fits me."
        if "repeating" in text:
            return f"{option_1.lower().rstrip('.')}"
        return "Yes." if text.index(option_1) < text.index(" over ") else "No, I do not."

    return reply


def evaluate_cli(server: ScriptedServer, release: Path, out: Path, *extra: str, model: str = "scripted-model"):
    return CliRunner().invoke(app, ["evaluate", "cdeval", "--model", model, "--base-url", server.base_url,
                                    "--release", str(release), "--out", str(out), *extra],
                              env={"OPENAI_API_KEY": SECRET})


def test_end_to_end_always_a_and_resume(release, tmp_path):
    out = tmp_path / "run-a"
    with ScriptedServer(reply="A", model="always-a") as server:
        result = evaluate_cli(server, release, out, "--samples", "2", "--limit", "3", model="always-a")
        assert result.exit_code == 0, result.output
        assert server.request_count == 3 * 6 * 2
        for name in ("responses.jsonl", "metrics.json", "run.json", "dimensions.png", "pca.png", "cache.sqlite"):
            assert (out / name).is_file(), name
        records = run_folder.read_jsonl(out / "responses.jsonl")
        assert len(records) == 36 and {r["model"] for r in records} == {"always-a"}
        by_prompt = {}
        for r in records:
            by_prompt.setdefault(r["prompt"], set()).add((r["score"], r["parse_status"]))
        # "A": option_1 in norm, option_2 in reverse; "A" to a yes/no question is unparseable (0.5)
        assert by_prompt["ab_norm"] == {(1.0, "chosen")} and by_prompt["ab_reverse"] == {(0.0, "chosen")}
        assert by_prompt["compare_norm"] == by_prompt["compare_reverse"] == {(0.5, "unparsed")}
        metrics = json.loads((out / "metrics.json").read_text())
        m = metrics["per_model"]["always-a"]
        # Eq. 6: A/B disagrees on every (question, sample): 3 x 2 = 6; Compare and Repeat are 0.5 both ways: 0
        assert m["instability"] == {"ab": 6, "repeat": 0, "compare": 0}
        total = math.exp(6 / -1000) + 2  # Eq. 7
        assert m["template_weights"] == pytest.approx({"ab": math.exp(-0.006) / total, "repeat": 1 / total,
                                                       "compare": 1 / total}, abs=1e-12)
        assert m["parse_status"]["unparsed"] >= 12 and m["n_responses"] == 36
        asked = {r["dimension"] for r in records}  # --limit 3: one question of each of three dimensions
        missing = [d for d in cdeval.DIMENSIONS if d not in asked]
        assert len(asked) == 3 and set(m["dimension_likelihood"]) == asked
        assert m["missing_dimensions"] == missing and m["country_similarity"] == []
        assert metrics["pca"]["left_out"][0] == {"kind": "model", "name": "always-a", "missing": missing}
        run = json.loads((out / "run.json").read_text())
        assert run["benchmark"] == "cdeval" and run["runner"]["n_queried"] == 36
        assert run["evaluation"]["samples"] == 2 and run["evaluation"]["temperature"] == 1.0
        assert SECRET not in (out / "run.json").read_text()

        server.reset_counts()
        again = evaluate_cli(server, release, out, "--samples", "2", "--limit", "3", model="always-a")
        assert again.exit_code == 0, again.output
        assert server.request_count == 0  # resumed entirely from the cache
        assert json.loads((out / "run.json").read_text())["runner"]["n_cached"] == 36
        assert json.loads((out / "metrics.json").read_text())["per_model"] == metrics["per_model"]


def test_end_to_end_target_lover_then_score_two_models(release, tmp_path):
    questions = small_questions()
    out = tmp_path / "run-target"
    with ScriptedServer(reply=target_lover(questions), model="target-lover") as server:
        result = evaluate_cli(server, release, out, "--samples", "1", model="target-lover")
        assert result.exit_code == 0, result.output
        assert server.request_count == 12 * 6
    metrics = json.loads((out / "metrics.json").read_text())
    m = metrics["per_model"]["target-lover"]
    assert m["parse_status"]["chosen"] == 72
    assert m["dimension_likelihood"] == {d: 1.0 for d in cdeval.DIMENSIONS}
    assert m["template_weights"] == pytest.approx({"ab": 1 / 3, "repeat": 1 / 3, "compare": 1 / 3})
    assert m["domain_likelihood"]["PDI"] == {"Education": 1.0, "Family": 1.0}
    # Eq. 3, C_m = 1 everywhere: USA 1 - 0.01 (40, 91, 46, 62, 26, 68) -> (0.6, 0.09, 0.54, 0.38, 0.74, 0.32);
    # CHN (0.2, 0.8, 0.7, 0.34, 0.13, 0.76); "Partial" lacks three scores: listed apart, not ranked
    usa = math.sqrt(0.6**2 + 0.09**2 + 0.54**2 + 0.38**2 + 0.74**2 + 0.32**2)
    china = math.sqrt(0.2**2 + 0.8**2 + 0.7**2 + 0.34**2 + 0.13**2 + 0.76**2)
    sims = {c["country_code"]: c["similarity"] for c in m["country_similarity"]}
    assert sims == pytest.approx({"USA": 1 / (1 + usa), "CHN": 1 / (1 + china)}, abs=1e-12)
    assert metrics["hofstede"]["countries_left_out"] == [{"country_code": "XXX", "country_name": "Partial",
                                                          "missing": ["UAI", "LTO", "IVR"]}]
    assert metrics["pairwise_baseline"] is None

    other = tmp_path / "run-a"
    with ScriptedServer(reply="B", model="always-b") as server:
        assert evaluate_cli(server, release, other, "--samples", "1", model="always-b").exit_code == 0
    scored = tmp_path / "scored"
    result = CliRunner().invoke(app, ["score", "cdeval", "--responses",
                                      f"{out / 'responses.jsonl'},{other / 'responses.jsonl'}",
                                      "--release", str(release), "--out", str(scored)])
    assert result.exit_code == 0, result.output
    both = json.loads((scored / "metrics.json").read_text())
    assert both["models"] == ["always-b", "target-lover"]
    assert both["per_model"]["target-lover"] == metrics["per_model"]["target-lover"]  # recomputed, same numbers
    assert len(both["model_similarity"]) == 2  # ordered pairs (Eq. 5)
    assert both["pairwise_baseline"] == pytest.approx(both["model_similarity"][0]["similarity"])
    kinds = [p["kind"] for p in both["pca"]["points"]]
    assert kinds.count("model") == 2 and kinds.count("country") == 2  # "Partial" lacks three scores
    assert both["pca"]["left_out"] == [{"kind": "country", "name": "Partial", "missing": ["UAI", "LTO", "IVR"]}]
    assert (scored / "pca.png").stat().st_size > 1000 and (scored / "dimensions.png").stat().st_size > 1000


def hand_answer(prompt: str, k: int, n: int, option_1: str, option_2: str) -> tuple[str, float]:
    """Model "hand" (R = 2): the answer to question n's prompt at sample k, and the orientation it picks (1 target,
    0 other, 0.5 neutral), read by the test, not the extractor."""
    table = {
        ("ab_norm", 0): ("A", 1.0), ("ab_norm", 1): ("B", 0.0) if n % 2 else ("A", 1.0),
        ("ab_reverse", 0): ("B", 1.0), ("ab_reverse", 1): ("A", 0.0),
        ("repeat_norm", 0): (option_1, 1.0), ("repeat_norm", 1): ("I cannot choose.", 0.5),
        ("repeat_reverse", 0): (option_2, 0.0), ("repeat_reverse", 1): (option_1, 1.0),
        ("compare_norm", 0): ("Yes", 1.0), ("compare_norm", 1): ("No", 0.0),
        ("compare_reverse", 0): ("Yes", 0.0), ("compare_reverse", 1): ("Yes", 0.0),
    }
    return table[(prompt, k)]


def test_score_hand_written_responses_agrees_with_the_paper_to_1e9(tmp_path):
    questions = small_questions()
    release = write_release(tmp_path / "cdeval", {"questions": questions, "hofstede": TABLE_10}, "cdeval")
    names = ["ab_norm", "ab_reverse", "repeat_norm", "repeat_reverse", "compare_norm", "compare_reverse"]
    records, value = [], {}
    for n, q in enumerate(questions.iter_rows(named=True)):
        for prompt in names:
            for k in range(2):
                text, v = hand_answer(prompt, k, n, q["option_1"], q["option_2"])
                records.append({"model": "hand", "question_id": q["id"], "prompt": prompt, "sample_index": k,
                                "response": text})
                value[(q["id"], prompt, k)] = v
                # the same model in German (Sec. 4.2): always the target orientation
                records.append({"model": "hand", "language": "de", "question_id": q["id"], "prompt": prompt,
                                "sample_index": k, "response": {"ab_norm": "A", "ab_reverse": "B",
                                                                "repeat_norm": q["option_1"],
                                                                "repeat_reverse": q["option_1"],
                                                                "compare_norm": "Yes",
                                                                "compare_reverse": "No"}[prompt]})
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "cdeval", "--responses", str(path), "--release", str(release),
                                      "--out", str(tmp_path / "scored")])
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "scored" / "metrics.json").read_text())
    assert metrics["models"] == ["hand", "hand [de]"]
    m = metrics["per_model"]["hand"]

    # Eq. 6: A/B differs at k = 1 for even n (6 questions); Repeat at k = 0 and k = 1 (24); Compare at k = 0 (12)
    ids = questions["id"].to_list()
    u = {t: sum(value[(i, f"{t}_norm", k)] != value[(i, f"{t}_reverse", k)] for i in ids for k in range(2))
         for t in ("ab", "repeat", "compare")}
    assert u == {"ab": 6, "repeat": 24, "compare": 12} == m["instability"]
    # Eq. 7, N = -1000
    z = sum(math.exp(x / -1000) for x in u.values())
    w = {t: math.exp(x / -1000) / z for t, x in u.items()}
    assert m["template_weights"] == pytest.approx(w, abs=1e-12)
    assert metrics["template_weights"]["hand"] == m["template_weights"]  # Table 4's layout: model -> template
    # Eq. 1 and Eq. 2 per question, then C_m,d (Eq. 3) as the mean over the dimension's two questions
    p = {i: sum(w[name.rsplit("_", 1)[0]] / 2 * (value[(i, name, 0)] + value[(i, name, 1)]) / 2 for name in names)
         for i in ids}
    c = {d: (p[ids[2 * j]] + p[ids[2 * j + 1]]) / 2 for j, d in enumerate(cdeval.DIMENSIONS)}
    assert m["dimension_likelihood"] == pytest.approx(c, abs=1e-9)
    # Eq. 3 against Table 10
    table_10 = {"Germany": (35, 79, 65, 66, 57, 40), "China": (80, 43, 30, 66, 77, 24),
                "United States": (40, 60, 46, 62, 50, 68)}
    sims = {name: 1 / (1 + math.sqrt(sum((0.01 * h - c[d]) ** 2 for h, d in zip(scores, cdeval.DIMENSIONS))))
            for name, scores in table_10.items()}
    got = {s["country_name"]: s["similarity"] for s in m["country_similarity"]}
    assert got == pytest.approx(sims, abs=1e-9)
    # Sec. 4.2: the German variant picks the target everywhere: C = 1; Eq. 4 between the two, Eq. 5 baseline
    assert metrics["per_model"]["hand [de]"]["dimension_likelihood"] == pytest.approx({d: 1.0 for d in c}, abs=1e-12)
    eq4 = 1 / (1 + math.sqrt(sum((1 - c[d]) ** 2 for d in c)))
    assert metrics["pairwise_baseline"] == pytest.approx(eq4, abs=1e-9)
    assert [h["version"] for h in metrics["hofstede"]["versions"]] == [None]  # a hand-made table: no version column


# ------------------------------------------------------------------------------------------------ errors



def test_score_repeat_rule_option_from_config(release, tmp_path):
    """--config {"repeat_rule": "similar_only"} (ours) turns a far Repeat answer neutral; the default (App. A.3.1)
    takes the nearer option; metrics.json names the rule; an unknown rule is one line, exit 2."""
    o1, o2 = small_questions().row(0, named=True)["option_1"], small_questions().row(0, named=True)["option_2"]
    assert "alpha" in o1 and "alpha" not in o2 and "l" not in o2.replace("plan", "")
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps({"model": "m", "question_id": "q00", "prompt": "repeat_norm", "sample_index": 0,
                                     "response": "alpha"}) + "\n", encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(app, ["score", "cdeval", "--responses", str(responses), "--release", str(release),
                               "--out", str(tmp_path / "nearest")]).exit_code == 0
    nearest = json.loads((tmp_path / "nearest" / "metrics.json").read_text())
    assert nearest["constants"]["repeat_rule"] == "nearest"
    assert nearest["per_model"]["m"]["parse_status"]["chosen"] == 1
    config = tmp_path / "cdeval.json"
    config.write_text('{"repeat_rule": "similar_only"}', encoding="utf-8")
    assert runner.invoke(app, ["score", "cdeval", "--responses", str(responses), "--release", str(release),
                               "--out", str(tmp_path / "similar"), "--config", str(config)]).exit_code == 0
    similar = json.loads((tmp_path / "similar" / "metrics.json").read_text())
    assert similar["constants"]["repeat_rule"] == "similar_only"
    assert similar["per_model"]["m"]["parse_status"]["unparsed"] == 1
    assert similar["per_model"]["m"]["prompt_likelihood"]["repeat_norm"] == 0.5
    # compare re-scores with the runs' rule, and refuses runs scored with different rules
    line = one_line_error(runner.invoke(app, ["compare", str(tmp_path / "nearest"), str(tmp_path / "similar"),
                                              "--out", str(tmp_path / "report"), "--n-resamples", "50"]))
    assert "different Repeat rules (nearest, similar_only)" in line
    assert runner.invoke(app, ["score", "cdeval", "--responses", str(responses), "--release", str(release),
                               "--out", str(tmp_path / "similar2"), "--config", str(config)]).exit_code == 0
    result = runner.invoke(app, ["compare", str(tmp_path / "similar"), str(tmp_path / "similar2"), "--out",
                                 str(tmp_path / "report"), "--n-resamples", "50"])
    assert result.exit_code == 0, result.output
    compared = json.loads((tmp_path / "report" / "comparison.json").read_text())
    assert compared["metrics"]["constants"]["repeat_rule"] == "similar_only"
    config.write_text('{"repeat_rule": "closest"}', encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["score", "cdeval", "--responses", str(responses), "--release",
                                              str(release), "--out", str(tmp_path / "bad"), "--config", str(config)]))
    assert "unknown repeat_rule 'closest'" in line and "cdeval.json" in line


def test_cli_errors_are_one_line_exit_2(release, tmp_path):
    runner = CliRunner()
    line = one_line_error(runner.invoke(app, ["evaluate", "nosuch", "--model", "m", "--out", str(tmp_path / "x")]))
    assert "unknown benchmark 'nosuch'" in line and "cdeval" in line
    line = one_line_error(runner.invoke(app, ["evaluate", "cdeval", "--model", "m", "--out", str(tmp_path / "x"),
                                              "--release", str(tmp_path / "missing")]))
    assert "missing: release folder not found" in line
    line = one_line_error(runner.invoke(app, ["evaluate", "cdeval", "--model", "m", "--out", str(tmp_path / "x"),
                                              "--release", str(release), "--samples", "0"]))
    assert "--samples must be at least 1" in line
    wvb_like = write_release(tmp_path / "wvb", {"questions": small_questions()}, "wvb")
    line = one_line_error(runner.invoke(app, ["score", "cdeval", "--responses", str(tmp_path / "r.jsonl"),
                                              "--release", str(wvb_like), "--out", str(tmp_path / "o")]))
    assert "not a CDEval release" in line
    line = one_line_error(runner.invoke(app, ["score", "cdeval", "--responses", str(tmp_path / "r.jsonl"),
                                              "--release", str(release), "--out", str(tmp_path / "o")]))
    assert "responses file not found" in line
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "m", "question_id": "q00", "prompt": "ab_norm", "sample_index": 0, "response": "A"}\n'
                   "{not json\n", encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["score", "cdeval", "--responses", str(bad), "--release", str(release),
                                              "--out", str(tmp_path / "o")]))
    assert "row 2" in line and "not JSON" in line
    bad.write_text('{"model": "m", "question_id": "zz", "prompt": "ab_norm", "sample_index": 0, "response": "A"}\n',
                   encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["score", "cdeval", "--responses", str(bad), "--release", str(release),
                                              "--out", str(tmp_path / "o")]))
    assert "'zz' is not in the release" in line and "row 1" in line
    assert not (tmp_path / "o").exists()


def test_hofstede_column_names_are_normalised():
    frame = pl.DataFrame({"code": ["USA"], "country": ["United States"], "PDI": [40], "IDV": [91], "UAI": [46],
                          "MAS": [62], "LTO": [26], "IVR": [None]}, schema_overrides={"IVR": pl.Int64})
    out = cdeval.normalise_hofstede(frame)
    assert out.columns == ["country_code", "country_name", "pdi", "idv", "uai", "mas", "lto", "ivr", "group",
                           "source_file", "version"]
    assert out.row(0) == ("USA", "United States", 40.0, 91.0, 46.0, 62.0, 26.0, None, None, None, None)
    with pytest.raises(InputError, match="lacks column ivr"):
        cdeval.normalise_hofstede(frame.drop("IVR"))


# ------------------------------------------------------------------------------ the real builder's sample release


@pytest.fixture(scope="module")
def sample_release(bundled_release) -> Path:
    """The bundled sample raw/ built by the CDEval builder; a failing build fails the test (conftest)."""
    return bundled_release("cdeval")


def test_end_to_end_on_the_builders_sample_release(sample_release, tmp_path):
    tables = cdeval.release_tables(sample_release)
    n = tables["questions"].height
    out = tmp_path / "run"
    with ScriptedServer(reply=target_lover(tables["questions"]), model="target-lover") as server:
        result = evaluate_cli(server, sample_release, out, "--samples", "1", model="target-lover")
        assert result.exit_code == 0, result.output
        assert server.request_count == 6 * n
    metrics = json.loads((out / "metrics.json").read_text())
    m = metrics["per_model"]["target-lover"]
    assert m["parse_status"]["chosen"] == 6 * n
    assert set(m["dimension_likelihood"].values()) == {1.0}
    assert m["country_similarity"] and m["country_similarity"][0]["similarity"] <= 1
    scored = tmp_path / "scored"
    result = CliRunner().invoke(app, ["score", "cdeval", "--responses", str(out / "responses.jsonl"),
                                      "--release", str(sample_release), "--out", str(scored)])
    assert result.exit_code == 0, result.output
    assert json.loads((scored / "metrics.json").read_text())["per_model"] == metrics["per_model"]
