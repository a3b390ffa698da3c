"""WorldValuesBench metrics (Sec. 3.2-3.3, Table 2): W1 per question, its mean and std and threshold curve, per
demographic group, the uniform and majority oracle baselines; ``score`` (a responses file) and ``score_answers``
(shared with ``evaluate``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import compare, metrics, runs, uncertainty
from culturebench.evaluate.wvb.intervals import GROUP_COLUMNS, add_intervals
from culturebench.evaluate.wvb.items import PROBE_DIMENSIONS, question_order, release_routes, release_rows
from culturebench.evaluate.wvb.parsing import evaluate_answers, read_responses

MAJORITY_DEFINITIONS = ("pooled", "per_group")
"""Readings of the majority baseline (see the module docstring); the first is the default."""


@dataclass
class ScoreResult:
    metrics: dict
    rows: pl.DataFrame
    """Covered rows: question_id, participant_id, human, model (null when invalid), scale_min, scale_max, the
    groups of GROUP_COLUMNS (continent, urban_rural, education_level; null when unknown)."""


def _score_columns(drop_out_of_scale: bool = False) -> list[pl.Expr]:
    """``model``: the model answer as an integer when SCORE is a whole number, else null; a whole number off the
    question's scale is kept (rescaled like any other, as the authors' evaluate.py does) unless
    ``drop_out_of_scale``. ``out_of_scale``: SCORE is a whole number off the scale (kept or not)."""
    value = pl.col("score").cast(pl.Float64, strict=False)
    whole = value.is_not_null() & value.is_finite() & (value == value.floor())
    off_scale = whole & ((value < pl.col("scale_min")) | (value > pl.col("scale_max")))
    valid = whole & ~off_scale if drop_out_of_scale else whole
    return [pl.when(valid).then(value.cast(pl.Int64)).otherwise(None).alias("model"),
            off_scale.fill_null(False).alias("out_of_scale")]


def out_of_scale_report(covered: pl.DataFrame, drop_out_of_scale: bool) -> dict:
    """metrics.json ``out_of_scale``: whether whole-number answers off the question's scale were kept (the
    authors' evaluate.py) or dropped (``--drop-out-of-scale``), their count, and per question their share of the
    question's model answers (padding rows without a model sample not counted)."""
    answered = covered.filter(pl.col("has_model")) if "has_model" in covered.columns else covered
    per_question = answered.group_by("question_id").agg(pl.col("out_of_scale").mean().alias("share"))
    shares = dict(sorted(per_question.iter_rows(), key=lambda item: question_order(item[0])))
    return {"answers": "dropped" if drop_out_of_scale else "kept", "n": int(answered["out_of_scale"].sum()),
            "share_per_question": shares}


def _group_answers(rows: pl.DataFrame) -> dict[str, list[list[int]]]:
    """Per question, the human answers of each probe group (``majority_group``; rows outside the probe left out)."""
    if "majority_group" not in rows.columns:
        return {}
    keyed = rows.filter(pl.col("majority_group").is_not_null() & pl.col("human").is_not_null())
    grouped = keyed.group_by("question_id", "majority_group", maintain_order=True).agg(pl.col("human"))
    out: dict[str, list[list[int]]] = {}
    for question, _group, human in grouped.sort("question_id", "majority_group").iter_rows():
        out.setdefault(question, []).append(human)
    return out


