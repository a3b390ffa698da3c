"""``evaluate wvb`` at scale: requests, wall time, peak RSS and bytes written at several sizes, beside the raw asyncio
floor of ``bench/eval_overhead.py`` (its ``floor_run``) sending as many requests of the same size.

    python bench/eval_scale.py [--sizes 20000 100000 600000] [--runs 1] [--concurrency 64] [--keep DIR]

A synthetic WVB release is made in a temp folder: the bundled sample (REPO/raw) is built, then its test split is
repeated with fresh participant ids (participants copied with them, each copy's country text marked so that its
prompts are its own) until it holds the largest size; each size is
``evaluate(split="test", limit=N)`` with demographics (``--limit`` spreads N rows over the questions, as on the
command line), with a fresh run folder, against the asyncio server of ``tests/scripted_server.py`` with
no latency, answering a number 1-4 drawn from each prompt (``--reply digit``: the answers parse, so the W1 metrics
and their bootstrap have rows to work on; the model answers at once: what is measured is the harness). Every
measurement runs in a process of its own, started from this one (importing ``culturebench.cli`` first, as the
command line does: it sets polars' allocator), and reports its own peak RSS (``VmHWM`` of /proc/self/status:
interpreter, imports, release reading, requests, cache, responses file and metrics with the bootstrap intervals).
Not wait4's ``ru_maxrss``: a child started by vfork + exec inherits its parent's high-water mark there, so every
child would report at least this process's RSS after making the release (until 2026-11-27 the figures did);
``wall s`` is the whole ``evaluate`` (scoring and plots too), ``runner s`` and ``req/s`` the runner's part (the
requests; ``queried``: those sent, the others repeats of an identical prompt). The floor sends N copies of the
run's first request bodies (cycled) through ``floor_run(client="asyncio")``: one keep-alive HTTP/1.1
connection per slot, nothing else. The machine is shared: compare only figures of one invocation.

A run's peak RSS varies from run to run by tens of MiB (polars' allocator returns freed pages on a timer, so what a
phase finds still held depends on timing): ``--runs N`` runs each size's ``evaluate`` (and its floor) N times,
alternating the sizes, and prints each run's figures, then per size the median peak (with the range), which the
last line compares.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from eval_overhead import floor_run, server_process  # noqa: E402  (the floor is measured the same way as there)

ENVIRONMENT = dict(os.environ)
"""The environment this script started with, which every child gets: importing polars here (to make the synthetic
release) sets ``_RJEM_MALLOC_CONF`` in ``os.environ`` to polars' own allocator defaults, and a child inheriting that
would keep them instead of the command line's setting (``culturebench.cli``), as no user's run does (until
2026-11-27 the children inherited it)."""

TEST_SPLIT = "data/examples/test-00000-of-00001.parquet"
TEST_PARTICIPANTS = "data/participants/test-00000-of-00001.parquet"
ID_STRIDE = 10_000_000_000  # participant ids of copy k: the sample's id + k * ID_STRIDE (above any id)


def synthetic_release(folder: Path, rows: int) -> Path:
    """The bundled sample release with its test split repeated (fresh participant ids) to at least ``rows`` rows."""
    import polars as pl

    from culturebench import registry
    from culturebench.release import build_release

    release, _ = build_release(registry.benchmark("wvb"), REPO / "raw", folder / "releases", seed=0, progress=lambda stage: None)
    examples = pl.read_parquet(release / TEST_SPLIT)
    participants = pl.read_parquet(release / TEST_PARTICIPANTS)
    copies = -(-rows // examples.height)
    for path, frame in ((TEST_SPLIT, examples), (TEST_PARTICIPANTS, participants)):
        dtype = frame.schema["participant_id"]
        marked = frame.columns if path == TEST_PARTICIPANTS else []
        pl.concat([frame.with_columns((pl.col("participant_id").cast(pl.Int64) + k * ID_STRIDE).cast(dtype),
                                      *([_marked(k)] if marked and k else []))
                   for k in range(copies)]).write_parquet(release / path)
    return release


def _marked(copy: int):
    """The country of copy ``copy`` with " #copy" appended, so that its prompts differ from the sample's (identical
    prompts would be asked once and the rest answered from the cache)."""
    import polars as pl

    from culturebench.evaluate.wvb.prompts import DEMOGRAPHIC_VARIABLES

    country = DEMOGRAPHIC_VARIABLES[0]
    return pl.concat_str([pl.col(country).fill_null("unknown"), pl.lit(f" #{copy}")]).alias(country)


def folder_bytes(folder: Path) -> dict[str, int]:
    """Bytes on disk of the run folder: the responses (jsonl or shards), the cache, and everything."""
    sizes = {"responses": 0, "cache": 0, "total": 0}
    for path in Path(folder).rglob("*"):
        if path.is_file():
            size = path.stat().st_size
            sizes["total"] += size
            if path.name.startswith("cache.sqlite"):
                sizes["cache"] += size
            elif path.name == "responses.jsonl" or path.parent.name == "responses":
                sizes["responses"] += size
    return sizes


def own_peak_rss_mib() -> float:
    """This process's peak RSS in MiB: VmHWM, the high-water mark of its own memory map (ru_maxrss would include
    its parent's RSS at the vfork that started it)."""
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def child_evaluate(release: Path, out: Path, url: str, limit: int, concurrency: int) -> dict:
    import culturebench.cli  # noqa: F401  (first, as on the command line: it sets polars' allocator)
    from culturebench.evaluate import wvb
    from culturebench.evaluate.models.backends import OpenAIBackend

    backend = OpenAIBackend("scripted-model", base_url=url, concurrency=concurrency)
    started = time.perf_counter()
    result = wvb.evaluate(backend, wvb.WVBOptions(release=release, out=out, split="test", limit=limit), console=None)
    wall = time.perf_counter() - started
    return {"requests": result.stats["n_requests"], "queried": result.stats["n_queried"], "wall_s": wall,
            "runner_s": result.stats["wall_s"], "mean_w1": result.metrics["mean"], "peak_rss_mib": own_peak_rss_mib()}


