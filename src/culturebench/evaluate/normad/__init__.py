"""NormAd evaluation and scoring (Rao et al., "NormAd: A Benchmark for Measuring the Cultural Adaptability of Large
Language Models", 2024, Sec. 3-5, App. A): ``culturebench evaluate normad`` and ``culturebench score normad``.

``evaluate`` asks a model, for every story of a NormAd release (config ``stories``), whether the story's action is
socially acceptable under each of five contexts (``prompts.CONTEXTS``: none, COUNTRY, VALUE, COUNTRY+VALUE,
RULE-OF-THUMB), options Yes / No / Neither, under a protocol (``PROTOCOLS``): by default as the authors' inference
script asked (its template per context, temperature 0, ``max_tokens`` 50: the protocol behind the published tables),
or with ``--protocol paper`` App. A.3 Fig. 9 (temperature 0, ``max_tokens`` 10),
streamed from a generator through ``run_steps.stream_records`` (``runner.stream_requests`` with a response cache in the run
folder, each batch's records appended to responses.jsonl as it is answered); it writes responses.jsonl, metrics.json,
the plots and run.json. ``score`` recomputes everything from one or more responses.jsonl files (re-parsing the raw
answers against the release's gold labels).

Metrics, per model and context (Sec. 4-5, App. A.4, Figs. 3, 5, 6, 10, 11, 13):

- accuracy over the three labels (Sec. 4, Fig. 3), and the accuracy over parsed answers only;
- per-label and macro precision / recall / F1 over yes / no / neutral (Table A.4; scikit-learn's definition with
  ``labels=LABELS``; 0/0 = 0);
- ``protocol``: how the answers were asked (``PROTOCOLS``; ``culturebench compare`` refuses runs of two protocols);
- ``answer_rule``: answers are read as the authors' ``run_model_inference.py`` reads them (``prompts.ANSWER_RULES``:
  "Yes" or a lower-cased "option 1", else "No" / "option 2", else "Neither" / "option 3", else the fallback Neither),
  or ours with ``--answer-rule strict``;
  ``n_read_differently`` counts the answers the other rule scores as another label;
- ``unparsed_share``: the share of answers that are not one clear Yes / No / Neither (parse status ambiguous,
  refusal or unparsed). ``UNPARSED_RULES``: by default such an answer is read as Neither (``neutral``), the authors'
  fallback, which Table A.4's rows of models that always land on Neither fit; ``wrong`` (``--unparsed-wrong``)
  counts it as no label (a miss for its gold label, a false positive for none);
- accuracy by Inglehart-Welzel cultural zone (Figs. 5, 10, 13), by subaxis (Sec. 5.3), by gold label (Figs. 6, 11)
  and by country (the paper plots no per-country figure: ours, to read the zone figures country by country), the
  distribution of predicted labels and the gold x predicted confusion counts.

Baseline, per model and context, on the same answers' stories: ``always_neither`` (Table A.4: the P / R / F1 of a
model that answers Neither to every story; 0.103 / 0.333 / 0.158 on the paper's label counts).

Intervals (issue #18, ``bootstrap_scores``): a bootstrap over stories, one resample of stories shared by every
model and context, recomputes accuracy, the accuracy over parsed answers and per-label / macro P / R / F1 from each
story's answer counts (so the point estimates are exactly the ones above), and the paired accuracy difference of
every two models per context on the stories both answered (Holm over the family). The breakdowns by zone, gold
label, subaxis and country get a per-group interval, size in stories and a ``small`` flag
(``uncertainty.group_breakdown``). ``COMPARE`` is this benchmark's entry for ``culturebench compare``.

The package, one module per role: ``prompts`` (App. A.3's prompt and the answer parser), ``items`` (the release's
stories and the planned requests), ``parsing`` (responses.jsonl read and each answer scored under the unparsed
rule), ``measures`` (accuracy and per-label / macro P / R / F1, the always-Neither baseline), ``intervals`` (the
bootstrap), ``metrics`` (metrics.json), ``plots``, ``run`` (the engine's hooks, ``NormAdHooks``) and
``compare`` (``COMPARE``). ``BENCHMARK`` below is its entry of :mod:`culturebench.registry` (the contract of
:mod:`culturebench.contract`); this module imports nothing heavy, its functions load on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from culturebench.contract import RAI_FACTS, Benchmark, Generator, HarnessTask, OpenColumns, OptionScoring, lazy_exports
from culturebench.options import Options, option
from culturebench.evaluate.runs import engine
from culturebench.errors import InputError
from culturebench.evaluate.runs.paraphrases import PARAPHRASE
from culturebench.evaluate.runs.variants import ORDER_VARIANTS, checked_variants, variants_option

VARIANTS = (*ORDER_VARIANTS, "letters")
"""The prompt variants NormAd defines (issue #63): its numbered options (Fig. 9: 1) Yes 2) No 3) Neither) reversed,
shuffled, or labelled A) B) C); the answer format stays the paper's (its third option, Neither, is the allowed
non-answer: a forced Yes / No would leave the neutral gold labels no right answer)."""
CONTEXTS = ("none", "country", "value", "country_value", "rot")
"""The contexts, from none to the most specific, in request order (``prompts.CONTEXT_NAMES`` names them)."""
PROTOCOLS = {
    "authors": "the authors' src/response_collection/run_model_inference.py (NormAd at 9ede851), the script behind "
               "the published tables: its template per context (lines 30-79, 270-291), one user message, "
               "temperature 0, max_tokens 50 (20 with --max-tokens-70b, as it asks of a '70b' model)",
    "paper": "App. A.3 Fig. 9 as printed, filled per context (no-context and COUNTRY+VALUE prompts ours), one user "
             "message, temperature 0, max_tokens 10 (the authors' story_inference.yaml): the paper's reading",
}
"""How the stories are asked (``prompts.PROTOCOL_SETTINGS``; run.json and metrics.json ``protocol``); the first is
the default."""
DEFAULT_PROTOCOL = "authors"
ANSWER_RULES = {
    "authors": "the authors' run_model_inference.py (NormAd src/ at 9ede851, lines 346-355): 'Yes' or 'option 1' in "
               "the lower-cased answer -> yes, else 'No' or 'option 2' -> no, else 'Neither' or 'option 3' -> "
               "Neither (the words case-sensitive, in that order); an answer none of these matches reaches their "
               "fallback (Neither) and is unparsed",
    "strict": "ours (--answer-rule strict): the leading Yes / No / Neither word or option number, else the only such "
              "word present; several different ones are ambiguous, a refusal is a refusal, an answer without any "
              "is unparsed",
}
"""How an answer is read (``prompts.parse_answer``; metrics.json and run.json ``answer_rule``); the first is the
default."""
DEFAULT_ANSWER_RULE = "authors"


@dataclass(frozen=True, kw_only=True)
class NormAdOptions(Options):
    split: str | None = option(help="A split of the stories (default all).")
    limit: int | None = option(help="Evaluate N stories, spread over the countries by --seed (the run says what it "
                                    "covers).")
    samples: int | None = option(help="Answers per prompt (default 1).")
    temperature: float | None = option(help="Sampling temperature (default 0, the authors' inference script).")
    max_tokens: int | None = option(help="Most tokens per answer (default: the protocol's, 50 for authors, 10 for "
                                         "paper).")
    protocol: str = option(DEFAULT_PROTOCOL, choices=tuple(PROTOCOLS),
                           help="How stories are asked: authors (default), as the authors' run_model_inference.py "
                                "asked for the published tables (its template per context, max_tokens 50), or paper: "
                                "App. A.3 Fig. 9 (max_tokens 10).")
    max_tokens_70b: bool = option(False, flag="--max-tokens-70b",
                                  help="Ask max_tokens 20, as the authors' script asked of its 70b models (lines 110, "
                                       "124, 181); protocol authors only.")
    contexts: tuple[str, ...] = option(CONTEXTS, help=f"Comma-separated contexts to ask each story under, of "
                                                      f"{', '.join(CONTEXTS)}.")
    unparsed_wrong: bool = option(False, flag="--unparsed-wrong", score=True,
                                  help="Count an answer that is not one clear Yes / No / Neither as wrong (default: "
                                       "read it as Neither, the authors' fallback).")
    answer_rule: str = option(DEFAULT_ANSWER_RULE, choices=tuple(ANSWER_RULES), score=True,
                              help="How an answer is read: authors, as the authors' run_model_inference.py "
                                   "reads it ('Yes' or 'option 1' anywhere -> yes, else 'No' or 'option 2' -> no, "
                                   "else Neither; case-sensitive), or strict (ours): the leading Yes / No / Neither "
                                   "word, else the only one present, several different ones unparsed.")
    variants: tuple[str, ...] = variants_option()

    def check(self) -> None:
        object.__setattr__(self, "variants", checked_variants(self.variants, (*VARIANTS, PARAPHRASE), "normad"))
        unknown = [c for c in self.contexts if c not in CONTEXTS]
        if unknown or not self.contexts:
            raise InputError(f"unknown context {unknown[0]!r}; choose from {', '.join(CONTEXTS)}" if unknown
                             else f"no context given; choose from {', '.join(CONTEXTS)}",
                             file=self.config_file, column="contexts")
        if len(set(self.contexts)) < len(self.contexts):
            raise InputError(f"context given twice in {','.join(self.contexts)}", file=self.config_file,
                             column="contexts")
        self.check_max_tokens_70b()

    def check_max_tokens_70b(self) -> None:
        """--max-tokens-70b is the authors' rule: with protocol authors only, and not beside --max-tokens."""
        if self.max_tokens_70b and (self.protocol != "authors" or self.max_tokens is not None):
            raise InputError("--max-tokens-70b is the authors' rule for 70b models: give it with protocol authors "
                             "and without --max-tokens", file=self.config_file, column="max_tokens_70b")


