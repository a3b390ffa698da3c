"""SocialCC evaluation: Character 2 is the evaluated protagonist (Tables 6A/7A, 12A-16A), the judges' prompts are
Tables 8A-11A as printed, the judge is always a named model, dialogues end on GOOD BYE or after 20 rounds, a run
killed mid-dialogue resumes with the same command, bad options are one line, Fig. 6's zones come from the release's
iw_zone (then the config), and the metrics (Table 2, Figs. 5-7) are computed as worked out by hand below."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from conftest import REFERENCE, reference, write_release
from typer.testing import CliRunner

from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate import socialcc
from culturebench.evaluate.runs import engine
from culturebench.evaluate.socialcc import BENCHMARK, SocialCCOptions, prompts
from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.chat import ChatResponse
from culturebench.evaluate.runs.cache import ResponseCache
from scripted_server import ScriptedServer

PAPER = Path("/work/shared/papers/socialcc.txt")
REPO_RAW = Path(__file__).resolve().parents[1] / "raw"

# ------------------------------------------------------------------------------------------------ a small release
# Shaped like Table 13A (three characters, events, commonsense item) and Table 14A as released (two characters, no
# events, no commonsense item); the text is ours.


def character(name, age, nationality, goals, profile=None):
    return {"name": name, "age": age, "gender": "male", "nationality": nationality, "country": nationality,
            "occupation": "student", "profile": profile or f"{name}: A {age}-year-old male student from {nationality}.",
            "goals": goals, "task": None}


def small_scenarios() -> pl.DataFrame:
    base = {"layout": "culturebench", "commonsense_country": "Japan", "commonsense_topic": "Etiquette",
            "value_question_id": "Q27", "value_table_4a_id": 27, "value_topic": "Social Values",
            "value_side": "printed", "value_share": 0.9}
    rows = [
        {**base, "id": "s0", "source_id": "13a-like", "scenario": "Scenario 0: Emily got into college.",
         "events": ["Event 0.1: choose a gift.", "Event 0.2: talk about parents."],
         "characters": [character("Mike", 17, "China", ["Suggest white lilies.", "Question pride in parents."]),
                        character("Kim", 17, "Japan", ["Decide the gift."]),
                        character("Emily", 17, "Japan", [])],
         "commonsense_item": "Avoid giving white flowers in Japan.",
         "value_item": "People from Japan strongly agree that one of my main goals in life has been to make my "
                       "parents proud.", "value_country": "Japan"},
        {**base, "id": "s1", "source_id": "14a-like", "layout": "released", "scenario": "Scenario 1: a celebration.",
         "events": None, "commonsense_country": None, "commonsense_topic": None, "commonsense_item": None,
         "characters": [character("Mike", 25, "China", ["Suggest a barbecue.", "Question the press."]),
                        character("Kim", 25, "Vietnam", ["Decide where to celebrate.", "Discuss the press."])],
         "value_item": "People from Vietnam have a great deal of confidence in the press.", "value_country": "Vietnam",
         "value_question_id": "Q66", "value_table_4a_id": 66, "value_topic": "Social capital",
         "value_side": "opposite", "value_share": None},
    ]
    return pl.DataFrame(rows, schema={**socialcc_schema()})


def socialcc_schema() -> dict:
    from culturebench.builders.socialcc import SCENARIO_SCHEMA

    return SCENARIO_SCHEMA


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_release(tmp_path_factory.mktemp("socialcc") / "socialcc", {"scenarios": small_scenarios()},
                         "socialcc")


def judge_config(folder: Path, base_url: str, model: str = "judge-model", **extra) -> Path:
    path = folder / "socialcc.json"
    path.write_text(json.dumps({"judge": {"model": model, "base_url": base_url}, **extra}), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------------ scripted agents

JUDGE_SCORES = {"awareness": "No cultural awareness: 0", "commonsense": "Strong Cultural Knowledge, Score: 1",
                "value": "Score: 1", "behaviour": "Score: 3"}


def which_judge(text: str) -> str | None:
    for judge in prompts.JUDGES:
        if text.startswith("\n".join(prompts.PROMPTS[judge].splitlines()[:2])):
            return judge
    return None


def judge_reply(text: str, body: dict) -> str:
    """The judge server also plays the antagonist (the config's default): Character 1 says GOOD BYE in round 2."""
    judge = which_judge(text) if len(body["messages"]) == 1 else None
    if judge:
        return JUDGE_SCORES[judge]
    own = sum(1 for m in body["messages"] if m["role"] == "assistant")  # counts the fixed "Hello"
    return f"Antagonist line {own}." + (" OK. GOOD BYE!" if own == 2 else "")


def protagonist_reply(text: str, body: dict) -> str:
    own = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return f"Protagonist line {own + 1}."


def both_replies(text: str, body: dict) -> str:
    """One server for both sides: the evaluated model's requests get the protagonist's lines, the rest the judge's."""
    return (protagonist_reply if body["model"] == "evaluated" else judge_reply)(text, body)


# ------------------------------------------------------------------------------------------------ unit tests


@pytest.mark.parametrize("text, judge, score, status", [
    ("Reason.\nScore: 1", "awareness", 1, "parsed"),
    ("**Score:** 3", "behaviour", 3, "parsed"),
    ("score = 2/3", "behaviour", 2, "parsed"),
    ("No cultural awareness: 0", "awareness", 0, "parsed"),  # Table 8A's own example answer
    ("Cultural Knowledge Level: Strong, Score: 1", "commonsense", 1, "parsed"),
    ("2", "behaviour", 2, "parsed"),
    ("Score: 4", "behaviour", None, "out_of_range"),
    ("Score: 2", "commonsense", None, "out_of_range"),
    ("", "awareness", None, "empty"),
    ("I cannot tell.", "value", None, "unparsed"),
    ("Cultural Knowledge Level: [Strong/ No], Score: [1/0]", "commonsense", None, "unparsed"),  # template echo
    ("Cultural Value Level: Score: [1/0]", "value", None, "unparsed"),
    ("Output Format: Score: [1/0]\nNo cultural awareness, Score: 0", "awareness", 0, "parsed"),
])
def test_parse_score(text, judge, score, status):
    assert prompts.parse_score(text, judge) == prompts.Judgement(score, status)


def _plain(text: str) -> str:
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\{[^}]*\}", " ", text).replace("**", " ")
    return " ".join(text.split())


