"""A parquet file written as its rows arrive (``ParquetShardSink``; ``run_folder.ResponsesWriter`` writes each shard of a
large run's responses with one): polars' streaming engine sinks a lazy frame whose source is a small queue of frames
(``polars.io.plugins.register_io_source``), in a thread of its own, so the file holds a few frames in memory
whatever its length. polars marks ``register_io_source`` unstable: ``tests/test_shards.py`` reads back what it wrote
(with pyarrow) and checks that a sink that fails is an error, not a writer waiting forever.

Why not pyarrow's ``ParquetWriter``, which wrote the shards until 2026-11-27: ``bench/responses_writer.py`` writes
the same records both ways, each in a fresh process; polars leaves less resident once the file is closed and
writes smaller files (figures in docs/performance.md, "Evaluating at scale")."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any, Iterator

import polars as pl

QUEUED_FRAMES = 2
"""Frames handed to the sink and not yet written: a writer that runs ahead waits."""
WAIT_S = 0.2
"""How often a waiting writer looks whether the sink has failed."""


class ParquetShardSink:
    """``path`` written from the frames given to ``write`` (each of ``schema``, in order), zstd-compressed in row
    groups of ``row_group_size`` rows; ``close()`` writes the footer. What the sink raises (a full disk) is raised by
    the next ``write`` or by ``close``."""

    def __init__(self, path: Path, schema: Any, row_group_size: int) -> None:
        from polars.io.plugins import register_io_source

        self.path = Path(path)
        self._frames: queue.Queue[pl.DataFrame | None] = queue.Queue(maxsize=QUEUED_FRAMES)
        self._failure: BaseException | None = None
        source = register_io_source(self._queued_frames, schema=schema)
        self._thread = threading.Thread(target=self._sink, args=(source, row_group_size), daemon=True,
                                        name=f"parquet sink {self.path.name}")
        self._thread.start()

    def _queued_frames(self, with_columns: Any, predicate: Any, n_rows: Any, batch_size: Any) -> Iterator[pl.DataFrame]:
        """The io source: the frames given to ``write`` until ``close`` (a sink asks for every column and row)."""
        while (frame := self._frames.get()) is not None:
            yield frame

    def _sink(self, source: pl.LazyFrame, row_group_size: int) -> None:
        try:
            source.sink_parquet(self.path, compression="zstd", row_group_size=row_group_size)
        except BaseException as exc:  # noqa: BLE001  (raised in the writing thread by write or close)
            self._failure = exc

    def _put(self, item: pl.DataFrame | None) -> None:
        while True:
            if self._failure is not None:
                raise self._failure
            try:
                self._frames.put(item, timeout=WAIT_S)
                return
            except queue.Full:
                if not self._thread.is_alive():
                    raise self._failure or RuntimeError(f"the parquet sink of {self.path} stopped") from None

    def write(self, frame: pl.DataFrame) -> None:
        """Append ``frame``'s rows."""
        self._put(frame)

    def close(self) -> None:
        """Write what is queued and the footer; raise what the sink raised."""
        if self._thread.is_alive():
            self._put(None)
            self._thread.join()
        if self._failure is not None:
            raise self._failure
