"""Order variants as a run dimension (issue #63): ``evaluate cdeval`` and ``evaluate normad --variants
reversed,shuffled`` on the bundled sample against scripted servers.

A server that answers with the first listed option, and one that answers a fixed option by its content wherever it is
listed. Every reply carries a tag of its request's text (digits the parsers ignore), so that each responses.jsonl
record is tied to the request body the server received; the expected consistency, per-variant headlines and position
shares are computed here from those bodies (which option each lists first) and the release's parquet tables, not by
the code under test."""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from sklearn.metrics import f1_score
from typer.testing import CliRunner

from conftest import one_line_error
from culturebench.cli import app
from scripted_server import ScriptedServer, last_user_message

VARIANTS = ("default", "reversed", "shuffled")
N = -1000.0  # CDEval Eq. 7's N (Wang et al. 2024, App. A.3)
DIMENSIONS = ("PDI", "IDV", "UAI", "MAS", "LTO", "IVR")
NORMAD_WORDS = {"Yes": "yes", "No": "no", "Neither": "neutral"}


def tag(text: str) -> str:
    return str(int(hashlib.sha1(text.encode()).hexdigest(), 16) % 10**12)


def tagged(answer):
    """A reply function: ``answer(text)`` followed by the text's tag."""
    return lambda text, body: f"{answer(text)} #{tag(text)}"


def table(release: Path, config: str) -> pl.DataFrame:
    return pl.read_parquet(sorted((release / "data" / config).glob("*.parquet")))


def evaluate(name: str, server: ScriptedServer, release: Path, out: Path, *extra: str):
    result = CliRunner().invoke(app, ["evaluate", name, "--model", "scripted", "--base-url", server.base_url,
                                      "--release", str(release), "--out", str(out), *extra],
                                env={"OPENAI_API_KEY": "test-key"})
    assert result.exit_code == 0, result.output
    return result


def run_records(server: ScriptedServer, out: Path) -> list[dict]:
    """responses.jsonl's records, each with ``body``: the request body the server received for it, and ``text``:
    its last user message."""
    bodies = {tag(last_user_message(body)): body for body in server.bodies}
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    for record in records:
        record["body"] = bodies[record["response"].rsplit("#", 1)[1]]
        record["text"] = last_user_message(record["body"])
    return records


def same_but_the_user_message(body: dict, default: dict) -> None:
    """Two request bodies equal in everything (sampling, seed, stop, the other messages) but the last user
    message's text, which the caller compares."""
    def rest(b: dict) -> tuple:
        messages = [dict(m) for m in b["messages"]]
        last = max(i for i, m in enumerate(messages) if m["role"] == "user")
        messages[last]["content"] = None
        return json.dumps({**b, "messages": messages}, sort_keys=True)
    assert rest(body) == rest(default)


def expected_consistency(records: list[dict], unit) -> dict[str, float]:
    """Per item: the share of its variants answering its modal answer (a tie gives the same share whichever)."""
    by_unit: dict = {}
    for r in records:
        by_unit.setdefault(unit(r), {})[r["variant"]] = r["picked"]
    out = {}
    for key, given in by_unit.items():
        modal = max(given.values(), key=list(given.values()).count)
        out[key] = sum(answer == modal for answer in given.values()) / len(given)
    return out


def spread_is_zero(block: dict) -> None:
    assert block["spread"] and all(s["max_minus_min"] == 0 and s["std"] == 0 for s in block["spread"].values())


# ---------------------------------------------------------------------------------------------------------- CDEval


def cdeval_questions(release: Path) -> dict[str, dict]:
    return {r["id"]: r for r in table(release, "questions").iter_rows(named=True)}


def listed_first(text: str, question: dict) -> str:
    """Which option (option_1 / option_2) the prompt lists first, the question's own text left aside."""
    rest = text.replace(question["question"].strip(), "", 1)
    one, two = rest.find(question["option_1"].strip()), rest.find(question["option_2"].strip())
    assert one >= 0 and two >= 0
    return "option_1" if one < two else "option_2"


def cdeval_server(questions: dict[str, dict], pick) -> ScriptedServer:
    """Answers each prompt with the option ``pick(first, second)`` chooses (option texts as listed)."""
    def answer(text: str) -> str:
        q = next(q for q in questions.values()  # two questions of the sample share their text, not their options
                 if all(q[c].strip() in text for c in ("question", "option_1", "option_2")))
        shown = [q["option_1"].strip(), q["option_2"].strip()]
        if listed_first(text, q) == "option_2":
            shown.reverse()
        chosen = pick(*shown, q)
        if "Respond solely with A or B" in text:
            return "A" if chosen == shown[0] else "B"
        if "Do you prefer" in text:
            return "yes" if chosen == shown[0] else "no"
        return chosen
    return ScriptedServer(reply=tagged(answer), model="scripted")


