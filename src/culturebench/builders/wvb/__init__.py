"""WorldValuesBench (Zhao et al., LREC-COLING 2024) from the raw WVS wave-7 files, as in Sec. 2.2-3.1.

raw/wvs/*.{csv,csv.gz,zip,sav,dta} + codebook  ->  participants, questions, examples (long), probe.

Two of the authors' released files (Demon702/WorldValuesBench; no licence, so never shipped) are used when they
are in raw/wvb/ (as ``AUTHORS_FOLDER``), each a route the manifest (``provenance.routes``), the card, ``info``
and every evaluation's run.json name (``ROUTES``):

- ``question_metadata.json`` (their ``dataset_construction/``): the question text of the ``questions`` config and of
  every prompt (Figs. 5-10 use it) and the value scales; without it, rating sentences made from the codebook.
- ``samples.tsv`` (their ``WorldValuesBench/probe/``): the ``probe`` config is exactly its rows whose participant is
  in the input, the others counted per country; without it, our seeded draw from the design.

The paper's choices are data in ``culturebench/facts/wvb.json``: 42 demographic variables, 239 ordinal value
variables of Q1-Q259 with their scales and 12 categories, the 15 recodes that make scales monotonic, and the
probe design (first 3 questions of each category; 6 continents x urban/rural x 4 education levels; 5
participants per group and question, from the validation split).
"""

from __future__ import annotations

import csv
import json
from functools import cache
from importlib import resources
from pathlib import Path

import polars as pl

from culturebench.builders.base import BuildOutput, Progress
from culturebench.builders.wvb.card import (  # noqa: F401 - the card is the builder's too (release, audit)
    CARD,
    PROBE_SAMPLE_COLUMNS,
    PROBE_SAMPLES,
    QUESTION_METADATA,
    ROUTES,
    card,
    left_out_rows,
    manifest_card,
)
from culturebench.errors import InputError, excerpt
from culturebench.facts import read as read_facts
from culturebench.io import InputFile, decode_text, input_name, sha256_file
from culturebench.raw.codebook import Codebook
from culturebench.raw.codebook_files import codebook_input, find_codebook, reading_codebook
from culturebench.raw.wvs import SOURCE_FILE, SOURCE_ROW, WEIGHT, check_codes_in_codebook, read_respondents, respondent_files
from culturebench.splits import SPLIT_NAMES, assign_splits, stable_hash
from culturebench.validation.checks import CheckResult, check

NAME = "wvb"
RAW_FOLDER = "wvs"
AUTHORS_FOLDER = "wvb"
"""RAW/wvb/: the authors' released files (question_metadata.json, samples.tsv), kept apart from the WVS files."""
STAGES = ("read", "participants", "questions", "examples", "probe")
WEIGHT_COLUMN = "W_WEIGHT"
"""WVS-7's design weight, kept in ``participants`` (null where the input files lack it): a country's answer
distribution is weighted by it (``evaluate wvb --no-demographics``'s country view, issue #56)."""
PROBE_SPLIT = "validation"
"""The probe's split name in the release, and the split our draw takes participants from (CREATION_ROUTES)."""


@cache
def facts() -> dict:
    return read_facts(NAME)


@cache
def countries() -> pl.DataFrame:
    text = resources.files("culturebench.facts").joinpath("wvs_countries.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    return pl.DataFrame(
        {
            "B_COUNTRY": [int(r["iso_numeric"]) for r in rows],
            "country": [r["iso_alpha3"] for r in rows],
            "continent": [r["continent"] for r in rows],
        }
    )


def key_column() -> str:
    return facts()["participant_key"]


def demographic_variables() -> list[str]:
    return [d["variable"] for d in facts()["demographic"]]


def value_variables() -> list[str]:
    return [v["variable"] for v in facts()["value"]]


def raw_present(raw: Path) -> bool:
    return (raw / RAW_FOLDER).is_dir()


