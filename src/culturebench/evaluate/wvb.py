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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate import metrics, plots, runs
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
    """Covered rows: question_id, participant_id, human, model (null when invalid), scale_min, scale_max."""


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


# ----------------------------------------------------------------------------------------------------- scoring


def _score_column() -> pl.Expr:
    """The model answer as an integer when SCORE is a whole number on the question's scale, else null."""
    value = pl.col("score").cast(pl.Float64, strict=False)
    valid = (value.is_not_null() & value.is_finite() & (value == value.floor())
             & (value >= pl.col("scale_min")) & (value <= pl.col("scale_max")))
    return pl.when(valid).then(value.cast(pl.Int64)).otherwise(None).alias("model")


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


def score(responses: Path, release: Path, majority: str = MAJORITY_DEFINITIONS[0]) -> ScoreResult:
    """Score a responses file against a WVB release: coverage, invalid answers, W1 per question and per group."""
    inputs = read_responses(responses)
    result = score_answers(inputs, release, runs.source_info(responses), majority=majority)
    m = result.metrics
    if m["n_covered"] == 0:  # metrics of nothing would be a file of n/a: the responses belong to another release
        raise InputError(f"no response matches the release {release}: {m['n_unknown_question']:,} of "
                         f"{m['n_rows']:,} rows name a question it lacks, the rest a participant it lacks "
                         "(another release, seed or split?)", file=responses)
    return result


def score_answers(inputs: pl.DataFrame, release: Path, source: dict,
                  majority: str = MAJORITY_DEFINITIONS[0]) -> ScoreResult:
    """Score model answers (``row``, question_id, participant_id, score as text) against a WVB release; ``source``
    is recorded as ``responses`` in the metrics.

    Used by ``score`` (a responses file) and by ``evaluate`` (the parsed answers of a run). ``evaluate`` may add
    padding rows (see :func:`answers_frame`): a model sample without a participant (participant_id null: it
    counts as covered and joins the question's model answers) and a human answer without a model sample
    (``has_model`` false: not counted as invalid)."""
    tables = release_rows(release, inputs["participant_id"].drop_nulls())
    values = tables["questions"].filter(pl.col("scale_min").is_not_null() & pl.col("scale_max").is_not_null())
    joined = (inputs
              .join(tables["examples"], on=["participant_id", "question_id"], how="left")
              .join(values.select("question_id", "scale_min", "scale_max"), on="question_id", how="left")
              .with_columns(_score_column()))
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
        "responses": source,
        "release": str(release),
        "n_rows": n_rows,
        "n_covered": covered.height,
        "coverage": covered.height / n_rows,
        "n_unknown_question": joined.height - known.height,
        "n_invalid": _n_invalid(known),
        "n_invalid_covered": _n_invalid(covered),
        "groups": {
            "continent": _by_group(covered, ["continent"], majority),
            "urban_rural": _by_group(covered, ["urban_rural"], majority),
            "probe_group": _by_group(probe_rows, list(PROBE_DIMENSIONS), majority),
            "probe_education_level": _by_group(probe_rows, ["education_level"], majority),
        },
    })
    rows = covered.select("question_id", "participant_id", "human", "model", "scale_min", "scale_max",
                          *(["has_model"] if "has_model" in covered.columns else []))
    return ScoreResult(metrics=runs.json_safe(result), rows=rows)


# ------------------------------------------------------------------------------------------------------- plots
# The threshold curve (Fig. 3 of Zhao et al. 2024) and human vs model answer histograms of a few questions (Fig. 4).

MAX_HISTOGRAMS = 6


def _curve(curve: dict) -> tuple[list[float], list[float]]:
    points = [(float(k), v) for k, v in curve.items() if v is not None]
    points.sort()
    return [p[0] for p in points], [p[1] for p in points]


