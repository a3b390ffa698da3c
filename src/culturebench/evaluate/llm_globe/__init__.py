"""LLM-GLOBE evaluation and scoring (Karinshak et al. 2024, arXiv 2411.06032, Sec. 4, App. B):
``culturebench evaluate llm_globe`` and ``culturebench score llm_globe``.

**Closed prompts** (Tables 2-3): each prompt asked ``CLOSED_SAMPLES`` = 3 times at temperature 1.0; the whole number
1-7 is read (``prompts.parse_rating``: an invalid answer is recorded with its parse_status, never
guessed); the release's ``reverse`` items are turned around (8 - x: on Sec. 3.1.1's scale 1 = strongly agree, so an
item whose agreement means high on its dimension is reverse) so that 7 is high on the dimension; per model and
dimension the mean and SD; one-sample t-tests (``scipy.stats.ttest_1samp``) of a group's values against the GLOBE
2004 score of a chosen society (societal "values" and "practices", from the release's ``globe_2004`` config), in
the unit the printed numbers imply (``T_UNITS``: one value per prompt, the mean of the group's models and samples;
``t_unit: pooled`` makes every answer a value).

**Open prompts** (Tables 4-5, Fig. 2-3): one answer per prompt and language at temperature 1.0, capped at 100
tokens. LLMs-as-a-Jury: every juror (any backend) rates every answer with the juror prompt (rubric in the juror's
language, question and answer in the original language) on 1-7. The jury score is the least-squares combination

    S(x) = sum_j w_j J_j(x) + w_L L(x) + b        (L = 1 for a zh-CN prompt, 0 for English)

fitted on a file of human ratings (response id, human score) with a seeded 2:1 train/test split; MAE, MSE, RMSE and
R^2 on the test part (the paper: MAE 0.638, R^2 0.882). Without human ratings the weights can be given in the
config (``jury_weights``); without either, S is the plain mean of the jurors (reported as such). Then per model
and dimension mean/SD; group means and t-tests on one value per prompt and model (Tables 4-5); per dimension a
Friedman test across models (blocks: the prompts, each model's score averaged over its samples and whatever
language it answered in, so US models answering in English and Chinese models in Chinese share blocks; needs >= 3
models) with post-hoc pairwise Wilcoxon signed-rank tests (Holm-adjusted too; p-value heatmap
``wilcoxon_PART.png``, Fig. 2, not drawn for a single model); two-sample t-tests between two model groups (e.g. US
vs CN; Student's by default; Sec. 4.2.4's printed t values do not follow from Tables 4-5, ``GROUP_TTEST_NOTE``); a
radar plot of group (or model) means over the nine dimensions (``radar_PART.png``,
Fig. 3).

**Intervals** (issue #18, ``prompt_bootstrap``): every mean of Tables 2-5 (per model and per group, each part) gets
a 95% interval from a seeded bootstrap over prompts, resampled within each dimension and shared by all models and
groups (``mean_ci`` and ``n_prompts`` beside ``mean``; BOOTSTRAP_NOTE); the point estimates are unchanged. The
group t-test rows get the difference of the group means with its interval, and ``model_differences`` lists every
pair of models per dimension with the paired difference, its interval and Fig. 2's tests. ``COMPARE`` is this
benchmark's entry for ``culturebench compare``.

**Options** (``LLMGlobeOptions`` below): ``--split``, ``--limit``, ``--samples``, ``--temperature``,
``--max-tokens`` and ``--seed`` as flags; the rest from a small JSON or YAML file given with ``--config`` (every
key optional; ``evaluate`` and ``score`` take the same file)::

    {"part": "closed" | "open" | "both",          # default "closed" (--split closed|open|both wins over it)
     "language": "en" | "zh" | "both",             # prompt languages (default "en")
     "samples": 3, "open_samples": 1, "open_max_tokens": 100,
     "jurors": [{"model": "m", "backend": "openai", "base_url": "http://...", "language": "en", "name": "m-en"}],
     "juror_temperature": 0.0, "juror_max_tokens": 8,
     "human_ratings": "ratings.csv",               # CSV/TSV/JSONL: response_id, human_score (relative to the config)
     "jury_weights": {"weights": {"m-en": 0.5}, "language": 0.1, "intercept": 0.2},   # instead of fitting
     "split_seed": 0, "test_fraction": 0.3333333333333333,
     "groups": {"US": ["gpt-4o"], "CN": ["qwen"]}, "compare": ["US", "CN"], "equal_var": true,
     "society": "United States" or "societies": {"US": "USA", "CN": "China"},
     "t_unit": "paper" | "pooled"}

``config.config_of`` turns them into the run's ``Config`` (jurors, groups, societies checked); every option, the
society names included, is checked against the release before the first model call.

``evaluate`` runs one model (and the jurors) through ``runner.run_requests`` with the run folder's response cache
and writes responses.jsonl (one record per closed answer, open answer and juror rating: raw text kept),
metrics.json, radar.png, wilcoxon.png and run.json. ``score`` recomputes every number from one or more
responses.jsonl files (comma-separated; several models give the across-model tests).

The package, one module per role: ``prompts`` (the closed and open prompts, the juror prompt and the answer
parsers), ``config`` (the run's ``Config`` from the options: parts, languages, jurors, groups, societies), ``items``
(the release's tables and the planned closed, open and juror requests), ``parsing`` (responses.jsonl and human
ratings read, closed answers scored), ``jury`` (the jury fitted and applied), ``measures`` (means, SDs, the GLOBE,
model and group tests), ``intervals`` (the bootstrap), ``metrics`` (metrics.json), ``plots``, ``run`` (the
engine's hooks, ``LLMGlobeHooks``) and ``compare`` (``COMPARE``). ``BENCHMARK`` below is its entry of
:mod:`culturebench.registry` (the contract of :mod:`culturebench.contract`); this module imports nothing heavy, its
functions load on first use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from culturebench.contract import (
    RAI_FACTS, Benchmark, Generator, HarnessTask, OptionScoring, lazy_exports, whole_number_option)
from culturebench.errors import InputError
from culturebench.options import Options, option
from culturebench.evaluate.runs import engine
from culturebench.evaluate.runs.variants import DEFAULT, checked_variants, variants_option

PARTS = ("closed", "open", "both")
"""What is evaluated: the closed prompts (Tables 2-3), the open prompts (Tables 4-5) or both."""
VARIANTS = (DEFAULT, "reversed")
"""The prompt variants LLM-GLOBE defines (issue #63): ``reversed`` lists a closed prompt's Likert anchors from 7 down
to 1, codes kept (``prompts.reversed_anchors``); the open prompts list no options (asked once, as the paper)."""


@dataclass(frozen=True, kw_only=True)
class LLMGlobeOptions(Options):
    split: str | None = option(choices=PARTS, help="closed (default), open or both (the config's part otherwise).")
    limit: int | None = option(help="Evaluate N prompts of each part, spread over the dimensions by --seed (the run "
                                    "says what it covers).")
    samples: int | None = option(score=True, help="Answers per closed prompt (default 3, Sec. 4).")
    temperature: float | None = option(help="Sampling temperature of the evaluated model (default 1, Sec. 4).")
    max_tokens: int | None = option(help="Most tokens per closed answer (default 16; open answers: open_max_tokens).")
    part: str = option("closed", cli=False, score=True, help="closed, open or both (--split wins over it).")
    language: str = option("en", cli=False, score=True, help="Prompt languages: en, zh or both.")
    open_samples: int | None = option(cli=False, score=True, help="Answers per open prompt (default 1, Sec. 4).")
    open_max_tokens: int | None = option(cli=False, score=True,
                                         help="Most tokens per open answer (default 100, Sec. 4).")
    jurors: Sequence[Mapping[str, Any] | str] | None = option(
        cli=False, score=True, help="The jury: a list of {model, backend (openai or vllm), base_url, language (en or "
                                    "zh), name} (see examples/llm_globe_jurors.yaml).")
    juror_temperature: float | None = option(cli=False, score=True, help="The jurors' temperature (default 0).")
    juror_max_tokens: int | None = option(cli=False, score=True, help="Most tokens per juror rating (default 8).")
    human_ratings: Path | None = option(cli=False, score=True,
                                        help="CSV/TSV/JSONL of response_id, human_score the jury is fitted on "
                                             "(relative to the config file).")
    jury_weights: Mapping[str, Any] | None = option(
        cli=False, score=True, help="{weights: {juror: w}, language: wL, intercept: b}: the jury's weights, "
                                    "instead of fitting them.")
    split_seed: int = option(0, cli=False, score=True, help="Seed of the jury's 2:1 train/test split.")
    test_fraction: float = option(1 / 3, cli=False, score=True, help="Share of the human ratings held out.")
    groups: Mapping[str, Sequence[str]] | None = option(
        cli=False, score=True, help="Group name -> its models (e.g. US, CN): group means and t-tests.")
    compare: Sequence[str] | None = option(cli=False, score=True,
                                           help="Two groups compared by two-sample t-tests (Sec. 4.2.4).")
    equal_var: bool = option(True, cli=False, score=True,
                             help="Student's t-test between the groups (false: Welch's).")
    society: str | None = option(cli=False, score=True,
                                 help="The GLOBE 2004 society every group is tested against.")
    societies: Mapping[str, str] | None = option(cli=False, score=True,
                                                 help="Group -> its GLOBE 2004 society (instead of society).")
    variants: tuple[str, ...] = variants_option()
    t_unit: str = option("paper", cli=False, score=True,
                         help="Unit of the t-tests: paper (Tables 2-5) or pooled (every answer a value).")

    @property
    def evaluated_part(self) -> str:
        """--split, else the config's part."""
        return self.split or self.part

    def check(self) -> None:
        from culturebench.evaluate.llm_globe.config import config_of

        object.__setattr__(self, "variants", checked_variants(self.variants, VARIANTS, "llm_globe"))
        if len(self.variants) > 1 and self.evaluated_part == "open":
            raise InputError("--variants reorders the closed prompts' Likert anchors; the open prompts list none: "
                             "add --split closed or both", file=self.config_file, column="variants")
        config_of(self)


def llm_globe_generator() -> Generator:
    """The generator of ``culturebench generate llm_globe``, imported when the task is asked for."""
    from culturebench.generation.llm_globe import GENERATOR

    return GENERATOR


class LLMGlobe(Benchmark):
    name = "llm_globe"
    title = "LLM-GLOBE (Karinshak et al. 2024, arXiv 2411.06032)"
    description = ("closed Likert prompts and open prompts rated by an LLM jury; mean per GLOBE dimension, t-tests "
                   "against GLOBE 2004, model and group tests (Tables 2-5, Fig. 2-3)")
    Options = LLMGlobeOptions
    generators = {"llm_globe": llm_globe_generator}
    responses_help = ("responses.jsonl of `evaluate`; several comma-separated files (one or more models) are scored "
                      "together: the model tests.")
    tasks = (HarnessTask("llm_globe_closed", "LLM-GLOBE closed-ended prompts, three answers each at temperature 1; "
                         "mean per GLOBE dimension (Tables 2-3)", {"split": "closed"}),
             HarnessTask("llm_globe_open", "LLM-GLOBE open-ended prompts rated by the LLM jury its config names "
                         "(App. B); jury-scored mean per GLOBE dimension (Tables 4-5)", {"split": "open"},
                         needs_config=True))

    rai_facts_file = RAI_FACTS / "llm_globe.json"

    def hooks(self):
        from culturebench.evaluate.llm_globe.run import LLMGlobeHooks

        return LLMGlobeHooks()

    def comparison(self):
        from culturebench.evaluate.llm_globe.compare import COMPARE

        return COMPARE

    def builder_module(self):
        from culturebench.builders import llm_globe

        return llm_globe

    def schemas_module(self):
        from culturebench.schemas import llm_globe

        return llm_globe

    def headline(self, metrics, options):
        """The closed (Tables 2-3) or jury-scored open (Tables 4-5) mean per GLOBE dimension of the one model."""
        (cells,) = metrics[self._headline_part(options)]["mean_sd"].values()
        return {f"mean_{d}": float(cell["mean"]) for d, cell in cells.items() if cell["mean"] is not None}

    def headline_names(self, options):
        from culturebench.evaluate.llm_globe.prompts import DIMENSIONS
        self._headline_part(options)
        return tuple(f"mean_{d}" for d in DIMENSIONS)

    def countries(self, metrics, release=None):
        """Euclidean distance between the model's mean per GLOBE dimension (closed prompts, else the jury-scored
        open ones) and each GLOBE 2004 society's nine societal values ("should be") scores, both on GLOBE's 1-7
        scale (lower: closer); ``distance_practices`` against the practices ("as is"). No interval: one distance of
        two mean vectors (metrics.json has each dimension's). None without the release's globe_2004 config."""
        from culturebench.evaluate.llm_globe.country_view import society_distances
        return society_distances(metrics, release)

    @staticmethod
    def _headline_part(options) -> str:
        part = options.evaluated_part
        if part not in ("closed", "open"):
            raise ValueError("LLM-GLOBE's headline is the mean per dimension of one part: closed or open")
        return part

    def option_scoring(self, options):
        if options.evaluated_part != "closed":
            return None
        return OptionScoring(whole_number_option, parsed_field="answer", group_field="dimension")


BENCHMARK = LLMGlobe()
evaluate = partial(engine.run, BENCHMARK)
"""``evaluate(backend, options)``: the engine's run of this benchmark (``evaluate.runs.engine.run``)."""


def _submodules() -> dict:
    """The submodules holding the names below, imported on the first use of one."""
    from culturebench.evaluate.llm_globe import compare, config, items, jury, measures, metrics, plots

    return {"compare": compare, "config": config, "items": items, "jury": jury, "measures": measures, "metrics": metrics, "plots": plots}


__getattr__, __dir__ = lazy_exports(__name__, _submodules, {
    "Config": "config", "config_of": "config", "release_tables": "items", "response_id": "items",
    "apply_jury": "jury", "fit_jury": "jury", "GROUP_TTEST_NOTE": "measures", "globe_ttests": "measures",
    "group_means": "measures", "score": "metrics", "score_records": "metrics", "write_run": "plots", "COMPARE": "compare"})
