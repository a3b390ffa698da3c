"""NormAd story generation with the real local model (llama.cpp + Qwen2.5-Coder-1.5B-Instruct Q4_K_M), run with
``pytest -m model``: one fictional country x one subaxis, one story per label (a 1.5B model on CPU writes a story
in 20-40 s; ``NORMAD_MODEL_PER_LABEL=3`` and ``NORMAD_MODEL_COUNTRIES=Veloria,Kestrava`` widen it), every filter,
then the build.

A small model writes weak stories; the point is that the whole path runs for real and that every check is
exercised. The figures (kept, rejected per check) are printed (``-s``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from culturebench import registry
from culturebench.evaluate.models.backends import OpenAIBackend

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[1]




def test_generate_normad_with_real_model(real_model, tmp_path: Path) -> None:
    from culturebench.generation import normad as gen
    from culturebench.release import build_release

    model, base_url = real_model
    raw = tmp_path / "raw"
    for folder in ("cultural_atlas", "inglehart_welzel"):
        shutil.copytree(REPO / "raw" / folder, raw / folder)
    backend = OpenAIBackend(model, base_url=base_url, concurrency=2, timeout=300)
    countries = os.environ.get("NORMAD_MODEL_COUNTRIES", "Veloria")
    per_label = int(os.environ.get("NORMAD_MODEL_PER_LABEL", "1"))
    options = gen.NormAdGenerateOptions(out=raw, only=f"{countries},eating", seed=0, per_label=per_label)
    planned = 3 * per_label * len(countries.split(","))
    line, _ = gen.GENERATOR.generate(backend, options)
    summary = json.loads((raw / ".generation" / "normad.summary.json").read_text())
    log = [json.loads(x) for x in (raw / ".generation" / "normad.log.jsonl").read_text().splitlines()]
    print(f"\n{line}\nrejected by check: {summary['rejected_by_check']}\nneutral regenerations: "
          f"{summary['neutral_regenerations']}\nmodel calls: {summary['model_calls']}")
    assert summary["norm_units"] == len(countries.split(",")) and summary["stories_planned"] == planned
    assert summary["kept"] + sum(summary["rejected_by_check"].values()) == planned
    assert sum(e["kind"] == "story" for e in log) == planned + summary["neutral_regenerations"]
    for entry in log:
        if entry["kind"] == "story":
            print(f"--- {entry['id']} attempt {entry['attempt'] + 1}: {entry['parse']}; rejection "
                  f"{entry['rejection']}; story: {(entry.get('fields') or {}).get('story', entry['output'][:160])!r}")
    if summary["kept"]:
        folder, verdict = build_release(registry.benchmark("normad"), raw, tmp_path / "rel", 0, lambda stage: None)
        assert verdict["failed"] == 0, verdict

    # resume: the same command again asks the model nothing
    again = OpenAIBackend(model, base_url=base_url, concurrency=2, timeout=300)
    gen.GENERATOR.generate(again, options)
    assert again.stats.requests == 0