def threshold_curve_png(metrics: dict, path: Path) -> None:
    """x = threshold t, y = share of questions with W1 <= t: the run and each oracle baseline (Fig. 3)."""
    fig, ax = plots.pyplot().subplots(figsize=(6, 4.5), dpi=100)
    x, y = _curve(metrics["threshold_curve"])
    ax.plot(x, y, marker="o", markersize=3, linewidth=2, label=f"model (mean W1 {_fmt(metrics.get('mean'))})")
    for name, baseline in sorted(metrics.get("baselines", {}).items()):
        bx, by = _curve(baseline["threshold_curve"])
        ax.plot(bx, by, linestyle="--", linewidth=1.5, label=f"{name} baseline (mean W1 {_fmt(baseline.get('mean'))})")
    ax.set_xlabel("threshold t on W1")
    ax.set_ylabel("share of questions with W1 <= t")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"WorldValuesBench: {metrics.get('n_questions', 0)} questions, coverage {_fmt(metrics.get('coverage'))}")
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
            ax.bar(plots.grouped_bar_x(points, 2, i, width), shares, width=width, label=f"{label} (n={len(values)})")
        ax.set_xticks(points)
        ax.set_title(question)
        ax.set_xlabel("answer")
        ax.set_ylabel("share")
        ax.legend(fontsize=7)
    plots.save_figure(fig, path)


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


def evaluation_rows(release: Path, split: str = "probe", limit: int | None = None) -> pl.DataFrame:
    """The evaluated rows, in release order: participant_id, question_id, human (the participant's answer). The
    probe config for ``probe`` (question-major), else the split's examples; the first ``limit`` rows when given."""
    release = Path(release)
    manifest = check_inputs(release, split, limit)
    if split == "probe":
        frame = _scan(release, manifest, "probe")
    else:
        frame = _scan(release, manifest, "examples").filter(pl.col("split").cast(pl.String) == split)
    frame = frame.select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                         pl.col("answer").cast(pl.Int64).alias("human"))
    if limit is not None:
        frame = frame.head(limit)
    rows = _collect(frame, release, split)
    if rows.height == 0:
        raise InputError(f"the release has no {split} rows", file=release)
    return rows


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


def plan_requests(rows: pl.DataFrame, questions: pl.DataFrame, participants: pl.DataFrame, *, demographics: bool = True,
                  samples: int | None = None, temperature: float | None = None, max_tokens: int | None = None,
                  seed: int | None = 0, family: str | None = None) -> list[PlannedRequest]:
    """The model calls of a run (Sec. 3.5, App. B), with ``family``'s prompts (default DEFAULT_FAMILY).

    With demographics: one request per evaluated (participant, question) row (``samples`` per row when given),
    prompt Figs. 5-8, temperature 0. Without: per question, as many samples of the one prompt as the question has
    human answers among the rows (``samples`` overrides), ``sample_index`` 0..K-1, prompt Figs. 9-10, temperature
    0.7. Every request stops at "\\n\\n" (App. B). The seed is the same for every request (the backends vary it
    per sample_index)."""
    from culturebench.evaluate.backends import ChatRequest, SamplingParams
    from culturebench.evaluate import wvb_prompts as prompts

    runs.check_at_least_one({"--samples": samples, "--max-tokens": max_tokens})
    family = prompts.DEFAULT_FAMILY if family is None else family
    if family not in prompts.FAMILIES:
        raise InputError(f"unknown prompt_family {family!r}; choose from {', '.join(prompts.FAMILIES)}")
    if temperature is None:
        temperature = prompts.TEMPERATURE_WITH_DEMOGRAPHICS if demographics else prompts.TEMPERATURE_WITHOUT_DEMOGRAPHICS
    sampling = SamplingParams(temperature=float(temperature),
                              max_tokens=prompts.MAX_TOKENS if max_tokens is None else max_tokens, seed=seed,
                              stop=prompts.STOP)
    text = dict(zip(questions["question_id"], questions["text"]))
    unknown = sorted(set(rows["question_id"]) - {q for q, k in zip(questions["question_id"], questions["kind"]) if k == "value"})
    if unknown:
        raise InputError(f"questions {', '.join(unknown[:5])} are not value questions of the release's questions config")
    planned: list[PlannedRequest] = []
    if demographics:
        wording = dict(zip(questions["question_id"], questions["text"]))
        demographic_questions = [wording.get(v) or v for v in prompts.DEMOGRAPHIC_VARIABLES]
        people = {r["participant_id"]: r for r in participants.iter_rows(named=True)}
        for participant_id, question_id in rows.select("participant_id", "question_id").iter_rows():
            person = people.get(participant_id, {})
            pairs = [(q, person.get(v)) for q, v in zip(demographic_questions, prompts.DEMOGRAPHIC_VARIABLES)]
            message = prompts.messages(prompts.with_demographics_prompt(pairs, text[question_id], family))
            for index in range(samples or 1):
                planned.append(PlannedRequest(participant_id, question_id, index,
                                              ChatRequest(messages=message, sampling=sampling, sample_index=index)))
    else:
        counts = rows.group_by("question_id", maintain_order=True).len()
        for question_id, n_human in counts.iter_rows():
            message = prompts.messages(prompts.without_demographics_prompt(text[question_id], family))
            for index in range(samples or n_human):
                planned.append(PlannedRequest(None, question_id, index,
                                              ChatRequest(messages=message, sampling=sampling, sample_index=index)))
    return planned


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


