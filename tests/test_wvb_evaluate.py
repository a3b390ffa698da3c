"""``culturebench evaluate wvb`` (Zhao et al. 2024, Sec. 3.2-3.5, App. B): prompts, answer parsing, request planning
(oversampling without demographics), and end to end against the scripted OpenAI-compatible server: responses.jsonl,
parse statuses, metrics and plots through the scoring code, run.json without secrets, resume from the cache."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from scipy.stats import wasserstein_distance
from typer.testing import CliRunner

from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate import wvb
from culturebench.evaluate.runs import run_folder, run_record
from culturebench.evaluate.wvb import prompts
from scripted_server import ScriptedServer
from culturebench.evaluate.wvb.prompts import parse_answer
from culturebench.manifest import load_manifest
from culturebench.release_reader import read_tables

REPO = Path(__file__).resolve().parents[1]
SECRET = "sk-test-secret"
LIMIT = 320  # probe rows evaluated end to end: spread over the sample's 36 questions (8-9 rows each)
SCORE_KEYS = {"per_question", "mean", "std", "threshold_curve", "n_questions", "n_rows", "n_invalid", "baselines",
              "benchmark", "responses", "release", "n_covered", "coverage", "n_unknown_question", "n_invalid_covered",
              "groups"}
SCALE = re.compile(r"Question: On a scale of (-?\d+) to (-?\d+)")


def scipy_w1(human: list[int], model: list[int], low: int, high: int) -> float:
    """Sec. 3.2 by scipy, independently of culturebench: W1 of the answers rescaled to [0, 1]."""
    return wasserstein_distance([(h - low) / (high - low) for h in human], [(a - low) / (high - low) for a in model])


@pytest.fixture(scope="module")
def release(sample_release) -> Path:
    """The bundled sample release (built once per session in conftest.py); read only here."""
    return sample_release


@pytest.fixture(scope="module")
def tables(release) -> dict[str, pl.DataFrame]:
    return {config: pl.concat(splits.values()) for config, splits in
            read_tables(release, load_manifest(release)["outputs"]).items()}


def json_reply(score, explanation: str = "They value family, as most people in their country do.") -> str:
    return json.dumps({"thoughtful explanation": explanation, "answer as a score": str(score)}, indent=2)


def scale_minimum(text: str, body: dict) -> str:
    """Scripted model: always the scale minimum of the question in the prompt."""
    low, _ = SCALE.search(text).groups()
    return f"```json\n{json_reply(low)}\n```"


def evaluate_cli(server: ScriptedServer, release: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["evaluate", "wvb", "--model", "scripted-model", "--backend", "openai",
                                    "--base-url", server.base_url, "--release", str(release), "--out", str(out),
                                    *extra])


# ------------------------------------------------------------------------------------------------------- prompts


def test_prompt_with_demographics_for_a_participant(release, tables):
    rows = wvb.evaluation_rows(release, "probe", limit=5)
    questions, participants = wvb.prompt_tables(release, rows["participant_id"])
    planned = wvb.plan_requests(rows, questions, participants, demographics=True)
    assert len(planned) == 5 and [p.sample_index for p in planned] == [0] * 5
    first = planned[0]
    assert first.participant_id == rows["participant_id"][0] and first.question_id == rows["question_id"][0]
    assert len(first.request.messages) == 1 and first.request.messages[0][0] == "user"
    assert first.request.sampling.temperature == 0.0
    assert first.request.sampling.stop == ("\n\n",)  # App. B: "\n\n" as stop token
    person = tables["participants"].filter(pl.col("participant_id") == first.participant_id).row(0, named=True)
    question = tables["questions"].filter(pl.col("question_id") == first.question_id)["text"][0]
    expected = (
        "Person X provided the following demographic information in an interview:\n"
        "1. Question: In what country was the interview conducted?\n"
        f" Answer: {person['B_COUNTRY']}\n"
        "2. Question: What is the type of settlement in which the interview was conducted? Urban or Rural?\n"
        f" Answer: {person['H_URBRURAL']}\n"
        "3. Question: What is the highest educational level that you have attained?\n"
        f" Answer: {person['Q275']}\n"
        "\n"
        "What would Person X answer to the following question and why?\n"
        f"Question: {question}\n"
        "\n"
        "Your output should be in the following format:\n"
        "{\n"
        '  "thoughtful explanation": "... upto 30 words (keep their demographics in mind) ...",\n'
        '  "answer as a score": "... score ..."\n'
        "}"
    )
    text = first.request.messages[0][1]
    assert text == expected
    positions = [text.index(part) for part in (person["B_COUNTRY"], person["H_URBRURAL"], person["Q275"], question)]
    assert positions == sorted(positions)
    assert question.startswith("On a scale of")


def _words(text: str) -> str:
    """The text as the paper's text copy prints a figure: braces dropped, line breaks as spaces."""
    return " ".join(text.replace("{", " ").replace("}", " ").split())


