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
from typing import Hashable, Iterator, Sequence

import numpy as np
from scipy import stats as st

from ..metrics.aggregate import Interval, cluster_index

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


# Above this many (x level, y level) cells per replicate, Kendall's tau goes back to scipy.
_MAX_KENDALL_CELLS = 4_000_000


def _weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    # Element-wise sums, not ``w @ a``: BLAS threads stall badly on a busy machine (~100x here).
    total = w.sum()
    da, db = a - (w * a).sum() / total, b - (w * b).sum() / total
    saa, sbb = (w * da * da).sum(), (w * db * db).sum()
    if saa <= 0 or sbb <= 0:
        return math.nan
    return float(min(1.0, max(-1.0, (w * da * db).sum() / math.sqrt(saa * sbb))))


class _WeightedReplicates:
    """Pearson, Spearman and Kendall's tau-b of a resample given as item multiplicities ``w``.

    A bootstrap replicate repeats items, so instead of copying and re-sorting it, the
    levels (distinct values) of x and y are found once; a replicate's average ranks are
    cumulative level weights, and tau-b comes from the weighted level contingency table.
    The numbers equal scipy's on the expanded replicate (to rounding), in O(n) per replicate.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y = x, y
        ux, self.ix = np.unique(x, return_inverse=True)
        uy, self.iy = np.unique(y, return_inverse=True)
        self.kx, self.ky = ux.size, uy.size
        self.kendall_fast = self.kx * self.ky <= _MAX_KENDALL_CELLS

    @staticmethod
    def _ranks(levels: np.ndarray, k: int, w: np.ndarray) -> np.ndarray:
        weight = np.bincount(levels, weights=w, minlength=k)
        return (np.cumsum(weight) - weight + (weight + 1) / 2)[levels]

    def _kendall(self, w: np.ndarray) -> float:
        # rows: x levels in order; columns: y levels in order; cells: summed multiplicities
        table = np.bincount(self.ix * self.ky + self.iy, weights=w, minlength=self.kx * self.ky
                            ).reshape(self.kx, self.ky)
        before = np.cumsum(table, axis=0) - table  # pairs whose x is smaller
        below = np.cumsum(before, axis=1) - before  # ... and whose y is smaller: concordant
        above = before.sum(axis=1, keepdims=True) - below - before  # ... y larger: discordant
        s = float((table * (below - above)).sum())
        total = float(w.sum())
        pairs = total * (total - 1) / 2
        wx, wy = table.sum(axis=1), table.sum(axis=0)
        untied_x = pairs - float((wx * (wx - 1)).sum()) / 2
        untied_y = pairs - float((wy * (wy - 1)).sum()) / 2
        if untied_x <= 0 or untied_y <= 0:
            return math.nan
        return float(min(1.0, max(-1.0, s / math.sqrt(untied_x * untied_y))))

    def coefficients(self, w: np.ndarray) -> tuple[float, float, float]:
        keep = w > 0
        if int(w.sum()) < 2 or np.ptp(self.x[keep]) == 0 or np.ptp(self.y[keep]) == 0:
            return (math.nan, math.nan, math.nan)
        pearson = _weighted_pearson(self.x, self.y, w)
        spearman = _weighted_pearson(self._ranks(self.ix, self.kx, w), self._ranks(self.iy, self.ky, w), w)
        if self.kendall_fast:
            kendall = self._kendall(w)
        else:
            idx = np.repeat(np.arange(w.size), w.astype(np.int64))
            kendall = _coefficients(self.x[idx], self.y[idx])[2]
        return (pearson, spearman, kendall)


def replicate_weights(clusters: Sequence[Hashable] | None, n: int, n_boot: int,
                       seed: int) -> Iterator[np.ndarray]:
    """Item multiplicities of each replicate: the same draws as ``metrics.aggregate.cluster_resamples``."""
    index, k = cluster_index(clusters, n)
    rng = np.random.default_rng(seed)
    for _ in range(n_boot):
        yield np.bincount(rng.integers(0, k, size=k), minlength=k)[index].astype(np.float64)


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
    replicates = _WeightedReplicates(xa, ya)
    reps = np.array([replicates.coefficients(w) for w in replicate_weights(clusters, n, n_boot, seed)]
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
