"""CDEval's release tables (questions, Hofstede scores) and the requests planned from them (Table 8 x R)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from culturebench.errors import InputError
from culturebench.evaluate.runs import release_configs
from culturebench.evaluate.cdeval import prompts
from culturebench.evaluate.runs import paraphrases
from culturebench.evaluate.runs.variants import DEFAULT, option_order

if TYPE_CHECKING:
    from culturebench.chat import ChatRequest


DIMENSIONS = ("PDI", "IDV", "UAI", "MAS", "LTO", "IVR")
"""Hofstede's six dimensions, in the paper's order; option_1 of a question is the target orientation (Sec. 3.2.2):
high PDI, individualism, high UAI, masculinity, long-term orientation, indulgence."""
DOMAINS = ("Family", "Education", "Work", "Wellness", "Lifestyle", "Arts", "Scientific")
"""The seven domains, in Table 2's column order."""

INSTABILITY_SCALE = float(prompts.EVALUATION["instability_N"]["value"])
"""N in Eq. 7 (-1000)."""
BETA = float(prompts.EVALUATION["beta"]["value"])
"""beta in Eq. 3 (0.01): brings the 0-100 human scores to the 0-1 likelihood scale."""

QUESTION_COLUMNS = ("id", "dimension", "domain", "question", "option_1", "option_2")
CODE_COLUMNS = ("country_code", "code", "iso3", "iso_code", "ctr")
NAME_COLUMNS = ("country_name", "country", "name")
HOFSTEDE_EXTRA = ("group", "source_file", "version")
"""Optional Hofstede columns kept when present: the Sec. 4.4 group and which Hofstede table a row comes from."""
RESPONSE_FIELDS = ("model", "question_id", "prompt", "sample_index", "response")
REPEAT_RULE_SOURCE = {
    "nearest": "App. A.3.1: a Repeat answer is the option nearest by edit distance",
    "similar_only": "ours, not the paper's (--config repeat_rule): a Repeat answer whose nearer option has a "
                    f"normalised Levenshtein similarity under {prompts.MIN_REPEAT_SIMILARITY} counts as neutral",
}
"""What metrics.json says of the Repeat rule used (``prompts.REPEAT_RULES``)."""
RESPONSE_KEY = ("model", "language", "variant", "question_id", "prompt", "sample_index")
"""What identifies one answer of responses.jsonl: a second line with the same is refused, not counted twice."""


def release_tables(release: Path) -> dict[str, pl.DataFrame]:
    """The release's ``questions`` (question_id as text, plus QUESTION_COLUMNS) and ``hofstede`` (country_code,
    country_name, pdi ... ivr as floats; empty when the release has none), all splits concatenated."""
    release = Path(release)
    tables = release_configs.release_configs(release, "cdeval", "a CDEval release")
    questions = release_configs.release_config(tables, "questions", release, columns=QUESTION_COLUMNS)
    questions = questions.with_columns(pl.col("id").cast(pl.String).alias("question_id"),
                                       pl.col("dimension").cast(pl.String).str.to_uppercase(),
                                       pl.col("domain").cast(pl.String))
    unknown = sorted(set(questions["dimension"].drop_nulls().to_list()) - set(DIMENSIONS))
    if unknown:
        raise InputError(f"questions config has unknown dimension {unknown[0]!r}", file=release, column="dimension")
    hofstede = release_configs.release_config(tables, "hofstede", release, required=False)
    hofstede = empty_hofstede() if hofstede is None else normalise_hofstede(hofstede, release)
    variants = release_configs.release_config(tables, paraphrases.CONFIG, release, required=False)
    return {"questions": questions, "hofstede": hofstede, **({} if variants is None else {"variants": variants})}


def paraphrased(release: Path) -> dict[str, str]:
    """Question id -> the text a paraphrase stands in for (``generate paraphrases cdeval``): the question, never the
    options (``builders.cdeval.paraphrased_texts`` on the built table)."""
    questions = release_tables(release)["questions"]
    return dict(zip(questions["question_id"].to_list(), questions["question"].to_list()))


