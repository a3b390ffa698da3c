"""``culturebench evaluate llm_globe`` / ``score llm_globe`` (Karinshak et al. 2024, Sec. 4, App. B): parsing of
1-7 answers, reverse scoring, the shared statistics against scipy on constructed data, the jury regression on a
case with known weights, the juror prompt, and end to end against the scripted OpenAI-compatible server on a
small release built here (closed and open + jury; resume with zero new requests; score from saved responses)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from conftest import write_release
from culturebench import registry
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate import llm_globe
from culturebench.evaluate.reports import stats
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.llm_globe import LLMGlobeOptions, prompts
from culturebench.evaluate.models.backends import OpenAIBackend
from scripted_server import ScriptedServer

# ------------------------------------------------------------------------------------------------ a small release


def small_closed() -> pl.DataFrame:
    rows = []
    for d, dimension in enumerate(prompts.DIMENSIONS):
        for k in range(2):
            rows.append({"id": f"c{d}-{k}", "item_id": f"{d + 1}-{k + 1}", "dimension": dimension,
                         "reverse": k == 1, "industry": "Finance", "sub_industry": "Banking", "role": "CEO",
                         "prompt_en": f"CLOSED {d} {k}: In your bank, how strongly do you agree? Answer 1-7.",
                         "prompt_zh": f"封闭 {d} {k}：请用1-7回答。", "scale_min": 1, "scale_max": 7})
    return pl.DataFrame(rows)


def small_open() -> pl.DataFrame:
    rows = [{"id": f"{d + 1}-{k + 1}", "dimension": dimension, "number": k + 1, "origin": "paper",
             "prompt_en": f"OPEN {d} {k}: Which option would you choose? Explain briefly.",
             "prompt_zh": f"开放 {d} {k}：你会选哪个？请简要解释。"}
            for d, dimension in enumerate(prompts.DIMENSIONS) for k in range(3)]
    return pl.DataFrame(rows)


def small_rubrics() -> pl.DataFrame:
    return pl.DataFrame([{"dimension": d, "scale_en": f"1- low {d}\n7- high {d}", "characteristics_en": f"EN traits of {d}",
                          "scale_zh": f"1- 低 {i}\n7- 高 {i}", "characteristics_zh": f"中文特征 {i}"}
                         for i, d in enumerate(prompts.DIMENSIONS)])


def small_globe() -> pl.DataFrame:
    rows = []
    for country, base in (("United States", 4.0), ("China", 4.5)):
        for i, d in enumerate(prompts.DIMENSIONS):
            rows.append({"country": country, "dimension": d, "practices": base + 0.1 * i, "values": base + 0.2})
    return pl.DataFrame(rows)



@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("llm-globe") / "llm_globe"
    folder.mkdir()
    return write_release(folder, {"closed": small_closed(), "open": small_open(), "rubrics": small_rubrics(),
                                  "globe_2004": small_globe()}, "llm_globe")


# ---------------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("text, expected", [
    ("5", (5, "ok")), (" 7.\n", (7, "ok")), ("My answer: 3", (3, "ok")), ("On a scale of 1-7, I choose 6.", (6, "ok")),
    ("4/7", (4, "ok")), ("２", (2, "ok")), ("五", (5, "ok")), ("评分：六分", (6, "ok")), ("4.0", (4, "ok")),
    ("8", (None, "out_of_range")), ("0", (None, "out_of_range")), ("4.5", (None, "out_of_range")),
    ("3 or 4", (None, "ambiguous")), ("I cannot answer.", (None, "no_number")), ("", (None, "empty")),
    (None, (None, "empty")), ("5 5", (5, "ok")), ("score 10", (None, "out_of_range")),
])
def test_parse_rating(text, expected):
    assert prompts.parse_rating(text) == expected


def test_reverse_scoring_turns_the_scale_around():
    assert [prompts.reverse_score(x, True) for x in range(1, 8)] == [7, 6, 5, 4, 3, 2, 1]
    assert [prompts.reverse_score(x, False) for x in range(1, 8)] == list(range(1, 8))
    assert prompts.reverse_score(None, True) is None


def test_dimension_names_are_normalised():
    assert prompts.canonical_dimension("performance_orientation") == "Performance Orientation"
    assert prompts.canonical_dimension("In-group Collectivisim") == "In-group Collectivism"
    assert prompts.canonical_dimension("权力距离") == "Power Distance"
    assert prompts.canonical_dimension("nonsense") is None


def test_juror_prompt_rubric_in_juror_language_question_in_original():
    rubric = small_rubrics().row(1, named=True)
    en = prompts.juror_prompt("Power Distance", rubric["scale_en"], rubric["characteristics_en"], "你会怎么做？",
                              "我会听从领导。", "en")
    assert en.startswith("You are rating responses to prompts based on how they score in the Power Distance dimension")
    assert "EN traits of Power Distance" in en and "1- low Power Distance" in en
    assert "你会怎么做？" in en and "我会听从领导。" in en and "Only provide a whole number between 1 and 7" in en
    zh = prompts.juror_prompt("Power Distance", rubric["scale_zh"], rubric["characteristics_zh"], "What would you do?",
                              "I follow my boss.", "zh")
    assert "权力距离" in zh and "中文特征 1" in zh and "What would you do?" in zh and "I follow my boss." in zh


def test_chinese_juror_prompt_names_the_dimension_as_the_released_zh_rubrics():
    # the authors' open_generation_rubrics.csv (Scale_zhCN) writes these three differently from a plain translation
    for dimension, name in (("In-group Collectivism", "群体内集体主义"), ("Uncertainty Avoidance", "不确定性避免"),
                            ("Humane Orientation", "人道取向")):
        zh = prompts.juror_prompt(dimension, "1- ...", "...", "Q", "A", "zh")
        assert f"“{name}”维度" in zh
        assert prompts.canonical_dimension(name) == dimension


PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "llm_globe.txt"


PLACEHOLDERS = {"[current GLOBE dimension]": "{dimension}", "[scale for current dimension]": "{scale}",
                "[characteristics associated with this dimension]": "{characteristics}"}


def printed_prompt(text: str) -> str:
    """A prompt as printed between straight quotes, placeholders as in facts, printed '\\n' as line breaks."""
    quoted = text[text.index('"') + 1:text.rindex('"')]
    for printed, ours in PLACEHOLDERS.items():
        quoted = quoted.replace(printed, ours)
    return quoted.replace("\\n", "\n")


@pytest.mark.skipif(not PAPER.is_file(), reason=f"paper text absent: {PAPER}")
def test_juror_prompt_is_the_one_app_b2_prints():
    """App. B.2 prints the prompt after its heading and one sentence; the words are prompt_en's (spaces around the
    line breaks aside: facts juror.source)."""
    text = PAPER.read_text(encoding="utf-8")
    b2 = text[text.index("B.2 Prompt provided for juror rating (English)"):]
    body = [line for line in b2.splitlines()[1:] if line.strip()]
    assert body[0].startswith("The following prompt is provided to the jurors") and body[1].startswith('"You are')
    assert " ".join(printed_prompt(body[1]).split()) == " ".join(prompts.JUROR_TEMPLATES["en"].split())
    assert printed_prompt(body[1]) != prompts.JUROR_TEMPLATES["en"]  # only the whitespace differs
    assert "ends at" not in llm_globe_facts()["juror"]["source"]


README = Path(__file__).resolve().parents[2] / "shared" / "reference" / "LLM-GLOBE" / "README.md"


@pytest.mark.reference
@pytest.mark.skipif(not README.is_file(), reason=f"reference data absent: {README}")
def test_juror_prompt_is_the_authors_readme_string_verbatim():
    text = README.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith('<code>"You are rating responses'))
    assert printed_prompt(line) == prompts.JUROR_TEMPLATES["en"]


def llm_globe_facts() -> dict:
    from culturebench.builders.llm_globe import facts

    return facts()


# ---------------------------------------------------------------------------------------------------- statistics


def test_statistics_match_scipy():
    rng = np.random.default_rng(1)
    a, b, c = rng.normal(4, 1, 30), rng.normal(4.6, 1.2, 30), rng.normal(3.7, 0.8, 30)
    m = stats.mean_sd([*a, None, float("nan")])
    assert m["n"] == 30 and m["mean"] == pytest.approx(a.mean()) and m["sd"] == pytest.approx(a.std(ddof=1))
    t = stats.one_sample_t(a, 4.3)
    ref = sps.ttest_1samp(a, 4.3)
    assert t["statistic"] == pytest.approx(ref.statistic) and t["pvalue"] == pytest.approx(ref.pvalue)
    t2 = stats.two_sample_t(a, b)
    ref2 = sps.ttest_ind(a, b)
    assert t2["statistic"] == pytest.approx(ref2.statistic) and t2["pvalue"] == pytest.approx(ref2.pvalue)
    welch = stats.two_sample_t(a, b, equal_var=False)
    assert welch["pvalue"] == pytest.approx(sps.ttest_ind(a, b, equal_var=False).pvalue)
    f = stats.friedman({"a": list(a), "b": list(b), "c": [*c[:-1], None]})  # last block incomplete: dropped
    ref_f = sps.friedmanchisquare(a[:-1], b[:-1], c[:-1])
    assert f["n_blocks"] == 29 and f["statistic"] == pytest.approx(ref_f.statistic)
    assert f["pvalue"] == pytest.approx(ref_f.pvalue)
    w = stats.pairwise_wilcoxon({"a": list(a), "b": list(b), "c": list(c)})
    assert [(r["a"], r["b"]) for r in w] == [("a", "b"), ("a", "c"), ("b", "c")]
    for row, (x, y) in zip(w, [(a, b), (a, c), (b, c)]):
        ref_w = sps.wilcoxon(x, y)
        assert row["statistic"] == pytest.approx(ref_w.statistic) and row["pvalue"] == pytest.approx(ref_w.pvalue)
    ps = sorted(r["pvalue"] for r in w)
    assert min(r["pvalue_holm"] for r in w) == pytest.approx(min(1, 3 * ps[0]))
    # degenerate cases give None with a reason, not an exception
    assert stats.friedman({"a": [1, 2], "b": [1, 2]})["pvalue"] is None
    assert stats.wilcoxon([1, 2, 3], [1, 2, 3])["reason"] == "all differences are zero"
    assert stats.one_sample_t([5, 5, 5], 4)["pvalue"] is None


def test_regression_metrics_and_split():
    metrics = stats.regression_metrics([1, 2, 3, 4], [1.5, 2, 2.5, 4])
    assert metrics["mae"] == pytest.approx(0.25) and metrics["mse"] == pytest.approx(0.125)
    assert metrics["rmse"] == pytest.approx(0.125 ** 0.5) and metrics["r2"] == pytest.approx(1 - 0.5 / 5)
    train, test = stats.train_test_split(30, seed=3)
    assert len(train) == 20 and len(test) == 10 and sorted([*train, *test]) == list(range(30))
    assert np.array_equal(stats.train_test_split(30, seed=3)[1], test)


def test_jury_regression_recovers_known_weights():
    rng = np.random.default_rng(7)
    n = 600
    jurors = ["j1", "j2", "j3"]
    J = rng.integers(1, 8, size=(n, 3)).astype(float)
    L = (rng.random(n) < 0.5).astype(float)
    true_w, true_l, true_b = np.array([0.5, 0.3, 0.15]), 0.4, 0.2
    human = J @ true_w + true_l * L + true_b + rng.normal(0, 0.05, n)
    table = pl.DataFrame({"response_id": [f"r{i}" for i in range(n)], "language_zh": L,
                          **{j: J[:, k] for k, j in enumerate(jurors)}})
    ratings = pl.DataFrame({"response_id": [f"r{i}" for i in range(n)], "human_score": human})
    fit = llm_globe.fit_jury(table, jurors, ratings, seed=0)
    assert [fit["weights"][j] for j in jurors] == pytest.approx(list(true_w), abs=0.01)
    assert fit["language"] == pytest.approx(true_l, abs=0.02) and fit["intercept"] == pytest.approx(true_b, abs=0.05)
    assert fit["n_train"] == 400 and fit["n_test"] == 200
    assert fit["test"]["mae"] < 0.06 and fit["test"]["r2"] > 0.99
    scored = llm_globe.apply_jury(table, jurors, fit)
    assert np.mean(np.abs(scored["jury_score"].to_numpy() - human)) < 0.06
    with pytest.raises(InputError, match="needs at least"):
        llm_globe.fit_jury(table.head(4), jurors, ratings, seed=0)


# ---------------------------------------------------------------------------------------------------- end to end


def config_from(path: Path) -> llm_globe.Config:
    """The Config of ``score llm_globe --config PATH``."""
    return llm_globe.config_of(LLMGlobeOptions.parse({}, path))


def closed_reply(text: str, body: dict) -> str:
    """Dimension d, item k: answers d % 7 + 1, in English; "no idea" for the second item of dimension 8."""
    match = re.search(r"(?:CLOSED|封闭) (\d) (\d)", text)
    d, k = int(match.group(1)), int(match.group(2))
    if d == 8 and k == 1:
        return "no idea"
    return str(d % 7 + 1)


def test_closed_end_to_end_resumes_and_rescores(release, tmp_path):
    out = tmp_path / "run"
    options = LLMGlobeOptions(release=release, out=out, split="closed", language="en", samples=3, seed=1)
    with ScriptedServer(reply=closed_reply) as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=4)
        first = llm_globe.evaluate(backend, options, args={"model": "scripted-model"})
        assert server.request_count == 18 * 3
        assert first.stats["n_queried"] == 54
        second = llm_globe.evaluate(backend, options)
        assert server.request_count == 54  # nothing new asked
        assert second.stats["n_cached"] == 54 and second.stats["n_queried"] == 0
    for name in ("responses.jsonl", "metrics.json", "run.json", "radar_closed.png"):
        assert (out / name).is_file()
    # one model: no pairwise Wilcoxon figure (it would be nine empty panels), and metrics.json says why
    assert not (out / "wilcoxon_closed.png").exists()
    assert "one model" in json.loads((out / "metrics.json").read_text())["closed"]["wilcoxon_figure"]
    records = run_folder.read_jsonl(out / "responses.jsonl")
    assert len(records) == 54 and {r["part"] for r in records} == {"closed"}
    assert all("status" not in r for r in records)
    invalid = [r for r in records if r["parse_status"] != "ok"]
    assert len(invalid) == 3 and all(r["score"] is None and r["response"] == "no idea" for r in invalid)
    m = first.score.metrics["closed"]
    # dimension d: item 0 answers a = d % 7 + 1 (score a), item 1 is reversed (score 8 - a)
    for d, dimension in enumerate(prompts.DIMENSIONS):
        a = d % 7 + 1
        expected = [a] * 3 + ([] if d == 8 else [8 - a] * 3)
        cell = m["mean_sd"]["scripted-model"][dimension]
        assert cell["n"] == len(expected) and cell["mean"] == pytest.approx(np.mean(expected))
        assert cell["sd"] == pytest.approx(np.std(expected, ddof=1))
    assert m["parse_status"]["scripted-model"]["no_number"] == 3
    # re-scoring from the saved file gives the same numbers; with a society, the t-tests against GLOBE 2004
    cfg = tmp_path / "score.json"
    cfg.write_text(json.dumps({"society": "united states"}))
    result = llm_globe.score([out / "responses.jsonl"], release, config_from(cfg))
    assert result.metrics["closed"]["mean_sd"] == m["mean_sd"]
    tests = [t for t in result.metrics["closed"]["globe_ttests"] if t["dimension"] == "Power Distance"]
    # the paper's unit: one value per prompt, its mean over the samples: item c1-0 answers 2 three times (score 2),
    # item c1-1 is reversed (8 - 2 = 6)
    for t in tests:
        ref = sps.ttest_1samp([2.0, 6.0], 4.2 if t["measure"] == "values" else 4.1)
        assert t["society"] == "United States" and t["pvalue"] == pytest.approx(ref.pvalue) and t["n"] == 2
    cfg.write_text(json.dumps({"society": "united states", "t_unit": "pooled"}))  # every answer a value
    pooled = llm_globe.score([out / "responses.jsonl"], release, config_from(cfg))
    for t in [t for t in pooled.metrics["closed"]["globe_ttests"] if t["dimension"] == "Power Distance"]:
        ref = sps.ttest_1samp([2.0] * 3 + [6.0] * 3, 4.2 if t["measure"] == "values" else 4.1)
        assert t["statistic"] == pytest.approx(ref.statistic) and t["n"] == 6
    run = json.loads((out / "run.json").read_text())
    assert run["benchmark"] == "llm_globe" and run["runner"]["n_requests"] == 54


def open_reply(text: str, body: dict) -> str:
    if text.startswith(("You are rating", "你正在")):
        # juror: rates from the answer's digit; juror "zh" adds one
        digit = int(re.search(r"ANSWER (\d)", text).group(1))
        return str(min(7, digit + (1 if text.startswith("你正在") else 0)))
    d = int(re.search(r"(?:OPEN|开放) (\d)", text).group(1))
    model = body["model"]
    level = (d % 5) + (2 if model == "model-b" else 1 if model == "model-c" else 0) + 1
    return f"I choose option one. ANSWER {min(7, level)}"


def test_open_jury_end_to_end_with_human_ratings(release, tmp_path):
    config_path = tmp_path / "jury.json"
    config_path.write_text(json.dumps({
        "part": "open", "language": "both",
        "jurors": [{"name": "judge-en", "model": "judge", "language": "en"},
                   {"name": "judge-zh", "model": "judge", "language": "zh"}],
        "groups": {"US": ["model-a"], "CN": ["model-b", "model-c"]}, "compare": ["US", "CN"]}))
    paths = []
    with ScriptedServer(reply=open_reply) as server:
        for name in ("model-a", "model-b", "model-c"):
            options = LLMGlobeOptions.parse({}, config_path).replace(release=release, out=tmp_path / name)
            backend = OpenAIBackend(name, base_url=server.base_url, concurrency=4)
            jurors = {j.name: OpenAIBackend(j.model, base_url=server.base_url)
                      for j in llm_globe.config_of(options).jurors}
            result = llm_globe.evaluate(backend, options, roles=jurors)
            paths.append(tmp_path / name / "responses.jsonl")
        n_after_first = server.request_count
        assert n_after_first == 3 * (27 * 2) * 3  # models x (prompts x languages) x (answer + two jurors)
        options = LLMGlobeOptions.parse({}, config_path).replace(release=release, out=tmp_path / "model-c")
        jurors = {j.name: OpenAIBackend(j.model, base_url=server.base_url) for j in llm_globe.config_of(options).jurors}
        again = llm_globe.evaluate(OpenAIBackend("model-c", base_url=server.base_url), options,
                                   roles=jurors)
        assert server.request_count == n_after_first and again.stats["n_queried"] == 0
    assert result.score.metrics["open"]["jury"]["method"] == "mean"
    records = run_folder.read_jsonl(paths[0])
    open_recs = [r for r in records if r["part"] == "open"]
    assert len(open_recs) == 54 and all(r["sample_index"] == 0 for r in open_recs)
    # human ratings = a known combination of the two jurors and the language
    rows = []
    for path in paths:
        recs = run_folder.read_jsonl(path)
        lang = {r["response_id"]: r["language"] for r in recs if r["part"] == "open"}
        by = {}
        for r in recs:
            if r["part"] == "juror":
                by.setdefault(r["response_id"], {})[r["juror"]] = r["rating"]
        for rid, js in by.items():
            rows.append({"response_id": rid, "human_score": 0.6 * js["judge-en"] + 0.3 * js["judge-zh"]
                         + (0.25 if lang[rid] == "zh" else 0.0) + 0.1})
    ratings = tmp_path / "human.csv"
    pl.DataFrame(rows).write_csv(ratings)
    spec = json.loads(config_path.read_text())
    spec["human_ratings"] = "human.csv"
    config_path.write_text(json.dumps(spec))
    out = tmp_path / "scored"
    cli = CliRunner().invoke(app, ["score", "llm_globe", "--responses", ",".join(map(str, paths)),
                                   "--release", str(release), "--out", str(out), "--config", str(config_path)])
    assert cli.exit_code == 0, cli.output
    metrics = json.loads((out / "metrics.json").read_text())
    jury = metrics["open"]["jury"]
    assert jury["method"] == "least_squares" and jury["n_rated"] == 162 and jury["n_test"] == 54
    assert jury["test"]["mae"] < 1e-6 and jury["test"]["r2"] == pytest.approx(1.0)
    # jurors judge-en and judge-zh differ by one except where capped at 7: weights recoverable as a whole
    tests = metrics["open"]["model_tests"]["Power Distance"]
    assert tests["friedman"]["k"] == 3 and tests["friedman"]["n_blocks"] == 3  # blocks: the 3 prompts
    assert len(tests["wilcoxon"]) == 3
    assert {t["dimension"] for t in metrics["open"]["group_ttests"]} == set(prompts.DIMENSIONS)
    assert "cannot be reproduced" in metrics["open"]["group_ttests_note"]
    assert set(metrics["open"]["group_means"]) == {"US", "CN"}
    for name in ("radar_open.png", "wilcoxon_open.png"):
        assert (out / name).stat().st_size > 1000
    # S(x) on every answer follows the fitted weights
    a = metrics["open"]["mean_sd"]["model-a"]["Performance Orientation"]
    assert a["n"] == 6 and a["mean"] is not None


def test_open_without_jurors_saves_answers_and_scores_nothing(release, tmp_path):
    options = LLMGlobeOptions(release=release, out=tmp_path / "run", split="open", language="en")
    with ScriptedServer(reply=open_reply) as server:
        result = llm_globe.evaluate(OpenAIBackend("model-a", base_url=server.base_url), options)
        assert server.request_count == 27  # the answers only: nobody asked to judge them
    m = result.score.metrics["open"]
    assert m["jury"]["method"] == "none" and m["n_answers"] == 27 and m["n_scored"] == 0
    assert "not scored" in llm_globe.BENCHMARK.summary(result.score.metrics)


def test_cli_evaluate_closed_and_errors(release, tmp_path):
    out = tmp_path / "cli"
    config_path = tmp_path / "c.yaml"
    config_path.write_text("part: closed\nlanguage: zh\nsamples: 2\n")
    with ScriptedServer(reply=closed_reply) as server:
        result = CliRunner().invoke(app, ["evaluate", "llm_globe", "--model", "scripted-model", "--out", str(out),
                                          "--base-url", server.base_url, "--release", str(release), "--limit", "4",
                                          "--config", str(config_path)])
        assert result.exit_code == 0, result.output
        assert server.request_count == 4 * 2
    records = run_folder.read_jsonl(out / "responses.jsonl")
    assert {r["language"] for r in records} == {"zh"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"parts": "open"}))
    result = CliRunner().invoke(app, ["evaluate", "llm_globe", "--model", "m", "--out", str(tmp_path / "x"),
                                      "--release", str(release), "--config", str(bad)])
    assert result.exit_code == 2 and "unknown config key" in result.output
    with pytest.raises(InputError, match="not an LLM-GLOBE release"):
        folder = tmp_path / "other"
        folder.mkdir()
        llm_globe.release_tables(write_release(folder, {"closed": small_closed()}, benchmark="cdeval"))


def test_closed_run_on_the_bundled_sample_release(bundled_release, tmp_path):
    """Against the real builder's release of the bundled sample raw/ (a failing build fails the test)."""
    release = bundled_release("llm_globe")
    tables = llm_globe.release_tables(release)
    options = LLMGlobeOptions(release=release, out=tmp_path / "run", split="closed", language="both", samples=3,
                              limit=5)
    with ScriptedServer(reply="My rating: 5") as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=8)
        first = llm_globe.evaluate(backend, options)
        n = server.request_count
        again = llm_globe.evaluate(backend, options)
        assert server.request_count == n and again.stats["n_queried"] == 0
    assert n == 5 * 2 * 3
    scored = first.score.tables["closed"]
    reverse = dict(zip(tables["closed"]["id"], tables["closed"]["reverse"]))
    assert all(s == (3.0 if reverse[i] else 5.0) for i, s in zip(scored["id"], scored["score"]))


