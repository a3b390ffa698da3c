"""Results do not move (issue #44): ``evaluate NAME`` and ``score NAME`` on the bundled sample write metrics.json
files byte-identical to the golden files in ``tests/data/metrics_golden/``.

For every benchmark (wvb, cdeval, normad, llm_globe closed and open with two jurors, socialcc with a judge) the
test builds the bundled sample's release (``bundled_release``), runs ``culturebench evaluate`` against the scripted
OpenAI-compatible server, whose answers depend on the prompt only (crc32 of the last user message and, for
jurors, the juror's model name: answers that vary, parse and sometimes fail to parse), then ``culturebench score``
on the responses that run wrote, and compares both metrics.json files byte for byte with
``<variant>.evaluate.json`` / ``<variant>.score.json``.

The golden files were recorded at commit df3d870, before the benchmark-contract redesign of issue #44, with
``CULTUREBENCH_WRITE_GOLDEN=1 PYTHONPATH=<df3d870 checkout>/src python -m pytest tests/test_metrics_unchanged.py``
(that switch rewrites them instead of comparing). Rewrite them only with a change that is meant to move results,
and say so, with the reason, in that commit's message. NormAd's two files were re-recorded with issue 51
(``-k normad``): the authors' inference prompts (max_tokens 50) became the default protocol, so the prompts the
scripted server answers from, and with them the answers, changed by design. With issue 63 the hash of CDEval's,
NormAd's, WVB's and LLM-GLOBE's closed responses (``responses[].sha256``) was edited by hand, nothing else: every
record now carries its ``variant`` (and CDEval's its ``slot``), the same answers.

Determinism: every command runs from the test's own folder (cwd) with relative paths (``release``, ``run``,
``score``, ``config.json``), so no absolute or temporary path reaches the files; the scripted server's URL (a free
port) reaches the jurors and the judge through ``OPENAI_BASE_URL``, not through the config file that metrics.json
copies.

One value is normalised, ``release_manifest_sha256`` (the hash of the release's manifest.json): the manifest records
the build's clock time (``created_at``), the git commit and dirty flag of the checkout that built it
(``source_commit``, also printed in the release card README.md, whose hash the manifest holds), whether the bundled
raw folder sits beside the code (``bundled_sample``), and the Python and library versions, so that hash differs
between any two builds; it is not a result. Every other byte is compared as written; ``CULTUREBENCH_WRITE_GOLDEN=1``
runs every variant twice and refuses to write files that differ between the two runs.

Floating-point noise: a file that is not byte-identical still passes when, parsed, it has the same keys, strings,
integers and booleans as the golden file and every float within a relative 1e-9 of the golden one
(``same_up_to_float_noise``). Numbers that come out of a linear-algebra library (CDEval's PCA coordinates: scikit-learn
over the machine's BLAS / LAPACK) move in their last one or two digits between library builds (e.g. -0.13438167050511074
against -0.13438167050511068 after a fresh install), which is not a result moving; any change a reader could see is
still a failure.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import shutil
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from culturebench.cli import app

from scripted_server import ScriptedServer

GOLDEN = Path(__file__).parent / "data" / "metrics_golden"
WRITE_GOLDEN = os.environ.get("CULTUREBENCH_WRITE_GOLDEN") == "1"
SCALE = re.compile(r"On a scale of (-?\d+) to (-?\d+)")
MANIFEST_SHA256 = re.compile(r'"release_manifest_sha256": "[0-9a-f]{64}"')
MANIFEST_HASH = "normalised: the manifest records the build's time, checkout and library versions"


def pick(text: str, choices: list[str] | tuple[str, ...]) -> str:
    """One of ``choices``, chosen by the prompt's crc32: the same prompt always gets the same answer."""
    return choices[zlib.crc32(text.encode("utf-8")) % len(choices)]


def wvb_reply(text: str, body: dict) -> str:
    """App. B's JSON with a score on the asked question's scale, or now and then a score that does not parse."""
    low, high = (int(n) for n in SCALE.search(text).groups())
    answer = pick(text, [str(n) for n in range(low, high + 1)] * 2 + ["unsure"])
    return json.dumps({"thoughtful explanation": "Family first.", "answer as a score": answer})


def globe_reply(text: str, body: dict) -> str:
    """Jurors (the rubric prompt): a rating 1-7 that depends on the juror too; the model: a rating 1-7, "no idea"
    or a sentence naming a level."""
    if text.startswith(("You are rating", "你正在")):
        return pick(body["model"] + text, [str(n) for n in range(1, 8)])
    return pick(text, [str(n) for n in range(1, 8)] + ["no idea", f"I choose option one. ANSWER {len(text) % 7 + 1}"])


def socialcc_reply(text: str, body: dict) -> str:
    """Judges (one message): a score 0-3 or none; dialogue turns: go on, or say the paper's "GOOD BYE"."""
    if len(body["messages"]) == 1:
        return pick(text, ["Score: 0", "Score: 1", "Score: 2", "Score: 3", "I cannot score this."])
    return pick(text + str(len(body["messages"])), ["I see, tell me more.", "Thank you. GOOD BYE"])


