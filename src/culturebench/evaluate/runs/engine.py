"""The one run loop of ``culturebench evaluate``, for every benchmark (issue #50): the engine owns the run and a
benchmark gives hooks, as lm-evaluation-harness's evaluator owns its loop and a ``Task`` gives ``doc_to_text``,
``process_results`` and ``aggregation``.

``run(benchmark, backend, options)``, the one entry of a run for the command line, Python callers (each benchmark
package's ``evaluate``), ``replay`` and the harness integrations, does, in order:

1. hold the run folder ``options.out`` (``run_lock.hold_run_folder``: one run at a time; a second run is refused,
   or waits with ``wait``) and check it holds no other benchmark's run (``check_run_folder``), before any model
   is made: ``backend`` may be a factory (a callable without arguments), called only once the folder is held, so a
   refused run loads no engine (issue #52);
2. with ``scoring="logprobs"``, ask the backend for ``top_logprobs`` and check its endpoint returns them
   (``option_probability``);
3. the benchmark's hooks (``benchmark.hooks()``: a ``contract.Hooks`` of its run module): ``plan`` (what is asked:
   a ``contract.RunPlan``: the requests, how many, what they cover, the records' schema), ``answer`` (the model's
   answers into the responses file, through the response cache: by default (``answer`` gives None) each planned
   item streamed through the runner and turned into records by the hook ``records``; a benchmark of several steps
   (jurors rating the answers) or of dialogues gives its own), ``score`` (the metrics), ``write`` (metrics.json
   and the plots) and ``evaluation`` (what run.json says of the run beside the engine's fields);
4. run.json (``run_record.write_run_record``) and, with ``scoring="logprobs"``, the metrics by option probability.

``score(benchmark, responses, options)`` is ``culturebench score``'s: the same hooks ``score`` and ``write`` fed
saved responses files (an ``Answers`` whose ``saved`` are the files, a plain ``RunPlan`` of the options), so a run's
metrics and the score of its saved responses come from one hook.

An interrupted or cost-capped run (``KeyboardInterrupt``, ``chat.CostLimitReached``) keeps every answer in the
cache: the exception goes on, with ``kept_answers`` set to the answers this run added (the command line says so).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from culturebench.chat import ChatRequest, CostLimitReached
from culturebench.contract import Answers, Benchmark, Records, Result, Run, RunPlan
from culturebench.options import Options
from culturebench.errors import InputError


def stream(run: Run, plan: RunPlan, records: Records) -> Answers:
    """What the engine does where ``Hooks.answer`` gives None: every planned item through the runner
    (``run_steps.stream_records``: cache, batches, retries, progress), each batch's answers made records by
    ``records(plan, items, responses)`` and appended to the responses file as they come."""
    from culturebench.evaluate.runs import run_steps

    path, n_records, stats = run_steps.stream_records(
        run.backend, plan.requests, run.out, plan.description, lambda items, responses: records(plan, items, responses),
        total=plan.total, schema=plan.schema, sharded=plan.schema is not None, console=run.console)
    return Answers(path, n_records, run_steps.runner_stats(stats))


def run(benchmark: Benchmark, backend: Any, options: Options, *, args: Mapping[str, Any] | None = None,
        console: Any = None, roles: Mapping[str, Any] | None = None, scoring: str = "text", wait: bool = False,
        on_wait: Callable[[str], None] = lambda holder: None, replace: bool = False) -> Result:
    """Run ``benchmark`` with ``options`` into the run folder ``options.out`` (see the module's docstring):
    ``backend`` is the evaluated model's backend, or a callable that makes it once the folder is held; ``roles``
    the backends of companion models by role or name (a judge, an antagonist, a juror), which replace those the
    options would make; ``args`` what run.json records of the command; ``replace`` lets a run of another model
    replace the folder's results (refused otherwise). Returns the benchmark's ``Result``."""
    from culturebench.evaluate.runs.run_lock import hold_run_folder
    from culturebench.release_reader import opened_once

    out = Path(options.out)
    with hold_run_folder(out, wait, on_wait=on_wait), opened_once():  # the hooks' reads of the release share one
        check_run_folder(out, benchmark.name)
        before = cached_answers(out)
        try:
            factory = callable(backend) and not hasattr(backend, "generate")
            if not replace:
                check_model(out, asked=(args or {}).get("model"),
                            served=None if factory else getattr(backend, "model", None))
            if factory:
                backend = backend()
                if not replace:
                    check_model(out, served=getattr(backend, "model", None))
            if scoring == "logprobs":
                from culturebench.evaluate.runs import option_probability

                backend = option_probability.recording(backend, out)
                option_probability.check_endpoint(backend, benchmark, options, console)
            result = _run(benchmark, Run(options, backend, dict(roles or {}), console), args)
            if scoring == "logprobs":
                answers = option_probability.option_answers(benchmark, backend, options)
                replay(benchmark, options.replace(out=out / option_probability.FOLDER), answers,
                       model=str(backend.backend.model))
                line, written = option_probability.agreement_summary(benchmark, options, answers)
                result.lines.append(line)
                result.written.extend(written)
            return result
        except (KeyboardInterrupt, CostLimitReached) as stop:
            stop.kept_answers = cached_answers(out) - before
            raise


def replay(benchmark: Benchmark, options: Options, answers: Mapping[ChatRequest, str], *,
           model: str = "model") -> dict:
    """metrics.json of ``culturebench evaluate`` with ``options`` when the model's answers are ``answers`` (request
    -> text, given by a harness or ``--scoring logprobs``): the benchmark's own run into ``options.out`` with a
    ``replay.ReplayBackend``."""
    import json

    from culturebench.evaluate.runs.replay import ReplayBackend, quiet_console

    run(benchmark, ReplayBackend(model, answers), options, args={"benchmark": benchmark.name},
        console=quiet_console())
    return json.loads((Path(options.out) / "metrics.json").read_text(encoding="utf-8"))


def _run(benchmark: Benchmark, run: Run, args: Mapping[str, Any] | None) -> Result:
    """The hooks, then run.json."""
    from culturebench.evaluate.runs import run_record
    from culturebench.release_reader import Release

    started = datetime.now(UTC)
    options = run.options
    hooks = benchmark.hooks()
    plan = hooks.plan(options, str(getattr(run.backend, "model", "model")), roles=run.roles)
    release = Release.open(options.release)  # the one the plan read (``opened_once``)
    answers = hooks.answer(run, plan) or stream(run, plan, hooks.records)
    result = hooks.score(plan, answers)
    if plan.covers:
        result.metrics["covers"] = [covers.as_dict() for covers in plan.covers]
    written = run_record.write_run_record(
        run.out, [answers.path, *hooks.write(result, run.out)], benchmark=benchmark.name,
        release=release, backend=run.backend, args=args, started_at=started,
        stats=answers.stats, extra=hooks.evaluation(plan, result, answers))
    result.written, result.stats = written, answers.stats
    return result


def score(benchmark: Benchmark, responses: Sequence[Path], options: Options) -> Result:
    """``culturebench score``: the metrics of saved ``responses`` files (several models are scored together), by the
    benchmark's ``score`` hook, and metrics.json and the plots into ``options.out`` (its ``write``)."""
    saved = tuple(Path(path) for path in responses)
    if not saved:
        raise InputError("no responses file to score")
    from culturebench.release_reader import opened_once

    hooks = benchmark.hooks()
    plan = RunPlan(options=options, model="", requests=None, description=f"score {benchmark.name}")
    with opened_once():  # the hooks' reads of the release share one
        result = hooks.score(plan, Answers(saved[0], 0, {}, saved=saved))
        result.written = hooks.write(result, Path(options.out))
    return result


