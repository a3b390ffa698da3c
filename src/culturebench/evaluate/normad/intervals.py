"""NormAd's intervals (issue #18): a bootstrap over stories, shared by every model and context, from each
story's answer counts; the breakdowns' per-group intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.normad import prompts

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
                     settings: uncertainty.Bootstrap) -> tuple[dict[tuple[str, str], dict], pl.DataFrame, str | None]:
    """Intervals over stories (``uncertainty.resample_units``, one stratum: the ``units`` that were answered;
    BOOTSTRAP_NOTE): per (model, context) cell ``{"accuracy": [low, high], "accuracy_parsed": ..., "macro":
    {precision, recall, f1: [low, high]}, "per_label": {label: {precision, recall, f1: [low, high]}}}``, and the
    paired differences (context, model_a < model_b: accuracy_a and accuracy_b on the n_common stories both
    answered, difference, low, high, pvalue, pvalue_holm, significant), and why there are no intervals (or None:
    ``uncertainty.no_spread``, a single story)."""
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

    result = uncertainty.resample_units([range(len(units))], statistic, settings, unit="story")
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
    uncertainty.holm_significance(rows, settings, [result.no_spread()] * len(rows))
    differences = pl.DataFrame(rows, schema={
        "context": pl.String, "model_a": pl.String, "model_b": pl.String, "accuracy_a": pl.Float64,
        "accuracy_b": pl.Float64, "difference": pl.Float64, "low": pl.Float64, "high": pl.Float64,
        "pvalue": pl.Float64, "n_common": pl.Int64, "pvalue_holm": pl.Float64, "significant": pl.Boolean})
    return out, differences, result.no_spread()


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
