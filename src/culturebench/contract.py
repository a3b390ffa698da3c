"""The one contract every benchmark meets (issue #44): its ``Options`` (:mod:`culturebench.options`), the engine's
hooks (``plan``, ``records`` or ``answer``, ``score``, ``write``, ``evaluation``, ``summary``: a ``Hooks`` subclass)
and the types they take and give (``RunPlan``, ``Run``, ``Answers``, ``Result``; the requests are
:mod:`culturebench.chat`'s), ``headline``, what option-probability scoring needs, its harness tasks, and its other
parts, each named by a plain import in a method: its comparison, generators, builder and schemas. A benchmark is a ``Benchmark`` subclass whose instance is the ``BENCHMARK`` attribute
of its package; :mod:`culturebench.registry` names the packages. The command line, the runner, the inspect and
lm-eval integrations, ``--scoring logprobs``, ``compare`` and ``publish`` reach benchmarks only through this
contract and name none.

This module imports nothing heavy (the command line reads every benchmark's options from it at start) and nothing of
``culturebench.evaluate``: it lies under the engine (``evaluate.runs.engine``), which names its types
(``tests/test_import_cycles.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from culturebench.chat import ChatRequest, ChatResponse
from culturebench.errors import InputError
from culturebench.options import BuildOptions, GenerateOptions, Options

if TYPE_CHECKING:
    from rich.console import Console


RAI_FACTS = Path(__file__).parent / "facts" / "croissant_rai"
"""The built-in benchmarks' Responsible-AI facts files (``Benchmark.rai_facts_file``)."""


class NoCountryView(Exception):
    """A run of a benchmark that has a country view but not for this run (``Benchmark.countries``): its message
    says why, and ``culturebench profile`` prints it."""


class Generator:
    """One ``culturebench generate TASK``: re-creates a benchmark's synthetic items with a model into a raw folder
    its builder reads. A benchmark lists its generators (``Benchmark.generators``: task -> a function that imports
    and gives the instance, called when the task runs), so a benchmark of another package adds its own."""

    name: ClassVar[str]
    """The task name (``culturebench generate <name>``)."""
    title: ClassVar[str]
    """One line: what it generates (the command line's list)."""
    Options: ClassVar[type[GenerateOptions]] = GenerateOptions

    def generate(self, backend: Any, options: GenerateOptions, console: Console | None = None
                 ) -> tuple[str, list[Path]]:
        """Generate into ``options.out`` with ``backend``: (one summary line, the files written)."""
        raise NotImplementedError


# ------------------------------------------------------------------------------------------------- the contract


@dataclass(frozen=True)
class HarnessTask:
    """A single-turn variant of a benchmark run by another harness (``culturebench/<name>`` in inspect,
    ``culturebench_<name>`` in lm-eval): the benchmark and the options that make the variant."""

    name: str
    description: str
    options: Mapping[str, Any] = field(default_factory=dict)
    needs_config: bool = False
    """Its options need a ``--config`` (e.g. the jurors who rate its answers); left out of an export without one."""


@dataclass(frozen=True)
class OptionScoring:
    """What ``--scoring logprobs`` needs of a closed-form benchmark."""

    read_option: Callable[[str], tuple[str, tuple[str, ...] | None] | None]
    """A generated token's text (without surrounding spaces and punctuation) -> (the option it stands for as the text the benchmark's parser reads, its group of
    options, or None when any such token is an option, e.g. integers), or None when it is no option."""
    parsed_field: str
    """The responses.jsonl field holding the parsed answer (compared by the agreement table)."""
    group_field: str
    """The responses.jsonl field the agreement table is broken down by."""


_WHOLE_NUMBER = re.compile(r"^\d{1,3}$")


def whole_number_option(text: str) -> tuple[str, None] | None:
    """``OptionScoring.read_option`` of a benchmark answered with a whole number: a token of 1-3 digits is the
    option of that number ("07" -> "7", as a number parser reads it), in no fixed group; None for anything else."""
    return (str(int(text)), None) if _WHOLE_NUMBER.match(text) else None


@dataclass(frozen=True)
class OpenColumns:
    """A release config restricted in some columns only: ``publish --allow-restricted`` withholds them and uploads
    the rest under ``license``."""

    withheld: tuple[str, ...]
    license: str
    reason: str


