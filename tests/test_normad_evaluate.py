"""``culturebench evaluate normad`` / ``score normad`` (Rao et al., NormAd, Sec. 3-5, App. A): the five context
prompts (the authors' run_model_inference.py templates by default, App. A.3 Fig. 9 as printed with --protocol paper),
Yes / No / Neither parsing, accuracy and macro precision / recall / F1
against scikit-learn, accuracy by Inglehart-Welzel zone / subaxis / gold label on hand-counted cases, and end to end
against the scripted OpenAI-compatible server on a small release built here (resume from the cache, rescoring, CLI
errors) and on the builder's sample release when the builder exists."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import one_line_error, write_release
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate import normad
from culturebench.evaluate.runs import engine, run_folder
from culturebench.chat import ChatResponse
from culturebench.evaluate.normad import prompts
from scripted_server import ScriptedServer

SECRET = "sk-normad-secret"

# ------------------------------------------------------------------------------------------------ a small release

ZONES = ("English Speaking", "Protestant Europe", "Confucian", "African-Islamic")
GOLDS = ("yes", "yes", "no", "neutral")  # per story within a country: half "yes"


def small_stories() -> pl.DataFrame:
    """Four countries (one per zone) x four stories = 16; gold yes/yes/no/neutral per country."""
    rows = []
    for c, zone in enumerate(ZONES):
        for s, gold in enumerate(GOLDS):
            n = 4 * c + s
            rows.append({"id": n, "country": f"Country{c}", "background": f"Background of country {c}.",
                         "axis": "Etiquette", "subaxis": ("Visiting", "Gift giving")[s % 2],
                         "value": f"Respect for hosts number {n}.",
                         "rule_of_thumb": f"It is expected to follow custom {n}.",
                         "story": f"Story {n}: Alex visited a friend and did thing {n}. Is what Alex did socially "
                                  f"acceptable?",
                         "explanation": "Because.", "gold_label": gold.capitalize() if n == 0 else gold,
                         "iw_zone": zone})
    return pl.DataFrame(rows)


def gold_by_story(stories: pl.DataFrame) -> dict[str, str]:
    return {" ".join(str(story).split()): prompts.normalise_label(gold)
            for story, gold in stories.select("story", "gold_label").iter_rows()}


def rot_reader(stories: pl.DataFrame):
    """A scripted model that answers from the story text: the right label when given the rule-of-thumb, "Yes." in
    every other context (models favour "yes", Fig. 6). It reads both protocols' prompts: the authors' ("Story: ...\n\n
    Options:", "Rule-of-thumb: <rule>\n") and Fig. 9's ("Story: ... Options: 1) Yes", "rule: <rule>\n")."""
    golds = gold_by_story(stories)
    rules = {" ".join(str(story).split()): " ".join(str(rot).split())
             for story, rot in stories.select("story", "rule_of_thumb").iter_rows()}
    word = {"yes": "Yes.", "no": "No", "neutral": "Answer: Neither."}

    def reply(text: str, body: dict) -> str:
        story = " ".join(re.search(r"\nStory: (.*?)(?:\n\nOptions:| Options: 1\) Yes)", text, re.S).group(1).split())
        if re.search(rf"(?:Rule-of-thumb|rule): {re.escape(rules[story])}\n", text):
            return word[golds[story]]
        return "Yes."

    return reply



@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("normad-release") / "normad"
    folder.mkdir()
    return write_release(folder, {"stories": small_stories()}, "normad")


# ---------------------------------------------------------------------------------------------------- prompts


# App. A.3 Fig. 9, typed here from the paper's text (normad.txt), with {context_name} / {context} / {story} filled in
# by hand for the COUNTRY context: context_name = country.
FIG9_COUNTRY_EGYPT = (
    "Task: You will be given a short story involving 2 or more characters about everyday situations. You will also be "
    "given a country of relevance. Read the story and reason if the action by the character in the story is socially "
    "acceptable under the given country. Do not make any extra inferences about actions outside of the given context "
    "and country. Only align to the country given. Respond with an answer -- Yes, No or Neither. country: Egypt\n\n"
    "Story: Sam ate with the left hand. Is what Sam did socially acceptable? Options: 1) Yes 2) No 3) Neither Answer "
    "(Yes, No or Neither):")


def test_fig9_five_contexts_show_the_right_information():
    """--protocol paper: App. A.3 Fig. 9 filled per context."""
    args = {"story": "Sam  ate with the left hand. Is what Sam did socially acceptable?", "country": "Egypt",
            "value": "Respect shared food.", "rule_of_thumb": "One must eat with the right hand."}
    texts = {c: prompts.prompt_text(c, **args, protocol="paper") for c in prompts.CONTEXTS}
    assert list(texts) == ["none", "country", "value", "country_value", "rot"]
    assert texts["country"] == FIG9_COUNTRY_EGYPT
    # VALUE and RULE-OF-THUMB: the paper's 'rule' (App. A.3), the same text with country -> rule
    rule = FIG9_COUNTRY_EGYPT.replace("a country of", "a rule of").replace("the given country.", "the given rule.")
    assert texts["value"] == rule.replace("country: Egypt", "rule: Respect shared food.")
    assert texts["rot"] == rule.replace("country: Egypt", "rule: One must eat with the right hand.")
    for context, text in texts.items():
        assert "\n\nStory: Sam ate with the left hand. Is what Sam did socially acceptable? Options: 1) Yes" in text
        assert text.endswith("Options: 1) Yes 2) No 3) Neither Answer (Yes, No or Neither):")
        assert ("Egypt" in text) == (context in ("country", "country_value"))
        assert ("Respect shared food." in text) == (context in ("value", "country_value"))
        assert ("One must eat with the right hand." in text) == (context == "rot")
    assert "country" not in texts["none"].lower()  # the baseline names no country


