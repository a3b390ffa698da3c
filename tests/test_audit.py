"""``culturebench audit`` catches tampering; the validation report is a readable, self-contained, deterministic page
(rendered in headless Chromium by the ``browser`` test)."""

from __future__ import annotations

import csv
import hashlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from conftest import REPO, SAMPLE_RAW, browser_test, chromium_screenshot, render_in_chromium
from culturebench.cli import app

runner = CliRunner()


@pytest.fixture
def release(sample_release, tmp_path) -> Path:
    return Path(shutil.copytree(sample_release, tmp_path / "wvb"))


def audit(release: Path):
    return runner.invoke(app, ["audit", str(release)])


def test_an_untouched_release_passes(release):
    result = audit(release)
    assert result.exit_code == 0, result.output
    assert "OK wvb" in result.output and "report, card and croissant.json reproduce" in result.output


@pytest.mark.parametrize("name", ["wvb", "cdeval", "normad", "socialcc", "llm_globe"])
def test_every_bundled_release_passes_its_audit(bundled_release, name):
    """A release as built reproduces under ``audit`` for every benchmark: a card that depends on the build's options
    (NormAd's zones and revision, SocialCC's value branches) is re-rendered from what the manifest records."""
    result = audit(bundled_release(name))
    assert result.exit_code == 0, result.output
    assert f"OK {name}" in result.output


def test_a_tampered_parquet_file_is_caught(release):
    path = release / "data/questions/full-00000-of-00001.parquet"
    table = pq.read_table(path)
    texts = table.column("text").to_pylist()
    texts[0] = texts[0] + " (edited)"
    pq.write_table(table.set_column(table.schema.get_field_index("text"), "text", __import__("pyarrow").array(texts)), path)
    result = audit(release)
    assert result.exit_code == 1
    assert "data/questions/full-00000-of-00001.parquet: sha256" in result.output and "FAILED wvb" in result.output


def test_a_tampered_card_is_caught_even_with_its_hash_updated_in_the_manifest(release):
    card = release / "README.md"
    card.write_text(card.read_text().replace("license: other", "license: cc-by-4.0"))
    result = audit(release)
    assert result.exit_code == 1 and "README.md: sha256" in result.output
    manifest = json.loads((release / "manifest.json").read_text())
    for output in manifest["outputs"]:
        if output["path"] == "README.md":
            output["sha256"] = hashlib.sha256(card.read_bytes()).hexdigest()
    (release / "manifest.json").write_text(json.dumps(manifest))
    result = audit(release)
    assert result.exit_code == 1 and "README.md: differs from the dataset card" in result.output


def test_a_stray_data_file_and_a_missing_one_are_caught(release):
    shutil.copy(release / "data/probe/validation-00000-of-00001.parquet", release / "data/probe/test-00000-of-00001.parquet")
    (release / "validation/report.json").unlink()
    result = audit(release)
    assert result.exit_code == 1
    assert "data/probe/test-00000-of-00001.parquet: not listed in manifest.json" in result.output
    assert "validation/report.json: missing" in result.output


def test_not_a_release_is_a_one_line_error(tmp_path):
    result = audit(tmp_path)
    assert result.exit_code == 2 and "no manifest.json" in result.output


def test_the_report_is_self_contained_and_covers_what_an_auditor_needs(sample_release):
    page = (sample_release / "validation/report.html").read_text(encoding="utf-8")
    report = json.loads((sample_release / "validation/report.json").read_text(encoding="utf-8"))
    assert not re.search(r"<(script|link|img|iframe)\b", page) and "url(" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "created_at" not in page and not re.search(r"\d{4}-\d\d-\d\dT\d\d:", page)  # deterministic: no timestamps
    for config in ("participants", "questions", "examples", "probe"):
        assert f"id=config-{config}" in page
        assert [c["column"] for c in report["schema"][config]]
    assert report["schema"]["participants"][0] == {"column": "participant_id", "type": "Int64", "nullable": False,
                                                   "unique": True, "constraints": ["greater_than(0)"]}
    examples = report["quarantine_examples"]["duplicate_participant_id"]
    assert examples["columns"] == ["D_INTERVIEW", "source_file", "source_row", "reason"]  # no survey answers
    assert sum(examples["reasons"].values()) == examples["rows"] == report["quarantine"]["duplicate_participant_id"]
    manifest = json.loads((sample_release / "manifest.json").read_text())
    for item in manifest["inputs"]:
        assert item["sha256"] in page
    assert f"culturebench build wvb --raw raw --out releases --seed {manifest['seed']}" in page  # the bundled sample