# App. B Figs. 9 and 10 as the paper's text copy prints them (wvb.txt; ’ and … there typeset from ' and ...),
# for the question of the figures.
LEISURE = "On a scale of 1 to 4, 1 meaning 'Very important' and 4 meaning 'Not at all important', how important is leisure time in your life?"
FIG9 = ("What would Person X answer to the following question and why? Question: " + LEISURE + " Make some "
        "assumptions about Person X's demographics and provide a thoughtful explanation for your answer. Your output "
        "should be in the following json format with comma separated key-value pairs: \"thoughtful explanation\": "
        "\"... maximum 30 words (keep their demographics in mind) ...\", \"answer as a score\": \"... an integer "
        "score ...\"")
FIG10 = ("What would Person X answer to the following question and why? Question: " + LEISURE + " Make some "
         "assumptions about Person X's demographics and provide a thoughtful explanation for your answer. Your output "
         "should be in the following format: \"thoughtful explanation\": \"... upto 30 words (keep their "
         "demographics in mind) ...\", \"answer as a score\": \"... score ...\"")


def test_prompt_without_demographics_figs_9_10_and_missing_demographic():
    assert _words(prompts.without_demographics_prompt(LEISURE, "gpt-3.5")) == FIG10
    assert _words(prompts.without_demographics_prompt(LEISURE)) == FIG10  # the default family
    for family in ("alpaca", "vicuna", "mixtral"):
        assert _words(prompts.without_demographics_prompt(LEISURE, family)) == FIG9
    text = prompts.without_demographics_prompt(LEISURE, "alpaca")
    assert text.endswith('pairs:\n{\n  "thoughtful explanation": "... maximum 30 words (keep their demographics in '
                         'mind) ...",\n  "answer as a score": "... an integer score ..."\n}')
    assert "\n\n" not in text  # Figs. 9-10 have no paragraph break
    with pytest.raises(ValueError, match="unknown prompt family 'llama'"):
        prompts.without_demographics_prompt(LEISURE, "llama")
    block = prompts.demographics_block([("Country?", "Kenya"), ("Urban or Rural?", None), ("Education?", "Tertiary")])
    assert block == ("1. Question: Country?\n Answer: Kenya\n2. Question: Urban or Rural?\n Answer: "
                     f"{prompts.MISSING_DEMOGRAPHIC}\n3. Question: Education?\n Answer: Tertiary")


def test_prompts_with_demographics_figs_5_to_8():
    """The last paragraph differs per family (Figs. 5-8, typed from the paper); the first two are the same."""
    pairs = [("In what country was the interview conducted?", "China"),
             ("What is the type of settlement in which the interview was conducted? Urban or Rural?", "Urban"),
             ("What is the highest educational level that you have attained?", "Upper secondary education (ISCED 3)")]
    opening = ("Person X provided the following demographic information in an interview: 1. Question: In what country "
               "was the interview conducted? Answer: China 2. Question: What is the type of settlement in which the "
               "interview was conducted? Urban or Rural? Answer: Urban 3. Question: What is the highest educational "
               "level that you have attained? Answer: Upper secondary education (ISCED 3) What would Person X answer "
               "to the following question and why? Question: " + LEISURE + " ")
    fig5 = ('Your output should be in the following json format with comma separated key-value pairs: "thoughtful '
            'explanation": "... maximum 30 words (keep their demographics in mind) ...", "answer as a score": "... an '
            'integer score ..."')
    fig6_7 = ('Your output should be in the following format: "thoughtful explanation": "... maximum 30 words (keep '
              'their demographics in mind) ...", "answer as a score": "... an integer score ..."')
    fig8 = ('Your output should be in the following format: "thoughtful explanation": "... upto 30 words (keep their '
            'demographics in mind) ...", "answer as a score": "... score ..."')
    for family, ending in (("alpaca", fig5), ("vicuna", fig6_7), ("mixtral", fig6_7), ("gpt-3.5", fig8)):
        text = prompts.with_demographics_prompt(pairs, LEISURE, family)
        assert _words(text) == opening + ending, family
        assert text.count("\n\n") == 2  # the figures' three paragraphs


