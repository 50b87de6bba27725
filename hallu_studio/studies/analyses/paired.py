"""A paired difference of per-item values with a cluster bootstrap interval and p-value.

Two systems scored on the same items: the difference is ``mean(b - a)`` over the
items both have; the bootstrap resamples whole clusters (images) of paired
differences (``metrics.aggregate.cluster_resamples``). The two-sided p-value tests
"no difference" by centring the bootstrap distribution on zero:
``p = (1 + #{|d* - d| >= |d|}) / (1 + n_boot)`` (Efron & Tibshirani, ch. 16).

Worked example: a = (1, 2, 3, 4), b = (2, 2, 5, 4): differences (1, 0, 2, 0), mean 0.75.

>>> r = paired_difference([1, 2, 3, 4], [2, 2, 5, 4], clusters=["i1", "i1", "i2", "i3"], n_boot=500)
>>> r.mean_a, r.mean_b, r.difference, r.n, r.clusters
(2.5, 3.25, 0.75, 4, 3)
>>> r.low <= 0.75 <= r.high
True
>>> paired_difference([1, 2], [1, 2], n_boot=100).p_value  # no difference at all
1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from ...metrics.aggregate import cluster_resamples


@dataclass(frozen=True)
class PairedDifference:
    mean_a: float
    mean_b: float
    difference: float  # mean of b - a
    low: float
    high: float
    p_value: float
    n: int
    clusters: int


def paired_difference(a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable] | None = None,
                      n_boot: int = 1000, alpha: float = 0.05, seed: int = 0) -> PairedDifference:
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 1:
        raise ValueError(f"a and b must be paired lists of numbers, got {xa.shape} and {xb.shape}")
    n = int(xa.size)
    k = len(set(clusters)) if clusters is not None else n
    if n == 0:
        return PairedDifference(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, 0, 0)
    d = xb - xa
    point = float(d.mean())
    reps = np.array([d[idx].mean() for idx in cluster_resamples(clusters, n, n_boot, seed)])
    low, high = (float(v) for v in np.quantile(reps, [alpha / 2, 1 - alpha / 2]))
    extreme = int(np.sum(np.abs(reps - point) >= abs(point) - 1e-12))
    p = min(1.0, (1 + extreme) / (1 + n_boot))
    return PairedDifference(float(xa.mean()), float(xb.mean()), point, low, high, p, n, k)
