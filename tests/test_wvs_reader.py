"""The WVS-7 respondent reader: bad input is one InputError line naming file / row / column (and the CLI exits 2
without a traceback, writing nothing); every supported container (csv, csv.gz, zip, sav, dta) gives the codes
that the test wrote, traced back to their file and data row."""

from __future__ import annotations

import hashlib
import re
import zipfile
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest
from typer.testing import CliRunner

from conftest import csv_bytes, make_rows, required_columns, wvs_header, write_wvs_csv
from culturebench.builders import wvb
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.raw.wvs import read_respondents, respondent_files

FILE = "WVS_test_part1.csv"


def expected_codes(rows: list[dict], columns: list[str]) -> dict[str, list[int]]:
    return {c: [int(r[c]) for r in rows] for c in columns}


def table_codes(table, columns: list[str]) -> dict[str, list[int]]:
    return {c: table[c].to_list() for c in columns}


def run_build(raw: Path, out: Path):
    return CliRunner().invoke(app, ["build", "wvb", "--raw", str(raw), "--out", str(out)])


def assert_nothing_written(out: Path) -> None:
    """No release folder and no temp folder (``.wvb.tmp-*``) in ``--out``."""
    leftovers = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert leftovers == [], leftovers


# ---------------------------------------------------------------------------------------------------------------
# Bad inputs. Each case writes a raw folder and returns (raw, substrings the error line must contain, column or
# None). The row/column expectations are where the test itself put the fault.
# ---------------------------------------------------------------------------------------------------------------


def case_missing_raw_folder(make_raw, tmp_path):
    raw = tmp_path / "no-such-raw"
    return raw, [str(raw)], None


def case_folder_without_respondent_files(make_raw, tmp_path):
    folder = make_raw(name=None)
    return folder.raw, ["wvs"], None  # named relative to the raw folder


def case_empty_file(make_raw, tmp_path):
    folder = make_raw(name=None)
    (folder.wvs / FILE).write_bytes(b"")
    return folder.raw, [FILE], None


def case_header_only(make_raw, tmp_path):
    folder = make_raw(rows=[])
    return folder.raw, [FILE], None