def empty_hofstede() -> pl.DataFrame:
    return pl.DataFrame(schema={"country_code": pl.String, "country_name": pl.String,
                                **{d.lower(): pl.Float64 for d in DIMENSIONS}, **{c: pl.String for c in HOFSTEDE_EXTRA}})


def normalise_hofstede(frame: pl.DataFrame, source: Path | str = "hofstede") -> pl.DataFrame:
    """Hofstede scores as country_code, country_name, pdi ... ivr (Float64, null where missing), group,
    source_file, version (null where the table has no such column)."""
    lower = {c.lower(): c for c in frame.columns}
    code = next((lower[c] for c in CODE_COLUMNS if c in lower), None)
    name = next((lower[c] for c in NAME_COLUMNS if c in lower and lower[c] != code), None)
    if code is None and name is None:
        raise InputError("hofstede config has no country code or name column", file=source)
    missing = [d.lower() for d in DIMENSIONS if d.lower() not in lower]
    if missing:
        raise InputError(f"hofstede config lacks column {missing[0]}", file=source, column=missing[0])
    return frame.select(
        pl.col(code or name).cast(pl.String).alias("country_code"),
        pl.col(name or code).cast(pl.String).alias("country_name"),
        *(pl.col(lower[d.lower()]).cast(pl.Float64, strict=False).alias(d.lower()) for d in DIMENSIONS),
        *((pl.col(lower[c]) if c in lower else pl.lit(None)).cast(pl.String).alias(c) for c in HOFSTEDE_EXTRA))


# ---------------------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class PlannedRequest:
    question_id: str
    prompt: str
    """One of prompts.PROMPTS: the prompt as sent (its order the options' as shown)."""
    sample_index: int
    request: ChatRequest
    variant: str = DEFAULT
    slot: str = ""
    """The paper's prompt this one stands for under ``variant`` (``prompt`` under the default)."""
    fallback: str | None = None
    """A paraphrase variant's question asked in its original wording: why (``evaluate.runs.paraphrases``)."""


def iter_requests(questions: pl.DataFrame, *, samples: int = prompts.DEFAULT_SAMPLES,
                  temperature: float = prompts.TEMPERATURE, max_tokens: int = prompts.MAX_TOKENS,
                  seed: int | None = 0, variants: tuple[str, ...] = (DEFAULT,),
                  wordings: paraphrases.Wordings | None = None) -> Iterator[PlannedRequest]:
    """Six prompts x ``samples`` per question and variant, in question order (a generator: a run streams them); a
    paraphrase variant asks the question in its ``wordings`` text, the options in the paper's order."""
    from culturebench.chat import ChatRequest, SamplingParams

    sampling = SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
    wordings = wordings or paraphrases.Wordings(tuple(variants))
    for row in questions.select("question_id", "question", "option_1", "option_2").iter_rows(named=True):
        for variant in variants:
            question, fallback = wordings.text(variant, row["question_id"], row["question"])
            order = DEFAULT if paraphrases.is_paraphrase(variant) else variant
            for slot in prompts.PROMPTS:
                name = variant_prompt(slot, order, seed or 0, row["question_id"])
                text = prompts.prompt_text(name, question, row["option_1"], row["option_2"])
                for r in range(samples):
                    yield PlannedRequest(row["question_id"], name, r,
                                         ChatRequest(prompts.messages(text), sampling, sample_index=r), variant, slot,
                                         fallback)


def variant_prompt(slot: str, variant: str, seed: int, question_id: str) -> str:
    """The prompt ``variant`` asks for the paper's prompt ``slot`` of a question: its two options listed as the
    variant orders them (``variants.option_order``), so norm shows option_2 first where the variant swaps them and
    reverse option_1. Two options have two orders, both of which the paper asks (norm / reverse): a swapping variant
    asks the other order's prompt, identical to a default request (flagged, asked once)."""
    kind, order = slot.rsplit("_", 1)
    swapped = option_order(2, variant, seed, question_id) != (0, 1)
    return f"{kind}_{prompts.ORDERS[(order == prompts.ORDERS[0]) == swapped]}"


def plan_requests(questions: pl.DataFrame, **options) -> list[PlannedRequest]:
    """``iter_requests`` as a list (for a look at a few questions' requests; a run streams them)."""
    return list(iter_requests(questions, **options))
