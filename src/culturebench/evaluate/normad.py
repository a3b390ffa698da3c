"""NormAd evaluation and scoring (Rao et al., "NormAd: A Benchmark for Measuring the Cultural Adaptability of Large
Language Models", 2024, Sec. 3-5, App. A): ``culturebench evaluate normad`` and ``culturebench score normad``.

``evaluate`` asks a model, for every story of a NormAd release (config ``stories``), whether the story's action is
socially acceptable under each of five contexts (``normad_prompts.CONTEXTS``: none, COUNTRY, VALUE, COUNTRY+VALUE,
RULE-OF-THUMB) with the prompt of App. A.3 Fig. 9, options Yes / No / Neither, at temperature 0 with ``max_tokens`` 10
(the authors' inference config; the paper prints no decoding settings),
through ``runner.run_requests`` with a response cache in the run folder; it writes responses.jsonl, metrics.json,
the plots and run.json. ``score`` recomputes everything from one or more responses.jsonl files (re-parsing the raw
answers against the release's gold labels).

Metrics, per model and context (Sec. 4-5, App. A.4, Figs. 3, 5, 6, 10, 11, 13):

- accuracy over the three labels (Sec. 4, Fig. 3), and the accuracy over parsed answers only;
- per-label and macro precision / recall / F1 over yes / no / neutral (Table A.4; scikit-learn's definition with
  ``labels=LABELS``; 0/0 = 0);
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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import compare, plots, runs, uncertainty
from culturebench.evaluate import normad_prompts as prompts
from culturebench.evaluate.limit import limit_frame
from culturebench.release import load_manifest

if TYPE_CHECKING:
    from culturebench.evaluate.backends import ChatRequest

CONFIG = "stories"
REQUIRED_COLUMNS = ("id", "country", "value", "rule_of_thumb", "story", "gold_label")
OPTIONAL_COLUMNS = ("axis", "subaxis", "iw_zone")
UNKNOWN = "unknown"
"""Zone / subaxis of a story whose release value is missing."""
RESPONSE_FIELDS = ("model", "story_id", "context", "response")
UNPARSED_RULES = {
    "neutral": "an answer that is not one clear Yes / No / Neither is read as Neither (the gold label neutral): the "
               "authors' fallback; Table A.4's rows of models that always land on Neither fit it",
    "wrong": "an answer that is not one clear Yes / No / Neither counts as no label: wrong, a miss for its gold "
             "label and a false positive for none (--unparsed-wrong)",
}
"""How an unparsed answer is scored (metrics.json ``unparsed_rule``); the first is the default."""
DEFAULT_UNPARSED = "neutral"
RESPONSE_KEY = ("model", "story_id", "context", "sample_index")
"""What identifies one answer of responses.jsonl: a second line with the same is refused, not counted twice."""


@dataclass
class ScoreResult:
    metrics: dict
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    """scored: one row per answer with gold label, country, zone, subaxis, predicted label, parse_status, correct."""


# ---------------------------------------------------------------------------------------------------- release


def release_tables(release: Path, split: str | None = None) -> dict[str, pl.DataFrame]:
    """The release's ``stories`` (story_id as text, gold_label in LABELS, zone and subaxis filled with "unknown"),
    all splits concatenated in release order, or only ``split``."""
    release = Path(release)
    tables = runs.release_configs(release, "normad", "a NormAd release")
    stories = runs.release_config(tables, CONFIG, release, columns=REQUIRED_COLUMNS, split=split)
    for column in OPTIONAL_COLUMNS:
        if column not in stories.columns:
            stories = stories.with_columns(pl.lit(None, dtype=pl.String).alias(column))
    gold = [prompts.normalise_label(v) for v in stories["gold_label"].to_list()]
    bad = next((i for i, g in enumerate(gold) if g is None), None)
    if bad is not None:
        raise InputError(f"unknown gold label {stories['gold_label'][bad]!r} (expected yes, no or neutral)",
                         file=release, row=bad + 1, column="gold_label")
    stories = stories.with_columns(
        pl.col("id").cast(pl.String).alias("story_id"),
        pl.Series("gold_label", gold, dtype=pl.String),
        *(pl.col(c).cast(pl.String).fill_null(UNKNOWN).replace("", UNKNOWN).alias(c) for c in ("subaxis", "iw_zone")),
        *(pl.col(c).cast(pl.String) for c in ("country", "value", "rule_of_thumb", "story")))
    duplicated = stories.filter(pl.col("story_id").is_duplicated())
    if duplicated.height:
        raise InputError(f"story id {duplicated['story_id'][0]!r} occurs more than once", file=release, column="id")
    return {"stories": stories}


# ---------------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class PlannedRequest:
    story_id: str
    context: str  # one of normad_prompts.CONTEXTS
    sample_index: int
    prompt: str
    request: ChatRequest


def plan_requests(stories: pl.DataFrame, *, contexts: Sequence[str] = prompts.CONTEXTS,
                  samples: int = prompts.DEFAULT_SAMPLES, temperature: float = prompts.TEMPERATURE,
                  max_tokens: int = prompts.MAX_TOKENS, seed: int | None = 0) -> list[PlannedRequest]:
    """One request per story, context and sample, in story order then context order."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    planned = []
    for row in stories.select("story_id", "story", "country", "value", "rule_of_thumb").iter_rows(named=True):
        for context in contexts:
            text = prompts.prompt_text(context, row["story"], row["country"], row["value"], row["rule_of_thumb"])
            for r in range(samples):
                planned.append(PlannedRequest(row["story_id"], context, r, text,
                                              ChatRequest(prompts.messages(text), sampling, sample_index=r)))
    return planned


# ---------------------------------------------------------------------------------------------------- metrics