def check_run_folder(out: Path, benchmark: str) -> None:
    """RUN_DIR may hold a run of this benchmark (re-running resumes it), not of another one (its plots and files
    would be left beside the new ones) nor a run.json that is not culturebench's."""
    import json

    record = Path(out) / "run.json"
    if not record.is_file():
        return
    try:
        previous = json.loads(record.read_text(encoding="utf-8")).get("benchmark")
    except (ValueError, UnicodeDecodeError, AttributeError):
        raise InputError("run.json does not parse: not a run folder of culturebench; choose another --out",
                         file=record) from None
    if previous != benchmark:
        raise InputError(f"holds a run of {previous!r}, not {benchmark!r}; choose another --out (nothing was "
                         "replaced)", file=out)


def check_model(out: Path, *, asked: str | None = None, served: str | None = None) -> None:
    """RUN_DIR's results (run.json, metrics.json, the responses) are one model's: a run of another model into it is
    refused, naming both (``--replace`` lets it replace them; the cache keeps every model's answers). Like is
    compared with like: the model ``asked`` for (the command's ``--model``: a path, a Hub id) with the one the
    folder's run asked for, the model a backend ``served`` (its own name for it: vLLM serves a folder under its
    name) with the one that served the folder's run; resuming with the same ``--model`` is never refused."""
    import json

    record = Path(out) / "run.json"
    if not record.is_file():
        return
    try:
        previous = json.loads(record.read_text(encoding="utf-8"))
        before = {"asked": (previous.get("args") or {}).get("model"),
                  "served": (previous.get("backend") or {}).get("model")}
    except (ValueError, UnicodeDecodeError, AttributeError):
        return  # check_run_folder has refused a run.json that does not parse
    for kind, model in (("asked", asked), ("served", served)):
        if model is not None and before[kind] is not None and str(before[kind]) != str(model):
            raise InputError(f"holds the results of model {before[kind]!r}; evaluating {model!r} here would replace "
                             "its metrics.json and responses: choose another --out, or --replace to replace them "
                             "(the cache keeps both models' answers)", file=out)


def cached_answers(out: Path) -> int:
    """Answers in RUN_DIR/cache.sqlite (0 when there is none yet)."""
    from culturebench.evaluate.runs.run_folder import CACHE_FILE

    path = Path(out) / CACHE_FILE
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.Error:
        return 0
