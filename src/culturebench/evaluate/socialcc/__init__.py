"""SocialCC evaluation and scoring (Wu, Lian, Wang and Meng, "SocialCC: Interactive Evaluation for Cultural
Competence in Language Agents", ACL 2025, Sec. 3.3-3.4, App. C): ``culturebench evaluate socialcc`` and
``culturebench score socialcc``.

**Roles** (Sec. 3.3, Tables 6A-7A, Tables 12A-16A): Character 1 is the antagonist (Table 6A: raises the conflict,
questions the knowledge, elicits the value, gives the knowledge when the other side does not notice); Character 2
is the protagonist, played by the **evaluated model** (Table 7A: sees the scenario, events and every character's
profile, and its own goals). Character 3, when a scenario has one, only appears in the profiles.

**Simulation**: the antagonist opens with "Hello", then each round is one protagonist and one antagonist turn, at
most 20 rounds, until a turn contains "GOOD BYE". Both agents at temperature 1. The messages are laid out as in
AutoGen's two-agent chat, which the authors used (Sec. 4.1): the agent's prompt as system message, then the
dialogue, nothing added (``dialogue_setup: user_first`` adds our earlier user turn before the antagonist's
"Hello"; prompts.DIALOGUE_SETUPS_NOTE). Every turn is one cached model
call (a ``ChatRequest`` holding the dialogue so far, through ``runner.run_requests``); all dialogues advance one
turn per step, so a killed run re-run with the same command replays every cached turn and continues. One overall
progress bar counts turns and judgements.

**Judges** (App. C.2, Tables 8A-11A verbatim, each given the cultural knowledge): cultural awareness 0/1,
commonsense knowledge 0/1, value knowledge 0/1, cultural behaviour 0-3 (scale as Table 11A prints it; Sec. 3.4
swaps 1 and 2, see ``facts/socialcc.json`` ``behaviour_scale_note``), at temperature 0, answers parsed by
``prompts.parse_score``; each judgement has a ``parse_status``.

**Models**: the judge must be named, in ``--config`` (JSON/YAML)::

    {"judge": {"model": "gpt-4o", "backend": "openai", "base_url": "http://..."},   # or "judge": "gpt-4o"
     "antagonist": {...},          # default: the judge model
     "stop": "paper",              # or "tolerant": also "Goodbye" / "good-bye" ends a dialogue (prompts)
     "max_rounds": 20, "agent_temperature": 1.0, "agent_max_tokens": 256,
     "judge_temperature": 0.0, "judge_max_tokens": 512,
     "zones": "country_iw_zones.csv",   # Country,Cultural_Region (relative to the config file)
     "dialogue_setup": "autogen",       # or "user_first" (prompts.DIALOGUE_SETUPS_NOTE)
     "event_stand_ins": true,           # Character 2's goals fill absent events (prompts.STAND_INS)
     "fig5_country": "commonsense"}     # or "value" (FIG5_GROUPINGS)

**Prompt fields**: each of Tables 6A-11A's fields is filled from the scenario row; an absent event gets Character
2's social goal of its number (STAND_INS), an absent commonsense item or third character leaves its line out.
Where each field came from is counted in metrics.json and run.json (``prompt_fields``).

Without a named judge ``evaluate`` stops with a one-line error before any model call (the evaluated model never
judges itself silently; naming it as the judge is allowed and recorded).

**Report**: Table 2 (``table2.png``: per model the mean of each judged score; ``behaviour_distribution.png``: the
behaviour score distribution), Fig. 5 (``by_country.png``: awareness and knowledge per country, the 21 countries
with most scenarios; the country of the commonsense item, FIG5_GROUPINGS, or with ``fig5_country: value`` of the
value item), Fig. 6 (``by_value_topic_zone.png``: value knowledge per Table 4A topic x
Inglehart-Welzel group of the value country), Fig. 7 (``aware_without_knowledge.png``: the dialogues scored aware
but without commonsense knowledge, by commonsense topic and value topic); metrics.json. A scenario's zone is the
release's ``iw_zone`` (``build socialcc`` attaches it from ``RAW/inglehart_welzel/``), else the config's ``zones``
table, else "unknown"; ``score`` looks zones up the same way (by scenario id), keeping a transcript's own zone
where neither has one.

**Intervals** (issue #18, BOOTSTRAP_NOTE): every mean and percentage gets a 95% bootstrap interval over scenarios
(``<key>_ci``), per-country tables give sizes and flag countries under ``uncertainty.MIN_GROUP_SIZE`` dialogues
(``country_breakdown``), and ``model_differences`` pairs models over the scenarios both were judged on, Holm over
pairs x dimensions. ``COMPARE`` is this benchmark's entry for ``culturebench compare``.

The package, one module per role: ``prompts`` (the agents' and judges' prompts, the judge-score parser),
``config`` (the JSON/YAML options: judge, antagonist, stop rule, rounds, zones, Fig. 5 grouping), ``items`` (the
release's scenarios as the dialogues' setups), ``dialogue`` (the simulated dialogues and their judging), ``metrics``
(Table 2, Figs. 5-7 and the intervals: metrics.json), ``plots``, ``run`` (``evaluate``, ``score`` and the command
line's ``cli_*``) and ``compare`` (``COMPARE``).
"""

from culturebench.evaluate.socialcc.config import Config, load_config
from culturebench.evaluate.socialcc.items import release_tables, scenarios_from
from culturebench.evaluate.socialcc.dialogue import OverallProgress, simulate
from culturebench.evaluate.socialcc.metrics import NO_COMMONSENSE_COUNTRY, aggregate, model_differences
from culturebench.evaluate.socialcc.plots import PLOTS, fig5_countries
from culturebench.evaluate.socialcc.run import cli_check, cli_evaluate, cli_score, evaluate, summary
from culturebench.evaluate.socialcc.compare import COMPARE

__all__ = [
    "COMPARE", "Config", "NO_COMMONSENSE_COUNTRY", "OverallProgress", "PLOTS", "aggregate", "cli_check", "cli_evaluate",
    "cli_score", "evaluate", "fig5_countries", "load_config", "model_differences", "release_tables", "scenarios_from",
    "simulate", "summary"]
