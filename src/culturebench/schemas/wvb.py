"""pandera schemas of the WorldValuesBench release configs."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from culturebench.builders import wvb
from culturebench.splits import SPLIT_NAMES

SPLIT = pa.Column(pl.String, pa.Check.isin(list(SPLIT_NAMES)))
CONTINENTS = wvb.facts()["probe"]["continents"]
QUESTION_ENUM = pl.Enum(wvb.value_variables())
SPLIT_ENUM = pl.Enum(SPLIT_NAMES)
READ_DTYPES = {"examples": {"question_id": QUESTION_ENUM, "split": SPLIT_ENUM}}
"""Columns read back as Enum (a value outside the set becomes null and fails the no-null check): the long
examples table then takes ~0.4 GB instead of ~0.7 GB in memory on the full survey."""


def _participants() -> pa.DataFrameSchema:
    columns = {
        "participant_id": pa.Column(pl.Int64, pa.Check.gt(0), unique=True),
        "country": pa.Column(pl.String, pa.Check.str_matches(r"^[A-Z]{3}$")),
        "continent": pa.Column(pl.String, pa.Check.isin(CONTINENTS)),
        "split": SPLIT,
    }
    columns |= {v: pa.Column(pl.String, nullable=True) for v in wvb.demographic_variables()}
    columns["B_COUNTRY"] = pa.Column(pl.String)
    columns[wvb.WEIGHT_COLUMN] = pa.Column(pl.Float64, pa.Check.ge(0), nullable=True)
    return pa.DataFrameSchema(columns, strict=True, ordered=True)


def _questions() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "question_id": pa.Column(pl.String, pa.Check.isin(wvb.demographic_variables() + wvb.value_variables()), unique=True),
            "kind": pa.Column(pl.String, pa.Check.isin(["demographic", "value"])),
            "category": pa.Column(pl.String),
            "text": pa.Column(pl.String, pa.Check.str_length(min_value=5)),
            "scale_min": pa.Column(pl.Int8, pa.Check.ge(0), nullable=True),
            "scale_max": pa.Column(pl.Int8, pa.Check.le(10), nullable=True),
            "choices": pa.Column(pl.List(pl.Struct({"code": pl.Int16, "label": pl.String}))),
        },
        strict=True,
        ordered=True,
    )


def _examples() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "participant_id": pa.Column(pl.Int64, pa.Check.gt(0)),
            "question_id": pa.Column(QUESTION_ENUM),
            "answer": pa.Column(pl.Int8, pa.Check.in_range(0, 10)),
            "split": pa.Column(SPLIT_ENUM),
        },
        strict=True,
        ordered=True,
    )


def _probe() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "question_id": pa.Column(pl.String, pa.Check.isin(wvb.value_variables())),
            "category": pa.Column(pl.String),
            "continent": pa.Column(pl.String, pa.Check.isin(CONTINENTS)),
            "urban_rural": pa.Column(pl.String, pa.Check.isin(["Urban", "Rural"])),
            "education_level": pa.Column(pl.String, pa.Check.isin(list(wvb.facts()["probe"]["education_levels"]))),
            "participant_id": pa.Column(pl.Int64, pa.Check.gt(0)),
            "answer": pa.Column(pl.Int8, pa.Check.in_range(0, 10)),
            "split": pa.Column(pl.String, pa.Check.isin(list(SPLIT_NAMES))),  # the participant's split
        },
        strict=True,
        ordered=True,
        unique=["question_id", "participant_id"],
    )


SCHEMAS = {"participants": _participants(), "questions": _questions(), "examples": _examples(), "probe": _probe()}

KEYS = {"participants": ("participant_id",), "questions": ("question_id",),
        "examples": ("participant_id", "question_id"), "probe": ("question_id", "participant_id")}
"""Per config, the columns that identify a row across rebuilds (``culturebench diff`` matches rows on them)."""


def score_inputs(tables) -> dict:
    """What WVB's scores depend on: the human answer distribution per question and country (Sec. 3.2 compares a
    model's with it by W1 on answers rescaled by the question's scale), over every split's examples."""
    from culturebench.contract import ScoreInput, config_rows

    countries = config_rows(tables, "participants", ["participant_id", "country"])
    scales = config_rows(tables, "questions", ["question_id", "scale_min", "scale_max"]).select(
        "question_id", (pl.col("scale_max").cast(pl.Int64) - pl.col("scale_min").cast(pl.Int64)).alias("scale"))
    counts = (config_rows(tables, "examples", ["participant_id", "question_id", "answer"])
              .with_columns(pl.col("question_id").cast(pl.String))
              .join(countries, on="participant_id", how="left")
              .group_by("question_id", "country", "answer").len("count")
              .join(scales, on="question_id", how="left"))
    return {"answers per question and country": ScoreInput(
        counts.collect(engine="streaming"), ("question_id", "country"),
        "examples' answer distribution per question and country", value="answer", scale="scale")}


def expectations() -> dict[str, list]:
    """Great Expectations suites for the configs small enough for pandas (examples is pandera-only)."""
    import great_expectations as gx

    e = gx.expectations
    n_questions = len(wvb.demographic_variables()) + len(wvb.value_variables())
    design = wvb.facts()["probe"]
    return {
        "participants": [
            e.ExpectColumnValuesToBeUnique(column="participant_id"),
            e.ExpectColumnValuesToNotBeNull(column="country"),
            e.ExpectColumnValuesToBeInSet(column="split", value_set=list(SPLIT_NAMES)),
            e.ExpectColumnValuesToBeInSet(column="H_URBRURAL", value_set=["Urban", "Rural"], mostly=0.9),
        ],
        "questions": [
            e.ExpectTableRowCountToEqual(value=n_questions),
            e.ExpectColumnValuesToBeUnique(column="question_id"),
            e.ExpectColumnPairValuesAToBeGreaterThanB(column_A="scale_max", column_B="scale_min", ignore_row_if="either_value_is_missing"),
        ],
        "probe": [
            e.ExpectTableRowCountToBeBetween(min_value=0, max_value=36 * len(design["continents"]) * 2 * len(design["education_levels"]) * design["participants_per_group_and_question"]),
            e.ExpectCompoundColumnsToBeUnique(column_list=["question_id", "participant_id"]),
            e.ExpectColumnDistinctValuesToBeInSet(column="continent", value_set=design["continents"]),
        ],
    }
