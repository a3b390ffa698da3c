"""Measure the default test suite (the README's ``python -m pytest``) and rewrite the measured section of
docs/testing.md (issue #60): wall time, counts, the load average before and after, and the 20 slowest tests.

    python scripts/test_durations.py                 # runs python -m pytest --junitxml=... (what .ci/run runs)
    python scripts/test_durations.py --junit run.xml --wall 512 --load "1.2 -> 2.9"   # a run made already

A test's seconds are the junit XML's (setup, call and teardown together; a fixture made once per worker is counted
in the first test that asks for it). Nothing is written by hand: the section between the two markers is replaced.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "testing.md"
START, END = "<!-- test-durations: start (scripts/test_durations.py writes this section) -->", "<!-- test-durations: end -->"
SLOWEST = 20


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def run_suite(junit: Path) -> tuple[float, str, int]:
    """Runs the README's command with a junit XML beside it: (wall seconds, load averages before -> after, exit)."""
    before = load_average()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", f"--junitxml={junit}", "-q"], cwd=REPO)
    return time.monotonic() - started, f"{before} -> {load_average()}", done.returncode


def summary(junit: Path) -> tuple[dict[str, int], list[tuple[float, str, bool]]]:
    """Counts (passed, failed, skipped) and every test as (seconds, node id, marked slow) from a junit XML."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    tests = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = ("failed" if case.find("failure") is not None or case.find("error") is not None
                   else "skipped" if case.find("skipped") is not None else "passed")
        counts[outcome] += 1
        path = case.get("classname", "").replace(".", "/") + ".py"
        tests.append((float(case.get("time", 0)), f"{path}::{case.get('name')}", False))
    return counts, sorted(tests, reverse=True)


def section(wall: float, load: str, counts: dict[str, int], tests: list, when: str) -> str:
    rows = "\n".join(f"| {seconds:.1f} | `{node}` |" for seconds, node, _ in tests[:SLOWEST])
    return (f"{START}\n"
            f"Measured {when} on {os.cpu_count()} cores, load average (1, 5, 15 min) {load}: `python -m pytest` took "
            f"{wall:.0f} s wall ({wall / 60:.1f} min); {counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['skipped']} skipped. The {SLOWEST} slowest tests (seconds: setup, call and teardown):\n\n"
            f"| s | test |\n|---:|---|\n{rows}\n{END}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--junit", type=Path, help="a junit XML of a run made already (with --wall and --load)")
    parser.add_argument("--wall", type=float, help="that run's wall seconds")
    parser.add_argument("--load", help="that run's load averages, as written in the page")
    parser.add_argument("--when", help="that run's date (default: now, UTC)")
    args = parser.parse_args()
    if args.junit:
        if args.wall is None or not args.load:
            parser.error("--junit needs --wall and --load")
        wall, load, code, junit = args.wall, args.load, 0, args.junit
    else:
        junit = Path(tempfile.mkdtemp()) / "junit.xml"
        wall, load, code = run_suite(junit)
    when = args.when or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    counts, tests = summary(junit)
    text = PAGE.read_text(encoding="utf-8")
    if START not in text or END not in text:
        sys.exit(f"{PAGE}: the markers of the measured section are missing")
    head, rest = text.split(START, 1)
    PAGE.write_text(head + section(wall, load, counts, tests, when) + rest.split(END, 1)[1], encoding="utf-8")
    print(f"{PAGE.relative_to(REPO)}: {wall:.0f} s wall, {counts}")
    sys.exit(code)


if __name__ == "__main__":
    main()
