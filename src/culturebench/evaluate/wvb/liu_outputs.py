"""Liu, Kaneko and Chu 2025's released outputs scored under their protocol (issue #61): ``culturebench score wvb
--responses THEIR/results/.../results.csv`` (a results.csv is recognised by its columns id, choice_keys, response).

Their files (nlply/global-opinion-alignment, no licence: read from the user's copy, never shipped) hold per WVS-7
question the distribution a model states: ``response`` a dict of answer code -> percentage string. Their score
(their ``show_results/country_level.ipynb``, reproduced here from its definition, not run):

- the questions: the file's rows of ``type`` "Opinion-Dependent" (their 144), each with its ``choice_keys``;
- the model's distribution: ``response`` read as a Python literal (``ast.literal_eval``; where that fails, after
  quoting ``N: P%`` pairs as ``'N': 'P%'``), each value ``float(v.strip('%')) / 100``; a row that does not read so
  is counted, warned and left out (their notebook stops there);
- a country's distribution: the unweighted count of its respondents' answers on the choice keys, in the survey's
  own codes (raw WVS-7 codes: before WVB's answer_adjustment recodes), other codes dropped; countries by
  ``B_COUNTRY``; a question none of whose keys the country answered is left out;
- per question, when the two distributions have as many keys, ``1 - W1 / (N - 1)`` with W1
  ``scipy.stats.wasserstein_distance(s, s, p, q)`` on the model's keys ``s`` (weights normalised), the model's
  and the country's values each in the order of their sorted keys (``pair_by_sorted_keys``); the mean over the
  questions both sides have is the country's score (their notebook prints it rounded to 4 decimals).

Their respondents are every row of WVS-7 (their ``WV7.csv``): read here from the raw WVS-7 files the release was
built from (``--raw``, default ``raw/``; each file checked against the release's manifest), since the release holds
recoded answers (Q241-Q249's 0 merged into 1, Q111's 3 dropped) and quarantines rows the survey keeps (a file
whose D_INTERVIEW repeats, Uruguay's in v5.0); ``--weights design`` weights them by W_WEIGHT instead (not theirs).

RQ2 files (``results/RQ2/<method>/<Country>/<model>/results.csv``): the steered model's similarity to the steered
country and its gain over the same model's RQ1 run (``results/RQ1/<model>/results.csv`` beside them, or
``--liu-baseline``), per question, averaged; both scored for the steered country as their ``rq2_results.py`` scores
them (``facts/liu2025_scoring.json``: keys in the response's order on positions 1..N, the country's five few-shot
questions left out; ``rq2_similarity_rows``); sensitivity files (``results/Discussion/sensitivity/<variant>/<model>``):
per country and per question how far the variant's scores moved from the RQ1 run's (``sensitivity.json``).
"""

from __future__ import annotations

import ast
import csv
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import numpy as np
import polars as pl

from culturebench.errors import InputError

COLUMNS = ("id", "choice_keys", "response")
"""The columns that make a file Liu et al.'s results.csv."""
QUESTION_TYPE = "Opinion-Dependent"
"""Their question set: the rows of this ``type`` (their notebooks' filter; 144 questions)."""
PAIRS = re.compile(r"(\d+):\s*([\d.]+%)")
"""Their notebook's second reading of a response: ``N: P%`` pairs quoted as ``'N': 'P%'``."""
SENSITIVITY_FILE = "sensitivity.json"


@dataclass
class StatedFile:
    """One results.csv read as their notebook reads it: question -> (choice keys, the model's code -> share in the
    order the response gives them), and what was left out."""

    path: Path
    keys: dict[str, list[str]] = field(default_factory=dict)
    stated: dict[str, dict] = field(default_factory=dict)
    unreadable: list[tuple[int, str]] = field(default_factory=list)
    """(data row, question id) of each response that does not read as a distribution."""


def is_results_file(path: Path) -> bool:
    """Whether ``path`` is a CSV whose header has Liu et al.'s columns (id, choice_keys, response)."""
    path = Path(path)
    if path.is_dir() or path.suffix.lower() != ".csv":
        return False
    with open(path, encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), [])
    return set(COLUMNS) <= set(header)


