"""``evaluate --limit N``: which N items a small run asks, spread over the benchmark's design, and what they cover.

The rule (ours; the papers evaluate everything), the same for every benchmark:

1. The items are grouped by the benchmark's design cell (each benchmark's ``limit`` help says which).
2. A generator seeded with the run's ``--seed`` (``numpy.random.default_rng``) draws one order of the groups and,
   group by group in that order, one order of each group's items. With two design columns the group order then
   takes turns over the first column's values (a stable sort by each cell's place among its first-column value's
   cells), so that a small N covers every value of the first column before a second cell of any.
3. Items are taken round-robin: the first item of every group in the drawn order, then the second of every group,
   ... until N are taken. So N >= the number of groups covers every group, with the groups' counts differing by at
   most one (a group with fewer items gives its share to the others).
4. The kept items keep their release order.

Without ``--limit`` (or N >= the items) everything is asked. ``Coverage`` says what a run covers ("36/36
questions, 1-2 rows each") and warns where a group holds fewer than ``MIN_GROUP_SIZE`` items, the size under which
the bootstrap breakdowns flag a group ``small`` (``MIN_GROUP_SIZE``, which ``uncertainty`` reads from here)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import polars as pl

from culturebench.words import counted, singular

MIN_GROUP_SIZE = 30
"""Groups with fewer units than this are reported with their size and interval but flagged ``small`` and not
ranked (a 10-story country's accuracy is not comparable to a 300-story one)."""


def spread_positions(frame: pl.DataFrame, by: Sequence[str], limit: int | None,
                     seed: int | None) -> np.ndarray | None:
    """Positions (ascending) of the ``limit`` rows of ``frame`` to ask, rows grouped by the design columns ``by``
    (groups in order of first appearance); the module docstring gives the rule. None (every row) without ``limit``
    or when ``limit`` >= the rows. Arrays, not Python objects, per row: a split of millions costs a few int64
    arrays."""
    if limit is None or limit >= frame.height:
        return None
    groups = (frame.select(by).with_row_index("position")
              .group_by(list(by), maintain_order=True).agg(pl.col("position")))
    sizes = groups["position"].list.len().to_numpy()
    members = np.split(groups["position"].explode().to_numpy().astype(np.int64), np.cumsum(sizes)[:-1])
    first = groups[by[0]].to_list()
    rng = np.random.default_rng(0 if seed is None else seed)
    drawn = rng.permutation(len(members))
    seen: Counter = Counter()
    turn = []
    for group in drawn:  # with several design columns, cells take turns over the first column's values
        turn.append(seen[first[group]])
        seen[first[group]] += 1
    order = drawn[np.argsort(np.asarray(turn, dtype=np.int64), kind="stable")]
    queues = [members[g][rng.permutation(members[g].size)] for g in order]
    return np.sort(round_robin(queues, limit))


def round_robin(queues: Sequence[np.ndarray], limit: int) -> np.ndarray:
    """The first ``limit`` items (fewer than the queues hold) taken round-robin: the first item of every queue in
    order, then the second, ... Found by depth, not by ordering every item: the largest depth d whose first d
    items of every queue fit in ``limit``, then one item at depth d from the first queues that reach it."""
    sizes = np.asarray([queue.size for queue in queues])
    low, high = 0, int(sizes.max())
    while low < high:  # binary search: sum(min(sizes, d)) grows with d
        middle = (low + high + 1) // 2
        low, high = (middle, high) if np.minimum(sizes, middle).sum() <= limit else (low, middle - 1)
    rest = limit - int(np.minimum(sizes, low).sum())
    deeper = [queue[low:low + 1] for queue in queues if queue.size > low][:rest]
    return np.concatenate([queue[:low] for queue in queues] + deeper)


@dataclass(frozen=True)
class Coverage:
    """What a (limited) run covers: per design column the groups asked out of the release's, and items per cell."""

    item: str
    """What one item is, plural ("rows", "questions", "stories", "prompts", "scenarios")."""
    columns: tuple[str, ...]
    """The design columns, plural ("questions"; "dimensions", "domains")."""
    covered: tuple[int, ...]
    """Per column: distinct values asked."""
    total: tuple[int, ...]
    """Per column: distinct values in the release (the evaluated split)."""
    cells: tuple[int, int]
    """Cells (one value of every column) asked, and in the release."""
    per_cell: tuple[int, int]
    """Fewest and most items asked in a covered cell."""
    asked: int
    available: int
    limit: int | None
    seed: int | None
    part: str | None = None

    def text(self) -> str:
        """e.g. ``covers 36/36 questions, 1-2 rows each (50 of 8,640 rows: --limit spread by seed 0)``."""
        low, high = self.per_cell
        each = counted(low, self.item) if low == high else f"{low:,}-{high:,} {self.item}"
        cell = " x ".join(singular(c) for c in self.columns)
        parts = ", ".join(f"{c}/{t} {name}" for name, c, t in zip(self.columns, self.covered, self.total))
        if len(self.columns) > 1:
            parts += f", {self.cells[0]}/{self.cells[1]} {cell} cells"
        how = (f"{self.asked:,} of {self.available:,} {self.item}: --limit spread by seed {self.seed}"
               if self.asked < self.available else f"all {self.available:,} {self.item}")
        prefix = f"{self.part}: " if self.part else ""
        return f"{prefix}covers {parts}, {each} per {cell} ({how})"

    def warnings(self) -> list[str]:
        """Where a plot or metric has too little to mean much: groups left out, or cells under MIN_GROUP_SIZE."""
        prefix = f"{self.part}: " if self.part else ""
        out = []
        for name, covered, total in zip(self.columns, self.covered, self.total):
            if covered < total:
                out.append(f"{prefix}only {covered} of {total} {name} asked: per-{singular(name)} results and plots "
                           f"leave {total - covered} out (raise --limit to at least {total} to cover them all)")
        if self.per_cell[0] < MIN_GROUP_SIZE:
            cell = " x ".join(singular(c) for c in self.columns)
            out.append(f"{prefix}{counted(self.per_cell[0], self.item)} in the smallest {cell}: per-{cell} values "
                       f"rest on too few to mean much (under {MIN_GROUP_SIZE}, where the breakdowns flag a group "
                       "small)")
        return out

    def as_dict(self) -> dict:
        """metrics.json's ``covers`` entry: the numbers, the sentence and the warnings."""
        return {"part": self.part, "item": self.item, "columns": list(self.columns), "covered": list(self.covered),
                "total": list(self.total), "cells": list(self.cells), "per_cell": list(self.per_cell),
                "asked": self.asked,
                "available": self.available, "limit": self.limit, "seed": self.seed, "text": self.text(),
                "warnings": self.warnings()}


def limit_frame(frame: pl.DataFrame, by: Sequence[str], limit: int | None, seed: int | None, *, item: str,
                columns: Sequence[str], part: str | None = None) -> tuple[pl.DataFrame, Coverage]:
    """The rows of ``frame`` that ``--limit`` keeps (``spread_positions`` over the design columns ``by``, named
    ``columns`` in the report), and what they cover."""
    positions = spread_positions(frame, by, limit, seed)
    kept = frame if positions is None else frame[positions]
    return kept, coverage(kept.select(by), frame.select(by), limit, seed, item=item, columns=columns, part=part)


def limit_scan(scan: pl.LazyFrame, by: Sequence[str], limit: int | None, seed: int | None, *, item: str,
               columns: Sequence[str], collect=lambda query: query.collect(engine="streaming")
               ) -> tuple[pl.DataFrame, Coverage]:
    """``limit_frame`` for a lazy scan of millions of rows: only the design columns ``by`` are read whole (as
    categoricals, 4 bytes a row), then only the kept rows (the same picks, ``spread_positions`` of the same
    groups in the same order). ``collect`` runs a query (a benchmark's error mapping)."""
    design = collect(scan.select(pl.col(c).cast(pl.String).cast(pl.Categorical) for c in by))
    positions = spread_positions(design, by, limit, seed)
    if positions is None:
        return collect(scan), coverage(design, design, limit, seed, item=item, columns=columns)
    kept = collect(scan.with_row_index("_position").filter(pl.col("_position").is_in(pl.Series(positions).implode()))
                   .drop("_position"))
    return kept, coverage(design[positions], design, limit, seed, item=item, columns=columns)


def coverage(asked: pl.DataFrame, available: pl.DataFrame, limit: int | None, seed: int | None, *, item: str,
             columns: Sequence[str], part: str | None = None) -> Coverage:
    """The ``Coverage`` of the items asked out of those available (both: the design columns, a row per item)."""
    cells = asked.group_by(asked.columns).len()
    return Coverage(item=item, columns=tuple(columns),
                    covered=tuple(asked[c].n_unique() for c in asked.columns),
                    total=tuple(available[c].n_unique() for c in available.columns),
                    cells=(cells.height, available.unique().height),
                    per_cell=(int(cells["len"].min() or 0), int(cells["len"].max() or 0)),
                    asked=asked.height, available=available.height, limit=limit, seed=seed, part=part)