JURY = {"part": "open", "language": "both",
        "jurors": [{"name": "judge-en", "model": "judge-en", "language": "en"},
                   {"name": "judge-zh", "model": "judge-zh", "language": "zh"}]}

VARIANTS = {  # variant: (benchmark, reply, evaluate's flags, --config file's content or None)
    "wvb": ("wvb", wvb_reply, ["--limit", "60", "--seed", "3"], None),
    "cdeval": ("cdeval", lambda text, body: pick(text, ["A", "B", "A", "B", "Neither"]), ["--limit", "60"], None),
    "normad": ("normad", lambda text, body: pick(text, ["Yes", "No", "Neither", "I cannot say."]), ["--limit", "60"],
               None),
    "llm_globe_closed": ("llm_globe", globe_reply, ["--limit", "40", "--samples", "2"], None),
    "llm_globe_open": ("llm_globe", globe_reply, ["--limit", "30"], JURY),
    "socialcc": ("socialcc", socialcc_reply, ["--limit", "8"],
                 {"judge": {"model": "judge"}, "max_rounds": 3}),
}
OUTPUT = {"socialcc": "transcripts.jsonl"}
FOLDER = {"evaluate": "run", "score": "score"}


def normalised(metrics: bytes) -> bytes:
    """metrics.json with ``release_manifest_sha256``'s value replaced by MANIFEST_HASH (module docstring: why)."""
    text, count = MANIFEST_SHA256.subn(f'"release_manifest_sha256": "{MANIFEST_HASH}"', metrics.decode("utf-8"))
    assert count == 1, f"expected one release_manifest_sha256 in metrics.json, found {count}"
    return text.encode("utf-8")


def run(command: list[str]) -> None:
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output


def metrics_files(variant: str, bundled_release, folder: Path, monkeypatch) -> dict[str, bytes]:
    """``{"evaluate": bytes, "score": bytes}``: the two metrics.json files of one variant, run in ``folder``."""
    benchmark, reply, flags, config = VARIANTS[variant]
    folder.mkdir()
    monkeypatch.chdir(folder)
    shutil.copytree(bundled_release(benchmark), "release")
    options = []
    if config is not None:
        Path("config.json").write_text(json.dumps(config), encoding="utf-8")
        options = ["--config", "config.json"]
    with ScriptedServer(reply=reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # the jurors' and the judge's endpoint
        run(["evaluate", benchmark, "--model", "scripted-model", "--base-url", server.base_url, "--release",
             "release", "--out", "run", *options, *flags])
        run(["score", benchmark, "--responses", f"run/{OUTPUT.get(benchmark, 'responses.jsonl')}", "--release",
             "release", "--out", "score", *options])
    return {step: normalised((folder / name / "metrics.json").read_bytes()) for step, name in FOLDER.items()}


FLOAT_NOISE = 1e-9
"""The relative difference between two floats that is a library build's last digits, not a result."""


def same_up_to_float_noise(written, golden) -> bool:
    """``written`` equals ``golden`` (parsed JSON) in every key, string, integer and boolean, and every float within
    ``FLOAT_NOISE`` of the golden one (relative; absolute below 1e-12)."""
    if isinstance(golden, float) and isinstance(written, float):
        return math.isclose(written, golden, rel_tol=FLOAT_NOISE, abs_tol=1e-12)
    if type(written) is not type(golden):
        return False
    if isinstance(golden, dict):
        return list(written) == list(golden) and all(same_up_to_float_noise(written[k], golden[k]) for k in golden)
    if isinstance(golden, list):
        return len(written) == len(golden) and all(map(same_up_to_float_noise, written, golden))
    return written == golden


def test_float_noise_is_all_that_is_forgiven():
    assert same_up_to_float_noise({"pc1": -0.13438167050511068}, {"pc1": -0.13438167050511074})
    assert not same_up_to_float_noise({"pc1": -0.1343817}, {"pc1": -0.13438167050511074})
    assert not same_up_to_float_noise({"n": 3}, {"n": 3.0}) and not same_up_to_float_noise({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same_up_to_float_noise({"s": "x"}, {"s": "y"}) and not same_up_to_float_noise([0.5], [0.5, 0.5])


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_metrics_json_is_byte_identical_to_the_golden_file(variant, bundled_release, tmp_path, monkeypatch):
    written = metrics_files(variant, bundled_release, tmp_path / "first", monkeypatch)
    if WRITE_GOLDEN:
        again = metrics_files(variant, bundled_release, tmp_path / "second", monkeypatch)
        assert again == written, f"{variant}: two runs of the same code wrote different metrics.json"
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for step, data in written.items():
            (GOLDEN / f"{variant}.{step}.json").write_bytes(data)
    moved, diffs = [], []
    for step, data in written.items():
        golden = GOLDEN / f"{variant}.{step}.json"
        expected = golden.read_bytes()
        if data != expected and not same_up_to_float_noise(json.loads(data), json.loads(expected)):
            moved.append(golden.name)
            diffs += list(difflib.unified_diff(expected.decode().splitlines(), data.decode().splitlines(),
                                               golden.name, f"{step}'s metrics.json", lineterm="", n=1))[:30]
    if moved:
        pytest.fail(f"metrics moved: {', '.join(moved)}\n" + "\n".join(diffs))