def stated_share(value) -> float:
    """A stated percentage ('12.5%') as a share (0.125), as their notebook reads it."""
    return float(value.strip("%")) / 100


def read_stated(path: Path) -> StatedFile:
    """A results.csv: the rows of their question type (every row when the file has no ``type``), the first row of
    each id; a response that neither reading makes a dict of percentages is counted in ``unreadable``."""
    path = Path(path)
    out = StatedFile(path)
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"not a results.csv of Liu et al. (no column {', '.join(missing)})", file=path)
        for row_number, row in enumerate(reader, start=1):
            question = (row["id"] or "").strip()
            if "type" in row and row["type"] != QUESTION_TYPE or question in out.keys:
                continue
            try:
                keys = [str(k) for k in ast.literal_eval(row["choice_keys"])]
            except (ValueError, SyntaxError, TypeError):
                raise InputError(f"choice_keys of {question!r} is not a list ({row['choice_keys']!r})", file=path,
                                 row=row_number, column="choice_keys") from None
            out.keys[question] = keys
            shares = _read_response(row["response"])
            if shares is None:
                out.unreadable.append((row_number, question))
            else:
                out.stated[question] = shares
    return out


def _read_response(text: str | None) -> dict | None:
    """Their notebook's two readings of a response (a literal; else with ``N: P%`` pairs quoted), each value a
    percentage string; None where neither gives a dict of them whose shares sum above 0."""
    for candidate in (text, PAIRS.sub(r"'\1': '\2'", text or "")):
        try:
            literal = ast.literal_eval(candidate or "")
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if not isinstance(literal, dict) or not literal:
            return None
        try:
            sorted(literal)
        except TypeError:
            return None
        try:
            shares = {key: stated_share(value) for key, value in literal.items()}
            [int(key) for key in shares]
        except (AttributeError, TypeError, ValueError):
            return None
        total = sum(shares.values())
        return shares if np.isfinite(total) and total > 0 and min(shares.values()) >= 0 else None
    return None


def wasserstein_on_keys(codes: np.ndarray, p: np.ndarray, q: np.ndarray) -> float:
    """W1 between two distributions with the same support ``codes`` (weights normalised): the integral of the
    gap between their CDFs, as ``scipy.stats.wasserstein_distance(codes, codes, p, q)``."""
    order = np.argsort(codes, kind="stable")
    codes, p, q = codes[order].astype(float), p[order] / p.sum(), q[order] / q.sum()
    return float(np.sum(np.abs(np.cumsum(p) - np.cumsum(q))[:-1] * np.diff(codes)))


