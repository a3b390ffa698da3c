"""WorldValuesBench build side by side with the paper's own pipeline, cold and warm: wall, CPU and peak memory.

    python bench/wvb_build.py [--runs N] [--seed N] [--scales 1,4] [--modes cold,warm] [--skip-reference]
                              [--keep DIR] [--files N] [--smoke]

Both programs get the same input, one CSV per scale made in a temp folder from the 56 real WVS-7 v5.0 country
files in ../shared/reference/WVS7 (never copied into the repository), beside the real codebook PDF:

- 1x: the 56 files as one CSV (72,184 x 607, ~145 MB);
- 4x: the same rows written four times, copy k (0-3) with D_INTERVIEW shifted by k * 200,000 (the WVS country
  code is D_INTERVIEW // 1,000,000 and every wave-7 suffix is below 80,000, so each copy keeps its country and
  gets new, unique IDs): about the size of the WVS 1981-2022 time series (issue #31).

Per scale the programs run as separate processes, in turn (the order rotates from run to run), ``--runs`` times
each:

- reference: the paper's ``data_preparation.py`` (pandas + scikit-learn), run from a temp copy of its folder
  ../shared/reference/WorldValuesBench/dataset_construction (it writes ../WorldValuesBench beside itself; it reads
  no PDF: its question list is a hand-made JSON);
- cold: ``culturebench build wvb --raw TMP/raw --out TMP/releases`` (the console script, so interpreter start,
  imports and every check are counted) with HOME a new empty folder for every run, so that the codebook cache
  (~/.cache/culturebench) and every other cache under HOME are empty: a maintainer's first build on a fresh
  machine, or any build in a clean CI container, which parses the codebook PDF;
- warm: the same command with a HOME that one untimed build has filled (the codebook comes from the cache, as on
  any second build).

Each program's environment has no XDG_CACHE_HOME, HF_HOME, CULTUREBENCH_CACHE or MPLCONFIGDIR (they would point
the caches outside HOME); the reference gets a new empty HOME per run too. Per run it prints wall seconds (fork to
wait4), user+system CPU seconds and peak memory two ways: ``max RSS``, the largest single process as
/usr/bin/time reports it (wait4's ru_maxrss covers the process and its waited-for children), and ``tree RSS``, the
largest sum of the RSS of the process and all its descendants, sampled from /proc every 10 ms (culturebench runs
Great Expectations and the codebook's page readers in processes of their own; those count too), and for
culturebench a sha256 over the release's parquet files (equal across runs and modes = byte-identical output).
Then per scale the ratios reference / culturebench of the medians, cold and warm. The temp folder is removed at
the end unless ``--keep``. The machine's other load makes single runs noisy: compare only numbers from one
invocation.

``--smoke`` is the smallest form (a test runs it): one cold build of the bundled sample raw/ (its codebook is a
JSON, so there is no PDF to parse and nothing for a warm build to find), no reference; it checks that the bench
runs, not the speed.
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


COPY_ID_SHIFT = 200_000  # added to D_INTERVIEW per copy; stays below the 1,000,000 that separates countries


def one_csv(files: list[Path], target: Path, copies: int = 1) -> int:
    """Concatenate gzip'd CSVs with the same header into one CSV (header once), ``copies`` times, copy k with
    D_INTERVIEW + k * COPY_ID_SHIFT; returns the data rows."""
    rows = 0
    with target.open("wb") as out:
        for copy in range(copies):
            for index, path in enumerate(files):
                with gzip.open(path, "rb") as handle:
                    header = handle.readline()
                    if copy == 0 and index == 0:
                        out.write(header)
                    column = header.rstrip(b"\r\n").split(b",").index(b"D_INTERVIEW")
                    for line in handle:
                        if copy:
                            fields = line.split(b",", column + 1)
                            interview = int(fields[column])
                            if interview % 1_000_000 >= COPY_ID_SHIFT:
                                sys.exit(f"{path.name}: D_INTERVIEW {interview} leaves no room for shifted copies")
                            fields[column] = str(interview + copy * COPY_ID_SHIFT).encode()
                            line = b",".join(fields)
                        out.write(line)
                        rows += 1
    return rows


def tree_rss_kb(root: int) -> int:
    """Sum of VmRSS of ``root`` and all its descendants (0 for a process that is gone). A child whose command line
    is still its parent's has been forked but has not yet exec'd its program (``subprocess`` forks the 350 MB build
    to start ``git`` or a worker): it shares the parent's memory and is not counted twice."""
    total, stack = 0, [(root, b"")]
    while stack:
        pid, parent_command = stack.pop()
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if command != parent_command:
                status = Path(f"/proc/{pid}/status").read_text()
                total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
            for task in Path(f"/proc/{pid}/task").iterdir():
                stack += [(int(child), command) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def measure(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict:
    """Run ``command`` to completion: wall s, CPU s, max RSS MB (wait4) and sampled peak tree RSS MB."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


def checkout_env(source: Path = Path(__file__).resolve().parents[1] / "src") -> dict[str, str]:
    """The environment with ``source`` (default: this checkout's src/) first on PYTHONPATH (absolute: the build runs
    in the temp folder, where a relative ``PYTHONPATH=src`` would silently import another installed culturebench)."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])))


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


CACHE_VARIABLES = ("XDG_CACHE_HOME", "HF_HOME", "CULTUREBENCH_CACHE", "MPLCONFIGDIR")


def home_env(home: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with HOME = ``home`` (made here) and no variable that moves a
    cache out of HOME."""
    home.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in (base or os.environ).items() if key not in CACHE_VARIABLES}
    return dict(env, HOME=str(home))


def summary(scale: int, results: dict[str, list[dict]]) -> str:
    """One line per scale: each culturebench mode's median wall and tree RSS, whether its parquet was identical,
    and its ratios to the reference's medians."""
    median = {name: {key: statistics.median(r[key] for r in runs) for key in ("wall", "cpu", "max_rss", "tree_rss")}
              for name, runs in results.items()}
    digests = {r["digest"] for name, runs in results.items() if name != "reference" for r in runs}
    builds = sum(len(runs) for name, runs in results.items() if name != "reference")
    identical = ("one build, nothing to compare" if builds == 1 else
                 f"byte-identical over {builds} builds" if len(digests) == 1 else f"DIFFERENT ({len(digests)} digests)")
    parts = []
    for mode in (name for name in results if name != "reference"):
        ours = median[mode]
        part = f"{mode} wall {ours['wall']:.2f} s, CPU {ours['cpu']:.2f} s, tree RSS {ours['tree_rss']:.0f} MB"
        if "reference" in median:
            ref = median["reference"]
            part += (f" (reference / {mode}: wall {ref['wall'] / ours['wall']:.1f}x, CPU {ref['cpu'] / ours['cpu']:.1f}x;"
                     f" {mode} / reference: max RSS {ours['max_rss'] / ref['max_rss']:.2f}, tree RSS "
                     f"{ours['tree_rss'] / ref['tree_rss']:.2f})")
        parts.append(part)
    if "reference" in median:
        ref = median["reference"]
        parts.insert(0, f"reference wall {ref['wall']:.2f} s, CPU {ref['cpu']:.2f} s, tree RSS {ref['tree_rss']:.0f} MB")
    return f"{scale}x: " + "; ".join(parts) + f"; parquet {identical}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="See the module docstring (head -45 bench/wvb_build.py) for what is measured.")
    parser.add_argument("--runs", type=int, default=1, help="runs of each program, in turn (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="culturebench build --seed (default 0)")
    parser.add_argument("--scales", default="1,4",
                        help="comma-separated copies of the 56 files to measure (default 1,4)")
    parser.add_argument("--modes", default="cold,warm",
                        help="culturebench's modes: cold (empty HOME, the PDF parsed), warm (cache filled); default both")
    parser.add_argument("--skip-reference", action="store_true", help="time culturebench only (no ratio)")
    parser.add_argument("--files", type=int, default=None, metavar="N",
                        help="only the first N country files (default all 56; 1: the smallest form, a smoke run)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the last culturebench release in DIR (default: everything is removed)")
    parser.add_argument("--smoke", action="store_true",
                        help="smallest form: one cold build of the bundled sample raw/, no reference")
    args = parser.parse_args()
    modes = ["cold"] if args.smoke else [mode for mode in args.modes.split(",") if mode]
    if not modes or set(modes) - {"cold", "warm"}:
        sys.exit(f"--modes takes cold and/or warm, not {args.modes!r}")
    scales = [1] if args.smoke else sorted({int(scale) for scale in args.scales.split(",")})
    files = sorted(COUNTRY_FILES.glob("*.csv.gz"))[:args.files]
    if not args.smoke and (not files or not CODEBOOK_PDF.is_file()
                           or not (REFERENCE_SCRIPT_DIR / "data_preparation.py").is_file()):
        sys.exit(f"the real WVS-7 files, codebook PDF or reference script are missing under {SHARED} (--smoke runs "
                 "on the bundled sample)")
    runs = 1 if args.smoke else args.runs

    tmp = Path(tempfile.mkdtemp(prefix="wvb-bench-"))
    try:
        print(f"{os.cpu_count()} CPUs; load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'scale':<6}{'run':<5}{'program':<14}{'wall s':>8}{'CPU s':>8}{'max RSS MB':>12}{'tree RSS MB':>13}"
              f"{'load':>6}  parquet sha256")
        results: dict[int, dict[str, list[dict]]] = {}
        for scale in scales:
            if args.smoke:
                raw = Path(__file__).resolve().parents[1] / "raw"
                print("smoke: one cold build of the bundled sample raw/ (codebook JSON, no PDF to parse), no reference",
                      flush=True)
            else:
                wvs = tmp / f"{scale}x" / "raw" / "wvs"
                wvs.mkdir(parents=True)
                rows = one_csv(files, wvs / CSV_NAME, copies=scale)
                (wvs / CODEBOOK_PDF.name).symlink_to(CODEBOOK_PDF)
                raw = wvs.parent
                print(f"{scale}x input: one CSV of {scale} x {len(files)} country files, {rows:,} rows, "
                      f"{(wvs / CSV_NAME).stat().st_size / 1e6:.0f} MB, and the codebook PDF", flush=True)
            releases = tmp / f"{scale}x" / "releases"
            build = culturebench_command() + ["build", "wvb", "--raw", str(raw), "--out", str(releases),
                                              "--seed", str(args.seed)]
            homes = tmp / f"{scale}x" / "homes"
            programs = {}
            if "cold" in modes:
                programs["cold"] = lambda run: (build, tmp, home_env(homes / f"cold-{run}", checkout_env()))
            if "warm" in modes:
                warm_env = home_env(homes / "warm", checkout_env())
                measure(build, tmp, warm_env)  # untimed: fills the warm HOME's caches
                programs["warm"] = lambda run: (build, tmp, warm_env)
            if not (args.skip_reference or args.smoke):
                reference = tmp / f"{scale}x" / "reference" / "dataset_construction"
                shutil.copytree(REFERENCE_SCRIPT_DIR, reference)
                command = [sys.executable, "data_preparation.py", "--raw-dataset-path", str(raw / "wvs" / CSV_NAME)]
                programs["reference"] = lambda run: (command, reference, home_env(homes / f"reference-{run}"))
            results[scale] = {name: [] for name in programs}
            names = list(programs)
            for run in range(1, runs + 1):
                shift = (run - 1) % len(names)
                for name in names[shift:] + names[:shift]:
                    result = measure(*programs[name](run))
                    result["digest"] = parquet_digest(releases / "wvb") if name != "reference" else ""
                    results[scale][name].append(result)
                    print(f"{scale}x{'':<4}{run:<5}{name:<14}{result['wall']:>8.2f}{result['cpu']:>8.2f}"
                          f"{result['max_rss']:>12.0f}{result['tree_rss']:>13.0f}{os.getloadavg()[0]:>6.2f}  "
                          f"{result['digest'][:16]}", flush=True)
            if args.keep and scale == scales[-1]:
                shutil.rmtree(args.keep, ignore_errors=True)
                shutil.copytree(releases / "wvb", args.keep)
            shutil.rmtree(tmp / f"{scale}x", ignore_errors=True)
        print(f"medians over {runs} run(s)")
        for scale, programs_results in results.items():
            print(summary(scale, programs_results))
        print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