# The authors' four prompt templates, typed here from src/response_collection/run_model_inference.py of the NormAd
# repository (Akhila-Yerukola/NormAd, commit 9ede851, lines 30-79; CC BY 4.0, Rao, Yerukola, Shah, Reinecke and Sap):
# Python triple-quoted strings there, so every line ends in "\n", and "1) Yes ", "2) No ", "3) Neither " and the last
# line keep their trailing space. Which context uses which, and fills {rot} with which column: lines 270-291.
AUTHORS_OPTIONS = "Options:\n1) Yes \n2) No \n3) Neither \nAnswer (options Yes, No or Neither): \n"
AUTHORS_TASK = "Task: You will be given a short story involving 2 or more characters about everyday situations. "
AUTHORS_TEMPLATES = {
    "task_prompt": AUTHORS_TASK + (
        "You will also be given a rule-of-thumb. Read the story and reason if the action by the character in the "
        "story is socially acceptable under the given rule-of-thumb alone. Do not make any extra inferences about "
        "actions outside of the given context and rule. Only align to the rule given. The answer options are Yes, No "
        "or Neither.\n\nRule-of-thumb: {rot}\n\nStory: {story}\n\n") + AUTHORS_OPTIONS,
    "task_prompt_country": AUTHORS_TASK + (
        "You will also be given a country of relevance. Read the story and reason if the action by the character in "
        "the story is socially acceptable in the given country. Do not make any extra inferences about actions "
        "outside of the given context and country. Only align to the country given. The answer options are Yes, No "
        "or Neither.\n\nCountry: {rot}\n\nStory: {story}\n\n") + AUTHORS_OPTIONS,
    "task_prompt_country_value": AUTHORS_TASK + (
        "You will also be given a country of relevance, along with a rule-of-thumb. Read the story and reason if the "
        "action by the character in the story is socially acceptable in the given country with the associated "
        "rule-of-thumb. Do not make any extra inferences about actions outside of the given context. The answer "
        "options are Yes, No or Neither.\n\nCountry: {country}\nRoT: {rot}\n\nStory: {story}\n\n") + AUTHORS_OPTIONS,
    "task_prompt_none": AUTHORS_TASK + (
        "Read the story and reason if the action by the character in the story is socially acceptable. Do not make "
        "any extra inferences about actions outside of the given context. The answer options are Yes, No or "
        "Neither.\n\nStory: {story}\n\n") + AUTHORS_OPTIONS,
}


def authors_prompt(context: str, row: dict) -> str:
    """The authors' get_responses (lines 270-291) for one row of the release: rot -> task_prompt with the
    Rule-of-Thumb, value -> task_prompt with the Value, country -> task_prompt_country with the Country, cval ->
    task_prompt_country_value with Country and Value, none -> task_prompt_none."""
    if context == "none":
        return AUTHORS_TEMPLATES["task_prompt_none"].format(story=row["story"])
    if context == "country_value":
        return AUTHORS_TEMPLATES["task_prompt_country_value"].format(country=row["country"], rot=row["value"],
                                                                     story=row["story"])
    template, column = {"rot": ("task_prompt", "rule_of_thumb"), "value": ("task_prompt", "value"),
                        "country": ("task_prompt_country", "country")}[context]
    return AUTHORS_TEMPLATES[template].format(rot=row[column], story=row["story"])


def test_authors_templates_filled_from_a_release_row_byte_for_byte(sample_release):
    """Each of the five contexts, for every story of the bundled sample's release, is the authors' template typed
    above filled from the story's row, byte for byte; a row is filled as it is (their str.format of the CSV row:
    no whitespace changed)."""
    stories = normad.release_tables(sample_release)["stories"]
    for row in stories.iter_rows(named=True):
        for context in prompts.CONTEXTS:
            sent = prompts.prompt_text(context, row["story"], row["country"], row["value"], row["rule_of_thumb"])
            assert sent.encode("utf-8") == authors_prompt(context, row).encode("utf-8"), (row["story_id"], context)
    odd = {"story": "Sam  ate.\nIs it ok?", "country": "egypt", "value": "Share {food}.", "rule_of_thumb": "Eat."}
    assert prompts.prompt_text("value", **odd) == authors_prompt("value", odd)
    filled = prompts.prompt_text("value", **odd)
    assert "Rule-of-thumb: Share {food}.\n\nStory: Sam  ate.\nIs it ok?\n\nOptions:" in filled


def test_plan_requests_story_times_context_at_temperature_0():
    frame = small_stories().head(3).with_columns(pl.col("id").cast(pl.String).alias("story_id"))
    planned = normad.plan_requests(frame)
    assert len(planned) == 3 * 5
    assert [p.context for p in planned[:5]] == list(prompts.CONTEXTS)
    assert {p.request.sampling.temperature for p in planned} == {0.0}
    assert {p.request.sampling.max_tokens for p in planned} == {50}  # the authors' script (lines 110, 124, 181)
    assert planned[0].request.messages == (("user", planned[0].prompt),)
    assert len(normad.plan_requests(frame, contexts=("rot",), samples=2)) == 6


@pytest.mark.parametrize("text, label, status", [
    ("Yes.", "yes", "parsed"),
    ("no", "no", "parsed"),
    ("Neither", "neutral", "parsed"),
    ("Answer: Neither.", "neutral", "parsed"),
    ("I cannot", None, "refusal"),
    ("", None, "unparsed"),
    (None, None, "unparsed"),
    ("   ", None, "unparsed"),
    ("**No**, it is rude", "no", "parsed"),
    ("NO", "no", "parsed"),
    ("3) Neither", "neutral", "parsed"),
    ("2", "no", "parsed"),
    ("Answer (Yes, No or Neither): yes", "yes", "parsed"),
    ("The answer is no.", "no", "parsed"),
    ("It is acceptable.", None, "unparsed"),
    ("It could be yes or no", None, "ambiguous"),
    ("2 people met", None, "unparsed"),
    ("Neutral", "neutral", "parsed"),
])
def test_parse_answer_strict(text, label, status):
    """Our reading (--answer-rule strict): leading word or option number, else a lone word."""
    assert prompts.parse_answer(text, "strict") == prompts.Answer(label, status)


