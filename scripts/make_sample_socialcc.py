"""Write the bundled SocialCC sample: raw/socialcc/*.jsonl (our own scenarios about the fictional Cultural Atlas
countries of raw/cultural_atlas/) and raw/socialcc/wvs/ (SYNTHETIC WVS-7-format respondents, deliberately skewed).

Why the skewed respondents: the synthetic WVS sample in raw/wvs/ has uniformly random answers, so no country
reaches the 80% consensus SocialCC requires, and a value_preferences table mined from it alone is empty. Rather
than lower the threshold, this script writes 120 synthetic respondents (60 "Jordan", 60 "Sweden": countries that
are not in raw/wvs/) whose answers to a few questions are skewed, so that the sample build exercises the whole
pipeline. They are not survey data; the statements mined from them say nothing about Jordan or Sweden.

    python scripts/make_sample_socialcc.py
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "raw" / "socialcc"
SEED = 7
FACTS = json.loads((REPO / "src" / "culturebench" / "facts" / "socialcc.json").read_text(encoding="utf-8"))
BOOK = json.loads((REPO / "raw" / "wvs" / "codebook.json").read_text(encoding="utf-8"))["variables"]

# country code -> {question: (codes to draw from with probability p, p)}
SKEW = {
    400: {"Q28": ([1, 2], 0.92), "Q169": ([1, 2], 0.9), "Q27": ([1, 2], 0.95), "Q66": ([1, 2], 0.95)},  # "Jordan"
    752: {"Q28": ([3, 4], 0.9), "Q169": ([3, 4], 0.93), "Q57": ([1], 0.88)},  # "Sweden"
}
PER_COUNTRY = 60


def respondents(rng: random.Random) -> list[dict]:
    rows = []
    for country, skew in SKEW.items():
        for index in range(1, PER_COUNTRY + 1):
            row = {"B_COUNTRY": country, "D_INTERVIEW": country * 100000 + index,
                   "W_WEIGHT": f"{rng.uniform(0.6, 1.4):.6f}"}
            for q in FACTS["questions"]:  # Table 4A's WVS variables
                name = q["question_id"]
                codes = sorted(int(c) for c in BOOK[name]["choices"] if int(c) >= 0)
                if rng.random() < 0.03:
                    row[name] = -1
                elif name in skew:
                    favoured, p = skew[name]
                    others = [c for c in codes if c not in favoured]
                    row[name] = rng.choice(favoured if rng.random() < p else others)
                else:
                    row[name] = rng.choice(codes)
            rows.append(row)
    return rows


def person(name, age, gender, nationality, occupation, goal):
    return {"name": name, "age": age, "gender": gender, "nationality": nationality, "occupation": occupation,
            "goal": goal}


JOR_Q28 = "People from Jordan strongly agree that when a mother works for pay, the children suffer."
SWE_Q28 = "People from Sweden strongly disagree that when a mother works for pay, the children suffer."
JOR_Q169 = "People from Jordan strongly agree that whenever science and religion conflict, religion is always right."
SWE_Q57 = "People from Sweden strongly agree that most people can be trusted."

SCENARIOS = [
    {"id": "sample-001", "country": "Veloria", "commonsense_topic": "Etiquette",
     "commonsense_item": "Bring a small potted herb rather than cut flowers, which are reserved for funerals.",
     "value_item": JOR_Q28,
     "scenario": "Mira has invited two colleagues to her flat in the capital of Veloria to celebrate her return to "
                 "work after parental leave. Her guests are deciding what to bring and how to talk about her "
                 "new routine with the baby.",
     "events": ["The guests stop at a market to choose a gift for Mira.",
                "Over dinner, Mira mentions that her son now spends the day with a childminder."],
     "characters": [person("Mira", 34, "female", "Veloria", "architect", "Feel supported in returning to work."),
                    person("Layla", 41, "female", "Jordan", "school principal",
                           "Share her view that young children need their mother at home, without offending Mira."),
                    person("Erik", 29, "male", "Sweden", "software tester",
                           "Reassure Mira that working parents raise happy children.")]},
    {"id": "sample-002", "country": "Veloria", "commonsense_topic": "Dates of Significance",
     "commonsense_item": "1 March - Lantern Night: households light a lamp in every window.",
     "value_item": JOR_Q169,
     "scenario": "On the evening of 1 March, a Velorian nurse hosts two visiting doctors. A patient's family has "
                 "refused a treatment on religious grounds, and the doctors disagree about how to respond.",
     "events": ["The host asks her guests to help light a lamp in every window before dinner.",
                "A call from the hospital reopens the discussion about the family's refusal."],
     "characters": [person("Tessa", 45, "female", "Veloria", "nurse", "Keep the holiday evening peaceful."),
                    person("Omar", 38, "male", "Jordan", "surgeon",
                           "Argue that the family's faith should guide the decision."),
                    person("Ingrid", 50, "female", "Sweden", "oncologist",
                           "Persuade the others that the medical evidence should decide.")]},
    {"id": "sample-003", "country": "Kestrava", "commonsense_topic": "Etiquette",
     "commonsense_item": "Pour drinks for the people beside you; never fill your own cup first.",
     "value_item": SWE_Q57,
     "scenario": "Three new business partners meet for a first dinner in Kestrava to agree on a shared "
                 "warehouse. One of them proposes to skip the written contract.",
     "events": ["The drinks arrive and everyone waits to see who will pour.",
                "The Swedish partner suggests sealing the deal with a handshake only."],
     "characters": [person("Dagny", 36, "female", "Sweden", "logistics manager",
                           "Build the partnership on mutual trust rather than paperwork."),
                    person("Tavo", 52, "male", "Kestrava", "warehouse owner",
                           "Show proper hospitality and keep the deal safe."),
                    person("Yusuf", 44, "male", "Jordan", "importer", "Get clear written terms before committing.")]},
    {"id": "sample-004", "country": "Ormund Isles", "commonsense_topic": "Etiquette",
     "commonsense_item": "Visitors are offered sweet tea three times and it is polite to accept each cup.",
     "value_item": SWE_Q28,
     "scenario": "A family on the Ormund Isles welcomes two foreign teachers who are helping at the local school. "
                 "The mother of the family is thinking about taking a job at the harbour office.",
     "events": ["The hosts offer a third cup of sweet tea.",
                "The mother asks the guests whether her young daughter would suffer if she took the job."],
     "characters": [person("Nessa", 31, "female", "Ormund Isles", "fisheries clerk",
                           "Decide whether to accept the harbour office job."),
                    person("Astrid", 27, "female", "Sweden", "primary school teacher",
                           "Encourage Nessa to take the job."),
                    person("Hana", 33, "female", "Jordan", "English teacher",
                           "Voice her concern for the daughter while respecting the hosts.")]},
    {"id": "sample-005", "country": "Kestrava", "commonsense_topic": "Etiquette",
     "commonsense_item": "A gift is refused once or twice out of modesty before it is accepted.",
     "value_item": JOR_Q28,
     "scenario": "A Kestravan grandmother is offered an expensive baby carrier by her daughter's colleagues, who "
                 "also want to persuade the daughter to come back to the office early.",
     "events": ["The grandmother refuses the gift the first time it is offered.",
                "The colleagues raise the question of the daughter's return date."],
     "characters": [person("Oda", 67, "female", "Kestrava", "retired teacher",
                           "Accept the gift graciously, in the proper way."),
                    person("Rania", 39, "female", "Jordan", "accountant",
                           "Suggest that the baby is better off with the mother for now."),
                    person("Lars", 42, "male", "Sweden", "team lead",
                           "Ask the daughter to return early to a key project.")]},
    # kept, with a validation warning: the value is not a mined preference (random synthetic answers for Japan),
    # as the paper's own Table 13A example (Japan, Q27) is not in the real WVS-7 files
    {"id": "sample-006", "country": "Veloria", "commonsense_topic": "Etiquette",
     "commonsense_item": "Gifts are opened later, in private, not in front of the giver.",
     "value_item":
         "People from Japan strongly agree that one of my main goals in life has been to make my parents proud.",
     "scenario": "A Velorian graduate receives gifts from two mentors after her thesis defence.",
     "events": ["The mentors hand over their gifts.", "The graduate talks about her parents' expectations."],
     "characters": [person("Ilse", 26, "female", "Veloria", "graduate student", "Thank her mentors properly."),
                    person("Kenji", 58, "male", "Japan", "professor", "Praise her for honouring her parents."),
                    person("Sofia", 47, "female", "Sweden", "lecturer", "Encourage her to follow her own path.")]},
    # quarantined on purpose: the commonsense item is not on Ormund Isles' etiquette page
    {"id": "sample-007", "country": "Ormund Isles", "commonsense_topic": "Etiquette",
     "commonsense_item": "Shoes are always kept on inside the house.",
     "value_item": SWE_Q57,
     "scenario": "Two travellers stay with an Ormund family during a storm.",
     "events": ["The travellers enter the house.", "The host asks whether they lock their doors at home."],
     "characters": [person("Bram", 60, "male", "Ormund Isles", "ferry captain", "Make the guests comfortable."),
                    person("Elin", 35, "female", "Sweden", "journalist", "Explain why she trusts strangers."),
                    person("Sami", 30, "male", "Jordan", "engineer", "Stay polite while being careful.")]},
]


# Released layout (one JSON per scenario, as the SocialCC release is distributed: see culturebench.raw.socialcc);
# our own text. Such records have two characters and no events or commonsense item.
JOR_Q66 = "People from Jordan have a great deal of confidence in the press."
RELEASED = {
    "1": {"scenario": "Two engineers who share an office are planning a small party for a colleague's promotion. "
                      "A newspaper story about their company came out this morning.",
          "cultural_value": JOR_Q66, "cultural_value_country": "Jordan",
          "agent_1_background": "Nils: A 33-year-old male civil engineer from Sweden.",
          "agent_2_background": "Samir: A 35-year-old male structural engineer from Jordan.",
          "prompts": {"agent_1": {"task": "Plan the promotion party with Samir.",
                                  "goals": {"goal_1": "Discuss ordering the food for the party.",
                                            "goal_2": "Question whether the newspaper story can be believed."}},
                      "agent_2": {"task": "Plan the promotion party with Nils.",
                                  "goals": {"goal_1": "Decide what food to order for the party.",
                                            "goal_2": "Discuss how far the press can be trusted."}}}},
    "2": {"scenario": "A nurse and a lab technician are on a night shift together. A patient has asked to stop a "
                      "treatment because of his faith.",
          "cultural_value": JOR_Q169, "cultural_value_country": "Jordan", "agent_1": "Greta",
          "agent_1_background": "Greta: A 29-year-old female lab technician from the Philippines.",
          "agent_2_background": "Hadi: A 40-year-old male nurse from Jordan.",
          "prompts": {"agent_1": {"task": "Talk about the patient with Hadi.",
                                  "goals": ["Suggest overruling the patient's wish.",
                                            "Question whether religion should come before science."]},
                      "agent_2": {"task": "Talk about the patient with Greta.",
                                  "goals": ["Decide how to respond to the patient's request."]}}},
}


# CC-Mediation layout (the per-scenario metadata suhyun565/CC-Mediation's dialogue files carry, see
# culturebench.raw.socialcc); our own text. agent_2_value is the released value, agent_1_value CC-Mediation's flipped
# copy; the second record's agent_1 fields are null as where CC-Mediation could not parse a background; the third is
# a whole dialogue file (metadata + turns) and words its value as the released files do (Q237 "... is good").
def cc_mediation(identifier: int, context: str, agent_1: dict, agent_2: dict, values: tuple[str, str],
                 goals_1: list[str], goals_2: list[str]) -> dict:
    return {"scenario_id": identifier, "subset": "evaluate", "agents": {"agent_1": agent_1, "agent_2": agent_2},
            "scenario_context": context,
            "cultural_axis": {"agent_1_value": values[0], "agent_2_value": values[1]},
            "goals": {"agent_1": {f"goal_{i}": g for i, g in enumerate(goals_1, 1)},
                      "agent_2": {f"goal_{i}": g for i, g in enumerate(goals_2, 1)}},
            "conflict_stage": "Defense"}


def agent(name, age=None, gender=None, occupation=None, nationality=None) -> dict:
    return {"name": name, "age": age, "gender": gender, "occupation": occupation, "nationality": nationality}


CC_MEDIATION = [
    cc_mediation(11, "Two neighbours are helping a young couple plan their first child's naming party.",
                 agent("Axel", 44, "male", "carpenter", "Sweden"), agent("Omar", 38, "male", "teacher", "Jordan"),
                 ("People from Sweden strongly disagree that when a mother works for pay, the children suffer.",
                  JOR_Q28),
                 ["Suggest inviting the mother's colleagues.", "Question whether the mother should stay at home."],
                 ["Decide whom to invite to the naming party.", "Discuss whether the mother should go back to work."]),
    cc_mediation(12, "A film club is choosing a documentary about a hospital for its next evening.",
                 agent("Britt"), agent("Lina", 31, "female", "pharmacist", "Jordan"),
                 ("People from Jordan strongly disagree that whenever science and religion conflict, religion is "
                  "always right.", JOR_Q169),
                 ["Propose the documentary about a surgeon.", "Question the place of faith in medicine."],
                 ["Decide which documentary to show.", "Discuss whether faith can outweigh a doctor's advice."]),
]
CC_MEDIATION_DIALOGUE = {
    "scenario_id": 13, "subset": "evaluate",
    "metadata": {**{k: v for k, v in cc_mediation(
        13, "Three classmates are writing a history report on their country's armed forces.",
        agent("Karin", 20, "female", "history student", "Sweden"), agent("Yousef", 21, "male", "law student", "Jordan"),
        ("People from Sweden disagree that having the army rule is good.",
         "People from Jordan agree that having the army rule is good."),
        ["Suggest a title for the report.", "Question whether army rule can ever be good."],
        ["Decide the report's title.", "Discuss whether the army should rule."]).items()
        if k not in ("scenario_id", "subset", "conflict_stage")}, "conflict_stage": "Minimization",
                 "conflict_turn": 2, "conflict_agent": "agent_2", "max_turns": 2},
    "shared_prefix": [
        {"t": 1, "speaker": "Karin", "agent": "agent_1", "message": "Hello", "phase": "pre_conflict",
         "label": "unrelated_topic"},
        {"t": 2, "speaker": "Yousef", "agent": "agent_2", "message": "Hello, Karin.", "phase": "conflict",
         "label": "Minimization"}],
    "continuations": {"original": {"turns": []}},
}


def paper_order(scenario: dict) -> dict:
    """Characters in the paper's order (Sec. 3.3, Tables 12A-16A): Character 1 the antagonist, Character 2 the
    evaluated protagonist (here the person of the value item's country), Character 3 the scenario's host."""
    value_country = scenario["value_item"].split(" from ", 1)[1].split(" ")[0]
    host = [c for c in scenario["characters"] if c["nationality"] == scenario["country"]]
    protagonist = [c for c in scenario["characters"] if c["nationality"] == value_country][:1]
    antagonist = [c for c in scenario["characters"] if c not in host and c not in protagonist]
    return {**scenario, "characters": antagonist + protagonist + host}


def main() -> None:
    rng = random.Random(SEED)
    (OUT / "wvs").mkdir(parents=True, exist_ok=True)
    rows = respondents(rng)
    columns = ["B_COUNTRY", "D_INTERVIEW", "W_WEIGHT", *[q["question_id"] for q in FACTS["questions"]]]
    with (OUT / "wvs" / "SYNTHETIC_socialcc_skewed_respondents.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    with (OUT / "SAMPLE_socialcc_scenarios.jsonl").open("w", encoding="utf-8", newline="\n") as f:
        for scenario in SCENARIOS:
            f.write(json.dumps(paper_order(scenario), ensure_ascii=False) + "\n")
    (OUT / "SocialCC_JSON").mkdir(exist_ok=True)
    for name, record in RELEASED.items():
        (OUT / "SocialCC_JSON" / f"{name}.json").write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n",
                                                             encoding="utf-8")
    (OUT / "CC_Mediation" / "evaluate").mkdir(parents=True, exist_ok=True)
    with (OUT / "CC_Mediation" / "SAMPLE_cc_mediation_records.jsonl").open("w", encoding="utf-8", newline="\n") as f:
        for record in CC_MEDIATION:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    (OUT / "CC_Mediation" / "evaluate" / "13.json").write_text(
        json.dumps(CC_MEDIATION_DIALOGUE, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (OUT / "README.md").write_text(
        "# SocialCC sample (culturebench)\n\n"
        "`SAMPLE_socialcc_scenarios.jsonl`: our own scenarios (JSON Lines; format in `culturebench/raw/socialcc.py`) "
        "about the fictional countries of `raw/cultural_atlas/` (Veloria, Kestrava, Ormund Isles). One is meant to be "
        "quarantined (an item not on the atlas page); one has a value the WVS files do not make a preference, which "
        "is kept with a validation warning, as the paper's own Table 13A example is. Characters are in the paper's "
        "order: Character 1 the antagonist, Character 2 the evaluated protagonist.\n\n"
        "`SocialCC_JSON/*.json`: two scenarios of our own in the released layout (one JSON per scenario: scenario, "
        "cultural_value, cultural_value_country, agent_1_background, agent_2_background, prompts), without events "
        "or commonsense items, as the SocialCC release is distributed.\n\n"
        "`CC_Mediation/`: three scenarios of our own in the layout of suhyun565/CC-Mediation's per-scenario "
        "metadata (the public copy of the released scenarios): two records a line in "
        "`SAMPLE_cc_mediation_records.jsonl` (one whose Character 1 has only a name) and one whole dialogue file "
        "`evaluate/13.json` whose value is worded as the released files word Table 4A's Q237.\n\n"
        "`wvs/SYNTHETIC_socialcc_skewed_respondents.csv`: 120 SYNTHETIC respondents in the WVS-7 CSV layout "
        "(codes \"Jordan\" 400 and \"Sweden\" 752), with answers to a few questions deliberately skewed. The "
        "synthetic respondents in `raw/wvs/` answer uniformly at random, so no country reaches SocialCC's 80% "
        "consensus from them alone; instead of lowering the threshold, these extra rows (read after `raw/wvs/`) "
        "let the sample build mine a few preferences. They are not survey data and say nothing about Jordan or "
        "Sweden. Written by `scripts/make_sample_socialcc.py`. For a real build, leave `socialcc/wvs/` out and "
        "put the official WVS-7 files in `wvs/`.\n",
        encoding="utf-8")


if __name__ == "__main__":
    main()
