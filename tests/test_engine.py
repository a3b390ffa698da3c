"""The engine owns the run (issue #50): a Python caller of ``engine.run`` gets what the command line gets,
the run folder held (a second run refused before a model is made, issue #52), a folder of another benchmark
refused, and an interrupted run told how many answers it kept."""

from __future__ import annotations

import json
import sqlite3

import pytest

from culturebench.errors import InputError
from culturebench.evaluate import normad
from culturebench.evaluate.runs import engine
from culturebench.chat import ChatResponse
from culturebench.evaluate.runs.run_lock import hold_run_folder


class Answering:
    """A backend that answers "Yes" to everything, counting what it is asked."""

    name = "answering"

    def __init__(self, stop_after: int | None = None) -> None:
        self.model, self.asked, self.stop_after = "answering-model", 0, stop_after

    def cache_params(self) -> dict:
        return {"backend": self.name, "model": self.model}

    def generate(self, requests, on_response) -> None:
        for index, _ in enumerate(requests):
            if self.stop_after is not None and self.asked >= self.stop_after:
                raise KeyboardInterrupt
            self.asked += 1
            on_response(index, ChatResponse(text="Yes."))


def options(release, out, **more):
    return normad.NormAdOptions(release=release, out=out, limit=4, samples=1, **more)


def test_a_python_caller_is_refused_a_folder_another_run_holds_before_its_backend_is_made(bundled_release, tmp_path):
    made = []

    def factory():
        made.append(True)
        return Answering()

    out = tmp_path / "run"
    with hold_run_folder(out):  # another run holds it (flock: a second descriptor of this process is refused too)
        with pytest.raises(InputError, match="held by another run"):
            engine.run(normad.BENCHMARK, factory, options(bundled_release("normad"), out))
        backend = Answering()
        with pytest.raises(InputError, match="held by another run"):
            engine.run(normad.BENCHMARK, backend, options(bundled_release("normad"), out))
    assert not made and backend.asked == 0
    given = options(bundled_release("normad"), out)
    result = engine.run(normad.BENCHMARK, factory, given)
    assert made == [True]
    assert result.metrics["per_model"]["answering-model"]["n_responses"] == 4 * len(given.contexts)


def test_a_python_caller_is_refused_a_run_folder_of_another_benchmark(bundled_release, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"benchmark": "cdeval"}), encoding="utf-8")
    backend = Answering()
    with pytest.raises(InputError, match="holds a run of 'cdeval', not 'normad'"):
        engine.run(normad.BENCHMARK, backend, options(bundled_release("normad"), out))
    assert backend.asked == 0 and sorted(p.name for p in out.iterdir()) == ["run.json"]
    (out / "run.json").write_text("not json", encoding="utf-8")
    with pytest.raises(InputError, match="run.json does not parse"):
        engine.run(normad.BENCHMARK, backend, options(bundled_release("normad"), out))


def test_an_interrupted_python_run_says_how_many_answers_it_kept_and_resumes(bundled_release, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt) as stopped:
        engine.run(normad.BENCHMARK, Answering(stop_after=5), options(bundled_release("normad"), out))
    with sqlite3.connect(out / "cache.sqlite") as db:
        cached = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert stopped.value.kept_answers == cached == 5
    assert not (out / "run.json").exists() and not (out / "metrics.json").exists()
    again, given = Answering(), options(bundled_release("normad"), out)
    engine.run(normad.BENCHMARK, again, given)
    assert again.asked == 4 * len(given.contexts) - 5  # the 5 kept answers come from the cache
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["runner"]["n_cached"] == 5


def test_the_command_line_is_refused_a_held_folder_before_it_loads_a_model(bundled_release, tmp_path):
    """``evaluate --backend vllm`` into a held folder: the refusal comes before the engine is loaded (issue #52), so
    it is the lock's line, not vLLM's (installed or not)."""
    from typer.testing import CliRunner

    from culturebench.cli import app

    out = tmp_path / "run"
    with hold_run_folder(out):
        done = CliRunner().invoke(app, ["evaluate", "normad", "--backend", "vllm", "--model", "no-such-model",
                                        "--release", str(bundled_release("normad")), "--out", str(out),
                                        "--limit", "2"])
    assert done.exit_code == 2, done.output
    assert "held by another run" in done.output and "vllm" not in done.output.lower()


def test_a_second_model_does_not_replace_the_first_ones_results_unless_asked(bundled_release, tmp_path):
    """Model B into model A's run folder is refused, naming both, before B is asked anything, and A's metrics.json
    and responses stay as they were; with ``replace`` B's results replace them, and re-running A resumes."""
    release, out = bundled_release("normad"), tmp_path / "run"
    first = Answering()
    engine.run(normad.BENCHMARK, first, options(release, out))
    kept = {name: (out / name).read_bytes() for name in ("metrics.json", "responses.jsonl", "run.json")}
    second = Answering()
    second.model = "other-model"
    with pytest.raises(InputError, match="holds the results of model 'answering-model'.*'other-model'.*--replace"):
        engine.run(normad.BENCHMARK, second, options(release, out))
    assert second.asked == 0
    assert {name: (out / name).read_bytes() for name in kept} == kept
    engine.run(normad.BENCHMARK, second, options(release, out), replace=True)
    assert second.asked > 0
    assert json.loads((out / "run.json").read_text())["backend"]["model"] == "other-model"


def test_a_model_asked_by_path_and_served_by_its_name_resumes_its_own_run(bundled_release, tmp_path):
    """``--model /path/to/smol`` served as ``smol`` (vLLM names a local folder by its name): the same command again
    resumes the run (the vLLM suite's reruns were refused before), while another ``--model`` is refused before it is
    asked anything, as is a backend serving another model under the same ``--model``."""
    release, out = bundled_release("normad"), tmp_path / "run"
    engine.run(normad.BENCHMARK, Answering(), options(release, out), args={"model": "/models/answering-model"})
    again = Answering()
    engine.run(normad.BENCHMARK, again, options(release, out), args={"model": "/models/answering-model"})
    assert again.asked == 0  # every answer from the cache
    other = Answering()
    with pytest.raises(InputError, match="holds the results of model '/models/answering-model'.*'/models/other'"):
        engine.run(normad.BENCHMARK, other, options(release, out), args={"model": "/models/other"})
    renamed = Answering()
    renamed.model = "renamed-model"
    with pytest.raises(InputError, match="holds the results of model 'answering-model'.*'renamed-model'"):
        engine.run(normad.BENCHMARK, renamed, options(release, out), args={"model": "/models/answering-model"})
    assert other.asked == renamed.asked == 0
