"""``shards.ParquetShardSink``: a parquet file written by polars' streaming engine from frames handed to it one at a
time (the responses shards of a large run, issue #28)."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq
import pytest

from culturebench.evaluate.shards import ParquetShardSink

SCHEMA = pl.Schema({"id": pl.Int64, "text": pl.String, "answer": pl.Int64})


def frames(n: int, size: int) -> list[pl.DataFrame]:
    return [pl.DataFrame({"id": list(range(start, min(n, start + size))),
                          "text": [f"reply {i}" for i in range(start, min(n, start + size))],
                          "answer": [None if i % 5 == 0 else i % 4 for i in range(start, min(n, start + size))]},
                         schema=SCHEMA) for start in range(0, n, size)]


def test_the_frames_are_written_in_order_in_row_groups_of_the_size_asked(tmp_path):
    path = tmp_path / "part-00000.parquet"
    sink = ParquetShardSink(path, SCHEMA, row_group_size=100)
    for frame in frames(1_050, 70):  # frames of another size than the row groups
        sink.write(frame)
    sink.close()
    metadata = pq.ParquetFile(path).metadata  # read by pyarrow, not by the library that wrote it
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [100] * 10 + [50]
    assert metadata.row_group(0).column(0).compression == "ZSTD"
    assert pq.read_table(path).to_pylist() == pl.concat(frames(1_050, 70)).to_dicts()


def test_a_sink_that_cannot_write_raises_instead_of_waiting(tmp_path):
    sink = ParquetShardSink(tmp_path / "missing" / "part-00000.parquet", SCHEMA, row_group_size=100)
    with pytest.raises(Exception, match="missing|No such file"):
        for frame in frames(5_000, 10):  # more frames than the queue holds: a writer must not wait forever
            sink.write(frame)
        sink.close()
    assert not (tmp_path / "missing").exists()
