"""Issue #16: no bad input gets through, a failing build never replaces a release, no traceback reaches a user.

Each test covers a class of input over every reader or command it concerns. Expected rows, lines and byte offsets
are where the test itself put the fault."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from importlib import import_module
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import culturebench.release as release_module
from conftest import SAMPLE_RAW, csv_bytes, make_rows, one_line_error, wvs_header
from culturebench.cli import app
from culturebench.errors import ChecksFailed, InputError
from culturebench.io import FALLBACK_ENCODING, decode_text, read_csv_rows
from culturebench import registry
from culturebench.release import build_release
from culturebench.validation.checks import check

NOOP = lambda stage: None  # noqa: E731

# benchmark -> the raw folders its builder reads
NEEDS = {
    "cdeval": ("cdeval", "hofstede"),
    "normad": ("cultural_atlas", "normad", "inglehart_welzel"),
    "llm_globe": ("globe", "gics", "llm_globe"),
    "socialcc": ("wvs", "cultural_atlas", "socialcc"),
    "wvb": ("wvs", "wvb"),
}


def copy_raw(tmp_path: Path, benchmark: str, name: str = "raw") -> Path:
    raw = tmp_path / name
    for folder in NEEDS[benchmark]:
        shutil.copytree(SAMPLE_RAW / folder, raw / folder)
    return raw


def file_hashes(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def build_error(raw: Path, benchmark: str, out: Path) -> InputError:
    with pytest.raises(InputError) as info:
        build_release(registry.benchmark(benchmark), raw, out, seed=0, progress=NOOP)
    message = str(info.value)
    assert "\n" not in message
    assert str(raw) not in message, f"path not relative to the raw folder: {message}"
    return info.value


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


# ---------------------------------------------------------------------------------------------------- releases


@pytest.fixture(scope="module")
def cdeval_release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cdeval-release")
    folder, verdict = build_release(registry.benchmark("cdeval"), SAMPLE_RAW, out, seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    return folder


def _failing_check(monkeypatch) -> None:
    validate = release_module.validate_tables

    def with_a_failure(*args, **kwargs):
        return [*validate(*args, **kwargs), check("an injected check that fails", "questions", 1, 0)]

    monkeypatch.setattr(release_module, "validate_tables", with_a_failure)


def test_a_build_whose_checks_fail_never_replaces_a_release(cdeval_release, monkeypatch, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(cdeval_release, out / "cdeval")
    before = file_hashes(out / "cdeval")
    _failing_check(monkeypatch)
    result = cli("build", "cdeval", "--out", str(out))
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "an injected check that fails" in lines[0] and "not written" in lines[0], lines
    assert file_hashes(out / "cdeval") == before  # the good release, byte for byte
    kept = out / ".failed" / "cdeval"
    report = json.loads((kept / "validation" / "report.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in report["checks"] if not c["passed"]] == ["an injected check that fails"]
    assert str(kept / "validation" / "report.html") in lines[0]
    assert sorted(p.name for p in out.iterdir()) == [".failed", "cdeval"]  # no temp folder left


def test_build_release_raises_checks_failed_and_writes_no_release(monkeypatch, tmp_path):
    _failing_check(monkeypatch)
    with pytest.raises(ChecksFailed) as info:
        build_release(registry.benchmark("cdeval"), SAMPLE_RAW, tmp_path, seed=0, progress=NOOP)
    assert info.value.failed == ["questions: an injected check that fails"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".failed"]


@pytest.mark.parametrize("name, folder, fault", [
    ("cdeval", "cdeval", lambda raw: (raw / "cdeval" / "SAMPLE_CDEval.json").write_text("[]\n") and None),
    ("llm_globe", "llm_globe", lambda raw: _drop_rubric_dimension(raw)),
])
def test_an_incomplete_input_is_an_input_error_not_a_failed_check(name, folder, fault, tmp_path):
    """An empty CDEval list and a rubric file without one dimension: exit 2 naming the file, OUT not created."""
    raw = copy_raw(tmp_path, name)
    dimension = fault(raw)
    out = tmp_path / "new" / "out"
    line = one_line_error(cli("build", name, "--raw", str(raw), "--out", str(out)))
    assert f"{folder}/" in line and (dimension is None or dimension in line), line
    assert not (tmp_path / "new").exists()  # a refused build creates nothing, not even OUT's parents


def _drop_rubric_dimension(raw: Path) -> str:
    path = raw / "llm_globe" / "SAMPLE_open_generation_rubrics.csv"
    header, rows = read_csv_rows(path.read_text(encoding="utf-8-sig"), path.name)
    dropped = rows[0][1][1]
    import csv
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, *[r for _, r in rows if r[1] != dropped]])
    return dropped


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_during_a_build_leave_no_temp_folder(cdeval_release, signum, tmp_path):
    """Slow: a CDEval build as a process of its own, signalled while it writes."""
    out = tmp_path / "out"
    shutil.copytree(cdeval_release, out / "cdeval")
    before = file_hashes(out / "cdeval")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # the real CLI, held for a minute once its parquet files are written, so the signal lands mid-build every time
    # (a build of the small sample can otherwise finish between the test seeing its folder and signalling it)
    held = ("import time, culturebench.release as release\n"
            "write = release.write_tables\n"
            "def write_and_wait(*args, **kwargs):\n"
            "    outputs = write(*args, **kwargs)\n"
            "    time.sleep(60)\n"
            "    return outputs\n"
            "release.write_tables = write_and_wait\n"
            "from culturebench.cli import app; app()\n")
    process = subprocess.Popen([sys.executable, "-c", held, "build", "cdeval", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    deadline = time.monotonic() + 120
    while not list(out.glob(".cdeval.tmp-*/data/*/*.parquet")) and process.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the build ended before the test could signal it"
    assert list(out.glob(".cdeval.tmp-*/data/*/*.parquet")), "no partial parquet to clean up"
    process.send_signal(signum)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, output
    assert "Traceback" not in output
    assert sorted(p.name for p in out.iterdir()) == ["cdeval"], output
    assert file_hashes(out / "cdeval") == before


def test_build_all_builds_every_good_benchmark_and_names_the_bad_one(tmp_path):
    raw = copy_raw(tmp_path, "cdeval")
    for folder in NEEDS["normad"]:
        shutil.copytree(SAMPLE_RAW / folder, raw / folder)
    (raw / "hofstede" / "SAMPLE_6-dimensions-for-website-2015-08-16.csv").write_text("ctr;country\n", "utf-8")
    out = tmp_path / "out"
    result = cli("build", "all", "--raw", str(raw), "--out", str(out))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 2, lines
    assert lines[0].startswith("cdeval: NOT written") and "hofstede/" in lines[0], lines
    assert lines[1].startswith("normad: wrote"), lines
    assert sorted(p.name for p in out.iterdir()) == ["normad"]


@pytest.mark.parametrize("name", [b.name for b in registry.benchmarks() if b.build_imports])
def test_the_imports_build_all_starts_early_are_what_the_build_itself_imports(name):
    """registry's ``build_imports`` (``build all`` imports them in a thread from its start) must be modules that the
    build imports and that importing the builder does not: otherwise the early import loads nothing the build needs.
    In a fresh interpreter, so that no other test has imported them."""
    probe = ("import json, sys\n"
             "from pathlib import Path\n"
             "from culturebench import registry\n"
             f"benchmark = registry.benchmark({name!r})\n"
             "builder = benchmark.builder_module()\n"
             "wanted = benchmark.build_imports\n"
             "before = [m in sys.modules for m in wanted]\n"
             f"builder.build(Path({str(SAMPLE_RAW)!r}), 0, lambda stage: None)\n"
             "print(json.dumps({'before': before, 'after': [m in sys.modules for m in wanted]}))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.splitlines()[-1])
    assert not any(seen["before"]), f"{name}: already imported with the builder module: {seen}"
    assert all(seen["after"]), f"{name}: not imported by the build: {seen}"


# ----------------------------------------------------------------------------------------------------- readers

# (benchmark, text file every reader of which decodes) for every text reader
TEXT_FILES = [
    ("cdeval", "cdeval/SAMPLE_CDEval.json"),
    ("cdeval", "hofstede/SAMPLE_6-dimensions-for-website-2015-08-16.csv"),
    ("normad", "normad/SAMPLE_normad_etiquette.csv"),
    ("normad", "inglehart_welzel/SAMPLE_country_iw_zones.csv"),
    ("normad", "cultural_atlas/veloria/etiquette.html"),
    ("llm_globe", "llm_globe/SAMPLE_open_prompts.csv"),
    ("llm_globe", "llm_globe/SAMPLE_open_generation_rubrics.csv"),
    ("llm_globe", "globe/SAMPLE_globe_items.csv"),
    ("socialcc", "socialcc/SAMPLE_socialcc_scenarios.jsonl"),
]


@pytest.mark.parametrize("name, relative", TEXT_FILES)
def test_one_stray_byte_in_a_utf8_file_is_an_error_with_line_and_offset(name, relative, tmp_path):
    raw = copy_raw(tmp_path, name)
    path = raw / relative
    data = path.read_bytes()
    start = data.index(b"\n") + 1  # beginning of line 2: a UTF-8 'é', then one byte that is not UTF-8
    path.write_bytes(data[:start] + "é".encode() + b"\xff" + data[start:])
    error = build_error(raw, name, tmp_path / "out")
    assert error.file == relative
    assert f"line 2, byte offset {start + 2}" in str(error) and "0xff" in str(error), str(error)


def test_decode_is_strict_and_falls_back_only_for_a_whole_legacy_file():
    assert decode_text("Brasília\n".encode(), "f") == ("Brasília\n", "utf-8")
    assert decode_text(b"\xef\xbb\xbfa,b\n", "f") == ("a,b\n", "utf-8")  # BOM dropped
    assert decode_text("Brasília\n".encode("cp1252"), "f") == ("Brasília\n", FALLBACK_ENCODING)
    with pytest.raises(InputError, match=r"line 4, byte offset 7: byte 0xe9"):
        decode_text(b"a\nb\ncd\n\xe9\x81", "f")  # no UTF-8 text, but 0x81 is undefined in cp1252
    with pytest.raises(InputError, match=r"line 1, byte offset 2: byte 0xe9"):
        decode_text("é".encode() + b"\xe9", "f")  # UTF-8 text elsewhere: not decoded as cp1252


def test_a_legacy_encoded_file_builds_and_the_manifest_records_its_encoding(tmp_path):
    raw = copy_raw(tmp_path, "cdeval")
    path = raw / "hofstede" / "SAMPLE_6-dimensions-for-website-2015-08-16.csv"
    path.write_bytes(path.read_text(encoding="utf-8").replace("Brazil", "Brasília").encode("cp1252"))
    folder, _ = build_release(registry.benchmark("cdeval"), raw, tmp_path / "out", seed=0, progress=NOOP)
    inputs = {i["name"]: i for i in json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["inputs"]}
    assert inputs[f"hofstede/{path.name}"]["encoding"] == FALLBACK_ENCODING
    assert inputs["cdeval/SAMPLE_CDEval.json"]["encoding"] == "utf-8"
    texts = [v for p in folder.glob("data/*/*.parquet") for column in pl.read_parquet(p).select(pl.col(pl.String))
             for v in column.to_list()]
    assert "Brasília" in texts


# Delimited readers: (benchmark, file, delimiter). A fault is placed on data row 3 (1-based, header not counted).
CSV_FILES = [
    ("cdeval", "hofstede/SAMPLE_6-dimensions-for-website-2015-08-16.csv", ";"),
    ("normad", "normad/SAMPLE_normad_etiquette.csv", ","),
    ("normad", "inglehart_welzel/SAMPLE_country_iw_zones.csv", ","),
    ("llm_globe", "llm_globe/SAMPLE_open_prompts.csv", ","),
    ("llm_globe", "globe/SAMPLE_globe_items.csv", ","),
]


def _rewrite(path: Path, delimiter: str, change) -> tuple[list[str], list[list[str]]]:
    import csv
    import io

    header, rows = read_csv_rows(path.read_text(encoding="utf-8-sig"), path.name, delimiter)
    header, records = change(header, [r for _, r in rows])
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerows([header, *records])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return header, records


@pytest.mark.parametrize("name, relative, delimiter", CSV_FILES)
def test_a_duplicated_column_name_is_refused_naming_the_header(name, relative, delimiter, tmp_path):
    raw = copy_raw(tmp_path, name)
    header, _ = _rewrite(raw / relative, delimiter,
                         lambda h, rows: ([*h, h[0]], [[*r, r[0]] for r in rows]))
    error = build_error(raw, name, tmp_path / "out")
    assert str(error).startswith(f"{relative}, header, column {header[0]}:"), str(error)


@pytest.mark.parametrize("name, relative, delimiter", CSV_FILES)
@pytest.mark.parametrize("extra", [1, -1])
def test_a_ragged_row_is_refused_naming_row_and_column(name, relative, delimiter, extra, tmp_path):
    raw = copy_raw(tmp_path, name)
    header, _ = _rewrite(raw / relative, delimiter, lambda h, rows: (
        h, [*rows[:2], rows[2] + ["x"] if extra > 0 else rows[2][:-1], *rows[3:]]))
    error = build_error(raw, name, tmp_path / "out")
    column = f"#{len(header) + 1} (extra)" if extra > 0 else header[-1]
    assert str(error).startswith(f"{relative}, row 3, column {column}:"), str(error)


@pytest.mark.parametrize("name, relative, delimiter", CSV_FILES)
def test_an_unclosed_quote_names_the_row_it_opens_on(name, relative, delimiter, tmp_path):
    raw = copy_raw(tmp_path, name)
    path = raw / relative
    _rewrite(path, delimiter, lambda h, rows: (h, rows))
    lines = path.read_text(encoding="utf-8").split("\n")
    header, rows = read_csv_rows("\n".join(lines), path.name, delimiter)
    # the physical line where data row 3 starts (rows may span lines); a quote opened there is never closed
    line = 1 + sum(len(_physical(r, delimiter)) for _, r in rows[:2]) + 1
    lines[line - 1] = '"' + lines[line - 1]
    path.write_text("\n".join(lines[:line] + [l.replace('"', "") for l in lines[line:]]), encoding="utf-8")
    error = build_error(raw, name, tmp_path / "out")
    assert str(error).startswith(f"{relative}, row 3") and "quote" in str(error), str(error)


def _physical(record: list[str], delimiter: str) -> list[str]:
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerow(record)
    return buffer.getvalue().rstrip("\n").split("\n")


def test_rows_are_data_rows_even_after_multi_line_quoted_fields(tmp_path):
    text = 'a,b\n"one\ntwo\nthree",1\nx,2\ny,3,4\n'  # data row 3 sits on physical line 6
    with pytest.raises(InputError, match=r"^f.csv, row 3, column #3 \(extra\):"):
        read_csv_rows(text, "f.csv")


def normad_record() -> str:
    """The bundled sample's first story as a JSON Lines record."""
    header, rows = read_csv_rows((SAMPLE_RAW / "normad/SAMPLE_normad_etiquette.csv").read_text("utf-8"), "sample")
    return json.dumps(dict(zip(header, rows[0][1])))


