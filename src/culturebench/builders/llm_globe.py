"""LLM-GLOBE (Karinshak et al., 2024) from the GLOBE Form Alpha items, a GICS structure, the GLOBE 2004 society
scores and the published open prompts and juror rubrics.

raw/globe/ + raw/gics/ + raw/llm_globe/  ->  closed, open, rubrics, globe_2004.

- ``closed`` (Sec. 3.1), by one of two routes (the card and manifest say which):
  *released*: LLM-GLOBE's own ``closed_prompts.csv`` (``RAW/llm_globe/``), its rows as they are;
  *item_table*: every item of a GLOBE item table (item -> dimension, reverse flag, zh-CN text: the GLOBE syntax
  is not public) x every GICS (industry, sub-industry) pair x the three roles, worded with Sec. 3.1.1's scenario
  ("You are the [leadership position] of a [organization] company in the [industry] industry.") + the item + its
  rating sentence ("... where 1 is strongly agree, 4 is neither agree nor disagree, and 7 is strongly disagree.").
  75 items x 163 pairs (GICS 2023) x 3 roles = 36,675 rows, as in the paper. With neither, no ``closed`` config
  (one line in the card says why).
- ``open`` (Sec. 3.2): the open-generation prompts with dimension, number and origin (human-written seed or
  generated; see facts/llm_globe.json for how origin is derived when the file has no ``origin`` column).
- ``rubrics`` (App. B): the nine LLMs-as-a-jury rubrics (scale and characteristics, EN and zh-CN).
- ``globe_2004``: the GLOBE 2004 society practices and values scores per society and dimension (the human
  baseline of the paper's t-tests uses the values scores).

The templates (role sentence, rating instruction, prompt layout) and the roles are data in
``culturebench/facts/llm_globe.json``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path

import polars as pl

from culturebench.builders.base import BuildOutput, CardInfo, ConfigInfo, Progress
from culturebench.errors import InputError
from culturebench.raw.globe import (
    GICS_FOLDER,
    ClosedPrompt,
    GLOBE_FOLDER,
    LLM_GLOBE_FOLDER,
    FormItem,
    GicsRow,
    ItemRow,
    OpenPrompt,
    Rubric,
    SocietyRow,
    input_files,
    is_closed_prompts,
    is_gics_translation,
    is_item_table,
    is_open_prompts,
    is_rubrics,
    is_society_scores,
    normal,
    read_closed_prompts,
    read_csv,
    read_form_alpha,
    read_gics,
    read_gics_translation,
    read_item_table,
    read_open_prompts,
    read_rubrics,
    read_society_scores,
)
from culturebench.validation.checks import CheckResult, check

NAME = "llm_globe"
RAW_FOLDER = LLM_GLOBE_FOLDER
STAGES = ("read", "closed", "open", "rubrics", "globe_2004")
TEST_SPLIT = "test"
FULL_SPLIT = "full"

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

CLOSED_SCHEMA = {
    "id": pl.String, "item_id": pl.String, "dimension": pl.String, "reverse": pl.Boolean, "industry": pl.String,
    "sub_industry": pl.String, "role": pl.String, "prompt_en": pl.String, "prompt_zh": pl.String,
    "scale_min": pl.Int64, "scale_max": pl.Int64,
}
OPEN_SCHEMA = {"id": pl.String, "dimension": pl.String, "number": pl.Int64, "origin": pl.String,
               "prompt_en": pl.String, "prompt_zh": pl.String}
RUBRICS_SCHEMA = {"dimension": pl.String, "scale_en": pl.String, "characteristics_en": pl.String,
                  "scale_zh": pl.String, "characteristics_zh": pl.String}
GLOBE_SCHEMA = {"country": pl.String, "dimension": pl.String, "practices": pl.Float64, "values": pl.Float64,
                "cluster": pl.String}


@cache
def facts() -> dict:
    return json.loads(resources.files("culturebench.facts").joinpath("llm_globe.json").read_text(encoding="utf-8"))


def dimension_names() -> list[str]:
    return [d["name"] for d in facts()["dimensions"]]


def dimension_lookup() -> dict[str, str]:
    """Casefolded spelling (name, code, aliases) -> canonical name."""
    lookup = {}
    for d in facts()["dimensions"]:
        for spelling in (d["name"], d["code"], *d["aliases"]):
            lookup[" ".join(spelling.split()).casefold()] = d["name"]
    return lookup


def dimension_numbers() -> dict[str, int]:
    return {d["name"]: d["number"] for d in facts()["dimensions"]}


def roles() -> list[dict]:
    return list(facts()["roles"])


def raw_present(raw: Path) -> bool:
    return (raw / RAW_FOLDER).is_dir()


# ---------------------------------------------------------------------------------------------------- reading


class _Inputs:
    def __init__(self) -> None:
        self.files = []
        self.form: list[FormItem] = []
        self.form_file: str | None = None
        self.items: list[ItemRow] = []
        self.released: list[ClosedPrompt] = []
        self.gics: list[GicsRow] = []
        self.gics_zh: dict[str, str] = {}
        self.gics_zh_files: list[str] = []
        self.societies: list[SocietyRow] = []
        self.open: list[OpenPrompt] = []
        self.rubrics: list[Rubric] = []

    @property
    def closed_route(self) -> str | None:
        """Where ``closed`` comes from: LLM-GLOBE's released closed_prompts.csv, the item table x GICS, or
        nothing."""
        return "released" if self.released else "item_table" if self.items else None


NO_CLOSED = ("no closed config: RAW/llm_globe/ has no closed_prompts.csv (LLM-GLOBE's released closed prompts) and "
             "RAW/globe/ no item table (item_id, dimension, reverse, text_zh: the GLOBE item-to-dimension map is not "
             "public)")


def read_inputs(raw: Path) -> _Inputs:
    inputs = _Inputs()
    lookup = dimension_lookup()
    for path in input_files(raw / LLM_GLOBE_FOLDER, "*.csv", "LLM-GLOBE open prompt and rubric files"):
        table = read_csv(path, raw)
        if is_closed_prompts(table):
            inputs.released += read_closed_prompts(table, lookup)
        elif is_open_prompts(table):
            inputs.open += read_open_prompts(table, lookup)
        elif is_rubrics(table):
            inputs.rubrics += read_rubrics(table, lookup)
        else:
            raise InputError("neither LLM-GLOBE open prompts (column Question_Num), closed prompts (column "
                             f"Leader_Role) nor rubrics (column Scale_EN); header is {table.header}", file=table.name)
        inputs.files.append(table.info())
    if not inputs.open:
        raise InputError("no LLM-GLOBE open prompt file (columns Question_Num, Dimension, prompt_EN, prompt_zhCN)",
                         file=raw / LLM_GLOBE_FOLDER)
    if not inputs.rubrics:
        raise InputError("no LLM-GLOBE rubric file (columns Number, Dimension, Scale_EN, ...)",
                         file=raw / LLM_GLOBE_FOLDER)
    globe = raw / GLOBE_FOLDER
    pdfs = input_files(globe, "*.pdf", "GLOBE files", required=False)
    pdfs += [p for p in input_files(globe, "*.PDF", "GLOBE files", required=False) if p not in pdfs]
    if len(pdfs) > 1:
        raise InputError(f"several PDF files {[p.name for p in pdfs]}; keep the one Form Alpha questionnaire",
                         file=globe)
    item_tables = []
    for path in input_files(globe, "*.csv", "GLOBE item table and society score files"):
        table = read_csv(path, raw)
        if is_item_table(table):
            item_tables.append(table)
        elif is_society_scores(table, facts()["globe_2004"]["country_column"]):
            inputs.societies += read_society_scores(table, facts())
            inputs.files.append(table.info())
        else:
            raise InputError("neither a GLOBE item table (column item_id) nor GLOBE society scores (column "
                             f"'Country Name'); header is {table.header}", file=table.name)
    if not inputs.societies:
        raise InputError("no GLOBE 2004 society score file (a CSV with columns 'Country Name', '... Societal "
                         "Practices', '... Societal Values')", file=globe)
    if inputs.released:
        return inputs  # the released closed prompts already hold items, industries and roles
    if pdfs:
        inputs.form, info = read_form_alpha(pdfs[0], raw, tuple(facts()["closed"]["form_alpha_sections"]))
        inputs.form_file = info.name
        inputs.files.append(info)
    if not item_tables:
        return inputs
    for table in item_tables:
        inputs.items += read_item_table(table, lookup, english_required=not pdfs)
        inputs.files.append(table.info())
    seen: dict[str, ItemRow] = {}
    for item in inputs.items:
        if item.item_id in seen:
            raise InputError(f"item_id {item.item_id!r} is also in {seen[item.item_id].file}", file=item.file,
                             row=item.row, column="item_id")
        seen[item.item_id] = item
    structures = []
    for path in input_files(raw / GICS_FOLDER, "*.csv", "GICS structure files"):
        table = read_csv(path, raw)
        if is_gics_translation(table):
            for code, name in read_gics_translation(table).items():
                inputs.gics_zh.setdefault(code, name)
            inputs.gics_zh_files.append(table.name)
        else:
            structures.append(table)
        inputs.files.append(table.info())
    if len(structures) != 1:
        raise InputError(f"expected exactly one GICS structure CSV, found {len(structures)} "
                         f"({[t.name for t in structures]}); keep one GICS version", file=raw / GICS_FOLDER)
    inputs.gics = read_gics(structures[0])
    return inputs


# ------------------------------------------------------------------------------------------------ build


def build(raw: Path, seed: int, progress: Progress) -> BuildOutput:
    """``seed`` is unused: nothing in LLM-GLOBE is sampled."""
    progress("read")
    inputs = read_inputs(raw)
    progress("closed")
    route = inputs.closed_route
    quarantine = {}
    provenance: dict = {"closed_source": route or NO_CLOSED}
    if route == "released":
        closed, closed_dropped = released_closed_table(inputs.released)
        if closed_dropped.height:
            quarantine["duplicate_closed_prompt"] = closed_dropped
        closed_read, closed_kept = len(inputs.released), closed.height
        provenance.update({"closed_rows": closed.height,
                           "closed_reverse": "none in the file: every answer is scored as given (Sec. 3.3)"})
    elif route == "item_table":
        items, overridden = resolve_items(inputs)
        pairs = [(row.industry_code, row.industry, row.sub_industry_code, row.sub_industry) for row in inputs.gics]
        closed = closed_table(items, pairs, inputs.gics_zh)
        closed_read, closed_kept = len(inputs.items) + len(inputs.gics), len(items) + len(pairs)
        untranslated = sorted({name for code, name in _gics_names(inputs.gics) if code not in inputs.gics_zh})
        provenance.update({
            "items": len(items),
            "items_source_en": inputs.form_file or "item table",
            "form_alpha_items_parsed": len(inputs.form),
            "form_alpha_items_not_in_item_table": sorted(
                {f.item_id for f in inputs.form} - {i.item_id for i in inputs.items}, key=_item_order),
            "item_table_english_replaced_by_pdf": overridden,
            "gics_pairs": len(pairs),
            "gics_levels": {"sectors": len({r.sector_code for r in inputs.gics}),
                            "industry_groups": len({r.industry_group_code for r in inputs.gics}),
                            "industries": len({r.industry_code for r in inputs.gics}),
                            "sub_industries": len(pairs)},
            "gics_translation_files": inputs.gics_zh_files,
            "gics_names_without_chinese": len(untranslated),
            "roles": [r["en"] for r in roles()],
            "closed_rows_expected": len(items) * len(pairs) * len(roles()),
        })
    else:
        closed, closed_read, closed_kept = None, 0, 0
    progress("open")
    open_frame, open_dropped = open_table(inputs.open)
    progress("rubrics")
    rubrics = rubrics_table(inputs.rubrics)
    progress("globe_2004")
    globe, globe_dropped = globe_table(inputs.societies)
    open_without_chinese = open_frame.filter(pl.col("prompt_zh").is_null())["id"].to_list()
    if open_dropped.height:
        quarantine["duplicate_open_prompt"] = open_dropped
    if globe_dropped.height:
        quarantine["duplicate_society"] = globe_dropped
    read = closed_read + len(inputs.open) + len(inputs.rubrics) + len(inputs.societies)
    kept = closed_kept + open_frame.height + rubrics.height + globe.height // len(dimension_names())
    tables = {"closed": {TEST_SPLIT: closed}} if closed is not None else {}
    tables.update({"open": {TEST_SPLIT: open_frame}, "rubrics": {FULL_SPLIT: rubrics},
                   "globe_2004": {FULL_SPLIT: globe}})
    return BuildOutput(
        tables=tables,
        quarantine=quarantine,
        inputs=inputs.files,
        rows_read=read,
        rows_kept=kept,
        provenance={
            "known_inputs": {i.name: facts()["known_inputs"][i.sha256] for i in inputs.files
                             if i.sha256 in facts()["known_inputs"]},
            "rows_read_are": ("closed_prompts.csv rows" if route == "released" else
                              "item table rows + GICS sub-industry rows" if route == "item_table" else "nothing for "
                              "closed") + " + open prompt rows + rubric rows + society rows",
            **provenance,
            "open_origin_rule": ("origin column" if any(p.origin for p in inputs.open)
                                 else f"numbers 1-{facts()['open']['human_seeds_per_dimension']} of each dimension "
                                      "are human-written seeds"),
            "templates": facts()["templates"],
            "open_without_chinese": open_without_chinese,
        },
        card=card(route, bool(inputs.gics_zh_files), open_without_chinese),
    )


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


def _item_order(item_id: str) -> tuple[int, int]:
    section, number = item_id.split("-")
    return int(section), int(number)


def _gics_names(gics: list[GicsRow]) -> list[tuple[str, str]]:
    return [(r.industry_code, r.industry) for r in gics] + [(r.sub_industry_code, r.sub_industry) for r in gics]


def resolve_items(inputs: _Inputs) -> tuple[list[ItemRow], int]:
    """The item table's rows with the English text and anchors of the Form Alpha PDF when one is given."""
    if not inputs.form_file:
        return inputs.items, 0
    form = {f.item_id: f for f in inputs.form}
    agree = {int(k): v for k, v in facts()["templates"]["agree_anchors_en"].items()}
    resolved, overridden = [], 0
    for item in inputs.items:
        printed = form.get(item.item_id)
        if printed is None:
            raise InputError(f"item {item.item_id} is not in the Form Alpha PDF {inputs.form_file} (it has "
                             f"{len(form)} items of sections 1 and 3)", file=item.file, row=item.row,
                             column="item_id")
        if item.text_en and (normal(item.text_en) != printed.stem or item.anchors_en != printed.anchors):
            overridden += 1
        if not item.anchors_zh and printed.anchors != agree:
            raise InputError(f"item {item.item_id}'s printed anchors are not agree/disagree ({printed.anchors}): "
                             "give its Chinese anchors (anchor_1_zh, anchor_7_zh, ...)", file=item.file, row=item.row,
                             column="anchor_1_zh")
        resolved.append(ItemRow(item.file, item.row, item.item_id, item.dimension, item.reverse, printed.stem,
                                dict(printed.anchors), item.text_zh, item.anchors_zh))
    return resolved, overridden


