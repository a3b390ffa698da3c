"""WorldValuesBench metrics (Sec. 3.2-3.3, Table 2): W1 per question, its mean and std and threshold curve, per
demographic group, the uniform and majority oracle baselines; ``score`` (a responses file) and ``score_answers``
(shared with ``evaluate``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import compare, metrics, runs, uncertainty
from culturebench.evaluate.memory import return_free_heap
from culturebench.evaluate.wvb.intervals import GROUP_COLUMNS, W1Bootstrap, add_intervals
from culturebench.evaluate.wvb.items import question_order, release_routes, release_rows
from culturebench.evaluate.wvb.parsing import evaluate_answers, read_responses
from culturebench.evaluate.wvb.plots import plotted_rows

MAJORITY_DEFINITIONS = ("pooled", "per_group")
"""Readings of the majority baseline (see the module docstring); the first is the default."""


@dataclass
class ScoreResult:
    metrics: dict
    plotted: pl.DataFrame
    """The covered rows of the questions histograms.png draws (``plots.plotted_rows``)."""
    rows: pl.DataFrame | None = None
    """Covered rows: question_id, participant_id, human, model (null when invalid), scale_min, scale_max, has_model,
    the groups of GROUP_COLUMNS (continent, urban_rural, education_level; null when unknown); text columns
    categorical. Kept only when no bootstrap was asked (``compare`` bootstraps its runs together from them); else
    None: the run's bootstrap is made from them before it resamples, and a run of millions does not hold them
    while it does."""
    counts: AnswerCounts | None = None
    """The ``AnswerCounts`` of ``rows`` (the bootstrap's questions, axis and groups), kept with them."""


def _score_columns(drop_out_of_scale: bool = False, drop_non_integer: bool = False) -> list[pl.Expr]:
    """As the authors' evaluate.py (635db74) scores SCORE (``pd.to_numeric``, then ``astype(int)``): ``model`` is
    the number truncated toward zero ("2.6" -> 2), null when SCORE is no finite number; with ``drop_non_integer`` a
    non-whole number (or one the reply gave and the parser truncated: ``not_integer``) is null instead. A number off
    the question's scale is kept (rescaled like any other) unless ``drop_out_of_scale``. ``out_of_scale``: the
    answer is off the scale (kept or not); ``not_integer``: it was not a whole number (truncated or dropped)."""
    value = pl.col("score").cast(pl.Float64, strict=False)
    number = value.is_not_null() & value.is_finite()
    not_integer = number & ((value != value.floor()) | pl.col("not_integer").fill_null(False))
    truncated = value.cast(pl.Int64, strict=False)
    counted = number & ~not_integer if drop_non_integer else number
    off_scale = counted & ((truncated < pl.col("scale_min")) | (truncated > pl.col("scale_max")))
    valid = counted & ~off_scale if drop_out_of_scale else counted
    return [pl.when(valid).then(truncated).otherwise(None).alias("model"),
            off_scale.fill_null(False).alias("out_of_scale"), not_integer.fill_null(False).alias("not_integer")]


def out_of_scale_report(covered: pl.DataFrame, drop_out_of_scale: bool) -> dict:
    """metrics.json ``out_of_scale``: whether whole-number answers off the question's scale were kept (the
    authors' evaluate.py) or dropped (``--drop-out-of-scale``), their count, and per question their share of the
    question's model answers (padding rows without a model sample not counted)."""
    per_question = (covered.filter(pl.col("has_model")).group_by("question_id")
                    .agg(pl.col("out_of_scale").sum().alias("n"), pl.col("out_of_scale").mean().alias("share")))
    shares = dict(sorted(per_question.select("question_id", "share").iter_rows(),
                         key=lambda item: question_order(item[0])))
    return {"answers": "dropped" if drop_out_of_scale else "kept", "n": int(per_question["n"].sum()),
            "share_per_question": shares}


def non_integer_report(covered: pl.DataFrame, drop_non_integer: bool) -> dict:
    """metrics.json ``non_integer``: whether answers that are not whole numbers were truncated toward zero (the
    authors' evaluate.py, ``astype(int)``) or dropped (``--drop-non-integer``), and their number."""
    n = int(covered.filter(pl.col("has_model"))["not_integer"].sum())
    return {"answers": "dropped" if drop_non_integer else "truncated", "n": n}


CELL_COLUMNS = ("question_id", "continent", "urban_rural", "probe_continent", "probe_urban_rural", "education_level")
"""The finest cell the covered rows are counted in: every breakdown of metrics.json sums these counts."""
PROBE_GROUP = ("probe_continent", "probe_urban_rural", "education_level")
"""A participant's probe group (Sec. 3.1): the unit of the per-group majority baseline."""
BREAKDOWNS = {"continent": ("continent",), "urban_rural": ("urban_rural",), "probe_group": PROBE_GROUP,
              "probe_education_level": ("education_level",)}
"""metrics.json ``groups``: breakdown -> the columns whose values name a group (rows with a null left out)."""


@dataclass
class AnswerCounts:
    """Covered rows counted per cell (CELL_COLUMNS): ``human`` by human answer (null: a model sample without a
    participant), ``model`` by model answer and has_model (null: invalid, or a padding row when has_model is
    false); each with ``n``. ``scales``: question_id, scale_min, scale_max (the release's). ``offsets``: the distinct
    answers' offsets from scale_min (human and model); ``points``/``gaps``: them and the scales' points on one axis
    (``metrics.support_points``). Small: cells x answers, whatever the rows."""

    human: pl.DataFrame
    model: pl.DataFrame
    scales: pl.DataFrame
    offsets: np.ndarray
    points: np.ndarray
    gaps: np.ndarray

    @classmethod
    def of(cls, covered: pl.DataFrame, profiles: pl.DataFrame, scales: pl.DataFrame) -> AnswerCounts:
        """Counts of the covered rows, whose ``profile`` numbers a row of ``profiles`` (its CELL_COLUMNS but the
        question: a participant's groups, coded once per participant so that the rows are grouped by integers)."""
        human, model = pl.collect_all(  # the streaming engine: half the peak memory of the in-memory group_by
            [covered.lazy().group_by("question_id", "profile", *answer).len("n")
             .join(profiles.lazy(), on="profile", how="left").drop("profile")
             for answer in (["human"], ["model", "has_model"])], engine="streaming")
        offsets = pl.concat([
            human.join(scales, on="question_id").select((pl.col("human") - pl.col("scale_min")).alias("offset")),
            model.join(scales, on="question_id").select((pl.col("model") - pl.col("scale_min")).alias("offset"))])
        offsets = offsets["offset"].drop_nulls().unique().sort().to_numpy()
        steps = (scales["scale_max"] - scales["scale_min"]).max()
        return cls(human, model, scales, offsets, *metrics.support_points(offsets, int(steps or 0)))

    def histograms(self, frame: pl.DataFrame, answer: str, cells: pl.DataFrame, keys: list[str]) -> np.ndarray:
        """Counts of ``answer`` (non-null) per row of ``cells`` (its ``cell`` column numbers them) x point."""
        known = (frame.filter(pl.col(answer).is_not_null())
                 .join(cells, on=keys).join(self.scales, on="question_id")
                 .select("cell", (pl.col(answer) - pl.col("scale_min")).alias("offset"), "n"))
        at = np.searchsorted(self.points, known["offset"].to_numpy())
        flat = np.bincount(known["cell"].to_numpy() * self.points.size + at, weights=known["n"].to_numpy(),
                           minlength=cells.height * self.points.size)
        return flat.reshape(cells.height, self.points.size)


def _by_group(counts: AnswerCounts, by: tuple[str, ...], majority: str) -> dict[tuple, dict]:
    """Per group of ``by`` (() for all rows; rows with a null in ``by`` left out) the metrics of its rows:
    per-question W1 of the model and of the uniform and majority baselines, their mean, std and threshold curves
    (``metrics.summary``), n_rows and n_invalid. A question whose model answers are all invalid gets W1 None (left
    out of the mean and the curve); with ``majority="per_group"`` a question without probe rows gets a majority W1
    of None. Groups in sorted order, questions in natural order."""
    keys = [*by, "question_id"]
    human = counts.human.drop_nulls(list(by))
    model = counts.model.drop_nulls(list(by))
    cells = human.group_by(keys).agg(pl.col("n").sum().alias("n_rows"))
    names = cells.select(keys).rows()
    cells = cells[sorted(range(cells.height), key=lambda i: (names[i][:-1], question_order(names[i][-1])))]
    cells = cells.with_row_index("cell")
    steps = (cells.join(counts.scales, on="question_id", maintain_order="left")
             .select(pl.col("scale_max") - pl.col("scale_min")).to_series().to_numpy().astype(float))
    human_counts = counts.histograms(human, "human", cells, keys)
    w1 = metrics.w1_from_counts(human_counts, counts.histograms(model, "model", cells, keys), steps, counts.gaps)
    baselines = {"uniform": metrics.uniform_w1_from_counts(human_counts, counts.points, steps, counts.gaps),
                 "majority": (metrics.majority_w1_from_counts(human_counts, steps, counts.gaps) if majority == "pooled"
                              else _per_group_majority(counts, human, cells, keys, steps))}
    invalid_rows = model.filter(pl.col("has_model") & pl.col("model").is_null())
    invalid = ({tuple(row[:-1]): row[-1] for row in invalid_rows.group_by(list(by)).agg(pl.col("n").sum()).iter_rows()}
               if by else {(): invalid_rows["n"].sum()})
    out: dict[tuple, dict] = {}
    for key, part in (cells.group_by(list(by), maintain_order=True) if by else [((), cells)]):
        at = part["cell"].to_numpy()
        questions = part["question_id"].to_list()
        result = metrics.summary({q: _finite(w1[i]) for q, i in zip(questions, at)})
        result["n_rows"] = int(part["n_rows"].sum())
        result["n_invalid"] = int(invalid.get(tuple(key), 0))
        result["baselines"] = {
            "uniform": metrics.summary({q: _finite(baselines["uniform"][i]) for q, i in zip(questions, at)}),
            "majority": {"definition": majority,
                         **metrics.summary({q: _finite(baselines["majority"][i]) for q, i in zip(questions, at)})}}
        out[tuple(key)] = result
    return out


def _per_group_majority(counts: AnswerCounts, human: pl.DataFrame, cells: pl.DataFrame, keys: list[str],
                        steps: np.ndarray) -> np.ndarray:
    """Sec. 3.3 (2) read per demographic group, per cell: W1 between the human answers of the cell's probe rows and
    a prediction per answer of its probe group's majority answer (ties: the smallest); NaN without probe rows."""
    probe = human.drop_nulls([*PROBE_GROUP, "human"])
    group_keys = list(dict.fromkeys([*keys, *PROBE_GROUP]))  # ``keys`` may hold the probe group already
    groups = (probe.select(group_keys).unique(maintain_order=True)
              .join(cells.select(*keys, pl.col("cell").alias("owner")), on=keys).with_row_index("cell"))
    per_group = counts.histograms(probe, "human", groups.drop("owner"), group_keys)
    owner = groups["owner"].to_numpy()
    human_counts = np.zeros((cells.height, counts.points.size))
    np.add.at(human_counts, owner, per_group)
    predicted = np.zeros_like(human_counts)
    np.add.at(predicted, owner, metrics.majority_counts(per_group) * per_group.sum(axis=1, keepdims=True))
    return np.where(human_counts.sum(axis=1) > 0,
                    metrics.w1_from_counts(human_counts, predicted, steps, counts.gaps), np.nan)


def _unreadable(exc: Exception, source: dict) -> InputError:
    """The error of a responses file that cannot be read to its end (a damaged parquet shard: its footer is read
    when the file is opened, its pages only when the answers are), naming the file."""
    return InputError(f"responses cannot be scored ({str(exc).splitlines()[0]})", file=source.get("path"))


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def read_answers(responses: Path, release: Path) -> tuple[pl.DataFrame, str]:
    """The answers of a responses file as ``score_answers`` takes them, and the model they are named after (``score``
    and ``compare`` of a ``score`` run read them alike). A ``.jsonl`` file is ``evaluate wvb``'s responses.jsonl, a
    folder or ``.parquet`` file the parquet shards of a large run (``runs.ResponsesWriter``), both paired with the
    evaluated rows again through the metrics.json beside them when asked without demographics (model: the run's);
    anything else the paper's QUESTION_ID, PARTICIPANT_ID, SCORE (model: the file's name)."""
    responses = Path(responses)
    if responses.is_dir() or responses.suffix.lower() in (".jsonl", ".parquet"):
        run_folder = responses.parent.parent if responses.suffix.lower() == ".parquet" else responses.parent
        beside = run_folder / runs.METRICS_FILE
        run_metrics = compare.read_json_object(beside) if beside.is_file() else {}
        return evaluate_answers(responses, release, run_metrics), (run_metrics.get("models") or [run_folder.name])[0]
    return read_responses(responses), responses.stem


def score(responses: Path, release: Path, majority: str = MAJORITY_DEFINITIONS[0],
          bootstrap: uncertainty.Bootstrap | None = uncertainty.Bootstrap(),
          drop_out_of_scale: bool = False, drop_non_integer: bool = False) -> ScoreResult:
    """Score a responses file (``read_answers``) against a WVB release: coverage, invalid answers, W1 per question
    and per group."""
    responses = Path(responses)
    inputs, model = read_answers(responses, release)
    result = score_answers(inputs, release, runs.source_info(responses), majority=majority, model=model,
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
              .with_columns(_score_columns(drop_out_of_scale, drop_non_integer)))
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
    result = _by_group(counts, (), majority)[()]
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
        "n_invalid_covered": int(covered.select(invalid.sum()).item()),
        "out_of_scale": out_of_scale_report(covered, drop_out_of_scale),
        "non_integer": non_integer_report(covered, drop_non_integer),
        "release_routes": release_routes(release),
        "groups": {kind: {" / ".join(str(k) for k in key): part
                          for key, part in sorted(_by_group(counts, columns, majority).items())}
                   for kind, columns in BREAKDOWNS.items()},
    })
    rows = covered.drop("out_of_scale", "not_integer", "profile")  # the same columns, not a copy
    del covered
    plotted = plotted_rows(rows)
    if bootstrap is None or not rows.height:  # nothing covered: no interval (``score`` refuses such a file)
        return ScoreResult(metrics=runs.json_safe(result), plotted=plotted, rows=rows, counts=counts)
    by_model = {result["models"][0]: rows}
    del rows  # the bootstrap takes the only reference, and frees the rows once it has coded them
    boot = W1Bootstrap(by_model, [counts])
    scored = ScoreResult(metrics=runs.json_safe(result), plotted=plotted)
    add_intervals(scored.metrics, boot, bootstrap)
    scored.metrics = runs.json_safe(scored.metrics)
    return_free_heap()  # the resamples' arrays, before the plots
    return scored