def socialcc_record() -> str:
    return (SAMPLE_RAW / "socialcc/SAMPLE_socialcc_scenarios.jsonl").read_text("utf-8").splitlines()[0]


# every JSON Lines input (NormAd stories, SocialCC scenarios): (benchmark, file, a valid record line)
JSONL_FILES = [("normad", "normad/stories.jsonl", normad_record),
               ("socialcc", "socialcc/SAMPLE_socialcc_scenarios.jsonl", socialcc_record)]


@pytest.mark.parametrize("name, relative, record", JSONL_FILES)
@pytest.mark.parametrize("fault, message", [
    ("middle line cut", "row 2: line is not JSON"),
    ("last line cut", "row 3: truncated line (no line end)"),
    ("array line", "row 2: line is a JSON list, expected an object"),
])
def test_a_bad_json_lines_record_names_file_and_line(name, relative, record, fault, message, tmp_path):
    raw = copy_raw(tmp_path, name)
    for other in (raw / relative).parent.glob("*"):
        if other.is_file() and other.suffix in (".csv", ".jsonl", ".json"):
            other.unlink()
    good = record()
    lines = {"middle line cut": [good, good[:-3], good], "last line cut": [good, good, good[:-3]],
             "array line": [good, "[1, 2]", good]}[fault]
    text = "\n".join(lines) + ("" if fault == "last line cut" else "\n")
    (raw / relative).write_text(text, encoding="utf-8")
    error = build_error(raw, name, tmp_path / "out")
    assert f"{relative}, {message}" in str(error), str(error)


