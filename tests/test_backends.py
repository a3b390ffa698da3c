"""Backends against the scripted OpenAI-compatible server (retries, fail-fast, timeouts, concurrency, usage) and
the vLLM adapter against stand-in ``vllm`` / ``torch`` modules."""

from __future__ import annotations

import re
import sys
import threading
import time
import types
from pathlib import Path
from dataclasses import dataclass, field

import pytest
import polars as pl
from typer.testing import CliRunner

from conftest import write_release
from culturebench.cli import app

from culturebench.errors import InputError
from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.chat import BackendError, ChatRequest, ChatResponse, SamplingParams
from scripted_server import ScriptedServer
from culturebench.evaluate.models import vllm_backend
from culturebench.evaluate.models.vllm_backend import VLLMBackend


def ask(text: str, **sampling) -> ChatRequest:
    return ChatRequest(messages=(("system", "Be brief."), ("user", text)), sampling=SamplingParams(**sampling))


def collect(backend, requests) -> list[ChatResponse]:
    out: dict[int, ChatResponse] = {}
    backend.generate(requests, lambda i, r: out.__setitem__(i, r))
    return [out[i] for i in range(len(requests))]


def fast(server: ScriptedServer, **kwargs) -> OpenAIBackend:
    """A backend with short backoffs (tests wait milliseconds, not seconds)."""
    kwargs.setdefault("backoff_base", 0.01)
    return OpenAIBackend("scripted-model", base_url=server.base_url, **kwargs)


# --- answers, request bodies, usage ---

def test_replies_in_request_order_with_usage_and_cost():
    script = {"capital of France?": "Paris", re.compile(r"\d+ \+ \d+"): "a sum"}
    with ScriptedServer(reply=script, latency=lambda body: 0.05 if "France" in str(body) else 0.0) as server:
        backend = fast(server, price_per_million=(1.0, 2.0))
        responses = collect(backend, [ask("capital of France?"), ask("what is 2 + 2"), ask("what is 3 + 4")])
    assert [r.text for r in responses] == ["Paris", "a sum", "a sum"]
    assert responses[0].finish_reason == "stop"
    assert responses[0].prompt_tokens == 5 and responses[0].completion_tokens == 1  # words, as the server counts
    stats = backend.stats
    assert stats.requests == 3 and stats.retries == 0 and stats.errors == 0
    assert stats.prompt_tokens == 5 + 7 + 7 and stats.completion_tokens == 1 + 2 + 2
    assert stats.cost == pytest.approx((19 * 1.0 + 5 * 2.0) / 1e6)


def test_request_body_and_seed_per_sample():
    with ScriptedServer() as server:
        requests = [ChatRequest(messages=(("user", "hi"),), sampling=SamplingParams(0.7, 32, 0.9, seed=10),
                                sample_index=k) for k in range(3)]
        collect(fast(server), requests + [ask("no seed")])
    bodies = sorted(server.bodies, key=lambda b: (b.get("seed") is None, b.get("seed")))
    assert [b.get("seed") for b in bodies] == [10, 11, 12, None]
    first = bodies[0]
    assert first["model"] == "scripted-model" and first["messages"] == [{"role": "user", "content": "hi"}]
    assert (first["temperature"], first["max_tokens"], first["top_p"]) == (0.7, 32, 0.9)
    assert "n" not in first and "stream" not in first


def test_api_key_from_environment_only(monkeypatch):
    with ScriptedServer() as server:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        backend = fast(server)
        collect(backend, [ask("a")])
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123")
        collect(backend, [ask("b")])
    assert server.headers[0]["authorization"] == "Bearer EMPTY"
    assert server.headers[1]["authorization"] == "Bearer sk-test-SECRET-123"
    assert "SECRET" not in repr(backend) and "SECRET" not in repr(vars(backend))
    assert backend.cache_params() == {"backend": "openai", "model": "scripted-model"}  # no URL, no key


# --- retries ---

def test_429_then_success_honours_retry_after():
    with ScriptedServer(faults=[(429, {"Retry-After": "0.4"})]) as server:
        backend = fast(server)
        started = time.perf_counter()
        [response] = collect(backend, [ask("x")])
        elapsed = time.perf_counter() - started
    assert response.text == "echo: x" and server.request_count == 2
    assert 0.4 <= elapsed < 2.0
    assert backend.stats.retries == 1 and backend.stats.transient == {"429": 1}


