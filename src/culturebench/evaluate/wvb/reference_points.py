"""Human reference points of WVB's country view (issue #62): what a similarity of 0.87 means.

Per country, for every measure of the view that ``SIMILARITIES`` defines on distribution arrays (the same measure
and the same questions as the model's similarity; weighted as the view weights its respondents):

- ``uniform_<m>``: the similarity of a uniform answer over the question's codes with the country's respondents;
- ``others_<m>``: that of the pooled answers of every other country's respondents (the "average human elsewhere");
- ``ceiling_<m>`` (``ceiling_se_<m>``): the mean similarity between two random halves of the country's respondents
  over ``N_SPLITS`` seeded splits, with the standard error of that mean over the splits; no Spearman-Brown-style
  correction (each half has half the respondents, so the ceiling is that of two half-size samples: it sits below
  what a full-size sample would reach);
- ``margin_uniform_<m>``, ``margin_others_<m>``: the model's similarity minus each baseline, and
  ``ceiling_share_<m>``: (model - uniform) / (ceiling - uniform), the share of the way from the uniform baseline to
  the ceiling;
- the neighbours: the country x country matrix of the respondents' own similarities (row: whose answers play the
  model, column: the country compared with), per question cached once per release, measure and weighting
  (``neighbour_cache``), averaged over the run's questions; the model's rank among the other countries' respondents
  per country and the ``N_NEAREST`` nearest countries;
- two-stage intervals (``interval_<m>``): a seeded bootstrap resampling, in each resample, the respondents within
  each country (weights kept) and the model's requests within each question, and the questions (one draw shared
  by every country: paired); percentile bounds. With few samples per question the model's distribution is itself
  noisy and a divergence between noisy distributions is biased upward (the similarity downward), so each
  question's resampled similarity enters centred (``two_stage``) and the shift removed is reported
  (``resampling_shift_<m>``). The view's question-only interval stays as ``interval_questions_<m>`` (and is
  ``interval_<m>`` under ``--country-intervals questions``). ``model_spread_<m>``: the standard deviation over
  resamples of the similarity when only the model's requests are resampled (the model-side sampling spread).

Arrays throughout: the respondents' answers as one (respondents x questions) int8 matrix, counts per country x
question x code as one array (``np.bincount``), the respondent resamples as one sparse product per chunk.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import polars as pl
from scipy import sparse, special

from culturebench.evaluate.reports import uncertainty
from culturebench.evaluate.wvb.items import _collect
from culturebench.release_reader import Release

N_SPLITS = 20
"""Random half splits per country for the ceiling (issue #62 asks at least 20)."""
MIN_SPLIT_RESPONDENTS = 4
"""Respondents a country needs for a half split (two per half); fewer: no ceiling, said in notes."""
N_NEAREST = 3
"""The nearest countries named per country."""
RESAMPLE_CHUNK = 32
MAX_DRAWN = 4_000_000
"""Shares of resampled model requests held at once (``ModelRequests.resampled``)."""
"""Two-stage resamples computed at once (the memory: chunk x countries x questions x codes floats)."""
NEIGHBOURS_FILE = "countries_neighbours.json"
CACHE_VERSION = 1
"""Part of the neighbour cache's key: raised when the cached matrix's definition changes."""


# ------------------------------------------------------------------------------------------------ the measures


@dataclass
class Pair:
    """Two arrays of distributions over codes (last axis; zero beyond a question's width, NaN rows where there are
    no answers) and the questions' widths (scale_max - scale_min, broadcast over ``p.shape[:-1]``); what several
    measures share is computed once."""

    p: np.ndarray
    q: np.ndarray
    widths: np.ndarray

    @cached_property
    def divergence(self) -> np.ndarray:
        """JSD(p, q) in base 2: scipy's ``rel_entr`` (0 where the share is 0) summed in nats, divided by 2 ln 2,
        within [0, 1]."""
        m = (self.p + self.q) / 2
        kl = special.rel_entr(self.p, m) + special.rel_entr(self.q, m)
        return np.clip(kl.sum(axis=-1) / (2 * np.log(2)), 0.0, 1.0)

    @cached_property
    def w1(self) -> np.ndarray:
        """W1(p, q) / width over unit-spaced codes: sum |CDF_p - CDF_q| / width."""
        return np.abs(np.cumsum(self.p, axis=-1) - np.cumsum(self.q, axis=-1)).sum(axis=-1) / self.widths


SIMILARITIES: dict[str, Callable[[Pair], np.ndarray]] = {
    "js_distance": lambda pair: 1 - np.sqrt(pair.divergence),  # GlobalOpinionQA's 1 - JS distance
    "jsd": lambda pair: 1 - pair.divergence,
    "w1": lambda pair: 1 - pair.w1,
}
"""The view's measures (countries.json ``similarity_<name>``) on a ``Pair``; a NaN input row (no answers) gives
NaN. A measure of the view without an entry here gets no reference points (said in notes)."""


def similarities(measures: Sequence[str], p: np.ndarray, q: np.ndarray, widths: np.ndarray) -> dict[str, np.ndarray]:
    """Each of ``measures`` between ``p`` and ``q`` (one ``Pair``: shared parts computed once)."""
    pair = Pair(p, q, widths)
    return {m: SIMILARITIES[m](pair) for m in measures}


def shares(counts: np.ndarray) -> np.ndarray:
    """Counts over the last axis as shares; NaN where a row holds none."""
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / np.where(total > 0, total, 1), np.nan)


