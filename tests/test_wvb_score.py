"""WorldValuesBench scoring (Zhao et al. 2024, Sec. 3.2-3.5): the W1 metric, the oracle baselines, the threshold
curve, ``culturebench score wvb`` end to end on the bundled sample, and the paper's GPT-3.5 outputs on real data."""

from __future__ import annotations

import csv
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import one_line_error
from culturebench import registry
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.evaluate.wvb import measures, score, sniff_delimiter, write_run
from culturebench.release import build_release
from culturebench.manifest import load_manifest
from culturebench.release_reader import read_tables

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
GPT35 = REFERENCE / "WorldValuesBench" / "evaluation" / "model_outputs" / "gpt-3.5_with_demographics.tsv"
WVS_FILES = REFERENCE / "WVS7" / "DataSpi_spy-playground" / "wvs_7" / "data" / "processed"
CODEBOOK_PDF = (REFERENCE / "WVS7" / "snag18_World-Values-Survey-Data-Analysis"
                / "F00011055-WVS7_Codebook_Variables_report_V6.0.pdf")

KEYS = [f"{k / 20:.2f}" for k in range(21)]


# ------------------------------------------------------------------------------------------------------ metrics


def counts_of(answers: list[int], points: np.ndarray, low: int) -> np.ndarray:
    return np.bincount(np.searchsorted(points, np.asarray(answers, dtype=np.int64) - low),
                       minlength=points.size).astype(float)[None]


