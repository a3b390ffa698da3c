"""Whose opinions does a model hold (issue #56): WVB's value questions asked without a persona, the model's answer
distribution per question compared with each country's respondents (``evaluate wvb --no-demographics``).

Sources (``facts/opinions.json`` holds the templates and the definitions with their sources): Durmus et al. 2023
(GlobalOpinionQA: similarity 1 - Jensen-Shannon distance per question averaged per country; "cross-national prompting", which
names the country) and Liu, Kaneko and Chu 2025 (the WVS; a Wasserstein-based alignment score; the distribution the
model states in words).

Pure functions from tables to tables, one pass each:

- ``country_distributions``: each country's answer distribution per question from the release's examples (every
  split) joined with its participants, weighted by ``W_WEIGHT`` where every respondent has one;
- ``answer_distributions`` (sampled answers), ``mean_distributions`` (per-request distributions: option
  probabilities with ``--scoring logprobs``, or verbalized ones, ``parse_distribution``): the model's, per steering
  country (null: unsteered) and question;
- ``similarity_table``: per (steer, country, question) 1 - Jensen-Shannon distance (base 2; GlobalOpinionQA's, the
  headline), 1 - Jensen-Shannon divergence (base 2) and 1 - W1 / (max code - min code);
- ``country_view``: per country the means over questions with bootstrap intervals over questions (one
  ``uncertainty.resample_units`` for every country and measure: paired), the steering gain, and the headline.

``write_country_view`` is the one call ``run.evaluate`` makes: it reads the run's responses, scores them and writes
countries.json and the figures (``evaluate.reports.countries``).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
import polars as pl

from culturebench.errors import InputError
from culturebench.facts import read as read_facts
from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.wvb import reference_points
from culturebench.evaluate.wvb import WEIGHTS
from culturebench.evaluate.wvb.items import _collect
from culturebench.release_reader import Release

WEIGHT_COLUMN = "W_WEIGHT"
"""The survey weight in the participants config (``builders.wvb.WEIGHT_COLUMN``; not imported: that module
imports the builder's stack)."""
WEIGHT_QUANTUM = 1e-9
"""Survey weights are summed as whole multiples of this (WVS-7's W_WEIGHT has at most 8 decimals)."""
MEASURES = ("similarity_js_distance", "similarity_jsd", "similarity_w1")
"""The country view's measures (facts/opinions.json ``measures``), the first the headline: GlobalOpinionQA's."""
HEADLINE = MEASURES[0]
HEADLINE_SHORT = HEADLINE.removeprefix("similarity_")
MEASURE_LABELS = {"similarity_js_distance": "1 - Jensen-Shannon distance (base 2; GlobalOpinionQA)",
                  "similarity_jsd": "1 - Jensen-Shannon divergence (base 2)",
                  "similarity_w1": "1 - W1 / (N - 1) (Liu, Kaneko and Chu 2025)"}
"""What the figures print for each measure (countries.json ``measure_label``)."""

N_EXTREMES = 5
"""metrics.json names the five most and five least similar countries."""


@cache
def facts() -> dict:
    return read_facts("opinions")


@cache
def wvs_countries() -> tuple[dict[str, str], ...]:
    """The rows of facts/wvs_countries.csv (iso_numeric, iso_alpha3, name, continent): every WVS-7 country
    culturebench knows."""
    text = resources.files("culturebench.facts").joinpath("wvs_countries.csv").read_text(encoding="utf-8")
    return tuple(csv.DictReader(text.splitlines()))


def country_names() -> dict[str, str]:
    """ISO alpha-3 -> English name of every WVS-7 country culturebench knows (facts/wvs_countries.csv)."""
    return {row["iso_alpha3"]: row["name"] for row in wvs_countries()}


_OBJECT = re.compile(r"\{[^{}]*\}")


MAX_SHARE = 100.0
"""A stated share is a fraction or a percentage: above this it is no share (the whole distribution is unreadable)."""


def parse_distribution(text: str | None, scale_min: int, scale_max: int) -> dict[int, float] | None:
    """A stated distribution (``{"1": 0.2, "2": 0.5, ...}``) over the codes of ``scale_min..scale_max``,
    renormalised to sum to 1; keys off the scale or not whole numbers are left out. None (unreadable: counted,
    never scored) when the text holds no such object, a share on the scale is not a finite number in
    [0, MAX_SHARE], or the shares sum to 0."""
    for span in _OBJECT.findall(text or ""):
        try:
            obj = json.loads(span)
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        shares = {}
        for key, value in obj.items():
            try:
                code = int(str(key).strip())
            except (TypeError, ValueError):
                continue
            if not scale_min <= code <= scale_max:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                return None
            try:
                share = float(value)
            except ValueError:
                return None
            if not (np.isfinite(share) and 0 <= share <= MAX_SHARE):
                return None
            shares[code] = shares.get(code, 0.0) + share
        total = sum(shares.values())
        if total > 0:
            return {code: share / total for code, share in sorted(shares.items())}
    return None


def stated_reader(repo) -> Callable[[str | None, int, int], dict[int, float] | None]:
    """``parse_distribution``'s counterpart under ``--protocol liu2025``: the distribution their ``match_api_str``
    accepts (``liu2025.LiuRepo.parse_stated``), its codes on the scale kept and renormalised."""

    def read(text: str | None, scale_min: int, scale_max: int) -> dict[int, float] | None:
        stated = repo.parse_stated(text)
        shares = {int(k): v for k, v in (stated or {}).items() if k.isdigit() and scale_min <= int(k) <= scale_max
                  and v >= 0}
        total = sum(shares.values())
        return {code: share / total for code, share in sorted(shares.items())} if total > 0 else None

    return read


# ------------------------------------------------------------------------------------------------ the release


def release_countries(release: Path) -> pl.DataFrame:
    """The release's countries (participants' ``country``, ISO alpha-3) with their names (null where culturebench
    knows none), sorted; an InputError when the participants config has no country column."""
    release = Path(release)
    frame = Release.open(release).scan("participants")
    if "country" not in frame.collect_schema().names():
        raise InputError("the participants config has no country column: no country to compare with", file=release,
                         column="country")
    codes = _collect(frame.select(pl.col("country").cast(pl.String)).unique().drop_nulls(), release, "participants")
    names = country_names()
    return (codes.sort("country")
            .with_columns(pl.col("country").replace_strict(names, default=None, return_dtype=pl.String).alias("name")))


def steering_countries(release: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(code, name) of every country ``--steer country`` names, and one line per problem: countries without a
    name are left out (the prompt names a country in words, never by its code); none named is an InputError."""
    countries = release_countries(release)
    unnamed = countries.filter(pl.col("name").is_null())["country"].to_list()
    named = [(code, name) for code, name in countries.drop_nulls("name").iter_rows()]
    if not named:
        raise InputError("--steer country: the release's countries have no names culturebench knows "
                         f"({', '.join(unnamed[:5]) or 'no country'}): a prompt names a country in words", file=release)
    notes = [f"--steer country: no name for {', '.join(unnamed)}; not steered to"] if unnamed else []
    return named, notes


def interview_languages(release: Path, top: int = 3) -> dict[str, list[list]]:
    """Per country of the release, its ``top`` interview languages (WVS-7's S_INTLANGUAGE, codebook text, in the
    participants config) with their shares of the country's respondents who have one; {} when the release lacks
    the column."""
    release = Path(release)
    people = Release.open(release).scan("participants")
    if "S_INTLANGUAGE" not in people.collect_schema().names():
        return {}
    counts = _collect(people.select(pl.col("country").cast(pl.String), pl.col("S_INTLANGUAGE").cast(pl.String))
                      .drop_nulls().group_by("country", "S_INTLANGUAGE").len(), release, "participants")
    out: dict[str, list[list]] = {}
    for (country,), group in counts.sort("country", "len", "S_INTLANGUAGE", descending=[False, True, False]) \
            .group_by("country", maintain_order=True):
        total = group["len"].sum()
        out[country] = [[language, n / total] for language, n in group.select("S_INTLANGUAGE", "len").head(top).iter_rows()]
    return out


def country_distributions(release: Path, question_ids: Iterable[str], weights: str = WEIGHTS[0]
                          ) -> tuple[pl.DataFrame, bool]:
    """Each country's answer distribution per question: (country, question_id, code, share, n) with n the
    respondents of the country who answered the question, from every split's examples joined with the participants
    in one streamed pass; with ``weights`` design, weighted by W_WEIGHT when the participants config has it for
    every respondent (then also the second value, True); with none, each respondent counted once."""
    release = Path(release)
    opened = Release.open(release)
    people = opened.scan("participants")
    has_weight = weights == "design" and WEIGHT_COLUMN in people.collect_schema().names()
    weighted = False
    if has_weight:
        counts = _collect(people.select(pl.col(WEIGHT_COLUMN).null_count().alias("missing"),
                                        pl.col(WEIGHT_COLUMN).min().alias("lowest")), release, "participants")
        weighted = counts["missing"][0] == 0 and (counts["lowest"][0] or 0) > 0
    # weights as whole multiples of WEIGHT_QUANTUM: integer sums do not depend on the order polars adds them in
    # (float sums of a parallel group-by do, in the last bits: the same run would not write the same bytes)
    weight = (pl.col(WEIGHT_COLUMN).cast(pl.Float64) / WEIGHT_QUANTUM).round().cast(pl.Int64) if weighted \
        else pl.lit(1, dtype=pl.Int64)
    people = people.select(pl.col("participant_id").cast(pl.Int64), pl.col("country").cast(pl.String),
                           weight.alias("weight"))
    wanted = pl.Series(list(question_ids), dtype=pl.String).implode()
    answers = (opened.scan("examples")
               .select(pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
                       pl.col("answer").cast(pl.Int64).alias("code"))
               .filter(pl.col("question_id").is_in(wanted) & pl.col("code").is_not_null())
               .join(people, on="participant_id", how="inner")
               .group_by("country", "question_id", "code")
               .agg(pl.col("weight").sum(), pl.len().alias("n")))
    frame = _collect(answers, release, "examples")
    group = ("country", "question_id")
    frame = frame.select(*group, "code", (pl.col("weight") / pl.col("weight").sum().over(group)).cast(pl.Float64)
                         .alias("share"),
                         pl.col("n").sum().over(group).cast(pl.Int64).alias("n")).sort(*group, "code")
    return frame, weighted


# ------------------------------------------------------------------------------------------------ the model


def answer_distributions(answers: pl.DataFrame, questions: pl.DataFrame) -> pl.DataFrame:
    """The model's distribution per (steer, question) from its sampled answers (steer, question_id, answer):
    (steer, question_id, code, share); answers off the question's scale and unparsed ones are left out."""
    return (answers.lazy().drop_nulls("answer")
            .join(questions.lazy().select("question_id", "scale_min", "scale_max"), on="question_id", how="inner")
            .filter(pl.col("answer").is_between(pl.col("scale_min"), pl.col("scale_max")))
            .group_by("steer", "question_id", pl.col("answer").cast(pl.Int64).alias("code"))
            .agg(pl.len().alias("n"))
            .select("steer", "question_id", "code",
                    (pl.col("n") / pl.col("n").sum().over("steer", "question_id")).alias("share"))
            .sort("steer", "question_id", "code", nulls_last=False).collect())


def mean_distributions(parts: pl.DataFrame) -> pl.DataFrame:
    """The model's distribution per (steer, question) as the mean of its requests' distributions (steer,
    question_id, sample_index, code, share; each request's shares sum to 1): (steer, question_id, code, share)."""
    group = ("steer", "question_id")
    frame = (parts.with_columns(pl.col("sample_index").n_unique().over(group).alias("n_samples"))
             .sort(*group, "code", "sample_index", nulls_last=False))
    sums = ordered_sums(frame, [*group, "code"], {"share": frame["share"].to_numpy()})
    n = frame.unique([*group, "code"], keep="first", maintain_order=True)["n_samples"].to_numpy()
    return sums.with_columns(pl.Series("share", sums["share"].to_numpy() / n))


def ordered_sums(frame: pl.DataFrame, keys: list[str], columns: dict[str, np.ndarray]) -> pl.DataFrame:
    """Per run of equal ``keys`` in ``frame`` (sorted by them), the sum of each array of ``columns`` (aligned with
    ``frame``'s rows), added in row order (``np.add.reduceat``): the same bytes on every run, which a parallel
    group-by's float sums are not."""
    starts = np.flatnonzero(np.r_[True, frame.select(
        pl.any_horizontal(pl.col(k).ne_missing(pl.col(k).shift(1)) for k in keys).fill_null(True))
        .to_series().to_numpy()[1:]]) if frame.height else np.empty(0, dtype=np.int64)
    head = frame[starts.tolist()].select(keys) if frame.height else frame.select(keys)
    return head.with_columns(pl.Series(name, np.add.reduceat(values, starts) if frame.height else values[:0])
                             for name, values in columns.items())


# ------------------------------------------------------------------------------------------------ the measures


def similarity_table(model: pl.DataFrame, humans: pl.DataFrame, questions: pl.DataFrame) -> pl.DataFrame:
    """Per (steer, country, question): ``js_distance`` = 1 - the Jensen-Shannon distance (the square root of the
    divergence) in base 2 (GlobalOpinionQA's, Durmus et al. 2023), ``jsd`` = 1 - the divergence in base 2 and ``w1``
    = 1 - W1 / (max code - min code) over the question's codes scale_min..scale_max (``facts/opinions.json``
    ``measures``), for the unsteered model (steer null) and the model steered to each country, against every
    country (``specificity`` compares the steered country with the others). Questions without a scale are left
    out."""
    scales = (questions.lazy().drop_nulls(["scale_min", "scale_max"])
              .filter(pl.col("scale_max") > pl.col("scale_min"))
              .select("question_id", pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64)))
    model_keys = model.lazy().select("steer", "question_id").unique()
    human_keys = humans.lazy().select("country", "question_id").unique()
    pairs = model_keys.join(human_keys, on="question_id", how="inner").join(scales, on="question_id", how="inner")
    grid = (pairs.with_columns(pl.int_ranges("scale_min", pl.col("scale_max") + 1).alias("code")).explode("code")
            .join(model.lazy().rename({"share": "p"}), on=["steer", "question_id", "code"], how="left", nulls_equal=True)
            .join(humans.lazy().select("country", "question_id", "code", pl.col("share").alias("q")),
                  on=["country", "question_id", "code"], how="left")
            .with_columns(pl.col("p").fill_null(0.0), pl.col("q").fill_null(0.0))
            .sort("steer", "country", "question_id", "code", nulls_last=False))
    keys = ["steer", "country", "question_id"]
    grid = grid.collect()
    p, q = grid["p"].to_numpy(), grid["q"].to_numpy()
    m = (p + q) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = 0.5 * np.where(p > 0, p * np.log2(p / m), 0.0) + 0.5 * np.where(q > 0, q * np.log2(q / m), 0.0)
    # W1 on unit-spaced codes: the sum of |CDF_p - CDF_q| over the question's codes (cumulated per group below)
    sums = ordered_sums(grid, keys, {"kl": kl, "p": p, "q": q})
    cdf_gap = grid.select(*keys, pl.Series("p", p), pl.Series("q", q)).with_columns(
        (pl.col("p").cum_sum() - pl.col("q").cum_sum()).over(keys).abs().alias("gap"))
    gaps = ordered_sums(grid, keys, {"gap": cdf_gap["gap"].to_numpy()})
    width = grid.unique(keys, keep="first", maintain_order=True).select(
        (pl.col("scale_max") - pl.col("scale_min")).cast(pl.Float64))
    divergence = np.clip(sums["kl"].to_numpy(), 0.0, 1.0)
    return sums.select(*keys, pl.Series("js_distance", 1 - np.sqrt(divergence)), pl.Series("jsd", 1 - divergence),
                       pl.Series("w1", 1 - gaps["gap"].to_numpy() / width.to_series().to_numpy()))


def country_view(similarity: pl.DataFrame, countries: pl.DataFrame, humans: pl.DataFrame,
                 bootstrap: uncertainty.Bootstrap = uncertainty.Bootstrap(), headline_measure: str = HEADLINE
                 ) -> tuple[dict, dict]:
    """(countries.json's ``countries``, metrics.json's ``countries`` headline) from ``similarity_table``: per country
    (``countries``: country, name) the mean of each measure over the questions asked that it answered, with a
    bootstrap interval over those questions (one resampling of the questions for every country and measure, so
    the numbers are paired); under steering also the steered similarities and the gain over the unsteered. The
    measures are the table's columns after its keys (``similarity_table``'s three, or Liu et al.'s ``w1`` alone);
    ``headline_measure`` ranks the countries in the headline."""
    codes = countries["country"].to_list()
    names = dict(countries.select("country", "name").iter_rows())
    questions = similarity["question_id"].unique(maintain_order=True).sort().to_list()
    q_index, c_index = {q: i for i, q in enumerate(questions)}, {c: j for j, c in enumerate(codes)}
    steered = similarity.filter(pl.col("steer") == pl.col("country"))

    def matrix(frame: pl.DataFrame, column: str) -> np.ndarray:
        out = np.full((len(questions), len(codes)), np.nan)
        for question, country, value in frame.select("question_id", "country", column).iter_rows():
            if country in c_index:
                out[q_index[question], c_index[country]] = value
        return out

    plain = similarity.filter(pl.col("steer").is_null())
    measures = [c for c in similarity.columns if c not in ("steer", "country", "question_id")]
    blocks = {f"similarity_{m}": matrix(plain, m) for m in measures}
    if steered.height:
        for m in measures:
            blocks[f"steered_{m}"] = matrix(steered, m)
            blocks[f"gain_{m}"] = blocks[f"steered_{m}"] - blocks[f"similarity_{m}"]
    names_of_blocks = list(blocks)
    stacked = np.concatenate([blocks[b] for b in names_of_blocks], axis=1)
    present = np.isfinite(stacked)
    values, counts = np.where(present, stacked, 0.0), present.astype(float)

    def means(positions: np.ndarray) -> np.ndarray:
        """Each column's mean over the resampled questions that have it (NaN: none in this resample)."""
        n = counts[positions].sum(axis=0)
        return values[positions].sum(axis=0) / np.where(n > 0, n, np.nan)

    result = uncertainty.resample_units([list(range(len(questions)))], means, bootstrap, unit="question",
                                        stratum="run") if questions else None
    n_questions = dict(humans.group_by("country").agg(pl.col("question_id").n_unique()).iter_rows())
    answered = {c: int(np.isfinite(blocks[f"similarity_{measures[0]}"][:, j]).sum()) for j, c in enumerate(codes)}
    view: dict[str, dict] = {}
    for j, code in enumerate(codes):
        entry: dict = {"name": names.get(code), "n_questions": answered[code],
                       "n_questions_answered_by_country": int(n_questions.get(code, 0))}
        for b, block in enumerate(names_of_blocks):
            k = b * len(codes) + j
            value = None if result is None else uncertainty.finite_or_none(result.estimate[k])
            interval = [None, None] if value is None or answered[code] < uncertainty.MIN_UNITS_PER_STRATUM \
                else result.interval(k)
            measure = block.replace("similarity_", "")
            entry[block] = value
            entry[f"interval_{measure}" if block.startswith("similarity_") else f"interval_{block}"] = interval
        view[code] = entry
    for code, figures in specificity(similarity, codes).items():
        view[code].update(figures)
    return view, headline(view, [f"similarity_{m}" for m in measures], headline_measure)


def specificity(similarity: pl.DataFrame, codes: Sequence[str]) -> dict[str, dict]:
    """Per country steered to (issue #61: does steering move the model toward *that* country, or only away from its
    default?): for each measure of ``similarity_table``, the model steered to it compared with every country of
    ``codes`` (mean over the questions both have, added in question order), ``steered_others_<m>`` the mean over
    the other countries, ``specificity_<m>`` the steered country's minus that mean (0: steering moves the model no
    nearer the named country than to the rest), ``rank_<m>`` the named country's place among all (1: the nearest;
    ties count for it) and ``n_others``."""
    measures = [c for c in similarity.columns if c not in ("steer", "country", "question_id")]
    frame = (similarity.filter(pl.col("steer").is_not_null() & pl.col("country").is_in(list(codes)))
             .sort("steer", "country", "question_id"))
    if frame.height == 0:
        return {}
    sums = ordered_sums(frame, ["steer", "country"],
                        {**{m: frame[m].to_numpy() for m in measures}, "n": np.ones(frame.height)})
    out: dict[str, dict] = {}
    for steer in sums["steer"].unique(maintain_order=True).to_list():
        rows = sums.filter(pl.col("steer") == steer)
        own, others = rows.filter(pl.col("country") == steer), rows.filter(pl.col("country") != steer)
        if own.height == 0:
            continue
        figures: dict = {"n_others": others.height}
        for m in measures:
            mine = float(own[m][0] / own["n"][0])
            theirs = others[m].to_numpy() / others["n"].to_numpy()
            figures[f"steered_others_{m}"] = float(theirs.mean()) if theirs.size else None
            figures[f"specificity_{m}"] = mine - float(theirs.mean()) if theirs.size else None
            figures[f"rank_{m}"] = 1 + int((theirs > mine).sum())
        out[steer] = figures
    return out


def headline(view: Mapping[str, Mapping], measures: Iterable[str] = MEASURES, ranked_by: str = HEADLINE) -> dict:
    """metrics.json's ``countries``: the measure that ranks (``measure``), the mean of each measure over countries,
    the five most and least similar (by ``ranked_by``), and under steering the mean steered similarity, gain and
    specificity, and how many steered countries came out nearest (rank 1) by each measure."""
    measures = list(measures)
    out: dict = {"measure": ranked_by}
    for measure in measures + [f"{kind}_{m.removeprefix('similarity_')}" for kind in ("steered", "gain", "specificity")
                               for m in measures]:
        values = [e[measure] for e in view.values() if e.get(measure) is not None]
        if measure in measures or values:
            out[f"mean_{measure}"] = float(np.mean(values)) if values else None
    for short in (m.removeprefix("similarity_") for m in measures):
        ranks = [e[f"rank_{short}"] for e in view.values() if e.get(f"rank_{short}") is not None]
        if ranks:
            out["n_steered"], out[f"n_steered_nearest_{short}"] = len(ranks), sum(rank == 1 for rank in ranks)
    ranked = sorted(((e[ranked_by], code) for code, e in view.items() if e.get(ranked_by) is not None),
                    key=lambda pair: (-pair[0], pair[1]))
    out["most_similar"] = [{"country": c, "name": view[c]["name"], ranked_by: v} for v, c in ranked[:N_EXTREMES]]
    out["least_similar"] = [{"country": c, "name": view[c]["name"], ranked_by: v}
                            for v, c in ranked[::-1][:N_EXTREMES]]
    out["n_countries"] = len(ranked)
    return out


# ------------------------------------------------------------------------------------------------ the run


def chosen_countries(options, codes: Sequence[str]) -> list[str]:
    """The countries of the release (``codes``) that ``--steer`` steers to: all, or ``--steer-countries``' (each
    a country of the release, else an InputError)."""
    if options.steer_countries is None:
        return list(codes)
    unknown = [code for code in options.steer_countries if code not in codes]
    if unknown:
        raise InputError(f"--steer-countries: {', '.join(unknown)} not among the release's countries "
                         f"({', '.join(codes)})", column="steer_countries")
    return list(dict.fromkeys(options.steer_countries))


def described(measures: Iterable[str]) -> dict[str, str]:
    """countries.json's ``measures``: what each measure of the view is (facts/opinions.json), the steering gain's
    definition too."""
    definitions = facts()["measures"]
    return {**{m: definitions[m] for m in measures},
            **{k: definitions[k] for k in ("steering_gain", "specificity")}}


def opinion_requests(options) -> tuple[list[tuple[str, str]], int | None]:
    """What the opinions protocol adds to a run's plan: the (code, name) of the countries ``--steer country``
    names (none otherwise; ``--steer-countries``: those) and the samples per prompt (a verbalized distribution is
    asked once unless ``--samples`` says otherwise)."""
    steer = steering_countries(options.release)[0] if options.steer and not options.demographics else []
    if steer:
        names = dict(steer)
        steer = [(code, names[code]) for code in chosen_countries(options, list(names))]
    samples = options.samples if options.samples or options.reading == "samples" else 1
    return steer, samples


def liu_repo(options):
    """The user's copy of Liu et al.'s repository (``--liu-repo``, default ``raw/liu2025``), read as data."""
    from culturebench.evaluate.wvb.liu2025 import DEFAULT_REPO, LiuRepo

    return LiuRepo(options.liu_repo or DEFAULT_REPO, options.translations)


def liu_countries(repo, options) -> tuple[list, list[str]]:
    """The countries Liu et al.'s ``--steer`` method steers to (``liu2025.SteerCountry``) and one line for those
    left out: of ``--steer-countries``, every one or an InputError; else every country of the release the method
    has a prompt, a name and a questionnaire for."""
    codes = chosen_countries(options, release_countries(options.release)["country"].to_list())
    countries, left = [], []
    for code in codes:
        try:
            country = repo.country(code, options.steer)
            repo.steering(options.steer, country)
        except InputError as exc:
            if options.steer_countries is not None:
                raise
            left.append(f"{code} ({exc.message})")
            continue
        countries.append(country)
    if not countries:
        raise InputError(f"--steer {options.steer}: no country of the release to steer to: {'; '.join(left[:3])}",
                         file=options.release)
    return countries, [f"--steer {options.steer}: not steered to {', '.join(left)}"] if left else []


def read_model_answers(path: Path) -> pl.DataFrame:
    """steer, question_id, sample_index, answer, output of a run's responses (responses.jsonl or its parquet
    shards; a record without ``steer`` is unsteered), the default variant's (a ``--variants`` run's other prompts
    are its variants block's, issue #63)."""
    from culturebench.evaluate.runs import run_folder
    from culturebench.evaluate.wvb.items import response_schema

    path = Path(path)
    columns = ("steer", "question_id", "sample_index", "answer", "output")
    if path.is_dir() or path.suffix.lower() == ".parquet":
        frame = pl.scan_parquet(run_folder.shard_paths(path), missing_columns="insert", schema=response_schema())
    else:
        frame = pl.scan_ndjson(path, schema=response_schema())
    try:
        return frame.filter(pl.col("variant").fill_null("default") == "default").select(*columns).collect()
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"responses cannot be read ({str(exc).splitlines()[0]})", file=path) from None