def test_a_retry_after_beyond_the_cap_is_not_waited_for():
    # waiting the cap and asking again would only meet the same refusal: the run ends at once (issue #46)
    from culturebench.chat import EndpointFault

    with ScriptedServer(faults=[(429, {"Retry-After": "3600"})]) as server:
        backend = fast(server, backoff_max=0.2)
        started = time.perf_counter()
        with pytest.raises(EndpointFault, match="asks to wait 3600 s before retrying, more than --max-wait 0.2 s"):
            collect(backend, [ask("x")])
        assert server.request_count == 1
    assert time.perf_counter() - started < 1.5


def test_500_twice_then_success():
    with ScriptedServer(faults=[500, 503]) as server:
        backend = fast(server)
        [response] = collect(backend, [ask("x")])
    assert response.text == "echo: x" and server.request_count == 3
    assert backend.stats.retries == 2 and backend.stats.transient == {"500": 1, "503": 1}


@pytest.mark.parametrize("fault", ["malformed", "no_choices", "disconnect"])
def test_malformed_or_dropped_reply_is_retried(fault):
    with ScriptedServer(faults=[fault]) as server:
        backend = fast(server)
        [response] = collect(backend, [ask("x")])
    assert response.text == "echo: x" and server.request_count == 2
    assert backend.stats.retries == 1
    # a dropped connection surfaces as a connection error or (aiohttp transport) a timeout: transient either way
    expected = [["connection"], ["timeout"]] if fault == "disconnect" else [["malformed"]]
    assert list(backend.stats.transient) in expected


def test_slow_reply_times_out_and_is_retried():
    with ScriptedServer(faults=["slow"], slow_seconds=3.0) as server:
        backend = fast(server, timeout=0.3)
        started = time.perf_counter()
        [response] = collect(backend, [ask("x")])
        elapsed = time.perf_counter() - started
    assert response.text == "echo: x" and server.request_count == 2
    assert backend.stats.transient == {"timeout": 1}
    assert 0.3 <= elapsed < 2.0


def test_gives_up_after_max_retries_with_a_clear_error():
    with ScriptedServer(faults=[500, 500, 500, 500]) as server:
        backend = fast(server, max_retries=2)
        with pytest.raises(BackendError) as info:
            collect(backend, [ask("x")])
    message = str(info.value)
    assert "still failing after 3 attempts" in message and "HTTP 500" in message and "\n" not in message
    assert server.request_count == 3 and backend.stats.errors == 1


