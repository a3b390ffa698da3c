"""NormAd's dataset card: what the release is, how it was built and its licence; :func:`build_card` adds the
zones and revision of one build."""

from __future__ import annotations

from dataclasses import replace

from culturebench.builders.base import CardInfo, ConfigInfo
from culturebench.raw import paraphrases

SWAP_ONLY = "v2_swap_only"
"""The revision of a build that applied only the deterministic steps of the authors' ``src/v2_fix_neutral``."""

CARD = CardInfo(
    pretty_name="NormAd-Eti (rebuilt by culturebench)",
    summary=(
        "NormAd (Rao et al., 2024) measures the cultural adaptability of language models: given a short social "
        "situation (story) and, optionally, its country, an abstract value or a rule-of-thumb, is the protagonist's "
        "action socially acceptable (yes / no / neutral)? NormAd-Eti has 2,633 stories from 75 countries built "
        "from the etiquette pages of the Cultural Atlas (SBS)."
    ),
    rebuilt_from="a stories file, the saved atlas pages and a country -> Inglehart-Welzel cultural zone table",
    license="cc-by-4.0",
    citation=(
        "@article{rao2024normad,\n"
        "  title = {{NormAd}: A Benchmark for Measuring the Cultural Adaptability of Large Language Models},\n"
        "  author = {Rao, Abhinav Sukumar and Yerukola, Akhila and Shah, Vishwa and Reinecke, Katharina and Sap, "
        "Maarten},\n"
        "  journal = {arXiv preprint arXiv:2404.12464},\n  year = {2024}\n}"
    ),
    configs=(
        ConfigInfo("stories", "One row per story: id (normad- + 16 hex of the sha256 of the country key and the "
                   "whitespace-normalised, casefolded story), country (as in the stories file), background (the "
                   "atlas etiquette text the story was made from), axis, subaxis (basic_etiquette, eating, "
                   "visiting, gift_giving), value, rule_of_thumb, story, explanation, gold_label (yes, no, "
                   "neutral) and iw_zone (one of the eight Inglehart-Welzel cultural zones). Not redistributable: `background` "
                   "is Cultural Atlas text, (c) SBS.", redistributable=False, license_name="cultural-atlas-terms"),
        ConfigInfo("atlas", "The parsed Cultural Atlas pages: country (from the folder name), culture (the page "
                   "title), topic, subsection, kind (bullet or paragraph), text, order (1-based on the page) and "
                   "source_file. Page content is (c) SBS.", redistributable=False,
                   license_name="cultural-atlas-terms"),
    ),
    creation=(
        "Stories are read from `RAW/normad/*.csv|*.jsonl` (columns Country, Background, Axis, Subaxis, Value, "
        "Rule-of-Thumb, Story, Explanation, Gold Label as in the NormAd release; extra columns ignored), atlas "
        "pages from `RAW/cultural_atlas/<country>/<page>.html` (parsed with the standard library's HTML parser: "
        "only the open topic card's text is read, scripts and styles ignored, nothing fetched or executed) and the "
        "zones from the NormAd authors' own map of their 75 countries (`src/analysis/country_iwlist.csv`, the "
        "map of their Table 2 and per-zone figures, CC BY 4.0, shipped in `culturebench/facts/normad_authors/`); "
        "`RAW/inglehart_welzel/*.csv` (Country + Cultural_Region; optional) gives the zone of a country that map "
        "lacks, and wins over it only with the build option `zones: raw` (`culturebench build normad --zones raw`); "
        "provenance `zones` and the line at the end of this section name the countries the two place apart. "
        "A missing column, a malformed line, "
        "a page that is not an atlas page or a zone outside the eight stops the build with one line naming the "
        "file, row and column. Outer whitespace of every text is stripped; labels are casefolded; a subaxis is "
        "written in snake_case (`Gift Giving` -> `gift_giving`).\n\n"
        "Quarantined (in `quarantine/`, with a `reason`): stories with an empty field (`empty_text`), a label "
        "outside yes/no/neutral (`bad_label`), a subaxis outside the four (`bad_subaxis`), a country missing from "
        "the zone table (`no_iw_zone`), and every later copy of a story with the same country and story text "
        "(case and whitespace ignored; `duplicate_story`). Rows read (stories + atlas items) = kept + quarantined.\n\n"
        "Neutral stories, in the authors' release as in files `culturebench generate normad` writes, are built as the "
        "authors built them (their collect_irrelevant.py): country and background are the story's, while value and "
        "rule_of_thumb come from a country of another Inglehart-Welzel zone (the generated file names it in "
        "`Other Country` / `Other Background`). The authors' revised release (their src/v2_fix_neutral) swaps country "
        "and background of neutral rows to the rule's country and has a model rewrite rules, values, stories and "
        "explanations: `culturebench generate normad_v2_fix` runs every step and a build of its file is revision "
        "`v2_fix_neutral`; the build option `revision: v2_swap_only` applies the swap and the Canada gift-giving "
        "background alone, a release named for what it is (the line at the end of this section names the revision "
        "of this build).\n\n"
        "Checks beyond the schemas: every background is its country's atlas etiquette text (compared after NFKC, "
        "plain quotes and dashes and whitespace normalisation; heading lines must name a subsection; the rest must "
        "be a contiguous part of the page text or each line one item of it); no story or rule-of-thumb names a "
        "country, another name of it or a demonym (our own list in facts/countries.json, whole words, case-sensitive, "
        "plus the story's own country), as the paper's construction requires; label balance per country and "
        "counts per zone and label (Table 2) are reported."
    ),
    considerations=(
        "**Licensing.** NormAd is released under CC BY 4.0 (Rao et al.), but its backgrounds and the `atlas` "
        "config reproduce Cultural Atlas text, (c) SBS: both `stories` (for its `background` column) and `atlas` "
        "are marked *not redistributable* (`cultural-atlas-terms`): `culturebench publish` withholds `atlas` and "
        "uploads `stories` without its `background` column (the rest is NormAd's, CC BY 4.0). The Inglehart-Welzel zone "
        "assignment is the NormAd authors' (their own binning of the 75 countries; 12 of them sit in another zone "
        "in a public cultural-map table and 15 are absent from it: see "
        "`culturebench/facts/normad_authors/README.md`).\n\n"
        "**Use.** Stories were generated by GPT-4 from the atlas text and filtered by humans; they are English "
        "only and describe norms as the atlas states them, which is a simplification of any country's culture."
    ),
    tags=("cultural-norms", "etiquette", "social-acceptability", "llm-evaluation", "inglehart-welzel"),
    source=("the NormAd-Eti stories (normad_etiquette_final_data.csv, akhilayerukola/NormAd), the Cultural Atlas "
            "etiquette pages (culturalatlas.sbs.com.au) and a country -> Inglehart-Welzel zone table"),
    language=("en",),
    task_categories=("text-classification",),
    annotations_creators=("machine-generated", "expert-generated"),
    source_datasets=("extended|akhilayerukola/NormAd",),
    license_details=("NormAd is CC BY 4.0, but the `background` column of `stories` and the whole `atlas` config are "
                     "Cultural Atlas text, (c) SBS: both configs are marked not redistributable, so publishing this "
                     "release uploads neither (rebuild them locally from the raw files)."),
)


