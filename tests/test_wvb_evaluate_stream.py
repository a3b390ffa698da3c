"""Streaming ``evaluate`` (issue #28): the runner takes requests from a generator in bounded batches and hands each
batch's answers on as they come; ``evaluate wvb`` appends its records per batch (responses.jsonl, or zstd parquet
shards above ``run_folder.SHARD_THRESHOLD``) and scores them from the file. The metrics are those of the list-based
pairing the code had before (re-implemented here in plain Python), and ``score`` reads both layouts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from culturebench.contract import Result
from culturebench.evaluate import wvb
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.chat import ChatRequest, ChatResponse, SamplingParams
from culturebench.evaluate.runs.cache import ResponseCache
from culturebench.evaluate.runs.runner import DryRun, stream_requests
from scripted_server import ScriptedServer

LIMIT = 400  # test-split rows of the bundled sample, spread over its questions
EVALUATE_ONLY = {"mode", "prompt_family", "split", "n_evaluated_rows", "n_requests", "n_parsed", "n_unparsed",
                 "parse_status", "covers", "truncated_answers", "countries"}
"""metrics.json keys that only ``evaluate`` writes (``score`` of the same responses has every other one)."""


def reply(text: str, body: dict) -> str:
    """A scripted model whose answer depends on the prompt: 1-5 by its length, no answer for every 7th length."""
    if len(text) % 7 == 0:
        return "I cannot say."
    return f'{{"thoughtful explanation": "x", "answer as a score": "{1 + len(text) % 5}"}}'


def run_evaluate(server: ScriptedServer, release: Path, out: Path, **options) -> Result:
    backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=8)
    return wvb.evaluate(backend, wvb.WVBOptions(release=release, out=out, split="test", limit=LIMIT, **options))


def list_pairing(rows: pl.DataFrame, records: list[dict], demographics: bool) -> pl.DataFrame:
    """``score_answers`` input as the list-based code before streaming paired it: with demographics each record in
    file order; without, per question (in the rows' order) sample j (by sample_index) with the j-th row, extra
    samples without participant, rows without a sample as padding (has_model false)."""
    def text(answer):
        return None if answer is None else str(answer)

    out = []
    if demographics:
        out = [(r["question_id"], r["participant_id"], text(r["answer"]), True) for r in records]
    else:
        people: dict[str, list[int]] = {}
        for participant_id, question_id in rows.select("participant_id", "question_id").iter_rows():
            people.setdefault(question_id, []).append(participant_id)
        for question_id, persons in people.items():
            samples = sorted((r for r in records if r["question_id"] == question_id), key=lambda r: r["sample_index"])
            for j in range(max(len(persons), len(samples))):
                person = persons[j] if j < len(persons) else None
                out.append((question_id, person, text(samples[j]["answer"]) if j < len(samples) else None,
                            j < len(samples)))
    frame = pl.DataFrame(out, schema={"question_id": pl.String, "participant_id": pl.Int64, "score": pl.String,
                                      "has_model": pl.Boolean}, orient="row")
    return frame.with_row_index("row", offset=1).with_columns(pl.col("row").cast(pl.Int64))


def without(metrics: dict, keys) -> dict:
    return {k: v for k, v in metrics.items() if k not in keys}


@pytest.mark.slow
@pytest.mark.parametrize("options", [{}, {"demographics": False}, {"demographics": False, "samples": 3},
                                     {"samples": 2}])
def test_streamed_metrics_equal_the_list_pairing_and_score(tmp_path, sample_release, options):
    """Slow: 400 requests, then four WVB scorings (evaluate, the list pairing, score, the cached evaluate), each with
    2,000 bootstrap resamples of W1."""
    out = tmp_path / "run"
    demographics = options.get("demographics", True)
    with ScriptedServer(reply=reply) as server:
        result = run_evaluate(server, sample_release, out, **options)
        records = run_folder.read_jsonl(out / run_folder.RESPONSES_FILE)
        rows = wvb.evaluation_rows(sample_release, "test", LIMIT)
        assert len(records) == result.metrics["n_requests"] == result.stats["n_requests"]
        assert server.request_count == result.stats["n_queried"] > 0
        expected = wvb.score_answers(list_pairing(rows, records, demographics), sample_release,
                                     run_folder.source_info(out / run_folder.RESPONSES_FILE),
                                     model=result.metrics["models"][0])
        on_disk = json.loads((out / run_folder.METRICS_FILE).read_text())
        assert without(on_disk, EVALUATE_ONLY) == json.loads(json.dumps(expected.metrics))
        assert on_disk["n_parsed"] == sum(r["answer"] is not None for r in records)

        # the same cached answers scored by ``score`` from the file: the same metrics
        scored = wvb.score(out / run_folder.RESPONSES_FILE, sample_release)
        assert json.loads(json.dumps(scored.metrics)) | {"models": on_disk["models"]} == without(on_disk, EVALUATE_ONLY)

        # and again through evaluate's cached path: nothing asked, the same metrics.json
        server.reset_counts()
        run_evaluate(server, sample_release, out, **options)
        assert server.request_count == 0
        assert json.loads((out / run_folder.METRICS_FILE).read_text()) == on_disk


@pytest.mark.slow
def test_large_runs_write_parquet_shards_that_score_reads(tmp_path, sample_release, monkeypatch):
    """Slow: three evaluate runs of 400 requests and a score, each with 2,000 bootstrap resamples of W1."""
    jsonl_run, shard_run = tmp_path / "jsonl", tmp_path / "shards"
    with ScriptedServer(reply=reply) as server:
        run_evaluate(server, sample_release, jsonl_run)
        shard_run.mkdir()
        shutil.copy(jsonl_run / run_folder.CACHE_FILE, shard_run / run_folder.CACHE_FILE)
        monkeypatch.setattr(run_folder, "SHARD_THRESHOLD", LIMIT - 1)
        monkeypatch.setattr(run_folder, "SHARD_ROWS", 150)
        server.reset_counts()
        run_evaluate(server, sample_release, shard_run)
        assert server.request_count == 0  # every answer from the copied cache
    shards = sorted((shard_run / run_folder.RESPONSES_DIR).iterdir())
    assert [p.name for p in shards] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert not (shard_run / run_folder.RESPONSES_FILE).exists()
    assert not [p for p in shard_run.iterdir() if p.name.startswith(".")]  # no partial file left behind
    # the shards hold the same records as responses.jsonl, in the same order, zstd-compressed
    import pyarrow.parquet as pq

    assert pq.ParquetFile(shards[0]).metadata.row_group(0).column(0).compression == "ZSTD"
    assert pl.read_parquet(shards).to_dicts() == run_folder.read_jsonl(jsonl_run / run_folder.RESPONSES_FILE)
    assert run_folder.read_records(shard_run) == run_folder.read_records(jsonl_run) == run_folder.read_jsonl(jsonl_run / run_folder.RESPONSES_FILE)

    by_jsonl = json.loads((jsonl_run / run_folder.METRICS_FILE).read_text())
    by_shards = json.loads((shard_run / run_folder.METRICS_FILE).read_text())
    assert by_shards["responses"]["path"] == str(shard_run / run_folder.RESPONSES_DIR)
    assert without(by_shards, {"responses"}) == without(by_jsonl, {"responses"})
    scored = wvb.score(shard_run / run_folder.RESPONSES_DIR, sample_release)
    assert without(scored.metrics, {"responses", "models"}) == without(by_jsonl, EVALUATE_ONLY | {"responses", "models"})

    # a smaller run into the same folder goes back to responses.jsonl and removes the shards
    monkeypatch.setattr(run_folder, "SHARD_THRESHOLD", 10 * LIMIT)
    with ScriptedServer(reply=reply) as server:
        run_evaluate(server, sample_release, shard_run)
    assert (shard_run / run_folder.RESPONSES_FILE).is_file() and not (shard_run / run_folder.RESPONSES_DIR).exists()
    assert (shard_run / run_folder.RESPONSES_FILE).read_bytes() == (jsonl_run / run_folder.RESPONSES_FILE).read_bytes()


def requests(n: int, pulled: list[int]):
    """A generator of ``n`` distinct requests that records how many have been taken from it."""
    for i in range(n):
        pulled.append(i)
        yield ChatRequest(messages=(("user", f"question {i}"),), sampling=SamplingParams(max_tokens=4))


def test_stream_requests_takes_bounded_batches_from_a_generator_and_resumes(tmp_path):
    pulled: list[int] = []
    batches: list[tuple[int, int, list[str]]] = []

    def on_batch(items, responses):
        batches.append((len(items), len(pulled), [r.text for r in responses]))

    with ScriptedServer(reply=lambda text, body: text.upper()) as server, \
            ResponseCache(tmp_path / "cache.sqlite") as cache:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=4)
        stats = stream_requests(backend, requests(25, pulled), cache, on_batch, total=25, batch_size=10)
        # each batch is answered and handed on before the next one is taken from the generator
        assert [(size, taken) for size, taken, _ in batches] == [(10, 10), (10, 20), (5, 25)]
        assert [text for *_, texts in batches for text in texts] == [f"QUESTION {i}" for i in range(25)]
        assert (stats.n_requests, stats.n_queried, stats.n_cached) == (25, 25, 0)
        assert server.request_count == 25

        # resumed: the answered ones come from the cache, only the new ones are asked
        server.reset_counts()
        batches.clear()
        again = stream_requests(backend, requests(30, []), cache, on_batch, batch_size=10)
        assert (again.n_requests, again.n_cached, again.n_queried) == (30, 25, 5)
        assert server.request_count == 5
        assert batches[-1][2] == [f"QUESTION {i}" for i in range(20, 30)]


def test_identical_requests_of_later_batches_come_from_the_cache(tmp_path):
    same = [ChatRequest(messages=(("user", "same"),), sampling=SamplingParams(max_tokens=4))] * 7
    with ScriptedServer(reply="ok") as server, ResponseCache(tmp_path / "cache.sqlite") as cache:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url)
        stats = stream_requests(backend, iter(same), cache, lambda items, responses: None, batch_size=3)
    assert server.request_count == 1  # asked once in the first batch, then found in the cache
    assert (stats.n_queried, stats.n_repeats, stats.n_cached) == (1, 2, 4)


def test_dry_run_counts_every_batch_without_sending(tmp_path):
    with ScriptedServer(reply="ok") as server, ResponseCache(tmp_path / "cache.sqlite") as cache:
        backend = OpenAIBackend("scripted-model", base_url=server.base_url)
        stream_requests(backend, requests(4, []), cache, lambda items, responses: None, batch_size=3)
        backend.dry_run = True
        with pytest.raises(DryRun) as stop:
            stream_requests(backend, requests(9, []), cache, lambda items, responses: None, batch_size=3)
        assert server.request_count == 4
    # 9 requests, 4 cached, 5 to ask: "question 4" to "question 8", 10 characters: 3 tokens + 4 for the message
    assert (stop.value.n_requests, stop.value.n_cached, stop.value.n_to_send) == (9, 4, 5)
    assert stop.value.prompt_tokens == 5 * (4 + 3) and stop.value.completion_tokens == 5 * 4


@pytest.mark.parametrize("sharded", [False, True])
def test_an_interrupted_run_leaves_no_responses_file_and_resumes(tmp_path, sample_release, monkeypatch, sharded):
    if sharded:  # parquet shards of 100 records: the run fails with a shard open
        monkeypatch.setattr(run_folder, "SHARD_THRESHOLD", 10)
        monkeypatch.setattr(run_folder, "SHARD_ROWS", 100)
    out = tmp_path / "run"
    answered = []

    def failing(text: str, body: dict) -> str:
        answered.append(text)
        return reply(text, body)

    with ScriptedServer(reply=failing, faults=lambda number, body: 400 if number > 150 else None) as server:
        with pytest.raises(Exception):
            run_evaluate(server, sample_release, out)
        assert not (out / run_folder.RESPONSES_FILE).exists() and not (out / run_folder.RESPONSES_DIR).exists()
        assert not [p for p in out.iterdir() if p.name.startswith(".")]
    with ResponseCache(out / run_folder.CACHE_FILE) as cache:
        kept = len(cache)
    assert kept > 0
    with ScriptedServer(reply=reply) as server:
        result = run_evaluate(server, sample_release, out)
        assert server.request_count == result.stats["n_queried"] < result.stats["n_requests"]
        assert result.stats["n_cached"] >= kept
    assert len(run_folder.read_records(out)) == result.stats["n_requests"]
    assert (out / (run_folder.RESPONSES_DIR if sharded else run_folder.RESPONSES_FILE)).exists()


class WholeRunBackend:
    """A backend that takes the whole run as one batch (as the integrations' planning backend does) and echoes."""

    name = "whole-run"
    runner_batch_size = 1000

    def cache_params(self) -> dict:
        return {"backend": self.name}

    def generate(self, requests, on_response) -> None:
        for index, request in enumerate(requests):
            on_response(index, ChatResponse(request.messages[-1][1]))


class OwnBatchesBackend(WholeRunBackend):
    """A backend with batches of its own (as vLLM's and Ray Data's), which are not the runner's."""

    runner_batch_size = None
    batch_size = 4


def test_a_backend_may_set_the_batch_size():
    sizes: list[int] = []
    stats = stream_requests(WholeRunBackend(), requests(25, []), None,
                            lambda items, responses: sizes.append(len(items)), batch_size=10)
    assert sizes == [25] and stats.n_queried == 25
    sizes.clear()
    stream_requests(OwnBatchesBackend(), requests(25, []), None, lambda items, responses: sizes.append(len(items)),
                    batch_size=10)
    assert sizes == [10, 10, 5]  # its own batch_size is not taken for the runner's


@pytest.mark.parametrize(("shard", "words"), [(0, "responses shards cannot be read"),
                                              (1, "responses cannot be scored")])
def test_a_shard_damaged_past_its_footer_is_a_one_line_error(tmp_path, sample_release, shard, words):
    # a shard whose footer reads but whose pages do not: the answers are read lazily, after the file was opened (the
    # first shard's first row tells a run with demographics from one without; the rest is read by the scoring)
    import struct

    import pyarrow as pa
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from conftest import one_line_error
    from culturebench.cli import app

    rows = wvb.evaluation_rows(sample_release, "test")
    folder = tmp_path / "run" / run_folder.RESPONSES_DIR
    folder.mkdir(parents=True)
    for i, part in enumerate((rows.head(rows.height // 2), rows.tail(rows.height - rows.height // 2))):
        table = pa.table({"participant_id": part["participant_id"].to_list(),
                          "question_id": part["question_id"].to_list(), "sample_index": [0] * part.height,
                          "answer": [1] * part.height})
        pq.write_table(table, folder / f"part-{i:05d}.parquet", compression="none")
    damaged = folder / f"part-{shard:05d}.parquet"
    data = bytearray(damaged.read_bytes())
    footer = struct.unpack("<i", data[-8:-4])[0]
    data[4:len(data) - 8 - footer] = b"\x07" * (len(data) - 12 - footer)  # every page, not the footer
    damaged.write_bytes(bytes(data))
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(folder), "--release", str(sample_release),
                                      "--out", str(tmp_path / "scored")])
    line = one_line_error(result)
    assert str(folder) in line and words in line
    assert not (tmp_path / "scored" / run_folder.METRICS_FILE).exists()


@pytest.mark.parametrize("demographics", [True, False])
def test_plan_yields_the_requests_evaluate_sends(tmp_path, sample_release, demographics):
    """``BENCHMARK.plan`` (no model involved) yields what ``evaluate`` asks, in its order (issue #44: the harness
    and the lm-eval export plan a run from it)."""
    options = wvb.WVBOptions(release=sample_release, out=tmp_path / "run", split="test", limit=LIMIT,
                             demographics=demographics, samples=2)
    planned = list(wvb.BENCHMARK.requests(options))
    with ScriptedServer(reply=reply) as server:
        result = wvb.evaluate(OpenAIBackend("scripted-model", base_url=server.base_url, concurrency=8),
                                        options)
    assert result.stats["n_requests"] == len(planned)
    records = run_folder.read_jsonl(tmp_path / "run" / run_folder.RESPONSES_FILE)
    assert [(r.message_dicts(), r.sample_index, r.sampling.temperature) for r in planned] == [
        (r["messages"], r["sample_index"], r["sampling"]["temperature"]) for r in records]
