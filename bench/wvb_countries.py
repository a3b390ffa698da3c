"""The country view of WVB (issue #56) on a real release: planning the opinions protocol with ``--steer country``
and scoring every country, side by side with a plain reference scorer; wall and peak memory per process.

    python bench/wvb_countries.py RELEASE [--samples N] [--runs N]

RELEASE is a WVB release built from real WVS-7 files (e.g. the 56 v5.0 country files of ../shared/reference/WVS7,
see bench/wvb_build.py); nothing of it enters the repository. Three programs run as separate processes (interpreter
start and imports counted), alternating, ``--runs`` times each:

- ``plan``: ``run.plan`` of ``evaluate wvb --split test --limit 239 --no-demographics --steer country --samples N``
  (every value question once, asked unsteered and once per country, N samples each), its requests drawn one at a
  time from the generator and counted (never a list);
- ``score``: culturebench's scoring of a synthetic model (every steering and question gets answers spread over the
  scale by a hash, N per prompt): ``country_distributions`` (one streamed pass over every split's examples joined
  with the participants, weighted), ``answer_distributions``, ``similarity_table`` and ``country_view`` (2,000
  bootstrap resamples of the questions);
- ``reference``: the same similarities written plainly: pandas merge and group-by for the countries' weighted
  distributions, then a Python loop over (steering, country, question) with scipy's ``jensenshannon`` and numpy's
  cumulative sums, means per country (no intervals). Its numbers are compared with ``score``'s (max abs difference).

Each prints wall seconds (fork to wait4) and peak RSS (wait4's ru_maxrss). The machine's other load makes single
runs noisy: compare only numbers from one invocation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

PLAN = """
import sys, time
from culturebench.evaluate.wvb import WVBOptions
from culturebench.evaluate.wvb.run import WVBHooks
start = time.perf_counter()
planned = WVBHooks().plan(WVBOptions(release=sys.argv[1], split="test", limit=239, demographics=False, samples=int(sys.argv[2]),
                          steer="country"))
n = sum(1 for _ in planned.requests)
print(f"requests {n:,} (planned {planned.total:,}) in {time.perf_counter() - start:.2f} s")
"""

SYNTHETIC = """
import polars as pl
def synthetic_answers(release, samples):
    from culturebench.evaluate.wvb.items import prompt_tables
    from culturebench.evaluate.wvb.opinions import release_countries
    questions, _ = prompt_tables(release, None)
    questions = questions.filter(pl.col("kind") == "value")
    steer = pl.DataFrame({"steer": [None, *release_countries(release)["country"].to_list()]}, schema={"steer": pl.String})
    index = pl.DataFrame({"sample_index": list(range(samples))})
    frame = steer.join(questions.select("question_id", "scale_min", "scale_max"), how="cross").join(index, how="cross")
    key = pl.concat_str(pl.col("steer").fill_null("-"), "question_id", pl.col("sample_index").cast(pl.String))
    width = pl.col("scale_max") - pl.col("scale_min") + 1
    return frame.select("steer", "question_id", (pl.col("scale_min") + key.hash(7) % width).cast(pl.Int64).alias("answer")), questions
"""

SCORE = SYNTHETIC + """
import json, sys, time
from culturebench.evaluate.wvb import opinions
release, samples = sys.argv[1], int(sys.argv[2])
answers, questions = synthetic_answers(release, samples)
start = time.perf_counter()
import scipy.stats  # the bootstrap's; imported here so that the stages below time their own work
t0 = time.perf_counter()
print(f"import scipy.stats {t0 - start:.2f} s")
humans, weighted = opinions.country_distributions(release, questions["question_id"].to_list())
t1 = time.perf_counter()
model = opinions.answer_distributions(answers, questions)
table = opinions.similarity_table(model, humans, questions)
t2 = time.perf_counter()
countries = opinions.release_countries(release)
view, top = opinions.country_view(table, countries, humans)
t3 = time.perf_counter()
print(f"countries {len(view)}, questions {table['question_id'].n_unique()}, pairs {table.height:,}, weighted {weighted}")
print(f"country distributions {t1 - t0:.2f} s, similarities {t2 - t1:.2f} s, bootstrap {t3 - t2:.2f} s")
json.dump({c: [e["similarity_jsd"], e["similarity_w1"], e.get("steered_jsd")] for c, e in view.items()},
          open(sys.argv[3], "w"))