@pytest.mark.parametrize(("status", "words"), [(404, "not found"), (401, "OPENAI_API_KEY"), (400, "refused")])
def test_client_errors_fail_fast_with_one_line(status, words, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123")
    with ScriptedServer(faults=[status] * 10) as server:
        backend = fast(server, concurrency=1)
        started = time.perf_counter()
        with pytest.raises(BackendError) as info:
            collect(backend, [ask(str(i)) for i in range(10)])
    message = str(info.value)
    assert isinstance(info.value, InputError)
    assert words in message and f"HTTP {status}" in message and "\n" not in message and "SECRET" not in message
    assert server.request_count == 1  # no retry, and the other requests are not sent
    assert time.perf_counter() - started < 1.0


def test_model_not_found_names_the_model():
    with ScriptedServer(strict_model=True) as server:
        backend = OpenAIBackend("no-such-model", base_url=server.base_url)
        with pytest.raises(BackendError, match="model 'no-such-model' not found"):
            collect(backend, [ask("x")])


def test_failure_stops_the_batch_but_keeps_what_arrived():
    faults = lambda number, body: 400 if "poison" in str(body) else None
    with ScriptedServer(faults=faults, latency=0.05) as server:
        backend = fast(server, concurrency=2)
        collect(backend, [ask("warm-up")])  # the first request of a model goes alone (RequestShape): done here
        server.reset_counts()
        got: dict[int, ChatResponse] = {}
        requests = [ask("a"), ask("b"), ask("poison"), *[ask(f"later {i}") for i in range(20)]]
        with pytest.raises(BackendError):
            backend.generate(requests, lambda i, r: got.__setitem__(i, r))
    assert {0, 1} <= set(got) and 2 not in got
    assert server.request_count < len(requests)


def test_a_failure_in_any_worker_ends_the_batch_at_once():
    # the first worker is held by a slow request while the second one sends the poison: the batch ends then, not
    # after the first worker has sent the rest of it
    faults = lambda number, body: 400 if "poison" in str(body) else None
    latency = lambda body: 1.0 if "slow" in str(body) else 0.02
    with ScriptedServer(faults=faults, latency=latency) as server:
        backend = fast(server, concurrency=2)
        collect(backend, [ask("warm-up")])  # the first request of a model goes alone (RequestShape): done here
        server.reset_counts()
        requests = [ask("slow"), ask("poison"), *[ask(f"later {i}") for i in range(20)]]
        started = time.perf_counter()
        with pytest.raises(BackendError, match="HTTP 400"):
            backend.generate(requests, lambda i, r: None)
        assert time.perf_counter() - started < 0.9  # before the slow answer came
    assert server.request_count <= 3


# --- concurrency ---

@pytest.mark.parametrize("concurrency", [16, 64])
def test_bounded_concurrency(concurrency):
    """What the backend guarantees, whatever the machine's load: ``concurrency`` requests in flight at once, never
    more. The server answers a request only once ``concurrency`` of them are in flight together (a barrier), so a
    client that sent fewer at once would stall into the barrier's timeout (the test once asserted how many a
    0.2 s latency let overlap: 47 of 64 on a loaded machine)."""
    together = threading.Barrier(concurrency, timeout=60)

    def answer_together(text: str, body: dict) -> str:
        if text != "warm-up":
            together.wait()
        return f"echo: {text}"

    with ScriptedServer(reply=answer_together) as server:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=concurrency)
        collect(backend, [ask("warm-up")])  # the first request of its kind goes alone (SamplingParams.probe_kind)
        server.reset_counts()
        responses = collect(backend, [ask(f"q{i}") for i in range(64)])
    assert [r.text for r in responses] == [f"echo: q{i}" for i in range(64)]
    assert server.request_count == 64 and server.max_in_flight == concurrency
    assert backend.stats.retries == 0


def test_callback_runs_as_responses_arrive():
    with ScriptedServer(latency=lambda body: 0.6 if "slow" in str(body) else 0.0) as server:
        backend = fast(server, concurrency=2)
        collect(backend, [ask("warm-up")])  # the first request of a model goes alone (RequestShape): done here
        seen: list[tuple[int, float]] = []
        started = time.perf_counter()
        backend.generate([ask("slow"), ask("quick")], lambda i, r: seen.append((i, time.perf_counter() - started)))
    assert [i for i, _ in seen] == [1, 0]
    assert seen[0][1] < 0.5


def test_generate_inside_a_running_event_loop():
    import asyncio

    with ScriptedServer() as server:
        backend = fast(server)

        async def main():
            return collect(backend, [ask("x")])

        assert asyncio.run(main())[0].text == "echo: x"


def test_bad_settings_are_input_errors():
    with pytest.raises(InputError, match="concurrency"):
        OpenAIBackend("m", concurrency=0)


# --- vLLM adapter with stand-in modules ---

@dataclass
class FakeSamplingParams:
    n: int = 1
    temperature: float = 1.0
    max_tokens: int = 16
    top_p: float = 1.0
    seed: int | None = None
    logprobs: int | None = None
    stop: list | None = None


@dataclass
class FakeLLM:
    """``vllm.LLM`` as the backend drives it: ``enqueue_chat`` then ``llm_engine.step()`` until nothing is left, one
    finished request per step (the last enqueued first, as a real engine may finish them out of order)."""

    kwargs: dict
    calls: list = field(default_factory=list)
    logprobs: list | None = None  # per generated token {token id: Logprob}; the token generated is the lowest id
    queue: list = field(default_factory=list)

    @property
    def llm_engine(self):
        return types.SimpleNamespace(has_unfinished_requests=lambda: bool(self.queue), step=self.step)

    def enqueue_chat(self, messages, sampling_params=None, use_tqdm=True):
        self.calls.append({"messages": messages, "sampling_params": sampling_params, "use_tqdm": use_tqdm})
        first = sum(len(c["messages"]) for c in self.calls[:-1])
        external = [str(first + i) for i in range(len(messages))]  # what outputs carry; the ids returned are internal
        self.queue.extend(zip(external, messages, sampling_params))
        return [f"{request_id}-a1b2c3d4" for request_id in external]

    def step(self):
        request_id, conversation, sp = self.queue.pop()
        user = conversation[-1]["content"]
        samples = [types.SimpleNamespace(text=f"{user}#{k}", finish_reason="length" if k else "stop",
                                         token_ids=[min(step) for step in self.logprobs] if self.logprobs
                                         else list(range(k + 1)), logprobs=self.logprobs) for k in range(sp.n)]
        return [types.SimpleNamespace(request_id=request_id, finished=True, outputs=samples,
                                      prompt_token_ids=[1] * len(conversation) * 5)]


