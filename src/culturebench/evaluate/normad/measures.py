"""NormAd's measures (Sec. 4, Table A.4): accuracy, per-label and macro precision / recall / F1, the
always-Neither baseline and the per-context metrics."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from culturebench.evaluate.normad import prompts


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
        "n_read_differently": int(frame["read_differently"].sum()),
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
