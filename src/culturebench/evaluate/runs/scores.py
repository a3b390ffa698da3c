"""What the benchmarks' scoring shares (issue #28), knowing no benchmark: the result of scoring, and saved answers
joined to the release rows they answer."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from culturebench.errors import InputError


@dataclass
class ScoreResult:
    """metrics.json (``metrics``) and the tables behind it by name (``tables``; each benchmark's ``score_responses``
    says which)."""

    metrics: dict
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)


def join_release(responses: pl.DataFrame, rows: pl.DataFrame, key: str, required: str, what: str) -> pl.DataFrame:
    """``responses`` left-joined on ``key`` to the release ``rows`` (whose column ``required`` is never empty); an
    answer whose ``key`` is not in the release is an InputError naming its file and row (``source``, ``row``), e.g.
    "question id 'q9' is not in the release" (``what``: "question id")."""
    joined = responses.join(rows, on=key, how="left")
    unknown = joined.filter(pl.col(required).is_null())
    if unknown.height:
        first = unknown.row(0, named=True)
        raise InputError(f"{what} {first[key]!r} is not in the release", file=first.get("source"),
                         row=first.get("row"), column=key)
    return joined
