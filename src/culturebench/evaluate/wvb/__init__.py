"""WorldValuesBench evaluation and scoring (Zhao et al. 2024, Sec. 3.2-3.5): ``culturebench evaluate wvb`` and
``culturebench score wvb``.

Scoring input: the paper's evaluate input, a TSV or CSV (delimiter sniffed) with columns QUESTION_ID,
PARTICIPANT_ID, SCORE, one model answer per row (or an ``evaluate`` run's responses). Human answers are joined from the release's ``examples`` by (participant_id,
question_id), whatever split they are in; only the participants present in the input are read (lazily). Per question,
the W1 distance between the human answers and the valid model answers of the covered rows (Sec. 3.2, Table 2; see
``measures``), its mean / std (Table 2's Mean row) and threshold curve (Fig. 3); the same per demographic group, and
two oracle baselines (Sec. 3.3): uniform and majority.

The majority baseline has two readings (``MAJORITY_DEFINITIONS``, facts/wvb.json ``evaluation.baselines``):
``pooled`` (default) predicts the most frequent of the question's scored human answers, which reproduces Table 2's
Majority column; ``per_group`` predicts each participant the most frequent answer of their probe group (continent x
urban/rural x education level), as Sec. 3.3's text says, and is 0.18 off Table 2 on average. Choose with
``--majority per_group`` (or ``--config``: ``{"majority": "per_group"}``); metrics.json names the one used
(``baselines.majority.definition``).

``culturebench evaluate wvb`` (``run``): builds the App. B prompts (``prompts``) for the probe or a split one at a
time (``run.WVBHooks.plan``, ``items.iter_requests``), runs them through ``runner.stream_requests`` in bounded batches
with a response cache in the run folder, appends each batch's parsed records to the responses file (responses.jsonl, or parquet shards
for a large run) and scores them from it with the same code (``score_answers``), writing run.json (``run_folder``).

The package, one module per role (this module re-exports their public names, loaded on first use): ``prompts``
(App. B's prompts and the answer parsing), ``items`` (the release, read lazily, the evaluated rows, the planned
requests and their records), ``parsing`` (answers read back and paired with the rows), ``measures`` (Sec. 3.2-3.3's
W1, threshold curve and oracle baselines as functions of answer counts), ``intervals`` (the bootstrap), ``metrics``
(metrics.json: ``score``, ``score_answers``), ``plots``, ``run`` (the engine's hooks, ``WVBHooks``) and ``compare`` (``COMPARE``). ``BENCHMARK`` below is its entry of :mod:`culturebench.registry` (the
contract of :mod:`culturebench.contract`); this module imports nothing heavy.

The country view (issue #56, ``opinions``): a run without demographics also compares the model's answer
distribution per question with each country's respondents (1 - JSD and 1 - W1 per country, bootstrap over
questions) into RUN_DIR/countries.json and its figures; ``--steer country`` asks each question again naming each
country, ``--reading verbalized`` asks for the distribution in words.

Intervals (issue #18, ``W1Bootstrap``, ``add_intervals``): a seeded bootstrap over participants within each question
recomputes every W1 statistic; metrics.json gets ``<key>_ci`` beside each value and ``group_breakdown``. ``COMPARE``
is this benchmark's entry for ``culturebench compare`` (runs re-scored and bootstrapped together: paired).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path

from culturebench.contract import (
    RAI_FACTS, Benchmark, Generator, HarnessTask, OptionScoring, lazy_exports, whole_number_option)
from culturebench.options import Options, option
from culturebench.evaluate.runs import engine
from culturebench.errors import InputError
from culturebench.evaluate.runs.variants import DEFAULT, checked_variants, variants_option

SPLITS = ("probe", "train", "validation", "test")
"""``--split``: the probe (the ``probe`` config, Sec. 3.1) or every example of a split of the ``examples`` config."""
PROTOCOLS = ("wvb", "liu2025")
"""``--protocol``: how the questions are asked without demographics: WVB's App. B prompts (issue #56), or as Liu,
Kaneko and Chu 2025 asked (issue #61, ``liu2025``: their prompts, questions and parser, read from their
repository)."""
STEER = ("country", "persona", "few-shot", "language", "language-persona", "language-few-shot")
"""``--steer``: ``country`` asks each question again per country of the release, the question naming it (Durmus et
al.'s cross-national prompting, issue #56); the others are Liu et al.'s five methods (``--protocol liu2025``,
``liu2025.STEER_METHODS``)."""
READINGS = ("samples", "verbalized")
"""``--reading``: the model's answer distribution per question from sampled answers (default; or from the options'
probabilities with ``--scoring logprobs``), or the distribution it states in words (Liu, Kaneko and Chu 2025)."""
COUNTRY_INTERVALS = ("two_stage", "questions")
"""``--country-intervals`` (``reference_points.INTERVALS``; not imported: that module imports numpy and polars)."""
WEIGHTS = ("design", "none")
"""``--weights``: a country's answers weighted by W_WEIGHT (design) or each respondent counted once (none)."""
MAJORITY_DEFINITIONS = ("pooled", "per_group")
"""Readings of the majority baseline (see the module docstring); the first is the default."""
VARIANTS = (DEFAULT, "reversed")
"""The prompt variants WVB defines (issue #63): ``reversed`` lists a question's ordinal scale from its other end, the
codes kept (``prompts.reversed_scale``)."""
_PROMPTS = json.loads(resources.files("culturebench.facts").joinpath("wvb.json").read_text(encoding="utf-8"))[
    "evaluation"]["prompts"]  # read here, not through builders.wvb.facts, which imports polars
