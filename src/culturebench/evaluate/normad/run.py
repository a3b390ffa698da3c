"""``culturebench evaluate normad`` / ``score normad``: the engine's hooks (the plan, each answer's record, the
run's metrics and run.json's ``evaluation``; ``evaluate.runs.engine`` runs them), scoring saved responses and the
summary line (the ``NormAd`` benchmark's methods)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from culturebench.contract import Answers, Result, RunPlan
from culturebench.errors import InputError
from culturebench.evaluate.reports import variant_report
from culturebench.evaluate.runs import paraphrases, run_folder
from culturebench.evaluate.reports.closed_form import ClosedFormHooks
from culturebench.evaluate.runs.limit import counted, limit_frame
from culturebench.evaluate.normad import BENCHMARK, NormAdOptions, prompts
from culturebench.evaluate.normad.items import PlannedRequest, iter_requests, paraphrased_texts, release_tables
from culturebench.evaluate.normad.metrics import score, score_responses
from culturebench.evaluate.normad.parsing import DEFAULT_UNPARSED, scored_label
from culturebench.evaluate.normad.plots import write_run
from culturebench.evaluate.runs.readability import read_counts, unreadable_warning
from culturebench.release_reader import Release


@dataclass(frozen=True, kw_only=True)
class Plan(RunPlan):
    """What ``evaluate`` asks: the release's stories (of ``--split``; scored against), the stories asked (after
    ``--limit``) and the sampling settings."""

    release_stories: pl.DataFrame
    stories: pl.DataFrame
    samples: int
    temperature: float
    max_tokens: int
    info: dict[str, dict]
    """story_id -> its country, gold label, zone and sub-axis (the records carry them)."""
    protocol: str
    wordings: paraphrases.Wordings
    """The paraphrase variants' closing questions and what the run says of them (``evaluate.runs.paraphrases``)."""


def sampling(options: NormAdOptions) -> tuple[float, int]:
    """(temperature, max_tokens) asked: the options' when given, else the protocol's (``prompts.PROTOCOL_SETTINGS``;
    ``--max-tokens-70b``: the authors' 20)."""
    settings = prompts.PROTOCOL_SETTINGS[options.protocol]
    temperature = settings.temperature if options.temperature is None else options.temperature
    if options.max_tokens is not None:
        return temperature, options.max_tokens
    return temperature, prompts.MAX_TOKENS_70B if options.max_tokens_70b else settings.max_tokens


def record_protocol(metrics: dict, planned: Plan) -> None:
    """metrics.json's ``protocol``: the one the run asked under, with the temperature and ``max_tokens`` it asked."""
    metrics["protocol"] = prompts.protocol_record(planned.protocol, planned.temperature, planned.max_tokens)


def unparsed_rule(options: NormAdOptions) -> str:
    """The rule for unparsed answers (``parsing.UNPARSED_RULES``): ``wrong`` with ``--unparsed-wrong``."""
    return "wrong" if options.unparsed_wrong else DEFAULT_UNPARSED


def release_build(manifest: dict) -> dict:
    """What run.json records of how the release was built: the NormAd revision (``v1``, the stories as read, or
    the authors' ``v2_fix_neutral``) and the zone source; a release built before these were recorded is ``v1``
    with zones unrecorded."""
    provenance = manifest.get("provenance") or {}
    return {"revision": (provenance.get("revision") or {}).get("name", "v1"),
            "zones": (provenance.get("zones") or {}).get("source")}