def authors_files(raw: Path) -> tuple[Path, Path]:
    """Where the authors' question_metadata.json and samples.tsv are read (RAW/wvb/); one found in RAW/wvs/
    instead is an error that says where it goes, never silently ignored."""
    authors = raw / AUTHORS_FOLDER
    for name in (QUESTION_METADATA, PROBE_SAMPLES):
        misplaced = raw / RAW_FOLDER / name
        if misplaced.is_file() and not (authors / name).is_file():
            raise InputError(f"{misplaced}: the authors' files go in {authors}/, not beside the WVS respondent files; "
                             f"move {name} there")
    return authors / QUESTION_METADATA, authors / PROBE_SAMPLES


def build(raw: Path, seed: int, progress: Progress) -> BuildOutput:
    folder = raw / RAW_FOLDER
    progress("read")
    files = respondent_files(folder)
    codebook_path = find_codebook(folder)
    columns = [key_column(), *demographic_variables(), *value_variables()]
    with reading_codebook(codebook_path, cache_dir=Path.home() / ".cache" / "culturebench") as finish_codebook:
        table, inputs = read_respondents(files, columns, root=raw, weight=WEIGHT_COLUMN)  # beside the PDF's parse
        codebook = finish_codebook()
    metadata_path, samples_path = authors_files(raw)
    metadata = read_question_metadata(metadata_path) if metadata_path.is_file() else None
    samples = read_probe_samples(samples_path) if samples_path.is_file() else None
    check_codes_in_codebook(table, codebook, value_variables())
    rows_read = table.height
    unique, quarantined = quarantine_duplicate_ids(table)
    # the kept rows' demographic columns, and their answers as Int8 made before filtering: the wide raw table
    # (~0.2 GB on the full survey, Int64 codes) is never copied whole
    kept = table.select(key_column(), *demographic_variables(), WEIGHT, SOURCE_FILE, SOURCE_ROW).filter(unique)
    answers = recoded_answers(table, unique)
    del table
    progress("participants")
    participants = participants_table(kept, codebook, seed)
    progress("questions")
    questions = questions_table(codebook, metadata, source=str(metadata_path))
    progress("examples")
    groups = probe_groups(kept) if samples is None else None
    del kept
    examples = {split: examples_table(answers, participants, split) for split in SPLIT_NAMES}
    progress("probe")
    routes = {"question_text": "codebook" if metadata is None else "authors",
              "probe": "drawn" if samples is None else "authors"}
    provenance: dict = {"routes": {part: ROUTES[part][key] for part, key in routes.items()}}
    if metadata is not None:
        provenance["scale_differences"] = scale_differences(metadata)
        inputs.append(json_input(metadata_path, raw, rows=len(metadata)))
    if samples is None:
        probe = probe_table(examples[PROBE_SPLIT], groups, questions, seed)
    else:
        probe, left_out = released_probe_table(samples, answers, participants, quarantined)
        provenance["probe_left_out"] = left_out
        inputs.append(json_input(samples_path, raw, rows=samples.height))
    return BuildOutput(
        tables={
            "participants": {split: participants.filter(pl.col("split") == split) for split in SPLIT_NAMES},
            "questions": {"full": questions},
            "examples": examples,
            "probe": {PROBE_SPLIT: probe},
        },
        quarantine={"duplicate_participant_id": quarantined} if quarantined.height else {},
        inputs=[*inputs, codebook_input(codebook_path, codebook, raw)],
        rows_read=rows_read,
        rows_kept=participants.height,
        provenance={"codebook": {"file": input_name(codebook_path, raw), "sha256": codebook.sha256,
                                 "variables": len(codebook.variables)}, **provenance},
        card=card(routes, provenance.get("probe_left_out")),
    )


def json_input(path: Path, raw: Path, rows: int) -> InputFile:
    """One of the authors' files as a manifest input."""
    return InputFile(path=path, name=input_name(path, raw), sha256=sha256_file(path), size=path.stat().st_size,
                     rows=rows)


