"""Evaluate in the field (issue #27): real providers' request shapes and error bodies, secrets echoed back,
tampered releases, faults of the run folder, cost before spending it. Every server is the scripted one on
127.0.0.1, behaving like the real thing (OpenAI's reasoning-model errors, Azure's route, a forward proxy)."""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import one_line_error
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate.models.backends import AzureOpenAIBackend, OpenAIBackend
from culturebench.chat import BackendError, ChatResponse
from culturebench.evaluate.runs.cache import ResponseCache
from culturebench.evaluate.models.local_model import free_port
from culturebench.evaluate.models.request_shape import RequestShape
from scripted_server import ScriptedServer
from culturebench.release_reader import Release
from test_backends import ask, collect, fast, small_normad_release, story_number_reader

KEY = "sk-test-9f8e7d6c5b4a39281706"
HEADER_VALUE = "team-secret-4411"


@pytest.fixture(autouse=True)
def own_hash_memo(tmp_path, monkeypatch):
    """Release hashes remembered under the test's folder, not the user's cache."""
    monkeypatch.setenv("CULTUREBENCH_CACHE", str(tmp_path / "hash-memo"))
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


def evaluate_normad(release: Path, out: Path, *extra: str, env: dict | None = None):
    return CliRunner().invoke(app, ["evaluate", "normad", "--model", "scripted-model", "--release", str(release),
                                    "--out", str(out), *extra], env=env)


def every_file_text(folder: Path) -> str:
    return "".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


# --- secrets: redacted by value, whatever the server sends back ---

