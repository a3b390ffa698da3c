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
from culturebench.evaluate import cdeval, runs
from culturebench.evaluate import cdeval_prompts as prompts
from culturebench.evaluate.scripted_server import ScriptedServer

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


def test_six_prompts_put_the_options_in_both_orders():
    q, o1, o2 = "You lead a meeting.", "I decide alone.", "I ask everyone."
    texts = {name: prompts.prompt_text(name, q, o1, o2) for name in prompts.PROMPTS}
    assert list(texts) == ["ab_norm", "ab_reverse", "repeat_norm", "repeat_reverse", "compare_norm", "compare_reverse"]
    assert texts["ab_norm"] == ("Question: You lead a meeting. Which of the following would you do? Respond solely "
                                "with A or B.\n(A) I decide alone. (B) I ask everyone.\nAnswer:")
    assert texts["ab_reverse"].endswith("(A) I ask everyone. (B) I decide alone.\nAnswer:")
    assert "repeating one of the following options exactly.\nI decide alone.\nI ask everyone.\n" in texts["repeat_norm"]
    assert "exactly.\nI ask everyone.\nI decide alone.\n" in texts["repeat_reverse"]
    assert "Do you prefer I decide alone. over I ask everyone.? Respond solely with yes or no." in texts["compare_norm"]
    assert "Do you prefer I ask everyone. over I decide alone.?" in texts["compare_reverse"]
    assert prompts.TEMPERATURE == 1.0


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
])
def test_extract_yes_no(text, shown, status):
    assert prompts.extract_yes_no(text) == prompts.Extraction(shown, status)


@pytest.mark.parametrize("text, shown, status", [
    (O1, 1, "chosen"),
    ("i keep the tradition of my family", 1, "chosen"),  # lower case, no period
    ("Answer: I start a new tradition of my own.", 2, "chosen"),
    ("- I start a new tradition", 2, "chosen"),  # truncated: still nearer option 2
    (f"{O1} or {O2}", None, "both"),  # both options repeated
    ("B", None, "unparsed"),  # repeats neither option: not a choice however near by edit distance
    ("Sure, here is my answer.", None, "unparsed"),
    ("As an AI language model, I have no personal preference.", None, "refusal"),
    ("", None, "unparsed"),
])
def test_extract_repeat_by_edit_distance(text, shown, status):
    assert prompts.extract_repeat(text, O1, O2) == prompts.Extraction(shown, status)


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
    """Scored answers: (question, prompt) -> the scores of its samples."""
    rows = []
    for (question, prompt), scores in values.items():
        template, order = prompt.rsplit("_", 1)
        for r, s in enumerate(scores):
            rows.append({"model": model, "question_id": question, "dimension": "PDI", "domain": "Work",
                         "prompt": prompt, "template": template, "order": order, "sample_index": r, "score": s})
    return pl.DataFrame(rows)


HAND = {
    # ab: q1 norm 1 vs reverse 0 -> |1|; q2 1 vs 1 -> 0: U_ab = (1 + 0) / 2 = 0.5
    ("q1", "ab_norm"): [1, 1], ("q1", "ab_reverse"): [0, 0], ("q2", "ab_norm"): [1, 1], ("q2", "ab_reverse"): [1, 1],
    # repeat: q1 1 vs 1, q2 0.5 vs 0.5 -> U_repeat = 0
    ("q1", "repeat_norm"): [1, 1], ("q1", "repeat_reverse"): [1, 1],
    ("q2", "repeat_norm"): [0.5, 0.5], ("q2", "repeat_reverse"): [1, 0],
    # compare: q1 Eq. 1 = (1 + 0.5) / 2 = 0.75 vs (0.5 + 0) / 2 = 0.25 -> 0.5; q2 0 vs 0 -> 0: U_compare = 0.25
    ("q1", "compare_norm"): [1, 0.5], ("q1", "compare_reverse"): [0.5, 0], ("q2", "compare_norm"): [0, 0],
    ("q2", "compare_reverse"): [0, 0],
}


def test_prompt_likelihood_and_instability_by_hand():
    lik = cdeval.prompt_likelihood(scored_rows("m", HAND))
    assert lik.filter((pl.col("question_id") == "q1") & (pl.col("template") == "compare")
                      & (pl.col("order") == "norm"))["likelihood"].item() == pytest.approx(0.75)
    assert set(lik["n_samples"]) == {2}
    u = dict(cdeval.instability(lik).select("template", "instability").iter_rows())
    assert u == pytest.approx({"ab": 0.5, "repeat": 0.0, "compare": 0.25})