# ------------------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("text, expected", [
    ('{"thoughtful explanation": "Family is central.", "answer as a score": "3"}', (3, "json")),
    ('```json\n{\n  "thoughtful explanation": "Work matters.",\n  "answer as a score": 1\n}\n```', (1, "json")),
    ('Sure! Here is the output:\n{"thoughtful explanation": "...", "answer as a score": "3 - Rather important"}\n'
     "I hope this helps.", (3, "json")),
    ('{"thoughtful explanation": "Born in 1975, 3 children.", "answer as a score": "1"}', (1, "json")),
    ('{"Answer_as_a_score": 4}', (4, "json")),
    ('{"answer as a score": "1 - Lowest (1)"}', (1, "json")),
    ('{"answer as a score": "3.0"}', (3, "json")),
    ("{'thoughtful explanation': 'Person X values tradition', 'answer as a score': '2'}", (2, "jsonish")),
    ('{"thoughtful explanation": "ok", "answer as a score": "4",}', (4, "jsonish")),
    ('{thoughtful explanation: "ok", answer as a score: 4}', (4, "jsonish")),
    ('{\n  "thoughtful explanation": "unterminated,\n  "answer as a score": "2"\n', (2, "jsonish")),
    ("Answer as a score: 2", (2, "jsonish")),
    ("3", (3, "bare_integer")),
    (' "2". ', (2, "bare_integer")),
    ("**4**", (4, "bare_integer")),
    ("0", (0, "bare_integer")),  # 0-2 scales exist: 0 is on them
    ("I would say 3 out of 4", (3, "text_integer")),
    ("My score is 2 because family matters most to them.", (2, "text_integer")),
    ("2 or 3", (None, "ambiguous")),
    ("The answer would be 2, and the score is 3.", (None, "ambiguous")),
    ('{"answer as a score": "2 or 3"}', (None, "ambiguous")),
    ("", (None, "no_answer")),
    ("   \n", (None, "no_answer")),
    (None, (None, "no_answer")),
    ("I cannot speak for a person of a given country.", (None, "no_answer")),
    ('{"thoughtful explanation": "... upto 30 words ...", "answer as a score": "... score ..."}', (None, "no_answer")),
    ('{"answer as a score": 7}', (7, "out_of_scale")),
    ("9", (9, "out_of_scale")),
    ('{"answer as a score": -1}', (-1, "out_of_scale")),
    # not whole: truncated toward zero as the authors' evaluate.py's astype(int) does (2.6 -> 2, -0.5 -> 0)
    ('{"answer as a score": 2.5}', (2, "not_integer")),
    ('{"answer as a score": "2.6"}', (2, "not_integer")),
    ("3.9", (3, "not_integer")),
    ('{"answer as a score": -0.5}', (0, "not_integer")),
    ('{"answer as a score": Infinity}', (None, "no_answer")),
])
def test_parse_answer(text, expected):
    assert parse_answer(text, 0 if expected == (0, "bare_integer") else 1, 4) == expected
    assert expected[1] in prompts.STATUSES


def test_parse_answer_uses_the_question_scale():
    assert parse_answer('{"answer as a score": "7"}', 1, 10) == (7, "json")
    assert parse_answer('{"answer as a score": "0"}', 1, 10) == (0, "out_of_scale")
    assert parse_answer('{"answer as a score": "0"}', 0, 2) == (0, "json")


# ------------------------------------------------------------------------------------------------------ planning


