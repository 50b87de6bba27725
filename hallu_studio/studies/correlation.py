"""Pearson, Spearman and Kendall correlation with cluster-bootstrap intervals.

The point estimates are scipy's; the intervals resample whole clusters (images)
with replacement, since responses to one image are not independent.

Worked example (no ties; the concordant pairs give Kendall's tau directly):

    metric = [1, 2, 3, 4], human = [1, 3, 2, 4]
    pairs: 6, discordant: (2, 3) only -> tau = (5 - 1) / 6 = 2/3
    ranks equal the values -> Spearman = Pearson of ranks = 1 - 6 * (0 + 1 + 1 + 0) / (4 * 15) = 0.8

>>> r = correlate([1, 2, 3, 4], [1, 3, 2, 4], n_boot=50)
>>> round(r.kendall.value, 4), round(r.spearman.value, 4), r.n
(0.6667, 0.8, 4)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np
from scipy import stats as st

from ..metrics.aggregate import Interval, cluster_resamples

METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class CorrelationResult:
    pearson: Interval
    spearman: Interval
    kendall: Interval
    n: int
    clusters: int

    def as_row(self) -> dict[str, float]:
        row: dict[str, float] = {"n": self.n, "clusters": self.clusters}
        for method in METHODS:
            iv: Interval = getattr(self, method)
            row.update({method: iv.value, f"{method}_low": iv.low, f"{method}_high": iv.high})
        return row


def _coefficients(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return (math.nan, math.nan, math.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant replicates: NaN is the honest answer
        return (float(st.pearsonr(x, y).statistic), float(st.spearmanr(x, y).statistic),
                float(st.kendalltau(x, y).statistic))


def correlate(x: Sequence[float], y: Sequence[float], clusters: Sequence[Hashable] | None = None,
              n_boot: int = 1000, alpha: float = 0.05, seed: int = 0) -> CorrelationResult:
    """Correlations of paired values ``x`` and ``y`` with percentile intervals (resampled by cluster)."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"x and y must be paired lists of numbers, got shapes {xa.shape} and {ya.shape}")
    if np.isnan(xa).any() or np.isnan(ya).any():
        raise ValueError("x and y must not hold missing values; drop the unpaired items first")
    n = int(xa.size)
    k = len(set(clusters)) if clusters is not None else n
    point = _coefficients(xa, ya)
    reps = np.array([_coefficients(xa[idx], ya[idx]) for idx in cluster_resamples(clusters, n, n_boot, seed)]
                    ) if n else np.zeros((0, 3))
    intervals = []
    for j in range(3):
        column = reps[:, j][~np.isnan(reps[:, j])] if reps.size else np.array([])
        if math.isnan(point[j]) or column.size == 0:
            low = high = math.nan
        else:
            low, high = (float(v) for v in np.quantile(column, [alpha / 2, 1 - alpha / 2]))
        intervals.append(Interval(point[j], low, high, n, k))
    return CorrelationResult(*intervals, n=n, clusters=k)