def axis(human: list[int], model: list[int], low: int, high: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The axis ``measures.support_points`` gives these answers, and the one cell's steps."""
    points, gaps = measures.support_points(np.asarray(human + model, dtype=np.int64) - low, high - low)
    return points, gaps, np.asarray([high - low], dtype=float)


def w1(human: list[int], model: list[int], low: int, high: int) -> float:
    """``measures.w1_from_counts`` of two lists of answers (one cell), as the scoring calls it."""
    points, gaps, steps = axis(human, model, low, high)
    return float(measures.w1_from_counts(counts_of(human, points, low), counts_of(model, points, low), steps, gaps)[0])


def uniform_w1(human: list[int], low: int, high: int) -> float:
    points, gaps, steps = axis(human, [], low, high)
    return float(measures.uniform_w1_from_counts(counts_of(human, points, low), points, steps, gaps)[0])


def majority_w1(human: list[int], low: int, high: int) -> float:
    points, gaps, steps = axis(human, [], low, high)
    return float(measures.majority_w1_from_counts(counts_of(human, points, low), steps, gaps)[0])


def test_identical_distributions_have_distance_zero():
    assert w1([1, 2, 2, 3, 4], [4, 3, 2, 2, 1], 1, 4) == 0.0
    assert w1([5], [5, 5, 5], 1, 10) == 0.0


def test_opposite_ends_of_the_scale_have_distance_one():
    assert w1([1, 1, 1], [4, 4], 1, 4) == pytest.approx(1.0)
    assert w1([10] * 4, [1], 1, 10) == pytest.approx(1.0)


def hand_w1_equal_sizes(human, model, low, high) -> Fraction:
    """W1 of two equal-size samples = mean |sorted differences| (rescaled), exact."""
    diffs = [abs(Fraction(h - m)) for h, m in zip(sorted(human), sorted(model))]
    return sum(diffs) / len(diffs) / (high - low)


def test_w1_against_hand_computation():
    # 1-5 scale: rescaled human {0, 0, 1/4, 3/4}, model {1/4, 1/4, 1/2, 1/2}: every sorted pair differs by 1/4.
    human, model = [1, 1, 2, 4], [2, 2, 3, 3]
    assert hand_w1_equal_sizes(human, model, 1, 5) == Fraction(1, 4)
    assert w1(human, model, 1, 5) == pytest.approx(0.25)
    # 1-4 scale: {0, 1/3} vs {1/3, 1} -> (1/3 + 2/3) / 2 = 1/2.
    assert w1([1, 2], [2, 4], 1, 4) == pytest.approx(float(Fraction(1, 2)))
    # Unequal sizes, 1-3 scale: {0, 1/2, 1} vs point mass at 1 -> mean |h - 1| = (1 + 1/2 + 0) / 3 = 1/2.
    assert w1([1, 2, 3], [3], 1, 3) == pytest.approx(0.5)
    # 1-10 scale: {1, 4} vs {2, 10} -> (1 + 6) / 2 / 9 = 7/18.
    assert w1([1, 4], [2, 10], 1, 10) == pytest.approx(float(Fraction(7, 18)))
    # off the scale, far: {1, 2} vs {10**6} on 1-4 -> mean |h - 10**6| / 3
    assert w1([1, 2], [10**6], 1, 4) == pytest.approx((10**6 - 1 + 10**6 - 2) / 2 / 3)


def test_the_axis_holds_the_scale_and_each_answer_off_it_once():
    points, gaps = measures.support_points(np.asarray([0, 5, 10**9, 5]), 3)
    assert points.tolist() == [0, 1, 2, 3, 5, 10**9]
    assert gaps.tolist() == [1, 1, 1, 2, 10**9 - 5, 0]
    assert np.isnan(measures.w1_from_counts(np.zeros((1, 4)), np.ones((1, 4)), np.asarray([3.0]), np.ones(4))[0])


def test_uniform_baseline_against_hand_computation():
    # All answers 1 on 1-4: uniform over {0, 1/3, 2/3, 1} -> mean distance to 0 = 1/2.
    assert uniform_w1([1, 1, 1], 1, 4) == pytest.approx(0.5)
    # Answers {2, 3} on 1-4: |F - G| = 1/4 on [0, 1/3), 0 on [1/3, 2/3), 1/4 on [2/3, 1) -> 1/12 + 1/12 = 1/6.
    assert uniform_w1([2, 3], 1, 4) == pytest.approx(1 / 6)
    # A human distribution that is itself uniform over the scale.
    assert uniform_w1([1, 2, 3, 4, 5], 1, 5) == pytest.approx(0.0, abs=1e-12)


def test_majority_baseline():
    assert measures.majority_counts(np.asarray([[2.0, 1.0, 0.0, 1.0]])).tolist() == [[1, 0, 0, 0]]
    assert measures.majority_counts(np.asarray([[0.0, 2.0, 2.0, 0.0]])).tolist() == [[0, 1, 0, 0]]  # tie: smallest
    # majority 1 on 1-4: mean |h - 1| / 3 = (0 + 0 + 1 + 3) / 4 / 3 = 1/3.
    assert majority_w1([1, 1, 2, 4], 1, 4) == pytest.approx(1 / 3)
    assert majority_w1([2, 2, 2], 1, 4) == 0.0
    # majority 4 of [1, 1, 4, 3, 4, 4] on 1-4: mean |h - 4| / 3 = (3 + 3 + 1 + 0 + 0 + 0) / 6 / 3
    assert majority_w1([1, 1, 4, 3, 4, 4], 1, 4) == pytest.approx(7 / 18)


def test_threshold_curve_on_constructed_set():
    distances = [0.0, 0.05, 0.1 + 0.2, 0.5, 1.0]  # 0.1 + 0.2 = 0.30000000000000004 counts as <= 0.30
    curve = measures.threshold_curve(distances)
    assert list(curve) == KEYS
    expected = {"0.00": 1, "0.05": 2, "0.10": 2, "0.25": 2, "0.30": 3, "0.45": 3, "0.50": 4, "0.95": 4, "1.00": 5}
    for key, count in expected.items():
        assert curve[key] == pytest.approx(count / 5), key
    assert all(curve[a] <= curve[b] for a, b in zip(KEYS, KEYS[1:]))
    # grid points computed by accumulation (0.05 * 3 = 0.15000000000000002) still count
    assert measures.threshold_curve([0.05 * 3, 0.05 * 7])["0.15"] == 0.5
    assert measures.threshold_curve([0.05 * 3, 0.05 * 7])["0.35"] == 1.0
    assert measures.threshold_curve([None, float("nan"), 0.2])["0.20"] == 1.0
    assert set(measures.threshold_curve([]).values()) == {None}


def test_summary_mean_std():
    out = measures.summary({"Q1": 0.0, "Q2": 0.5, "Q3": None})
    assert out["mean"] == pytest.approx(0.25) and out["std"] == pytest.approx(0.25)
    assert out["n_questions"] == 2 and out["per_question"]["Q3"] is None
    assert measures.mean_std([]) == (None, None)


# -------------------------------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def release(sample_release) -> Path:
    """The bundled sample release (built once per session in conftest.py); read only here."""
    return sample_release


@pytest.fixture(scope="module")
def probe(release) -> pl.DataFrame:
    tables = read_tables(release, load_manifest(release)["outputs"])
    return pl.concat(tables["probe"].values())


def write_responses(path: Path, rows, delimiter: str = "\t", header=("QUESTION_ID", "PARTICIPANT_ID", "SCORE")) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def perfect_rows(probe: pl.DataFrame) -> list[tuple]:
    return [(r["question_id"], r["participant_id"], r["answer"]) for r in probe.iter_rows(named=True)]


def test_perfect_answers_score_zero(tmp_path, release, probe):
    rows = perfect_rows(probe)
    result = score(write_responses(tmp_path / "perfect.tsv", rows), release)
    m = result.metrics
    assert m["coverage"] == 1.0 and m["n_rows"] == len(rows) and m["n_invalid"] == 0
    assert set(m["per_question"]) == set(probe["question_id"].unique())
    assert all(value == 0.0 for value in m["per_question"].values())
    assert m["mean"] == 0.0 and m["std"] == 0.0
    assert all(share == 1.0 for share in m["threshold_curve"].values())
    assert set(m["baselines"]) == {"uniform", "majority"}
    assert set(m["baselines"]["uniform"]["per_question"]) == set(m["per_question"])
    assert all(v >= 0 for v in m["baselines"]["majority"]["per_question"].values())
    for kind in ("continent", "urban_rural", "probe_group", "probe_education_level"):
        assert m["groups"][kind], kind
        for group in m["groups"][kind].values():
            assert all(v == 0.0 for v in group["per_question"].values())
    assert set(m["groups"]["urban_rural"]) <= {"Urban", "Rural"}
    assert sum(g["n_rows"] for g in m["groups"]["probe_group"].values()) == len(rows)

    written = write_run(result, tmp_path / "run")
    assert [p.name for p in written] == ["metrics.json", "threshold_curve.png", "histograms.png"]
    on_disk = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert on_disk["coverage"] == 1.0 and list(on_disk["threshold_curve"]) == KEYS
    for png in written[1:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_participant_lowers_coverage(tmp_path, release, probe):
    rows = perfect_rows(probe)
    rows[0] = (rows[0][0], 999_999_999, rows[0][2])
    m = score(write_responses(tmp_path / "wrong.tsv", rows), release).metrics
    assert m["coverage"] == pytest.approx((len(rows) - 1) / len(rows)) and m["coverage"] < 1
    assert m["n_covered"] == len(rows) - 1


def w1_on_the_line(human: list[int], model: list[int], low: int, high: int) -> float:
    """Sec. 3.2's W1 = integral of |U - V| over the rescaled axis, for answers anywhere on the line (off the scale
    too): between consecutive answer values a and b both CDFs are flat, contributing |U(a) - V(a)| (b - a)."""
    points = sorted(set(human) | set(model))
    return sum(abs(sum(h <= a for h in human) / len(human) - sum(m <= a for m in model) / len(model)) * (b - a)
               for a, b in zip(points, points[1:])) / (high - low)


def test_invalid_scores_are_counted_off_scale_answers_kept_or_dropped_and_csv_is_sniffed(tmp_path, release, probe):
    rows = perfect_rows(probe)
    q = rows[0][0]
    same_question = [i for i, r in enumerate(rows) if r[0] == q]
    # 0 and 99: whole numbers off every scale of the sample; 2.5: truncated to 2 (the authors' astype(int)); the rest
    # invalid
    bad = ["0", "abc", "2.5", "", "99"]
    for i, value in zip(same_question, bad):
        rows[i] = (rows[i][0], rows[i][1], value)
    path = write_responses(tmp_path / "invalid.csv", rows, delimiter=",")
    assert sniff_delimiter(path) == ","
    questions = pl.concat(read_tables(release, load_manifest(release)["outputs"])["questions"].values())
    low, high = questions.filter(pl.col("question_id") == q).select("scale_min", "scale_max").row(0)
    humans = probe.filter(pl.col("question_id") == q)["answer"].to_list()
    whole = [int(r[2]) for r in rows if r[0] == q and str(r[2]).lstrip("-").isdigit()]
    kept = [*whole, 2]
    assert sorted(whole)[0] == 0 and sorted(whole)[-1] == 99 and len(whole) == len(humans) - 3

    m = score(path, release).metrics  # default: off-scale answers scored as given (the authors' evaluate.py)
    assert m["n_invalid"] == 2 and m["coverage"] == 1.0
    assert m["non_integer"] == {"answers": "truncated", "n": 1}
    assert m["out_of_scale"]["answers"] == "kept" and m["out_of_scale"]["n"] == 2
    assert m["out_of_scale"]["share_per_question"][q] == pytest.approx(2 / len(humans))
    assert all(v == 0.0 for k, v in m["out_of_scale"]["share_per_question"].items() if k != q)
    assert m["per_question"][q] == pytest.approx(w1_on_the_line(humans, kept, low, high), abs=1e-12)
    assert all(v == 0.0 for k, v in m["per_question"].items() if k != q)

    # --drop-out-of-scale --drop-non-integer: invalid, left out
    dropped = score(path, release, drop_out_of_scale=True, drop_non_integer=True).metrics
    assert dropped["n_invalid"] == len(bad) and dropped["out_of_scale"] == {**m["out_of_scale"], "answers": "dropped"}
    assert dropped["non_integer"] == {"answers": "dropped", "n": 1}
    in_scale = [k for k in whole if low <= k <= high]
    assert dropped["per_question"][q] == pytest.approx(w1_on_the_line(humans, in_scale, low, high), abs=1e-12)
    assert m["per_question"][q] > dropped["per_question"][q] + 0.1  # the kept 99 lies far off the scale
    # "3.0" is a whole number on the scale: valid
    rows2 = perfect_rows(probe)
    rows2[0] = (rows2[0][0], rows2[0][1], f"{rows2[0][2]}.0")
    assert score(write_responses(tmp_path / "float.tsv", rows2), release).metrics["n_invalid"] == 0


def test_an_answer_far_off_the_scale_is_scored_on_the_line_with_intervals(tmp_path, release, probe):
    """A model that answers 10**9 once: W1 is Sec. 3.2's integral on the line (the axis holds one point per
    distinct answer, not one per integer up to 10**9, which no memory holds), and the bootstrap still runs."""
    rows = perfect_rows(probe)
    q = rows[0][0]
    rows[0] = (q, rows[0][1], str(10**9))
    questions = pl.concat(read_tables(release, load_manifest(release)["outputs"])["questions"].values())
    low, high = questions.filter(pl.col("question_id") == q).select("scale_min", "scale_max").row(0)
    humans = [int(r[2]) for r in perfect_rows(probe) if r[0] == q]
    model = [int(r[2]) for r in rows if r[0] == q]
    m = score(write_responses(tmp_path / "far.tsv", rows), release).metrics
    assert m["out_of_scale"]["n"] == 1
    assert m["per_question"][q] == pytest.approx(w1_on_the_line(humans, model, low, high), rel=1e-9)
    assert m["per_question"][q] > 1e6
    assert m["per_question_ci"][q][0] is not None and m["mean_ci"][1] >= m["mean_ci"][0]


def test_input_errors(tmp_path, release, probe):
    with pytest.raises(InputError, match="not found"):
        score(tmp_path / "absent.tsv", release)
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(InputError, match="empty"):
        score(tmp_path / "empty.tsv", release)
    bad_id = write_responses(tmp_path / "bad_id.tsv", [("Q1", "abc", 1)])
    with pytest.raises(InputError) as info:
        score(bad_id, release)
    assert info.value.row == 1 and info.value.column == "PARTICIPANT_ID"
    good = write_responses(tmp_path / "good.tsv", perfect_rows(probe)[:3])
    with pytest.raises(InputError, match="manifest"):
        score(good, tmp_path)


def test_cli_score(tmp_path, release, probe):
    responses = write_responses(tmp_path / "perfect.tsv", perfect_rows(probe))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(responses), "--release", str(release),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    for name in ("metrics.json", "threshold_curve.png", "histograms.png"):
        assert (out / name).is_file(), name
    assert json.loads((out / "metrics.json").read_text())["mean"] == 0.0


def test_cli_missing_score_column(tmp_path, release, probe):
    rows = [(q, p) for q, p, _ in perfect_rows(probe)[:5]]
    responses = write_responses(tmp_path / "no_score.tsv", rows, header=("QUESTION_ID", "PARTICIPANT_ID"))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(responses), "--release", str(release),
                                      "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert "no_score.tsv" in errors[0] and "SCORE" in errors[0]
    assert not out.exists()


# --------------------------------------------------------------------------------------------------- reference


@pytest.fixture(scope="module")
def real_release(tmp_path_factory) -> Path:
    wvs = tmp_path_factory.mktemp("real-raw") / "wvs"
    wvs.mkdir()
    for path in sorted(WVS_FILES.glob("*.csv.gz")):
        (wvs / path.name).symlink_to(path)
    (wvs / CODEBOOK_PDF.name).symlink_to(CODEBOOK_PDF)
    out = tmp_path_factory.mktemp("real-release")
    folder, verdict = build_release(registry.benchmark("wvb"), wvs.parent, out, seed=0, progress=lambda s: None)
    return folder


@pytest.mark.reference
@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference data absent: {REFERENCE}")
def test_reference_gpt35_with_demographics(real_release, tmp_path):
    result = score(GPT35, real_release)
    m = result.metrics
    print(f"\nGPT-3.5 with demographics on WVS v5.0 (56 files): coverage {m['coverage']:.4f} "
          f"({m['n_covered']}/{m['n_rows']}), invalid {m['n_invalid']}, W1 Q1 {m['per_question']['Q1']:.4f}, "
          f"Q201 {m['per_question']['Q201']:.4f}, mean {m['mean']:.4f} +- {m['std']:.4f} over {m['n_questions']} "
          f"questions; uniform {m['baselines']['uniform']['mean']:.4f}, majority {m['baselines']['majority']['mean']:.4f}")
    assert 0.75 <= m["coverage"] <= 0.95
    assert m["n_questions"] == 36
    assert m["per_question"]["Q1"] < 0.1  # paper Table 2: 0.02
    assert 0.2 <= m["per_question"]["Q201"] <= 0.45  # paper Table 2: 0.33
    written = write_run(result, tmp_path / "run")
    assert all(p.is_file() for p in written)


# ------------------------------------------------------------------------- hand-written responses vs the paper


def w1_from_cdfs(human: list[int], model: list[int], low: int, high: int) -> float:
    """Sec. 3.2 written out: W1 = integral over [0, 1] of |U - V| for answers rescaled by (x - low) / (high - low);
    both CDFs are steps at the scale points, so the integral is sum_k |U(k) - V(k)| / (high - low)."""
    return sum(abs(sum(h <= k for h in human) / len(human) - sum(m <= k for m in model) / len(model))
               for k in range(low, high)) / (high - low)


def most_frequent(answers: list[int]) -> int:
    counts = {a: answers.count(a) for a in answers}
    return min(a for a in counts if counts[a] == max(counts.values()))


def test_cli_score_on_hand_written_answers_matches_the_paper_calculation(tmp_path, release, probe):
    """Two probe questions answered by hand (question A: always the scale minimum; question B: minimum and maximum
    alternately); W1 per question, Table 2's mean and std, and both majority baselines recomputed here from the
    paper's definitions agree with `culturebench score wvb` to 1e-9."""
    questions = pl.concat(read_tables(release, load_manifest(release)["outputs"])["questions"].values())
    scales = {q: (lo, hi) for q, lo, hi in questions.select("question_id", "scale_min", "scale_max").iter_rows()}
    chosen = sorted(probe["question_id"].unique().to_list())[:2]
    rows, humans, models, groups = [], {}, {}, {}
    for q in chosen:
        low, high = scales[q]
        part = probe.filter(pl.col("question_id") == q)
        for i, r in enumerate(part.iter_rows(named=True)):
            answer = low if q == chosen[0] or i % 2 == 0 else high
            rows.append((q, r["participant_id"], answer))
            humans.setdefault(q, []).append(r["answer"])
            models.setdefault(q, []).append(answer)
            key = (r["continent"], r["urban_rural"], r["education_level"])
            groups.setdefault(q, {}).setdefault(key, []).append(r["answer"])
    responses = write_responses(tmp_path / "hand.tsv", rows)
    expected = {q: w1_from_cdfs(humans[q], models[q], *scales[q]) for q in chosen}
    mean = sum(expected.values()) / 2
    std = (sum((v - mean) ** 2 for v in expected.values()) / 2) ** 0.5
    pooled = {q: w1_from_cdfs(humans[q], [most_frequent(humans[q])], *scales[q]) for q in chosen}
    per_group = {q: w1_from_cdfs([h for g in groups[q].values() for h in g],
                                 [most_frequent(g) for g in groups[q].values() for _ in g], *scales[q])
                 for q in chosen}
    config = tmp_path / "per_group.json"
    config.write_text(json.dumps({"majority": "per_group"}))
    for extra, majority, definition in (([], pooled, "pooled"), (["--config", str(config)], per_group, "per_group")):
        out = tmp_path / f"run-{definition}"
        result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(responses), "--release", str(release),
                                          "--out", str(out), *extra])
        assert result.exit_code == 0, result.output
        m = json.loads((out / "metrics.json").read_text())
        for q in chosen:
            assert abs(m["per_question"][q] - expected[q]) < 1e-9
            assert abs(m["baselines"]["majority"]["per_question"][q] - majority[q]) < 1e-9
        assert abs(m["mean"] - mean) < 1e-9 and abs(m["std"] - std) < 1e-9
        assert m["baselines"]["majority"]["definition"] == definition
    assert any(abs(pooled[q] - per_group[q]) > 1e-6 for q in chosen)  # the two readings differ on this data