def test_oversampling_equals_human_answers_per_question(release):
    rows = wvb.evaluation_rows(release, "probe")
    questions, participants = wvb.prompt_tables(release, None)
    planned = wvb.plan_requests(rows, questions, participants, demographics=False)
    humans = dict(rows.group_by("question_id").len().iter_rows())
    per_question: dict[str, list] = {}
    for item in planned:
        assert item.participant_id is None and item.request.sampling.temperature == 0.7
        per_question.setdefault(item.question_id, []).append(item)
    assert {q: len(items) for q, items in per_question.items()} == humans
    assert len(planned) == rows.height
    for items in per_question.values():
        assert [i.sample_index for i in items] == list(range(len(items)))
        assert len({i.request.messages for i in items}) == 1  # the same prompt, told apart by sample_index
        assert len(set(items)) == len(items)
    # --samples overrides the count; --temperature the default
    planned = wvb.plan_requests(rows, questions, participants, demographics=False, samples=7, temperature=1.0)
    assert len(planned) == 7 * len(humans) and {p.request.sampling.temperature for p in planned} == {1.0}


def test_one_request_per_row_with_demographics(release):
    rows = wvb.evaluation_rows(release, "validation", limit=50)
    assert rows.height == 50
    questions, participants = wvb.prompt_tables(release, rows["participant_id"])
    planned = wvb.plan_requests(rows, questions, participants)
    assert [(p.participant_id, p.question_id) for p in planned] == list(rows.select("participant_id", "question_id").iter_rows())
    assert len(wvb.plan_requests(rows, questions, participants, samples=3)) == 150
    with pytest.raises(InputError, match="unknown split"):
        wvb.evaluation_rows(release, "dev")
    with pytest.raises(InputError, match="samples"):
        wvb.plan_requests(rows, questions, participants, samples=0)


# --------------------------------------------------------------------------------------------------- end to end


