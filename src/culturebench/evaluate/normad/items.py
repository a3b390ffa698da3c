"""NormAd's release (config ``stories``) and the requests planned from it (one per story x context x sample)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.runs import release_configs
from culturebench.evaluate.normad import prompts
from culturebench.evaluate.runs import paraphrases
from culturebench.evaluate.runs.variants import DEFAULT, option_labels, option_order
from culturebench.raw.normad import closing_question, with_closing_question

if TYPE_CHECKING:
    from culturebench.chat import ChatRequest


CONFIG = "stories"
REQUIRED_COLUMNS = ("id", "country", "value", "rule_of_thumb", "story", "gold_label")
OPTIONAL_COLUMNS = ("axis", "subaxis", "iw_zone")
UNKNOWN = "unknown"
"""Zone / subaxis of a story whose release value is missing."""


def release_tables(release: Path, split: str | None = None) -> dict[str, pl.DataFrame]:
    """The release's ``stories`` (story_id as text, gold_label in LABELS, zone and subaxis filled with "unknown"),
    all splits concatenated in release order, or only ``split``."""
    release = Path(release)
    tables = release_configs.release_configs(release, "normad", "a NormAd release")
    stories = release_configs.release_config(tables, CONFIG, release, columns=REQUIRED_COLUMNS, split=split)
    for column in OPTIONAL_COLUMNS:
        if column not in stories.columns:
            stories = stories.with_columns(pl.lit(None, dtype=pl.String).alias(column))
    gold = [prompts.normalise_label(v) for v in stories["gold_label"].to_list()]
    bad = next((i for i, g in enumerate(gold) if g is None), None)
    if bad is not None:
        raise InputError(f"unknown gold label {stories['gold_label'][bad]!r} (expected yes, no or neutral)",
                         file=release, row=bad + 1, column="gold_label")
    stories = stories.with_columns(
        pl.col("id").cast(pl.String).alias("story_id"),
        pl.Series("gold_label", gold, dtype=pl.String),
        *(pl.col(c).cast(pl.String).fill_null(UNKNOWN).replace("", UNKNOWN).alias(c) for c in ("subaxis", "iw_zone")),
        *(pl.col(c).cast(pl.String) for c in ("country", "value", "rule_of_thumb", "story")))
    duplicated = stories.filter(pl.col("story_id").is_duplicated())
    if duplicated.height:
        raise InputError(f"story id {duplicated['story_id'][0]!r} occurs more than once", file=release, column="id")
    variants = release_configs.release_config(tables, paraphrases.CONFIG, release, required=False)
    return {"stories": stories, **({} if variants is None else {"variants": variants})}


def paraphrased(release: Path) -> dict[str, str]:
    """Story id -> its closing question, for ``generate paraphrases normad``."""
    return paraphrased_texts(release_tables(release)["stories"])


def paraphrased_texts(stories: pl.DataFrame) -> dict[str, str]:
    """Story id -> its closing question (what a paraphrase variant replaces), for the stories that end in one."""
    return {i: q for i, story in stories.select("story_id", "story").iter_rows()
            if (q := closing_question(story)) is not None}


# ---------------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class PlannedRequest:
    story_id: str
    context: str  # one of prompts.CONTEXTS
    sample_index: int
    prompt: str
    request: ChatRequest
    variant: str = DEFAULT
    listed: tuple[str, ...] = prompts.LABELS
    """The labels in the order the prompt lists them (``variant``'s)."""
    fallback: str | None = None
    """A paraphrase variant's story asked with its original closing question: why (``evaluate.runs.paraphrases``)."""


def iter_requests(stories: pl.DataFrame, *, contexts: Sequence[str] = prompts.CONTEXTS,
                  samples: int = prompts.DEFAULT_SAMPLES, temperature: float = prompts.TEMPERATURE,
                  max_tokens: int = prompts.MAX_TOKENS, seed: int | None = 0,
                  protocol: str = prompts.DEFAULT_PROTOCOL, variants: Sequence[str] = (DEFAULT,),
                  wordings: paraphrases.Wordings | None = None) -> Iterator[PlannedRequest]:
    """One request per story, context, variant and sample under ``protocol`` (prompts.PROTOCOLS), in story order
    then context order (a generator: a run streams them); a variant lists the options in its order
    (``variants.option_order``, seeded by ``seed`` and the story) under its labels (``variants.option_labels``); a
    paraphrase variant asks the story with its closing question in the ``wordings`` text, the options in the paper's
    order."""
    from culturebench.chat import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    wordings = wordings or paraphrases.Wordings(tuple(variants))
    for row in stories.select("story_id", "story", "country", "value", "rule_of_thumb").iter_rows(named=True):
        question = closing_question(row["story"])
        for context in contexts:
            paper = prompts.prompt_text(context, row["story"], row["country"], row["value"], row["rule_of_thumb"],
                                        protocol)
            for variant in variants:
                fallback = None
                if paraphrases.is_paraphrase(variant):
                    order = option_order(len(prompts.LABELS), DEFAULT, seed or 0, row["story_id"])
                    asked, fallback = wordings.text(variant, row["story_id"], question or "")
                    text = paper if fallback else prompts.prompt_text(
                        context, with_closing_question(row["story"], asked), row["country"], row["value"],
                        row["rule_of_thumb"], protocol)
                else:
                    order = option_order(len(prompts.LABELS), variant, seed or 0, row["story_id"])
                    text = (paper if variant == DEFAULT else
                            prompts.relisted(paper, order, option_labels(len(prompts.LABELS), variant)))
                listed = tuple(prompts.LABELS[i] for i in order)
                for r in range(samples):
                    yield PlannedRequest(row["story_id"], context, r, text,
                                         ChatRequest(prompts.messages(text), sampling, sample_index=r), variant, listed,
                                         fallback)


def plan_requests(stories: pl.DataFrame, **options) -> list[PlannedRequest]:
    """``iter_requests`` as a list (for a look at a few stories' requests; a run streams them)."""
    return list(iter_requests(stories, **options))