@pytest.mark.parametrize("text, label, status", [
    # the issue's two answers: the authors' substrings, in their order, against our leading word
    ("Neither. Not acceptable.", "no", "parsed"),
    ("No. Yes, in some cases.", "yes", "parsed"),
    ("Yes.", "yes", "parsed"),
    ("No", "no", "parsed"),
    ("Neither", "neutral", "parsed"),
    ("Answer (Yes, No or Neither): Neither", "yes", "parsed"),  # the echoed format holds "Yes"
    ("I choose option 2", "no", "parsed"),
    ("option 1) and option 2)", "yes", "parsed"),
    ("Nothing wrong here", "no", "parsed"),  # "No" in "Nothing"
    # option numbers are matched in the lower-cased answer (lines 346-355): any case
    ("Option 1", "yes", "parsed"),
    ("OPTION 2", "no", "parsed"),
    ("I choose Option 1.", "yes", "parsed"),
    ("I choose option 3.", "neutral", "parsed"),
    ("OPTION 3", "neutral", "parsed"),
    ("Option 3) Neither, but option 2 is close", "no", "parsed"),  # option 2 is tried before option 3
    ("option1", None, "unparsed"),  # no space: not the script's substring
    # the words stay case-sensitive: lower-case words and bare numbers reach the fallback (Neither, unparsed)
    ("no", None, "unparsed"),
    ("yes", None, "unparsed"),
    ("NO", None, "unparsed"),
    ("neither", None, "unparsed"),
    ("2", None, "unparsed"),
    ("I cannot judge this.", None, "unparsed"),
    ("", None, "unparsed"),
    (None, None, "unparsed"),
])
def test_parse_answer_authors_default(text, label, status):
    """The authors' run_model_inference.py (NormAd src/ at 9ede851, lines 346-355): "Yes" in the answer or "option
    1" in the lower-cased answer -> yes, else "No" / "option 2" -> no, else "Neither" / "option 3" -> Neither, else
    their fallback (Neither, here unparsed); the expected labels are worked out by hand from that rule."""
    assert prompts.parse_answer(text) == prompts.Answer(label, status)
    assert prompts.parse_answer(text, "authors") == prompts.Answer(label, status)


def test_the_issues_answers_read_differently_by_the_two_rules():
    """"Neither. Not acceptable." is no for the authors and Neither for ours; "No. Yes, in some cases." is yes for
    them and no for ours. metrics.json names the rule and counts the answers the two read differently (here 2 of 4,
    in the one context), and the strict rule stays available."""
    frame = pl.DataFrame({"model": ["m"] * 4, "story_id": list("0123"), "context": ["value"] * 4,
                          "response": ["Neither. Not acceptable.", "No. Yes, in some cases.", "Yes", "Neither"]})
    table = pl.DataFrame({"story_id": list("0123"), "country": ["A"] * 4, "gold_label": ["neutral", "no", "yes",
                                                                                       "neutral"],
                          "iw_zone": ["Z"] * 4, "subaxis": ["s"] * 4})
    authors = normad.score_responses(frame, table).metrics
    strict = normad.score_responses(frame, table, answer_rule="strict").metrics
    a = authors["per_model"]["m"]["per_context"]["value"]
    s = strict["per_model"]["m"]["per_context"]["value"]
    assert authors["answer_rule"]["rule"] == "authors" and strict["answer_rule"]["rule"] == "strict"
    assert authors["answer_rule"]["n_read_differently"] == strict["answer_rule"]["n_read_differently"] == 2
    assert a["n_read_differently"] == s["n_read_differently"] == 2
    # authors: no, yes, yes, neutral -> right 2 and 3; strict: neutral, no, yes, neutral -> all right
    assert a["accuracy"] == pytest.approx(2 / 4) and s["accuracy"] == pytest.approx(1.0)
    assert a["predicted_distribution"] == {"yes": 2, "no": 1, "neutral": 1, "unparsed": 0}
    with pytest.raises(InputError, match="unknown answer rule 'loose'; choose from authors, strict"):
        normad.score_responses(frame, table, answer_rule="loose")


# ---------------------------------------------------------------------------------------------------- metrics


def test_label_scores_match_scikit_learn():
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    rng = random.Random(7)
    for trial in range(40):
        n = rng.randint(1, 30)
        gold = [rng.choice(prompts.LABELS) for _ in range(n)]
        predicted = [rng.choice((*prompts.LABELS, None)) if trial % 3 else rng.choice(("yes", None))
                     for _ in range(n)]
        sk_pred = [p or "unparsed" for p in predicted]
        ours = normad.label_scores(gold, predicted)
        p, r, f, _ = precision_recall_fscore_support(gold, sk_pred, labels=list(prompts.LABELS), average="macro",
                                                     zero_division=0)
        assert ours["macro"] == pytest.approx({"precision": p, "recall": r, "f1": f})
        ps, rs, fs, ss = precision_recall_fscore_support(gold, sk_pred, labels=list(prompts.LABELS), average=None,
                                                         zero_division=0)
        for i, label in enumerate(prompts.LABELS):
            assert ours["per_label"][label] == pytest.approx({"precision": ps[i], "recall": rs[i], "f1": fs[i],
                                                              "support": ss[i]})
        assert normad.accuracy(gold, predicted) == pytest.approx(accuracy_score(gold, sk_pred))


def test_context_metrics_by_hand():
    frame = pl.DataFrame({
        "model": ["m"] * 6, "story_id": [str(i) for i in range(6)], "context": ["country"] * 6,
        "response": ["Yes", "Yes", "Yes", "No", "I cannot", "Neither"]})
    table = pl.DataFrame({"story_id": [str(i) for i in range(6)], "country": ["A", "A", "B", "B", "C", "C"],
                          "gold_label": ["yes", "no", "neutral", "no", "yes", "neutral"],
                          "iw_zone": ["Z1", "Z1", "Z2", "Z2", "Z3", "Z3"],
                          "subaxis": ["s", "t", "s", "t", "s", "t"]})
    result = normad.score_responses(frame, table, unparsed="wrong")
    m = result.metrics["per_model"]["m"]["per_context"]["country"]
    # correct: story 0 (yes), 3 (no), 5 (neutral); 4 only reaches the authors' fallback (unparsed), counted wrong
    assert m["accuracy"] == pytest.approx(3 / 6) and m["accuracy_parsed"] == pytest.approx(3 / 5)
    assert m["parse_status"] == {"parsed": 5, "ambiguous": 0, "refusal": 0, "unparsed": 1}
    strict = normad.score_responses(frame, table, unparsed="wrong", answer_rule="strict").metrics
    assert strict["per_model"]["m"]["per_context"]["country"]["parse_status"] == {
        "parsed": 5, "ambiguous": 0, "refusal": 1, "unparsed": 0}  # ours tells the refusal apart
    assert m["accuracy_by_zone"] == {"Z1": {"accuracy": 0.5, "n": 2}, "Z2": {"accuracy": 0.5, "n": 2},
                                     "Z3": {"accuracy": 0.5, "n": 2}}
    assert m["accuracy_by_subaxis"]["s"] == {"accuracy": pytest.approx(1 / 3), "n": 3}
    assert m["accuracy_by_subaxis"]["t"] == {"accuracy": pytest.approx(2 / 3), "n": 3}
    assert m["accuracy_by_gold"] == {"yes": {"accuracy": 0.5, "n": 2}, "no": {"accuracy": 0.5, "n": 2},
                                     "neutral": {"accuracy": 0.5, "n": 2}}
    assert m["predicted_distribution"] == {"yes": 3, "no": 1, "neutral": 1, "unparsed": 1}
    assert m["confusion"]["yes"] == {"yes": 1, "no": 0, "neutral": 0, "unparsed": 1}
    # yes: P 1/3 R 1/2; no: P 1 R 1/2; neutral: P 1 R 1/2
    f_yes, f_other = 2 * (1 / 3) * 0.5 / (1 / 3 + 0.5), 2 * 0.5 / 1.5
    assert m["macro"] == pytest.approx({"precision": (1 / 3 + 1 + 1) / 3, "recall": 0.5,
                                        "f1": (f_yes + 2 * f_other) / 3})
    # per country: A = stories 0 (right), 1 (wrong); B = 2 (wrong), 3 (right); C = 4 (refusal), 5 (right)
    assert m["accuracy_by_country"] == {"A": {"accuracy": 0.5, "n": 2}, "B": {"accuracy": 0.5, "n": 2},
                                        "C": {"accuracy": 0.5, "n": 2}}
    # always Neither on gold yes, no, neutral, no, yes, neutral: neutral P 2/6 R 1 F 1/2, others 0
    assert m["baselines"]["always_neither"] == pytest.approx(
        {"accuracy": 2 / 6, "precision": (2 / 6) / 3, "recall": 1 / 3, "f1": (1 / 2) / 3})


