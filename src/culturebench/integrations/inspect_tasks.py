"""culturebench's benchmarks as inspect tasks (``pip install 'culturebench[inspect]'``), one per harness task of every
registered benchmark, made from the registry (this module names no benchmark).

Registered through the ``inspect_ai`` entry point of pyproject.toml, so that with culturebench installed::

    inspect eval culturebench/TASK --model openai/gpt-4o-mini -T release=releases/NAME -T limit=100

runs. Single-turn tasks (a benchmark's ``tasks``): parameters ``release`` (a built release folder, default
``releases/<benchmark>``), ``limit`` (culturebench's ``--limit``, not inspect's sample limit), ``samples``
(culturebench's ``--samples``), ``seed``, and ``config_file`` (evaluate's ``--config``; a task that needs one, e.g.
for jurors, says so). The samples are the requests ``culturebench evaluate`` sends (``harness.requests_of``: same
prompts, same repeats), the generate config is their sampling settings (temperature, max tokens, stop sequences,
seed). The scorer keeps each answer with its request; the ``culturebench`` metric hands all answers to
culturebench's own evaluation (``harness.score_answers``) and reports the paper's headline numbers (the benchmark's
``headline``), so they equal ``culturebench evaluate``'s on the same answers. The eval log's task metadata carries
the release's manifest sha256. Run with one epoch (the repeats a paper asks for are already samples).

A benchmark whose requests depend on the model's answers (no ``plan``; its ``roles``, e.g. a judge) is one task of
its name that runs the benchmark whole: the task's model is the evaluated model, inspect's model roles play its
roles (``--model-role ROLE=...``: the first of its roles is required, the others default to the first's model),
and the metric is its headline; parameters ``release``, ``config_file``, ``limit`` and ``out`` (keep the run
folder).
"""

from __future__ import annotations

from pathlib import Path

import tempfile
from collections.abc import Callable, Sequence

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from culturebench import registry
from culturebench.chat import ChatRequest, ChatResponse
from culturebench.evaluate.runs import engine, replay
from culturebench.integrations import harness

_MESSAGES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


@metric(name="culturebench")
def culturebench_metric(task_name: str, release: str, n_requests: int, limit: int | None = None,
                        samples: int | None = None, seed: int = 0, config_file: str | None = None) -> Metric:
    """The paper's headline numbers from culturebench's evaluation of all ``n_requests`` answers
    (``harness.headline``); nothing while inspect shows running totals of a part of them."""
    item = harness.task(task_name)

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        if len(scores) < n_requests:
            return {}
        answers = {harness.request_from_dict(s.score.metadata["request"]): s.score.answer or "" for s in scores}
        metrics = harness.score_answers(item, Path(release), answers, limit=limit, samples=samples, seed=seed,
                                        config=config_file)
        return harness.headline(item, metrics)

    return compute


@scorer(metrics=[])
def culturebench_scorer() -> Scorer:
    """Keeps the model's answer with the culturebench request it answers; the value is 1 when the model answered
    (non-empty output), 0 otherwise. Parsing happens in the ``culturebench`` metric, on all answers at once."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion or ""
        return Score(value=1.0 if text.strip() else 0.0, answer=text,
                     metadata={"request": state.metadata["request"]})

    return score


def culturebench_task(task_name: str, release: str | None = None, limit: int | None = None,
                      samples: int | None = None, seed: int = 0, config_file: str | None = None) -> Task:
    """The inspect ``Task`` of the harness task ``task_name`` on ``release`` (``config_file``: as evaluate's
    ``--config``)."""
    item = harness.task(task_name)
    folder = Path(release) if release is not None else Path("releases") / item.benchmark.name
    requests = harness.requests_of(item, folder, limit=limit, samples=samples, seed=seed, config=config_file)
    sampling = requests[0].sampling
    dataset = MemoryDataset([
        Sample(id=index, input=[_MESSAGES[role](content=content) for role, content in request.messages],
               metadata={"request": request.as_dict()})
        for index, request in enumerate(requests)], name=f"culturebench_{task_name}")
    config = GenerateConfig(temperature=sampling.temperature, max_tokens=sampling.max_tokens, top_p=sampling.top_p,
                            seed=sampling.seed, stop_seqs=list(sampling.stop) or None)
    return Task(dataset=dataset, solver=generate(), scorer=culturebench_scorer(),
                metrics=[culturebench_metric(task_name, str(folder), len(requests), limit, samples, seed,
                                             config_file)],
                config=config, epochs=1, metadata=harness.task_metadata(task_name, item.benchmark, folder),
                description=item.spec.description)


# ------------------------------------------------------------------- benchmarks run whole, with model roles


class InspectModelBackend:
    """A culturebench backend whose model calls go to an inspect ``Model`` (the evaluated model or a model role),
    from the worker thread culturebench's evaluation runs in (``anyio.from_thread``)."""

    name = "inspect"

    def __init__(self, model: Model) -> None:
        self.inspect_model = model
        self.model = str(model.name)

    def cache_params(self) -> dict:
        return {"backend": self.name, "model": str(self.inspect_model)}

    def generate(self, requests: Sequence[ChatRequest], on_response: Callable[[int, ChatResponse], None]) -> None:
        anyio.from_thread.run(self._generate, list(requests), on_response)

    async def _generate(self, requests: list[ChatRequest], on_response) -> None:
        async def one(index: int, request: ChatRequest) -> None:
            s = request.sampling
            output = await self.inspect_model.generate(
                [_MESSAGES[role](content=content) for role, content in request.messages],
                config=GenerateConfig(temperature=s.temperature, max_tokens=s.max_tokens, top_p=s.top_p,
                                      seed=None if s.seed is None else s.seed + request.sample_index,
                                      stop_seqs=list(s.stop) or None))
            usage = output.usage
            on_response(index, ChatResponse(text=output.completion, finish_reason=output.stop_reason,
                                            prompt_tokens=usage.input_tokens if usage else 0,
                                            completion_tokens=usage.output_tokens if usage else 0))

        async with anyio.create_task_group() as group:
            for index, request in enumerate(requests):
                group.start_soon(one, index, request)


