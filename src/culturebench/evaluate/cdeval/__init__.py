"""CDEval evaluation and scoring (Wang et al. 2024, arXiv 2311.16421, Sec. 3.2.2, Sec. 4, App. A.3):
``culturebench evaluate cdeval`` and ``culturebench score cdeval``.

``evaluate`` asks a model the six prompts of Table 8 (``prompts``) for every question of a CDEval release,
``R`` samples each at temperature 1, streamed from a generator through ``run_steps.stream_records``
(``runner.stream_requests`` with a response cache in the run folder, each batch's records appended to
responses.jsonl as it is answered), and writes responses.jsonl, metrics.json, the plots and run.json. ``score``
recomputes everything from one or more responses.jsonl files (several models, or language variants of one: the
between-model similarities and the PCA).

The computation is a chain of pure functions from tables to tables (polars), one per equation of the paper:

- Eq. 1 (``prompt_likelihood``): P(g|s_t) = (1/R) sum_k 1[a_tk = g], a neutral answer counting 0.5 (App. A.3.1).
- Eq. 6 (``instability``): U_t = sum_x sum_k 1[a_tk^norm != a_tk^reverse], a count over questions x and sample
  indices k of the norm / reverse answers to template t that disagree (the answer as the orientation it picks:
  target, other, or neutral). Eq. 6 prints a sum over t inside U_t as well; U_t is per template, so we read it
  as over x and k only.
- Eq. 7 (``template_weights``): w_t^norm = w_t^reverse = 1/2 exp(U_t/N) / sum_t' exp(U_t'/N), N = -1000; the
  per-template weight w_t^norm + w_t^reverse is Table 4's.
- Eq. 2 (``orientation_likelihood``): P(g|S) = sum over the six prompts of w_t P(g|s_t).
- Table 2 / Table 9 (``domain_likelihood``): the mean P(g|S) per dimension and domain.
- Eq. 3 (``country_similarity``): Sim = 1 / (1 + sqrt(sum_d (beta C_h,d - C_m,d)^2)) over the six dimensions,
  beta = 0.01, C_m,d the mean P(g|S) over the dimension's questions (``dimension_likelihood``). A country or a
  model without all six dimensions is left out and listed with what it lacks.
- Eq. 4 (``model_similarity``): 1 / (1 + sqrt(sum_d (C_a,d - C_b,d)^2)); Eq. 5 (``pairwise_baseline``): the mean
  of Eq. 4 over the n(n-1) ordered pairs of models.
- Sec. 4.4 (``group_similarity``): Eq. 3 against the mean six-dimension vector of each country group (the Hofstede
  table's optional ``group`` column). Fig. 6 (right, ``pca_points``): PCA of models and countries on Eq. 3's scale.
- Sec. 4.2 (language variants): a responses record may carry ``language``; each (model, language) is scored as
  its own respondent, labelled ``model [language]`` (Fig. 4: likelihoods and Eq. 3 similarities per language).
  ``evaluate`` on a release built from a translated questionnaire (its manifest's ``language``, see
  ``culturebench generate cdeval_translate``) writes that language into every record.
- Intervals (issue #18, ``bootstrap_scores``): a bootstrap over questions within each dimension recomputes the
  chain above (Eq. 7 weights included) on each resample; paired model differences with Holm-adjusted p-values.
  ``COMPARE`` is this benchmark's entry for ``culturebench compare``.

The package, one module per role: ``prompts`` (Table 8's prompts and the answer extraction), ``items`` (the
release's tables and the planned requests), ``parsing`` (responses.jsonl read and each answer scored),
``measures`` (Eq. 1-7 and Sec. 4.4 as table functions), ``intervals`` (the bootstrap), ``metrics``
(metrics.json), ``plots``, ``run`` (the engine's hooks, ``CDEvalHooks``) and ``compare``
(``COMPARE``). ``BENCHMARK`` below is its entry of :mod:`culturebench.registry` (the contract of
:mod:`culturebench.contract`); this module imports nothing heavy, its functions load on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from culturebench.contract import (
    RAI_FACTS, Benchmark, Generator, HarnessTask, NoCountryView, OptionScoring, lazy_exports)
from culturebench.options import Options, option
from culturebench.evaluate.runs import engine
from culturebench.evaluate.runs.paraphrases import PARAPHRASE
from culturebench.evaluate.runs.variants import ORDER_VARIANTS, checked_variants, variants_option

REPEAT_RULES = ("nearest", "similar_only")
"""How a Repeat answer is read (``prompts.extract_repeat``): nearest option whatever the distance (App. A.3.1, the
default) or only an option near enough (ours)."""


@dataclass(frozen=True, kw_only=True)
class CDEvalOptions(Options):
    limit: int | None = option(help="Evaluate N questions, spread over dimension x domain by --seed (the run says "
                                    "what it covers).")
    samples: int | None = option(help="Samples R per prompt (default 5, App. A.3; the paper uses 1-5).")
    temperature: float | None = option(help="Sampling temperature (default 1, App. A.3).")
    max_tokens: int | None = option(help="Most tokens per answer (default 128).")
    repeat_rule: str = option(REPEAT_RULES[0], choices=REPEAT_RULES, score=True,
                              help="How a Repeat answer is read: nearest (the paper: the option nearest by edit "
                                   "distance, App. A.3.1) or similar_only (ours: an answer near neither option is "
                                   "not a choice).")
    variants: tuple[str, ...] = variants_option()

    def check(self) -> None:
        object.__setattr__(self, "variants", checked_variants(self.variants, (*ORDER_VARIANTS, PARAPHRASE), "cdeval"))


def cdeval_generator() -> Generator:
    """The generator of ``culturebench generate cdeval``, imported when the task is asked for."""
    from culturebench.generation.cdeval import GENERATOR

    return GENERATOR


def cdeval_translate_generator() -> Generator:
    """The generator of ``culturebench generate cdeval_translate``, imported when the task is asked for."""
    from culturebench.generation.cdeval_translate import GENERATOR

    return GENERATOR


def paraphrases_generator() -> Generator:
    """The generator of ``culturebench generate paraphrases cdeval`` (issue #63), imported when the task is asked
    for."""
    from culturebench.evaluate.cdeval.items import paraphrased
    from culturebench.generation.paraphrases import ParaphraseGenerator

    return ParaphraseGenerator("cdeval", paraphrased, "question")


class CDEval(Benchmark):
    name = "cdeval"
    title = "CDEval (Wang et al. 2024, arXiv 2311.16421)"
    description = ("the six Table 8 prompts per question; orientation likelihoods, template weights, country and "
                   "model similarities (Eq. 1-7), PCA")
    Options = CDEvalOptions
    build_imports = ("nltk.tokenize", "nltk.translate.bleu_score")  # ~1 s: nltk imports scipy.stats, sklearn
    generators = {"cdeval": cdeval_generator, "paraphrases": paraphrases_generator,
                  "cdeval_translate": cdeval_translate_generator}
    responses_help = ("responses.jsonl of `evaluate`; several comma-separated files (models, or language variants "
                      "of one) are scored together: between-model similarities and the PCA.")
    tasks = (HarnessTask("cdeval", "CDEval: the six Table 8 prompts per question; orientation likelihood per "
                         "Hofstede dimension (Eq. 3, Fig. 3)"),)

    rai_facts_file = RAI_FACTS / "cdeval.json"

    def hooks(self):
        from culturebench.evaluate.cdeval.run import CDEvalHooks

        return CDEvalHooks()

    def comparison(self):
        from culturebench.evaluate.cdeval.compare import COMPARE

        return COMPARE

    def builder_module(self):
        from culturebench.builders import cdeval

        return cdeval

    def schemas_module(self):
        from culturebench.schemas import cdeval

        return cdeval

    def headline(self, metrics, options):
        """The orientation likelihood per Hofstede dimension (Table 2, Fig. 3) of the one model."""
        (model,) = metrics["per_model"].values()
        return {f"likelihood_{d}": float(v) for d, v in model["dimension_likelihood"].items() if v is not None}

    def headline_names(self, options):
        from culturebench.evaluate.cdeval.items import DIMENSIONS
        return tuple(f"likelihood_{d}" for d in DIMENSIONS)

    def countries(self, metrics, release=None):
        """Eq. 3's similarity of the model's six-dimension orientation to each country's Hofstede scores (the
        metrics' ``country_similarity``), with its bootstrap interval."""
        from culturebench.evaluate.reports.countries import from_named

        name, model = next(iter(metrics["per_model"].items()))
        rows = [(r["country_name"] or r["country_code"], r["similarity"],
                 [r.get("similarity_low"), r.get("similarity_high")] if r.get("similarity_low") is not None else None,
                 None) for r in model.get("country_similarity") or []]
        if not rows:
            missing = model.get("missing_dimensions")
            raise NoCountryView(f"Eq. 3 needs all six dimensions; the run has no {', '.join(missing)}" if missing
                                else "the run's metrics hold no country similarity")
        return from_named(rows, benchmark=self.name, measure="similarity", model=name, measures={
            "similarity": "Eq. 3: 1 / (1 + ||beta C_h - model's orientation likelihoods||_2) over Hofstede's six "
                          "dimensions (bootstrap over questions)"})

    def option_scoring(self, options):
        from culturebench.evaluate.cdeval.prompts import read_option_token
        return OptionScoring(read_option_token, parsed_field="shown", group_field="dimension")


BENCHMARK = CDEval()
evaluate = partial(engine.run, BENCHMARK)
"""``evaluate(backend, options)``: the engine's run of this benchmark (``evaluate.runs.engine.run``)."""


def _submodules() -> dict:
    """The submodules holding the names below, imported on the first use of one."""
    from culturebench.evaluate.cdeval import compare, items, measures, metrics, parsing

    return {"compare": compare, "items": items, "measures": measures, "metrics": metrics, "parsing": parsing}


__getattr__, __dir__ = lazy_exports(__name__, _submodules, {
    "BETA": "items", "DIMENSIONS": "items", "DOMAINS": "items", "INSTABILITY_SCALE": "items",
    "normalise_hofstede": "items", "plan_requests": "items", "release_tables": "items",
    "score_answers": "parsing", "country_similarity": "measures", "country_vectors": "measures",
    "group_similarity": "measures", "instability": "measures", "model_similarity": "measures",
    "model_vectors": "measures", "orientation_likelihood": "measures", "pairwise_baseline": "measures",
    "prompt_likelihood": "measures", "template_weights": "measures", "score": "metrics",
    "score_responses": "metrics", "COMPARE": "compare"})