def test_run_json_says_item_table_prompts_are_not_the_papers_and_which_prompts_lack_chinese(tmp_path):
    """An item-table release (the sample without its closed_prompts.csv) whose first open prompt has no Chinese
    text, run in both languages: run.json's release_notes say both."""
    import csv
    import shutil

    from culturebench.release import build_release

    raw = tmp_path / "raw"
    for folder in ("globe", "gics", "llm_globe"):
        shutil.copytree(Path(__file__).resolve().parents[1] / "raw" / folder, raw / folder)
    (raw / "llm_globe" / "SAMPLE_closed_prompts.csv").unlink()
    path = raw / "llm_globe" / "SAMPLE_open_prompts.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    column = rows[0].index("prompt_zhCN")
    assert rows[1][0] == "1-1"
    rows[1][column] = ""
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    release, verdict = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "rel", 0, lambda stage: None)
    assert verdict["failed"] == 0
    options = LLMGlobeOptions(release=release, out=tmp_path / "run", split="both", language="both", samples=1)
    with ScriptedServer(reply="4") as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=4)
        llm_globe.evaluate(backend, options)
    notes = json.loads((tmp_path / "run" / "run.json").read_text())["release_notes"]
    assert notes["closed_source"] == "item_table" and notes["closed_comparable_with_tables_2_3"] is False
    assert "not comparable with Tables 2-3" in notes["closed_note"]
    assert notes["open_without_chinese"] == ["open-1-1"] and notes["closed_without_chinese"] == []
    languages: dict[str, set] = {}
    for record in run_folder.read_jsonl(tmp_path / "run" / "responses.jsonl"):
        if record["part"] == "open":
            languages.setdefault(record["id"], set()).add(record["language"])
    assert len(languages) == len(rows) - 1  # every open prompt of the file asked
    assert {pid for pid, asked in languages.items() if asked != {"en", "zh"}} == {"open-1-1"}
    assert languages["open-1-1"] == {"en"}


