"""Response cache (SQLite) and ``run_requests``: cache hits, partial runs, duplicates, resume after ``kill -9``."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.chat import BackendError, ChatRequest, ChatResponse, SamplingParams
from culturebench.evaluate.runs.cache import ResponseCache, cache_key, key_material
from culturebench.evaluate.runs.runner import run_requests
from scripted_server import ScriptedServer

PARAMS = {"backend": "openai", "model": "scripted-model"}


def ask(text: str, sample_index: int = 0, **sampling) -> ChatRequest:
    return ChatRequest(messages=(("user", text),), sampling=SamplingParams(**sampling), sample_index=sample_index)


def rows(path: Path) -> int:
    """Rows in the cache file (0 while the table is not created yet), read through a connection of our own."""
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


# --- the cache ---

def test_key_depends_on_what_changes_the_answer():
    base = cache_key(PARAMS, ask("q"))
    assert cache_key(PARAMS, ask("q", temperature=0)) == base  # 0 and 0.0 alike
    assert cache_key(dict(reversed(PARAMS.items())), ask("q")) == base  # key order irrelevant
    others = [cache_key(PARAMS, ask("q2")), cache_key(PARAMS, ask("q", 1)), cache_key(PARAMS, ask("q", seed=1)),
              cache_key(PARAMS, ask("q", temperature=0.5)), cache_key(PARAMS, ask("q", max_tokens=5)),
              cache_key({**PARAMS, "model": "other"}, ask("q")),
              cache_key(PARAMS, ChatRequest(messages=(("system", "q"),)))]
    assert len({base, *others}) == len(others) + 1
    assert key_material(PARAMS, ask("q"))["messages"] == [{"role": "user", "content": "q"}]


def test_put_get_many_and_reopen(tmp_path):
    path = tmp_path / "sub" / "cache.sqlite"
    with ResponseCache(path) as cache:
        keys = [cache.put_request(PARAMS, ask(f"q{i}"), ChatResponse(f"a{i}", i, 2 * i, "stop"))
                for i in range(1200)]
        assert len(cache) == 1200
    with ResponseCache(path) as again:  # another connection, later
        found = again.get_many([*keys, "absent"])
        assert len(found) == 1200 and "absent" not in found
        assert found[keys[7]] == ChatResponse("a7", 7, 14, "stop")
        assert again.get("absent") is None and keys[0] in again
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        request_json, created_at = db.execute("SELECT request, created_at FROM responses LIMIT 1").fetchone()
    assert '"messages"' in request_json and created_at.endswith("Z")


def test_each_put_is_committed_at_once(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.put_request(PARAMS, ask("q"), ChatResponse("a"))
    assert rows(path) == 1  # visible to another connection while the first is still open
    cache.close()


def test_corrupt_cache_is_an_input_error(tmp_path):
    from culturebench.errors import InputError

    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(InputError, match="cache"):
        ResponseCache(path)


# --- run_requests ---

def test_second_run_comes_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123")
    requests = [ask(f"q{i}") for i in range(30)]
    with ScriptedServer(latency=0.01) as server, ResponseCache(tmp_path / "c.sqlite") as cache:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, price_per_million=(1.0, 1.0))
        first = run_requests(backend, requests, cache)
        assert server.request_count == 30
        second = run_requests(backend, requests, cache)
        assert server.request_count == 30  # nothing sent
    assert first.texts == second.texts == [f"echo: q{i}" for i in range(30)]
    assert (first.stats.n_cached, first.stats.n_queried) == (0, 30)
    assert (second.stats.n_cached, second.stats.n_queried) == (30, 0)
    assert first.stats.prompt_tokens == 30 and first.stats.completion_tokens == 60 and first.stats.cost > 0
    assert second.stats.prompt_tokens == 0 and second.stats.cost == 0
    # what the cached answers took when asked: a fully cached rerun's run.json keeps the token counts (issue #52)
    assert (second.stats.cached_prompt_tokens, second.stats.cached_completion_tokens) == (30, 60)
    assert first.stats.cached_prompt_tokens == 0
    # the server saw the key; the cache file does not hold it
    assert all(h["authorization"] == "Bearer sk-test-SECRET-123" for h in server.headers)
    for name in os.listdir(tmp_path):
        assert b"SECRET" not in (tmp_path / name).read_bytes()


def test_only_missing_requests_are_sent_and_duplicates_once(tmp_path):
    with ScriptedServer(latency=lambda body: 0.002 * (hash(str(body)) % 10)) as server, \
            ResponseCache(tmp_path / "c.sqlite") as cache:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=8)
        run_requests(backend, [ask(f"q{i}") for i in range(0, 40, 2)], cache)  # the even ones
        server.reset_counts()
        requests = [ask(f"q{i}") for i in range(40)] + [ask("q1"), ask("q3"), ask("q1", sample_index=1)]
        result = run_requests(backend, requests, cache)
    assert server.request_count == 21  # 20 odd + the second sample of q1
    assert sorted(b["messages"][0]["content"] for b in server.bodies).count("q1") == 2
    assert result.texts == [f"echo: q{i}" for i in range(40)] + ["echo: q1", "echo: q3", "echo: q1"]
    assert (result.stats.n_requests, result.stats.n_cached, result.stats.n_queried) == (43, 20, 21)


def test_a_different_model_does_not_share_answers_but_another_url_does(tmp_path):
    with ScriptedServer() as one, ScriptedServer() as two, ResponseCache(tmp_path / "c.sqlite") as cache:
        run_requests(OpenAIBackend("scripted-model", base_url=one.base_url), [ask("q")], cache)
        run_requests(OpenAIBackend("scripted-model", base_url=two.base_url), [ask("q")], cache)
        run_requests(OpenAIBackend("other-model", base_url=two.base_url), [ask("q")], cache)
    assert (one.request_count, two.request_count) == (1, 1)


def test_error_keeps_what_arrived_and_the_rerun_completes(tmp_path):
    broken = {"on": True}
    faults = lambda number, body: 400 if broken["on"] and "q7" in str(body) else None
    requests = [ask(f"q{i}") for i in range(10)]
    with ScriptedServer(faults=faults) as server, ResponseCache(tmp_path / "c.sqlite") as cache:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=1)
        with pytest.raises(BackendError):
            run_requests(backend, requests, cache)
        assert len(cache) == 7
        broken["on"] = False
        server.reset_counts()
        result = run_requests(backend, requests, cache)
    assert server.request_count == 3 and result.stats.n_cached == 7
    assert result.texts == [f"echo: q{i}" for i in range(10)]


def test_runner_with_a_backend_without_stats(tmp_path):
    class Upper:
        name, model = "upper", "upper-1"

        def cache_params(self):
            return {"backend": self.name, "model": self.model}

        def generate(self, requests, on_response):
            for i, request in reversed(list(enumerate(requests))):
                on_response(i, ChatResponse(request.messages[-1][1].upper(), 1, 2))

    result = run_requests(Upper(), [ask("a"), ask("b")], ResponseCache(tmp_path / "c.sqlite"))
    assert result.texts == ["A", "B"] and result.stats.completion_tokens == 4
    result = run_requests(Upper(), [ask("a"), ask("b")], None)  # no cache at all
    assert result.stats.n_queried == 2


def test_a_backend_that_skips_a_request_is_reported(tmp_path):
    class Lazy:
        name, model = "lazy", "lazy-1"

        def cache_params(self):
            return {"backend": self.name}

        def generate(self, requests, on_response):
            on_response(0, ChatResponse("only one"))

    with pytest.raises(BackendError, match="no response for 1 of 2"):
        run_requests(Lazy(), [ask("a"), ask("b")], None)


def test_progress_bar_on_a_terminal(tmp_path):
    import io

    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with ScriptedServer() as server:
        run_requests(OpenAIBackend("scripted-model", base_url=server.base_url), [ask("a"), ask("b")],
                     ResponseCache(tmp_path / "c.sqlite"), description="probe", console=console)
    text = out.getvalue()
    assert "probe" in text and "2/2" in text


# --- resume after kill -9 ---

CHILD = """
import sys
from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.chat import ChatRequest
from culturebench.evaluate.runs.cache import ResponseCache
from culturebench.evaluate.runs.runner import run_requests

