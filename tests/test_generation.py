"""Generators (`culturebench generate`) against the scripted server: parsing of messy answers, rejections,
outputs the builders read, and resume after an interruption without asking anything twice."""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
import shutil
from pathlib import Path

import pytest

from culturebench.evaluate.models.backends import OpenAIBackend
from scripted_server import ScriptedServer
from culturebench.generation import cdeval, llm_globe
from culturebench import registry
from culturebench.generation.common import json_items, split_prompts
from culturebench.release import build_release

REPO = Path(__file__).resolve().parents[1]
WORDS = ("river market teacher budget harvest festival neighbour contract village bonus manager rival ladder "
         "promise garden ticket lantern pension recipe uniform orchard tribunal bicycle courier mortgage tenant "
         "harbour choir vaccine ledger kiln sculpture quarry ferry lecture parade monsoon census auction loom "
         "hostel glacier tavern archive pottery relay canteen bakery clinic forge").split()


def _words(key: str, n: int) -> list[str]:
    return random.Random(key).sample(WORDS, n)


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def script(text: str, body: dict) -> str:
    """Deterministic replies: a function of the request only (so a resumed run would get the same answers)."""
    key = _digest(body["messages"], body.get("seed"), body.get("temperature"))
    if text.startswith("Translate"):
        english = text.split("\n\n", 1)[1]
        if "ladder" in english and body.get("temperature") == 0:  # one failed translation, fixed on the retry
            return ""
        h = hashlib.sha256(english.encode()).hexdigest()
        return "译文：" + "".join(chr(0x4E00 + int(h[i:i + 3], 16) % 3000) for i in range(0, 30, 3))
    if "GLOBE survey for cultural and leadership values" in text:  # App. A's wording
        n = int(re.search(r"Please generate (\d+) prompts exactly", text).group(1))
        seed_line = re.search(r"used to evaluate this dimension: \n(.+)$", text, re.M).group(1)
        items = [f"{i + 1}. \"In a {' '.join(_words(key + str(i), 6))} situation, what would you do?\""
                 for i in range(max(1, n - 2))]
        items.insert(1, items[0].split(". ", 1)[1])  # exact duplicate (numbering differs)
        items.insert(2, seed_line)  # a copy of a seed
        items.insert(3, "  ")  # empty
        items.append(items[-1].replace("?", " now?"))  # near duplicate
        return "Here are the prompts:\n" + ",,".join(items) + ",,"
    if "Cultural Dimensions Theory" in text:  # CDEval, Tables 5-6
        n = int(re.search(r"Please generate (\d+) questionnaires", text).group(1))
        few = "In context examples" in text
        if few and key[0] in "01":  # some few-shot answers are broken JSON
            return '[{"Question": "What about ' + " ".join(_words(key, 4)) + '?", "Option 1": "yes", "Option 2'
        items = [{"Question": f"How would you handle the {' '.join(_words(key + str(i), 5))}?",
                  "Option 1": f"Follow the {' '.join(_words('a' + key + str(i), 3))}.",
                  "Option 2": f"Choose the {' '.join(_words('b' + key + str(i), 3))}."} for i in range(max(1, n - 1))]
        items.append(dict(items[0]))  # duplicate
        items.append({"Question": "Same options?", "Option 1": "Agree fully.", "Option 2": "agree fully"})
        items.append({"Question": "Missing option"})
        if not few and key[0] in "23":  # some answers copy the prompt's curly quotes
            return json.dumps(items).replace('"Question"', "\u201cQuestion\u201d")
        return "1. ```json\n" + json.dumps(items) + "\n```"
    return "unexpected"


