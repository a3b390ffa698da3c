"""Prompt variants as a run dimension (issue #63, docs/robustness.md): each item asked under each variant of
``--variants``, and what a run reports of them (metrics.json ``variants``, the summary line).

A benchmark defines its variants as data (``ORDER_VARIANTS``: the listed options reversed, or shuffled seeded by
``--seed`` and the item) and calls these functions from its plan and its scoring; the engine knows none of it. The
paper's own protocol (``DEFAULT``) is always asked, first, and the paper's headline stays the default's; a request
identical to one of an earlier variant (two options shuffled into the default order) is flagged
(``identical_requests``) and asked once (the response cache keys on the request). This module imports nothing
heavy (the command line reads the option at start).
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from culturebench.options import option
from culturebench.errors import InputError
from culturebench.evaluate.paraphrases import family

DEFAULT = "default"
"""The paper's protocol: the options in the order the paper lists them."""
ORDER_VARIANTS = (DEFAULT, "reversed", "shuffled")
"""The order variants a multiple-choice benchmark defines: its options listed in reverse, or shuffled (seeded by
``--seed`` and the item's id)."""
TIE_RULE = ("the modal answer is the most frequent one across an item's variants (an unread answer counts as an "
            "answer of its own); answers equally frequent give the same share, so a tie needs no rule")


def variants_option() -> Any:
    """The ``--variants`` field of a benchmark's ``Options`` (a comma-separated list; the default: the paper's)."""
    return option((DEFAULT,), score=False,
                  help="Prompt variants to ask each item under besides the paper's (comma-separated: reversed, "
                       "shuffled, paraphrase or paraphrase1..K; docs/robustness.md); metrics.json's variants block "
                       "reports consistency, each variant's headline and their spread.")


def checked_variants(variants: Sequence[str], defined: Sequence[str], benchmark: str) -> tuple[str, ...]:
    """``variants`` with ``DEFAULT`` first and each once; an InputError (one line) naming those ``defined`` for a
    variant the benchmark does not define."""
    unknown = [v for v in variants if family(v) not in defined]
    if unknown:
        raise InputError(f"unknown variant {unknown[0]!r} of {benchmark}; it defines {', '.join(defined)}",
                         column="variants")
    return tuple(dict.fromkeys((DEFAULT, *variants)))


def option_order(n_options: int, variant: str, seed: int, item: str) -> tuple[int, ...]:
    """The positions (0-based, into the paper's order) of ``n_options`` options as ``variant`` lists them for
    ``item``: the paper's order, reversed, or shuffled by a generator seeded with ``--seed`` and the item's id
    (the same run asks the same order)."""
    order = list(range(n_options))
    if variant == "reversed":
        order.reverse()
    elif variant == "shuffled":
        random.Random(f"{seed}:{item}").shuffle(order)
    elif variant != DEFAULT:
        raise ValueError(f"unknown order variant {variant!r}")
    return tuple(order)


@dataclass(frozen=True)
class VariantAnswer:
    """One answer as the variants report reads it (a benchmark makes these from its scored records)."""

    variant: str
    unit: str
    """The item as asked under every variant (e.g. question, prompt and sample): consistency compares its answers."""
    answer: str | None
    """The option picked, by its content (None: not read)."""
    position: int | None
    """The listed position (1-based) of the option picked, as the variant listed it (None: not read)."""
    asked: tuple
    """What identifies the request as sent: equal for two variants that asked the same prompt."""


def report(answers: Sequence[VariantAnswer], variants: Sequence[str],
           headline: Callable[[str], Mapping[str, float]]) -> dict:
    """metrics.json's ``variants`` block: per item (``unit``) its consistency (the share of its variants whose
    answer is the item's modal answer, ``TIE_RULE``) and their mean; per variant the benchmark's headline
    (``headline(variant)``: its own scoring of that variant's records); per headline name the spread across
    variants (max - min and the population standard deviation); per variant the share of read answers given to
    each listed position; and how many requests repeated an earlier variant's (asked once)."""
    by_unit: dict[str, dict[str, str | None]] = {}
    for a in answers:
        by_unit.setdefault(a.unit, {})[a.variant] = a.answer
    per_item = {unit: _consistency(given) for unit, given in sorted(by_unit.items())}
    headlines = {v: dict(headline(v)) for v in variants}
    names = sorted({name for values in headlines.values() for name in values})
    spread = {}
    for name in names:
        values = [headlines[v][name] for v in variants if name in headlines[v]]
        spread[name] = {"max_minus_min": max(values) - min(values), "std": statistics.pstdev(values),
                        "n_variants": len(values)}
    positions: dict[str, Counter] = {v: Counter() for v in variants}
    for a in answers:
        if a.position is not None:
            positions[a.variant][a.position] += 1
    asked_before: set[tuple] = set()
    identical = 0
    for v in variants:
        mine = {a.asked for a in answers if a.variant == v}
        identical += len(mine & asked_before)
        asked_before |= mine
    return {"variants": list(variants), "tie_rule": TIE_RULE, "n_items": len(per_item),
            "consistency": statistics.fmean(per_item.values()) if per_item else None,
            "per_item": per_item, "headlines": headlines, "spread": spread,
            "position_share": {v: {str(p): n / sum(c.values()) for p, n in sorted(c.items())}
                               for v, c in positions.items()},
            "identical_requests": identical,
            "identical_note": "requests of a variant identical to an earlier variant's (asked once: the response "
                              "cache keys on the request)"}


def _consistency(given: Mapping[str, str | None]) -> float:
    """The share of an item's variants whose answer is its modal answer (``TIE_RULE``)."""
    return max(Counter(given.values()).values()) / len(given)


def summary_line(benchmark: str, block: Mapping | None) -> list[str]:
    """The summary's line of a run with variants (none without): mean consistency, the largest spread and the
    identical requests."""
    if not block:
        return []
    spread = max(block["spread"].items(), key=lambda kv: kv[1]["max_minus_min"], default=None)
    widest = f"; widest spread {spread[0]} {spread[1]['max_minus_min']:.3f}" if spread else ""
    consistency = "n/a" if block["consistency"] is None else f"{block['consistency']:.3f}"
    return [f"{benchmark} variants {', '.join(block['variants'])}: consistency {consistency} over "
            f"{block['n_items']:,} items{widest}; {block['identical_requests']:,} requests identical to an earlier "
            "variant's, asked once (metrics.json variants)"]