def test_config_errors_are_one_line(tmp_path, release, probe):
    responses = write_responses(tmp_path / "perfect.tsv", perfect_rows(probe)[:5])
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"majority": "median"}))
    result = CliRunner().invoke(app, ["score", "wvb", "--responses", str(responses), "--release", str(release),
                                      "--out", str(tmp_path / "run"), "--config", str(config)])
    assert result.exit_code == 2 and "unknown majority 'median'; choose from pooled, per_group" in result.output


def test_majority_flag_scores_as_the_config_key_and_one_responses_file_at_a_time(tmp_path, release, probe):
    """``--majority per_group`` scores as the config's ``{"majority": "per_group"}`` does (issue #44: an option from
    a flag or the config alike); several comma-separated responses files are one error line (wvb scores one)."""
    responses = write_responses(tmp_path / "perfect.tsv", perfect_rows(probe))
    config = tmp_path / "per_group.json"
    config.write_text(json.dumps({"majority": "per_group"}))
    base = ["score", "wvb", "--responses", str(responses), "--release", str(release)]
    by_flag = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "flag"), "--majority", "per_group"])
    by_config = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "config"), "--config", str(config)])
    assert by_flag.exit_code == 0 and by_config.exit_code == 0, by_flag.output + by_config.output
    flagged, configured = (json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("flag", "config"))
    assert flagged["baselines"]["majority"]["definition"] == "per_group"
    assert flagged["baselines"] == configured["baselines"]
    two = CliRunner().invoke(app, ["score", "wvb", "--responses", f"{responses},{responses}", "--release",
                                   str(release), "--out", str(tmp_path / "two")])
    assert "wvb scores one responses file at a time, got 2" in one_line_error(two)


