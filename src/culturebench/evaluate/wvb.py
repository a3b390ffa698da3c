"""Score model answers on WorldValuesBench (Zhao et al. 2024, Sec. 3.2-3.5): ``culturebench score wvb``.

Input: the paper's evaluate input, a TSV or CSV (delimiter sniffed) with columns QUESTION_ID, PARTICIPANT_ID, SCORE,
one model answer per row. Human answers are joined from the release's ``examples`` by (participant_id,
question_id), whatever split they are in; only the participants present in the input are read (lazily). Per question,
the W1 distance between the human answers and the valid model answers of the covered rows (Sec. 3.2, Table 2; see
``metrics``), its mean / std (Table 2's Mean row) and threshold curve (Fig. 3); the same per demographic group, and
two oracle baselines (Sec. 3.3): uniform and majority.

The majority baseline has two readings (``MAJORITY_DEFINITIONS``, facts/wvb.json ``evaluation.baselines``):
``pooled`` (default) predicts the most frequent of the question's scored human answers, which reproduces Table 2's
Majority column; ``per_group`` predicts each participant the most frequent answer of their probe group (continent x
urban/rural x education level), as Sec. 3.3's text says, and is 0.18 off Table 2 on average. Choose with
``--config`` (``{"majority": "per_group"}``); metrics.json names the one used (``baselines.majority.definition``).

``culturebench evaluate wvb`` (bottom of this module): builds the App. B prompts (``wvb_prompts``) for the probe or a
split, runs them through ``runner.run_requests`` with a response cache in the run folder, parses the answers and
scores them with the same code (``score_answers``), writing responses.jsonl and run.json (``runs``).

Intervals (issue #18, ``W1Bootstrap``, ``add_intervals``): a seeded bootstrap over participants within each question
recomputes every W1 statistic; metrics.json gets ``<key>_ci`` beside each value and ``group_breakdown``. ``COMPARE``
is this benchmark's entry for ``culturebench compare`` (runs re-scored and bootstrapped together: paired).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import compare, metrics, plots, runs, uncertainty
from culturebench.evaluate.limit import Coverage, counted, limit_frame
from culturebench.release import load_manifest

if TYPE_CHECKING:
    from culturebench.evaluate.backends import ChatRequest

COLUMNS = ("QUESTION_ID", "PARTICIPANT_ID", "SCORE")
MAJORITY_DEFINITIONS = ("pooled", "per_group")
"""Readings of the majority baseline (see the module docstring); the first is the default."""
CONFIG_KEYS = ("majority", "prompt_family")
"""Keys of the ``--config`` file: majority (score and evaluate), prompt_family (evaluate: App. B's figures)."""
DELIMITERS = ("\t", ",", ";", "|")
PROBE_DIMENSIONS = ("continent", "urban_rural", "education_level")


@dataclass
class ScoreResult:
    metrics: dict
    rows: pl.DataFrame
    """Covered rows: question_id, participant_id, human, model (null when invalid), scale_min, scale_max, the
    groups of GROUP_COLUMNS (continent, urban_rural, education_level; null when unknown)."""


def question_order(question_id: str) -> tuple:
    """Natural order of question ids: Q2 before Q10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", question_id))


# --------------------------------------------------------------------------------------------------- responses


def sniff_delimiter(path: Path) -> str:
    """The delimiter of the header line: the candidate (tab, comma, semicolon, pipe) it contains most often."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            header = handle.readline()
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", file=path) from None
    if not header.strip():
        raise InputError("file is empty (no header line)", file=path)
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else "\t"


def read_responses(path: Path) -> pl.DataFrame:
    """The input rows: ``row`` (1-based data row), question_id, participant_id (Int64), score (raw text)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("responses file not found", file=path)
    separator = sniff_delimiter(path)
    try:
        frame = pl.read_csv(path, separator=separator, infer_schema=False, encoding="utf8-lossy")
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"cannot be read as {'TSV' if separator == chr(9) else 'CSV'} ({str(exc).splitlines()[0]})",
                         file=path) from None
    frame = frame.rename({name: name.strip().lstrip("\ufeff") for name in frame.columns})
    for column in COLUMNS:
        if column not in frame.columns:
            shown = "tab" if separator == "\t" else repr(separator)
            raise InputError(f"missing column {column} (header has {', '.join(frame.columns)}; delimiter {shown})",
                             file=path, column=column)
    frame = frame.select(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("row"),
        pl.col("QUESTION_ID").str.strip_chars().alias("question_id"),
        pl.col("PARTICIPANT_ID").str.strip_chars().alias("participant_text"),
        pl.col("SCORE").str.strip_chars().alias("score"),
    ).with_columns(pl.col("participant_text").cast(pl.Int64, strict=False).alias("participant_id"))
    if frame.height == 0:
        raise InputError("file has a header but no data rows", file=path)
    bad = frame.filter(pl.col("participant_id").is_null())
    if bad.height:
        first = bad.row(0, named=True)
        raise InputError(f"participant id {first['participant_text']!r} is not an integer", file=path,
                         row=first["row"], column="PARTICIPANT_ID")
    bad = frame.filter(pl.col("question_id").is_null() | (pl.col("question_id") == ""))
    if bad.height:
        raise InputError("empty question id", file=path, row=bad["row"][0], column="QUESTION_ID")
    repeated = frame.filter(pl.struct("question_id", "participant_id").is_duplicated())
    if repeated.height:  # one answer per participant and question: a second would be counted twice
        question, participant, first = (repeated[name][0] for name in ("question_id", "participant_id", "row"))
        second = repeated.filter((pl.col("question_id") == question) & (pl.col("participant_id") == participant)
                                 )["row"][1]
        raise InputError(f"participant {participant} answers question {question!r} again (first on row {first})",
                         file=path, row=second, column="PARTICIPANT_ID")
    return frame.drop("participant_text")


# ----------------------------------------------------------------------------------------------------- release


def _paths(release: Path, manifest: dict, config: str) -> list[Path]:
    paths = [Path(release) / o["path"] for o in manifest["outputs"] if o.get("config") == config]
    for path in paths:
        if not path.is_file():
            raise InputError("file listed in manifest.json is missing", file=path)
    return paths


def _scan(release: Path, manifest: dict, config: str) -> pl.LazyFrame:
    paths = _paths(release, manifest, config)
    if not paths:
        raise InputError(f"release has no {config!r} config", file=release)
    return pl.scan_parquet(paths)


def _collect(frame: pl.LazyFrame, release: Path, config: str) -> pl.DataFrame:
    try:
        return frame.collect()
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{config} parquet files cannot be read ({str(exc).splitlines()[0]})", file=release) from None


def release_rows(release: Path, participant_ids: pl.Series) -> dict[str, pl.DataFrame]:
    """The release rows the scoring needs: questions (scales), examples / participants / probe of the given ids."""
    release = Path(release)
    manifest = load_manifest(release)
    if manifest.get("benchmark") != "wvb":
        raise InputError(f"not a WorldValuesBench release (benchmark {manifest.get('benchmark')!r})", file=release)
    ids = participant_ids.unique().implode()
    questions = _collect(_scan(release, manifest, "questions").select(
        "question_id", "kind", pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64)), release, "questions")
    examples = _collect(_scan(release, manifest, "examples")
                        .filter(pl.col("participant_id").is_in(ids))
                        .select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                                pl.col("answer").cast(pl.Int64).alias("human")), release, "examples")
    participants = _collect(_scan(release, manifest, "participants")
                            .filter(pl.col("participant_id").is_in(ids))
                            .select(pl.col("participant_id").cast(pl.Int64), pl.col("continent").cast(pl.String),
                                    pl.col("H_URBRURAL").cast(pl.String).alias("urban_rural")), release, "participants")
    probe_paths = _paths(release, manifest, "probe")
    if probe_paths:
        probe = _collect(pl.scan_parquet(probe_paths).filter(pl.col("participant_id").is_in(ids))
                         .select(pl.col("participant_id").cast(pl.Int64), *(pl.col(c).cast(pl.String) for c in PROBE_DIMENSIONS))
                         .unique("participant_id", keep="first", maintain_order=True), release, "probe")
    else:
        probe = pl.DataFrame(schema={"participant_id": pl.Int64, **{c: pl.String for c in PROBE_DIMENSIONS}})
    return {"questions": questions, "examples": examples, "participants": participants, "probe": probe}


def release_routes(release: Path) -> dict:
    """Which files built the release's question texts and probe (manifest provenance ``routes``, see
    ``builders.wvb.ROUTES``): recorded in metrics.json and run.json, since prompts and probe depend on them."""
    return load_manifest(Path(release)).get("provenance", {}).get("routes", {})


# ----------------------------------------------------------------------------------------------------- scoring


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
    keyed = rows.drop_nulls(columns)
    out = {}
    for key, part in sorted(keyed.partition_by(columns, as_dict=True, maintain_order=True).items()):
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


def evaluate_answers(path: Path, release: Path, run_metrics: dict) -> pl.DataFrame:
    """``evaluate wvb``'s responses (responses.jsonl or the parquet shards of a large run) as ``score_answers``
    input, paired with the evaluated rows as ``evaluate`` paired them. Asked without demographics (records without
    participant), the rows come from the run's metrics (split, rows evaluated and the ``--limit`` spread recorded
    under ``covers``)."""
    answers = read_answers(path)
    if answers["participant_id"][0] is not None:
        return answers_frame(None, answers, True)
    if run_metrics.get("mode") != "without_demographics":
        raise InputError(f"records without participant need the run's {runs.METRICS_FILE} beside them (it names "
                         "the split and rows that were asked)", file=path, row=1, column="participant_id")
    covers = (run_metrics.get("covers") or [{}])[0]
    rows = evaluation_rows(release, run_metrics.get("split") or "probe",
                           covers.get("limit", run_metrics.get("n_evaluated_rows")), covers.get("seed", 0))
    return answers_frame(rows, answers, False)


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
    known = joined.filter(pl.col("scale_min").is_not_null())
    covered = joined.filter((pl.col("human").is_not_null() | pl.col("participant_id").is_null())
                            & pl.col("scale_min").is_not_null())
    covered = (covered
               .join(tables["participants"], on="participant_id", how="left")
               .join(tables["probe"].rename({"continent": "probe_continent", "urban_rural": "probe_urban_rural"}),
                     on="participant_id", how="left")
               .with_columns(pl.concat_str("probe_continent", "probe_urban_rural", "education_level",
                                           separator=" / ").alias("majority_group"))
               .sort("row"))
    result = evaluate_rows(covered, majority)
    n_rows = joined.height
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
        "n_unknown_question": joined.height - known.height,
        "n_invalid": _n_invalid(known),
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
    del inputs, tables, joined, known, covered, probe_rows  # the bootstrap needs only ``rows``: memory for it
    if bootstrap is not None and rows.height:  # nothing covered: no interval (``score`` refuses such a file)
        add_intervals(scored, bootstrap)
        scored.metrics = runs.json_safe(scored.metrics)
    return scored


# ------------------------------------------------------------------------------------------------ uncertainty
# Issue #18: intervals by a seeded bootstrap over participants within each question (the unit of sampling of
# Sec. 3.1's probe: 5 answers per demographic group and question). One resample of (question, participant) units
# serves every model scored together, so their differences are paired.

GROUP_COLUMNS = {"continent": "continent", "urban_rural": "urban_rural", "probe_education_level": "education_level"}
"""Breakdowns of metrics.json ``groups`` that get intervals -> the column of the covered rows holding the group."""

BOOTSTRAP_NOTE = {
    "statistic": "per question, W1 (Sec. 3.2) between the resampled participants' human answers and their model "
                 "answers, recomputed on every resample; then Table 2's mean and std over questions, Fig. 3's "
                 "threshold curve, the uniform and pooled majority baselines' means, and per group (continent, "
                 "urban/rural, education level) the mean over questions of the W1 of the group's resampled "
                 "participants",
    "paired": "one resample of (question, participant) units serves every model, so differences are paired",
    "bias": "W1 between two samples is biased upward by sampling noise where it is near 0, and the std over "
            "questions by the noise of each question's W1, so resampled values run above these estimates and a "
            "percentile interval may sit just above them (mean_bootstrap_bias and std_bootstrap_bias: mean of the "
            "resamples minus the estimate)",
    "significance": "difference of mean W1 between two models over the questions both have a W1 (overall and per "
                    "continent / education level, groups small for either model left out): two-sided p-value of "
                    "difference = 0 with the standard error of the paired bootstrap distribution (normal "
                    "approximation, uncertainty.bootstrap_pvalue), Holm-adjusted over all rows; significant when "
                    "the adjusted p < 1 - confidence level",
}
"""How WVB's intervals are computed (recorded in metrics.json under ``uncertainty``)."""
DIFFERENCE_KINDS = ("continent", "probe_education_level")
"""Breakdowns whose per-group differences between models are tested (besides the overall mean)."""