@pytest.mark.skipif(not PAPER.is_file(), reason="paper text absent")
def test_prompts_are_the_printed_tables():
    """Every line of the six templates, placeholders removed, occurs in the paper's text (tags and spacing
    ignored): a reworded line fails."""
    paper = _plain(PAPER.read_text(encoding="utf-8"))
    for name, template in prompts.PROMPTS.items():
        for line in template.splitlines():
            plain = _plain(line)
            if plain:
                assert plain in paper, (name, line)
    # the checks, by hand from Tables 8A-11A
    assert "recognizes cultural differences without being prompted" in prompts.PROMPTS["awareness"]
    for judge in prompts.JUDGES:
        assert "{Cultural Commonsense}\n{Cultural Value}" in prompts.PROMPTS[judge]
    behaviour = prompts.PROMPTS["behaviour"]
    assert "(Score: 2): Agent 2 fully achieves the Social Goal, but their actions do not fully align" in behaviour
    assert "(Score: 1): Agent 2 does not fully achieve the Social Goal but acts in full alignment" in behaviour


def test_fill_drops_absent_fields_and_keeps_the_rest():
    row = small_scenarios().row(1, named=True)  # released: no events, no third character, no commonsense item
    fields = prompts.scenario_fields(row)
    text = prompts.protagonist_system(fields)
    assert text.startswith("Task\nAct like Kim in the scenario and interact with Mike to achieve your goal.")
    # Kim's (Character 2's) two goals stand in for the absent events; no third character line
    assert "Events\nDecide where to celebrate.\nDiscuss the press.\nCharacter\nMike: A 25-year-old" in text
    assert "from Vietnam.\nSocial Goal\nDecide where to celebrate.\nDiscuss the press.\nDialogue Rules" in text
    antagonist = prompts.antagonist_system(fields)
    # no commonsense item: the value alone under Cultural Knowledge
    value = "People from Vietnam have a great deal of confidence in the press."
    assert f"Cultural Knowledge\n{value}\nSocial Goal" in antagonist
    assert "Social Goal\nSuggest a barbecue.\nQuestion the press.\n" in antagonist
    assert "Interact with Kim to achieve each goal one by one." in antagonist
    assert fields["field_sources"] == {"Event 1": "stand-in: Character 2's Social Goal 1",
                                       "Event 2": "stand-in: Character 2's Social Goal 2",
                                       "Cultural Commonsense": "absent", "Cultural Value": "record",
                                       "Character 3 Portfolio": "absent"}
    # without stand-ins the event lines are left out, as before
    plain = prompts.protagonist_system(prompts.scenario_fields(row, event_stand_ins=False))
    assert "Events\nCharacter\nMike: A 25-year-old" in plain
    # a scenario with its own events keeps them
    full = prompts.scenario_fields(small_scenarios().row(0, named=True))
    assert (full["Event 1"], full["field_sources"]["Event 1"]) == ("Event 0.1: choose a gift.", "record")
    assert full["field_sources"]["Character 3 Portfolio"] == "record"


def test_good_bye_marker():
    assert prompts.ends_dialogue("OK. GOOD BYE!") and prompts.ends_dialogue("good  bye")
    assert not prompts.ends_dialogue("goodbye for now") and not prompts.ends_dialogue(None)


class FakeBackend:
    """A backend in-process: ``reply(messages) -> text``; counts calls."""

    name = "fake"

    def __init__(self, model: str, reply) -> None:
        self.model, self.reply, self.calls = model, reply, 0

    def cache_params(self) -> dict:
        return {"backend": "fake", "model": self.model}

    def generate(self, requests, on_response) -> None:
        for i, request in enumerate(requests):
            self.calls += 1
            on_response(i, ChatResponse(self.reply(request.messages)))


