"""pandera schemas and Great Expectations suites of the CDEval release configs."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from culturebench.builders import cdeval
from culturebench.raw import paraphrases

DIMENSIONS = cdeval.dimension_codes()
DOMAINS = cdeval.domain_names()
LOW, HIGH = cdeval.facts()["hofstede"]["score_range"]
TEXT = pa.Check.str_length(min_value=1)


def _questions() -> pa.DataFrameSchema:
    poles = cdeval.orientations()
    return pa.DataFrameSchema(
        {
            "id": pa.Column(pl.String, pa.Check.str_matches(r"^cdeval-(pdi|idv|uai|mas|lto|ivr)-[0-9a-f]{12}$"),
                            unique=True),
            "source_index": pa.Column(pl.Int64, pa.Check.ge(0), unique=True),
            "dimension": pa.Column(pl.String, pa.Check.isin(DIMENSIONS)),
            "domain": pa.Column(pl.String, pa.Check.isin(DOMAINS)),
            "question": pa.Column(pl.String, TEXT),
            "option_1": pa.Column(pl.String, TEXT),
            "option_2": pa.Column(pl.String, TEXT),
            "target_orientation": pa.Column(pl.String, pa.Check.isin([p[0] for p in poles.values()])),
            "option_2_orientation": pa.Column(pl.String, pa.Check.isin([p[1] for p in poles.values()])),
        },
        strict=True,
        ordered=True,
    )


def _hofstede() -> pa.DataFrameSchema:
    columns = {
        "country_code": pa.Column(pl.String, pa.Check.str_matches(r"^[A-Z]{3}$"), unique=True),
        "country": pa.Column(pl.String, TEXT),
    }
    columns |= {c: pa.Column(pl.Int64, pa.Check.in_range(LOW, HIGH), nullable=True) for c in cdeval.SCORE_COLUMNS}
    columns |= {"group": pa.Column(pl.String, TEXT, nullable=True), "source_file": pa.Column(pl.String, TEXT),
                "version": pa.Column(pl.String, TEXT)}
    return pa.DataFrameSchema(columns, strict=True, ordered=True)


def _stats() -> pa.DataFrameSchema:
    unit = pa.Check.in_range(0.0, 1.0)
    return pa.DataFrameSchema(
        {
            "group_by": pa.Column(pl.String, pa.Check.isin(["dimension", "domain", "all"])),
            "group": pa.Column(pl.String, pa.Check.isin([*DIMENSIONS, *DOMAINS, "all"])),
            "prompts": pa.Column(pl.Int64, pa.Check.ge(0)),
            "avg_length_tokens": pa.Column(pl.Float64, pa.Check.gt(0), nullable=True),
            "avg_length_words": pa.Column(pl.Float64, pa.Check.gt(0), nullable=True),
            "avg_question_tokens": pa.Column(pl.Float64, pa.Check.gt(0), nullable=True),
            "distinct_2": pa.Column(pl.Float64, unit, nullable=True),
            "self_bleu": pa.Column(pl.Float64, unit, nullable=True),
        },
        strict=True,
        ordered=True,
        unique=["group_by", "group"],
    )


SCHEMAS = {"questions": _questions(), "hofstede": _hofstede(), "stats": _stats(),
           paraphrases.CONFIG: paraphrases.pandera_schema()}

KEYS = {"questions": ("id",), "hofstede": ("country_code",), "stats": ("group_by", "group"),
        paraphrases.CONFIG: ("id", "paraphrase_index")}
"""Per config, the columns that identify a row across rebuilds (``culturebench diff`` matches rows on them)."""


def score_inputs(tables) -> dict:
    """What CDEval's scores depend on: the questions per dimension and domain (Table 2's cells)."""
    from culturebench.contract import ScoreInput, config_rows

    counts = config_rows(tables, "questions", ["dimension", "domain"]).group_by("dimension", "domain").len("count")
    return {"questions per dimension and domain": ScoreInput(counts.collect(), ("dimension", "domain"),
                                                             "questions per dimension and domain")}


def expectations() -> dict[str, list]:
    import great_expectations as gx

    e = gx.expectations
    return {
        "questions": [
            e.ExpectColumnValuesToBeUnique(column="id"),
            e.ExpectColumnValuesToBeInSet(column="dimension", value_set=DIMENSIONS),
            e.ExpectColumnValuesToBeInSet(column="domain", value_set=DOMAINS),
            e.ExpectColumnValueLengthsToBeBetween(column="question", min_value=1),
            e.ExpectColumnValuesToNotBeNull(column="option_1"),
            e.ExpectColumnValuesToNotBeNull(column="option_2"),
        ],
        "hofstede": [
            e.ExpectColumnValuesToBeUnique(column="country_code"),
            *[e.ExpectColumnValuesToBeBetween(column=c, min_value=LOW, max_value=HIGH) for c in cdeval.SCORE_COLUMNS],
        ],
        "stats": [
            e.ExpectTableRowCountToEqual(value=len(DIMENSIONS) + len(DOMAINS) + 1),
            e.ExpectCompoundColumnsToBeUnique(column_list=["group_by", "group"]),
            e.ExpectColumnValuesToBeBetween(column="distinct_2", min_value=0, max_value=1),
            e.ExpectColumnValuesToBeBetween(column="self_bleu", min_value=0, max_value=1),
        ],
    }