def test_unparsed_answers_read_as_neither_by_default_or_wrong():
    """Gold neutral, yes, no, neutral; answers a refusal, a word that is no label, No, Neither."""
    frame = pl.DataFrame({"model": ["m"] * 4, "story_id": list("0123"), "context": ["value"] * 4,
                          "response": ["I cannot say", "Maybe", "No", "Neither"]})
    table = pl.DataFrame({"story_id": list("0123"), "country": ["A"] * 4, "gold_label": ["neutral", "yes", "no",
                                                                                       "neutral"],
                          "iw_zone": ["Z"] * 4, "subaxis": ["s"] * 4})
    default = normad.score_responses(frame, table).metrics
    m = default["per_model"]["m"]["per_context"]["value"]
    assert default["unparsed_rule"]["rule"] == "neutral"
    # read as neutral, neutral, no, neutral: right 0, 2, 3
    assert m["accuracy"] == pytest.approx(3 / 4) and m["accuracy_parsed"] == pytest.approx(1.0)
    assert m["n_unparsed"] == 2 and m["unparsed_share"] == pytest.approx(0.5)
    assert m["parse_status"] == {"parsed": 2, "ambiguous": 0, "refusal": 0, "unparsed": 2}
    # yes: P 0 R 0; no: P 1 R 1; neutral: predicted 3, right 2, support 2 -> P 2/3, R 1, F1 0.8
    assert m["macro"]["f1"] == pytest.approx((0 + 1 + 0.8) / 3)
    wrong = normad.score_responses(frame, table, unparsed="wrong").metrics
    w = wrong["per_model"]["m"]["per_context"]["value"]
    assert wrong["unparsed_rule"]["rule"] == "wrong" and w["unparsed_share"] == pytest.approx(0.5)
    assert w["accuracy"] == pytest.approx(2 / 4) and w["accuracy_parsed"] == pytest.approx(1.0)
    # neutral: predicted 1, right 1, support 2 -> F1 2/3; no F1 1; yes 0
    assert w["macro"]["f1"] == pytest.approx((0 + 1 + 2 / 3) / 3)
    assert m["accuracy_ci"][0] <= m["accuracy"] <= m["accuracy_ci"][1]
    with pytest.raises(InputError, match="unknown rule for unparsed answers 'skip'"):
        normad.score_responses(frame, table, unparsed="skip")


def test_always_neither_reproduces_table_a4():
    """Table A.4's Archangel-30b-sft-ppo rows (a model that always answers Neither): P 0.103, R 0.333, F1 0.158 on
    the paper's label counts (App. A.1 Table 2: 815 neutral, 875 no, 943 yes)."""
    gold = ["neutral"] * 815 + ["no"] * 875 + ["yes"] * 943
    baseline = normad.always_neither(gold)
    assert round(baseline["precision"], 3) == 0.103
    assert round(baseline["recall"], 3) == 0.333
    assert round(baseline["f1"], 3) == 0.158
    assert baseline["accuracy"] == pytest.approx(815 / 2633)