@dataclass
class UnitRows:
    """One model's covered rows as arrays, sorted by bootstrap unit ((question, participant); a model sample
    without a participant is a unit of its own): per unit its first row and row count; per row the question's
    position, the human and model answers as offsets from scale_min (-1: none) and the group code of each of
    GROUP_COLUMNS (-1: none)."""

    start: np.ndarray
    count: np.ndarray
    question: np.ndarray
    human: np.ndarray  # offsets from scale_min plus W1Bootstrap.shift (so that answers below the scale are >= 0)
    model: np.ndarray
    groups: np.ndarray  # rows x len(GROUP_COLUMNS)

    def take(self, units: np.ndarray) -> np.ndarray:
        """The row positions of ``units`` (a unit drawn twice gives its rows twice)."""
        counts = self.count[units]
        ends = np.cumsum(counts)
        return np.repeat(self.start[units] - ends + counts, counts) + np.arange(int(ends[-1]) if ends.size else 0)


def _with_unit_key(rows: pl.DataFrame) -> pl.DataFrame:
    """``unit``: the participant id, or for a model sample without a participant minus its order among those of
    its question."""
    extra = pl.col("participant_id").is_null().cast(pl.Int64).cum_sum().over("question_id")
    return rows.with_columns(pl.when(pl.col("participant_id").is_null()).then(-extra)
                             .otherwise(pl.col("participant_id")).alias("unit"))


