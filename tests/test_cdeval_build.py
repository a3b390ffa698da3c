"""The CDEval release, checked against the raw files with the tests' own readers (json/csv/hashlib): loading with
`datasets`, row accounting and quarantine, ids, the Hofstede table, Table 1 statistics recomputed by hand on a tiny
set (Distinct-2 by hand, Self-BLEU with nltk's `sentence_bleu` itself), bad inputs, `build all`, determinism, the
card; and a reference test on the real CDEval.json + Hofstede 2015 CSV (symlinked, never copied)."""

from __future__ import annotations

import csv
import hashlib
import json
import random
import shutil
import time
import warnings
from collections import Counter
from itertools import pairwise
from pathlib import Path

import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from culturebench import registry
from culturebench.builders import cdeval
from culturebench.cli import app
from culturebench.errors import InputError
from culturebench.release import build_release

REPO = Path(__file__).resolve().parents[1]
SAMPLE_RAW = REPO / "raw"
SAMPLE_JSON = SAMPLE_RAW / "cdeval" / "SAMPLE_CDEval.json"
SAMPLE_CSV = SAMPLE_RAW / "hofstede" / "SAMPLE_6-dimensions-for-website-2015-08-16.csv"
REFERENCE = REPO.parent / "shared" / "reference"
REAL_JSON = REFERENCE / "CDEval" / "JinuHONG845_LLM_Test_Culture" / "CDEval.json"
REAL_CSV = REFERENCE / "Hofstede" / "HoaMacDanh_GEO" / "6-dimensions-for-website-2015-08-16.csv"
NOOP = lambda stage: None
KEYS = ("Dimension", "Domain", "Question", "Option 1", "Option 2")
POLES = {"PDI": ("high power distance", "low power distance"), "IDV": ("individualism", "collectivism"),
         "UAI": ("high uncertainty avoidance", "low uncertainty avoidance"), "MAS": ("masculinity", "femininity"),
         "LTO": ("long-term orientation", "short-term orientation"), "IVR": ("indulgence", "restraint")}
DOMAINS = {"Education", "Family", "Lifestyle", "Wellness", "Work", "Arts", "Scientific"}


# ---------------------------------------------------------------------------------------------------------------
# Independent readers and helpers
# ---------------------------------------------------------------------------------------------------------------


def norm(text: str) -> str:
    return " ".join(text.split())


def expected_id(item: dict) -> str:
    text = "\x1f".join(norm(item[k]) for k in KEYS)
    return f"cdeval-{item['Dimension'].lower()}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def kept_items(items: list[dict]) -> tuple[list[tuple[int, dict]], list[int]]:
    """(source index, item) kept, and the indices of later copies of the same question + options."""
    seen, kept, duplicates = set(), [], []
    for index, item in enumerate(items):
        key = tuple(norm(item[k]).casefold() for k in ("Question", "Option 1", "Option 2"))
        if key in seen:
            duplicates.append(index)
        else:
            seen.add(key)
            kept.append((index, item))
    return kept, duplicates


def read_config(release: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((release / "data" / config).glob("*.parquet"))])


def manifest_of(release: Path) -> dict:
    return json.loads((release / "manifest.json").read_text(encoding="utf-8"))


def front_matter(release: Path) -> dict:
    text = (release / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])


def write_raw(root: Path, items: list[dict] | str | None = None, countries: str | None = None) -> Path:
    """root/raw/{cdeval,hofstede}: the given items (a list, or JSON text as is) and CSV text; the sample otherwise."""
    raw = root / "raw"
    (raw / "cdeval").mkdir(parents=True)
    (raw / "hofstede").mkdir(parents=True)
    text = SAMPLE_JSON.read_text(encoding="utf-8") if items is None else (
        items if isinstance(items, str) else json.dumps(items, indent=4))
    (raw / "cdeval" / "items.json").write_text(text, encoding="utf-8")
    (raw / "hofstede" / "scores.csv").write_text(SAMPLE_CSV.read_text(encoding="utf-8") if countries is None
                                                 else countries, encoding="utf-8", newline="")
    return raw


