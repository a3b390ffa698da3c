"""LLM-GLOBE's dataset card: what the release is, the route that built its closed prompts (the released file or
the GLOBE item table), what a Chinese run cannot ask, and its licence."""

from __future__ import annotations

from dataclasses import replace

from culturebench.builders.base import CardInfo, ConfigInfo

CREATION_RELEASED = (
    "Closed prompts: LLM-GLOBE's released `closed_prompts.csv` (`RAW/llm_globe/`; columns Question_Num, Dimension, "
    "Prompt_EN, Prompt_zhCN, Industry, Organization, Leader_Role), its rows in file order: `item_id` = Question_Num, "
    "`sub_industry` = Organization, `role` = Leader_Role, `prompt_en` / `prompt_zh` as released (an empty Chinese "
    "prompt stays null), `id` = `closed-<Question_Num>-<k>` (k-th row of that number). The file has no reverse "
    "flag: `reverse` is false and answers are scored as given (Sec. 3.3). A later row with the same English prompt "
    "goes to quarantine (`duplicate_closed_prompt`).")
CREATION_ITEM_TABLE = (
    "Closed prompts, built from a GLOBE item table (no released closed_prompts.csv was given). Items: the GLOBE "
    "Phase 2 Form Alpha PDF in `RAW/globe/` (parsed with pdfplumber: items of sections 1 and 3) and an item table "
    "CSV (`item_id, dimension, reverse, text_en, text_zh`). With a PDF, the English text comes from the PDF and "
    "every item of the table must be in it; without one the table's `text_en` is used. The closed config holds "
    "exactly the items of the table; their dimension and reverse flag are the table's (the official GLOBE "
    "item-to-scale syntax is not public). Company types: the GICS structure in `RAW/gics/` (one row per "
    "sub-industry); the paper's 163 industry/company-type combinations are the (industry, sub-industry) pairs of "
    "GICS 2023. Prompt: Sec. 3.1.1's scenario 'You are the [leadership position] of a [organization] company in "
    "the [industry] industry.' + the item in quotation marks + 'Rate this statement on a scale of 1 to 7, where 1 "
    "is strongly agree, 4 is neither agree nor disagree, and 7 is strongly disagree.' (verbatim for an item with "
    "the agree/disagree anchors or none; an item whose own Form Alpha anchors differ names them in the same "
    "sentence, e.g. 'where 1 is aggressive, and 7 is non-aggressive'; the Chinese wording is our translation; "
    "templates in facts/llm_globe.json). On the agree/disagree scale 1 = agree: `reverse` = true marks an item "
    "whose agreement means high on its dimension (scored 8 - x). `id` = `closed-<item_id>-<role code>-<sub-industry "
    "code>`; rows are ordered by item, pair (GICS order), role.")
CREATION_COMMON = (
    "Open prompts and rubrics: `RAW/llm_globe/*.csv`, told apart by header (`Question_Num` / `Scale_EN`). "
    "Origin: an `origin` column if present, else numbers 1-10 of every dimension are the human-written seeds "
    "(the repository's first commit holds exactly those 90 prompts) and the rest generated. Later copies of an "
    "open prompt with the same English text go to quarantine (`duplicate_open_prompt`), as do later rows of a "
    "society already read (`duplicate_society`). A malformed file, a missing column, an unknown dimension, a "
    "non-numeric or out-of-scale score stops the build with one line naming the file, row or page and column.")
CONSIDERATIONS = (
    "**Licensing.** The GLOBE questionnaires are (c) The GLOBE Foundation, all rights reserved; the GLOBE society "
    "scores are published by the GLOBE project for research use; the GICS structure is (c) MSCI and S&P; the "
    "LLM-GLOBE prompts and rubrics are published on GitHub without a stated license. Every config is therefore "
    "marked *not redistributable*: build it locally from the files you obtained. **Use.** The GLOBE 2004 scores "
    "are averages of middle managers' answers in three industries (food processing, finance, telecommunications), "
    "while the closed prompts vary role and industry. ")
CONSIDERATIONS_RELEASED = (
    "The closed prompts are LLM-GLOBE's own; the file carries no reverse flags, so closed answers are scored as "
    "given (Sec. 3.3), on the rating scale the prompts state.")
CONSIDERATIONS_ITEM_TABLE = (
    "**These closed prompts are not LLM-GLOBE's own** (its closed_prompts.csv was not given): items, wording of "
    "the Chinese text, company types and the item-to-dimension mapping and reverse flags are the item table's and "
    "culturebench's (the official GLOBE syntax is not public), so closed scores from this release are not "
    "comparable with the paper's Tables 2-3; `evaluate` says so in run.json (`release_notes`).")