class W1Bootstrap:
    """The bootstrap of every model's W1 statistics over the same units (``resample_units`` with one stratum per
    question). ``scored``: model -> covered rows of ``score_answers`` (ScoreResult.rows)."""

    def __init__(self, scored: dict[str, pl.DataFrame]):
        self.models = list(scored)
        keyed = {m: _with_unit_key(rows) for m, rows in scored.items()}
        everything = pl.concat([r.select("question_id", "unit", "scale_min", "scale_max", *GROUP_COLUMNS.values())
                                for r in keyed.values()], how="vertical_relaxed")
        self.questions = sorted(everything["question_id"].unique().to_list(), key=question_order)
        position = {q: i for i, q in enumerate(self.questions)}
        scales = everything.unique("question_id", keep="first").select("question_id", "scale_min", "scale_max")
        lows = dict(zip(scales["question_id"], scales["scale_min"]))
        self.steps = np.asarray([dict(zip(scales["question_id"], scales["scale_max"]))[q] - lows[q]
                                 for q in self.questions], dtype=float)
        offsets = pl.concat([r.select((pl.col("model") - pl.col("scale_min")).alias("offset")) for r in keyed.values()])
        # answers kept off the scale (score_answers) widen the grid: point k is answer scale_min + k - shift
        self.shift = max(0, -int(offsets["offset"].min() or 0))
        self.points = self.shift + max(int(self.steps.max()), int(offsets["offset"].max() or 0)) + 1
        self.groups = {kind: sorted(everything[column].drop_nulls().unique().to_list())
                       for kind, column in GROUP_COLUMNS.items()}
        units = (everything.select("question_id", "unit").unique()
                 .with_columns(pl.col("question_id").replace_strict(position, return_dtype=pl.Int64).alias("q"))
                 .sort("q", "unit").with_row_index("index"))
        self.strata = [part["index"].to_numpy() for part in units.partition_by("q", maintain_order=True)]
        self.data = {}
        for model, rows in keyed.items():
            rows = (rows.join(units.select("question_id", "unit", "index", "q"), on=["question_id", "unit"])
                    .sort("index", maintain_order=True))
            count = np.bincount(rows["index"].to_numpy(), minlength=units.height)
            codes = [rows[column].replace_strict({g: i for i, g in enumerate(self.groups[kind])}, default=-1,
                                                 return_dtype=pl.Int64).fill_null(-1).to_numpy()
                     for kind, column in GROUP_COLUMNS.items()]
            self.data[model] = UnitRows(  # per row int32 (half of int64's memory; every value is small)
                start=np.cumsum(count) - count, count=count, question=rows["q"].to_numpy().astype(np.int32),
                human=(rows["human"] - rows["scale_min"] + self.shift).fill_null(-1).to_numpy().astype(np.int32),
                model=(rows["model"] - rows["scale_min"] + self.shift).fill_null(-1).to_numpy().astype(np.int32),
                groups=(np.stack(codes, axis=1) if codes else np.empty((rows.height, 0))).astype(np.int32))
        n_cells = 1 + sum(len(g) for g in self.groups.values())
        self.cell_steps = np.tile(self.steps, n_cells)
        grid = np.arange(self.points) - self.shift
        self.uniform = ((grid >= 0) & (grid <= self.steps[:, None])).astype(float)

    def cells(self, model: str, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """W1 per cell for the rows of ``units``: the questions, then each group of each kind (group x question);
        NaN where a cell has no human or no valid model answer. Also the questions' human answer counts."""
        data, n_q, p = self.data[model], len(self.questions), self.points
        rows = data.take(units)
        q = data.question[rows]
        human, answers = data.human[rows], data.model[rows]
        n_cells = n_q * (1 + sum(len(self.groups[kind]) for kind in GROUP_COLUMNS))
        counts = [np.zeros(n_cells * p, dtype=np.int64), np.zeros(n_cells * p, dtype=np.int64)]
        cell, offset = q, n_q  # the questions' cells, then each kind's (group x question), one kind at a time
        for k, kind in enumerate([None, *GROUP_COLUMNS]):
            if kind is not None:
                g = data.groups[rows, k - 1]
                cell = np.where(g >= 0, offset + g * n_q + q, -1)
                offset += len(self.groups[kind]) * n_q
            for answer, count in ((human, counts[0]), (answers, counts[1])):
                ok = (cell >= 0) & (answer >= 0)
                count += np.bincount(cell[ok] * p + answer[ok], minlength=n_cells * p)
        counts = [c.reshape(n_cells, p).astype(float) for c in counts]
        return metrics.w1_from_counts(counts[0], counts[1], self.cell_steps), counts[0][:n_q]

    def per_model(self, model: str, units: np.ndarray) -> dict[str, np.ndarray]:
        """Every statistic of one model on the rows of ``units``."""
        w1, human = self.cells(model, units)
        n_q = len(self.questions)
        out = {"per_question": w1[:n_q]}
        out["mean"], out["std"] = _nan_mean_std(w1[:n_q])
        values = w1[:n_q][np.isfinite(w1[:n_q])]
        out["curve"] = (np.asarray([np.mean(values <= t + metrics.EPSILON) for _, t in metrics.threshold_grid()])
                        if values.size else np.full(metrics.THRESHOLD_STEPS + 1, np.nan))
        majority = np.zeros_like(human)
        majority[np.arange(n_q), human.argmax(axis=1)] = 1.0  # argmax: the first, i.e. smallest, most frequent answer
        answered = human.sum(axis=1) > 0
        out["uniform"] = _nan_mean_std(np.where(answered, metrics.w1_from_counts(human, self.uniform, self.steps), np.nan))[0]
        out["majority"] = _nan_mean_std(np.where(answered, metrics.w1_from_counts(human, majority, self.steps), np.nan))[0]
        offset = n_q
        for kind, names in self.groups.items():
            out[kind] = w1[offset:offset + len(names) * n_q].reshape(len(names), n_q)
            offset += len(names) * n_q
        return out

    def run(self, settings: uncertainty.Bootstrap, pairs: list[tuple[str, str, str | None, str | None]]
            ) -> tuple[uncertainty.Resampled, dict]:
        """The bootstrap; ``pairs``: (model a, model b, kind or None for all questions, group) whose difference of
        mean W1 (over the questions both have a W1) is tested. Returns the result and where each statistic sits
        in its vector: (model, name) -> slice, ("difference", i) -> index of pairs[i]."""
        layout: dict = {}

        def statistic(units: np.ndarray) -> np.ndarray:
            values = {m: self.per_model(m, units) for m in self.models}
            blocks = []
            for m in self.models:
                v = values[m]
                group_means = {kind: _nan_mean_std(v[kind])[0] for kind in self.groups}
                for name, block in (("per_question", v["per_question"]), ("mean", v["mean"]), ("std", v["std"]),
                                    ("curve", v["curve"]), ("uniform", v["uniform"]), ("majority", v["majority"]),
                                    *group_means.items()):
                    block = np.atleast_1d(block)
                    start = sum(b.size for b in blocks)
                    layout[(m, name)] = slice(start, start + block.size)
                    blocks.append(block)
            for i, (a, b, kind, group) in enumerate(pairs):
                if kind is None:
                    x, y = values[a]["per_question"], values[b]["per_question"]
                else:
                    g = self.groups[kind].index(group)
                    x, y = values[a][kind][g], values[b][kind][g]
                layout[("difference", i)] = sum(b.size for b in blocks)
                blocks.append(np.atleast_1d(_nan_mean_std(x - y)[0]))
            return np.concatenate(blocks)

        return uncertainty.resample_units(self.strata, statistic, settings), layout


def _nan_mean_std(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population std over the last axis of the finite values (NaN where there are none), as
    ``metrics.mean_std`` leaves out questions without a W1."""
    ok = np.isfinite(values)
    n = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, values, 0.0).sum(axis=-1) / np.where(n, n, np.nan)
        spread = np.where(ok, (values - np.expand_dims(mean, -1)) ** 2, 0.0).sum(axis=-1) / np.where(n, n, np.nan)
    return mean, np.sqrt(spread)


def group_sizes(rows: pl.DataFrame, kind: str) -> list[dict]:
    """Per group of ``kind``: n_rows (covered rows), n_participants, n_questions and answers_per_question (the
    median over its questions of its human answers: the sample behind each of its W1s)."""
    column = GROUP_COLUMNS[kind]
    keyed = rows.filter(pl.col(column).is_not_null())
    per_question = (keyed.filter(pl.col("human").is_not_null()).group_by(column, "question_id").len()
                    .group_by(column).agg(pl.col("len").median().alias("answers_per_question"),
                                          pl.len().alias("n_questions")))
    sizes = keyed.group_by(column).agg(pl.len().alias("n_rows"), pl.col("participant_id").n_unique().alias("n_participants"))
    joined = sizes.join(per_question, on=column, how="left").sort(column)
    return [{"group": r[column], "n_rows": r["n_rows"], "n_participants": r["n_participants"],
             "n_questions": r["n_questions"] or 0, "answers_per_question": r["answers_per_question"] or 0}
            for r in joined.iter_rows(named=True)]


def bootstrap_intervals(scored: dict[str, ScoreResult], settings: uncertainty.Bootstrap,
                        minimum: int = uncertainty.MIN_GROUP_SIZE) -> dict:
    """Intervals of every model's metrics and the paired differences between models, from one ``W1Bootstrap``:
    per model {per_question_ci, mean_ci, std_ci, threshold_curve_ci, baselines: {uniform, majority} mean_ci (the
    pooled majority only; None for per_group), group_breakdown: kind -> rows (sizes, mean W1 and interval, small,
    rank; small: fewer than ``minimum`` answers per question)}, and ``differences`` (model_a, model_b, kind,
    group, difference, low, high, pvalue, pvalue_holm, significant, n_common_questions)."""
    from culturebench.evaluate.stats import holm

    boot = W1Bootstrap({m: s.rows for m, s in scored.items()})
    breakdowns = {m: {kind: group_sizes(s.rows, kind) for kind in GROUP_COLUMNS} for m, s in scored.items()}
    small = {m: {kind: {r["group"] for r in rows if r["answers_per_question"] < minimum}
                 for kind, rows in kinds.items()} for m, kinds in breakdowns.items()}
    models = list(scored)
    pairs = [(a, b, None, None) for i, a in enumerate(models) for b in models[i + 1:]]
    pairs += [(a, b, kind, g) for i, a in enumerate(models) for b in models[i + 1:] for kind in DIFFERENCE_KINDS
              for g in boot.groups[kind] if g not in small[a][kind] | small[b][kind]
              and any(r["group"] == g for r in breakdowns[a][kind]) and any(r["group"] == g for r in breakdowns[b][kind])]
    result, layout = boot.run(settings, pairs)

    def span(model: str, name: str) -> list[list[float | None]]:
        return [result.interval(i) for i in range(*layout[(model, name)].indices(result.estimate.size))]

    out: dict = {"models": {}}
    for model in models:
        group_ci = {kind: dict(zip(boot.groups[kind], span(model, kind))) for kind in GROUP_COLUMNS}
        majority = scored[model].metrics["baselines"]["majority"]["definition"] == "pooled"
        tables = {}
        for kind, rows in breakdowns[model].items():
            for row in rows:
                mean = scored[model].metrics["groups"][kind].get(row["group"], {}).get("mean")
                low, high = group_ci[kind][row["group"]]
                row.update({"estimate": mean, "low": low, "high": high})
            tables[kind] = uncertainty.rank_groups(rows, minimum=minimum, size="answers_per_question",
                                                   lower_is_better=True)
        out["models"][model] = {
            "per_question_ci": dict(zip(boot.questions, span(model, "per_question"))),
            "mean_ci": span(model, "mean")[0], "std_ci": span(model, "std")[0],
            **{f"{name}_bootstrap_bias": _bias(result, layout[(model, name)].start) for name in ("mean", "std")},
            "threshold_curve_ci": dict(zip((k for k, _ in metrics.threshold_grid()), span(model, "curve"))),
            "baselines": {"uniform": span(model, "uniform")[0], "majority": span(model, "majority")[0] if majority else None},
            "groups_ci": group_ci, "group_breakdown": tables}
    rows = []
    for i, (a, b, kind, group) in enumerate(pairs):
        at = layout[("difference", i)]
        both = (np.isfinite(_per_question(scored[a], kind, group, boot.questions))
                & np.isfinite(_per_question(scored[b], kind, group, boot.questions)))
        low, high = result.interval(at)
        rows.append({"model_a": a, "model_b": b, "kind": kind or "all", "group": group or "all",
                     "difference": uncertainty.finite_or_none(result.estimate[at]), "low": low, "high": high,
                     "pvalue": result.pvalue(at), "n_common_questions": int(both.sum())})
    alpha = 1 - settings.confidence_level
    for row, adjusted in zip(rows, holm([r["pvalue"] for r in rows])):
        row["pvalue_holm"] = adjusted
        row["significant"] = adjusted is not None and adjusted < alpha
    out["differences"] = rows
    return out


def _bias(result: uncertainty.Resampled, i: int) -> float | None:
    """Mean of the bootstrap distribution minus the estimate (BOOTSTRAP_NOTE "bias")."""
    values = result.distribution[i][np.isfinite(result.distribution[i])]
    return uncertainty.finite_or_none(values.mean() - result.estimate[i]) if values.size else None


def _per_question(result: ScoreResult, kind: str | None, group: str | None, questions: list[str]) -> np.ndarray:
    values = (result.metrics if kind is None else result.metrics["groups"][kind].get(group, {})).get("per_question") or {}
    return np.asarray([np.nan if values.get(q) is None else values[q] for q in questions], dtype=float)


def add_intervals(result: ScoreResult, settings: uncertainty.Bootstrap) -> None:
    """Write one run's intervals into its metrics beside the values (``<key>_ci``), the group breakdowns, and
    how they were computed (``uncertainty``)."""
    m = result.metrics
    model = (m.get("models") or ["model"])[0]
    mine = bootstrap_intervals({model: result}, settings)["models"][model]
    m["per_question_ci"] = {q: mine["per_question_ci"].get(q) for q in m["per_question"]}
    m["mean_ci"], m["std_ci"], m["threshold_curve_ci"] = mine["mean_ci"], mine["std_ci"], mine["threshold_curve_ci"]
    m["mean_bootstrap_bias"], m["std_bootstrap_bias"] = mine["mean_bootstrap_bias"], mine["std_bootstrap_bias"]
    for name, ci in mine["baselines"].items():
        m["baselines"][name]["mean_ci"] = ci
    for kind, cis in mine["groups_ci"].items():
        for group, ci in cis.items():
            if group in m["groups"][kind]:
                m["groups"][kind][group]["mean_ci"] = ci
    m["group_breakdown"] = mine["group_breakdown"]
    m["uncertainty"] = settings.record(unit="participant", strata="question",
                                       small_group="fewer than {} answers per question".format(uncertainty.MIN_GROUP_SIZE),
                                       statistic=BOOTSTRAP_NOTE["statistic"], bias=BOOTSTRAP_NOTE["bias"])


# ------------------------------------------------------------------------------------------------------- plots
# The threshold curve (Fig. 3 of Zhao et al. 2024) and human vs model answer histograms of a few questions (Fig. 4).

MAX_HISTOGRAMS = 6


def _curve(curve: dict) -> tuple[list[float], list[float]]:
    points = [(float(k), v) for k, v in curve.items() if v is not None]
    points.sort()
    return [p[0] for p in points], [p[1] for p in points]


def _band(ax, curve_ci: dict | None, color) -> None:
    """The bootstrap interval of a threshold curve as a shaded band (thresholds without an interval skipped)."""
    points = sorted((float(k), lo, hi) for k, (lo, hi) in (curve_ci or {}).items() if lo is not None and hi is not None)
    if points:
        ax.fill_between([p[0] for p in points], [p[1] for p in points], [p[2] for p in points], color=color,
                        alpha=0.2, linewidth=0)


def _threshold_axes(ax) -> None:
    """Fig. 3's axes: threshold t on W1 (0-1) against the share of questions with W1 <= t, grid and legend."""
    ax.set_xlabel("threshold t on W1")
    ax.set_ylabel("share of questions with W1 <= t")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)


def threshold_curve_png(metrics: dict, path: Path) -> None:
    """x = threshold t, y = share of questions with W1 <= t: the run with its bootstrap band and each oracle
    baseline (Fig. 3)."""
    fig, ax = plots.pyplot().subplots(figsize=(6, 4.5), dpi=100)
    x, y = _curve(metrics["threshold_curve"])
    line, = ax.plot(x, y, marker="o", markersize=3, linewidth=2, label=f"model (mean W1 {_fmt(metrics.get('mean'))})")
    _band(ax, metrics.get("threshold_curve_ci"), line.get_color())
    for name, baseline in sorted(metrics.get("baselines", {}).items()):
        bx, by = _curve(baseline["threshold_curve"])
        ax.plot(bx, by, linestyle="--", linewidth=1.5, label=f"{name} baseline (mean W1 {_fmt(baseline.get('mean'))})")
    _threshold_axes(ax)
    ax.set_title(f"WorldValuesBench: {counted(metrics.get('n_questions', 0), 'questions')}, coverage "
                 f"{_fmt(metrics.get('coverage'))}")
    plots.save_figure(fig, path)


def histograms_png(rows: pl.DataFrame, path: Path, questions: list[str] | None = None) -> None:
    """Human vs model answer histograms side by side for up to 6 questions (Fig. 4); the first questions in
    natural order unless ``questions`` names them."""
    available = sorted(rows["question_id"].unique().to_list(), key=question_order)
    chosen = [q for q in (questions or available) if q in set(available)][:MAX_HISTOGRAMS]
    cols = min(3, max(1, len(chosen)))
    nrows = max(1, -(-len(chosen) // cols))
    fig, axes = plots.pyplot().subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), dpi=100, squeeze=False)
    for ax in axes.flat[len(chosen):]:
        ax.axis("off")
    if not chosen:
        axes[0][0].text(0.5, 0.5, "no covered rows", ha="center", va="center")
    for ax, question in zip(axes.flat, chosen):
        part = rows.filter(pl.col("question_id") == question)
        low, high = int(part["scale_min"][0]), int(part["scale_max"][0])
        points = np.arange(low, high + 1)
        human = part["human"].to_numpy()
        model = part["model"].drop_nulls().to_numpy()
        width = 0.4
        for i, (values, label) in enumerate(((human, "human"), (model, "model"))):
            shares = np.array([(values == p).sum() for p in points], dtype=float) / max(len(values), 1)
            ax.bar(plots.grouped_bar_x(points, 2, i, width), shares, width=width, color=f"C{i}", label=label)
        ax.set_xticks(points)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{question} (answers: {len(human)} human, {len(model)} model)", fontsize=10)
        ax.set_xlabel("answer")
        ax.set_ylabel("share")
    if chosen:  # one legend for the figure, above the panels, never on the bars
        fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="upper center", ncol=2, fontsize=9,
                   bbox_to_anchor=(0.5, 1.0))
        fig.tight_layout(rect=(0, 0, 1, 0.95))
    plots.save_figure(fig, path, tight=not chosen)


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def write_run(result: ScoreResult, out: Path) -> list[Path]:
    """``RUN_DIR/metrics.json``, ``threshold_curve.png`` and ``histograms.png``; returns the paths written."""
    return runs.write_metrics_and_plots(result.metrics, out, {
        "threshold_curve.png": threshold_curve_png,
        "histograms.png": lambda _metrics, path: histograms_png(_plot_rows(result.rows, MAX_HISTOGRAMS), path),
    })


