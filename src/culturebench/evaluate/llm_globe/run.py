"""``culturebench evaluate llm_globe`` / ``score llm_globe``: the engine's hooks (the plan: the model's prompts;
the answers: the model's, then the jurors'; the run's metrics and run.json's ``evaluation``; ``evaluate.runs.engine``
runs them), scoring saved responses and the summary line (the ``LLMGlobe`` benchmark's methods)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.contract import Answers, Hooks, Result, Run, RunPlan
from culturebench.errors import InputError
from culturebench.evaluate.reports import variant_report
from culturebench.evaluate.runs import companions, run_folder, run_steps, variants
from culturebench.evaluate.runs.limit import counted, limit_frame
from culturebench.evaluate.llm_globe import BENCHMARK, LLMGlobeOptions, prompts
from culturebench.evaluate.llm_globe.config import Config, Juror, config_of
from culturebench.evaluate.llm_globe.items import (
    PlannedRequest, asked_count, plan_closed, plan_jurors, plan_open, release_tables)
from culturebench.evaluate.llm_globe.measures import resolve_societies
from culturebench.evaluate.llm_globe.metrics import score, score_records
from culturebench.evaluate.llm_globe.parsing import read_human_ratings, read_responses, score_closed
from culturebench.evaluate.llm_globe.plots import write_run
from culturebench.evaluate.runs.readability import read_counts, status_counts, unreadable_warning
from culturebench.release_reader import Release


def check_inputs(release: Path, config: Config) -> dict:
    """The release's tables, checked against ``config`` (the parts and rubrics it needs, the human ratings, the
    societies) before any model is asked."""
    tables = release_tables(release)
    if config.part in ("closed", "both") and (tables["closed"] is None or tables["closed"].height == 0):
        raise InputError("release has no closed prompts", file=release)
    if config.part in ("open", "both"):
        if tables["open"] is None or tables["open"].height == 0:
            raise InputError("release has no open prompts", file=release)
        if config.jurors and tables["rubrics"] is None:
            raise InputError("release has no rubrics config (the jurors need it)", file=release)
    if config.human_ratings is not None:
        read_human_ratings(config.human_ratings)
    resolve_societies(tables["globe_2004"], config)
    return tables


def make_backend(juror: Juror, like=None):
    """The juror's backend, with the evaluated backend's client settings (``like``: --concurrency, --timeout)."""
    return companions.companion_backend(juror.model, juror.base_url, juror.backend, like, juror.request_shape)


ITEM_TABLE_NOTE = (
    "The release's closed prompts were built by culturebench from a GLOBE item table x GICS x roles with Sec. "
    "3.1.1's wording (the item-table route), not taken from LLM-GLOBE's own closed_prompts.csv: their items, "
    "dimension map, reverse flags, company types and Chinese text are not the paper's, so closed scores are not "
    "comparable with Tables 2-3.")
"""run.json's ``release_notes`` for a release whose ``closed`` is the item table's (its card says the same:
``builders.llm_globe.CONSIDERATIONS_ITEM_TABLE``)."""


def release_notes(manifest: dict, tables: dict, config: Config, limit: int | None) -> dict:
    """What run.json says about the release beside the results: where ``closed`` came from (ITEM_TABLE_NOTE for the
    item-table route) and, for a run in Chinese, the prompts not asked in Chinese because the release has no
    Chinese text for them (the published open_prompts.csv: 9-95 to 9-100)."""
    notes: dict[str, Any] = {}
    route = manifest.get("provenance", {}).get("closed_source")
    if config.part in ("closed", "both") and route is not None:
        notes["closed_source"] = route if route in ("released", "item_table") else "none"
        if route == "item_table":
            notes["closed_comparable_with_tables_2_3"] = False
            notes["closed_note"] = ITEM_TABLE_NOTE
    if "zh" in config.languages:
        for part in ("closed", "open"):
            if config.part not in (part, "both") or tables.get(part) is None:
                continue
            asked = tables[part] if limit is None else tables[part].head(limit)
            missing = asked.filter(pl.col("prompt_zh").is_null() | (pl.col("prompt_zh").str.strip_chars() == ""))
            notes[f"{part}_without_chinese"] = missing["id"].to_list()
        notes["without_chinese_note"] = ("prompts listed under *_without_chinese have no Chinese text in the release "
                                         "and were not asked in zh (the published open_prompts.csv has none for "
                                         "9-95 to 9-100)")
    return notes


def closed_records(model: str, items: list, responses: list) -> list[dict]:
    """responses.jsonl's records of closed answers: the rating parsed (``prompts.parse_rating``) and reverse-scored
    where the item is reversed (``prompts.reverse_score``)."""
    records = []
    for plan, response in zip(items, responses, strict=True):
        value, status = prompts.parse_rating(response.text)
        records.append({"part": "closed", "model": model, **plan.info, "response": response.text,
                        "parse_status": status, "answer": value,
                        "score": prompts.reverse_score(value, plan.info["reverse"]),
                        "finish_reason": response.finish_reason})
    return records


def open_records(model: str, answers: list[dict], items: list, responses: list) -> list[dict]:
    """responses.jsonl's records of open answers (without the prompt); each answer with its prompt also goes to
    ``answers``, for the jurors."""
    records = []
    for plan, response in zip(items, responses, strict=True):
        info = {k: v for k, v in plan.info.items() if k != "prompt"}
        records.append({"part": "open", "model": model, **info, "response": response.text,
                        "parse_status": prompts.open_status(response.text), "finish_reason": response.finish_reason})
        answers.append({**plan.info, "response": response.text})
    return records


def juror_records(model: str, items: list, responses: list) -> list[dict]:
    """responses.jsonl's records of the jurors' ratings of open answers, parsed."""
    records = []
    for plan, response in zip(items, responses, strict=True):
        value, status = prompts.parse_rating(response.text)
        records.append({"part": "juror", "model": model, **plan.info, "rating_text": response.text,
                        "parse_status": status, "rating": value})
    return records


@dataclass(frozen=True)
class PartPlan:
    """One part's prompts (after ``--limit``), what they cover, its requests (a generator) and their number."""

    part: str
    prompts: pl.DataFrame
    covers: Any
    requests: Iterator[PlannedRequest]
    total: int


