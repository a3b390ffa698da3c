"""WorldValuesBench's dataset card: what the release is, where its question text and probe came from (the routes
the manifest's ``provenance.routes``, the card, ``info`` and every run.json name) and its licence."""

from __future__ import annotations

from dataclasses import replace

from culturebench.builders.base import CardInfo, ConfigInfo

QUESTION_METADATA = "question_metadata.json"
PROBE_SAMPLES = "samples.tsv"
PROBE_SAMPLE_COLUMNS = {"Question": "question_id", "Question Category": "category", "Continent": "continent",
                        "Urban / Rural": "urban_rural", "Education": "education_level", "D_INTERVIEW": "participant_id"}
"""The columns of the authors' samples.tsv -> the probe config's columns."""
ROUTES = {
    "question_text": {
        "authors": f"the authors' {QUESTION_METADATA}: the question wording of the paper's prompts (Figs. 5-10)",
        "codebook": f"rating sentences made from the codebook by culturebench, NOT the paper's prompt wording "
                    f"({QUESTION_METADATA} absent)",
    },
    "probe": {
        "authors": f"the authors' released probe ({PROBE_SAMPLES}): its rows whose participant is in the input",
        "drawn": f"drawn by culturebench from the validation split by a seeded hash, NOT the authors' probe "
                 f"({PROBE_SAMPLES} absent)",
    },
}
"""Where the question texts and the probe came from (manifest ``provenance.routes``, card, ``info``, run.json)."""
CARD = CardInfo(
    pretty_name="WorldValuesBench (rebuilt by culturebench)",
    summary=(
        "WorldValuesBench (Zhao et al., 2024) pairs World Values Survey wave 7 respondents' demographics with their "
        "answers to 239 ordinal value questions: the task (demographic attributes, value question) -> answer."
    ),
    rebuilt_from="raw WVS-7 files, following Sec. 2.2-3.1 of the paper",
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
        ConfigInfo("participants", "One row per WVS respondent: participant_id (D_INTERVIEW), country (ISO alpha-3), continent, split, the 42 demographic answers as codebook text (null = missing), and W_WEIGHT (the survey's weight; null where the input lacks it).", redistributable=False, license_name="wvs-terms"),
        ConfigInfo("questions", "The 42 demographic and 239 value questions: id, kind, category, prompt text (see Dataset creation for its source), answer scale and labels (value scales after the paper's 15 recodes)."),
        ConfigInfo("examples", "Long table of (participant_id, question_id, answer, split): one row per participant and answered value question; missing codes and recodes to missing are not examples.", redistributable=False, license_name="wvs-terms"),
        ConfigInfo("probe", "WVB-probe: 36 value questions (first 3 of each of the 12 categories) x demographic groups (6 continents x urban/rural x 4 education levels) x 5 participants: the authors' released rows or our draw (see Dataset creation); `split` is the participant's split in this release.", redistributable=False, license_name="wvs-terms"),
    ),
    creation=(
        "Participants are keyed by D_INTERVIEW; every row whose D_INTERVIEW occurs more than once is dropped to "
        "quarantine (the paper drops one such ID; in WVS v5.0 all 1,000 Uruguay rows share one ID). Value answers "
        "with negative codes are missing; 15 questions are recoded to make their scales monotonic (see "
        "`culturebench/facts/wvb.json`). Splits are 70/15/15 by participant, assigned by a seeded hash of the "
        "participant id, so adding or removing other countries' files never moves a participant (our splits are "
        "not the authors', whose assignment is not released)."
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


CREATION_ROUTES = {
    ("question_text", "authors"): (
        f"**Question text: the authors' `{QUESTION_METADATA}`.** The `questions` config and every prompt use the "
        "question wording of the authors' released file, as the paper's prompts (Figs. 5-10) do, and its value "
        "scales (a scale that differs from `facts/wvb.json` is listed in the manifest, "
        "`provenance.scale_differences`). "
        "The file has no licence: culturebench reads it from `RAW/wvb/`, never ships it."),
    ("question_text", "codebook"): (
        f"**Question text: made from the codebook, NOT the paper's wording** (`{QUESTION_METADATA}` was not in "
        "`RAW/wvb/`). Each value question is a rating sentence built from the codebook (\"On a scale of 1 to 4, 1 "
        "meaning 'Very important' and 4 meaning 'Not at all important', ...\"); prompts built from it are not the "
        "paper's, so results are not comparable with Table 2. Put the authors' file in `RAW/wvb/` for their wording."),
    ("probe", "authors"): (
        f"**Probe: the authors' released probe (`{PROBE_SAMPLES}`).** The `probe` config is exactly its rows whose "
        "participant is in the input files and answered the question, in the file's order, with the file's "
        "category, continent, urban/rural and education columns; the answer is the participant's (after the "
        "recodes). Rows left out are counted per reason and country in the manifest (`provenance.probe_left_out`). "
        "The authors drew it from their validation split; `split` says where each participant is in this release."),
    ("probe", "drawn"): (
        f"**Probe: drawn by culturebench, NOT the authors' probe** (`{PROBE_SAMPLES}` was not in `RAW/wvb/`). Per "
        "question and demographic group, 5 participants of the **validation** split, chosen by a seeded hash of "
        "(question, participant): the paper's text says test, but its released probe IDs and repository use the "
        "validation split, and we follow the released data."),
}
"""The card's sentence for each route (``ROUTES``)."""


def card(routes: dict[str, str], probe_left_out: dict | None = None) -> CardInfo:
    """The card of a build whose question text and probe came from ``routes`` (part -> route key), with the
    released probe's rows kept and left out (``released_probe_table``'s report) when it was used."""
    chosen = "\n\n".join(CREATION_ROUTES[(part, routes[part])] for part in ROUTES)
    if probe_left_out:
        reasons = "; ".join(f"{reason}: " + ", ".join(f"{country} {n:,}" for country, n in by_country.items())
                            for reason, by_country in probe_left_out["left_out"].items())
        chosen += (f" This build kept {probe_left_out['kept']:,} of the file's {probe_left_out['rows']:,} rows"
                   + (f"; left out ({reasons})." if reasons else "."))
    return replace(CARD, creation=f"{CARD.creation}\n\n{chosen}")


def left_out_rows(provenance: dict) -> dict[str, dict]:
    """Per config, the source rows the build left out without quarantining them (not respondents: rows of the
    authors' probe file whose participant or answer is not in the input), as the validation report shows them: the
    released probe's ``released_probe_table`` report with the file it counts."""
    report = provenance.get("probe_left_out")
    return {"probe": {"source": f"RAW/wvb/{PROBE_SAMPLES}", **report}} if report else {}


def route_keys(provenance: dict) -> dict[str, str]:
    """Part -> route key from a manifest's ``provenance.routes`` (which holds the descriptions of ``ROUTES``)."""
    recorded = provenance.get("routes", {})
    return {part: next((key for key, text in options.items() if text == recorded.get(part)), default)
            for (part, options), default in zip(ROUTES.items(), ("codebook", "drawn"))}


def manifest_card(manifest: dict) -> CardInfo:
    """The card a release's manifest says its build wrote (``audit`` re-renders it)."""
    provenance = manifest.get("provenance", {})
    return card(route_keys(provenance), provenance.get("probe_left_out"))