"""

REFERENCE = SYNTHETIC + """
import json, sys, time
import numpy as np, pandas as pd
from scipy.spatial.distance import jensenshannon
release, samples = sys.argv[1], int(sys.argv[2])
answers, questions = synthetic_answers(release, samples)
t0 = time.perf_counter()
data = __import__("pathlib").Path(release) / "data"
people = pd.read_parquet(data / "participants", columns=["participant_id", "country", "W_WEIGHT"])
examples = pd.read_parquet(data / "examples", columns=["participant_id", "question_id", "answer"])
merged = examples.merge(people, on="participant_id")
humans = merged.groupby(["country", "question_id", "answer"], observed=True)["W_WEIGHT"].sum()
model = answers.to_pandas().groupby(["steer", "question_id", "answer"], dropna=False).size()
scales = {q: (lo, hi) for q, lo, hi in questions.select("question_id", "scale_min", "scale_max").iter_rows()}
human = {}
for (country, question, code), w in humans.items():
    human.setdefault((country, str(question)), {})[int(code)] = w
mine = {}
for (steer, question, code), n in model.items():
    mine.setdefault((None if steer != steer or steer is None else steer, question), {})[int(code)] = n
out = {}
for (country, question), shares in human.items():
    lo, hi = scales[question]
    codes = range(lo, hi + 1)
    q = np.array([shares.get(c, 0.0) for c in codes]); q = q / q.sum()
    for steer in (None, country):
        counts = mine.get((steer, question))
        if counts is None:
            continue
        p = np.array([counts.get(c, 0.0) for c in codes], dtype=float); p = p / p.sum()
        jsd = 1 - jensenshannon(p, q, base=2) ** 2
        w1 = 1 - np.abs(np.cumsum(p) - np.cumsum(q)).sum() / (hi - lo)
        out.setdefault((steer is not None, country), []).append((jsd, w1))
means = {}
for (steered, country), values in out.items():
    entry = means.setdefault(country, [None, None, None])
    if steered:
        entry[2] = float(np.mean([v[0] for v in values]))
    else:
        entry[0], entry[1] = float(np.mean([v[0] for v in values])), float(np.mean([v[1] for v in values]))
print(f"countries {len(means)}; {time.perf_counter() - t0:.2f} s")
json.dump(means, open(sys.argv[3], "w"))
"""


def run(code: str, *args: str) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout) of one process."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed:\n{output}")
    return wall, usage.ru_maxrss / 1024, output.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("release")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {"plan": [], "score": [], "reference": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            for name, code in (("plan", PLAN), ("score", SCORE), ("reference", REFERENCE)):
                wall, rss, output = run(code, args.release, str(args.samples), str(Path(tmp) / f"{name}.json"))
                results[name].append((wall, rss))
                print(f"{name}: wall {wall:.2f} s, peak RSS {rss:,.0f} MiB | {output.splitlines()[-1]}")
                for line in output.splitlines()[:-1]:
                    print(f"    {line}")
        ours = json.loads((Path(tmp) / "score.json").read_text())
        theirs = json.loads((Path(tmp) / "reference.json").read_text())
        gap = max(abs(a - b) for c in ours for a, b in zip(ours[c], theirs[c]) if a is not None and b is not None)
    print(f"max |score - reference| over countries and measures: {gap:.2e}")
    for name, values in results.items():
        print(f"median {name}: wall {statistics.median(v[0] for v in values):.2f} s, "
              f"peak RSS {statistics.median(v[1] for v in values):,.0f} MiB")


if __name__ == "__main__":
    main()
