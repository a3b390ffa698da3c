"""``culturebench export lm-eval RELEASE --out DIR``: an lm-evaluation-harness task folder for a release.

The folder holds, per harness task of the release's benchmark (its ``tasks``):

- ``culturebench_<task>.yaml``: a ``generate_until`` task whose docs are the requests ``culturebench evaluate``
  sends (``harness.requests_of``: the benchmark's ``plan``), with their sampling settings as ``generation_kwargs``;
- ``culturebench_<task>.jsonl``: those docs (the request as JSON and the prompt);

and for the folder: ``utils.py`` (loads the docs, keeps each answer with its request, and aggregates through
culturebench's own evaluation, ``harness.score_answers`` + ``harness.headline``) and ``culturebench_tasks.json``
(per task: release path and manifest sha256, limit, samples, seed, config). A task that needs a config (its
``needs_config``, e.g. one whose answers are rated by jurors the config names) is written when ``--config`` is
given; models it names are asked when lm-eval aggregates. Exports of several releases into one folder add up. Run
with::

    lm_eval --include_path DIR --tasks culturebench_<task> --model local-chat-completions \\
        --model_args model=M,base_url=http://127.0.0.1:8000/v1/chat/completions --apply_chat_template

``pip install 'culturebench[lm-eval]'`` installs lm-eval with its API models (no torch).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import yaml

from culturebench import registry
from culturebench.errors import InputError
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.runs.limit import counted
from culturebench.integrations import harness
from culturebench.release_reader import Release

SETTINGS_FILE = "culturebench_tasks.json"
PREFIX = "culturebench_"



def function_name(task: str, metric: str) -> str:
    """The utils.py attribute of a task's aggregation (a Python name: spaces and dashes as underscores)."""
    return "".join(c if c.isalnum() else "_" for c in f"{task}__{metric}")


def task_yaml(task: str, release: Path) -> dict:
    """A task's YAML; its metadata (which lm-eval copies into its results) names the release and its manifest
    sha256."""
    item = harness.task(task)
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
                         "higher_is_better": name not in item.benchmark.lower_is_better}
                        for name in harness.headline_names(item)],
        "metadata": {"version": 1, "description": item.spec.description,
                     **harness.task_metadata(task, item.benchmark, release)},
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


def export_line(release: Path, out: Path, written: Sequence[Path]) -> str:
    """The command's line: the tasks written and how many requests ``lm_eval`` will send for each (the lines of
    its requests file), so that a run's size is seen before it is started."""
    counts = {p.stem: sum(1 for _ in p.open(encoding="utf-8")) for p in written if p.suffix == ".jsonl"}
    tasks = ", ".join(f"{task} ({counted(n, 'requests')})" for task, n in counts.items())
    return (f"lm-eval tasks for {release} in {out}: {tasks}; lm_eval will send "
            f"{counted(sum(counts.values()), 'requests')}")


def export(release: Path, out: Path, *, limit: int | None = None, samples: int | None = None,
           seed: int = 0, tasks: Sequence[str] | None = None, config: Path | None = None) -> list[Path]:
    """Write the task folder of ``release`` (every task of its benchmark, or ``tasks``; one that needs a config
only with ``config``) into ``out``; returns the paths written."""
    release = Path(release).resolve()
    config = None if config is None else Path(config).resolve()
    benchmark = Release.open(release).benchmark
    names = list(tasks) if tasks is not None else [
        t.name for t in benchmark.tasks if config is not None or not t.needs_config]
    if not names:
        with_tasks = [b.name for b in registry.benchmarks() if b.tasks]
        raise InputError(f"no lm-eval task for benchmark {benchmark.name!r} (tasks exist for "
                         f"{', '.join(with_tasks)})", file=release)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        item = harness.task(name)
        if item.benchmark is not benchmark:
            raise InputError(f"task {name!r} is for {item.benchmark.name}, the release is {benchmark.name}",
                             file=release)
        requests = harness.requests_of(item, release, limit=limit, samples=samples, seed=seed, config=config)
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
                            "release_manifest_sha256": run_folder.release_manifest_sha256(release)} for name in names})
    settings_path.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    functions = [(t, m) for t in sorted(settings) for m in harness.headline_names(harness.task(t))]
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
    return {name: item for name in harness.headline_names(harness.task(doc["task"]))}


@lru_cache(maxsize=8)
def _headline(folder: str, task: str, items: tuple[tuple[str, str, str], ...]) -> dict[str, float]:
    settings = json.loads((Path(folder) / SETTINGS_FILE).read_text(encoding="utf-8"))[task]
    item = harness.task(task)
    answers = {harness.request_from_dict(json.loads(request)): text or "" for _, request, text in items}
    try:
        metrics = harness.score_answers(item, Path(settings["release"]), answers, limit=settings["limit"],
                                        samples=settings["samples"], seed=settings["seed"], config=settings["config"])
    except InputError as exc:
        raise InputError(f"{PREFIX}{task}: {exc}; culturebench's metrics need an answer to every request (limit "
                         "the export with culturebench export lm-eval --limit, not lm_eval --limit)") from None
    return harness.headline(item, metrics)


def aggregation(folder: Path, task: str, metric: str) -> Callable[[list], float]:
    """lm-eval's aggregation of one headline metric: culturebench's evaluation of all the task's answers (computed
    once for all its metrics), NaN when the metric has no value."""

    def aggregate(items: list) -> float:
        return _headline(str(folder), task, tuple(tuple(item) for item in items)).get(metric, float("nan"))

    aggregate.__name__ = function_name(task, metric)
    return aggregate