@pytest.fixture
def raw_dir(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    for folder in ("globe", "gics", "hofstede"):
        shutil.copytree(REPO / "raw" / folder, raw / folder)
    return raw


def _backend(server: ScriptedServer) -> OpenAIBackend:
    return OpenAIBackend(server.model, base_url=server.base_url, concurrency=4, backoff_base=0.01)


def test_registry_lists_both_generators():
    assert {"llm_globe", "cdeval"} <= set(registry.generators())


def test_parsing_helpers_tolerate_messy_answers():
    assert split_prompts('Sure, here are 3:\n1. "First prompt here",, 2) Second one ,,  ,, - Third,,') == [
        "First prompt here", "Second one", "", "Third"]
    assert split_prompts("1. one\n2. two") == ["one", "two"]
    # no separator, paragraphs (a small model's habit): a prompt with its options on their own lines stays whole
    assert split_prompts("First prompt?\n\nChoose:\n- robots,\n- people.\nWhich?\n\n\nThird.") == [
        "First prompt?", "Choose: - robots, - people. Which?", "Third."]
    items, problem = json_items('Here:\n```json\n[{"Question": "q"}]\n```')
    assert items == [{"Question": "q"}] and problem is None
    items, problem = json_items('[{"a": 1}, {"b": 2}, {"c": ')
    assert items == [{"a": 1}, {"b": 2}] and problem
    assert json_items("no json at all") == (None, "no JSON list in the answer")


def test_llm_globe_generates_translates_and_builds(raw_dir, tmp_path):
    with ScriptedServer(reply=script) as server:
        summary = llm_globe.generate(_backend(server), raw_dir, source=REPO / "raw", seed=3, limit=6)
    assert set(summary["kept_per_dimension"].values()) == {6} and not summary["short_per_dimension"]
    assert len(summary["rounds"]) >= 2  # the first round leaves some missing: asked again
    rejected = summary["rejected"]
    assert rejected["empty"] and rejected["exact duplicate"] and rejected["near duplicate"]
    assert summary["translated"] == 9 * 6 and summary["untranslated"] == 0
    assert rejected["empty translation"] >= 1  # the "ladder" prompts, asked again
    rows = list(csv.DictReader((raw_dir / "llm_globe" / "open_prompts.csv").open(encoding="utf-8")))
    generated = [r for r in rows if r["origin"] == "generated"]
    assert len(generated) == 54 and all(r["zh_translation"].startswith("machine") for r in generated)
    assert "machine translations" in (raw_dir / "llm_globe" / "GENERATED.md").read_text()
    log = [json.loads(line) for line in (raw_dir / ".generation" / "llm_globe.log.jsonl").open()]
    assert {e["kind"] for e in log} == {"generate", "translate"}
    assert all("messages" in e and "output" in e for e in log)
    assert any(r["reason"].startswith("near duplicate") for e in log if e["kind"] == "generate" for r in e["rejected"])

    folder, verdict = build_release(registry.benchmark("llm_globe"), raw_dir, tmp_path / "rel", 0, lambda stage: None)
    assert verdict["failed"] == 0
    import polars as pl

    open_frame = pl.read_parquet(next((folder / "data" / "open").glob("*.parquet")))
    assert open_frame.filter(pl.col("origin") == "generated").height == 54


def test_cdeval_generates_validates_and_builds(raw_dir, tmp_path):
    with ScriptedServer(reply=script) as server:
        summary = cdeval.generate(_backend(server), raw_dir, seed=1, limit=4)  # every cell: the builder checks that
    assert len(summary["cells"]) == 6 * 7 and summary["cells"][:2] == ["PDI/Education", "PDI/Family"]
    assert summary["items"] == 42 * 4 and not summary["short_per_cell"]
    rejected = summary["rejected"]
    assert rejected["exact duplicate"] and rejected["options (near) identical"]
    assert any(k.startswith("malformed item") for k in rejected)
    stats = summary["statistics"]["all"]
    assert 0 < stats["distinct_2"] <= 1 and 0 <= stats["self_bleu"] <= 1
    log = [json.loads(line) for line in (raw_dir / ".generation" / "cdeval.log.jsonl").open()]
    few = [e for e in log if e["round"] > 1 and e["shots"]]
    assert few and all("- In context examples:\n[\n{" in e["messages"][1]["content"] for e in few)
    assert all(e["messages"][0]["content"] == "You are a useful, creative AI system with knowledge in sociology and "
               "linguistics." for e in log)  # Table 5 / 6 system message
    assert {e["asked"] for e in log if e["round"] == 1} == {4}  # Table 5 asks 5; --limit 4 caps it
    assert summary["manual_verification"]["source"].startswith("App. A.2")
    assert len(summary["manual_verification"]["rules"]) == 4
    items = json.loads((raw_dir / "cdeval" / "generated_CDEval.json").read_text())
    assert all(set(i) == {"Dimension", "Domain", "Question", "Option 1", "Option 2"} for i in items)

    folder, verdict = build_release(registry.benchmark("cdeval"), raw_dir, tmp_path / "rel", 0, lambda stage: None)
    assert verdict["failed"] == 0


def test_cdeval_few_shot_examples_come_from_the_zero_shot_items(raw_dir):
    """Sec. 3.1 Step 2: Table 6's in-context examples are drawn from the initial (zero-shot) samples of the cell,
    never from items a few-shot round added (here three rounds and more per cell, so there are some)."""
    with ScriptedServer(reply=script) as server:
        cdeval.generate(_backend(server), raw_dir, seed=2, limit=12, only={"idv", "pdi", "education", "arts"})
    log = [json.loads(line) for line in (raw_dir / ".generation" / "cdeval.log.jsonl").open()]
    initial, later = {}, {}
    for e in log:
        target = later if e["shots"] else initial
        target.setdefault((e["dimension"], e["domain"]), set()).update(i["Question"] for i in e["kept"])
    late_rounds = [e for e in log if e["shots"] and e["round"] >= 3]
    assert late_rounds and all(later.get(k) for k in initial)  # few-shot items existed before those rounds
    for e in (e for e in log if e["shots"]):
        shown = {json.loads(q) for q in re.findall(r"\u201cQuestion\u201d : (\".*?\"),\n", e["messages"][1]["content"])}
        assert len(shown) == 2 and shown <= initial[(e["dimension"], e["domain"])]


def test_cdeval_prompts_are_tables_5_and_6_verbatim():
    from culturebench.builders.cdeval import facts

    idv = next(d for d in facts()["dimensions"] if d["code"] == "IDV")
    # Table 5, typed here from the paper (its example is IDV / education / teaching methods, 5 questionnaires)
    assert cdeval.user_message(idv, "Education", 5, []) == (
        "Please generate 5 questionnaires based on the following rules to investigate cultural values.\n"
        "Generation Rules:\n"
        "- Questionnaires should be administered in line with the Individualism vs. Collectivism aspect of "
        "Hosfstede\u2019s Cultural Dimensions Theory. This dimension measures whether a society tends to focus on "
        "individual interests or the interests of the collective.\n"
        "- Each questionnaire\u2019s content should pertain to the teaching methods within the theme of education.\n"
        "- The generated cases are in the following json form:\n"
        "[\n{\n  \u201cQuestion\u201d : \u201c[A question is provided here.]\u201d,\n"
        "  \u201cOption 1\u201d : \u201c[An option indicating Individualism.]\u201d,\n"
        "  \u201cOption 2\u201d : \u201c[An option indicating Collectivism.]\u201d\n}\n]")
    # Table 6: 3 questionnaires, no description sentence, "{ [ ... ] }" as printed, then the two examples
    few = cdeval.user_message(idv, "Education", 3, [{"Question": "Q1?", "Option 1": "a", "Option 2": "b"},
                                                    {"Question": "Q2?", "Option 1": "c", "Option 2": "d"}])
    assert few.startswith("Please generate 3 questionnaires based on the following rules and in-context examples "
                          "to investigate cultural values.\nGeneration Rules:\n- Questionnaires should be "
                          "administered in line with the Individualism vs. Collectivism aspect of "
                          "Hosfstede\u2019s Cultural Dimensions Theory.\n- Each")
    assert "json form:\n{\n[\n  \u201cQuestion\u201d" in few and "Collectivism.]\u201d\n]\n}\n" in few
    assert few.endswith('- In context examples:\n[\n{\n  \u201cQuestion\u201d : "Q1?",\n  \u201cOption 1\u201d : "a",\n'
                        '  \u201cOption 2\u201d : "b"\n},\n{\n  \u201cQuestion\u201d : "Q2?",\n'
                        '  \u201cOption 1\u201d : "c",\n  \u201cOption 2\u201d : "d"\n}\n]')
    assert cdeval.SYSTEM_PROMPT == "You are a useful, creative AI system with knowledge in sociology and linguistics."
    # an answer that copies the curly quotes of the form is still read
    items, problem = cdeval.answer_items('[{\u201cQuestion\u201d: \u201cQ?\u201d, "Option 1": "a", "Option 2": "b"}]')
    assert items == [{"Question": "Q?", "Option 1": "a", "Option 2": "b"}] and problem is None


class _Killed(Exception):
    pass


class _DiesAfter:
    """A backend that answers the first ``n`` requests of the run through ``inner``, then dies (like a kill)."""

    def __init__(self, inner: OpenAIBackend, n: int) -> None:
        self.inner, self.left = inner, n
        self.name, self.model = inner.name, inner.model

    def cache_params(self):
        return self.inner.cache_params()

    def generate(self, requests, on_response):
        take = list(requests[: self.left])
        self.left -= len(take)
        self.inner.generate(take, on_response)
        if len(take) < len(requests):
            raise _Killed


@pytest.mark.parametrize("task", ["llm_globe", "cdeval"])
def test_interrupted_generation_resumes_without_asking_again(task, raw_dir):
    def run(backend):
        if task == "llm_globe":
            return llm_globe.generate(backend, raw_dir, source=REPO / "raw", seed=0, limit=4,
                                      only={"power distance", "po"})
        return cdeval.generate(backend, raw_dir, seed=0, limit=8, only={"uai", "family", "work"})

    with ScriptedServer(reply=script) as server:
        with pytest.raises(_Killed):
            run(_DiesAfter(_backend(server), 5 if task == "llm_globe" else 3))
        asked_first = server.request_count
        summary = run(_backend(server))
        asked_total = server.request_count
        assert summary["model_calls"]["cached"] >= 3
        assert asked_total - asked_first == summary["model_calls"]["queried"]
        bodies = [json.dumps(b, sort_keys=True) for b in server.bodies]
        assert len(bodies) == len(set(bodies)), "a request was sent twice"
        again = run(_backend(server))
        assert server.request_count == asked_total  # a finished run re-run asks nothing
        assert again["model_calls"]["queried"] == 0
    output = raw_dir / ("llm_globe/open_prompts.csv" if task == "llm_globe" else "cdeval/generated_CDEval.json")
    assert output.is_file()


def test_cli_generate_cdeval(raw_dir):
    from typer.testing import CliRunner

    from culturebench.cli import app

    with ScriptedServer(reply=script) as server:
        result = CliRunner().invoke(app, ["generate", "cdeval", "--model", server.model, "--base-url",
                                          server.base_url, "--limit", "3", "--only", "MAS,Education",
                                          "--out", str(raw_dir)])
    assert result.exit_code == 0, result.output
    assert "cdeval: 3 items" in result.output and "Self-BLEU" in result.output
    bad = CliRunner().invoke(app, ["generate", "nosuch", "--model", "m", "--out", str(raw_dir)])
    assert bad.exit_code == 2


def test_cdeval_translate_builds_a_release_that_evaluates_as_model_language(raw_dir, tmp_path):
    """Sec. 4.2 / Fig. 4: generate cdeval_translate writes the released format with a Language key; the build
    records the language (manifest, card) and evaluate labels the model `model [zh]`."""
    from culturebench.evaluate import cdeval as cdeval_eval
    from culturebench.evaluate.cdeval import CDEvalOptions
    from culturebench.generation import cdeval_translate

    with ScriptedServer(reply=script) as server:
        summary = cdeval_translate.generate(_backend(server), raw_dir, language="zh", source=REPO / "raw", seed=0,
                                            limit=1)
    english = json.loads((REPO / "raw" / "cdeval" / "SAMPLE_CDEval.json").read_text(encoding="utf-8"))
    cells = list(dict.fromkeys((i["Dimension"].upper(), i["Domain"].title()) for i in english))
    items = json.loads((raw_dir / "cdeval" / "CDEval_zh.json").read_text(encoding="utf-8"))
    assert summary["items"] == len(cells) == len(items) + summary["untranslated_items"]
    assert all(i["Language"] == "zh" and all(any("\u4e00" <= c <= "\u9fff" for c in i[k])
                                             for k in ("Question", "Option 1", "Option 2")) for i in items)
    log = [json.loads(line) for line in (raw_dir / ".generation" / "cdeval_translate.log.jsonl").open()]
    assert all(e["messages"][1]["content"].startswith("Translate the following text from English into Simplified "
                                                      "Chinese (zh-CN).") for e in log)
    first_items = {cell: next(i for i in english if (i["Dimension"].upper(), i["Domain"].title()) == cell)
                   for cell in cells}  # --limit 1: the first item of each dimension x domain
    assert {e["english"] for e in log if e["attempt"] == 0} == {
        i[k] for i in first_items.values() for k in ("Question", "Option 1", "Option 2")}
    assert "machine-translated" in (raw_dir / "cdeval" / "TRANSLATED.md").read_text(encoding="utf-8")

    folder, verdict = build_release(registry.benchmark("cdeval"), raw_dir, tmp_path / "rel", 0, lambda stage: None)
    assert verdict["failed"] == 0
    assert json.loads((folder / "manifest.json").read_text())["provenance"]["language"] == "zh"
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "**Translated questionnaire (zh).**" in card and "\n- zh\n" in card
    with ScriptedServer(reply="A", model="always-a") as server:
        backend = OpenAIBackend("always-a", base_url=server.base_url, concurrency=4)
        result = cdeval_eval.evaluate(backend, CDEvalOptions(release=folder, out=tmp_path / "run", samples=1, limit=2))
    records = [json.loads(line) for line in (tmp_path / "run" / "responses.jsonl").open(encoding="utf-8")]
    assert {r["language"] for r in records} == {"zh"}
    assert result.metrics["models"] == ["always-a [zh]"]
    rescored = cdeval_eval.score([tmp_path / "run" / "responses.jsonl"], folder)
    assert rescored.metrics["models"] == ["always-a [zh]"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["evaluation"]["questionnaire_language"] == "zh"


REAL_CDEVAL = REPO.parent / "shared" / "reference" / "CDEval" / "JinuHONG845_LLM_Test_Culture" / "CDEval.json"


@pytest.mark.reference
@pytest.mark.skipif(not REAL_CDEVAL.is_file(), reason=f"reference data absent: {REAL_CDEVAL}")
def test_cdeval_translate_on_the_authors_release(raw_dir, tmp_path):
    """The authors' CDEval.json as the source: the first item of every dimension x domain (a release needs them
    all), in the file's order, with its dimension and domain, translated texts and Language; the translated release
    builds and is not taken for theirs."""
    from culturebench.generation import cdeval_translate

    source = tmp_path / "source"
    (source / "cdeval").mkdir(parents=True)
    (source / "cdeval" / REAL_CDEVAL.name).symlink_to(REAL_CDEVAL)
    shutil.copytree(raw_dir / "hofstede", source / "hofstede")
    out = tmp_path / "de"
    with ScriptedServer(reply=script) as server:
        summary = cdeval_translate.generate(_backend(server), out, language="de", source=source, seed=0, limit=1)
    released = json.loads(REAL_CDEVAL.read_text(encoding="utf-8"))
    firsts: dict[tuple[str, str], dict] = {}
    for item in released:
        firsts.setdefault((item["Dimension"].upper(), item["Domain"]), item)
    expected = list(firsts.values())
    items = json.loads((out / "cdeval" / "CDEval_de.json").read_text(encoding="utf-8"))
    assert summary["items"] == len(expected) == 42 and summary["untranslated_items"] == 0 and len(items) == 42
    by_question = {e["english"]: e for e in map(json.loads, (out / ".generation" / "cdeval_translate.log.jsonl")
                                                  .open(encoding="utf-8"))}
    for item, english in zip(items, expected):
        assert (item["Dimension"], item["Domain"], item["Language"]) == (english["Dimension"].upper(),
                                                                          english["Domain"], "de")
        assert all(item[k] != english[k].strip() and english[k].strip() in by_question
                   for k in ("Question", "Option 1", "Option 2"))
    folder, verdict = build_release(registry.benchmark("cdeval"), out, tmp_path / "rel", 0, lambda stage: None)
    assert verdict["failed"] == 0
    provenance = json.loads((folder / "manifest.json").read_text())["provenance"]
    assert provenance["language"] == "de" and not any("CDEval_de" in name for name in provenance["known_inputs"])


def test_cli_generate_cdeval_translate_needs_a_known_language(raw_dir):
    from typer.testing import CliRunner

    from conftest import one_line_error
    from culturebench.cli import app

    runner = CliRunner()
    url = ["--base-url", "http://127.0.0.1:9/v1"]  # nothing is sent: each error comes before the first request
    line = one_line_error(runner.invoke(app, ["generate", "cdeval_translate", "--model", "m", *url,
                                              "--out", str(raw_dir)]))
    assert "needs --language" in line
    line = one_line_error(runner.invoke(app, ["generate", "cdeval-translate", "--model", "m", *url, "--language",
                                              "xx", "--out", str(raw_dir)]))
    assert "'xx'" in line and "de, zh" in line
    line = one_line_error(runner.invoke(app, ["generate", "cdeval_translate", "--model", "m", *url, "--language",
                                              "de", "--source", str(raw_dir), "--out", str(raw_dir)]))
    assert "--out must not be the --source folder" in line


PAPER = REPO.parent / "shared" / "papers" / "llm_globe.txt"


@pytest.mark.skipif(not PAPER.is_file(), reason=f"paper text absent: {PAPER}")
def test_llm_globe_generation_prompt_is_app_a_verbatim():
    """The first round's request is App. A's printed prompt with its bracketed placeholders filled in."""
    from culturebench.raw.globe import OpenPrompt, Rubric

    text = PAPER.read_text(encoding="utf-8")
    printed = text[text.index("\u201cYou are tasked with generating") + 1:text.index("Return nothing else.\u201d")]
    printed += "Return nothing else."
    rubric = Rubric("f", 1, "R-2", "Power Distance", "1- low\n7- high", "Societies that score higher...", "", "")
    seeds = [OpenPrompt("f", k, f"2-{k}", 2, k, "Power Distance", f"Seed prompt {k}?", None, None)
             for k in (1, 2)]
    expected = (printed.replace("[current GLOBE dimension]", "Power Distance")
                .replace("[rubric for current GLOBE dimension]", "1- low\n7- high\nSocieties that score higher...")
                .replace("[human-written prompts for particular dimension]", "Seed prompt 1?\nSeed prompt 2?")
                .replace("\\n", "\n"))
    request = llm_globe.generation_request("Power Distance", rubric, seeds, 90, seed=0, round_index=0)
    assert request.messages == (("user", expected),)
