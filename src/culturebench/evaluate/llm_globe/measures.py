"""LLM-GLOBE's means and tests (Sec. 3.4, Tables 2-5, Fig. 2): mean and SD per model and dimension, group means,
t-tests against GLOBE's society scores, between models and between groups."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.reports import stats
from culturebench.evaluate.llm_globe.config import Config, DIMENSIONS
from culturebench.evaluate.llm_globe.items import GLOBE_MEASURES


def mean_sd_table(frame: pl.DataFrame, value: str) -> dict[str, dict[str, dict]]:
    """model -> dimension -> {n, mean, sd} (Tables 2-5 layout), dimensions in the paper's order."""
    out: dict[str, dict[str, dict]] = {}
    for model in sorted(frame["model"].unique().to_list()):
        mine = frame.filter(pl.col("model") == model)
        out[model] = {d: stats.mean_sd(mine.filter(pl.col("dimension") == d)[value].to_list())
                      for d in DIMENSIONS if (mine["dimension"] == d).any()}
    return out


def model_groups(models: Sequence[str], config: Config) -> dict[str, list[str]]:
    """The configured groups (their models that are present), else one group per model."""
    if config.groups:
        return {g: [m for m in ms if m in models] for g, ms in config.groups.items()}
    return {m: [m] for m in models}


def unit_values(frame: pl.DataFrame, value: str, models: Sequence[str], part: str, t_unit: str) -> pl.DataFrame:
    """A group's values in the unit of ``T_UNITS``: ``id`` (the prompt), ``dimension`` and ``value`` columns, one
    row per prompt (closed, paper), per prompt and model (open, paper) or per answer (pooled)."""
    mine = frame.filter(pl.col("model").is_in(list(models))).drop_nulls(value)
    if t_unit == "pooled":
        return mine.select("id", "dimension", value)
    keys = ["dimension", "id"] if part == "closed" else ["dimension", "id", "model"]
    return mine.group_by(keys, maintain_order=True).agg(pl.col(value).mean()).select("id", "dimension", value)


def group_means(frame: pl.DataFrame, value: str, groups: dict[str, list[str]], part: str, t_unit: str
                ) -> dict[str, dict[str, dict]]:
    """Per group and dimension: n, mean, SD of the group's unit values (Tables 2-5, "... Models M SD")."""
    out = {}
    for g, ms in groups.items():
        units = unit_values(frame, value, ms, part, t_unit)
        out[g] = {d: stats.mean_sd(units.filter(pl.col("dimension") == d)[value].to_list()) for d in DIMENSIONS}
    return out


def resolve_societies(globe: pl.DataFrame | None, config: Config) -> dict[str, str]:
    """Configured group (or "*") -> the society as the release's globe_2004 names it; an unknown one is an error."""
    if not config.societies:
        return {}
    if globe is None:
        raise InputError("society given, but the release has no globe_2004 config", column="society")
    countries = {c.lower(): c for c in globe["country"].drop_nulls().to_list()}
    out = {}
    for group, society in config.societies.items():
        country = countries.get(society.lower())
        if country is None:
            raise InputError(f"society {society!r} is not in the release's globe_2004 config (e.g. "
                             f"{', '.join(sorted(countries.values())[:5])})", column="society")
        out[group] = country
    return out


def globe_ttests(frame: pl.DataFrame, value: str, globe: pl.DataFrame | None, groups: dict[str, list[str]],
                 config: Config, part: str) -> list[dict]:
    """One-sample t-tests of each group's unit values per dimension against the GLOBE 2004 societal values and
    practices of the society chosen for that group (Tables 2-5, "Comparison")."""
    societies = resolve_societies(globe, config)
    if not societies:
        return []
    out = []
    for group, models in groups.items():
        country = societies.get(group, societies.get("*"))
        if country is None:
            continue
        reference = globe.filter(pl.col("country") == country)
        units = unit_values(frame, value, models, part, config.t_unit)
        for dimension in DIMENSIONS:
            ref = reference.filter(pl.col("dimension") == dimension)
            scores = units.filter(pl.col("dimension") == dimension)[value].to_list()
            for measure in GLOBE_MEASURES:
                target = ref[measure].drop_nulls()
                if target.len() == 0:
                    continue
                out.append({"group": group, "society": country, "dimension": dimension, "measure": measure,
                            "unit": config.t_unit, **stats.one_sample_t(scores, float(target[0]))})
    return out


def model_tests(scored: pl.DataFrame, value: str) -> dict:
    """Per dimension: Friedman across models with the prompts as blocks (each model's score for a prompt, over its
    samples and whatever language it answered in; Sec. 3.4, Sec. 4.2.3) and post-hoc pairwise Wilcoxon
    signed-rank tests (Fig. 2)."""
    models = sorted(scored["model"].unique().to_list())
    blocks = (scored.group_by("model", "dimension", "id")
              .agg(pl.col(value).mean()).drop_nulls(value))
    out = {}
    for dimension in DIMENSIONS:
        part = blocks.filter(pl.col("dimension") == dimension)
        if part.height == 0:
            continue
        wide = part.pivot(on="model", index="id", values=value).sort("id")
        columns = {m: (wide[m].to_list() if m in wide.columns else [None] * wide.height) for m in models}
        out[dimension] = {"friedman": stats.friedman(columns), "wilcoxon": stats.pairwise_wilcoxon(columns)}
    return out


GROUP_TTEST_NOTE = (
    "Sec. 4.2.4's two-sample t-tests (US vs Chinese models, open generation) cannot be reproduced from the paper's "
    "own numbers: with the group means and SDs of Tables 4-5 and one value per prompt and model (n = 400 per "
    "group, the unit that reproduces every one-sample t of Tables 4-5), Student's t is 1.518 for performance "
    "orientation (printed 2.176) and 9.682 for gender egalitarianism (printed 11.896); the n per group that would "
    "give each printed t ranges from about 535 to 871 over the nine dimensions, so no single unit (per prompt, per "
    "prompt and model, per answer) gives them. What culturebench computes: scipy.stats.ttest_ind (Student's; "
    "Welch's with equal_var: false) per dimension between the two groups of `compare`, on the unit values of "
    "t_unit (paper: one value per prompt and model for open, per prompt for closed; pooled: every answer).")
"""Why Sec. 4.2.4's printed t values are not reproduced, and what ``group_ttests`` computes (metrics.json
``group_ttests_note``; the test recomputes the numbers quoted from Tables 4-5)."""


def group_ttests(frame: pl.DataFrame, value: str, groups: dict[str, list[str]], config: Config, part: str
                 ) -> list[dict]:
    """Two-sample t-tests per dimension between the two groups of ``compare`` (Sec. 4.2.4), on the unit values
    (``T_UNITS``): Student's by default, Welch's with ``equal_var`` false. The paper's printed values are not
    reproducible from its Tables 4-5 (``GROUP_TTEST_NOTE``)."""
    if config.compare is None:
        return []
    a, b = config.compare
    for g in (a, b):
        if g not in groups:
            raise InputError(f"compare names group {g!r}, which is not in groups")
    units = {g: unit_values(frame, value, groups[g], part, config.t_unit) for g in (a, b)}
    out = []
    for dimension in DIMENSIONS:
        if not (frame["dimension"] == dimension).any():
            continue
        out.append({"a": a, "b": b, "dimension": dimension, "unit": config.t_unit, **stats.two_sample_t(
            units[a].filter(pl.col("dimension") == dimension)[value].to_list(),
            units[b].filter(pl.col("dimension") == dimension)[value].to_list(), equal_var=config.equal_var)})
    return out
