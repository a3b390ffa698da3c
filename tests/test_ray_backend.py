"""``--backend ray`` on one machine: a local Ray with 2 CPUs and two scripted OpenAI-compatible servers (one slow, one
failing 10% of requests). Same metrics.json as the ``openai`` backend; a run interrupted half-way resumes and asks
only the rest; the vLLM engine path says clearly that it needs GPUs (and runs where a cluster has them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from test_backends import small_normad_release, story_number_reader
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate.models import vllm_backend
from culturebench.chat import ChatRequest, ChatResponse, SamplingParams
from culturebench.evaluate.runs.cache import ResponseCache
from culturebench.chat import FAILED
from culturebench.evaluate.runs.runner import run_requests
from scripted_server import ScriptedServer

ray = pytest.importorskip("ray", reason="ray is not installed: pip install 'culturebench[ray]'")

from culturebench.evaluate.models.ray_backend import RayBackend, vllm_postprocess, vllm_row  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One local Ray (2 CPUs) for the module: starting one costs seconds."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def every_tenth_fails(number: int, body: dict):
    """The flaky server: requests 10, 20, 30... (by arrival) answer HTTP 500 (10%)."""
    return 500 if number % 10 == 0 else None


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=(("user", text),), sampling=SamplingParams(max_tokens=8))


# ------------------------------------------------------------------------------------------------ backend level

@pytest.mark.slow
def test_fans_out_over_a_slow_and_a_flaky_endpoint():
    """(Slow: the file's first test, it starts the local Ray, about 10 s, and waits on a 0.2 s endpoint.)"""
    requests = [ask(f"q{i}") for i in range(40)]
    with ScriptedServer(latency=0.2) as slow, ScriptedServer(faults=every_tenth_fails) as flaky:
        urls = [slow.base_url, flaky.base_url]
        backend = RayBackend("scripted-model", urls, concurrency=4, backoff_base=0.01)
        got: dict[int, ChatResponse] = {}
        backend.generate(requests, lambda i, r: got.__setitem__(i, r))
        backend.close()
    assert [got[i].text for i in range(40)] == [f"echo: q{i}" for i in range(40)]  # the servers echo
    failed = flaky.request_count // 10  # every tenth arrival at the flaky server was a 500
    assert slow.request_count + flaky.request_count == 40 + failed
    assert slow.request_count >= 1 and flaky.request_count > slow.request_count  # the fast one takes more chunks
    assert backend.stats.requests == 40 and backend.stats.retries == failed
    assert backend.stats.transient == ({"500": failed} if failed else {})
    # the openai backend's cache key: the same model answers from the same cache whichever backend asked
    assert backend.cache_params() == {"backend": "openai", "model": "scripted-model"}
    info = backend.run_info()
    assert info["engine"] == "http" and info["replicas"] == 1 and info["cluster"]["nodes"] == 1
    assert info["cluster"]["cpus"] == 2 and info["endpoints"] == urls


class InterruptingCache(ResponseCache):
    """A cache whose ``put`` raises KeyboardInterrupt (Ctrl-C) once ``stop_after`` answers are stored."""

    def __init__(self, path: Path, stop_after: int) -> None:
        super().__init__(path)
        self.stop_after = stop_after
        self.stored = 0

    def put(self, key, material, response) -> None:
        if self.stored >= self.stop_after:
            raise KeyboardInterrupt
        super().put(key, material, response)
        self.stored += 1


def test_interrupted_half_way_resumes_asking_only_the_rest(tmp_path):
    path = tmp_path / "cache.sqlite"
    requests = [ask(f"q{i}") for i in range(60)]
    with ScriptedServer(latency=0.05) as one, ScriptedServer(latency=0.05) as two:
        backend = RayBackend("scripted-model", [one.base_url, two.base_url], concurrency=4)
        with pytest.raises(KeyboardInterrupt), InterruptingCache(path, stop_after=30) as cache:
            run_requests(backend, requests, cache)
        with ResponseCache(path) as cache:
            kept = len(cache)
        assert kept == 30  # each answer was written as it came back, not at the end
        one.reset_counts()
        two.reset_counts()
        with ResponseCache(path) as cache:
            result = run_requests(backend, requests, cache)
        backend.close()
    assert one.request_count + two.request_count == 60 - kept  # nothing answered is asked again
    assert (result.stats.n_cached, result.stats.n_queried) == (kept, 60 - kept)
    assert result.texts == [f"echo: q{i}" for i in range(60)]


def poison_fails(number: int, body: dict):
    """HTTP 400 (not retried) for every request whose prompt says "poison"."""
    return 400 if "poison" in str(body) else None


def test_a_request_failing_for_good_is_answered_empty_the_rest_go_on_and_a_rerun_asks_only_it(tmp_path):
    requests = [ask("a"), ask("poison"), ask("b"), ask("c")]
    path = tmp_path / "cache.sqlite"
    with ScriptedServer(faults=poison_fails) as server:
        backend = RayBackend("scripted-model", [server.base_url], concurrency=2)
        with ResponseCache(path) as cache:
            result = run_requests(backend, requests, cache)
        backend.close()
    assert result.texts == ["echo: a", "", "echo: b", "echo: c"]
    assert result.responses[1].finish_reason == FAILED and result.stats.failed == 1
    assert "HTTP 400" in backend.failed[0]
    with ScriptedServer() as healthy:  # the endpoint mended: only the failed request is asked again
        backend = RayBackend("scripted-model", [healthy.base_url], concurrency=2)
        with ResponseCache(path) as cache:
            again = run_requests(backend, requests, cache)
        backend.close()
    assert healthy.request_count == 1 and again.stats.failed == 0
    assert again.texts == ["echo: a", "echo: poison", "echo: b", "echo: c"]


def test_the_runner_hands_over_whole_batches_so_that_every_slot_is_used():
    # The runner once took a backend's ``batch_size`` as the size of the batches it hands over, and the ray
    # backend's ``batch_size`` is the vLLM engine's Ray Data batch (64): the HTTP engine then had at most 64
    # requests in flight, whatever its concurrency. 200 requests of 0.3 s at 100 in flight overlap far beyond 64.
    with ScriptedServer(latency=0.3) as server:
        backend = RayBackend("scripted-model", [server.base_url], concurrency=100)
        result = run_requests(backend, [ask(f"q{i}") for i in range(200)], cache=None)
        backend.close()
        assert len(result.responses) == 200 and server.max_in_flight > 64, server.max_in_flight


def batches_of_one_chunk(latency, items: list[tuple[int, ChatRequest]]) -> tuple[list[list[int]], float]:
    """The indices of each batch an HTTP actor's ``run`` yields for one chunk (called here without Ray: the method
    is a plain async generator), and the seconds the chunk took."""
    import asyncio
    import time

    from culturebench.evaluate.models.backends import OpenAIBackend
    from culturebench.evaluate.models.ray_backend import EndpointClient

    async def drain(client) -> list[list[int]]:
        return [[index for index, _, _ in results] async for results, _ in client.run(items)]

    with ScriptedServer(latency=latency) as server:
        client = EndpointClient(OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=8), None)
        start = time.monotonic()
        batches = asyncio.run(drain(client))
        return batches, time.monotonic() - start


