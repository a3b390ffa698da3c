"""Wording variants (issue #63): ``generate paraphrases NAME`` against a scripted server, the build's ``variants``
config, ``evaluate cdeval / normad --variants paraphrase`` and bad paraphrase files.

Expected values come from the server's recorded request bodies, the raw files the tests write and the release's
parquet tables, not from the code under test."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import SAMPLE_RAW, one_line_error
from culturebench import registry
from culturebench.cli import app
from culturebench.release import build_release
from scripted_server import ScriptedServer, last_user_message

ENV = {"OPENAI_API_KEY": "test-key"}
CHECK_START = "Do the two questions below ask exactly the same thing"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


def table(release: Path, config: str) -> pl.DataFrame:
    return pl.read_parquet(sorted((release / "data" / config).glob("*.parquet")))


def raw_copy(tmp_path: Path, name: str, folders: tuple[str, ...]) -> Path:
    """The bundled sample's folders ``folders`` copied into a fresh raw folder (its paraphrases left out)."""
    raw = tmp_path / f"raw-{name}"
    for folder in folders:
        shutil.copytree(SAMPLE_RAW / folder, raw / folder)
    return raw


def build(raw: Path, out: Path, name: str) -> Path:
    folder, verdict = build_release(registry.benchmark(name), raw, out, seed=0, progress=lambda stage: None)
    assert verdict["failed"] == 0
    return folder


def write_lines(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def line(item: str, original: str, index: int, paraphrase: str) -> dict:
    return {"item": item, "original": original, "index": index, "paraphrase": paraphrase, "made_by": "hand-written",
            "checked_by": "hand-written", "check": "hand-written", "seed": None}


# ------------------------------------------------------------------------------------------------------ generate


def test_generate_writes_checked_paraphrases_with_provenance(bundled_release, tmp_path):
    """Each question gets three candidates; the checker (a second model) refuses every candidate ending in
    "(2)?", so those are left out and the item asked a second round; the file holds what the checker passed."""
    release = bundled_release("cdeval")
    questions = {r["id"]: r["question"] for r in table(release, "questions").iter_rows(named=True)}

    def reply(text, body):
        if text.startswith(CHECK_START):
            assert body["model"] == "checker"
            return "No." if text.endswith("(2)?") else "Yes."
        assert body["model"] == "writer"
        question = text.rsplit("Question: ", 1)[1]
        return "\n".join(f"{k}. {question[:-1]}, seed {body['seed']} ({k})?" for k in (1, 2, 3))

    out = tmp_path / "raw-out"
    with ScriptedServer(reply=reply, model="writer") as server:
        result = invoke("generate", "paraphrases", "cdeval", "--model", "writer", "--base-url", server.base_url,
                        "--checker-model", "checker", "--from-release", str(release), "--out", str(out),
                        "--limit", "2", "--k", "3", "--seed", "7")
        bodies = list(server.bodies)
    assert result.exit_code == 0, result.output
    rows = [json.loads(x) for x in (out / "paraphrases" / "cdeval.jsonl").read_text().splitlines()]
    first_four = list(questions)[:2]
    asked = [last_user_message(b) for b in bodies if not last_user_message(b).startswith(CHECK_START)]
    checked = [last_user_message(b) for b in bodies if last_user_message(b).startswith(CHECK_START)]
    # every candidate was judged; those judged "Yes" are kept, at most three per item, in the order asked: by round
    # (its seed), then by place in the writer's reply (the checks reach the server concurrently, in any order)
    passed: dict[str, list[str]] = {}
    for text in checked:
        original, paraphrase = re.search(r"Question 1: (.*)\nQuestion 2: (.*)$", text).groups()
        item = next(i for i in first_four if questions[i].strip() == original)
        if not paraphrase.endswith("(2)?"):
            passed.setdefault(item, []).append(paraphrase)

    def asked_order(paraphrase: str) -> tuple[int, int]:
        seed, place = re.search(r"seed (\d+) \((\d)\)\?$", paraphrase).groups()
        return int(seed), int(place)

    expected = sorted((item, k, text) for item, texts in passed.items()
                      for k, text in enumerate(sorted(texts, key=asked_order)[:3], 1))
    assert sorted((r["item"], r["index"], r["paraphrase"]) for r in rows) == expected
    assert {r["item"] for r in rows} == set(first_four)
    assert all(r["original"] == questions[r["item"]].strip() for r in rows)
    assert {(r["made_by"], r["checked_by"], r["check"], r["seed"]) for r in rows} == {("writer", "checker", "yes", 7)}
    assert len(asked) == 4  # two items, each short of three after round one (one refused): asked twice
    assert sorted(b["seed"] for b in bodies if not last_user_message(b).startswith(CHECK_START)) == [7] * 2 + [8] * 2
    # the generated file, beside the questionnaire, builds the release's variants config: every row matches
    for folder in ("cdeval", "hofstede"):
        shutil.copytree(SAMPLE_RAW / folder, out / folder)
    variants = table(build(out, tmp_path / "rel", "cdeval"), "variants")
    assert variants.select("id", "paraphrase_index", "paraphrase").rows() == expected
    assert variants["matches_release"].all() and set(variants["checked_by"]) == {"checker"}


# --------------------------------------------------------------------------------------------------------- build


def test_build_makes_the_variants_config_deterministically(tmp_path):
    raw = raw_copy(tmp_path, "cdeval", ("cdeval", "hofstede", "paraphrases"))
    first, second = build(raw, tmp_path / "a", "cdeval"), build(raw, tmp_path / "b", "cdeval")
    files = sorted(p.relative_to(first) for p in (first / "data").rglob("*.parquet"))
    assert any(p.parts[1] == "variants" for p in files)
    for path in files:
        assert (first / path).read_bytes() == (second / path).read_bytes(), path
    lines = [json.loads(x) for x in (raw / "paraphrases" / "cdeval.jsonl").read_text().splitlines()]
    variants = table(first, "variants")
    assert variants.select("id", "variant", "paraphrase", "made_by").rows() == sorted(
        (r["item"], f"paraphrase{r['index']}", r["paraphrase"], r["made_by"]) for r in lines)
    questions = dict(table(first, "questions").select("id", "question").iter_rows())
    assert variants["matches_release"].to_list() == [questions.get(r[0]) == r[1] for r in
                                                      variants.select("id", "original").rows()]
    manifest = json.loads((first / "manifest.json").read_text())
    assert "paraphrases/cdeval.jsonl" in [i["name"] for i in manifest["inputs"]]
    assert manifest["provenance"]["paraphrases"]["made_by"] == ["hand-written"]
    assert "**variants**" in (first / "README.md").read_text()
    assert "variants" in (first / "croissant.json").read_text()


def test_a_malformed_paraphrase_line_is_one_line(tmp_path):
    raw = raw_copy(tmp_path, "cdeval", ("cdeval", "hofstede"))
    bad = line("cdeval-pdi-000000000000", "Q?", 1, "P?")
    del bad["checked_by"]
    write_lines(raw / "paraphrases" / "cdeval.jsonl", [bad])
    message = one_line_error(invoke("build", "cdeval", "--raw", str(raw), "--out", str(tmp_path / "rel")))
    assert "cdeval.jsonl" in message and "checked_by" in message


# ------------------------------------------------------------------------------------------------------ evaluate


def run(name: str, release: Path, out: Path, *extra: str, reply=lambda text, body: "A"):
    with ScriptedServer(reply=reply, model="scripted") as server:
        result = invoke("evaluate", name, "--model", "scripted", "--base-url", server.base_url, "--release",
                        str(release), "--out", str(out), "--samples", "1", *extra)
        bodies = [last_user_message(b) for b in server.bodies]
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in (out / "responses.jsonl").read_text().splitlines()]
    return result, records, bodies


