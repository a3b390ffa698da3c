"""A benchmark's metrics from answers given elsewhere: an inspect or lm-eval harness's, or ``--scoring logprobs``'s
most probable options. The benchmark's own run (``engine.replay``: ``engine.run``) goes with a backend that answers
each planned request with its given answer (``ReplayBackend``), so parsing, metrics and bootstrap are culturebench's and the numbers equal
``culturebench evaluate``'s on the same answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.console import Console

from culturebench.chat import ChatRequest, ChatResponse
from culturebench.contract import Benchmark
from culturebench.options import Options
from culturebench.errors import InputError


def planned_requests(benchmark: Benchmark, options: Options) -> list[ChatRequest]:
    """The distinct requests ``culturebench evaluate`` sends with ``options``, in its order (identical requests,
    asked once by the runner, appear once); an InputError when the release gives none."""
    requests = list(dict.fromkeys(benchmark.requests(options)))
    if not requests:
        raise InputError(f"{benchmark.name}: the release gives no requests", file=options.release)
    return requests


class ReplayBackend:
    """A backend that answers each request with the given answer to it (``answers``: request -> text); a request
    without one is an InputError naming it."""

    name = "replay"

    def __init__(self, model: str, answers: Mapping[ChatRequest, str]) -> None:
        self.model = model
        self.answers = answers

    def cache_params(self) -> dict:
        return {"backend": self.name, "model": self.model}

    def generate(self, requests: Sequence[ChatRequest], on_response: Callable[[int, ChatResponse], None]) -> None:
        for index, request in enumerate(requests):
            if request not in self.answers:
                raise InputError(f"no answer to request {index} (sample {request.sample_index}): "
                                 f"{request.messages[-1][1][:80]!r}")
            on_response(index, ChatResponse(text=self.answers[request]))


def quiet_console() -> Console:
    return Console(stderr=True, quiet=True)
