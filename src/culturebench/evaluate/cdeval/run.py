"""``culturebench evaluate cdeval`` / ``score cdeval``: the engine's hooks (the plan, each answer's record, the
run's metrics and run.json's ``evaluation``; ``evaluate.runs.engine`` runs them), scoring saved responses and the
summary line (the ``CDEval`` benchmark's methods)."""

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
from culturebench.evaluate.cdeval import BENCHMARK, CDEvalOptions, prompts
from culturebench.evaluate.cdeval.items import (
    DIMENSIONS, RESPONSE_FIELDS, PlannedRequest, iter_requests, release_tables)
from culturebench.evaluate.cdeval.metrics import score, score_responses
from culturebench.evaluate.cdeval.parsing import release_language, respondent, score_answers
from culturebench.evaluate.cdeval.plots import write_run
from culturebench.evaluate.runs.limit import counted, limit_frame
from culturebench.evaluate.runs.readability import read_counts, status_counts, unreadable_warning
from culturebench.raw.cdeval import DEFAULT_LANGUAGE
from culturebench.release_reader import Release


@dataclass(frozen=True, kw_only=True)
class Plan(RunPlan):
    """What ``evaluate`` asks: the release's tables, the questions (after ``--limit``), the sampling settings and
    the questionnaire's language (``tag``: the records' ``language`` where it is not English)."""

    tables: dict[str, pl.DataFrame]
    questions: pl.DataFrame
    samples: int
    temperature: float
    max_tokens: int
    language: str
    tag: dict
    info: dict[str, dict]
    """question_id -> its dimension, domain and options (the records carry them)."""
    wordings: paraphrases.Wordings
    """The paraphrase variants' questions and what the run says of them (``evaluate.runs.paraphrases``)."""


def _respondent(plan: Plan) -> str:
    return respondent(plan.model, plan.tag.get("language"))


