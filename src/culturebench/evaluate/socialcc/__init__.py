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

**Options** (``SocialCCOptions``: flags of ``culturebench evaluate socialcc`` and keys of its ``--config``
JSON/YAML alike; ``judge`` and ``antagonist`` are config keys only)::

    {"judge": {"model": "gpt-4o", "backend": "openai", "base_url": "http://..."},   # or "judge": "gpt-4o"
     "antagonist": {...},          # default: the judge model
     "stop": "paper",              # or "tolerant": also "Goodbye" / "good-bye" ends a dialogue (prompts)
     "max_rounds": 20, "agent_temperature": 1.0, "agent_max_tokens": 256,
     "judge_temperature": 0.0, "judge_max_tokens": 512,
     "zones": "country_iw_zones.csv",   # Country,Cultural_Region (relative to the config file)
     "dialogue_setup": "autogen",       # or "user_first" (prompts.DIALOGUE_SETUPS_NOTE)
     "event_stand_ins": true,           # Character 2's goals fill absent events (prompts.STAND_INS)
     "fig5_country": "commonsense"}     # or "value" (FIG5_GROUPINGS)

The judge must be named: in the config, or as the ``judge`` role of ``evaluate`` (``roles``: inspect's
``--model-role judge=...``, which also plays the antagonist unless an ``antagonist`` role or config key is given).

**Prompt fields**: each of Tables 6A-11A's fields is filled from the scenario row; an absent event gets Character
2's social goal of its number (STAND_INS), an absent commonsense item or third character leaves its line out.
Where each field came from is counted in metrics.json and run.json (``prompt_fields``).

