"""``evaluate --backend vllm`` against raw ``vllm.LLM.chat`` over the same prompts and sampling parameters: whole
runs side by side in one invocation, tokens/s of each and their ratio (issue #42's goal: >= 0.9).

    .venv-vllm/bin/python bench/vllm_overhead.py [--benchmark normad] [--limit 40] [--max-tokens 32] [--rounds 2]
                                                 [--model FOLDER] [--engine-args JSON] [--plan-only]

Run it with a Python that has vLLM (``bash .ci/vllm`` makes ``.venv-vllm``: the CPU build here, the CUDA build on a
GPU machine). The model defaults to the small real model (``culturebench local-model``). The benchmark's bundled
sample is built into a temp folder; its requests for ``--limit`` (temperature 0, one answer each, ``--max-tokens``)
are the benchmark's plan (``replay.planned_requests``: the requests ``evaluate`` sends). Each round runs, in
turn:

- **culturebench**: ``culturebench evaluate BENCHMARK --backend vllm`` in a process of its own, into a fresh run
  folder (the whole command: engine start, requests, cache, responses, metrics, plots);
- **raw**: a process that starts ``vllm.LLM`` with the engine arguments the culturebench run recorded in run.json
  and sends every planned conversation in one ``LLM.chat`` call with the same ``SamplingParams``.

For each: the whole process's wall time and peak RSS (the process tree, sampled every 10 ms: vLLM's engine core and
worker are processes of their own), the engine's start, the generation time (culturebench: the runner's wall time in
run.json; raw: the ``LLM.chat`` call) and the completion tokens; tokens/s over the generation time and over the
whole process. The last lines give culturebench's tokens/s over raw's, per round and as the median. The machine is
shared: compare only the figures of one invocation.

``--plan-only`` stops after the release and the plan (no vLLM needed): the smallest form, which the test suite runs
(``tests/test_benches.py``) so that a change of the plan cannot break this script unseen.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from wvb_build import checkout_env, measure  # noqa: E402  (whole processes are measured the same way there)


def plan_requests(benchmark: str, release: Path, limit: int, max_tokens: int, path: Path) -> int:
    """The distinct requests ``evaluate`` sends for this slice (``replay.planned_requests``: the benchmark's
    ``plan``; the runner asks identical ones once), as JSON (messages, sampling) in ``path``; returns how many."""
    from dataclasses import asdict

    from culturebench import registry
    from culturebench.evaluate.runs.replay import planned_requests

    chosen = registry.benchmark(benchmark)
    options = chosen.Options.parse({"limit": limit, "samples": 1, "temperature": 0.0, "max_tokens": max_tokens,
                                    "seed": 0}).replace(release=release)
    requests = planned_requests(chosen, options)
    path.write_text(json.dumps([{"messages": r.message_dicts(), "sampling": asdict(r.sampling)} for r in requests]),
                    encoding="utf-8")
    return len(requests)


def raw_arm(requests_path: Path, engine_args: dict) -> None:
    """The reference: ``vllm.LLM`` and one ``LLM.chat`` over every conversation; prints one JSON line."""
    import vllm

    requests = json.loads(requests_path.read_text(encoding="utf-8"))
    started = time.perf_counter()
    llm = vllm.LLM(**engine_args)
    loaded = time.perf_counter()
    params = []
    for request in requests:
        s = request["sampling"]
        params.append(vllm.SamplingParams(n=1, temperature=s["temperature"], max_tokens=s["max_tokens"],
                                          top_p=s["top_p"], seed=s["seed"], **({"stop": s["stop"]} if s["stop"]
                                                                                else {})))
    outputs = llm.chat([r["messages"] for r in requests], sampling_params=params, use_tqdm=False)
    done = time.perf_counter()
    tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
    llm.llm_engine.engine_core.shutdown()
    print(json.dumps({"load_s": loaded - started, "generate_s": done - loaded, "completion_tokens": tokens}))


def culturebench_arm(benchmark: str, release: Path, out: Path, model: str, limit: int, max_tokens: int,
                     engine_args: str | None) -> dict:
    command = [sys.executable, "-c", "from culturebench.cli import app; app()", "evaluate", benchmark, "--backend",
               "vllm", "--model", model, "--release", str(release), "--out", str(out), "--limit", str(limit),
               "--samples", "1", "--temperature", "0", "--max-tokens", str(max_tokens),
               *(["--engine-args", engine_args] if engine_args else [])]
    process = measure(command, REPO, checkout_env())
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return {"wall": process["wall"], "rss": process["tree_rss"], "load_s": run["backend"]["engine_load_s"],
            "generate_s": run["runner"]["wall_s"], "completion_tokens": run["runner"]["completion_tokens"],
            "requests": run["runner"]["n_queried"], "engine_args": run["backend"]["engine_args"]}


def reference_arm(requests_path: Path, engine_args: dict, folder: Path) -> dict:
    args_path = folder / "engine_args.json"
    args_path.write_text(json.dumps(engine_args), encoding="utf-8")
    result = folder / "raw.json"
    script = (f"import json, sys; sys.path.insert(0, {str(BENCH)!r}); from vllm_overhead import raw_arm; "
              f"from pathlib import Path; raw_arm(Path({str(requests_path)!r}), "
              f"json.loads(Path({str(args_path)!r}).read_text()))")
    command = ["bash", "-c", f"{sys.executable} -c {json.dumps(script)} > {result}"]
    process = measure(command, REPO, checkout_env())
    found = json.loads(result.read_text(encoding="utf-8").strip().splitlines()[-1])
    return {"wall": process["wall"], "rss": process["tree_rss"], **found}


def row(name: str, figures: dict) -> str:
    tokens = figures["completion_tokens"]
    return (f"{name:<13} {figures['wall']:>8.1f} {figures['rss']:>9.0f} {figures['load_s']:>7.1f} "
            f"{figures['generate_s']:>8.2f} {tokens:>7} {tokens / figures['generate_s']:>9.2f} "
            f"{tokens / figures['wall']:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="normad")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--model", default=None, help="a model folder or id (default: culturebench local-model)")
    parser.add_argument("--engine-args", default=None, help="--engine-args of the culturebench run (JSON)")
    parser.add_argument("--plan-only", action="store_true", help="build the release, plan the requests, stop")
    args = parser.parse_args()
    from culturebench import registry
    from culturebench.release import build_release

    with tempfile.TemporaryDirectory(prefix="vllm-overhead-") as scratch:
        folder = Path(scratch)
        release, verdict = build_release(registry.benchmark(args.benchmark), REPO / "raw", folder / "releases", 0,
                                         lambda stage: None)
        requests_path = folder / "requests.json"
        n = plan_requests(args.benchmark, release, args.limit, args.max_tokens, requests_path)
        if args.plan_only:
            print(f"{args.benchmark}: {n} requests, max_tokens {args.max_tokens}, temperature 0 (--plan-only)")
            return
        from culturebench.evaluate.models.local_model import vllm_model_folder

        model = args.model or str(vllm_model_folder())
        print(f"{args.benchmark}: {n} requests, max_tokens {args.max_tokens}, temperature 0; model {model}")
        print(f"{'arm':<13} {'wall s':>8} {'peak MiB':>9} {'load s':>7} {'gen s':>8} {'tokens':>7} {'tok/s gen':>9} "
              f"{'tok/s all':>9}")
        ratios_generation, ratios_whole = [], []
        for round_number in range(args.rounds):
            ours = culturebench_arm(args.benchmark, release, folder / f"run-{round_number}", model, args.limit,
                                    args.max_tokens, args.engine_args)
            if ours["requests"] != n:
                raise SystemExit(f"the culturebench run sent {ours['requests']} requests, the plan has {n}")
            raw = reference_arm(requests_path, ours["engine_args"], folder)
            print(row(f"culturebench", ours))
            print(row(f"raw LLM.chat", raw))
            ratios_generation.append((ours["completion_tokens"] / ours["generate_s"])
                                     / (raw["completion_tokens"] / raw["generate_s"]))
            ratios_whole.append((ours["completion_tokens"] / ours["wall"]) / (raw["completion_tokens"] / raw["wall"]))
            print(f"round {round_number + 1}: culturebench / raw tokens/s: {ratios_generation[-1]:.3f} over the "
                  f"generation, {ratios_whole[-1]:.3f} over the whole process")
        print(f"median of {args.rounds}: culturebench / raw tokens/s {statistics.median(ratios_generation):.3f} over "
              f"the generation, {statistics.median(ratios_whole):.3f} over the whole process (goal >= 0.9)")


if __name__ == "__main__":
    main()