def label_scores(gold: Sequence[str], predicted: Sequence[str | None],
                 labels: Sequence[str] = prompts.LABELS) -> dict:
    """Per-label precision / recall / F1 / support and their unweighted (macro) means, as scikit-learn's
    ``precision_recall_fscore_support(labels=labels, zero_division=0)``: a prediction outside ``labels`` (None:
    unparsed) is a false negative of its gold label only."""
    per_label = {}
    for label in labels:
        tp = sum(1 for g, p in zip(gold, predicted) if g == label and p == label)
        predicted_n = sum(1 for p in predicted if p == label)
        support = sum(1 for g in gold if g == label)
        precision = tp / predicted_n if predicted_n else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_label[label] = {"precision": precision, "recall": recall, "f1": f1, "support": support}
    n = len(labels)
    return {"per_label": per_label,
            "macro": {k: sum(per_label[lab][k] for lab in labels) / n for k in ("precision", "recall", "f1")}}


def accuracy(gold: Sequence[str], predicted: Sequence[str | None]) -> float | None:
    """Share of answers equal to the gold label (None: no label, wrong); None without answers."""
    return sum(1 for g, p in zip(gold, predicted) if g == p) / len(gold) if len(gold) else None


def scored_label(answer: prompts.Answer, unparsed: str = DEFAULT_UNPARSED) -> str | None:
    """The label an answer is scored as under the ``unparsed`` rule (UNPARSED_RULES)."""
    if unparsed not in UNPARSED_RULES:
        raise InputError(f"unknown rule for unparsed answers {unparsed!r}; choose from {', '.join(UNPARSED_RULES)}")
    if answer.status == "parsed" or unparsed == "wrong":
        return answer.label
    return "neutral"


def score_answers(responses: pl.DataFrame, stories: pl.DataFrame, unparsed: str = DEFAULT_UNPARSED) -> pl.DataFrame:
    """Each answer parsed and joined to its story: adds country, gold_label, iw_zone, subaxis, predicted (under the
    ``unparsed`` rule), parse_status, correct."""
    joined = responses.join(stories.select("story_id", "country", "gold_label", "iw_zone", "subaxis"),
                            on="story_id", how="left")
    unknown = joined.filter(pl.col("gold_label").is_null())
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"story id {first['story_id']!r} is not in the release", file=first.get("source"),
                         row=first.get("row"), column="story_id")
    answers = [prompts.parse_answer(text) for text in joined["response"].to_list()]
    return joined.with_columns(pl.Series("predicted", [scored_label(a, unparsed) for a in answers], dtype=pl.String),
                               pl.Series("parse_status", [a.status for a in answers], dtype=pl.String)).with_columns(
        (pl.col("predicted").fill_null("") == pl.col("gold_label")).alias("correct"))


def always_neither(gold: Sequence[str]) -> dict:
    """Table A.4's reference point: accuracy and macro precision / recall / F1 of answering Neither (neutral) to
    every story with these gold labels."""
    scores = label_scores(gold, ["neutral"] * len(gold))
    return {"accuracy": accuracy(gold, ["neutral"] * len(gold)), **scores["macro"]}


def _accuracy_by(frame: pl.DataFrame, column: str) -> dict[str, dict]:
    grouped = (frame.group_by(column).agg(pl.col("correct").mean().alias("accuracy"), pl.len().alias("n"))
               .sort(column))
    return {row[column]: {"accuracy": row["accuracy"], "n": row["n"]} for row in grouped.iter_rows(named=True)}


def context_metrics(frame: pl.DataFrame) -> dict:
    """Every number for one model and context (rows of ``score_answers``)."""
    gold = frame["gold_label"].to_list()
    predicted = frame["predicted"].to_list()
    scores = label_scores(gold, predicted)
    status = {s: 0 for s in prompts.STATUSES}
    for s, n in frame.group_by("parse_status").len().iter_rows():
        status[s] = n
    parsed = [(g, p) for g, p, s in zip(gold, predicted, frame["parse_status"]) if s == "parsed"]
    by_gold = {label: {"accuracy": accuracy([g for g in gold if g == label],
                                            [p for g, p in zip(gold, predicted) if g == label]),
                       "n": sum(1 for g in gold if g == label)} for label in prompts.LABELS}
    confusion = {g: {p: 0 for p in (*prompts.LABELS, "unparsed")} for g in prompts.LABELS}
    for g, p in zip(gold, predicted):
        confusion[g][p or "unparsed"] += 1
    return {
        "n": len(gold),
        "n_stories": frame["story_id"].n_unique(),
        "parse_status": status,
        "n_unparsed": len(gold) - len(parsed),
        "unparsed_share": (len(gold) - len(parsed)) / len(gold) if gold else None,
        "accuracy": accuracy(gold, predicted),
        "accuracy_parsed": accuracy([g for g, _ in parsed], [p for _, p in parsed]),
        "macro": scores["macro"],
        "per_label": scores["per_label"],
        "accuracy_by_gold": by_gold,
        "accuracy_by_zone": _accuracy_by(frame, "iw_zone"),
        "accuracy_by_subaxis": _accuracy_by(frame, "subaxis"),
        "accuracy_by_country": _accuracy_by(frame, "country"),
        "baselines": {"always_neither": always_neither(gold)},
        "predicted_distribution": {label: sum(1 for p in predicted if p == label)
                                   for label in (*prompts.LABELS, None)},
        "confusion": confusion,
    }


# ---------------------------------------------------------------------------------------------------- uncertainty