def cdeval_expected(records: list[dict], questions: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Each variant's likelihood per dimension (Eq. 1, 6, 7, 2 and Table 2's mean over questions), from the
    answers' contents and the options' listed order in each request body."""
    out = {}
    for variant in VARIANTS:
        mine = [r for r in records if r["variant"] == variant]
        p: dict = {}
        for r in mine:
            q = questions[r["question_id"]]
            template = ("ab" if "Respond solely with A or B" in r["text"] else "compare" if "Do you prefer" in r["text"]
                        else "repeat")
            order = "norm" if listed_first(r["text"], q) == "option_1" else "reverse"
            p.setdefault((r["question_id"], template, order), []).append((r["sample_index"], r["picked"] == "option_1"))
        u = {t: sum(dict(p[(q, t, "norm")])[k] != dict(p[(q, t, "reverse")])[k]
                    for q in questions for k, _ in p[(q, t, "norm")]) for t in ("ab", "repeat", "compare")}
        z = sum(math.exp(v / N) for v in u.values())
        weight = {t: math.exp(v / N) / z for t, v in u.items()}
        likelihood = {q: sum(weight[t] / 2 * statistics.fmean(s for _, s in p[(q, t, o)])
                             for t in weight for o in ("norm", "reverse")) for q in questions}
        out[variant] = {f"likelihood_{d}": statistics.fmean(v for q, v in likelihood.items()
                                                            if questions[q]["dimension"].upper() == d)
                        for d in DIMENSIONS if any(questions[q]["dimension"].upper() == d for q in questions)}
    return out


def cdeval_run(bundled_release, tmp_path, pick):
    release = bundled_release("cdeval")
    questions = cdeval_questions(release)
    out = tmp_path / "run"
    with cdeval_server(questions, pick) as server:
        result = evaluate("cdeval", server, release, out, "--samples", "1", "--variants", "reversed,shuffled")
        records = run_records(server, out)
    for r in records:
        q = questions[r["question_id"]]
        chosen = r["response"].rsplit(" #", 1)[0]
        first = listed_first(r["text"], q)
        second = "option_2" if first == "option_1" else "option_1"
        if "Respond solely with A or B" in r["text"] or "Do you prefer" in r["text"]:
            r["picked"] = first if chosen in ("A", "yes") else second
        else:
            r["picked"] = "option_1" if chosen == q["option_1"].strip() else "option_2"
    metrics = json.loads((out / "metrics.json").read_text())
    return result, records, questions, metrics["variants"], metrics


def test_cdeval_first_option_server_consistency_and_headlines_as_predicted(bundled_release, tmp_path):
    result, records, questions, block, metrics = cdeval_run(bundled_release, tmp_path, lambda first, second, q: first)
    assert {r["variant"] for r in records} == set(VARIANTS)
    assert all(r["picked"] == listed_first(r["text"], questions[r["question_id"]]) for r in records)
    expected = expected_consistency(records, lambda r: f"{r['question_id']}/{r['slot']}/{r['sample_index']}")
    assert block["per_item"] == expected
    assert block["consistency"] == statistics.fmean(expected.values())
    assert block["consistency"] < 1  # a first-option model is not consistent under reordering
    headlines = cdeval_expected(records, questions)
    for variant in VARIANTS:
        assert block["headlines"][variant].keys() == headlines[variant].keys()
        for name, value in headlines[variant].items():
            assert block["headlines"][variant][name] == pytest.approx(value, abs=1e-12)
    assert block["position_share"] == {v: {"1": 1.0} for v in VARIANTS}
    # the paper's headline stays the default variant's
    for name, value in headlines["default"].items():
        assert metrics["per_model"]["scripted"]["dimension_likelihood"][name.split("_")[1]] == pytest.approx(value)
    # two options have two orders, both of which the paper asks: every reordered request repeats a default one
    assert block["identical_requests"] == sum(r["variant"] != "default" for r in records)
    assert "cdeval variants default, reversed, shuffled: consistency" in result.output
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["evaluation"]["variants"] == list(VARIANTS)


def test_cdeval_content_server_is_consistent(bundled_release, tmp_path):
    _, records, _, block, _ = cdeval_run(bundled_release, tmp_path, lambda first, second, q: q["option_1"].strip())
    assert all(r["picked"] == "option_1" for r in records)
    assert block["consistency"] == 1.0 and set(block["per_item"].values()) == {1.0}
    spread_is_zero(block)
    # Eq. 3's similarity per country does not move with the order: every variant ranks the countries alike
    assert block["countries"]["per_country"] and all(len(set(by.values())) == 1
                                                     for by in block["countries"]["per_country"].values())
    assert all(s["spearman"] in (None, pytest.approx(1.0)) for s in block["countries"]["order_stability"].values())
    assert block["interval"]["per_name"] == {}  # Eq. 7's weights are the whole run's: no interval over items


def test_cdeval_variant_requests_differ_only_by_the_options_order(bundled_release, tmp_path):
    _, records, questions, _, _ = cdeval_run(bundled_release, tmp_path, lambda first, second, q: first)
    default = {(r["question_id"], r["slot"], r["sample_index"]): r for r in records if r["variant"] == "default"}
    swapped = 0
    for r in records:
        if r["variant"] == "default":
            continue
        q = questions[r["question_id"]]
        one, two = q["option_1"].strip(), q["option_2"].strip()
        base_record = default[(r["question_id"], r["slot"], r["sample_index"])]
        same_but_the_user_message(r["body"], base_record["body"])
        base = base_record["text"]
        if r["text"] != base:
            swapped += 1
            assert r["text"].replace(one, "\0").replace(two, one).replace("\0", two) == base
        else:
            assert r["variant"] == "shuffled"  # reversed always swaps the two options
    assert swapped >= sum(r["variant"] == "reversed" for r in records)


# ---------------------------------------------------------------------------------------------------------- NormAd


_LISTED = re.compile(r"(?<=\s)([123])\) (Yes|No|Neither)\b")


def normad_listed(text: str) -> list[str]:
    """The labels the prompt's numbered options list, in order."""
    words = _LISTED.findall(text.rpartition("Options:")[2])
    assert [n for n, _ in words] == ["1", "2", "3"]
    return [NORMAD_WORDS[w] for _, w in words]