FAMILIES = tuple(_PROMPTS["with_demographics"])
"""The model families App. B gives prompts for: alpaca, vicuna, mixtral, gpt-3.5 (``--prompt-family``)."""
DEFAULT_FAMILY = _PROMPTS["default_family"]
"""gpt-3.5, for any model (the paper has no rule for other models: ours)."""


@dataclass(frozen=True, kw_only=True)
class WVBOptions(Options):
    split: str = option(SPLITS[0], choices=SPLITS,
                        help="What to evaluate: the probe (Sec. 3.1) or every example of a split.")
    limit: int | None = option(help="Evaluate N rows, spread over the questions by --seed (the run says what it "
                                    "covers).")
    samples: int | None = option(help="Samples per question without demographics (default: its number of human "
                                      "answers), per row with them (default 1).")
    temperature: float | None = option(help="Sampling temperature (default: the paper's, 0 with demographics, 0.7 "
                                            "without).")
    max_tokens: int | None = option(help="Most tokens per answer (default 256, ours: the paper is silent).")
    demographics: bool = option(True, flag="--demographics/--no-demographics",
                                help="Give the participant's country, urban/rural and education (default), or let "
                                     "the model assume them.")
    protocol: str = option(PROTOCOLS[0], choices=PROTOCOLS,
                           help="Without demographics: ask with WVB's App. B prompts (wvb), or as Liu, Kaneko and "
                                "Chu 2025 asked (liu2025: their system message, instruction, five examples, "
                                "questions and parser, read from their repository, see --liu-repo; temperature 0).")
    liu_repo: Path | None = option(help="--protocol liu2025: the user's copy of Liu et al.'s repository "
                                        "(nlply/global-opinion-alignment). Default: raw/liu2025.")
    translations: Path | None = option(help="--protocol liu2025: a folder of WV7_<Language>.jsonl questionnaires "
                                            "in their shape (e.g. from generate wvb_translate), read before their "
                                            "dataset/questions/ for the language methods (with "
                                            "WV7_<Language>.prompts.json: for countries outside their ten).")
    steer: str | None = option(None, choices=STEER,
                               help="Without demographics: ask each question again for every country of the "
                                    "release (or --steer-countries), the prompt naming it; countries.json gets the "
                                    "steering gain and specificity. country: the question prefixed with the "
                                    "country (cross-national prompting); persona, few-shot, language, "
                                    "language-persona, language-few-shot: Liu et al.'s methods (--protocol "
                                    "liu2025).")
    steer_countries: tuple[str, ...] | None = option(
        help="Steer to these countries only (comma-separated ISO alpha-3 codes of the release's countries).")
    weights: str | None = option(None, choices=WEIGHTS, score=True,
                                 help="Without demographics: a country's respondents weighted by WVS-7's design "
                                      "weight W_WEIGHT where every one has it (design, the default of evaluate), "
                                      "or each counted once (none: Liu, Kaneko and Chu 2025, the default when "
                                      "scoring their released outputs).")
    raw: Path = option(Path("raw"), score=True, evaluate=False,
                       help="Scoring Liu, Kaneko and Chu's results.csv: the raw folder holding the WVS-7 files the "
                            "release was built from (wvs/...; their protocol counts the survey's own codes).")
    liu_baseline: Path | None = option(None, score=True, evaluate=False,
                                       help="Scoring their RQ2 or sensitivity results.csv: the same model's RQ1 "
                                            "results.csv (default: results/RQ1/MODEL/results.csv of their tree).")
    reading: str = option(READINGS[0], choices=READINGS,
                          help="Without demographics: the model's answer distribution from sampled answers, or "
                               "the distribution it states when asked for one (verbalized).")
    country_intervals: str = option(COUNTRY_INTERVALS[0], choices=COUNTRY_INTERVALS, score=True,
                                    help="Without demographics: the country view's intervals resample the "
                                         "respondents within each country, the model's samples and the questions "
                                         "(two_stage), or the questions only.")
    prompt_family: str = option(DEFAULT_FAMILY, choices=FAMILIES,
                                help="Whose App. B prompts (Figs. 5-10); the default serves any other model (the "
                                     "paper has no rule for them).")
    majority: str = option(MAJORITY_DEFINITIONS[0], choices=MAJORITY_DEFINITIONS, score=True,
                           help="The majority baseline (Sec. 3.3): pooled, the question's most frequent human "
                                "answer (reproduces Table 2), or per_group, each probe group's (the text's reading).")
    drop_out_of_scale: bool = option(False, score=True,
                                     help="A whole-number answer off the question's scale is invalid (left out). "
                                          "Default: scored as given, rescaled like any other, as the authors' "
                                          "evaluate.py does.")
    drop_non_integer: bool = option(False, score=True,
                                    help="An answer that is not a whole number (2.6) is invalid (left out). "
                                         "Default: truncated toward zero (2), as the authors' evaluate.py does "
                                         "(astype(int)).")
    variants: tuple[str, ...] = variants_option()

    def check(self) -> None:
        object.__setattr__(self, "variants", checked_variants(self.variants, VARIANTS, "wvb"))
        if len(self.variants) > 1 and (self.protocol != PROTOCOLS[0] or self.steer or self.reading != READINGS[0]):
            flag = ("--protocol liu2025" if self.protocol != PROTOCOLS[0] else "--steer" if self.steer
                    else f"--reading {self.reading}")
            raise InputError(f"--variants asks App. B's prompts again, one answer each: leave out {flag}",
                             file=self.config_file, column="variants")
        if self.demographics and (self.steer or self.reading != READINGS[0] or self.protocol != PROTOCOLS[0]):
            flag = (f"--steer {self.steer}" if self.steer else f"--reading {self.reading}"
                    if self.reading != READINGS[0] else f"--protocol {self.protocol}")
            raise InputError(f"{flag} asks the questions without a persona: add --no-demographics",
                             file=self.config_file)
        liu = self.protocol == "liu2025"
        if self.steer and (self.steer != STEER[0]) != liu:
            raise InputError(f"--steer {self.steer} is " + (
                "cross-national prompting, of --protocol wvb" if liu else "Liu et al.'s: add --protocol liu2025"),
                file=self.config_file, column="steer")
        if liu and self.reading != READINGS[0]:
            raise InputError("--protocol liu2025 reads the distribution the model states, as theirs does: leave "
                             "--reading out", file=self.config_file, column="reading")
        if self.steer_countries is not None and not self.steer:
            raise InputError("--steer-countries names the countries of --steer: add --steer", file=self.config_file,
                             column="steer_countries")


