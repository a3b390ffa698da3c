"""LLM-GLOBE's saved answers read (responses.jsonl files and human ratings) and the closed answers scored."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError, excerpt
from culturebench.evaluate.runs import saved_records
from culturebench.evaluate.llm_globe import prompts


def read_responses(paths: Sequence[Path], variant: str | None = "default") -> list[dict]:
    """The records of responses.jsonl files (evaluate's output), each with ``source`` and ``row``: of the closed
    answers, ``variant``'s only (a record without one is the default's: the paper's scores are the default's,
    issue #63; None: every variant's)."""
    records = []
    for path in map(Path, paths):
        n = 0
        for number, record in saved_records.jsonl_records(path, texts=("response", "rating_text")):
            part = record.get("part")
            needed = {"closed": ("model", "id", "language", "sample_index", "response"),
                      "open": ("model", "id", "language", "sample_index", "response_id", "response"),
                      "juror": ("response_id", "juror", "juror_language", "rating_text")}.get(part)
            if needed is None:
                raise InputError(f"unknown part {part!r}", file=path, row=number, column="part")
            for name in needed:
                if name not in record:
                    raise InputError(f"record lacks field {name!r}", file=path, row=number, column=name)
            n += 1
            if part == "closed" and variant is not None and (record.get("variant") or "default") != variant:
                continue
            records.append({**record, "source": str(path), "row": number})
        if not n:
            raise InputError("responses file has no records", file=path)
    return records


def read_human_ratings(path: Path) -> pl.DataFrame:
    """response_id, human_score (mean over raters of the same response) from a CSV/TSV (delimiter sniffed) or
    JSONL file with columns response_id and human_score (or score)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("human ratings file not found", file=path)
    try:
        if path.suffix.lower() in (".jsonl", ".json"):
            frame = pl.read_ndjson(path)
        else:
            head = path.read_text(encoding="utf-8").split("\n", 1)[0]
            separator = "\t" if head.count("\t") > head.count(",") else ","
            frame = pl.read_csv(path, separator=separator, infer_schema_length=0)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as exc:
        raise InputError(f"human ratings do not parse ({str(exc).splitlines()[0]})", file=path) from None
    score_column = next((c for c in ("human_score", "score", "rating") if c in frame.columns), None)
    if "response_id" not in frame.columns or score_column is None:
        raise InputError("human ratings need columns response_id and human_score", file=path)
    values = frame[score_column].cast(pl.String).to_list()
    scores = []
    for number, value in enumerate(values, start=1):
        try:
            scores.append(float(value))
        except (TypeError, ValueError):
            raise InputError(f"human score {excerpt(repr(value))} is not a number", file=path, row=number,
                             column=score_column) from None
    return (frame.select(pl.col("response_id").cast(pl.String)).with_columns(pl.Series("human_score", scores))
            .group_by("response_id", maintain_order=True).agg(pl.col("human_score").mean()))


def score_closed(records: Sequence[dict], closed: pl.DataFrame | None) -> pl.DataFrame:
    """Each closed answer parsed and reverse-scored: model, id, item_id, dimension, language, sample_index,
    reverse, status, answer (as given), score (7 = high on the dimension; null when invalid)."""
    rows = []
    info = {} if closed is None else {r["id"]: r for r in closed.select(
        "id", "item_id", "dimension", "reverse", "scale_min", "scale_max").iter_rows(named=True)}
    for rec in records:
        item = info.get(str(rec["id"]))
        if item is None:
            raise InputError(f"closed prompt id {rec['id']!r} is not in the release", file=rec.get("source"),
                             row=rec.get("row"), column="id")
        value, status = prompts.parse_rating(rec["response"])
        if value is not None and not item["scale_min"] <= value <= item["scale_max"]:
            value, status = None, "out_of_range"
        rows.append({"model": str(rec["model"]), "id": str(rec["id"]), "item_id": item["item_id"],
                     "dimension": item["dimension"], "language": rec["language"],
                     "sample_index": int(rec["sample_index"]), "reverse": bool(item["reverse"]), "parse_status": status,
                     "answer": value, "score": prompts.reverse_score(value, bool(item["reverse"]), item["scale_min"],
                                                                     item["scale_max"])})
    return pl.DataFrame(rows, schema={"model": pl.String, "id": pl.String, "item_id": pl.String,
                                      "dimension": pl.String, "language": pl.String, "sample_index": pl.Int64,
                                      "reverse": pl.Boolean, "parse_status": pl.String, "answer": pl.Int64,
                                      "score": pl.Float64})
