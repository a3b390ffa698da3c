"""Deterministic, stable assignment of rows to splits and samples.

Each key is hashed on its own (splitmix64 of the key mixed with a salt derived from the seed), so adding or
removing other rows (another country's file) never moves an existing key to another split or sample.
"""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl

SPLIT_NAMES = ("train", "validation", "test")


def salt_of(text: str) -> np.uint64:
    return np.uint64(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little"))


def splitmix64(values: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, vectorised over uint64 (wrap-around arithmetic is intended)."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def stable_hash(keys: pl.Series, salt: str) -> pl.Series:
    """uint64 hash of integer keys under a text salt; independent of the other keys and of row order."""
    mixed = keys.cast(pl.Int64).to_numpy().view(np.uint64) ^ salt_of(salt)
    return pl.Series(keys.name, splitmix64(mixed), dtype=pl.UInt64)


def assign_splits(keys: pl.Series, seed: int, fractions: tuple[float, float, float] = (0.70, 0.15, 0.15)) -> pl.Series:
    """Split name per key: train / validation / test with the given fractions (70/15/15 by default: the split of
    WorldValuesBench, Zhao et al. 2024, Sec. 3.1)."""
    buckets = stable_hash(keys, f"split:{seed}") % 10_000
    train_end = round(fractions[0] * 10_000)
    validation_end = train_end + round(fractions[1] * 10_000)
    return (
        pl.select(
            pl.when(buckets < train_end).then(pl.lit(SPLIT_NAMES[0]))
            .when(buckets < validation_end).then(pl.lit(SPLIT_NAMES[1]))
            .otherwise(pl.lit(SPLIT_NAMES[2]))
            .alias("split")
        ).to_series()
    )
