"""``culturebench evaluate NAME`` and ``culturebench score NAME``: one command per registered benchmark, made when
it is asked for, its flags made from the benchmark's Options dataclass (``options.option_fields``) beside the flags
every run takes; the benchmark is reached only through its contract (``registry.benchmark``), its run through the
engine (``evaluate.runs.engine.run``), with the backend the flags name (``make_backend``)."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
import typer.main

try:  # typer 0.29 vendors click: its Context, exceptions and parameter sources are typer._click's
    from typer import _click as click
except ImportError:  # typer before 0.29 runs on click itself
    import click

from culturebench import registry
from culturebench.contract import Benchmark
from culturebench.options import option_fields
from culturebench.errors import InputError
from culturebench.io import output_folder
from culturebench.registry import module_name
from culturebench.terminal import RELEASE_HELP, Terminated, console, error_line, say, say_written, user_errors


class BenchmarkGroup(typer.core.TyperGroup):
    """``evaluate`` / ``score``: a subcommand per registered benchmark, made when it is asked for (so the command
    line imports one benchmark, not all). An unknown benchmark, or a flag of another benchmark, is one error line
    (exit 2)."""

    make_command: Callable = None  # set per group: (benchmark) -> click command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(registry.names())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        name = module_name(name)
        if name not in registry.names():
            return None
        return self.make_command(registry.benchmark(name))

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and not args[0].startswith("-") and module_name(args[0]) not in registry.names():
            error_line(InputError(f"unknown benchmark {module_name(args[0])!r}; choose from "
                                  f"{', '.join(registry.names())}"))
            raise typer.Exit(2)
        return super().resolve_command(ctx, args)


class BenchmarkCommand(typer.core.TyperCommand):
    """A benchmark's ``evaluate`` / ``score`` command: a flag that only other benchmarks take says whose it is."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoSuchOption as exc:
            owners = [b.name for b in registry.benchmarks() if self.command_kind != "generate"
                      and any(exc.option_name in _flag_names(f)
                              for f in option_fields(_stage_options(b, self.command_kind), self.command_kind))]
            if not owners:
                raise
            error_line(InputError(f"{exc.option_name} is a {' and '.join(owners)} option, not {self.name}'s"))
            raise typer.Exit(2) from None

    command_kind = "evaluate"


def _stage_options(benchmark: Benchmark, kind: str) -> type:
    """The options class of ``benchmark``'s command ``kind``: its build options for build, else its Options."""
    return benchmark.build_options() if kind == "build" else benchmark.Options


def _flag_names(f: dataclasses.Field) -> list[str]:
    """The flags of an Options field: its ``flag`` (``--a/--no-a``: both) or ``--field-name``."""
    spelled = f.metadata.get("flag") or "--" + f.name.replace("_", "-")
    return spelled.split("/")


def _option_parameter(f: dataclasses.Field, hint: Any) -> inspect.Parameter:
    """An Options field as a typer parameter: its help (and choices), its flag, and None as the default (so that
    the command knows which flags were given; the dataclass holds the defaults)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
        origin = typing.get_origin(hint)
    python_type = str if origin is tuple else hint
    help_text = f.metadata["help"]
    if f.metadata.get("choices"):
        help_text += f" Choices: {', '.join(f.metadata['choices'])}."
    if f.default is not None and f.default is not dataclasses.MISSING and python_type is not bool:
        default = ",".join(map(str, f.default)) if isinstance(f.default, tuple) else f.default
        help_text += f" Default: {default}."
    flags = [f.metadata["flag"]] if f.metadata.get("flag") else (
        [f"--{f.name.replace('_', '-')}"] if python_type is bool else [])
    annotation = Annotated[python_type | None, typer.Option(*flags, help=help_text, show_default=False)]
    default = f.default if python_type is bool else None
    return inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _benchmark_command(benchmark: Benchmark, kind: str, template: Callable, run: Callable,
                       help_text: str, options: type | None = None) -> click.Command:
    """The click command ``culturebench <kind> <benchmark>``: the flags of ``template``'s signature (what every
    benchmark takes) and of the fields for ``kind`` of ``options`` (the benchmark's Options when None; its
    BuildOptions for build; for generate, ``benchmark`` is a Generator); ``run(benchmark, given, shared)`` with
    the option values the user gave (flags left at their default are not: the config file's values stand)."""
    options = options or benchmark.Options
    hints = typing.get_type_hints(options)
    own = option_fields(options, kind)
    shared = list(inspect.signature(template, eval_str=True).parameters.values())
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    parameters = [context, *shared, *(_option_parameter(f, hints[f.name]) for f in own)]
    names = {f.name for f in own}

    def callback(ctx: typer.Context, **values: Any) -> None:
        given = {name: value for name, value in values.items()
                 if name in names and ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}
        run(benchmark, given, {name: value for name, value in values.items() if name not in names})

    callback.__signature__ = inspect.Signature(parameters)
    callback.__doc__ = help_text
    single = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False,
                         context_settings={"max_content_width": 200})
    single.command(benchmark.name, short_help=benchmark.title, cls=type(f"{kind.title()}Command", (BenchmarkCommand,),
                                             {"command_kind": kind}))(callback)
    return typer.main.get_command(single)