# ------------------------------------------------------------------------------------------------ the respondents


@dataclass
class Respondents:
    """Every respondent of the release's countries with their answers to ``questions``: ``answers`` (respondents x
    questions, the code minus the question's scale_min, -1: no answer), ``country`` (index into ``countries``; the
    rows sorted by it), ``weight`` (the view's weight, 1 when unweighted), ``widths`` (scale_max - scale_min)."""

    questions: list[str]
    countries: list[str]
    answers: np.ndarray
    country: np.ndarray
    weight: np.ndarray
    widths: np.ndarray

    @property
    def codes(self) -> int:
        return int(self.widths.max()) + 1 if self.widths.size else 1

    @cached_property
    def entries(self) -> tuple[np.ndarray, np.ndarray]:
        """Every answer as (its cell ``(country * questions + question) * codes + code``, its respondent), int32,
        in respondent order."""
        r, q = np.nonzero(self.answers >= 0)
        cell = (self.country[r].astype(np.int32) * len(self.questions) + q.astype(np.int32)) * self.codes
        cell += self.answers[r, q]
        return cell, r.astype(np.int32)

    @property
    def n_cells(self) -> int:
        return len(self.countries) * len(self.questions) * self.codes

    @cached_property
    def by_respondent(self) -> sparse.csc_matrix:
        """cells x respondents, each answer's weight in its cell's row: ``by_respondent @ multiplicities`` (one
        column per resample or half) sums the weighted answers of respondents counted that many times. float32:
        these sums feed the resamples and the half splits (relative error ~1e-7, far below their spread), while
        ``counts`` (the baselines, the neighbours) adds float64."""
        cell, r = self.entries
        indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=self.country.size))])
        return sparse.csc_matrix((self.weight[r].astype(np.float32), cell, indptr),
                                 shape=(self.n_cells, self.country.size))

    def counts(self) -> np.ndarray:
        """Weighted answer counts, countries x questions x codes (``np.bincount``: added in respondent order)."""
        cell, r = self.entries
        return np.bincount(cell, weights=self.weight[r], minlength=self.n_cells).reshape(
            len(self.countries), len(self.questions), self.codes)

    def counted(self, multiplicities: np.ndarray) -> np.ndarray:
        """Weighted counts when respondent ``i`` counts ``multiplicities[i, j]`` times in column ``j``:
        columns x countries x questions x codes."""
        product = np.asarray(self.by_respondent @ multiplicities.astype(np.float32), dtype=float)
        return product.T.reshape(multiplicities.shape[1], len(self.countries), len(self.questions), self.codes)

    def subset(self, questions: Sequence[str]) -> Respondents:
        at = [self.questions.index(q) for q in questions]
        return Respondents(list(questions), self.countries, self.answers[:, at], self.country, self.weight,
                           self.widths[at])


