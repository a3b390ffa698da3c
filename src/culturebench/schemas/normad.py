"""pandera schemas and Great Expectations suites of the NormAd release configs."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from culturebench.builders import normad
from culturebench.countries import zones
from culturebench.raw import paraphrases

LABELS = normad.labels()
SUBAXES = normad.subaxes()
ZONES = zones()
TEXT = pa.Check.str_length(min_value=1)


def _stories() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "id": pa.Column(pl.String, pa.Check.str_matches(r"^normad-[0-9a-f]{16}$"), unique=True),
            "country": pa.Column(pl.String, TEXT),
            "background": pa.Column(pl.String, TEXT),
            "axis": pa.Column(pl.String),
            "subaxis": pa.Column(pl.String, pa.Check.isin(SUBAXES)),
            "value": pa.Column(pl.String, TEXT),
            "rule_of_thumb": pa.Column(pl.String, TEXT),
            "story": pa.Column(pl.String, TEXT),
            "explanation": pa.Column(pl.String, TEXT),
            "gold_label": pa.Column(pl.String, pa.Check.isin(LABELS)),
            "iw_zone": pa.Column(pl.String, pa.Check.isin(ZONES)),
        },
        strict=True,
        ordered=True,
    )


def _atlas() -> pa.DataFrameSchema:
    return pa.DataFrameSchema(
        {
            "country": pa.Column(pl.String, TEXT),
            "culture": pa.Column(pl.String, TEXT),
            "topic": pa.Column(pl.String, TEXT),
            "subsection": pa.Column(pl.String),
            "kind": pa.Column(pl.String, pa.Check.isin(["bullet", "paragraph"])),
            "text": pa.Column(pl.String, TEXT),
            "order": pa.Column(pl.Int64, pa.Check.ge(1)),
            "source_file": pa.Column(pl.String, TEXT),
        },
        strict=True,
        ordered=True,
        unique=["source_file", "order"],
    )


SCHEMAS = {"stories": _stories(), "atlas": _atlas(), paraphrases.CONFIG: paraphrases.pandera_schema()}

KEYS = {"stories": ("id",), "atlas": ("source_file", "order"), paraphrases.CONFIG: ("id", "paraphrase_index")}
"""Per config, the columns that identify a row across rebuilds (``culturebench diff`` matches rows on them)."""


def score_inputs(tables) -> dict:
    """What NormAd's scores depend on: the gold labels' shares per country (Sec. 4's accuracy is per label)."""
    from culturebench.contract import ScoreInput, config_rows

    counts = config_rows(tables, "stories", ["country", "gold_label"]).group_by("country", "gold_label").len("count")
    return {"gold labels per country": ScoreInput(counts.collect(), ("country",), "stories' gold labels per country",
                                                  value="gold_label")}


def expectations() -> dict[str, list]:
    import great_expectations as gx

    e = gx.expectations
    return {
        "stories": [
            e.ExpectColumnValuesToBeUnique(column="id"),
            e.ExpectColumnValuesToBeInSet(column="gold_label", value_set=LABELS),
            e.ExpectColumnValuesToBeInSet(column="subaxis", value_set=SUBAXES),
            e.ExpectColumnValuesToBeInSet(column="iw_zone", value_set=ZONES),
            e.ExpectColumnValueLengthsToBeBetween(column="story", min_value=1),
            e.ExpectColumnValuesToNotBeNull(column="background"),
        ],
        "atlas": [
            e.ExpectCompoundColumnsToBeUnique(column_list=["source_file", "order"]),
            e.ExpectColumnValuesToBeInSet(column="kind", value_set=["bullet", "paragraph"]),
            e.ExpectColumnValueLengthsToBeBetween(column="text", min_value=1),
        ],
    }