def read_question_metadata(path: Path) -> dict[str, dict]:
    """The authors' question_metadata.json: variable -> {"question": text, "scale": [min, max] (value questions)}.

    Every value and demographic variable of facts/wvb.json must have a non-empty question; a value question also
    integer scale ends (min < max)."""
    text, _ = decode_text(path.read_bytes(), str(path))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"does not parse as JSON ({exc})", file=path) from None
    if not isinstance(data, dict):
        raise InputError("not a JSON object of variables", file=path)
    out = {}
    for variable in [*demographic_variables(), *value_variables()]:
        entry = data.get(variable)
        if not isinstance(entry, dict):
            raise InputError("no entry for this variable", file=path, column=variable)
        question = entry.get("question")
        if not isinstance(question, str) or not question.strip():
            raise InputError("no question text", file=path, column=variable)
        out[variable] = {"question": question}
        if variable in value_variables():
            low, high = entry.get("answer_scale_min"), entry.get("answer_scale_max")
            if not (isinstance(low, int) and isinstance(high, int) and low < high):
                raise InputError(f"answer_scale_min / answer_scale_max ({low!r}, {high!r}) are not two integers "
                                 "min < max", file=path, column=variable)
            out[variable]["scale"] = [low, high]
    return out


def scale_differences(metadata: dict[str, dict]) -> list[dict]:
    """Value questions whose scale in question_metadata.json differs from facts/wvb.json (the file's is used)."""
    return [{"question_id": entry["variable"], "facts": entry["scale"],
             QUESTION_METADATA: metadata[entry["variable"]]["scale"]}
            for entry in facts()["value"] if metadata[entry["variable"]]["scale"] != entry["scale"]]


def read_probe_samples(path: Path) -> pl.DataFrame:
    """The authors' samples.tsv as probe columns (PROBE_SAMPLE_COLUMNS) plus ``row`` (1-based data row); a value
    that cannot be a probe row's is an error naming its row and column."""
    try:
        frame = pl.read_csv(path, separator="\t", infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"cannot be read as TSV ({str(exc).splitlines()[0]})", file=path) from None
    missing = [c for c in PROBE_SAMPLE_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"missing column (header has {excerpt(', '.join(frame.columns))})", file=path,
                         column=missing[0])
    if frame.height == 0:
        raise InputError("file has a header but no data rows", file=path)
    frame = frame.select(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("row"),
                         *(pl.col(c).str.strip_chars().alias(name) for c, name in PROBE_SAMPLE_COLUMNS.items()))
    design = facts()["probe"]
    allowed = {"question_id": value_variables(), "continent": design["continents"],
               "urban_rural": ["Urban", "Rural"], "education_level": list(design["education_levels"])}
    names = {name: column for column, name in PROBE_SAMPLE_COLUMNS.items()}
    for name, values in allowed.items():
        bad = frame.filter(~pl.col(name).is_in(values).fill_null(False))
        if bad.height:
            raise InputError(f"{bad[name][0]!r} is not one of the probe's values ({', '.join(values[:6])}"
                             f"{', ...' if len(values) > 6 else ''})", file=path, row=bad["row"][0], column=names[name])
    frame = frame.with_columns(pl.col("participant_id").cast(pl.Int64, strict=False))
    bad = frame.filter(pl.col("participant_id").is_null())
    if bad.height:
        raise InputError("D_INTERVIEW is not an integer", file=path, row=bad["row"][0], column="D_INTERVIEW")
    repeated = frame.filter(pl.struct("question_id", "participant_id").is_duplicated())
    if repeated.height:
        raise InputError("(Question, D_INTERVIEW) repeats an earlier row", file=path, row=repeated["row"][1],
                         column="D_INTERVIEW")
    return frame


