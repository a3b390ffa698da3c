"""pandera schemas and Great Expectations suites of the SocialCC release configs."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from culturebench.builders import socialcc
from culturebench.countries import zones

TEXT = pa.Check.str_length(min_value=1)
QUESTIONS = socialcc.question_ids()
TOPICS = sorted({q["topic"] for q in socialcc.questions()})
COMMONSENSE_TOPICS = list(socialcc.facts()["commonsense_topics"])
SIDES = list(socialcc.SIDES)
IW_ZONES = zones()


def _scenarios() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "id": pa.Column(pl.String, pa.Check.str_matches(r"^socialcc-[0-9a-f]{16}$"), unique=True),
            "source_id": pa.Column(pl.String, TEXT),
            "layout": pa.Column(pl.String, pa.Check.isin(["released", "cc_mediation", "culturebench"])),
            "scenario": pa.Column(pl.String, TEXT),
            "events": pa.Column(pl.List(pl.String), nullable=True),
            "characters": pa.Column(pl.List(socialcc.CHARACTER)),
            "commonsense_country": pa.Column(pl.String, nullable=True),
            "commonsense_topic": pa.Column(pl.String, pa.Check.isin(COMMONSENSE_TOPICS), nullable=True),
            "commonsense_item": pa.Column(pl.String, nullable=True),
            "value_item": pa.Column(pl.String, pa.Check.str_startswith("People ")),
            "value_country": pa.Column(pl.String, TEXT),
            "value_question_id": pa.Column(pl.String, pa.Check.isin(QUESTIONS)),
            "value_table_4a_id": pa.Column(pl.Int64),
            "value_topic": pa.Column(pl.String, pa.Check.isin(TOPICS)),
            "value_side": pa.Column(pl.String, pa.Check.isin(SIDES)),
            "value_share": pa.Column(pl.Float64, [pa.Check.ge(0.0), pa.Check.le(1.0)], nullable=True),
            "iw_zone": pa.Column(pl.String, pa.Check.isin(IW_ZONES), nullable=True),
        },
        strict=True,
        ordered=True,
    )


def _preferences() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "country": pa.Column(pl.String, TEXT),
            "question_id": pa.Column(pl.String, pa.Check.isin(QUESTIONS)),
            "table_4a_id": pa.Column(pl.Int64),
            "topic": pa.Column(pl.String, pa.Check.isin(TOPICS)),
            "side": pa.Column(pl.String, pa.Check.isin(SIDES)),
            "share": pa.Column(pl.Float64, [pa.Check.gt(socialcc.threshold()), pa.Check.le(1.0)]),
            "n": pa.Column(pl.Int64, pa.Check.ge(1)),
            "weighted": pa.Column(pl.Boolean),
            "statement": pa.Column(pl.String, pa.Check.str_startswith("People from "), unique=True),
        },
        strict=True,
        ordered=True,
        unique=["country", "question_id", "side"],
    )


SCHEMAS = {"scenarios": _scenarios(), "value_preferences": _preferences()}

KEYS = {"scenarios": ("id",), "value_preferences": ("country", "question_id", "side")}
"""Per config, the columns that identify a row across rebuilds (``culturebench diff`` matches rows on them)."""


def score_inputs(tables) -> dict:
    """What SocialCC's scores depend on: the scenarios per country pair (commonsense country, value country)."""
    from culturebench.contract import ScoreInput, config_rows

    pair = ("commonsense_country", "value_country")
    counts = config_rows(tables, "scenarios", list(pair)).group_by(*pair).len("count")
    return {"scenarios per country pair": ScoreInput(counts.collect(), pair, "scenarios per country pair")}


def expectations() -> dict[str, list]:
    import great_expectations as gx

    e = gx.expectations
    return {
        "scenarios": [
            e.ExpectColumnValuesToBeUnique(column="id"),
            e.ExpectColumnValuesToBeInSet(column="value_question_id", value_set=QUESTIONS),
            e.ExpectColumnValuesToBeInSet(column="value_side", value_set=SIDES),
            e.ExpectColumnValueLengthsToBeBetween(column="scenario", min_value=1),
            e.ExpectColumnValuesToNotBeNull(column="value_item"),
        ],
        "value_preferences": [
            e.ExpectCompoundColumnsToBeUnique(column_list=["country", "question_id", "side"]),
            e.ExpectColumnValuesToBeBetween(column="share", min_value=socialcc.threshold(), max_value=1.0,
                                            strict_min=True),
            e.ExpectColumnValuesToBeInSet(column="side", value_set=SIDES),
        ],
    }