def pair_by_sorted_keys(model: dict, human: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes, model weights, country weights) as their notebook pairs them: the model's keys sorted as given
    (strings sort '10' before '2'; int keys numerically), the country's by its string keys, matched by position;
    the support is the model's keys. Where both have the same keys as strings (every file but a few rows), this
    is the plain pairing of code with code."""
    model_items, human_items = sorted(model.items()), sorted(human.items())
    return (np.array([int(k) for k, _ in model_items]), np.array([v for _, v in model_items], dtype=float),
            np.array([v for _, v in human_items], dtype=float))


def human_counts(files: dict[Path, str], questions: list[str], root: Path, weights: str) -> pl.DataFrame:
    """(country ISO alpha-3, question_id, code, count) of every row of the raw WVS-7 files (path -> the sha256
    the release's manifest gives it, checked as they are read): counts of each raw code (weights ``none``, theirs)
    or sums of W_WEIGHT (``design``)."""
    from culturebench.raw.wvs import read_respondents

    weight = "W_WEIGHT" if weights == "design" else None
    table, inputs = read_respondents(list(files), ["B_COUNTRY", *questions], root=root, weight=weight)
    for read in inputs:
        if files[read.path] and read.sha256 != files[read.path]:
            raise InputError(f"{read.name} differs from the file the release was built from (sha256)",
                             file=read.path)
    numeric = _iso_of_numeric()
    long = (table.lazy().select(pl.col("B_COUNTRY").replace_strict(numeric, default=None, return_dtype=pl.String)
                                .alias("country"),
                                (pl.col("weight") if weight else pl.lit(1.0)).alias("count"), *questions)
            .unpivot(index=["country", "count"], on=questions, variable_name="question_id", value_name="code")
            .drop_nulls(["country", "code"])
            .group_by("country", "question_id", "code").agg(pl.col("count").sum())
            .sort("country", "question_id", "code"))
    return long.collect()


def _iso_of_numeric() -> dict[int, str]:
    from culturebench.evaluate.wvb.opinions import wvs_countries

    return {int(row["iso_numeric"]): row["iso_alpha3"] for row in wvs_countries()}


def country_shares(counts: pl.DataFrame, keys: dict[str, list[str]]) -> dict[tuple[str, str], dict[str, float]]:
    """(country, question) -> {choice key: share} over the question's choice keys (their counts renormalised;
    other codes dropped); a question none of whose keys the country answered is absent."""
    wanted = pl.DataFrame([(q, int(k), k) for q, ks in keys.items() for k in ks],
                          schema={"question_id": pl.String, "code": pl.Int64, "key": pl.String}, orient="row")
    on_keys = counts.join(wanted, on=["question_id", "code"], how="inner")
    out: dict[tuple[str, str], dict[str, float]] = {}
    for (country, question), group in on_keys.group_by("country", "question_id", maintain_order=True):
        total = float(group["count"].sum())
        if total > 0:
            present = dict(zip(group["key"], group["count"].cast(pl.Float64)))
            out[(country, question)] = {k: present.get(k, 0.0) / total for k in keys[question]}
    return out


def similarity_rows(stated: StatedFile, humans: dict[tuple[str, str], dict[str, float]], steer: str | None,
                    only_country: str | None = None) -> list[tuple]:
    """(steer, country, question_id, w1) rows: 1 - W1 / (N - 1) per question both sides have with as many keys
    (their notebook skips the others), against every country or ``only_country``."""
    rows = []
    for (country, question), human in humans.items():
        if only_country is not None and country != only_country:
            continue
        model = stated.stated.get(question)
        if model is None or len(model) != len(human) or len(model) < 2:
            continue
        codes, p, q = pair_by_sorted_keys(model, human)
        rows.append((steer, country, question, 1 - wasserstein_on_keys(codes, p, q) / (len(model) - 1)))
    return rows


def rq2_similarity_rows(stated: StatedFile, counts: dict[tuple[str, str], dict[int, float]], steer: str | None,
                        country: str) -> list[tuple]:
    """(steer, country, question_id, w1) rows of ``country`` as their rq2_results.py scores a file
    (``facts/liu2025_scoring.json`` ``rq2_pairing``), the questions of ``rq2_left_out`` left out."""
    from culturebench.facts import read as read_facts

    left_out = set(read_facts("liu2025_scoring")["rq2_left_out"].get(country, []))
    rows = []
    for question, model in stated.stated.items():
        human = counts.get((country, question))
        if question in left_out or human is None or question not in stated.keys:
            continue
        keys = list(model) + [k for k in stated.keys[question] if k not in model]
        p = np.array([model.get(k, 0.0) for k in keys], dtype=float)
        q = np.array([human.get(int(k), 0.0) for k in keys], dtype=float)
        if q.sum() == 0 or len(keys) < 2:
            continue
        positions = np.arange(1, len(keys) + 1)
        rows.append((steer, country, question, 1 - wasserstein_on_keys(positions, p, q) / (len(keys) - 1)))
    return rows


def code_counts(counts: pl.DataFrame) -> dict[tuple[str, str], dict[int, float]]:
    """(country, question) -> {raw code: count} of ``human_counts``."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for country, question, code, n in counts.iter_rows():
        out.setdefault((country, question), {})[int(code)] = float(n)
    return out


def similarity_frame(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"steer": pl.String, "country": pl.String, "question_id": pl.String,
                                      "w1": pl.Float64}, orient="row").sort("steer", "country", "question_id",
                                                                             nulls_last=False)


@dataclass(frozen=True)
class Layout:
    """Where a results.csv sits in their results tree: ``kind`` RQ1, RQ2 (``method``, ``country``) or sensitivity
    (``method`` the variant); ``model`` the path below; ``baseline`` the same model's RQ1 file."""

    kind: str
    model: str
    method: str | None = None
    country: str | None = None
    baseline: Path | None = None


