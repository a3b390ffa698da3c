"""WorldValuesBench build side by side with the paper's own pipeline: whole-process wall time and peak memory.

    python bench/wvb_build.py [--runs N] [--seed N] [--skip-reference] [--keep DIR]

Both programs get the same input, one CSV of the 56 real WVS-7 v5.0 country files (72,184 x 607, ~145 MB),
made in a temp folder from ../shared/reference/WVS7 (never copied into the repository), and run as separate
processes, alternating, ``--runs`` times each:

- reference: the paper's ``data_preparation.py`` (pandas + scikit-learn), run from a temp copy of its folder
  ../shared/reference/WorldValuesBench/dataset_construction (it writes ../WorldValuesBench beside itself);
- culturebench: ``culturebench build wvb --raw TMP/raw --out TMP/releases`` (the console script, so interpreter
  start, imports and every check are counted; the codebook PDF is parsed once before timing and then comes from
  culturebench's cache, as on any second build).

Per run it prints wall seconds (fork to wait4), user+system CPU seconds and peak memory two ways: ``max RSS``,
the largest single process as /usr/bin/time reports it (wait4's ru_maxrss covers the process and its waited-for
children), and ``tree RSS``, the largest sum of the RSS of the process and all its descendants, sampled from
/proc every 10 ms (culturebench runs Great Expectations in a second process; that one counts too). Then the
ratios reference / culturebench of the medians. The temp folder is removed at the end unless ``--keep``.
The machine's other load makes single runs noisy: compare only numbers from one invocation.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference"
COUNTRY_FILES = SHARED / "WVS7" / "DataSpi_spy-playground" / "wvs_7" / "data" / "processed"
CODEBOOK_PDF = SHARED / "WVS7" / "snag18_World-Values-Survey-Data-Analysis" / "F00011055-WVS7_Codebook_Variables_report_V6.0.pdf"
REFERENCE_SCRIPT_DIR = SHARED / "WorldValuesBench" / "dataset_construction"
CSV_NAME = "WVS_Cross-National_Wave_7_csv_v5_0.csv"


def one_csv(files: list[Path], target: Path) -> int:
    """Concatenate gzip'd CSVs with the same header into one CSV (header once); returns the data rows."""
    rows = 0
    with target.open("wb") as out:
        for index, path in enumerate(files):
            with gzip.open(path, "rb") as handle:
                header = handle.readline()
                if index == 0:
                    out.write(header)
                for line in handle:
                    out.write(line)
                    rows += 1
    return rows


def tree_rss_kb(root: int) -> int:
    """Sum of VmRSS of ``root`` and all its descendants (0 for a process that is gone)."""
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
            for task in Path(f"/proc/{pid}/task").iterdir():
                stack += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def measure(command: list[str], cwd: Path) -> dict:
    """Run ``command`` to completion: wall s, CPU s, max RSS MB (wait4) and sampled peak tree RSS MB."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            peak[0] = max(peak[0], tree_rss_kb(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr.decode(errors='replace')[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "max_rss": usage.ru_maxrss / 1024,
            "tree_rss": peak[0] / 1024}


def culturebench_command() -> list[str]:
    script = Path(sys.executable).with_name("culturebench")
    if script.is_file():
        return [str(script)]
    found = shutil.which("culturebench")
    return [found] if found else [sys.executable, "-c", "from culturebench.cli import app; app()"]


def parquet_digest(release: Path) -> str:
    """One sha256 over every parquet file of a release (paths and bytes): equal digests = byte-identical data."""
    digest = hashlib.sha256()
    for path in sorted(release.rglob("*.parquet")):
        digest.update(path.relative_to(release).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def warm_codebook_cache(pdf: Path) -> None:
    from culturebench.raw.codebook import load_codebook

    load_codebook(pdf, cache_dir=Path.home() / ".cache" / "culturebench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="See the module docstring (head -30 bench/wvb_build.py) for what is measured.")
    parser.add_argument("--runs", type=int, default=1, help="runs of each program, alternating (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="culturebench build --seed (default 0)")
    parser.add_argument("--skip-reference", action="store_true", help="time culturebench only (no ratio)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the last culturebench release in DIR (default: everything is removed)")
    args = parser.parse_args()
    files = sorted(COUNTRY_FILES.glob("*.csv.gz"))
    if not files or not CODEBOOK_PDF.is_file() or not (REFERENCE_SCRIPT_DIR / "data_preparation.py").is_file():
        sys.exit(f"the real WVS-7 files, codebook PDF or reference script are missing under {SHARED}")

    tmp = Path(tempfile.mkdtemp(prefix="wvb-bench-"))
    try:
        wvs = tmp / "raw" / "wvs"
        wvs.mkdir(parents=True)
        rows = one_csv(files, wvs / CSV_NAME)
        (wvs / CODEBOOK_PDF.name).symlink_to(CODEBOOK_PDF)
        warm_codebook_cache(CODEBOOK_PDF)
        reference = tmp / "reference" / "dataset_construction"
        shutil.copytree(REFERENCE_SCRIPT_DIR, reference)
        programs = {"culturebench": (culturebench_command() + ["build", "wvb", "--raw", str(tmp / "raw"),
                                                              "--out", str(tmp / "releases"), "--seed", str(args.seed)],
                                     tmp)}
        if not args.skip_reference:
            programs["reference"] = ([sys.executable, "data_preparation.py", "--raw-dataset-path", str(wvs / CSV_NAME)],
                                     reference)
        print(f"input: one CSV of {len(files)} country files, {rows:,} rows, "
              f"{(wvs / CSV_NAME).stat().st_size / 1e6:.0f} MB; {os.cpu_count()} CPUs; load average "
              f"{os.getloadavg()[0]:.1f}")
        print(f"{'run':<5}{'program':<14}{'wall s':>8}{'CPU s':>8}{'max RSS MB':>12}{'tree RSS MB':>13}")
        results: dict[str, list[dict]] = {name: [] for name in programs}
        for run in range(1, args.runs + 1):
            order = list(programs) if run % 2 else list(reversed(programs))
            for name in order:
                command, cwd = programs[name]
                result = measure(command, cwd)
                results[name].append(result)
                print(f"{run:<5}{name:<14}{result['wall']:>8.2f}{result['cpu']:>8.2f}{result['max_rss']:>12.0f}"
                      f"{result['tree_rss']:>13.0f}", flush=True)
        print(f"culturebench parquet digest: {parquet_digest(tmp / 'releases' / 'wvb')}")
        median = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0]} for name, runs in results.items()}
        if "reference" in median:
            ours, ref = median["culturebench"], median["reference"]
            print(f"medians over {args.runs} run(s): reference / culturebench = wall {ref['wall'] / ours['wall']:.1f}x, "
                  f"CPU {ref['cpu'] / ours['cpu']:.1f}x; memory culturebench / reference = max RSS "
                  f"{ours['max_rss'] / ref['max_rss']:.2f}, tree RSS {ours['tree_rss'] / ref['tree_rss']:.2f}")
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(tmp / "releases" / "wvb", args.keep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