BOOTSTRAP_NOTE = {
    "statistic": "per model and context, accuracy (Sec. 4, Fig. 3), accuracy over parsed answers and per-label / "
                 "macro precision, recall and F1 (Table A.4) recomputed from the answer counts of the resampled "
                 "stories (a story drawn twice counts twice)",
    "paired": "one resample of stories serves every model and context, so differences between models are paired; "
              "a difference is taken on the stories both models answered in that context",
    "groups": "accuracy by Inglehart-Welzel zone, gold label, subaxis and country: each group's stories resampled "
              "within the group (uncertainty.group_breakdown over each story's share of correct answers); groups "
              f"of fewer than {uncertainty.MIN_GROUP_SIZE} stories flagged small and not ranked",
    "significance": "accuracy difference between two models per context: two-sided p-value of difference = 0 with "
                    "the standard error of the paired bootstrap distribution (normal approximation, "
                    "uncertainty.bootstrap_pvalue), Holm-adjusted over all model pairs x contexts; significant when "
                    "the adjusted p < 1 - confidence level",
}
"""How NormAd's intervals are computed (recorded in metrics.json under ``uncertainty``)."""
COUNT_FIELDS = ("n", "correct", "parsed", *(f"{kind}_{label}" for kind in ("tp", "predicted", "support")
                                             for label in prompts.LABELS), "correct_parsed")
"""Per story, model and context: its answers, the right ones, the parsed ones, per label the true positives,
predictions and gold answers, and the right parsed ones: everything accuracy and Table A.4's P / R / F1 are sums
of."""
BREAKDOWNS = {"zone": ("iw_zone", "accuracy_by_zone"), "gold_label": ("gold_label", "accuracy_by_gold"),
              "subaxis": ("subaxis", "accuracy_by_subaxis"), "country": ("country", "accuracy_by_country")}
"""Per-group accuracy: name in metrics.json's ``breakdowns`` -> (column of ``score_answers``, key of
``context_metrics``)."""


def story_counts(scored: pl.DataFrame, units: Sequence[str],
                 cells: Sequence[tuple[str, str]]) -> np.ndarray:
    """COUNT_FIELDS per story (``units`` order), (model, context) cell and field: stories x cells x fields."""
    labels = prompts.LABELS
    per_story = scored.group_by("model", "context", "story_id").agg(
        pl.len().alias("n"), pl.col("correct").sum(), (pl.col("parse_status") == "parsed").sum().alias("parsed"),
        *(((pl.col("gold_label") == lab) & (pl.col("predicted") == lab)).fill_null(False).sum().alias(f"tp_{lab}")
          for lab in labels),
        *((pl.col("predicted") == lab).fill_null(False).sum().alias(f"predicted_{lab}") for lab in labels),
        *((pl.col("gold_label") == lab).sum().alias(f"support_{lab}") for lab in labels),
        (pl.col("correct") & (pl.col("parse_status") == "parsed")).sum().alias("correct_parsed"))
    position = {s: i for i, s in enumerate(units)}
    cell_index = {c: i for i, c in enumerate(cells)}
    counts = np.zeros((len(units), len(cells), len(COUNT_FIELDS)))
    rows = [position[s] for s in per_story["story_id"]]
    columns = [cell_index[(m, c)] for m, c in zip(per_story["model"], per_story["context"])]
    counts[rows, columns, :] = per_story.select(COUNT_FIELDS).to_numpy()
    return counts