def layout(path: Path) -> Layout:
    """The file's place in their tree (results/RQ1/<model>/, results/RQ2/<method>/<Country>/<model>/,
    results/Discussion/sensitivity/<variant>/<model>/); RQ1 when it is none of these."""
    path = Path(path).resolve()
    parts = PurePosixPath(path.as_posix()).parts
    if "results" not in parts:
        return Layout("RQ1", path.parent.name)
    at = len(parts) - 1 - parts[::-1].index("results")
    root, below = Path(*parts[:at + 1]), list(parts[at + 1:-1])
    if below[:1] == ["RQ2"] and len(below) >= 4:
        model = "/".join(below[3:])
        return Layout("RQ2", model, below[1], below[2], root / "RQ1" / model / "results.csv")
    if below[:2] == ["Discussion", "sensitivity"] and len(below) >= 4:
        model = "/".join(below[3:])
        return Layout("sensitivity", model, below[2], None, root / "RQ1" / model / "results.csv")
    return Layout("RQ1", "/".join(below[1:]) if below[:1] == ["RQ1"] else path.parent.name)


def raw_files(release: Path, raw: Path) -> dict[Path, str]:
    """The raw WVS-7 respondent files the release was built from (its manifest's inputs under ``wvs/``) in
    ``raw``, each with the sha256 the manifest gives it: one line naming the first missing file."""
    from culturebench.raw.wvs import SUFFIXES
    from culturebench.release_reader import Release

    inputs = [i for i in Release.open(release).manifest.inputs
              if str(i.get("name", "")).startswith("wvs/") and str(i["name"]).lower().endswith(SUFFIXES)]
    if not inputs:
        raise InputError("the release's manifest names no WVS-7 respondent files (inputs wvs/...): Liu et al.'s "
                         "protocol counts the survey's own codes, which the release does not keep", file=release)
    files = {}
    for entry in inputs:
        path = Path(raw) / entry["name"]
        if not path.is_file():
            raise InputError(f"the release's WVS-7 file {entry['name']} is not in the raw folder (--raw {raw}): "
                             "Liu et al.'s protocol counts the survey's own codes, which the release does not keep",
                             file=path)
        files[path] = entry.get("sha256")
    return files


def survey_questions(files: dict[Path, str]) -> set[str]:
    """The columns every one of the raw WVS-7 files has (a file read whole, SPSS or Stata, is not checked)."""
    from culturebench.raw.wvs import header_columns

    headers = [set(columns) for path in files if (columns := header_columns(path)) is not None]
    return set.intersection(*headers) if headers else set()


def country_of(name: str) -> str:
    from culturebench.evaluate.reports.countries import country_code

    code = country_code(name)
    if code is None:
        raise InputError(f"no ISO code for the steered country {name!r} of the RQ2 path")
    return code


