"""Asking as Liu, Kaneko and Chu 2025 asked (issue #61, ``evaluate wvb --protocol liu2025``): against a recording
server, every request of a run, plain and under each of their five steering methods for Germany, is their prompt
byte for byte, built here independently from their files (their ``utils/common.py`` read as text: the string
literal of each ``prompt +=`` line of the method's branch, joined as their printed template joins them, with the
five-shot file and the question file named by hand); bad input is one line (stand-in files written here)."""

from __future__ import annotations

import ast
import json
import re

import pytest
from typer.testing import CliRunner

from conftest import REFERENCE, one_line_error, reference
from culturebench.cli import app
from scripted_server import ScriptedServer

LIU = REFERENCE / "LiuKanekoChu2025"
runner = CliRunner()
REPLY = "{'1': '40%', '2': '30%', '3': '20%', '4': '10%'}"
SYSTEM = "You are a helpful assistant."  # their get_api_expressed_distribution's messages, as printed
METHODS = {  # --steer: (function, branch header, five-shot file, questionnaire), by hand from their common.py
    "persona": ("get_prompt_of_rq2", "if args.steering_method == 'persona':", "lang-En_dist-random.txt", "English"),
    "few-shot": ("get_prompt_of_rq2", "elif args.steering_method == 'few-shot':", "lang-En_dist-Germany.txt",
                 "English"),
    "language": ("get_prompt_of_language", 'elif country == "Germany":', "lang-De_dist-random.txt", "German"),
    "language-persona": ("get_prompt_of_language_persona", 'elif country == "Germany":', "lang-De_dist-random.txt",
                         "German"),
    "language-few-shot": ("get_prompt_of_language_few_shot", 'elif country == "Germany":',
                          "lang-De_dist-Germany.txt", "German"),
}
DEMONYM = "German"  # their country_human_dict["Germany"]


def evaluate(release, out, *extra, repo=LIU):
    with ScriptedServer(reply=REPLY) as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(release), "--out", str(out), "--no-demographics",
                                     "--protocol", "liu2025", "--liu-repo", str(repo), "--limit", "2", *extra])
        bodies = list(server.bodies)
    return result, bodies


def literals(function: str, branch: str | None) -> list[str]:
    """The first string literal of every ``prompt +=`` / ``prompt =`` line of ``function``'s ``branch`` (None: the
    whole function), in source order, read from the text of their utils/common.py."""
    body = (LIU / "utils" / "common.py").read_text(encoding="utf-8").split(f"def {function}(")[1].split("\ndef ")[0]
    if branch is not None:
        body = re.split(r"\n    elif ", body.split(branch, 1)[1])[0]
    literal = r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    return [ast.literal_eval(m.group(1)) for m in re.finditer(rf"^\s*prompt\s*\+?=\s*{literal}", body, re.M)]


def expected_prompt(method: str | None, question: dict) -> str:
    """Their template: the instruction, the five examples, then "Your turn!", the question, its numbered options
    and the answer cue (the last four literals of the branch), the demonym in place of {}."""
    if method is None:
        function, branch, shots = "get_prompt_of_rq1", None, "lang-En_dist-random.txt"
    else:
        function, branch, shots, _ = METHODS[method]
    parts = [part.replace("{}", DEMONYM) for part in literals(function, branch)]
    instruction, (turn, question_cue, newline, answer_cue) = parts[:-4], parts[-4:]
    examples = (LIU / "inputs" / "few_shot" / shots).read_text(encoding="utf-8")
    return ("".join(instruction) + examples + turn + question_cue + question["question"] + newline
            + question["answer"] + answer_cue)