def read_respondents(release: Path, scales: pl.DataFrame, countries: Sequence[str], weighted: bool,
                     weight_column: str) -> Respondents:
    """The respondents of ``countries`` and their answers to the questions of ``scales`` (question_id, scale_min,
    scale_max) from the release's participants and examples (every split), in one pass; answers off a question's
    scale are left out."""
    release = Path(release)
    opened = Release.open(release)
    weight = pl.col(weight_column).cast(pl.Float64) if weighted else pl.lit(1.0, dtype=pl.Float64)
    people = _collect(opened.scan("participants").select(
        pl.col("participant_id").cast(pl.Int64), pl.col("country").cast(pl.String), weight.alias("weight"))
        .filter(pl.col("country").is_in(list(countries))), release, "participants").sort("country", "participant_id")
    questions = scales["question_id"].to_list()
    position = {q: i for i, q in enumerate(questions)}
    answers = _collect(opened.scan("examples").select(
        pl.col("participant_id").cast(pl.Int64), pl.col("question_id").cast(pl.String),
        pl.col("answer").cast(pl.Int64)).filter(pl.col("question_id").is_in(questions) & pl.col("answer").is_not_null())
        .join(scales.lazy().select("question_id", pl.col("scale_min").cast(pl.Int64),
                                   pl.col("scale_max").cast(pl.Int64)),
              on="question_id")
        .filter(pl.col("answer").is_between(pl.col("scale_min"), pl.col("scale_max")))
        .join(people.lazy().with_row_index("row").select("participant_id", "row"), on="participant_id"),
        release, "examples")
    matrix = np.full((people.height, len(questions)), -1, dtype=np.int8)
    matrix[answers["row"].to_numpy(),
           answers["question_id"].replace_strict(position, return_dtype=pl.Int64).to_numpy()] = (
        answers["answer"] - answers["scale_min"]).to_numpy().astype(np.int8)
    index = {c: i for i, c in enumerate(countries)}
    widths = (scales["scale_max"] - scales["scale_min"]).cast(pl.Float64).to_numpy()
    return Respondents(questions, list(countries), matrix,
                       people["country"].replace_strict(index, return_dtype=pl.Int32).to_numpy(),
                       people["weight"].to_numpy(), widths)


# ------------------------------------------------------------------------------------------------ the model


@dataclass
class ModelRequests:
    """The model's distribution per request: ``shares`` (questions x requests x codes; one-hot for a sampled
    answer), ``n`` the requests per question (the rest padding)."""

    shares: np.ndarray
    n: np.ndarray

    def distribution(self) -> np.ndarray:
        """Per question the mean of its requests' distributions (NaN where it has none)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.shares.sum(axis=1) / np.where(self.n > 0, self.n, np.nan)[:, None]

    def resampled(self, rng: np.random.Generator, n_resamples: int) -> np.ndarray:
        """``n_resamples`` distributions per question, each the mean of its requests drawn with replacement
        (resamples x questions x codes); drawn in parts of at most MAX_DRAWN requests' shares at once."""
        n_q, width, k = self.shares.shape
        per = max(1, MAX_DRAWN // max(n_q * width * k, 1))
        taken = np.arange(width)[None, None, :] < self.n[None, :, None]
        parts = []
        for first in range(0, n_resamples, per):
            b = min(per, n_resamples - first)
            draws = np.floor(rng.random((b, n_q, width)) * self.n[None, :, None]).astype(np.int64)
            picked = self.shares[np.arange(n_q)[None, :, None], draws] * taken[..., None]
            parts.append(picked.sum(axis=2))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.concatenate(parts) / np.where(self.n > 0, self.n, np.nan)[None, :, None]


def model_requests(rows: pl.DataFrame, questions: Sequence[str], codes: int) -> ModelRequests:
    """``ModelRequests`` from (question_id, sample_index, code, share) rows of the unsteered requests (offset
    codes: code minus the question's scale_min)."""
    position = {q: i for i, q in enumerate(questions)}
    rows = rows.filter(pl.col("question_id").is_in(list(questions)))
    keys = rows.select("question_id", "sample_index").unique().sort("question_id", "sample_index")
    keys = keys.with_columns(pl.int_range(pl.len()).over("question_id").alias("slot"))
    rows = rows.join(keys, on=["question_id", "sample_index"])
    n = np.zeros(len(questions), dtype=np.int64)
    counted = keys.group_by("question_id").len()
    n[counted["question_id"].replace_strict(position, return_dtype=pl.Int64).to_numpy()] = counted["len"].to_numpy()
    out = np.zeros((len(questions), max(int(n.max()) if n.size else 0, 1), codes))
    np.add.at(out, (rows["question_id"].replace_strict(position, return_dtype=pl.Int64).to_numpy(),
                    rows["slot"].to_numpy(), rows["code"].to_numpy()), rows["share"].to_numpy())
    return ModelRequests(out, n)


# ------------------------------------------------------------------------------------------------ the reference points


def half_split_similarities(respondents: Respondents, present: np.ndarray, measures: Sequence[str],
                            n_splits: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per measure (splits x countries): the mean over the country's ``present`` questions (that both halves
    answered) of the similarity between two random halves of its respondents (each split a fresh permutation per
    country; the first half floor(n / 2) respondents)."""
    n_c, n = len(respondents.countries), respondents.country.size
    starts = np.searchsorted(respondents.country, np.arange(n_c))
    sizes = np.bincount(respondents.country, minlength=n_c)
    halves = np.zeros((n, 2 * n_splits), dtype=np.float32)  # per split the first half's indicator, then the second's
    for s in range(n_splits):
        order = np.lexsort((rng.random(n), respondents.country))
        rank = np.empty_like(order)
        rank[order] = np.arange(n)
        second = rank - starts[respondents.country] >= sizes[respondents.country] // 2
        halves[:, 2 * s], halves[:, 2 * s + 1] = ~second, second
    counts = shares(respondents.counted(halves))
    return {m: masked_mean(values, present[None])
            for m, values in similarities(measures, counts[0::2], counts[1::2], respondents.widths).items()}


def masked_mean(values: np.ndarray, present: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean over the last axis of the finite ``values`` where ``present``, each question counted ``weights``
    times (default once); NaN where none."""
    use = present & np.isfinite(values)
    w = use.astype(float) if weights is None else use * weights
    total = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (np.where(use, values, 0.0) * w).sum(axis=-1) / np.where(total > 0, total, 1),
                        np.nan)


