"""``culturebench diff`` of the real WorldValuesBench release against a rebuild without one country (issue #53):
wall, CPU and peak memory of the whole process, side by side with ``culturebench validate`` of the same rebuild.

    python bench/release_diff.py [--runs N] [--drop NZL] [--keep DIR [--reuse]]
    python bench/release_diff.py --tiny          # the bundled sample raw/wvs (seconds; what tests run)

OLD is built from the 56 real WVS-7 v5.0 country files in ../shared/reference/WVS7 (symlinked into a temp folder,
never copied; 72,184 respondents, about 16.4 million answers), NEW from the same folder without ``--drop``'s file.
With ``--tiny`` both come from the bundled synthetic sample raw/wvs, NEW without the rows of its first country.
Both releases are built first (``culturebench build wvb``, not timed). Then, alternating, ``--runs`` times each as
whole processes (console script: interpreter start and imports counted):

- diff: ``culturebench diff OLD NEW --out TMP/diff``;
- reference: ``culturebench validate NEW`` (reads and checks one release: the cost of reading a release once).

Per run: wall seconds, user+system CPU seconds, max RSS (wait4) and tree RSS (process and its children, sampled
every 10 ms), as ``bench/wvb_build.py`` measures them; then the diff's answer (rows removed from examples and
participants, groups removed from the score input) and whether the medians meet issue #53's targets (diff under
30 s wall and 2 GB peak memory on the real release). The temp folder is removed unless ``--keep``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wvb_build import CODEBOOK_PDF, COUNTRY_FILES, checkout_env, culturebench_command, measure  # noqa: E402

SAMPLE_WVS = Path(__file__).resolve().parents[1] / "raw" / "wvs"
TARGET_WALL_S = 30.0
TARGET_RSS_MB = 2048.0


def real_raw(tmp: Path, drop: str) -> tuple[Path, Path]:
    """OLD's and NEW's raw folders: symlinks to every real country file (NEW without ``drop``) and the codebook."""
    files = sorted(COUNTRY_FILES.glob("*.csv.gz"))
    if not files or not CODEBOOK_PDF.is_file():
        sys.exit(f"the real WVS-7 country files or codebook PDF are missing under {COUNTRY_FILES.parents[3]}")
    if not any(f.name == f"{drop}.csv.gz" for f in files):
        sys.exit(f"--drop {drop}: no {drop}.csv.gz among the country files")
    folders = []
    for side in ("old", "new"):
        wvs = tmp / f"raw_{side}" / "wvs"
        wvs.mkdir(parents=True)
        for path in [*files, CODEBOOK_PDF]:
            if not (side == "new" and path.name == f"{drop}.csv.gz"):
                (wvs / path.name).symlink_to(path)
        folders.append(wvs.parent)
    return folders[0], folders[1]


def tiny_raw(tmp: Path) -> tuple[Path, str]:
    """NEW's raw folder from the bundled sample without the rows of its first country (OLD is the bundled one)."""
    wvs = tmp / "raw_new" / "wvs"
    shutil.copytree(SAMPLE_WVS, wvs)
    dropped = None
    for path in sorted(wvs.glob("*.csv*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header, rows = next(reader), list(reader)
        column = header.index("B_COUNTRY")
        dropped = dropped or rows[0][column]
        with opener(path, "wt", encoding="utf-8", newline="") as handle:
            csv.writer(handle, lineterminator="\n").writerows([header, *[r for r in rows if r[column] != dropped]])
    return wvs.parent, str(dropped)


def warm_codebook_cache(pdf: Path) -> None:
    """Parse the codebook PDF once into the home cache (``raw.codebook_files.load_codebook``), with this checkout's
    culturebench, before the two builds."""
    sys.path.insert(0, checkout_env()["PYTHONPATH"].split(os.pathsep)[0])
    from culturebench.raw.codebook_files import load_codebook

    load_codebook(pdf, cache_dir=Path.home() / ".cache" / "culturebench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs of each program, alternating (default 1)")
    parser.add_argument("--drop", default="NZL", help="the country file NEW lacks (default NZL)")
    parser.add_argument("--tiny", action="store_true", help="the bundled sample raw/wvs instead of the real files")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="build and diff in DIR and keep it")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep: use the releases DIR/old/wvb and DIR/new/wvb an earlier run built")
    args = parser.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="diff-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    command, env = culturebench_command(), checkout_env()
    try:
        if args.reuse and args.keep:
            dropped = "(reused)"
        elif args.tiny:
            old_raw = SAMPLE_WVS.parent
            new_raw, dropped = tiny_raw(tmp)
        else:
            warm_codebook_cache(CODEBOOK_PDF)  # both builds then read the parse from the cache: the diff is measured
            (old_raw, new_raw), dropped = real_raw(tmp, args.drop), args.drop
        for side, raw in () if args.reuse and args.keep else (("old", old_raw), ("new", new_raw)):
            built = measure(command + ["build", "wvb", "--raw", str(raw), "--out", str(tmp / side)], tmp, env)
            print(f"built {side} ({'without ' + dropped if side == 'new' else 'every country'}): "
                  f"{built['wall']:.1f} s, tree RSS {built['tree_rss']:.0f} MB", flush=True)
        old, new = tmp / "old" / "wvb", tmp / "new" / "wvb"
        rows = sum(o["rows"] for o in json.loads((old / "manifest.json").read_text())["outputs"]
                   if o.get("config") == "examples")
        print(f"OLD: {rows:,} answers (examples); {os.cpu_count()} CPUs; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        programs = {"diff": command + ["diff", str(old), str(new), "--out", str(tmp / "diff")],
                    "reference": command + ["validate", str(new)]}
        print(f"{'run':<5}{'program':<11}{'wall s':>8}{'CPU s':>8}{'max RSS MB':>12}{'tree RSS MB':>13}{'load':>6}")
        results: dict[str, list[dict]] = {name: [] for name in programs}
        for run in range(1, args.runs + 1):
            for name in (list(programs) if run % 2 else list(reversed(programs))):
                result = measure(programs[name], tmp, env)
                results[name].append(result)
                print(f"{run:<5}{name:<11}{result['wall']:>8.2f}{result['cpu']:>8.2f}{result['max_rss']:>12.0f}"
                      f"{result['tree_rss']:>13.0f}{os.getloadavg()[0]:>6.2f}", flush=True)
        found = json.loads((tmp / "diff" / "diff.json").read_text())
        removed = {f"{t['config']}/{t['split']}": t["removed"] for t in found["tables"] if t.get("removed")}
        scores = found["score_inputs"]["answers per question and country"]
        print(f"diff: rows removed {removed}; answers per question and country: {scores['groups_removed']} groups "
              f"removed, {scores['groups_distribution_changed']} changed")
        wall = statistics.median(r["wall"] for r in results["diff"])
        rss = statistics.median(r["tree_rss"] for r in results["diff"])
        reference = statistics.median(r["wall"] for r in results["reference"])
        verdict = "meets" if wall < TARGET_WALL_S and rss < TARGET_RSS_MB else "misses"
        print(f"median diff {wall:.2f} s, tree RSS {rss:.0f} MB ({wall / reference:.2f}x validate's wall); "
              f"{verdict} issue #53's target (< {TARGET_WALL_S:.0f} s, < {TARGET_RSS_MB:.0f} MB)")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