def _visible(page: str) -> str:
    """The page as a reader first sees it: folded ``<details>`` blocks reduced to their summary line."""
    return re.sub(r"<details>(<summary>.*?</summary>).*?</details>", r"\1", page, flags=re.S)


def test_the_report_is_readable_at_a_glance(sample_release):
    page = (sample_release / "validation/report.html").read_text(encoding="utf-8")
    report = json.loads((sample_release / "validation/report.json").read_text(encoding="utf-8"))
    visible = _visible(page)
    # every check passed, so their rows are folded: the page shows the summary, release checks, quarantine, inputs
    # and per config one line per group. The WVB sample has 136 checks and 4 configs; before, each was a row.
    assert visible.count("<tr") < 40, visible.count("<tr")
    assert "is present with dtype" not in visible
    # the per-column schema rows fold the pandera column checks: PASS k/k with k = that column's checks in the JSON
    pandera = [c for c in report["checks"] if c["tool"] == "pandera" and c["config"] == "participants" and c["column"]]
    k = sum(c["column"] == "participant_id" for c in pandera)
    assert k >= 3  # dtype, not null, unique (+ its constraint)
    assert re.search(rf"<code>participant_id</code>.*?<td class=result>PASS {k}/{k}</td>", page)
    # quarantine before the per-config detail
    assert page.index("id=quarantine") < page.index("id=config-participants")


def test_a_failing_check_is_on_top_and_its_group_unfolded():
    import polars as pl

    from culturebench.validation.checks import CheckResult
    from culturebench.validation.report import build_report, render_html

    ok = CheckResult("x is present with dtype Int64", "t", True, "pandera", column="x")
    bad = CheckResult("x: greater_than(0)", "t", False, "pandera", "1 failing values", "no failures", 1, ["-3"], column="x")
    table = CheckResult("rows are unique", "t", True, "great_expectations")
    page = render_html(build_report("demo", [ok, bad, table], {"t": {"full": 2}}, {},
                                    tables={"t": {"full": pl.DataFrame({"x": [1, -3]})}}))
    assert page.index("id=failures") < page.index("id=quarantine") < page.index("id=config-t")
    assert "FAILED: 2 of 3 checks passed, 1 failed" in page
    # the column x has 2 schema checks, one failing: its group is open and its row says so; the table check is folded
    assert "<details open><summary><h3>Schema (1 columns): 1/2 column checks pass" in page
    assert "<td class=result>FAIL 1/2</td>" in page
    assert "<details><summary><h3>Table checks (1): 1/1 pass" in page


def test_informational_rows_are_not_counted_as_passed_checks():
    from culturebench.validation import summary
    from culturebench.validation.checks import INFORMATIONAL, check
    from culturebench.validation.report import build_report, render_html

    results = [check("a", "t", 1, 1), check("b", "t", 1, 2), check("zones (informational)", "t", {"A": 3}, INFORMATIONAL)]
    assert summary(results) == {"checks": 2, "passed": 1, "failed": 1, "informational": 1}
    page = render_html(build_report("demo", results, {"t": {"full": 1}}, {}))
    assert "1 of 2 checks passed" in page and "Reported numbers (1; informational, not checks)" in page