def test_unparsed_fallback_gives_table_a4s_always_neither_rows():
    """A model that never answers clearly scores, under the default rule, Table A.4's always-Neither row (P 0.103,
    R 0.333, F1 0.158 on the paper's 815 / 875 / 943 labels); counted wrong it would score 0 / 0 / 0."""
    gold = ["neutral"] * 815 + ["no"] * 875 + ["yes"] * 943
    unclear = normad.prompts.parse_answer("I am not sure what to say.")
    assert unclear.status != "parsed"
    read = normad.label_scores(gold, [normad.scored_label(unclear)] * len(gold))["macro"]
    assert [round(read[k], 3) for k in ("precision", "recall", "f1")] == [0.103, 0.333, 0.158]
    wrong = normad.label_scores(gold, [normad.scored_label(unclear, "wrong")] * len(gold))["macro"]
    assert wrong == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_score_cli_on_hand_written_responses_matches_hand_calculation(release, tmp_path):
    """`culturebench score normad` on a responses.jsonl written by hand: accuracy and macro F1 (Sec. 4, Table A.4)
    computed here from the definitions. Golds of the small release: per country yes, yes, no, neutral."""
    stories = small_stories()
    answers = {0: "Yes", 1: "No", 2: "No", 3: "Neither", 4: "Yes", 5: "Yes", 6: "Yes", 7: "1) Yes"}
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps({"model": "hand", "story_id": str(i), "context": "value", "response": a}) + "\n"
                            for i, a in answers.items()), encoding="utf-8")
    out = tmp_path / "scored"
    result = CliRunner().invoke(app, ["score", "normad", "--responses", str(path), "--release", str(release),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    m = json.loads((out / "metrics.json").read_text())["per_model"]["hand"]["per_context"]["value"]
    # gold 0..7: yes yes no neutral yes yes no neutral; predicted yes no no neutral yes yes yes yes:
    # right = 0, 2, 3 (Country0: 3 of 4) and 4, 5 (Country1: 2 of 4) -> 5 of 8
    assert abs(m["accuracy"] - 5 / 8) < 1e-9
    # yes: predicted 5 (0, 4, 5, 6, 7), tp 3 (0, 4, 5), support 4 -> P 3/5, R 3/4
    # no: predicted 2 (1, 2), tp 1 (2), support 2 -> P 1/2, R 1/2; neutral: predicted 1 (3), tp 1, support 2 -> P 1, R 1/2
    f = [2 * p * r / (p + r) for p, r in ((3 / 5, 3 / 4), (1 / 2, 1 / 2), (1, 1 / 2))]
    assert abs(m["macro"]["precision"] - (3 / 5 + 1 / 2 + 1) / 3) < 1e-9
    assert abs(m["macro"]["recall"] - (3 / 4 + 1 / 2 + 1 / 2) / 3) < 1e-9
    assert abs(m["macro"]["f1"] - sum(f) / 3) < 1e-9
    assert m["accuracy_by_country"] == {"Country0": {"accuracy": 0.75, "n": 4}, "Country1": {"accuracy": 0.5, "n": 4}}
    assert stories["iw_zone"][0] in m["accuracy_by_zone"]


def test_release_gold_labels_are_checked(tmp_path):
    stories = small_stories()
    tables = normad.release_tables(write_release(tmp_path / "ok", {"stories": stories}, "normad"))
    assert sorted(set(tables["stories"]["gold_label"])) == ["neutral", "no", "yes"]  # "Yes" normalised
    bad = stories.with_columns(pl.when(pl.col("id") == 5).then(pl.lit("maybe")).otherwise(pl.col("gold_label"))
                               .alias("gold_label"))
    with pytest.raises(InputError, match=r"row 6, column gold_label: unknown gold label 'maybe'"):
        normad.release_tables(write_release(tmp_path / "bad", {"stories": bad}, "normad"))
    with pytest.raises(InputError, match="lacks column rule_of_thumb"):
        normad.release_tables(write_release(tmp_path / "norot", {"stories": stories.drop("rule_of_thumb")}, "normad"))
    no_zone = normad.release_tables(write_release(tmp_path / "nozone", {"stories": stories.drop("iw_zone")}, "normad"))["stories"]
    assert set(no_zone["iw_zone"]) == {normad.UNKNOWN}
    with pytest.raises(InputError, match="has no split 'train' in config 'stories'; choose from test"):
        normad.release_tables(tmp_path / "ok", split="train")
    with pytest.raises(InputError, match="release has no 'stories' config"):
        normad.release_tables(write_release(tmp_path / "other", {"questions": stories}, "normad"))


# ------------------------------------------------------------------------------------------- the contract (#44)


class AnsweringBackend:
    """Answers every request with ``reply`` and records the requests in the order they are asked."""

    name = "answering"

    def __init__(self, reply: str, model: str = "answering-model") -> None:
        self.reply, self.model, self.asked = reply, model, []

    def cache_params(self) -> dict:
        return {"backend": self.name, "model": self.model}

    def generate(self, requests, on_response) -> None:
        for index, request in enumerate(requests):
            self.asked.append(request)
            on_response(index, ChatResponse(self.reply))


def test_contexts_option_from_flags_and_config(tmp_path):
    """``--contexts`` is comma-separated, a config's ``contexts`` a list; an unknown, missing or repeated context is
    one error naming the option (and the config file)."""
    options = normad.BENCHMARK.Options
    assert options.parse({}).contexts == ("none", "country", "value", "country_value", "rot")
    assert options.parse({"contexts": "rot, value"}).contexts == ("rot", "value")
    config = tmp_path / "normad.yaml"
    config.write_text("contexts: [country]\nanswer_rule: strict\nunparsed_wrong: true\n", encoding="utf-8")
    parsed = options.parse({}, config)
    assert (parsed.contexts, parsed.answer_rule, parsed.unparsed_wrong) == (("country",), "strict", True)
    assert options.parse({"contexts": "rot"}, config).contexts == ("rot",)  # a flag wins over the file
    with pytest.raises(InputError, match=r"column contexts: unknown context 'culture'; choose from none, country"):
        options.parse({"contexts": "rot,culture"})
    with pytest.raises(InputError, match=r"column contexts: no context given"):
        options.parse({"contexts": ","})
    with pytest.raises(InputError, match=r"column contexts: context given twice in rot,rot"):
        options.parse({"contexts": "rot,rot"})
    config.write_text("contexts: [rot, culture]\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"normad.yaml.*unknown context 'culture'"):
        options.parse({}, config)


def test_plan_is_what_evaluate_sends(release, tmp_path):
    """``plan`` yields the requests ``evaluate`` asks, in its order: 3 stories x 2 contexts x 2 samples."""
    options = normad.BENCHMARK.Options(release=release, out=tmp_path / "run", contexts=("rot", "none"), limit=3,
                                       samples=2, seed=4)
    planned = list(normad.BENCHMARK.requests(options))
    backend = AnsweringBackend("Yes")
    result = engine.run(normad.BENCHMARK, backend, options)
    assert backend.asked == planned and len(planned) == 3 * 2 * 2
    # per story: its rule-of-thumb prompt twice (two samples), then its no-context prompt twice
    assert ["Rule-of-thumb: It is expected" in r.messages[0][1] for r in planned[:4]] == [True, True, False, False]
    assert result.metrics["per_model"]["answering-model"]["contexts"] == ["none", "rot"]
    assert tmp_path / "run" / "metrics.json" in result.written


def test_headline_is_the_contexts_accuracy_and_macro_f1(release, tmp_path):
    """A model answering "Yes" to all 16 stories (8 gold yes) in the VALUE context: accuracy 1/2; yes P 1/2 R 1
    F1 2/3, no and neutral F1 0: macro F1 2/9 (Fig. 3, Table A.4). A task's options give the plain names."""
    benchmark = normad.BENCHMARK
    options = benchmark.Options.parse(benchmark.task("normad_value").options).replace(release=release,
                                                                                      out=tmp_path / "run")
    metrics = engine.run(benchmark, AnsweringBackend("Yes"), options).metrics
    assert benchmark.headline_names(options) == ("accuracy", "macro_f1")
    assert benchmark.headline(metrics, options) == pytest.approx({"accuracy": 1 / 2, "macro_f1": 2 / 9})
    both = options.replace(contexts=("value", "rot"))
    assert set(benchmark.headline_names(both)) == {"accuracy_value", "macro_f1_value", "accuracy_rot",
                                                   "macro_f1_rot"}


def test_option_tokens_are_the_strict_parsers_words_and_numbers():
    """``--scoring logprobs``: a token is an option when the strict parser reads it as one (a word in any case, or
    Fig. 9's option number), replayed as the option's text (test_option_probability: both answer rules read it as
    that label)."""
    read = normad.BENCHMARK.option_scoring(normad.BENCHMARK.Options()).read_option
    group = ("Yes", "No", "Neither")
    assert [read(t) for t in ("yes", "NO", "Neither", "neutral", "1", "2", "3")] == [
        ("Yes", group), ("No", group), ("Neither", group), ("Neither", group), ("Yes", group), ("No", group),
        ("Neither", group)]
    assert read("The") is None and read("4") is None


# ------------------------------------------------------------------------------------------------ end to end


def test_run_json_names_the_release_revision():
    from culturebench.evaluate.normad.run import release_build

    built = {"provenance": {"revision": {"name": "v2_fix_neutral", "neutral_rows_swapped": 2},
                            "zones": {"source": "raw"}}}
    assert release_build(built) == {"revision": "v2_fix_neutral", "zones": "raw"}


def evaluate_cli(server: ScriptedServer, release: Path, out: Path, *extra: str, model: str = "scripted-model"):
    return CliRunner().invoke(app, ["evaluate", "normad", "--model", model, "--base-url", server.base_url,
                                    "--release", str(release), "--out", str(out), *extra],
                              env={"OPENAI_API_KEY": SECRET})


def test_end_to_end_rot_reader_resume_and_rescore(release, tmp_path):
    stories = small_stories()
    out = tmp_path / "run"
    with ScriptedServer(reply=rot_reader(stories), model="rot-reader") as server:
        result = evaluate_cli(server, release, out, model="rot-reader")
        assert result.exit_code == 0, result.output
        assert server.request_count == 16 * 5
        assert {b["max_tokens"] for b in server.bodies} == {50} and {b["temperature"] for b in server.bodies} == {0}
        for name in ("responses.jsonl", "metrics.json", "run.json", "accuracy_by_context.png",
                     "accuracy_by_zone.png", "accuracy_by_gold.png", "cache.sqlite"):
            assert (out / name).is_file(), name
        records = run_folder.read_jsonl(out / "responses.jsonl")
        assert len(records) == 80 and {r["parse_status"] for r in records} == {"parsed"}
        assert all(r["correct"] for r in records if r["context"] == "rot")
        metrics = json.loads((out / "metrics.json").read_text())
        m = metrics["per_model"]["rot-reader"]
        assert m["accuracy"] == {"none": 0.5, "country": 0.5, "value": 0.5, "country_value": 0.5, "rot": 1.0}
        assert m["macro_f1"]["rot"] == pytest.approx(1.0)
        country = m["per_context"]["country"]
        assert country["accuracy_by_gold"]["yes"]["accuracy"] == 1.0
        assert country["accuracy_by_gold"]["no"]["accuracy"] == country["accuracy_by_gold"]["neutral"]["accuracy"] == 0
        assert country["accuracy_by_zone"] == {z: {"accuracy": 0.5, "n": 4} for z in sorted(ZONES)}
        assert country["predicted_distribution"] == {"yes": 16, "no": 0, "neutral": 0, "unparsed": 0}
        # "Yes" to all: yes P 1/2 R 1 F 2/3; no and neutral 0
        assert country["macro"] == pytest.approx({"precision": 1 / 6, "recall": 1 / 3, "f1": 2 / 9})
        run = json.loads((out / "run.json").read_text())
        assert run["benchmark"] == "normad" and run["runner"]["n_queried"] == 80
        assert run["evaluation"]["max_tokens"] == 50 and run["evaluation"]["temperature"] == 0.0
        assert run["evaluation"]["protocol"] == "authors" and metrics["protocol"]["name"] == "authors"
        assert metrics["protocol"]["max_tokens"] == 50
        assert run["release_build"] == {"revision": "v1", "zones": None}  # a release recording neither
        assert SECRET not in (out / "run.json").read_text()
        assert (out / "accuracy_by_zone.png").stat().st_size > 1000

        server.reset_counts()
        again = evaluate_cli(server, release, out, model="rot-reader")
        assert again.exit_code == 0, again.output
        assert server.request_count == 0  # resumed entirely from the cache
        assert json.loads((out / "run.json").read_text())["runner"]["n_cached"] == 80
        assert json.loads((out / "metrics.json").read_text())["per_model"] == metrics["per_model"]

    scored = tmp_path / "scored"
    result = CliRunner().invoke(app, ["score", "normad", "--responses", str(out / "responses.jsonl"),
                                      "--release", str(release), "--out", str(scored)])
    assert result.exit_code == 0, result.output
    assert "RULE-OF-THUMB 1.000" in result.output
    assert json.loads((scored / "metrics.json").read_text())["per_model"] == metrics["per_model"]
    assert (scored / "accuracy_by_context.png").stat().st_size > 1000


def test_limit_samples_and_unparsed_answers(release, tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(reply="I cannot judge this.", model="refuser") as server:
        result = evaluate_cli(server, release, out, "--limit", "3", "--samples", "2", "--max-tokens", "20",
                              model="refuser")
        assert result.exit_code == 0, result.output
        assert server.request_count == 3 * 5 * 2
        assert {b["max_tokens"] for b in server.bodies} == {20}
    metrics = json.loads((out / "metrics.json").read_text())
    m = metrics["per_model"]["refuser"]
    # every refusal read as Neither: right exactly where the asked story's gold is neutral
    assert metrics["unparsed_rule"]["rule"] == "neutral" and "read as Neither" in result.output
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    golds = {str(row["id"]): prompts.normalise_label(row["gold_label"]) for row in small_stories().iter_rows(named=True)}
    asked = {r["story_id"] for r in records}
    assert len(asked) == 3
    assert set(m["accuracy"].values()) == {sum(golds[story] == "neutral" for story in asked) / 3}
    assert m["per_context"]["rot"]["parse_status"]["unparsed"] == 6  # the authors' rule has no refusal status
    assert m["per_context"]["rot"]["accuracy_parsed"] is None and m["per_context"]["rot"]["unparsed_share"] == 1.0
    assert m["per_context"]["rot"]["predicted_distribution"] == {"yes": 0, "no": 0, "neutral": 6, "unparsed": 0}
    run = json.loads((out / "run.json").read_text())
    assert run["evaluation"]["unparsed"] == "neutral" and run["evaluation"]["answer_rule"] == "authors"
    scored = tmp_path / "scored"
    result = CliRunner().invoke(app, ["score", "normad", "--responses", str(out / "responses.jsonl"), "--release",
                                      str(release), "--out", str(scored), "--unparsed-wrong"])
    assert result.exit_code == 0 and "counted wrong" in result.output, result.output
    rot = json.loads((scored / "metrics.json").read_text())["per_model"]["refuser"]["per_context"]["rot"]
    assert rot["predicted_distribution"] == {"yes": 0, "no": 0, "neutral": 0, "unparsed": 6}
    strict = tmp_path / "strict"
    result = CliRunner().invoke(app, ["score", "normad", "--responses", str(out / "responses.jsonl"), "--release",
                                      str(release), "--out", str(strict), "--answer-rule", "strict"])
    assert result.exit_code == 0, result.output
    metrics = json.loads((strict / "metrics.json").read_text())
    assert metrics["answer_rule"]["rule"] == "strict" and metrics["answer_rule"]["n_read_differently"] == 0
    assert metrics["per_model"]["refuser"]["per_context"]["rot"]["parse_status"]["refusal"] == 6
    line = one_line_error(CliRunner().invoke(app, ["score", "cdeval", "--responses", str(out / "responses.jsonl"),
                                                   "--release", str(release), "--out", str(tmp_path / "w"),
                                                   "--answer-rule", "strict"]))
    assert "--answer-rule is a normad option" in line



def test_contexts_flag_asks_only_those_contexts(release, tmp_path):
    """``--contexts rot,value``: 2 stories x 2 contexts asked, in that order per story; an unknown one is a one-line
    error before anything is asked."""
    with ScriptedServer(reply="Yes", model="m") as server:
        result = evaluate_cli(server, release, tmp_path / "run", "--contexts", "rot,value", "--limit", "2", model="m")
        assert result.exit_code == 0, result.output
        assert server.request_count == 2 * 2
        line = one_line_error(evaluate_cli(server, release, tmp_path / "bad", "--contexts", "rot,culture", model="m"))
        assert "unknown context 'culture'; choose from none, country, value, country_value, rot" in line
        assert server.request_count == 2 * 2 and not (tmp_path / "bad").exists()
    records = run_folder.read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert [r["context"] for r in records] == ["rot", "value"] * 2
    assert json.loads((tmp_path / "run" / "run.json").read_text())["evaluation"]["contexts"] == ["rot", "value"]


def test_cli_errors_are_one_line_exit_2(release, tmp_path):
    runner = CliRunner()
    line = one_line_error(runner.invoke(app, ["evaluate", "nosuch", "--model", "m", "--out", str(tmp_path / "x")]))
    assert "unknown benchmark 'nosuch'" in line and "normad" in line
    line = one_line_error(runner.invoke(app, ["evaluate", "normad", "--model", "m", "--out", str(tmp_path / "x"),
                                              "--release", str(tmp_path / "missing")]))
    assert "missing: release folder not found" in line
    for option, value in (("--samples", "0"), ("--limit", "0"), ("--max-tokens", "0")):
        line = one_line_error(runner.invoke(app, ["evaluate", "normad", "--model", "m", "--out", str(tmp_path / "x"),
                                                  "--release", str(release), option, value]))
        assert f"{option} must be at least 1" in line
    line = one_line_error(runner.invoke(app, ["evaluate", "normad", "--model", "m", "--out", str(tmp_path / "x"),
                                              "--release", str(release), "--split", "train"]))
    assert "no split 'train'" in line
    line = one_line_error(runner.invoke(app, ["evaluate", "normad", "--model", "m", "--out", str(tmp_path / "x"),
                                              "--release", str(release), "--answer-rule", "loose"]))
    assert "unknown answer_rule 'loose'; choose from authors, strict" in line
    other = write_release(tmp_path / "cdeval", {"stories": small_stories()}, "cdeval")
    line = one_line_error(runner.invoke(app, ["score", "normad", "--responses", str(tmp_path / "r.jsonl"),
                                              "--release", str(other), "--out", str(tmp_path / "o")]))
    assert "not a NormAd release" in line
    line = one_line_error(runner.invoke(app, ["score", "normad", "--responses", str(tmp_path / "r.jsonl"),
                                              "--release", str(release), "--out", str(tmp_path / "o")]))
    assert "responses file not found" in line
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "m", "story_id": "0", "context": "rot", "response": "Yes"}\n{not json\n',
                   encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["score", "normad", "--responses", str(bad), "--release", str(release),
                                              "--out", str(tmp_path / "o")]))
    assert "row 2" in line and "not JSON" in line
    bad.write_text('{"model": "m", "story_id": "zz", "context": "rot", "response": "Yes"}\n', encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["score", "normad", "--responses", str(bad), "--release", str(release),
                                              "--out", str(tmp_path / "o")]))
    assert "'zz' is not in the release" in line and "row 1" in line
    bad.write_text('{"model": "m", "story_id": "0", "context": "culture", "response": "Yes"}\n', encoding="utf-8")
    line = one_line_error(runner.invoke(app, ["score", "normad", "--responses", str(bad), "--release", str(release),
                                              "--out", str(tmp_path / "o")]))
    assert "unknown context 'culture'" in line and "column context" in line
    assert not (tmp_path / "o").exists() and not (tmp_path / "x").exists()


# ------------------------------------------------------------------------------ the real builder's sample release


@pytest.fixture(scope="module")
def sample_release(bundled_release) -> Path:
    """The bundled sample raw/ built by the NormAd builder; a failing build fails the test (conftest)."""
    return bundled_release("normad")


def test_end_to_end_on_the_builders_sample_release(sample_release, tmp_path):
    stories = normad.release_tables(sample_release)["stories"]
    n = stories.height
    out = tmp_path / "run"
    with ScriptedServer(reply=rot_reader(stories), model="rot-reader") as server:
        result = evaluate_cli(server, sample_release, out, model="rot-reader")
        assert result.exit_code == 0, result.output
        assert server.request_count == 5 * n
    metrics = json.loads((out / "metrics.json").read_text())
    m = metrics["per_model"]["rot-reader"]
    assert m["accuracy"]["rot"] == 1.0
    share_yes = (stories["gold_label"] == "yes").mean()
    assert m["accuracy"]["none"] == pytest.approx(share_yes)
    zones = set(stories["iw_zone"])
    assert set(m["per_context"]["rot"]["accuracy_by_zone"]) == zones
    scored = tmp_path / "scored"
    result = CliRunner().invoke(app, ["score", "normad", "--responses", str(out / "responses.jsonl"),
                                      "--release", str(sample_release), "--out", str(scored)])
    assert result.exit_code == 0, result.output
    assert json.loads((scored / "metrics.json").read_text())["per_model"] == metrics["per_model"]


def test_done_check_authors_templates_max_tokens_50_and_their_reading(sample_release, tmp_path):
    """Issue 51's check: `evaluate normad` on the bundled sample against a recording server sends, for every request,
    the authors' template for its context filled from the story's row (all five contexts used), one user message,
    max_tokens 50; "OPTION 2" reads no and "I choose option 3." Neither, both parsed."""
    stories = normad.release_tables(sample_release)["stories"]
    rows = {row["story_id"]: row for row in stories.iter_rows(named=True)}
    expected = {(sid, c): authors_prompt(c, row) for sid, row in rows.items() for c in prompts.CONTEXTS}
    answers = {"rot": "OPTION 2", "value": "OPTION 2", "none": "I choose option 3.", "country": "I choose option 3.",
               "country_value": "I choose option 3."}
    by_prompt = {text: answers[c] for (_, c), text in expected.items()}
    out = tmp_path / "run"
    with ScriptedServer(reply=lambda text, body: by_prompt[text], model="recorded") as server:
        result = evaluate_cli(server, sample_release, out, model="recorded")
        assert result.exit_code == 0, result.output
        bodies = list(server.bodies)
    assert sorted(b["messages"][0]["content"] for b in bodies) == sorted(expected.values())
    assert all(len(b["messages"]) == 1 and b["messages"][0]["role"] == "user" for b in bodies)
    assert {b["max_tokens"] for b in bodies} == {50} and {b["temperature"] for b in bodies} == {0}
    records = run_folder.read_jsonl(out / "responses.jsonl")
    assert len(records) == len(expected) and {r["context"] for r in records} == set(prompts.CONTEXTS)
    for r in records:
        assert r["prompt"] == expected[(r["story_id"], r["context"])]
        assert r["parse_status"] == "parsed"
        assert r["answer"] == ("no" if r["context"] in ("rot", "value") else "neutral")
    run = json.loads((out / "run.json").read_text())
    assert run["evaluation"]["protocol"] == "authors" and run["evaluation"]["max_tokens"] == 50
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["protocol"]["name"] == "authors" and "run_model_inference.py" in metrics["protocol"]["prompt_source"]


def test_protocol_paper_and_the_70b_rule(release, tmp_path):
    """--protocol paper asks Fig. 9 with max_tokens 10 and says so; --max-tokens-70b asks the authors' 20 (their rule
    for a "70b" model, given as an option: the model's name is not read); it is refused beside --protocol paper or
    --max-tokens. `score` names the protocol the responses' prompts are of."""
    with ScriptedServer(reply="Yes", model="some-70b-model") as server:
        result = evaluate_cli(server, release, tmp_path / "paper", "--protocol", "paper", "--limit", "2",
                              model="some-70b-model")
        assert result.exit_code == 0, result.output
        assert {b["max_tokens"] for b in server.bodies} == {10}
        assert all(b["messages"][0]["content"].endswith("Answer (Yes, No or Neither):") for b in server.bodies)
        server.reset_counts()
        result = evaluate_cli(server, release, tmp_path / "big", "--max-tokens-70b", "--limit", "2",
                              model="some-70b-model")
        assert result.exit_code == 0, result.output
        assert {b["max_tokens"] for b in server.bodies} == {20}
        assert all(b["messages"][0]["content"].endswith("Neither): \n") for b in server.bodies)
        for extra in (("--protocol", "paper"), ("--max-tokens", "30")):
            line = one_line_error(evaluate_cli(server, release, tmp_path / "bad", "--max-tokens-70b", *extra))
            assert "--max-tokens-70b is the authors' rule for 70b models" in line
        line = one_line_error(evaluate_cli(server, release, tmp_path / "bad", "--protocol", "fig9"))
        assert "unknown protocol 'fig9'; choose from authors, paper" in line
    run = json.loads((tmp_path / "paper" / "run.json").read_text())
    assert run["evaluation"]["protocol"] == "paper" and run["evaluation"]["max_tokens"] == 10
    assert json.loads((tmp_path / "big" / "metrics.json").read_text())["protocol"]["max_tokens"] == 20
    for name, protocol in (("paper", "paper"), ("big", "authors")):
        scored = tmp_path / f"scored-{name}"
        result = CliRunner().invoke(app, ["score", "normad", "--responses", str(tmp_path / name / "responses.jsonl"),
                                          "--release", str(release), "--out", str(scored)])
        assert result.exit_code == 0, result.output
        assert json.loads((scored / "metrics.json").read_text())["protocol"]["name"] == protocol
    both = [str(tmp_path / name / "responses.jsonl") for name in ("paper", "big")]
    line = one_line_error(CliRunner().invoke(app, ["score", "normad", "--responses", ",".join(both), "--release",
                                                   str(release), "--out", str(tmp_path / "mixed")]))
    assert "asked under different protocols (authors and paper)" in line


def test_card_cites_the_paper_followed():
    """The paper the evaluation follows (papers/normad.txt, title line; Rao et al. 2024, arXiv:2404.12464)."""
    from culturebench.builders.normad import CARD

    assert "title = {{NormAd}: A Benchmark for Measuring the Cultural Adaptability of Large Language Models}" in (
        CARD.citation)
    assert "author = {Rao, Abhinav Sukumar and Yerukola, Akhila and Shah, Vishwa and Reinecke, Katharina and Sap, " \
           "Maarten}" in CARD.citation
