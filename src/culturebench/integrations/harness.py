"""What the inspect tasks and the lm-eval export share: the requests ``culturebench evaluate`` would send for a task,
and the metrics ``culturebench evaluate`` computes from a harness's answers to them.

Neither re-implements a prompt, a parser or a metric. ``plan`` runs the benchmark's own ``cli_evaluate`` (NormAd's
per-context tasks: its ``evaluate`` with the one context) with a backend that records the requests handed to it and
stops there (``PlanningBackend``), so the prompts, sampling settings and sample counts are exactly those of
``culturebench evaluate``. ``replay`` runs it again with a backend that answers each request with the harness's
answer (``ReplayBackend``) and reads the metrics.json it writes: parsing, metrics and bootstrap are culturebench's,
so a harness gives the numbers ``culturebench evaluate`` gives on the same answers (``--scoring logprobs`` replays
the most probable options the same way). ``planned_requests`` and ``score_answers`` do both for a harness task
(``TASKS``); ``headline`` picks each paper's headline numbers out of metrics.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from culturebench import registry
from culturebench.errors import InputError
from culturebench.evaluate.backends import ChatRequest, ChatResponse, SamplingParams
from culturebench.evaluate.runs import release_manifest_sha256


@dataclass(frozen=True)
class TaskSpec:
    """One harness task: a benchmark and the ``culturebench evaluate`` options that make its variant."""

    name: str
    benchmark: str
    description: str
    options: Mapping[str, Any] = field(default_factory=dict)


TASKS: dict[str, TaskSpec] = {spec.name: spec for spec in (
    TaskSpec("cdeval", "cdeval", "CDEval: the six Table 8 prompts per question; orientation likelihood per "
             "Hofstede dimension (Eq. 3, Fig. 3)"),
    TaskSpec("wvb", "wvb", "WorldValuesBench with demographics (Figs. 5-8, temperature 0); mean W1 (Table 2)",
             {"demographics": True}),
    TaskSpec("wvb_no_demographics", "wvb", "WorldValuesBench without demographics (Figs. 9-10, temperature 0.7, "
             "oversampled); mean W1 (Table 2)", {"demographics": False}),
    *(TaskSpec(f"normad_{context}", "normad", f"NormAd, context {context} (App. A.3 Fig. 9); accuracy (Fig. 3) and "
               "macro F1 (Table A.4)", {"contexts": (context,)})
      for context in ("country", "value", "rot", "none", "country_value")),
    TaskSpec("llm_globe_closed", "llm_globe", "LLM-GLOBE closed-ended prompts, three answers each at temperature 1; "
             "mean per GLOBE dimension (Tables 2-3)", {"split": "closed"}),
    TaskSpec("llm_globe_open", "llm_globe", "LLM-GLOBE open-ended prompts rated by the LLM jury its config names "
             "(App. B); jury-scored mean per GLOBE dimension (Tables 4-5)", {"split": "open", "needs_config": True}),
)}
"""The single-turn tasks, by name (``culturebench/<name>`` in inspect, ``culturebench_<name>`` in lm-eval).
``llm_globe_open`` needs a config naming the jurors (``evaluate --config``): culturebench asks them itself when the
harness's answers are scored."""


def task_spec(name: str) -> TaskSpec:
    if name not in TASKS:
        raise InputError(f"unknown task {name!r}; choose from {', '.join(TASKS)}")
    return TASKS[name]


def evaluate_options(spec: TaskSpec, release: Path, out: Path | None = None, *, limit: int | None = None,
                     samples: int | None = None, seed: int = 0, config: Path | str | None = None) -> dict:
    """The ``options`` dict ``culturebench evaluate`` hands a benchmark's ``cli_evaluate``, for ``spec``'s variant
    (the command's defaults otherwise)."""
    if spec.options.get("needs_config") and config is None:
        raise InputError(f"task {spec.name} needs a config naming the jurors (as evaluate's --config)")
    options = {"release": Path(release), "out": None if out is None else Path(out), "split": None, "limit": limit,
               "samples": samples, "temperature": None, "demographics": True, "seed": seed, "max_tokens": None,
               "config": None if config is None else Path(config)}
    options.update({k: v for k, v in spec.options.items() if k in options})
    return options


class _Planned(Exception):
    def __init__(self, requests: Sequence[ChatRequest]) -> None:
        super().__init__(f"{len(requests)} requests planned")
        self.requests = list(requests)


class PlanningBackend:
    """A backend that records the requests ``culturebench evaluate`` sends and stops the run there."""

    name = "planning"
    runner_batch_size = sys.maxsize  # the runner's batches (runner.stream_requests): the whole run at once, every request seen

    def __init__(self, model: str = "model") -> None:
        self.model = model

    def cache_params(self) -> dict:
        return {"backend": self.name, "model": self.model}

    def generate(self, requests: Sequence[ChatRequest], on_response: Callable[[int, ChatResponse], None]) -> None:
        raise _Planned(requests)


class ReplayBackend:
    """A backend that answers each request with a harness's answer to it (``answers``: request -> text); a request
    the harness did not answer is an InputError naming it."""

    name = "replay"

    def __init__(self, model: str, answers: Mapping[ChatRequest, str]) -> None:
        self.model = model
        self.answers = answers

    def cache_params(self) -> dict:
        return {"backend": self.name, "model": self.model}

    def generate(self, requests: Sequence[ChatRequest], on_response: Callable[[int, ChatResponse], None]) -> None:
        for index, request in enumerate(requests):
            if request not in self.answers:
                raise InputError(f"no answer to request {index} (sample {request.sample_index}): "
                                 f"{request.messages[-1][1][:80]!r}")
            on_response(index, ChatResponse(text=self.answers[request]))