def normad_run(bundled_release, tmp_path, answer):
    release = bundled_release("normad")
    out = tmp_path / "run"
    with ScriptedServer(reply=tagged(answer), model="scripted") as server:
        result = evaluate("normad", server, release, out, "--variants", "reversed,shuffled")
        records = run_records(server, out)
    for r in records:
        r["picked"] = NORMAD_WORDS[r["response"].rsplit(" #", 1)[0]]
    metrics = json.loads((out / "metrics.json").read_text())
    return result, records, table(release, "stories"), metrics["variants"]


def test_normad_first_option_server_consistency_and_headlines_as_predicted(bundled_release, tmp_path):
    result, records, stories, block = normad_run(
        bundled_release, tmp_path, lambda text: next(w for w, label in NORMAD_WORDS.items()
                                                    if label == normad_listed(text)[0]))
    gold = {str(r["id"]): r["gold_label"].lower() for r in stories.iter_rows(named=True)}
    assert all(r["picked"] == normad_listed(r["text"])[0] for r in records)
    expected = expected_consistency(records, lambda r: f"{r['story_id']}/{r['context']}/{r['sample_index']}")
    assert block["per_item"] == expected
    assert block["consistency"] == statistics.fmean(expected.values())
    assert block["consistency"] < 1
    for variant in VARIANTS:
        for context in {r["context"] for r in records}:
            mine = [r for r in records if r["variant"] == variant and r["context"] == context]
            truth, predicted = [gold[r["story_id"]] for r in mine], [r["picked"] for r in mine]
            accuracy = sum(t == p for t, p in zip(truth, predicted)) / len(mine)
            macro = f1_score(truth, predicted, labels=["yes", "no", "neutral"], average="macro", zero_division=0)
            assert block["headlines"][variant][f"accuracy_{context}"] == pytest.approx(accuracy, abs=1e-12)
            assert block["headlines"][variant][f"macro_f1_{context}"] == pytest.approx(macro, abs=1e-12)
    values = [block["headlines"][v]["accuracy_none"] for v in VARIANTS]
    assert block["spread"]["accuracy_none"]["max_minus_min"] == pytest.approx(max(values) - min(values))
    assert block["spread"]["accuracy_none"]["std"] == pytest.approx(statistics.pstdev(values))
    assert block["position_share"] == {v: {"1": 1.0} for v in VARIANTS}
    figure = json.loads((tmp_path / "run" / "position_bias.json").read_text())
    assert figure["position_share"] == {v: {"1": 1.0} for v in VARIANTS}
    assert (tmp_path / "run" / "position_bias.png").stat().st_size > 0
    # the interval over stories x variants: a first-option model is right where the gold is the first listed
    for context in {r["context"] for r in records}:
        per_variant = [statistics.fmean(gold[r["story_id"]] == r["picked"] for r in records
                                        if r["variant"] == v and r["context"] == context) for v in VARIANTS]
        cell = block["interval"]["per_name"][f"accuracy_{context}"]
        assert cell["estimate"] == pytest.approx(statistics.fmean(per_variant))
        assert cell["interval"][0] <= cell["estimate"] <= cell["interval"][1]
        assert cell["interval"][1] - cell["interval"][0] > 0  # items and variants differ: a spread
    identical = {(r["story_id"], r["context"], r["text"]) for r in records if r["variant"] == "default"}
    repeats = sum((r["story_id"], r["context"], r["text"]) in identical for r in records if r["variant"] == "shuffled")
    assert block["identical_requests"] == repeats
    assert "normad variants default, reversed, shuffled: consistency" in result.output


