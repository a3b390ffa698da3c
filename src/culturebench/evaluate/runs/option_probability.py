"""``culturebench evaluate --scoring logprobs``: a closed-form benchmark scored by the probabilities the model puts on
the answer options as well as by its text.

None of the papers scores this way (they parse the generated text); it answers the question of a model that
"says C" but puts most of its mass on A. The run is the usual one (metrics by text in ``RUN_DIR/metrics.json``),
with the endpoint asked for ``top_logprobs`` (OpenAI-compatible servers, vLLM); then, with what the benchmark's
``option_scoring`` says (``contract.OptionScoring``: which tokens are options, which field holds the parsed
answer, which field the agreement is broken down by):

- each answer's option distribution (``option_distribution``): at the first generated token that is an answer
  option, the probabilities of the options of its group among that token's alternatives, renormalised to sum to 1.
  An answer with no option token (an option's text repeated) stays without one.
- metrics by option probability: the same benchmark run again with every answer replaced by its most probable
  option (``engine.replay``: culturebench's own parsing and metrics), into ``RUN_DIR/option_probability/``; an
  answer without an option distribution counts as unparsed there.
- ``RUN_DIR/agreement.json``: the share of answers whose parsed text answer is their most probable option, over the
  answers that have both, overall and per group; ``n_without_option_answer`` counts answers without an option
  distribution or whose most probable option does not parse for the prompt, ``n_text_unparsed`` those whose text
  does not parse.

The logprobs are not in the response cache; they are appended to ``RUN_DIR/logprobs.jsonl`` as answers arrive
(keyed like the cache), so a resumed run finds those of its cached answers there. An endpoint that returns no
logprobs is reported before the run starts (one probe request, kept in the cache).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from culturebench.chat import ChatRequest, ChatResponse
from culturebench.contract import Benchmark, OptionScoring
from culturebench.options import Options
from culturebench.errors import InputError
from culturebench.evaluate.runs import run_folder, run_steps
from culturebench.evaluate.runs.cache import cache_key
from culturebench.evaluate.runs.replay import planned_requests

SCORINGS = ("text", "logprobs")
TOP_LOGPROBS = 20
"""Alternatives asked for per generated token (OpenAI's chat completions allow at most 20)."""
LOGPROBS_FILE = "logprobs.jsonl"
FOLDER = "option_probability"
AGREEMENT_FILE = "agreement.json"

_EDGES = re.compile(r"^[\s\W_]+|[\s\W_]+$")


def check_scoring(benchmark: Benchmark, options: Options, scoring: str, backend: str) -> None:
    """``--scoring`` before anything is asked: a known mode; logprobs only where the benchmark's variant is
    closed-form (``Benchmark.option_scoring``) and for the openai, ray (either engine) or vllm backend."""
    if scoring not in SCORINGS:
        raise InputError(f"unknown --scoring {scoring!r}; choose from {', '.join(SCORINGS)}")
    if scoring == "text":
        return
    if benchmark.option_scoring(options) is None:
        raise InputError(f"--scoring logprobs is for the closed-form tasks; {benchmark.name} with these options "
                         "has no answer options to read")
    if backend not in ("openai", "ray", "vllm"):
        raise InputError(f"--scoring logprobs needs --backend openai, ray or vllm (endpoints or engines that return "
                         f"logprobs), not {backend}")


def _option(scoring: OptionScoring, token: str) -> tuple[str, tuple[str, ...] | None] | None:
    """The option a token stands for and its group (None: any such token is an option), or None."""
    return scoring.read_option(_EDGES.sub("", token))


MAX_LOGPROB = 1e-4
"""A log-probability is at most 0; servers round, so up to this is read as one, and anything above (or not finite)
makes the answer's logprobs unreadable."""


def option_distribution(scoring: OptionScoring, logprobs: Sequence | None) -> dict[str, float] | None:
    """At the first generated token that is an answer option, each option's probability among that token's
    alternatives (alternatives standing for the same option add up), renormalised to sum to 1; None (unreadable)
    when no generated token is an option, there are no logprobs, or one of that token's is no log-probability
    (not finite, or above MAX_LOGPROB)."""
    for token, logprob, alternatives in logprobs or ():
        found = _option(scoring, token)
        if found is None:
            continue
        mass: dict[str, float] = {}
        for alternative, alternative_logprob in alternatives or ((token, logprob),):
            if not (math.isfinite(alternative_logprob) and alternative_logprob <= MAX_LOGPROB):
                return None
            other = _option(scoring, alternative)
            if other is not None and other[1] == found[1]:
                mass[other[0]] = mass.get(other[0], 0.0) + math.exp(alternative_logprob)
        if not mass:
            mass = {found[0]: 1.0}
        total = sum(mass.values())
        return {option: p / total for option, p in sorted(mass.items())}
    return None


def most_probable(distribution: Mapping[str, float] | None) -> str | None:
    """The option with the most probability (ties: the first in sorted order); None without a distribution."""
    return None if not distribution else max(sorted(distribution), key=lambda option: distribution[option])


class LogprobRecorder:
    """Wraps a backend: every response it returns has its logprobs appended to ``path`` (with the request's cache
    key) before it is handed on; everything else is the wrapped backend's."""

    def __init__(self, backend: Any, path: Path) -> None:
        self.backend = backend
        self.path = Path(path)
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def generate(self, requests: Sequence[ChatRequest], on_response: Callable[[int, ChatResponse], None]) -> None:
        params = self.backend.cache_params()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            def record(index: int, response: ChatResponse) -> None:
                line = json.dumps({"key": cache_key(params, requests[index]), "logprobs": response.logprobs})
                with self._lock:
                    handle.write(line + "\n")
                    handle.flush()
                on_response(index, response)

            self.backend.generate(requests, record)


def recorded_logprobs(path: Path) -> dict[str, list | None]:
    """The logprobs of ``LogprobRecorder``'s file by cache key (the last line of a key wins)."""
    if not Path(path).is_file():
        return {}
    return {record["key"]: record["logprobs"] for record in map(json.loads, Path(path).read_text("utf-8").splitlines())
            if record}


def recording(backend: Any, out: Path) -> LogprobRecorder:
    """``backend`` asked for ``top_logprobs``, its logprobs recorded into ``out``/logprobs.jsonl."""
    backend.top_logprobs = TOP_LOGPROBS
    return LogprobRecorder(backend, Path(out) / LOGPROBS_FILE)


def check_endpoint(recorder: LogprobRecorder, benchmark: Benchmark, options: Options, console=None) -> None:
    """One request of the run (kept in the cache) to learn whether the endpoint returns logprobs; an endpoint that
    returns none is an InputError before the run starts."""
    first = next(iter(benchmark.requests(options)))
    run_steps.ask(recorder, [first], Path(options.out), "logprobs check", console)
    key = cache_key(recorder.backend.cache_params(), first)
    logprobs = recorded_logprobs(Path(options.out) / LOGPROBS_FILE).get(key)
    where = getattr(recorder.backend, "where", f"the {recorder.backend.name} backend")
    if not logprobs:
        raise InputError(f"--scoring logprobs: {where} returned no logprobs for model {recorder.backend.model!r} "
                         "(or none in OpenAI's shape; it needs an endpoint that returns logprobs / top_logprobs, "
                         "e.g. vLLM or OpenAI); run without --scoring logprobs to score the text only")
    bad = next(((token, value) for token, logprob, alternatives in logprobs
                for token, value in ((token, logprob), *(alternatives or ()))
                if not (math.isfinite(value) and value <= MAX_LOGPROB)), None)
    if bad is not None:
        raise InputError(f"--scoring logprobs: {where} returned logprobs that are no log-probabilities for model "
                         f"{recorder.backend.model!r} (token {bad[0]!r}: {bad[1]}; a log-probability is at most 0); "
                         "run without --scoring logprobs to score the text only")


def agreement(benchmark: str, scoring: OptionScoring, text_records: Sequence[Mapping],
              probability_records: Sequence[Mapping]) -> dict:
    """Share of answers whose parsed text answer equals the one parsed from their most probable option, over the
    answers that have both, overall and per ``scoring.group_field`` value."""
    field, group_field = scoring.parsed_field, scoring.group_field
    if len(text_records) != len(probability_records):
        raise ValueError("the text and option-probability runs have different answers")
    cells: dict[str, dict[str, int]] = {}

    def count(cell: dict[str, int], text_answer, probability_answer) -> None:
        cell["n_answers"] += 1
        if probability_answer is None:
            cell["n_without_option_answer"] += 1
        elif text_answer is None:
            cell["n_text_unparsed"] += 1
        else:
            cell["n_compared"] += 1
            cell["n_agree"] += int(text_answer == probability_answer)

    empty = {"n_answers": 0, "n_compared": 0, "n_agree": 0, "n_without_option_answer": 0, "n_text_unparsed": 0}
    overall = dict(empty)
    for text_record, probability_record in zip(text_records, probability_records):
        group = str(text_record.get(group_field))
        cell = cells.setdefault(group, dict(empty))
        for target in (overall, cell):
            count(target, text_record.get(field), probability_record.get(field))

    def share(cell: dict[str, int]) -> dict:
        return {**cell, "agreement": cell["n_agree"] / cell["n_compared"] if cell["n_compared"] else None}

    return {"benchmark": benchmark, "parsed_field": field, "group_field": group_field,
            "definition": "share of compared answers whose parsed text answer is their most probable option "
                          "(compared: both a parsed text answer and an option distribution)",
            "overall": share(overall), f"by_{group_field}": {g: share(c) for g, c in sorted(cells.items())}}


def option_answers(benchmark: Benchmark, recorder: LogprobRecorder, options: Options) -> dict[ChatRequest, str]:
    """After the text run into ``options.out``: each planned request's most probable option ("" where its answer has
    no option distribution), the answers the engine replays into ``out/option_probability`` (``FOLDER``)."""
    scoring = benchmark.option_scoring(options)
    params = recorder.backend.cache_params()
    logprobs = recorded_logprobs(Path(options.out) / LOGPROBS_FILE)
    return {request: most_probable(option_distribution(scoring, logprobs.get(cache_key(params, request)))) or ""
            for request in planned_requests(benchmark, options)}


def agreement_summary(benchmark: Benchmark, options: Options, answers: Mapping[ChatRequest, str]
                      ) -> tuple[str, list[Path]]:
    """Once ``answers`` (``option_answers``) are replayed into ``out/option_probability``: ``out/agreement.json``;
    returns (summary line, paths written)."""
    out = Path(options.out)
    folder = out / FOLDER
    table = agreement(benchmark.name, benchmark.option_scoring(options), run_folder.read_records(out),
                      run_folder.read_records(folder))
    path = out / AGREEMENT_FILE
    path.write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    o = table["overall"]
    share = "n/a" if o["agreement"] is None else f"{o['agreement']:.3f}"
    line = (f"{benchmark.name} option probability: {sum(bool(a) for a in answers.values()):,} of {len(answers):,} "
            f"requests with an option distribution; parsed answer = most probable option for {share} of "
            f"{o['n_compared']:,} compared answers (metrics in {folder / 'metrics.json'})")
    return line, [folder / "metrics.json", path, out / LOGPROBS_FILE]
