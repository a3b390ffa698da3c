"""`culturebench evaluate` for CDEval, NormAd, LLM-GLOBE and SocialCC with the real local model (llama.cpp +
Qwen2.5-Coder-1.5B-Instruct Q4_K_M): `pytest -m model -s`. WorldValuesBench's run is in test_model.py.

Each benchmark's bundled sample is built, a small slice is evaluated through the command line (the same path a user
takes), the run folder is checked, the same command again must ask the model nothing (every answer cached), and
`score` must recompute the same metrics from the saved responses. What the model answered is printed (parse
statuses, headline metrics) for the closing note; a 1.5B model answers weakly, the point is that the path runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EVALUATE_ONLY
from culturebench import registry
from culturebench.cli import app

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[1]

# benchmark -> (evaluate options for a small slice, options file or None, the saved answers `score` reads);
# "{model}" / "{base_url}" in the options stand for the local server's (LLM-GLOBE's jurors and SocialCC's judge, named
# as the paper requires a named judge: the model itself, the only one here)
SLICES = {
    "cdeval": (["--limit", "2", "--samples", "1"], None, "responses.jsonl"),
    "normad": (["--limit", "3"], None, "responses.jsonl"),
    "llm_globe": (["--limit", "2"], {"part": "both", "samples": 1, "open_samples": 1, "jurors": [
        {"name": "self-en", "model": "{model}", "base_url": "{base_url}", "language": "en"},
        {"name": "self-zh", "model": "{model}", "base_url": "{base_url}", "language": "zh"}]}, "responses.jsonl"),
    "socialcc": (["--limit", "1", "--max-tokens", "96"], {"max_rounds": 2, "judge_max_tokens": 160,
                                                             "judge": {"model": "{model}", "base_url": "{base_url}"}},
                 "transcripts.jsonl"),
}


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args), env={"OPENAI_API_KEY": "sk-local-test"})
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("name", list(SLICES))
def test_evaluate_slice_with_real_model_resumes_and_rescores(real_model, name, tmp_path):
    from culturebench.release import build_release

    model, base_url = real_model
    options, config, answers = SLICES[name]
    release, verdict = build_release(registry.benchmark(name), REPO / "raw", tmp_path / "rel", 0, lambda stage: None)
    assert verdict["failed"] == 0
    if config is not None:
        text = json.dumps(config).replace("{model}", model).replace("{base_url}", base_url)  # jurors: this model
        (tmp_path / "options.json").write_text(text, encoding="utf-8")
        options = [*options, "--config", str(tmp_path / "options.json")]
    out = tmp_path / "run"
    command = ["evaluate", name, "--model", model, "--base-url", base_url, "--release", str(release),
               "--concurrency", "2", "--out", str(out), *options]

    first = _invoke(*command)
    print(f"\n--- {name}\n{first.output.strip()}")
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert (out / answers).read_text(encoding="utf-8").strip() and run["runner"]["n_queried"] > 0
    assert model in metrics["models"]
    for file in run["files"]:
        assert (out / file).stat().st_size > 0, file
    assert "sk-local-test" not in (out / "run.json").read_text(encoding="utf-8")
    print(json.dumps({k: run[k] for k in ("parse_status", "metrics") if k in run}, indent=1, ensure_ascii=False)[:3000])

    again = _invoke(*command)  # resume: everything comes from the cache
    rerun = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert rerun["runner"]["n_queried"] == 0, again.output
    assert rerun["runner"]["n_cached"] == (run["runner"]["n_cached"] + run["runner"]["n_queried"]
                                           + run["runner"]["n_repeats"])

    rescored = tmp_path / "rescored"
    _invoke("score", name, "--responses", str(out / answers), "--release", str(release),
            "--out", str(rescored), *(["--config", str(tmp_path / "options.json")] if config is not None else []))
    assert _comparable(json.loads((rescored / "metrics.json").read_text(encoding="utf-8"))) == _comparable(metrics)


def _comparable(metrics: dict) -> dict:
    """metrics.json without where its inputs were read from (SocialCC: "re-aggregated from saved judgements") and
    what only evaluate knows (how it asked)."""
    return {k: v for k, v in metrics.items() if k not in {"sources", "inputs", *EVALUATE_ONLY}}
