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

- accuracy over the three labels (Sec. 4, Fig. 3; an unparsed answer counts as wrong), and the accuracy over parsed
  answers only;
- per-label and macro precision / recall / F1 over yes / no / neutral (Table A.4; scikit-learn's definition with
  ``labels=LABELS``: an unparsed answer is a miss for its gold label and a false positive for none; 0/0 = 0);
- accuracy by Inglehart-Welzel cultural zone (Figs. 5, 10, 13), by subaxis (Sec. 5.3), by gold label (Figs. 6, 11)
  and by country (the paper plots no per-country figure: ours, to read the zone figures country by country), the
  distribution of predicted labels and the gold x predicted confusion counts.

Baseline, per model and context, on the same answers' stories: ``always_neither`` (Table A.4: the P / R / F1 of a
model that answers Neither to every story; 0.103 / 0.333 / 0.158 on the paper's label counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import plots, runs
from culturebench.evaluate import normad_prompts as prompts
from culturebench.release import load_manifest

if TYPE_CHECKING:
    from culturebench.evaluate.backends import ChatRequest

CONFIG = "stories"
REQUIRED_COLUMNS = ("id", "country", "value", "rule_of_thumb", "story", "gold_label")
OPTIONAL_COLUMNS = ("axis", "subaxis", "iw_zone")
UNKNOWN = "unknown"
"""Zone / subaxis of a story whose release value is missing."""
RESPONSE_FIELDS = ("model", "story_id", "context", "response")


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
    """Share of answers equal to the gold label (an unparsed answer is wrong); None without answers."""
    return sum(1 for g, p in zip(gold, predicted) if g == p) / len(gold) if len(gold) else None