Without a named judge ``evaluate`` stops with a one-line error before any model call (the evaluated model never
judges itself silently; naming it as the judge is allowed and recorded). ``score`` with a judge judges the saved
transcripts again; without one it re-aggregates their saved judgements.

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
``config`` (the run's settings made from the options: judge, antagonist, stop rule, rounds, zones, Fig. 5 grouping),
``items`` (the release's scenarios as the dialogues' setups), ``dialogue`` (the simulated dialogues, their
transcripts and their judging), ``parsing`` (transcripts.jsonl read, zones looked up, judgements parsed again),
``metrics`` (Table 2, Figs. 5-7 and the intervals: metrics.json), ``plots``, ``run`` (the engine's
hooks, ``SocialCCHooks``) and ``compare`` (``COMPARE``). ``BENCHMARK`` below is its entry of
:mod:`culturebench.registry` (the contract of :mod:`culturebench.contract`); this module imports nothing heavy, its
functions load on first use. SocialCC has no ``plan``: each turn's request holds the dialogue so far, so the
requests depend on the model's answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from culturebench.contract import RAI_FACTS, Benchmark, lazy_exports
from culturebench.options import Options, option
from culturebench.evaluate.runs import engine
from culturebench.errors import InputError
from culturebench.evaluate.runs.variants import DEFAULT, checked_variants, variants_option

STOP_RULES = ("paper", "tolerant")
"""How a turn ends the dialogue (``prompts.STOP_PATTERNS``): paper (the printed "GOOD BYE", the default) or tolerant
(ours: also "Goodbye" / "good-bye")."""
DIALOGUE_SETUPS = ("autogen", "user_first")
"""How the agents' chat messages are laid out (``prompts.DIALOGUE_SETUPS_NOTE``); autogen is the default."""
FIG5_GROUPINGS = {
    "commonsense": "the country of the scenario's commonsense item (Cultural Atlas): Fig. 5 plots cultural awareness "
                   "and commonsense knowledge, which are about that item (Steps 1-2 of Sec. 3.3), and Sec. 5.1 "
                   "discusses Croatia, which is a Cultural Atlas country but not one of the 60 value countries of "
                   "Table 3A",
    "value": "the country of the scenario's value item (ours, the earlier grouping; Table 3A's countries)",
}
"""``fig5_country``: what Fig. 5 groups dialogues by (default ``commonsense``)."""
NO_VARIANTS = ("the model under test converses in free text, its turns list no options to reorder, relabel or "
               "force; the judge's score format is the instrument, not the model tested")
"""Why socialcc defines no prompt variants (issue #63; docs/robustness.md)."""


@dataclass(frozen=True, kw_only=True)
class SocialCCOptions(Options):
    split: str | None = option(help="A split of the scenarios (default all).")
    limit: int | None = option(help="Evaluate N scenarios, spread over the value countries by --seed (the run says "
                                    "what it covers).")
    samples: int | None = option(help="1: one dialogue per scenario.")
    temperature: float | None = option(help="The agents' sampling temperature (default: agent_temperature, 1 as in "
                                             "Sec. 4.1).")
    max_tokens: int | None = option(help="Most tokens per agent turn (default: agent_max_tokens, 256).")
    judge: Any = option(cli=False, score=True,
                        help="The model that judges the dialogues (required by evaluate; the paper's is GPT-4o): a "
                             "name or {model, backend (openai or vllm), base_url, request_shape}; it also plays the "
                             "antagonist unless one is given. score: given, the transcripts are judged again; else "
                             "their saved judgements are re-aggregated.")
    antagonist: Any = option(cli=False, help="The model playing Character 1, as judge (default: the judge).")
    stop: str = option(STOP_RULES[0], choices=STOP_RULES,
                       help="What ends a dialogue: paper (a turn saying GOOD BYE, Tables 6A-7A) or tolerant (ours: "
                            "also Goodbye / good-bye).")
    max_rounds: int | None = option(help="Most rounds of a dialogue (default 20, Tables 6A-7A).")
    agent_temperature: float | None = option(cli=False, help="The agents' temperature (default 1, Sec. 4.1); "
                                                             "--temperature wins over it.")
    agent_max_tokens: int | None = option(cli=False, help="Most tokens per agent turn (default 256); --max-tokens "
                                                          "wins over it.")
    judge_temperature: float | None = option(score=True, help="The judges' temperature (default 0, Sec. 4.1; score: "
                                                              "when a judge judges again).")
    judge_max_tokens: int | None = option(score=True, help="Most tokens per judgement (default 512; score: when a "
                                                           "judge judges again).")
    zones: Path | None = option(cli=False, score=True,
                                help="CSV of Country,Cultural_Region (relative to the config file): Fig. 6's "
                                     "Inglehart-Welzel group of the value countries the release gives none.")
    dialogue_setup: str = option(DIALOGUE_SETUPS[0], choices=DIALOGUE_SETUPS,
                                 help="How the agents' messages are laid out: autogen (as AutoGen's two-agent chat "
                                      "the authors ran) or user_first (ours: a user turn before the antagonist's "
                                      "Hello, for chat templates that need one).")
    event_stand_ins: bool = option(True, flag="--event-stand-ins/--no-event-stand-ins",
                                   help="Character 2's social goals stand in for events a scenario lacks (default), "
                                        "or their lines are left out.")
    fig5_country: str = option(tuple(FIG5_GROUPINGS)[0], choices=tuple(FIG5_GROUPINGS), score=True,
                               help="What Fig. 5 groups dialogues by: commonsense (the country of the commonsense "
                                    "item, the paper's) or value (the value item's country).")
    variants: tuple[str, ...] = variants_option()

    def check(self) -> None:
        checked_variants(self.variants, (DEFAULT,), "socialcc", NO_VARIANTS)
        if self.samples not in (None, 1):
            raise InputError(f"socialcc plays one dialogue per scenario; --samples must be 1, got {self.samples}")
        for key in ("max_rounds", "agent_max_tokens", "judge_max_tokens"):
            value = getattr(self, key)
            if value is not None and value < 1:
                raise InputError(f"{key} must be a whole number >= 1, got {value!r}", file=self.config_file,
                                 column=key)
        for key in ("agent_temperature", "judge_temperature"):
            value = getattr(self, key)
            if value is not None and value < 0:
                raise InputError(f"{key} must be a number >= 0, got {value!r}", file=self.config_file, column=key)
        from culturebench.evaluate.socialcc.config import model_spec

        for key in ("judge", "antagonist"):
            if getattr(self, key) is not None:
                model_spec(getattr(self, key), key, self.config_file)

    def zones_file(self) -> Path | None:
        """The ``zones`` table, a relative path read from the config file's folder."""
        if self.zones is None or self.zones.is_absolute() or self.config_file is None:
            return self.zones
        return self.config_file.parent / self.zones


class SocialCC(Benchmark):
    name = "socialcc"
    title = "SocialCC (Wu et al., ACL 2025)"
    description = ("multi-turn dialogues against an antagonist, four judges (Tables 6A-11A; the judge model is the "
                   "--config key judge, which evaluate requires); Table 2's means, Figs. 5-7")
    Options = SocialCCOptions
    responses_help = ("transcripts.jsonl of `evaluate`; several comma-separated files (one or more models) are "
                      "scored together: paired model differences.")
    roles = ("judge", "antagonist")

    has_plan = False
    rai_facts_file = RAI_FACTS / "socialcc.json"

    def hooks(self):
        from culturebench.evaluate.socialcc.run import SocialCCHooks

        return SocialCCHooks()

    def comparison(self):
        from culturebench.evaluate.socialcc.compare import COMPARE

        return COMPARE

    def builder_module(self):
        from culturebench.builders import socialcc

        return socialcc

    def schemas_module(self):
        from culturebench.schemas import socialcc

        return socialcc

    def check(self, options):
        """The zones table, a named judge and the release's scenarios (no plan: the requests depend on the model's
        answers)."""
        from culturebench.evaluate.socialcc.run import checked_inputs
        checked_inputs(options)

    def headline(self, metrics, options):
        """Table 2 of the one model: the mean of each judge's scores (awareness, commonsense, value, behaviour)."""
        (model,) = metrics["per_model"].values()
        table = model["table2"]
        return {judge: float(table[judge]) for judge in self.headline_names(options) if table[judge] is not None}

    def headline_names(self, options):
        from culturebench.evaluate.socialcc.prompts import JUDGES
        return JUDGES

    def countries(self, metrics, release=None):
        """The value judge's mean score per scenario country (Table 2's value column, per country), with its
        bootstrap interval; scenarios without a country left out."""
        from culturebench.evaluate.reports.countries import from_named
        from culturebench.evaluate.socialcc.metrics import NO_COMMONSENSE_COUNTRY

        name, model = next(iter(metrics["per_model"].items()))
        rows = [(r["group"], r["estimate"], [r["low"], r["high"]] if r.get("low") is not None else None, r["n"])
                for r in (model.get("country_breakdown") or {}).get("value", []) if r["group"] != NO_COMMONSENSE_COUNTRY]
        return from_named(rows, benchmark=self.name, measure="value", model=name, measures={
            "value": "the value judge's mean score of the model's dialogues set in the country (Table 2's value, "
                     "per country; bootstrap over dialogues)"}) if rows else None


BENCHMARK = SocialCC()
evaluate = partial(engine.run, BENCHMARK)
"""``evaluate(backend, options)``: the engine's run of this benchmark (``evaluate.runs.engine.run``)."""

def _submodules() -> dict:
    """The submodules holding the names below, imported on the first use of one."""
    from culturebench.evaluate.socialcc import compare, config, dialogue, items, metrics, plots

    return {"compare": compare, "config": config, "dialogue": dialogue, "items": items, "metrics": metrics,
            "plots": plots}


__getattr__, __dir__ = lazy_exports(__name__, _submodules, {
    "Config": "config", "config_from": "config", "release_tables": "items", "scenarios_from": "items",
    "OverallProgress": "dialogue", "simulate": "dialogue", "NO_COMMONSENSE_COUNTRY": "metrics",
    "aggregate": "metrics", "model_differences": "metrics", "PLOTS": "plots", "fig5_countries": "plots",
    "COMPARE": "compare"})