def test_dialogue_loop_ends_on_good_bye_and_at_20_rounds_with_one_overall_bar(release, tmp_path):
    scenarios = socialcc.scenarios_from(socialcc.release_tables(release), socialcc.Config())

    def protagonist(messages):
        return "Fine. GOOD BYE!" if "Scenario 0:" in messages[0][1] else "p"

    def antagonist(messages):
        # AutoGen's layout: the system prompt, then the antagonist's own "Hello", then the protagonist's turn
        assert messages[0][0] == "system" and messages[1:3] == (("assistant", "Hello"), ("user", "p"))
        return "a"

    pb, ab = FakeBackend("p", protagonist), FakeBackend("a", antagonist)
    with ResponseCache(tmp_path / "cache.sqlite") as cache, socialcc.OverallProgress(None, 2 * 40) as progress:
        dialogues, _ = socialcc.simulate(scenarios, pb, ab, cache, progress=progress)
        task = progress.bar.tasks[0]
        # s0 ends after 1 turn (39 possible turns dropped), s1 plays all 40: the bar's total is what was played
        assert task.total == task.completed == 1 + 40
    d0, d1 = dialogues
    assert d0.ended_by == "good_bye" and [t["role"] for t in d0.turns] == ["antagonist", "protagonist"]
    assert d0.turns[0]["speaker"] == "Mike" and d0.turns[1]["speaker"] == "Kim"  # Character 1, Character 2
    assert d1.ended_by == "max_rounds" and d1.rounds == 20 and len(d1.turns) == 1 + 40


def test_user_first_dialogue_setup_is_the_named_option(release, tmp_path):
    """``dialogue_setup: user_first`` (the earlier layout) puts our user turn before the antagonist's "Hello"; the
    protagonist's messages are the same in both setups."""
    scenarios = socialcc.scenarios_from(socialcc.release_tables(release), socialcc.Config())[:1]
    seen = {}

    def keep(role):
        def reply(messages):
            seen.setdefault(role, messages)
            return "OK. GOOD BYE!" if role == "antagonist" else "p"
        return reply

    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        socialcc.simulate(scenarios, FakeBackend("p", keep("protagonist")), FakeBackend("a", keep("antagonist")),
                          cache, setup="user_first")
    assert seen["antagonist"][1:4] == (("user", "[The conversation begins. Open it.]"), ("assistant", "Hello"),
                                       ("user", "p"))
    assert seen["protagonist"][1:] == (("user", "Hello"),)
    config = tmp_path / "setup.json"
    for key, value, message in (("dialogue_setup", "user-first",
                                 "unknown dialogue_setup 'user-first'; choose from autogen, user_first"),
                                ("fig5_country", "atlas",
                                 "unknown fig5_country 'atlas'; choose from commonsense, value"),
                                ("event_stand_ins", "no", "event_stand_ins must be true or false")):
        config.write_text(json.dumps({"judge": "j", key: value}), encoding="utf-8")
        with pytest.raises(InputError, match=message):
            SocialCCOptions.parse({}, config)
    config.write_text(json.dumps({"judge": "j", "dialogue_setup": "user_first", "fig5_country": "value",
                                  "event_stand_ins": False}), encoding="utf-8")
    loaded = socialcc.config_from(SocialCCOptions.parse({}, config))
    assert (loaded.dialogue_setup, loaded.fig5_country, loaded.event_stand_ins) == ("user_first", "value", False)

def record(country, zone, topic, value_topic, scores, model="m", commonsense_country=None):
    judgements = {j: {"score": s, "parse_status": "parsed" if s is not None else "unparsed", "raw": ""}
                  for j, s in zip(prompts.JUDGES, scores)}
    return {"model": model, "country": country, "zone": zone, "topic": topic, "value_topic": value_topic,
            "commonsense_country": commonsense_country, "judgements": judgements, "n_rounds": 3,
            "ended_by": "good_bye"}


def test_aggregation_by_hand():
    records = [record("Japan", "Confucian", "Etiquette", "Social Values", [1, 0, 1, 3]),
               record("Japan", "Confucian", "Etiquette", "Migration", [1, 1, 0, 2]),
               record("Egypt", "African-Islamic", "Dates of Significance", "Migration", [1, 0, 0, None]),
               record("Egypt", "African-Islamic", "Etiquette", "Social Values", [0, 0, 1, 1])]
    m = socialcc.aggregate(records)["per_model"]["m"]
    # by hand: awareness 3/4, commonsense 1/4, value 2/4, behaviour (3+2+1)/3 = 2
    assert m["table2"]["awareness"] == 0.75 and m["table2"]["commonsense"] == 0.25
    assert m["table2"]["value"] == 0.5 and m["table2"]["behaviour"] == 2.0
    assert m["table2"]["behaviour_distribution_pct"] == {"0": 0.0, "1": 100 / 3, "2": 100 / 3, "3": 100 / 3}
    assert m["parse_status"]["behaviour"] == {"parsed": 3, "out_of_range": 0, "empty": 0, "unparsed": 1}
    # Fig. 7: aware (1) without commonsense (0): records 1 and 3 of 4
    fig7 = m["aware_without_knowledge"]
    assert fig7["n"] == 2 and fig7["share"] == 0.5
    assert fig7["by_topic_pct"] == {"Dates of Significance": 50.0, "Etiquette": 50.0}
    assert fig7["by_value_topic_pct"] == {"Migration": 50.0, "Social Values": 50.0}
    # Fig. 6: value knowledge per value topic x group: Migration x African-Islamic = record 3 only -> 0
    assert m["by_value_topic_zone"]["Migration | African-Islamic"]["value"] == 0.0
    assert m["by_value_topic_zone"]["Social Values | Confucian"]["value"] == 1.0
    assert m["fig5_countries"] == []  # Fig. 5 groups by the commonsense item's country: these records have none
    assert socialcc.aggregate(records, fig5_grouping="value")["per_model"]["m"]["fig5_countries"] == [
        "Egypt", "Japan"]  # tie on 2 scenarios: by name