def case_truncated_last_line(make_raw, tmp_path):
    folder = make_raw(n=6)
    lines = (folder.wvs / FILE).read_text().rstrip("\n").split("\n")
    last = lines[-1]
    cut = last[: last.rfind(",", 0, len(last) // 2)]  # cut at a field boundary near the middle of the line
    (folder.wvs / FILE).write_text("\n".join([*lines[:-1], cut]))
    complete = len(cut.split(","))
    missing = {c for c in required_columns() if folder.header.index(c) >= complete}
    return folder.raw, [FILE, "row 6"], missing


def case_truncated_mid_field(make_raw, tmp_path):
    folder = make_raw(n=6)
    text = (folder.wvs / FILE).read_text().rstrip("\n")
    last_start = text.rfind("\n") + 1
    comma = text.find(",", last_start + (len(text) - last_start) // 2)
    (folder.wvs / FILE).write_text(text[: comma + 2])  # the cut leaves one character of the next field
    return folder.raw, [FILE, "row 6", "truncated"], None


def case_semicolon_delimited(make_raw, tmp_path):
    folder = make_raw(name=None)
    write_wvs_csv(folder.wvs / FILE, folder.header, make_rows(5), delimiter=";")
    return folder.raw, [FILE], None


def case_non_numeric_code(make_raw, tmp_path):
    rows = make_rows(6)
    rows[2]["Q5"] = "abc"  # data row 3
    folder = make_raw(rows=rows)
    return folder.raw, [FILE, "row 3", "Q5", "abc"], {"Q5"}


def case_fractional_code(make_raw, tmp_path):
    rows = make_rows(6)
    rows[1]["Q3"] = "2.5"  # data row 2
    folder = make_raw(rows=rows)
    return folder.raw, [FILE, "row 2", "Q3"], {"Q3"}


def case_empty_cell(make_raw, tmp_path):
    rows = make_rows(6)
    rows[3]["Q7"] = ""  # data row 4, not the last line
    folder = make_raw(rows=rows)
    return folder.raw, [FILE, "row 4", "Q7"], {"Q7"}


def case_code_outside_codebook(make_raw, tmp_path):
    rows = make_rows(6)
    rows[3]["Q1"] = 9  # data row 4; Q1 is a 1-4 scale
    folder = make_raw(rows=rows)
    return folder.raw, [FILE, "row 4", "Q1"], {"Q1"}


def case_required_column_missing(make_raw, tmp_path):
    folder = make_raw(name=None)
    write_wvs_csv(folder.wvs / FILE, [c for c in folder.header if c != "Q10"], make_rows(5))
    return folder.raw, [FILE, "Q10"], {"Q10"}


def case_corrupt_gzip(make_raw, tmp_path):
    folder = make_raw(name=None)
    (folder.wvs / "part.csv.gz").write_bytes(b"this is not gzip data\n" * 10)
    return folder.raw, ["part.csv.gz"], None


def case_corrupt_zip(make_raw, tmp_path):
    folder = make_raw(name=None)
    (folder.wvs / "part.zip").write_bytes(b"PK\x03\x04 truncated archive")
    return folder.raw, ["part.zip"], None


def case_corrupt_sav(make_raw, tmp_path):
    folder = make_raw(name=None)
    (folder.wvs / "part.sav").write_bytes(b"$FL2 not really an SPSS file" * 4)
    return folder.raw, ["part.sav"], None


def case_zip_path_traversal(make_raw, tmp_path):
    folder = make_raw(name=None)
    with zipfile.ZipFile(folder.wvs / "evil.zip", "w") as archive:
        archive.writestr("../evil.csv", csv_bytes(folder.header, make_rows(3)))
    return folder.raw, ["evil.zip"], None


CASES = [value for name, value in list(globals().items()) if name.startswith("case_")]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.removeprefix("case_") for c in CASES])
def test_bad_input_raises_input_error_naming_the_place(case, make_raw, tmp_path):
    raw, needles, columns = case(make_raw, tmp_path)
    with pytest.raises(InputError) as info:
        wvb.build(raw, 0, lambda stage: None)
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)
    if columns is not None:
        assert info.value.column in columns, message
        assert f"column {info.value.column}" in message


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.removeprefix("case_") for c in CASES])
def test_cli_reports_bad_input_as_one_error_line_and_writes_nothing(case, make_raw, tmp_path):
    raw, needles, columns = case(make_raw, tmp_path)
    out = tmp_path / "out"
    result = run_build(raw, out)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception), result.exception  # SystemExit(2) only
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    if columns is not None:
        named = re.search(r"column (\w+)", errors[0])
        assert named and named.group(1) in columns, errors[0]
    assert_nothing_written(out)
    # Nothing was extracted from a zip, inside or outside the raw folder.
    assert not any(p.name == "evil.csv" for p in tmp_path.rglob("*")), "a zip member was extracted"
    assert not (tmp_path.parent / "evil.csv").exists()


def test_semicolon_error_says_it_is_the_delimiter(make_raw, tmp_path):
    raw, _, _ = case_semicolon_delimited(make_raw, tmp_path)
    with pytest.raises(InputError) as info:
        wvb.build(raw, 0, lambda stage: None)
    assert re.search(r"semicolon|delimit", str(info.value), re.I), str(info.value)


def test_failed_rebuild_leaves_an_existing_release_untouched(make_raw, tmp_path):
    out = tmp_path / "out"
    (out / "wvb").mkdir(parents=True)
    marker = out / "wvb" / "manifest.json"
    marker.write_text('{"kept": true}\n')
    raw, _, _ = case_non_numeric_code(make_raw, tmp_path)
    result = run_build(raw, out)
    assert result.exit_code == 2, result.output
    assert sorted(p.name for p in out.iterdir()) == ["wvb"]
    assert marker.read_text() == '{"kept": true}\n'


# ---------------------------------------------------------------------------------------------------------------
# Good inputs in every container give the codes the test wrote.
# ---------------------------------------------------------------------------------------------------------------


def test_csv_is_read_to_the_written_codes_with_source_rows(make_raw):
    folder = make_raw(n=9, seed=3)
    columns = required_columns()
    table, inputs = read_respondents(respondent_files(folder.wvs), columns, root=folder.raw)
    assert table_codes(table, columns) == expected_codes(folder.rows, columns)
    assert table["source_file"].to_list() == [f"wvs/{FILE}"] * 9
    assert table["source_row"].to_list() == list(range(1, 10))
    assert [(i.name, i.rows) for i in inputs] == [(f"wvs/{FILE}", 9)]