class CDEvalHooks(ClosedFormHooks):
    """CDEval's hooks of the engine (``contract.Hooks``; ``score``: ``closed_form.ClosedFormHooks``)."""

    benchmark = BENCHMARK

    def plan(self, options: CDEvalOptions, model: str = "model", *, roles=None) -> Plan:
        """The six prompts x R samples for every question (``limit`` spread over dimension x domain:
        ``limit.spread_positions``), read from the release (before a model is loaded)."""
        tables = release_tables(options.release)
        if tables["questions"].height == 0:
            raise InputError("release has no questions", file=options.release)
        samples = prompts.DEFAULT_SAMPLES if options.samples is None else options.samples
        temperature = prompts.TEMPERATURE if options.temperature is None else options.temperature
        max_tokens = prompts.MAX_TOKENS if options.max_tokens is None else options.max_tokens
        questions, covers = limit_frame(tables["questions"], ["dimension", "domain"], options.limit, options.seed,
                                        item="questions", columns=["dimensions", "domains"])
        wordings = paraphrases.wordings(options.variants, tables.get("variants"), Path(options.release),
                                        dict(zip(questions["question_id"], questions["question"])))
        if wordings.variants != options.variants:  # paraphrase expanded to paraphrase1..K
            options = replace(options, variants=wordings.variants)
        requests = iter_requests(questions, samples=samples, temperature=temperature, max_tokens=max_tokens,
                                 seed=options.seed, variants=options.variants, wordings=wordings)
        language = release_language(Release.open(options.release).manifest.data)
        info = {r["question_id"]: r for r in questions.select("question_id", "dimension", "domain", "option_1",
                                                              "option_2").iter_rows(named=True)}
        return Plan(options=options, model=model, requests=requests,
                    total=questions.height * len(prompts.PROMPTS) * samples * len(options.variants),
                    description="cdeval", covers=(covers,), tables=tables, questions=questions, samples=samples,
                    temperature=temperature, max_tokens=max_tokens, language=language,
                    tag={} if language == DEFAULT_LANGUAGE else {"language": language}, info=info,
                    wordings=wordings)

    def records(self, plan: Plan, items: list[PlannedRequest], responses: list) -> list[dict]:
        """responses.jsonl's records: each answer scored (``prompts.score_answer``) with its question's fields."""
        out = []
        for item, response in zip(items, responses, strict=True):
            q = plan.info[item.question_id]
            s, status, shown = prompts.score_answer(item.prompt, response.text, q["option_1"], q["option_2"],
                                                    plan.options.repeat_rule)
            template, order = item.prompt.rsplit("_", 1)
            out.append({"model": plan.model, **plan.tag, "variant": item.variant, "slot": item.slot,
                        "question_id": item.question_id, "dimension": q["dimension"],
                        "domain": q["domain"], "prompt": item.prompt, "template": template, "order": order,
                        "sample_index": item.sample_index, "response": response.text, "parse_status": status,
                        "shown": shown, "score": s, "finish_reason": response.finish_reason,
                        **({paraphrases.FALLBACK_KEY: item.fallback} if item.fallback else {})})
        return out

    def run_answers(self, plan: Plan, path: Path) -> pl.DataFrame:
        """The run's records (variant, slot, question, prompt, sample, response), the respondent as ``model``."""
        return (pl.read_ndjson(path, schema={"variant": pl.String, "slot": pl.String, "question_id": pl.String,
                                             "prompt": pl.String, "sample_index": pl.Int64, "response": pl.String})
                .with_columns(pl.lit(_respondent(plan)).alias("model")))

    def score_variant(self, plan: Plan, frame: pl.DataFrame, answers: Answers):
        """The metrics of one variant's records (``metrics.score_responses``)."""
        return score_responses(frame.select("model", *RESPONSE_FIELDS[1:]), plan.tables,
                               release=Path(plan.options.release), sources=[run_folder.source_info(answers.path)],
                               repeat_rule=plan.options.repeat_rule)

    def score_saved(self, options: CDEvalOptions, files: Sequence[Path]):
        """``culturebench score cdeval``: saved responses.jsonl files (``metrics.score``)."""
        return score(list(files), options.release, repeat_rule=options.repeat_rule)

    def write(self, result: Result, out: Path) -> list[Path]:
        """metrics.json and the plots (``plots.write_run``), and with ``--variants`` the position-bias figure."""
        return [*write_run(result.score, Path(out)),
                *variant_report.write_position_bias(result.metrics.get("variants"), out)]

    def variant_answers(self, frame: pl.DataFrame, plan: Plan) -> list[variant_report.VariantAnswer]:
        """Each answer of ``frame`` (the run's records) as the variants report reads it: the option picked by its
        content (option_1 / option_2, None when neutral or unread) and its shown position, the item being the question,
        the paper's prompt it stands for and the sample."""
        scored = score_answers(frame.select("variant", "slot", "model", *RESPONSE_FIELDS[1:]), plan.questions,
                               plan.options.repeat_rule)
        return [variant_report.VariantAnswer(
            variant, f"{question}/{slot}/{sample}",
            None if status != "chosen" else ("option_1" if s == 1.0 else "option_2"), shown, (question, prompt, sample))
            for variant, slot, question, prompt, sample, status, s, shown in scored.select(
                "variant", "slot", "question_id", "prompt", "sample_index", "parse_status", "score", "shown").iter_rows()]

    def evaluation(self, plan: Plan, result: Result, answers: Answers) -> dict:
        """run.json's ``evaluation`` (the questions, prompts and sampling asked), parse statuses and headline metrics."""
        options, m = plan.options, result.metrics["per_model"][_respondent(plan)]
        return {"evaluation": {"n_questions": plan.questions.height, "prompts": list(prompts.PROMPTS),
                               "samples": plan.samples, "n_requests": answers.n_records,
                               "temperature": plan.temperature, "max_tokens": plan.max_tokens,
                               "seed": options.seed, "limit": options.limit, "repeat_rule": options.repeat_rule,
                               "questionnaire_language": plan.language, "variants": list(options.variants)},
                "parse_status": m["parse_status"],
                "metrics": {"dimension_likelihood": m["dimension_likelihood"],
                            "template_weights": m["template_weights"]}}

    def summary(self, metrics: dict) -> str:
        """One line per model for the command line, its responses read and unreadable beside its likelihoods; a
        ``warning:`` per model with unreadable answers (``readability.unreadable_warning``)."""
        lines, warnings = [], []
        for model in metrics["models"]:
            m = metrics["per_model"][model]
            dims = ", ".join(f"{d} {m['dimension_likelihood'][d]:.2f}" for d in DIMENSIONS
                             if m["dimension_likelihood"].get(d) is not None)
            weights = ", ".join(f"{t} {w:.3f}" for t, w in m["template_weights"].items())
            if m["missing_dimensions"]:
                closest = f"no country similarity (no {', '.join(m['missing_dimensions'])})"
            elif m["country_similarity"]:
                best = m["country_similarity"][0]
                closest = f"closest country {best['country_name']} (Eq. 3: {best['similarity']:.3f})"
            else:
                closest = "no country with all six scores"
            read, unreadable = status_counts(m["parse_status"], prompts.READ_STATUSES)
            lines.append(f"cdeval {model}: {counted(m['n_responses'], 'responses')} ({read_counts(read, unreadable)}; "
                         f"{m['n_neutral']:,} neutral); {dims}; template weights {weights}; {closest}")
            warnings += unreadable_warning(
                f"cdeval {model}", unreadable, m["n_responses"],
                f"the dimension likelihoods rest on {counted(m['parse_status']['chosen'], 'answers')} that chose an "
                f"option, the other {counted(m['n_neutral'], 'answers')} (unreadable, both options or a refusal) "
                f"score neutral ({prompts.NEUTRAL:g})")
        left = metrics["hofstede"]["countries_left_out"]
        if left:
            lines.append(f"cdeval: {counted(len(left), 'countries')} lacking a Hofstede dimension, not compared "
                         f"(metrics.json hofstede.countries_left_out)")
        if metrics.get("pairwise_baseline") is not None:
            lines.append(f"cdeval: {len(metrics['models'])} models, pairwise baseline similarity (Eq. 5) "
                         f"{metrics['pairwise_baseline']:.4f}")
        return "\n".join(lines + variant_report.summary_line("cdeval", metrics.get("variants"))
                         + paraphrases.summary_lines("cdeval", metrics.get("variants")) + warnings)