def sample_items() -> list[dict]:
    return json.loads(SAMPLE_JSON.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    folder, verdict = build_release(registry.benchmark("cdeval"), SAMPLE_RAW, tmp_path_factory.mktemp("cdeval"), seed=0, progress=NOOP)
    assert verdict["failed"] == 0, verdict
    return folder


# ---------------------------------------------------------------------------------------------------------------
# The bundled sample
# ---------------------------------------------------------------------------------------------------------------


def test_every_config_loads_with_datasets(release, tmp_path):
    import datasets

    card = front_matter(release)
    declared = {(c["config_name"], f["split"]) for c in card["configs"] for f in c["data_files"]}
    # variants: the bundled sample's hand-written paraphrases (issue 63)
    assert declared == {("questions", "test"), ("hofstede", "full"), ("stats", "full"), ("variants", "test")}
    for config, split in sorted(declared):
        loaded = datasets.load_dataset(str(release), config, split=split, cache_dir=str(tmp_path))
        assert len(loaded) == read_config(release, config).height > 0, config
    questions = datasets.load_dataset(str(release), "questions", split="test", cache_dir=str(tmp_path))
    assert questions.column_names == ["id", "source_index", "dimension", "domain", "question", "option_1",
                                      "option_2", "target_orientation", "option_2_orientation"]


def test_questions_match_the_raw_json(release):
    items = sample_items()
    kept, duplicates = kept_items(items)
    assert duplicates, "the bundled sample is meant to contain one duplicate"
    questions = read_config(release, "questions")
    assert questions["source_index"].to_list() == [index for index, _ in kept]
    assert questions["id"].to_list() == [expected_id(item) for _, item in kept]
    for row, (_, item) in zip(questions.iter_rows(named=True), kept):
        assert (row["dimension"], row["domain"]) == (item["Dimension"], item["Domain"])
        assert (row["question"], row["option_1"], row["option_2"]) == tuple(
            item[k].strip() for k in ("Question", "Option 1", "Option 2"))
        assert (row["target_orientation"], row["option_2_orientation"]) == POLES[item["Dimension"]]
    assert set(questions["dimension"]) == set(POLES) and set(questions["domain"]) == DOMAINS
    # The sample repeats one question text with other options: both are distinct items and both are kept.
    texts = Counter(questions["question"])
    assert [n for n in texts.values() if n > 1] == [2]


def test_rows_read_equal_kept_plus_quarantined(release):
    items = sample_items()
    kept, duplicates = kept_items(items)
    with SAMPLE_CSV.open(encoding="utf-8", newline="") as handle:
        countries = list(csv.DictReader(handle, delimiter=";"))
    accounting = manifest_of(release)["accounting"]
    assert accounting["rows_read"] == len(items) + len(countries)
    assert accounting["rows_kept"] == len(kept) + len(countries)
    assert accounting["quarantined_by_rule"] == {"duplicate_question": len(duplicates)}
    assert accounting["rows_read"] == accounting["rows_kept"] + accounting["rows_quarantined"]
    quarantine = pl.read_parquet(release / "quarantine" / "duplicate_question.parquet")
    assert quarantine["source_index"].to_list() == duplicates
    assert quarantine["item"].to_list() == [i + 1 for i in duplicates]
    assert all("same question and options as item" in reason for reason in quarantine["reason"])


def test_hofstede_matches_the_raw_csv(release):
    with SAMPLE_CSV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter=";"))
    hofstede = read_config(release, "hofstede")
    assert hofstede.columns == ["country_code", "country", "pdi", "idv", "uai", "mas", "lto", "ivr", "group",
                                "source_file", "version"]
    source = {"pdi": "pdi", "idv": "idv", "uai": "uai", "mas": "mas", "lto": "ltowvs", "ivr": "ivr"}
    version = "culturebench sample: 8 rows of the 2015-08-16 file, retyped (raw/hofstede)"
    expected = [(r["ctr"], r["country"], *[None if r[source[c]] == "#NULL!" else int(r[source[c]]) for c in source],
                 None, f"hofstede/{SAMPLE_CSV.name}", version) for r in rows]
    assert hofstede.rows() == expected
    assert hofstede.filter(pl.col("country_code") == "ALB").row(0)[2:6] == (None, None, None, None)