def questionnaire(language: str) -> dict[str, dict]:
    path = LIU / "dataset" / "questions" / f"WV7_{language}.jsonl"
    return {row["id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


@pytest.fixture(scope="module")
def recorded(sample_release, tmp_path_factory):
    """Per --steer method (steered to Germany only): the request bodies the server received and the run folder."""
    if not LIU.is_dir():
        pytest.skip(f"reference data absent: {LIU}")
    folder = tmp_path_factory.mktemp("liu2025")
    runs = {}
    for method in METHODS:
        result, bodies = evaluate(sample_release, folder / method, "--steer", method, "--steer-countries", "DEU")
        assert result.exit_code == 0, result.output
        runs[method] = (bodies, folder / method)
    return runs


@reference
@pytest.mark.parametrize("method", list(METHODS))
def test_every_request_is_their_prompt_byte_for_byte(recorded, method):
    bodies, out = recorded[method]
    english, steered = questionnaire("English"), questionnaire(METHODS[method][3])
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert len(bodies) == len(records) == 4  # two questions, plain and steered to Germany
    for body in bodies:
        messages = body["messages"]
        assert messages[0] == {"role": "system", "content": SYSTEM} and len(messages) == 2
        assert body["temperature"] == 0
    sent = {body["messages"][1]["content"] for body in bodies}
    for record in records:
        question = record["question_id"]
        if record["steer"] is None:
            expected = expected_prompt(None, english[question])
        else:
            assert record["steer"] == "DEU"
            expected = expected_prompt(method, steered[question])
        assert record["messages"][1]["content"] == expected
        assert expected in sent
        assert record["parse_status"] == "distribution"  # their parser read it


@reference
def test_the_stated_distribution_is_scored_per_country(recorded):
    _, out = recorded["persona"]
    data = json.loads((out / "countries.json").read_text())
    assert data["protocol"] == "liu2025" and data["steer"] == "persona"
    assert data["reading"].startswith("stated")
    steered = [code for code, entry in data["countries"].items() if entry.get("steered_jsd") is not None]
    assert steered == ["DEU"]
    run = json.loads((out / "run.json").read_text())["evaluation"]
    assert run["protocol"] == "liu2025" and run["steer_countries"] == ["DEU"]


# ------------------------------------------------------------------------------------------- stand-in files

STAND_IN_CODE = '''
def get_api_expressed_distribution(args, user_instruction):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": user_instruction}]
    try: response = reply.split('Result: ')[1]
    except: response = reply
    return response

def match_api_str(text):
    pattern = r"\\{(?:\\s*'\\d+'\\s*:\\s*'\\d+(?:\\.\\d+)?%'\\s*,?)+\\s*\\}"
    if re.search(pattern, re.sub(r'(\\d+):\\s*([\\d.]+%)', r"'\\1': '\\2'", text)):
        return abs(total - 1.0) < 5e-1

country_language_dict = {"Germany": "German"}
country_human_dict = {"Germany": "Germans"}

def get_prompt_of_rq1(data):
    prompt = "Say a distribution."
    prompt += read_file_to_string('inputs/shots.txt')
    prompt += "\\nQ: " + data['question']
    prompt += "\\n" + data['answer']
    return prompt

def get_prompt_of_language(country, data):
    prompt = ""
    if country == "Germany":
        prompt += "Nenne eine Verteilung."
        prompt += "\\nF: " + data['question']
    return prompt

def get_prompt_of_rq2(args, data):
    prompt = ""
    if args.steering_method == 'persona':
        prompt += "Say the distribution of {}.".format(country_human_dict[args.country])
        prompt += "\\nQ: " + data['question']
    elif args.steering_method == 'language':
        prompt = get_prompt_of_language(args.country, data)
    return prompt
'''


@pytest.fixture
def stand_in(sample_release, tmp_path):
    """A repository of our own in their layout: a tiny utils/common.py, a five-shot file and two questionnaires
    (English: two questions of the release; German: only the first)."""
    import polars as pl

    repo = tmp_path / "liu"
    (repo / "utils").mkdir(parents=True)
    (repo / "utils" / "common.py").write_text(STAND_IN_CODE, encoding="utf-8")
    (repo / "inputs").mkdir()
    (repo / "inputs" / "shots.txt").write_text("\nQ: x?\n1. a\nA: {'1': '100%'}\n", encoding="utf-8")
    questions = pl.read_parquet(sample_release / "data" / "questions").filter(pl.col("kind") == "value")
    ids = questions["question_id"].to_list()[:2]
    folder = repo / "dataset" / "questions"
    folder.mkdir(parents=True)
    rows = [{"id": q, "question": f"Question {q}?", "choices": ["a", "b"], "choice_keys": ["1", "2"],
             "answer": "1. a\n2. b", "type": "Opinion-Dependent"} for q in ids]
    (folder / "WV7_English.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n", encoding="utf-8")
    german = {**rows[0], "question": f"Frage {ids[0]}?"}
    (folder / "WV7_German.jsonl").write_text(json.dumps(german) + "\n", encoding="utf-8")
    return repo, ids


def test_a_stand_in_repository_is_read_as_data(sample_release, stand_in, tmp_path):
    repo, ids = stand_in
    result, bodies = evaluate(sample_release, tmp_path / "run", "--steer", "persona", "--steer-countries", "DEU",
                              repo=repo)
    assert result.exit_code == 0, result.output
    shots = "\nQ: x?\n1. a\nA: {'1': '100%'}\n"
    prompts = sorted(body["messages"][1]["content"] for body in bodies)
    expected = sorted([f"Say a distribution.{shots}\nQ: Question {q}?\n1. a\n2. b" for q in ids]
                      + [f"Say the distribution of Germans.\nQ: Question {q}?" for q in ids])
    assert prompts == expected
    assert {body["messages"][0]["content"] for body in bodies} == {"Be brief."}


def test_a_questionnaire_missing_questions_leaves_them_out_and_says_so(sample_release, stand_in, tmp_path):
    repo, ids = stand_in
    result, bodies = evaluate(sample_release, tmp_path / "run", "--steer", "language", "--steer-countries", "DEU",
                              repo=repo)
    assert result.exit_code == 0, result.output
    steered = [body["messages"][1]["content"] for body in bodies if body["messages"][1]["content"].startswith("Nenne")]
    assert steered == [f"Nenne eine Verteilung.\nF: Frage {ids[0]}?"]  # the second is not asked, in no language
    assert not any(f"Question {ids[1]}?" in body["messages"][1]["content"] and "Nenne" in body["messages"][1]["content"]
                   for body in bodies)
    notes = json.loads((tmp_path / "run" / "countries.json").read_text())["notes"]
    assert any("German questionnaire lacks" in note and ids[1] in note for note in notes)
    assert f"lacks {ids[1]}" in result.output.replace("\n", " ")


def test_a_translations_folder_is_read_before_theirs(sample_release, stand_in, tmp_path):
    repo, ids = stand_in
    translations = tmp_path / "translations"
    translations.mkdir()
    rows = [{"id": q, "question": f"Frage neu {q}?", "choices": ["a", "b"], "choice_keys": ["1", "2"],
             "answer": "1. a\n2. b", "type": "Opinion-Dependent"} for q in ids]
    (translations / "WV7_German.jsonl").write_text("\n".join(map(json.dumps, rows)), encoding="utf-8")
    result, bodies = evaluate(sample_release, tmp_path / "run", "--steer", "language", "--steer-countries", "DEU",
                              "--translations", str(translations), repo=repo)
    assert result.exit_code == 0, result.output
    steered = sorted(b["messages"][1]["content"] for b in bodies if b["messages"][1]["content"].startswith("Nenne"))
    assert steered == sorted(f"Nenne eine Verteilung.\nF: Frage neu {q}?" for q in ids)


def test_a_country_their_method_has_no_prompt_for_is_one_line(sample_release, stand_in, tmp_path):
    repo, _ = stand_in
    result, bodies = evaluate(sample_release, tmp_path / "run", "--steer", "language", "--steer-countries", "KEN",
                              repo=repo)
    line = one_line_error(result)
    assert "no prompt for Kenya" in line and "common.py" in line
    assert bodies == []


def test_a_steer_country_outside_the_release_is_one_line(sample_release, stand_in, tmp_path):
    repo, _ = stand_in
    result, _ = evaluate(sample_release, tmp_path / "run", "--steer", "persona", "--steer-countries", "ZZZ",
                         repo=repo)
    assert "ZZZ not among the release's countries" in one_line_error(result)


def test_the_repository_missing_is_one_line(sample_release, tmp_path):
    result, bodies = evaluate(sample_release, tmp_path / "run", repo=tmp_path / "nowhere")
    line = one_line_error(result)
    assert "utils/common.py is missing" in line and "--liu-repo" in line
    assert bodies == []


def test_their_methods_need_their_protocol(sample_release, tmp_path):
    with ScriptedServer(reply=REPLY) as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(sample_release), "--out", str(tmp_path / "run"),
                                     "--no-demographics", "--steer", "persona"])
    assert "add --protocol liu2025" in one_line_error(result)