def scores_from_counts(sums: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, accuracy over parsed answers, macro and per-label P / R / F1 per cell from summed COUNT_FIELDS
    (cells x fields), as ``accuracy`` and ``label_scores`` compute them (0/0 = 0 for P / R / F1); NaN for a cell
    without answers (a resample that drew none of its stories)."""
    k = len(prompts.LABELS)
    n, correct, parsed = sums[:, 0], sums[:, 1], sums[:, 2]
    tp, predicted, support = sums[:, 3:3 + k], sums[:, 3 + k:3 + 2 * k], sums[:, 3 + 2 * k:3 + 3 * k]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(predicted > 0, tp / np.where(predicted > 0, predicted, 1), 0.0)
        recall = np.where(support > 0, tp / np.where(support > 0, support, 1), 0.0)
        total = precision + recall
        f1 = np.where(total > 0, 2 * precision * recall / np.where(total > 0, total, 1), 0.0)
        none = np.where(n > 0, 1.0, np.nan)[:, None]
        return {"accuracy": correct / n, "accuracy_parsed": sums[:, 3 + 3 * k] / parsed,
                "precision": precision * none, "recall": recall * none, "f1": f1 * none}


def bootstrap_scores(scored: pl.DataFrame, units: Sequence[str],
                     settings: uncertainty.Bootstrap) -> tuple[dict[tuple[str, str], dict], pl.DataFrame]:
    """Intervals over stories (``uncertainty.resample_units``, one stratum: the ``units`` that were answered;
    BOOTSTRAP_NOTE): per (model, context) cell ``{"accuracy": [low, high], "accuracy_parsed": ..., "macro":
    {precision, recall, f1: [low, high]}, "per_label": {label: {precision, recall, f1: [low, high]}}}``, and the
    paired differences (context, model_a < model_b: accuracy_a and accuracy_b on the n_common stories both
    answered, difference, low, high, pvalue, pvalue_holm, significant)."""
    from culturebench.evaluate.stats import holm

    models = sorted(scored["model"].unique().to_list())
    present = set(zip(scored["model"], scored["context"]))
    cells = [(m, c) for m in models for c in prompts.CONTEXTS if (m, c) in present]
    counts = story_counts(scored, units, cells)
    pairs = [(c, a, b) for c in prompts.CONTEXTS for i, a in enumerate(models) for b in models[i + 1:]
             if (a, c) in present and (b, c) in present]
    common = np.stack([(counts[:, cells.index((a, c)), 0] > 0) & (counts[:, cells.index((b, c)), 0] > 0)
                       for c, a, b in pairs], axis=1) if pairs else np.zeros((len(units), 0), dtype=bool)
    paired = np.stack([np.stack([counts[:, cells.index((m, c)), f] * common[:, p] for m in (a, b) for f in (1, 0)],
                                axis=1) for p, (c, a, b) in enumerate(pairs)], axis=1) if pairs \
        else np.zeros((len(units), 0, 4))  # stories x pairs x (correct_a, n_a, correct_b, n_b) on common stories

    def statistic(positions: np.ndarray) -> np.ndarray:
        s = scores_from_counts(counts[positions].sum(axis=0))
        d = paired[positions].sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            differences = d[:, 0] / d[:, 1] - d[:, 2] / d[:, 3]
        return np.concatenate([s["accuracy"], s["accuracy_parsed"], *(s[k].mean(axis=1) for k in ("precision",
                               "recall", "f1")), *(s[k].ravel() for k in ("precision", "recall", "f1")), differences])

    result = uncertainty.resample_units([range(len(units))], statistic, settings)
    n, k = len(cells), len(prompts.LABELS)
    out = {}
    for i, cell in enumerate(cells):
        out[cell] = {"accuracy": result.interval(i), "accuracy_parsed": result.interval(n + i),
                     "macro": {key: result.interval((2 + j) * n + i)
                               for j, key in enumerate(("precision", "recall", "f1"))},
                     "per_label": {label: {key: result.interval(5 * n + j * n * k + i * k + li)
                                           for j, key in enumerate(("precision", "recall", "f1"))}
                                   for li, label in enumerate(prompts.LABELS)}}
    first = 5 * n + 3 * n * k
    full = paired.sum(axis=0)
    rows = []
    for p, (context, a, b) in enumerate(pairs):
        low, high = result.interval(first + p)
        rows.append({"context": context, "model_a": a, "model_b": b,
                     "accuracy_a": full[p, 0] / full[p, 1] if full[p, 1] else None,
                     "accuracy_b": full[p, 2] / full[p, 3] if full[p, 3] else None,
                     "difference": uncertainty.finite_or_none(result.estimate[first + p]), "low": low, "high": high,
                     "pvalue": result.pvalue(first + p), "n_common": int(common[:, p].sum())})
    alpha = 1 - settings.confidence_level
    for row, adjusted in zip(rows, holm([r["pvalue"] for r in rows])):
        row["pvalue_holm"] = adjusted
        row["significant"] = adjusted is not None and adjusted < alpha
    differences = pl.DataFrame(rows, schema={
        "context": pl.String, "model_a": pl.String, "model_b": pl.String, "accuracy_a": pl.Float64,
        "accuracy_b": pl.Float64, "difference": pl.Float64, "low": pl.Float64, "high": pl.Float64,
        "pvalue": pl.Float64, "n_common": pl.Int64, "pvalue_holm": pl.Float64, "significant": pl.Boolean})
    return out, differences


def add_intervals(per_context: dict, frame: pl.DataFrame, cell: dict, settings: uncertainty.Bootstrap) -> None:
    """``context_metrics``' numbers for one model and context (``frame``: its rows of ``score_answers``) with
    their intervals beside them as ``<key>_ci`` (``cell``: from ``bootstrap_scores``), and ``breakdowns``: per
    BREAKDOWNS, the rows of ``uncertainty.group_breakdown`` over each story's share of correct answers (its
    stories resampled within the group; ranked, then the small groups), each with the group's accuracy as
    ``context_metrics`` computed it, its interval, n_stories, n_answers, small and rank."""
    per_context["accuracy_ci"] = cell["accuracy"]
    per_context["accuracy_parsed_ci"] = cell["accuracy_parsed"]
    per_context["macro_ci"] = cell["macro"]
    per_context["per_label_ci"] = cell["per_label"]
    columns = list(dict.fromkeys(column for column, _ in BREAKDOWNS.values()))
    per_story = frame.group_by("story_id", maintain_order=True).agg(pl.col("correct").mean(),
                                                                    *(pl.col(c).first() for c in columns))
    per_context["breakdowns"] = {}
    for name, (column, key) in BREAKDOWNS.items():
        rows = uncertainty.group_breakdown(per_story["correct"].to_list(), per_story[column].to_list(), settings)
        accuracies = per_context[key]
        per_context[f"{key}_ci"] = {r["group"]: [r["low"], r["high"]] for r in rows}
        per_context["breakdowns"][name] = [
            {"group": r["group"], "accuracy": accuracies[r["group"]]["accuracy"], "accuracy_ci": [r["low"], r["high"]],
             "n_stories": r["n"], "n_answers": accuracies[r["group"]]["n"], "small": r["small"], "rank": r["rank"]}
            for r in rows]


def score_responses(responses: pl.DataFrame, stories: pl.DataFrame, *, sources: list[dict] | None = None,
                    release: Path | str | None = None,
                    bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap(),
                    unparsed: str = DEFAULT_UNPARSED) -> ScoreResult:
    """Every metric from answers (model, story_id, context, response) and the release's stories; the point
    estimates are the paper's, each with a ``bootstrap`` interval over stories beside it (``<key>_ci``; BOOTSTRAP_NOTE),
    the settings under ``uncertainty`` and the paired model differences per context under ``model_differences``."""
    if responses.height == 0:
        raise InputError("no responses to score")
    scored = score_answers(responses, stories, unparsed)
    answered = set(scored["story_id"].unique().to_list())
    units = [s for s in stories["story_id"].to_list() if s in answered]  # release order
    intervals, differences = bootstrap_scores(scored, units, bootstrap)
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
        "release_manifest_sha256": runs.release_manifest_sha256(release),
        "responses": sources or [],
        "models": models,
        "labels": list(prompts.LABELS),
        "contexts": list(prompts.CONTEXTS),
        "context_names": dict(prompts.CONTEXT_NAMES),
        "constants": {"temperature": prompts.TEMPERATURE, "max_tokens": prompts.MAX_TOKENS,
                      "prompt_source": prompts.PROMPT_SOURCE},
        "unparsed_rule": {"rule": unparsed, "meaning": UNPARSED_RULES[unparsed]},
        "release_gold_distribution": {row[0]: row[1] for row in gold_counts.sort("gold_label").iter_rows()},
        "per_model": per_model,
        "model_differences": differences.to_dicts(),
        "uncertainty": bootstrap.record(unit="story", strata=None, n_units=len(units), **BOOTSTRAP_NOTE),
    }
    return ScoreResult(metrics=runs.json_safe(metrics, none_key="unparsed"),
                       tables={"scored": scored, "model_differences": differences})


def read_responses(paths: Sequence[Path]) -> pl.DataFrame:
    """responses.jsonl files (evaluate's output) as one table: model, story_id, context, sample_index, response,
    source, row."""
    rows = []
    for path in map(Path, paths):
        before = len(rows)
        for number, record in runs.jsonl_records(path, RESPONSE_FIELDS, unique=RESPONSE_KEY):
            if record["context"] not in prompts.CONTEXTS:
                raise InputError(f"unknown context {record['context']!r}", file=path, row=number,
                                 column="context")
            response = record["response"]
            rows.append({"model": str(record["model"]), "story_id": str(record["story_id"]),
                         "context": record["context"], "sample_index": int(record.get("sample_index") or 0),
                         "response": None if response is None else str(response), "source": str(path),
                         "row": number})
        if len(rows) == before:
            raise InputError("responses file has no records", file=path)
    return pl.DataFrame(rows, schema={"model": pl.String, "story_id": pl.String, "context": pl.String,
                                      "sample_index": pl.Int64, "response": pl.String, "source": pl.String,
                                      "row": pl.Int64})


def score(responses: Sequence[Path], release: Path, unparsed: str = DEFAULT_UNPARSED) -> ScoreResult:
    """``culturebench score normad``: every metric from saved responses.jsonl files against a NormAd release."""
    release = Path(release)
    stories = release_tables(release)["stories"]
    frame = read_responses(responses)
    return score_responses(frame, stories, sources=[runs.source_info(p) for p in responses], release=release,
                           unparsed=unparsed)


# ---------------------------------------------------------------------------------------------------- plots


def error_bars(values: Sequence[float | None], intervals: Sequence[Sequence[float | None] | None]) -> list[list[float]]:
    """matplotlib's ``yerr`` (distances below and above each value) from [low, high] intervals; 0 where a value
    has no interval (metrics of a run scored before intervals existed, a group of one story)."""
    below, above = [], []
    for value, bounds in zip(values, intervals):
        low, high = bounds or (None, None)
        below.append(max(0.0, value - low) if value is not None and low is not None else 0.0)
        above.append(max(0.0, high - value) if value is not None and high is not None else 0.0)
    return [below, above]


def accuracy_by_context_png(metrics: dict, path: Path) -> None:
    """Fig. 3: accuracy per context, one bar group per context and a bar per model with its bootstrap interval."""
    plt = plots.pyplot()
    models = metrics["models"]
    contexts = list(prompts.CONTEXTS)
    width = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 * len(contexts)), 4.5), dpi=100)
    colours = plt.get_cmap("tab10")
    for i, model in enumerate(models):
        m = metrics["per_model"][model]
        xs = plots.grouped_bar_x(range(len(contexts)), len(models), i, width)
        values = [m["accuracy"].get(c) for c in contexts]
        err = error_bars(values, [m.get("accuracy_ci", {}).get(c) for c in contexts])
        bars = ax.bar(xs, [v or 0.0 for v in values], width, yerr=err, capsize=3, color=colours(i % 10),
                      label=model)
        for bar, v, up in zip(bars, values, err[1]):
            if v is not None:
                ax.annotate(f"{v:.2f}", (bar.get_x() + bar.get_width() / 2, v + up), ha="center", va="bottom",
                            fontsize=7, textcoords="offset points", xytext=(0, 2))
    ax.axhline(1 / 3, color="grey", linestyle="--", linewidth=1, label="chance (1/3)")
    ax.set_xticks(range(len(contexts)))
    ax.set_xticklabels([prompts.CONTEXT_NAMES[c] for c in contexts])
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("accuracy")
    level = metrics.get("uncertainty", {}).get("confidence_level")
    ax.set_title("NormAd: accuracy per context"
                 + (f" ({level:.0%} bootstrap intervals over stories)" if level else ""))
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    plots.save_figure(fig, path)


def accuracy_by_zone_png(metrics: dict, path: Path) -> None:
    """Fig. 5 style: per model, accuracy per Inglehart-Welzel zone (bars grouped by zone, one bar per context, with
    bootstrap intervals over the zone's stories)."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(len(models), 1, figsize=(11, 3.8 * len(models)), dpi=100, squeeze=False)
    colours = plt.get_cmap("viridis")
    for ax, model in zip(axes[:, 0], models):
        m = metrics["per_model"][model]
        contexts = m["contexts"]
        zones = sorted({z for c in contexts for z in m["per_context"][c]["accuracy_by_zone"]})
        width = 0.8 / max(1, len(contexts))
        for i, context in enumerate(contexts):
            by_zone = m["per_context"][context]["accuracy_by_zone"]
            values = [(by_zone.get(z) or {}).get("accuracy") for z in zones]
            cis = m["per_context"][context].get("accuracy_by_zone_ci", {})
            xs = plots.grouped_bar_x(range(len(zones)), len(contexts), i, width)
            ax.bar(xs, [v or 0.0 for v in values], width, yerr=error_bars(values, [cis.get(z) for z in zones]),
                   capsize=2, color=colours(i / max(1, len(prompts.CONTEXTS) - 1)),
                   label=prompts.CONTEXT_NAMES[context])
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(zones, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.set_title(f"{model}: accuracy by Inglehart-Welzel zone")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=len(contexts), loc="upper left")
    plots.save_figure(fig, path)


def accuracy_by_gold_png(metrics: dict, path: Path) -> None:
    """Fig. 6 style: per model, accuracy per gold label (yes / no / neutral) in each context, with bootstrap
    intervals over the label's stories."""
    plt = plots.pyplot()
    models = metrics["models"]
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4), dpi=100, squeeze=False)
    colours = {"yes": "tab:green", "no": "tab:red", "neutral": "tab:grey"}
    for ax, model in zip(axes[0], models):
        m = metrics["per_model"][model]
        contexts = m["contexts"]
        width = 0.8 / len(prompts.LABELS)
        for i, label in enumerate(prompts.LABELS):
            xs = plots.grouped_bar_x(range(len(contexts)), len(prompts.LABELS), i, width)
            values = [m["per_context"][c]["accuracy_by_gold"][label]["accuracy"] for c in contexts]
            cis = [m["per_context"][c].get("accuracy_by_gold_ci", {}).get(label) for c in contexts]
            ax.bar(xs, [v or 0.0 for v in values], width, yerr=error_bars(values, cis), capsize=2,
                   color=colours[label], label=f"gold {label}")
        ax.set_xticks(range(len(contexts)))
        ax.set_xticklabels([prompts.CONTEXT_NAMES[c] for c in contexts], fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{model}: accuracy by gold label")
        ax.legend(fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    plots.save_figure(fig, path)


PLOTS = {"accuracy_by_context.png": accuracy_by_context_png, "accuracy_by_zone.png": accuracy_by_zone_png,
         "accuracy_by_gold.png": accuracy_by_gold_png}


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json`` and the PLOTS; returns the paths written."""
    return runs.write_metrics_and_plots(result.metrics, out, PLOTS)


# ---------------------------------------------------------------------------------------------------- evaluate


def check_inputs(release: Path, samples: int | None, limit: int | None, max_tokens: int | None = None,
                 split: str | None = None) -> pl.DataFrame:
    """The release's stories, after checking the options (before a model is made)."""
    runs.check_at_least_one({"--samples": samples, "--limit": limit, "--max-tokens": max_tokens})
    stories = release_tables(release, split)["stories"]
    if stories.height == 0:
        raise InputError("release has no stories", file=release)
    return stories


def evaluate(backend, release: Path, out: Path, *, contexts: Sequence[str] = prompts.CONTEXTS,
             samples: int | None = None, temperature: float | None = None, max_tokens: int = prompts.MAX_TOKENS,
             seed: int | None = 0, limit: int | None = None, split: str | None = None, args: dict | None = None,
             console=None, unparsed: str = DEFAULT_UNPARSED) -> runs.EvaluateResult:
    """Ask ``backend`` every story (``limit`` spread over the countries: ``limit.spread_positions``) under every
    context, then score: writes responses.jsonl, metrics.json, the plots and run.json into ``out``. Re-running into
    the same folder answers every request already made from the cache."""
    from datetime import datetime

    started = datetime.now(UTC)
    release, out = Path(release), Path(out)
    samples = prompts.DEFAULT_SAMPLES if samples is None else samples
    temperature = prompts.TEMPERATURE if temperature is None else temperature
    unknown = [c for c in contexts if c not in prompts.CONTEXTS]
    if unknown:
        raise InputError(f"unknown context {unknown[0]!r}; choose from {', '.join(prompts.CONTEXTS)}")
    release_stories = check_inputs(release, samples, limit, max_tokens, split)
    manifest = load_manifest(release)
    stories, covers = limit_frame(release_stories, ["country"], limit, seed, item="stories", columns=["countries"])
    planned = plan_requests(stories, contexts=contexts, samples=samples, temperature=temperature,
                            max_tokens=max_tokens, seed=seed)
    result = runs.ask(backend, [p.request for p in planned], out, "normad", console)
    model = str(getattr(backend, "model", "model"))
    info = {r["story_id"]: r for r in stories.select("story_id", "country", "gold_label", "iw_zone", "subaxis")
            .iter_rows(named=True)}
    records = []
    for plan, response in zip(planned, result.responses):
        story = info[plan.story_id]
        answer = prompts.parse_answer(response.text)
        label = scored_label(answer, unparsed)
        records.append({"model": model, "story_id": plan.story_id, "country": story["country"],
                        "iw_zone": story["iw_zone"], "subaxis": story["subaxis"], "context": plan.context,
                        "sample_index": plan.sample_index, "prompt": plan.prompt, "response": response.text,
                        "answer": answer.label, "parse_status": answer.status, "gold_label": story["gold_label"],
                        "correct": label == story["gold_label"], "finish_reason": response.finish_reason})
    responses_path = runs.write_jsonl(out / runs.RESPONSES_FILE, records)
    frame = pl.DataFrame([{k: r[k] for k in (*RESPONSE_FIELDS, "sample_index")} for r in records],
                         schema={"model": pl.String, "story_id": pl.String, "context": pl.String,
                                 "response": pl.String, "sample_index": pl.Int64})
    scored = score_responses(frame, release_stories, release=release, sources=[runs.source_info(responses_path)],
                             unparsed=unparsed)
    scored.metrics["covers"] = [covers.as_dict()]
    stats = runs.runner_stats(result)
    m = scored.metrics["per_model"][model]
    written = runs.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="normad", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_stories": stories.height, "contexts": list(contexts), "samples": samples,
                              "n_requests": len(records), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "split": split, "unparsed": unparsed,
                              "prompt_source": scored.metrics["constants"]["prompt_source"]},
               "parse_status": {c: m["per_context"][c]["parse_status"] for c in m["contexts"]},
               "metrics": {"accuracy": m["accuracy"], "macro_f1": m["macro_f1"]}})
    return runs.EvaluateResult(metrics=scored.metrics, records=records, stats=stats, written=written, score=scored)


