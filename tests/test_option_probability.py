"""``culturebench evaluate --scoring logprobs`` (issue #29): option distributions read from hand-made top_logprobs,
and end to end against the scripted server returning known top_logprobs: metrics by text and by option probability,
and the agreement table, each checked against values counted here from the release and the script; an endpoint
without logprobs is reported before the run."""

from __future__ import annotations

import json
import math
import zlib

import pytest
from typer.testing import CliRunner

from conftest import one_line_error
from culturebench.cli import app
from culturebench.evaluate import normad
from culturebench import registry
from culturebench.evaluate.runs.option_probability import most_probable, option_distribution
from scripted_server import ScriptedServer

LOG = math.log


def scoring(name: str):
    """What --scoring logprobs reads of the benchmark's default variant (its ``option_scoring``)."""
    benchmark = registry.benchmark(name)
    return benchmark.option_scoring(benchmark.Options())


def test_word_options_at_the_first_option_token():
    logprobs = [("Answer", LOG(0.9), [("Answer", LOG(0.9))]), (":", LOG(0.9), []),
                (" A", LOG(0.3), [(" A", LOG(0.3)), ("B", LOG(0.6)), (" B", LOG(0.05)), ("C", LOG(0.05))])]
    got = option_distribution(scoring("cdeval"), logprobs)
    assert got == pytest.approx({"A": 0.3 / 0.95, "B": 0.65 / 0.95})
    assert most_probable(got) == "B"
    # "a" (the article) is not option A; the yes/no group of Compare prompts is read in any case
    assert option_distribution(scoring("cdeval"), [("a", 0.0, [("a", 0.0)])]) is None
    assert option_distribution(scoring("cdeval"), [("yes", LOG(0.7), [("yes", LOG(0.7)), ("No", LOG(0.2)), ("A", LOG(0.1))])]
                               ) == pytest.approx({"Yes": 0.7 / 0.9, "No": 0.2 / 0.9})
    # NormAd: the words and the option numbers of its prompt ("1) Yes 2) No 3) Neither") add up
    assert option_distribution(scoring("normad"), [("Neither", LOG(0.4), [("Neither", LOG(0.4)), ("Yes", LOG(0.2)),
                                                                  ("no", LOG(0.2)), ("3", LOG(0.1)), ("1", LOG(0.05)),
                                                                  ("The", LOG(0.05))])]) == pytest.approx(
        {"Neither": 0.5 / 0.95, "Yes": 0.25 / 0.95, "No": 0.2 / 0.95})


def test_normad_replayed_options_read_the_same_under_both_answer_rules():
    """The replay answers with "Yes" / "No" / "Neither": the authors' rule and ours both read each as its label, so
    metrics by option probability do not depend on --answer-rule."""
    from culturebench.evaluate.normad import prompts

    for label, text in prompts.OPTION_TEXT.items():
        for rule in prompts.ANSWER_RULES:
            assert prompts.parse_answer(text, rule) == prompts.Answer(label, "parsed")


def test_integer_options_after_json_tokens():
    logprobs = [('{"', 0.0, []), ("answer", 0.0, []), ('":', 0.0, []),
                (" 3", LOG(0.2), [(" 3", LOG(0.2)), ("4", LOG(0.5)), ("x", LOG(0.3))])]
    assert option_distribution(scoring("wvb"), logprobs) == pytest.approx({"3": 0.2 / 0.7, "4": 0.5 / 0.7})
    assert option_distribution(scoring("llm_globe"), [("seven", 0.0, [])]) is None
    assert option_distribution(scoring("wvb"), None) is None


def story_hash(text: str) -> bool:
    return zlib.crc32(text.encode()) % 2 == 0


def yes_but_no(text: str, body: dict, reply: str) -> list[dict[str, float]]:
    """Every answer says "Yes"; for prompts of even hash most of the mass is on "No" (0.6), else on "Yes" (0.9)."""
    return [{"Yes": LOG(0.4), "No": LOG(0.6)}] if story_hash(text) else [{"Yes": LOG(0.9), "No": LOG(0.1)}]


