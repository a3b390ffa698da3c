"""Write the bundled SYNTHETIC WVS-7 sample: raw/wvs/codebook.json and respondent files in the official CSV layout,
plus files in the layout of two of WorldValuesBench's released files: question_metadata.json and samples.tsv.

Every respondent is random (seeded); no row comes from the World Values Survey. The codebook is ours too: it
has the real variable names and answer scales (facts the builder needs) but placeholder wording, marked
"[synthetic sample]". question_metadata.json has the authors' keys and fields with our own wording, and
samples.tsv is a probe of our synthetic respondents drawn here (up to 3 per question and group from a third of
them) plus three rows the
builder must leave out (a participant absent from the files, one whose ID is shared, one without an answer).
Run from the repository root: ``python scripts/make_sample_wvs.py``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
from pathlib import Path

from culturebench.builders import wvb

OUT = Path("raw/wvs")
AUTHORS_OUT = Path("raw") / wvb.AUTHORS_FOLDER
SEED = 7
COUNTRIES = {  # ISO numeric -> respondents; six continents so that the probe has every continent
    32: 70, 76: 60, 124: 60, 156: 70, 231: 50, 276: 60, 392: 60, 404: 50, 484: 60, 554: 50, 566: 50, 702: 60,
}
MISSING = {-1: "Don't know", -2: "No answer", -4: "Not asked", -5: "Missing; Not available"}
# Original codes of the value variables that the paper recodes (facts/wvb.json "recode"); others are the scale.
RECODED_CODES = {
    "Q56": [1, 2, 3], "Q111": [1, 2, 3], "Q119": [0, 1, 2, 3, 4], "Q221": [1, 2, 3, 4], "Q222": [1, 2, 3, 4],
    **{f"Q{n}": list(range(0, 11)) for n in range(241, 250)}, "Q254": [1, 2, 3, 4, 5],
}
DEMOGRAPHIC_CHOICES = {
    "A_YEAR": {2018: "2018", 2019: "2019", 2020: "2020"},
    "H_URBRURAL": {1: "Urban", 2: "Rural"},
    "Q260": {1: "Male", 2: "Female"},
    "Q275": {0: "Early childhood education (ISCED 0) / no education", 1: "Primary education (ISCED 1)",
             2: "Lower secondary education (ISCED 2)", 3: "Upper secondary education (ISCED 3)",
             4: "Post-secondary non-tertiary education (ISCED 4)", 5: "Short-cycle tertiary education (ISCED 5)",
             6: "Bachelor or equivalent (ISCED 6)", 7: "Master or equivalent (ISCED 7)", 8: "Doctoral or equivalent (ISCED 8)"},
    "X003R": {1: "16-24 years", 2: "25-34 years", 3: "35-44 years", 4: "45-54 years", 5: "55-64 years", 6: "65 and more years"},
}
PROBE_PER_GROUP = 3
"""samples.tsv: respondents per probe question and group at most (the authors' file has 5; 3 keep it small)."""
PROBE_POOL_SHARE = 3
"""samples.tsv draws from one respondent in this many (as the authors drew from their validation split), so that
the rarer education levels stay under 30 answers per question and the common ones reach 36 (both kinds of group
for the compare tests)."""
FREE_CODES = {"J_INTDATE", "Q261", "Q262", "N_TOWN", "Q266", "Q267", "Q268", "Q289CS9", "Q290"}
OTHER_COLUMNS = ["version", "doi", "A_WAVE", "A_STUDY", "B_COUNTRY_ALPHA", "W_WEIGHT"]


def codebook() -> dict:
    names = wvb.countries()
    variables = {
        "D_INTERVIEW": {"title": "Interview ID [synthetic sample]", "question": "", "choices": {}, "page": 1},
    }
    for entry in wvb.facts()["demographic"]:
        name = entry["variable"]
        if name == "B_COUNTRY":
            choices = {str(code): f"Country {alpha}" for code, alpha in zip(names["B_COUNTRY"], names["country"])}
        elif name in FREE_CODES:
            choices = {}
        else:
            choices = {str(c): label for c, label in DEMOGRAPHIC_CHOICES.get(name, {c: f"Option {c}" for c in range(1, 5)}).items()}
        variables[name] = {"title": f"{entry['category']}: {name} [synthetic sample]", "question": entry["question"],
                           "choices": {**choices, **{str(c): label for c, label in MISSING.items()}}, "page": 2}
    for page, entry in enumerate(wvb.facts()["value"], start=3):
        name = entry["variable"]
        low, high = entry["scale"]
        codes = RECODED_CODES.get(name, list(range(low, high + 1)))
        choices = {str(c): (f"Lowest ({c})" if c == codes[0] else f"Highest ({c})" if c == codes[-1] else str(c)) for c in codes}
        variables[name] = {
            "title": f"{entry['category']}: item {name} [synthetic sample]",
            "question": f"How would you answer sample item {name}? (placeholder wording, not the WVS questionnaire)",
            "choices": {**choices, **{str(c): label for c, label in MISSING.items()}},
            "page": page,
        }
    return {"format": "culturebench.wvs-codebook/1", "synthetic": True, "variables": variables}


def respondents(book: dict, rng: random.Random) -> dict[int, list[dict]]:
    rows: dict[int, list[dict]] = {}
    alpha = dict(zip(wvb.countries()["B_COUNTRY"], wvb.countries()["country"]))
    for country, n in COUNTRIES.items():
        rows[country] = []
        for i in range(1, n + 1):
            row = {"version": "synthetic-sample", "doi": "none (synthetic)", "A_WAVE": 7, "A_STUDY": 2,
                   "B_COUNTRY_ALPHA": alpha[country], "W_WEIGHT": round(rng.uniform(0.5, 1.5), 6),
                   "D_INTERVIEW": country * 1_000_000 + 70_000 + i, "B_COUNTRY": country}
            for name, entry in book["variables"].items():
                if name in row:
                    continue
                codes = [int(c) for c in entry["choices"] if int(c) >= 0]
                if not codes:
                    row[name] = {"J_INTDATE": 20190101 + rng.randrange(300), "Q261": rng.randrange(1940, 2003),
                                 "Q262": rng.randrange(18, 80)}.get(name, rng.randrange(1, 50))
                elif rng.random() < 0.04:
                    row[name] = rng.choice(list(MISSING))
                else:
                    row[name] = rng.choice(codes)
            rows[country].append(row)
    # One interview ID used twice, as in WVS v5.0's Uruguay rows: the builder must quarantine both rows.
    rows[32][1]["D_INTERVIEW"] = rows[32][0]["D_INTERVIEW"]
    return rows


def question_metadata(book: dict) -> dict:
    """The layout of the authors' question_metadata.json (question, category, use_case, answer_scale_min/max,
    answer_data_type): value questions in our own wording, demographic ones as App. B words them (facts/wvb.json)."""
    out = {"D_INTERVIEW": {"question": "What is the interview's ID? (sample wording)",
                           "category": "Technical Variables",
                           "use_case": "demographic", "answer_scale_min": "", "answer_scale_max": "",
                           "answer_data_type": "non_ordinal"}}
    for entry in wvb.facts()["demographic"]:
        out[entry["variable"]] = {"question": entry["question"], "category": entry["category"],  # App. B's, as theirs
                                  "use_case": "demographic", "answer_scale_min": "", "answer_scale_max": "",
                                  "answer_data_type": "non_ordinal"}
    for entry in wvb.facts()["value"]:
        name, (low, high) = entry["variable"], entry["scale"]
        codes = {int(c): label for c, label in book["variables"][name]["choices"].items() if int(c) >= 0}
        labels = wvb.recoded_choices(codes, entry.get("recode", {}))
        out[name] = {"question": f"On a scale of {low} to {high}, {low} meaning '{labels[low]}' and {high} meaning "
                                 f"'{labels[high]}', where do you stand on sample item {name}? "
                                 "(sample metadata wording)",
                     "category": entry["category"], "use_case": "value", "answer_scale_min": low,
                     "answer_scale_max": high, "answer_data_type": "ordinal"}
    return out


def probe_samples(rows: dict[int, list[dict]], rng: random.Random) -> list[list[str]]:
    """Rows in the layout of the authors' samples.tsv: per probe question (first 3 of each category) and group
    (continent x urban/rural x education level), one of our respondents who answered it; then three rows the
    builder leaves out and reports."""
    first: dict[str, list[str]] = {}
    for entry in wvb.facts()["value"]:
        first.setdefault(entry["category"], [])
        if len(first[entry["category"]]) < 3:
            first[entry["category"]].append(entry["variable"])
    continent = dict(zip(wvb.countries()["B_COUNTRY"], wvb.countries()["continent"]))
    levels = {code: level for level, codes in wvb.facts()["probe"]["education_levels"].items() for code in codes}
    shared = rows[32][0]["D_INTERVIEW"]
    people = [r for country in rows.values() for r in country if r["D_INTERVIEW"] != shared
              and r["H_URBRURAL"] in (1, 2) and r["Q275"] in levels]
    pool = rng.sample(people, len(people) // PROBE_POOL_SHARE)
    out = []
    for category, questions in first.items():
        for question in questions:
            groups: dict[tuple, list[dict]] = {}
            for person in pool:
                if person[question] >= 0:
                    key = (continent[person["B_COUNTRY"]], {1: "Urban", 2: "Rural"}[person["H_URBRURAL"]],
                           levels[person["Q275"]])
                    groups.setdefault(key, []).append(person)
            for key in sorted(groups):
                chosen = rng.sample(groups[key], min(PROBE_PER_GROUP, len(groups[key])))
                out += [[question, category, *key, str(p["D_INTERVIEW"])]
                        for p in sorted(chosen, key=lambda p: p["D_INTERVIEW"])]
    unanswered = next(p for p in people if p["Q2"] < 0)
    out += [["Q1", "Social Values, Norms, Stereotypes", "North America", "Urban", "Tertiary",
             str(840 * 1_000_000 + 70_001)],  # USA: no such respondent in the sample
            ["Q1", "Social Values, Norms, Stereotypes", "South America", "Urban", "Tertiary", str(shared)],
            ["Q2", "Social Values, Norms, Stereotypes", continent[unanswered["B_COUNTRY"]],
             {1: "Urban", 2: "Rural"}[unanswered["H_URBRURAL"]], levels[unanswered["Q275"]],
             str(unanswered["D_INTERVIEW"])]]
    return out


def write_csv(path: Path, header: list[str], rows: list[dict]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    data = buffer.getvalue().encode()
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data, mtime=0))
    else:
        path.write_bytes(data)


def main() -> None:
    rng = random.Random(SEED)
    OUT.mkdir(parents=True, exist_ok=True)
    book = codebook()
    (OUT / "codebook.json").write_text(json.dumps(book, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    rows = respondents(book, rng)
    header = ["version", "doi", "A_WAVE", "A_STUDY", "B_COUNTRY", "B_COUNTRY_ALPHA", "D_INTERVIEW", "W_WEIGHT",
              *[n for n in book["variables"] if n not in ("B_COUNTRY", "D_INTERVIEW")]]
    countries = list(rows)
    half = len(countries) // 2
    write_csv(OUT / "SYNTHETIC_WVS_Cross-National_Wave_7_csv_v6_0_part1.csv", header, [r for c in countries[:half] for r in rows[c]])
    write_csv(OUT / "SYNTHETIC_WVS_Cross-National_Wave_7_csv_v6_0_part2.csv.gz", header, [r for c in countries[half:] for r in rows[c]])
    AUTHORS_OUT.mkdir(parents=True, exist_ok=True)
    (AUTHORS_OUT / wvb.QUESTION_METADATA).write_text(json.dumps(question_metadata(book), indent=4) + "\n", encoding="utf-8")
    samples = probe_samples(rows, random.Random(SEED + 1))
    (AUTHORS_OUT / wvb.PROBE_SAMPLES).write_text("\n".join("\t".join(r) for r in [list(wvb.PROBE_SAMPLE_COLUMNS), *samples])
                                         + "\n", encoding="utf-8")
    (OUT / "README.md").write_text(
        "# Synthetic WVS-7 sample (culturebench)\n\n"
        "Every file here is SYNTHETIC, written by `scripts/make_sample_wvs.py` (seeded random answers): no row comes\n"
        "from the World Values Survey, and `codebook.json` has the real variable names and answer scales but\n"
        "placeholder wording. The files use the official WVS-7 CSV layout so that the WorldValuesBench builder runs\n"
        "offline. For the real benchmark, put the official WVS-7 respondent files (CSV/.csv.gz/.zip/.sav/.dta) and the\n"
        "Codebook Variables report PDF in a folder `wvs/` and pass its parent as `--raw`. The authors' own files\n"
        "(question text, probe) go in `wvb/` beside it.\n",
        encoding="utf-8",
    )
    (AUTHORS_OUT / "README.md").write_text(
        "# WorldValuesBench authors'-format files (culturebench sample)\n\n"
        "`question_metadata.json` and `samples.tsv` have the layout of WorldValuesBench's released files of the same\n"
        "names but are ours, written by `scripts/make_sample_wvs.py`: our wording, and a probe of the synthetic\n"
        "respondents in `../wvs/` (up to 3 per question and group, plus a row for an absent participant, one for the\n"
        "shared ID and one for a missing answer). With the authors' real files\n"
        "(`dataset_construction/question_metadata.json`, `WorldValuesBench/probe/samples.tsv`; no licence, so never\n"
        "shipped) in `RAW/wvb/`, the build uses their question text and probe; without them, codebook sentences and\n"
        "our own probe draw.\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