def test_normad_content_server_is_consistent(bundled_release, tmp_path):
    _, records, stories, block = normad_run(bundled_release, tmp_path, lambda text: "No")
    assert block["consistency"] == 1.0 and set(block["per_item"].values()) == {1.0}
    spread_is_zero(block)
    share_no = statistics.fmean(g.lower() == "no" for g in stories["gold_label"])
    for cell in block["interval"]["per_name"].values():  # the same answers under every variant: no variant spread
        assert cell["estimate"] == pytest.approx(share_no)
        assert cell["interval"][0] <= share_no <= cell["interval"][1]
    stability = block["countries"]["order_stability"]
    assert set(stability) == {"reversed", "shuffled"}
    assert all(s["spearman"] in (None, pytest.approx(1.0)) for s in stability.values())
    assert all(len(set(by.values())) == 1 for by in block["countries"]["per_country"].values())
    positions = Counter((r["variant"], str(normad_listed(r["text"]).index("no") + 1)) for r in records)
    for variant in VARIANTS:
        n = sum(c for (v, _), c in positions.items() if v == variant)
        assert block["position_share"][variant] == {p: c / n for (v, p), c in sorted(positions.items()) if v == variant}


def test_normad_variant_requests_differ_only_by_the_options_order(bundled_release, tmp_path):
    _, records, _, _ = normad_run(bundled_release, tmp_path, lambda text: "No")
    default = {(r["story_id"], r["context"], r["sample_index"]): r for r in records if r["variant"] == "default"}
    for r in records:
        same_but_the_user_message(r["body"], default[(r["story_id"], r["context"], r["sample_index"])]["body"])
        base = default[(r["story_id"], r["context"], r["sample_index"])]["text"]
        assert normad_listed(base) == ["yes", "no", "neutral"]
        listed = normad_listed(r["text"])
        assert sorted(listed) == sorted(["yes", "no", "neutral"])
        if r["variant"] == "reversed":
            assert listed == ["neutral", "no", "yes"]
        head, mark, options = r["text"].rpartition("Options:")
        words = iter(["Yes", "No", "Neither"])
        assert head + mark + _LISTED.sub(lambda m: f"{m.group(1)}) {next(words)}", options) == base


# ------------------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("name", ["cdeval", "normad"])
def test_an_unknown_variant_is_one_line_naming_the_defined_ones(bundled_release, tmp_path, name):
    line = one_line_error(CliRunner().invoke(app, [
        "evaluate", name, "--model", "m", "--base-url", "http://127.0.0.1:9", "--release", str(bundled_release(name)),
        "--out", str(tmp_path / "run"), "--variants", "reversed,sideways"], env={"OPENAI_API_KEY": "test-key"}))
    assert "sideways" in line and "default, reversed, shuffled" in line


def test_shuffled_is_seeded_by_the_seed_and_the_item():
    from culturebench.evaluate.runs.variants import option_order

    orders = {item: option_order(3, "shuffled", 0, item) for item in (f"story-{i}" for i in range(40))}
    assert orders == {item: option_order(3, "shuffled", 0, item) for item in orders}  # the same run asks the same
    assert len(set(orders.values())) > 1  # the order depends on the item
    assert any(option_order(3, "shuffled", 1, item) != order for item, order in orders.items())  # and on --seed
    assert all(sorted(order) == [0, 1, 2] for order in orders.values())
    assert option_order(3, "reversed", 0, "x") == (2, 1, 0) and option_order(3, "default", 0, "x") == (0, 1, 2)


def test_socialcc_refuses_variants_in_one_line_saying_why(bundled_release, tmp_path):
    line = one_line_error(CliRunner().invoke(app, [
        "evaluate", "socialcc", "--model", "m", "--base-url", "http://127.0.0.1:9", "--release",
        str(bundled_release("socialcc")), "--out", str(tmp_path / "run"), "--variants", "reversed"],
        env={"OPENAI_API_KEY": "test-key"}))
    assert "socialcc defines no prompt variants" in line and "free text" in line


# ------------------------------------------------------------------------------------------------------------- WVB


_WVB_SCALE = re.compile(r"On a scale of (-?\d+) to (-?\d+), \1 meaning '(.*?)' and \2 meaning '(.*?)', ")


def wvb_run(bundled_release, tmp_path, answer):
    """``evaluate wvb --variants reversed`` (with demographics, 60 probe rows) against a server replying
    ``answer(first_named_code, second_named_code)`` in App. B's JSON."""
    from culturebench.evaluate import wvb

    release = bundled_release("wvb")
    out = tmp_path / "run"

    def reply(text, body):
        first, second = map(int, _WVB_SCALE.search(text).groups()[:2])
        return json.dumps({"thoughtful explanation": "x", "answer as a score": str(answer(first, second))})

    with ScriptedServer(reply=reply, model="scripted") as server:
        result = evaluate("wvb", server, release, out, "--limit", "60", "--variants", "reversed")
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    rows = wvb.evaluation_rows(release, "probe", limit=60)
    metrics = json.loads((out / "metrics.json").read_text())
    return result, records, rows, metrics