@solver
def whole_run(benchmark_name: str, release: str, config_file: str | None, limit: int | None,
              out: str | None) -> Solver:
    """Runs the benchmark's own ``evaluate`` with the task's model as the evaluated model and inspect's model roles
    as its ``roles``; the headline numbers go to the sample's metadata."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        benchmark = registry.benchmark(benchmark_name)
        first, *others = benchmark.roles
        lead = get_model(role=first, required=True)
        roles = {first: InspectModelBackend(lead),
                 **{role: InspectModelBackend(get_model(role=role, default=lead)) for role in others}}
        options = benchmark.Options.parse({} if limit is None else {"limit": limit},
                                          None if config_file is None else Path(config_file))
        with tempfile.TemporaryDirectory(prefix=f"culturebench-{benchmark.name}-") as scratch:
            options = options.replace(release=Path(release), out=Path(out) if out is not None else Path(scratch))
            result = await anyio.to_thread.run_sync(lambda: engine.run(
                benchmark, InspectModelBackend(get_model()), options, roles=roles, console=replay.quiet_console()))
        state.metadata["headline"] = benchmark.headline(result.metrics, options)
        state.output.completion = benchmark.summary(result.metrics)
        return state

    return solve


@metric(name="headline")
def headline_metric() -> Metric:
    """The benchmark's headline numbers (the one sample's values)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        (only,) = scores
        return dict(only.score.value)

    return compute


@scorer(metrics=[headline_metric()])
def headline_scorer() -> Scorer:
    """The headline numbers the solver computed (culturebench's evaluation)."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=state.metadata["headline"], answer=state.output.completion)

    return score


def whole_run_task(benchmark_name: str, release: str | None = None, config_file: str | None = None,
                   limit: int | None = None, out: str | None = None) -> Task:
    """The inspect ``Task`` that runs a benchmark whole (one sample: every item of the release advances together,
    as in ``culturebench evaluate``); ``out`` keeps its run folder."""
    benchmark = registry.benchmark(benchmark_name)
    folder = Path(release) if release is not None else Path("releases") / benchmark.name
    return Task(dataset=MemoryDataset([Sample(id=benchmark.name, input=f"{benchmark.title}: every item of the "
                                                                        "release")], name=f"culturebench_{benchmark.name}"),
                solver=whole_run(benchmark.name, str(folder), config_file, limit, out), scorer=headline_scorer(),
                epochs=1, metadata=harness.task_metadata(benchmark.name, benchmark, folder),
                description=f"{benchmark.title}: {benchmark.description}")


def _single_turn(name: str, description: str):
    def make(release: str | None = None, limit: int | None = None, samples: int | None = None, seed: int = 0,
             config_file: str | None = None) -> Task:
        return culturebench_task(name, release, limit, samples, seed, config_file)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = description
    return make


def _whole(name: str, description: str):
    def make(release: str | None = None, config_file: str | None = None, limit: int | None = None,
             out: str | None = None) -> Task:
        return whole_run_task(name, release, config_file, limit, out)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = description
    return make


# One @task per harness task of every registered benchmark, and one per benchmark run whole with model roles
# (inspect finds tasks by their registered @task functions).
for _item in harness.tasks():
    globals()[_item.name] = task(name=_item.name)(_single_turn(_item.name, _item.spec.description))
for _benchmark in registry.benchmarks():
    if not _benchmark.has_plan and _benchmark.roles:
        globals()[_benchmark.name] = task(name=_benchmark.name)(
            _whole(_benchmark.name, f"{_benchmark.title}: {_benchmark.description}"))