base_url, path = sys.argv[1], sys.argv[2]
requests = [ChatRequest(messages=(("user", f"q{i}"),)) for i in range(40)]
run_requests(OpenAIBackend("scripted-model", base_url=base_url, concurrency=4), requests, ResponseCache(path))
print("finished")
"""


def test_resume_after_kill_9(tmp_path):
    path = tmp_path / "cache.sqlite"
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    requests = [ask(f"q{i}") for i in range(40)]
    with ScriptedServer(latency=0.1) as server:
        child = subprocess.Popen([sys.executable, str(script), server.base_url, str(path)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if path.exists() and rows(path) >= 20:
                    break
                assert child.poll() is None, child.communicate()
                time.sleep(0.02)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        finally:
            if child.poll() is None:
                child.kill()
        assert child.returncode == -signal.SIGKILL
        done = rows(path)
        assert 20 <= done < 40
        server.reset_counts()
        with ResponseCache(path) as cache:
            result = run_requests(OpenAIBackend("scripted-model", base_url=server.base_url), requests, cache)
        assert server.request_count == 40 - done  # exactly the missing ones
        assert result.stats.n_cached == done and result.stats.n_queried == 40 - done
    assert result.texts == [f"echo: q{i}" for i in range(40)]
    assert rows(path) == 40


# --- counts that add up, the same runner fields everywhere, trouble in the progress bar, grouped commits ---

def test_counts_add_up_with_repeats(tmp_path):
    from culturebench.evaluate.runs import run_steps

    with ScriptedServer() as server, ResponseCache(tmp_path / "c.sqlite") as cache:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url)
        run_requests(backend, [ask("a")], cache)
        # 6 requests: "a" cached; "b" asked three times and "c" once at temperature 0 -> 2 queried, 2 repeats
        result = run_requests(backend, [ask("a"), ask("b"), ask("b"), ask("b"), ask("c"), ask("a")], cache)
    s = result.stats
    assert (s.n_requests, s.n_cached, s.n_queried, s.n_repeats) == (6, 2, 2, 2)
    stats = run_steps.runner_stats(result)
    assert list(stats) == list(run_steps.RUNNER_STATS)
    assert run_steps.request_counts(6, stats) == "6 requests (2 cached, 2 queried, 2 repeats asked once)"


def test_total_stats_has_the_runner_fields():
    from culturebench.evaluate.runs import run_steps

    one = {"n_requests": 3, "n_cached": 1, "n_queried": 2, "retries": 1, "transient": {"500": 1}, "cost": 0.5,
           "wall_s": 1.25}
    two = {"n_requests": 4, "n_queried": 3, "n_repeats": 1, "errors": 0, "transient": {"500": 2, "timeout": 1},
           "cost": None, "wall_s": 0.5}
    total = run_steps.total_stats([one, two])
    assert list(total) == list(run_steps.RUNNER_STATS)
    assert total["n_requests"] == 7 and total["n_queried"] == 5 and total["n_repeats"] == 1
    assert total["transient"] == {"500": 3, "timeout": 1} and total["cost"] == 0.5 and total["wall_s"] == 1.75


def test_progress_bar_says_why_a_run_stalls():
    from culturebench.evaluate.models.backends import _AdaptiveLimit
    from culturebench.chat import BackendStats
    from culturebench.evaluate.runs.runner import health

    class Stalled:
        stats = BackendStats(transient={"timeout": 12, "500": 1})
        limiter = _AdaptiveLimit(16)

    Stalled.limiter.limit = 2
    assert health(Stalled()) == "1 HTTP 500, 12 timeouts, 2/16 in flight"
    Stalled.stats, Stalled.limiter = BackendStats(), None
    assert health(Stalled()) == ""


def test_grouped_commits_reach_other_readers(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path, commit_interval_s=0.2) as cache:
        cache.put_request(PARAMS, ask("a"), ChatResponse("A"))  # the first put commits at once
        cache.put_request(PARAMS, ask("b"), ChatResponse("B"))  # within the interval: left to the timer
        assert rows(path) in (1, 2)
        deadline = time.monotonic() + 10
        while rows(path) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert rows(path) == 2  # committed by the timer, with no further put
        cache.put_request(PARAMS, ask("c"), ChatResponse("C"))
        cache.put_request(PARAMS, ask("d"), ChatResponse("D"))
    assert rows(path) == 4  # closing commits the rest


def test_a_cache_made_before_the_rowid_table_is_read_and_extended(tmp_path):
    path = tmp_path / "cache.sqlite"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, request TEXT NOT NULL, text TEXT NOT NULL, "
                "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, finish_reason TEXT, "
                "created_at TEXT NOT NULL) WITHOUT ROWID")
    old.execute("INSERT INTO responses VALUES (?, '{}', 'old answer', 3, 4, 'stop', '2026-01-01T00:00:00Z')",
                (cache_key(PARAMS, ask("old")),))
    old.commit()
    old.close()
    with ResponseCache(path) as cache:
        assert cache.get(cache_key(PARAMS, ask("old"))) == ChatResponse("old answer", 3, 4, "stop")
        cache.put_request(PARAMS, ask("new"), ChatResponse("new answer"))
        cache.put_request(PARAMS, ask("old"), ChatResponse("replaced"))
    with ResponseCache(path) as cache:
        assert cache.get(cache_key(PARAMS, ask("new"))).text == "new answer"
        assert cache.get(cache_key(PARAMS, ask("old"))).text == "replaced"
        assert len(cache) == 2


def test_a_new_cache_keeps_one_row_per_key(tmp_path):
    path = tmp_path / "cache.sqlite"
    with ResponseCache(path) as cache:
        for text in ("first", "second"):
            cache.put_request(PARAMS, ask("q"), ChatResponse(text))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT text FROM responses").fetchall() == [("second",)]