@dataclass(frozen=True)
class ScoreInput:
    """One table of what a benchmark's scores depend on, counted from a release (``culturebench diff`` compares a
    rebuild's with the previous release's): ``counts`` holds the ``by`` columns, ``value`` (when given) and ``count``
    (rows per group, or per group and value: a distribution per group)."""

    counts: Any
    """A small polars DataFrame: ``by`` columns (+ ``value``) + ``count``."""
    by: tuple[str, ...]
    description: str
    value: str | None = None
    scale: str | None = None
    """A column of ``counts`` with each group's scale_max - scale_min: ``value`` is ordinal on that scale and the
    diff gives the Wasserstein-1 distance of OLD's and NEW's distributions rescaled to [0, 1] (else the total
    variation distance of the shares)."""


def config_rows(tables: Mapping[str, Mapping[str, Any]], config: str, columns: Sequence[str]) -> Any:
    """``columns`` of every split of ``config`` as one polars LazyFrame (for ``score_inputs``)."""
    import polars as pl

    return pl.concat([frame.select(columns) for frame in tables[config].values()], how="vertical_relaxed")


@dataclass
class Result:
    """What ``evaluate`` and ``score`` return."""

    metrics: dict
    """metrics.json."""
    written: list[Path]
    """Every file written into the run folder."""
    stats: dict = field(default_factory=dict)
    """The runner's totals, as in run.json (``evaluate``)."""
    score: Any = None
    """The benchmark's own scored tables, for callers in Python."""
    lines: list[str] = field(default_factory=list)
    """Lines the command line prints after the summary (``--scoring logprobs``'s agreement)."""


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """What a run asks, before any model is made (``Hooks.plan``); a benchmark subclasses it with what its
    hooks need besides (its release tables, sampling settings, ...)."""

    options: Options
    model: str
    """The evaluated model's name (its records carry it)."""
    requests: Iterable | None
    """The planned items, each with its ``request`` (a ``ChatRequest``), in order (a generator: a run is never a
    list in memory); None where the requests depend on the model's answers (a benchmark that gives ``answer``)."""
    total: int = 0
    """How many ``requests`` (the progress bar; with ``schema``, the responses file's layout)."""
    description: str = ""
    """The progress bar's label."""
    covers: tuple = ()
    """What the run covers (``limit.Coverage``, one per part asked): metrics.json's ``covers``."""
    schema: Any = None
    """The records' ``polars.Schema``: a run of more than ``run_folder.SHARD_THRESHOLD`` requests then writes its
    responses as parquet shards; None: responses.jsonl at any size."""


@dataclass
class Answers:
    """What the model answered, as ``Hooks.score`` reads it: a fresh run's responses file (or folder of shards), left
    by ``Hooks.answer`` or the engine's ``stream``, with its records and the runner's totals
    (``run_steps.RUNNER_STATS``); or, for ``culturebench score`` (``evaluate.runs.engine.score``), the saved responses
    files (``saved``), of no run."""

    path: Path
    n_records: int
    stats: dict
    by_step: dict = field(default_factory=dict)
    """A run of several steps (parts, jurors): each one's runner totals, by name."""
    state: Any = None
    """What the benchmark's answering leaves for its scoring (e.g. the judged transcripts of dialogues)."""
    saved: tuple[Path, ...] = ()
    """The saved responses files ``culturebench score`` scores together (``path`` is the first); empty for a fresh
    run's answers, whose plan is its benchmark's own (a fresh run's ``RunPlan`` subclass; a saved one's plan is a
    plain ``RunPlan`` of the options)."""

    @property
    def files(self) -> tuple[Path, ...]:
        """Every responses file to score: the saved ones, or the run's one."""
        return self.saved or (self.path,)


@dataclass
class Run:
    """A run in progress as the engine hands it to ``Benchmark.answer``: the held run folder, the backend (already
    made), the options, the companion models the caller gave (``roles``: name -> backend) and the console."""

    options: Options
    backend: Any
    roles: Mapping[str, Any]
    console: Any = None

    @property
    def out(self) -> Path:
        return Path(self.options.out)


Records = Callable[[RunPlan, Sequence, Sequence[ChatResponse]], list[dict]]
"""The hook ``records(plan, items, responses)``: a batch of planned items and their responses -> the responses
file's records, in order."""


