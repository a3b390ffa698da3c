"""Prompt variants as a run dimension (issue #63, docs/robustness.md): each item asked under each variant of
``--variants``: the variants' definitions and checks; what a run reports of them is ``variant_report``'s.

A benchmark defines its variants as data (``VARIANTS``: name -> ``Variant``, its order or labels; a benchmark names
those it asks, e.g. ``ORDER_VARIANTS``: the listed options reversed, or shuffled seeded by
``--seed`` and the item) and calls these functions from its plan and its scoring; the engine knows none of it. The
paper's own protocol (``DEFAULT``) is always asked, first, and the paper's headline stays the default's; a request
identical to one of an earlier variant (two options shuffled into the default order) is flagged
(``identical_requests``) and asked once (the response cache keys on the request). This module imports nothing
heavy (the command line reads the option at start).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from culturebench.options import option
from culturebench.errors import InputError
from culturebench.evaluate.runs.paraphrases import family

DEFAULT = "default"
"""The paper's protocol: the options in the order the paper lists them."""


def _paper_order(n_options: int, seed: int, item: str) -> tuple[int, ...]:
    return tuple(range(n_options))


def _reversed_order(n_options: int, seed: int, item: str) -> tuple[int, ...]:
    return tuple(reversed(range(n_options)))


def _shuffled_order(n_options: int, seed: int, item: str) -> tuple[int, ...]:
    order = list(range(n_options))
    random.Random(f"{seed}:{item}").shuffle(order)
    return tuple(order)


@dataclass(frozen=True)
class Variant:
    """One prompt variant: what it changes (docs/robustness.md's words) and, for an order variant, the positions
    (0-based, into the paper's order) it lists ``n_options`` options in for an item (``order(n_options, seed,
    item)``; None: the variant changes something other than the order)."""

    name: str
    change: str
    order: Callable[[int, int, str], tuple[int, ...]] | None = None
    labels: Callable[[int], tuple[str, ...]] | None = None
    """The labels of ``n_options`` listed options, first to last, where the variant relabels them (None: the
    benchmark's own labels)."""


def _letters(n_options: int) -> tuple[str, ...]:
    return tuple(chr(ord("A") + k) for k in range(n_options))


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant(DEFAULT, "the paper's prompt, its options in the paper's order", _paper_order),
    Variant("reversed", "the options listed in reverse", _reversed_order),
    Variant("shuffled", "the options listed in an order drawn by a generator seeded with --seed and the item's id",
            _shuffled_order),
    Variant("letters", "the options labelled A, B, C... in place of their numbers, in the paper's order",
            _paper_order, _letters),
)}
"""Every variant a benchmark may define, by name: a benchmark names those it asks (``ORDER_VARIANTS`` or its own
tuple) and says how each changes its prompt."""
ORDER_VARIANTS = (DEFAULT, "reversed", "shuffled")
"""The order variants a multiple-choice benchmark defines: its options listed in reverse, or shuffled (seeded by
``--seed`` and the item's id)."""
TIE_RULE = ("the modal answer is the most frequent one across an item's variants (an unread answer counts as an "
            "answer of its own); answers equally frequent give the same share, so a tie needs no rule")


def variants_option() -> Any:
    """The ``--variants`` field of a benchmark's ``Options`` (a comma-separated list; the default: the paper's)."""
    return option((DEFAULT,), score=False,
                  help="Prompt variants to ask each item under besides the paper's (comma-separated; the ones "
                       "this benchmark defines, paraphrase expanding to paraphrase1..K: docs/robustness.md); "
                       "metrics.json's variants block reports consistency, each variant's headline and their spread.")


def checked_variants(variants: Sequence[str], defined: Sequence[str], benchmark: str,
                     none_because: str = "") -> tuple[str, ...]:
    """``variants`` with ``DEFAULT`` first and each once; an InputError (one line) naming those ``defined`` for a
    variant the benchmark does not define (``none_because``: why a benchmark that defines none has none;
    ``paraphraseK`` is of the ``paraphrase`` family, ``family``)."""
    unknown = [v for v in variants if family(v) not in defined]
    if unknown:
        if tuple(defined) == (DEFAULT,):
            raise InputError(f"{benchmark} defines no prompt variants ({none_because}); leave --variants out",
                             column="variants")
        raise InputError(f"unknown variant {unknown[0]!r} of {benchmark}; it defines {', '.join(defined)}",
                         column="variants")
    return tuple(dict.fromkeys((DEFAULT, *variants)))


def option_labels(n_options: int, variant: str) -> tuple[str, ...] | None:
    """The labels ``variant`` gives ``n_options`` listed options (None: the benchmark's own)."""
    labels = VARIANTS[variant].labels
    return None if labels is None else labels(n_options)


def option_order(n_options: int, variant: str, seed: int, item: str) -> tuple[int, ...]:
    """The positions (0-based, into the paper's order) of ``n_options`` options as ``variant`` lists them for
    ``item`` (``VARIANTS``: the paper's order, reversed, or shuffled by a generator seeded with ``--seed`` and the
    item's id: the same run asks the same order)."""
    definition = VARIANTS.get(variant)
    if definition is None or definition.order is None:
        raise ValueError(f"{variant!r} is not an order variant")
    return definition.order(n_options, seed, item)