def normad_generator() -> Generator:
    """The generator of ``culturebench generate normad``, imported when the task is asked for."""
    from culturebench.generation.normad import GENERATOR

    return GENERATOR


def normad_v2_fix_generator() -> Generator:
    """The generator of ``culturebench generate normad_v2_fix``, imported when the task is asked for."""
    from culturebench.generation.normad_v2_fix import GENERATOR

    return GENERATOR


def paraphrases_generator() -> Generator:
    """The generator of ``culturebench generate paraphrases normad`` (issue #63), imported when the task is asked
    for."""
    from culturebench.evaluate.normad.items import paraphrased
    from culturebench.generation.paraphrases import ParaphraseGenerator

    return ParaphraseGenerator("normad", paraphrased, "story's closing question")


class NormAd(Benchmark):
    name = "normad"
    title = "NormAd (Rao et al. 2024, arXiv 2404.12464)"
    description = ("Yes / No / Neither per story under five contexts (the authors' inference prompts, or App. A.3 "
                   "Fig. 9); accuracy and macro F1 per context, zone, subaxis, label")
    Options = NormAdOptions
    generators = {"normad": normad_generator, "paraphrases": paraphrases_generator,
                  "normad_v2_fix": normad_v2_fix_generator}
    tasks = tuple(HarnessTask(f"normad_{context}", f"NormAd, context {context} (the authors' prompt); accuracy "
                              "(Fig. 3) and macro F1 (Table A.4)", {"contexts": (context,)})
                  for context in ("country", "value", "rot", "none", "country_value"))
    open_columns = {"stories": OpenColumns(
        ("background",), "cc-by-4.0",
        "background is Cultural Atlas text, (c) SBS; the other columns are NormAd's (Rao et al. 2024, "
        "arXiv 2404.12464), CC BY 4.0, uploaded with that attribution")}

    rai_facts_file = RAI_FACTS / "normad.json"

    def hooks(self):
        from culturebench.evaluate.normad.run import NormAdHooks

        return NormAdHooks()

    def comparison(self):
        from culturebench.evaluate.normad.compare import COMPARE

        return COMPARE

    def builder_module(self):
        from culturebench.builders import normad

        return normad

    def schemas_module(self):
        from culturebench.schemas import normad

        return normad

    def headline(self, metrics, options):
        """Accuracy (Fig. 3) and macro F1 (Table A.4) of the one model in the one context of ``options`` (a run of
        several contexts: each name suffixed by its context)."""
        (model,) = metrics["per_model"].values()
        values = {name: model[key][context] for (key, context), name in _headline_keys(options).items()}
        return {name: float(v) for name, v in values.items() if v is not None}

    def headline_names(self, options):
        return tuple(_headline_keys(options).values())

    def countries(self, metrics, release=None):
        """Accuracy per country (per-country accuracy, ours: the paper plots zones) in the bare-story context
        (none: the model is not told the country, so it judges by its own norms) when the run asked it, else the
        first context asked, with its bootstrap interval over stories."""
        from culturebench.evaluate.reports.countries import from_named

        name, model = next(iter(metrics["per_model"].items()))
        contexts = model.get("per_context") or {}
        context = "none" if "none" in contexts else next(iter(contexts), None)
        if context is None:
            return None
        cell = contexts[context]
        bounds = cell.get("accuracy_by_country_ci") or {}
        rows = [(country, v["accuracy"], bounds.get(country), v["n"])
                for country, v in (cell.get("accuracy_by_country") or {}).items()]
        return from_named(rows, benchmark=self.name, measure="accuracy", model=name, context=context, measures={
            "accuracy": f"share of the country's stories whose Yes / No / Neither matches the gold label, context "
                        f"{context} (Fig. 3's accuracy, per country; bootstrap over stories)"})

    def option_scoring(self, options):
        from culturebench.evaluate.normad.prompts import read_option_token
        return OptionScoring(read_option_token, parsed_field="answer", group_field="context")



def _headline_keys(options: NormAdOptions) -> dict[tuple[str, str], str]:
    """(metrics.json key, context) -> headline name: ``accuracy`` and ``macro_f1``, suffixed ``_<context>`` when
    ``options`` ask more than one context."""
    single = len(options.contexts) == 1
    return {(key, c): key if single else f"{key}_{c}" for c in options.contexts for key in ("accuracy", "macro_f1")}


BENCHMARK = NormAd()
evaluate = partial(engine.run, BENCHMARK)
"""``evaluate(backend, options)``: the engine's run of this benchmark (``evaluate.runs.engine.run``)."""


def _submodules() -> dict:
    """The submodules holding the names below, imported on the first use of one."""
    from culturebench.evaluate.normad import compare, items, measures, metrics, parsing

    return {"compare": compare, "items": items, "measures": measures, "metrics": metrics, "parsing": parsing}


__getattr__, __dir__ = lazy_exports(__name__, _submodules, {
    "UNKNOWN": "items", "plan_requests": "items", "release_tables": "items", "scored_label": "parsing",
    "score_answers": "parsing", "accuracy": "measures", "always_neither": "measures", "label_scores": "measures",
    "score": "metrics", "score_responses": "metrics", "COMPARE": "compare"})
