"""WorldValuesBench (Zhao et al., LREC-COLING 2024) from the raw WVS wave-7 files, as in Sec. 2.2-3.1.

raw/wvs/*.{csv,csv.gz,zip,sav,dta} + codebook  ->  participants, questions, examples (long), probe.

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

from culturebench.builders.base import BuildOutput, CardInfo, ConfigInfo, Progress
from culturebench.errors import InputError
from culturebench.io import input_name
from culturebench.raw.codebook import Codebook, codebook_input, find_codebook, load_codebook
from culturebench.raw.wvs import SOURCE_FILE, SOURCE_ROW, read_respondents, respondent_files
from culturebench.splits import SPLIT_NAMES, assign_splits, stable_hash
from culturebench.validation.checks import CheckResult, check

NAME = "wvb"
RAW_FOLDER = "wvs"
STAGES = ("read", "participants", "questions", "examples", "probe")
PROBE_SPLIT = "validation"

CARD = CardInfo(
    pretty_name="WorldValuesBench (rebuilt by culturebench)",
    summary=(
        "WorldValuesBench (Zhao et al., 2024) pairs World Values Survey wave 7 respondents' demographics with their "
        "answers to 239 ordinal value questions: the task (demographic attributes, value question) -> answer. This "
        "release was rebuilt from raw WVS-7 files by culturebench, following Sec. 2.2-3.1 of the paper."
    ),
    license="other",
    citation=(
        "@inproceedings{zhao-etal-2024-worldvaluesbench,\n"
        "  title = {{W}orld{V}alues{B}ench: A Large-Scale Benchmark Dataset for Multi-Cultural Value Awareness of Language Models},\n"
        "  author = {Zhao, Wenlong and Mondal, Debanjan and Tandon, Niket and Dillion, Danica and Gray, Kurt and Gu, Yuling},\n"
        "  booktitle = {Proceedings of LREC-COLING 2024},\n  pages = {17696--17706},\n  year = {2024}\n}\n"
        "@misc{wvs7,\n  title = {World Values Survey: Round Seven -- Country-Pooled Datafile},\n"
        "  author = {Haerpfer, C. and Inglehart, R. and Moreno, A. and Welzel, C. and Kizilova, K. and Diez-Medrano, J. and Lagos, M. and Norris, P. and Ponarin, E. and Puranen, B.},\n"
        "  publisher = {JD Systems Institute and WVSA Secretariat},\n  doi = {10.14281/18241.24},\n  year = {2022}\n}"
    ),
    configs=(
        ConfigInfo("participants", "One row per WVS respondent: participant_id (D_INTERVIEW), country (ISO alpha-3), continent, split, and the 42 demographic answers as codebook text (null = missing).", redistributable=False, license_name="wvs-terms"),
        ConfigInfo("questions", "The 42 demographic and 239 value questions: id, kind, category, prompt text, answer scale and labels (value scales after the paper's 15 recodes)."),
        ConfigInfo("examples", "Long table of (participant_id, question_id, answer, split): one row per participant and answered value question; missing codes and recodes to missing are not examples.", redistributable=False, license_name="wvs-terms"),
        ConfigInfo("probe", f"WVB-probe: 36 value questions (first 3 of each of the 12 categories) x demographic groups (6 continents x urban/rural x 4 education levels) x 5 participants drawn from the {PROBE_SPLIT} split.", redistributable=False, license_name="wvs-terms"),
    ),
    creation=(
        "Participants are keyed by D_INTERVIEW; every row whose D_INTERVIEW occurs more than once is dropped to "
        "quarantine (the paper drops one such ID; in WVS v5.0 all 1,000 Uruguay rows share one ID). Value answers "
        "with negative codes are missing; 15 questions are recoded to make their scales monotonic (see "
        "`culturebench/facts/wvb.json`). Splits are 70/15/15 by participant, assigned by a seeded hash of the "
        "participant id, so adding or removing other countries' files never moves a participant. The probe is drawn "
        f"from the **{PROBE_SPLIT}** split: the paper's text says test, but its released probe IDs and repository "
        "use the validation split, and we follow the released data. Question texts are generated from the codebook "
        "as single rating questions (\"On a scale of 1 to 4, 1 meaning 'Very important' and 4 meaning 'Not at all "
        "important', ...\")."
    ),
    considerations=(
        "**Redistribution.** The WVS terms of use forbid redistributing respondent-level rows. The configs "
        "`participants`, `examples` and `probe` hold respondent-level data and are marked *not redistributable*: "
        "build them locally from the raw files you obtained from worldvaluessurvey.org; do not publish them. "
        "The `questions` config holds no respondent data."
    ),
    tags=("world-values-survey", "cultural-values", "llm-evaluation"),
    source="the World Values Survey wave-7 files from https://www.worldvaluessurvey.org (free registration, WVS terms of use)",
    language=("en",),
    task_categories=("question-answering",),
    annotations_creators=("found",),
    license_name="wvs-terms",
    license_link="https://www.worldvaluessurvey.org",
    license_details=("The release combines WVS-7 respondent rows and codebook text: the World Values Survey Association "
                     "lets registered users download the files for research under its terms of use, which forbid "
                     "redistributing respondent-level data."),
)


@cache
def facts() -> dict:
    return json.loads(resources.files("culturebench.facts").joinpath("wvb.json").read_text(encoding="utf-8"))


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


def build(raw: Path, seed: int, progress: Progress) -> BuildOutput:
    folder = raw / RAW_FOLDER
    progress("read")
    files = respondent_files(folder)
    codebook_path = find_codebook(folder)
    codebook = load_codebook(codebook_path, cache_dir=Path.home() / ".cache" / "culturebench")
    columns = [key_column(), *demographic_variables(), *value_variables()]
    table, inputs = read_respondents(files, columns, root=raw)
    check_codes_in_codebook(table, codebook, value_variables())
    rows_read = table.height
    kept, quarantined = quarantine_duplicate_ids(table)
    del table  # the raw table is ~0.2 GB on the full survey: keep only what survives
    progress("participants")
    participants = participants_table(kept, codebook, seed)
    progress("questions")
    questions = questions_table(codebook)
    progress("examples")
    answers = recoded_answers(kept)
    groups = probe_groups(kept)
    del kept
    examples = {split: examples_table(answers, participants, split) for split in SPLIT_NAMES}
    progress("probe")
    probe = probe_table(examples[PROBE_SPLIT], groups, questions, seed)
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
                                 "variables": len(codebook.variables)}},
    )




def check_codes_in_codebook(table: pl.DataFrame, codebook: Codebook, variables: list[str]) -> None:
    """A non-negative code that the codebook does not list is an input error (file, row, column)."""
    for variable in variables:
        if variable not in codebook:
            raise InputError("variable is not in the codebook", file=codebook.source, column=variable)
    outside = {v: (pl.col(v) >= 0) & ~pl.col(v).is_in(list(codebook[v].valid_choices())) for v in variables}
    counts = table.select(expr.sum().alias(v) for v, expr in outside.items()).row(0, named=True)
    for variable, count in counts.items():
        if count:
            first = table.filter(outside[variable]).row(0, named=True)
            raise InputError(
                f"code {first[variable]} is not in the codebook's choices for {variable} "
                f"({sorted(codebook[variable].valid_choices())}); {count} row(s) affected",
                file=first[SOURCE_FILE], row=first[SOURCE_ROW], column=variable,
            )


def quarantine_duplicate_ids(table: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Drop every row whose participant key occurs more than once (WVB Sec. 3.1); the dropped rows get a reason."""
    key = key_column()
    rows_with_key = table.select(pl.len().over(key)).to_series()
    quarantined = table.filter(rows_with_key > 1)
    reason = (pl.lit(f"{key} ") + pl.col(key).cast(pl.String) + pl.lit(" is shared by ")
              + pl.len().over(key).cast(pl.String) + pl.lit(" rows"))
    return table.filter(rows_with_key == 1), quarantined.with_columns(reason.alias("reason"))


