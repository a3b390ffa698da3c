"""WorldValuesBench answers read back: the paper's QUESTION_ID, PARTICIPANT_ID, SCORE files (``read_responses``) and
``evaluate wvb``'s responses (responses.jsonl or parquet shards: ``scan_answers``), paired with the evaluated rows
(``answers_frame``) as ``score_answers`` input."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from culturebench.errors import InputError, excerpt
from culturebench.evaluate.runs import run_folder, saved_records
from culturebench.evaluate.wvb.items import evaluation_rows

COLUMNS = ("QUESTION_ID", "PARTICIPANT_ID", "SCORE")
DELIMITERS = ("\t", ",", ";", "|")


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
            raise InputError(f"missing column {column} (header has {excerpt(', '.join(frame.columns))}; "
                             f"delimiter {shown})",
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
        raise InputError(f"participant id {excerpt(repr(first['participant_text']))} is not an integer", file=path,
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



ANSWER_COLUMNS = ("participant_id", "question_id", "sample_index", "answer")
"""The fields of a responses record that scoring reads."""


def scan_answers(path: Path, variant: str = "default") -> pl.LazyFrame:
    """The answers of ``evaluate wvb``'s responses, in file order, as a lazy query: participant_id, question_id,
    sample_index, ``score`` (the parsed answer, null when none: a number from the parquet shards of a large run,
    text from responses.jsonl) and ``not_integer`` (the reply gave a non-whole number, ``score`` its truncation).
    ``path``: responses.jsonl (every line checked, one-line errors naming the line and
    field) or the shards (a folder or one .parquet file; only these columns are read, when the query runs).
    ``variant``: the prompt variant's records only (a record without one is the default's; issue #63)."""
    path = Path(path)
    schema = {"participant_id": pl.Int64, "question_id": pl.String, "sample_index": pl.Int64, "score": pl.String,
              "not_integer": pl.Boolean}
    if path.is_dir() or path.suffix.lower() == ".parquet":
        try:
            frame = pl.scan_parquet(run_folder.shard_paths(path))
            status = pl.col("parse_status") if "parse_status" in frame.collect_schema() else pl.lit(None)
            if "steer" in frame.collect_schema():  # answers steered to a country are the country view's only
                frame = frame.filter(pl.col("steer").is_null())
            if "variant" in frame.collect_schema():
                frame = frame.filter(pl.col("variant").fill_null("default") == variant)
            elif variant != "default":
                frame = frame.filter(pl.lit(False))
            frame = frame.select(
                pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                pl.col("sample_index").cast(pl.Int64), pl.col("answer").cast(pl.Float64).alias("score"),
                (status == "not_integer").fill_null(False).alias("not_integer"))
            n_records = frame.select(pl.len()).collect().item()
        except pl.exceptions.PolarsError as exc:
            raise InputError(f"responses shards cannot be read ({str(exc).splitlines()[0]})", file=path) from None
    else:
        columns: dict[str, list] = {name: [] for name in schema}
        for _, record in saved_records.jsonl_records(path, ANSWER_COLUMNS, texts=("output",),
                                            integers=("participant_id", "sample_index", "answer")):
            if record.get("steer") is not None:  # answers steered to a country are the country view's only
                continue
            if (record.get("variant") or "default") != variant:
                continue
            for name in ANSWER_COLUMNS[:3]:
                columns[name].append(record[name])
            columns["score"].append(None if record["answer"] is None else str(record["answer"]))
            columns["not_integer"].append(record.get("parse_status") == "not_integer")
        n_records, frame = len(columns["score"]), pl.DataFrame(columns, schema=schema).lazy()
    if n_records == 0:
        raise InputError("responses file has no records", file=path)
    return frame


def answers_frame(rows: pl.DataFrame | None, answers: pl.LazyFrame, demographics: bool) -> pl.LazyFrame:
    """The parsed answers (``scan_answers``) as ``score_answers`` input (question_id, participant_id, score,
    not_integer, has_model), a lazy query.

    With demographics every record is its row's answer (several per row with --samples: each row's human answer then
    counts once per sample, which leaves W1 unchanged). Without, sample j of a question (in sample_index order) is
    paired with the question's j-th evaluated row; with the default oversampling (K = human answers) every row gets
    exactly one sample. With K != H, the extra samples get no participant (they still join the question's model
    answers) and the rows without a sample get a padding row (has_model false, not counted as invalid); per-group
    metrics then use only the paired samples. Questions in the order of the rows, samples of a question not among
    the rows left out."""
    if demographics:
        paired = answers.select("question_id", "participant_id", "score", "not_integer",
                                pl.lit(True).alias("has_model"))
    else:
        position = pl.int_range(pl.len()).over("question_id").alias("position")
        people = rows.lazy().select("participant_id", "question_id").with_columns(position)
        samples = (answers.with_row_index("line").sort("sample_index", "line")
                   .select("question_id", "score", "not_integer", position, pl.lit(True).alias("has_model")))
        order = rows.lazy().select("question_id").unique(maintain_order=True).with_row_index("question_order")
        paired = (people.join(samples, on=["question_id", "position"], how="full", coalesce=True)
                  .join(order, on="question_id", how="inner")
                  .sort("question_order", "position")
                  .select("question_id", "participant_id", "score", pl.col("not_integer").fill_null(False),
                          pl.col("has_model").fill_null(False)))
    return paired.select("question_id", pl.col("participant_id").cast(pl.Int64), "score", "not_integer",
                         pl.col("has_model").cast(pl.Boolean))



def evaluate_answers(path: Path, release: Path, run_metrics: dict) -> pl.DataFrame:
    """``evaluate wvb``'s responses (responses.jsonl or the parquet shards of a large run) as ``score_answers``
    input, paired with the evaluated rows as ``evaluate`` paired them. Asked without demographics (records without
    participant), the rows come from the run's metrics (split, rows evaluated and the ``--limit`` spread recorded
    under ``covers``)."""
    answers = scan_answers(path)
    try:
        first = answers.select(pl.col("participant_id").first()).collect().item()
    except pl.exceptions.PolarsError as exc:  # a damaged page of the first shard
        raise InputError(f"responses shards cannot be read ({str(exc).splitlines()[0]})", file=path) from None
    if first is not None:
        return answers_frame(None, answers, True)
    if run_metrics.get("mode") != "without_demographics":
        raise InputError(f"records without participant need the run's {run_folder.METRICS_FILE} beside them (it names "
                         "the split and rows that were asked)", file=path, row=1, column="participant_id")
    covers = (run_metrics.get("covers") or [{}])[0]
    rows = evaluation_rows(release, run_metrics.get("split") or "probe",
                           covers.get("limit", run_metrics.get("n_evaluated_rows")), covers.get("seed", 0))
    return answers_frame(rows, answers, False)
