"""``culturebench export lm-eval RELEASE --out DIR``: an lm-evaluation-harness task folder for a release.

The folder holds, per task of the release's benchmark (``harness.TASKS``):

- ``culturebench_<task>.yaml``: a ``generate_until`` task whose docs are the requests ``culturebench evaluate``
  sends (``harness.planned_requests``), with their sampling settings as ``generation_kwargs``;
- ``culturebench_<task>.jsonl``: those docs (the request as JSON and the prompt);

and for the folder: ``utils.py`` (loads the docs, keeps each answer with its request, and aggregates through
culturebench's own evaluation, ``harness.score_answers`` + ``harness.headline``) and ``culturebench_tasks.json``
(per task: release path and manifest sha256, limit, samples, seed, config). LLM-GLOBE's open task is written when
a ``--config`` names the jurors; culturebench asks them when lm-eval aggregates. Exports of several releases into
one folder add up. Run with::

    lm_eval --include_path DIR --tasks culturebench_cdeval --model local-chat-completions \\
        --model_args model=M,base_url=http://127.0.0.1:8000/v1/chat/completions --apply_chat_template

``pip install 'culturebench[lm-eval]'`` installs lm-eval with its API models (no torch).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import yaml

from culturebench.errors import InputError
from culturebench.evaluate import runs
from culturebench.integrations import harness
from culturebench.release import load_manifest

SETTINGS_FILE = "culturebench_tasks.json"
PREFIX = "culturebench_"

HEADLINE_NAMES = {
    "cdeval": ("likelihood_PDI", "likelihood_IDV", "likelihood_UAI", "likelihood_MAS", "likelihood_LTO",
               "likelihood_IVR"),
    "wvb": ("mean_w1", "std_w1"),
    "normad": ("accuracy", "macro_f1"),
}
"""The metrics each benchmark's lm-eval task reports (``harness.headline``'s names; LLM-GLOBE: one mean per
dimension, from ``llm_globe.prompts.DIMENSIONS``). A name without a value (a dimension the release lacks) is NaN."""
LOWER_IS_BETTER = {"mean_w1", "std_w1"}


def headline_names(benchmark: str) -> tuple[str, ...]:
    if benchmark == "llm_globe":
        from culturebench.evaluate.llm_globe.prompts import DIMENSIONS

        return tuple(f"mean_{d}" for d in DIMENSIONS)
    return HEADLINE_NAMES[benchmark]


def function_name(task: str, metric: str) -> str:
    """The utils.py attribute of a task's aggregation (a Python name: spaces and dashes as underscores)."""
    return "".join(c if c.isalnum() else "_" for c in f"{task}__{metric}")


def task_yaml(task: str, release: Path) -> dict:
    """A task's YAML; its metadata (which lm-eval copies into its results) names the release and its manifest
    sha256."""
    spec = harness.task_spec(task)
    return {
        "task": f"{PREFIX}{task}",
        "custom_dataset": Function("utils.load_docs"),
        "dataset_kwargs": {"task": task},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_text": Function("utils.doc_to_text"),
        "doc_to_target": "",
        "process_results": Function("utils.process_results"),
        "metric_list": [{"metric": name, "aggregation": Function(f"utils.{function_name(task, name)}"),
                         "higher_is_better": name not in LOWER_IS_BETTER}
                        for name in headline_names(spec.benchmark)],
        "metadata": {"version": 1, "description": spec.description, **harness.task_metadata(spec, release)},
    }


class Function(str):
    """A ``!function module.name`` reference of lm-eval's YAML."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def _yaml_text(config: dict, generation: dict) -> str:
    return yaml.dump({**config, "generation_kwargs": generation}, Dumper=_Dumper, sort_keys=False,
                     allow_unicode=True)


UTILS = '''"""Written by `culturebench export lm-eval`: lm-eval's hooks for the culturebench tasks of this folder; the
prompts, parsing and metrics are culturebench's (culturebench.integrations.lm_eval_export)."""

from pathlib import Path

from culturebench.integrations.lm_eval_export import aggregation, doc_to_text, folder_docs, process_results

HERE = Path(__file__).resolve().parent


def load_docs(task, **metadata):
    return folder_docs(HERE, task)


