"""``culturebench profile`` (issue #56): a cdeval and a normad run of one model make one page holding both
benchmarks' countries, ranked as their metrics.json say, with a map and a ranked plot each that pass the plot
checker; benchmarks' views map names to ISO codes; a run without a country view is one line."""

from __future__ import annotations

import json
import re
import zlib

import pytest
from typer.testing import CliRunner

from conftest import assert_figure_readable
from culturebench.cli import app
from scripted_server import ScriptedServer

runner = CliRunner()
REPLIES = {"cdeval": ["A", "B", "A"], "normad": ["Yes.", "No.", "Neither."]}


@pytest.fixture(scope="module")
def runs(bundled_release, tmp_path_factory):
    folder = tmp_path_factory.mktemp("profile-runs")
    out = {}
    for name, choices in REPLIES.items():
        with ScriptedServer(reply=lambda text, body, c=choices: c[zlib.crc32(text.encode()) % len(c)]) as server:
            result = runner.invoke(app, ["evaluate", name, "--model", "m", "--base-url", server.base_url,
                                         "--release", str(bundled_release(name)), "--out", str(folder / name)])
        assert result.exit_code == 0, result.output
        out[name] = folder / name
    return out


def test_profile_of_a_cdeval_and_a_normad_run_is_one_page_with_both_benchmarks_countries(runs, tmp_path,
                                                                                           saved_figures):
    out = tmp_path / "profile"
    result = runner.invoke(app, ["profile", str(runs["cdeval"]), str(runs["normad"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "profile.html").read_text()
    cdeval = json.loads((runs["cdeval"] / "metrics.json").read_text())
    (model,) = cdeval["per_model"].values()
    similarity = sorted(model["country_similarity"], key=lambda r: -r["similarity"])
    normad = json.loads((runs["normad"] / "metrics.json").read_text())
    (story_model,) = normad["per_model"].values()
    by_country = story_model["per_context"]["none"]["accuracy_by_country"]
    rows = re.findall(r"<tr><td>(\d+)</td><td class=text>([^<]+)</td><td class=text>([^<]+)</td><td>([^<]+)</td>",
                      page)
    tables = page.split("<table class=ranked>")[1:]
    assert len(tables) == 2
    cdeval_rows = re.findall(r"<td class=text>([^<]+)</td><td class=text>[^<]+</td><td>([^<]+)</td>", tables[0])
    assert [name for name, _ in cdeval_rows] == [r["country_name"] for r in similarity]
    assert [float(v) for _, v in cdeval_rows] == pytest.approx([r["similarity"] for r in similarity], abs=1e-3)
    normad_rows = re.findall(r"<td class=text>([^<]+)</td><td class=text>[^<]+</td><td>([^<]+)</td>", tables[1])
    assert sorted(float(v) for _, v in normad_rows) == pytest.approx(
        sorted(v["accuracy"] for v in by_country.values()), abs=1e-3)
    assert len(rows) == len(similarity) + len(by_country)
    data = json.loads((out / "profile.json").read_text())
    assert set(data["benchmarks"]) == {"cdeval", "normad"}
    assert "IND" in data["benchmarks"]["cdeval"]["countries"]  # Hofstede's names became ISO codes
    assert data["agreement"][0]["n_countries"] == 0 and data["agreement"][0]["spearman_rho"] is None
    figures = dict(saved_figures)
    assert {"cdeval_map.png", "cdeval_ranked.png", "normad_map.png", "normad_ranked.png"} <= set(figures)
    for name, fig in figures.items():
        assert_figure_readable(fig, name)


def test_the_agreement_is_spearman_over_shared_countries(tmp_path):
    from scipy.stats import spearmanr

    from culturebench.evaluate.reports.countries import write_countries
    from culturebench.evaluate.reports.profile import agreement

    first = {"measure": "s", "higher_is_better": True, "countries": {c: {"s": v} for c, v in
                                                                      zip("ABCDE", (0.1, 0.5, 0.3, 0.9, 0.2))}}
    second = {"measure": "d", "higher_is_better": False, "countries": {c: {"d": v} for c, v in
                                                                        zip("ABCDF", (3.0, 1.0, 2.5, 0.5, 9.0))}}
    (row,) = agreement({"x": first, "y": second})
    assert row["n_countries"] == 4
    assert row["spearman_rho"] == pytest.approx(spearmanr([0.1, 0.5, 0.3, 0.9], [-3.0, -1.0, -2.5, -0.5]).statistic)
    assert write_countries(tmp_path, {**first, "notes": []}).name == "countries.json"


def test_country_names_become_iso_codes():
    from culturebench.evaluate.reports.countries import country_code

    assert [country_code(n) for n in ("united_states_of_america", "U.S.A.", "South Korea", "Germany",
                                      "the Netherlands", "ARG", "Kestrava")] == \
        ["USA", "USA", "KOR", "DEU", "NLD", "ARG", None]


def test_a_run_without_a_country_view_is_one_line(sample_release, tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(reply='{"answer as a score": "1"}') as server:
        result = runner.invoke(app, ["evaluate", "wvb", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(sample_release), "--out", str(out), "--limit", "5"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["profile", str(out), "--out", str(tmp_path / "profile")])
    assert result.exit_code != 0 and "has no country view" in result.output and "Traceback" not in result.output


def test_llm_globe_view_is_the_distance_to_each_globe_society(bundled_release, tmp_path):
    import math

    import polars as pl

    release = bundled_release("llm_globe")
    out = tmp_path / "globe"
    with ScriptedServer(reply=lambda text, body: str(zlib.crc32(text.encode()) % 7 + 1)) as server:
        result = runner.invoke(app, ["evaluate", "llm_globe", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["profile", str(out), "--out", str(tmp_path / "profile")])
    assert result.exit_code == 0, result.output
    view = json.loads((tmp_path / "profile" / "profile.json").read_text())["benchmarks"]["llm_globe"]
    (means,) = json.loads((out / "metrics.json").read_text())["closed"]["mean_sd"].values()
    globe = pl.read_parquet(release / "data" / "globe_2004")
    assert view["higher_is_better"] is False
    for society in globe["country"].unique():
        rows = globe.filter(pl.col("country") == society)
        expected = math.sqrt(sum((means[d]["mean"] - v) ** 2 for d, v in zip(rows["dimension"], rows["values"])))
        (entry,) = [e for e in view["countries"].values() if e["name"] == society]
        assert entry["distance"] == pytest.approx(expected)


def test_three_runs_of_one_benchmark_make_three_labelled_views(runs, tmp_path):
    """a/run, b/run, c/run of one benchmark: three views, none overwriting another, each labelled by its folder,
    and the notes say they were told apart."""
    import shutil

    folders = [shutil.copytree(runs["normad"], tmp_path / part / "run") for part in "abc"]
    result = runner.invoke(app, ["profile", *map(str, folders), "--out", str(tmp_path / "page")])
    assert result.exit_code == 0, result.output
    payload = json.loads((tmp_path / "page" / "profile.json").read_text())
    assert len(payload["benchmarks"]) == 3 and all(str(f) in " ".join(payload["benchmarks"]) for f in folders)
    assert any("more than one run of normad" in n for n in payload["notes"])
    assert len({p.name for p in (tmp_path / "page").glob("*_ranked.png")}) == 3


def test_bad_runs_are_one_line_and_leave_no_output_folder(runs, tmp_path):
    """A missing folder, and a countries.json holding a string where a number belongs: one line each, exit 2, and
    no output folder (nothing half-written, nothing empty)."""
    import shutil

    out = tmp_path / "page"
    result = runner.invoke(app, ["profile", str(tmp_path / "nowhere"), "--out", str(out)])
    assert result.exit_code == 2 and "no such run folder" in result.output and not out.exists(), result.output
    run = shutil.copytree(runs["cdeval"], tmp_path / "run")
    from culturebench.evaluate.reports.profile import country_view

    _, data, _ = country_view(runs["cdeval"])
    code = next(iter(data["countries"]))
    data["countries"][code][data["measure"]] = "0.5"
    (run / "countries.json").write_text(json.dumps(data))
    result = runner.invoke(app, ["profile", str(run), "--out", str(out)])
    line = " ".join(result.output.split())
    assert result.exit_code == 2 and "not a finite number" in line and code in line, result.output
    assert "Traceback" not in result.output and not out.exists()


def test_an_interrupted_profile_leaves_the_previous_page(runs, tmp_path, monkeypatch):
    """A signal while the figures are drawn (KeyboardInterrupt, as SIGINT and SIGTERM raise it) leaves the page
    written before, whole, and no temporary folder beside it."""
    from culturebench.evaluate.reports import profile as profile_module

    out = tmp_path / "page"
    assert runner.invoke(app, ["profile", str(runs["normad"]), "--out", str(out)]).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(profile_module, "write_figures", interrupted)
    result = runner.invoke(app, ["profile", str(runs["cdeval"]), "--out", str(out)])
    assert result.exit_code == 130 and "discarded" in result.output, result.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["page"]


def test_a_cdeval_run_without_all_six_dimensions_says_why_it_has_no_view(bundled_release, tmp_path):
    with ScriptedServer(reply="A") as server:
        result = runner.invoke(app, ["evaluate", "cdeval", "--model", "m", "--base-url", server.base_url,
                                     "--release", str(bundled_release("cdeval")), "--out", str(tmp_path / "run"),
                                     "--limit", "2"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["profile", str(tmp_path / "run"), "--out", str(tmp_path / "page")])
    assert result.exit_code == 2 and "needs all six dimensions" in " ".join(result.output.split()), result.output
