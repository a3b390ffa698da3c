"""The toy benchmark's release schema."""

import pandera.polars as pa

SCHEMAS = {"questions": pa.DataFrameSchema({"id": pa.Column(str, unique=True), "question": pa.Column(str),
                                            "answer": pa.Column(str, pa.Check.isin(["yes", "no"]))})}


def expectations() -> dict:
    return {}