def fake_platform(device_type: str | None):
    """vllm.platforms.current_platform as vLLM reports it: a device type, or unspecified (no platform)."""
    return types.SimpleNamespace(current_platform=types.SimpleNamespace(
        device_type=device_type or "", is_unspecified=lambda: device_type is None))


@pytest.fixture
def fake_vllm(monkeypatch):
    made: list[FakeLLM] = []

    def llm(**kwargs):
        made.append(FakeLLM(kwargs))
        return made[-1]

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=llm, SamplingParams=FakeSamplingParams,
                                                                   __version__="0.0-fake"))
    monkeypatch.setitem(sys.modules, "vllm.platforms", fake_platform("cuda"))
    monkeypatch.setattr(vllm_backend, "_ENGINES", {})
    monkeypatch.setattr(vllm_backend, "check_engine_request", lambda model, arguments: None)  # vllm_checks' tests
    return made


def test_vllm_init_and_grouped_samples(fake_vllm):
    backend = VLLMBackend("org/model", tensor_parallel_size=2, seed=7,
                          engine_args={"dtype": "bfloat16", "max_model_len": 4096})
    assert fake_vllm == []  # nothing loaded before there is something to ask
    hot = SamplingParams(temperature=0.8, max_tokens=20, top_p=0.95, seed=3)
    requests = [
        ChatRequest((("user", "A"),), hot, sample_index=2),
        ChatRequest((("user", "B"),), SamplingParams(), sample_index=0),
        ChatRequest((("user", "A"),), hot, sample_index=0),
        ChatRequest((("user", "A"),), hot, sample_index=1),
        ChatRequest((("user", "B"),), SamplingParams(), sample_index=1),
    ]
    responses = collect(backend, requests)
    assert fake_vllm[0].kwargs == {"model": "org/model", "tensor_parallel_size": 2, "dtype": "bfloat16", "seed": 7,
                                   "max_model_len": 4096}
    [call] = fake_vllm[0].calls
    assert call["messages"] == [[{"role": "user", "content": "A"}], [{"role": "user", "content": "B"}]]
    assert call["use_tqdm"] is False
    assert call["sampling_params"] == [FakeSamplingParams(n=3, temperature=0.8, max_tokens=20, top_p=0.95, seed=3),
                                       FakeSamplingParams(n=1, temperature=0.0, max_tokens=256, top_p=1.0)]
    assert [r.text for r in responses] == ["A#2", "B#0", "A#0", "A#1", "B#0"]  # greedy: one sample, copied
    assert responses[0] == ChatResponse("A#2", prompt_tokens=5, completion_tokens=3, finish_reason="length")
    assert backend.stats.requests == 5
    assert backend.cache_params() == {"backend": "vllm", "model": "org/model", "dtype": "bfloat16", "seed": 7}


def test_vllm_answers_stream_as_the_engine_finishes_them(fake_vllm):
    """At most ``batch_size`` conversations in the engine, topped up as they finish; each answer reaches the callback
    as its request finishes, before the engine has finished the others."""
    backend = VLLMBackend("m", batch_size=2)
    seen: list[tuple[int, int]] = []
    backend.generate([ask(str(i)) for i in range(5)],
                     lambda i, r: seen.append((i, len(fake_vllm[0].queue))))
    assert sorted(i for i, _ in seen) == list(range(5))
    assert all(len(call["messages"]) <= 2 for call in fake_vllm[0].calls) and len(fake_vllm[0].calls) >= 3
    assert any(left > 0 for _, left in seen)  # delivered while others were still in the engine


def test_vllm_missing_is_an_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(InputError, match=r"pip install 'culturebench\[vllm\]'"):
        VLLMBackend("m").generate([ask("x")], lambda i, r: None)


