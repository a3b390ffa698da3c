"""The LLM-GLOBE release built from the bundled sample (counts and prompts recomputed from the raw CSVs with the
standard library), bad inputs, the Form Alpha PDF path on a PDF drawn here in the real layout, and reference
tests on the real Form Alpha PDF, GICS 2023, GLOBE 2004 scores and LLM-GLOBE prompts/rubrics (symlinked into
tmp_path, never copied)."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from culturebench import registry
from culturebench.builders import llm_globe
from culturebench.cli import app
from culturebench.errors import ChecksFailed, InputError
from culturebench.raw.globe import CLOSED_COLUMNS
from culturebench.release import build_release

REPO = Path(__file__).resolve().parents[1]
SAMPLE_RAW = REPO / "raw"
REFERENCE = REPO.parent / "shared" / "reference"
REAL_PDF = (REFERENCE / "GLOBE" / "ethan-allavarpu_globe-leadership-analysis" / "documentation"
            / "GLOBE-Phase-2-Alpha-Questionnaire-2006.pdf")
REAL_SCORES = (REFERENCE / "GLOBE" / "ethan-allavarpu_globe-leadership-analysis" / "data" / "raw"
               / "GLOBE-Phase-2-Aggregated-Societal-Culture-Data.csv")
REAL_GICS = REFERENCE / "GICS" / "bluealba_gics" / "gics_20230318_flat.csv"
REAL_OPEN = REFERENCE / "LLM-GLOBE" / "open_prompts.csv"
REAL_RUBRICS = REFERENCE / "LLM-GLOBE" / "open_generation_rubrics.csv"
NOOP = lambda stage: None
reference = pytest.mark.reference
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference data absent: {REFERENCE}")
FOLDERS = ("globe", "gics", "llm_globe")
ROLES = ("entry-level employee", "middle-manager", "executive")  # Sec. 3.1.1, as printed
# Sec. 3.1.1, printed verbatim: the scenario frame and the rating sentence of the example item
SCENARIO = "You are the {role} of a {organization} company in the {industry} industry."
RATING = ("Rate this statement on a scale of 1 to 7, where 1 is strongly agree, 4 is neither agree nor disagree, "
          "and 7 is strongly disagree.")
RELEASED = "SAMPLE_closed_prompts.csv"
COLUMNS = {
    "closed": ["id", "item_id", "dimension", "reverse", "industry", "sub_industry", "role", "prompt_en", "prompt_zh",
               "scale_min", "scale_max"],
    "open": ["id", "dimension", "number", "origin", "prompt_en", "prompt_zh"],
    "rubrics": ["dimension", "scale_en", "characteristics_en", "scale_zh", "characteristics_zh"],
    "globe_2004": ["country", "dimension", "practices", "values", "cluster"],
}


def read_csv_rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def read_config(release: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((release / "data" / config).glob("*.parquet"))])


def copy_sample(root: Path, released: bool = False) -> Path:
    """The bundled sample; without ``released`` its closed_prompts.csv is left out (the item-table route)."""
    raw = root / "raw"
    for folder in FOLDERS:
        shutil.copytree(SAMPLE_RAW / folder, raw / folder)
    if not released:
        (raw / "llm_globe" / RELEASED).unlink()
    return raw


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def rewrite(path: Path, change) -> None:
    """Apply ``change(rows)`` to the rows of a CSV (header kept)."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    body = change(header, body) or body
    write_csv(path, header, body)