def test_template_weights_and_orientation_likelihood_by_hand():
    lik = cdeval.prompt_likelihood(scored_rows("m", HAND))
    instab = cdeval.instability(lik)
    # N = -10: logits -5, 0, -2.5; exp: 0.0067379, 1, 0.0820850; sum 1.0888229
    w = dict(cdeval.template_weights(instab, scale=-10).select("template", "weight").iter_rows())
    total = math.exp(-5) + 1 + math.exp(-2.5)
    assert w == pytest.approx({"ab": math.exp(-5) / total, "repeat": 1 / total, "compare": math.exp(-2.5) / total})
    assert w["repeat"] == pytest.approx(0.918423, abs=1e-6)
    # The paper's N = -1000: exp(-500) and exp(-250) vanish: all weight on the stable Repeat template.
    w_paper = dict(cdeval.template_weights(instab).select("template", "weight").iter_rows())
    assert w_paper["repeat"] == pytest.approx(1.0) and w_paper["ab"] < 1e-100 and sum(w_paper.values()) == pytest.approx(1)
    # Eq. 2, N = -10, q1: L_ab = (1 + 0) / 2 = 0.5, L_repeat = 1, L_compare = (0.75 + 0.25) / 2 = 0.5
    weights = cdeval.template_weights(instab, scale=-10)
    q1 = cdeval.orientation_likelihood(lik, weights).filter(pl.col("question_id") == "q1")["likelihood"].item()
    assert q1 == pytest.approx(w["ab"] * 0.5 + w["repeat"] * 1 + w["compare"] * 0.5)
    assert q1 == pytest.approx(0.959211, abs=1e-6)
    # equal instabilities -> equal weights 1/3
    flat = pl.DataFrame({"model": ["m"] * 3, "template": ["ab", "repeat", "compare"], "instability": [0.2] * 3})
    assert cdeval.template_weights(flat)["weight"].to_list() == pytest.approx([1 / 3] * 3)


# --------------------------------------------------------------------------------------------------- Eq. 3-5


def dims(model: str, values: dict[str, float]) -> list[dict]:
    return [{"model": model, "dimension": d, "likelihood": values.get(d, 0.5), "n_questions": 1}
            for d in cdeval.DIMENSIONS]


def test_country_similarity_by_hand():
    dim_lik = pl.DataFrame(dims("m", {}))  # all 0.5 -> 50 on the Hofstede scale
    hofstede = pl.DataFrame({"country_code": ["AAA", "BBB"], "country_name": ["Aland", "Bland"],
                             "pdi": [60.0, 80.0], "idv": [50.0, 10.0], "uai": [50.0, 50.0], "mas": [50.0, 50.0],
                             "lto": [50.0, None], "ivr": [50.0, None]})
    sim = cdeval.country_similarity(dim_lik, hofstede)
    rows = {r["country_code"]: r for r in sim.iter_rows(named=True)}
    # AAA: distance sqrt(10^2) = 10 -> exp(-0.01 * 10) = exp(-0.1) = 0.904837
    assert rows["AAA"]["distance"] == pytest.approx(10) and rows["AAA"]["similarity"] == pytest.approx(0.904837, abs=1e-6)
    # BBB: four dimensions, sqrt(30^2 + 40^2) = 50 -> exp(-0.5) = 0.606531
    assert rows["BBB"]["n_dimensions"] == 4 and rows["BBB"]["similarity"] == pytest.approx(0.606531, abs=1e-6)
    assert sim["country_code"].to_list() == ["AAA", "BBB"]  # most similar first