def _plot_rows(rows: pl.DataFrame, limit: int) -> pl.DataFrame:
    """Rows for the histograms: as scored, unless padding rows left a question with null human answers (an
    ``evaluate --no-demographics --samples K`` run with K != human answers); then that question's human and model
    answers are crossed (each human answer once per model row, each model row once per human answer), which keeps
    both shares exact. Only the first ``limit`` questions (the ones plotted) are kept."""
    if rows.height == 0 or rows["human"].null_count() == 0:
        return rows
    chosen = sorted(rows["question_id"].unique().to_list(), key=question_order)[:limit]
    parts = []
    for question in chosen:
        part = rows.filter(pl.col("question_id") == question)
        if part["human"].null_count() == 0:
            parts.append(part.select("question_id", "human", "model", "scale_min", "scale_max"))
            continue
        humans = part["human"].drop_nulls()
        models = part.filter(pl.col("has_model"))["model"] if "has_model" in part.columns else part["model"]
        models = models if models.len() else pl.Series([None], dtype=pl.Int64)
        parts.append(pl.DataFrame({
            "question_id": [question] * (humans.len() * models.len()),
            "human": humans.to_list() * models.len(),
            "model": [m for m in models.to_list() for _ in range(humans.len())],
            "scale_min": [part["scale_min"][0]] * (humans.len() * models.len()),
            "scale_max": [part["scale_max"][0]] * (humans.len() * models.len()),
        }, schema={"question_id": pl.String, "human": pl.Int64, "model": pl.Int64, "scale_min": pl.Int64,
                   "scale_max": pl.Int64}))
    return pl.concat(parts, how="vertical_relaxed")