def test_fig5_groups_by_the_commonsense_country():
    """Fig. 5 (Sec. 5.1): awareness and commonsense knowledge per country of the commonsense item; a scenario
    without one is in no plotted country. By hand: Croatia 2 dialogues (awareness 1, 0), Brazil 1 (awareness 1)."""
    records = [record("Japan", "Confucian", "Etiquette", "Social Values", [1, 1, 1, 3], commonsense_country="Croatia"),
               record("Egypt", "African-Islamic", "Etiquette", "Migration", [0, 1, 0, 2],
                      commonsense_country="Croatia"),
               record("Japan", "Confucian", "Etiquette", "Migration", [1, 0, 0, 1], commonsense_country="Brazil"),
               record("Japan", "Confucian", "Etiquette", "Migration", [0, 0, 0, 0])]
    metrics = socialcc.aggregate(records)
    m = metrics["per_model"]["m"]
    assert m["fig5_countries"] == ["Croatia", "Brazil"]
    assert m["by_country"]["Croatia"]["awareness"] == 0.5 and m["by_country"]["Brazil"]["awareness"] == 1.0
    assert m["by_country"][socialcc.NO_COMMONSENSE_COUNTRY]["n"] == 1
    assert metrics["fig5"]["grouped_by"] == "commonsense" and "Croatia" in metrics["fig5"]["why"]
    assert socialcc.fig5_countries(metrics) == ["Croatia", "Brazil"]
    by_value = socialcc.aggregate(records, fig5_grouping="value")["per_model"]["m"]
    assert by_value["fig5_countries"] == ["Japan", "Egypt"] and by_value["by_country"]["Japan"]["awareness"] == 2 / 3


# ------------------------------------------------------------------------------------------------ the contract


def test_config_file_and_flags_make_one_set_of_options(tmp_path):
    """Every key a config file took before is an option of the same name (flags win over the file); the run's
    settings take the paper's values where none is given: 20 rounds (Table 6A rule 6), agents at temperature 1 and
    judges at 0 (Sec. 4.1)."""
    (tmp_path / "zones.csv").write_text("Country,Cultural_Region\nJordan,Catholic Europe\n", encoding="utf-8")
    config = tmp_path / "socialcc.yaml"
    config.write_text("judge: {model: j, base_url: 'http://127.0.0.1:9/v1'}\nantagonist: a\nstop: tolerant\n"
                      "max_rounds: 3\nagent_temperature: 0.5\nagent_max_tokens: 64\njudge_temperature: 0.2\n"
                      "judge_max_tokens: 99\nzones: zones.csv\ndialogue_setup: user_first\nevent_stand_ins: false\n"
                      "fig5_country: value\n", encoding="utf-8")
    options = SocialCCOptions.parse({"max_rounds": 4, "temperature": 0.7}, config)
    settings = socialcc.config_from(options)
    assert (settings.judge.model, settings.judge.base_url, settings.antagonist.model) == ("j", "http://127.0.0.1:9/v1",
                                                                                         "a")
    assert (settings.stop, settings.max_rounds, settings.agent_temperature, settings.agent_max_tokens) == (
        "tolerant", 4, 0.5, 64)
    assert (settings.judge_temperature, settings.judge_max_tokens, settings.zones) == (
        0.2, 99, {"Jordan": "Catholic Europe"})  # zones.csv read beside the config file
    assert (settings.dialogue_setup, settings.event_stand_ins, settings.fig5_country) == ("user_first", False, "value")
    assert options.temperature == 0.7 and settings.source == str(config)
    paper = socialcc.config_from(SocialCCOptions())
    assert (paper.judge, paper.max_rounds, paper.agent_temperature, paper.judge_temperature, paper.stop) == (
        None, 20, 1.0, 0.0, "paper")
    # score takes the judge (to judge again), its settings, the zones and Fig. 5's grouping
    from culturebench.options import option_fields

    assert {"judge", "judge_temperature", "judge_max_tokens", "zones", "fig5_country"} <= {
        f.name for f in option_fields(SocialCCOptions, "score", cli_only=False)}


@pytest.mark.parametrize("options, message", [
    ({"samples": 3}, "--samples must be 1, got 3"),
    ({"max_rounds": 0}, "max_rounds must be a whole number >= 1, got 0"),
    ({"judge_max_tokens": 0}, "judge_max_tokens must be a whole number >= 1"),
    ({"agent_temperature": -0.5}, "agent_temperature must be a number >= 0"),
    ({"judge": {"backend": "openai"}}, "judge needs a model"),
    ({"antagonist": {"model": "a", "backend": "tgi"}}, "antagonist: backend must be openai or vllm, got 'tgi'"),
    ({"stop": "lenient"}, "unknown stop 'lenient'; choose from paper, tolerant"),
])
def test_bad_options_name_the_option_and_the_config_file(options, message, tmp_path):
    config = tmp_path / "socialcc.json"
    config.write_text(json.dumps(options), encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(message)) as error:
        SocialCCOptions.parse({}, config)
    if "samples" not in options:
        assert error.value.file == str(config) and error.value.column == next(iter(options))