'''


def export(release: Path, out: Path, *, limit: int | None = None, samples: int | None = None,
           seed: int = 0, tasks: Sequence[str] | None = None, config: Path | None = None) -> list[Path]:
    """Write the task folder of ``release`` (every task of its benchmark, or ``tasks``; llm_globe_open only with a
    ``config`` naming the jurors) into ``out``; returns the paths written."""
    release = Path(release).resolve()
    config = None if config is None else Path(config).resolve()
    benchmark = load_manifest(release).get("benchmark")
    names = list(tasks) if tasks is not None else [
        n for n, s in harness.TASKS.items()
        if s.benchmark == benchmark and (config is not None or not s.options.get("needs_config"))]
    if not names:
        raise InputError(f"no lm-eval task for benchmark {benchmark!r} (tasks exist for "
                         f"{', '.join(sorted({s.benchmark for s in harness.TASKS.values()}))})", file=release)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        spec = harness.task_spec(name)
        if spec.benchmark != benchmark:
            raise InputError(f"task {name!r} is for {spec.benchmark}, the release is {benchmark}", file=release)
        requests = harness.planned_requests(spec, release, limit=limit, samples=samples, seed=seed, config=config)
        roles = {tuple(role for role, _ in r.messages) for r in requests}
        if roles != {("user",)}:
            raise InputError(f"task {name!r}: lm-eval tasks take one user message per request, found {roles}")
        docs = out / f"{PREFIX}{name}.jsonl"
        with docs.open("w", encoding="utf-8") as handle:
            for index, request in enumerate(requests):
                handle.write(json.dumps({"index": index, "task": name, "text": request.messages[0][1],
                                         "request": json.dumps(request.as_dict(), ensure_ascii=False)},
                                        ensure_ascii=False) + "\n")
        sampling = requests[0].sampling
        generation = {"until": list(sampling.stop), "max_gen_toks": sampling.max_tokens,
                      "temperature": sampling.temperature, "top_p": sampling.top_p,
                      "do_sample": sampling.temperature > 0}
        path = out / f"{PREFIX}{name}.yaml"
        path.write_text(_yaml_text(task_yaml(name, release), generation), encoding="utf-8")
        written += [path, docs]
    settings_path = out / SETTINGS_FILE
    settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
    settings.update({name: {"release": str(release), "limit": limit, "samples": samples, "seed": seed,
                            "config": None if config is None else str(config),
                            "release_manifest_sha256": runs.release_manifest_sha256(release)} for name in names})
    settings_path.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    functions = [(t, m) for t in sorted(settings) for m in headline_names(harness.task_spec(t).benchmark)]
    utils = UTILS + "".join(f"{function_name(t, m)} = aggregation(HERE, {t!r}, {m!r})\n" for t, m in functions)
    (out / "utils.py").write_text(utils, encoding="utf-8")
    return [*written, out / SETTINGS_FILE, out / "utils.py"]


# ----------------------------------------------------------------------------- what utils.py calls inside lm-eval


def folder_docs(folder: Path, task: str):
    """``custom_dataset`` of a task: its docs as a ``datasets.DatasetDict`` with one split, ``test``."""
    import datasets

    rows = [json.loads(line) for line in (Path(folder) / f"{PREFIX}{task}.jsonl").read_text("utf-8").splitlines()]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def doc_to_text(doc: dict) -> str:
    """The user message of the request, as culturebench sends it."""
    return doc["text"]


def process_results(doc: dict, results: list[str]) -> dict:
    """Each metric of the task gets (task, request, answer); the aggregation scores them all at once."""
    item = (doc["task"], doc["request"], results[0] if results else "")
    return {name: item for name in headline_names(harness.task_spec(doc["task"]).benchmark)}


@lru_cache(maxsize=8)
def _headline(folder: str, task: str, items: tuple[tuple[str, str, str], ...]) -> dict[str, float]:
    settings = json.loads((Path(folder) / SETTINGS_FILE).read_text(encoding="utf-8"))[task]
    spec = harness.task_spec(task)
    answers = {harness.request_from_dict(json.loads(request)): text or "" for _, request, text in items}
    try:
        metrics = harness.score_answers(spec, Path(settings["release"]), answers, limit=settings["limit"],
                                        samples=settings["samples"], seed=settings["seed"], config=settings["config"])
    except InputError as exc:
        raise InputError(f"{PREFIX}{task}: {exc}; culturebench's metrics need an answer to every request (limit "
                         "the export with culturebench export lm-eval --limit, not lm_eval --limit)") from None
    return harness.headline(spec, metrics)


def aggregation(folder: Path, task: str, metric: str) -> Callable[[list], float]:
    """lm-eval's aggregation of one headline metric: culturebench's evaluation of all the task's answers (computed
    once for all its metrics), NaN when the metric has no value."""

    def aggregate(items: list) -> float:
        return _headline(str(folder), task, tuple(tuple(item) for item in items)).get(metric, float("nan"))

    aggregate.__name__ = function_name(task, metric)
    return aggregate