# ---------------------------------------------------------------------------------------------------- evaluate
#
# ``culturebench evaluate wvb``: prompts (wvb_prompts) -> requests -> run_requests (cache, backend) -> parsed
# answers -> responses.jsonl -> score_answers (the same metrics and plots as ``score``) -> run.json.

SPLITS = ("probe", "train", "validation", "test")
"""``--split``: the probe (the ``probe`` config, Sec. 3.1) or every example of a split of the ``examples`` config."""


@dataclass(frozen=True)
class PlannedRequest:
    """One model call: for a (participant, question) row with demographics; for a question (participant None)
    without them."""

    participant_id: int | None
    question_id: str
    sample_index: int
    request: ChatRequest


def check_inputs(release: Path, split: str = "probe", limit: int | None = None) -> dict:
    """Cheap checks of the user's choices before a backend is started; the release's manifest."""
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    runs.check_at_least_one({"--limit": limit})
    if not Path(release).is_dir():
        raise InputError("release folder not found (build it with: culturebench build wvb)", file=release)
    manifest = load_manifest(release)
    if manifest.get("benchmark") != "wvb":
        raise InputError(f"not a WorldValuesBench release (benchmark {manifest.get('benchmark')!r})", file=release)
    return manifest


def evaluation_rows(release: Path, split: str = "probe", limit: int | None = None,
                    seed: int | None = 0) -> pl.DataFrame:
    """The evaluated rows, in release order: participant_id, question_id, human (the participant's answer). The
    probe config for ``probe`` (question-major), else the split's examples; ``limit`` rows spread over the questions
    when given (``limit.spread_positions`` with ``seed``)."""
    return limited_rows(release, split, limit, seed)[0]


def limited_rows(release: Path, split: str = "probe", limit: int | None = None,
                 seed: int | None = 0) -> tuple[pl.DataFrame, Coverage]:
    """``evaluation_rows`` and what they cover (questions asked, rows per question)."""
    release = Path(release)
    manifest = check_inputs(release, split, limit)
    if split == "probe":
        frame = _scan(release, manifest, "probe")
    else:
        frame = _scan(release, manifest, "examples").filter(pl.col("split").cast(pl.String) == split)
    frame = frame.select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                         pl.col("answer").cast(pl.Int64).alias("human"))
    rows = _collect(frame, release, split)
    if rows.height == 0:
        raise InputError(f"the release has no {split} rows", file=release)
    return limit_frame(rows, ["question_id"], limit, seed, item="rows", columns=["questions"])


def prompt_tables(release: Path, participant_ids: pl.Series | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The questions config (question_id, kind, text, scale_min, scale_max) and the demographics of the given
    participants (participant_id + DEMOGRAPHIC_VARIABLES, codebook text) from a WVB release."""
    from culturebench.evaluate.wvb_prompts import DEMOGRAPHIC_VARIABLES

    release = Path(release)
    manifest = load_manifest(release)
    questions = _collect(_scan(release, manifest, "questions").select(
        pl.col("question_id").cast(pl.String), pl.col("kind").cast(pl.String), pl.col("text").cast(pl.String),
        pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64)), release, "questions")
    schema = {"participant_id": pl.Int64, **{v: pl.String for v in DEMOGRAPHIC_VARIABLES}}
    if participant_ids is None:
        return questions, pl.DataFrame(schema=schema)
    participants = _collect(_scan(release, manifest, "participants")
                            .filter(pl.col("participant_id").is_in(participant_ids.unique().implode()))
                            .select(pl.col("participant_id").cast(pl.Int64),
                                    *(pl.col(v).cast(pl.String) for v in DEMOGRAPHIC_VARIABLES)), release, "participants")
    return questions, participants


def request_sampling(demographics: bool = True, temperature: float | None = None, max_tokens: int | None = None,
                     seed: int | None = 0):
    """The sampling of every request of a run (Sec. 3.5, App. B): temperature 0 with demographics, 0.7 without
    (``temperature`` overrides), App. B's token limit and "\\n\\n" stop."""
    from culturebench.evaluate.backends import SamplingParams
    from culturebench.evaluate import wvb_prompts as prompts

    if temperature is None:
        temperature = prompts.TEMPERATURE_WITH_DEMOGRAPHICS if demographics else prompts.TEMPERATURE_WITHOUT_DEMOGRAPHICS
    return SamplingParams(temperature=float(temperature), max_tokens=prompts.MAX_TOKENS if max_tokens is None
                          else max_tokens, seed=seed, stop=prompts.STOP)


def request_count(rows: pl.DataFrame, demographics: bool = True, samples: int | None = None) -> int:
    """How many requests ``iter_requests`` yields for ``rows``, without building them (the progress bar's total and
    the responses file's layout)."""
    if demographics or samples is None:
        return rows.height * (samples or 1) if demographics else rows.height
    return rows["question_id"].n_unique() * samples


def iter_requests(rows: pl.DataFrame, questions: pl.DataFrame, participants: pl.DataFrame, *,
                  demographics: bool = True, samples: int | None = None, temperature: float | None = None,
                  max_tokens: int | None = None, seed: int | None = 0,
                  family: str | None = None) -> Iterator[PlannedRequest]:
    """The model calls of a run (Sec. 3.5, App. B), with ``family``'s prompts (default DEFAULT_FAMILY), one at a
    time (a generator: a run of millions is never a list); the options are checked before the first is made.

    With demographics: one request per evaluated (participant, question) row (``samples`` per row when given),
    prompt Figs. 5-8, temperature 0. Without: per question, as many samples of the one prompt as the question has
    human answers among the rows (``samples`` overrides), ``sample_index`` 0..K-1, prompt Figs. 9-10, temperature
    0.7. Every request stops at "\\n\\n" (App. B). The seed is the same for every request (the backends vary it
    per sample_index)."""
    from culturebench.evaluate import wvb_prompts as prompts

    runs.check_at_least_one({"--samples": samples, "--max-tokens": max_tokens})
    family = prompts.DEFAULT_FAMILY if family is None else family
    if family not in prompts.FAMILIES:
        raise InputError(f"unknown prompt_family {family!r}; choose from {', '.join(prompts.FAMILIES)}")
    sampling = request_sampling(demographics, temperature, max_tokens, seed)
    text = dict(zip(questions["question_id"], questions["text"]))
    unknown = sorted(set(rows["question_id"]) - {q for q, k in zip(questions["question_id"], questions["kind"]) if k == "value"})
    if unknown:
        raise InputError(f"questions {', '.join(unknown[:5])} are not value questions of the release's questions config")
    if demographics:
        demographic_questions = [text.get(v) or v for v in prompts.DEMOGRAPHIC_VARIABLES]
        people = {r[0]: list(zip(demographic_questions, r[1:])) for r in
                  participants.select("participant_id", *prompts.DEMOGRAPHIC_VARIABLES).iter_rows()}
        blank = [(q, None) for q in demographic_questions]
        return _with_demographics(rows, people, blank, text, family, sampling, samples or 1)
    return _without_demographics(rows, text, family, sampling, samples)


def _with_demographics(rows: pl.DataFrame, people: dict, blank: list, text: dict, family: str, sampling,
                       samples: int) -> Iterator[PlannedRequest]:
    from culturebench.evaluate.backends import ChatRequest
    from culturebench.evaluate import wvb_prompts as prompts

    for participant_id, question_id in rows.select("participant_id", "question_id").iter_rows():
        message = prompts.messages(prompts.with_demographics_prompt(people.get(participant_id, blank),
                                                                    text[question_id], family))
        for index in range(samples):
            yield PlannedRequest(participant_id, question_id, index,
                                 ChatRequest(messages=message, sampling=sampling, sample_index=index))


def _without_demographics(rows: pl.DataFrame, text: dict, family: str, sampling,
                          samples: int | None) -> Iterator[PlannedRequest]:
    from culturebench.evaluate.backends import ChatRequest
    from culturebench.evaluate import wvb_prompts as prompts

    for question_id, n_human in rows.group_by("question_id", maintain_order=True).len().iter_rows():
        message = prompts.messages(prompts.without_demographics_prompt(text[question_id], family))
        for index in range(samples or n_human):
            yield PlannedRequest(None, question_id, index,
                                 ChatRequest(messages=message, sampling=sampling, sample_index=index))


def plan_requests(rows: pl.DataFrame, questions: pl.DataFrame, participants: pl.DataFrame,
                  **options) -> list[PlannedRequest]:
    """``iter_requests`` as a list (for a look at a few rows' requests; a run streams them)."""
    return list(iter_requests(rows, questions, participants, **options))


def parse_records(planned: list[PlannedRequest], responses: list, questions: pl.DataFrame) -> list[dict]:
    """responses.jsonl lines: participant_id, question_id, sample_index, messages, raw output, parsed answer and
    parse status, plus finish reason and token counts."""
    from culturebench.evaluate.wvb_prompts import parse_answer

    scales = {q: (lo, hi) for q, lo, hi in questions.select("question_id", "scale_min", "scale_max").iter_rows()}
    records = []
    for item, response in zip(planned, responses, strict=True):
        low, high = scales[item.question_id]
        answer, status = parse_answer(response.text, low, high)
        records.append({
            "participant_id": item.participant_id,
            "question_id": item.question_id,
            "sample_index": item.sample_index,
            "messages": item.request.message_dicts(),
            "sampling": {"temperature": item.request.sampling.temperature, "max_tokens": item.request.sampling.max_tokens,
                         "top_p": item.request.sampling.top_p, "seed": item.request.sampling.seed,
                         "stop": list(item.request.sampling.stop)},
            "output": response.text,
            "answer": answer,
            "parse_status": status,
            "finish_reason": response.finish_reason,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
        })
    return records


def response_schema():
    """The ``pyarrow`` schema of responses.jsonl's records (``parse_records``), for the parquet shards of a large
    run (``runs.ResponsesWriter``)."""
    import pyarrow as pa

    return pa.schema([
        ("participant_id", pa.int64()), ("question_id", pa.string()), ("sample_index", pa.int64()),
        ("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("sampling", pa.struct([("temperature", pa.float64()), ("max_tokens", pa.int64()), ("top_p", pa.float64()),
                                ("seed", pa.int64()), ("stop", pa.list_(pa.string()))])),
        ("output", pa.string()), ("answer", pa.int64()), ("parse_status", pa.string()),
        ("finish_reason", pa.string()), ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64())])