def test_an_actor_gathers_answers_into_batches_and_hands_over_a_finished_chunk_at_once(monkeypatch):
    from culturebench.evaluate.models import ray_backend

    def by_question(body: dict) -> float:  # q0-q2 answer at once, q3-q5 after 2 s
        return 2.0 if int(body["messages"][-1]["content"][1:]) >= 3 else 0.0

    items = [(i, ask(f"q{i}")) for i in range(6)]
    # a window far longer than the chunk: the chunk's answers go as one batch the moment the last one lands
    monkeypatch.setattr(ray_backend, "RESULTS_WINDOW_S", 60.0)
    batches, seconds = batches_of_one_chunk(by_question, items)
    assert [sorted(b) for b in batches] == [list(range(6))] and seconds < 30, (batches, seconds)
    # a window shorter than the slow answers' wait: the fast ones are handed over without them
    monkeypatch.setattr(ray_backend, "RESULTS_WINDOW_S", 0.5)
    batches, _ = batches_of_one_chunk(by_question, items)
    assert sorted(i for b in batches for i in b) == list(range(6))
    assert max(i for i in batches[0]) <= 2 and sorted(batches[-1]) == [3, 4, 5], batches


def test_more_failed_requests_than_allowed_stop_the_run_with_one_line():
    with ScriptedServer(faults=poison_fails) as server:
        backend = RayBackend("scripted-model", [server.base_url], concurrency=1, max_failed_rows=1)
        got = {}
        with pytest.raises(InputError) as info:
            backend.generate([ask("poison 1"), ask("poison 2"), ask("poison 3")], got.__setitem__)
        backend.close()
    message = str(info.value)
    assert "stopped after 2 requests failed for good (more than 1)" in message and "HTTP 400" in message
    assert "\n" not in message and len(got) == 1  # the first one was answered empty before the limit was passed