def files_containing(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_evaluate_end_to_end_and_resume(tmp_path, release, tables, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run"
    rows = wvb.evaluation_rows(release, "probe", limit=LIMIT)
    with ScriptedServer(reply=scale_minimum) as server:
        result = evaluate_cli(server, release, out, "--limit", str(LIMIT), "--concurrency", "8")
        assert result.exit_code == 0, result.output
        first_count = server.request_count
        assert 0 < first_count <= LIMIT  # identical prompts (same demographics, same question) are sent once
        headers = {k.lower(): v for k, v in server.headers[0].items()}
        assert headers.get("authorization") == f"Bearer {SECRET}"  # the key was used, yet is written nowhere

        records = run_folder.read_jsonl(out / "responses.jsonl")
        assert len(records) == LIMIT
        assert {r["parse_status"] for r in records} == {"json"}
        assert [(r["participant_id"], r["question_id"]) for r in records] == list(
            rows.select("participant_id", "question_id").iter_rows())
        assert records[0]["messages"][0]["role"] == "user" and "Person X" in records[0]["messages"][0]["content"]
        assert records[0]["output"].startswith("```json") and records[0]["sample_index"] == 0

        m = json.loads((out / "metrics.json").read_text())
        assert SCORE_KEYS <= set(m)
        assert m["n_rows"] == LIMIT and m["coverage"] == 1.0 and m["n_invalid"] == 0
        assert m["parse_status"]["json"] == LIMIT and m["n_unparsed"] == 0 and m["mode"] == "with_demographics"
        scales = dict(zip(tables["questions"]["question_id"], tables["questions"]["scale_min"]))
        for question, part in rows.group_by("question_id"):
            q = question[0]
            high = tables["questions"].filter(pl.col("question_id") == q)["scale_max"][0]
            expected = scipy_w1(part["human"].to_list(), [scales[q]], scales[q], high)
            assert m["per_question"][q] == pytest.approx(expected)
        for png in ("threshold_curve.png", "histograms.png"):
            assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

        run = json.loads((out / "run.json").read_text())
        assert run["release"]["manifest_sha256"] == run_folder.sha256_file(release / "manifest.json")
        assert run["versions"]["culturebench"] and run["versions"]["python"] and "aiohttp" in run["versions"]["libraries"]
        assert run["args"]["model"] == "scripted-model" and run["args"]["limit"] == LIMIT
        assert run["backend"]["cache_params"]["model"] == "scripted-model"
        assert run["runner"]["n_queried"] == first_count and run["runner"]["n_cached"] == 0
        assert run["runner"]["n_requests"] == LIMIT
        assert run["runner"]["prompt_tokens"] > 0 and run["runner"]["completion_tokens"] > 0
        assert "retries" in run["runner"] and run["runner"]["wall_s"] > 0
        assert run["parse_status"]["json"] == LIMIT
        manifest = json.loads((release / "manifest.json").read_text())
        assert run["release_routes"] == manifest["provenance"]["routes"] == m["release_routes"]
        assert run["evaluation"]["out_of_scale_answers"] == "kept"
        assert files_containing(out, SECRET) == []

        # the same command again: everything from the cache, the same results
        server.reset_counts()
        again = evaluate_cli(server, release, out, "--limit", str(LIMIT), "--concurrency", "8")
        assert again.exit_code == 0, again.output
        assert server.request_count == 0
        assert json.loads((out / "run.json").read_text())["runner"]["n_cached"] == LIMIT
        assert json.loads((out / "metrics.json").read_text())["per_question"] == m["per_question"]
        assert run_folder.read_jsonl(out / "responses.jsonl") == records
        assert files_containing(out, SECRET) == []


def test_garbage_replies_are_no_answer_and_left_out(tmp_path, release):
    def reply(text: str, body: dict) -> str:
        if "sample item Q2?" in text:
            return "As an AI language model, I cannot know what this person thinks."
        return json_reply(SCALE.search(text).group(2))  # the scale maximum

    rows = wvb.evaluation_rows(release, "probe", limit=LIMIT)
    n_q2 = rows.filter(pl.col("question_id") == "Q2").height
    with ScriptedServer(reply=reply) as server:
        result = evaluate_cli(server, release, tmp_path / "run", "--limit", str(LIMIT))
    assert result.exit_code == 0, result.output
    records = run_folder.read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert sum(r["parse_status"] == "no_answer" for r in records) == n_q2
    assert all(r["answer"] is None for r in records if r["question_id"] == "Q2")
    m = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert m["parse_status"]["no_answer"] == n_q2 and m["n_unparsed"] == n_q2
    assert m["n_invalid"] == n_q2 and m["n_invalid_covered"] == n_q2
    assert m["per_question"]["Q2"] is None  # no valid model answer: left out of the mean and the curve
    assert m["n_questions"] == len(m["per_question"]) - 1
    assert m["per_question"]["Q1"] is not None


def test_replies_off_the_scale_are_kept_or_dropped_with_the_option(tmp_path, release, tables):
    """A model that answers the scale maximum + 2 for Q1 and the minimum elsewhere: by default its Q1 answers are
    scored as given (status out_of_scale, W1 on the line); --drop-out-of-scale leaves Q1 without a valid answer."""
    def reply(text: str, body: dict) -> str:
        low, high = (int(v) for v in SCALE.search(text).groups())
        return json_reply(high + 2 if "sample item Q1?" in text else low)

    rows = wvb.evaluation_rows(release, "probe", limit=LIMIT)
    human = rows.filter(pl.col("question_id") == "Q1")["human"].to_list()
    low, high = tables["questions"].filter(pl.col("question_id") == "Q1").select("scale_min", "scale_max").row(0)
    with ScriptedServer(reply=reply) as server:
        kept = evaluate_cli(server, release, tmp_path / "kept", "--limit", str(LIMIT))
        dropped = evaluate_cli(server, release, tmp_path / "dropped", "--limit", str(LIMIT), "--drop-out-of-scale")
    assert kept.exit_code == 0 and dropped.exit_code == 0, kept.output + dropped.output
    m = json.loads((tmp_path / "kept" / "metrics.json").read_text())
    assert m["parse_status"]["out_of_scale"] == len(human) and m["n_invalid"] == 0
    assert m["out_of_scale"] == {"answers": "kept", "n": len(human), "share_per_question": {
        q: (1.0 if q == "Q1" else 0.0) for q in m["per_question"]}}
    # every model answer is high + 2: W1 = mean (high + 2 - h) / (high - low) on the rescaled axis
    assert m["per_question"]["Q1"] == pytest.approx(sum(high + 2 - h for h in human) / len(human) / (high - low))
    d = json.loads((tmp_path / "dropped" / "metrics.json").read_text())
    assert d["out_of_scale"]["answers"] == "dropped" and d["n_invalid"] == len(human)
    assert d["per_question"]["Q1"] is None and d["per_question"]["Q2"] == m["per_question"]["Q2"]
    run = json.loads((tmp_path / "dropped" / "run.json").read_text())
    assert run["evaluation"]["out_of_scale_answers"] == "dropped" and run["args"]["drop_out_of_scale"] is True


@pytest.mark.slow
def test_non_integer_replies_are_truncated_or_dropped_with_the_option(tmp_path, release):
    """A model that answers the scale minimum + 0.6 for Q1 ("2.6" on a 2-.. scale) and the minimum elsewhere: by default
    the authors' evaluate.py truncates (astype(int)), so every answer scores as the minimum (W1 as a run of minimums
    everywhere); --drop-non-integer leaves Q1 without a valid answer. Slow: two WVB evaluate runs with 2,000 bootstrap
    resamples of W1."""
    def reply(text: str, body: dict) -> str:
        low = int(SCALE.search(text).group(1))
        return json_reply(f"{low}.6" if "sample item Q1?" in text else low)

    rows = wvb.evaluation_rows(release, "probe", limit=LIMIT)
    n_q1 = rows.filter(pl.col("question_id") == "Q1").height
    with ScriptedServer(reply=reply) as server:
        kept = evaluate_cli(server, release, tmp_path / "kept", "--limit", str(LIMIT))
        dropped = evaluate_cli(server, release, tmp_path / "dropped", "--limit", str(LIMIT), "--drop-non-integer")
    with ScriptedServer(reply=scale_minimum) as server:
        minimum = evaluate_cli(server, release, tmp_path / "minimum", "--limit", str(LIMIT))
    assert kept.exit_code == dropped.exit_code == minimum.exit_code == 0, kept.output + dropped.output
    m = json.loads((tmp_path / "kept" / "metrics.json").read_text())
    baseline = json.loads((tmp_path / "minimum" / "metrics.json").read_text())
    assert m["parse_status"]["not_integer"] == n_q1 and m["n_invalid"] == 0
    assert m["non_integer"] == {"answers": "truncated", "n": n_q1}
    assert m["per_question"] == baseline["per_question"]
    d = json.loads((tmp_path / "dropped" / "metrics.json").read_text())
    assert d["non_integer"] == {"answers": "dropped", "n": n_q1} and d["n_invalid"] == n_q1
    assert d["per_question"]["Q1"] is None and d["per_question"]["Q2"] == m["per_question"]["Q2"]
    assert json.loads((tmp_path / "kept" / "run.json").read_text())["evaluation"]["non_integer_answers"] == "truncated"
    run = json.loads((tmp_path / "dropped" / "run.json").read_text())
    assert run["evaluation"]["non_integer_answers"] == "dropped" and run["args"]["drop_non_integer"] is True
    # score re-reads the saved answers under the same rules
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(tmp_path / "kept" / "responses.jsonl"),
                                      "--release", str(release), "--out", str(tmp_path / "rescored"),
                                      "--drop-non-integer"])
    assert result.exit_code == 0 and f"{n_q1:,} not whole numbers (dropped)" in result.output, result.output
    assert json.loads((tmp_path / "rescored" / "metrics.json").read_text())["per_question"]["Q1"] is None