def test_table10_file_from_the_script_is_recognised_with_a_group_column(tmp_path):
    """scripts/make_sample_cdeval.py --table10 writes the paper's Table 10 rows; the builder reads them back in the
    release's PDI IDV UAI MAS LTO IVR order (the CSV puts mas before uai) and names their version; a `group`
    column (Sec. 4.4) is kept, a file without one gives null."""
    import subprocess
    import sys

    raw = write_raw(tmp_path)
    (raw / "hofstede" / "scores.csv").unlink()
    subprocess.run([sys.executable, "scripts/make_sample_cdeval.py", "--table10", str(raw / "hofstede")], cwd=REPO,
                   check=True, capture_output=True)
    grouped = raw / "hofstede" / "z_grouped.csv"
    grouped.write_text("ctr;country;pdi;idv;mas;uai;ltowvs;ivr;group\nTHA;Thailand;64;20;34;64;32;45;Non-rich\n",
                       encoding="utf-8")
    output = cdeval.build(raw, 0, NOOP)
    hofstede = output.tables["hofstede"]["full"]
    rows = {r["country"]: r for r in hofstede.iter_rows(named=True)}
    # Table 10 as printed (PDI IDV UAI MAS LTO IVR)
    assert [rows["United States"][c] for c in ("pdi", "idv", "uai", "mas", "lto", "ivr")] == [40, 60, 46, 62, 50, 68]
    assert [rows["Germany"][c] for c in ("pdi", "idv", "uai", "mas", "lto", "ivr")] == [35, 79, 65, 66, 57, 40]
    assert [rows["China"][c] for c in ("pdi", "idv", "uai", "mas", "lto", "ivr")] == [80, 43, 30, 66, 77, 24]
    assert rows["United States"]["version"].startswith("Table 10 of the paper")
    assert rows["United States"]["group"] is None and rows["Thailand"]["group"] == "Non-rich"
    assert rows["Thailand"]["version"] == "unrecognised"
    assert output.provenance["hofstede_versions"]["hofstede/z_grouped.csv"] == "unrecognised"


def test_stats_of_the_sample_count_every_group(release):
    questions = read_config(release, "questions")
    stats = read_config(release, "stats")
    assert stats["group_by"].to_list() == ["dimension"] * 6 + ["domain"] * 7 + ["all"]
    prompts = dict(zip(stats["group"], stats["prompts"]))
    assert {k: prompts[k] for k in POLES} == dict(Counter(questions["dimension"]))
    assert {k: prompts[k] for k in DOMAINS} == dict(Counter(questions["domain"]))
    assert prompts["all"] == questions.height


def test_validation_report_passes_and_lists_the_shared_question(release):
    report = json.loads((release / "validation" / "report.json").read_text(encoding="utf-8"))
    results = report.get("checks") or report.get("results")
    assert results and all(r["passed"] for r in results)
    shared = [r for r in results if r["name"].startswith("items sharing a question text")]
    assert len(shared) == 1 and len(shared[0]["observed"]) == 1


def test_translated_items_give_a_release_in_their_language(tmp_path):
    """Sec. 4.2: items with a Language key (generate cdeval_translate) build a release that says its language."""
    raw = write_raw(tmp_path, [{**item, "Language": "de"} for item in sample_items()])
    folder, verdict = build_release(registry.benchmark("cdeval"), raw, tmp_path / "out", seed=0, progress=NOOP)
    assert verdict["failed"] == 0
    assert manifest_of(folder)["provenance"]["language"] == "de"
    assert front_matter(folder)["language"] == ["de"]
    assert "**Translated questionnaire (de).**" in (folder / "README.md").read_text(encoding="utf-8")
    from culturebench.audit import audit

    assert audit(folder).problems == []


