"""culturebench's single-turn benchmarks as inspect tasks (``pip install 'culturebench[inspect]'``).

Registered through the ``inspect_ai`` entry point of pyproject.toml, so that with culturebench installed::

    inspect eval culturebench/cdeval --model openai/gpt-4o-mini -T release=releases/cdeval -T limit=100

runs. One task per ``harness.TASKS`` entry (cdeval, wvb, wvb_no_demographics, normad_<context>,
llm_globe_closed, llm_globe_open), and ``socialcc`` (its dialogues with inspect's model roles, below). Task
parameters: ``release`` (a built release folder, default ``releases/<benchmark>``), ``limit`` (culturebench's
``--limit``: the first N questions / rows / stories / prompts, not inspect's sample limit), ``samples``
(culturebench's ``--samples``), ``seed``, and for llm_globe_open ``config_file`` (evaluate's ``--config``, naming
the jurors, whom culturebench asks when the answers are scored).

The samples are the requests ``culturebench evaluate`` sends (``harness.planned_requests``: same prompts, same
repeats), the generate config is their sampling settings (temperature, max tokens, stop sequences, seed). The
scorer keeps each answer with its request; the ``culturebench`` metric hands all answers to culturebench's own
evaluation (``harness.score_answers``) and reports the paper's headline numbers (``harness.headline``), so they
equal ``culturebench evaluate``'s on the same answers. The eval log's task metadata carries the release's manifest
sha256. Run with one epoch (the repeats a paper asks for are already samples).
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

from culturebench.evaluate.backends import ChatRequest, ChatResponse
from culturebench.integrations import harness

_MESSAGES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


@metric(name="culturebench")
def culturebench_metric(task_name: str, release: str, n_requests: int, limit: int | None = None,
                        samples: int | None = None, seed: int = 0, config_file: str | None = None) -> Metric:
    """The paper's headline numbers from culturebench's evaluation of all ``n_requests`` answers
    (``harness.headline``); nothing while inspect shows running totals of a part of them."""
    spec = harness.task_spec(task_name)

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        if len(scores) < n_requests:
            return {}
        answers = {harness.request_from_dict(s.score.metadata["request"]): s.score.answer or "" for s in scores}
        metrics = harness.score_answers(spec, Path(release), answers, limit=limit, samples=samples, seed=seed,
                                        config=config_file)
        return harness.headline(spec, metrics)

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
    """The inspect ``Task`` of ``harness.TASKS[task_name]`` on ``release`` (``config_file``: as evaluate's
    ``--config``; llm_globe_open needs one naming the jurors)."""
    spec = harness.task_spec(task_name)
    folder = Path(release) if release is not None else Path("releases") / spec.benchmark
    requests = harness.planned_requests(spec, folder, limit=limit, samples=samples, seed=seed, config=config_file)
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
                config=config, epochs=1, metadata=harness.task_metadata(spec, folder), description=spec.description)


# One decorated function per harness.TASKS entry (inspect finds tasks by their @task definitions).


@task
def cdeval(release: str | None = None, limit: int | None = None, samples: int | None = None,
           seed: int = 0) -> Task:
    """CDEval: the six Table 8 prompts per question."""
    return culturebench_task("cdeval", release, limit, samples, seed)


@task
def wvb(release: str | None = None, limit: int | None = None, samples: int | None = None,
        seed: int = 0) -> Task:
    """WorldValuesBench with demographics (Figs. 5-8, temperature 0)."""
    return culturebench_task("wvb", release, limit, samples, seed)


@task
def wvb_no_demographics(release: str | None = None, limit: int | None = None, samples: int | None = None,
                        seed: int = 0) -> Task:
    """WorldValuesBench without demographics (Figs. 9-10, temperature 0.7, oversampled)."""
    return culturebench_task("wvb_no_demographics", release, limit, samples, seed)


@task
def normad_country(release: str | None = None, limit: int | None = None, samples: int | None = None,
                   seed: int = 0) -> Task:
    """NormAd, context country (App. A.3 Fig. 9)."""
    return culturebench_task("normad_country", release, limit, samples, seed)


@task
def normad_value(release: str | None = None, limit: int | None = None, samples: int | None = None,
                 seed: int = 0) -> Task:
    """NormAd, context value (App. A.3 Fig. 9)."""
    return culturebench_task("normad_value", release, limit, samples, seed)


@task
def normad_rot(release: str | None = None, limit: int | None = None, samples: int | None = None,
               seed: int = 0) -> Task:
    """NormAd, context rot (App. A.3 Fig. 9)."""
    return culturebench_task("normad_rot", release, limit, samples, seed)


@task
def normad_none(release: str | None = None, limit: int | None = None, samples: int | None = None,
                seed: int = 0) -> Task:
    """NormAd, context none (App. A.3 Fig. 9)."""
    return culturebench_task("normad_none", release, limit, samples, seed)


@task
def normad_country_value(release: str | None = None, limit: int | None = None, samples: int | None = None,
                         seed: int = 0) -> Task:
    """NormAd, context country_value (App. A.3 Fig. 9)."""
    return culturebench_task("normad_country_value", release, limit, samples, seed)


@task
def llm_globe_closed(release: str | None = None, limit: int | None = None, samples: int | None = None,
                     seed: int = 0) -> Task:
    """LLM-GLOBE closed-ended prompts, three answers each at temperature 1."""
    return culturebench_task("llm_globe_closed", release, limit, samples, seed)


@task
def llm_globe_open(release: str | None = None, config_file: str | None = None, limit: int | None = None,
                   samples: int | None = None, seed: int = 0) -> Task:
    """LLM-GLOBE open-ended prompts, rated by the jurors ``config_file`` names (culturebench asks them)."""
    return culturebench_task("llm_globe_open", release, limit, samples, seed, config_file)


# --------------------------------------------------------------------------------------------------- SocialCC


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


SOCIALCC_JUDGES = ("awareness", "commonsense", "value", "behaviour")


@solver
def socialcc_dialogues(release: str, config_file: str | None, limit: int | None, split: str | None,
                       out: str | None) -> Solver:
    """Runs culturebench's SocialCC evaluation (``socialcc.evaluate``: dialogues, Tables 6A-11A, judges) with the
    task's model as Character 2, the ``judge`` model role as the four judges and the ``antagonist`` role (default:
    the judge) as Character 1; the Table 2 means go to the sample's metadata."""
    from culturebench.evaluate import socialcc

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        judge = get_model(role="judge", required=True)
        backends = {"backend": InspectModelBackend(get_model()), "judge_backend": InspectModelBackend(judge),
                    "antagonist_backend": InspectModelBackend(get_model(role="antagonist", default=judge))}
        config = socialcc.load_config(config_file)
        with tempfile.TemporaryDirectory(prefix="culturebench-socialcc-") as scratch:
            folder = Path(out) if out is not None else Path(scratch)
            result = await anyio.to_thread.run_sync(lambda: socialcc.evaluate(
                backends["backend"], Path(release), folder, config, limit=limit, split=split,
                antagonist_backend=backends["antagonist_backend"], judge_backend=backends["judge_backend"],
                console=harness.quiet_console()))
        (table,) = [m["table2"] for m in result.metrics["per_model"].values()]
        state.metadata["table2"] = {j: float(table[j]) for j in SOCIALCC_JUDGES if table[j] is not None}
        state.output.completion = socialcc.summary(result.metrics)
        return state

    return solve


