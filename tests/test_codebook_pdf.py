"""The WVS-7 codebook PDF parser: the real report against WorldValuesBench's transcription, bad input, caching."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

import culturebench.raw.codebook_pdf as codebook_pdf
from culturebench.errors import InputError
from culturebench.raw.codebook import Codebook, Variable
from culturebench.raw.codebook_files import load_codebook

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
PDF = REFERENCE / "WVS7/snag18_World-Values-Survey-Data-Analysis/F00011055-WVS7_Codebook_Variables_report_V6.0.pdf"
WVB_CODEBOOK = REFERENCE / "WorldValuesBench/dataset_construction/codebook.json"

needs_pdf = pytest.mark.skipif(not PDF.is_file(), reason=f"reference PDF absent: {PDF}")
needs_wvb = pytest.mark.skipif(not WVB_CODEBOOK.is_file(), reason=f"WorldValuesBench codebook absent: {WVB_CODEBOOK}")

CORE_NAME = re.compile(r"Q(\d+)(?:[A-Z]*|_\w+)")  # Q1..Q290 and their variants: Q33_3, Q94R, Q275A, Q82_EU
LONG_LIST = 100  # more codes than this: a country-specific list from the annex, which grows between versions
# Label normalisation shared by both sources: Unicode compatibility forms, one apostrophe and one dash, spacing
# around ";,:" and case. WorldValuesBench keeps the range end of codes printed "7-89.- 7 persons or more" in the
# label ("89.- 7 persons or more"); that prefix is dropped.
QUOTES = str.maketrans({"´": "'", "’": "'", "‘": "'", "`": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
RANGE_END = re.compile(r"^\d+\.-\s*")


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Codebook, Path]:
    """The real PDF parsed once for the module, with the cache folder it was written to."""
    if not PDF.is_file():
        pytest.skip(f"reference PDF absent: {PDF}")
    cache_dir = tmp_path_factory.mktemp("codebook-cache")
    return load_codebook(PDF, cache_dir=cache_dir), cache_dir


def _label(text: str) -> str:
    text = unicodedata.normalize("NFKC", text.translate(QUOTES))  # first: NFKC turns "´" into a combining accent
    text = re.sub(r"\s*([;,:])\s*", r"\1 ", text)
    return RANGE_END.sub("", " ".join(text.lower().split())).rstrip(" ;.")


def _missing_key(label: str) -> str:
    """A missing code's label up to its first ';', ',' or '/': "Missing; Unknown" -> "missing"."""
    return re.split(r"[;,/]", _label(label))[0].strip()


def _choice_differences(parsed: dict[int, str], reference: dict[int, str]) -> list[str]:
    """How the parsed choices differ from the reference transcription (empty when they agree).

    Codes must match exactly. Labels of codes >= 0 must match after :func:`_label`. The wording of negative
    (missing-value) codes varies between versions ("Not asked" / "Not asked in survey", "Missing; Not available" /
    "Missing; Unknown"), so their labels agree when one's first clause starts the other's. Country-specific
    annex lists (over ``LONG_LIST`` codes) gained countries in V6.0: there the PDF may add codes, but must hold
    every reference code with the same label.
    """
    problems = []
    annex_list = len(reference) > LONG_LIST
    for code in sorted(set(parsed) | set(reference)):
        mine, theirs = parsed.get(code), reference.get(code)
        if theirs is None:
            if not annex_list:
                problems.append(f"{code} only in the PDF ({mine!r})")
        elif mine is None:
            problems.append(f"{code} only in WorldValuesBench ({theirs!r})")
        elif code < 0:
            ours, other = _missing_key(mine), _missing_key(theirs)
            if not (ours.startswith(other) or other.startswith(ours)):
                problems.append(f"{code}: {mine!r} vs {theirs!r}")
        elif _label(mine) != _label(theirs):
            problems.append(f"{code}: {mine!r} vs {theirs!r}")
    return problems