@dataclass(frozen=True, kw_only=True)
class Plan(RunPlan):
    """What ``evaluate`` asks the model: the release's tables, the run's Config, the sampling temperature and the
    closed and/or open parts (the jurors are asked afterwards, about the open answers: ``answer``)."""

    tables: dict[str, pl.DataFrame | None]
    config: Config
    temperature: float
    parts: tuple[PartPlan, ...]


def variants_report(plan: Plan, answers: Answers, scored) -> dict:
    """metrics.json's ``variants`` block of a fresh run asked under ``--variants`` (``variant_report.report``): each
    variant's headline by the same scoring of its closed records alone (``metrics.score_records``), the closed
    prompts' being the variants'."""
    config, release = plan.config, Path(plan.options.release)
    human = read_human_ratings(config.human_ratings) if config.human_ratings is not None else None
    closed_only = plan.options.replace(split="closed")

    def variant_score(variant: str) -> variant_report.VariantScore:
        records = read_responses([answers.path], variant)
        metrics = scored.metrics if variant == variants.DEFAULT else score_records(
            records, plan.tables, config, human=human, release=release,
            sources=[run_folder.source_info(answers.path)]).metrics
        return variant_report.variant_score(BENCHMARK, metrics, closed_only, release,
                                      closed_items(records, plan.tables["closed"]))

    return variant_report.report(variant_answers(read_responses([answers.path], variant=None), plan.tables["closed"]),
                           plan.options.variants, variant_score, seed=plan.options.seed)


def closed_items(records: list[dict], closed: pl.DataFrame) -> dict[str, dict[str, float]]:
    """Per dimension's closed mean (the headline's ``mean_<dimension>``, a mean over the valid answers) each
    answer's reverse-scored value (``parsing.score_closed``), by prompt, language and sample (the variants report's
    interval resamples them)."""
    out: dict[str, dict[str, float]] = {}
    scored = score_closed([r for r in records if r["part"] == "closed"], closed)
    for dimension, prompt, language, sample, value in scored.drop_nulls("score").select(
            "dimension", "id", "language", "sample_index", "score").iter_rows():
        out.setdefault(f"mean_{dimension}", {})[f"{prompt}/{language}/{sample}"] = value
    return out