def neighbour_matrices(counts: np.ndarray, widths: np.ndarray, measures: Sequence[str]) -> dict[str, np.ndarray]:
    """Per measure and question the similarity of every country's respondents (row, in the model's place) with
    every country's (column): countries x countries x questions; NaN where either has no answers."""
    dist = shares(counts)
    rows = [similarities(measures, dist[a][None], dist, widths) for a in range(dist.shape[0])]
    return {m: np.stack([row[m] for row in rows]) for m in measures}


def neighbour_cache(release: Path, measures: Sequence[str], weighted: bool, countries: Sequence[str],
                    questions: Sequence[str]) -> Path:
    """Where the per-question neighbour matrices of a release are kept: ``$CULTUREBENCH_CACHE`` (or
    ~/.cache/culturebench)/neighbours/<hash>.npz, the hash of the release's participants, examples and questions
    files (their sha256 in the manifest), the measures, the weighting, the countries, the questions and
    CACHE_VERSION."""
    inputs = sorted((o.path, o.sha256) for o in Release.open(release).manifest.outputs
                    if o.path.startswith(("data/participants", "data/examples", "data/questions")))
    key = json.dumps([CACHE_VERSION, inputs, list(measures), weighted, list(countries), list(questions)])
    root = os.environ.get("CULTUREBENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "culturebench")
    return Path(root) / "neighbours" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.npz"


def cached_neighbours(path: Path, counts: np.ndarray, widths: np.ndarray, measures: Sequence[str]
                      ) -> dict[str, np.ndarray]:
    """The per-question neighbour matrices of ``measures``, read from ``path`` or computed and written there
    (temporary file, then renamed); an unreadable cache file is computed again."""
    try:
        with np.load(path) as stored:
            if all(m in stored for m in measures):
                return {m: stored[m] for m in measures}
    except (OSError, ValueError, EOFError):
        pass
    matrices = neighbour_matrices(counts, widths, measures)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(temporary, **matrices)
        temporary.replace(path)
    except OSError:
        pass  # a read-only cache: computed again next time
    return matrices


@dataclass
class Resamples:
    """One measure's resampled similarities (resamples x countries): ``centred`` (respondents, model requests and
    questions resampled, each question's resampling shift removed; None unless asked), ``raw`` (the same before
    that), ``model_only`` (only the model's requests resampled: ``model_spread``)."""

    centred: np.ndarray | None
    raw: np.ndarray | None
    model_only: np.ndarray


def two_stage(respondents: Respondents, model: ModelRequests, present: np.ndarray, measures: Sequence[str],
              settings: uncertainty.Bootstrap, *, everything: bool = True) -> dict[str, Resamples]:
    """Per measure the ``Resamples``. In each resample the respondents within each country and the model's requests
    within each question are drawn with replacement, giving each (country, question) a noisy similarity S; the
    questions are drawn with replacement (one draw for every country: paired). Small samples shift S on average
    (a divergence of noisy distributions is biased upward), so each question's S enters centred: the observed
    similarity plus S minus S's mean over the resamples; the country's value is the mean over the drawn questions.
    One seeded generator: the same draws for every country and run."""
    rng = np.random.default_rng([settings.seed, 62])
    n_c, n_q, n_b = len(respondents.countries), len(respondents.questions), settings.n_resamples
    n_r = respondents.country.size
    sizes = np.bincount(respondents.country, minlength=n_c)
    starts = np.searchsorted(respondents.country, np.arange(n_c))
    humans = shares(respondents.counts())
    observed = similarities(measures, model.distribution()[None], humans, respondents.widths)
    model_only = {m: np.full((n_b, n_c), np.nan) for m in measures}
    if everything:
        used = np.zeros((n_b, n_c, n_q), dtype=bool)
        question_weights = np.zeros((n_b, n_q))
        drawn_sums = {m: np.zeros((n_b, n_c)) for m in measures}
        totals = {m: np.zeros((n_c, n_q)) for m in measures}
    for first in range(0, n_b, RESAMPLE_CHUNK):
        b = min(RESAMPLE_CHUNK, n_b - first)
        rows = slice(first, first + b)
        models = model.resampled(rng, b)
        if everything:
            drawn = starts[respondents.country][None, :] + np.floor(
                rng.random((b, n_r)) * sizes[respondents.country][None, :]).astype(np.int64)
            multiplicity = np.bincount((np.arange(b)[:, None] * n_r + drawn).ravel(),
                                       minlength=b * n_r).reshape(b, n_r)
            resampled = shares(respondents.counted(multiplicity.T))
            question_weights[rows] = rng.multinomial(n_q, np.full(n_q, 1 / n_q), size=b)
        alone = similarities(measures, models[:, None], humans[None], respondents.widths)
        noisy_all = similarities(measures, models[:, None], resampled, respondents.widths) if everything else {}
        for m in measures:
            model_only[m][rows] = masked_mean(alone[m], present[None])
            if everything:
                noisy = noisy_all[m]
                use = present[None] & np.isfinite(noisy)
                used[rows] |= use
                noisy = np.where(use, noisy, 0.0)
                drawn_sums[m][rows] = (noisy * question_weights[rows][:, None, :]).sum(axis=-1)
                totals[m] += noisy.sum(axis=0)
    out = {}
    for m in measures:
        if not everything:
            out[m] = Resamples(None, None, model_only[m])
            continue
        weight = used * question_weights[:, None, :]
        count = used.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            shift = np.where(count > 0, totals[m] / np.where(count > 0, count, 1) - observed[m], 0.0)
            drawn_total = weight.sum(axis=-1)
            raw = np.where(drawn_total > 0, drawn_sums[m] / drawn_total, np.nan)
            centred = raw - np.einsum("bcq,cq->bc", weight, np.nan_to_num(shift)) / drawn_total
        out[m] = Resamples(centred, raw, model_only[m])
    return out


def percentile_interval(distribution: np.ndarray, confidence: float) -> list[float | None]:
    """Percentile bounds of one number's bootstrap distribution; [None, None] when any resample has none."""
    if distribution.size == 0 or not np.all(np.isfinite(distribution)):
        return [None, None]
    low, high = np.quantile(distribution, [(1 - confidence) / 2, (1 + confidence) / 2])
    return [float(low), float(high)]


@dataclass
class ReferencePoints:
    """What ``reference_points`` adds: per country the entries' new fields, the notes, the written neighbour
    matrices (measure -> (countries + model) x countries, averaged over the run's questions) and the headline."""

    fields: dict[str, dict]
    notes: list[str]
    neighbours: dict
    headline: dict


def reference_points(view: Mapping[str, Mapping], respondents: Respondents, model: ModelRequests,
                     neighbours: Mapping[str, np.ndarray], *, settings: uncertainty.Bootstrap, intervals: str,
                     n_splits: int = N_SPLITS) -> ReferencePoints:
    """Baselines, ceiling, neighbours and two-stage intervals (module docstring) for the countries of ``view``
    (countries.json's entries, holding ``similarity_<m>`` and ``interval_<m>``), on ``respondents``' questions
    (the run's); ``neighbours``: per measure the per-question matrices over the respondents' countries."""
    measures = [m for m in SIMILARITIES if any(f"similarity_{m}" in e for e in view.values())]
    unknown = sorted({key.removeprefix("similarity_") for e in view.values() for key in e
                      if key.startswith("similarity_")} - set(SIMILARITIES))
    notes = [f"no reference points for {', '.join(unknown)} (no array form of the measure)"] if unknown else []
    counts = respondents.counts()
    humans = shares(counts)
    model_shares = model.distribution()
    present = (counts.sum(axis=-1) > 0) & (model.n > 0)[None, :]
    uniform = np.where(np.arange(respondents.codes)[None, :] <= respondents.widths[:, None], 1.0, 0.0)
    uniform = shares(uniform)
    pooled = shares(counts.sum(axis=0, keepdims=True) - counts)
    codes = respondents.countries
    sizes = np.bincount(respondents.country, minlength=len(codes))
    few = [c for c, n in zip(codes, sizes) if n < MIN_SPLIT_RESPONDENTS]
    if few:
        notes.append(f"fewer than {MIN_SPLIT_RESPONDENTS} respondents for a half split, no ceiling: {', '.join(few)}")
    unanswered = {c: int(((counts[j].sum(axis=-1) == 0) & (model.n > 0)).sum()) for j, c in enumerate(codes)}
    if any(unanswered.values()):
        notes.append("questions asked that no respondent of the country answered, left out of that country: "
                     + ", ".join(f"{c} ({n})" for c, n in unanswered.items() if n))
    rng = np.random.default_rng([settings.seed, 62, 1])
    halves = half_split_similarities(respondents, present, measures, n_splits, rng)
    resampled = two_stage(respondents, model, present, measures, settings, everything=intervals == "two_stage")
    fields: dict[str, dict] = {c: {"n_respondents": int(n)} for c, n in zip(codes, sizes)}
    written: dict = {"countries": codes, "rows": [*codes, "model"], "measures": {}}
    for m in measures:
        value = {c: view[c].get(f"similarity_{m}") if c in view else None for c in codes}
        baselines = {"uniform": masked_mean(similarities([m], uniform[None], humans, respondents.widths)[m], present),
                     "others": masked_mean(similarities([m], pooled, humans, respondents.widths)[m], present)}
        split = halves[m]
        drawn = resampled[m]
        matrix = masked_mean(np.asarray(neighbours[m]), present[None])  # row a (as the model) x column c
        written["measures"][f"similarity_{m}"] = [[uncertainty.finite_or_none(v) for v in row] for row in matrix] + [
            [value[c] for c in codes]]
        for j, c in enumerate(codes):
            entry = fields[c]
            for name, values in baselines.items():
                entry[f"{name}_{m}"] = uncertainty.finite_or_none(values[j])
            if sizes[j] >= MIN_SPLIT_RESPONDENTS and np.all(np.isfinite(split[:, j])):
                entry[f"ceiling_{m}"] = float(split[:, j].mean())
                entry[f"ceiling_se_{m}"] = float(split[:, j].std(ddof=1) / np.sqrt(n_splits))
            else:
                entry[f"ceiling_{m}"] = entry[f"ceiling_se_{m}"] = None
            v = value[c]
            for name in baselines:
                entry[f"margin_{name}_{m}"] = None if v is None or entry[f"{name}_{m}"] is None \
                    else v - entry[f"{name}_{m}"]
            low, top = entry[f"uniform_{m}"], entry[f"ceiling_{m}"]
            entry[f"ceiling_share_{m}"] = None if v is None or low is None or top is None or top <= low \
                else (v - low) / (top - low)
            others = [(float(matrix[a, j]), codes[a]) for a in range(len(codes))
                      if a != j and np.isfinite(matrix[a, j])]
            if v is not None:
                entry[f"rank_among_countries_{m}"] = {"rank": 1 + sum(int(s > v) for s, _ in others),
                                                      "closer_than": sum(int(s < v) for s, _ in others),
                                                      "of": len(others)}
            entry[f"nearest_{m}"] = [a for _, a in sorted(others, key=lambda pair: (-pair[0], pair[1]))[:N_NEAREST]]
            entry[f"model_spread_{m}"] = (uncertainty.finite_or_none(np.std(drawn.model_only[:, j]))
                                          if np.all(np.isfinite(drawn.model_only[:, j])) else None)
            if c in view:
                entry[f"interval_questions_{m}"] = list(view[c].get(f"interval_{m}") or [None, None])
                two = drawn.centred is not None and v is not None
                entry[f"interval_{m}"] = (percentile_interval(drawn.centred[:, j], settings.confidence_level)
                                          if two else entry[f"interval_questions_{m}"])
                entry[f"resampling_shift_{m}"] = (uncertainty.finite_or_none(np.mean(drawn.raw[:, j]) - v)
                                                  if two and np.all(np.isfinite(drawn.raw[:, j])) else None)
    return ReferencePoints(fields, notes, written, summary(fields, view, measures))


def summary(fields: Mapping[str, Mapping], view: Mapping[str, Mapping], measures: Sequence[str]) -> dict:
    """metrics.json's reference points: per measure the means over countries of the baselines, the ceiling, the
    margins and the ceiling share, and the mean share of other countries the model is closer than."""
    out: dict = {}
    for m in measures:
        for name in ("uniform", "others", "ceiling", "margin_uniform", "margin_others", "ceiling_share"):
            values = [e[f"{name}_{m}"] for c, e in fields.items() if c in view and e.get(f"{name}_{m}") is not None]
            out[f"mean_{name}_{m}"] = float(np.mean(values)) if values else None
        key = f"rank_among_countries_{m}"
        ranks = [e[key] for c, e in fields.items() if c in view and e.get(key) and e[key]["of"]]
        out[f"mean_closer_than_share_{m}"] = (float(np.mean([r["closer_than"] / r["of"] for r in ranks]))
                                              if ranks else None)
    return out


# ------------------------------------------------------------------------------------------------ the run


def model_rows(answers: pl.DataFrame, parts: pl.DataFrame | None, scales: pl.DataFrame) -> pl.DataFrame:
    """The unsteered requests' distributions as (question_id, sample_index, code, share), code offset from the
    question's scale_min: each sampled answer on the scale as one request of share 1, or the per-request
    distributions ``parts`` (logprobs, verbalized)."""
    if parts is None:
        rows = (answers.filter(pl.col("steer").is_null()).drop_nulls("answer")
                .select("question_id", "sample_index", pl.col("answer").cast(pl.Int64).alias("code"),
                        pl.lit(1.0).alias("share")))
    else:
        rows = parts.filter(pl.col("steer").is_null()).select("question_id", "sample_index", "code", "share")
    bounds = scales.select("question_id", pl.col("scale_min").cast(pl.Int64), pl.col("scale_max").cast(pl.Int64))
    return (rows.join(bounds, on="question_id")
            .filter(pl.col("code").is_between(pl.col("scale_min"), pl.col("scale_max")))
            .select("question_id", "sample_index", (pl.col("code") - pl.col("scale_min")).alias("code"), "share"))


def release_scales(release: Path) -> pl.DataFrame:
    """question_id, scale_min, scale_max of every question of the release with a scale of two codes or more."""
    release = Path(release)
    return _collect(Release.open(release).scan("questions")
                    .select(pl.col("question_id").cast(pl.String), pl.col("scale_min").cast(pl.Int64),
                            pl.col("scale_max").cast(pl.Int64))
                    .drop_nulls().filter(pl.col("scale_max") > pl.col("scale_min")), release, "questions"
                    ).sort("question_id")


def attach(data: dict, *, release: Path, answers: pl.DataFrame, parts: pl.DataFrame | None, weighted: bool,
           weight_column: str, intervals: str, out: Path,
           settings: uncertainty.Bootstrap = uncertainty.Bootstrap()) -> tuple[dict, list[str], list[Path]]:
    """Add the reference points to countries.json ``data`` (in place: its entries' fields, ``reference_points``
    saying how they were made) and write the neighbour matrices (``NEIGHBOURS_FILE``) and their heatmap into
    ``out``; returns metrics.json's reference points, the notes and the paths written."""
    from culturebench.evaluate.reports.country_plots import neighbour_heatmap_png

    countries = sorted(data["countries"])
    scales = release_scales(release)
    everyone = read_respondents(release, scales, countries, weighted, weight_column)
    asked = sorted(set(answers["question_id"].unique().to_list()) & set(everyone.questions))
    measures = [m for m in SIMILARITIES if any(f"similarity_{m}" in e for e in data["countries"].values())]
    cache = neighbour_cache(release, measures, weighted, countries, everyone.questions)
    per_question = cached_neighbours(cache, everyone.counts(), everyone.widths, measures)
    at = [everyone.questions.index(q) for q in asked]
    respondents = everyone.subset(asked)
    model = model_requests(model_rows(answers, parts, scales), asked, respondents.codes)
    points = reference_points(data["countries"], respondents, model, {m: v[:, :, at] for m, v in per_question.items()},
                              settings=settings, intervals=intervals)
    for code, fields in points.fields.items():
        data["countries"][code].update(fields)
    data["samples_per_question"] = [int(model.n[model.n > 0].min()), int(model.n.max())] if model.n.any() else None
    data["reference_points"] = {
        "measures": [f"similarity_{m}" for m in measures], "n_splits": N_SPLITS, "seed": settings.seed,
        "ceiling_correction": "none (two half-size samples)", "intervals": intervals,
        "n_resamples": settings.n_resamples, "confidence_level": settings.confidence_level,
        "neighbours_file": NEIGHBOURS_FILE}
    neighbours = {"benchmark": data.get("benchmark"), "model": data.get("model"), "n_questions": len(asked),
                  "weighted": weighted, **points.neighbours}
    path = Path(out) / NEIGHBOURS_FILE
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(neighbours, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    temporary.replace(path)
    primary = data["measure"]
    heatmap = Path(out) / "countries_neighbours.png"
    names = {c: e.get("name") or c for c, e in data["countries"].items()}
    if primary in neighbours["measures"]:
        neighbour_heatmap_png(neighbours["measures"][primary], countries, names, heatmap,
                              label=primary.replace("_", " "),
                              title=f"{data.get('benchmark')}: similarity of each country's respondents (row) with "
                                    f"each country's (column), {len(asked)} questions")
    return points.headline, points.notes, [path, *([heatmap] if heatmap.is_file() else [])]


def differences(views: Mapping[str, Mapping], measure: str | None = None) -> pl.DataFrame:
    """``compare``'s per-country differences between the first run and each other (countries.json of each): the
    difference of ``measure`` (default the first run's headline measure), and ``significant``: true when the two
    intervals do not overlap, judged only when both runs made two-stage intervals (else null). Non-overlap of two
    95% intervals is a conservative test (a difference can be real while its intervals overlap)."""
    labels = list(views)
    rows = []
    measure = measure or (views[labels[0]]["measure"] if labels else "")
    short = measure.removeprefix("similarity_")
    for label in labels[1:]:
        first, other = views[labels[0]], views[label]
        judged = all((v.get("reference_points") or {}).get("intervals") == "two_stage" for v in (first, other))
        for code in sorted(set(first["countries"]) & set(other["countries"])):
            a, b = first["countries"][code], other["countries"][code]
            (a_low, a_high), (b_low, b_high) = (e.get(f"interval_{short}") or [None, None] for e in (a, b))
            known = judged and None not in (a_low, a_high, b_low, b_high)
            rows.append({"country": code, "run": label, "against": labels[0],
                         "difference": None if a.get(measure) is None or b.get(measure) is None
                         else b[measure] - a[measure],
                         "significant": (b_low > a_high or a_low > b_high) if known else None})
    return pl.DataFrame(rows, schema={"country": pl.String, "run": pl.String, "against": pl.String,
                                      "difference": pl.Float64, "significant": pl.Boolean})