def rating_anchors(anchors: dict[int, str], language: str) -> str:
    """'1 is strongly agree, 4 is neither agree nor disagree, and 7 is strongly disagree' (Sec. 3.1.1) from an
    item's anchors; an item without anchors gets the paper's agree/disagree ones."""
    t = facts()["templates"]
    points = anchors or {int(k): v for k, v in t[f"agree_anchors_{language}"].items()}
    parts = [t[f"anchor_{language}"].format(point=point, text=text) for point, text in sorted(points.items())]
    if len(parts) == 1:
        return parts[0]
    return t[f"anchor_joiner_{language}"].join(parts[:-1]) + t[f"anchor_last_joiner_{language}"] + parts[-1]


def closed_prompt(item: ItemRow, role: dict, industry: tuple[str, str], organization: tuple[str, str]
                  ) -> tuple[str, str]:
    """(prompt_en, prompt_zh) for one item, role and (industry, sub-industry), names as (en, zh): Sec. 3.1.1's
    scenario + the item with its rating sentence (templates in facts/llm_globe.json)."""
    t = facts()["templates"]
    prompts = []
    for language, role_name, industry_name, organization_name, text, anchors in (
            ("en", role["en"], industry[0], organization[0], item.text_en, item.anchors_en),
            ("zh", role["zh"], industry[1], organization[1], item.text_zh, item.anchors_zh)):
        scenario = t[f"scenario_{language}"].format(leadership_position=role_name, organization=organization_name,
                                                    industry=industry_name)
        rated = t[f"item_{language}"].format(item=text, anchors=rating_anchors(anchors, language))
        prompts.append(t[f"prompt_{language}"].format(scenario=scenario, item=rated))
    return prompts[0], prompts[1]