def variant_answers(records: list[dict], closed: pl.DataFrame) -> list[variant_report.VariantAnswer]:
    """Each closed answer as the variants report reads it: its rating (the codes are kept under every variant) and
    the position the variant listed it at (1: the scale's end the prompt names first), the item being the prompt,
    language and sample; what was asked is the prompt as the variant words it."""
    text = {(r["id"], language): r[f"prompt_{language}"] for r in closed.iter_rows(named=True)
            for language in prompts.LANGUAGES}
    out = []
    for r in records:
        if r["part"] != "closed":
            continue
        variant, value = r.get("variant") or variants.DEFAULT, r.get("answer")
        position = None if value is None or not prompts.SCALE_MIN <= value <= prompts.SCALE_MAX else (
            prompts.SCALE_MAX - value + 1 if variant == "reversed" else value - prompts.SCALE_MIN + 1)
        asked = prompts.VARIANT_PROMPT[variant](text[(r["id"], r["language"])], r["language"])
        out.append(variant_report.VariantAnswer(variant, f"{r['id']}/{r['language']}/{r['sample_index']}",
                                          None if value is None else str(value), position,
                                          (r["id"], r["language"], r["sample_index"], asked)))
    return out


class LLMGlobeHooks(Hooks):
    """LLM-GLOBE's hooks of the engine (``contract.Hooks``)."""

    def plan(self, options: LLMGlobeOptions, model: str = "model", *, roles=None) -> Plan:
        """The closed and/or open prompts x languages x samples (``limit`` of each part, spread over the dimensions:
        ``limit.spread_positions``), read from the release and checked against the options (before a model is loaded);
        ``model`` names the open answers' response ids."""
        config = config_of(options)
        tables = check_inputs(Path(options.release), config)
        temperature = prompts.TEMPERATURE if options.temperature is None else options.temperature
        parts = []
        if config.part in ("closed", "both"):
            closed, covers = limit_frame(tables["closed"], ["dimension"], options.limit, options.seed, item="prompts",
                                         columns=["dimensions"], part="closed")
            requests = plan_closed(closed, config.languages, samples=config.samples, temperature=temperature,
                                   max_tokens=options.max_tokens or prompts.CLOSED_MAX_TOKENS, seed=options.seed,
                                   variants=options.variants)
            parts.append(PartPlan("closed", closed, covers, requests,
                                  asked_count(closed, config.languages, config.samples) * len(options.variants)))
        if config.part in ("open", "both"):
            opened, covers = limit_frame(tables["open"], ["dimension"], options.limit, options.seed, item="prompts",
                                         columns=["dimensions"], part="open")
            requests = plan_open(opened, config.languages, model, samples=config.open_samples, temperature=temperature,
                                 max_tokens=config.open_max_tokens, seed=options.seed)
            parts.append(PartPlan("open", opened, covers, requests,
                                  asked_count(opened, config.languages, config.open_samples)))
        return Plan(options=options, model=model, requests=itertools.chain.from_iterable(p.requests for p in parts),
                    total=sum(p.total for p in parts), description="llm_globe", covers=tuple(p.covers for p in parts),
                    tables=tables, config=config, temperature=temperature, parts=tuple(parts))

    def answer(self, run: Run, plan: Plan) -> Answers:
        """The model's answers to each part, then, after the open part, each juror's ratings of the open answers, into
        one responses.jsonl appended batch by batch (``run_steps.StreamedRun``). A juror's backend is ``run.roles``'s
        of its name where the caller gave one, else made from the config."""
        model, config = plan.model, plan.config
        by_step: dict[str, dict] = {}
        answers: list[dict] = []  # the open answers the jurors rate (the open prompts x languages x samples: small)
        make_records = {"closed": partial(closed_records, model), "open": partial(open_records, model, answers)}
        with run_steps.StreamedRun(run.out, console=run.console) as streamed:
            for part in plan.parts:
                by_step[part.part] = run_steps.runner_stats(streamed.step(
                    run.backend, part.requests, f"llm_globe {part.part}", make_records[part.part], total=part.total))
                if part.part != "open":
                    continue
                for juror in config.jurors:
                    juror_backend = run.roles.get(juror.name) or make_backend(juror, run.backend)
                    jplanned = plan_jurors(answers, plan.tables["rubrics"], juror, temperature=config.juror_temperature,
                                           max_tokens=config.juror_max_tokens)
                    by_step[f"juror:{juror.name}"] = run_steps.runner_stats(streamed.step(
                        juror_backend, jplanned, f"juror {juror.name}", partial(juror_records, model),
                        total=len(answers)))
            path = streamed.close()
        return Answers(path, streamed.writer.n_records, run_steps.total_stats(by_step.values()), by_step=by_step)

    def requests(self, plan: Plan) -> Iterator:
        return (planned.request for part in plan.parts for planned in part.requests)

    def score(self, plan: RunPlan, answers: Answers) -> Result:
        """The metrics of the responses files (a fresh run's one or ``culturebench score``'s: ``metrics.score``,
        the release's tables and the config's human ratings with them)."""
        scored = score(list(answers.files), plan.options.release, config_of(plan.options))
        if not answers.saved and len(plan.options.variants) > 1:
            scored.metrics["variants"] = run_folder.json_safe(variants_report(plan, answers, scored))
        return Result(metrics=scored.metrics, written=[], score=scored)

    def write(self, result: Result, out: Path) -> list[Path]:
        """metrics.json and the plots (``plots.write_run``), and with ``--variants`` the position-bias figure."""
        return [*write_run(result.score, Path(out)),
                *variant_report.write_position_bias(result.metrics.get("variants"), out)]

    def evaluation(self, plan: Plan, result: Result, answers: Answers) -> dict:
        """run.json's ``evaluation`` (the config and sampling asked), the runner's totals per part and juror, notes on
        the release, the jurors and the parse statuses."""
        options, config, metrics = plan.options, plan.config, result.metrics
        return {"evaluation": {"config": config.as_dict(), "temperature": plan.temperature,
                               "max_tokens": options.max_tokens, "seed": options.seed, "limit": options.limit,
                               "n_records": answers.n_records, "variants": list(options.variants)},
                "runner_by_part": answers.by_step,
                "release_notes": release_notes(Release.open(options.release).manifest.data, plan.tables, config, options.limit),
                "jurors": [{"name": j.name, "model": j.model, "backend": j.backend, "language": j.language}
                           for j in config.jurors],
                "parse_status": {"closed": metrics.get("closed", {}).get("parse_status"),
                                 "jurors": metrics.get("open", {}).get("juror_parse_status")}}

    def summary(self, metrics: dict) -> str:
        """One line per model and part for the command line, the answers read and unreadable beside the closed
        part's means; a ``warning:`` per model whose closed answers could not all be read and for open answers the
        jury could not score (``readability.unreadable_warning``)."""
        lines, warnings = [], []
        for part in ("closed", "open"):
            if part not in metrics:
                continue
            for model, dims in metrics[part]["mean_sd"].items():
                text = "; ".join(f"{d} {v['mean']:.2f}" for d, v in dims.items() if v["mean"] is not None)
                counts = ""
                if part == "closed":
                    status = metrics["closed"]["parse_status"].get(model) or {}
                    read, unreadable = status_counts(status, ("ok", "out_of_range"))
                    off = status.get("out_of_range", 0)
                    counts = f" ({read_counts(read, unreadable)}, {off:,} off the scale, left out)"
                    warnings += unreadable_warning(
                        f"llm_globe closed {model}", unreadable, read + unreadable,
                        f"the means rest on the {counted(read - off, 'answers')} on the scale, the others left out")
                lines.append(f"llm_globe {part} {model}{counts}: {text or 'nothing scored'}")
            if part == "open":
                jury = metrics["open"]["jury"]
                if jury["method"] == "none":
                    lines.append(f"llm_globe jury: {jury['note']}")
                elif jury["method"] == "least_squares" and jury["test"]:
                    lines.append(f"llm_globe jury: test MAE {jury['test']['mae']:.3f}, R^2 "
                                 f"{jury['test']['r2'] if jury['test']['r2'] is None else round(jury['test']['r2'], 3)}")
                else:
                    lines.append(f"llm_globe jury: {jury['method']}")
                if jury["method"] != "none":
                    n, scored = metrics["open"]["n_answers"], metrics["open"]["n_scored"]
                    warnings += unreadable_warning(
                        "llm_globe open", n - scored, n,
                        f"the open means rest on the {counted(scored, 'answers')} the jury scored (a juror's rating "
                        "unreadable: metrics.json open.juror_parse_status)")
        lines += variant_report.summary_line("llm_globe", metrics.get("variants"))
        return "\n".join(lines + warnings) or "llm_globe: nothing scored"
