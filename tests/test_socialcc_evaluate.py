"""``culturebench evaluate socialcc`` / ``score socialcc`` (Wu et al., SocialCC, Sec. 3.3, App. C): the dialogue loop
(antagonist's "Hello", ends on "GOOD BYE" or after 20 rounds), the judges' "Score: n" parsing, Table 2 / per country /
zone / topic aggregation on hand-made judgements, and end to end against the scripted OpenAI-compatible server
(whose reply plays antagonist, protagonist and judge by the system prompt) on a small release built here: resume
mid-dialogue after a server that fails after N requests, rescoring and re-judging, CLI errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import write_release
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate import socialcc
from culturebench.evaluate import socialcc_prompts as prompts
from culturebench.evaluate.backends import BackendError, ChatResponse, OpenAIBackend
from culturebench.evaluate.cache import ResponseCache
from culturebench.evaluate.scripted_server import ScriptedServer

# ------------------------------------------------------------------------------------------------ a small release

COUNTRIES = (("Japan", "Japanese", "Confucian"), ("Kenya", "Kenyan", "African-Islamic"),
             ("Sweden", "Swedish", "Protestant Europe"))
TOPICS = ("gift giving", "dining")


def small_scenarios() -> pl.DataFrame:
    rows = []
    for c, (country, nationality, _) in enumerate(COUNTRIES):
        for t, topic in enumerate(TOPICS):
            n = 2 * c + t
            rows.append({
                "id": f"s{n}", "scenario": f"Scenario {n}: a visitor meets a local in {country}.",
                "events": [f"event {n}.1", f"event {n}.2"],
                "characters": [
                    {"name": f"Visitor{n}", "age": 30, "gender": "female", "nationality": "Brazilian",
                     "occupation": "engineer", "goal": f"visitor goal {n}"},
                    {"name": f"Local{n}", "age": 50, "gender": "male", "nationality": nationality,
                     "occupation": "teacher", "goal": f"local goal {n}"}],
                "country": country, "commonsense_item": f"commonsense item {n}", "commonsense_topic": topic,
                "value_item": "" if n == 0 else f"People from {country} strongly agree that value {n}.",
                "value_question_id": "Q1"})
    return pl.DataFrame(rows)


def small_preferences() -> pl.DataFrame:
    return pl.DataFrame([{"country": country, "question_id": "Q1", "direction": "agree", "share": 0.7, "n": 100,
                          "weighted": True, "statement": f"People in {country} value family (Q1)."}
                         for country, _, _ in COUNTRIES])



@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_release(tmp_path_factory.mktemp("socialcc") / "socialcc",
                         {"scenarios": small_scenarios(), "value_preferences": small_preferences()}, "socialcc")


def zones_csv(folder: Path) -> Path:
    path = folder / "zones.csv"
    path.write_text("Country,Cultural_Region\n" + "".join(f"{c},{z}\n" for c, _, z in COUNTRIES), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------------ scripted agents

JUDGE_SCORES = {"cultural awareness": "1", "cultural commonsense knowledge": "1", "cultural value knowledge": "0",
                "cultural behaviour": "2"}


def scripted_reply(text: str, body: dict) -> str:
    """Antagonist / protagonist / judge by the system prompt. Scenario sN's antagonist says GOOD BYE in round N+1
    (s0 in round 1 ...); judges answer fixed scores, except the behaviour judge of Kenya, which is invalid."""
    system = body["messages"][0]["content"]
    if system == prompts.JUDGE_SYSTEM:
        criterion = re.search(r"Criterion: ([a-z ]+)\.", text).group(1)
        if criterion == "cultural behaviour" and "Country: Kenya" in text:
            return "I cannot decide."
        return f"The protagonist did fine.\n**Score:** {JUDGE_SCORES[criterion]}"
    n = int(re.search(r"Scenario (\d+):", system).group(1))
    own = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if "Cultural knowledge you hold" in system:
        # own counts the fixed "Hello" too: round r's antagonist turn has own == r
        return f"Local line {own}." + (" GOOD BYE" if own == n + 1 else "")
    return f"Visitor line {own + 1}."


def n_requests_for(n_scenarios: int = 6) -> int:
    """Scenario sN runs N+1 rounds: 2 (N+1) agent turns, + 4 judges."""
    return sum(2 * (n + 1) + 4 for n in range(n_scenarios))


# ------------------------------------------------------------------------------------------------ unit tests


@pytest.mark.parametrize("text, judge, score, status", [
    ("Reason.\nScore: 1", "awareness", 1, "parsed"),
    ("**Score:** 3", "behaviour", 3, "parsed"),
    ("score = 2/3", "behaviour", 2, "parsed"),
    ("First Score: 0 ... on reflection, Score: 1", "value", 1, "parsed"),
    ("2", "behaviour", 2, "parsed"),
    ("Score: 4", "behaviour", None, "out_of_range"),
    ("Score: 2", "commonsense", None, "out_of_range"),
    ("Score: 1.5", "behaviour", None, "out_of_range"),
    ("", "awareness", None, "empty"),
    (None, "awareness", None, "empty"),
    ("The protagonist was polite.", "awareness", None, "unparsed"),
])
def test_parse_score(text, judge, score, status):
    assert prompts.parse_score(text, judge) == prompts.Judgement(score, status)


def test_good_bye_marker():
    assert prompts.ends_dialogue("Thanks, GOOD BYE!")
    assert prompts.ends_dialogue("GOOD  BYE")
    assert not prompts.ends_dialogue("Goodbye for now")
    assert not prompts.ends_dialogue("")


def test_characters_and_prompts_know_what_they_should(release):
    tables = socialcc.release_tables(release)
    scenario = socialcc.scenarios_from(tables, socialcc.Config())[0]
    f = scenario.fields
    assert f["protagonist_name"] == "Visitor0" and f["antagonist_name"] == "Local0"
    assert f["value"] == "People in Japan value family (Q1)."  # empty value_item: the country's preference
    antagonist = prompts.antagonist_system(f)
    protagonist = prompts.protagonist_system(f)
    assert "commonsense item 0" in antagonist and "People in Japan value family" in antagonist
    assert "event 0.2" in antagonist
    assert "commonsense item 0" not in protagonist and "value family" not in protagonist
    assert "visitor goal 0" in protagonist and "GOOD BYE" in protagonist and "GOOD BYE" in antagonist
    messages = prompts.agent_messages(protagonist, [("antagonist", "Hello"), ("protagonist", "Hi")], "protagonist")
    assert [r for r, _ in messages] == ["system", "user", "assistant"]
    messages = prompts.agent_messages(antagonist, [("antagonist", "Hello"), ("protagonist", "Hi")], "antagonist")
    assert [r for r, _ in messages] == ["system", "user", "assistant", "user"]
    assert socialcc.scenarios_from(tables, socialcc.Config())[1].fields["value"] == (
        "People from Japan strongly agree that value 1.")
    # the protagonist is neither of the scenario's country nor of the value item's; the antagonist plays the rest
    mira, layla, erik = ({"name": "Mira", "nationality": "Veloria"}, {"name": "Layla", "nationality": "Jordan"},
                         {"name": "Erik", "nationality": "Sweden"})
    p, others = socialcc.pick_characters([mira, layla, erik], "Veloria", "Jordan")
    assert p is erik and others == [mira, layla]
    p, others = socialcc.pick_characters([mira, layla], "Veloria", "Jordan")
    assert p is layla and others == [mira]
    p, others = socialcc.pick_characters([mira], "Veloria", None)
    assert p is mira and others == []
    fields = prompts.scenario_fields({"scenario": "s"}, erik, [mira, layla], "v")
    assert fields["antagonist_name"] == "Mira and Layla" and fields["protagonist_name"] == "Erik"


class FakeBackend:
    """A backend in-process: ``reply(role, messages) -> text``; counts calls."""

    name = "fake"

    def __init__(self, model: str, reply) -> None:
        self.model, self.reply, self.calls = model, reply, 0

    def cache_params(self) -> dict:
        return {"backend": "fake", "model": self.model}

    def generate(self, requests, on_response) -> None:
        for i, request in enumerate(requests):
            self.calls += 1
            on_response(i, ChatResponse(self.reply(request.messages)))


def test_dialogue_loop_ends_on_good_bye_and_at_20_rounds(release, tmp_path):
    scenarios = socialcc.scenarios_from(socialcc.release_tables(release), socialcc.Config())[:3]

    def protagonist(messages):
        system = messages[0][1]
        own = sum(1 for r, _ in messages if r == "assistant")
        return "Ok, GOOD BYE" if "Scenario 1:" in system and own == 2 else f"p{own}"

    def antagonist(messages):
        system = messages[0][1]
        assert messages[1] == ("user", prompts.ANTAGONIST_START) and messages[2] == ("assistant", "Hello")
        own = sum(1 for r, _ in messages if r == "assistant")
        return "Bye now. GOOD BYE" if "Scenario 0:" in system and own == 1 else f"a{own}"

    pb, ab = FakeBackend("p", protagonist), FakeBackend("a", antagonist)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        dialogues, _ = socialcc.simulate(scenarios, pb, ab, cache)
    d0, d1, d2 = dialogues
    assert d0.turns[0] == {"speaker": "Local0", "role": "antagonist", "text": "Hello", "round": 0,
                           "generated": False}
    assert [t["role"] for t in d0.turns] == ["antagonist", "protagonist", "antagonist"]
    assert d0.ended_by == "good_bye" and d0.rounds == 1
    # the protagonist's GOOD BYE in round 3 ends it at once: no antagonist reply
    assert d1.ended_by == "good_bye" and d1.rounds == 3 and d1.turns[-1]["role"] == "protagonist"
    assert len(d1.turns) == 1 + 2 + 2 + 1
    # never says GOOD BYE: 20 rounds = 20 protagonist + 20 antagonist turns after "Hello"
    assert d2.ended_by == "max_rounds" and d2.rounds == prompts.MAX_ROUNDS == 20
    assert len(d2.turns) == 1 + 2 * 20 and d2.turns[-1]["round"] == 20
    assert pb.calls == 1 + 3 + 20 and ab.calls == 1 + 2 + 20
    # every turn is cached: replaying asks nothing
    pb2, ab2 = FakeBackend("p", protagonist), FakeBackend("a", antagonist)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        again, _ = socialcc.simulate(scenarios, pb2, ab2, cache)
    assert pb2.calls == ab2.calls == 0
    assert [d.turns for d in again] == [d.turns for d in dialogues]
    # a smaller cap from the config
    with ResponseCache(tmp_path / "cache2.sqlite") as cache:
        short, _ = socialcc.simulate(scenarios[2:], FakeBackend("p", protagonist), FakeBackend("a", antagonist),
                                     cache, max_rounds=2)
    assert short[0].ended_by == "max_rounds" and short[0].rounds == 2 and len(short[0].turns) == 5


def record(country, zone, topic, scores, statuses=None, model="m", rounds=3, ended="good_bye"):
    judgements = {}
    for judge, s in zip(prompts.JUDGES, scores):
        judgements[judge] = {"score": s, "status": "parsed" if s is not None else "unparsed", "raw": ""}
    return {"model": model, "country": country, "zone": zone, "topic": topic, "judgements": judgements,
            "n_rounds": rounds, "ended_by": ended}


def test_aggregation_by_hand():
    records = [record("A", "Z1", "t1", (1, 1, 0, 3)),
               record("A", "Z1", "t2", (0, 1, 1, 2)),
               record("B", "Z2", "t1", (1, 0, 0, None), rounds=20, ended="max_rounds"),
               record("B", "Z2", "t1", (1, None, 1, 0))]
    m = socialcc.aggregate(records)["per_model"]["m"]
    t = m["table2"]
    assert t["n"] == 4
    assert t["awareness"] == pytest.approx(3 / 4)
    assert t["commonsense"] == pytest.approx(2 / 3) and t["n_invalid_commonsense"] == 1
    assert t["value"] == pytest.approx(2 / 4)
    assert t["behaviour"] == pytest.approx((3 + 2 + 0) / 3) and t["n_invalid_behaviour"] == 1
    assert t["behaviour_distribution_pct"] == pytest.approx({"0": 100 / 3, "1": 0.0, "2": 100 / 3, "3": 100 / 3})
    assert m["by_country"]["A"]["behaviour"] == pytest.approx(2.5)
    assert m["by_country"]["B"]["behaviour"] == 0.0 and m["by_country"]["B"]["commonsense"] == 0.0
    assert m["by_zone"]["Z2"]["awareness"] == 1.0
    assert m["by_topic"]["t1"]["value"] == pytest.approx(1 / 3)
    assert m["by_topic"]["t2"]["n"] == 1
    assert m["by_zone_topic"]["Z1 | t1"]["behaviour"] == 3.0
    assert m["dialogue"] == {"mean_rounds": pytest.approx(29 / 4), "max_rounds": 20, "share_good_bye": 0.75}
    assert m["judge_status"]["behaviour"]["unparsed"] == 1
    with pytest.raises(InputError):
        socialcc.aggregate([])


# ------------------------------------------------------------------------------------------------ end to end


def test_end_to_end_cli_rescore_and_rejudge(release, tmp_path):
    out = tmp_path / "run"
    config = tmp_path / "socialcc.json"
    config.write_text(json.dumps({"zones": str(zones_csv(tmp_path))}), encoding="utf-8")
    with ScriptedServer(reply=scripted_reply) as server:
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "scripted-model", "--base-url",
                                          server.base_url, "--release", str(release), "--out", str(out),
                                          "--config", str(config)])
        assert result.exit_code == 0, result.output
        assert server.request_count == n_requests_for()
        agent_bodies = [b for b in server.bodies if b["messages"][0]["content"] != prompts.JUDGE_SYSTEM]
        judge_bodies = [b for b in server.bodies if b["messages"][0]["content"] == prompts.JUDGE_SYSTEM]
        assert {b["temperature"] for b in agent_bodies} == {1.0}
        assert {b["temperature"] for b in judge_bodies} == {0.0}
    assert "evaluated model (no judge configured)" in result.output
    for name in ("transcripts.jsonl", "metrics.json", "run.json", "cache.sqlite", "by_country.png",
                 "by_zone_topic.png", "behaviour_distribution.png"):
        assert (out / name).is_file(), name
    transcripts = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    assert [t["scenario_id"] for t in transcripts] == [f"s{n}" for n in range(6)]
    for n, t in enumerate(transcripts):
        assert t["n_rounds"] == n + 1 and t["ended_by"] == "good_bye"
        assert t["turns"][0]["text"] == "Hello" and "GOOD BYE" in t["turns"][-1]["text"]
        assert t["zone"] == COUNTRIES[n // 2][2]
    metrics = json.loads((out / "metrics.json").read_text())
    m = metrics["per_model"]["scripted-model"]
    assert m["table2"]["awareness"] == 1.0 and m["table2"]["value"] == 0.0
    assert m["table2"]["behaviour"] == 2.0 and m["table2"]["n_invalid_behaviour"] == 2  # Kenya's two
    assert m["judge_status"]["behaviour"]["unparsed"] == 2
    assert m["by_country"]["Kenya"]["behaviour"] is None
    assert set(m["by_zone"]) == {z for _, _, z in COUNTRIES} and set(m["by_topic"]) == set(TOPICS)
    assert metrics["judge_note"] == socialcc.SELF_JUDGED
    run = json.loads((out / "run.json").read_text())
    assert run["runner"]["n_requests"] == n_requests_for() and run["evaluation"]["judge_note"] == socialcc.SELF_JUDGED

    # rescoring from the saved transcripts gives the same numbers without a model
    rescored = tmp_path / "rescored"
    result = CliRunner().invoke(app, ["score", "socialcc", "--responses", str(out / "transcripts.jsonl"),
                                      "--release", str(release), "--out", str(rescored)])
    assert result.exit_code == 0, result.output
    again = json.loads((rescored / "metrics.json").read_text())
    assert again["per_model"] == metrics["per_model"]

    # re-judging with another judge from the config
    judge_config = tmp_path / "judge.yaml"
    with ScriptedServer(reply=lambda text, body: "Score: 0") as judge:
        judge_config.write_text(f"judge:\n  model: other-judge\n  base_url: {judge.base_url}\n", encoding="utf-8")
        result = CliRunner().invoke(app, ["score", "socialcc", "--responses", str(out / "transcripts.jsonl"),
                                          "--release", str(release), "--out", str(tmp_path / "rejudged"),
                                          "--config", str(judge_config)])
        assert result.exit_code == 0, result.output
        assert judge.request_count == 6 * 4
    rejudged = json.loads((tmp_path / "rejudged" / "metrics.json").read_text())["per_model"]["scripted-model"]
    assert rejudged["table2"]["behaviour"] == 0.0 and rejudged["judge_models"] == ["other-judge"]


def test_killed_run_resumes_mid_dialogue(release, tmp_path):
    out = tmp_path / "run"
    failing_after = 9  # inside the dialogues: steps of 6, 5, ... turns

    def faults(number, body):
        return 500 if number > failing_after else None

    with ScriptedServer(reply=scripted_reply, faults=faults) as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=1, max_retries=0)
        with pytest.raises(BackendError):
            socialcc.evaluate(backend, release, out)
        first = [b["messages"] for b in server.bodies[:failing_after]]
    assert not (out / "transcripts.jsonl").exists()
    with ResponseCache(out / "cache.sqlite") as cache:
        assert len(cache) == failing_after
    with ScriptedServer(reply=scripted_reply) as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=1, max_retries=0)
        result = socialcc.evaluate(backend, release, out)
        second = [b["messages"] for b in server.bodies]
    assert len(second) == n_requests_for() - failing_after
    assert not [m for m in second if m in first]  # no earlier turn re-asked
    # and the dialogues were continued, not restarted: the second run's first request is a second-step turn
    assert sum(1 for m in second[0] if m["role"] in ("user", "assistant")) > 2
    assert result.stats["n_cached"] == failing_after
    # a complete re-run asks nothing
    with ScriptedServer(reply=scripted_reply) as server:
        socialcc.evaluate(OpenAIBackend("scripted-model", base_url=server.base_url), release, out)
        assert server.request_count == 0


def test_separate_antagonist_and_judge_backends(release, tmp_path):
    with ScriptedServer(reply=scripted_reply) as server:
        p = OpenAIBackend("protagonist-model", base_url=server.base_url)
        a = OpenAIBackend("antagonist-model", base_url=server.base_url)
        j = OpenAIBackend("judge-model", base_url=server.base_url)
        result = socialcc.evaluate(p, release, tmp_path / "run", limit=2, antagonist_backend=a, judge_backend=j)
        models = {(b["model"], "judge" if b["messages"][0]["content"] == prompts.JUDGE_SYSTEM else
                   "antagonist" if "Cultural knowledge you hold" in b["messages"][0]["content"] else "protagonist")
                  for b in server.bodies}
    assert models == {("protagonist-model", "protagonist"), ("antagonist-model", "antagonist"),
                      ("judge-model", "judge")}
    assert len(result.transcripts) == 2 and result.metrics["judge_note"] is None
    assert result.metrics["per_model"]["protagonist-model"]["antagonist_models"] == ["antagonist-model"]


def test_cli_errors_are_one_line_exit_2(release, tmp_path):
    runner = CliRunner()

    def evaluate(*extra):
        return runner.invoke(app, ["evaluate", "socialcc", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                   "--out", str(tmp_path / "x"), *extra])

    bad_config = tmp_path / "bad.json"
    bad_config.write_text(json.dumps({"judges": "x"}), encoding="utf-8")
    bad_rounds = tmp_path / "rounds.json"
    bad_rounds.write_text(json.dumps({"max_rounds": 0}), encoding="utf-8")
    other = write_release(tmp_path / "normad", {"stories": pl.DataFrame({"id": [1]})}, benchmark="normad")
    cases = [
        (evaluate("--release", str(release), "--limit", "0"), "--limit must be at least 1"),
        (evaluate("--release", str(release), "--samples", "3"), "--samples must be 1"),
        (evaluate("--release", str(release), "--config", str(bad_config)), "unknown config key 'judges'"),
        (evaluate("--release", str(release), "--config", str(bad_rounds)), "max_rounds must be"),
        (evaluate("--release", str(release), "--config", str(tmp_path / "none.json")), "config file not found"),
        (evaluate("--release", str(other)), "not a SocialCC release"),
        (evaluate("--release", str(tmp_path / "missing")), "no manifest.json"),
        (evaluate("--release", str(release), "--split", "train"), "no split 'train'"),
        (runner.invoke(app, ["score", "socialcc", "--responses", str(tmp_path / "none.jsonl"), "--release",
                             str(release), "--out", str(tmp_path / "y")]), "transcripts file not found"),
    ]
    for result, message in cases:
        assert result.exit_code == 2, result.output
        assert message in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "x").exists()
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"scenario_id": "s0"}\n', encoding="utf-8")
    result = runner.invoke(app, ["score", "socialcc", "--responses", str(broken), "--release", str(release),
                                 "--out", str(tmp_path / "y")])
    assert result.exit_code == 2 and "lacks field 'model'" in result.output


# ------------------------------------------------------------------------------------------------ the builder's sample


@pytest.fixture(scope="module")
def sample_release(bundled_release) -> Path:
    """The bundled sample raw/ built by the SocialCC builder; a failing build fails the test (conftest)."""
    return bundled_release("socialcc")


def generic_reply(text: str, body: dict) -> str:
    system = body["messages"][0]["content"]
    if system == prompts.JUDGE_SYSTEM:
        return "Fine.\nScore: 1"
    own = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return f"Line {own}." + (" GOOD BYE" if own >= 3 else "")


def test_end_to_end_on_the_builders_sample_release(sample_release, tmp_path):
    zones = Path(__file__).resolve().parents[1] / "raw" / "inglehart_welzel" / "SAMPLE_country_iw_zones.csv"
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"zones": str(zones)} if zones.is_file() else {}), encoding="utf-8")
    out = tmp_path / "run"
    with ScriptedServer(reply=generic_reply) as server:
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "scripted-model", "--base-url",
                                          server.base_url, "--release", str(sample_release), "--out", str(out),
                                          "--config", str(config)])
    assert result.exit_code == 0, result.output
    transcripts = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    n = socialcc.release_tables(sample_release)["scenarios"].height
    assert len(transcripts) == n > 0
    for t in transcripts:
        assert t["ended_by"] == "good_bye" and t["n_rounds"] == 3  # the antagonist says it in round 3
        assert t["fields"]["value"] and t["fields"]["protagonist_name"] not in t["fields"]["antagonist_name"]
    m = json.loads((out / "metrics.json").read_text())["per_model"]["scripted-model"]
    assert m["table2"]["awareness"] == 1.0 and m["table2"]["behaviour_distribution_pct"]["1"] == 100.0
    if zones.is_file():
        assert UNKNOWN_ZONE not in m["by_zone"]


UNKNOWN_ZONE = socialcc.UNKNOWN