def test_the_package_choices_are_the_prompts_rules():
    assert socialcc.STOP_RULES == tuple(prompts.STOP_PATTERNS)
    assert socialcc.DIALOGUE_SETUPS == tuple(prompts.DIALOGUE_SETUPS_NOTE)


def test_role_backends_judge_and_play_the_antagonist_without_a_configured_judge(release, tmp_path):
    """``roles={"judge": ...}`` (inspect's model roles): the judge role judges every dialogue (4 judgements each) and,
    no antagonist being given, plays Character 1; ``score`` without a judge re-aggregates the same Table 2."""
    def judge(messages):
        if len(messages) == 1:
            return JUDGE_SCORES[which_judge(messages[0][1])]
        assert messages[0][1].startswith("Task\nAct like Mike in the scenario")  # Table 6A: Character 1
        return "OK. GOOD BYE!"

    judge_backend = FakeBackend("role-judge", judge)
    result = engine.run(BENCHMARK, FakeBackend("evaluated", lambda m: "Fine."),
                                SocialCCOptions(release=release, out=tmp_path / "run"), roles={"judge": judge_backend})
    assert judge_backend.calls == 2 * 1 + 2 * 4  # one antagonist turn and four judgements per scenario
    m = result.metrics["per_model"]["evaluated"]
    assert m["judge_models"] == ["role-judge"] and m["antagonist_models"] == ["role-judge"]
    # Table 2 by hand from JUDGE_SCORES: awareness 0, commonsense 1, value 1, behaviour 3
    expected = {"awareness": 0.0, "commonsense": 1.0, "value": 1.0, "behaviour": 3.0}
    assert BENCHMARK.headline(result.metrics, SocialCCOptions()) == expected
    rescored = engine.score(BENCHMARK, [tmp_path / "run" / "transcripts.jsonl"],
                            SocialCCOptions(release=release, out=tmp_path / "score"))
    assert rescored.metrics["judge_note"] == "re-aggregated from saved judgements"
    assert BENCHMARK.headline(rescored.metrics, SocialCCOptions()) == expected
    assert (tmp_path / "score" / "metrics.json").is_file() and (tmp_path / "score" / "table2.png").is_file()


def test_headline_is_table2s_four_means_without_the_missing_ones():
    """Table 2: the mean of each judge over the dialogues it judged (by hand: awareness 2/3, commonsense 1/3, value
    0); behaviour judged in none, so left out."""
    records = [record("Japan", "Confucian", "Etiquette", "Social Values", [1, 0, 0, None]),
               record("Japan", "Confucian", "Etiquette", "Migration", [1, 1, 0, None]),
               record("Egypt", "African-Islamic", "Etiquette", "Migration", [0, 0, 0, None])]
    headline = BENCHMARK.headline(socialcc.aggregate(records), SocialCCOptions())
    assert headline == pytest.approx({"awareness": 2 / 3, "commonsense": 1 / 3, "value": 0.0})
    assert BENCHMARK.headline_names(SocialCCOptions()) == ("awareness", "commonsense", "value", "behaviour")


# ------------------------------------------------------------------------------------------------ end to end