def test_wvb_reversed_lists_the_scale_from_its_other_end_codes_kept(bundled_release, tmp_path):
    from scipy.stats import wasserstein_distance

    result, records, rows, metrics = wvb_run(bundled_release, tmp_path, lambda first, second: first)
    block = metrics["variants"]
    assert block["variants"] == ["default", "reversed"] and {r["variant"] for r in records} == {"default", "reversed"}
    default = {(r["participant_id"], r["question_id"], r["sample_index"]): r for r in records
               if r["variant"] == "default"}
    for r in records:
        (message,) = r["messages"]
        base = default[(r["participant_id"], r["question_id"], r["sample_index"])]
        assert r["sampling"] == base["sampling"]
        low, high, one, two = _WVB_SCALE.search(base["messages"][0]["content"]).groups()
        if r["variant"] == "reversed":  # only the scale's opening changes: its ends named the other way round
            assert message["content"] == base["messages"][0]["content"].replace(
                f"On a scale of {low} to {high}, {low} meaning '{one}' and {high} meaning '{two}', ",
                f"On a scale of {high} to {low}, {high} meaning '{two}' and {low} meaning '{one}', ")
            assert message["content"] != base["messages"][0]["content"] and r["answer"] == int(high)
        else:
            assert r["answer"] == int(low)
    # a first-named model answers the scale's two ends: every item inconsistent, the variants' W1 computed here
    assert block["per_item"] == {f"{p}/{q}/{s}": 0.5 for p, q, s in default}
    assert block["consistency"] == 0.5 and block["identical_requests"] == 0
    assert block["position_share"] == {"default": {"1": 1.0}, "reversed": {"1": 1.0}}
    for variant in ("default", "reversed"):
        w1 = []
        for (q,), part in rows.group_by("question_id"):
            mine = [r["answer"] for r in records if r["variant"] == variant and r["question_id"] == q]
            low, high = next(map(int, _WVB_SCALE.search(r["messages"][0]["content"]).groups()[:2])
                             for r in records if r["variant"] == "default" and r["question_id"] == q)
            w1.append(wasserstein_distance([(h - low) / (high - low) for h in part["human"]],
                                           [(a - low) / (high - low) for a in mine]))
        assert block["headlines"][variant]["mean_w1"] == pytest.approx(statistics.fmean(w1), abs=1e-12)
        assert block["headlines"][variant]["std_w1"] == pytest.approx(statistics.pstdev(w1), abs=1e-12)
    assert metrics["mean"] == pytest.approx(block["headlines"]["default"]["mean_w1"])  # the paper's is the default's
    cell = block["interval"]["per_name"]["mean_w1"]  # over questions x variants: the variants' mean W1, averaged
    assert cell["estimate"] == pytest.approx(statistics.fmean(block["headlines"][v]["mean_w1"]
                                                              for v in block["variants"]))
    assert cell["interval"][0] <= cell["estimate"] <= cell["interval"][1]
    assert "std_w1" not in block["interval"]["per_name"]
    assert "wvb variants default, reversed: consistency 0.500" in result.output


def test_wvb_content_server_is_consistent(bundled_release, tmp_path):
    _, records, _, metrics = wvb_run(bundled_release, tmp_path, lambda first, second: min(first, second))
    block = metrics["variants"]
    assert block["consistency"] == 1.0 and set(block["per_item"].values()) == {1.0}
    spread_is_zero(block)
    reversed_positions = Counter(str(_position_from_the_top(r)) for r in records if r["variant"] == "reversed")
    n = sum(reversed_positions.values())
    assert block["position_share"] == {"default": {"1": 1.0},
                                       "reversed": {p: c / n for p, c in reversed_positions.items()}}


def _position_from_the_top(record: dict) -> int:
    """The listed position of the answer on a scale the prompt names from its top end."""
    high = int(_WVB_SCALE.search(record["messages"][0]["content"]).group(1))
    return high - record["answer"] + 1


def test_wvb_defines_reversed_only(bundled_release, tmp_path):
    line = one_line_error(CliRunner().invoke(app, [
        "evaluate", "wvb", "--model", "m", "--base-url", "http://127.0.0.1:9", "--release",
        str(bundled_release("wvb")), "--out", str(tmp_path / "run"), "--variants", "shuffled"],
        env={"OPENAI_API_KEY": "test-key"}))
    assert "'shuffled'" in line and "it defines default, reversed" in line



# --------------------------------------------------------------------------------------------------------- LLM-GLOBE


_GLOBE_SCALE = re.compile(r"on a scale of (\d+) to (\d+), where (.+)\.$")


def llm_globe_run(bundled_release, tmp_path, answer):
    release = bundled_release("llm_globe")
    out = tmp_path / "run"
    with ScriptedServer(reply=lambda text, body: str(answer(text)), model="scripted") as server:
        result = evaluate("llm_globe", server, release, out, "--limit", "18", "--variants", "reversed")
        texts = [last_user_message(b) for b in server.bodies]
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    return result, records, texts, json.loads((out / "metrics.json").read_text()), release