class Hooks:
    """The engine's hooks of one benchmark (``evaluate.runs.engine.run`` calls them in this order): a subclass in the
    benchmark's run module, which its ``Benchmark.hooks`` names. ``plan`` is the one plan of a run."""

    def plan(self, options: Options, model: str = "model", *, roles: Mapping[str, Any] | None = None) -> RunPlan:
        """What a run with ``options`` asks ``model`` (a ``RunPlan``), read from the release before a model is asked
        (``roles``: the companion backends the caller gave, for a benchmark that has ``Benchmark.roles``)."""
        raise NotImplementedError

    def requests(self, plan: RunPlan) -> Iterator[ChatRequest]:
        """The requests of ``plan``, in its order: each planned item's ``request``."""
        return (item.request for item in plan.requests or ())

    def answer(self, run: Run, plan: RunPlan) -> Answers | None:
        """The model's answers to ``plan`` into the run folder's responses file (``Answers``) for a run that is not
        one stream of planned requests (several steps, dialogues); None (the default): the engine streams every
        planned item through the runner, made records by ``records``."""
        return None

    def records(self, plan: RunPlan, items: Sequence, responses: Sequence[ChatResponse]) -> list[dict]:
        """The responses file's records of a batch of planned items and their responses, in order."""
        raise NotImplementedError

    def score(self, plan: RunPlan, answers: Answers) -> Result:
        """The metrics of ``answers`` (``Result.metrics``, and the scored tables as ``Result.score``): a fresh run's,
        with its plan, or saved responses files (``Answers.saved``, ``culturebench score``), with a plain
        ``RunPlan`` of the options. The engine adds a run's ``covers``."""
        raise NotImplementedError

    def write(self, result: Result, out: Path) -> list[Path]:
        """metrics.json and the plots of scored answers into ``out`` (a fresh run's or ``culturebench score``'s)."""
        raise NotImplementedError

    def evaluation(self, plan: RunPlan, result: Result, answers: Answers) -> dict:
        """What run.json says of the run beside the engine's fields (its ``evaluation`` block: the settings asked,
        and e.g. parse statuses and headline metrics)."""
        return {}

    def summary(self, metrics: Mapping) -> str:
        """The command line's lines for metrics.json."""
        raise NotImplementedError