def released_probe_table(samples: pl.DataFrame, answers: pl.DataFrame, participants: pl.DataFrame,
                         quarantined: pl.DataFrame) -> tuple[pl.DataFrame, dict]:
    """The probe from the authors' samples.tsv: its rows whose participant is in the input and answered the
    question (after the recodes), in file order. Also, per reason, the rows left out per country (ISO alpha-3
    from the D_INTERVIEW prefix, which is the WVS country code)."""
    questions = samples["question_id"].unique().sort().to_list()
    asked = (answers.filter(pl.col("participant_id").is_in(samples["participant_id"].implode()))
             .select("participant_id", *questions)
             .unpivot(index="participant_id", variable_name="question_id", value_name="answer"))
    shared = quarantined[key_column()].unique().implode()
    joined = (samples
              .join(participants.select("participant_id", "split"), on="participant_id", how="left")
              .join(asked, on=["participant_id", "question_id"], how="left")
              .with_columns(pl.when(pl.col("split").is_null() & pl.col("participant_id").is_in(shared))
                            .then(pl.lit(f"participant quarantined ({key_column()} shared by several rows)"))
                            .when(pl.col("split").is_null()).then(pl.lit("participant not in the input files"))
                            .when(pl.col("answer").is_null()).then(pl.lit("no answer to the question in the input"))
                            .alias("left_out"))
              .sort("row"))
    left = joined.filter(pl.col("left_out").is_not_null()).with_columns(
        (pl.col("participant_id") // 1_000_000).alias("B_COUNTRY"))
    left = left.join(countries().select("B_COUNTRY", "country"), on="B_COUNTRY", how="left").with_columns(
        pl.col("country").fill_null(pl.lit("code ") + pl.col("B_COUNTRY").cast(pl.String)))
    report = {"rows": samples.height, "kept": samples.height - left.height, "left_out": {
        reason: dict(sorted(part.group_by("country").len().iter_rows()))
        for (reason,), part in sorted(left.partition_by("left_out", as_dict=True).items())}}
    probe = joined.filter(pl.col("left_out").is_null()).select(
        "question_id", "category", "continent", "urban_rural", "education_level", "participant_id",
        pl.col("answer").cast(pl.Int8), pl.col("split").cast(pl.String))
    return probe, report




def quarantine_duplicate_ids(table: pl.DataFrame) -> tuple[pl.Series, pl.DataFrame]:
    """Drop every row whose participant key occurs more than once (WVB Sec. 3.1): the mask of the rows kept, and
    the dropped rows with a reason."""
    key = key_column()
    rows_with_key = table.select(pl.len().over(key)).to_series()
    quarantined = table.filter(rows_with_key > 1)
    reason = (pl.lit(f"{key} ") + pl.col(key).cast(pl.String) + pl.lit(" is shared by ")
              + pl.len().over(key).cast(pl.String) + pl.lit(" rows"))
    return rows_with_key == 1, quarantined.with_columns(reason.alias("reason"))


def participants_table(kept: pl.DataFrame, codebook: Codebook, seed: int) -> pl.DataFrame:
    """One row per participant, demographic codes mapped to codebook text (negative codes -> null)."""
    frame = (
        kept.select(pl.col(key_column()).alias("participant_id"), *demographic_variables(), WEIGHT)
        .join(countries(), on="B_COUNTRY", how="left")
        .sort("participant_id")
    )
    unknown = frame.filter(pl.col("country").is_null())
    if unknown.height:
        first = kept.filter(pl.col("B_COUNTRY") == unknown["B_COUNTRY"][0]).row(0, named=True)
        raise InputError(f"B_COUNTRY code {first['B_COUNTRY']} is not a WVS-7 country known to culturebench",
                         file=first[SOURCE_FILE], row=first[SOURCE_ROW], column="B_COUNTRY")
    return frame.select(
        "participant_id",
        "country",
        "continent",
        assign_splits(frame["participant_id"], seed).alias("split"),
        *[_as_text(variable, codebook) for variable in demographic_variables()],
        pl.col(WEIGHT).alias(WEIGHT_COLUMN),
    )


def _as_text(variable: str, codebook: Codebook) -> pl.Expr:
    """Codebook label for a code; the code itself as text when the codebook lists none (years, ages, IDs)."""
    code = pl.col(variable)
    labels = codebook[variable].valid_choices() if variable in codebook else {}
    text = code.replace_strict(labels, default=code.cast(pl.String), return_dtype=pl.String) if labels else code.cast(pl.String)
    return pl.when(code >= 0).then(text).otherwise(None).alias(variable)


def probe_groups(kept: pl.DataFrame) -> pl.DataFrame:
    """The probe's demographic group of each participant: continent, urban/rural (H_URBRURAL), education (Q275)."""
    levels = {code: level for level, codes in facts()["probe"]["education_levels"].items() for code in codes}
    return (
        kept.select(
            pl.col(key_column()).alias("participant_id"),
            pl.col("B_COUNTRY"),
            pl.col("H_URBRURAL").replace_strict({1: "Urban", 2: "Rural"}, default=None, return_dtype=pl.String).alias("urban_rural"),
            pl.col("Q275").replace_strict(levels, default=None, return_dtype=pl.String).alias("education_level"),
        )
        .join(countries().select("B_COUNTRY", "continent"), on="B_COUNTRY", how="inner")
        .drop("B_COUNTRY")
        .drop_nulls()
    )


def questions_table(codebook: Codebook, metadata: dict[str, dict] | None = None, source: str = "") -> pl.DataFrame:
    """The questions config: text and value scales from the authors' question_metadata.json (``metadata``, read
    from ``source``) when given, else from facts/wvb.json and rating sentences made from the codebook."""
    rows = []
    for entry in facts()["demographic"]:
        variable = codebook.variables.get(entry["variable"])
        choices = variable.valid_choices() if variable else {}
        text = metadata[entry["variable"]]["question"] if metadata else entry["question"]
        rows.append(_question_row(entry["variable"], "demographic", entry["category"], text, None, None, choices))
    for entry in facts()["value"]:
        name = entry["variable"]
        choices = recoded_choices(codebook[name].valid_choices(), entry.get("recode", {}))
        low, high = metadata[name]["scale"] if metadata else entry["scale"]
        for end in (low, high):
            if end not in choices:
                where = {"file": source, "column": name} if metadata else {"file": codebook.source,
                                                                          "page": codebook[name].page, "column": name}
                raise InputError(f"the codebook has no label for code {end} of the {low}-{high} scale", **where)
        text = metadata[name]["question"] if metadata else rating_question(codebook[name], low, high, choices)
        rows.append(_question_row(name, "value", entry["category"], text, low, high, choices))
    return pl.DataFrame(
        rows,
        schema={
            "question_id": pl.String, "kind": pl.String, "category": pl.String, "text": pl.String,
            "scale_min": pl.Int8, "scale_max": pl.Int8,
            "choices": pl.List(pl.Struct({"code": pl.Int16, "label": pl.String})),
        },
        orient="row",
    )


def _question_row(name, kind, category, text, low, high, choices: dict[int, str]) -> tuple:
    return (name, kind, category, text, low, high, [{"code": c, "label": choices[c]} for c in sorted(choices)])


def recoded_choices(choices: dict[int, str], recode: dict[str, int | None]) -> dict[int, str]:
    """Apply a recode (old code -> new code, or None = missing) to a codebook's choices."""
    out = {}
    for code, label in choices.items():
        new = recode.get(str(code), code)
        if new is not None:
            out[new] = label
    return out


def rating_question(variable, low: int, high: int, choices: dict[int, str]) -> str:
    """'On a scale of 1 to 4, 1 meaning 'Very important' and 4 meaning 'Not at all important', <question>'."""
    stem = " ".join((variable.question or variable.title).split())
    if stem and not stem.startswith("I "):
        stem = stem[0].lower() + stem[1:]
    return f"On a scale of {low} to {high}, {low} meaning '{choices[low]}' and {high} meaning '{choices[high]}', {stem}"


def recoded_answers(table: pl.DataFrame, kept: pl.Series) -> pl.DataFrame:
    """Participant id plus the value answers after the paper's recodes, of the rows of ``table`` where ``kept``;
    negative codes and recodes to missing -> null."""
    expressions = []
    for entry in facts()["value"]:
        column = pl.col(entry["variable"])
        recode = {int(old): new for old, new in entry.get("recode", {}).items()}
        if recode:
            column = column.replace_strict(recode, default=column, return_dtype=pl.Int64)
        expressions.append(pl.when(pl.col(entry["variable"]) >= 0).then(column).otherwise(None).cast(pl.Int8).alias(entry["variable"]))
    return (table.select(pl.col(key_column()).alias("participant_id"), *expressions).filter(kept)
            .sort("participant_id"))


def examples_table(answers: pl.DataFrame, participants: pl.DataFrame, split: str) -> pl.DataFrame:
    """Long (participant_id, question_id, answer, split) for one split; question-major, participants ascending.

    Built one question at a time (not with ``unpivot``) so that no string column of ~20M rows is ever made."""
    ids = participants.filter(pl.col("split") == split).select("participant_id")
    wide = answers.join(ids, on="participant_id", how="semi", maintain_order="left")
    question = pl.Enum(value_variables())
    return pl.concat(
        wide.select("participant_id", pl.lit(name, dtype=question).alias("question_id"), pl.col(name).alias("answer"))
        .drop_nulls("answer")
        for name in value_variables()
    ).with_columns(pl.lit(split, dtype=pl.Enum(SPLIT_NAMES)).alias("split"))


def probe_table(examples: pl.DataFrame, groups: pl.DataFrame, questions: pl.DataFrame, seed: int) -> pl.DataFrame:
    """WVB-probe (Sec. 3.1): per question (first 3 of each category) and demographic group, 5 participants drawn
    by a seeded hash of (question, participant), among those of the split who answered the question."""
    design = facts()["probe"]
    chosen = (
        questions.filter(pl.col("kind") == "value")
        .group_by("category", maintain_order=True)
        .head(design["questions_per_category"])
        .with_row_index("question_order")
    )
    candidates = (
        examples.filter(pl.col("question_id").is_in(chosen["question_id"].implode()))
        .with_columns(pl.col("question_id", "split").cast(pl.String))
        .join(chosen.select("question_id", "category", "question_order"), on="question_id")
        .join(groups, on="participant_id")
    )
    draws = [
        frame.with_columns(stable_hash(frame["participant_id"], f"probe:{seed}:{question}").alias("draw"))
        for (question,), frame in candidates.partition_by("question_id", as_dict=True).items()
    ]
    group = ["question_id", "continent", "urban_rural", "education_level"]
    return (
        pl.concat(draws or [candidates.with_columns(pl.lit(None, dtype=pl.UInt64).alias("draw"))])
        .filter(pl.col("draw").rank("ordinal").over(group) <= design["participants_per_group_and_question"])
        .sort(["question_order", "continent", "urban_rural", "education_level", "draw"])
        .select("question_id", "category", "continent", "urban_rural", "education_level", "participant_id", "answer", "split")
    )


def checks(tables: dict[str, dict[str, pl.DataFrame]]) -> list[CheckResult]:
    """Cross-table checks an auditor of WVB would ask for (the pandera schemas cover single columns).

    ``tables`` as read back by :func:`culturebench.release_reader.read_tables` (examples' question_id as an Enum)."""
    participants = pl.concat(tables["participants"].values())
    questions = tables["questions"]["full"]
    probe = pl.concat(tables["probe"].values())
    values = questions.filter(pl.col("kind") == "value")
    results = [
        check("42 demographic and 239 value questions", "questions",
              dict(sorted(questions["kind"].value_counts().iter_rows())), {"demographic": 42, "value": 239}),
        check("every value question has a scale and labels for both ends", "questions",
              values.filter(pl.col("scale_min").is_null() | (pl.col("choices").list.len() < 2)).height, 0),
    ]
    per_question = (  # streaming: no per-group row indices of ~16M rows
        pl.concat(frame.lazy().group_by("question_id").agg(pl.len().alias("rows"), pl.col("answer").min().alias("low"),
                                                           pl.col("answer").max().alias("high")).collect(engine="streaming")
                  for frame in tables["examples"].values())
        .with_columns(pl.col("question_id").cast(pl.String))
        .join(values.select("question_id", "scale_min", "scale_max"), on="question_id", how="left")
    )
    out_of_order = sum(_out_of_order(frame) for frame in tables["examples"].values())
    strays = 0
    for split, frame in tables["examples"].items():
        members = tables["participants"].get(split, participants.clear())["participant_id"].implode()
        strays += frame.select((~pl.col("participant_id").is_in(members).fill_null(False)).sum()).item()
    results += [
        check("examples are ordered by question, then participant, with no repeated (participant, question)",
              "examples", out_of_order, 0),
        check("every answer lies on its question's scale", "examples",
              per_question.filter((pl.col("low") < pl.col("scale_min")) | (pl.col("high") > pl.col("scale_max")))["question_id"].unique().sort().to_list(), []),
        check("every example's participant exists, in the same split", "examples", strays, 0),
    ]
    shares = {s: round(participants.filter(pl.col("split") == s).height / max(participants.height, 1), 4) for s in SPLIT_NAMES}
    tolerance = 0.05 if participants.height >= 1000 else 0.15
    results.append(check("participant splits are 70/15/15 (within sampling tolerance)", "participants", shares,
                         {"train": 0.70, "validation": 0.15, "test": 0.15},
                         passed=all(abs(shares[s] - f) <= tolerance for s, f in zip(SPLIT_NAMES, (0.70, 0.15, 0.15)))))
    asked = probe.select("participant_id", "question_id", "answer", pl.col("split").cast(pl.String))
    held = pl.concat([frame.filter(pl.col("participant_id").is_in(asked["participant_id"].implode()))
                      .select("participant_id", pl.col("question_id").cast(pl.String), pl.col("answer").alias("human"),
                              pl.col("split").cast(pl.String))
                      .filter(pl.col("question_id").is_in(asked["question_id"].unique().implode()))  # a small join
                      for frame in tables["examples"].values()])
    design = facts()["probe"]
    group = ["question_id", "continent", "urban_rural", "education_level"]
    largest = probe.group_by(group).len()["len"].max() if probe.height else 0
    results += [
        check("probe has 3 questions from each of the 12 categories", "probe",
              probe.group_by("category").agg(pl.col("question_id").n_unique())["question_id"].to_list() if probe.height else [],
              [design["questions_per_category"]] * 12, passed=probe["question_id"].n_unique() == 36),
        check("at most 5 participants per question and group", "probe", largest,
              design["participants_per_group_and_question"], passed=largest <= design["participants_per_group_and_question"]),
        check("probe rows are examples of their participant's split with the same answer", "probe",
              asked.join(held, on=["participant_id", "question_id", "split"], how="left")
              .filter((pl.col("human") != pl.col("answer")) | pl.col("human").is_null()).height, 0),
    ]
    return results


def _out_of_order(examples: pl.DataFrame, chunk: int = 1 << 20) -> int:
    """Rows whose (question, participant) key is not strictly above the previous row's: 0 means the examples are
    question-major, participants ascending, and no (participant, question) pair repeats. Counted over slices of
    ``chunk`` + 1 rows (each pair of neighbours once), so that the 64-bit keys of ~16M rows never exist at once."""
    key = pl.col("question_id").to_physical().cast(pl.Int64) * (1 << 34) + pl.col("participant_id")
    return sum(examples.slice(start, chunk + 1).select((key.diff() <= 0).sum()).item()
               for start in range(0, max(examples.height - 1, 0), chunk))
