"""The generators with the real local model (llama.cpp + Qwen2.5-Coder-1.5B-Instruct Q4_K_M): `pytest -m model -s`.

Small slices (2 LLM-GLOBE dimensions x 5 prompts; 2 CDEval dimension x domain cells x 5 items; the German
translation of 2 CDEval items); prints what the
model produced and how many items each check rejected. Skips when the model is not installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebench.evaluate.models.backends import OpenAIBackend
from culturebench.generation import cdeval, cdeval_translate, llm_globe

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[1]




def _show(summary: dict, log: Path) -> None:
    print(json.dumps({k: v for k, v in summary.items() if k not in ("backend",)}, indent=1, ensure_ascii=False))
    for line in log.open(encoding="utf-8"):
        entry = json.loads(line)
        print(f"--- {entry['kind']} {entry.get('dimension')} {entry.get('domain', '')} round {entry.get('round', '')}")
        print(entry["output"][:1500])
        if entry.get("rejected"):
            print("rejected:", json.dumps(entry["rejected"], ensure_ascii=False)[:800])


def test_llm_globe_slice_with_real_model(real_model, tmp_path):
    model, base_url = real_model
    backend = OpenAIBackend(model, base_url=base_url, concurrency=2, timeout=300)
    summary = llm_globe.generate(backend, tmp_path, source=REPO / "raw", seed=0, limit=5,
                                 only={"power distance", "performance orientation"})
    _show(summary, tmp_path / ".generation" / "llm_globe.log.jsonl")
    assert (tmp_path / "llm_globe" / "open_prompts.csv").is_file()
    assert sum(summary["kept_per_dimension"].values()) > 0
    again = llm_globe.generate(backend, tmp_path, source=REPO / "raw", seed=0, limit=5,
                               only={"power distance", "performance orientation"})
    assert again["model_calls"]["queried"] == 0  # a re-run answers everything from the cache


def test_cdeval_slice_with_real_model(real_model, tmp_path):
    model, base_url = real_model
    backend = OpenAIBackend(model, base_url=base_url, concurrency=2, timeout=300)
    summary = cdeval.generate(backend, tmp_path, seed=0, limit=5, only={"pdi", "work", "family"}, max_rounds=3)
    _show(summary, tmp_path / ".generation" / "cdeval.log.jsonl")
    assert (tmp_path / "cdeval" / "generated_CDEval.json").is_file()
    print("statistics:", summary["statistics"])


def test_cdeval_translate_slice_with_real_model(real_model, tmp_path):
    model, base_url = real_model
    backend = OpenAIBackend(model, base_url=base_url, concurrency=2, timeout=300)
    summary = cdeval_translate.generate(backend, tmp_path, language="de", source=REPO / "raw", seed=0, limit=1,
                                        only={"pdi", "idv", "work"})
    _show(summary, tmp_path / ".generation" / "cdeval_translate.log.jsonl")
    items = json.loads((tmp_path / "cdeval" / "CDEval_de.json").read_text(encoding="utf-8"))
    assert summary["items"] == 2 and len(items) == 2 - summary["untranslated_items"]
    assert all(item["Language"] == "de" for item in items)