def test_llm_globe_reversed_names_the_anchors_from_seven_down(bundled_release, tmp_path):
    from scipy.stats import spearmanr

    first_named = lambda text: int(_GLOBE_SCALE.search(text).group(1))  # noqa: E731
    result, records, texts, metrics, release = llm_globe_run(bundled_release, tmp_path, first_named)
    block = metrics["variants"]
    closed = {r["id"]: r for r in table(release, "closed").iter_rows(named=True)}
    asked = set(texts)
    for prompt in {r["id"] for r in records}:
        paper = closed[prompt]["prompt_en"]
        low, high, anchors = _GLOBE_SCALE.search(paper).groups()
        points = re.findall(r"(\d+) is (.+?)(?=, and \d+ is |, \d+ is |$)", anchors)
        reversed_points = list(reversed(points))
        expected = ", ".join(f"{p} is {t}" for p, t in reversed_points[:-1]) + \
            f", and {reversed_points[-1][0]} is {reversed_points[-1][1]}"
        assert paper in asked
        assert paper[:paper.index("on a scale of")] + f"on a scale of {high} to {low}, where {expected}." in asked
    assert len(asked) == 2 * len({r["id"] for r in records})  # nothing but the scale sentence differs
    # a first-named model answers 1 under the paper's order, 7 reversed; reverse-worded items score 8 - answer
    for variant, answer in (("default", 1), ("reversed", 7)):
        by_dimension: dict = {}
        for r in records:
            if r["variant"] == variant:
                by_dimension.setdefault(r["dimension"], []).append(8 - answer if closed[r["id"]]["reverse"] else answer)
        assert block["headlines"][variant] == {f"mean_{d}": pytest.approx(statistics.fmean(v))
                                               for d, v in by_dimension.items()}
    assert block["consistency"] == 0.5 and block["position_share"] == {"default": {"1": 1.0}, "reversed": {"1": 1.0}}
    # each society's distance per variant, from the release's GLOBE 2004 values and the variant's means
    globe = table(release, "globe_2004")
    countries = block["countries"]
    distance = {}
    for variant in ("default", "reversed"):
        means = {k.removeprefix("mean_"): v for k, v in block["headlines"][variant].items()}
        for (society,), part in globe.group_by("country"):
            values = {d: v for d, v in zip(part["dimension"], part["values"]) if v is not None and d in means}
            distance.setdefault(society, {})[variant] = math.sqrt(sum((means[d] - v) ** 2 for d, v in values.items()))
    assert sorted(map(sorted, (by.values() for by in countries["per_country"].values()))) == \
        sorted(map(sorted, (by.values() for by in distance.values())))
    pairs = list(countries["per_country"].values())
    rho = spearmanr([p["default"] for p in pairs], [p["reversed"] for p in pairs]).statistic
    assert countries["order_stability"]["reversed"]["spearman"] == pytest.approx(rho)
    assert "llm_globe variants default, reversed: consistency 0.500" in result.output
    assert f"countries' order against the default's (Spearman): reversed {rho:.3f}" in result.output


def test_llm_globe_content_server_is_consistent(bundled_release, tmp_path):
    _, records, _, metrics, _ = llm_globe_run(bundled_release, tmp_path, lambda text: 3)
    block = metrics["variants"]
    assert block["consistency"] == 1.0
    spread_is_zero(block)
    assert block["position_share"] == {"default": {"3": 1.0}, "reversed": {"5": 1.0}}
    assert all(s["spearman"] in (None, pytest.approx(1.0)) for s in block["countries"]["order_stability"].values())


def test_llm_globe_variants_need_the_closed_prompts(bundled_release, tmp_path):
    line = one_line_error(CliRunner().invoke(app, [
        "evaluate", "llm_globe", "--model", "m", "--base-url", "http://127.0.0.1:9", "--release",
        str(bundled_release("llm_globe")), "--out", str(tmp_path / "run"), "--split", "open", "--variants",
        "reversed"], env={"OPENAI_API_KEY": "test-key"}))
    assert "open prompts list none" in line


# ------------------------------------------------------------------------------------------------------ intervals


def test_the_interval_resamples_items_and_variants_together():
    """Two variants whose items are all 0 and all 1: a resample draws the variants (0, 0), (0, 1), (1, 0) or
    (1, 1), so the statistic is 0, 0.5 or 1 and the percentile interval runs from 0 to 1 around 0.5; one variant
    alone (resampling its items, all equal) has no spread."""
    from culturebench.evaluate.reports.variant_report import VariantScore, items_by_variants_interval

    items = {f"item-{i}": 0.0 for i in range(10)}
    scores = {"default": VariantScore({}, None, {"h": items}),
              "reversed": VariantScore({}, None, {"h": {k: 1.0 for k in items}})}
    cell = items_by_variants_interval(scores, ["default", "reversed"])["per_name"]["h"]
    assert cell["estimate"] == 0.5 and cell["interval"] == [0.0, 1.0]
    assert cell["n_items"] == 10 and cell["n_variants"] == 2
    one = items_by_variants_interval({"default": scores["default"]}, ["default"])["per_name"]["h"]
    assert one["interval"] == [None, None] and "variant" in one["no_spread"]


# ------------------------------------------------------------------------------------------------------- logprobs