ANSWER_COLUMNS = ("participant_id", "question_id", "sample_index", "answer")
"""The fields of a responses record that scoring reads."""


def read_answers(path: Path) -> pl.DataFrame:
    """The answers of ``evaluate wvb``'s responses, in file order: participant_id, question_id, sample_index and
    ``score`` (the parsed answer as text, null when none). ``path``: responses.jsonl (every line checked, one-line
    errors naming the line and field) or the parquet shards of a large run (a folder or one .parquet file; only
    these columns are read)."""
    path = Path(path)
    schema = {"participant_id": pl.Int64, "question_id": pl.String, "sample_index": pl.Int64, "score": pl.String}
    if path.is_dir() or path.suffix.lower() == ".parquet":
        try:
            frame = pl.scan_parquet(runs.shard_paths(path)).select(
                pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                pl.col("sample_index").cast(pl.Int64), pl.col("answer").cast(pl.String).alias("score")).collect()
        except pl.exceptions.PolarsError as exc:
            raise InputError(f"responses shards cannot be read ({str(exc).splitlines()[0]})", file=path) from None
    else:
        columns: dict[str, list] = {name: [] for name in schema}
        for _, record in runs.jsonl_records(path, ANSWER_COLUMNS):
            for name in ANSWER_COLUMNS[:3]:
                columns[name].append(record[name])
            columns["score"].append(None if record["answer"] is None else str(record["answer"]))
        frame = pl.DataFrame(columns, schema=schema)
    if frame.height == 0:
        raise InputError("responses file has no records", file=path)
    return frame


def answers_frame(rows: pl.DataFrame | None, answers: pl.DataFrame, demographics: bool) -> pl.DataFrame:
    """The parsed answers (``read_answers``) as ``score_answers`` input (row, question_id, participant_id, score,
    has_model).

    With demographics every record is its row's answer (several per row with --samples: each row's human answer then
    counts once per sample, which leaves W1 unchanged). Without, sample j of a question (in sample_index order) is
    paired with the question's j-th evaluated row; with the default oversampling (K = human answers) every row gets
    exactly one sample. With K != H, the extra samples get no participant (they still join the question's model
    answers) and the rows without a sample get a padding row (has_model false, not counted as invalid); per-group
    metrics then use only the paired samples. Questions in the order of the rows, samples of a question not among
    the rows left out."""
    if demographics:
        paired = answers.select("question_id", "participant_id", "score", pl.lit(True).alias("has_model"))
    else:
        position = pl.int_range(pl.len()).over("question_id").alias("position")
        people = rows.select("participant_id", "question_id").with_columns(position)
        samples = (answers.with_row_index("line").sort("sample_index", "line")
                   .select("question_id", "score", position, pl.lit(True).alias("has_model")))
        order = rows.select("question_id").unique(maintain_order=True).with_row_index("question_order")
        paired = (people.join(samples, on=["question_id", "position"], how="full", coalesce=True)
                  .join(order, on="question_id", how="inner")
                  .sort("question_order", "position")
                  .select("question_id", "participant_id", "score", pl.col("has_model").fill_null(False)))
    return paired.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("row")).select(
        "row", "question_id", pl.col("participant_id").cast(pl.Int64), pl.col("score").cast(pl.String),
        pl.col("has_model").cast(pl.Boolean))