def summary(metrics: dict) -> str:
    """One line per model for the command line."""
    lines = []
    for model in metrics["models"]:
        m = metrics["per_model"][model]
        parts = ", ".join(f"{prompts.CONTEXT_NAMES[c]} {m['accuracy'][c]:.3f}" for c in m["contexts"]
                          if m["accuracy"][c] is not None)
        unparsed = sum(m["per_context"][c]["n_unparsed"] for c in m["contexts"])
        read_as = "read as Neither" if metrics["unparsed_rule"]["rule"] == "neutral" else "counted wrong"
        lines.append(f"normad {model}: {m['n_responses']:,} responses ({unparsed:,} unparsed, {read_as}), "
                     f"{m['n_stories']:,} stories; accuracy {parts}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command line


def _split(options: dict) -> str | None:
    return options.get("split")


def _max_tokens(options: dict) -> int:
    value = options.get("max_tokens")
    return prompts.MAX_TOKENS if value is None else value


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    check_inputs(options["release"], options["samples"], options["limit"], _max_tokens(options), _split(options))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    """`culturebench evaluate`: run, score, write the run folder; returns (summary line, paths written)."""
    result = evaluate(model_backend, options["release"], options["out"], samples=options["samples"],
                      temperature=options["temperature"], max_tokens=_max_tokens(options), seed=options["seed"],
                      limit=options["limit"], split=_split(options), args=args, console=console,
                      unparsed=_unparsed(options.get("unparsed_wrong")))
    line = f"{summary(result.metrics)}\nnormad: {runs.request_counts(len(result.records), result.stats)}"
    return line, result.written


def _unparsed(wrong: bool | None) -> str:
    return "wrong" if wrong else DEFAULT_UNPARSED


def cli_score(responses: Path, release: Path, out: Path, unparsed_wrong: bool = False) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses; returns (summary line, paths written)."""
    result = score(runs.split_paths(responses), release, _unparsed(unparsed_wrong))
    return summary(result.metrics), write_run(result, out)


# --------------------------------------------------------------------------------------------- compare


def comparison_stories(folders: Sequence[compare.RunFolder], release: Path | None) -> tuple[pl.DataFrame, Path]:
    """The stories the runs are compared against: ``release`` when given, else the runs' releases (with
    --allow-mixed several: their stories joined, a story id taken from the first release that has it)."""
    paths = compare.release_paths(folders, release)
    stories = pl.concat([release_tables(p)["stories"] for p in paths], how="diagonal_relaxed")
    return stories.unique("story_id", keep="first", maintain_order=True), paths[0]


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's responses re-scored together (one bootstrap of stories shared by all models and contexts:
    paired), as the tables of the report; unparsed answers under the runs' rule (``unparsed_rule`` of their
    metrics.json; runs scored under different rules cannot be compared)."""
    stories, release_path = comparison_stories(folders, release)
    responses, sources = compare.relabelled_responses(folders, labels, read_responses)
    rules = sorted({f.metrics.get("unparsed_rule", {}).get("rule", DEFAULT_UNPARSED) for f in folders})
    if len(rules) > 1:
        raise InputError(f"the runs score unparsed answers differently ({' and '.join(rules)}); re-score them with "
                         "one rule (`culturebench score normad`, with or without --unparsed-wrong)")
    result = score_responses(responses, stories, sources=sources, release=release_path, bootstrap=settings,
                             unparsed=rules[0])
    return compare.Comparison(models=result.metrics["models"], tables=comparison_tables(result.metrics),
                              metrics=result.metrics)