def test_closed_requests_come_from_a_generator_and_their_count_needs_no_plan():
    from culturebench.evaluate.llm_globe.items import asked_count, plan_closed

    closed = small_closed().with_columns(  # one prompt without Chinese text (blank): asked in English only
        pl.when(pl.col("id") == "c0-0").then(pl.lit("  ")).otherwise(pl.col("prompt_zh")).alias("prompt_zh"))
    planned = plan_closed(closed, ("en", "zh"), samples=3, temperature=1.0, max_tokens=8, seed=0)
    assert not isinstance(planned, (list, tuple))
    first = next(planned)
    assert (first.info["id"], first.info["language"], first.info["sample_index"]) == ("c0-0", "en", 0)
    n_planned = 1 + sum(1 for _ in planned)
    assert n_planned == (2 * closed.height - 1) * 3
    assert asked_count(closed, ("en", "zh"), 3) == n_planned


# ------------------------------------------------------------------------------------------------- the contract


def test_plan_is_what_evaluate_asks_the_model(release, tmp_path):
    """``plan`` (no backend) yields the closed and open requests the model is then asked, the jurors' left out."""
    from collections import Counter

    from scripted_server import last_user_message

    options = LLMGlobeOptions(release=release, out=tmp_path / "run", split="both", language="both", samples=2,
                              limit=4, jurors=({"name": "judge-en", "model": "judge", "language": "en"},))
    planned = llm_globe.BENCHMARK.requests(options)
    assert not isinstance(planned, (list, tuple))
    planned_texts = Counter(request.messages[-1][1] for request in planned)
    asked = Counter()

    def reply(text, body):
        if body["model"] == "model-a":
            asked[last_user_message(body)] += 1
        return open_reply(text, body) if text.startswith(("You are rating", "OPEN", "开放")) else closed_reply(text, body)

    with ScriptedServer(reply=reply) as server:
        llm_globe.evaluate(OpenAIBackend("model-a", base_url=server.base_url), options,
                           roles={"judge-en": OpenAIBackend("judge", base_url=server.base_url)})
        assert server.request_count == sum(asked.values()) + 4 * 2  # the juror rated each open answer, unplanned
    assert planned_texts == asked
    assert sum(asked.values()) == 4 * 2 * 2 + 4 * 2  # closed: prompts x languages x samples; open: x languages