def evaluate(server: ScriptedServer, release, out, *extra):
    return CliRunner().invoke(app, ["evaluate", "normad", "--model", "scripted-model", "--base-url", server.base_url,
                                    "--release", str(release), "--out", str(out), "--limit", "4", *extra],
                              env={"OPENAI_API_KEY": "sk-test-logprobs"})


def test_normad_by_text_and_by_option_probability(bundled_release, tmp_path):
    release = bundled_release("normad")
    out = tmp_path / "run"
    with ScriptedServer(reply="Yes", logprobs=yes_but_no) as server:
        result = evaluate(server, release, out, "--scoring", "logprobs")
        assert result.exit_code == 0, result.output
        assert all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in server.bodies)
    gold = dict(zip(*normad.release_tables(release)["stories"].select("story_id", "gold_label").to_dict().values()))
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert len(records) == 4 * 5
    by_text = json.loads((out / "metrics.json").read_text())["per_model"]["scripted-model"]["accuracy"]
    by_probability = json.loads((out / "option_probability" / "metrics.json").read_text()
                                )["per_model"]["scripted-model"]["accuracy"]
    table = json.loads((out / "agreement.json").read_text())
    assert json.loads((out / "option_probability" / "metrics.json").read_text())["answer_rule"]["rule"] == "authors"
    for context in ("none", "country", "value", "country_value", "rot"):
        mine = [r for r in records if r["context"] == context]
        assert by_text[context] == pytest.approx(sum(gold[r["story_id"]] == "yes" for r in mine) / len(mine))
        predicted = ["no" if story_hash(r["prompt"]) else "yes" for r in mine]
        assert by_probability[context] == pytest.approx(
            sum(gold[r["story_id"]] == p for r, p in zip(mine, predicted)) / len(mine))
        assert table["by_context"][context]["agreement"] == pytest.approx(predicted.count("yes") / len(mine))
    assert table["overall"]["n_compared"] == 20
    assert table["overall"]["agreement"] == pytest.approx(
        sum(not story_hash(r["prompt"]) for r in records) / 20)
    assert 0 < table["overall"]["agreement"] < 1  # the script puts the mass elsewhere for some prompts, not all


def test_endpoint_without_logprobs_is_reported_before_the_run(bundled_release, tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(reply="Yes") as server:
        line = one_line_error(evaluate(server, bundled_release("normad"), out, "--scoring", "logprobs"))
        assert server.request_count == 1  # the probe only
    assert "returned no logprobs for model 'scripted-model'" in line
    assert not (out / "metrics.json").exists()


def test_scoring_options_checked_before_any_call(bundled_release, tmp_path):
    with ScriptedServer(reply="Yes") as server:
        line = one_line_error(CliRunner().invoke(app, [
            "evaluate", "llm_globe", "--model", "m", "--base-url", server.base_url, "--release",
            str(bundled_release("llm_globe")), "--out", str(tmp_path / "a"), "--split", "open",
            "--scoring", "logprobs"]))
        assert "closed-form" in line
        line = one_line_error(evaluate(server, bundled_release("normad"), tmp_path / "b", "--scoring", "probability"))
        assert "unknown --scoring 'probability'" in line
        assert server.request_count == 0


@pytest.mark.model
def test_real_model_returns_option_probabilities(real_model, bundled_release, tmp_path):
    """llama.cpp's server returns top_logprobs: every NormAd answer gets an option distribution and is compared.
    (Greedy decoding, NormAd's temperature 0, generates the most probable token, but not always the most probable
    option: "3" adds to "Neither"; measured 9 of 10 agreeing on these stories.)"""
    model, base_url = real_model
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["evaluate", "normad", "--model", model, "--base-url", base_url, "--release",
                                      str(bundled_release("normad")), "--out", str(out), "--limit", "2",
                                      "--scoring", "logprobs", "--concurrency", "1"])
    assert result.exit_code == 0, result.output
    table = json.loads((out / "agreement.json").read_text())["overall"]
    assert table["n_answers"] == table["n_compared"] == 10 and table["n_without_option_answer"] == 0
    for line in (out / "logprobs.jsonl").read_text().splitlines():
        token, logprob, alternatives = json.loads(line)["logprobs"][0]
        assert max(lp for _, lp in alternatives) == logprob  # greedy: the generated token is the top alternative