def test_scripted_server_protagonist_is_character_2_and_judges_are_the_printed_prompts(release, tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(reply=protagonist_reply, model="evaluated") as evaluated, \
            ScriptedServer(reply=judge_reply, model="judge-model") as judge:
        config = judge_config(tmp_path, judge.base_url)
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "evaluated", "--base-url",
                                          evaluated.base_url, "--release", str(release), "--out", str(out),
                                          "--config", str(config)])
        assert result.exit_code == 0, result.output
        # the evaluated model only ever plays Character 2 (Kim), with Table 7A as its system prompt
        for body in evaluated.bodies:
            system = body["messages"][0]["content"]
            assert system.startswith("Task\nAct like Kim in the scenario and interact with Mike to achieve your goal.")
            assert "Cultural Knowledge" not in system  # Table 7A gives the protagonist no cultural knowledge
            assert body["temperature"] == 1.0
        # 2 scenarios x 2 rounds: the protagonist speaks twice in each
        assert evaluated.request_count == 4
        # the judge model plays Character 1 (Table 6A) and judges (Tables 8A-11A), never the evaluated model
        agent_bodies = [b for b in judge.bodies if len(b["messages"]) > 1]
        judge_bodies = [b for b in judge.bodies if len(b["messages"]) == 1]
        assert all(b["messages"][0]["content"].startswith("Task\nAct like Mike in the scenario and interact with Kim")
                   for b in agent_bodies)
        assert len(judge_bodies) == 2 * 4 and {b["temperature"] for b in judge_bodies} == {0.0}
    transcripts = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    for t in transcripts:
        assert [x["speaker"] for x in t["turns"]] == ["Mike", "Kim", "Mike", "Kim", "Mike"]
        assert t["ended_by"] == "good_bye" and t["turns"][-1]["text"].endswith("OK. GOOD BYE!")
        assert {j["parse_status"] for j in t["judgements"].values()} == {"parsed"}
        assert {j["judge_model"] for j in t["judgements"].values()} == {"judge-model"}
    # the awareness judge's prompt is Table 8A filled, with the dialogue as "Agent n (name): text" lines
    first = transcripts[0]
    expected = prompts.PROMPTS["awareness"]
    for key, value in {"{Scenario}": "Scenario 0: Emily got into college.", "{Event 1}": "Event 0.1: choose a gift.",
                       "{Event 2}": "Event 0.2: talk about parents.",
                       "{Cultural Commonsense}": "Avoid giving white flowers in Japan.",
                       "{Cultural Value}": first["fields"]["Cultural Value"],
                       "{Dialogue History}": "Agent 1 (Mike): Hello\nAgent 2 (Kim): Protagonist line 1.\n"
                                             "Agent 1 (Mike): Antagonist line 1.\nAgent 2 (Kim): Protagonist line 2.\n"
                                             "Agent 1 (Mike): Antagonist line 2. OK. GOOD BYE!"}.items():
        expected = expected.replace(key, value)
    sent = [b["messages"][0]["content"] for b in judge_bodies if b["messages"][0]["content"].startswith(
        "Task\nRead the dialogue history, evaluate the Agent 2 cultural awareness level.\nScenario\nScenario 0")]
    assert sent == [expected]
    # Table 2 by hand from the scripted answers: awareness 0, commonsense 1, value 1, behaviour 3
    m = json.loads((out / "metrics.json").read_text())["per_model"]["evaluated"]
    assert (m["table2"]["awareness"], m["table2"]["commonsense"], m["table2"]["value"],
            m["table2"]["behaviour"]) == (0.0, 1.0, 1.0, 3.0)
    assert m["judge_models"] == ["judge-model"] and m["antagonist_models"] == ["judge-model"]
    for name in ("by_country.png", "by_value_topic_zone.png", "aware_without_knowledge.png",
                 "behaviour_distribution.png", "run.json"):
        assert (out / name).is_file(), name
    # rescoring from the saved transcripts gives the same numbers without a model
    result = CliRunner().invoke(app, ["score", "socialcc", "--responses", str(out / "transcripts.jsonl"),
                                      "--release", str(release), "--out", str(tmp_path / "rescored")])
    assert result.exit_code == 0, result.output
    again = json.loads((tmp_path / "rescored" / "metrics.json").read_text())["per_model"]["evaluated"]
    assert again["table2"] == m["table2"]


def test_no_named_judge_is_refused_before_any_model_call(release, tmp_path):
    with ScriptedServer(reply=protagonist_reply, model="evaluated") as evaluated:
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "evaluated", "--base-url",
                                          evaluated.base_url, "--release", str(release), "--out",
                                          str(tmp_path / "run")])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert "needs a named judge model" in result.output
        backend = OpenAIBackend("evaluated", base_url=evaluated.base_url)
        with pytest.raises(InputError, match="needs a named judge model"):
            engine.run(BENCHMARK, backend, SocialCCOptions(release=release, out=tmp_path / "run2"))
        assert evaluated.request_count == 0
    assert not (tmp_path / "run").exists() and not (tmp_path / "run2").exists()


def test_the_evaluated_model_judges_only_when_named(release, tmp_path):
    with ScriptedServer(reply=judge_reply, model="same") as server:
        config = judge_config(tmp_path, server.base_url, model="same")
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "same", "--base-url", server.base_url,
                                          "--release", str(release), "--out", str(tmp_path / "run"), "--config",
                                          str(config), "--limit", "1"])
        assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["judge_note"] == "the judge is the evaluated model, as named in the config"


def test_killed_run_resumes_mid_dialogue_with_the_same_command(release, tmp_path):
    """The server refuses every request after the 5th (a 400 fails at once, like a killed run): by hand, requests
    1-2 are the protagonists' round-1 turns, 3-4 the antagonists', 5 the first round-2 protagonist turn. The same
    command again asks only the 16 - 5 requests not answered (2 scenarios x (2 rounds x 2 turns + 4 judges) = 16),
    none answered before, and writes what an uninterrupted run writes."""
    answered_first = 5
    broken = {"on": True}

    def faults(number, body):
        return 400 if broken["on"] and number > answered_first else None

    def command(server, out):
        return ["evaluate", "socialcc", "--model", "evaluated", "--base-url", server.base_url, "--release",
                str(release), "--out", str(out), "--config", str(judge_config(tmp_path, server.base_url)),
                "--concurrency", "1"]

    out = tmp_path / "run"
    with ScriptedServer(reply=both_replies, faults=faults) as server:
        result = CliRunner().invoke(app, command(server, out))
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert not (out / "transcripts.jsonl").exists() and not (out / "metrics.json").exists()
        with ResponseCache(out / "cache.sqlite") as cache:
            assert len(cache) == answered_first
        first = [(b["model"], b["messages"]) for b in server.bodies[:answered_first]]
        before = server.request_count
        broken["on"] = False
        result = CliRunner().invoke(app, command(server, out))
        assert result.exit_code == 0, result.output
        second = [(b["model"], b["messages"]) for b in server.bodies[before:]]
        assert len(second) == 16 - answered_first
        assert not [request for request in second if request in first]  # nothing answered is asked again
        # the dialogues were continued, not restarted: the first request asked is the other round-2 protagonist
        # turn (system, Hello, its round-1 line, the antagonist's round-1 line)
        assert second[0][0] == "evaluated" and len(second[0][1]) == 4
        # a complete re-run asks nothing
        after = server.request_count
        assert CliRunner().invoke(app, command(server, out)).exit_code == 0
        assert server.request_count == after
    with ScriptedServer(reply=both_replies) as server:  # the same run, never interrupted
        result = CliRunner().invoke(app, command(server, tmp_path / "whole"))
        assert result.exit_code == 0, result.output
        assert server.request_count == 16
    assert (out / "transcripts.jsonl").read_bytes() == (tmp_path / "whole" / "transcripts.jsonl").read_bytes()
    resumed, whole = (json.loads((o / "metrics.json").read_text())["per_model"] for o in (out, tmp_path / "whole"))
    assert resumed == whole