def evaluate(backend, release: Path, out: Path, *, split: str = "probe", limit: int | None = None,
             samples: int | None = None, temperature: float | None = None, demographics: bool = True,
             seed: int | None = 0, max_tokens: int | None = None, family: str | None = None,
             majority: str = MAJORITY_DEFINITIONS[0], drop_out_of_scale: bool = False, args: dict | None = None,
             console=None) -> runs.EvaluateResult:
    """Run a model on a WVB release and score it: RUN_DIR/cache.sqlite, responses.jsonl (above
    ``runs.SHARD_THRESHOLD`` requests: responses/, parquet shards), metrics.json, the plots and run.json.
    ``family``: whose App. B prompts (wvb_prompts.FAMILIES); ``majority``: MAJORITY_DEFINITIONS;
    ``drop_out_of_scale``: answers off the question's scale are invalid (default: scored as given, as the authors').
    Re-running into the same folder answers every request already made from the cache.

    Streamed: the requests come from a generator (``iter_requests``) in the runner's batches, each batch's parsed
    records are appended to the responses file as it is answered, and the metrics read back the few columns they
    need (``read_answers``), so memory does not grow with the prompts of a run."""
    from culturebench.evaluate import wvb_prompts as prompts
    from datetime import datetime, timezone

    from culturebench.evaluate.wvb_prompts import STATUSES

    started = datetime.now(timezone.utc)
    release, out = Path(release), Path(out)
    manifest = load_manifest(release)
    rows, covers = limited_rows(release, split, limit, seed)
    questions, participants = prompt_tables(release, rows["participant_id"] if demographics else None)
    family = prompts.DEFAULT_FAMILY if family is None else family
    planned = iter_requests(rows, questions, participants, demographics=demographics, samples=samples,
                            temperature=temperature, max_tokens=max_tokens, seed=seed, family=family)
    sampling = request_sampling(demographics, temperature, max_tokens, seed)
    n_requests = request_count(rows, demographics, samples)
    mode = "with demographics" if demographics else "without demographics"
    parse_status = {status: 0 for status in STATUSES}
    n_parsed = 0
    with runs.ResponsesWriter(out, n_requests, response_schema()) as writer:
        def on_batch(items: list[PlannedRequest], responses: list) -> None:
            nonlocal n_parsed
            records = parse_records(items, responses, questions)
            for record in records:
                parse_status[record["parse_status"]] = parse_status.get(record["parse_status"], 0) + 1
                n_parsed += record["answer"] is not None
            writer.write(records)

        stats = runs.stream(backend, planned, out, f"wvb {split} ({mode})", on_batch, total=n_requests,
                            request_of=lambda item: item.request, console=console)
        responses_path = writer.close()
    label = f"{getattr(backend, 'model', None) or getattr(backend, 'name', 'model')} ({mode})"
    scored = score_answers(answers_frame(rows, read_answers(responses_path), demographics), release,
                           runs.source_info(responses_path), majority=majority, model=label,
                           drop_out_of_scale=drop_out_of_scale)
    n_records = writer.n_records
    scored.metrics.update({
        "mode": "with_demographics" if demographics else "without_demographics",
        "prompt_family": family,
        "split": split,
        "n_evaluated_rows": rows.height,
        "n_requests": n_records,
        "n_parsed": n_parsed,
        "n_unparsed": n_records - n_parsed,
        "parse_status": parse_status,
        "covers": [covers.as_dict()],
    })
    stats = runs.runner_stats(stats)
    written = runs.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="wvb", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"mode": scored.metrics["mode"], "prompt_family": family, "split": split,
                              "n_evaluated_rows": rows.height, "n_requests": n_records,
                              "temperature": sampling.temperature, "max_tokens": sampling.max_tokens,
                              "stop": list(sampling.stop), "seed": seed, "samples": samples,
                              "majority": majority, "out_of_scale_answers": "dropped" if drop_out_of_scale else "kept"},
               "release_routes": scored.metrics["release_routes"],
               "parse_status": parse_status,
               "metrics": {"mean": scored.metrics["mean"], "std": scored.metrics["std"],
                           "n_questions": scored.metrics["n_questions"], "n_invalid": scored.metrics["n_invalid"]}})
    return runs.EvaluateResult(metrics=scored.metrics, records=[], stats=stats, written=written, score=scored)


# --------------------------------------------------------------------------------------------- command line


def read_config(path: Path | None) -> dict:
    """The ``--config`` options (CONFIG_KEYS), checked; {} without a file."""
    from culturebench.evaluate import wvb_prompts as prompts

    if path is None:
        return {}
    config = runs.read_options_file(path, CONFIG_KEYS)
    choices = {"majority": MAJORITY_DEFINITIONS, "prompt_family": prompts.FAMILIES}
    for key, value in config.items():
        if value not in choices[key]:
            raise InputError(f"unknown {key} {value!r}; choose from {', '.join(choices[key])}", file=path,
                             column=key)
    return config


def cli_check(options: dict) -> None:
    """`culturebench evaluate` option checks before a backend is made."""
    check_inputs(options["release"], options["split"] or "probe", options["limit"])
    read_config(options.get("config"))


def cli_evaluate(model_backend, options: dict, args: dict, console=None) -> tuple[str, list[Path]]:
    """`culturebench evaluate`: run, score, write the run folder; returns (summary line, paths written)."""
    split = options["split"] or "probe"
    config = read_config(options.get("config"))
    result = evaluate(model_backend, options["release"], options["out"], split=split,
                      limit=options["limit"], samples=options["samples"], temperature=options["temperature"],
                      demographics=options["demographics"], seed=options["seed"], max_tokens=options["max_tokens"],
                      family=config.get("prompt_family"), majority=config.get("majority", MAJORITY_DEFINITIONS[0]),
                      drop_out_of_scale=bool(options.get("drop_out_of_scale")), args=args, console=console)
    m = result.metrics
    mean = "n/a" if m["mean"] is None else f"{m['mean']:.4f}"
    line = (f"wvb {split} ({m['mode'].replace('_', ' ')}): {runs.request_counts(m['n_requests'], result.stats)}, "
            f"{m['n_unparsed']:,} unparsed, {m['n_questions']} questions, mean W1 {mean}")
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None,
              drop_out_of_scale: bool = False) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses (``config``: ``{"majority": "per_group"}`` for Sec. 3.3's
    per-group majority baseline; ``drop_out_of_scale``: answers off the scale are invalid); returns (summary line,
    paths written)."""
    result = score(responses, release, read_config(config).get("majority", MAJORITY_DEFINITIONS[0]),
                   drop_out_of_scale=drop_out_of_scale)
    written = write_run(result, out)
    m = result.metrics
    mean = "n/a" if m["mean"] is None else f"{m['mean']:.4f}"
    return (f"wvb: {m['n_rows']:,} rows, coverage {m['coverage']:.3f}, {m['n_invalid']:,} invalid, "
            f"{m['out_of_scale']['n']:,} off the scale ({m['out_of_scale']['answers']}), "
            f"{m['n_questions']} questions, mean W1 {mean}"), written


# --------------------------------------------------------------------------------------------- compare


def run_answers(folder: compare.RunFolder, release: Path) -> tuple[pl.DataFrame, dict]:
    """A run's answers as ``score_answers`` input, and their source: an ``evaluate`` run's responses (paired
    with the evaluated rows again as ``evaluate`` paired them), else the responses file a ``score`` run names."""
    own = runs.responses_path(folder.path)
    if own is not None:
        return evaluate_answers(own, release, folder.metrics), runs.source_info(own)
    source = folder.metrics.get("responses")
    path = source.get("path") if isinstance(source, dict) else None
    if not path:
        raise InputError("run folder has no responses.jsonl and its metrics.json names no responses file",
                         file=folder.path)
    return read_responses(Path(path)), runs.source_info(Path(path))


def compare_runs(folders, labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's answers re-scored against its release (or ``release``) with the majority reading and the
    out-of-scale rule it used, then one bootstrap of participants within questions over all of them (paired), as
    the report's tables."""
    scored: dict[str, ScoreResult] = {}
    for folder, mapping in zip(folders, labels):
        path = Path(release) if release is not None else folder.release
        if path is None or not (path / "manifest.json").is_file():
            raise InputError("release folder of the run not found; pass --release", file=path or folder.path)
        name = mapping[folder.models[0]] if folder.models else folder.path.name
        majority = ((folder.metrics.get("baselines") or {}).get("majority") or {}).get("definition",
                                                                                         MAJORITY_DEFINITIONS[0])
        dropped = (folder.metrics.get("out_of_scale") or {}).get("answers") == "dropped"
        inputs, source = run_answers(folder, path)
        scored[name] = score_answers(inputs, path, source, majority=majority, model=name, bootstrap=None,
                                     drop_out_of_scale=dropped)
    intervals = bootstrap_intervals(scored, settings)
    tables = comparison_tables(scored, intervals)
    notes = [f"Baselines (uniform, majority) are those of the human answers {next(iter(scored))} was scored on."]
    summary = {m: {k: s.metrics.get(k) for k in ("mode", "n_questions", "coverage", "n_invalid", "mean", "std")}
               | {k: intervals["models"][m][k] for k in ("mean_ci", "std_ci")} for m, s in scored.items()}
    return compare.Comparison(models=list(scored), tables=tables, notes=notes, metrics={
        "uncertainty": settings.record(unit="participant", strata="question", **BOOTSTRAP_NOTE),
        "per_model": summary, "differences": intervals["differences"]})


REPORT_THRESHOLDS = ("0.10", "0.20")
"""The thresholds Sec. 4 quotes (share of questions with W1 below 0.1 and 0.2), columns of the main table."""
GROUP_TABLES = {"continent": "continent", "probe_education_level": "education level"}