def test_model_similarity_and_pairwise_baseline_by_hand():
    dim_lik = pl.DataFrame(dims("A", {}) + dims("B", {"PDI": 0.8}) + dims("C", {"IDV": 0.9}))
    pairs = cdeval.model_similarity(dim_lik)
    sim = {(r["model_a"], r["model_b"]): r["similarity"] for r in pairs.iter_rows(named=True)}
    # A-B: |80 - 50| = 30 -> exp(-0.3) = 0.740818; A-C: 40 -> exp(-0.4) = 0.670320;
    # B-C: sqrt(30^2 + 40^2) = 50 -> exp(-0.5) = 0.606531
    assert sim == pytest.approx({("A", "B"): 0.740818, ("A", "C"): 0.670320, ("B", "C"): 0.606531}, abs=1e-6)
    # Eq. 5: (0.740818 + 0.670320 + 0.606531) / 3 = 0.672556
    assert cdeval.pairwise_baseline(pairs) == pytest.approx(0.672556, abs=1e-6)
    assert cdeval.pairwise_baseline(cdeval.model_similarity(pl.DataFrame(dims("A", {})))) is None


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
        result = evaluate_cli(server, release, out, "--samples", "2", "--limit", "6", model="always-a")
        assert result.exit_code == 0, result.output
        assert server.request_count == 6 * 6 * 2
        for name in ("responses.jsonl", "metrics.json", "run.json", "dimensions.png", "pca.png", "cache.sqlite"):
            assert (out / name).is_file(), name
        records = runs.read_jsonl(out / "responses.jsonl")
        assert len(records) == 72 and {r["model"] for r in records} == {"always-a"}
        by_prompt = {}
        for r in records:
            by_prompt.setdefault(r["prompt"], set()).add((r["score"], r["status"]))
        # "A": option_1 in norm, option_2 in reverse; "A" to a yes/no question is unparseable (0.5)
        assert by_prompt["ab_norm"] == {(1.0, "chosen")} and by_prompt["ab_reverse"] == {(0.0, "chosen")}
        assert by_prompt["compare_norm"] == by_prompt["compare_reverse"] == {(0.5, "unparsed")}
        metrics = json.loads((out / "metrics.json").read_text())
        m = metrics["per_model"]["always-a"]
        assert m["instability"]["ab"] == pytest.approx(1.0) and m["instability"]["compare"] == pytest.approx(0.0)
        assert m["template_weights"]["ab"] < 1e-100
        assert m["parse_status"]["unparsed"] >= 24 and m["n_responses"] == 72
        assert set(m["dimension_likelihood"]) == {"PDI", "IDV", "UAI"}  # --limit 6: two questions of three dimensions
        run = json.loads((out / "run.json").read_text())
        assert run["benchmark"] == "cdeval" and run["runner"]["n_queried"] == 72
        assert run["evaluation"]["samples"] == 2 and run["evaluation"]["temperature"] == 1.0
        assert SECRET not in (out / "run.json").read_text()

        server.reset_counts()
        again = evaluate_cli(server, release, out, "--samples", "2", "--limit", "6", model="always-a")
        assert again.exit_code == 0, again.output
        assert server.request_count == 0  # resumed entirely from the cache
        assert json.loads((out / "run.json").read_text())["runner"]["n_cached"] == 72
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
    # USA: 100 - (40, 91, 46, 62, 26, 68) -> (60, 9, 54, 38, 74, 32); CHN: (20, 80, 70, 34, 13, 76)
    usa = math.sqrt(60**2 + 9**2 + 54**2 + 38**2 + 74**2 + 32**2)
    china = math.sqrt(20**2 + 80**2 + 70**2 + 34**2 + 13**2 + 76**2)
    sims = {c["country_code"]: c["similarity"] for c in m["country_similarity"]}
    assert sims["USA"] == pytest.approx(math.exp(-0.01 * usa)) and sims["CHN"] == pytest.approx(math.exp(-0.01 * china))
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
    assert len(both["model_similarity"]) == 1
    assert both["pairwise_baseline"] == pytest.approx(both["model_similarity"][0]["similarity"])
    kinds = [p["kind"] for p in both["pca"]["points"]]
    assert kinds.count("model") == 2 and kinds.count("country") == 2  # "Partial" lacks three scores
    assert (scored / "pca.png").stat().st_size > 1000 and (scored / "dimensions.png").stat().st_size > 1000


# ------------------------------------------------------------------------------------------------ errors



def test_cli_errors_are_one_line_exit_2(release, tmp_path):
    runner = CliRunner()
    line = one_line_error(runner.invoke(app, ["evaluate", "nosuch", "--model", "m", "--out", str(tmp_path / "x")]))
    assert "unknown benchmark 'nosuch'" in line and "cdeval" in line
    line = one_line_error(runner.invoke(app, ["evaluate", "cdeval", "--model", "m", "--out", str(tmp_path / "x"),
                                              "--release", str(tmp_path / "missing")]))
    assert "no manifest.json" in line
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
    assert out.columns == ["country_code", "country_name", "pdi", "idv", "uai", "mas", "lto", "ivr"]
    assert out.row(0) == ("USA", "United States", 40.0, 91.0, 46.0, 62.0, 26.0, None)
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