def answers_frame(rows: pl.DataFrame, records: list[dict], demographics: bool) -> pl.DataFrame:
    """The parsed answers as ``score_answers`` input (row, question_id, participant_id, score, has_model).

    With demographics every record is its row's answer (several per row with --samples: each row's human answer then
    counts once per sample, which leaves W1 unchanged). Without, sample j of a question is paired with the
    question's j-th evaluated row; with the default oversampling (K = human answers) every row gets exactly one
    sample. With K != H, the extra samples get no participant (they still join the question's model answers) and
    the rows without a sample get a padding row (has_model false, not counted as invalid); per-group metrics then
    use only the paired samples."""
    def text(answer):
        return None if answer is None else str(answer)

    out: list[tuple] = []
    if demographics:
        out = [(r["question_id"], r["participant_id"], text(r["answer"]), True) for r in records]
    else:
        by_question: dict[str, list[dict]] = {}
        for record in records:
            by_question.setdefault(record["question_id"], []).append(record)
        participants: dict[str, list[int]] = {}
        for participant_id, question_id in rows.select("participant_id", "question_id").iter_rows():
            participants.setdefault(question_id, []).append(participant_id)
        for question_id, people in participants.items():
            samples = sorted(by_question.get(question_id, []), key=lambda r: r["sample_index"])
            for j in range(max(len(people), len(samples))):
                person = people[j] if j < len(people) else None
                if j < len(samples):
                    out.append((question_id, person, text(samples[j]["answer"]), True))
                else:
                    out.append((question_id, person, None, False))
    frame = pl.DataFrame(out, schema={"question_id": pl.String, "participant_id": pl.Int64, "score": pl.String,
                                      "has_model": pl.Boolean}, orient="row")
    return frame.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("row")).select(
        "row", "question_id", "participant_id", "score", "has_model")