def test_logprobs_scoring_reads_every_variant(bundled_release, tmp_path):
    """--scoring logprobs with --variants reversed: every request (both orders) gets its option distribution, and
    option_probability/metrics.json has the variants block, each variant's accuracy by the most probable option
    computed here from the script's logprobs (the mass on No for prompts of even hash, else on Yes)."""
    import zlib

    release = bundled_release("normad")
    out = tmp_path / "run"

    def logprobs(text, body, reply):
        return ([{"Yes": math.log(0.4), "No": math.log(0.6)}] if zlib.crc32(text.encode()) % 2 == 0
                else [{"Yes": math.log(0.9), "No": math.log(0.1)}])

    with ScriptedServer(reply="Yes", logprobs=logprobs, model="scripted") as server:
        evaluate("normad", server, release, out, "--limit", "6", "--variants", "reversed", "--scoring", "logprobs")
        assert all(b["logprobs"] is True for b in server.bodies)
    gold = {str(r["id"]): r["gold_label"].lower() for r in table(release, "stories").iter_rows(named=True)}
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in records} == {"default", "reversed"}
    block = json.loads((out / "option_probability" / "metrics.json").read_text())["variants"]
    for variant in ("default", "reversed"):
        for context in {r["context"] for r in records}:
            mine = [r for r in records if r["variant"] == variant and r["context"] == context]
            predicted = ["no" if zlib.crc32(r["prompt"].encode()) % 2 == 0 else "yes" for r in mine]
            assert block["headlines"][variant][f"accuracy_{context}"] == pytest.approx(
                statistics.fmean(gold[r["story_id"]] == p for r, p in zip(mine, predicted)))
    text_block = json.loads((out / "metrics.json").read_text())["variants"]
    assert text_block["consistency"] == 1.0  # by text every answer is Yes


# -------------------------------------------------------------------------------------------------------- compare


def test_compare_says_whether_a_model_difference_exceeds_the_variant_spread(bundled_release, tmp_path):
    """Two normad runs with --variants reversed,shuffled: a first-option model and one that always says No (no
    spread). Per headline the compare table's difference is the default values' and it exceeds the spread when
    larger than both runs' max - min across variants, as computed here from the runs' own records."""
    import csv

    release = bundled_release("normad")
    runs = {}
    for model, answer in (("first", lambda text: next(w for w, label in NORMAD_WORDS.items()
                                                      if label == normad_listed(text)[0])),
                          ("always-no", lambda text: "No")):
        with ScriptedServer(reply=tagged(answer), model=model) as server:
            out = tmp_path / model
            result = CliRunner().invoke(app, ["evaluate", "normad", "--model", model, "--base-url", server.base_url,
                                              "--release", str(release), "--out", str(out), "--variants",
                                              "reversed,shuffled"], env={"OPENAI_API_KEY": "test-key"})
            assert result.exit_code == 0, result.output
            runs[model] = run_records(server, out)
    gold = {str(r["id"]): r["gold_label"].lower() for r in table(release, "stories").iter_rows(named=True)}

    def accuracy(records, variant, context):
        mine = [r for r in records if r["variant"] == variant and r["context"] == context]
        return statistics.fmean(gold[r["story_id"]] == NORMAD_WORDS[r["response"].rsplit(" #", 1)[0]] for r in mine)

    result = CliRunner().invoke(app, ["compare", str(tmp_path / "first"), str(tmp_path / "always-no"), "--out",
                                      str(tmp_path / "report"), "--n-resamples", "200"])
    assert result.exit_code == 0, result.output
    rows = {r["headline"]: r for r in csv.DictReader((tmp_path / "report" / "variant_spread.csv").open())}
    contexts = {r["context"] for r in runs["first"]}
    assert {f"accuracy_{c}" for c in contexts} <= set(rows)
    verdicts = []
    for context in contexts:
        row = rows[f"accuracy_{context}"]
        first = [accuracy(runs["first"], v, context) for v in VARIANTS]
        no = [accuracy(runs["always-no"], v, context) for v in VARIANTS]
        assert float(row["difference"]) == pytest.approx(first[0] - no[0])
        assert float(row["spread_a"]) == pytest.approx(max(first) - min(first)) and float(row["spread_b"]) == 0
        verdicts.append(abs(first[0] - no[0]) > max(first) - min(first))
        assert row["exceeds_variant_spread"] == str(verdicts[-1]).lower()
    n = len(rows)
    assert "model differences exceed the prompt variants' spread" in result.output
    assert re.search(rf"normad: \d+ of {n} model differences exceed", result.output)