def score_stated(path: Path, options) -> tuple[dict, list[Path]]:
    """The country view of one results.csv (module docstring) into ``options.out``: countries.json, its
    figures, for a sensitivity file sensitivity.json; returns (metrics.json's content, the paths written)."""
    from culturebench.evaluate.reports import countries as country_files
    from culturebench.evaluate.reports.country_plots import series, write_figures
    from culturebench.evaluate.wvb.opinions import country_view, described

    out = Path(options.out)
    weights = options.weights or "none"
    place = layout(path)
    baseline = Path(options.liu_baseline) if options.liu_baseline else place.baseline
    stated = read_stated(path)
    notes: list[str] = []
    runs = {"scored": stated}
    if place.kind in ("RQ2", "sensitivity"):
        if baseline is None or not baseline.is_file():
            raise InputError(f"the {place.kind} file needs the same model's RQ1 results.csv (looked for "
                             f"{baseline}; give it with --liu-baseline)", file=path)
        runs["baseline"] = read_stated(baseline)
    for run in runs.values():
        if run.unreadable:
            rows = ", ".join(f"row {r} ({q})" for r, q in run.unreadable[:5])
            notes.append(f"{run.path}: {len(run.unreadable)} responses do not read as a distribution, left out: "
                         f"{rows}{' ...' if len(run.unreadable) > 5 else ''}")
    keys = {**runs.get("baseline", stated).keys, **stated.keys}
    files = raw_files(options.release, options.raw)
    surveyed = survey_questions(files)
    lacking = sorted(set(keys) - surveyed, key=_question_order)
    if lacking:
        notes.append(f"questions the release's WVS-7 files lack, left out: {', '.join(lacking)}")
    keys = {q: k for q, k in keys.items() if q in surveyed}
    outside = sorted(set(keys) - set(_release_question_ids(options.release)), key=_question_order)
    if outside:
        notes.append(f"questions not among the release's value questions, scored from the survey's files as "
                     f"theirs are: {', '.join(outside)}")
    counts = human_counts(files, sorted(keys, key=_question_order), Path(options.raw), weights)
    humans = country_shares(counts, keys)
    if place.kind == "RQ2":
        steered = country_of(place.country)
        by_code = code_counts(counts)
        if not any(country == steered for country, _ in by_code):
            notes.append(f"the steered country {place.country} ({steered}) has no respondents in the release's "
                         "WVS-7 files: no steered similarity")
        rows = ([r for r in similarity_rows(runs["baseline"], humans, None) if r[1] != steered]
                + rq2_similarity_rows(runs["baseline"], by_code, None, steered)
                + rq2_similarity_rows(stated, by_code, steered, steered))
        notes.append(f"{steered}: scored as their rq2_results.py scores steered runs (keys in the response's order "
                     "on positions 1..N, its five few-shot questions left out), the RQ1 run's similarity to it too")
    else:
        rows = similarity_rows(stated, humans, None)
    table = similarity_frame(rows)
    countries = _countries(counts)
    humans_frame = pl.DataFrame([(c, q) for c, q in humans], schema={"country": pl.String, "question_id": pl.String},
                                orient="row")
    view, top = country_view(table, countries, humans_frame, headline_measure="similarity_w1")
    for entry in view.values():
        entry.pop("n_questions_answered_by_country", None)
    protocol = {"protocol": "liu2025", "kind": place.kind, "method": place.method,
                "steered_country": place.country, "baseline": None if "baseline" not in runs else str(baseline),
                "n_questions": len(stated.stated), "n_unreadable": len(stated.unreadable)}
    data = country_files.view(view, benchmark="wvb", measure="similarity_w1",
                              measure_label="1 - W1 / (N - 1) (Liu, Kaneko and Chu 2025)",
                              measures=described(["similarity_w1"]), model=place.model, notes=notes,
                              reading="stated (their results.csv)", weights=weights, weighted=weights == "design",
                              steer=place.method if place.kind == "RQ2" else None, **protocol)
    metrics = {"countries": {**top, **protocol, "model": place.model, "weights": weights, "notes": notes,
                             "file": country_files.COUNTRIES_FILE}}
    out.mkdir(parents=True, exist_ok=True)
    written = [country_files.write_countries(out, data)]
    extra = [(f"steered ({place.method})", series(data, "steered_w1", "interval_steered_w1"))] \
        if place.kind == "RQ2" else []
    written += write_figures(data, out, extra_series=extra)
    if place.kind == "sensitivity":
        moved = sensitivity(stated, runs["baseline"], humans)
        metrics["sensitivity"] = {k: moved[k] for k in ("variant", "mean_abs_country_change",
                                                        "mean_abs_question_change")}
        moved["variant"] = place.method
        siblings = sensitivity_files(path)
        moved["across_variants"] = across_variants({BASELINE_VARIANT: runs["baseline"],
                                                    **{v: read_stated(f) for v, f in siblings.items()}})
        metrics["sensitivity"] |= {"consistency_across_variants": moved["across_variants"]["consistency"],
                                   "similarity_across_variants": moved["across_variants"]["mean_similarity"],
                                   "variants": moved["across_variants"]["variants"]}
        written.append(country_files.write_json_file(out / SENSITIVITY_FILE, moved))
        metrics["sensitivity"]["variant"] = place.method
    return metrics, written


