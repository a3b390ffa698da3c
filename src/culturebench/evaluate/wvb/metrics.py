"""WorldValuesBench metrics.json (Sec. 3.2-3.3, Table 2): ``score`` (a responses file) and ``score_answers``
(shared with ``evaluate``) join the answers with the release's human answers, count them (``measures``) and assemble
W1 per question, its mean, std and threshold curve, per demographic group, the oracle baselines and the bootstrap
intervals (``intervals``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import compare, uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.runs.memory import return_free_heap
from culturebench.evaluate.wvb import MAJORITY_DEFINITIONS
from culturebench.evaluate.wvb.intervals import GROUP_COLUMNS, W1Bootstrap, add_intervals
from culturebench.evaluate.wvb.items import release_routes, release_rows
from culturebench.evaluate.wvb.measures import (
    BREAKDOWNS, CELL_COLUMNS, AnswerCounts, ScoreResult, by_group, non_integer_report, out_of_scale_report,
    score_columns)
from culturebench.evaluate.wvb.parsing import evaluate_answers, read_responses
from culturebench.evaluate.wvb.plots import plotted_rows


def _unreadable(exc: Exception, source: dict) -> InputError:
    """The error of a responses file that cannot be read to its end (a damaged parquet shard: its footer is read
    when the file is opened, its pages only when the answers are), naming the file."""
    return InputError(f"responses cannot be scored ({str(exc).splitlines()[0]})", file=source.get("path"))


def read_answers(responses: Path, release: Path) -> tuple[pl.DataFrame, str]:
    """The answers of a responses file as ``score_answers`` takes them, and the model they are named after (``score``
    and ``compare`` of a ``score`` run read them alike). A ``.jsonl`` file is ``evaluate wvb``'s responses.jsonl, a
    folder or ``.parquet`` file the parquet shards of a large run (``run_folder.ResponsesWriter``), both paired with the
    evaluated rows again through the metrics.json beside them when asked without demographics (model: the run's);
    anything else the paper's QUESTION_ID, PARTICIPANT_ID, SCORE (model: the file's name)."""
    responses = Path(responses)
    if responses.is_dir() or responses.suffix.lower() in (".jsonl", ".parquet"):
        folder = responses.parent.parent if responses.suffix.lower() == ".parquet" else responses.parent
        beside = folder / run_folder.METRICS_FILE
        run_metrics = compare.read_json_object(beside) if beside.is_file() else {}
        return evaluate_answers(responses, release, run_metrics), (run_metrics.get("models") or [folder.name])[0]
    return read_responses(responses), responses.stem


def score(responses: Path, release: Path, majority: str = MAJORITY_DEFINITIONS[0],
          bootstrap: uncertainty.Bootstrap | None = uncertainty.Bootstrap(),
          drop_out_of_scale: bool = False, drop_non_integer: bool = False) -> ScoreResult:
    """Score a responses file (``read_answers``) against a WVB release: coverage, invalid answers, W1 per question
    and per group."""
    responses = Path(responses)
    inputs, model = read_answers(responses, release)
    result = score_answers(inputs, release, run_folder.source_info(responses), majority=majority, model=model,
                           bootstrap=bootstrap, drop_out_of_scale=drop_out_of_scale,
                           drop_non_integer=drop_non_integer)
    m = result.metrics
    if m["n_covered"] == 0:  # metrics of nothing would be a file of n/a: the responses belong to another release
        raise InputError(f"no response matches the release {release}: {m['n_unknown_question']:,} of "
                         f"{m['n_rows']:,} rows name a question it lacks, the rest a participant it lacks "
                         "(another release, seed or split?)", file=responses)
    return result



def score_answers(inputs: pl.DataFrame, release: Path, source: dict, majority: str = MAJORITY_DEFINITIONS[0],
                  model: str | None = None,
                  bootstrap: uncertainty.Bootstrap | None = uncertainty.Bootstrap(),
                  drop_out_of_scale: bool = False, drop_non_integer: bool = False) -> ScoreResult:
    """Score model answers (question_id, participant_id, score: text or a number; a frame or a lazy query, rows in
    file order) against a WVB release; ``source``
    is recorded as ``responses`` in the metrics, ``model`` as ``models``. The point estimates are the paper's;
    ``bootstrap`` adds their intervals (``add_intervals``; None: none, for ``compare``, which bootstraps all its
    runs together).

    Used by ``score`` (a responses file) and by ``evaluate`` (the parsed answers of a run). ``evaluate`` may add
    padding rows (see :func:`answers_frame`): a model sample without a participant (participant_id null: it
    counts as covered and joins the question's model answers) and a human answer without a model sample
    (``has_model`` false: not counted as invalid). A whole-number answer off the question's scale is scored as given
    (the authors' evaluate.py rescales it like any other) unless ``drop_out_of_scale`` (then it is invalid);
    metrics.json ``out_of_scale`` says which, with the share per question. An answer that is not a whole number is
    truncated toward zero (the authors' ``astype(int)``) unless ``drop_non_integer`` (then it is invalid);
    metrics.json ``non_integer`` says which, with their number."""
    if majority not in MAJORITY_DEFINITIONS:
        raise InputError(f"unknown majority baseline {majority!r}; choose from {', '.join(MAJORITY_DEFINITIONS)}")
    inputs = inputs.lazy()
    if "has_model" not in inputs.collect_schema():  # the paper's files: every row is a model answer
        inputs = inputs.with_columns(pl.lit(True).alias("has_model"))
    if "not_integer" not in inputs.collect_schema():  # the paper's files: the SCORE text says it
        inputs = inputs.with_columns(pl.lit(False).alias("not_integer"))
    inputs = inputs.select(pl.col("question_id").cast(pl.Categorical), "participant_id", "score", "not_integer",
                           "has_model")
    try:  # the first read of the answers (a lazy query over the responses file)
        tables = release_rows(release, inputs)
    except pl.exceptions.PolarsError as exc:
        raise _unreadable(exc, source) from None
    scales = (tables["questions"].filter(pl.col("scale_min").is_not_null() & pl.col("scale_max").is_not_null())
              .select(pl.col("question_id").cast(pl.Categorical), "scale_min", "scale_max"))
    joined = (inputs
              .join(tables["examples"].lazy(), on=["participant_id", "question_id"], how="left",
                    maintain_order="left")
              .join(scales.lazy(), on="question_id", how="left", maintain_order="left")
              .with_columns(score_columns(drop_out_of_scale, drop_non_integer)))
    known, invalid = pl.col("scale_min").is_not_null(), pl.col("has_model") & pl.col("model").is_null()
    tallies = joined.select(pl.len().alias("n_rows"), known.sum().alias("n_known"),
                            (known & invalid).sum().alias("n_invalid"))
    people = tables["participants"].join(
        tables["probe"].rename({"continent": "probe_continent", "urban_rural": "probe_urban_rural"}),
        on="participant_id", how="left")
    profiles = people.select(CELL_COLUMNS[1:]).unique(maintain_order=True).with_row_index("profile")
    people = people.join(profiles, on=list(CELL_COLUMNS[1:]), how="left", nulls_equal=True).select(
        "participant_id", "profile", *(pl.col(column).cast(pl.Categorical) for column in GROUP_COLUMNS.values()))
    covered = (joined.filter((pl.col("human").is_not_null() | pl.col("participant_id").is_null()) & known)
               .join(people.lazy(), on="participant_id", how="left", maintain_order="left")
               .select(pl.col("question_id").cast(pl.Categorical), "participant_id", "human", "model",
                       pl.col("scale_min", "scale_max").cast(pl.Int32), "has_model", *GROUP_COLUMNS.values(),
                       "out_of_scale", "not_integer", "profile"))
    try:
        tallies, covered = pl.collect_all([tallies, covered], engine="streaming")
    except pl.exceptions.PolarsError as exc:
        raise _unreadable(exc, source) from None
    del inputs, tables, joined, people  # only the covered rows from here on: memory for a run of millions
    n_rows, n_known, n_invalid = tallies.row(0)
    counts = AnswerCounts.of(covered, profiles, scales)
    result = by_group(counts, (), majority)[()]
    result.update({
        "benchmark": "wvb",
        "models": [model or "model"],
        "responses": source,
        "release": str(release),
        "release_manifest_sha256": run_folder.release_manifest_sha256(release),
        "n_rows": n_rows,
        "n_covered": covered.height,
        "coverage": covered.height / n_rows,
        "n_unknown_question": n_rows - n_known,
        "n_invalid": n_invalid,
        "n_invalid_covered": int(covered.select(invalid.sum()).item()),
        "out_of_scale": out_of_scale_report(covered, drop_out_of_scale),
        "non_integer": non_integer_report(covered, drop_non_integer),
        "release_routes": release_routes(release),
        "groups": {kind: {" / ".join(str(k) for k in key): part
                          for key, part in sorted(by_group(counts, columns, majority).items())}
                   for kind, columns in BREAKDOWNS.items()},
    })
    rows = covered.drop("out_of_scale", "not_integer", "profile")  # the same columns, not a copy
    del covered
    plotted = plotted_rows(rows)
    if bootstrap is None or not rows.height:  # nothing covered: no interval (``score`` refuses such a file)
        return ScoreResult(metrics=run_folder.json_safe(result), plotted=plotted, rows=rows, counts=counts)
    by_model = {result["models"][0]: rows}
    del rows  # the bootstrap takes the only reference, and frees the rows once it has coded them
    boot = W1Bootstrap(by_model, [counts])
    scored = ScoreResult(metrics=run_folder.json_safe(result), plotted=plotted)
    add_intervals(scored.metrics, boot, bootstrap)
    scored.metrics = run_folder.json_safe(scored.metrics)
    return_free_heap()  # the resamples' arrays, before the plots
    return scored


def unreadable_answers(metrics: dict) -> int:
    """Of a ``score_answers`` result's answers, those no score could be read from: the invalid ones less those
    read but dropped (off the scale with ``drop_out_of_scale``, not whole numbers with ``drop_non_integer``)."""
    dropped = sum(metrics[k]["n"] for k in ("out_of_scale", "non_integer") if metrics[k]["answers"] == "dropped")
    return max(0, metrics["n_invalid"] - dropped)