def test_vllm_engine_with_too_few_gpus_says_what_it_needs(monkeypatch):
    """A cluster with GPUs, but fewer than replicas x tensor parallelism, is refused (one without any runs the
    engines on its CPUs: test_vllm_engine_on_cpus_is_configured_for_them)."""
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0, "GPU": 1.0})
    backend = RayBackend("some/model", replicas=2, tensor_parallel_size=2)
    assert backend.engine == "vllm"
    with pytest.raises(InputError, match=r"needs 4 GPU\(s\) \(2 replicas x tensor-parallel size 2\).*has 1"):
        backend.generate([ask("a")], lambda i, r: None)


def test_vllm_rows_carry_per_sample_seeds_and_map_back():
    request = ChatRequest(messages=(("system", "s"), ("user", "u")),
                          sampling=SamplingParams(temperature=1.0, max_tokens=5, top_p=0.9, seed=7), sample_index=3)
    row = vllm_row(12, request)
    # the openai backend sends seed + sample_index for repeated samples; the engine rows do the same (7 + 3)
    assert row == {"index": 12, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                   "sampling_params": {"temperature": 1.0, "max_tokens": 5, "top_p": 0.9, "seed": 10}}
    assert "seed" not in vllm_row(0, ask("x"))["sampling_params"]
    out = vllm_postprocess({"index": 12, "generated_text": "B", "num_input_tokens": 9, "num_generated_tokens": 1,
                            "messages": []})
    assert out == {"index": 12, "text": "B", "prompt_tokens": 9, "completion_tokens": 1, "finish_reason": None,
                   "logprobs": None}
    # the engine's row has no finish reason: at the token limit it is "length", below it "stop"
    for generated, reason in ((5, "length"), (4, "stop")):
        out = vllm_postprocess({"index": 1, "generated_text": "B", "num_generated_tokens": generated,
                                "sampling_params": {"max_tokens": 5}})
        assert out["finish_reason"] == reason
    assert vllm_row(0, ask("x"), top_logprobs=20)["sampling_params"]["logprobs"] == 20
    # Ray's engine stage hands the logprobs over as {token id: {logprob, rank, decoded_token}} per generated token
    step = {5: {"logprob": -0.2, "rank": 1, "decoded_token": "B"}, 4: {"logprob": -1.9, "rank": 2,
                                                                       "decoded_token": "A"}}
    out = vllm_postprocess({"index": 1, "generated_text": "B", "generated_tokens": [5], "logprobs": [step]})
    assert json.loads(out["logprobs"]) == [["B", -0.2, [["B", -0.2], ["A", -1.9]]]]


def stand_in_processor(monkeypatch, built: dict):
    """Ray Data's LLM processor with a stand-in engine (no vLLM here) that answers each row with its last message
    upper-cased, counting words as tokens; its config's arguments land in ``built``."""
    from ray.data import llm

    class Config:
        def __init__(self, **kwargs):
            built["config"] = kwargs

    def engine(row: dict) -> dict:
        if "poison" in row["messages"][-1]["content"]:  # Ray's engine stage with should_continue_on_error
            return {**row, "__inference_error__": "ValueError: bad input"}
        text = row["messages"][-1]["content"].upper()
        return {**row, "generated_text": text, "num_input_tokens": sum(len(m["content"].split())
                                                                       for m in row["messages"]),
                "num_generated_tokens": len(text.split())}

    def build_processor(config, preprocess, postprocess):  # error rows skip the postprocess, as in Ray's stages
        return lambda dataset: dataset.map(preprocess).map(engine).map(
            lambda row: row if row.get("__inference_error__") else postprocess(row))

    monkeypatch.setattr(llm, "vLLMEngineProcessorConfig", Config)
    monkeypatch.setattr(llm, "build_processor", build_processor)


@pytest.mark.slow
def test_vllm_engine_on_cpus_is_configured_for_them(monkeypatch):
    """A cluster without GPUs: one CPU bundle per engine (Ray's default placement asks for a GPU and waits forever),
    the CPU platform's engine arguments with the user's on top, no engine metrics (their import needs ray[llm]).
    (Slow: a Ray placement group and an engine actor are started.)"""
    built: dict = {}
    stand_in_processor(monkeypatch, built)
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0})
    backend = RayBackend("some/model", seed=3, engine_args={"max_model_len": 512})
    got: dict[int, ChatResponse] = {}
    backend.generate([ask("one"), ask("two")], lambda i, r: got.__setitem__(i, r))
    config = built["config"]
    assert config["placement_group_config"] == {"bundles": [{"CPU": 1}]}
    assert config["runtime_env"]["env_vars"]["VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS"] == str(
        vllm_backend.CPU_STEP_TIMEOUT_S)
    assert config["engine_kwargs"] == {"tensor_parallel_size": 1, "seed": 3, "enforce_eager": True,
                                       "kv_cache_memory_bytes": 1 << 30, "enable_chunked_prefill": False,
                                       "max_model_len": 512}
    assert config["log_engine_metrics"] is False
    assert {i: r.text for i, r in got.items()} == {0: "ONE", 1: "TWO"}
    assert backend.run_info()["platform"] == "cpu"