def test_headline_is_the_mean_per_dimension_of_the_variants_part(release, tmp_path):
    options = LLMGlobeOptions(release=release, out=tmp_path / "run", split="closed", language="en")
    with ScriptedServer(reply=closed_reply) as server:
        result = llm_globe.evaluate(OpenAIBackend("m", base_url=server.base_url), options)
    # closed_reply: item 0 of dimension d answers a = d % 7 + 1, item 1 is reversed (8 - a): mean 4; dimension 8
    # has only item 0 (its item 1 answers "no idea"): 8 % 7 + 1 = 2
    expected = {f"mean_{d}": 2.0 if i == 8 else 4.0 for i, d in enumerate(prompts.DIMENSIONS)}
    assert llm_globe.BENCHMARK.headline(result.metrics, options) == pytest.approx(expected)
    assert set(llm_globe.BENCHMARK.headline_names(options)) == set(expected)
    assert set(llm_globe.BENCHMARK.headline_names(options.replace(split="open"))) == set(expected)


def test_option_scoring_is_for_the_closed_split_only(release, tmp_path):
    benchmark = llm_globe.BENCHMARK
    closed = benchmark.option_scoring(LLMGlobeOptions(release=release))  # closed by default
    assert (closed.parsed_field, closed.group_field) == ("answer", "dimension")
    assert closed.read_option("5") == ("5", None) and closed.read_option("07") == ("7", None)
    assert closed.read_option("seven") is None and closed.read_option("5.5") is None
    assert benchmark.option_scoring(LLMGlobeOptions(release=release, split="open")) is None
    assert benchmark.option_scoring(LLMGlobeOptions(release=release, part="both")) is None
    assert [(t.name, dict(t.options), t.needs_config) for t in benchmark.tasks] == [
        ("llm_globe_closed", {"split": "closed"}, False), ("llm_globe_open", {"split": "open"}, True)]


def test_split_flag_wins_over_the_config_files_part_and_config_errors_name_the_file(tmp_path):
    path = tmp_path / "options.yaml"
    path.write_text("part: open\nlanguage: both\nsamples: 2\nhuman_ratings: ratings.csv\n")
    from_file = llm_globe.config_of(LLMGlobeOptions.parse({}, path))
    assert (from_file.part, from_file.languages, from_file.samples) == ("open", ("en", "zh"), 2)
    assert from_file.human_ratings == tmp_path / "ratings.csv"  # relative to the config file
    assert llm_globe.config_of(LLMGlobeOptions.parse({"split": "closed"}, path)).part == "closed"
    path.write_text("jurors: gpt-4o\n")
    with pytest.raises(InputError, match="jurors must be a list") as caught:
        LLMGlobeOptions.parse({}, path)
    assert str(path) in str(caught.value)
    with pytest.raises(InputError, match="unknown split 'all'"):
        LLMGlobeOptions.parse({"split": "all"})
