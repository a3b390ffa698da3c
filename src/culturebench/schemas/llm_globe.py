"""pandera schemas and Great Expectations suites of the LLM-GLOBE release configs."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from culturebench.builders import llm_globe

DIMENSIONS = llm_globe.dimension_names()
LOW, HIGH = llm_globe.facts()["globe_2004"]["score_range"]
SCALE = llm_globe.facts()["scale"]
TEXT = pa.Check.str_length(min_value=1)


def _closed() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "id": pa.Column(pl.String, pa.Check.str_matches(r"^closed-\d+-\d+-(entry|middle|exec|\d+)(-\d+)?$"),
                            unique=True),
            "item_id": pa.Column(pl.String, pa.Check.str_matches(r"^\d+-\d+$")),
            "dimension": pa.Column(pl.String, pa.Check.isin(DIMENSIONS)),
            "reverse": pa.Column(pl.Boolean),
            "industry": pa.Column(pl.String, TEXT),
            "sub_industry": pa.Column(pl.String, TEXT),
            "role": pa.Column(pl.String, TEXT),
            "prompt_en": pa.Column(pl.String, TEXT, unique=True),
            "prompt_zh": pa.Column(pl.String, TEXT, nullable=True),
            "scale_min": pa.Column(pl.Int64, pa.Check.eq(SCALE["min"])),
            "scale_max": pa.Column(pl.Int64, pa.Check.eq(SCALE["max"])),
        },
        strict=True,
        ordered=True,
        unique=["item_id", "industry", "sub_industry", "role"],
    )


def _open() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "id": pa.Column(pl.String, pa.Check.str_matches(r"^open-\d+-\d+$"), unique=True),
            "dimension": pa.Column(pl.String, pa.Check.isin(DIMENSIONS)),
            "number": pa.Column(pl.Int64, pa.Check.ge(1)),
            "origin": pa.Column(pl.String, pa.Check.isin(["human", "generated"])),
            "prompt_en": pa.Column(pl.String, TEXT, unique=True),
            "prompt_zh": pa.Column(pl.String, TEXT, nullable=True),
        },
        strict=True,
        ordered=True,
        unique=["dimension", "number"],
    )


def _rubrics() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "dimension": pa.Column(pl.String, pa.Check.isin(DIMENSIONS), unique=True),
            "scale_en": pa.Column(pl.String, TEXT),
            "characteristics_en": pa.Column(pl.String, TEXT),
            "scale_zh": pa.Column(pl.String, TEXT),
            "characteristics_zh": pa.Column(pl.String, TEXT),
        },
        strict=True,
        ordered=True,
    )


def _globe() -> pa.DataFrameSchema:
    score = pa.Check.in_range(LOW, HIGH)
    return pa.DataFrameSchema(
        {
            "country": pa.Column(pl.String, TEXT),
            "dimension": pa.Column(pl.String, pa.Check.isin(DIMENSIONS)),
            "practices": pa.Column(pl.Float64, score),
            "values": pa.Column(pl.Float64, score),
            "cluster": pa.Column(pl.String, nullable=True),
        },
        strict=True,
        ordered=True,
        unique=["country", "dimension"],
    )


SCHEMAS = {"closed": _closed(), "open": _open(), "rubrics": _rubrics(), "globe_2004": _globe()}

KEYS = {"closed": ("id",), "open": ("id",), "rubrics": ("dimension",), "globe_2004": ("country", "dimension")}
"""Per config, the columns that identify a row across rebuilds (``culturebench diff`` matches rows on them)."""


def score_inputs(tables) -> dict:
    """What LLM-GLOBE's scores depend on: the closed and the open prompts per GLOBE dimension."""
    from culturebench.contract import ScoreInput, config_rows

    return {f"{config} prompts per dimension": ScoreInput(
        config_rows(tables, config, ["dimension"]).group_by("dimension").len("count").collect(), ("dimension",),
        f"{config}-ended prompts per dimension") for config in ("closed", "open") if config in tables}


def expectations() -> dict[str, list]:
    import great_expectations as gx

    e = gx.expectations
    return {
        "closed": [
            e.ExpectColumnValuesToBeUnique(column="id"),
            e.ExpectColumnValuesToBeInSet(column="dimension", value_set=DIMENSIONS),
            e.ExpectCompoundColumnsToBeUnique(column_list=["item_id", "industry", "sub_industry", "role"]),
            e.ExpectColumnValuesToBeUnique(column="prompt_en"),
            e.ExpectColumnValuesToBeUnique(column="prompt_zh"),
            e.ExpectColumnValuesToBeBetween(column="scale_min", min_value=SCALE["min"], max_value=SCALE["min"]),
            e.ExpectColumnValuesToBeBetween(column="scale_max", min_value=SCALE["max"], max_value=SCALE["max"]),
        ],
        "open": [
            e.ExpectColumnValuesToBeUnique(column="id"),
            e.ExpectColumnValuesToBeInSet(column="dimension", value_set=DIMENSIONS),
            e.ExpectColumnValuesToBeInSet(column="origin", value_set=["human", "generated"]),
            e.ExpectColumnValueLengthsToBeBetween(column="prompt_en", min_value=1),
        ],
        "rubrics": [
            e.ExpectTableRowCountToEqual(value=len(DIMENSIONS)),
            e.ExpectColumnValuesToBeUnique(column="dimension"),
            e.ExpectColumnValuesToBeInSet(column="dimension", value_set=DIMENSIONS),
        ],
        "globe_2004": [
            e.ExpectCompoundColumnsToBeUnique(column_list=["country", "dimension"]),
            e.ExpectColumnValuesToBeBetween(column="practices", min_value=LOW, max_value=HIGH),
            e.ExpectColumnValuesToBeBetween(column="values", min_value=LOW, max_value=HIGH),
        ],
    }