def comparison_tables(metrics: dict) -> dict[str, pl.DataFrame]:
    """The report's flat tables from ``score_responses``' metrics: main (Fig. 3: accuracy per model and context),
    table_a4 (accuracy, macro P / R / F1 and the always-Neither F1 per model and context), differences (paired, per
    context), and one table per BREAKDOWNS (zones, gold labels, subaxes, countries: ranked, small groups last)."""
    models = metrics["models"]
    contexts = [c for c in prompts.CONTEXTS if any(c in metrics["per_model"][m]["contexts"] for m in models)]
    main, table_a4 = [], []
    groups: dict[str, list[dict]] = {name: [] for name in BREAKDOWNS}
    for model in models:
        m = metrics["per_model"][model]
        row = {"model": model, "n_stories": m["n_stories"]}
        for c in contexts:
            row.update(compare.with_interval(prompts.CONTEXT_NAMES[c], m["accuracy"].get(c), m["accuracy_ci"].get(c)))
        main.append(row)
        for c in m["contexts"]:
            pc = m["per_context"][c]
            table_a4.append({"model": model, "context": prompts.CONTEXT_NAMES[c], "n": pc["n"],
                             "n_unparsed": pc["n_unparsed"],
                             **compare.with_interval("accuracy", pc["accuracy"], pc["accuracy_ci"]),
                             **{k: v for key in ("precision", "recall", "f1")
                                for k, v in compare.with_interval(key, pc["macro"][key], pc["macro_ci"][key]).items()},
                             "always_neither_f1": pc["baselines"]["always_neither"]["f1"]})
            for name, rows in pc["breakdowns"].items():
                groups[name] += [{"model": model, "context": prompts.CONTEXT_NAMES[c], name: r["group"],
                                  **compare.with_interval("accuracy", r["accuracy"], r["accuracy_ci"]),
                                  "n_stories": r["n_stories"], "n_answers": r["n_answers"], "small": r["small"],
                                  "rank": r["rank"]} for r in rows]
    interval_schema = {"accuracy": pl.Float64, "accuracy_low": pl.Float64, "accuracy_high": pl.Float64}
    differences = pl.DataFrame(metrics["model_differences"], schema={
        "context": pl.String, "model_a": pl.String, "model_b": pl.String, "accuracy_a": pl.Float64,
        "accuracy_b": pl.Float64, "difference": pl.Float64, "low": pl.Float64, "high": pl.Float64,
        "pvalue": pl.Float64, "n_common": pl.Int64, "pvalue_holm": pl.Float64, "significant": pl.Boolean})
    differences = differences.with_columns(pl.col("context").replace(prompts.CONTEXT_NAMES)).select(
        "context", "model_a", "model_b", "accuracy_a", "accuracy_b", "difference",
        pl.col("low").alias("difference_low"), pl.col("high").alias("difference_high"), "pvalue", "pvalue_holm",
        "significant", "n_common")
    tables = {
        "main": pl.DataFrame(main, schema={"model": pl.String, "n_stories": pl.Int64, **{
            f"{prompts.CONTEXT_NAMES[c]}{suffix}": pl.Float64 for c in contexts for suffix in ("", "_low", "_high")}}),
        "table_a4": pl.DataFrame(table_a4, schema={
            "model": pl.String, "context": pl.String, "n": pl.Int64, "n_unparsed": pl.Int64, **interval_schema,
            **{f"{k}{suffix}": pl.Float64 for k in ("precision", "recall", "f1") for suffix in ("", "_low", "_high")},
            "always_neither_f1": pl.Float64}),
        "differences": differences,
    }
    for name in BREAKDOWNS:
        tables[name] = pl.DataFrame(groups[name], schema={
            "model": pl.String, "context": pl.String, name: pl.String, **interval_schema, "n_stories": pl.Int64,
            "n_answers": pl.Int64, "small": pl.Boolean, "rank": pl.Int64})
    return tables


