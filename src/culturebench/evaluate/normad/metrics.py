"""NormAd's metrics.json: every metric per model and context from answers and the release's stories."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.normad import prompts
from culturebench.evaluate.normad.intervals import BOOTSTRAP_NOTE, add_intervals, bootstrap_scores
from culturebench.evaluate.normad.items import release_tables
from culturebench.evaluate.normad.measures import context_metrics
from culturebench.evaluate.normad.parsing import (
    DEFAULT_UNPARSED, UNPARSED_RULES, read_responses, responses_protocol, score_answers)
from culturebench.evaluate.runs.scores import ScoreResult


def score_responses(responses: pl.DataFrame, stories: pl.DataFrame, *, sources: list[dict] | None = None,
                    release: Path | str | None = None,
                    bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap(),
                    unparsed: str = DEFAULT_UNPARSED,
                    answer_rule: str = prompts.DEFAULT_ANSWER_RULE) -> ScoreResult:
    """Every metric from answers (model, story_id, context, response) and the release's stories; the point
    estimates are the paper's, each with a ``bootstrap`` interval over stories beside it (``<key>_ci``; BOOTSTRAP_NOTE),
    the settings under ``uncertainty`` and the paired model differences per context under ``model_differences``.
    Answers are read under ``answer_rule`` (prompts.ANSWER_RULES); ``answer_rule.n_read_differently`` counts those
    the other rule scores as another label (per context: ``n_read_differently``). ``protocol``: the one the answers'
    prompts are of (a ``protocol`` column of ``responses``, from ``read_responses``; None when not recorded).
    Tables: scored (one row per answer with gold label, country, zone, subaxis, predicted label, parse_status,
    correct, read_differently) and model_differences."""
    if responses.height == 0:
        raise InputError("no responses to score")
    protocol = responses_protocol(responses)
    scored = score_answers(responses.drop("protocol", strict=False), stories, unparsed, answer_rule)
    answered = set(scored["story_id"].unique().to_list())
    units = [s for s in stories["story_id"].to_list() if s in answered]  # release order
    intervals, differences, no_spread = bootstrap_scores(scored, units, bootstrap)
    models = sorted(scored["model"].unique().to_list())
    per_model = {}
    for model in models:
        mine = scored.filter(pl.col("model") == model)
        contexts = [c for c in prompts.CONTEXTS if (mine["context"] == c).any()]
        per_context = {}
        for c in contexts:
            frame = mine.filter(pl.col("context") == c)
            per_context[c] = context_metrics(frame)
            add_intervals(per_context[c], frame, intervals[(model, c)], bootstrap)
        per_model[model] = {
            "n_responses": mine.height,
            "n_stories": mine["story_id"].n_unique(),
            "contexts": contexts,
            "accuracy": {c: per_context[c]["accuracy"] for c in contexts},
            "accuracy_ci": {c: per_context[c]["accuracy_ci"] for c in contexts},
            "macro_f1": {c: per_context[c]["macro"]["f1"] for c in contexts},
            "macro_f1_ci": {c: per_context[c]["macro_ci"]["f1"] for c in contexts},
            "per_context": per_context,
        }
    gold_counts = stories.group_by("gold_label").len()
    metrics = {
        "benchmark": "normad",
        "release": None if release is None else str(release),
        "release_manifest_sha256": run_folder.release_manifest_sha256(release),
        "responses": sources or [],
        "models": models,
        "labels": list(prompts.LABELS),
        "contexts": list(prompts.CONTEXTS),
        "context_names": dict(prompts.CONTEXT_NAMES),
        "protocol": prompts.protocol_record(protocol),
        "answer_rule": {"rule": answer_rule, "meaning": prompts.ANSWER_RULES[answer_rule],
                        "n_read_differently": int(scored["read_differently"].sum()),
                        "read_differently": f"answers the {prompts.other_answer_rule(answer_rule)} rule scores as "
                                            "another label, under the same unparsed rule"},
        "unparsed_rule": {"rule": unparsed, "meaning": UNPARSED_RULES[unparsed]},
        "release_gold_distribution": {row[0]: row[1] for row in gold_counts.sort("gold_label").iter_rows()},
        "per_model": per_model,
        "model_differences": differences.to_dicts(),
        "uncertainty": bootstrap.record(unit="story", strata=None, n_units=len(units), **BOOTSTRAP_NOTE),
    }
    uncertainty.warn_no_spread(metrics, metrics["uncertainty"], no_spread, "normad")
    return ScoreResult(metrics=run_folder.json_safe(metrics, none_key="unparsed"),
                       tables={"scored": scored, "model_differences": differences})


def score(responses: Sequence[Path], release: Path, unparsed: str = DEFAULT_UNPARSED,
          answer_rule: str = prompts.DEFAULT_ANSWER_RULE) -> ScoreResult:
    """``culturebench score normad``: every metric from saved responses.jsonl files against a NormAd release."""
    release = Path(release)
    stories = release_tables(release)["stories"]
    frame = read_responses(responses)
    return score_responses(frame, stories, sources=[run_folder.source_info(p) for p in responses], release=release,
                           unparsed=unparsed, answer_rule=answer_rule)