class NormAdHooks(ClosedFormHooks):
    """NormAd's hooks of the engine (``contract.Hooks``; ``score``: ``closed_form.ClosedFormHooks``)."""

    benchmark = BENCHMARK

    def plan(self, options: NormAdOptions, model: str = "model", *, roles=None) -> Plan:
        """Every story (``limit`` spread over the countries: ``limit.spread_positions``) under every context of
        ``options.contexts``, ``samples`` times, read from the release (before a model is loaded)."""
        tables = release_tables(options.release, options.split)
        release_stories = tables["stories"]
        if release_stories.height == 0:
            raise InputError("release has no stories", file=options.release)
        samples = prompts.DEFAULT_SAMPLES if options.samples is None else options.samples
        temperature, max_tokens = sampling(options)
        stories, covers = limit_frame(release_stories, ["country"], options.limit, options.seed, item="stories",
                                      columns=["countries"])
        wordings = paraphrases.wordings(options.variants, tables.get("variants"), Path(options.release),
                                        paraphrased_texts(stories))
        if wordings.variants != options.variants:  # paraphrase expanded to paraphrase1..K
            options = replace(options, variants=wordings.variants)
        requests = iter_requests(stories, contexts=options.contexts, samples=samples, temperature=temperature,
                                 max_tokens=max_tokens, seed=options.seed, protocol=options.protocol,
                                 variants=options.variants, wordings=wordings)
        info = {r["story_id"]: r for r in stories.select("story_id", "country", "gold_label", "iw_zone", "subaxis")
                .iter_rows(named=True)}
        return Plan(options=options, model=model, requests=requests,
                    total=stories.height * len(options.contexts) * samples * len(options.variants),
                    description="normad", covers=(covers,),
                    release_stories=release_stories, stories=stories, samples=samples, temperature=temperature,
                    max_tokens=max_tokens, info=info, protocol=options.protocol, wordings=wordings)

    def records(self, plan: Plan, items: list[PlannedRequest], responses: list) -> list[dict]:
        """responses.jsonl's records: each answer parsed (``prompts.parse_answer``) and marked against the gold label."""
        unparsed, answer_rule = unparsed_rule(plan.options), plan.options.answer_rule
        out = []
        for item, response in zip(items, responses, strict=True):
            story = plan.info[item.story_id]
            answer = prompts.parse_answer(response.text, answer_rule)
            label = scored_label(answer, unparsed)
            out.append({"model": plan.model, "variant": item.variant, "listed": ",".join(item.listed),
                        "story_id": item.story_id, "country": story["country"],
                        "iw_zone": story["iw_zone"], "subaxis": story["subaxis"], "context": item.context,
                        "sample_index": item.sample_index, "prompt": item.prompt, "response": response.text,
                        "answer": answer.label, "parse_status": answer.status, "gold_label": story["gold_label"],
                        "correct": label == story["gold_label"], "finish_reason": response.finish_reason,
                        **({paraphrases.FALLBACK_KEY: item.fallback} if item.fallback else {})})
        return out

    def run_answers(self, plan: Plan, path: Path) -> pl.DataFrame:
        """The run's records (model, variant, the options' order, story, context, response, sample, answer)."""
        return pl.read_ndjson(path, schema={
            "model": pl.String, "variant": pl.String, "listed": pl.String, "story_id": pl.String, "context": pl.String,
            "response": pl.String, "sample_index": pl.Int64, "answer": pl.String, "correct": pl.Boolean})

    def score_variant(self, plan: Plan, frame: pl.DataFrame, answers: Answers):
        """The metrics of one variant's records (``metrics.score_responses``), with the protocol asked."""
        scored = score_responses(frame.select("model", "story_id", "context", "response", "sample_index"),
                                 plan.release_stories, release=Path(plan.options.release),
                                 sources=[run_folder.source_info(answers.path)], unparsed=unparsed_rule(plan.options),
                                 answer_rule=plan.options.answer_rule)
        record_protocol(scored.metrics, plan)
        return scored

    def score_saved(self, options: NormAdOptions, files: Sequence[Path]):
        """``culturebench score normad``: saved responses.jsonl files (``metrics.score``)."""
        return score(list(files), options.release, unparsed_rule(options), options.answer_rule)

    def write(self, result: Result, out: Path) -> list[Path]:
        """metrics.json and the plots (``plots.write_run``), and with ``--variants`` the position-bias figure."""
        return [*write_run(result.score, Path(out)),
                *variant_report.write_position_bias(result.metrics.get("variants"), out)]

    def item_values(self, frame: pl.DataFrame, variant: str) -> dict[str, dict[str, float]]:
        """Per context's accuracy (the headline's ``accuracy_<context>``, a mean over its answers) each answer of
        ``variant``, 1 right and 0 wrong, by story and sample (the variants report's interval resamples them)."""
        out: dict[str, dict[str, float]] = {}
        for context, story, sample, correct in frame.filter(pl.col("variant") == variant).select(
                "context", "story_id", "sample_index", "correct").iter_rows():
            out.setdefault(f"accuracy_{context}", {})[f"{story}/{sample}"] = float(correct)
        return out

    def variant_answers(self, frame: pl.DataFrame, plan: Plan) -> list[variant_report.VariantAnswer]:
        """Each answer of ``frame`` (the run's records) as the variants report reads it: its label (the option by its
        content) and the position the variant listed it at, the item being the story, context and sample."""
        out = []
        for variant, listed, story, context, sample, answer in frame.select(
                "variant", "listed", "story_id", "context", "sample_index", "answer").iter_rows():
            listed = tuple(listed.split(","))
            out.append(variant_report.VariantAnswer(variant, f"{story}/{context}/{sample}", answer,
                                              None if answer is None else listed.index(answer) + 1,
                                              (story, context, sample, listed)))
        return out

    def evaluation(self, plan: Plan, result: Result, answers: Answers) -> dict:
        """run.json's ``evaluation`` (the stories, contexts and sampling asked), the release's build, parse statuses
        and headline metrics."""
        options, m = plan.options, result.metrics["per_model"][plan.model]
        return {"evaluation": {"n_stories": plan.stories.height, "contexts": list(options.contexts),
                               "samples": plan.samples, "n_requests": answers.n_records,
                               "temperature": plan.temperature, "max_tokens": plan.max_tokens, "seed": options.seed,
                               "limit": options.limit, "split": options.split, "unparsed": unparsed_rule(options),
                               "answer_rule": options.answer_rule, "protocol": plan.protocol,
                               "prompt_source": result.metrics["protocol"]["prompt_source"],
                               "variants": list(options.variants)},
                "release_build": release_build(Release.open(options.release).manifest.data),
                "parse_status": {c: m["per_context"][c]["parse_status"] for c in m["contexts"]},
                "metrics": {"accuracy": m["accuracy"], "macro_f1": m["macro_f1"]}}

    def summary(self, metrics: dict) -> str:
        """One line per model for the command line: per context its accuracy, with the answers read and unreadable
        where some could not be read; then a ``warning:`` per model with unreadable answers, naming what the accuracies
        then rest on (``readability.unreadable_warning``)."""
        lines, warnings = [], []
        neither = metrics["unparsed_rule"]["rule"] == "neutral"
        read_as = "read as Neither" if neither else "counted wrong"
        others = ("scored as Neither (right only where the gold label is neutral; --unparsed-wrong: wrong)" if neither
                  else "scored wrong")
        for model in metrics["models"]:
            m = metrics["per_model"][model]
            unparsed = sum(m["per_context"][c]["n_unparsed"] for c in m["contexts"])
            counts = {c: f" ({read_counts(pc['n'] - pc['n_unparsed'], pc['n_unparsed'])})" if unparsed else ""
                      for c, pc in m["per_context"].items()}
            parts = ", ".join(f"{prompts.CONTEXT_NAMES[c]} {m['accuracy'][c]:.3f}{counts[c]}" for c in m["contexts"]
                              if m["accuracy"][c] is not None)
            lines.append(f"normad {model}: {counted(m['n_responses'], 'responses')} ({unparsed:,} unparsed, "
                         f"{read_as}), "
                         f"{counted(m['n_stories'], 'stories')}; accuracy {parts}")
            rests = (f"the accuracies rest on {counted(m['n_responses'] - unparsed, 'answers')}, the others {others} "
                     "(metrics.json accuracy_parsed: the read answers alone)")
            warnings += unreadable_warning(f"normad {model}", unparsed, m["n_responses"], rests)
        lines += (variant_report.summary_line("normad", metrics.get("variants"))
                  + paraphrases.summary_lines("normad", metrics.get("variants")) + warnings)
        return "\n".join(lines)
