"""``culturebench evaluate wvb`` / ``score wvb``: the engine's hooks (the plan: App. B's prompts,
``items.iter_requests``; each batch's records; the run's metrics from its responses file; run.json's
``evaluation``; ``evaluate.runs.engine`` runs them: batch by batch, the requests from a generator and the records
appended to the responses file as they are answered), scoring saved responses and the summary line (the ``WVB``
benchmark's methods)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from culturebench.contract import Answers, Hooks, Result, Run, RunPlan
from culturebench.errors import InputError
from culturebench.evaluate.reports import variant_report
from culturebench.evaluate.runs import run_folder, variants
from culturebench.evaluate.runs.engine import stream
from culturebench.evaluate.runs.limit import counted
from culturebench.evaluate.runs.readability import read_counts, unreadable_warning
from culturebench.evaluate.wvb import BENCHMARK, WVBOptions, liu2025, liu_outputs
from culturebench.evaluate.wvb.items import (
    PlannedRequest,
    iter_requests,
    limited_rows,
    parse_records,
    prompt_tables,
    question_rows,
    request_count,
    request_sampling,
    response_schema,
)
from culturebench.evaluate.wvb.metrics import score, score_answers, unreadable_answers
from culturebench.evaluate.wvb.opinions import opinion_requests, parse_distribution, write_country_view
from culturebench.evaluate.wvb.parsing import answers_frame, scan_answers
from culturebench.evaluate.wvb.plots import write_run
from culturebench.evaluate.wvb.prompts import STATED_STATUSES, STATUSES

if TYPE_CHECKING:
    from culturebench.chat import SamplingParams


@dataclass(frozen=True, kw_only=True)
class Plan(RunPlan):
    """What ``evaluate`` asks: the evaluated rows (after ``--limit``; kept without demographics only, where the
    answers are paired with them: a run with demographics of millions keeps none), their number, the questions
    (their scales read the answers), the sampling, and the parse statuses counted as the answers arrive."""

    rows: pl.DataFrame | None
    n_rows: int
    questions: pl.DataFrame
    sampling: SamplingParams
    parse_status: dict[str, int]
    """Answers per parse status (``prompts.STATUSES``), and ``n_parsed``, counted by ``records``."""
    notes: tuple[str, ...] = ()
    """One line per question or country the plan leaves out (countries.json's ``notes``)."""
    stated: Callable[[str | None, int, int], dict | None] | None = None
    """The reader of a stated distribution when the replies are distributions (``items.parse_records``); None:
    one answer each (``prompts.parse_answer``)."""


def liu_plan(options: WVBOptions, model: str = "model") -> Plan:
    """The requests of ``--protocol liu2025`` (``liu2025``): their question set (``--limit`` questions spread by
    ``seed``) that the release has as value questions with a scale, each asked plainly and, under ``--steer``, once
    per steered country (``opinions.liu_countries``); their system message and prompts, temperature 0, no stop."""
    from culturebench.chat import ChatRequest, SamplingParams
    from culturebench.evaluate.runs.limit import limit_frame
    from culturebench.evaluate.wvb.opinions import liu_countries, liu_repo, stated_reader

    repo = liu_repo(options)
    questions, _ = prompt_tables(options.release, None)
    scaled = set(questions.filter((pl.col("kind") == "value") & (pl.col("scale_max") > pl.col("scale_min")))
                 ["question_id"])
    theirs = repo.question_set()
    notes = []
    lacking = [q for q in theirs if q not in scaled]
    if lacking:
        notes.append(f"--protocol liu2025: the release has no value question with a scale for {', '.join(lacking)}; "
                     "left out")
    available = pl.DataFrame({"question_id": [q for q in theirs if q in scaled]}, schema={"question_id": pl.String})
    if available.height == 0:
        raise InputError("--protocol liu2025: the release has none of their questions", file=options.release)
    asked, covers = limit_frame(available, ["question_id"], options.limit, options.seed, item="questions",
                                columns=["questions"])
    ids = asked["question_id"].to_list()
    countries, country_notes = liu_countries(repo, options) if options.steer else ([], [])
    prompts, missing, n_prompts = liu2025.prompts(repo, ids, options.steer, countries)
    samples = options.samples or 1
    sampling = SamplingParams(temperature=liu2025.TEMPERATURE if options.temperature is None else options.temperature,
                              max_tokens=options.max_tokens or liu2025.MAX_TOKENS, seed=options.seed)
    requests = (PlannedRequest(None, prompt.question_id, index,
                               ChatRequest(messages=liu2025.messages(repo, prompt.text), sampling=sampling,
                                           sample_index=index), prompt.steer)
                for prompt in prompts for index in range(samples))
    return Plan(options=options, model=model, requests=requests, total=n_prompts * samples,
                description=f"wvb {options.split} (Liu et al. 2025)", covers=(covers,), schema=response_schema(),
                rows=question_rows(options.release, ids, options.seed), n_rows=len(ids), questions=questions,
                sampling=sampling, parse_status={**{status: 0 for status in STATED_STATUSES}, "n_parsed": 0},
                notes=(*notes, *country_notes, *missing), stated=stated_reader(repo))


def replanned(options: WVBOptions):
    """The run's requests planned again (the country view's ``--scoring logprobs`` reading looks each one up), the
    default variant's: the country view is the paper protocol's."""
    return (request for request in WVBHooks().plan(options).requests if request.variant == variants.DEFAULT)


def score_saved(responses: Sequence[Path], options: WVBOptions) -> Result:
    """``culturebench score wvb``: a saved responses file (``metrics.read_answers``: an ``evaluate`` run's
    responses.jsonl or shards, or the paper's TSV/CSV), or Liu et al.'s stated distributions (``liu_outputs``)."""
    if len(responses) != 1:
        raise InputError(f"wvb scores one responses file at a time, got {len(responses)} (compare several runs with "
                         "culturebench compare)")
    (path,) = responses
    if liu_outputs.is_results_file(path):
        metrics, written = liu_outputs.score_stated(path, options)
        metrics["responses"] = run_folder.source_info(path)
        return Result(metrics=metrics, written=written)
    scored = score(path, options.release, options.majority, drop_out_of_scale=options.drop_out_of_scale,
                   drop_non_integer=options.drop_non_integer)
    return Result(metrics=scored.metrics, written=[], score=scored)


def question_distances(metrics: dict) -> dict[str, float]:
    """Each question's W1 (mean W1, the headline, is their mean: Table 2), the questions with one."""
    return {q: float(w) for q, w in metrics["per_question"].items() if w is not None and not math.isnan(w)}


def variant_answers(path: Path, questions: pl.DataFrame) -> list[variant_report.VariantAnswer]:
    """Each unsteered answer of a run's responses as the variants report reads it: its code (by content: the codes
    are kept under every variant) and the position the variant listed it at along the scale (1: the end the prompt
    names first; None off the scale or unread), the item being the participant, question and sample; what was asked
    differs between variants by the question's wording only (``prompts.VARIANT_QUESTION``)."""
    from culturebench.evaluate.wvb.prompts import VARIANT_QUESTION

    frame = (pl.scan_parquet(run_folder.shard_paths(path), missing_columns="insert", schema=response_schema())
             if Path(path).is_dir() or Path(path).suffix.lower() == ".parquet"
             else pl.scan_ndjson(path, schema=response_schema()))
    scales = {q: (lo, hi, text) for q, lo, hi, text in
              questions.select("question_id", "scale_min", "scale_max", "text").iter_rows()}
    out = []
    for variant, participant, question, sample, answer in (
            frame.filter(pl.col("steer").is_null())
            .select(pl.col("variant").fill_null(variants.DEFAULT), "participant_id", "question_id", "sample_index",
                    "answer").collect().iter_rows()):
        low, high, text = scales[question]
        on_scale = answer is not None and low is not None and high is not None and low <= answer <= high
        position = (None if not on_scale else high - answer + 1 if variant == "reversed" else answer - low + 1)
        out.append(variant_report.VariantAnswer(variant, f"{participant}/{question}/{sample}",
                                          None if answer is None else str(answer), position,
                                          (participant, question, sample, VARIANT_QUESTION[variant](text))))
    return out


def _statuses(plan: Plan) -> dict[str, int]:
    return {status: n for status, n in plan.parse_status.items() if status != "n_parsed"}


class WVBHooks(Hooks):
    """WVB's hooks of the engine (``contract.Hooks``)."""

    def plan(self, options: WVBOptions, model: str = "model", *, roles=None) -> Plan:
        """The requests of a run (Sec. 3.5, App. B) on the probe or a split (``limit`` rows spread over the questions:
        ``limit.spread_positions`` with ``seed``), read from the release (before a model is loaded)."""
        if options.protocol == "liu2025":
            return liu_plan(options, model)
        rows, covers = limited_rows(options.release, options.split, options.limit, options.seed)
        questions, participants = prompt_tables(options.release, rows["participant_id"] if options.demographics else None)
        steer, samples = opinion_requests(options)
        requests = iter_requests(rows, questions, participants, demographics=options.demographics,
                                 samples=samples, temperature=options.temperature,
                                 max_tokens=options.max_tokens, seed=options.seed, family=options.prompt_family,
                                 steer=steer, reading=options.reading, variants=options.variants)
        mode = "with demographics" if options.demographics else "without demographics"
        return Plan(options=options, model=model, requests=requests,
                    total=request_count(rows, options.demographics, samples, len(steer)) * len(options.variants),
                    description=f"wvb {options.split} ({mode})", covers=(covers,), schema=response_schema(),
                    rows=None if options.demographics else rows, n_rows=rows.height, questions=questions,
                    sampling=request_sampling(options.demographics, options.temperature, options.max_tokens, options.seed),
                    parse_status={**{status: 0 for status in (STATED_STATUSES if options.reading == "verbalized"
                                                              else STATUSES)}, "n_parsed": 0},
                    stated=parse_distribution if options.reading == "verbalized" else None)

    def records(self, plan: Plan, items: list[PlannedRequest], responses: list) -> list[dict]:
        """responses records (``items.parse_records``), their parse statuses counted."""
        out = parse_records(items, responses, plan.questions, plan.stated)
        for record in out:
            plan.parse_status[record["parse_status"]] = plan.parse_status.get(record["parse_status"], 0) + 1
            plan.parse_status["n_parsed"] += record["answer"] is not None or record["parse_status"] == STATED_STATUSES[0]
        return out

    def answer(self, run: Run, plan: Plan) -> Answers:
        """The planned requests streamed through the runner (``engine.stream``); the backend and console stay with the
        answers for the country view of a run without demographics (its ``--scoring logprobs`` reading)."""
        answers = stream(run, plan, self.records)
        answers.state = {"backend": run.backend, "console": run.console}
        return answers

    def score(self, plan: RunPlan, answers: Answers) -> Result:
        """Saved responses (``culturebench score``): ``score_saved``. A fresh run's (read back lazily, the few columns
        they need: ``scan_answers``, so memory does not grow with the prompts of a run), with the country view of
        a run without demographics. ``prompt_family``: whose App. B prompts (prompts.FAMILIES); ``majority``:
        MAJORITY_DEFINITIONS; ``drop_out_of_scale``: answers off the question's scale are invalid (default: scored
        as given, as the authors'); ``drop_non_integer``: answers that are not whole numbers are invalid (default:
        truncated, as the authors')."""
        if answers.saved:
            return score_saved(answers.saved, plan.options)
        options, demographics = plan.options, plan.options.demographics
        mode = "with demographics" if demographics else "without demographics"
        label = f"{plan.model} ({mode})"

        def scored_variant(variant: str):
            answered = answers_frame(plan.rows, scan_answers(answers.path, variant), demographics)
            return score_answers(answered, Path(options.release), run_folder.source_info(answers.path),
                                 majority=options.majority, model=label, drop_out_of_scale=options.drop_out_of_scale,
                                 drop_non_integer=options.drop_non_integer)

        scored = scored_variant(variants.DEFAULT)
        n_parsed = plan.parse_status["n_parsed"]
        scored.metrics.update({
            "mode": "with_demographics" if demographics else "without_demographics",
            "prompt_family": options.prompt_family,
            "split": options.split,
            "n_evaluated_rows": plan.n_rows,
            "n_requests": answers.n_records,
            "n_parsed": n_parsed,
            "n_unparsed": answers.n_records - n_parsed,
            "parse_status": _statuses(plan),
        })
        if len(options.variants) > 1:
            def variant_score(variant: str) -> variant_report.VariantScore:
                metrics = (scored if variant == variants.DEFAULT else scored_variant(variant)).metrics
                return variant_report.variant_score(BENCHMARK, metrics, options, options.release,
                                              {"mean_w1": question_distances(metrics)})

            scored.metrics["variants"] = run_folder.json_safe(variant_report.report(
                variant_answers(answers.path, plan.questions), options.variants, variant_score, seed=options.seed))
        country_files = [] if demographics else write_country_view(
            answers.state["backend"], options, answers.path, plan.questions, scored.metrics,
            lambda: replanned(options), label, answers.state["console"], plan.notes)
        return Result(metrics=scored.metrics, written=country_files, score=scored)

    def write(self, result: Result, out: Path) -> list[Path]:
        """metrics.json and the plots (``plots.write_run``; of Liu et al.'s stated distributions, metrics.json alone:
        ``run_folder.write_metrics_and_plots``), then the files ``score`` wrote (a run's country view, the stated
        distributions' tables)."""
        scored = (write_run(result.score, Path(out)) if result.score is not None
                  else run_folder.write_metrics_and_plots(result.metrics, Path(out), {}))
        return [*scored, *result.written, *variant_report.write_position_bias(result.metrics.get("variants"), out)]

    def evaluation(self, plan: Plan, result: Result, answers: Answers) -> dict:
        """run.json's ``evaluation`` (the mode, split, rows and sampling asked and the rules the answers were read
        by), the release's routes, parse statuses and headline metrics."""
        options, metrics, sampling = plan.options, result.metrics, plan.sampling
        return {"evaluation": {"mode": metrics["mode"], "prompt_family": options.prompt_family, "split": options.split,
                               "n_evaluated_rows": plan.n_rows, "n_requests": answers.n_records,
                               "temperature": sampling.temperature, "max_tokens": sampling.max_tokens,
                               "stop": list(sampling.stop), "seed": options.seed, "samples": options.samples,
                               "majority": options.majority, "protocol": options.protocol, "steer": options.steer,
                               "steer_countries": None if options.steer_countries is None
                               else list(options.steer_countries),
                               "reading": metrics.get("countries", {}).get("reading"),
                               "weights": metrics.get("countries", {}).get("weights"),
                               "out_of_scale_answers": "dropped" if options.drop_out_of_scale else "kept",
                               "non_integer_answers": "dropped" if options.drop_non_integer else "truncated",
                               "variants": list(options.variants)},
                "release_routes": metrics["release_routes"],
                "parse_status": _statuses(plan),
                "metrics": {"mean": metrics["mean"], "std": metrics["std"], "n_questions": metrics["n_questions"],
                            "n_invalid": metrics["n_invalid"]}}

    def summary(self, metrics: dict) -> str:
        """The command line's lines: of an ``evaluate`` run (its metrics name the mode and the split) or of ``score``
        (the rows and coverage), the answers read and unreadable, off-scale (kept as the authors do, or dropped) and
        non-integer answers, questions and mean W1 (the request counts are the runner's line); then a ``warning:`` when
        answers could not be read, with what mean W1 rests on (``readability.unreadable_warning``)."""
        if metrics.get("countries", {}).get("protocol") == "liu2025":
            return liu_outputs.summary(metrics)
        mean = "n/a" if metrics["mean"] is None else f"{metrics['mean']:.4f}"
        unreadable = metrics["n_unparsed"] if "n_unparsed" in metrics else unreadable_answers(metrics)
        answers = (f"{read_counts(metrics['n_rows'] - unreadable, unreadable)} answers, "
                   f"{metrics['out_of_scale']['n']:,} off the scale ({metrics['out_of_scale']['answers']}), "
                   f"{metrics['non_integer']['n']:,} not whole numbers ({metrics['non_integer']['answers']}), "
                   f"{counted(metrics['n_questions'], 'questions')}, mean W1 {mean}")
        if "mode" in metrics:
            who = f"wvb {metrics['split']} ({metrics['mode'].replace('_', ' ')})"
            line = f"{who}: {answers}"
        else:
            who = "wvb"
            line = f"wvb: {metrics['n_rows']:,} rows, coverage {metrics['coverage']:.3f}, {answers}"
        scored = metrics["n_rows"] - metrics["n_invalid"]
        rests = (f"mean W1 rests on {counted(scored, 'answers')} in {counted(metrics['n_questions'], 'questions')} "
                 f"of the {len(metrics['per_question']):,} asked")
        return "\n".join([line, *variant_report.summary_line("wvb", metrics.get("variants")),
                          *unreadable_warning(who, unreadable, metrics["n_rows"], rests)])