def _core_names(codebook: Codebook, reference: dict) -> list[str]:
    return [
        name
        for name in reference
        if name in codebook and (match := CORE_NAME.fullmatch(name)) and 1 <= int(match[1]) <= 290
    ]


@pytest.mark.reference
@needs_pdf
@needs_wvb
def test_choices_agree_with_worldvaluesbench(parsed: tuple[Codebook, Path]) -> None:
    codebook, _ = parsed
    reference = json.loads(WVB_CODEBOOK.read_text(encoding="utf-8"))
    names = _core_names(codebook, reference)
    disagreements, added = {}, {}
    for name in names:
        mine = codebook[name].choices
        theirs = {int(code): label for code, label in reference[name]["choices"].items()}
        if problems := _choice_differences(mine, theirs):
            disagreements[name] = problems
        if len(theirs) > LONG_LIST and len(mine) > len(theirs):
            added[name] = len(mine) - len(theirs)
    agree = len(names) - len(disagreements)
    print(f"\nchoices: {agree}/{len(names)} variables Q1-Q290 agree with WorldValuesBench ({agree / len(names):.1%})")
    for name, problems in disagreements.items():
        print(f"  {name} (page {codebook[name].page}): " + "; ".join(problems[:6]))
    print("  codes added in the PDF's annex lists: " + ", ".join(f"{n} +{k}" for n, k in added.items()))
    assert len(names) >= 300
    assert agree / len(names) >= 0.98


@pytest.mark.reference
@needs_pdf
@needs_wvb
def test_titles_agree_with_worldvaluesbench(parsed: tuple[Codebook, Path]) -> None:
    codebook, _ = parsed
    reference = json.loads(WVB_CODEBOOK.read_text(encoding="utf-8"))
    names = _core_names(codebook, reference)
    different = [n for n in names if _label(codebook[n].title) != _label(reference[n]["question"])]
    print(f"\ntitles: {len(names) - len(different)}/{len(names)} agree")
    for name in different:
        print(f"  {name}: {codebook[name].title!r} vs {reference[name]['question']!r}")
    assert len(different) <= 0.02 * len(names)


@pytest.mark.reference
@needs_pdf
def test_facts_read_off_the_pdf(parsed: tuple[Codebook, Path]) -> None:
    codebook, _ = parsed
    assert len(codebook.variables) >= 850
    q46 = codebook["Q46"]
    assert (q46.title, q46.page) == ("Feeling of happiness", 20)
    assert q46.question == "Taking all things together, would you say you are:"
    assert q46.choices == {
        1: "Very happy",
        2: "Quite happy",
        3: "Not very happy",
        4: "Not at all happy",
        -1: "Don´t know",
        -2: "No answer",
        -4: "Not asked",
        -5: "Missing; Not available",
    }
    q48 = codebook["Q48"]
    assert set(q48.valid_choices()) == set(range(1, 11))
    assert (q48.choices[1], q48.choices[10], q48.page) == ("None at all", "A great deal", 20)
    assert {name: codebook[name].page for name in ("Q1", "H_URBRURAL", "X003R", "Q289CS", "B_COUNTRY")} == {
        "Q1": 10,
        "H_URBRURAL": 7,
        "X003R": 84,
        "Q289CS": 93,
        "B_COUNTRY": 2,
    }
    # a title wrapped onto a second bold line, and one with a left-column note beside its second line
    assert codebook["Q53"].title == (
        "Frequency you/family (last 12 month): Gone without needed medicine or treatment that you needed"
    )
    assert codebook["H331"].title.endswith("even if they become pregnant and have children")
    # Q9's last two choices are on the next page
    assert codebook["Q9"].page == 11
    assert list(codebook["Q9"].choices)[-2:] == [-4, -5]
    assert codebook["Q270"].choices[7] == "7 persons or more"  # printed "7-89.- 7 persons or more"
    # a two-column table, and the annex lists (Q277A is misprinted "Q277Q" in the annex heading)
    assert (codebook["B_COUNTRY"].choices[8], codebook["B_COUNTRY"].choices[716]) == ("Albania", "Zimbabwe")
    assert codebook["Q223"].choices[8001] == "ALB: Socialist Party of Albania"
    assert codebook["Q277A"].choices[20000] == "AD: Educacio preescolar (precoc)"
    texts = json.dumps(codebook.to_json(), ensure_ascii=False)
    for leak in ("WORLD VALUES SURVEY ASSOCIATION", "worldvaluessurvey.org", "Happiness and Wellbeing", "Q46-Q56"):
        assert leak not in texts