def request_distributions(options, backend, answers: pl.DataFrame, questions: pl.DataFrame,
                          replan: Callable[[], Iterable]) -> tuple[pl.DataFrame | None, str]:
    """The per-request distributions (steer, question_id, sample_index, code, share) and the reading's name:
    ``verbalized`` (parsed from each output), ``logprobs`` (the options' probabilities recorded by ``--scoring
    logprobs``: the run's requests planned again by ``replan``, one at a time, and looked up by cache key), or (None,
    ``samples``): the sampled answers are counted instead."""
    scales = {q: (lo, hi) for q, lo, hi in questions.select("question_id", "scale_min", "scale_max").iter_rows()}
    rows: list[tuple] = []
    if options.reading == "verbalized" or options.protocol == "liu2025":
        read = parse_distribution if options.protocol != "liu2025" else stated_reader(liu_repo(options))
        for steer, question, index, output in answers.select("steer", "question_id", "sample_index", "output").iter_rows():
            low, high = scales.get(question, (None, None))
            shares = read(output, low, high) if low is not None and high is not None else None
            rows += [(steer, question, index, code, share) for code, share in (shares or {}).items()]
        return _parts(rows), "verbalized" if options.protocol != "liu2025" else "stated (Liu et al.'s parser)"
    from culturebench.evaluate.runs import option_probability
    from culturebench.evaluate.runs.cache import cache_key
    from culturebench.evaluate.wvb import BENCHMARK

    if not isinstance(backend, option_probability.LogprobRecorder):
        return None, "samples"
    recorded = option_probability.recorded_logprobs(backend.path)
    params, scoring = backend.backend.cache_params(), BENCHMARK.option_scoring(options)
    for planned in replan():
        low, high = scales[planned.question_id]
        shares = option_probability.option_distribution(scoring, recorded.get(cache_key(params, planned.request)))
        in_scale = {int(o): p for o, p in (shares or {}).items() if low <= int(o) <= high}
        total = sum(in_scale.values())
        rows += [(planned.steer, planned.question_id, planned.sample_index, code, p / total)
                 for code, p in in_scale.items() if total > 0]
    return _parts(rows), "logprobs"