# ------------------------------------------------------------------------------------------- WVS: polars reader


def _wvs_raw(tmp_path: Path, data: bytes, name: str = "part.csv") -> Path:
    raw = tmp_path / "raw"
    (raw / "wvs").mkdir(parents=True)
    shutil.copyfile(SAMPLE_RAW / "wvs" / "codebook.json", raw / "wvs" / "codebook.json")
    (raw / "wvs" / name).write_bytes(data)
    return raw


def _wvs_lines() -> tuple[list[str], list[str]]:
    header = wvs_header()
    lines = csv_bytes(header, make_rows(8)).decode().split("\n")
    return header, lines


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".zip"])
@pytest.mark.parametrize("fault", ["extra field", "duplicated column"])
def test_wvs_refuses_ragged_rows_and_duplicated_columns(tmp_path, suffix, fault):
    header, lines = _wvs_lines()
    if fault == "extra field":
        lines[4] += ",99"  # data row 4
        expected = f"row 4, column #{len(header) + 1} (extra)"
    else:
        lines[0] += ",Q1"
        lines[1:] = [line + ",1" if line else line for line in lines[1:]]
        expected = "header, column Q1"
    data = "\n".join(lines).encode()
    if suffix == ".csv.gz":
        data = gzip.compress(data)
    elif suffix == ".zip":
        path = tmp_path / "made.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("wvs.csv", data)
        data = path.read_bytes()
    raw = _wvs_raw(tmp_path, data, "part" + suffix)
    line = one_line_error(cli("build", "wvb", "--raw", str(raw), "--out", str(tmp_path / "out")))
    assert line.startswith(f"error: wvs/part{suffix}, {expected}:"), line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("chunk", [5, 23, 64, 1 << 20])