def closed_table(items: list[ItemRow], pairs: list[tuple[str, str, str, str]], names_zh: dict[str, str]
                 ) -> pl.DataFrame:
    scale = facts()["scale"]
    rows = []
    for item in items:
        for industry_code, industry, sub_code, sub_industry in pairs:
            industry_names = (industry, names_zh.get(industry_code, industry))
            sub_names = (sub_industry, names_zh.get(sub_code, sub_industry))
            for role in roles():
                prompt_en, prompt_zh = closed_prompt(item, role, industry_names, sub_names)
                rows.append((f"closed-{item.item_id}-{role['code']}-{sub_code}", item.item_id, item.dimension,
                             item.reverse, industry, sub_industry, role["en"], prompt_en, prompt_zh,
                             scale["min"], scale["max"]))
    return pl.DataFrame(rows, schema=CLOSED_SCHEMA, orient="row")


def released_closed_table(prompts: list[ClosedPrompt]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """LLM-GLOBE's closed_prompts.csv as the ``closed`` config, in file order: ``id`` = ``closed-<Question_Num>-<k>``
    (k-th row of that Question_Num), ``item_id`` = Question_Num, ``sub_industry`` = Organization, ``role`` =
    Leader_Role, ``reverse`` false (the file has no reverse flag; Sec. 3.3 scores answers as given). A later row
    with the same English prompt goes to quarantine."""
    scale = facts()["scale"]
    kept, dropped, seen, counts = [], [], {}, {}
    for p in prompts:
        counts[p.question_num] = counts.get(p.question_num, 0) + 1
        row = (f"closed-{p.question_num}-{counts[p.question_num]}", p.question_num, p.dimension, False, p.industry,
               p.organization, p.leader_role, p.prompt_en, p.prompt_zh, scale["min"], scale["max"])
        key = normal(p.prompt_en).casefold()
        if key in seen:
            dropped.append((p.file, p.row, *row, f"same English prompt as {seen[key]}"))
            continue
        seen[key] = f"{p.file} row {p.row}"
        kept.append(row)
    quarantine_schema = {"source_file": pl.String, "row": pl.Int64, **CLOSED_SCHEMA, "reason": pl.String}
    return (pl.DataFrame(kept, schema=CLOSED_SCHEMA, orient="row"),
            pl.DataFrame(dropped, schema=quarantine_schema, orient="row"))


def open_table(prompts: list[OpenPrompt]) -> tuple[pl.DataFrame, pl.DataFrame]:
    seeds = facts()["open"]["human_seeds_per_dimension"]
    kept, dropped, seen = [], [], {}
    ids: dict[str, OpenPrompt] = {}
    for p in prompts:
        origin = p.origin or ("human" if p.number <= seeds else "generated")
        row = (f"open-{p.prefix}-{p.number}", p.dimension, p.number, origin, p.prompt_en, p.prompt_zh)
        key = normal(p.prompt_en).casefold()
        if key in seen:
            dropped.append((p.file, p.row, *row, f"same English text as {seen[key]}"))
            continue
        if row[0] in ids:
            raise InputError(f"Question_Num {p.question_num} already on row {ids[row[0]].row} of {ids[row[0]].file}",
                             file=p.file, row=p.row, column="Question_Num")
        ids[row[0]] = p
        seen[key] = row[0]
        kept.append(row)
    quarantine_schema = {"source_file": pl.String, "row": pl.Int64, **OPEN_SCHEMA, "reason": pl.String}
    return (pl.DataFrame(kept, schema=OPEN_SCHEMA, orient="row"),
            pl.DataFrame(dropped, schema=quarantine_schema, orient="row"))


def rubrics_table(rubrics: list[Rubric]) -> pl.DataFrame:
    seen: dict[str, Rubric] = {}
    for r in rubrics:
        if r.dimension in seen:
            raise InputError(f"a second rubric for {r.dimension} (first: {seen[r.dimension].file} row "
                             f"{seen[r.dimension].row})", file=r.file, row=r.row, column="Dimension")
        seen[r.dimension] = r
    order = dimension_numbers()
    missing = sorted(set(order) - seen.keys(), key=order.get)
    if missing:  # an incomplete input, not a failed check: the jury could not score those dimensions' answers
        raise InputError(f"no juror rubric for dimension(s) {missing}; the rubric files must cover all {len(order)} "
                         "GLOBE dimensions", file=rubrics[0].file, column="Dimension")
    rows = [(r.dimension, r.scale_en, r.characteristics_en, r.scale_zh, r.characteristics_zh)
            for r in sorted(rubrics, key=lambda r: order[r.dimension])]
    return pl.DataFrame(rows, schema=RUBRICS_SCHEMA, orient="row")


def globe_table(societies: list[SocietyRow]) -> tuple[pl.DataFrame, pl.DataFrame]:
    kept, dropped, seen = [], [], {}
    for s in societies:
        key = normal(s.country).casefold()
        target = dropped if key in seen else kept
        for dimension in dimension_names():
            practices, values = s.scores[dimension]
            row = (s.country, dimension, practices, values, s.cluster)
            target.append((s.file, s.row, *row, f"society already read ({seen[key]})") if target is dropped else row)
        seen.setdefault(key, f"{s.file} row {s.row}")
    quarantine_schema = {"source_file": pl.String, "row": pl.Int64, **GLOBE_SCHEMA, "reason": pl.String}
    return (pl.DataFrame(kept, schema=GLOBE_SCHEMA, orient="row"),
            pl.DataFrame(dropped, schema=quarantine_schema, orient="row"))


# ---------------------------------------------------------------------------------------------------- checks


def checks(tables: dict[str, dict[str, pl.DataFrame]]) -> list[CheckResult]:
    open_frame = pl.concat(tables["open"].values())
    rubrics = pl.concat(tables["rubrics"].values())
    globe = pl.concat(tables["globe_2004"].values())
    dims = dimension_names()
    numbers = dimension_numbers()
    prefix_mismatch = [r["id"] for r in open_frame.iter_rows(named=True)
                       if int(r["id"].split("-")[1]) != numbers[r["dimension"]]]
    with_zh = open_frame.filter(pl.col("prompt_zh").is_not_null())
    open_dup_zh = sorted(with_zh.filter(pl.col("prompt_zh").is_duplicated())["id"].to_list())
    open_no_zh = open_frame.filter(pl.col("prompt_zh").is_null())["id"].to_list()
    per_dimension = {d: open_frame.filter(pl.col("dimension") == d).height for d in dims}
    per_society = globe.group_by("country").len().filter(pl.col("len") != len(dims))["country"].to_list()
    closed = pl.concat(tables["closed"].values()) if "closed" in tables else None
    results = closed_checks(closed) if closed is not None else [
        check("closed config (informational)", "closed", NO_CLOSED, "any", passed=True)]
    return results + [
        check("every dimension has open prompts", "open", sorted(d for d, n in per_dimension.items() if n == 0), []),
        check("open prompts per dimension (informational; 100 each in the paper)", "open", per_dimension, "any",
              passed=True),
        check("open id's dimension number matches its dimension (1 = PO ... 9 = HO)", "open", prefix_mismatch, []),
        check("no duplicate English open prompt", "open", open_frame.height - open_frame["prompt_en"].n_unique(), 0),
        check("no duplicate Chinese open prompt", "open", open_dup_zh, []),
        check("open prompts without a Chinese text (informational: 9-95 ... 9-100 in the published file)", "open",
              open_no_zh, "any", passed=True),
        check("one rubric per dimension", "rubrics", sorted(rubrics["dimension"].to_list()), sorted(dims)),
        check("every rubric scale covers the points 1 and 7", "rubrics",
              rubrics.filter(~pl.col("scale_en").str.contains(r"(?m)^1\b") | ~pl.col("scale_en").str.contains(r"(?m)^7\b"))
              .height, 0),
        check("every society has a score for each of the nine dimensions", "globe_2004", per_society, []),
        check("societies (informational)", "globe_2004", globe["country"].n_unique(), "any", passed=True),
        check("all counts (informational)", "release",
              {"closed": 0 if closed is None else closed.height, "open": open_frame.height,
               "rubrics": rubrics.height, "globe_2004_societies": globe["country"].n_unique()}, "any", passed=True),
    ]


def closed_checks(closed: pl.DataFrame) -> list[CheckResult]:
    """Checks of the ``closed`` config, whichever route built it."""
    dims = dimension_names()
    items = closed.select("item_id", "dimension", "reverse").unique().height
    item_ids = closed["item_id"].n_unique()
    pairs = closed.select("industry", "sub_industry").unique()
    role_names = closed["role"].unique().sort().to_list()
    expected_rows = item_ids * pairs.height * len(role_names)
    present = closed.select("dimension", "role", "industry", "sub_industry").unique()
    wanted = (pl.DataFrame({"dimension": dims}).join(pl.DataFrame({"role": role_names}), how="cross")
              .join(pairs, how="cross"))
    missing = wanted.join(present, on=["dimension", "role", "industry", "sub_industry"], how="anti")
    missing_examples = [f"{r['dimension']} / {r['role']} / {r['industry']} / {r['sub_industry']}"
                        for r in missing.head(5).iter_rows(named=True)]
    with_zh = closed.filter(pl.col("prompt_zh").is_not_null())
    no_scale = closed.filter(~pl.col("prompt_en").str.contains(r"\b1\b") | ~pl.col("prompt_en").str.contains(r"\b7\b"))
    role_mismatch = closed.filter(~pl.col("prompt_en").str.contains(pl.col("role"), literal=True))
    industry_mismatch = closed.filter(~pl.col("prompt_en").str.contains(pl.col("industry"), literal=True)
                                      | ~pl.col("prompt_en").str.contains(pl.col("sub_industry"), literal=True))
    return [
        check("closed rows = items x (industry, company type) pairs x roles", "closed", closed.height,
              expected_rows),
        check("each item has one dimension and one reverse flag", "closed", items, item_ids),
        check("every dimension x role x (industry, company type) pair is present", "closed", missing.height, 0,
              examples=missing_examples),
        check("roles (informational; the paper's three: entry-level employee, middle-manager, executive)", "closed",
              role_names, "any", passed=True),
        check("no duplicate English prompt", "closed", closed.height - closed["prompt_en"].n_unique(), 0),
        check("no duplicate Chinese prompt", "closed", with_zh.height - with_zh["prompt_zh"].n_unique(), 0),
        check("every English prompt names the points 1 and 7 of its scale", "closed", no_scale.height, 0),
        check("every English prompt states its row's role", "closed", role_mismatch.height, 0),
        check("every English prompt names its row's industry and company type", "closed", industry_mismatch.height,
              0),
        check("closed prompts without a Chinese text (informational)", "closed", closed.height - with_zh.height,
              "any", passed=True),
        check("Chinese prompts whose company type stays in English (informational: no translation given)", "closed",
              with_zh.filter(pl.col("prompt_zh").str.contains(pl.col("sub_industry"), literal=True)).height, "any",
              passed=True),
    ]
