"""The toy benchmark's plan, run and scoring: one user message per question, the first word of the answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from culturebench.contract import Result
from culturebench.evaluate import run_folder, run_record, run_steps
from culturebench.evaluate.backends import ChatRequest, SamplingParams
from culturebench.release import load_manifest, read_tables


def questions(options) -> list[dict]:
    manifest = load_manifest(options.release)
    frame = read_tables(options.release, manifest["outputs"])["questions"]["test"]
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


def write(out: Path, metrics: dict) -> list[Path]:
    Path(out).mkdir(parents=True, exist_ok=True)
    path = Path(out) / "metrics.json"
    path.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    return [path]


def evaluate(backend, options, *, args=None, console=None) -> Result:
    started = datetime.now(UTC)
    model = str(getattr(backend, "model", "model"))

    def records_of(items, responses):
        return [{"model": model, "id": item.row["id"], "gold": item.row["answer"], "response": response.text,
                 "answer": parse(response.text, options.strict)} for item, response in zip(items, responses)]

    planned = list(requests(options))  # a few questions: read once, counted for the progress bar
    path, _, stats = run_steps.stream_records(backend, planned, Path(options.out), "toy", records_of,
                                               total=len(planned), sharded=False, console=console)
    metrics = metrics_of(run_folder.read_jsonl(path))
    stats = run_steps.runner_stats(stats)
    written = run_record.write_run_record(options.out, [path, *write(options.out, metrics)], benchmark="toy",
                                          release=options.release, manifest=load_manifest(options.release),
                                          backend=backend, args=args, started_at=started, stats=stats, extra={})
    return Result(metrics=metrics, written=written, stats=stats)


def score_files(responses, options) -> Result:
    records = [{**r, "answer": parse(r["response"], options.strict)} for path in responses
               for r in run_folder.read_jsonl(Path(path))]
    metrics = metrics_of(records)
    return Result(metrics=metrics, written=write(options.out, metrics))
