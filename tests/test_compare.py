"""``culturebench compare`` (issue #18) on CDEval runs made here with ``score``: the self-contained page names every
model and holds every table of the spec (parsed with html.parser), the CSVs and comparison.json agree with it,
runs of different releases are refused with one line unless --allow-mixed, and the page renders in headless
Chromium (the ``browser`` test, skipped without Chromium)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import assert_report_renders, browser_test, one_line_error, parse_report_page, write_release
from culturebench.cli import app
from culturebench.evaluate import cdeval
from culturebench.evaluate.cdeval import prompts

runner = CliRunner()
RESAMPLES = ["--n-resamples", "300"]


def questions() -> pl.DataFrame:
    return pl.DataFrame([{"id": f"{d}{j}", "dimension": d, "domain": cdeval.DOMAINS[j % 7], "question": "Q?",
                          "option_1": "alpha plan", "option_2": "beta plan"}
                         for d in cdeval.DIMENSIONS for j in range(7)])


def hofstede(usa_pdi: float = 40.0) -> pl.DataFrame:
    return pl.DataFrame({"country_code": ["USA", "CHN"], "country_name": ["United States", "China"],
                         "pdi": [usa_pdi, 80.0], "idv": [91.0, 20.0], "uai": [46.0, 30.0], "mas": [62.0, 66.0],
                         "lto": [26.0, 87.0], "ivr": [68.0, 24.0]})


def responses_file(path: Path, model: str, miss_every: int) -> Path:
    """Answers of ``model``, norm and reverse alike: the target orientation except where (question number + sample
    index) is a multiple of ``miss_every`` (2: exactly one of the two samples of every question)."""
    lines = []
    for n, q in enumerate(questions().iter_rows(named=True)):
        for prompt in prompts.PROMPTS:
            for k in range(2):
                target = (n + k) % miss_every != 0
                answer = {"ab_norm": "AB"[not target], "ab_reverse": "BA"[not target],
                          "repeat_norm": ("beta plan", "alpha plan")[target],
                          "repeat_reverse": ("beta plan", "alpha plan")[target],
                          "compare_norm": ("No", "Yes")[target], "compare_reverse": ("Yes", "No")[target]}[prompt]
                lines.append(json.dumps({"model": model, "question_id": q["id"], "prompt": prompt,
                                         "sample_index": k, "response": answer}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def score_run(tmp: Path, release: Path, model: str, miss_every: int, name: str | None = None) -> Path:
    out = tmp / (name or f"run-{model}")
    result = runner.invoke(app, ["score", "cdeval", "--responses",
                                 str(responses_file(tmp / f"{out.name}.jsonl", model, miss_every)),
                                 "--release", str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    release = write_release(tmp / "cdeval", {"questions": questions(), "hofstede": hofstede()}, "cdeval")
    other = write_release(tmp / "cdeval-other", {"questions": questions(), "hofstede": hofstede(41.0)}, "cdeval")
    manifest = json.loads((other / "manifest.json").read_text())  # another build: another manifest (and hash)
    (other / "manifest.json").write_text(json.dumps({**manifest, "created_at": "2025-01-01T00:00:00Z"}))
    return {"tmp": tmp, "release": release, "other": other,
            "mostly-target": score_run(tmp, release, "mostly-target", 1_000), "half": score_run(tmp, release, "half", 2)}



def test_report_holds_every_model_table_and_figure(runs, tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", str(runs["mostly-target"]), str(runs["half"]), "--out",
                                 str(out), *RESAMPLES])
    assert result.exit_code == 0, result.output
    page = parse_report_page(out / "report.html")
    assert page.models == ["half", "mostly-target"]
    spec = cdeval.COMPARE
    for table in spec.tables:
        assert f"table-{table.name}" in page.ids, table.name
        rows = list(csv.DictReader((out / f"{table.name}.csv").open(encoding="utf-8")))
        saved = json.loads((out / "comparison.json").read_text())["tables"][table.name]
        assert len(rows) == len(saved)
    text = " ".join(page.text)
    for table in ("main", "template_weights", "country_similarity"):
        assert {r["model"] for r in csv.DictReader((out / f"{table}.csv").open())} == {"half", "mostly-target"}
    assert {(r["model_a"], r["model_b"]) for r in csv.DictReader((out / "differences.csv").open())} == {
        ("half", "mostly-target")}
    # self-contained: every figure inlined as a PNG data URI, no script, no external resource
    assert len(page.images) == len(spec.figures) and all(s.startswith("data:image/png;base64,") for s in page.images)
    assert not page.tags & {"script", "link", "iframe"}
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", (out / "report.html").read_text())
    for figure in spec.figures:
        assert (out / figure.name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # intervals shown as "value [low, high]" and the settings named
    assert re.search(r"\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]", text)
    assert "300 resamples, seed 0" in text
    # "half" scores 0.5 on every question; "mostly-target" 1 on every question but the first (PDI0: 0.5), so the
    # differences are -0.5 and on PDI -(6 x 1 + 0.5) / 7 + 0.5 = -0.4286, which no resample of the 7 questions
    # brings near 0: all six significant
    differences = json.loads((out / "comparison.json").read_text())["tables"]["differences"]
    assert [round(r["difference"], 4) for r in differences] == [-0.4286, -0.5, -0.5, -0.5, -0.5, -0.5]
    assert all(r["significant"] for r in differences)
    assert "Significant differences" in text and "half / mostly-target / PDI" in text


def test_the_same_seed_gives_the_same_report(runs, tmp_path):
    pages = []
    for name in ("a", "b"):
        result = runner.invoke(app, ["compare", str(runs["mostly-target"]), str(runs["half"]), "--out",
                                     str(tmp_path / name), *RESAMPLES])
        assert result.exit_code == 0, result.output
        pages.append(json.loads((tmp_path / name / "comparison.json").read_text())["tables"])
    assert pages[0] == pages[1]


def test_mixed_releases_are_refused_in_one_line_unless_allowed(runs, tmp_path):
    elsewhere = score_run(runs["tmp"], runs["other"], "mostly-target", 1_000, name="run-other-release")
    args = ["compare", str(runs["half"]), str(elsewhere), "--out", str(tmp_path / "r"), *RESAMPLES]
    line = one_line_error(runner.invoke(app, args))
    assert "different releases" in line and "--allow-mixed" in line
    assert not (tmp_path / "r").exists()
    result = runner.invoke(app, [*args, "--allow-mixed"])
    assert result.exit_code == 0, result.output
    assert "Mixed releases" in (tmp_path / "r" / "report.html").read_text()


def test_the_same_model_in_two_runs_gets_two_labels(runs, tmp_path):
    again = score_run(runs["tmp"], runs["release"], "mostly-target", 3, name="run-again")
    result = runner.invoke(app, ["compare", str(runs["mostly-target"]), str(again), "--out", str(tmp_path / "r"),
                                 *RESAMPLES])
    assert result.exit_code == 0, result.output
    models = json.loads((tmp_path / "r" / "comparison.json").read_text())["models"]
    assert models == ["mostly-target (run-again)", "mostly-target (run-mostly-target)"]


def test_bad_inputs_are_one_line_errors(runs, tmp_path):
    line = one_line_error(runner.invoke(app, ["compare", str(tmp_path), "--out", str(tmp_path / "r")]))
    assert "no metrics.json" in line
    other = tmp_path / "normad-run"
    other.mkdir()
    (other / "metrics.json").write_text(json.dumps({"benchmark": "nosuch", "models": ["m"]}))
    line = one_line_error(runner.invoke(app, ["compare", str(other), "--out", str(tmp_path / "r"), "--allow-mixed"]))
    assert "compare does not know benchmark 'nosuch'" in line
    line = one_line_error(runner.invoke(app, ["compare", str(runs["mostly-target"]), str(other), "--out",
                                              str(tmp_path / "r"), "--allow-mixed"]))
    assert "different benchmarks" in line


@browser_test
def test_the_report_renders_in_headless_chromium(runs, tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["compare", str(runs["mostly-target"]), str(runs["half"]), "--out",
                                 str(out), *RESAMPLES])
    assert result.exit_code == 0, result.output
    assert_report_renders(out / "report.html", tmp_path, ("half", "mostly-target"), cdeval.COMPARE)