TABLE2_MAJORITY = {  # Table 2, Oracle baselines, Majority column
    "Q1": 0.02, "Q2": 0.23, "Q3": 0.19, "Q46": 0.16, "Q47": 0.16, "Q48": 0.31, "Q57": 0.21, "Q58": 0.08, "Q59": 0.18,
    "Q106": 0.42, "Q107": 0.27, "Q108": 0.44, "Q112": 0.23, "Q113": 0.22, "Q114": 0.22, "Q121": 0.21, "Q122": 0.40,
    "Q123": 0.37, "Q131": 0.19, "Q132": 0.19, "Q133": 0.26, "Q158": 0.31, "Q159": 0.28, "Q160": 0.49, "Q164": 0.30,
    "Q165": 0.18, "Q166": 0.33, "Q176": 0.25, "Q177": 0.26, "Q178": 0.21, "Q199": 0.31, "Q200": 0.25, "Q201": 0.42,
    "Q235": 0.32, "Q236": 0.26, "Q237": 0.33}
PROBE_SAMPLES = REFERENCE / "WorldValuesBench" / "WorldValuesBench" / "probe" / "samples.tsv"


@pytest.mark.reference
@pytest.mark.skipif(not PROBE_SAMPLES.is_file(), reason=f"reference data absent: {PROBE_SAMPLES}")
def test_reference_pooled_majority_reproduces_table_2():
    """The released probe (question, group, participant) joined to the public WVS-7 answers: the pooled majority
    matches Table 2's Majority column to 0.012 on average, the per-group reading (Sec. 3.3's text) only to 0.18."""
    from culturebench.builders.wvb import facts

    scales = {v["variable"]: v["scale"] for v in facts()["value"]}
    probe = pl.read_csv(PROBE_SAMPLES, separator="\t")
    questions = sorted(set(probe["Question"]))
    wvs = pl.concat([pl.read_csv(p, columns=["D_INTERVIEW", *questions], infer_schema_length=0)
                     for p in sorted(WVS_FILES.glob("*.csv.gz"))]).with_columns(pl.all().cast(pl.Int64, strict=False))
    answers = wvs.unpivot(index="D_INTERVIEW", on=questions, variable_name="Question", value_name="answer")
    rows = probe.join(answers, on=["D_INTERVIEW", "Question"]).filter(pl.col("answer") >= 0)
    pooled, per_group = [], []
    for q in questions:
        part = rows.filter(pl.col("Question") == q)
        low, high = scales[q]
        pooled.append(abs(majority_w1(part["answer"].to_list(), low, high) - TABLE2_MAJORITY[q]))
        groups = [g["answer"].to_list() for _, g in part.group_by(["Continent", "Urban / Rural", "Education"])]
        predicted = [most_frequent(g) for g in groups for _ in g]  # each answer: its own group's majority
        per_group.append(abs(w1([a for g in groups for a in g], predicted, low, high) - TABLE2_MAJORITY[q]))
    print(f"\n{rows.height} of {probe.height} probe rows found; mean |diff| to Table 2 Majority: pooled "
          f"{sum(pooled) / 36:.4f}, per group {sum(per_group) / 36:.4f}")
    assert sum(pooled) / 36 < 0.02
    assert sum(per_group) / 36 > 0.1