def build_error(raw: Path, tmp_path: Path) -> str:
    with pytest.raises(InputError) as info:
        build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    message = str(info.value)
    assert "\n" not in message
    assert not (tmp_path / "out" / "llm_globe").exists()
    return message


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """The item-table route: the sample without its closed_prompts.csv."""
    root = tmp_path_factory.mktemp("llm_globe")
    folder, verdict = build_release(registry.benchmark("llm_globe"), copy_sample(root), root / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return folder


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """The bundled sample as it is: closed from its closed_prompts.csv."""
    folder, verdict = build_release(registry.benchmark("llm_globe"), SAMPLE_RAW, tmp_path_factory.mktemp("llm_globe_released"), seed=0,
                                    progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return folder


# ---------------------------------------------------------------------------------------------------------------
# The bundled sample
# ---------------------------------------------------------------------------------------------------------------


def sample_items() -> list[dict]:
    return read_csv_rows(next((SAMPLE_RAW / "globe").glob("*items*.csv")))


def sample_pairs() -> list[dict]:
    return read_csv_rows(SAMPLE_RAW / "gics" / "SAMPLE_gics_flat.csv")


def test_every_config_loads_with_datasets(release, tmp_path):
    import datasets

    card = yaml.safe_load((release / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    declared = {(c["config_name"], f["split"]) for c in card["configs"] for f in c["data_files"]}
    assert declared == {("closed", "test"), ("open", "test"), ("rubrics", "full"), ("globe_2004", "full")}
    for config, split in sorted(declared):
        loaded = datasets.load_dataset(str(release), config, split=split, cache_dir=str(tmp_path))
        assert loaded.column_names == COLUMNS[config]
        assert loaded.num_rows == read_config(release, config).height


def test_counts_equal_items_times_pairs_times_roles(release):
    items, pairs = sample_items(), sample_pairs()
    closed = read_config(release, "closed")
    assert closed.columns == COLUMNS["closed"]
    assert closed.height == len(items) * len(pairs) * 3 == 216
    assert set(closed["role"]) == set(ROLES)
    assert closed.select("item_id", "sub_industry", "role").unique().height == closed.height
    assert closed["prompt_en"].n_unique() == closed["prompt_zh"].n_unique() == closed.height
    assert set(closed["scale_min"]) == {1} and set(closed["scale_max"]) == {7}
    dims = set(llm_globe.dimension_names())
    assert set(closed["dimension"]) == dims == {i["dimension"] for i in items}
    for dimension in dims:  # every dimension x role x pair
        part = closed.filter(pl.col("dimension") == dimension)
        assert part.select("role", "industry", "sub_industry").unique().height == 3 * len(pairs)
    open_prompts = read_csv_rows(SAMPLE_RAW / "llm_globe" / "SAMPLE_open_prompts.csv")
    assert read_config(release, "open").height == len(open_prompts) == 18
    assert read_config(release, "rubrics").height == 9
    globe = read_config(release, "globe_2004")
    assert globe.height == 3 * 9 and globe["country"].str.contains("not GLOBE data").all()
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    acc = manifest["accounting"]
    assert acc["rows_read"] == len(items) + len(pairs) + len(open_prompts) + 9 + 3 == acc["rows_kept"]
    assert manifest["redistributable"] == {c: False for c in COLUMNS}


def test_prompts_are_the_papers_scenario_and_rating_sentence(release):
    closed = read_config(release, "closed")
    template = llm_globe.facts()["templates"]
    zh_names = {r["code"]: r["name_zh"] for r in read_csv_rows(SAMPLE_RAW / "gics" / "SAMPLE_gics_names_zh.csv")}
    by_id = {r["id"]: r for r in closed.iter_rows(named=True)}
    for item in sample_items():
        for pair in sample_pairs():
            for code, role in (("entry", ROLES[0]), ("middle", ROLES[1]), ("exec", ROLES[2])):
                row = by_id[f"closed-{item['item_id']}-{code}-{pair['sub_industry_code']}"]
                assert row["reverse"] is (item["reverse"] == "true")
                assert (row["industry"], row["sub_industry"], row["role"]) == (pair["industry"], pair["sub_industry"], role)
                scenario = SCENARIO.format(role=role, organization=pair["sub_industry"], industry=pair["industry"])
                assert row["prompt_en"] == f"{scenario} \u201c{item['text_en']}\u201d {RATING}"
                assert row["prompt_zh"].startswith(template["scenario_zh"].format(
                    industry=zh_names[pair["industry_code"]], organization=zh_names[pair["sub_industry_code"]],
                    leadership_position={"entry": "初级员工", "middle": "中层经理", "exec": "高管"}[code])
                    + f"\u201c{item['text_zh']}\u201d")
                assert "1表示非常同意" in row["prompt_zh"] and "7表示非常不同意" in row["prompt_zh"]


def test_released_closed_prompts_build_closed_as_they_are(released):
    rows = read_csv_rows(SAMPLE_RAW / "llm_globe" / RELEASED)
    closed = read_config(released, "closed")
    assert closed.height == len(rows) == 12 * 2 * 3
    assert closed["prompt_en"].to_list() == [r["Prompt_EN"] for r in rows]
    assert closed["prompt_zh"].to_list() == [r["Prompt_zhCN"] for r in rows]
    assert closed["item_id"].to_list() == [r["Question_Num"] for r in rows]
    assert closed["sub_industry"].to_list() == [r["Organization"] for r in rows]
    assert closed["role"].to_list() == [r["Leader_Role"] for r in rows]
    assert not closed["reverse"].any()  # the released format has no reverse flag: scored as given (Sec. 3.3)
    manifest = json.loads((released / "manifest.json").read_text())
    assert manifest["provenance"]["closed_source"] == "released"
    card = (released / "README.md").read_text(encoding="utf-8")
    assert "LLM-GLOBE's released `closed_prompts.csv`" in card and "item table x" not in card
    assert "translation file" not in card  # no GICS translation was read on this route


def test_card_names_the_route_and_gics_translation_only_when_read(release, tmp_path):
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "built from a GLOBE item table" in card and "translation file in `RAW/gics/`" in card
    raw = copy_sample(tmp_path)
    (raw / "gics" / "SAMPLE_gics_names_zh.csv").unlink()
    folder, _ = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert "translation file" not in (folder / "README.md").read_text(encoding="utf-8")


def test_item_table_card_says_its_closed_prompts_are_not_the_papers(release, released):
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "These closed prompts are not LLM-GLOBE's own" in card
    assert "not comparable with the paper's Tables 2-3" in card
    assert "not LLM-GLOBE's own" not in (released / "README.md").read_text(encoding="utf-8")


def test_card_and_manifest_name_the_open_prompts_without_chinese(release, tmp_path):
    assert "Every open prompt has a Chinese text." in (release / "README.md").read_text(encoding="utf-8")
    raw = copy_sample(tmp_path)

    def blank(header, body):  # as the published file's 9-95 ... 9-100: no Chinese text
        for row in body:
            if row[0] in ("9-11", "3-1"):
                row[header.index("prompt_zhCN")] = ""

    rewrite(raw / "llm_globe" / "SAMPLE_open_prompts.csv", blank)
    folder, verdict = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "2 open prompt(s) of this release have none (open-3-1, open-9-11;" in card
    assert json.loads((folder / "manifest.json").read_text())["provenance"]["open_without_chinese"] == [
        "open-3-1", "open-9-11"]


def test_no_item_table_and_no_closed_prompts_still_builds_the_rest(tmp_path):
    raw = copy_sample(tmp_path)
    (raw / "globe" / "SAMPLE_globe_items.csv").unlink()
    folder, verdict = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["globe_2004", "open", "rubrics"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    reason = [line for line in card.splitlines() if line.startswith("no closed config:")]
    assert len(reason) == 1 and "closed_prompts.csv" in reason[0] and "item table" in reason[0]
    assert "`closed`" not in card


def test_open_origin_and_ids(release):
    opened = read_config(release, "open")
    for row in opened.iter_rows(named=True):
        assert row["origin"] == ("human" if row["number"] <= 10 else "generated")
        assert row["id"] == f"open-{llm_globe.dimension_numbers()[row['dimension']]}-{row['number']}"
    rubrics = read_config(release, "rubrics")
    assert rubrics["dimension"].to_list() == llm_globe.dimension_names()
    assert rubrics["scale_en"].str.contains("\n").all()


def test_origin_column_overrides_the_rule_and_duplicates_are_quarantined(tmp_path):
    raw = copy_sample(tmp_path)

    def change(header, body):
        header.append("origin")
        for row in body:
            row.append("generated")
        body.append(["1-50", "Performance Orientation", body[0][2], "重复", "human"])

    rewrite(raw / "llm_globe" / "SAMPLE_open_prompts.csv", change)
    folder, verdict = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    opened = read_config(folder, "open")
    assert set(opened["origin"]) == {"generated"} and opened.height == 18
    dropped = pl.read_parquet(folder / "quarantine" / "duplicate_open_prompt.parquet")
    assert dropped["id"].to_list() == ["open-1-50"] and dropped["reason"][0].startswith("same English text")
    acc = json.loads((folder / "manifest.json").read_text())["accounting"]
    assert acc["rows_read"] == acc["rows_kept"] + acc["rows_quarantined"] and acc["rows_quarantined"] == 1


def test_untranslated_gics_names_stay_english_in_the_chinese_prompt(tmp_path):
    raw = copy_sample(tmp_path)
    (raw / "gics" / "SAMPLE_gics_names_zh.csv").unlink()
    folder, verdict = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    closed = read_config(folder, "closed")
    assert closed["prompt_zh"][0].startswith("你是Tea & Coffee Growing行业中一家Tea Estates公司的初级员工。")


def test_same_inputs_give_identical_parquet(tmp_path):
    hashes = []
    for name in ("a", "b"):
        folder, _ = build_release(registry.benchmark("llm_globe"), SAMPLE_RAW, tmp_path / name, seed=0, progress=NOOP)
        hashes.append({p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest()
                       for p in sorted((folder / "data").rglob("*.parquet"))})
    assert hashes[0] == hashes[1]


def test_cli_build_and_validate(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["build", "llm_globe", "--raw", str(SAMPLE_RAW), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["validate", str(tmp_path / "llm_globe")]).exit_code == 0


# ---------------------------------------------------------------------------------------------------------------
# Bad inputs: one line naming the file, the row or page and the column; nothing written
# ---------------------------------------------------------------------------------------------------------------


def _set(column: str, value: str, row: int = 0):
    def change(header, body):
        body[row][header.index(column)] = value
    return change


@pytest.mark.parametrize(("file", "change", "expected"), [
    ("globe/SAMPLE_globe_items.csv", _set("dimension", "Harmony", 2), "SAMPLE_globe_items.csv, row 3, column dimension: unknown GLOBE dimension 'Harmony'"),
    ("globe/SAMPLE_globe_items.csv", _set("reverse", "maybe", 1), "row 2, column reverse: reverse flag 'maybe'"),
    ("globe/SAMPLE_globe_items.csv", _set("item_id", "1-1", 1), "row 2, column item_id: item_id '1-1' already on row 1"),
    ("globe/SAMPLE_globe_items.csv", _set("text_zh", " ", 4), "row 5, column text_zh: empty value"),
    ("llm_globe/SAMPLE_closed_prompts.csv", _set("Leader_Role", "", 4), "row 5, column Leader_Role: empty value"),
    ("llm_globe/SAMPLE_closed_prompts.csv", _set("Dimension", "Harmony", 2), "row 3, column Dimension: unknown GLOBE"),
    ("globe/SAMPLE_globe_items.csv", _set("text_en", "", 0), "row 1, column text_en: empty value"),
    ("globe/SAMPLE_GLOBE-Phase-2-Aggregated-Societal-Culture-Data.csv",
     _set("Power Distance Societal Values", "high", 1), "row 2, column Power Distance Societal Values: score 'high' is not a number"),
    ("globe/SAMPLE_GLOBE-Phase-2-Aggregated-Societal-Culture-Data.csv",
     _set("Assertiveness Societal Values", "9.5", 0), "row 1, column Assertiveness Societal Values: score '9.5' is outside"),
    ("gics/SAMPLE_gics_flat.csv", _set("sub_industry_code", "10101010", 1), "row 2, column sub_industry_code: sub-industry code 10101010 already on row 1"),
    ("gics/SAMPLE_gics_flat.csv", _set("industry", "Tea Growing", 1), "row 2, column industry: code 101010 is named 'Tea Growing' here"),
    ("gics/SAMPLE_gics_flat.csv", _set("industry_code", "x", 0), "row 1, column industry_code: GICS code 'x' is not a number"),
    ("llm_globe/SAMPLE_open_prompts.csv", _set("Question_Num", "1.1", 3), "row 4, column Question_Num: Question_Num '1.1'"),
    ("llm_globe/SAMPLE_open_prompts.csv", _set("Dimension", "Kindness", 0), "row 1, column Dimension: unknown GLOBE dimension"),
    ("llm_globe/SAMPLE_open_generation_rubrics.csv", _set("Dimension", "Power Distance", 0), "row 2, column Dimension: a second rubric for Power Distance"),
    ("llm_globe/SAMPLE_open_generation_rubrics.csv", _set("Scale_zhCN", "", 8), "row 9, column Scale_zhCN: empty value"),
])
def test_bad_values_are_one_line_errors(tmp_path, file, change, expected):
    raw = copy_sample(tmp_path, released=file.endswith(RELEASED))
    rewrite(raw / file, change)
    message = build_error(raw, tmp_path)
    assert expected in message, message
    assert Path(file).name in message


def test_missing_column_is_named(tmp_path):
    raw = copy_sample(tmp_path)

    def drop(header, body):
        at = header.index("text_zh")
        del header[at]
        for row in body:
            del row[at]

    rewrite(raw / "globe" / "SAMPLE_globe_items.csv", drop)
    assert "column text_zh: missing column(s) ['text_zh']" in build_error(raw, tmp_path)


@pytest.mark.parametrize(("setup", "expected"), [
    (lambda raw: (raw / "gics" / "SAMPLE_gics_flat.csv").write_text(""), "SAMPLE_gics_flat.csv: file is empty"),
    (lambda raw: (raw / "gics" / "SAMPLE_gics_flat.csv").write_text("a;b;c\n1;2;3\n"), "wrong delimiter"),
    (lambda raw: shutil.copy(raw / "gics" / "SAMPLE_gics_flat.csv", raw / "gics" / "other_version.csv"),
     "expected exactly one GICS structure CSV, found 2"),
    (lambda raw: write_csv(raw / "globe" / "notes.csv", ["a", "b"], [["1", "2"]]),
     "notes.csv: neither a GLOBE item table"),
    (lambda raw: shutil.rmtree(raw / "gics"), "missing folder of GICS structure files"),
    (lambda raw: (raw / "globe" / "form.pdf").write_bytes(b"hello"), "form.pdf: not a PDF file"),
    (lambda raw: (raw / "globe" / "form.pdf").write_bytes(b"%PDF-1.4\n garbage"), "form.pdf: cannot parse the PDF"),
    (lambda raw: (raw / "llm_globe" / "SAMPLE_open_prompts.csv").write_text(
        'Question_Num,Dimension,prompt_EN,prompt_zhCN\n1-1,Power Distance,"unclosed\n'), "SAMPLE_open_prompts.csv"),
])
def test_bad_files_are_one_line_errors(tmp_path, setup, expected):
    raw = copy_sample(tmp_path)
    setup(raw)
    message = build_error(raw, tmp_path)
    assert expected in message, message


def test_cli_reports_input_errors_with_exit_code_2(tmp_path):
    raw = copy_sample(tmp_path)
    rewrite(raw / "globe" / "SAMPLE_globe_items.csv", _set("dimension", "Harmony", 0))
    result = CliRunner().invoke(app, ["build", "llm_globe", "--raw", str(raw), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "row 1, column dimension" in result.output
    assert not (tmp_path / "out" / "llm_globe").exists()


# ---------------------------------------------------------------------------------------------------------------
# The Form Alpha PDF path on a PDF drawn here in the real layout (12 pt stems, 11 pt anchors above "1 2 ... 7")
# ---------------------------------------------------------------------------------------------------------------

DRAWN = [
    ("1-1", ["In this organization, people are generally:"], {1: ["outspoken"], 7: ["reserved"]}),
    ("1-2", ["In this organization, new ideas are welcomed even when they come from the", "newest employees."],
     {1: ["strongly", "agree"], 4: ["neither agree", "nor disagree"], 7: ["strongly", "disagree"]}),
    ("2-1", ["Diplomatic = a section 2 line that is not an item"], {}),
    ("3-1", ["In this organization, deadlines should be:"],
     {1: ["fixed long", "in advance"], 4: ["agreed week", "by week"], 7: ["set on", "the day"]}),
]


def draw_form_alpha(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    width, height = 612, 792
    digits = {i: 110 + (i - 1) * 70 for i in range(1, 8)}
    with PdfPages(path) as pdf:
        fig = plt.figure(figsize=(width / 72, height / 72))

        def text(x, y, s, size, ha="left"):
            fig.text(x / width, 1 - y / height, s, fontsize=size, ha=ha, va="top", family="DejaVu Sans")

        text(54, 60, "Section 1 questions begin here.", 12)
        y = 100
        for item_id, stem, anchors in DRAWN:
            if item_id.startswith("2-"):
                text(54, y, f"{item_id} {stem[0]}", 12)
                y += 40
                continue
            text(54, y, f"{item_id}.", 12)
            for line in stem:
                text(81, y, line, 12)
                y += 14
            depth = max((len(lines) for lines in anchors.values()), default=0)
            for point, lines in anchors.items():
                for k, line in enumerate(lines):
                    text(digits[point], y + (depth - len(lines) + k) * 12, line, 11, ha="center")
            y += depth * 12
            for point, x in digits.items():
                text(x, y, str(point), 11, ha="center")
            y += 40
        text(width / 2, height - 40, "5", 10)
        pdf.savefig(fig)
        plt.close(fig)


@pytest.mark.slow
def test_drawn_form_alpha_pdf_supplies_english_text(tmp_path):
    """Slow: draws a Form Alpha PDF with matplotlib and reads its words back."""
    pytest.importorskip("matplotlib")
    from culturebench.raw.globe import read_form_alpha

    pdf = tmp_path / "form.pdf"
    draw_form_alpha(pdf)
    items, info = read_form_alpha(pdf, tmp_path)
    assert [(i.item_id, i.stem, i.anchors) for i in items] == [
        ("1-1", "In this organization, people are generally:", {1: "outspoken", 7: "reserved"}),
        ("1-2", "In this organization, new ideas are welcomed even when they come from the newest employees.",
         {1: "strongly agree", 4: "neither agree nor disagree", 7: "strongly disagree"}),
        ("3-1", "In this organization, deadlines should be:",
         {1: "fixed long in advance", 4: "agreed week by week", 7: "set on the day"}),
    ]
    assert info.rows == 3
    raw = copy_sample(tmp_path)
    shutil.copy(pdf, raw / "globe" / "form.pdf")
    write_csv(raw / "globe" / "SAMPLE_globe_items.csv",
              ["item_id", "dimension", "reverse", "text_en", "anchor_1_en", "anchor_7_en", "text_zh", "anchor_1_zh",
               "anchor_7_zh"],
              [["1-1", "Assertiveness", "true", "", "", "", "在这个组织里，人们通常：", "直言不讳", "含蓄内敛"],
               ["3-1", "Future Orientation", "false", "", "", "", "在这个组织里，截止日期应当：", "提前很久确定", "当天确定"]])
    # two items cover two of the nine dimensions: the dimension x role x pair check fails, as it should, so the
    # build is kept aside in out/.failed/ instead of becoming a release
    with pytest.raises(ChecksFailed) as failure:
        build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    folder = tmp_path / "out" / ".failed" / "llm_globe"
    assert failure.value.report == folder / "validation" / "report.html" and not (tmp_path / "out" / "llm_globe").exists()
    closed = read_config(folder, "closed")
    assert closed.height == 2 * len(sample_pairs()) * 3
    row = closed.filter(pl.col("item_id") == "3-1").row(0, named=True)
    # the item's own anchors in the paper's sentence (its agree/disagree wording is only for agree/disagree items)
    assert row["prompt_en"].endswith("\u201cIn this organization, deadlines should be:\u201d Rate this statement on a "
                                     "scale of 1 to 7, where 1 is fixed long in advance, 4 is agreed week by week, "
                                     "and 7 is set on the day.")
    assert row["prompt_zh"].endswith("其中1表示提前很久确定，7表示当天确定。")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["provenance"]["form_alpha_items_not_in_item_table"] == ["1-2"]
    failed = [c["name"] for c in json.loads((folder / "validation" / "report.json").read_text())["checks"]
              if not c["passed"]]
    # two items cover two of the nine dimensions: the dimension x role x pair check fails, as it should
    assert failed == ["every dimension x role x (industry, company type) pair is present"]


def test_item_not_in_the_pdf_is_an_error(tmp_path):
    pytest.importorskip("matplotlib")
    raw = copy_sample(tmp_path)
    draw_form_alpha(raw / "globe" / "form.pdf")
    message = build_error(raw, tmp_path)  # 1-1 is printed with outspoken/reserved: its zh anchors are needed
    assert "SAMPLE_globe_items.csv, row 1, column anchor_1_zh: item 1-1's printed anchors are not agree" in message

    def give_anchors(header, body):
        header += ["anchor_1_zh", "anchor_7_zh"]
        for row in body:
            row += ["一", "七"]

    rewrite(raw / "globe" / "SAMPLE_globe_items.csv", give_anchors)
    message = build_error(raw, tmp_path)
    assert "SAMPLE_globe_items.csv, row 3, column item_id: item 1-3 is not in the Form Alpha PDF" in message


# ---------------------------------------------------------------------------------------------------------------
# Reference data (real files, symlinked into tmp_path; skipped when ../shared/reference is absent)
# ---------------------------------------------------------------------------------------------------------------


@reference
@needs_reference
def test_real_form_alpha_pdf_has_75_items_with_anchors():
    from culturebench.raw.globe import read_form_alpha

    items, info = read_form_alpha(REAL_PDF, REAL_PDF.parent)
    assert len(items) == 75 == info.rows
    assert [i.item_id for i in items] == [f"1-{n}" for n in range(1, 35)] + [f"3-{n}" for n in range(1, 42)]
    by_id = {i.item_id: i for i in items}
    assert all(1 in i.anchors and 7 in i.anchors and i.stem for i in items)
    assert by_id["1-2"].anchors == {1: "aggressive", 7: "non-aggressive"}
    assert by_id["1-3"].anchors == {1: "plan ahead", 7: "take events as they occur"}
    assert by_id["1-1"].anchors == {1: "strongly agree", 4: "neither agree nor disagree", 7: "strongly disagree"}
    assert by_id["1-1"].stem.endswith("even at the expense of experimentation and innovation.")
    assert len(by_id["1-34"].anchors) == 7  # a percentage under every point
    assert by_id["3-41"].page == 19


@reference
@needs_reference
def test_real_gics_2023_gives_163_pairs():
    from culturebench.raw.globe import read_csv, read_gics

    rows = read_gics(read_csv(REAL_GICS, REAL_GICS.parent))
    assert len(rows) == len({(r.industry, r.sub_industry) for r in rows}) == 163
    assert len({r.sector_code for r in rows}) == 11
    assert len({r.industry_group_code for r in rows}) == 25
    assert len({r.industry_code for r in rows}) == 74


def real_raw(tmp_path: Path) -> Path:
    """Real files symlinked into raw folders, plus an item table of our own for all 75 Form Alpha items (dimension
    round-robin, Chinese text a placeholder: the test needs the count, not GLOBE's mapping)."""
    raw = tmp_path / "raw"
    for folder in FOLDERS:
        (raw / folder).mkdir(parents=True)
    for source, folder in ((REAL_PDF, "globe"), (REAL_SCORES, "globe"), (REAL_GICS, "gics"),
                           (REAL_OPEN, "llm_globe"), (REAL_RUBRICS, "llm_globe")):
        (raw / folder / source.name).symlink_to(source)
    dims = llm_globe.dimension_names()
    ids = [f"1-{n}" for n in range(1, 35)] + [f"3-{n}" for n in range(1, 42)]
    write_csv(raw / "globe" / "items.csv",
              ["item_id", "dimension", "reverse", "text_en", "anchor_1_en", "anchor_7_en", "text_zh", "anchor_1_zh",
               "anchor_7_zh"],
              [[i, dims[k % 9], str(k % 2 == 0).lower(), "", "", "", f"（测试条目 {i}）", "一", "七"]
               for k, i in enumerate(ids)])
    return raw


@pytest.mark.slow
@reference
@needs_reference
def test_real_build_gives_36675_closed_rows(tmp_path):
    """Slow: reads and builds the real LLM-GLOBE files (36,675 closed rows)."""
    folder, verdict = build_release(registry.benchmark("llm_globe"), real_raw(tmp_path), tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    closed = read_config(folder, "closed")
    assert closed.height == 75 * 163 * 3 == 36_675
    assert closed["prompt_en"].n_unique() == 36_675
    row = closed.filter(pl.col("item_id") == "1-2").row(0, named=True)
    assert row["prompt_en"].endswith("people are generally:\u201d Rate this statement on a scale of 1 to 7, where 1 is "
                                     "aggressive, and 7 is non-aggressive.")
    agree = closed.filter(pl.col("item_id") == "1-1").row(0, named=True)  # the paper's own example item (UA)
    assert agree["prompt_en"].endswith(f"at the expense of experimentation and innovation.\u201d {RATING}")
    opened = read_config(folder, "open")
    assert opened.height == 900
    assert opened.group_by("origin").len().sort("origin").rows() == [("generated", 810), ("human", 90)]
    assert opened["prompt_zh"].null_count() == 6
    assert read_config(folder, "rubrics").height == 9
    globe = read_config(folder, "globe_2004")
    assert globe["country"].n_unique() == 62 and globe.height == 62 * 9
    po = {r["country"]: r["values"] for r in globe.filter(pl.col("dimension") == "Performance Orientation")
          .iter_rows(named=True)}
    assert (po["China"], po["USA"]) == (5.67, 6.14)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["provenance"]["gics_levels"] == {"sectors": 11, "industry_groups": 25, "industries": 74,
                                                     "sub_industries": 163}


def public_raw(tmp_path: Path) -> Path:
    """Only the public files (Form Alpha PDF, GLOBE 2004 scores, GICS 2023, open prompts, rubrics), symlinked."""
    raw = tmp_path / "raw"
    for folder in FOLDERS:
        (raw / folder).mkdir(parents=True)
    for source, folder in ((REAL_PDF, "globe"), (REAL_SCORES, "globe"), (REAL_GICS, "gics"),
                           (REAL_OPEN, "llm_globe"), (REAL_RUBRICS, "llm_globe")):
        (raw / folder / source.name).symlink_to(source)
    return raw


@pytest.mark.slow
@reference
@needs_reference
def test_public_files_build_without_closed_then_with_a_closed_prompts_csv(tmp_path):
    """Slow: two builds of the real public LLM-GLOBE files."""
    raw = public_raw(tmp_path)
    result = CliRunner().invoke(app, ["build", "llm_globe", "--raw", str(raw), "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "a" / "llm_globe"
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["globe_2004", "open", "rubrics"]
    assert "no closed config:" in (folder / "README.md").read_text(encoding="utf-8")
    # a closed_prompts.csv in the released format (our rows, the README's columns) adds closed with its rows
    rows = [[f"{d}-1", name, f"You are the {role} of a Banks company in the Banks industry. \u201cItem {d}.\u201d "
             f"{RATING}", f"条目{d}，{role}", "Banks", "Banks", role]
            for d, name in enumerate(llm_globe.dimension_names(), start=1) for role in ROLES]
    write_csv(raw / "llm_globe" / "closed_prompts.csv", list(CLOSED_COLUMNS),
              rows)
    result = CliRunner().invoke(app, ["build", "llm_globe", "--raw", str(raw), "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    closed = read_config(tmp_path / "b" / "llm_globe", "closed")
    assert closed["prompt_en"].to_list() == [r[2] for r in rows]
    assert closed["id"].to_list()[:3] == ["closed-1-1-1", "closed-1-1-2", "closed-1-1-3"]
    assert closed["role"].to_list() == [r[6] for r in rows]


@reference
@needs_reference
def test_public_open_prompts_without_chinese_are_named_in_manifest_and_card(tmp_path):
    raw = public_raw(tmp_path)
    folder, verdict = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    expected = [f"open-{r['Question_Num']}" for r in read_csv_rows(REAL_OPEN) if not r["prompt_zhCN"].strip()]
    assert expected == [f"open-9-{n}" for n in range(95, 101)]  # the issue's count, from the authors' file
    assert json.loads((folder / "manifest.json").read_text())["provenance"]["open_without_chinese"] == expected
    assert f"6 open prompt(s) of this release have none ({', '.join(expected)};" in (
        folder / "README.md").read_text(encoding="utf-8")


@reference
@needs_reference
def test_chinese_dimension_names_are_the_released_rubrics():
    """facts name_zh (the Chinese juror prompt's dimension names) as the authors' zh-CN rubrics write them: each
    name is in most of its own rubric's seven scale points ("...倾向于低<name>特征"; In-group Collectivism's rubric
    writes 群体内 in four and 内群体 in three)."""
    from culturebench.evaluate.llm_globe import prompts

    for row in read_csv_rows(REAL_RUBRICS):
        name = prompts.DIMENSIONS_ZH[row["Dimension"].strip()]
        lines = [line for line in row["Scale_zhCN"].replace("\u200b", "").splitlines() if line.strip()]
        assert len(lines) == 7 and sum(name in line for line in lines) >= 4, (row["Dimension"], name)


@reference
@needs_reference
def test_real_rubric_for_performance_orientation_is_the_papers_app_b1():
    from culturebench.raw.globe import read_csv, read_rubrics

    rubric = read_rubrics(read_csv(REAL_RUBRICS, REAL_RUBRICS.parent), llm_globe.dimension_lookup())[0]
    printed = llm_globe.facts()["rubric_example"]
    assert rubric.dimension == printed["dimension"]
    assert rubric.scale_en.splitlines() == printed["scale_en"]
    assert [" ".join(line.split()) for line in rubric.characteristics_en.splitlines()] == printed["characteristics_en"]


def test_audit_reproduces_the_card_of_each_closed_route(release, released, tmp_path):
    from culturebench.audit import audit

    raw = copy_sample(tmp_path)
    (raw / "globe" / "SAMPLE_globe_items.csv").unlink()
    without, _ = build_release(registry.benchmark("llm_globe"), raw, tmp_path / "out", seed=0, progress=NOOP)
    for folder in (release, released, without):
        assert audit(folder).problems == [], folder