def build_card(zones_used: dict, revision: dict, variants: bool = False) -> CardInfo:
    """:data:`CARD` with this build's revision and zones (their source, the countries the RAW table places
    elsewhere), and the ``variants`` config described when the build has paraphrases (``raw.paraphrases``)."""
    differ = zones_used["differing_from_raw_table"]
    moves = ", ".join(f"{c} ({d['authors']} -> {d['raw_table']})" for c, d in differ.items()) or "none"
    if zones_used["source"] == "raw":
        line = (f"This build: zones `raw` (RAW/inglehart_welzel/ wins); {len(differ)} of the stories' countries "
                f"moved from the authors' zone: {moves}.")
    else:
        line = (f"This build: zones `authors` (the authors' `{zones_used['authors_map']}`; RAW/inglehart_welzel/ "
                f"only for {len(zones_used['from_raw_table'])} countries it lacks); {len(differ)} of the stories' "
                f"countries sit in another zone in RAW/inglehart_welzel/ and would move with `zones: raw`: {moves}.")
    if "applied_by" in revision:
        line += f" Revision `v2_fix_neutral` (the authors' src/v2_fix_neutral), applied by {revision['applied_by']}."
    elif revision["name"] == SWAP_ONLY:
        line += (f" Revision `{SWAP_ONLY}` (the deterministic steps of the authors' src/v2_fix_neutral only; not their "
                 f"revised release `v2_fix_neutral`, whose model steps have not run): "
                 f"{revision['neutral_rows_swapped']} neutral rows swapped to the rule's country and background "
                 f"(the story's in the Other columns), {revision['canada_gift_giving_backgrounds_set']} of Canada's "
                 f"gift-giving rows given its atlas Gift Giving background; {revision['model_steps']}.")
    else:
        line += " Revision `v1`: the stories as read (the published release; neutral rows keep the story's country)."
    configs = (*CARD.configs, paraphrases.config_info()) if variants else CARD.configs  # closing questions: CC BY
    return replace(CARD, creation=f"{CARD.creation}\n\n{line}", configs=configs)


def manifest_card(manifest: dict) -> CardInfo:
    """The card a release's manifest says its build wrote (``audit`` re-renders it): its zones and revision."""
    provenance = manifest.get("provenance", {})
    return build_card(provenance["zones"], provenance["revision"], "paraphrases" in provenance)