def test_vllm_engine_path_with_a_stand_in_engine(monkeypatch):
    """The vLLM engine path up to the engine: the processor config (replicas, tensor parallelism), rows through Ray
    Data, answers mapped back to their requests and counted. The engine is a stand-in (no GPU here) that answers
    each row with its last message upper-cased, counting words as tokens."""
    built: dict = {}
    stand_in_processor(monkeypatch, built)
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0, "GPU": 4.0})
    backend = RayBackend("some/model", replicas=2, tensor_parallel_size=2, batch_size=16)
    got: dict[int, ChatResponse] = {}
    backend.generate([ask("one two"), ask("three"), ask("four five six"), ask("poison")],
                     lambda i, r: got.__setitem__(i, r))
    assert built["config"] == {"model_source": "some/model", "concurrency": 2, "batch_size": 16,
                               "engine_kwargs": {"tensor_parallel_size": 2, "seed": 0},
                               "should_continue_on_error": True, "log_engine_metrics": False}
    assert {i: r.text for i, r in got.items()} == {0: "ONE TWO", 1: "THREE", 2: "FOUR FIVE SIX", 3: ""}
    assert got[3].finish_reason == FAILED and backend.failed == ["ValueError: bad input"]
    assert [got[i].prompt_tokens for i in range(3)] == [2, 1, 3] and backend.stats.completion_tokens == 2 + 1 + 3


# ------------------------------------------------------------------------------------------------ the CLI

def test_cli_ray_backend_gives_the_openai_backends_metrics(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    with ScriptedServer(reply=story_number_reader) as single, \
            ScriptedServer(reply=story_number_reader, latency=0.1) as slow, \
            ScriptedServer(reply=story_number_reader, faults=every_tenth_fails) as flaky:
        common = ["evaluate", "normad", "--model", "scripted-model", "--release", str(release), "--concurrency", "4"]
        plain = CliRunner().invoke(app, [*common, "--base-url", single.base_url, "--out", str(tmp_path / "openai")])
        assert plain.exit_code == 0, plain.output
        urls = [slow.base_url, flaky.base_url]
        spread = CliRunner().invoke(app, [*common, "--backend", "ray", "--base-url", urls[0], "--base-url", urls[1],
                                          "--out", str(tmp_path / "ray")])
        assert spread.exit_code == 0, spread.output
    assert single.request_count == 6 * 5  # six stories x five contexts
    assert slow.request_count + flaky.request_count == 30 + flaky.request_count // 10
    metrics = {name: json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("ray", "openai")}
    for m in metrics.values():  # the scored file's path differs (its run folder); its sha256 must not
        [m["responses"]] = [{"sha256": r["sha256"]} for r in m["responses"]]
    assert metrics["ray"] == metrics["openai"]
    run = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert run["backend"]["name"] == "ray" and run["backend"]["replicas"] == 1
    assert run["backend"]["cluster"]["nodes"] == 1 and run["backend"]["engine"] == "http"
    assert run["runner"]["n_queried"] == 30 and run["args"]["base_url"] == urls
    plain_run = json.loads((tmp_path / "openai" / "run.json").read_text())
    assert set(run["runner"]) == set(plain_run["runner"])  # the same runner fields whatever the backend
    retried = run["runner"]["retries"]  # the flaky endpoint's 500s, said in the summary when there were any
    assert ("30 requests (0 cached, 30 queried" + (f"; {retried} retries: " if retried else ")")) in spread.output


@pytest.mark.slow
def test_cli_ray_backend_passes_logprobs_through(bundled_release, tmp_path):
    """--scoring logprobs over the ray backend's HTTP engine: every endpoint is asked for top_logprobs, and the
    option-probability metrics and agreement equal the openai backend's on the same answers. (Slow: two whole
    evaluate runs, one over Ray.)"""
    from test_option_probability import yes_but_no

    release = bundled_release("normad")
    common = ["evaluate", "normad", "--model", "scripted-model", "--release", str(release), "--limit", "4",
              "--scoring", "logprobs"]
    with ScriptedServer(reply="Yes", logprobs=yes_but_no) as single, \
            ScriptedServer(reply="Yes", logprobs=yes_but_no) as one, \
            ScriptedServer(reply="Yes", logprobs=yes_but_no) as two:
        plain = CliRunner().invoke(app, [*common, "--base-url", single.base_url, "--out", str(tmp_path / "openai")])
        assert plain.exit_code == 0, plain.output
        spread = CliRunner().invoke(app, [*common, "--backend", "ray", "--base-url", one.base_url, "--base-url",
                                          two.base_url, "--out", str(tmp_path / "ray")])
        assert spread.exit_code == 0, spread.output
        assert all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in one.bodies + two.bodies)
        assert one.request_count + two.request_count == single.request_count
    for name in ("option_probability/metrics.json", "agreement.json"):
        found = {run: json.loads((tmp_path / run / name).read_text()) for run in ("openai", "ray")}
        for m in found.values():  # the scored files' paths differ (their run folders)
            m.pop("responses", None)
        assert found["ray"] == found["openai"], name