def evaluate_rows(rows: pl.DataFrame, majority: str = MAJORITY_DEFINITIONS[0]) -> dict:
    """Metrics of covered rows (question_id, human, model, scale_min, scale_max; ``majority_group`` for the
    per-group majority): per-question W1 of the model and of the uniform and majority baselines, their mean, std
    and threshold curves. A question whose model answers are all invalid gets W1 None (and is left out of the mean
    and the curve); with ``majority="per_group"`` a question without probe rows gets a majority W1 of None."""
    if majority not in MAJORITY_DEFINITIONS:
        raise InputError(f"unknown majority baseline {majority!r}; choose from {', '.join(MAJORITY_DEFINITIONS)}")
    per_question: dict[str, float | None] = {}
    uniform: dict[str, float] = {}
    majority_w1: dict[str, float | None] = {}
    by_group = _group_answers(rows) if majority == "per_group" else {}
    grouped = rows.group_by("question_id").agg(
        pl.col("human").drop_nulls(), pl.col("model").drop_nulls(), pl.col("scale_min").first(),
        pl.col("scale_max").first())
    for row in sorted(grouped.iter_rows(named=True), key=lambda r: question_order(r["question_id"])):
        q, human, low, high = row["question_id"], row["human"], row["scale_min"], row["scale_max"]
        per_question[q] = metrics.w1(human, row["model"], low, high) if row["model"] else None
        uniform[q] = metrics.uniform_w1(human, low, high)
        if majority == "pooled":
            majority_w1[q] = metrics.majority_w1(human, low, high)
        else:
            majority_w1[q] = metrics.per_group_majority_w1(by_group[q], low, high) if q in by_group else None
    result = metrics.summary(per_question)
    result["n_rows"] = rows.height
    result["n_invalid"] = _n_invalid(rows)
    result["baselines"] = {"uniform": metrics.summary(uniform),
                           "majority": {"definition": majority, **metrics.summary(majority_w1)}}
    return result


def _n_invalid(rows: pl.DataFrame) -> int:
    """Rows whose model answer is invalid; padding rows (``has_model`` false: a human answer without a model sample,
    see :func:`answers_frame`) do not count."""
    if "has_model" in rows.columns:
        rows = rows.filter(pl.col("has_model"))
    return rows["model"].null_count()


def _by_group(rows: pl.DataFrame, columns: list[str], majority: str) -> dict[str, dict]:
    """``evaluate_rows`` of each group of ``columns`` (groups in sorted order), one group's rows at a time."""
    keyed = rows.drop_nulls(columns)
    out = {}
    for key in sorted(keyed.select(columns).unique().iter_rows()):
        part = keyed.filter(pl.all_horizontal(pl.col(c) == value for c, value in zip(columns, key)))
        out[" / ".join(str(k) for k in key)] = evaluate_rows(part, majority)
    return out


def score(responses: Path, release: Path, majority: str = MAJORITY_DEFINITIONS[0],
          bootstrap: uncertainty.Bootstrap | None = uncertainty.Bootstrap(),
          drop_out_of_scale: bool = False) -> ScoreResult:
    """Score a responses file against a WVB release: coverage, invalid answers, W1 per question and per group (the
    model is named after the file). A ``.jsonl`` file is ``evaluate wvb``'s responses.jsonl, a folder or ``.parquet``
    file the parquet shards of a large run (``runs.ResponsesWriter``), both with the metrics.json beside them when
    asked without demographics; anything else the paper's QUESTION_ID, PARTICIPANT_ID, SCORE."""
    responses = Path(responses)
    if responses.is_dir() or responses.suffix.lower() in (".jsonl", ".parquet"):
        run_folder = responses.parent.parent if responses.suffix.lower() == ".parquet" else responses.parent
        beside = run_folder / runs.METRICS_FILE
        run_metrics = compare.read_json_object(beside) if beside.is_file() else {}
        inputs = evaluate_answers(responses, release, run_metrics)
        model = (run_metrics.get("models") or [run_folder.name])[0]
    else:
        inputs, model = read_responses(responses), responses.stem
    result = score_answers(inputs, release, runs.source_info(responses), majority=majority, model=model,
                           bootstrap=bootstrap, drop_out_of_scale=drop_out_of_scale)
    m = result.metrics
    if m["n_covered"] == 0:  # metrics of nothing would be a file of n/a: the responses belong to another release
        raise InputError(f"no response matches the release {release}: {m['n_unknown_question']:,} of "
                         f"{m['n_rows']:,} rows name a question it lacks, the rest a participant it lacks "
                         "(another release, seed or split?)", file=responses)
    return result