def _evaluate_flags(
    model: Annotated[str, typer.Option(help="Model name (the server's model id, or a vLLM model path / HF id).")],
    out: Annotated[Path, typer.Option(help="Run folder: cache.sqlite, the responses, metrics.json, plots, run.json. Re-running the same command into it resumes.")],
    backend: Annotated[str, typer.Option(help="openai (any OpenAI-compatible server; key from OPENAI_API_KEY), azure (Azure OpenAI: --model is the deployment, --base-url the resource endpoint, key from AZURE_OPENAI_API_KEY), vllm (offline vLLM engine: a local GPU, or vLLM's CPU build) or ray (a Ray cluster: vLLM replicas on its GPUs or CPUs, or many --base-url endpoints; pip install 'culturebench[ray]').")] = "openai",
    base_url: Annotated[list[str], typer.Option(help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (openai backend; repeatable with --backend ray, which fans the requests out over them).")] = None,
    release: Annotated[str, typer.Option(help=RELEASE_HELP + " Default: releases/NAME.")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at most, per endpoint (openai and ray backends; also the judges', jurors' and antagonist's). Lowered by itself while requests time out.")] = 16,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for one reply before retrying it (openai and ray backends).")] = 120.0,
    tensor_parallel_size: Annotated[int, typer.Option(help="GPUs to shard the model over (vllm backend; per replica with --backend ray).")] = 1,
    ray_address: Annotated[str, typer.Option(help="ray backend: the cluster to join (e.g. 10.0.0.1:6379 or auto); default: start a local Ray on this machine.")] = None,
    replicas: Annotated[int, typer.Option(help="ray backend: vLLM engine replicas (without --base-url), or client actors per endpoint (with it).")] = 1,
    engine_args: Annotated[str, typer.Option(help='vllm backend and ray\'s vLLM engine: vLLM engine arguments as a JSON object, e.g. \'{"max_model_len": 4096, "dtype": "bfloat16"}\' (they win over the defaults; run.json records what the engine got).')] = None,
    config: Annotated[Path, typer.Option(help="JSON/YAML file of this benchmark's options: any flag below by its name with underscores (a flag given wins), and the options that are not flags (lists, mappings).")] = None,
    header: Annotated[list[str], typer.Option(help="Extra HTTP header 'Name: value' sent with every request (repeatable; openai and azure backends). Its value is treated as a secret: never shown or stored.")] = None,
    api_version: Annotated[str, typer.Option(help="azure backend: the API version (default OPENAI_API_VERSION), e.g. 2024-10-21.")] = None,
    request_shape: Annotated[str, typer.Option(help='Request shape as JSON: for the evaluated model, e.g. \'{"token_limit": "max_completion_tokens", "omit": ["temperature", "top_p", "stop"]}\' for a reasoning model, or {MODEL: shape, ...} for any model of the run (evaluated, judge, juror, antagonist). Default: learnt from the API\'s "unsupported parameter" error, once per model.')] = None,
    allow_modified_release: Annotated[bool, typer.Option("--allow-modified-release", help="Evaluate a release whose files differ from its manifest.json (refused otherwise); run.json records it.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the first step's requests (cached, to ask), estimated tokens and cost; send nothing.")] = False,
    price_in: Annotated[float, typer.Option(help="Price per 1M prompt tokens (cost in run.json, --dry-run, --max-cost).")] = None,
    price_out: Annotated[float, typer.Option(help="Price per 1M completion tokens.")] = None,
    max_cost: Annotated[float, typer.Option(help="Stop cleanly once the spent cost passes this (needs --price-in/--price-out); answers kept, re-run to resume. Exit code 3.")] = None,
    scoring: Annotated[str, typer.Option(help="text (the papers': parse the answer) or logprobs (closed-form benchmarks; openai, ray or vllm backend): also score by the answer options' probabilities from the endpoint's top_logprobs, into RUN_DIR/option_probability/ and RUN_DIR/agreement.json.")] = "text",
    max_wait: Annotated[float, typer.Option(help="Longest wait in seconds before retrying a request (openai, azure and ray backends; backoff and a server's Retry-After, jitter included). A server asking to wait longer ends the run at once, every answer kept.")] = 60.0,
    wait_for_lock: Annotated[bool, typer.Option("--wait-for-lock", help="When another run holds --out (one run at a time per folder), wait for it to end instead of refusing.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Let this model's results replace another model's in --out (refused otherwise; the cache keeps both models' answers).")] = False,
) -> None:
    """The flags every ``evaluate NAME`` takes (its signature is the template of the generated commands)."""


def _score_flags(
    responses: Annotated[Path, typer.Option(help="Model answers (see above); several comma-separated files (one or more models) are scored together.")],
    release: Annotated[str, typer.Option(help=RELEASE_HELP)],
    out: Annotated[Path, typer.Option(help="Run folder that receives metrics.json and the plots.")],
    config: Annotated[Path, typer.Option(help="JSON/YAML file of this benchmark's scoring options: any flag below by its name with underscores (a flag given wins), and the options that are not flags.")] = None,
    allow_modified_release: Annotated[bool, typer.Option("--allow-modified-release", help="Score against a release whose files differ from its manifest.json (refused otherwise).")] = False,
) -> None:
    """The flags every ``score NAME`` takes."""


def _score_command(benchmark: Benchmark) -> click.Command:
    return _benchmark_command(
        benchmark, "score", _score_flags, _score,
        f"Score saved model answers against a {benchmark.title} release with the paper's metrics and plots: "
        f"{benchmark.description}. --responses: {benchmark.responses_help}")


def _evaluate_command(benchmark: Benchmark) -> click.Command:
    return _benchmark_command(
        benchmark, "evaluate", _evaluate_flags, _evaluate,
        f"Run a model on a {benchmark.title} release and score it: {benchmark.description}.")


score_app = typer.Typer(cls=type("ScoreGroup", (BenchmarkGroup,), {"make_command": staticmethod(_score_command)}),
                        no_args_is_help=True, rich_markup_mode=None)
evaluate_app = typer.Typer(cls=type("EvaluateGroup", (BenchmarkGroup,),
                                    {"make_command": staticmethod(_evaluate_command)}),
                           no_args_is_help=True, rich_markup_mode=None)


def _score(benchmark: Benchmark, given: dict, flags: dict) -> None:
    """``culturebench score NAME``."""
    from datetime import datetime, timezone

    from culturebench.evaluate.runs import engine, run_folder, run_record
    from culturebench.release_reader import opened_once

    started = datetime.now(timezone.utc)
    out = flags["out"]
    with user_errors(), opened_once():  # the release's manifest read once, for its check and the scoring
        output_folder(out)
        release = _checked_release(flags["release"], flags["allow_modified_release"])
        options = benchmark.Options.parse(given, flags["config"]).replace(release=release, out=out)
        result = engine.score(benchmark, run_folder.split_paths(flags["responses"]), options)
        args = {"benchmark": benchmark.name, "responses": str(flags["responses"]), "release": str(release),
                "out": str(out), "config": None if flags["config"] is None else str(flags["config"]),
                "allow_modified_release": flags["allow_modified_release"], **_json_args(given)}
        written = run_record.write_score_record(out, result.written, benchmark=benchmark.name, release=release,
                                              args=args, started_at=started)
    say_written(benchmark.summary(result.metrics), written)
    say_coverage(out)


def _json_args(values: dict) -> dict:
    return {name: list(value) if isinstance(value, tuple) else value for name, value in values.items()}


def _evaluate(benchmark: Benchmark, given: dict, flags: dict) -> None:
    """``culturebench evaluate NAME``: the options and the release checked, then the engine's run
    (``evaluate.runs.engine.run``), which holds the run folder before the backend is made."""
    from culturebench.chat import CostLimitReached
    from culturebench.evaluate.runs.run_steps import request_counts
    from culturebench.evaluate.runs.runner import DryRun
    from culturebench.release_reader import opened_once

    name, out, model = benchmark.name, flags["out"], flags["model"]
    release = flags["release"]
    given_release = release is not None
    release = release if given_release else Path("releases") / name
    base_urls = list(flags["base_url"] or [])
    config, scoring = flags["config"], flags["scoring"]
    args = {"benchmark": name, "model": model, "backend": flags["backend"],
            "base_url": base_urls[0] if len(base_urls) == 1 else (base_urls or None), "release": str(release),
            **{k: flags[k] for k in ("concurrency", "timeout", "tensor_parallel_size", "ray_address", "replicas",
                                     "engine_args")},
            "out": str(out), "config": None if config is None else str(config), **_json_args(given),
            "headers": [h.partition(":")[0].strip() for h in flags["header"] or []],
            **{k: flags[k] for k in ("api_version", "request_shape", "allow_modified_release", "price_in",
                                     "price_out", "max_cost", "scoring", "max_wait")}}
    if flags["backend"] == "vllm":  # the offline engine sends no request over a network
        from culturebench.evaluate.models.vllm_backend import UNUSED_FLAGS

        args = {k: v for k, v in args.items() if k not in UNUSED_FLAGS}
    with user_errors(), opened_once():  # the release's manifest read once, for its check, the options and the run
        output_folder(out)
        release = _checked_release(release, flags["allow_modified_release"], hub=given_release)
        options = benchmark.Options.parse(given, config).replace(release=release, out=out)
        args["seed"] = options.seed
        from culturebench.evaluate.runs import option_probability

        option_probability.check_scoring(benchmark, options, scoring, flags["backend"])
        benchmark.check(options)  # the release read and the options checked against it, before a model is loaded
        client = _client_options(model, flags["header"], flags["api_version"], flags["request_shape"],
                                 flags["price_in"], flags["price_out"], flags["max_cost"])
        if not flags["max_wait"] > 0:
            raise InputError(f"--max-wait must be more than 0 seconds, got {flags['max_wait']:g}")
        if flags["dry_run"] and flags["backend"] not in ("openai", "azure"):
            raise InputError(f"--dry-run needs an HTTP backend (openai or azure), not {flags['backend']}")

        def make_backend():  # called by the engine once it holds the run folder
            made = _make_backend(flags["backend"], model, base_urls, concurrency=flags["concurrency"],
                                 timeout=flags["timeout"], seed=options.seed,
                                 tensor_parallel_size=flags["tensor_parallel_size"],
                                 ray_address=flags["ray_address"], replicas=flags["replicas"],
                                 engine_args=flags["engine_args"], max_wait=flags["max_wait"], log_dir=out,
                                 **client)
            if flags["dry_run"]:
                made.dry_run = True
            return made

        from culturebench.evaluate.runs import engine

        try:
            result = engine.run(benchmark, make_backend, options, args=args, console=console, scoring=scoring,
                                replace=flags["replace"], wait=flags["wait_for_lock"], on_wait=lambda holder: say(
                                    f"waiting for the run holding {out} ({holder}) to end", style="yellow"))
        except DryRun as stop:
            say(stop.line())
            return
        except CostLimitReached as stop:
            say(f"stopped: {stop}; {getattr(stop, 'kept_answers', 0):,} new answers kept in {out / 'cache.sqlite'} "
                "(re-run the same command, with a higher --max-cost, to resume); no results written", style="yellow")
            raise typer.Exit(3) from None
        except KeyboardInterrupt as exc:
            say(f"interrupted; {getattr(exc, 'kept_answers', 0):,} new answers kept in {out / 'cache.sqlite'} "
                "(re-run the same command to resume); no results written", style="yellow")
            raise typer.Exit(128 + exc.signum if isinstance(exc, Terminated) else 130) from None
    lines = [benchmark.summary(result.metrics), f"{name}: {request_counts(result.stats['n_requests'], result.stats)}",
             *result.lines]
    say_written("\n".join(lines), result.written)
    say_coverage(out)


def say_coverage(run_dir: Path) -> None:
    """What a run covers (metrics.json ``covers``, see evaluate/runs/limit.py), where it has too little to mean much,
    and the metrics' own ``warnings`` (e.g. numbers left without an interval: ``uncertainty.warn_no_spread``)."""
    import json

    path = Path(run_dir) / "metrics.json"
    metrics = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for covers in metrics.get("covers") or []:
        say(covers["text"])
        for warning in covers["warnings"]:
            say(f"warning: {warning}", style="yellow")
    for warning in metrics.get("warnings") or []:
        say(f"warning: {warning}", style="yellow")


def _checked_release(value: str | Path, allow_modified: bool, hub: bool = True) -> Path:
    """The release folder of ``--release``: a local folder or, with ``hub``, a Hub repo id (``Release.open``: a Hub
    snapshot is verified as it is fetched, what its upload leaves out by design exempt), whose files match its
    manifest.json (``Release.verify``) unless ``allow_modified``. A folder without manifest.json is left to the
    benchmark, which says so."""
    from culturebench.release_reader import Release

    if hub and not Path(value).exists():
        return Release.open(value).folder
    folder = Path(value)
    if not allow_modified and (folder / "manifest.json").is_file():
        Release.open(folder).verify()
    return folder


def _client_options(model: str, headers: list[str] | None, api_version: str | None, request_shape: str | None,
                    price_in: float | None, price_out: float | None, max_cost: float | None) -> dict:
    """The HTTP client options of ``evaluate`` (headers, Azure API version, request shape, prices, cost budget)."""
    import json

    from culturebench.evaluate.models.backends import parse_header
    from culturebench.chat import CostBudget
    from culturebench.evaluate.models.request_shape import RequestShape

    if (price_in is None) != (price_out is None):
        raise InputError("give both --price-in and --price-out (per 1M tokens), or neither")
    if any(price is not None and price < 0 for price in (price_in, price_out, max_cost)):
        raise InputError("--price-in, --price-out and --max-cost must be 0 or more")
    try:
        shape = None if request_shape is None else json.loads(request_shape)
    except ValueError as exc:
        raise InputError(f"--request-shape is not JSON ({exc})") from None
    return {"headers": dict(parse_header(h) for h in headers or []), "api_version": api_version,
            "request_shapes": {} if shape is None else RequestShape.per_model(shape, model),
            "price_per_million": None if price_in is None else (price_in, price_out),
            "budget": CostBudget(limit=max_cost)}


def _make_backend(backend: str, model: str, base_urls: list[str], *, concurrency: int, timeout: float, seed: int,
                  tensor_parallel_size: int, ray_address: str | None, replicas: int, engine_args: str | None = None,
                  max_wait: float = 60.0, headers: dict | None = None, api_version: str | None = None,
                  request_shapes=None, price_per_million=None, budget=None, log_dir: Path | None = None):
    """The model backend ``evaluate`` names (each imported only when used)."""
    from culturebench.evaluate.models.vllm_backend import parse_engine_args

    http = {"headers": headers, "request_shapes": request_shapes, "price_per_million": price_per_million,
            "budget": budget, "backoff_max": max_wait}
    engine = parse_engine_args(engine_args)
    if backend == "azure":
        from culturebench.evaluate.models.backends import AzureOpenAIBackend

        if len(base_urls) > 1:
            raise InputError("several --base-url need --backend ray (the azure backend talks to one endpoint)")
        return AzureOpenAIBackend(model, base_urls[0] if base_urls else None, concurrency=concurrency,
                                  timeout=timeout, api_version=api_version, **http)
    if backend == "ray":
        from culturebench.evaluate.models.ray_backend import RayBackend

        return RayBackend(model, base_urls, address=ray_address, replicas=replicas,
                          tensor_parallel_size=tensor_parallel_size, concurrency=concurrency, timeout=timeout,
                          seed=seed, engine_args=engine, backoff_max=max_wait)
    if len(base_urls) > 1:
        raise InputError(f"several --base-url need --backend ray (the {backend} backend talks to one endpoint)")
    if backend == "openai":
        from culturebench.evaluate.models.backends import OpenAIBackend

        return OpenAIBackend(model, base_url=base_urls[0] if base_urls else None, concurrency=concurrency,
                             timeout=timeout, **http)
    if backend == "vllm":
        from culturebench.evaluate.models.vllm_backend import VLLMBackend

        return VLLMBackend(model, tensor_parallel_size=tensor_parallel_size, seed=seed, engine_args=engine,
                           log_dir=log_dir)
    raise InputError(f"unknown backend {backend!r}; choose from openai, azure, vllm, ray")