def request_from_dict(data: Mapping[str, Any]) -> ChatRequest:
    """The ``ChatRequest`` whose ``as_dict()`` is ``data`` (a harness carries its requests as JSON)."""
    sampling = dict(data["sampling"])
    sampling["stop"] = tuple(sampling.get("stop") or ())
    return ChatRequest(messages=tuple((m["role"], m["content"]) for m in data["messages"]),
                       sampling=SamplingParams(**sampling), sample_index=int(data["sample_index"]))


def quiet_console() -> Console:
    return Console(stderr=True, quiet=True)


def plan(benchmark: str, options: Mapping[str, Any], contexts: Sequence[str] | None = None) -> list[ChatRequest]:
    """The distinct requests ``culturebench evaluate <benchmark>`` sends with ``options`` (its ``cli_evaluate``
    options; NormAd: only ``contexts`` when given), in its order (identical requests, asked once by the runner,
    appear once). The run goes to an empty scratch folder (a cache would hide the requests it answers) and stops at
    its first model call."""
    module = registry.evaluation(benchmark)
    with tempfile.TemporaryDirectory(prefix="culturebench-plan-") as scratch:
        options = {**options, "out": Path(scratch)}
        module.cli_check(options)
        try:
            _run(module, benchmark, PlanningBackend(), options, contexts)
        except _Planned as planned:
            return planned.requests
    raise InputError(f"{benchmark}: the release gives no requests", file=options["release"])


def replay(benchmark: str, options: Mapping[str, Any], answers: Mapping[ChatRequest, str], *,
           model: str = "model", contexts: Sequence[str] | None = None) -> dict:
    """metrics.json of ``culturebench evaluate <benchmark>`` with ``options`` when the model's answers are
    ``answers``: the benchmark's own run into ``options["out"]``, its backend replaced by the answers."""
    module = registry.evaluation(benchmark)
    _run(module, benchmark, ReplayBackend(model, answers), dict(options), contexts)
    return json.loads((Path(options["out"]) / "metrics.json").read_text(encoding="utf-8"))


def _run(module, benchmark: str, backend, options: dict, contexts: Sequence[str] | None) -> tuple[str, list[Path]]:
    if benchmark == "normad" and contexts is not None:  # normad.evaluate takes the contexts, cli_evaluate all
        result = module.evaluate(backend, options["release"], options["out"], contexts=contexts,
                                 samples=options["samples"], temperature=options["temperature"],
                                 seed=options["seed"], limit=options["limit"], split=options["split"],
                                 console=quiet_console(), **({} if options["max_tokens"] is None else
                                                      {"max_tokens": options["max_tokens"]}))
        return module.summary(result.metrics), result.written
    return module.cli_evaluate(backend, options, {"benchmark": benchmark}, quiet_console())


def planned_requests(spec: TaskSpec, release: Path, *, limit: int | None = None, samples: int | None = None,
                     seed: int = 0, config: Path | str | None = None) -> list[ChatRequest]:
    """``plan`` for a harness task on ``release``."""
    options = evaluate_options(spec, release, limit=limit, samples=samples, seed=seed, config=config)
    return plan(spec.benchmark, options, spec.options.get("contexts"))


def score_answers(spec: TaskSpec, release: Path, answers: Mapping[ChatRequest, str], *, model: str = "model",
                  limit: int | None = None, samples: int | None = None, seed: int = 0,
                  config: Path | str | None = None) -> dict:
    """``replay`` for a harness task on ``release``, into a scratch folder (LLM-GLOBE open: the config's jurors
    are asked here)."""
    with tempfile.TemporaryDirectory(prefix="culturebench-score-") as scratch:
        options = evaluate_options(spec, release, Path(scratch), limit=limit, samples=samples, seed=seed,
                                   config=config)
        return replay(spec.benchmark, options, answers, model=model, contexts=spec.options.get("contexts"))


def _only_model(metrics: Mapping) -> dict:
    models = metrics.get("models") or list(metrics.get("per_model", {}))
    if len(models) != 1:
        raise ValueError(f"expected the metrics of one model, found {models}")
    return metrics["per_model"][models[0]]


def headline(spec: TaskSpec, metrics: Mapping) -> dict[str, float]:
    """The paper's headline numbers of one model's metrics.json, flat (name -> value; None values left out):
    CDEval the orientation likelihood per dimension (Fig. 3); WVB mean and std of W1 (Table 2); NormAd accuracy
    (Fig. 3) and macro F1 (Table A.4) of the context; LLM-GLOBE the closed (Tables 2-3) or jury-scored open
    (Tables 4-5) mean per dimension."""
    if spec.benchmark == "cdeval":
        values = {f"likelihood_{d}": v for d, v in _only_model(metrics)["dimension_likelihood"].items()}
    elif spec.benchmark == "wvb":
        values = {"mean_w1": metrics["mean"], "std_w1": metrics["std"]}
    elif spec.benchmark == "normad":
        (context,) = spec.options["contexts"]
        m = _only_model(metrics)
        values = {"accuracy": m["accuracy"][context], "macro_f1": m["macro_f1"][context]}
    elif spec.benchmark == "llm_globe":
        (cells,) = metrics[spec.options["split"]]["mean_sd"].values()
        values = {f"mean_{d}": cell["mean"] for d, cell in cells.items()}
    else:
        raise ValueError(f"no headline for {spec.benchmark}")
    return {k: float(v) for k, v in values.items() if v is not None}


def task_metadata(spec: TaskSpec, release: Path) -> dict:
    """What a harness's log records about the task: culturebench's task name, benchmark, release path and the
    sha256 of its manifest.json (which pins every data file)."""
    return {"culturebench_task": spec.name, "benchmark": spec.benchmark, "release": str(release),
            "release_manifest_sha256": release_manifest_sha256(release)}