def sensitivity(variant: StatedFile, baseline: StatedFile, humans: dict[tuple[str, str], dict[str, float]]) -> dict:
    """How far a sensitivity variant moved from the RQ1 run: per country its score (mean over the questions both
    runs and the country have) under each and the change; per question the mean over countries of the change of
    its score and the W1 / (N - 1) between the two stated distributions."""
    plain = {(c, q): s for _, c, q, s in similarity_rows(baseline, humans, None)}
    moved = {(c, q): s for _, c, q, s in similarity_rows(variant, humans, None)}
    both = sorted(set(plain) & set(moved))
    per_country: dict[str, dict] = {}
    per_question: dict[str, dict] = {}
    for country in sorted({c for c, _ in both}):
        pairs = [(plain[k], moved[k]) for k in both if k[0] == country]
        a, b = np.mean([p for p, _ in pairs]), np.mean([m for _, m in pairs])
        per_country[country] = {"baseline": float(a), "variant": float(b), "change": float(b - a),
                                "n_questions": len(pairs)}
    for question in sorted({q for _, q in both}, key=_question_order):
        changes = [moved[k] - plain[k] for k in both if k[1] == question]
        entry = {"mean_change": float(np.mean(changes)), "n_countries": len(changes)}
        first, second = baseline.stated.get(question), variant.stated.get(question)
        if first and second and sorted(map(str, first)) == sorted(map(str, second)) and len(first) > 1:
            codes = np.array(sorted(int(k) for k in first))
            p = np.array([_value(first, c) for c in codes]); q = np.array([_value(second, c) for c in codes])
            entry["stated_w1"] = wasserstein_on_keys(codes, p, q) / (len(codes) - 1)
        per_question[question] = entry
    return {"variant": None,
            "mean_abs_country_change": float(np.mean([abs(e["change"]) for e in per_country.values()]))
            if per_country else None,
            "mean_abs_question_change": float(np.mean([abs(e["mean_change"]) for e in per_question.values()]))
            if per_question else None,
            "countries": per_country, "questions": per_question}


BASELINE_VARIANT = "RQ1"
"""The variant name of the RQ1 run (their options in the questionnaire's order, plain numbers) beside their
sensitivity variants."""
MODAL_RULE = "the code with the largest stated share; on a tie the lowest code"


def sensitivity_files(path: Path) -> dict[str, Path]:
    """Every sensitivity variant of the model of ``path`` (a results/Discussion/sensitivity/<variant>/<model>/
    results.csv): variant name -> its results.csv, in name order."""
    place = layout(path)
    folder = Path(path).resolve().parents[len(PurePosixPath(place.model).parts) + 1]
    return {v.name: v / place.model / "results.csv" for v in sorted(folder.iterdir())
            if (v / place.model / "results.csv").is_file()}


def modal_code(shares: dict) -> str:
    """``MODAL_RULE``."""
    return str(min(shares, key=lambda k: (-shares[k], int(k))))


def stated_similarity(first: dict, second: dict) -> float | None:
    """1 - W1 / (N - 1) between two stated distributions on the same codes (None when their codes differ or N < 2)."""
    if sorted(map(str, first)) != sorted(map(str, second)) or len(first) < 2:
        return None
    codes = np.array(sorted(int(k) for k in first))
    p = np.array([_value(first, c) for c in codes]); q = np.array([_value(second, c) for c in codes])
    return 1 - wasserstein_on_keys(codes, p, q) / (len(codes) - 1)