def test_cdeval_paraphrase_requests_differ_from_the_default_only_by_the_question(bundled_release, tmp_path):
    release = bundled_release("cdeval")
    variants = table(release, "variants")
    wanted = {(f"paraphrase{k}", i): p for i, k, p in variants.select("id", "paraphrase_index", "paraphrase").rows()}
    originals = dict(variants.select("id", "original").rows())
    _, plain, plain_bodies = run("cdeval", release, tmp_path / "plain")
    _, records, bodies = run("cdeval", release, tmp_path / "para", "--variants", "paraphrase")
    k = int(variants["paraphrase_index"].max())
    assert {r["variant"] for r in records} == {"default", *(f"paraphrase{i}" for i in range(1, k + 1))}
    questions = dict(table(release, "questions").select("id", "question").rows())
    assert set(plain_bodies) <= set(bodies)  # the default run's requests are all asked again, unchanged
    # the default run's request of each (question, prompt): the text that holds the question's own wording
    default_of = {}
    for r in plain:
        matches = [t for t in plain_bodies if questions[r["question_id"]].strip() in t]
        default_of.setdefault(r["question_id"], set()).update(matches)
    changed = 0
    for r in records:
        asked = wanted.get((r["variant"], r["question_id"]))
        if r["variant"] == "default" or asked is None:
            assert (r.get("paraphrase_fallback") is not None) == (r["variant"] != "default")
            continue
        assert r["prompt"] == r["slot"]  # the options in the paper's order
        changed += 1
    sent = set(bodies) - set(plain_bodies)
    expected = {t.replace(originals[i], p, 1) for (v, i), p in wanted.items() for t in default_of[i]}
    assert sent == expected and all(originals[i] not in t for t in sent for i in originals if t.count(originals[i]))
    assert changed == len(wanted) * 6
    unparaphrased = {r["question_id"] for r in records if r.get("paraphrase_fallback")}
    assert unparaphrased == set(questions) - {i for _, i in wanted}