def zone_heatmap_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 5 / 10 / 13 as a heatmap: one panel per context, a row per model, a column per Inglehart-Welzel zone;
    each cell its accuracy and bootstrap interval (zones under the minimum of stories marked "small")."""
    plt = plots.pyplot()
    frame = comparison.tables["zone"]
    models = comparison.models
    contexts = list(dict.fromkeys(frame["context"].to_list()))
    zones = sorted(set(frame["zone"].to_list()))
    cells = {(r["context"], r["model"], r["zone"]): r for r in frame.iter_rows(named=True)}
    height = sum(0.55 * len(models) + 1.8 for _ in contexts) or 3.0
    fig, axes = plt.subplots(max(1, len(contexts)), 1, squeeze=False, dpi=100, layout="constrained",
                             figsize=(max(8.0, 1.5 * len(zones) + 3), height))
    image = None
    for ax, context in zip(axes[:, 0], contexts):
        grid = [[(cells.get((context, m, z)) or {}).get("accuracy") for z in zones] for m in models]
        image = ax.imshow([[float("nan") if v is None else v for v in row] for row in grid], cmap="viridis", vmin=0,
                          vmax=1, aspect="auto")
        for i, model in enumerate(models):
            for j, zone in enumerate(zones):
                row = cells.get((context, model, zone))
                if row is None or row["accuracy"] is None:
                    continue
                text = f"{row['accuracy']:.2f}"
                if row["accuracy_low"] is not None:
                    text += f"\n[{row['accuracy_low']:.2f}, {row['accuracy_high']:.2f}]"
                if row["small"]:
                    text += "\nsmall"
                ax.text(j, i, text, ha="center", va="center", fontsize=6, color="white")
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(zones, rotation=20, ha="right", fontsize=7)
        ax.set_yticks(range(len(models)))
        ax.set_yticklabels(models, fontsize=7)
        ax.set_title(f"{context}: accuracy by Inglehart-Welzel zone", fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=list(axes[:, 0]), label="accuracy")
    plots.save_figure(fig, path, tight=False)


COMPARE = compare.BenchmarkSpec(
    benchmark="normad",
    title="NormAd (Rao et al. 2024)",
    build=compare_runs,
    tables=(
        compare.Table("main", "Fig. 3: accuracy per context",
                      "Accuracy over Yes / No / Neither per model and context (an unparsed answer read as "
                      "Neither, the authors' fallback)."),
        compare.Table("table_a4", "Table A.4: accuracy and macro precision / recall / F1 per context",
                      "always_neither_f1: Table A.4's model that answers Neither to every story, on the same "
                      "stories (no interval)."),
        compare.Table("differences", "Paired accuracy differences between models per context",
                      "difference = accuracy_a - accuracy_b on the n_common stories both models answered in that "
                      "context; pvalue_holm over all rows."),
        compare.Table("zone", "Fig. 5 / 10 / 13: accuracy by Inglehart-Welzel zone"),
        compare.Table("gold_label", "Fig. 6 / 11: accuracy by gold label"),
        compare.Table("subaxis", "Sec. 5.3: accuracy by subaxis"),
        compare.Table("country", "Accuracy by country (ours; the paper has no per-country figure)",
                      f"Ranked within each model and context; countries with fewer than {uncertainty.MIN_GROUP_SIZE} "
                      "stories are flagged small and not ranked."),
    ),
    figures=(
        compare.Figure("accuracy_by_context.png", "Fig. 3: accuracy per context",
                       lambda c, p: accuracy_by_context_png(c.metrics, p)),
        compare.Figure("zone_heatmap.png", "Fig. 5 / 10 / 13: accuracy by Inglehart-Welzel zone", zone_heatmap_png),
        compare.Figure("accuracy_by_gold.png", "Fig. 6 / 11: accuracy by gold label",
                       lambda c, p: accuracy_by_gold_png(c.metrics, p)),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for NormAd: every run's responses re-scored together against the release."""