def test_card_license_provenance_and_citation(release):
    card = front_matter(release)
    assert card["license"] == "unknown"
    text = (release / "README.md").read_text(encoding="utf-8")
    assert "2311.16421" in text and "Hofstede" in text and "@inproceedings{wang-etal-2024-cdeval" in text
    assert "no license" in text.lower() or "without stating a license" in text
    redistributable = manifest_of(release)["redistributable"]
    # variants (issue 63) hold the questions' text as their originals: withheld as the questions are
    assert redistributable == {"questions": False, "hofstede": False, "stats": True, "variants": False}


def test_two_builds_are_byte_identical(release, tmp_path):
    again, _ = build_release(registry.benchmark("cdeval"), SAMPLE_RAW, tmp_path, seed=0, progress=NOOP)
    first = {o["path"]: o["sha256"] for o in manifest_of(release)["outputs"] if o["path"].endswith(".parquet")}
    second = {o["path"]: o["sha256"] for o in manifest_of(again)["outputs"] if o["path"].endswith(".parquet")}
    assert first == second and first


def test_build_all_builds_wvb_and_cdeval_from_the_bundled_raw(tmp_path):
    result = CliRunner().invoke(app, ["build", "all", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "wvb" / "manifest.json").is_file()
    assert (tmp_path / "cdeval" / "manifest.json").is_file()
    assert manifest_of(tmp_path / "cdeval")["validation"]["failed"] == 0


# ---------------------------------------------------------------------------------------------------------------
# Statistics, computed independently on a tiny set
# ---------------------------------------------------------------------------------------------------------------

TINY = [  # plain lowercase words: NLTK's tokenizer splits them on spaces, as the test does (question + options)
    ("PDI", "Work", "we like tea", "yes", "no"),
    ("PDI", "Work", "we like coffee", "yes", "no"),
    ("PDI", "Work", "they drink tea", "often", "rarely"),
    ("IDV", "Family", "we like tea very much", "yes", "no"),
    ("IDV", "Family", "we like tea very often", "yes", "no"),
]


def test_stats_on_a_tiny_set_by_hand(tmp_path):
    from nltk.translate.bleu_score import sentence_bleu

    raw = write_raw(tmp_path, [dict(zip(KEYS, item)) for item in TINY])
    output = cdeval.build(raw, 0, NOOP)
    stats = {row["group"]: row for row in output.tables["stats"]["full"].iter_rows(named=True)}
    docs = [" ".join(item[2:]).split() for item in TINY]

    pdi = stats["PDI"]
    assert pdi["prompts"] == 3 and pdi["avg_length_tokens"] == 5.0 and pdi["avg_length_words"] == 5.0
    assert pdi["avg_question_tokens"] == 3.0
    # bigrams: (we like)(like tea)(tea yes)(yes no) + (we like)(like coffee)(coffee yes)(yes no)
    #        + (they drink)(drink tea)(tea often)(often rarely): 12 bigrams, 10 distinct
    assert pdi["distinct_2"] == pytest.approx(10 / 12)
    # IDV: (we like)(like tea)(tea very)(very much)(much yes)(yes no) + (we like)(like tea)(tea very)(very often)
    #      (often yes)(yes no): 12 bigrams, 8 distinct
    assert stats["IDV"]["distinct_2"] == pytest.approx(8 / 12)
    assert stats["IDV"]["avg_length_tokens"] == 7.0

    def self_bleu(group: list[list[str]]) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return sum(sentence_bleu(group[:i] + group[i + 1:], group[i]) for i in range(len(group))) / len(group)

    assert stats["PDI"]["self_bleu"] == pytest.approx(self_bleu(docs[:3]), rel=1e-12)
    assert stats["IDV"]["self_bleu"] == pytest.approx(self_bleu(docs[3:]), rel=1e-12)
    assert stats["IDV"]["self_bleu"] > 0.3  # the two IDV prompts share a 4-gram
    assert stats["Work"]["self_bleu"] == stats["PDI"]["self_bleu"]
    assert stats["all"]["self_bleu"] == pytest.approx(self_bleu(docs), rel=1e-12)
    assert stats["all"]["distinct_2"] == pytest.approx(len({b for d in docs for b in pairwise(d)}) / 24)
    # Groups without prompts have a row with null metrics; a group of one has no Self-BLEU.
    assert stats["MAS"]["prompts"] == 0 and stats["MAS"]["distinct_2"] is None and stats["MAS"]["self_bleu"] is None


def test_fast_self_bleu_equals_nltk_sentence_bleu():
    from nltk.translate.bleu_score import sentence_bleu

    rng = random.Random(3)
    vocab = list("abcdefgh")
    docs = [[rng.choice(vocab) for _ in range(rng.randint(1, 12))] for _ in range(40)] + [["a", "b"], ["a", "b"]]
    fast = cdeval.self_bleu_scores(docs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = [sentence_bleu(docs[:i] + docs[i + 1:], docs[i]) for i in range(len(docs))]
    assert fast == pytest.approx(slow, rel=1e-12, abs=0)


# ---------------------------------------------------------------------------------------------------------------
# Bad inputs: one line naming file, item/row and key/column, nothing written; or quarantine
# ---------------------------------------------------------------------------------------------------------------


def _modified(index: int, **changes) -> list[dict]:
    items = sample_items()
    for key, value in changes.items():
        if value is None:
            del items[index][key]
        else:
            items[index][key] = value
    return items


def _malformed_item_3() -> str:
    parts = [json.dumps(item) for item in sample_items()]
    parts[2] = parts[2][:-1]  # item 3 loses its closing brace
    return "[\n" + ",\n".join(parts) + "\n]\n"


def _missing_comma_after_item_2() -> str:
    parts = [json.dumps(item) for item in sample_items()]
    return "[\n" + ",\n".join(parts[:2]) + "\n" + ",\n".join(parts[2:]) + "\n]\n"


BAD_JSON = {
    "malformed item": (_malformed_item_3, ["cdeval/items.json", "row 3", "item 3 (JSON index 2)", "malformed JSON"]),
    "missing comma": (_missing_comma_after_item_2, ["cdeval/items.json", "row 2", "expected ',' or ']'"]),
    "missing key": (lambda: _modified(4, **{"Option 2": None}),
                    ["cdeval/items.json", "row 5", "column Option 2", "JSON index 4", "no key 'Option 2'"]),
    "not a string": (lambda: _modified(6, Question=7), ["row 7", "column Question", "expected a string"]),
    "unknown dimension": (lambda: _modified(9, Dimension="XYZ"),
                          ["row 10", "column Dimension", "unknown dimension 'XYZ'", "PDI"]),
    "unknown domain": (lambda: _modified(1, Domain="Sports"), ["row 2", "column Domain", "unknown domain 'Sports'"]),
    "not a list": (lambda: json.dumps({"items": sample_items()}), ["cdeval/items.json", "expected a JSON list"]),
    "empty file": (lambda: "  \n", ["cdeval/items.json", "file is empty"]),
    "item not an object": (lambda: [*sample_items()[:3], ["PDI"]], ["row 4", "expected an object"]),
    "two languages": (lambda: _modified(5, Language="de"),
                      ["row 6", "column Language", "'de'", "'en'", "one release per language"]),
    "empty language": (lambda: _modified(2, Language=" "), ["row 3", "column Language", "language code"]),
}


@pytest.mark.parametrize("case", sorted(BAD_JSON))
def test_bad_questionnaire_gives_one_line_and_writes_nothing(tmp_path, case):
    make, fragments = BAD_JSON[case]
    raw = write_raw(tmp_path, make())
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        build_release(registry.benchmark("cdeval"), raw, out, seed=0, progress=NOOP)
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert not (out / "cdeval").exists() and not any(out.glob(".cdeval*"))


BAD_CSV = {
    "non-numeric score": ("ctr;country;pdi;idv;mas;uai;ltowvs;ivr\nAAA;A;1;2;3;4;5;6\nBBB;B;1;2;3;abc;5;6\n",
                          ["hofstede/scores.csv", "row 2", "column uai", "'abc'"]),
    "wrong delimiter": ("ctr,country,pdi,idv,mas,uai,ltowvs,ivr\nAAA,A,1,2,3,4,5,6\n",
                        ["hofstede/scores.csv", "wrong delimiter", "';'"]),
    "missing column": ("ctr;country;pdi;idv;mas;uai;ltowvs\nAAA;A;1;2;3;4;5\n", ["column ivr", "missing column"]),
    "ragged row": ("ctr;country;pdi;idv;mas;uai;ltowvs;ivr\nAAA;A;1;2;3;4;5;6;7\n", ["row 1", "9 fields"]),
}


@pytest.mark.parametrize("case", sorted(BAD_CSV))
def test_bad_hofstede_file_gives_one_line(tmp_path, case):
    text, fragments = BAD_CSV[case]
    raw = write_raw(tmp_path, countries=text)
    with pytest.raises(InputError) as caught:
        build_release(registry.benchmark("cdeval"), raw, tmp_path / "out", seed=0, progress=NOOP)
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_missing_hofstede_folder_is_an_input_error(tmp_path):
    raw = write_raw(tmp_path)
    shutil.rmtree(raw / "hofstede")
    with pytest.raises(InputError, match="hofstede"):
        build_release(registry.benchmark("cdeval"), raw, tmp_path / "out", seed=0, progress=NOOP)


def test_cli_reports_a_bad_file_in_one_line_with_exit_2(tmp_path):
    raw = write_raw(tmp_path, _modified(4, **{"Option 2": None}))
    result = CliRunner().invoke(app, ["build", "cdeval", "--raw", str(raw), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "row 5, column Option 2" in result.output
    assert not (tmp_path / "out" / "cdeval").exists()


def test_item_defects_go_to_quarantine_with_a_reason(tmp_path):
    items = sample_items()[:42]  # one item per dimension and domain
    items[3]["Option 2"] = "  " + items[3]["Option 1"].upper() + " "  # identical options (case, spacing)
    items[8]["Option 1"] = "   "  # empty option
    items.append(dict(items[20]))  # exact duplicate of item 21
    items.append({**items[30], "Dimension": "PDI"})  # same question + options under another dimension
    countries = SAMPLE_CSV.read_text(encoding="utf-8") + "USA;U.S.A. again;1;2;3;4;5;6\r\n"
    raw = write_raw(tmp_path, items, countries)
    folder, verdict = build_release(registry.benchmark("cdeval"), raw, tmp_path / "out", seed=0, progress=NOOP)
    accounting = manifest_of(folder)["accounting"]
    assert accounting["quarantined_by_rule"] == {"identical_options": 1, "empty_text": 1, "duplicate_question": 2,
                                                 "duplicate_country": 1}
    assert accounting["rows_read"] == len(items) + 9 == accounting["rows_kept"] + accounting["rows_quarantined"]
    reasons = {p.stem: pl.read_parquet(p) for p in (folder / "quarantine").glob("*.parquet")}
    assert reasons["identical_options"]["item"].to_list() == [4]
    assert reasons["empty_text"]["reason"].to_list() == ["empty option_1"]
    assert reasons["duplicate_question"]["item"].to_list() == [43, 44]
    assert "item 21 of cdeval/items.json" in reasons["duplicate_question"]["reason"][0]
    assert "already in row 8" in reasons["duplicate_country"]["reason"][0]
    assert read_config(folder, "questions").height == 42 - 2
    # The builder dropped the defects, so the release passes; the two items it lost leave gaps only.
    assert verdict["failed"] == 0


# ---------------------------------------------------------------------------------------------------------------
# Reference: the real CDEval.json and the Hofstede 2015 CSV
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.reference
@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference data absent: {REFERENCE}")
def test_reference_release_counts_and_stats(tmp_path):
    """Slow: builds CDEval from the authors' real files and computes BLEU over them."""
    from nltk.translate.bleu_score import sentence_bleu

    for path in (REAL_JSON, REAL_CSV):
        if not path.is_file():
            pytest.skip(f"reference file absent: {path}")
    raw = tmp_path / "raw"
    (raw / "cdeval").mkdir(parents=True)
    (raw / "hofstede").mkdir()
    (raw / "cdeval" / REAL_JSON.name).symlink_to(REAL_JSON)
    (raw / "hofstede" / REAL_CSV.name).symlink_to(REAL_CSV)

    start = time.perf_counter()
    folder, verdict = build_release(registry.benchmark("cdeval"), raw, tmp_path / "out", seed=0, progress=NOOP)
    seconds = time.perf_counter() - start
    assert verdict["failed"] == 0, verdict

    items = json.loads(REAL_JSON.read_text(encoding="utf-8"))
    questions = read_config(folder, "questions")
    stats = read_config(folder, "stats")
    assert len(items) == questions.height == 2953
    dimension_counts = dict(Counter(questions["dimension"]))
    assert dimension_counts == {"PDI": 512, "IDV": 472, "UAI": 530, "MAS": 452, "LTO": 485, "IVR": 502}
    assert dimension_counts == dict(Counter(item["Dimension"] for item in items))
    assert dict(Counter(questions["domain"])) == dict(Counter(item["Domain"] for item in items))
    prompts = dict(zip(stats["group"], stats["prompts"]))
    assert {d: prompts[d] for d in dimension_counts} == dimension_counts
    assert {d: prompts[d] for d in DOMAINS} == dict(Counter(item["Domain"] for item in items))
    assert questions["id"].to_list() == [expected_id({k: v.strip() for k, v in item.items()}) for item in items]

    accounting = manifest_of(folder)["accounting"]
    with REAL_CSV.open(encoding="utf-8", newline="") as handle:
        countries = list(csv.DictReader(handle, delimiter=";"))
    assert accounting["rows_read"] == len(items) + len(countries) == accounting["rows_kept"]
    hofstede = read_config(folder, "hofstede")
    assert hofstede.height == len(countries) == 110
    usa = hofstede.filter(pl.col("country_code") == "USA").row(0, named=True)
    assert tuple(usa.values())[:8] == ("USA", "U.S.A.", 40, 91, 46, 62, 26, 68)  # the 2015 file, not Table 10
    assert usa["version"].startswith("6-dimensions-for-website-2015-08-16.csv")
    assert manifest_of(folder)["provenance"]["known_inputs"]  # both files recognised by sha256

    # Self-BLEU equals nltk's sentence_bleu (every other item of the dimension as references) on sampled items.
    rng = random.Random(0)
    docs = {d: [cdeval.prompt_tokens(*(item[k].strip() for k in KEYS[2:])) for item in items if item["Dimension"] == d]
            for d in dimension_counts}
    fast = {d: cdeval.self_bleu_scores(group) for d, group in docs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d, group in docs.items():
            for i in rng.sample(range(len(group)), 3):
                assert fast[d][i] == pytest.approx(sentence_bleu(group[:i] + group[i + 1:], group[i]), rel=1e-12)
            assert dict(zip(stats["group"], stats["self_bleu"]))[d] == pytest.approx(sum(fast[d]) / len(group))

    # Table 1 (paper): Avg. Len. reproduced by whitespace words; Distinct-2 and Self-BLEU within the gap the card
    # states (0.009 and 0.016, measured with this definition).
    table_1 = {"PDI": (46.371, 0.504, 0.356), "IDV": (44.360, 0.517, 0.284), "UAI": (44.761, 0.578, 0.287),
               "MAS": (37.787, 0.589, 0.258), "LTO": (46.623, 0.536, 0.307), "IVR": (45.022, 0.561, 0.284)}
    by_group = {r["group"]: r for r in stats.iter_rows(named=True)}
    for d, (length, distinct, bleu) in table_1.items():
        assert by_group[d]["avg_length_words"] == pytest.approx(length, abs=0.01)
        assert by_group[d]["distinct_2"] == pytest.approx(distinct, abs=0.01)
        assert by_group[d]["self_bleu"] == pytest.approx(bleu, abs=0.017)
    with pl.Config(tbl_rows=20, tbl_cols=10, tbl_width_chars=160, float_precision=4):
        print(f"\nCDEval stats from the real release (build + validation {seconds:.1f} s):\n{stats}")
    assert seconds < 60
