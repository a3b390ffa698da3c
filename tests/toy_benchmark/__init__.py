"""A toy benchmark, registered from this one folder and one entry point (docs/adding-a-benchmark.md): yes / no
questions, accuracy against the gold answer. ``test_toy_benchmark.py`` builds, evaluates, scores and exports it
through the same command line as the five real benchmarks."""

from __future__ import annotations

from dataclasses import dataclass

from culturebench.contract import Benchmark, Generator, HarnessTask, OptionScoring
from culturebench.options import Options, option

ANSWERS = ("yes", "no")


@dataclass(frozen=True, kw_only=True)
class ToyOptions(Options):
    limit: int | None = option(help="Ask the first N questions.")
    temperature: float | None = option(help="Sampling temperature (default 0).")
    strict: bool = option(False, score=True, help="Only an answer that is exactly yes or no counts (default: the "
                                                  "first word).")


def toy_generator() -> Generator:
    """The generator of ``culturebench generate toy``, imported when the task is asked for."""
    from toy_benchmark.generate import GENERATOR

    return GENERATOR


class Toy(Benchmark):
    name = "toy"
    title = "Toy (a test benchmark)"
    description = "one yes / no question per row; accuracy"
    Options = ToyOptions
    tasks = (HarnessTask("toy", "Toy: yes / no questions; accuracy"),)
    generators = {"toy": toy_generator}

    def hooks(self):
        from toy_benchmark.run import ToyHooks

        return ToyHooks()

    def builder_module(self):
        from toy_benchmark import builder

        return builder

    def schemas_module(self):
        from toy_benchmark import schemas

        return schemas

    def headline(self, metrics, options):
        return {"accuracy": float(metrics["accuracy"])}

    def headline_names(self, options):
        return ("accuracy",)

    def option_scoring(self, options):
        return OptionScoring(lambda text: (text.lower(), ANSWERS) if text.lower() in ANSWERS else None,
                             parsed_field="answer", group_field="id")


BENCHMARK = Toy()
