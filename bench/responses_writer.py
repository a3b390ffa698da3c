"""The parquet shards of a large run's responses written two ways, side by side, each in a fresh process:
``run_folder.ResponsesWriter`` as it is (polars' streaming sink, ``shards.ParquetShardSink``) and pyarrow's
``ParquetWriter`` fed the same frames in the same row groups and shards (how the shards were written until
2026-11-27). Prints per run the wall time, the peak RSS above the RSS before writing, what stays resident once the
file is closed and the free heap returned (anonymous memory and library pages, above the same point), and the bytes
written.

    python bench/responses_writer.py [--records 600000] [--runs 2]

The records have WVB's fields (``wvb.items.response_schema``): a prompt of ~900 characters that differs per
participant and question, a short reply, the sampling settings; they come in the runner's batches
(``runner.BATCH_SIZE``), made as they are written, so the records themselves hold no memory. The runs alternate
between the two writers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROMPT = ("Person X provided the following demographic information in an interview:\n1. Question: In what country "
          "was the interview conducted?\n Answer: Country {country}\n2. Question: What is the type of settlement in "
          "which the interview was conducted? Urban or Rural?\n Answer: {settlement}\n3. Question: What is the highest "
          "educational level that you have attained?\n Answer: level {level}\n\nWhat would Person X answer to the "
          "following question and why?\nQuestion: On a scale of 1 to 4, 1 meaning 'Lowest (1)' and 4 meaning "
          "'Highest (4)', where do you stand on item Q{question}?\n\nYour output should be in the following "
          "format:\n{{\n  \"thoughtful explanation\": \"... upto 30 words ...\",\n  \"answer as a score\": "
          "\"... score ...\"\n}}")


def records(start: int, count: int) -> list[dict]:
    """Records ``start`` .. ``start + count`` of the synthetic run."""
    out = []
    for i in range(start, start + count):
        participant, question = divmod(i, 240)
        answer = 1 + (i * 7919) % 4
        out.append({
            "participant_id": participant, "question_id": f"Q{question + 1}", "sample_index": 0,
            "messages": [{"role": "user", "content": PROMPT.format(country=participant % 64, settlement=(
                "Urban", "Rural")[participant % 2], level=participant % 9, question=question + 1)}],
            "sampling": {"temperature": 0.0, "max_tokens": 256, "top_p": 1.0, "seed": 0, "stop": ["\n\n"]},
            "output": f'{{"thoughtful explanation": "x", "answer as a score": "{answer}"}}', "answer": answer,
            "parse_status": "json", "finish_reason": "stop", "prompt_tokens": 127, "completion_tokens": 21})
    return out


def resident() -> dict[str, float]:
    """RssAnon, RssFile and VmHWM of this process in MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        return {key: int(rest.split()[0]) / 1024 for key, rest in (line.split(":", 1) for line in status)
                if key in ("RssAnon", "RssFile", "VmHWM")}


def child(kind: str, n: int) -> dict:
    import culturebench.cli  # noqa: F401  (first, as on the command line: it sets polars' allocator)
    import polars as pl

    from culturebench.evaluate.runs import run_folder
    from culturebench.evaluate.runs.memory import return_free_heap
    from culturebench.evaluate.runs.runner import BATCH_SIZE
    from culturebench.evaluate.wvb.items import response_schema

    schema = response_schema()
    pl.DataFrame(records(0, 2), schema=schema)  # polars' frame building loaded before the baseline, for both
    with tempfile.TemporaryDirectory() as folder:
        return_free_heap()
        time.sleep(0.5)
        before = resident()
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:  # VmHWM from here
            refs.write("5")
        started = time.perf_counter()
        if kind == "polars-sink":
            with run_folder.ResponsesWriter(Path(folder), total=n, schema=schema, threshold=0) as writer:  # shards at any size
                for start in range(0, n, BATCH_SIZE):
                    writer.write(records(start, min(BATCH_SIZE, n - start)))
                path = writer.close()
        else:
            import pyarrow.parquet as pq

            path, written, parquet = Path(folder) / "responses", 0, None
            path.mkdir()
            for start in range(0, n, BATCH_SIZE):
                batch = records(start, min(BATCH_SIZE, n - start))
                for at in range(0, len(batch), run_folder.ROW_GROUP_ROWS):
                    table = pl.DataFrame(batch[at:at + run_folder.ROW_GROUP_ROWS], schema=schema).to_arrow()
                    if parquet is None:
                        parquet = pq.ParquetWriter(path / f"part-{written // run_folder.SHARD_ROWS:05d}.parquet",
                                                   table.schema, compression="zstd")
                    parquet.write_table(table)
                    written += table.num_rows
                    if written % run_folder.SHARD_ROWS == 0:
                        parquet.close()
                        parquet = None
            if parquet is not None:
                parquet.close()
        wall = time.perf_counter() - started
        peak = resident()["VmHWM"]
        size = sum(p.stat().st_size for p in path.iterdir())
        rows = pl.scan_parquet(sorted(path.iterdir())).select(pl.len()).collect().item()
    return_free_heap()
    time.sleep(0.5)
    after = resident()
    return {"kind": kind, "rows": rows, "wall_s": wall, "bytes": size,
            "peak_above_mib": peak - before["RssAnon"] - before["RssFile"],
            "anon_after_mib": after["RssAnon"] - before["RssAnon"], "file_after_mib": after["RssFile"] - before["RssFile"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=600_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.records)))
        return
    print(f"{args.records:,} records; per run: wall, peak RSS above the start, resident after closing (anon + library "
          "pages), bytes")
    for _ in range(args.runs):
        for kind in ("polars-sink", "pyarrow"):
            found = json.loads(subprocess.run(
                [sys.executable, __file__, "--child", kind, "--records", str(args.records)], check=True,
                capture_output=True, text=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
            ).stdout.strip().splitlines()[-1])
            print(f"{kind:>12}: {found['wall_s']:5.1f} s, peak +{found['peak_above_mib']:.0f} MiB, after "
                  f"+{found['anon_after_mib']:.0f} anon +{found['file_after_mib']:.0f} file MiB, "
                  f"{found['bytes'] / 2**20:.1f} MiB in {found['rows']:,} rows", flush=True)


if __name__ == "__main__":
    main()
