"""The toy benchmark's generator (``culturebench generate toy``): a plugin's own task, listed by its Benchmark. The
model writes one yes / no question per topic (gold answer "yes": a test of the plumbing, not of the questions)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from culturebench.contract import Generator
from culturebench.options import GenerateOptions, option
from culturebench.generation.common import GenerationRun, request, write_atomic


@dataclass(frozen=True, kw_only=True)
class ToyGenerateOptions(GenerateOptions):
    topics: tuple[str, ...] = option(("water", "fire"), help="Comma-separated topics, one question each.")


class ToyGenerator(Generator):
    name = "toy"
    title = "Toy yes / no questions, one per topic"
    Options = ToyGenerateOptions

    def generate(self, backend, options: ToyGenerateOptions, console=None) -> tuple[str, list[Path]]:
        run = GenerationRun("toy", options.out, backend, console)
        asked = [request([("user", f"Write one yes / no question about {topic}.")], temperature=0.0, max_tokens=64,
                         seed=options.seed) for topic in options.topics]
        answers = run.ask(asked, "toy questions")
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["id", "question", "answer"])
        for number, response in enumerate(answers, 1):
            writer.writerow([f"g{number}", response.text.strip(), "yes"])
        path = Path(options.out) / "toy" / "questions.csv"
        write_atomic(path, buffer.getvalue())
        summary = run.close({"questions": len(answers)})
        return f"toy: {len(answers)} questions", [path, summary]


GENERATOR = ToyGenerator()