@pytest.mark.parametrize("fault", ["none", "extra", "missing", "last line short"])
def test_field_counts_agree_with_the_csv_module_whatever_the_chunk_cut(monkeypatch, chunk, fault):
    """Lines cut across chunks (even a line longer than one chunk), quoted commas, blank and CRLF lines: the row the
    fast count names is the one Python's csv module finds (blank lines not counted)."""
    import random

    import culturebench.io as io_module

    monkeypatch.setattr(io_module, "FIELD_COUNT_CHUNK", chunk)
    rng = random.Random(chunk)
    header = ["id", "a", "b", "c"]
    rows = [[str(i), f'"x, {i}"' if i % 5 == 0 else str(rng.randint(0, 9)), "7" * rng.randint(1, 40), "1"]
            for i in range(1, 40)]
    lines = [",".join(row) for row in rows]
    lines.insert(10, "")
    lines.insert(20, "  ")
    lines[25] += "\r"
    if fault == "extra":
        lines[30] += ",9"
    elif fault == "missing":
        lines[15] = lines[15].rsplit(",", 1)[0]
    elif fault == "last line short":
        lines[-1] = lines[-1].rsplit(",", 1)[0]
    data = ("\n".join([",".join(header), *lines])).encode()
    expected_row = None
    data_rows = [row for row in csv.reader(data.decode().splitlines()[1:]) if any(f.strip() for f in row)]
    for number, row in enumerate(data_rows, 1):
        if len(row) != len(header):
            expected_row = number
            break
    if expected_row is None:
        io_module.check_csv_field_counts(data, "made.csv", header)
        return
    with pytest.raises(InputError) as caught:
        io_module.check_csv_field_counts(data, "made.csv", header)
    assert caught.value.row == expected_row
    assert ("truncated last line" in str(caught.value)) == (fault == "last line short")