def evaluate(backend, release: Path, out: Path, *, split: str = "probe", limit: int | None = None,
             samples: int | None = None, temperature: float | None = None, demographics: bool = True,
             seed: int | None = 0, max_tokens: int | None = None, family: str | None = None,
             majority: str = MAJORITY_DEFINITIONS[0], args: dict | None = None,
             console=None) -> runs.EvaluateResult:
    """Run a model on a WVB release and score it: RUN_DIR/cache.sqlite, responses.jsonl, metrics.json, the plots
    and run.json. ``family``: whose App. B prompts (wvb_prompts.FAMILIES); ``majority``: MAJORITY_DEFINITIONS.
    Re-running into the same folder answers every request already made from the cache."""
    from culturebench.evaluate import wvb_prompts as prompts
    from datetime import datetime, timezone

    from culturebench.evaluate.wvb_prompts import STATUSES

    started = datetime.now(timezone.utc)
    release, out = Path(release), Path(out)
    manifest = load_manifest(release)
    rows = evaluation_rows(release, split, limit)
    questions, participants = prompt_tables(release, rows["participant_id"] if demographics else None)
    family = prompts.DEFAULT_FAMILY if family is None else family
    planned = plan_requests(rows, questions, participants, demographics=demographics, samples=samples,
                            temperature=temperature, max_tokens=max_tokens, seed=seed, family=family)
    mode = "with demographics" if demographics else "without demographics"
    result = runs.ask(backend, [p.request for p in planned], out, f"wvb {split} ({mode})", console)
    records = parse_records(planned, result.responses, questions)
    responses_path = runs.write_jsonl(out / runs.RESPONSES_FILE, records)
    parse_status = {status: 0 for status in STATUSES}
    for record in records:
        parse_status[record["parse_status"]] = parse_status.get(record["parse_status"], 0) + 1
    scored = score_answers(answers_frame(rows, records, demographics), release, runs.source_info(responses_path),
                           majority=majority)
    n_parsed = sum(r["answer"] is not None for r in records)
    scored.metrics.update({
        "mode": "with_demographics" if demographics else "without_demographics",
        "prompt_family": family,
        "split": split,
        "n_evaluated_rows": rows.height,
        "n_requests": len(records),
        "n_parsed": n_parsed,
        "n_unparsed": len(records) - n_parsed,
        "parse_status": parse_status,
    })
    stats = runs.runner_stats(result)
    written = runs.write_run_record(
        out, [responses_path, *write_run(scored, out)], benchmark="wvb", release=release, manifest=manifest,
        backend=backend, args=args, started_at=started, stats=stats,
        extra={"evaluation": {"mode": scored.metrics["mode"], "prompt_family": family, "split": split,
                              "n_evaluated_rows": rows.height, "n_requests": len(records),
                              "temperature": planned[0].request.sampling.temperature,
                              "max_tokens": planned[0].request.sampling.max_tokens,
                              "stop": list(planned[0].request.sampling.stop), "seed": seed, "samples": samples,
                              "majority": majority},
               "parse_status": parse_status,
               "metrics": {"mean": scored.metrics["mean"], "std": scored.metrics["std"],
                           "n_questions": scored.metrics["n_questions"], "n_invalid": scored.metrics["n_invalid"]}})
    return runs.EvaluateResult(metrics=scored.metrics, records=records, stats=stats, written=written, score=scored)


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
                      args=args, console=console)
    m = result.metrics
    mean = "n/a" if m["mean"] is None else f"{m['mean']:.4f}"
    line = (f"wvb {split} ({m['mode'].replace('_', ' ')}): {runs.request_counts(m['n_requests'], result.stats)}, "
            f"{m['n_unparsed']:,} unparsed, {m['n_questions']} questions, mean W1 {mean}")
    return line, result.written


def cli_score(responses: Path, release: Path, out: Path, config: Path | None = None) -> tuple[str, list[Path]]:
    """`culturebench score`: metrics from saved responses (``config``: ``{"majority": "per_group"}`` for Sec. 3.3's
    per-group majority baseline); returns (summary line, paths written)."""
    result = score(responses, release, read_config(config).get("majority", MAJORITY_DEFINITIONS[0]))
    written = write_run(result, out)
    m = result.metrics
    mean = "n/a" if m["mean"] is None else f"{m['mean']:.4f}"
    return (f"wvb: {m['n_rows']:,} rows, coverage {m['coverage']:.3f}, {m['n_invalid']:,} invalid, "
            f"{m['n_questions']} questions, mean W1 {mean}"), written