def score_answers(inputs: pl.DataFrame, release: Path, source: dict, majority: str = MAJORITY_DEFINITIONS[0],
                  model: str | None = None,
                  bootstrap: uncertainty.Bootstrap | None = uncertainty.Bootstrap(),
                  drop_out_of_scale: bool = False) -> ScoreResult:
    """Score model answers (``row``, question_id, participant_id, score as text) against a WVB release; ``source``
    is recorded as ``responses`` in the metrics, ``model`` as ``models``. The point estimates are the paper's;
    ``bootstrap`` adds their intervals (``add_intervals``; None: none, for ``compare``, which bootstraps all its
    runs together).

    Used by ``score`` (a responses file) and by ``evaluate`` (the parsed answers of a run). ``evaluate`` may add
    padding rows (see :func:`answers_frame`): a model sample without a participant (participant_id null: it
    counts as covered and joins the question's model answers) and a human answer without a model sample
    (``has_model`` false: not counted as invalid). A whole-number answer off the question's scale is scored as given
    (the authors' evaluate.py rescales it like any other) unless ``drop_out_of_scale`` (then it is invalid);
    metrics.json ``out_of_scale`` says which, with the share per question."""
    tables = release_rows(release, inputs["participant_id"].drop_nulls())
    values = tables["questions"].filter(pl.col("scale_min").is_not_null() & pl.col("scale_max").is_not_null())
    joined = (inputs
              .join(tables["examples"], on=["participant_id", "question_id"], how="left")
              .join(values.select("question_id", "scale_min", "scale_max"), on="question_id", how="left")
              .with_columns(_score_columns(drop_out_of_scale)))
    n_rows, known = joined.height, joined.filter(pl.col("scale_min").is_not_null())
    n_known, n_invalid = known.height, _n_invalid(known)
    covered = joined.filter((pl.col("human").is_not_null() | pl.col("participant_id").is_null())
                            & pl.col("scale_min").is_not_null())
    del known, joined  # only the covered rows from here on: memory for a run of millions
    covered = (covered
               .join(tables["participants"], on="participant_id", how="left")
               .join(tables["probe"].rename({"continent": "probe_continent", "urban_rural": "probe_urban_rural"}),
                     on="participant_id", how="left")
               .with_columns(pl.concat_str("probe_continent", "probe_urban_rural", "education_level",
                                           separator=" / ").alias("majority_group"))
               .sort("row"))
    result = evaluate_rows(covered, majority)
    probe_rows = covered.filter(pl.col("education_level").is_not_null()).drop("continent", "urban_rural").rename(
        {"probe_continent": "continent", "probe_urban_rural": "urban_rural"})
    result.update({
        "benchmark": "wvb",
        "models": [model or "model"],
        "responses": source,
        "release": str(release),
        "release_manifest_sha256": runs.release_manifest_sha256(release),
        "n_rows": n_rows,
        "n_covered": covered.height,
        "coverage": covered.height / n_rows,
        "n_unknown_question": n_rows - n_known,
        "n_invalid": n_invalid,
        "n_invalid_covered": _n_invalid(covered),
        "out_of_scale": out_of_scale_report(covered, drop_out_of_scale),
        "release_routes": release_routes(release),
        "groups": {
            "continent": _by_group(covered, ["continent"], majority),
            "urban_rural": _by_group(covered, ["urban_rural"], majority),
            "probe_group": _by_group(probe_rows, list(PROBE_DIMENSIONS), majority),
            "probe_education_level": _by_group(probe_rows, ["education_level"], majority),
        },
    })
    rows = covered.select("question_id", "participant_id", "human", "model", "scale_min", "scale_max",
                          *(["has_model"] if "has_model" in covered.columns else []), *GROUP_COLUMNS.values())
    scored = ScoreResult(metrics=runs.json_safe(result), rows=rows)
    del inputs, tables, covered, probe_rows  # the bootstrap needs only ``rows``: memory for it
    if bootstrap is not None and rows.height:  # nothing covered: no interval (``score`` refuses such a file)
        add_intervals(scored, bootstrap)
        scored.metrics = runs.json_safe(scored.metrics)
    return scored
