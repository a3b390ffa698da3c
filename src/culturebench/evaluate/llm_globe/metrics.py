"""LLM-GLOBE's metrics.json: every part's metrics from answers, the release tables and the config."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.llm_globe import prompts
from culturebench.evaluate.llm_globe.config import BENCHMARK, Config, DIMENSIONS
from culturebench.evaluate.llm_globe.intervals import BOOTSTRAP_NOTE, model_differences, prompt_bootstrap
from culturebench.evaluate.llm_globe.items import release_tables
from culturebench.evaluate.llm_globe.jury import apply_jury, constant_jurors, fit_jury, jury_table
from culturebench.evaluate.llm_globe.measures import (
    GROUP_TTEST_NOTE, globe_ttests, group_means, group_ttests, mean_sd_table, model_groups, model_tests, unit_values)
from culturebench.evaluate.llm_globe.parsing import read_human_ratings, read_responses, score_closed
from culturebench.evaluate.runs.scores import ScoreResult


def part_metrics(frame: pl.DataFrame, value: str, part: str, groups: dict[str, list[str]], tables: dict,
                 config: Config, bootstrap: uncertainty.Bootstrap) -> dict:
    """The metrics of one part (closed: ``score``; open: ``jury_score``) of every model in ``frame``: Tables 2-5
    (mean_sd per model, by language, group_means, globe_ttests), the across-model tests (model_tests, Fig. 2) and
    the group t-tests, with the bootstrap intervals over prompts (``prompt_bootstrap``) beside the means
    (``mean_ci``, ``n_prompts``), the group difference (``difference``, ``difference_ci``) and the paired model
    differences (``model_differences``)."""
    models = sorted(frame["model"].unique().to_list())
    out = {
        "mean_sd": mean_sd_table(frame, value),
        "mean_sd_by_language": {lang: mean_sd_table(frame.filter(pl.col("language") == lang), value)
                                for lang in prompts.LANGUAGES if (frame["language"] == lang).any()},
        "group_means": group_means(frame, value, groups, part, config.t_unit),
        "globe_ttests": globe_ttests(frame, value, tables.get("globe_2004"), groups, config, part),
        "model_tests": model_tests(frame, value),
        "group_ttests": group_ttests(frame, value, groups, config, part),
    }
    if out["group_ttests"]:
        out["group_ttests_note"] = GROUP_TTEST_NOTE
    series = {("model", m): frame.filter(pl.col("model") == m).drop_nulls(value).select("id", "dimension", value)
              for m in models}
    series.update({("group", g): unit_values(frame, value, ms, part, config.t_unit) for g, ms in groups.items()})
    model_pairs = [(("model", a), ("model", b)) for i, a in enumerate(models) for b in models[i + 1:]]
    group_pair = [(("group", config.compare[0]), ("group", config.compare[1]))] if config.compare else []
    boot = prompt_bootstrap(series, value, [*model_pairs, *group_pair], bootstrap)
    for kind, table in (("model", out["mean_sd"]), ("group", out["group_means"])):
        for name, dims in table.items():
            for dimension, cell in dims.items():
                cell["n_prompts"], cell["mean_ci"] = boot["means"].get(((kind, name), dimension), (0, None))
    for row in out["group_ttests"]:
        row["difference"], row["difference_ci"] = boot["differences"][(*group_pair[0], row["dimension"])][:2]
    out["model_differences"] = model_differences(out["model_tests"], boot["differences"], models,
                                                 1 - bootstrap.confidence_level, boot["no_spread"])
    if boot["no_spread"]:
        out["no_spread"] = boot["no_spread"]["all"]
    return out


def score_records(records: Sequence[dict], tables: dict, config: Config | None = None, *,
                  human: pl.DataFrame | None = None, sources: list[dict] | None = None,
                  release: Path | str | None = None,
                  bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> ScoreResult:
    """Every table and metric from the records of responses.jsonl files and the release tables; every mean with
    its ``bootstrap`` interval over prompts (``part_metrics``; settings under ``uncertainty``)."""
    config = config or Config()
    if not records:
        raise InputError("no responses to score")
    closed_recs = [r for r in records if r["part"] == "closed"]
    open_recs = [r for r in records if r["part"] == "open"]
    juror_recs = [r for r in records if r["part"] == "juror"]
    metrics: dict[str, Any] = {"benchmark": BENCHMARK, "release": None if release is None else str(release),
                               "release_manifest_sha256": run_folder.release_manifest_sha256(release),
                               "responses": sources or [], "dimensions": list(DIMENSIONS),
                               "config": config.as_dict(),
                               "uncertainty": bootstrap.record(unit="prompt", strata="dimension", **BOOTSTRAP_NOTE)}
    tables_out: dict[str, pl.DataFrame] = {}
    models = sorted({str(r["model"]) for r in closed_recs + open_recs})
    metrics["models"] = models
    groups = model_groups(models, config)
    metrics["groups"] = groups

    if closed_recs:
        scored = score_closed(closed_recs, tables.get("closed"))
        tables_out["closed"] = scored
        status = {m: {s: int(((scored["model"] == m) & (scored["parse_status"] == s)).sum()) for s in prompts.STATUSES}
                  for m in models if (scored["model"] == m).any()}
        metrics["closed"] = {
            "n_answers": scored.height, "n_valid": int(scored["score"].is_not_null().sum()), "parse_status": status,
            **part_metrics(scored, "score", "closed", groups, tables, config, bootstrap),
        }
        uncertainty.warn_no_spread(metrics, metrics["closed"], metrics["closed"].get("no_spread"), "llm_globe closed")

    if open_recs:
        table, jurors, juror_status = jury_table(open_recs, juror_recs, tables.get("open"))
        if human is not None and jurors:
            jury = fit_jury(table, jurors, human, seed=config.split_seed, test_fraction=config.test_fraction)
        elif config.jury_weights is not None:
            jury = {"method": "given", "weights": dict(config.jury_weights["weights"]),
                    "language": float(config.jury_weights.get("language", 0.0)),
                    "intercept": float(config.jury_weights.get("intercept", 0.0))}
        elif jurors:
            jury = {"method": "mean", "note": "no human ratings and no jury_weights: S(x) is the mean of the jurors"}
        else:
            jury = {"method": "none", "note": "no juror ratings (no jurors in the options file): open answers are "
                                              "saved, not scored"}
        table = apply_jury(table, jurors, jury)
        tables_out["open"] = table
        constant = constant_jurors(table, jurors)
        metrics["open"] = {
            "n_answers": table.height, "jurors": jurors, "juror_parse_status": juror_status,
            "constant_jurors": constant,
            "n_scored": int(table["jury_score"].is_not_null().sum()), "jury": jury,
            **part_metrics(table, "jury_score", "open", groups, tables, config, bootstrap),
        }
        for juror, found in constant.items():
            metrics.setdefault("warnings", []).append(
                f"llm_globe jury: juror {juror} rated all {found['n']:,} answers {found['rating']:g}: its ratings do "
                "not vary, so they tell no answer from another (check the juror's prompt, model and parsing)")
        uncertainty.warn_no_spread(metrics, metrics["open"], metrics["open"].get("no_spread"), "llm_globe open")
    return ScoreResult(metrics=run_folder.json_safe(metrics), tables=tables_out)


def score(responses: Sequence[Path], release: Path, config: Config | None = None, *,
          bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> ScoreResult:
    """``culturebench score llm_globe``: every metric from saved responses.jsonl files against a release."""
    config = config or Config()
    tables = release_tables(release)
    records = read_responses(responses)
    human = read_human_ratings(config.human_ratings) if config.human_ratings is not None else None
    sources = [run_folder.source_info(p) for p in responses]
    return score_records(records, tables, config, human=human, sources=sources, release=release,
                         bootstrap=bootstrap)
