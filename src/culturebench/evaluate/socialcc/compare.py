"""SocialCC's entry of ``culturebench compare`` (``COMPARE``): Table 2 and Figs. 5-7 per model with intervals,
paired differences."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.evaluate.reports import compare, uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.socialcc import BENCHMARK, prompts
from culturebench.evaluate.socialcc.config import Config
from culturebench.evaluate.socialcc.items import TRANSCRIPTS_FILE, release_tables
from culturebench.evaluate.socialcc.intervals import BOOTSTRAP_NOTE
from culturebench.evaluate.socialcc.metrics import aggregate
from culturebench.evaluate.socialcc.plots import (
    aware_without_knowledge_png, behaviour_distribution_png, by_country_png, by_value_topic_zone_png, table2_png)
from culturebench.evaluate.socialcc.parsing import read_transcripts, reparse, rezone


def compare_runs(folders: Sequence[compare.RunFolder], labels: list[dict[str, str]], settings: uncertainty.Bootstrap,
                 release: Path | None) -> compare.Comparison:
    """Every run's transcripts re-aggregated together from their saved judgements (as ``score`` without a judge),
    so that one bootstrap of scenarios serves all models (paired differences); zones looked up in the release
    (--release, else the first run's) where it is at hand, else the transcripts' own."""
    records, sources = [], []
    for folder, mapping in zip(folders, labels):
        paths = folder.scored_files(TRANSCRIPTS_FILE, "transcripts")
        found = read_transcripts(paths)
        for r in found:
            r["model"] = mapping.get(str(r["model"]), str(r["model"]))
        records += found
        sources += [run_folder.source_info(p) for p in paths]
    release = release or folders[0].release
    notes = []
    if release is not None and (Path(release) / "manifest.json").is_file():
        rezone(records, release_tables(Path(release))["scenarios"], Config())
    else:
        notes.append("Release not at hand: Fig. 6 uses the zones the transcripts recorded.")
        release = None
    reparse(records)
    metrics = aggregate(records, release=release, sources=sources, judge_note="re-aggregated from saved judgements",
                        bootstrap=settings)
    judges = sorted({j for m in metrics["models"] for j in metrics["per_model"][m]["judge_models"]})
    notes.append(f"Judge models: {', '.join(judges)}.")
    return compare.Comparison(models=metrics["models"], tables=comparison_tables(metrics), metrics=metrics,
                              notes=notes)


def comparison_tables(metrics: dict) -> dict[str, pl.DataFrame]:
    """The report's tables from metrics.json: table2 (Table 2, one row per model), differences (paired),
    by_country (Fig. 5 with sizes, small countries flagged, not ranked), value_topic_zone (Fig. 6) and
    aware_without_knowledge (Fig. 7)."""
    ci = lambda name: {name: pl.Float64, f"{name}_low": pl.Float64, f"{name}_high": pl.Float64}
    scores = [str(s) for s in range(prompts.JUDGE_SCALES["behaviour"][0], prompts.JUDGE_SCALES["behaviour"][1] + 1)]
    table2, countries, cells, fig7 = [], [], [], []
    for model in metrics["models"]:
        m = metrics["per_model"][model]
        t = m["table2"]
        row = {"model": model, "dialogues": t["n"]}
        for j in prompts.JUDGES:
            row |= compare.with_interval(prompts.JUDGE_NAMES[j], t[j], t.get(f"{j}_ci"))
        for s in scores:
            row |= compare.with_interval(f"behaviour score {s} (%)", t["behaviour_distribution_pct"][s],
                                  (t.get("behaviour_distribution_pct_ci") or {}).get(s))
        row["invalid judgements"] = sum(t[f"n_invalid_{j}"] for j in prompts.JUDGES)
        table2.append(row)
        for j in prompts.JUDGES:
            for g in m["country_breakdown"][j]:
                countries.append({"model": model, "dimension": prompts.JUDGE_NAMES[j], "rank": g["rank"],
                                  "country": g["group"], "n": g["n"], **compare.with_interval("score", g["estimate"],
                                                                                       [g["low"], g["high"]]),
                                  "small": g["small"]})
        for key, block in m["by_value_topic_zone"].items():
            topic, zone = key.split(" | ", 1)
            cells.append({"model": model, "value topic": topic, "zone": zone, "n": block["n_valid_value"],
                          **compare.with_interval("value knowledge", block["value"], block.get("value_ci"))})
        found = m["aware_without_knowledge"]
        fig7.append({"model": model, "of": "judged dialogues", "topic": "(all)", "n": found["n_judged"],
                     **compare.with_interval("pct", None if found["share"] is None else 100 * found["share"],
                                      [None if v is None else 100 * v for v in found.get("share_ci") or [None, None]])})
        for key, what in (("by_topic_pct", "commonsense topic"), ("by_value_topic_pct", "value topic")):
            for topic, pct in found[key].items():
                fig7.append({"model": model, "of": f"aware without knowledge, by {what}", "topic": topic,
                             "n": found["n"],
                             **compare.with_interval("pct", pct, (found.get(f"{key}_ci") or {}).get(topic))})
    table2_schema = {"model": pl.String, "dialogues": pl.Int64}
    for j in prompts.JUDGES:
        table2_schema |= ci(prompts.JUDGE_NAMES[j])
    for s in scores:
        table2_schema |= ci(f"behaviour score {s} (%)")
    table2_schema["invalid judgements"] = pl.Int64
    differences = [{"model_a": d["model_a"], "model_b": d["model_b"], "dimension": prompts.JUDGE_NAMES[d["dimension"]],
                    "n_common": d["n_common"],
                    **compare.with_interval("difference", d["difference"], [d["low"], d["high"]]),
                    "pvalue": d["pvalue"], "pvalue_holm": d["pvalue_holm"], "significant": d["significant"]}
                   for d in metrics["model_differences"]]
    return {
        "table2": pl.DataFrame(table2, schema=table2_schema),
        "differences": pl.DataFrame(differences, schema={
            "model_a": pl.String, "model_b": pl.String, "dimension": pl.String, "n_common": pl.Int64,
            **ci("difference"), "pvalue": pl.Float64, "pvalue_holm": pl.Float64, "significant": pl.Boolean}),
        "by_country": pl.DataFrame(countries, schema={
            "model": pl.String, "dimension": pl.String, "rank": pl.Int64, "country": pl.String, "n": pl.Int64,
            **ci("score"), "small": pl.Boolean}),
        "value_topic_zone": pl.DataFrame(cells, schema={
            "model": pl.String, "value topic": pl.String, "zone": pl.String, "n": pl.Int64,
            **ci("value knowledge")}),
        "aware_without_knowledge": pl.DataFrame(fig7, schema={
            "model": pl.String, "of": pl.String, "topic": pl.String, "n": pl.Int64, **ci("pct")}),
    }


COMPARE = compare.BenchmarkSpec(
    benchmark=BENCHMARK.name,
    title="SocialCC (Wu et al., ACL 2025)",
    build=compare_runs,
    tables=(
        compare.Table("table2", "Table 2: cultural competence per model",
                      "Mean judged score per dimension (awareness, commonsense and value knowledge 0/1, behaviour "
                      "0-3) and the behaviour score distribution, over the dialogues with a valid judgement."),
        compare.Table("differences", "Paired differences between models per Table 2 dimension",
                      "difference = mean over the scenarios both models were judged on of score_a - score_b; "
                      "pvalue_holm over all rows."),
        compare.Table("by_country", "Fig. 5: per country (of the commonsense item unless the runs' fig5_country "
                      "says value), with sizes",
                      f"n = dialogues with a valid judgement; countries with n < {uncertainty.MIN_GROUP_SIZE} are "
                      "flagged small and not ranked; rank 1 = highest score per model and dimension."),
        compare.Table("value_topic_zone", "Fig. 6: value knowledge per value topic x Inglehart-Welzel group"),
        compare.Table("aware_without_knowledge", "Fig. 7: aware without commonsense knowledge",
                      "First row per model: % of judged dialogues scored aware (1) without commonsense knowledge "
                      "(0); then how those split (%) by commonsense topic and by value topic."),
    ),
    figures=(
        compare.Figure("table2.png", "Table 2: the four dimensions per model", lambda c, p: table2_png(c.metrics, p),
                       table="table2"),
        compare.Figure("behaviour_distribution.png", "Table 2: behaviour score distribution",
                       lambda c, p: behaviour_distribution_png(c.metrics, p), table="table2"),
        compare.Figure("by_country.png", "Fig. 5: awareness and knowledge per country",
                       lambda c, p: by_country_png(c.metrics, p), table="by_country"),
        compare.Figure("by_value_topic_zone.png", "Fig. 6: value knowledge by value topic x cultural group",
                       lambda c, p: by_value_topic_zone_png(c.metrics, p), table="value_topic_zone"),
        compare.Figure("aware_without_knowledge.png", "Fig. 7: aware without commonsense knowledge",
                       lambda c, p: aware_without_knowledge_png(c.metrics, p), table="aware_without_knowledge"),
    ),
    significance=BOOTSTRAP_NOTE["significance"] + ".",
)
"""``culturebench compare`` for SocialCC: every run's transcripts re-aggregated together."""