def test_a_server_echoing_the_key_and_headers_never_shows_them(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    release = small_normad_release(tmp_path / "normad")
    with ScriptedServer(faults=["echo_key"]) as server:
        result = evaluate_normad(release, tmp_path / "run", "--base-url", server.base_url,
                                 "--header", f"X-Team-Token: {HEADER_VALUE}")
        assert server.headers[0]["authorization"] == f"Bearer {KEY}"  # the key was sent ...
        assert server.headers[0]["x-team-token"] == HEADER_VALUE
    line = one_line_error(result)
    assert "Incorrect API key provided" in line and "<redacted>" in line  # ... and the message shown
    assert KEY not in result.output and HEADER_VALUE not in result.output


def test_answers_echoing_the_key_are_redacted_in_responses_cache_and_run_json(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    release = small_normad_release(tmp_path / "normad")
    out = tmp_path / "run"
    with ScriptedServer(reply=lambda text, body: f"Yes. (you sent {KEY} and {HEADER_VALUE})") as server:
        result = evaluate_normad(release, out, "--base-url", server.base_url, "--header",
                                 f"X-Team-Token: {HEADER_VALUE}")
    assert result.exit_code == 0, result.output
    everything = every_file_text(out) + result.output
    assert KEY not in everything and HEADER_VALUE not in everything
    with sqlite3.connect(out / "cache.sqlite") as db:
        texts = [t for (t,) in db.execute("SELECT text FROM responses")]
    assert texts and all(t == "Yes. (you sent <redacted> and <redacted>)" for t in texts)
    run = json.loads((out / "run.json").read_text())
    assert run["args"]["headers"] == ["X-Team-Token"] and run["backend"]["extra_headers"] == ["X-Team-Token"]
    assert run["release"]["files_verified"] is True


# --- reasoning models ---

def test_a_reasoning_model_is_adapted_to_once_per_model_and_run_json_says_what_was_sent():
    requests = [ask(f"q{i}", temperature=0.0, max_tokens=8, stop=("\n\n",)) for i in range(5)]
    with ScriptedServer(reasoning=True) as server:
        backend = fast(server, concurrency=1)
        texts = [r.text for r in collect(backend, requests)]
        bodies = list(server.bodies)
    assert texts == [f"echo: q{i}" for i in range(5)]
    # one refusal per unsupported parameter (max_tokens, stop, top_p, temperature), then every request goes through
    assert len(bodies) == 4 + 5
    last = bodies[-1]
    assert last["max_completion_tokens"] == 8 and not {"max_tokens", "stop", "top_p", "temperature"} & set(last)
    shape = backend.run_info()["request_shape"]
    assert shape["token_limit"] == "max_completion_tokens" and sorted(shape["omit"]) == ["stop", "temperature",
                                                                                          "top_p"]
    assert [a["change"] for a in shape["adapted"]][0] == "max_tokens -> max_completion_tokens"
    assert "Use 'max_completion_tokens' instead" in shape["adapted"][0]["error"]
    assert backend.stats.retries == 0 and backend.stats.errors == 0


def test_a_fixed_request_shape_sends_no_rejected_request():
    shape = RequestShape.from_options({"token_limit": "max_completion_tokens",
                                       "omit": ["temperature", "top_p", "stop"]})
    with ScriptedServer(reasoning=True) as server:
        backend = fast(server, request_shape=shape)
        collect(backend, [ask("a", temperature=0.0, stop=("x",))])
        assert server.request_count == 1
    with pytest.raises(InputError, match="cannot be left out"):
        RequestShape.from_options({"omit": ["messages"]})


def test_a_shape_fixed_per_model_name_reaches_the_judge():
    shapes = RequestShape.per_model({"scripted-model": {"token_limit": "max_completion_tokens",
                                                        "omit": ["temperature", "top_p", "stop"]}}, "evaluated")
    with ScriptedServer(reasoning=True) as server:
        model = OpenAIBackend("evaluated", base_url=server.base_url, request_shapes=shapes)
        judge = model.like("scripted-model", server.base_url)
        collect(judge, [ask("judge this", temperature=0.0)])
        assert server.request_count == 1 and judge.shape.adapted == []
    assert model.shape.token_limit == "max_tokens"  # the evaluated model has no fixed shape
    with pytest.raises(InputError, match="JSON object"):
        RequestShape.per_model(["max_completion_tokens"], "m")


def test_judges_learn_their_own_shape_and_share_it_with_their_model():
    with ScriptedServer(reasoning=True) as server:
        model = OpenAIBackend("evaluated", base_url=server.base_url)
        judge = model.like("scripted-model", server.base_url)
        collect(judge, [ask("judge this", temperature=0.0)])
        antagonist = model.like("scripted-model", server.base_url)  # the same model in another role
        server.reset_counts()
        collect(antagonist, [ask(f"turn {i}", temperature=0.0) for i in range(20)])
        assert server.request_count == 20  # nothing left to learn
    assert judge.shape.token_limit == "max_completion_tokens" and model.shape.token_limit == "max_tokens"
    assert antagonist.shape is judge.shape


def test_many_requests_in_flight_meet_each_refusal_once():
    with ScriptedServer(reasoning=True, latency=0.02) as server:
        backend = fast(server, concurrency=16)
        collect(backend, [ask(f"q{i}", temperature=0.0) for i in range(40)])
        # max_tokens, top_p, temperature: one refusal each, then the 40 answers
        assert server.request_count == 3 + 40


# --- Azure, headers, environment, proxies ---

def test_azure_deployment_route_api_version_and_api_key_header(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    with ScriptedServer() as server:
        endpoint = f"http://127.0.0.1:{server.port}"
        backend = AzureOpenAIBackend("my-gpt", endpoint, api_version="2024-10-21", backoff_base=0.01)
        [response] = collect(backend, [ask("hello")])
        headers = server.headers[0]
    assert response.text == "echo: hello"
    assert headers["api-key"] == KEY and "authorization" not in headers
    assert backend._url() == f"{endpoint}/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21"
    assert backend.run_info()["api_version"] == "2024-10-21"
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    with pytest.raises(InputError, match="API version"):
        AzureOpenAIBackend("my-gpt", endpoint)


def test_organization_project_and_extra_headers_are_sent(monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-abc")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-def")
    with ScriptedServer() as server:
        collect(fast(server, headers={"X-Gateway": "gw-1234"}), [ask("a")])
        headers = server.headers[0]
    assert (headers["openai-organization"], headers["openai-project"], headers["x-gateway"]) == (
        "org-abc", "proj-def", "gw-1234")


def test_requests_go_through_the_environment_proxy_unless_no_proxy(monkeypatch):
    with ScriptedServer() as proxy:
        # the endpoint itself is unreachable: only the proxy can answer
        target = f"http://127.0.0.1:{free_port()}/v1"
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        [response] = collect(OpenAIBackend("scripted-model", base_url=target, max_retries=0), [ask("via proxy")])
        assert response.text == "echo: via proxy" and proxy.proxied == 1
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        with pytest.raises(BackendError, match="connection refused"):
            collect(OpenAIBackend("scripted-model", base_url=target, max_retries=0), [ask("direct")])
        assert proxy.proxied == 1


def test_base_url_without_scheme_is_an_immediate_error(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    line = one_line_error(evaluate_normad(release, tmp_path / "run", "--base-url", "127.0.0.1:8080/v1"))
    assert "needs a scheme" in line and "http://127.0.0.1:8080/v1" in line
    assert not (tmp_path / "run" / "cache.sqlite").exists()


# --- odd replies ---

def test_a_200_with_an_error_body_shows_the_servers_message_at_once():
    with ScriptedServer(faults=["error_body"]) as server:
        with pytest.raises(BackendError, match="context too long") as caught:
            collect(fast(server), [ask("a")])
        assert server.request_count == 1
    assert "HTTP 200 with an error body" in str(caught.value)


def test_a_body_that_is_not_utf8_says_so():
    with ScriptedServer(faults=["not_utf8"]) as server:
        with pytest.raises(BackendError, match="not UTF-8 text \\(byte 0xe9"):
            collect(fast(server, max_retries=0), [ask("a")])


def test_a_malformed_usage_never_fails_a_good_answer():
    with ScriptedServer(faults=["bad_usage"]) as server:
        [response] = collect(fast(server, max_retries=0), [ask("a")])
    assert (response.text, response.prompt_tokens, response.completion_tokens) == ("echo: a", 0, 0)


def test_answers_cut_off_are_counted_in_metrics_json_and_warned(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    with ScriptedServer(reply=story_number_reader, faults=lambda n, body: "length") as server:
        result = evaluate_normad(release, tmp_path / "run", "--base-url", server.base_url)
        n = server.request_count  # every answer the server gave was cut off
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert n >= 6 and metrics["truncated_answers"] == {"count": n, "of": n}
    assert f"{n} of {n} answers (100%) were cut off by the token limit" in " ".join(result.output.split())
    assert json.loads((tmp_path / "run" / "run.json").read_text())["runner"]["truncated"] == n


# --- integrity of the release ---

def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_tampered_release_is_refused_before_any_request(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    parquet = next(release.rglob("*.parquet"))
    flip_a_byte(parquet)
    with ScriptedServer(reply=story_number_reader) as server:
        line = one_line_error(evaluate_normad(release, tmp_path / "run", "--base-url", server.base_url))
        assert server.request_count == 0
        assert str(parquet) in line and "sha256 mismatch" in line and "--allow-modified-release" in line
        # score reads the release too
        scored = CliRunner().invoke(app, ["score", "normad", "--responses", str(tmp_path / "x.jsonl"), "--release",
                                          str(release), "--out", str(tmp_path / "s")])
        assert "sha256 mismatch" in one_line_error(scored)


def test_the_escape_hatch_is_recorded_in_run_json(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["outputs"][0]["sha256"] = "0" * 64  # a manifest that no longer matches its file
    (release / "manifest.json").write_text(json.dumps(manifest))
    with ScriptedServer(reply=story_number_reader) as server:
        result = evaluate_normad(release, tmp_path / "run", "--base-url", server.base_url,
                                 "--allow-modified-release")
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["args"]["allow_modified_release"] is True and run["release"]["files_verified"] is False


def test_hashes_are_remembered_by_size_and_mtime(tmp_path, monkeypatch):
    import culturebench.manifest as release_module

    release = small_normad_release(tmp_path / "normad")
    hashed = []
    real = release_module.sha256_file
    monkeypatch.setattr(release_module, "sha256_file", lambda p: hashed.append(Path(p).name) or real(p))
    Release.open(release).verify()
    Release.open(release).verify()
    assert len(hashed) == 1  # one data file, hashed once
    parquet = next(release.rglob("*.parquet"))
    flip_a_byte(parquet)
    os.utime(parquet, ns=(parquet.stat().st_atime_ns, parquet.stat().st_mtime_ns + 1_000_000_000))
    with pytest.raises(InputError, match="sha256 mismatch"):
        Release.open(release).verify()
    assert len(hashed) == 2


# --- faults of the run folder ---

def test_a_foreign_or_corrupt_cache_is_one_line(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / "cache.sqlite") as db:
        db.execute("CREATE TABLE responses (id INTEGER, body TEXT)")
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "cache.sqlite").write_bytes(b"these are not the bytes of an SQLite file" * 100)
    with ScriptedServer(reply=story_number_reader) as server:
        for out, words in ((foreign, "another program (columns id, body)"), (corrupt, "not a response cache")):
            line = one_line_error(evaluate_normad(release, out, "--base-url", server.base_url))
            assert str(out / "cache.sqlite") in line and words in line
        assert server.request_count == 0


def test_a_full_disk_says_so_and_keeps_every_answer_written(tmp_path, monkeypatch):
    release = small_normad_release(tmp_path / "normad")
    real_insert = ResponseCache._insert
    inserted = []

    def insert_until_full(self, row):
        if len(inserted) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_insert(self, row)
        inserted.append(row[0])

    monkeypatch.setattr(ResponseCache, "_insert", insert_until_full)
    with ScriptedServer(reply=story_number_reader) as server:
        line = one_line_error(evaluate_normad(release, tmp_path / "run", "--base-url", server.base_url,
                                              "--concurrency", "1"))
    assert "disk full" in line and "keeps 3 answers" in line
    with sqlite3.connect(tmp_path / "run" / "cache.sqlite") as db:
        assert sorted(k for (k,) in db.execute("SELECT key FROM responses")) == sorted(inserted)


def test_a_run_folder_of_another_benchmark_is_refused(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"benchmark": "cdeval"}))
    line = one_line_error(evaluate_normad(release, out, "--base-url", "http://127.0.0.1:1/v1"))
    assert "holds a run of 'cdeval'" in line


def test_a_refused_connection_leaves_no_empty_cache(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    out = tmp_path / "run"
    result = evaluate_normad(release, out, "--base-url", f"http://127.0.0.1:{free_port()}/v1")
    assert "connection refused" in one_line_error(result)
    assert not any(out.glob("cache.sqlite*"))


SIGNALLED = """
import sys
from culturebench.cli import app
sys.exit(app(sys.argv[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
@pytest.mark.parametrize(("signal_name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_stops_cleanly_keeping_every_answer(tmp_path, signal_name, code):
    """The signal is sent once the fifth request has reached the server (the process is then surely past
    installing its handlers: no sleeps); the fifth is held until the process has exited."""
    release = small_normad_release(tmp_path / "normad")
    fifth_arrived, release_fifth = threading.Event(), threading.Event()
    count = []

    def hold_the_fifth(text: str, body: dict) -> str:
        count.append(text)
        if len(count) == 5:
            fifth_arrived.set()
            release_fifth.wait(30)
        return story_number_reader(text, body)

    out = tmp_path / "run"
    with ScriptedServer(reply=hold_the_fifth) as server:
        process = subprocess.Popen(
            [sys.executable, "-c", SIGNALLED, "evaluate", "normad", "--model", "scripted-model", "--release",
             str(release), "--out", str(out), "--base-url", server.base_url, "--concurrency", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src"), "COLUMNS": "200"})
        try:
            assert fifth_arrived.wait(60), process.communicate(timeout=5)[0]
            process.send_signal(getattr(signal, signal_name))
            output, _ = process.communicate(timeout=60)
        finally:
            release_fifth.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == code, output
    with sqlite3.connect(out / "cache.sqlite") as db:
        kept = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert kept == 4 and "interrupted; 4 new answers kept in" in " ".join(output.split())
    assert "Traceback" not in output


# --- cost before spending it ---

def test_dry_run_counts_requests_and_estimates_cost_without_sending(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    with ScriptedServer(reply=story_number_reader) as server:
        result = evaluate_normad(release, tmp_path / "run", "--base-url", server.base_url, "--dry-run",
                                 "--price-in", "2", "--price-out", "8")
        assert server.request_count == 0
    assert result.exit_code == 0, result.output
    with ScriptedServer(reply=story_number_reader) as server:  # what the real run then asks
        evaluate_normad(release, tmp_path / "real", "--base-url", server.base_url)
        n = server.request_count
    line = " ".join(result.output.split())
    assert f"{n} requests, 0 cached, {n} to ask" in line and "estimated cost at most" in line
    assert not any((tmp_path / "run").glob("cache.sqlite*"))


def test_max_cost_stops_cleanly_and_the_rerun_resumes(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    out = tmp_path / "run"
    # the scripted server counts words as tokens: each answer costs far more than 1e-9 at these prices
    prices = ["--price-in", "1000", "--price-out", "1000"]
    with ScriptedServer(reply=story_number_reader) as server:
        stopped = evaluate_normad(release, out, "--base-url", server.base_url, "--concurrency", "1", *prices,
                                  "--max-cost", "0.0000001")
        assert stopped.exit_code == 3, stopped.output
        assert "more than --max-cost" in stopped.output and server.request_count == 1
        resumed = evaluate_normad(release, out, "--base-url", server.base_url, *prices)
        assert resumed.exit_code == 0, resumed.output
        asked_in_all = server.request_count
    with ScriptedServer(reply=story_number_reader) as server:
        evaluate_normad(release, tmp_path / "fresh", "--base-url", server.base_url)
    assert asked_in_all == server.request_count  # the one answered before the stop was not asked again
    assert "1 cached" in resumed.output


# --- score inputs ---

def normad_responses(path: Path, lines: list) -> Path:
    path.write_bytes(b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n"
                              for line in lines))
    return path


ANSWER = {"model": "m", "story_id": "0", "context": "rot", "sample_index": 0, "response": "Yes"}


@pytest.mark.parametrize(("lines", "where", "words"), [
    ([ANSWER, {**ANSWER, "response": "No"}], "row 2, column sample_index", "the same item as line 1"),
    ([ANSWER, ANSWER], "row 2, column sample_index", "the same item as line 1"),
    ([{**ANSWER, "sample_index": 1.5}], "row 1, column sample_index", "must be a whole number, got 1.5"),
    ([{**ANSWER, "sample_index": "0"}], "row 1, column sample_index", "must be a whole number, got '0'"),
    ([ANSWER, json.dumps({**ANSWER, "sample_index": 1, "response": "Ja"}).encode().replace(b"Ja", b"J\xe4")],
     "row 2, column response", "not valid UTF-8 text (byte 0xe4"),
])
def test_score_inputs_are_one_line_naming_file_line_and_field(tmp_path, lines, where, words):
    release = small_normad_release(tmp_path / "normad")
    responses = normad_responses(tmp_path / "responses.jsonl", lines)
    result = CliRunner().invoke(app, ["score", "normad", "--responses", str(responses), "--release", str(release),
                                      "--out", str(tmp_path / "scored")])
    line = one_line_error(result)
    assert line.startswith(f"error: {responses}, {where}: ") and words in line


def test_score_of_a_wvb_file_with_a_participant_twice_is_refused(tmp_path):
    from culturebench.evaluate.wvb import read_responses

    path = tmp_path / "answers.tsv"
    path.write_text("QUESTION_ID\tPARTICIPANT_ID\tSCORE\nQ1\t7\t1\nQ2\t7\t2\nQ1\t7\t3\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_responses(path)
    assert str(caught.value) == (f"{path}, row 3, column PARTICIPANT_ID: participant 7 answers question 'Q1' "
                                 "again (first on row 1)")


# --- more ways to get the endpoint, key or folder wrong ---

@pytest.mark.parametrize(("base_url", "words"), [
    ("http://127.0.0.1:80a/v1", "the port is not a number"),
    ("http://127.0.0.1:8080/v1/chat/completions", "without /chat/completions"),
])
def test_base_url_mistakes_are_one_line(tmp_path, base_url, words):
    release = small_normad_release(tmp_path / "normad")
    assert words in one_line_error(evaluate_normad(release, tmp_path / "run", "--base-url", base_url))


def test_openai_base_url_without_a_scheme_is_named_as_the_culprit(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:8080/v1")
    with pytest.raises(InputError, match="^OPENAI_BASE_URL 'localhost:8080/v1' needs a scheme"):
        OpenAIBackend("m")


def test_a_key_with_a_line_break_is_refused_without_showing_it(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    result = evaluate_normad(release, tmp_path / "run", "--base-url", "http://127.0.0.1:1/v1",
                             env={"OPENAI_API_KEY": f"{KEY}\n"})
    line = one_line_error(result)
    assert "OPENAI_API_KEY contains a line break" in line and KEY not in result.output


def test_a_cache_locked_by_another_process_is_not_called_foreign(tmp_path):
    path = tmp_path / "cache.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", "{}", ChatResponse("a"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of writing
    try:
        with pytest.raises(InputError, match="cannot open the response cache \\(database is locked\\)"):
            ResponseCache(path, busy_timeout_s=0.05)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with ResponseCache(path) as cache:  # the file was fine all along
        assert cache.get("k") == ChatResponse("a")


def test_a_manifest_without_hashes_cannot_be_verified(tmp_path):
    release = small_normad_release(tmp_path / "normad")
    manifest = json.loads((release / "manifest.json").read_text())
    del manifest["outputs"][0]["sha256"]
    (release / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="lists no sha256"):
        Release.open(release).verify()


# --- a SocialCC judge (and antagonist) that is a reasoning model ---

@pytest.mark.parametrize("fixed", [False, True])
def test_a_socialcc_judge_that_is_a_reasoning_model(tmp_path, fixed):
    from conftest import write_release
    from test_socialcc_evaluate import judge_reply, protagonist_reply, small_scenarios

    release = write_release(tmp_path / "socialcc", {"scenarios": small_scenarios()}, "socialcc")
    shape = {"token_limit": "max_completion_tokens", "omit": ["temperature", "top_p"]}
    with ScriptedServer(reply=protagonist_reply, model="evaluated") as evaluated, \
            ScriptedServer(reply=judge_reply, model="judge-model", reasoning=True) as judge:
        config = tmp_path / "socialcc.json"
        config.write_text(json.dumps({"judge": {"model": "judge-model", "base_url": judge.base_url,
                                                **({"request_shape": shape} if fixed else {})}}))
        result = CliRunner().invoke(app, ["evaluate", "socialcc", "--model", "evaluated", "--base-url",
                                          evaluated.base_url, "--release", str(release), "--out",
                                          str(tmp_path / "run"), "--config", str(config), "--limit", "1"])
        bodies = list(judge.bodies)
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["per_model"]["evaluated"]["table2"]  # the judgements were parsed
    refused = [b for b in bodies if {"max_tokens", "top_p", "stop"} & set(b) or b.get("temperature", 1) != 1]
    # learnt: the antagonist's first turn meets the refusals of max_tokens and top_p, the first judgement that of
    # temperature 0: once each for the model (antagonist and judge share its shape), not once per request
    assert len(refused) == (0 if fixed else 3), [sorted(b) for b in refused]
    assert len(bodies) > 2 * len(refused)


# --- TLS and names: permanent faults said at once ---

@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 (made with the openssl command) and a server-side TLS context."""
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("no openssl command")
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(folder / "key.pem"),
                    "-out", str(folder / "cert.pem")], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return folder / "cert.pem", context


def test_an_untrusted_certificate_fails_at_once_and_ssl_cert_file_trusts_it(self_signed, monkeypatch):
    cert, context = self_signed
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with ScriptedServer(tls=context) as server:
        assert server.base_url.startswith("https://")
        backend = fast(server)
        with pytest.raises(BackendError, match="TLS certificate is not trusted.*SSL_CERT_FILE"):
            collect(backend, [ask("a")])
        assert backend.stats.retries == 0  # not retried: a certificate does not fix itself
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # a company proxy's CA, say
        [response] = collect(fast(server), [ask("a")])
    assert response.text == "echo: a"


def test_an_unknown_host_is_said_as_such_after_short_retries():
    backend = OpenAIBackend("m", base_url="http://no-such-host.invalid/v1", max_retries=2, backoff_base=0.01)
    with pytest.raises(BackendError, match="unknown host: 'no-such-host.invalid'"):
        collect(backend, [ask("a")])