@metric(name="table2")
def socialcc_table2() -> Metric:
    """SocialCC Table 2: the mean of each judge's scores over the dialogues (the one sample's values)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        (only,) = scores
        return dict(only.score.value)

    return compute


@scorer(metrics=[socialcc_table2()])
def socialcc_scorer() -> Scorer:
    """The Table 2 means the solver computed (culturebench's judges and metrics)."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=state.metadata["table2"], answer=state.output.completion)

    return score


@task
def socialcc(release: str | None = None, config_file: str | None = None, limit: int | None = None,
             split: str | None = None, out: str | None = None) -> Task:
    """SocialCC (Tables 6A-11A): dialogues with an antagonist, four judges; ``--model-role judge=...`` (required)
    and ``--model-role antagonist=...`` (default: the judge). One sample runs every scenario (the dialogues advance
    together, as in ``culturebench evaluate``); ``out`` keeps its run folder (transcripts, metrics, plots)."""
    folder = Path(release) if release is not None else Path("releases") / "socialcc"
    spec = harness.TaskSpec("socialcc", "socialcc", "SocialCC dialogues and judges; Table 2 means")
    return Task(dataset=MemoryDataset([Sample(id="socialcc", input="SocialCC: every scenario of the release")],
                                      name="culturebench_socialcc"),
                solver=socialcc_dialogues(str(folder), config_file, limit, split, out), scorer=socialcc_scorer(),
                epochs=1, metadata=harness.task_metadata(spec, folder), description=spec.description)