class Benchmark:
    """One benchmark, reached only through these attributes and methods. Subclasses set the class attributes and
    implement ``headline`` and the parts it names, each by a plain import in a method (the modules are heavy, loaded
    on first use): ``hooks`` (its run module's :class:`Hooks`), ``builder_module``, ``schemas_module``,
    ``comparison`` and its ``generators``. A run is the engine's (``evaluate.runs.engine.run(benchmark, backend,
    options)``), which calls the hooks ``plan``, ``answer`` (or ``records``), ``score``, ``write`` and
    ``evaluation``; ``culturebench score`` is ``evaluate.runs.engine.score(benchmark, responses, options)``, the same
    ``score`` and ``write`` fed saved responses; ``summary`` is the hooks'."""

    name: ClassVar[str]
    """The registry name, a module name (a dash on the command line is an underscore)."""
    title: ClassVar[str]
    """The paper: name, authors, year, arXiv id."""
    description: ClassVar[str]
    """One line: what ``evaluate`` asks and what ``score`` reports (the command line's help)."""
    Options: ClassVar[type[Options]] = Options
    build_imports: ClassVar[tuple[str, ...]] = ()
    """Modules its build imports that take a second or more: ``build all`` imports them in a thread from the
    start (issue #31)."""
    generators: ClassVar[Mapping[str, Callable[[], Generator]]] = {}
    """Its ``culturebench generate`` tasks: task name -> a function without arguments that imports and gives the
    :class:`Generator` re-creating its synthetic items (called when the task is asked for: ``generator``)."""
    responses_help: ClassVar[str] = "responses.jsonl of `evaluate` (several comma-separated files are scored together)."
    """What ``culturebench score --responses`` takes."""
    tasks: ClassVar[tuple[HarnessTask, ...]] = ()
    """Its single-turn variants for inspect and lm-eval (empty: ``plan`` is not possible, see ``roles``)."""
    roles: ClassVar[tuple[str, ...]] = ()
    """Model roles ``evaluate`` asks besides the evaluated model (``evaluate(..., roles={role: backend})``; from
    the config otherwise): inspect runs the benchmark whole with its model roles."""
    lower_is_better: ClassVar[frozenset[str]] = frozenset()
    """Headline names where a lower value is better."""
    rai_facts_file: ClassVar[Path | None] = None
    """Its Responsible-AI facts file (``rai_facts``): a built-in benchmark's is ``RAI_FACTS / "<name>.json"``, a
    plugin's wherever its package keeps it."""
    open_columns: ClassVar[Mapping[str, OpenColumns]] = {}
    """Release config -> the columns ``publish --allow-restricted`` withholds (licence columns of the card)."""

    has_plan: ClassVar[bool] = True
    """Whether its requests can be planned without a model (False: they depend on the model's answers)."""

    def hooks(self) -> Hooks:
        """The engine's hooks (its run module's ``Hooks`` subclass, imported here: the module is heavy)."""
        raise NotImplementedError

    def requests(self, options: Options) -> Iterator[ChatRequest]:
        """The requests ``evaluate`` sends with ``options``, in its order (a plain generator, no model involved):
        ``Hooks.requests`` of its plan."""
        if not self.has_plan:
            raise InputError(f"{self.name}: its requests depend on the model's answers; it has no plan")
        hooks = self.hooks()
        return hooks.requests(hooks.plan(options))

    def check(self, options: Options) -> None:
        """Read the release and check ``options`` against it, before a model is loaded (``evaluate`` calls nothing
        else first): by default, plan the first request."""
        next(iter(self.requests(options)), None)

    def summary(self, metrics: Mapping) -> str:
        """The command line's lines for metrics.json."""
        return self.hooks().summary(metrics)

    def headline(self, metrics: Mapping, options: Options) -> dict[str, float]:
        """The paper's headline numbers of one model's metrics.json, flat (name -> value; None left out)."""
        raise NotImplementedError

    def headline_names(self, options: Options) -> tuple[str, ...]:
        """Every name ``headline`` can give for ``options`` (lm-eval declares them before any answer)."""
        raise NotImplementedError

    def option_scoring(self, options: Options) -> OptionScoring | None:
        """What ``--scoring logprobs`` needs, or None where the variant ``options`` gives is not closed-form."""
        return None

    def countries(self, metrics: Mapping, release: Path | None = None) -> dict | None:
        """Its country view of one model's metrics.json (issue #56): a countries.json object
        (``evaluate.reports.countries.view``: a measure per ISO alpha-3 country, with its interval), read by ``culturebench
        profile`` from a run folder without countries.json; ``release`` the release the run scored (None when
        unknown). None where the benchmark has no view; ``NoCountryView`` (saying why) where this run has none."""
        return None

    def comparison(self) -> Any:
        """How ``culturebench compare`` compares its runs (an ``evaluate.reports.compare.BenchmarkSpec``, by convention the
        ``COMPARE`` of its package's ``compare`` module, imported here); None (the default): it has none."""
        return None

    def score_inputs(self, tables: Mapping[str, Mapping[str, Any]]) -> dict[str, ScoreInput]:
        """What its scores depend on, counted from a release's tables (config -> split -> polars LazyFrame):
        ``culturebench diff`` compares OLD's and NEW's. By default ``score_inputs(tables)`` of its schemas module,
        which also declares each config's key columns (``KEYS``)."""
        return self.schemas_module().score_inputs(tables)

    def builder_module(self) -> Any:
        """The module of its builder (``builders/base.py`` says what it gives), imported here."""
        raise NotImplementedError

    def build_options(self) -> type[BuildOptions]:
        """The options of its build: its builder module's ``Options`` (a :class:`BuildOptions`), or none."""
        return getattr(self.builder_module(), "Options", BuildOptions)

    def generator(self, task: str) -> Generator:
        """The :class:`Generator` of its task ``task`` (one of ``generators``)."""
        return self.generators[task]()

    def schemas_module(self) -> Any:
        """The module of its release schemas, imported here: ``SCHEMAS`` (pandera, per config), ``expectations()``
        (Great Expectations suites), ``READ_DTYPES``, ``score_inputs(tables)``."""
        raise NotImplementedError

    def rai_facts(self) -> dict:
        """The Responsible-AI facts croissant.json carries (:mod:`culturebench.croissant` says what each holds): its
        ``rai_facts_file``, and none for a benchmark without one: croissant.json then says of each fact that the
        benchmark does not state it."""
        import json

        if self.rai_facts_file is None:
            return {}
        return json.loads(self.rai_facts_file.read_text(encoding="utf-8"))

    def task(self, name: str) -> HarnessTask:
        for task in self.tasks:
            if task.name == name:
                return task
        raise InputError(f"unknown task {name!r} of {self.name}; choose from {', '.join(t.name for t in self.tasks)}")


def lazy_exports(package: str, submodules: Callable[[], Mapping[str, ModuleType]], names: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a benchmark package whose ``__init__`` stays light (PEP 562):
    ``submodules()`` imports the package's submodules (a plain ``from ... import``, on the first use of a name) and
    gives them by name; ``names`` maps each re-exported name to the submodule holding it."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(submodules()[names[name]], name)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