def test_normad_paraphrase_replaces_only_the_closing_question(bundled_release, tmp_path):
    release = bundled_release("normad")
    variants = table(release, "variants")
    wanted = {(f"paraphrase{k}", i): (o, p) for i, k, o, p in
              variants.select("id", "paraphrase_index", "original", "paraphrase").rows()}
    contexts = ("--contexts", "none,rot")
    _, plain, plain_bodies = run("normad", release, tmp_path / "plain", *contexts, reply=lambda text, body: "Yes")
    _, records, bodies = run("normad", release, tmp_path / "para", "--variants", "paraphrase1,paraphrase2",
                             *contexts, reply=lambda text, body: "Yes")
    default = {(r["story_id"], r["context"]): r["prompt"] for r in records if r["variant"] == "default"}
    assert sorted(default.values()) == sorted(r["prompt"] for r in plain)
    changed = 0
    for r in records:
        if r["variant"] == "default":
            continue
        base = default[(r["story_id"], r["context"])]
        if (r["variant"], r["story_id"]) not in wanted:
            assert r["prompt"] == base and r["paraphrase_fallback"]
            continue
        original, paraphrase = wanted[(r["variant"], r["story_id"])]
        story_end = base.index(original) + len(original)
        assert base.count(original) == 1 and base[story_end - len(original) - 1] == " "
        assert r["prompt"] == base.replace(original, paraphrase) and r["prompt"] in bodies
        changed += 1
    assert changed == len(wanted) * 2  # two contexts


def test_mismatched_and_repeated_paraphrases_are_said_and_asked_in_the_original(tmp_path):
    """A paraphrase file written for another release: an item the release lacks, one written for another wording
    of its question, and one paraphrase that repeats the original (asked once: no request of its own)."""
    raw = raw_copy(tmp_path, "cdeval", ("cdeval", "hofstede"))
    plain = build(raw, tmp_path / "plain", "cdeval")
    questions = table(plain, "questions").select("id", "question").rows()
    (a, qa), (b, qb), (c, qc) = questions[:3]
    write_lines(raw / "paraphrases" / "cdeval.jsonl", [
        line("cdeval-pdi-ffffffffffff", "A question of another release?", 1, "Another question?"),
        line(a, qa + " (older wording)", 1, "Paraphrase of an older wording?"),
        line(b, qb, 1, "  " + qb.strip() + " "),
        line(c, qc, 1, "A fine paraphrase of the third question?"),
    ])
    release = build(raw, tmp_path / "rel", "cdeval")
    result, records, bodies = run("cdeval", release, tmp_path / "run", "--variants", "paraphrase")
    notes = [x for x in result.output.splitlines() if "paraphrase variants:" in x]
    assert len(notes) == 1 and a in notes[0] and "another wording" in notes[0] and "matches_release" in notes[0]
    repeats = [x for x in result.output.splitlines() if "identical to their original" in x]
    assert len(repeats) == 1 and b in repeats[0]
    marked = {r["question_id"] for r in records if r.get("paraphrase_fallback")}
    assert a in marked and c not in marked and b not in marked
    for r in records:
        if r["variant"] == "paraphrase1" and r["question_id"] in (a,):
            twin = next(d for d in records if d["variant"] == "default" and d["question_id"] == a
                        and d["prompt"] == r["prompt"])
            assert r["response"] == twin["response"]
    # every distinct prompt asked once: the mismatched and the repeated item's paraphrase1 requests are their
    # default's, only the third question's six are new
    assert len(bodies) == len(set(bodies)) == len(records) - 6 * (len(questions) - 1)


def test_paraphrase_variants_need_the_config(tmp_path):
    raw = raw_copy(tmp_path, "cdeval", ("cdeval", "hofstede"))
    release = build(raw, tmp_path / "rel", "cdeval")
    message = one_line_error(invoke("evaluate", "cdeval", "--model", "m", "--base-url", "http://127.0.0.1:9",
                                    "--release", str(release), "--out", str(tmp_path / "run"),
                                    "--variants", "paraphrase"))
    assert "no 'variants' config" in message and "generate paraphrases" in message


def test_a_paraphrase_beyond_k_is_one_line(bundled_release, tmp_path):
    release = bundled_release("cdeval")
    k = int(table(release, "variants")["paraphrase_index"].max())
    message = one_line_error(invoke("evaluate", "cdeval", "--model", "m", "--base-url", "http://127.0.0.1:9",
                                    "--release", str(release), "--out", str(tmp_path / "run"),
                                    "--variants", f"paraphrase{k + 1}"))
    assert f"paraphrases 1 to {k}" in message


@pytest.mark.parametrize("name", ["cdeval", "normad"])
def test_generate_paraphrases_needs_a_benchmark_it_lists(name):
    result = invoke("generate", "paraphrases", "--help")
    assert result.exit_code == 0 and name in result.output