def test_vllm_without_a_platform_is_an_input_error(fake_vllm, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm.platforms", fake_platform(None))
    with pytest.raises(InputError, match=r"vLLM has no platform.*culturebench\[vllm\].*CPU build"):
        VLLMBackend("m").generate([ask("x")], lambda i, r: None)
    assert fake_vllm == []  # no engine started


def test_vllm_on_cpu_gets_the_cpu_settings_and_user_arguments_win(fake_vllm, monkeypatch):
    """The CPU platform starts eager with a fixed KV cache (its default reserves 92% of the node's memory) and no
    chunked prefill (seeded sampling after a partial prefill kills vLLM's CPU engine), a --engine-args value replaces
    a default, and one engine serves every backend with the same arguments."""
    monkeypatch.setitem(sys.modules, "vllm.platforms", fake_platform("cpu"))
    backend = VLLMBackend("m", engine_args={"kv_cache_memory_bytes": 123})
    backend.start()
    assert fake_vllm[0].kwargs == {"model": "m", "tensor_parallel_size": 1, "seed": 0, "enforce_eager": True,
                                   "kv_cache_memory_bytes": 123, "enable_chunked_prefill": False}
    assert backend.platform == "cpu" and backend.run_info()["engine_args"] == fake_vllm[0].kwargs
    again = VLLMBackend("m", engine_args={"kv_cache_memory_bytes": 123})
    again.start()
    assert again.llm is backend.llm and len(fake_vllm) == 1
    VLLMBackend("m").start()
    assert len(fake_vllm) == 2 and fake_vllm[1].kwargs["kv_cache_memory_bytes"] == 1 << 30


def test_vllm_logprobs_are_asked_and_mapped_to_the_openai_shape(fake_vllm):
    """--scoring logprobs: SamplingParams(logprobs=k), and vLLM's per-token {token id: Logprob} into the (token,
    logprob, alternatives by rank) tuples the option-probability scoring reads; the cache key says logprobs."""
    backend = VLLMBackend("m")
    plain_key = backend.cache_params()
    backend.top_logprobs = 3
    assert backend.cache_params() == {**plain_key, "top_logprobs": 3}
    backend.start()
    step = {7: types.SimpleNamespace(logprob=-0.1, rank=1, decoded_token="Yes"),
            9: types.SimpleNamespace(logprob=-2.5, rank=2, decoded_token="No")}
    fake_vllm[0].logprobs = [step]
    [response] = collect(backend, [ask("q")])
    assert fake_vllm[0].calls[0]["sampling_params"][0].logprobs == 3
    assert response.logprobs == (("Yes", -0.1, (("Yes", -0.1), ("No", -2.5))),)


def test_engine_arguments_must_be_a_json_object():
    assert vllm_backend.parse_engine_args('{"max_model_len": 2048}') == {"max_model_len": 2048}
    for bad in ("[1]", "max_model_len=2048"):
        with pytest.raises(InputError, match="--engine-args"):
            vllm_backend.parse_engine_args(bad)


def test_generate_calls_of_one_backend_share_its_connections():
    """A backend's pyreqwest client outlives each generate() (issue #65: building one cost 6 ms of CPU per call):
    with one request in flight, every call's request arrives on the one connection the first call opened; another
    backend opens its own."""
    with ScriptedServer() as server:
        backend = fast(server, concurrency=1)
        for text in ("a", "b", "c"):
            collect(backend, [ask(text)])
        collect(fast(server, concurrency=1), [ask("d")])
    assert server.request_count == 4
    assert len(set(server.client_ports[:3])) == 1 and server.client_ports[3] != server.client_ports[0]


def test_threads_left_behind():
    """generate() leaves no helper thread running (the event loop is closed)."""
    before = threading.active_count()
    with ScriptedServer() as server:
        collect(fast(server), [ask("x")])
    time.sleep(0.1)
    assert threading.active_count() <= before


# --- a server slower than the requests in flight, nothing listening, no key ---

def test_a_server_answering_one_at_a_time_slows_the_run_down_instead_of_failing():
    # The server works on one request at a time (0.1 s each, as llama.cpp's answers one at a time) and keeps working
    # on those whose client gave up. With 8 in flight and a 0.45 s timeout, the 5th queued request times out; keeping
    # 8 in flight, every retry queues behind the abandoned ones and times out again (the run fails after 4 attempts:
    # checked by hand with the limit pinned at 8). Halving the in-flight limit on each timeout lets it finish.
    with ScriptedServer(latency=0.1, parallel=1) as server:
        backend = fast(server, concurrency=8, timeout=0.45, max_retries=3)
        responses = collect(backend, [ask(f"q{i}") for i in range(16)])
    assert [r.text for r in responses] == [f"echo: q{i}" for i in range(16)]
    timeouts = backend.stats.transient.get("timeout", 0)
    assert timeouts >= 1 and backend.limiter.limit < 8
    # the server holds at most the 8 the client has in flight plus the abandoned requests it still works on
    assert server.max_in_flight <= 8 + timeouts


def test_the_in_flight_limit_halves_on_timeouts_and_climbs_back():
    import asyncio

    from culturebench.evaluate.models.backends import _AdaptiveLimit

    async def scenario() -> list[int]:
        limit = _AdaptiveLimit(8)
        for _ in range(8):
            await limit.acquire()
        seen = []
        await limit.release("timeout")  # 7 still in flight: the limit becomes (7 + 1) // 2 = 4
        seen.append(limit.limit)
        for _ in range(7):
            await limit.release("ok")  # 4 successes in a row at limit 4 add one: 5
        seen.append(limit.limit)
        await limit.acquire()
        await limit.release("timeout")  # 0 in flight after it: halved to (0 + 1) // 2 -> at least 1
        seen.append(limit.limit)
        return seen

    assert asyncio.run(scenario()) == [4, 5, 1]


def test_the_in_flight_limit_hands_each_freed_slot_to_the_first_waiter_only():
    import asyncio

    from culturebench.evaluate.models.backends import _AdaptiveLimit

    class CountingLoop(asyncio.SelectorEventLoop):
        """Counts the callbacks scheduled: each waiter woken is one."""
        scheduled = 0

        def call_soon(self, *args, **kwargs):
            CountingLoop.scheduled += 1
            return super().call_soon(*args, **kwargs)

    async def scenario(waiters: int) -> tuple:
        limit = _AdaptiveLimit(2)
        await limit.acquire()
        await limit.acquire()
        order: list[int] = []

        async def wait(number: int) -> None:
            await limit.acquire()
            order.append(number)

        tasks = [asyncio.create_task(wait(n)) for n in range(waiters)]
        await asyncio.sleep(0)  # every waiter in line
        await limit.release("ok")
        await asyncio.sleep(0)
        first = (list(order), limit.in_flight)
        await limit.release("ok")  # hands waiter 1 a slot...
        tasks[1].cancel()  # ...cancelled before it took it: the slot goes to waiter 2
        for _ in range(3):
            await asyncio.sleep(0)
        second = (list(order), limit.in_flight, tasks[1].cancelled())
        CountingLoop.scheduled = 0
        for _ in range(waiters - 3):  # a slot freed per answer: one waiter woken each time
            await limit.release("ok")
            await asyncio.sleep(0)
        woken = CountingLoop.scheduled
        for task in tasks:
            task.cancel()
        return first, second, sorted(order) == [0, *range(2, waiters)], woken

    with asyncio.Runner(loop_factory=CountingLoop) as runner:
        first, second, all_served, woken = runner.run(scenario(200))
    assert first == ([0], 2) and second == ([0, 2], 2, True) and all_served
    # one wake-up (and the waiter's own step) per release; a condition woken all 197 every time: about 20,000
    assert woken < 5 * 197, woken


def test_nothing_listening_is_a_refused_connection_said_after_short_retries():
    from culturebench.evaluate.models.local_model import free_port

    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{free_port()}/v1", timeout=60, max_retries=6)
    waits: list[float] = []
    backoff = backend._backoff
    backend._backoff = lambda attempt, exc: waits.append(backoff(attempt, exc)) or waits[-1]
    with pytest.raises(BackendError) as info:
        collect(backend, [ask("x")])
    message = str(info.value)
    assert "connection refused: nothing is listening at http://127.0.0.1:" in message
    assert "after 7 attempts" in message and "no reply within" not in message and "\n" not in message
    assert backend.stats.transient == {"refused": 7}
    # six waits, each at most refused_backoff_max (0.5 s), instead of the exponential 0.5 .. 16 s of other errors
    assert len(waits) == 6 and max(waits) <= 0.5


def test_no_base_url_and_no_key_is_said_before_sending_anything(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(InputError, match="no --base-url given and OPENAI_API_KEY is not set"):
        OpenAIBackend("gpt-4o")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123")
    assert OpenAIBackend("gpt-4o").where == "https://api.openai.com/v1"


def test_like_copies_the_client_settings():
    backend = OpenAIBackend("a", base_url="http://127.0.0.1:1/v1", concurrency=3, timeout=7.5, max_retries=2)
    judge = backend.like("judge", "http://127.0.0.1:2/v1")
    assert (judge.model, judge.base_url, judge.concurrency, judge.timeout, judge.max_retries) == (
        "judge", "http://127.0.0.1:2/v1", 3, 7.5, 2)
    assert backend.run_info()["timeout_s"] == 7.5


def test_the_http_client_follows_the_endpoint(monkeypatch):
    # pyreqwest for a plain-http endpoint reached directly; aiohttp (OpenSSL's TLS, the environment's proxy) for
    # https and for any endpoint a proxy applies to (test_field sends requests through both)
    for variable in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    local = OpenAIBackend("a", base_url="http://127.0.0.1:1/v1")
    hosted = OpenAIBackend("a", base_url="https://api.example.com/v1")
    assert (local.run_info()["http_library"], hosted.run_info()["http_library"]) == ("pyreqwest", "aiohttp")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    assert local.run_info()["http_library"] == "aiohttp"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert local.run_info()["http_library"] == "pyreqwest"


# --- the same from the command line ---

def small_normad_release(folder: Path) -> Path:
    """Six NormAd stories in two countries and two zones, gold yes / no / neutral."""
    rows = []
    for n in range(6):
        rows.append({"id": n, "country": f"Country{n % 2}", "background": f"Background {n % 2}.",
                     "axis": "Etiquette", "subaxis": "Visiting", "value": f"Value {n}.",
                     "rule_of_thumb": f"Rule {n}.", "story": f"Story {n}: Sam did thing {n}. Is that acceptable?",
                     "explanation": "Because.", "gold_label": ("yes", "no", "neutral")[n % 3],
                     "iw_zone": ("Confucian", "Protestant Europe")[n % 2]})
    folder.mkdir(parents=True)
    return write_release(folder, {"stories": pl.DataFrame(rows)}, "normad")


def story_number_reader(text: str, body: dict) -> str:
    """Answers from the prompt alone, so that any server and any order give the same answers."""
    return ("Yes.", "No", "Neither")[sum(map(ord, text)) % 3]


def test_cli_nothing_listening_and_no_key_are_one_line_errors(tmp_path, monkeypatch):
    from culturebench.evaluate.models.local_model import free_port

    release = small_normad_release(tmp_path / "normad")
    common = ["evaluate", "normad", "--model", "m", "--release", str(release), "--out", str(tmp_path / "run")]
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    no_key = CliRunner().invoke(app, common, env={"OPENAI_API_KEY": ""})
    assert no_key.exit_code == 2 and "OPENAI_API_KEY is not set" in no_key.output
    assert not (tmp_path / "run").exists()  # said before anything was sent or written
    refused = CliRunner().invoke(app, [*common, "--base-url", f"http://127.0.0.1:{free_port()}/v1"])
    assert refused.exit_code == 2, refused.output
    assert "connection refused" in refused.output and "no reply within" not in refused.output


# test_field.py::test_a_signal_stops_cleanly_keeping_every_answer: Ctrl-C and SIGTERM in a real process, sent once
# the fifth request has reached the server (no sleeps, no signal before the handlers are installed).


# --- serve-local stops its llama.cpp child on every signal ---

SERVE = """
import subprocess, sys
from culturebench.evaluate.models.local_model import _die_with_parent, serve
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], preexec_fn=_die_with_parent)
sys.exit(serve(child, ready=lambda: print(child.pid, flush=True)))
"""


def _gone(pid: int) -> bool:
    """The process has exited (absent, or a zombie waiting for its new parent to reap it)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in status)
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL"])
def test_serve_local_stops_the_server_child_on_every_signal(signal_name, tmp_path):
    import signal
    import subprocess

    number = getattr(signal, signal_name)
    script = tmp_path / "serve.py"
    script.write_text(SERVE)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child_pid = int(parent.stdout.readline())
        parent.send_signal(number)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 20
        while not _gone(child_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        if parent.poll() is None:
            parent.kill()
    assert _gone(child_pid), f"the server child outlived {signal_name} to its parent"
    # serve() returns the caught signal's number (the script exits with it); SIGKILL cannot be caught
    assert parent.returncode == (-number if signal_name == "SIGKILL" else number)