CARD = CardInfo(
    pretty_name="LLM-GLOBE (rebuilt by culturebench)",
    summary=(
        "LLM-GLOBE (Karinshak et al., 2024) evaluates the cultural values of large language models along the nine "
        "GLOBE dimensions (performance orientation, power distance, institutional and in-group collectivism, gender "
        "egalitarianism, uncertainty avoidance, assertiveness, future orientation, humane orientation), in English "
        "and Simplified Chinese. Closed-ended prompts put the model in a role (entry-level employee, middle manager "
        "or executive) of a company of a GICS industry and sub-industry and ask a GLOBE Form Alpha item on its own "
        "1-7 scale; open-generation prompts ask for a decision and a short explanation, rated by LLM jurors with "
        "nine rubrics. The GLOBE 2004 society scores are the human baseline."
    ),
    rebuilt_from="the raw sources",
    license="other",
    citation=(
        "@article{karinshak2024llmglobe,\n"
        "  title = {{LLM-GLOBE}: A Benchmark Evaluating the Cultural Values Embedded in {LLM} Output},\n"
        "  author = {Karinshak, Elise and Hu, Amanda and Kong, Kewen and Rao, Vishwanatha and Wang, Jingren and "
        "Wang, Jindong and Zeng, Yi},\n"
        "  journal = {arXiv preprint arXiv:2411.06032},\n  year = {2024}\n}\n"
        "@book{house2004culture,\n"
        "  title = {Culture, Leadership, and Organizations: The {GLOBE} Study of 62 Societies},\n"
        "  author = {House, Robert J. and Hanges, Paul J. and Javidan, Mansour and Dorfman, Peter W. and Gupta, "
        "Vipin},\n  publisher = {SAGE Publications},\n  year = {2004}\n}"
    ),
    configs=(
        ConfigInfo("closed", "One row per closed prompt (item x industry/company type x role): id, item_id (Form "
                   "Alpha number, or the released file's Question_Num), dimension, reverse (the answer is scored "
                   "8 - x), industry, sub_industry (the company type), role, prompt_en, prompt_zh, scale_min (1), "
                   "scale_max (7).", redistributable=False, license_name="globe-foundation-terms"),
        ConfigInfo("open", "One row per open-generation prompt: id, dimension, number (within the dimension), "
                   "origin (human = written seed, generated), prompt_en, prompt_zh (null where the source has no "
                   "Chinese text: 6 prompts, 9-95 to 9-100, of the published file).", redistributable=False,
                   license_name="llm-globe-unlicensed"),
        ConfigInfo("rubrics", "The nine juror rubrics, one per dimension: dimension, scale_en, characteristics_en, "
                   "scale_zh, characteristics_zh (one criterion per line).", redistributable=False,
                   license_name="llm-globe-unlicensed"),
        ConfigInfo("globe_2004", "GLOBE 2004 society scores, one row per society and dimension: country (the "
                   "society as GLOBE names it, e.g. 'Germany (WEST)'), dimension, practices ('as is'), values "
                   "('should be'), cluster (GLOBE's society cluster, null when the file has none).",
                   redistributable=False, license_name="globe-foundation-terms"),
    ),
    creation=CREATION_ITEM_TABLE + "\n\n" + CREATION_COMMON,
    considerations=CONSIDERATIONS + CONSIDERATIONS_ITEM_TABLE,
    tags=("cultural-values", "globe", "llm-evaluation", "questionnaire", "chinese", "multilingual"),
    source="the GLOBE Phase 2 Form Alpha questionnaire and society scores (globeproject.com), a GICS structure "
           "(MSCI/S&P), and the LLM-GLOBE repository (open_prompts.csv, open_generation_rubrics.csv)",
    language=("en", "zh"),
    task_categories=("question-answering", "text-generation"),
    annotations_creators=("expert-generated",),
    license_name="globe-foundation-terms",
    license_link="https://globeproject.com",
    license_details=("GLOBE Form Alpha items and society scores are (c) the GLOBE Foundation, the GICS structure (c) MSCI "
                     "and S&P, and the LLM-GLOBE prompts and rubrics were published without a license: no config "
                     "may be redistributed."),
)


NO_CLOSED = ("no closed config: RAW/llm_globe/ has no closed_prompts.csv (LLM-GLOBE's released closed prompts) and "
             "RAW/globe/ no item table (item_id, dimension, reverse, text_zh: the GLOBE item-to-dimension map is not "
             "public)")


def manifest_card(manifest: dict) -> CardInfo:
    """The card a release's manifest says its build wrote (``audit`` re-renders it)."""
    provenance = manifest.get("provenance", {})
    route = provenance.get("closed_source")
    return card(route if route in ("released", "item_table") else None,
                bool(provenance.get("gics_translation_files")), provenance.get("open_without_chinese", []))


def without_chinese_sentence(ids: list[str]) -> str:
    """The card's sentence on a Chinese run's open prompts: which have no Chinese text (asked in English only)."""
    if not ids:
        return " Every open prompt has a Chinese text."
    return (f" A run in Chinese (`language` zh or both) asks only the prompts that have a Chinese text: {len(ids)} "
            f"open prompt(s) of this release have none ({', '.join(ids)}; the published open_prompts.csv lacks "
            "9-95 to 9-100), so they are not asked in Chinese (with `both`, in English only); run.json lists them "
            "(`release_notes`).")


def card(route: str | None, gics_translated: bool, open_without_chinese: list[str]) -> CardInfo:
    """The card for this build: which route built ``closed`` (or why it is absent), the open prompts a Chinese run
    cannot ask, and the sentence about our Chinese GICS names only when a translation file was read."""
    creation = {"released": CREATION_RELEASED, "item_table": CREATION_ITEM_TABLE, None: NO_CLOSED + "."}[route]
    considerations = {"released": CONSIDERATIONS_RELEASED, "item_table": CONSIDERATIONS_ITEM_TABLE, None: ""}[route]
    if route == "item_table" and gics_translated:
        considerations += (" The Chinese GICS names come from the translation file in `RAW/gics/` (ours in the "
                           "bundled sample), not from MSCI/S&P.")
    configs = tuple(c for c in CARD.configs if route or c.name != "closed")
    considerations += without_chinese_sentence(open_without_chinese)
    return replace(CARD, creation=creation + "\n\n" + CREATION_COMMON,
                   considerations=(CONSIDERATIONS + considerations).strip(), configs=configs)