def wvb_translate_generator() -> Generator:
    """The generator of ``culturebench generate wvb_translate``, imported when the task is asked for."""
    from culturebench.generation.wvb_translate import GENERATOR

    return GENERATOR


class WVB(Benchmark):
    name = "wvb"
    title = "WorldValuesBench (Zhao et al. 2024, LREC-COLING 2024)"
    description = ("App. B's prompts for the probe or a split, with or without demographics; W1 per question, its "
                   "mean and std (Table 2), threshold curve (Fig. 3), per group, oracle baselines")
    Options = WVBOptions
    generators = {"wvb_translate": wvb_translate_generator}
    responses_help = ("responses.jsonl of `evaluate` (or the RUN_DIR/responses folder of parquet shards of a run "
                      "above 50,000 requests), or TSV or CSV with QUESTION_ID, PARTICIPANT_ID, SCORE (delimiter "
                      "sniffed), or a results.csv of Liu, Kaneko and Chu 2025 (id, choice_keys, response: their "
                      "RQ1, RQ2 or sensitivity outputs), scored per country under their protocol (docs/opinions.md).")
    tasks = (HarnessTask("wvb", "WorldValuesBench with demographics (Figs. 5-8, temperature 0); mean W1 (Table 2)",
                         {"demographics": True}),
             HarnessTask("wvb_no_demographics", "WorldValuesBench without demographics (Figs. 9-10, temperature "
                         "0.7, oversampled); mean W1 (Table 2)", {"demographics": False}))
    lower_is_better = frozenset({"mean_w1", "std_w1"})

    rai_facts_file = RAI_FACTS / "wvb.json"

    def hooks(self):
        from culturebench.evaluate.wvb.run import WVBHooks

        return WVBHooks()

    def comparison(self):
        from culturebench.evaluate.wvb.compare import COMPARE

        return COMPARE

    def builder_module(self):
        from culturebench.builders import wvb

        return wvb

    def schemas_module(self):
        from culturebench.schemas import wvb

        return wvb

    def check(self, options):
        """The release is a WVB release: its manifest only (a split's rows, millions, are read once, by
        ``evaluate``)."""
        from culturebench.evaluate.wvb.items import check_inputs
        check_inputs(options.release, options.split, options.limit)

    def headline(self, metrics, options):
        """Mean and std over questions of the per-question W1 (Table 2)."""
        values = {"mean_w1": metrics["mean"], "std_w1": metrics["std"]}
        return {name: float(value) for name, value in values.items() if value is not None}

    def headline_names(self, options):
        return ("mean_w1", "std_w1")

    def option_scoring(self, options):
        return OptionScoring(whole_number_option, parsed_field="answer", group_field="question_id")