def test_zip_is_read_like_the_csv(make_raw):
    folder = make_raw(n=7, seed=4, name=None)
    with zipfile.ZipFile(folder.wvs / "part.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("WVS_Cross-National_Wave_7_csv_v6_0.csv", csv_bytes(folder.header, folder.rows))
    columns = required_columns()
    table, inputs = read_respondents(respondent_files(folder.wvs), columns, root=folder.raw)
    assert table_codes(table, columns) == expected_codes(folder.rows, columns)
    assert table["source_row"].to_list() == list(range(1, 8))
    assert [(i.name, i.rows) for i in inputs] == [("wvs/part.zip", 7)]
    assert sorted(p.name for p in folder.wvs.iterdir()) == ["codebook.json", "part.zip"]  # nothing extracted


def _frame_for_stata(folder) -> pd.DataFrame:
    numeric = [c for c in folder.header if c not in ("version", "doi")]
    return pd.DataFrame([{c: int(r[c]) if c != "W_WEIGHT" else float(r[c]) for c in numeric} for r in folder.rows])


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_spss_and_stata_files_give_the_same_codes_as_the_csv(make_raw, suffix):
    folder = make_raw(n=8, seed=5)
    frame = _frame_for_stata(folder)
    columns = required_columns()
    labels = {c: {-1: "Don't know", -2: "No answer", -4: "Not asked", -5: "Missing; Not available"} for c in columns}
    path = folder.wvs / f"WVS_test_part2{suffix}"
    if suffix == ".sav":
        # As in the official .sav: negative codes are declared user-missing; they must still be read as codes.
        pyreadstat.write_sav(frame, str(path), variable_value_labels=labels,
                             missing_ranges={c: [{"lo": -5, "hi": -1}] for c in columns})
    else:
        pyreadstat.write_dta(frame, str(path), variable_value_labels=labels)
    assert any(int(r[c]) < 0 for r in folder.rows for c in columns), "the sample should contain missing codes"
    table, inputs = read_respondents(respondent_files(folder.wvs), columns, root=folder.raw)
    from_csv = table.filter(table["source_file"] == f"wvs/{FILE}")
    from_other = table.filter(table["source_file"] == f"wvs/{path.name}")
    assert table_codes(from_other, columns) == expected_codes(folder.rows, columns)
    assert table_codes(from_other, columns) == table_codes(from_csv, columns)
    assert from_other["source_row"].to_list() == list(range(1, 9))
    assert sorted((i.name, i.rows) for i in inputs) == sorted([(f"wvs/{FILE}", 8), (f"wvs/{path.name}", 8)])


def test_leading_unnamed_index_column_is_ignored(make_raw):
    folder = make_raw(n=5, seed=6, name=None)
    lines = csv_bytes(folder.header, folder.rows).decode().splitlines()
    # As pandas writes it (the v5.0 country files): an unnamed first header field, then 0, 1, 2, ... per row.
    text = "\n".join(["," + lines[0], *[f"{i},{line}" for i, line in enumerate(lines[1:])]]) + "\n"
    (folder.wvs / FILE).write_text(text)
    assert (folder.wvs / FILE).read_text().startswith(",version,")
    columns = required_columns()
    table, _ = read_respondents(respondent_files(folder.wvs), columns, root=folder.raw)
    assert table_codes(table, columns) == expected_codes(folder.rows, columns)


def test_several_files_are_concatenated_and_traced_to_file_and_row(make_raw):
    folder = make_raw(name=None)
    header = wvs_header()
    parts = {  # name -> rows; names sort in this order, IDs are disjoint
        "a_part.csv": make_rows(5, seed=11, first_id=100),
        "b_part.csv.gz": make_rows(7, seed=12, first_id=200),
        "c_part.zip": make_rows(4, seed=13, first_id=300),
    }
    for name, rows in parts.items():
        if name.endswith(".zip"):
            with zipfile.ZipFile(folder.wvs / name, "w") as archive:
                archive.writestr("inner.csv", csv_bytes(header, rows))
        else:
            write_wvs_csv(folder.wvs / name, header, rows)
    (folder.wvs / "notes.txt").write_text("not a respondent file\n")
    expected = [(f"wvs/{name}", index, int(row["D_INTERVIEW"]), int(row["Q46"]))
                for name, rows in parts.items() for index, row in enumerate(rows, start=1)]
    table, inputs = read_respondents(respondent_files(folder.wvs), required_columns(), root=folder.raw)
    got = list(zip(table["source_file"], table["source_row"], table["D_INTERVIEW"], table["Q46"]))
    assert got == expected
    # A row we know: the 3rd data row of the gzip file.
    known = parts["b_part.csv.gz"][2]
    hit = table.filter(table["D_INTERVIEW"] == int(known["D_INTERVIEW"]))
    assert hit.height == 1 and hit["source_file"][0] == "wvs/b_part.csv.gz" and hit["source_row"][0] == 3
    assert [(i.name, i.rows) for i in inputs] == [(f"wvs/{n}", len(r)) for n, r in parts.items()]
    # Each input's sha256 (hashed while polars parses) is that of its own bytes, in file order.
    assert [i.sha256 for i in inputs] == [hashlib.sha256((folder.wvs / n).read_bytes()).hexdigest() for n in parts]


def test_survey_weight_is_read_as_a_fraction_and_null_where_a_file_lacks_it(make_raw):
    folder = make_raw(name=None)
    header = [c for c in wvs_header() if c != "W_WEIGHT"]
    weighted = make_rows(4, seed=21, first_id=100)
    for index, row in enumerate(weighted):
        row["W_WEIGHT"] = f"{0.25 + index / 10:.2f}"
    write_wvs_csv(folder.wvs / "a_weighted.csv", [*header, "W_WEIGHT"], weighted)
    unweighted = make_rows(3, seed=22, first_id=200)
    for row in unweighted:
        row.pop("W_WEIGHT", None)
    write_wvs_csv(folder.wvs / "b_unweighted.csv", header, unweighted)
    table, _ = read_respondents(respondent_files(folder.wvs), required_columns(), root=folder.raw, weight="W_WEIGHT")
    assert table["weight"].to_list() == [0.25, 0.35, 0.45, 0.55, None, None, None]


def test_float_formatted_integer_codes_are_accepted(make_raw):
    """The v6.0 CSV writes some codes as '804016.0'; they are the integer code."""
    rows = make_rows(4, seed=8)
    rows[1]["N_TOWN"] = "804016.0"
    rows[2]["Q1"] = f"{int(rows[2]['Q1']) if int(rows[2]['Q1']) > 0 else 2}.0"
    folder = make_raw(rows=rows)
    table, _ = read_respondents(respondent_files(folder.wvs), required_columns(), root=folder.raw)
    assert table["N_TOWN"][1] == 804016
    assert table["Q1"][2] == int(float(rows[2]["Q1"]))


def _add_index_column(path: Path) -> None:
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["," + lines[0], *[f"{i},{line}" for i, line in enumerate(lines[1:])]]) + "\n")


