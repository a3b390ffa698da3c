"""What the inspect tasks and the lm-eval export share: a harness task's requests (the benchmark's ``plan``) and the
metrics ``culturebench evaluate`` computes from a harness's answers to them (``replay``), through the benchmark
contract only.

Neither re-implements a prompt, a parser or a metric: the requests are those ``culturebench evaluate`` sends with
the task's options (same prompts, sampling settings and sample counts), and the answers are scored by the
benchmark's own ``evaluate`` with a backend that replays them (``evaluate.runs.replay``); ``headline`` is the benchmark's.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culturebench import registry
from culturebench.contract import Benchmark, HarnessTask
from culturebench.options import Options
from culturebench.errors import InputError
from culturebench.chat import ChatRequest, SamplingParams
from culturebench.evaluate.runs.engine import replay
from culturebench.evaluate.runs.replay import planned_requests
from culturebench.evaluate.runs.run_folder import release_manifest_sha256


@dataclass(frozen=True)
class Task:
    """One harness task: its benchmark and variant (``culturebench/<name>`` in inspect, ``culturebench_<name>``
    in lm-eval)."""

    benchmark: Benchmark
    spec: HarnessTask

    @property
    def name(self) -> str:
        return self.spec.name


def tasks() -> list[Task]:
    """Every single-turn harness task of every registered benchmark."""
    return [Task(b, spec) for b in registry.benchmarks() for spec in b.tasks]


def task(name: str) -> Task:
    benchmark, spec = registry.harness_task(name)
    return Task(benchmark, spec)


def task_options(task: Task, release: Path, out: Path | None = None, *, limit: int | None = None,
                 samples: int | None = None, seed: int = 0, config: Path | str | None = None) -> Options:
    """The benchmark's Options for the task's variant on ``release`` (the command's defaults otherwise)."""
    if task.spec.needs_config and config is None:
        raise InputError(f"task {task.name} needs a config (as evaluate's --config)")
    given: dict[str, Any] = {"seed": seed, **dict(task.spec.options)}
    given.update({k: v for k, v in (("limit", limit), ("samples", samples)) if v is not None})
    options = task.benchmark.Options.parse(given, None if config is None else Path(config))
    return options.replace(release=Path(release), out=None if out is None else Path(out))


def requests_of(task: Task, release: Path, *, limit: int | None = None, samples: int | None = None, seed: int = 0,
                config: Path | str | None = None) -> list[ChatRequest]:
    """The distinct requests ``culturebench evaluate`` sends for the task on ``release``, in its order."""
    options = task_options(task, release, limit=limit, samples=samples, seed=seed, config=config)
    return planned_requests(task.benchmark, options)


def score_answers(task: Task, release: Path, answers: Mapping[ChatRequest, str], *, model: str = "model",
                  limit: int | None = None, samples: int | None = None, seed: int = 0,
                  config: Path | str | None = None) -> dict:
    """metrics.json of the task's ``culturebench evaluate`` run when the model's answers are ``answers``, run in a
    scratch folder (models its config names, e.g. jurors, are asked here)."""
    with tempfile.TemporaryDirectory(prefix="culturebench-score-") as scratch:
        options = task_options(task, release, Path(scratch), limit=limit, samples=samples, seed=seed, config=config)
        return replay(task.benchmark, options, answers, model=model)


def headline(task: Task, metrics: Mapping) -> dict[str, float]:
    """The paper's headline numbers of the task's metrics.json (the benchmark's ``headline``)."""
    return task.benchmark.headline(metrics, task.benchmark.Options.parse(dict(task.spec.options)))


def headline_names(task: Task) -> tuple[str, ...]:
    return task.benchmark.headline_names(task.benchmark.Options.parse(dict(task.spec.options)))


def request_from_dict(data: Mapping[str, Any]) -> ChatRequest:
    """The ``ChatRequest`` whose ``as_dict()`` is ``data`` (a harness carries its requests as JSON)."""
    sampling = dict(data["sampling"])
    sampling["stop"] = tuple(sampling.get("stop") or ())
    return ChatRequest(messages=tuple((m["role"], m["content"]) for m in data["messages"]),
                       sampling=SamplingParams(**sampling), sample_index=int(data["sample_index"]))


def task_metadata(name: str, benchmark: Benchmark, release: Path) -> dict:
    """What a harness's log records about the task: culturebench's task name, benchmark, release path and the
    sha256 of its manifest.json (which pins every data file)."""
    return {"culturebench_task": name, "benchmark": benchmark.name, "release": str(release),
            "release_manifest_sha256": release_manifest_sha256(release)}