def child_floor(release: Path, url: str, n: int, concurrency: int) -> dict:
    from culturebench.evaluate import wvb
    from culturebench.evaluate.models.backends import OpenAIBackend

    rows = wvb.evaluation_rows(release, "test", limit=4096)
    questions, participants = wvb.prompt_tables(release, rows["participant_id"])
    backend = OpenAIBackend("scripted-model", base_url=url)
    bodies = [backend._request_body(p.request) for p in wvb.iter_requests(rows, questions, participants)]
    wall, _cpu = floor_run(url, itertools.islice(itertools.cycle(bodies), n), concurrency, "asyncio")
    return {"requests": n, "wall_s": wall, "peak_rss_mib": own_peak_rss_mib()}


def measured(argv: list[str]) -> tuple[dict, float]:
    """Run this script as a child with ``argv``; its JSON line and its own peak RSS in MiB (``own_peak_rss_mib``)."""
    proc = subprocess.Popen([sys.executable, __file__, *argv], stdout=subprocess.PIPE, text=True,
                            env={**ENVIRONMENT, "PYTHONPATH": os.pathsep.join(
                                [str(REPO / "src"), ENVIRONMENT.get("PYTHONPATH", "")])})
    output, _ = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"child {argv[:2]} failed with exit code {proc.returncode}")
    found = json.loads(output.strip().splitlines()[-1])
    return found, found["peak_rss_mib"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000, 600_000])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runs", type=int, default=1, help="evaluate runs per size (medians compared)")
    parser.add_argument("--keep", type=Path, help="keep the synthetic release and run folders here")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, release, url, n = args.child[0], Path(args.child[1]), args.child[2], int(args.child[3])
        found = (child_evaluate(release, Path(args.child[4]), url, n, args.concurrency) if kind == "evaluate"
                 else child_floor(release, url, n, args.concurrency))
        print(json.dumps(found))
        return

    work = Path(tempfile.mkdtemp(prefix="eval_scale-")) if args.keep is None else args.keep
    try:
        started = time.perf_counter()
        release = synthetic_release(work, max(args.sizes))
        print(f"synthetic release {release} ({time.perf_counter() - started:.0f} s to make); "
              f"concurrency {args.concurrency}; load {os.getloadavg()[0]:.2f}")
        print(f"{'requests':>9} {'queried':>9} {'wall s':>8} {'runner s':>8} {'req/s':>7} {'peak RSS MiB':>12} {'responses MB':>12} "
              f"{'cache MB':>9} {'| floor wall s':>14} {'floor req/s':>11} {'floor RSS MiB':>13} {'load':>5}")
        with server_process(0.0, reply="digit") as url:
            peaks: dict[int, list[float]] = {size: [] for size in args.sizes}
            for _ in range(args.runs):
                for size in args.sizes:
                    out = work / f"run-{size}"
                    shutil.rmtree(out, ignore_errors=True)
                    run, rss = measured(["--child", "evaluate", str(release), url, str(size), str(out),
                                         "--concurrency", str(args.concurrency)])
                    floor, floor_rss = measured(["--child", "floor", str(release), url, str(run["requests"]),
                                                 "--concurrency", str(args.concurrency)])
                    sizes = folder_bytes(out)
                    peaks[size].append(rss)
                    print(f"{run['requests']:>9,} {run['queried']:>9,} {run['wall_s']:>8.1f} {run['runner_s']:>8.1f} "
                          f"{run['requests'] / run['runner_s']:>7.0f} "
                          f"{rss:>12.0f} {sizes['responses'] / 1e6:>12.1f} {sizes['cache'] / 1e6:>9.1f} "
                          f"| {floor['wall_s']:>12.1f} {floor['requests'] / floor['wall_s']:>11.0f} {floor_rss:>13.0f} "
                          f"{os.getloadavg()[0]:>5.2f}", flush=True)
                    if args.keep is None:
                        shutil.rmtree(out, ignore_errors=True)
        median = {size: statistics.median(values) for size, values in peaks.items()}
        for size, values in peaks.items():
            print(f"{size:>9,} requests: peak RSS median {median[size]:.0f} MiB over {len(values)} run(s) "
                  f"(range {min(values):.0f}-{max(values):.0f})")
        smallest, largest = min(median), max(median)
        print(f"median peak RSS at {largest:,} requests is {(median[largest] / median[smallest] - 1) * 100:+.1f}% of "
              f"the median at {smallest:,}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