def test_normad_letters_relabel_the_options_only(bundled_release, tmp_path):
    """--variants letters: the numbered options 1) 2) 3) become A) B) C), nothing else of the request changes, and
    a model answering the first listed option's word answers the same under both (consistency 1, no spread)."""
    release = bundled_release("normad")
    out = tmp_path / "run"
    first = lambda text: re.search(r"(?<=\s)[1A]\) (Yes|No|Neither)\b", text.rpartition("Options:")[2])[1]  # noqa
    with ScriptedServer(reply=tagged(first), model="scripted") as server:
        evaluate("normad", server, release, out, "--variants", "letters")
        records = run_records(server, out)
    default = {(r["story_id"], r["context"], r["sample_index"]): r for r in records if r["variant"] == "default"}
    lettered = [r for r in records if r["variant"] == "letters"]
    assert lettered and len(lettered) == len(default)
    for r in lettered:
        base = default[(r["story_id"], r["context"], r["sample_index"])]
        same_but_the_user_message(r["body"], base["body"])
        head, mark, options = r["text"].rpartition("Options:")
        assert re.findall(r"(?<=\s)([ABC])\) ", options) == ["A", "B", "C"]
        assert head + mark + options.replace("A) ", "1) ").replace("B) ", "2) ").replace("C) ", "3) ") == base["text"]
    block = json.loads((out / "metrics.json").read_text())["variants"]
    assert block["consistency"] == 1.0 and block["position_share"] == {"default": {"1": 1.0}, "letters": {"1": 1.0}}
    spread_is_zero(block)


# ------------------------------------------------------------------------------------------------------------ docs


DOCS_REPLY = {"cdeval": "A", "normad": "Yes", "llm_globe": "4",
              "wvb": json.dumps({"thoughtful explanation": "x", "answer as a score": "1"})}
"""A reply each benchmark's parser reads, for running the page's commands against the scripted server."""


@pytest.mark.slow
def test_the_robustness_pages_commands_run_as_written(bundled_release, tmp_path):
    """Every command of docs/robustness.md's Running block, its placeholders filled (M, U, RELEASE, RUN_DIR; the
    compare's RUN_A and RUN_B two models' runs of the normad command), exits 0. Slow: five evaluate runs and a
    compare with its bootstrap (~40 s on a quiet machine)."""
    import shlex

    page = (Path(__file__).resolve().parents[1] / "docs" / "robustness.md").read_text(encoding="utf-8")
    block = page.split("## Running", 1)[1].split("```", 2)[1]
    commands = [shlex.split(line) for line in block.splitlines() if line.startswith("culturebench ")]
    assert [c[1] for c in commands] == ["evaluate"] * 4 + ["compare"]
    runs = []
    for command in commands[:4]:
        name = command[2]
        for model in ("model-a", "model-b") if name == "normad" else ("model-a",):
            out = tmp_path / f"{name}-{model}"
            with ScriptedServer(reply=DOCS_REPLY[name], model=model) as server:
                filled = {"M": model, "U": server.base_url, "RELEASE": str(bundled_release(name)), "RUN_DIR": str(out)}
                result = CliRunner().invoke(app, [filled.get(w, w) for w in command[1:]],
                                            env={"OPENAI_API_KEY": "test-key"})
            assert result.exit_code == 0, (command, result.output)
            assert json.loads((out / "metrics.json").read_text())["variants"]["variants"][0] == "default"
            if name == "normad":
                runs.append(out)
    filled = {"RUN_A": str(runs[0]), "RUN_B": str(runs[1]), "REPORT_DIR": str(tmp_path / "report")}
    result = CliRunner().invoke(app, [filled.get(w, w) for w in commands[4][1:]])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "report" / "variant_spread.csv").is_file()


def test_a_rerun_with_variants_resumes_from_the_cache(bundled_release, tmp_path):
    """The variants' requests are cached as any: the same command again asks the server nothing and reports the
    same variants block."""
    release = bundled_release("normad")
    out = tmp_path / "run"
    with ScriptedServer(reply="No", model="scripted") as server:
        evaluate("normad", server, release, out, "--variants", "reversed,shuffled", "--limit", "4")
        first, asked = json.loads((out / "metrics.json").read_text())["variants"], server.request_count
        assert asked > 0
        evaluate("normad", server, release, out, "--variants", "reversed,shuffled", "--limit", "4")
        assert server.request_count == asked
    assert json.loads((out / "metrics.json").read_text())["variants"] == first


def test_the_position_bias_figure_draws_every_share_readably(saved_figures, tmp_path):
    """position_bias.png of three variants over three positions: a bar per share, a value label on each, beside
    position_bias.json holding the same shares."""
    from conftest import assert_figure_readable
    from culturebench.evaluate.reports.variant_report import write_position_bias

    shares = {"default": {"1": 0.8, "2": 0.1, "3": 0.1}, "reversed": {"1": 0.7, "3": 0.3},
              "shuffled": {"2": 1.0}}
    written = write_position_bias({"variants": list(shares), "position_share": shares}, tmp_path)
    assert [p.name for p in written] == ["position_bias.json", "position_bias.png"]
    assert json.loads((tmp_path / "position_bias.json").read_text())["position_share"] == shares
    (name, fig), = saved_figures
    assert_figure_readable(fig, name)
    heights = sorted(round(bar.get_height(), 6) for bar in fig.axes[0].patches)
    assert heights == sorted([0.8, 0.1, 0.1, 0.7, 0.0, 0.3, 0.0, 1.0, 0.0])
    assert write_position_bias(None, tmp_path / "none") == []