def moved(text: str) -> bool:
    return zlib.crc32(text.encode()) % 3 == 0


def five_but_two(text: str, body: dict, reply: str) -> list[dict[str, float]]:
    """Every answer says "5" (after a leading space token); for prompts whose hash is a multiple of 3 most of the
    mass is on "2"."""
    return [{" ": 0.0}, {"5": LOG(0.3), "2": LOG(0.7)} if moved(text) else {"5": LOG(0.8), "2": LOG(0.2)}]


def test_llm_globe_integer_options(bundled_release, tmp_path):
    """LLM-GLOBE closed, four prompts (the limit spreads them over four dimensions; none reverse-worded in the
    sample), one answer each: by text every rating is 5; by option probability 2 where the script puts most mass on
    "2", else 5."""
    release = bundled_release("llm_globe")
    out = tmp_path / "run"
    with ScriptedServer(reply=" 5", logprobs=five_but_two) as server:
        result = CliRunner().invoke(app, ["evaluate", "llm_globe", "--model", "scripted-model", "--base-url",
                                          server.base_url, "--release", str(release), "--out", str(out),
                                          "--limit", "4", "--samples", "1", "--scoring", "logprobs"],
                                    env={"OPENAI_API_KEY": "sk-test-logprobs"})
        assert result.exit_code == 0, result.output
        prompts = [b["messages"][-1]["content"] for b in server.bodies]  # the probe is one of them (cached)
    assert len(prompts) == 4
    expected = sorted(2 if moved(p) else 5 for p in prompts)
    assert 2 in expected and 5 in expected  # the script moves some ratings, not all
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert len({r["dimension"] for r in records}) == 4 and not any(r["reverse"] for r in records)

    def means(path):
        (cells,) = json.loads(path.read_text())["closed"]["mean_sd"].values()
        assert {cell["n"] for cell in cells.values()} == {1}
        return sorted(cell["mean"] for cell in cells.values())

    assert means(out / "metrics.json") == [5, 5, 5, 5]
    assert means(out / "option_probability" / "metrics.json") == expected
    table = json.loads((out / "agreement.json").read_text())
    assert table["overall"]["agreement"] == pytest.approx(sum(not moved(p) for p in prompts) / 4)
    assert set(table["by_dimension"]) == {r["dimension"] for r in records}

def test_a_logprob_that_is_no_log_probability_makes_the_answer_unreadable():
    """+1000 (exp overflows) and a non-finite value are read as no distribution, never scored."""
    for bad in (1000.0, math.inf, math.nan):
        assert option_distribution(scoring("normad"), [("Yes", bad, (("Yes", bad), ("No", LOG(0.5))))]) is None
        assert option_distribution(scoring("normad"), [("Yes", LOG(0.5), (("Yes", LOG(0.5)), ("No", bad)))]) is None
    assert option_distribution(scoring("normad"), [("Yes", 1e-6, (("Yes", 1e-6),))]) == {"Yes": 1.0}


def test_logprobs_out_of_range_or_malformed_are_refused_at_once_in_one_line(bundled_release, tmp_path):
    """A server whose logprobs are +1000, or not numbers, is told apart from one without logprobs by no traceback
    and no retrying: the probe's one request, then one line."""
    import time

    from culturebench.evaluate.models import backends

    for name, script in (("huge", lambda text, body, reply: [{"Yes": 1000.0, "No": -1.0}]),
                         ("text", lambda text, body, reply: [{"Yes": "high", "No": -1.0}])):
        out = tmp_path / name
        started = time.monotonic()
        with ScriptedServer(reply="Yes", logprobs=script) as server:
            line = one_line_error(evaluate(server, bundled_release("normad"), out, "--scoring", "logprobs"))
            assert server.request_count == 1, name  # not retried
        assert time.monotonic() - started < 10, name
        assert ("no log-probabilities" if name == "huge" else "returned no logprobs") in line, line
        assert not (out / "metrics.json").exists()
    assert backends._token_logprobs({"content": [{"token": "Yes", "logprob": "high"}]}) is None