def test_drop_out_of_scale_is_a_wvb_option(tmp_path):
    result = CliRunner().invoke(app, ["score", "cdeval", "--responses", str(tmp_path / "r.jsonl"), "--release",
                                      str(tmp_path), "--out", str(tmp_path / "run"), "--drop-out-of-scale"])
    assert result.exit_code == 2 and "--drop-out-of-scale is a wvb option" in result.output
    result = CliRunner().invoke(app, ["score", "cdeval", "--responses", str(tmp_path / "r.jsonl"), "--release",
                                      str(tmp_path), "--out", str(tmp_path / "run"), "--drop-non-integer"])
    assert result.exit_code == 2 and "--drop-non-integer is a wvb option" in result.output


@pytest.mark.parametrize("samples", [None, 5])
def test_without_demographics_end_to_end(tmp_path, release, tables, samples):
    rows = wvb.evaluation_rows(release, "probe", limit=LIMIT)  # spread over the questions (1, 2 within every scale)
    scales = {q: (lo, hi) for q, lo, hi in tables["questions"].select("question_id", "scale_min", "scale_max")
              .iter_rows()}
    humans = {q: part["human"].to_list() for (q,), part in rows.group_by("question_id")}
    counter = {"n": 0}

    def reply(text: str, body: dict) -> str:  # 1, 2, 1, 2, ... within the scale
        assert "Make some assumptions about Person X's demographics" in text and body["temperature"] == 0.7
        assert "demographic information in an interview" not in text and body["stop"] == ["\n\n"]
        counter["n"] += 1
        return json_reply(1 + counter["n"] % 2)

    extra = ["--no-demographics", "--limit", str(LIMIT)] + (["--samples", str(samples)] if samples else [])
    with ScriptedServer(reply=reply) as server:
        result = evaluate_cli(server, release, tmp_path / "run", *extra)
        assert result.exit_code == 0, result.output
        expected = sum(len(h) for h in humans.values()) if samples is None else samples * len(humans)
        assert server.request_count == expected
    records = run_folder.read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert len(records) == expected and all(r["participant_id"] is None for r in records)
    m = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert m["mode"] == "without_demographics" and m["n_invalid"] == 0 and SCORE_KEYS <= set(m)
    for q, human in humans.items():
        model = [r["answer"] for r in records if r["question_id"] == q]
        assert len(model) == (samples or len(human))
        assert m["per_question"][q] == pytest.approx(scipy_w1(human, model, *scales[q]))
        assert m["baselines"]["uniform"]["per_question"][q] == pytest.approx(
            scipy_w1(human, list(range(scales[q][0], scales[q][1] + 1)), *scales[q]))
    assert (tmp_path / "run" / "histograms.png").is_file()