def test_the_distinct_values_check_shows_what_it_observed():
    import great_expectations as gx
    import polars as pl

    from culturebench.validation.checks import run_great_expectations

    frame = pl.DataFrame({"continent": ["Asia", "Europe", None, "Asia"]})
    [result] = run_great_expectations(
        frame, [gx.expectations.ExpectColumnDistinctValuesToBeInSet(column="continent", value_set=["Asia", "Europe", "Africa"])], "t")
    assert result.passed and result.observed == ["Asia", "Europe"]  # the frame's distinct non-null values


def test_the_rebuild_recipe_checks_the_bundled_sample_and_names_this_checkout(sample_release):
    """Run the recipe's sha256 check where it says to (the checkout root) and compare its commit with git's."""
    report = json.loads((sample_release / "validation/report.json").read_text(encoding="utf-8"))
    recipe = "\n".join(report["rebuild"])
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if head:
        assert f"git checkout {head}" in recipe
    assert "pip install 'culturebench==" not in recipe
    check = recipe[recipe.index("sha256sum -c"):recipe.index("\nEOF\n") + 5]
    done = subprocess.run(["bash", "-c", check], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.count(": OK") == len(report["inputs"]), done.stdout + done.stderr


@browser_test
def test_the_report_renders_in_headless_chromium(sample_release, tmp_path):
    page = sample_release / "validation/report.html"
    text = render_in_chromium(page, tmp_path).text
    report = json.loads((sample_release / "validation/report.json").read_text())
    s = report["summary"]
    assert f"All {s['passed']} of {s['checks']} checks passed" in text
    assert "result check tool observed expected failing examples" in text  # the check table's header
    assert " FAIL " not in text and "Failing checks" not in text
    assert "rows read = rows kept + rows quarantined" in text
    for heading in ("Release-level checks", "Config participants", "Schema (47 columns)", "Quarantine",
                    "Input files", "Rebuild"):
        assert heading in text, heading
    # readable at a glance: the rendered page (folded detail closed) is a few screens, not ~9,600 px
    rows = _png_rows_with_content(chromium_screenshot(page, tmp_path, "tall.png", window="1400,6000"))
    assert rows < 4000, rows


def _png_rows_with_content(png: Path) -> int:
    """The last pixel row that is not plain white in a screenshot (the rendered page's height in pixels)."""
    import numpy as np
    from matplotlib.image import imread

    pixels = imread(png)[..., :3]
    rows = np.flatnonzero((pixels < 1.0).any(axis=(1, 2)))
    return int(rows[-1]) + 1 if rows.size else 0


def test_the_report_says_which_rows_of_the_authors_probe_the_build_left_out_and_why(sample_release):
    """The bundled raw/wvb/samples.tsv lists probe rows the input cannot give (a participant absent from the WVS
    file, one quarantined, an answer missing): the probe holds fewer rows than the file, and the validation report
    says how many and why, on the page where the probe's rows are counted, not only in the manifest."""
    with (SAMPLE_RAW / "wvb" / "samples.tsv").open(encoding="utf-8") as handle:
        listed = sum(1 for _ in csv.DictReader(handle, delimiter="\t"))
    kept = pq.read_metadata(sample_release / "data/probe/validation-00000-of-00001.parquet").num_rows
    assert listed > kept
    report = json.loads((sample_release / "validation/report.json").read_text(encoding="utf-8"))
    probe = report["left_out"]["probe"]
    assert (probe["rows"], probe["kept"], probe["source"]) == (listed, kept, "RAW/wvb/samples.tsv")
    assert sum(n for by_country in probe["left_out"].values() for n in by_country.values()) == listed - kept
    page = (sample_release / "validation/report.html").read_text(encoding="utf-8")
    visible = html.unescape(re.sub(r"<[^>]+>", "", _visible(page)))
    assert f"probe: {kept:,} of the {listed:,} rows of RAW/wvb/samples.tsv kept, {listed - kept:,} left out" in visible
    for reason, by_country in probe["left_out"].items():
        for country, n in by_country.items():
            assert f"{reason}{country}{n}" in visible.replace("\n", "")
    section = page[page.index("id=config-probe"):]
    assert f"left out {listed - kept:,}" in section[:section.index("</p>")]