def across_variants(files: dict[str, StatedFile]) -> dict:
    """A model's order sensitivity per question across its runs (``files``: variant -> results.csv read; the RQ1
    run and their sensitivity variants: options shuffled with their codes kept, other number formats): the
    variants report of issue #63 (``variant_report.report``) on each question's modal code (``MODAL_RULE``; its position
    is where the variant's ``choice_keys`` list it), so per question the share of variants whose modal code is the
    question's modal one and per variant the share of modal codes at each listed position; with, per question, the
    mean over pairs of variants of 1 - W1 / (N - 1) between their stated distributions; per variant the headline
    ``mean_similarity_to_rq1`` (over the questions both have)."""
    from itertools import combinations

    from culturebench.evaluate.reports import variant_report

    names = list(files)
    answers = [variant_report.VariantAnswer(v, q, modal_code(shares), files[v].keys[q].index(modal_code(shares)) + 1
                                      if modal_code(shares) in files[v].keys[q] else None, (v, q))
               for v in names for q, shares in files[v].stated.items()]
    baseline = files[names[0]]

    def headline(variant: str) -> dict[str, float]:
        values = [x for q, shares in files[variant].stated.items() if q in baseline.stated
                  and (x := stated_similarity(baseline.stated[q], shares)) is not None]
        return {"mean_similarity_to_rq1": float(np.mean(values))} if values else {}

    block = variant_report.report(answers, names, lambda variant: variant_report.VariantScore(headline(variant)))
    similarity = {}
    for question in sorted({a.unit for a in answers}, key=_question_order):
        pairs = [x for a, b in combinations(names, 2) if question in files[a].stated and question in files[b].stated
                 and (x := stated_similarity(files[a].stated[question], files[b].stated[question])) is not None]
        if pairs:
            similarity[question] = float(np.mean(pairs))
    block["per_item"] = {q: block["per_item"][q] for q in sorted(block["per_item"], key=_question_order)}
    block.update({"modal_rule": MODAL_RULE, "mean_pairwise_similarity": similarity,
                  "mean_similarity": float(np.mean(list(similarity.values()))) if similarity else None})
    return block


def _value(shares: dict, code: int) -> float:
    return float(shares.get(str(code), shares.get(code, 0.0)))


def _countries(counts: pl.DataFrame) -> pl.DataFrame:
    from culturebench.evaluate.wvb.opinions import country_names

    names = country_names()
    codes = sorted(set(counts["country"]))
    return pl.DataFrame({"country": codes, "name": [names.get(c) for c in codes]})


def _release_question_ids(release: Path) -> list[str]:
    """The value questions of the release (its questions config)."""
    from culturebench.evaluate.wvb.items import _collect
    from culturebench.release_reader import Release

    frame = Release.open(release).scan("questions").select(pl.col("question_id"))
    return _collect(frame, Path(release), "questions")["question_id"].to_list()


def _question_order(question: str) -> tuple:
    digits = re.sub(r"\D", "", question)
    return (int(digits) if digits else 0, question)




def summary(metrics: dict) -> str:
    """The command line's lines for a scored results.csv: what was scored, the mean over countries, the steering
    gain or the sensitivity's movement, then a ``warning:`` per note."""
    view = metrics["countries"]
    what = {"RQ1": "no steering", "RQ2": f"steered by {view['method']} to {view['steered_country']}",
            "sensitivity": f"sensitivity variant {view['method']}"}[view["kind"]]
    mean = view.get("mean_similarity_w1")
    whose = " of the RQ1 run" if view["kind"] == "RQ2" else ""
    line = (f"wvb (Liu, Kaneko and Chu 2025's protocol): {view['model']}, {what}: {view['n_questions']} stated "
            f"distributions ({view['n_unreadable']} unreadable), {view['n_countries']} countries, mean 1 - W1/(N-1)"
            f"{whose} {'n/a' if mean is None else f'{mean:.4f}'} (weights {view['weights']})")
    lines = [line]
    if view["kind"] == "RQ2" and view.get("mean_gain_w1") is not None:
        lines.append(f"steered similarity to {view['steered_country']} {view['mean_steered_w1']:.4f}, gain over the "
                     f"RQ1 run {view['mean_gain_w1']:+.4f}")
    moved = metrics.get("sensitivity")
    if moved and moved.get("mean_abs_country_change") is not None:
        lines.append(f"moved from the RQ1 run: mean |change| per country {moved['mean_abs_country_change']:.4f}, "
                     f"per question {moved['mean_abs_question_change']:.4f} ({SENSITIVITY_FILE})")
    if moved and moved.get("consistency_across_variants") is not None:
        similarity = moved["similarity_across_variants"]
        lines.append(f"across the runs {', '.join(moved['variants'])}: mean consistency of the modal answer per "
                     f"question {moved['consistency_across_variants']:.4f}, mean similarity between runs "
                     f"{'n/a' if similarity is None else f'{similarity:.4f}'} ({SENSITIVITY_FILE} across_variants)")
    return "\n".join([*lines, *(f"warning: {note}" for note in view["notes"])])