@pytest.mark.reference
@needs_pdf
def test_second_load_reads_the_cache(parsed: tuple[Codebook, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    codebook, cache_dir = parsed

    def fail(path: Path) -> None:
        raise AssertionError("the parser ran again")

    monkeypatch.setattr(codebook_pdf, "CodebookParse", fail)
    again = load_codebook(PDF, cache_dir=cache_dir)
    assert again.variables == codebook.variables
    assert again.sha256 == codebook.sha256


# Pages whose words are compared with pdfplumber's: the first pages, every 25th, and pages where PDFium's text page
# differs from pdfminer's stream (space-only text objects, generated spaces between objects, line-end hyphens it
# marks U+0002, italic glyphs overhanging their advance, combining marks), then the annex's last pages.
PAGES_AGAINST_PDFPLUMBER = sorted({1, 2, 7, 15, 20, 44, 90, 138, 169, 171, 182, 185, 209, 403, 404,
                                   *range(25, 404, 25)})


@pytest.mark.reference
@needs_pdf
def test_pdfium_words_are_pdfplumbers_words_on_the_real_codebook() -> None:
    """The parser reads words with PDFium (raw/pdf_words.py) as pdfplumber's extract_words gave them: same words
    in the same order, same text and font, same box to 1/1000 pt."""
    import pdfplumber

    from culturebench.raw.pdf_words import Fonts, open_pdf, page_words

    document, fonts = open_pdf(str(PDF)), Fonts()
    with pdfplumber.open(PDF) as pdf:
        for number in PAGES_AGAINST_PDFPLUMBER:
            page = pdf.pages[number - 1]
            theirs = page.extract_words(extra_attrs=["fontname"])
            height, ours = page_words(document, number - 1, fonts)
            assert abs(height - float(page.height)) < 1e-3
            assert [w["text"] for w in ours] == [w["text"] for w in theirs], f"page {number}"
            for mine, other in zip(ours, theirs):
                assert mine["fontname"] == other["fontname"].split("+")[-1]  # pdfminer keeps the subset prefix
                for key in ("x0", "x1", "top", "bottom"):
                    assert abs(mine[key] - other[key]) < 1e-3, (number, mine, other, key)
    document.close()


# The 281 questions of the WorldValuesBench release (facts/wvb.json's value and demographic variables) against
# WorldValuesBench's own transcription of the codebook: every one agrees but for what the V6.0 report prints
# differently from the version the authors transcribed.
V6_DIFFERENCES = {
    "Q36": "V6.0 prints 'Agree strongly'", "Q41": "V6.0 prints 'Agree strongly', 'Neither agree nor disagree'",
    "Q202": "V6.0 adds -3 'Not applicable'", "Q280": "V6.0 adds -3 'Not applicable; No spouse/partner'",
    "A_YEAR": "V6.0 adds the year 2023", "B_COUNTRY": "V6.0 adds India and Uzbekistan",
    "S_INTLANGUAGE": "V6.0 adds languages", "Q289CS9": "not in the V6.0 report",
}


@pytest.mark.reference
@needs_pdf
@needs_wvb
def test_the_281_questions_of_the_release_read_off_the_pdf(parsed: tuple[Codebook, Path]) -> None:
    from culturebench.builders import wvb

    codebook, _ = parsed
    reference = json.loads(WVB_CODEBOOK.read_text(encoding="utf-8"))
    names = [*wvb.value_variables(), *wvb.demographic_variables()]
    assert len(set(names)) == 281
    differing = {}
    for name in names:
        if name not in codebook:
            differing[name] = "missing"
            continue
        theirs = {int(code): label for code, label in reference[name]["choices"].items()}
        problems = _choice_differences(codebook[name].choices, theirs)
        if _label(codebook[name].title) != _label(reference[name]["question"]):
            problems.append(f"title {codebook[name].title!r} vs {reference[name]['question']!r}")
        if problems:
            differing[name] = problems
    assert set(differing) == set(V6_DIFFERENCES), differing
    assert sum(len(codebook[n].choices) for n in names if n in codebook) > 2000  # codes and labels, not just names


def test_a_parse_says_so_once_with_its_time(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``build`` says in one line that it parsed a codebook PDF and how long it took; a cached one says nothing."""
    path = tmp_path / "codebook.pdf"
    _write_codebook_pdf(path)
    load_codebook(path, cache_dir=tmp_path / "cache")
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1
    variables = len(_synthetic_variables())
    assert re.fullmatch(rf"codebook: parsed codebook\.pdf \({variables} variables\) in \d+\.\d s; cached for the next "
                        r"build", said[0]), said
    load_codebook(path, cache_dir=tmp_path / "cache")
    assert capsys.readouterr().err == ""


def _write_pdf(path: Path, pages: int) -> Path:
    """A small valid PDF with a line of text per page."""
    with PdfPages(path) as pdf:
        for number in range(1, pages + 1):
            figure = Figure(figsize=(4, 3))
            figure.text(0.1, 0.5, f"Page {number}: Q46 Feeling of happiness 1.- Very happy")
            pdf.savefig(figure)
    return path


def test_cache_skips_the_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = _write_pdf(tmp_path / "codebook.pdf", pages=1)
    calls = []

    class FakeParse:
        def __init__(self, path: Path) -> None:
            calls.append(path)

        def codebook(self) -> Codebook:
            choices = {1: "Very happy", -1: "Don´t know"}
            return Codebook(variables={"Q46": Variable(name="Q46", title="Feeling of happiness", choices=choices,
                                                       page=20)})

        def close(self) -> None:
            pass

    monkeypatch.setattr(codebook_pdf, "CodebookParse", FakeParse)
    first = load_codebook(pdf, cache_dir=tmp_path / "cache")
    second = load_codebook(pdf, cache_dir=tmp_path / "cache")
    assert len(calls) == 1
    assert second.variables == first.variables
    assert second.sha256 == first.sha256


def _assert_input_error(path: Path, tmp_path: Path, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_codebook(path, cache_dir=tmp_path / "cache")
    text = str(caught.value)
    assert str(path) in text and message in text
    assert "\n" not in text
    assert not (tmp_path / "cache").exists()  # nothing cached for bad input


def test_text_file_named_pdf(tmp_path: Path) -> None:
    path = tmp_path / "notes.pdf"
    path.write_text("Q46 Feeling of happiness\n1.- Very happy\n", encoding="utf-8")
    _assert_input_error(path, tmp_path, "not a readable PDF")


def test_truncated_pdf(tmp_path: Path) -> None:
    whole = _write_pdf(tmp_path / "whole.pdf", pages=3).read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(whole[: len(whole) // 3])
    _assert_input_error(path, tmp_path, "not a readable PDF")


@pytest.mark.parametrize("pages", [3, 12])
def test_pdf_that_is_not_a_codebook(tmp_path: Path, pages: int) -> None:
    path = _write_pdf(tmp_path / "report.pdf", pages=pages)
    _assert_input_error(path, tmp_path, "variable headers")


# ------------------------------------------------------------------ a codebook PDF the test writes itself (fpdf2)
# The report's layout as codebook_pdf.py's docstring describes it, at our own coordinates and with our own text:
# a bold name in the left column and a bold title in the right one, an italic question, choices "1.- label" and
# missing codes "-1-.- label" (a label may wrap onto the next line and run over a page break), a code table in two
# cells per pair, and an "Annex" heading (16 pt) whose code list belongs to the variable named in parentheses.

LEFT_X, TITLE_X, LINE = 57.0, 160.0, 14.0  # points; body lines lie between the running header and the footer
TOP_Y, BOTTOM_Y = 110.0, 770.0  # baselines (A4 is 842 pt high: header margin 90, footer margin 55 in the parser)
N_VARIABLES = 60  # the parser wants at least 50 headers before it calls a PDF a codebook


def _synthetic_variables() -> dict[str, Variable]:
    """What the PDF says, written here independently of the parser: Q1..Q58, a two-line title, a country table."""
    variables = {}
    for n in range(1, N_VARIABLES - 1):
        variables[f"Q{n}"] = Variable(
            name=f"Q{n}", title=f"Synthetic item number {n}", question=f"How much do you agree with statement {n}?",
            choices={1: "Agree", 2: "Neither agree nor disagree", 3: "Disagree", -1: "Don´t know", -2: "No answer"})
    variables["Q10"] = Variable(name="Q10", title="A title long enough to wrap onto a second bold line",
                                question="Which option fits best?",
                                choices={1: "The first option, whose label runs on to a second line", 2: "Second"})
    variables["B_COUNTRY"] = Variable(name="B_COUNTRY", title="Country code",
                                      choices={8: "Albania", 20: "Andorra", 32: "Argentina", 36: "Australia"})
    variables["Q223"] = Variable(name="Q223", title="Party voted for", question="Which party would you vote for?",
                                 choices={-1: "Don´t know", 101: "Party of the Hills", 102: "Union of Rivers"})
    return variables


def _write_codebook_pdf(path: Path) -> dict[str, int]:
    """Lay the synthetic variables out like the WVS report; returns each variable's (1-based) page."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pages: dict[str, int] = {}
    y = BOTTOM_Y + 1  # the first line opens a page

    def line(x: float, text: str, style: str = "", size: float = 10) -> None:
        nonlocal y
        if y > BOTTOM_Y:
            pdf.add_page()
            pdf.set_font("Helvetica", "", 9)
            pdf.text(LEFT_X, 50, "THE SYNTHETIC VALUES SURVEY")  # running header: above the body
            pdf.text(LEFT_X, 820, str(pdf.page_no()))  # page number: in the footer
            y = TOP_Y
        pdf.set_font("Helvetica", style, size)
        pdf.text(x, y, text)

    def header(name: str, title_lines: list[str]) -> None:
        nonlocal y
        line(LEFT_X, name, "B")
        pages[name] = pdf.page_no()
        for text in title_lines:
            pdf.set_font("Helvetica", "B", 10)
            pdf.text(TITLE_X, y, text)
            y += LINE

    def body(text: str, style: str = "") -> None:
        nonlocal y
        line(TITLE_X, text, style)
        y += LINE

    variables = _synthetic_variables()
    for name, v in variables.items():
        if name in ("Q10", "B_COUNTRY", "Q223"):
            continue
        header(name, [v.title])
        body(v.question, "I")
        for code, label in v.choices.items():
            body(f"{code}{'-' if code < 0 else ''}.- {label}")
    header("Q10", ["A title long enough to wrap", "onto a second bold line"])
    body("Which option fits best?", "I")
    body("1.- The first option, whose label runs")
    y = BOTTOM_Y + 1  # the label's continuation is the first line of the next page
    body("on to a second line")
    body("2.- Second")
    header("B_COUNTRY", ["Country code"])
    for row in (((8, "Albania"), (20, "Andorra")), ((32, "Argentina"), (36, "Australia"))):
        for column, (code, country) in enumerate(row):
            line(TITLE_X + 150 * column, str(code))
            pdf.text(TITLE_X + 150 * column + 30, y, country)
        y += LINE
    header("Q223", ["Party voted for"])
    body("Which party would you vote for?", "I")
    body("-1-.- Don´t know")
    y += LINE
    line(LEFT_X, "Annex", "B", 16)
    y += 2 * LINE
    line(LEFT_X, "Political parties list (Q223)", "B", 16)
    y += 2 * LINE
    line(LEFT_X, "Kestrava", "B")  # a bold country sub-heading: not a code
    y += LINE
    for code, party in ((101, "Party of the Hills"), (102, "Union of Rivers")):
        line(LEFT_X, str(code))
        pdf.text(LEFT_X + 60, y, party)
        y += LINE
    pdf.output(str(path))
    return pages


def test_a_codebook_pdf_written_by_the_test_parses_to_what_it_says(tmp_path: Path) -> None:
    """The real parser (PDFium on a real PDF) reads back exactly the variables the test laid out."""
    path = tmp_path / "F00000000-Synthetic_Codebook_Variables_report.pdf"
    pages = _write_codebook_pdf(path)
    codebook = codebook_pdf.parse_codebook_pdf(path)
    expected = {name: Variable(v.name, v.title, v.question, v.choices, pages[name])
                for name, v in _synthetic_variables().items()}
    assert set(codebook.variables) == set(expected)
    for name, variable in expected.items():
        assert codebook[name] == variable, name
    assert pages["Q10"] < max(pages.values())  # the wrapped choice label really ran over a page break


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_pages_read_by_worker_processes_give_what_the_test_laid_out(tmp_path: Path, monkeypatch, workers: int) -> None:
    """Pages after the first SEARCH_PAGES go to PAGE_WORKERS processes (here from page 2 on, in runs of one or two
    pages): the variables, their pages and the choices running over a page break are what the test wrote."""
    path = tmp_path / "F00000000-Synthetic_Codebook_Variables_report.pdf"
    pages = _write_codebook_pdf(path)
    monkeypatch.setattr(codebook_pdf, "SEARCH_PAGES", 1)
    monkeypatch.setattr(codebook_pdf, "PAGE_WORKERS", workers)
    codebook = codebook_pdf.parse_codebook_pdf(path)
    assert max(pages.values()) >= 3  # more runs than workers: each worker reads pages far apart
    assert codebook.variables == {name: Variable(v.name, v.title, v.question, v.choices, pages[name])
                                  for name, v in _synthetic_variables().items()}


def test_the_page_readers_start_before_the_codebook_is_asked_for_and_stop_when_the_block_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``reading_codebook`` starts the page readers at once (a build reads its respondents meanwhile) and gives the
    same codebook as ``parse_codebook_pdf``; an error inside the block (a bad respondent file) ends the readers."""
    from culturebench.raw.codebook_files import reading_codebook

    path = tmp_path / "F00000000-Synthetic_Codebook_Variables_report.pdf"
    pages = _write_codebook_pdf(path)
    monkeypatch.setattr(codebook_pdf, "PAGE_WORKERS", 2)
    started: list = []
    real_start = codebook_pdf._start_page_readers
    monkeypatch.setattr(codebook_pdf, "_start_page_readers", lambda *a: started.extend(real_start(*a)) or started)
    with reading_codebook(path, cache_dir=tmp_path / "cache") as finish:
        assert len(started) == 2  # running before the codebook is asked for
        codebook = finish()
    assert codebook.variables == {name: Variable(v.name, v.title, v.question, v.choices, pages[name])
                                  for name, v in _synthetic_variables().items()}
    started.clear()
    with pytest.raises(InputError, match="a bad respondent file"):
        with reading_codebook(path, cache_dir=tmp_path / "other-cache") as finish:
            raise InputError("a bad respondent file")
    assert len(started) == 2 and all(process.poll() is not None for process in started)
    assert not (tmp_path / "other-cache").exists()  # nothing cached from a parse that did not finish


def test_load_codebook_parses_a_pdf_once_and_then_reads_the_cache(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "codebook.pdf"
    _write_codebook_pdf(path)
    first = load_codebook(path, cache_dir=tmp_path / "cache")
    monkeypatch.setattr(codebook_pdf, "CodebookParse", lambda p: pytest.fail("parsed again"))
    second = load_codebook(path, cache_dir=tmp_path / "cache")
    assert second.variables == first.variables and first["Q223"].choices[102] == "Union of Rivers"