def score_answers(responses: pl.DataFrame, stories: pl.DataFrame) -> pl.DataFrame:
    """Each answer parsed and joined to its story: adds country, gold_label, iw_zone, subaxis, predicted,
    parse_status, correct."""
    joined = responses.join(stories.select("story_id", "country", "gold_label", "iw_zone", "subaxis"),
                            on="story_id", how="left")
    unknown = joined.filter(pl.col("gold_label").is_null())
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"story id {first['story_id']!r} is not in the release", file=first.get("source"),
                         row=first.get("row"), column="story_id")
    answers = [prompts.parse_answer(text) for text in joined["response"].to_list()]
    return joined.with_columns(pl.Series("predicted", [a.label for a in answers], dtype=pl.String),
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
    parsed = [(g, p) for g, p in zip(gold, predicted) if p is not None]
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



def score_responses(responses: pl.DataFrame, stories: pl.DataFrame, *, sources: list[dict] | None = None,
                    release: Path | str | None = None) -> ScoreResult:
    """Every metric from answers (model, story_id, context, response) and the release's stories."""
    if responses.height == 0:
        raise InputError("no responses to score")
    scored = score_answers(responses, stories)
    models = sorted(scored["model"].unique().to_list())
    per_model = {}
    for model in models:
        mine = scored.filter(pl.col("model") == model)
        contexts = [c for c in prompts.CONTEXTS if (mine["context"] == c).any()]
        per_context = {c: context_metrics(mine.filter(pl.col("context") == c)) for c in contexts}
        per_model[model] = {
            "n_responses": mine.height,
            "n_stories": mine["story_id"].n_unique(),
            "contexts": contexts,
            "accuracy": {c: per_context[c]["accuracy"] for c in contexts},
            "macro_f1": {c: per_context[c]["macro"]["f1"] for c in contexts},
            "per_context": per_context,
        }
    gold_counts = stories.group_by("gold_label").len()
    metrics = {
        "benchmark": "normad",
        "release": None if release is None else str(release),
        "responses": sources or [],
        "models": models,
        "labels": list(prompts.LABELS),
        "contexts": list(prompts.CONTEXTS),
        "context_names": dict(prompts.CONTEXT_NAMES),
        "constants": {"temperature": prompts.TEMPERATURE, "max_tokens": prompts.MAX_TOKENS,
                      "prompt_source": prompts.PROMPT_SOURCE},
        "release_gold_distribution": {row[0]: row[1] for row in gold_counts.sort("gold_label").iter_rows()},
        "per_model": per_model,
    }
    return ScoreResult(metrics=runs.json_safe(metrics, none_key="unparsed"), tables={"scored": scored})


def read_responses(paths: Sequence[Path]) -> pl.DataFrame:
    """responses.jsonl files (evaluate's output) as one table: model, story_id, context, sample_index, response,
    source, row."""
    rows = []
    for path in map(Path, paths):
        before = len(rows)
        for number, record in runs.jsonl_records(path, RESPONSE_FIELDS):
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


def score(responses: Sequence[Path], release: Path) -> ScoreResult:
    """``culturebench score normad``: every metric from saved responses.jsonl files against a NormAd release."""
    release = Path(release)
    stories = release_tables(release)["stories"]
    frame = read_responses(responses)
    return score_responses(frame, stories, sources=[runs.source_info(p) for p in responses], release=release)


# ---------------------------------------------------------------------------------------------------- plots


def accuracy_by_context_png(metrics: dict, path: Path) -> None:
    """Accuracy (and macro F1, hatched) per context, one bar group per context and a bar per model."""
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
        bars = ax.bar(xs, [v or 0.0 for v in values], width, color=colours(i % 10), label=model)
        for bar, v in zip(bars, values):
            if v is not None:
                ax.annotate(f"{v:.2f}", (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom",
                            fontsize=7, textcoords="offset points", xytext=(0, 2))
    ax.axhline(1 / 3, color="grey", linestyle="--", linewidth=1, label="chance (1/3)")
    ax.set_xticks(range(len(contexts)))
    ax.set_xticklabels([prompts.CONTEXT_NAMES[c] for c in contexts])
    ax.set_ylim(0, 1.08)
    ax.set_ylabel("accuracy")
    ax.set_title("NormAd: accuracy per context")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    plots.save_figure(fig, path)


def accuracy_by_zone_png(metrics: dict, path: Path) -> None:
    """Fig. 5 style: per model, accuracy per Inglehart-Welzel zone (bars grouped by zone, one bar per context)."""
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
            xs = plots.grouped_bar_x(range(len(zones)), len(contexts), i, width)
            ax.bar(xs, [(by_zone.get(z) or {}).get("accuracy") or 0.0 for z in zones], width,
                   color=colours(i / max(1, len(prompts.CONTEXTS) - 1)), label=prompts.CONTEXT_NAMES[context])
        ax.set_xticks(range(len(zones)))
        ax.set_xticklabels(zones, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.set_title(f"{model}: accuracy by Inglehart-Welzel zone")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=len(contexts), loc="upper left")
    plots.save_figure(fig, path)


def accuracy_by_gold_png(metrics: dict, path: Path) -> None:
    """Fig. 6 style: per model, accuracy per gold label (yes / no / neutral) in each context."""
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
            ax.bar(xs, [m["per_context"][c]["accuracy_by_gold"][label]["accuracy"] or 0.0 for c in contexts], width,
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
             console=None) -> runs.EvaluateResult:
    """Ask ``backend`` every story (the first ``limit``) under every context, then score: writes responses.jsonl,
    metrics.json, the plots and run.json into ``out``. Re-running into the same folder answers every request already
    made from the cache."""
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
    stories = release_stories if limit is None else release_stories.head(limit)
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
        records.append({"model": model, "story_id": plan.story_id, "country": story["country"],
                        "iw_zone": story["iw_zone"], "subaxis": story["subaxis"], "context": plan.context,
                        "sample_index": plan.sample_index, "prompt": plan.prompt, "response": response.text,
                        "answer": answer.label, "parse_status": answer.status, "gold_label": story["gold_label"],
                        "correct": answer.label == story["gold_label"], "finish_reason": response.finish_reason})
    responses_path = runs.write_jsonl(out / runs.RESPONSES_FILE, records)
    frame = pl.DataFrame([{k: r[k] for k in (*RESPONSE_FIELDS, "sample_index")} for r in records],
                         schema={"model": pl.String, "story_id": pl.String, "context": pl.String,
                                 "response": pl.String, "sample_index": pl.Int64})
    scored = score_responses(frame, release_stories, release=release, sources=[runs.source_info(responses_path)])
    stats = runs.runner_stats(result)
    m = scored.metrics["per_model"][model]
    written = runs.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="normad", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"n_stories": stories.height, "contexts": list(contexts), "samples": samples,
                              "n_requests": len(records), "temperature": temperature, "max_tokens": max_tokens,
                              "seed": seed, "limit": limit, "split": split,
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
        lines.append(f"normad {model}: {m['n_responses']:,} responses ({unparsed:,} unparsed), "
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
                      limit=options["limit"], split=_split(options), args=args, console=console)
    line = f"{summary(result.metrics)}\nnormad: {runs.request_counts(len(result.records), result.stats)}"
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses; returns (summary line, paths written)."""
    result = score(runs.split_paths(responses), release)
    return summary(result.metrics), write_run(result, out)
