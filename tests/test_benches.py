"""Every ``bench/`` script still runs (issue #50): each one in its smallest form (a tiny size, one run, no vLLM
where it needs none), as a whole process, so that a change of the code it drives cannot break a bench unseen (as
``bench/vllm_overhead.py`` was broken by the contract's redesign). The figures they print are not checked here:
a bench compares its programs side by side in one run, which a smoke run is too small to mean anything for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"

SMALLEST = {
    "build_all.py": (["--runs", "1"], "this checkout: median wall"),
    "eval_overhead.py": (["--requests", "16", "--latency", "0.01", "--concurrency", "4", "--runs", "1",
                          "--no-floors"], "concurrency 4: wall"),
    "eval_scale.py": (["--sizes", "40", "--concurrency", "4"], "40 requests: peak RSS median"),
    "release_diff.py": (["--tiny"], "median diff"),
    "responses_writer.py": (["--records", "2000", "--runs", "1"], "polars-sink:"),
    "vllm_overhead.py": (["--plan-only", "--limit", "3"], "requests, max_tokens 32, temperature 0 (--plan-only)"),
    "wvb_build.py": (["--smoke"], "1x: cold wall"),
    "wvb_countries.py": (["{wvb}", "--samples", "1"], "max |score - reference|"),
    "wvb_reference_points.py": (["{wvb}", "--samples", "2", "--resamples", "20", "--reference-resamples", "5"],
                                "largest difference: baselines"),
}
"""Each bench script: the arguments of its smallest form and a line its output must hold; ``{wvb}`` stands for the
bundled sample's WVB release."""

def test_every_bench_script_has_a_smallest_form():
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted(SMALLEST)


SLOW = {"build_all.py", "eval_scale.py", "release_diff.py", "vllm_overhead.py", "wvb_reference_points.py"}
"""The scripts whose smallest form takes 15 s or more on a loaded 2-core machine: five builds (build_all.py), an
evaluate process per size (eval_scale.py), two WVB builds, a diff and a validate (release_diff.py), the plan of a
vLLM run in a whole process (vllm_overhead.py), our reference points beside the pandas/scipy loop over every country
pair (wvb_reference_points.py)."""


@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW else s
                                    for s in sorted(SMALLEST)])
def test_bench_runs_in_its_smallest_form(script, tmp_path, bundled_release, request):
    """Slow for the scripts in SLOW (the whole processes they start). release_diff.py runs once per pytest run with
    ``--keep`` (``release_diff_tiny``), shared with tests/test_release_diff.py."""
    args, expected = SMALLEST[script]
    if script == "release_diff.py":
        done = request.getfixturevalue("release_diff_tiny")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        assert expected in done.stdout, done.stdout[-2000:]
        return
    args = [str(bundled_release("wvb")) if arg == "{wvb}" else arg for arg in args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert expected in done.stdout, done.stdout[-2000:]
