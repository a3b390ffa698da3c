"""CDEval's metrics.json: every table and metric from answers and the release tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.runs import run_folder
from culturebench.evaluate.cdeval import prompts
from culturebench.evaluate.cdeval.intervals import BOOTSTRAP_NOTE, bootstrap_scores, interval, with_bounds
from culturebench.evaluate.cdeval.measures import (
    country_similarity, country_vectors, dimension_likelihood, domain_likelihood, group_similarity, hofstede_versions,
    instability, model_similarity, model_vectors, orientation_likelihood, pairwise_baseline, pca_points,
    prompt_likelihood, template_weights)
from culturebench.evaluate.cdeval.items import (
    BETA, DIMENSIONS, DOMAINS, INSTABILITY_SCALE, REPEAT_RULE_SOURCE, release_tables)
from culturebench.evaluate.cdeval.parsing import read_responses, score_answers
from culturebench.evaluate.runs.scores import ScoreResult


def score_responses(responses: pl.DataFrame, tables: dict[str, pl.DataFrame], *, sources: list[dict] | None = None,
                    release: Path | str | None = None, beta: float = BETA, scale: float = INSTABILITY_SCALE,
                    bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap(),
                    repeat_rule: str = prompts.REPEAT_RULES[0]) -> ScoreResult:
    """Every table and metric from answers (model, question_id, prompt, sample_index, response) and the release
    tables (questions, hofstede); the point estimates are the paper's, each with a ``bootstrap`` interval
    (``bootstrap_scores``) beside it: ``<metric>_ci`` = [low, high] in metrics.json, ``<value>_low``/``_high``
    columns in the tables, the settings under ``uncertainty``, and the paired model differences under
    ``model_differences``. Tables: scored, prompt_likelihood, instability, template_weights, orientation_likelihood,
    domain_likelihood, dimension_likelihood, country_similarity, countries_left_out, group_similarity,
    model_similarity, pca_points."""
    if responses.height == 0:
        raise InputError("no responses to score")
    hofstede = tables["hofstede"]
    scored = score_answers(responses, tables["questions"], repeat_rule)
    prompt_lik = prompt_likelihood(scored)
    instab = instability(scored)
    weights = template_weights(instab, scale)
    likelihood = orientation_likelihood(prompt_lik, weights)
    by_domain = domain_likelihood(likelihood)
    by_dimension = dimension_likelihood(likelihood, by_domain)
    countries = country_similarity(by_dimension, hofstede, beta)
    _, countries_left_out = country_vectors(hofstede)
    _, models_left_out = model_vectors(by_dimension)
    groups = group_similarity(by_dimension, hofstede, beta)
    pairs = model_similarity(by_dimension)
    points, explained = pca_points(by_dimension, hofstede, beta)
    bounds, no_spread = bootstrap_scores(scored, tables["questions"], hofstede, bootstrap, beta=beta, scale=scale)
    by_dimension = with_bounds(by_dimension, bounds["dimension_likelihood"], "likelihood")
    by_domain = with_bounds(by_domain, bounds["domain_likelihood"], "likelihood")
    weights = with_bounds(weights, bounds["template_weights"], "weight")
    countries = with_bounds(countries, bounds["country_similarity"], "similarity")
    groups = with_bounds(groups, bounds["group_similarity"], "similarity")
    pairs = with_bounds(pairs, bounds["model_similarity"], "similarity")
    differences = bounds["differences"]

    models = sorted(scored["model"].unique().to_list())
    per_model = {}
    for model in models:
        mine = scored.filter(pl.col("model") == model)
        status = {s: 0 for s in prompts.STATUSES}
        for s, n in mine.group_by("parse_status").len().iter_rows():
            status[s] = n
        dims = by_dimension.filter(pl.col("model") == model)
        domains: dict[str, dict[str, float]] = {}
        domains_ci: dict[str, dict[str, list]] = {}
        for row in by_domain.filter(pl.col("model") == model).iter_rows(named=True):
            domains.setdefault(row["dimension"], {})[row["domain"]] = row["likelihood"]
            domains_ci.setdefault(row["dimension"], {})[row["domain"]] = interval(row, "likelihood")
        w = weights.filter(pl.col("model") == model)
        per_model[model] = {
            "n_responses": mine.height,
            "n_questions": mine["question_id"].n_unique(),
            "samples_per_prompt": int(mine.group_by("question_id", "prompt").len()["len"].max()),
            "parse_status": status,
            "n_neutral": int((mine["parse_status"] != "chosen").sum()),
            "instability": dict(zip(w["template"], w["instability"])),
            "instability_pairs": dict(instab.filter(pl.col("model") == model).select("template", "n_pairs").iter_rows()),
            "template_weights": dict(zip(w["template"], w["weight"])),
            "template_weights_ci": {r["template"]: interval(r, "weight") for r in w.iter_rows(named=True)},
            "prompt_weights": {f"{t}_{o}": pw for t, pw in zip(w["template"], w["prompt_weight"])
                               for o in prompts.ORDERS},
            "dimension_likelihood": dict(zip(dims["dimension"], dims["likelihood"])),
            "dimension_likelihood_ci": {r["dimension"]: interval(r, "likelihood") for r in dims.iter_rows(named=True)},
            "dimension_domain_mean": dict(zip(dims["dimension"], dims["domain_mean"])),
            "dimension_n_questions": dict(zip(dims["dimension"], dims["n_questions"])),
            "domain_likelihood": domains,
            "domain_likelihood_ci": domains_ci,
            "prompt_likelihood": {name: float(mine.filter(pl.col("prompt") == name)["score"].mean())
                                  for name in prompts.PROMPTS if (mine["prompt"] == name).any()},
            "missing_dimensions": models_left_out.get(model, []),
            "country_similarity": countries.filter(pl.col("model") == model).drop("model").to_dicts(),
            "group_similarity": groups.filter(pl.col("model") == model).drop("model").to_dicts(),
        }
    metrics = {
        "benchmark": "cdeval",
        "release": None if release is None else str(release),
        "release_manifest_sha256": run_folder.release_manifest_sha256(release),
        "responses": sources or [],
        "models": models,
        "constants": {"beta": beta, "instability_scale_N": scale, "neutral_score": prompts.NEUTRAL,
                      "temperature": prompts.TEMPERATURE, "repeat_rule": repeat_rule,
                      "repeat_rule_source": REPEAT_RULE_SOURCE[repeat_rule]},
        "dimensions": list(DIMENSIONS),
        "domains": list(DOMAINS),
        "hofstede": {"versions": hofstede_versions(hofstede), "countries_compared": hofstede.height
                     - countries_left_out.height, "countries_left_out": countries_left_out.to_dicts()},
        "per_model": per_model,
        "template_weights": {m: per_model[m]["template_weights"] for m in models},
        "models_left_out": [{"model": m, "missing": d} for m, d in sorted(models_left_out.items())],
        "model_similarity": pairs.to_dicts(),
        "pairwise_baseline": pairwise_baseline(pairs),
        "pairwise_baseline_ci": ([bounds["pairwise_baseline"]["low"][0], bounds["pairwise_baseline"]["high"][0]]
                                 if bounds["pairwise_baseline"].height else None),
        "model_differences": differences.to_dicts(),
        "uncertainty": bootstrap.record(unit="question", strata="dimension", **BOOTSTRAP_NOTE),
        "pca": {"explained_variance_ratio": explained, "points": points.to_dicts(),
                "left_out": ([{"kind": "model", "name": m, "missing": d} for m, d in sorted(models_left_out.items())]
                             + [{"kind": "country", "name": r["country_name"] or r["country_code"],
                                 "missing": r["missing"]} for r in countries_left_out.iter_rows(named=True)])},
    }
    uncertainty.warn_no_spread(metrics, metrics["uncertainty"], no_spread, "cdeval")
    tables_out = {"scored": scored, "prompt_likelihood": prompt_lik, "instability": instab,
                  "template_weights": weights, "orientation_likelihood": likelihood, "domain_likelihood": by_domain,
                  "dimension_likelihood": by_dimension, "country_similarity": countries,
                  "countries_left_out": countries_left_out, "group_similarity": groups, "model_similarity": pairs,
                  "pca_points": points, "model_differences": differences}
    return ScoreResult(metrics=run_folder.json_safe(metrics), tables=tables_out)


def score(responses: Sequence[Path], release: Path, repeat_rule: str = prompts.REPEAT_RULES[0]) -> ScoreResult:
    """``culturebench score cdeval``: every metric from saved responses.jsonl files against a CDEval release."""
    release = Path(release)
    tables = release_tables(release)
    frame = read_responses(responses)
    return score_responses(frame, tables, sources=[run_folder.source_info(p) for p in responses], release=release,
                           repeat_rule=repeat_rule)