# ------------------------------------------------------------------------------------------------ one fault table

@pytest.mark.parametrize("fault", [401, 403, 404, "refused"])
def test_cli_ray_backend_gives_the_openai_backends_line_and_exit_code_for_an_endpoint_fault(tmp_path, fault):
    """An endpoint that refuses every request (a bad key, a wrong model or route, nothing listening) stops a ray run
    at once with the openai backend's line and exit code, and writes nothing (it once exited 0 with metrics of no
    answers)."""
    from conftest import one_line_error
    from culturebench.evaluate.models.local_model import free_port

    release = small_normad_release(tmp_path / "normad")
    with ScriptedServer(faults=lambda number, body: fault) as server:
        base_url = f"http://127.0.0.1:{free_port()}/v1" if fault == "refused" else server.base_url
        lines = {}
        for backend in ("openai", "ray"):
            out = tmp_path / backend
            result = CliRunner().invoke(app, ["evaluate", "normad", "--model", "scripted-model", "--release",
                                              str(release), "--backend", backend, "--base-url", base_url,
                                              "--out", str(out)])
            lines[backend] = one_line_error(result)  # exit 2 and one line
            assert not out.exists()
    assert lines["ray"] == lines["openai"]
    assert (f"HTTP {fault}" if fault != "refused" else "connection refused") in lines["ray"]


def test_cli_ray_run_in_which_no_request_was_answered_writes_no_metrics(tmp_path):
    """Requests failing on their own (a 400 each) are gone past, but when none of a run's was answered the run
    stops: metrics of no answers would read as the model's."""
    from conftest import one_line_error

    release = small_normad_release(tmp_path / "normad")
    out = tmp_path / "ray"
    with ScriptedServer(faults=lambda number, body: 400) as server:
        result = CliRunner().invoke(app, ["evaluate", "normad", "--model", "scripted-model", "--release",
                                          str(release), "--backend", "ray", "--base-url", server.base_url, "--limit",
                                          "2", "--out", str(out)])
    line = one_line_error(result)
    assert "none of the 10 requests" in line and "HTTP 400" in line and "no results written" in line
    assert not (out / "metrics.json").exists() and not (out / "responses.jsonl").exists()


@pytest.mark.parametrize("backend", ["openai", "ray"])
def test_run_json_names_every_sampling_parameter_sent_after_the_shape_adapted(tmp_path, backend):
    """A reasoning model refuses max_tokens, top_p and a temperature other than 1: the requests it answered carried
    neither, and run.json says what they carried (the ray backend's clients adapt in their own processes)."""
    release = small_normad_release(tmp_path / "normad")
    out = tmp_path / backend
    with ScriptedServer(reply=story_number_reader, reasoning=True) as server:
        result = CliRunner().invoke(app, ["evaluate", "normad", "--model", "scripted-model", "--release", str(release),
                                          "--backend", backend, "--base-url", server.base_url, "--out", str(out)])
        assert result.exit_code == 0, result.output
        answered = [body for body in server.bodies if "max_tokens" not in body and "top_p" not in body
                    and body.get("temperature", 1) == 1]
    sent = json.loads((out / "run.json").read_text())["backend"]["sampling_sent"]
    assert sum(entry["requests"] for entry in sent) == len(answered) == 30
    assert {name for entry in sent for name in entry["params"]} == \
        {name for body in answered for name in body} - {"model", "messages"}
    assert all("top_p" not in entry["params"] and "max_tokens" not in entry["params"] for entry in sent)