# ------------------------------------------------------------------------------------- generate wvb_translate


def marked(text: str, body: dict) -> str:
    """A stand-in translator: the text to translate (after the prompt's blank line) marked "sw "."""
    return "sw " + text.split("\n\n", 1)[1]


@reference
def test_generate_wvb_translate_makes_a_questionnaire_that_steers_kenya_by_language(sample_release, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "liu2025").symlink_to(LIU)
    with ScriptedServer(reply=marked) as server:
        result = runner.invoke(app, ["generate", "wvb_translate", "--model", "m", "--base-url", server.base_url,
                                     "--language", "Swahili", "--only", "KEN", "--source", str(raw),
                                     "--out", str(raw)])
    assert result.exit_code == 0, result.output
    folder = raw / "liu2025_translations"
    english = questionnaire("English")
    rows = [json.loads(line) for line in (folder / "WV7_Swahili.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == sum(row["type"] == "Opinion-Dependent" for row in english.values())
    for row in rows:
        source = english[row["id"]]
        assert row["question"] == "sw " + source["question"]
        assert row["choices"] == [c if not re.search(r"[^\W\d_]", c) else "sw " + c for c in source["choices"]]
        assert row["choice_keys"] == source["choice_keys"]
        assert row["answer"] == "\n".join(f"{k}. {c}" for k, c in zip(row["choice_keys"], row["choices"]))
    table = json.loads((folder / "WV7_Swahili.prompts.json").read_text(encoding="utf-8"))
    assert table["provenance"]["machine_translated"] is True and table["provenance"]["model"] == "m"
    assert "machine-translated" in (folder / "TRANSLATED.md").read_text()

    result, bodies = evaluate(sample_release, tmp_path / "run", "--steer", "language", "--steer-countries", "KEN",
                              "--translations", str(folder))
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "run" / "responses.jsonl").read_text().splitlines()]
    steered = [r for r in records if r["steer"] == "KEN"]
    assert len(steered) == 2
    translated = {row["id"]: row for row in rows}
    for record in steered:
        prompt, row = record["messages"][1]["content"], translated[record["question_id"]]
        # their plain template (get_prompt_of_rq1), every sentence in Swahili
        assert prompt.startswith("sw I will provide a distribution over answer choices")
        assert prompt.endswith(f"\nsw Your turn! \nsw Question: {row['question']}\n{row['answer']}\nsw Answer:")
        assert "\nQuestion: " not in prompt and "Your turn" not in prompt.replace("sw Your turn", "")
    data = json.loads((tmp_path / "run" / "countries.json").read_text())
    assert any("machine-translated by m" in note and "Swahili" in note for note in data["notes"])
    kenya = data["countries"]["KEN"]
    assert kenya["steer_language"] == "Swahili"
    import polars as pl  # the interview languages: the release's S_INTLANGUAGE of Kenya's respondents

    spoken = (pl.read_parquet(sample_release / "data" / "participants").filter(pl.col("country") == "KEN")
              ["S_INTLANGUAGE"].drop_nulls().value_counts(sort=True))
    total = spoken["count"].sum()
    assert kenya["interview_languages"][0][1] == pytest.approx(spoken["count"][0] / total)