def test_cli_errors_are_one_line_exit_2(release, tmp_path):
    runner = CliRunner()
    good = judge_config(tmp_path, "http://127.0.0.1:9/v1")  # nothing may be sent: a closed port

    def config(name: str, options: dict) -> str:
        path = tmp_path / name
        path.write_text(json.dumps(options), encoding="utf-8")
        return str(path)

    def evaluate(*extra, release=release, config=str(good)):
        return runner.invoke(app, ["evaluate", "socialcc", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                   "--out", str(tmp_path / "x"), "--release", str(release), "--config", config,
                                   *extra])

    judge = {"judge": "judge-model"}
    other = write_release(tmp_path / "normad", {"stories": pl.DataFrame({"id": [1]})}, benchmark="normad")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"scenario_id": "s0"}\n', encoding="utf-8")
    cases = [
        (evaluate("--limit", "0"), "--limit must be at least 1"),
        (evaluate("--samples", "3"), "--samples must be 1"),
        (evaluate("--max-tokens", "0"), "--max-tokens must be at least 1"),
        (evaluate(config=config("none.json", {})), "needs a named judge model"),
        (evaluate(config=config("judges.json", {"judges": "x"})), "unknown config key 'judges'"),
        (evaluate(config=config("empty_judge.json", {"judge": {"backend": "openai"}})), "judge needs a model"),
        (evaluate(config=config("tgi.json", {"judge": {"model": "j", "backend": "tgi"}})),
         "backend must be openai or vllm"),
        (evaluate(config=config("rounds.json", {**judge, "max_rounds": 0})), "max_rounds must be"),
        (evaluate(config=config("temperature.json", {**judge, "judge_temperature": -1})),
         "judge_temperature must be a number >= 0"),
        (evaluate(config=config("zones.json", {**judge, "zones": "absent.csv"})), "zones file not found"),
        (evaluate(config=str(tmp_path / "missing.json")), "config file not found"),
        (evaluate(config=config("list.json", [1])), "config must be a mapping"),
        (evaluate(release=other), "not a SocialCC release"),
        (evaluate(release=tmp_path / "missing"), "missing: release folder not found"),
        (evaluate("--split", "train"), "no split 'train'"),
        (runner.invoke(app, ["score", "socialcc", "--responses", str(tmp_path / "none.jsonl"), "--release",
                             str(release), "--out", str(tmp_path / "y")]), "not found"),
        (runner.invoke(app, ["score", "socialcc", "--responses", str(broken), "--release", str(release), "--out",
                             str(tmp_path / "y")]), "lacks field 'model'"),
        (runner.invoke(app, ["score", "socialcc", "--responses", str(broken), "--release", str(other), "--out",
                             str(tmp_path / "y")]), "not a SocialCC release"),
    ]
    for result, message in cases:
        assert result.exit_code == 2, result.output
        assert message in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output, result.output
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_end_to_end_on_the_builders_sample_release(tmp_path):
    """The sample (value countries Jordan, Sweden and Japan) built with an Inglehart-Welzel table of our own listing
    Jordan and Japan, evaluated with a config whose zones table lists Sweden and gives Jordan another zone: the
    release's iw_zone is used where it has one, the config's elsewhere (expected zones are the ones written below)."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for folder in ("wvs", "cultural_atlas", "socialcc"):
        (raw / folder).symlink_to(REPO_RAW / folder)
    (raw / "inglehart_welzel").mkdir()
    (raw / "inglehart_welzel" / "zones.csv").write_text(
        "Country,Cultural_Region\nJordan,African-Islamic\nJapan,Confucian\n", encoding="utf-8")
    zones = tmp_path / "zones.csv"
    zones.write_text("Country,Cultural_Region\nJordan,Catholic Europe\nSweden,Protestant Europe\n", encoding="utf-8")
    out = tmp_path / "releases"
    result = CliRunner().invoke(app, ["build", "socialcc", "--raw", str(raw), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with ScriptedServer(reply=protagonist_reply, model="evaluated") as evaluated, \
            ScriptedServer(reply=judge_reply, model="judge-model") as judge:
        config = judge_config(tmp_path, judge.base_url, zones=str(zones))
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "evaluated", "--base-url",
                                          evaluated.base_url, "--release", str(out / "socialcc"), "--out",
                                          str(tmp_path / "run"), "--config", str(config)])
        assert result.exit_code == 0, result.output
    transcripts = [json.loads(line) for line in (tmp_path / "run" / "transcripts.jsonl").read_text().splitlines()]
    layouts = pl.read_parquet(next((out / "socialcc" / "data" / "scenarios").glob("*.parquet")))["layout"]
    assert len(transcripts) == len(layouts) and "released" in layouts.to_list()
    expected = {"Jordan": "African-Islamic", "Sweden": "Protestant Europe", "Japan": "Confucian"}
    assert {t["country"]: t["zone"] for t in transcripts} == expected
    # where the prompt fields came from, by hand from the sample: 6 scenarios of our JSONL have events, a third
    # character and a commonsense item; the 2 released and 3 CC-Mediation ones have none of them, and Character 2
    # has two goals in all but released 2.json (one goal: its Event 2 stays absent)
    run = json.loads((tmp_path / "run" / "run.json").read_text())["evaluation"]
    assert run["prompt_fields"]["sources"] == {
        "Event 1": {"record": 6, "stand-in: Character 2's Social Goal 1": 5},
        "Event 2": {"absent": 1, "record": 6, "stand-in: Character 2's Social Goal 2": 4},
        "Cultural Commonsense": {"absent": 5, "record": 6}, "Cultural Value": {"record": 11},
        "Character 3 Portfolio": {"absent": 5, "record": 6}}
    assert list(run["dialogue_setup"]) == ["autogen"] and run["fig5"]["grouped_by"] == "commonsense"
    m = json.loads((tmp_path / "run" / "metrics.json").read_text())["per_model"]["evaluated"]
    assert set(m["by_zone"]) == set(expected.values())
    # score (no judge: re-aggregation) looks the zones up the same way
    zones_only = tmp_path / "zones_only.json"
    zones_only.write_text(json.dumps({"zones": str(zones)}), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "socialcc", "--responses", str(tmp_path / "run" / "transcripts.jsonl"),
                                      "--release", str(out / "socialcc"), "--out", str(tmp_path / "rescored"),
                                      "--config", str(zones_only)])
    assert result.exit_code == 0, result.output
    rescored = json.loads((tmp_path / "rescored" / "metrics.json").read_text())["per_model"]["evaluated"]
    assert rescored["by_zone"] == m["by_zone"]


# ------------------------------------------------------------------------------------------------ authors' files

CC_MEDIATION = (REFERENCE / "SocialCC" / "suhyun565_CC-Mediation"
                / "socialcc_scenario_metadata_from_cc_mediation.jsonl")


@pytest.mark.reference
@reference
def test_evaluate_on_the_authors_cc_mediation_records_says_what_stands_in(tmp_path):
    """Three of CC-Mediation's records (the first three of its file) played and judged in-process: the antagonist's
    first request is AutoGen's layout (system prompt, then its own "Hello"), its system prompt holds the record's
    agent_2_value, and run.json says per field where it came from (by hand: none of the records carries events, a
    commonsense item or a third character; each gives Character 2 two goals). Fig. 5 then has no country."""
    from culturebench.builders.socialcc import scenarios_table
    from culturebench.raw.socialcc import read_scenarios

    if not CC_MEDIATION.is_file():
        pytest.skip("CC-Mediation reference records absent")
    records = [json.loads(line) for line in CC_MEDIATION.read_text(encoding="utf-8").splitlines()[:3]]
    rows, _ = read_scenarios(CC_MEDIATION, CC_MEDIATION.parent)
    empty = pl.DataFrame(schema={"country": pl.String, "question_id": pl.String, "side": pl.String,
                                 "share": pl.Float64})
    table, _ = scenarios_table(rows[:3], [], empty)
    release = write_release(tmp_path / "socialcc", {"scenarios": table}, "socialcc")
    first_requests = []

    def antagonist(messages):
        first_requests.append(messages)
        return "OK. GOOD BYE!"

    def judge(messages):
        return "Score: 1"

    engine.run(BENCHMARK, FakeBackend("evaluated", lambda m: "Fine."),
                       SocialCCOptions(release=release, out=tmp_path / "run"),
                       roles={"judge": FakeBackend("judge", judge), "antagonist": FakeBackend("a", antagonist)})
    values = {r["cultural_axis"]["agent_2_value"] for r in records}
    assert all(m[0][0] == "system" and m[1] == ("assistant", "Hello") for m in first_requests)
    assert {next(v for v in values if v in m[0][1]) for m in first_requests} == values
    run = json.loads((tmp_path / "run" / "run.json").read_text())["evaluation"]
    assert run["prompt_fields"]["sources"] == {
        "Event 1": {"stand-in: Character 2's Social Goal 1": 3},
        "Event 2": {"stand-in: Character 2's Social Goal 2": 3},
        "Cultural Commonsense": {"absent": 3}, "Cultural Value": {"record": 3}, "Character 3 Portfolio": {"absent": 3}}
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["per_model"]["evaluated"]["fig5_countries"] == []