def _parts(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"steer": pl.String, "question_id": pl.String, "sample_index": pl.Int64,
                                      "code": pl.Int64, "share": pl.Float64}, orient="row")


def write_country_view(backend, options, responses: Path, questions: pl.DataFrame, metrics: dict,
                       replan: Callable[[], Iterable], model: str | None = None, console=None,
                       plan_notes: Sequence[str] = ()) -> list[Path]:
    """Score a run without demographics per country: countries.json and its figures into ``options.out``,
    ``metrics["countries"]`` (the headline, the reading, whether weights were used, one line per problem);
    returns the paths written. A question without answer codes or a country without answers is one line in
    ``notes`` (and on the console), and the rest is scored."""
    from culturebench.evaluate.reports import countries as country_files
    from culturebench.evaluate.reports.country_plots import series, write_figures

    out = Path(options.out)
    answers = read_model_answers(responses)
    asked = sorted(answers["question_id"].unique().to_list())
    questions = questions.filter(pl.col("question_id").is_in(asked))
    notes = list(plan_notes)
    unscaled = questions.filter(pl.col("scale_min").is_null() | pl.col("scale_max").is_null()
                                | (pl.col("scale_max") <= pl.col("scale_min")))["question_id"].to_list()
    if unscaled:
        notes.append(f"questions without answer codes (no scale in the questions config), left out: {', '.join(unscaled)}")
    parts, reading = request_distributions(options, backend, answers, questions, replan)
    if parts is not None and (unread := answers.height - parts.select("steer", "question_id", "sample_index")
                              .unique().height):
        notes.append(f"{unread} of {answers.height} {reading} distributions unreadable (no distribution over the "
                     "question's codes with finite shares), not scored")
    model_shares = answer_distributions(answers, questions) if parts is None else mean_distributions(parts)
    weights = options.weights or WEIGHTS[0]
    humans, weighted = country_distributions(options.release, asked, weights)
    countries = release_countries(options.release)
    silent = sorted(set(countries["country"]) - set(humans["country"]))
    if silent:
        notes.append(f"countries with no answers to the questions asked, not scored: {', '.join(silent)}")
    if options.steer == "country":
        notes += steering_countries(options.release)[1]
    table = similarity_table(model_shares, humans, questions)
    view, top = country_view(table, countries.filter(~pl.col("country").is_in(silent)), humans)
    if options.protocol == "liu2025" and options.steer and options.steer.startswith("language"):
        repo, spoken = liu_repo(options), interview_languages(options.release)
        for code, entry in view.items():
            if entry.get(f"steered_{HEADLINE_SHORT}") is not None:
                entry["steer_language"] = repo.country(code, options.steer).language
                entry["interview_languages"] = spoken.get(code, [])
    steered_to = set(answers["steer"].drop_nulls().to_list())
    if options.steer and (unsteered := sorted(code for code, e in view.items() if code in steered_to
                                              and e.get(f"steered_{HEADLINE_SHORT}") is None
                                              and e.get(HEADLINE) is not None)):
        notes.append(f"no steered value (no readable answer when steered to the country): {', '.join(unsteered)}")
    data = country_files.view(view, benchmark="wvb", measure=HEADLINE, measure_label=MEASURE_LABELS[HEADLINE],
                              measures=described(MEASURES),
                              model=model, notes=notes, reading=reading, weights=weights, weighted=weighted,
                              protocol=options.protocol, steer=options.steer, n_questions=len(asked))
    references, reference_notes, reference_files = reference_points.attach(
        data, release=options.release, answers=answers, parts=parts, weighted=weighted, weight_column=WEIGHT_COLUMN,
        intervals=options.country_intervals, out=out)
    data["notes"] = notes = [*notes, *reference_notes]
    top.update(references)
    metrics["countries"] = {**top, "reading": reading, "weights": weights, "weighted": weighted, "notes": notes,
                            "file": country_files.COUNTRIES_FILE}
    for line in notes:
        if console is not None:
            console.print(f"[yellow]wvb countries: {line}[/yellow]")
    extra = [("steered to the country", series(data, "steered_js_distance", "interval_steered_js_distance"))] \
        if options.steer else []
    return [country_files.write_countries(out, data), *write_figures(data, out, extra_series=extra),
            *reference_files]
