"""The toy benchmark's plan, run and scoring: one user message per question, the first word of the answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from culturebench.contract import Hooks, Result, RunPlan
from culturebench.evaluate.runs import run_folder
from culturebench.chat import ChatRequest, SamplingParams
from culturebench.release_reader import Release


def questions(options) -> list[dict]:
    frame = Release.open(options.release).tables(lazy=False, typed=False)["questions"]["test"]
    return frame.head(options.limit or frame.height).to_dicts()


@dataclass(frozen=True)
class Item:
    row: dict
    request: ChatRequest


def requests(options):
    """One user message per question (a generator: the runner streams it)."""
    sampling = SamplingParams(temperature=options.temperature or 0.0, max_tokens=options.max_tokens or 8,
                              seed=options.seed)
    for row in questions(options):
        yield Item(row, ChatRequest(messages=(("user", f"Answer yes or no. {row['question']}"),), sampling=sampling))


def parse(text: str, strict: bool) -> str | None:
    words = text.strip().lower().split()
    answer = text.strip().lower() if strict else (words[0].strip(".,!") if words else "")
    return answer if answer in ("yes", "no") else None


def metrics_of(records: list[dict]) -> dict:
    correct = sum(r["answer"] == r["gold"] for r in records)
    return {"n": len(records), "accuracy": correct / len(records) if records else None}


def write_metrics(out: Path, metrics: dict) -> list[Path]:
    Path(out).mkdir(parents=True, exist_ok=True)
    path = Path(out) / "metrics.json"
    path.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    return [path]


class ToyHooks(Hooks):
    """The engine's hooks (``contract.Hooks``; ``evaluation`` and ``answer`` keep their defaults)."""

    def plan(self, options, model="model", *, roles=None) -> RunPlan:
        items = list(requests(options))  # a few questions: read once, counted for the progress bar
        return RunPlan(options=options, model=model, requests=items, total=len(items), description="toy")

    def records(self, plan, items, responses):
        return [{"model": plan.model, "id": item.row["id"], "gold": item.row["answer"], "response": response.text,
                 "answer": parse(response.text, plan.options.strict)} for item, response in zip(items, responses)]

    def score(self, plan, answers) -> Result:
        """A run's responses file or ``culturebench score``'s saved ones (``answers.files``), each answer read again
        under the options' rule."""
        records = [{**r, "answer": parse(r["response"], plan.options.strict)} for path in answers.files
                   for r in run_folder.read_jsonl(path)]
        return Result(metrics=metrics_of(records), written=[])

    def write(self, result, out):
        return write_metrics(out, result.metrics)

    def summary(self, metrics):
        return f"toy: accuracy {metrics['accuracy']:.3f} over {metrics['n']} answers"