def test_user_mistakes_exit_2_with_one_line(tmp_path, release):
    runner = CliRunner()
    base = ["evaluate", "wvb", "--model", "m", "--out", str(tmp_path / "run")]
    missing = runner.invoke(app, [*base, "--release", str(tmp_path / "absent")])
    assert missing.exit_code == 2 and "release folder not found" in missing.output
    assert len(missing.output.strip().splitlines()) == 1
    split = runner.invoke(app, [*base, "--release", str(release), "--split", "dev"])
    assert split.exit_code == 2 and "unknown split 'dev'" in split.output
    backend = runner.invoke(app, [*base, "--release", str(release), "--backend", "tgi"])
    assert backend.exit_code == 2 and "unknown backend" in backend.output
    try:
        import vllm  # noqa: F401
    except ImportError:
        no_vllm = runner.invoke(app, [*base, "--release", str(release), "--backend", "vllm"])
        assert no_vllm.exit_code == 2 and "vLLM is not installed" in no_vllm.output
    assert not (tmp_path / "run").exists()


def test_run_json_helpers_drop_secrets(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-123456789")
    args = run_record.redact_args({"model": "m", "api_key": "abc", "base_url": "http://h/v1?key=tok-123456789",
                                 "out": Path("/tmp/x"), "prompt_tokens": 3})
    assert args == {"model": "m", "base_url": "http://h/v1?key=<redacted>", "out": "/tmp/x", "prompt_tokens": 3}


def test_prompt_family_from_config(tmp_path, release):
    """--config {"prompt_family": "alpaca"} sends Fig. 5's wording; run.json records the family and App. B's stop."""
    config = tmp_path / "alpaca.json"
    config.write_text(json.dumps({"prompt_family": "alpaca"}))
    with ScriptedServer(reply=scale_minimum) as server:
        result = evaluate_cli(server, release, tmp_path / "run", "--limit", "3", "--config", str(config))
        assert result.exit_code == 0, result.output
        texts = [b["messages"][0]["content"] for b in server.bodies]
    assert texts  # identical requests may be sent once
    assert all("in the following json format with comma separated key-value pairs:" in t for t in texts)
    assert all('"answer as a score": "... an integer score ..."' in t for t in texts)
    evaluation = json.loads((tmp_path / "run" / "run.json").read_text())["evaluation"]
    assert evaluation["prompt_family"] == "alpaca" and evaluation["stop"] == ["\n\n"]
    config.write_text(json.dumps({"prompt_family": "llama"}))
    with ScriptedServer(reply=scale_minimum) as server:
        bad = evaluate_cli(server, release, tmp_path / "bad", "--limit", "3", "--config", str(config))
    assert bad.exit_code == 2 and "unknown prompt_family 'llama'" in bad.output and server.request_count == 0