@pytest.mark.parametrize("variant", ["extra-column", "column-order", "index-column"])
def test_csv_files_with_different_headers_are_concatenated(make_raw, variant):
    """The v5.0 and v6.0 CSVs differ in columns the builder does not read; both must be readable in one folder."""
    folder = make_raw(name=None)
    header = wvs_header()
    first, second = make_rows(4, seed=41, first_id=1), make_rows(3, seed=42, first_id=50)
    other = {"extra-column": [*header, "S018"], "column-order": list(reversed(header)), "index-column": header}[variant]
    write_wvs_csv(folder.wvs / "a_v6.csv", header, first)
    write_wvs_csv(folder.wvs / "b_v5.csv", other, second)
    if variant == "index-column":
        _add_index_column(folder.wvs / "b_v5.csv")
    columns = required_columns()
    table, inputs = read_respondents(respondent_files(folder.wvs), columns, root=folder.raw)
    assert table_codes(table, columns) == expected_codes([*first, *second], columns)
    assert list(zip(table["source_file"], table["source_row"])) == (
        [("wvs/a_v6.csv", i) for i in range(1, 5)] + [("wvs/b_v5.csv", i) for i in range(1, 4)])
    assert [(i.name, i.rows) for i in inputs] == [("wvs/a_v6.csv", 4), ("wvs/b_v5.csv", 3)]


def test_missing_raw_folder_is_reported_as_missing(tmp_path):
    raw = tmp_path / "no-such-raw"
    with pytest.raises(InputError) as info:
        wvb.build(raw, 0, lambda stage: None)
    assert re.search(r"not found|does not exist|no such", str(info.value), re.I), str(info.value)
    assert "codebook" not in str(info.value).lower()
