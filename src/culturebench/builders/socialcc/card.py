"""SocialCC's dataset card: what the release is, how it was built and its licence; :func:`card` adds one build's
count of records per branch of CC-Mediation's rule."""

from __future__ import annotations

from dataclasses import replace

from culturebench.builders.base import CardInfo, ConfigInfo
from culturebench.builders.socialcc.values import VALUE_BRANCHES

CARD = CardInfo(
    pretty_name="SocialCC (rebuilt by culturebench)",
    summary=(
        "SocialCC (Wu, Lian, Wang and Meng, ACL 2025) evaluates the cultural competence of language-model agents in "
        "intercultural social interactions: in each scenario an antagonist agent (Character 1) raises a cultural "
        "conflict built on a cultural commonsense item (Cultural Atlas: etiquette or dates of significance) and a "
        "cultural value preference mined from the World Values Survey wave 7 (Table 4A: \"People from <country> "
        "strongly agree that ...\", over 80% of the country's respondents), and the evaluated protagonist "
        "(Character 2) is judged on cultural awareness, knowledge and behaviour."
    ),
    rebuilt_from="raw WVS-7 files (the value preferences) and the released per-scenario JSON files, CC-Mediation's "
                 "copy of them or our JSONL (the scenarios), checked against the atlas pages; no released scenario "
                 "is dropped for its value's WVS share",
    license="other",
    citation=(
        "@inproceedings{wu2025socialcc,\n"
        "  title = {{SocialCC}: Interactive Evaluation for Cultural Competence in Language Agents},\n"
        "  author = {Wu, Jincenzi and Lian, Jianxun and Wang, DingDong and Meng, Helen},\n"
        "  booktitle = {Proceedings of the 63rd Annual Meeting of the Association for Computational Linguistics "
        "(Volume 1: Long Papers)},\n"
        "  publisher = {Association for Computational Linguistics},\n  year = {2025}\n}\n"
        "@misc{wvs7,\n  title = {World Values Survey: Round Seven -- Country-Pooled Datafile Version 6.0},\n"
        "  author = {Haerpfer, C. and Inglehart, R. and Moreno, A. and Welzel, C. and Kizilova, K. and Diez-Medrano, J. and Lagos, M. and Norris, P. and Ponarin, E. and Puranen, B.},\n"
        "  publisher = {JD Systems Institute and WVSA Secretariat},\n  doi = {10.14281/18241.24},\n  year = {2022}\n}"
    ),
    configs=(
        ConfigInfo("scenarios", "One row per scenario: id (socialcc- + 16 hex of a sha256 of its content), source_id, "
                   "layout (released, cc_mediation or culturebench), scenario text, events (null when the record has "
                   "none), characters (Character 1 = antagonist, Character 2 = evaluated protagonist, optional "
                   "Character 3; "
                   "structs name, age, gender, nationality, country (resolved), occupation, profile, goals, task; "
                   "unknown fields null), commonsense_country / commonsense_topic / commonsense_item (null when the "
                   "record has no commonsense item), value_item, value_country, value_question_id (WVS-7 variable), "
                   "value_table_4a_id, value_topic (Table 4A category), value_side (printed or opposite) and "
                   "value_share (the country's share from the WVS files, null without data) and iw_zone (the "
                   "Inglehart-Welzel cultural zone of value_country, Fig. 6's groups; null when RAW/inglehart_welzel/ "
                   "is absent or does not list the country).",
                   redistributable=False, license_name="cultural-atlas-terms"),
        ConfigInfo("value_preferences", "Country consensus mined from WVS-7 (Sec. 3.2, Table 4A): country, "
                   "question_id (WVS-7 variable), table_4a_id, topic, side (printed or opposite), share (share of the "
                   "country's respondents with a valid answer whose answer is on that side, strictly over the "
                   "threshold), n (valid answers), weighted (W_WEIGHT used) and statement."),
    ),
    creation=(
        "Value preferences are computed from the WVS-7 respondent files in `RAW/wvs/` (read with the same reader as "
        "WorldValuesBench; optional extra files in `RAW/socialcc/wvs/` are read after them) and the codebook. The "
        "questions, their Table 4A statements and topics are transcribed in `culturebench/facts/socialcc.json`; "
        "the answer codes on each side of a statement are ours (the half of the scale on the statement's side; "
        "Table 4A's ID 56 and 234 are read from WVS variables Q57 and Q234A, whose wording the printed statements "
        "match). Share = respondents in the side's codes / respondents with a valid answer (negative codes left out, "
        "unweighted as Sec. 3.2 counts respondents); a side enters when its share is over 0.8. The paper used the "
        "WVS-7 Country-Pooled Datafile v6.0; the files this release read and the version their names give are in "
        "the manifest's provenance (`wvs_versions`).\n\n"
        "Scenarios are read from `RAW/socialcc/` (any depth, `wvs/` skipped): per-scenario JSON files in the "
        "released layout (scenario, cultural_value, cultural_value_country, agent_1_background, agent_2_background, "
        "prompts.agent_1/agent_2.task/goals), JSONL of such records, the per-scenario metadata of "
        "suhyun565/CC-Mediation's dialogue files (`cc_mediation`: scenario_context, agents, cultural_axis, goals; "
        "its 1,662 records are the public copy of the released scenarios we could find), or our JSONL layout. Fields a "
        "record lacks (events, a third character, the commonsense item) are null; the manifest's provenance counts "
        "them per layout (`absent_fields`). In the `cc_mediation` layout: the characters' portfolios are rebuilt "
        "from the agent fields CC-Mediation parsed out of the released backgrounds (Tables 12A-16A's form, a field "
        "it could not parse left out); the value is the released `cultural_value`, recovered by running "
        "CC-Mediation's `build_agent_prompts.py` backwards: it gave the released value verbatim to the agent from "
        "`cultural_value_country` (agent 1 tested first) and a flipped copy naming its own country to the other; "
        "when neither agent is from it, agent 1 got the released value with its country swapped in and agent 2 "
        "the flipped copy; an agent whose background ends in no capitalised country got no country swapped in. "
        "A value that names another country than its agent's parsed nationality therefore names the value "
        "country. Two branches can remain where the record's own parser left a nationality null, and where the "
        "agents are from different countries and each value names its own agent's: the one whose value is a "
        "Table 4A statement wins (the other is a flipped copy no table prints), else the one whose value is a "
        "consensus in the WVS files, else the one the parsed nationalities give (agent 2's in the second case: "
        "Character 2 holds the value country in the paper's scenarios). The manifest counts the records per "
        "branch and per kind of evidence (`value_branches`; released records: the branch their "
        "`cultural_value_country` takes, the value as released). The value's country is the one the statement "
        "names, and there are no events, no commonsense item, no third character and no task. The released "
        "layout has no events either, and no commonsense item unless a record adds one. "
        "For any scenario without them, `evaluate` fills the prompts of Tables 6A-11A as follows, and each run's "
        "run.json and metrics.json count it (`prompt_fields`): Character 2's social goals stand in for Events 1-2; "
        "nothing stands in for the commonsense item or a third character (their lines are left out, so the "
        "commonsense judge of Table 9A sees only the value, and Fig. 5, which groups by the commonsense item's "
        "country, leaves the scenario out). A malformed file stops the "
        "build with one line naming file, line and key. Quarantined (with a `reason`): empty text (`empty_text`), "
        "fewer than two characters (`missing_character`), a commonsense topic other than Etiquette / Dates of "
        "Significance (`bad_commonsense_topic`), a commonsense item not on the country's atlas page of that topic "
        "(`commonsense_not_in_atlas`), a commonsense country that is no character's nationality "
        "(`country_not_a_character`), a value item that is not a Table 4A statement about its country "
        "(`value_not_a_table_4a_statement`), a value country that is no character's nationality when all "
        "three characters are given (`value_country_not_a_character`), and later copies of the same scenario "
        "(`duplicate_scenario`: same content and, for the authors' layouts, the same record id). A value whose share "
        "in the WVS files is not over the threshold is no reason to drop a scenario: the paper's own Table 13A "
        "example (Japan, Q27) is such a value; validation reports their number as a warning. Statements the "
        "released files word differently from Table 4A (`released_forms` in the facts) are read as their side. "
        "Scenario counts per continent (Table 1) are reported.\n\n"
        "The `iw_zone` of a scenario is its value country's zone in `RAW/inglehart_welzel/*.csv` (Country + "
        "Cultural_Region, read and checked as for NormAd; country names resolved like the nationalities), the eight "
        "cultural groups of the paper's Fig. 6 (App. A.3); null when the folder is absent or lacks the country."
    ),
    considerations=(
        "**Licensing.** Commonsense items reproduce Cultural Atlas text, (c) SBS, and the scenario texts are the "
        "SocialCC authors': the `scenarios` config is marked not redistributable. `value_preferences` holds country "
        "aggregates, no respondent rows.\n\n"
        "**Use.** A consensus statement describes a majority of a national sample, not every person of that "
        "nationality; the answer codes on each side of a statement are our reading of the questions."
    ),
    tags=("cultural-competence", "social-interaction", "world-values-survey", "cultural-atlas", "llm-agents"),
    source=("SocialCC scenario files (per-scenario JSON as released, or JSONL; see culturebench.raw.socialcc), the "
            "World Values Survey wave-7 files and codebook (worldvaluessurvey.org) and saved Cultural Atlas pages "
            "(culturalatlas.sbs.com.au)"),
    language=("en",),
    task_categories=("text-generation",),
    annotations_creators=("expert-generated",),
    license_name="cultural-atlas-terms",
    license_link="https://culturalatlas.sbs.com.au",
    license_details=("Scenarios quote Cultural Atlas text, (c) SBS; the value preferences are country aggregates "
                     "computed from WVS-7 (World Values Survey Association terms)."),
)


def card(branches: dict | None = None) -> CardInfo:
    """The card, with the build's count of records per branch of CC-Mediation's rule (``value_branches``)."""
    if not branches:
        return CARD
    parts = []
    for layout in ("cc_mediation", "released"):
        if layout in branches:
            counts, evidence = branches[layout], branches.get(f"{layout}_evidence", {})
            parts.append(f"`{layout}`: " + ", ".join(f"{counts.get(b, 0):,} {b}" for b in VALUE_BRANCHES)
                         + " (decided by " + ", ".join(f"{n:,} {e}" for e, n in evidence.items()) + ")")
    return replace(CARD, creation=f"{CARD.creation}\n\nThis build's records per branch of CC-Mediation's rule "
                                  f"(agent_1, agent_2, neither: the agent from the value country): {'; '.join(parts)}.")


def manifest_card(manifest: dict) -> CardInfo:
    """The card a release's manifest says its build wrote (``audit`` re-renders it)."""
    return card(manifest.get("provenance", {}).get("value_branches"))
