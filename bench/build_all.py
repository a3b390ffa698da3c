"""``culturebench build all`` on the bundled sample, this checkout side by side with another commit: wall, CPU, RSS.

    python bench/build_all.py [--runs N] [--against REF]

Each run is a whole process, ``python -m culturebench.cli build all --raw RAW --out TMP/...``, with this checkout's
``raw/`` as input for both programs, so interpreter start, imports, the Great Expectations worker and every check
are counted. With ``--against REF`` (a commit, branch or tag) a detached ``git worktree`` of REF is made in the temp
folder and its ``src/`` is put first on PYTHONPATH; the two programs then alternate, ``--runs`` times each, so that
they share the machine's load. Per run it prints wall seconds, user+system CPU seconds, max RSS and peak tree RSS
(the build and its GX worker, as ``bench/wvb_build.py`` measures them) and a digest of the releases' parquet files
(equal = byte-identical data); then the medians and the ratio REF / this checkout. Issue #31 asks for under 5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from wvb_build import checkout_env, measure, parquet_digest

CHECKOUT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each program, alternating (default 3)")
    parser.add_argument("--against", metavar="REF", help="a git commit to time side by side (default: none)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="culturebench-build-all-") as temp:
        temp = Path(temp)
        programs = {"this checkout": checkout_env(CHECKOUT / "src")}
        if args.against:
            subprocess.run(["git", "-C", str(CHECKOUT), "worktree", "add", "--quiet", "--detach", str(temp / "ref"),
                            args.against], check=True)
            programs[args.against] = checkout_env(temp / "ref" / "src")
        try:
            print(f"{os.cpu_count()} CPUs; load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print(f"{'run':<5}{'program':<16}{'wall s':>8}{'CPU s':>8}{'max RSS MB':>12}{'tree RSS MB':>13}  parquet")
            results: dict[str, list[dict]] = {name: [] for name in programs}
            for run in range(1, args.runs + 1):
                for name, env in programs.items():
                    out = temp / f"releases-{len(results[name])}-{name.replace('/', '_')}"
                    command = [sys.executable, "-m", "culturebench.cli", "build", "all", "--raw",
                               str(CHECKOUT / "raw"), "--out", str(out)]
                    result = measure(command, temp, env) | {"digest": parquet_digest(out)[:16]}
                    results[name].append(result)
                    print(f"{run:<5}{name:<16}{result['wall']:>8.2f}{result['cpu']:>8.2f}{result['max_rss']:>12.0f}"
                          f"{result['tree_rss']:>13.0f}  {result['digest']}")
            median = {name: {key: statistics.median(r[key] for r in runs) for key in ("wall", "cpu", "tree_rss")}
                      for name, runs in results.items()}
            for name, value in median.items():
                digests = {r["digest"] for r in results[name]}
                print(f"{name}: median wall {value['wall']:.2f} s, CPU {value['cpu']:.2f} s, tree RSS "
                      f"{value['tree_rss']:.0f} MB; parquet {'identical' if len(digests) == 1 else 'DIFFERS'} "
                      "across runs")
            if args.against:
                ours, ref = median["this checkout"], median[args.against]
                same = {r["digest"] for runs in results.values() for r in runs}
                print(f"ratio {args.against} / this checkout: wall {ref['wall'] / ours['wall']:.2f}x, CPU "
                      f"{ref['cpu'] / ours['cpu']:.2f}x; parquet {'identical' if len(same) == 1 else 'DIFFERS'} "
                      "between the two")
            print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            if args.against:
                subprocess.run(["git", "-C", str(CHECKOUT), "worktree", "remove", "--force", str(temp / "ref")],
                               check=False)


if __name__ == "__main__":
    main()