BENCHMARK = WVB()
evaluate = partial(engine.run, BENCHMARK)
"""``evaluate(backend, options)``: the engine's run of this benchmark (``evaluate.runs.engine.run``)."""

def _submodules() -> dict:
    """The submodules holding the names below, imported on the first use of one."""
    from culturebench.evaluate.wvb import compare, intervals, items, measures, metrics, parsing, plots

    return {"compare": compare, "intervals": intervals, "items": items, "measures": measures, "metrics": metrics,
            "parsing": parsing, "plots": plots}


__getattr__, __dir__ = lazy_exports(__name__, _submodules, {
    **dict.fromkeys(("check_inputs", "evaluation_rows", "limited_rows", "PROBE_DIMENSIONS", "prompt_tables",
                     "question_order", "release_routes", "release_rows", "iter_requests", "parse_records",
                     "plan_requests", "PlannedRequest", "request_count", "request_sampling", "response_schema"),
                    "items"),
    **dict.fromkeys(("ANSWER_COLUMNS", "answers_frame", "COLUMNS", "DELIMITERS", "evaluate_answers", "scan_answers",
                     "read_responses", "sniff_delimiter"), "parsing"),
    **dict.fromkeys(("add_intervals", "bootstrap_intervals", "BOOTSTRAP_NOTE", "DIFFERENCE_KINDS", "GROUP_COLUMNS",
                     "group_sizes", "PatternRows", "W1Bootstrap"), "intervals"),
    **dict.fromkeys(("AnswerCounts", "out_of_scale_report", "ScoreResult"), "measures"),
    **dict.fromkeys(("score", "score_answers"), "metrics"),
    **dict.fromkeys(("histograms_png", "MAX_HISTOGRAMS", "threshold_curve_png", "write_run"), "plots"),
    **dict.fromkeys(("COMPARE", "compare_runs", "comparison_tables", "GROUP_TABLES", "groups_png",
                     "REPORT_THRESHOLDS", "run_answers", "threshold_curves_png"), "compare")})
