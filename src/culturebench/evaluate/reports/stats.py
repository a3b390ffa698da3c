"""Statistical tests shared by the benchmark evaluations: thin, NaN-safe wrappers around scipy.stats that return
plain dicts (JSON-ready: a test that cannot run gives ``statistic``/``pvalue`` None and a ``reason``), and an
ordinary-least-squares fit with a seeded train/test split and its error metrics.

Every function takes plain sequences of numbers; missing values (None, NaN) are dropped first (paired tests drop
the pair).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np


def _clean(values: Sequence[float | None]) -> np.ndarray:
    arr = np.asarray([np.nan if v is None else float(v) for v in values], dtype=float)
    return arr[np.isfinite(arr)]


def _num(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _skipped(reason: str, **extra) -> dict:
    return {"statistic": None, "pvalue": None, "reason": reason, **extra}


def mean_sd(values: Sequence[float | None]) -> dict:
    """n, mean and sample standard deviation (ddof 1; None below two values)."""
    arr = _clean(values)
    return {"n": int(arr.size), "mean": _num(arr.mean()) if arr.size else None,
            "sd": _num(arr.std(ddof=1)) if arr.size > 1 else None}


def one_sample_t(values: Sequence[float | None], popmean: float) -> dict:
    """``scipy.stats.ttest_1samp(values, popmean)`` (two-sided): statistic, pvalue, df, n, mean, popmean."""
    from scipy import stats

    arr = _clean(values)
    base = {"n": int(arr.size), "mean": _num(arr.mean()) if arr.size else None, "popmean": float(popmean)}
    if arr.size < 2:
        return {**_skipped("fewer than two values"), **base}
    if np.ptp(arr) == 0:
        return {**_skipped("all values equal (no variance)"), **base}
    result = stats.ttest_1samp(arr, popmean)
    return {"statistic": _num(result.statistic), "pvalue": _num(result.pvalue), "df": int(arr.size - 1), **base}


def two_sample_t(a: Sequence[float | None], b: Sequence[float | None], *, equal_var: bool = True) -> dict:
    """``scipy.stats.ttest_ind(a, b, equal_var=...)`` (two-sided; Student's by default, Welch's with
    ``equal_var=False``): statistic, pvalue, n_a, n_b, mean_a, mean_b."""
    from scipy import stats

    x, y = _clean(a), _clean(b)
    base = {"n_a": int(x.size), "n_b": int(y.size), "mean_a": _num(x.mean()) if x.size else None,
            "mean_b": _num(y.mean()) if y.size else None, "equal_var": equal_var}
    if x.size < 2 or y.size < 2:
        return {**_skipped("fewer than two values in a group"), **base}
    if np.ptp(np.concatenate([x, y])) == 0:
        return {**_skipped("all values equal (no variance)"), **base}
    result = stats.ttest_ind(x, y, equal_var=equal_var)
    return {"statistic": _num(result.statistic), "pvalue": _num(result.pvalue), **base}


def _complete_blocks(columns: Mapping[str, Sequence[float | None]]) -> tuple[list[str], np.ndarray]:
    names = list(columns)
    matrix = np.asarray([[np.nan if v is None else float(v) for v in columns[n]] for n in names], dtype=float).T
    if matrix.size == 0:
        return names, matrix.reshape(0, len(names))
    return names, matrix[np.all(np.isfinite(matrix), axis=1)]


def friedman(columns: Mapping[str, Sequence[float | None]]) -> dict:
    """``scipy.stats.friedmanchisquare`` over k >= 3 treatments (the dict's values, aligned by position = block);
    blocks with a missing value in any treatment are dropped: statistic, pvalue, k, n_blocks."""
    from scipy import stats

    names, matrix = _complete_blocks(columns)
    base = {"k": len(names), "n_blocks": int(matrix.shape[0]), "treatments": names}
    if len(names) < 3:
        return {**_skipped("Friedman's test needs at least three treatments"), **base}
    if matrix.shape[0] < 2:
        return {**_skipped("fewer than two complete blocks"), **base}
    if np.all(matrix == matrix[:, :1]):
        return {**_skipped("every block ties all treatments"), **base}
    result = stats.friedmanchisquare(*matrix.T)
    return {"statistic": _num(result.statistic), "pvalue": _num(result.pvalue), **base}


def wilcoxon(a: Sequence[float | None], b: Sequence[float | None]) -> dict:
    """``scipy.stats.wilcoxon(a, b)`` (paired, two-sided, zero differences dropped as scipy's default 'wilcox'),
    pairs with a missing side dropped: statistic, pvalue, n_pairs."""
    from scipy import stats

    _, matrix = _complete_blocks({"a": a, "b": b})
    n = int(matrix.shape[0])
    if n == 0:
        return _skipped("no complete pairs", n_pairs=0)
    if np.all(matrix[:, 0] == matrix[:, 1]):
        return _skipped("all differences are zero", n_pairs=n)
    result = stats.wilcoxon(matrix[:, 0], matrix[:, 1])
    return {"statistic": _num(result.statistic), "pvalue": _num(result.pvalue), "n_pairs": n}


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (None stays None)."""
    indexed = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(indexed)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def pairwise_wilcoxon(columns: Mapping[str, Sequence[float | None]]) -> list[dict]:
    """Post-hoc paired Wilcoxon signed-rank tests between every pair of treatments (each pair on its own complete
    pairs), with Holm-adjusted p-values over the pairs: a, b, statistic, pvalue, pvalue_holm, n_pairs."""
    rows = [{"a": a, "b": b, **wilcoxon(columns[a], columns[b])} for a, b in combinations(list(columns), 2)]
    for row, adjusted in zip(rows, holm([r["pvalue"] for r in rows])):
        row["pvalue_holm"] = adjusted
    return rows


# ---------------------------------------------------------------------------------------------- least squares


@dataclass
class LinearFit:
    """y ~ X @ coef + intercept fitted by ordinary least squares."""

    features: list[str]
    coef: list[float]
    intercept: float

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=float) @ np.asarray(self.coef) + self.intercept

    def as_dict(self) -> dict:
        return {"weights": dict(zip(self.features, self.coef)), "intercept": self.intercept}


def fit_least_squares(X: np.ndarray, y: np.ndarray, features: Sequence[str]) -> LinearFit:
    """Ordinary least squares with an intercept (``numpy.linalg.lstsq`` on [X, 1])."""
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    design = np.column_stack([X, np.ones(len(y))])
    solution, *_ = np.linalg.lstsq(design, y, rcond=None)
    return LinearFit(list(features), [float(v) for v in solution[:-1]], float(solution[-1]))


def regression_metrics(y_true: Sequence[float], y_pred: Sequence[float]) -> dict:
    """MAE, MSE, RMSE and R^2 = 1 - SSE / SST (None when the targets do not vary)."""
    t, p = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    if t.size == 0:
        return {"n": 0, "mae": None, "mse": None, "rmse": None, "r2": None}
    err = t - p
    mse = float(np.mean(err ** 2))
    sst = float(np.sum((t - t.mean()) ** 2))
    return {"n": int(t.size), "mae": float(np.mean(np.abs(err))), "mse": mse, "rmse": math.sqrt(mse),
            "r2": (1.0 - float(np.sum(err ** 2)) / sst) if sst > 0 else None}


def train_test_split(n: int, *, test_fraction: float = 1 / 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Row positions of a seeded random split (``numpy.random.default_rng(seed).permutation``): the first
    ``n - round(n * test_fraction)`` positions of the permutation train, the rest test (2:1 by default)."""
    order = np.random.default_rng(seed).permutation(n)
    n_test = round(n * test_fraction)
    return np.sort(order[: n - n_test]), np.sort(order[n - n_test:])
