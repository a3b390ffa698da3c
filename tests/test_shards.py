"""``shards.ParquetShardSink``: a parquet file written by polars' streaming engine from frames handed to it one at a
time (the responses shards of a large run, issue #28)."""

from __future__ import annotations

import re
import threading

import polars as pl
import pyarrow.parquet as pq

from culturebench.evaluate.runs.shards import ParquetShardSink

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


def write_all(sink: ParquetShardSink) -> list[BaseException]:
    """Write 500 frames (more than the sink's queue holds) and close, in a thread given 60 s; what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            for frame in frames(5_000, 10):
                sink.write(frame)
            sink.close()
        except Exception as exc:  # noqa: BLE001
            raised.append(exc)

    writer = threading.Thread(target=run, daemon=True)
    writer.start()
    writer.join(timeout=60)
    assert not writer.is_alive(), "the writer still waits on a sink that has failed"
    return raised


def test_a_sink_that_cannot_write_is_an_error(tmp_path):
    raised = write_all(ParquetShardSink(tmp_path / "missing" / "part-00000.parquet", SCHEMA, row_group_size=100))
    assert len(raised) == 1 and re.search("missing|No such file", str(raised[0]))
    assert not (tmp_path / "missing").exists()


def test_a_writer_does_not_wait_on_a_sink_that_has_stopped(tmp_path, monkeypatch):
    def full_disk(self, source, row_group_size):  # the sink's thread ends at once, its queue never drained
        self._failure = OSError(28, "No space left on device")

    monkeypatch.setattr(ParquetShardSink, "_sink", full_disk)
    raised = write_all(ParquetShardSink(tmp_path / "part-00000.parquet", SCHEMA, row_group_size=100))
    assert len(raised) == 1 and "No space left" in str(raised[0])