def participants_table(kept: pl.DataFrame, codebook: Codebook, seed: int) -> pl.DataFrame:
    """One row per participant, demographic codes mapped to codebook text (negative codes -> null)."""
    frame = (
        kept.select(pl.col(key_column()).alias("participant_id"), *demographic_variables())
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


def questions_table(codebook: Codebook) -> pl.DataFrame:
    rows = []
    for entry in facts()["demographic"]:
        variable = codebook.variables.get(entry["variable"])
        choices = variable.valid_choices() if variable else {}
        rows.append(_question_row(entry["variable"], "demographic", entry["category"], entry["question"], None, None, choices))
    for entry in facts()["value"]:
        name = entry["variable"]
        choices = recoded_choices(codebook[name].valid_choices(), entry.get("recode", {}))
        low, high = entry["scale"]
        for end in (low, high):
            if end not in choices:
                raise InputError(f"the codebook has no label for code {end} of the {low}-{high} scale",
                                 file=codebook.source, page=codebook[name].page, column=name)
        rows.append(_question_row(name, "value", entry["category"], rating_question(codebook[name], low, high, choices), low, high, choices))
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


def recoded_answers(kept: pl.DataFrame) -> pl.DataFrame:
    """Participant id plus the value answers after the paper's recodes; negative codes and recodes to missing -> null."""
    expressions = []
    for entry in facts()["value"]:
        column = pl.col(entry["variable"])
        recode = {int(old): new for old, new in entry.get("recode", {}).items()}
        if recode:
            column = column.replace_strict(recode, default=column, return_dtype=pl.Int64)
        expressions.append(pl.when(pl.col(entry["variable"]) >= 0).then(column).otherwise(None).cast(pl.Int8).alias(entry["variable"]))
    return kept.select(pl.col(key_column()).alias("participant_id"), *expressions).sort("participant_id")


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

    ``tables`` as read back by :func:`culturebench.release.read_tables` (examples' question_id as an Enum)."""
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
    per_question = (
        pl.concat(frame.group_by("question_id").agg(pl.len().alias("rows"), pl.col("answer").min().alias("low"),
                                                    pl.col("answer").max().alias("high"))
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
    held_out = tables["examples"].get(PROBE_SPLIT, participants.clear())
    asked = probe.select("participant_id", pl.col("question_id").cast(held_out.schema["question_id"], strict=False),
                         "answer")  # a probe question outside the examples' Enum becomes null: no match, a failure
    held_out = held_out.filter(pl.col("participant_id").is_in(asked["participant_id"].implode()),
                               pl.col("question_id").is_in(asked["question_id"].drop_nulls().unique().implode()))
    design = facts()["probe"]
    group = ["question_id", "continent", "urban_rural", "education_level"]
    largest = probe.group_by(group).len()["len"].max() if probe.height else 0
    results += [
        check("probe has 3 questions from each of the 12 categories", "probe",
              probe.group_by("category").agg(pl.col("question_id").n_unique())["question_id"].to_list() if probe.height else [],
              [design["questions_per_category"]] * 12, passed=probe["question_id"].n_unique() == 36),
        check("at most 5 participants per question and group", "probe", largest,
              design["participants_per_group_and_question"], passed=largest <= design["participants_per_group_and_question"]),
        check(f"probe rows are {PROBE_SPLIT} examples with the same answer", "probe",
              asked.join(held_out.select("participant_id", "question_id", pl.col("answer").alias("human")),
                         on=["participant_id", "question_id"], how="left")
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