def comparison_tables(scored: dict[str, ScoreResult], intervals: dict) -> dict[str, pl.DataFrame]:
    """The report's tables: main (Table 2's Mean row per model and baseline, with std and Sec. 4's shares under
    0.1 and 0.2), per_question (Table 2's model columns), threshold_curve (Fig. 3), continent and
    education_level (group sizes, mean W1, small, rank), differences (paired)."""
    first = next(iter(scored.values())).metrics
    main = []
    for model, result in scored.items():
        m, ci = result.metrics, intervals["models"][model]
        main.append({"model": model, "mode": m.get("mode") or "scored file", "n_questions": m["n_questions"],
                     "coverage": m["coverage"], **compare.with_interval("mean W1", m["mean"], ci["mean_ci"]),
                     **compare.with_interval("std", m["std"], ci["std_ci"]),
                     **{k: v for t in REPORT_THRESHOLDS for k, v in compare.with_interval(
                         f"share W1<={t}", m["threshold_curve"][t], ci["threshold_curve_ci"][t]).items()}})
    first_ci = intervals["models"][next(iter(scored))]["baselines"]
    for name, baseline in first["baselines"].items():
        label = f"{name} baseline" + (f" ({baseline['definition']})" if "definition" in baseline else "")
        main.append({"model": label, "mode": "baseline", "n_questions": baseline["n_questions"], "coverage": None,
                     **compare.with_interval("mean W1", baseline["mean"], first_ci[name]),
                     **compare.with_interval("std", baseline["std"], None),
                     **{k: v for t in REPORT_THRESHOLDS for k, v in compare.with_interval(
                         f"share W1<={t}", baseline["threshold_curve"][t], None).items()}})
    questions = sorted({q for r in scored.values() for q in r.metrics["per_question"]}, key=question_order)
    per_question = [{"question_id": q, **{k: v for model, r in scored.items() for k, v in compare.with_interval(
        model, r.metrics["per_question"].get(q), intervals["models"][model]["per_question_ci"].get(q)).items()},
        "uniform baseline": first["baselines"]["uniform"]["per_question"].get(q),
        "majority baseline": first["baselines"]["majority"]["per_question"].get(q)} for q in questions]
    curve = [{"threshold": key, **{k: v for model, r in scored.items() for k, v in compare.with_interval(
        model, r.metrics["threshold_curve"][key], intervals["models"][model]["threshold_curve_ci"][key]).items()},
        **{f"{name} baseline": baseline["threshold_curve"][key] for name, baseline in first["baselines"].items()}}
        for key, _ in metrics.threshold_grid()]
    tables = {"main": pl.DataFrame(main, infer_schema_length=None),
              "per_question": pl.DataFrame(per_question, infer_schema_length=None),
              "threshold_curve": pl.DataFrame(curve, infer_schema_length=None)}
    for kind, title in GROUP_TABLES.items():
        rows = [{"model": model, title: r["group"], "rank": r["rank"], "n_rows": r["n_rows"],
                 "n_participants": r["n_participants"], "answers_per_question": r["answers_per_question"],
                 **compare.with_interval("mean W1", r["estimate"], [r["low"], r["high"]]), "small": r["small"]}
                for model in scored for r in intervals["models"][model]["group_breakdown"][kind]]
        tables[title.replace(" ", "_")] = pl.DataFrame(rows, schema={
            "model": pl.String, title: pl.String, "rank": pl.Int64, "n_rows": pl.Int64, "n_participants": pl.Int64,
            "answers_per_question": pl.Float64, "mean W1": pl.Float64, "mean W1_low": pl.Float64,
            "mean W1_high": pl.Float64, "small": pl.Boolean})
    tables["differences"] = pl.DataFrame(
        [{k: r[k] for k in ("model_a", "model_b", "kind", "group")}
         | compare.with_interval("difference", r["difference"], [r["low"], r["high"]])
         | {k: r[k] for k in ("pvalue", "pvalue_holm", "significant", "n_common_questions")}
         for r in intervals["differences"]],
        schema={"model_a": pl.String, "model_b": pl.String, "kind": pl.String, "group": pl.String,
                "difference": pl.Float64, "difference_low": pl.Float64, "difference_high": pl.Float64,
                "pvalue": pl.Float64, "pvalue_holm": pl.Float64, "significant": pl.Boolean,
                "n_common_questions": pl.Int64})
    return tables


def threshold_curves_png(comparison: compare.Comparison, path: Path) -> None:
    """Fig. 3 with one solid line per model and its bootstrap band, and the baselines dashed."""
    plt = plots.pyplot()
    frame = comparison.tables["threshold_curve"]
    x = [float(t) for t in frame["threshold"]]
    fig, ax = plt.subplots(figsize=(7.5, 5), dpi=100)
    for model in comparison.models:
        line, = ax.plot(x, frame[model].to_list(), marker="o", markersize=3, linewidth=2, label=model)
        ax.fill_between(x, [v if v is not None else np.nan for v in frame[f"{model}_low"]],
                        [v if v is not None else np.nan for v in frame[f"{model}_high"]], color=line.get_color(),
                        alpha=0.2, linewidth=0)
    for column in (c for c in frame.columns if c.endswith(" baseline")):
        ax.plot(x, frame[column].to_list(), linestyle="--", linewidth=1.2, color="grey" if "uniform" in column
                else "black", label=column)
    _threshold_axes(ax)
    ax.set_title("WorldValuesBench: threshold curves (bands: bootstrap intervals)")
    plots.save_figure(fig, path)


def groups_png(comparison: compare.Comparison, path: Path) -> None:
    """Mean W1 per continent and per education level, one bar per model with its bootstrap interval; groups
    flagged small are hatched and marked in the axis label."""
    plt = plots.pyplot()
    fig, axes = plt.subplots(1, len(GROUP_TABLES), figsize=(13, 4.8), dpi=100, squeeze=False)
    models = comparison.models
    width = 0.8 / max(1, len(models))
    for ax, title in zip(axes[0], GROUP_TABLES.values()):
        frame = comparison.tables[title.replace(" ", "_")]
        groups = sorted(set(frame[title].to_list()))
        small = set(frame.filter(pl.col("small"))[title].to_list())
        for i, model in enumerate(models):
            mine = {r[title]: r for r in frame.filter(pl.col("model") == model).iter_rows(named=True)}
            xs = plots.grouped_bar_x(range(len(groups)), len(models), i, width)
            for x, group in zip(xs, groups):
                row = mine.get(group)
                if row is None or row["mean W1"] is None:
                    continue
                value, low, high = row["mean W1"], row["mean W1_low"], row["mean W1_high"]
                err = None if low is None else [[max(0.0, value - low)], [max(0.0, high - value)]]
                ax.bar([x], [value], width, yerr=err, capsize=2, color=f"C{i}", hatch="//" if row["small"] else None,
                       alpha=0.5 if row["small"] else 1.0, label=model if group == groups[0] else None)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{g}\n(small)" if g in small else g for g in groups], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("mean W1 (lower is better)")
        ax.set_title(f"per {title}")
    axes[0][0].legend(fontsize=8)
    plots.save_figure(fig, path)


COMPARE = compare.BenchmarkSpec(
    benchmark="wvb",
    title="WorldValuesBench (Zhao et al. 2024, LREC-COLING 2024)",
    build=compare_runs,
    tables=(
        compare.Table("main", "Table 2 (Mean row): mean and std of the per-question W1, and Sec. 4's shares of "
                              "questions with W1 <= 0.1 and 0.2",
                      "Lower is better. Baselines: Sec. 3.3's oracles (their std and shares have no interval)."),
        compare.Table("per_question", "Table 2: W1 per question and model",
                      "Baseline columns are point values (not bootstrapped)."),
        compare.Table("threshold_curve", "Fig. 3: share of questions with W1 <= t",
                      "Baseline columns are point values (not bootstrapped)."),
        compare.Table("continent", "Mean W1 per continent (lower is better)",
                      "Small: fewer than 30 answers per question in the group; listed with their size, not ranked."),
        compare.Table("education_level", "Mean W1 per education level (probe participants; lower is better)",
                      "Small: fewer than 30 answers per question in the group; listed with their size, not ranked."),
        compare.Table("differences", "Paired differences of mean W1 between models",
                      "difference = mean over the questions both have a W1 of W1_a - W1_b (negative: model_a closer "
                      "to the humans); pvalue_holm over all rows."),
    ),
    figures=(
        compare.Figure("threshold_curves.png", "Fig. 3: threshold curves, one per model, with bootstrap bands",
                       threshold_curves_png),
        compare.Figure("groups.png", "Mean W1 per continent and per education level", groups_png),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for WorldValuesBench: every run's answers re-scored together against the release."""