def _gzip_truncated(data: bytes) -> bytes:
    packed = gzip.compress(data)
    return packed[: len(packed) // 2]


def _gzip_bad_crc(data: bytes) -> bytes:
    packed = bytearray(gzip.compress(data))
    packed[-8] ^= 0xFF  # the CRC32 in the trailer
    return bytes(packed)


@pytest.mark.parametrize("corrupt", [_gzip_truncated, _gzip_bad_crc])
def test_a_corrupt_gzip_is_one_line_exit_2(tmp_path, corrupt):
    _, lines = _wvs_lines()
    raw = _wvs_raw(tmp_path, corrupt("\n".join(lines).encode()), "part.csv.gz")
    line = one_line_error(cli("build", "wvb", "--raw", str(raw), "--out", str(tmp_path / "out")))
    assert line.startswith("error: wvs/part.csv.gz:") and "corrupt or truncated" in line, line


def test_a_zip_member_with_a_bad_crc_is_one_line_exit_2(tmp_path):
    _, lines = _wvs_lines()
    path = tmp_path / "made.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("wvs.csv", "\n".join(lines).encode())
    data = bytearray(path.read_bytes())
    data[data.index(b"version") + 2] ^= 0x01  # one stored byte changed: the CRC no longer matches
    raw = _wvs_raw(tmp_path, bytes(data), "part.zip")
    line = one_line_error(cli("build", "wvb", "--raw", str(raw), "--out", str(tmp_path / "out")))
    assert line.startswith("error: wvs/part.zip:") and ("CRC" in line or "corrupt" in line), line


def test_a_zip_bomb_is_refused_before_inflating(tmp_path):
    path = tmp_path / "made.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("wvs.csv", b"0" * (32 << 20))  # 32 MiB of zeros deflate ~1000:1
    raw = _wvs_raw(tmp_path, path.read_bytes(), "part.zip")
    line = one_line_error(cli("build", "wvb", "--raw", str(raw), "--out", str(tmp_path / "out")))
    assert "decompression bomb" in line and "wvs/part.zip" in line, line


# ---------------------------------------------------------------------------------------------------- commands


def test_validate_on_a_manifest_without_outputs_is_one_line(cdeval_release, tmp_path):
    copy = tmp_path / "cdeval"
    shutil.copytree(cdeval_release, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    del manifest["outputs"]
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for command in ("validate", "audit", "info"):
        line = one_line_error(cli(command, str(copy)))
        assert "'outputs'" in line and "manifest.json" in line, (command, line)


def test_validate_and_audit_both_refuse_an_unlisted_shard(cdeval_release, tmp_path):
    copy = tmp_path / "cdeval"
    shutil.copytree(cdeval_release, copy)
    shard = next(copy.glob("data/*/*.parquet"))
    shutil.copyfile(shard, shard.with_name("test-99999-of-99999.parquet"))
    for command in ("validate", "audit"):
        result = cli(command, str(copy))
        assert result.exit_code == 1, (command, result.output)
        assert "test-99999-of-99999.parquet: not listed in manifest.json" in result.output, (command, result.output)


@pytest.mark.parametrize("command", [
    ["build", "cdeval"],
    ["evaluate", "wvb", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"],
    ["score", "wvb", "--responses", "answers.tsv", "--release", "releases/wvb"],
])
def test_out_pointing_at_a_file_is_one_line(command, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    line = one_line_error(cli(*command, "--out", str(blocker / "below")))
    assert str(blocker) in line and "folder" in line, line
    assert blocker.read_text() == "not a folder"


@pytest.mark.parametrize("name", ["raw[v2]", "raw[/bold]", "raw[local]"])
def test_user_text_in_square_brackets_is_printed_as_is(name, tmp_path):
    missing = tmp_path / name
    line = one_line_error(cli("build", "cdeval", "--raw", str(missing), "--out", str(tmp_path / "out")))
    assert str(missing) in line, line
    line = one_line_error(cli("score", "wvb", "--responses", str(missing / "a.tsv"), "--release",
                              str(tmp_path), "--out", str(tmp_path / "run")))
    assert name in line, line


def test_score_wvb_with_no_matching_response_is_an_error(sample_release, tmp_path):
    responses = tmp_path / "answers.tsv"
    # participants and questions the release cannot have: no pair matches
    responses.write_text("QUESTION_ID\tPARTICIPANT_ID\tSCORE\nQ1\t1\t2\nQ2\t2\t3\n", encoding="utf-8")
    line = one_line_error(cli("score", "wvb", "--responses", str(responses), "--release", str(sample_release),
                              "--out", str(tmp_path / "run")))
    assert "no response matches the release" in line and "answers.tsv" in line, line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name", ["cdeval", "llm_globe", "normad", "socialcc", "wvb"])
def test_the_build_checks_the_tables_exactly_as_they_read_back_from_its_parquet(name, bundled_release):
    """A build validates its tables in memory (``as_read_back``) instead of re-reading them: they must equal, dtype
    and row order included, what ``read_tables`` reads from the files the same build wrote."""
    from polars.testing import assert_frame_equal

    from culturebench.release import as_read_back
    from culturebench.release_reader import Release, read_dtypes

    release = bundled_release(name)
    built = import_module(f"culturebench.builders.{name}").build(SAMPLE_RAW, 0, lambda stage: None).tables
    in_memory = as_read_back(built, read_dtypes(registry.benchmark(name)))
    on_disk = Release.open(release).tables(lazy=False)  # read back with the schemas' dtypes
    assert {c: sorted(s) for c, s in in_memory.items()} == {c: sorted(s) for c, s in on_disk.items()}
    for config, splits in on_disk.items():
        for split, frame in splits.items():
            assert_frame_equal(in_memory[config][split], frame, check_exact=True)


def test_as_read_back_turns_enum_and_categorical_columns_into_what_parquet_gives_back(tmp_path):
    """A column type the written parquet does not keep (Enum, Categorical: no Arrow schema is stored) comes back as
    text, and a column the schemas read as another dtype is cast, exactly as ``read_tables`` does on the file."""
    from polars.testing import assert_frame_equal

    from culturebench.release import as_read_back, write_parquet
    from culturebench.release_reader import read_tables

    frame = pl.DataFrame({"level": ["low", "high", None, "low"], "kind": ["a", "b", "a", "c"], "n": [1, 2, 3, 4]},
                         schema_overrides={"level": pl.Enum(["low", "high"]), "kind": pl.Categorical})
    dtypes = {"t": {"kind": pl.Enum(["a", "b", "c"])}}
    write_parquet(frame, tmp_path / "data" / "t" / "x.parquet")
    on_disk = read_tables(tmp_path, [{"path": "data/t/x.parquet", "config": "t", "split": "x"}], dtypes)["t"]["x"]
    in_memory = as_read_back({"t": {"x": frame}}, dtypes)["t"]["x"]
    assert in_memory.schema == on_disk.schema == {"level": pl.String, "kind": pl.Enum(["a", "b", "c"]), "n": pl.Int64}
    assert_frame_equal(in_memory, on_disk, check_exact=True)
