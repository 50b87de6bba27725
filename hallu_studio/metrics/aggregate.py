"""Corpus-level values with bootstrap confidence intervals, resampled by cluster.

Items of one image are not independent (several questions, several models), so the
bootstrap resamples whole clusters (images) with replacement and recomputes the
metric on each replicate; the interval is the percentile interval of the replicates.

Metrics whose ``compute`` depends only on the *sums* of the per-item statistics
(every ratio of counts: CHAIR_i, Hallu_Q, micro precision/recall/F ...) are detected
and bootstrapped in a vectorised way: per-cluster sums form a matrix ``C`` and each
replicate's totals are ``w @ C`` with ``w`` the cluster multiplicities. Any other
``compute`` is called on each resampled list of items (correct, slower).

Worked example (a ratio of sums; two images, the second with two items):

>>> stats = [{"hall": 1, "n": 2}, {"hall": 0, "n": 2}, {"hall": 1, "n": 4}]
>>> ratio = lambda s: {"rate": sum(x["hall"] for x in s) / sum(x["n"] for x in s)}
>>> value, low, high = bootstrap_ci(stats, ratio, clusters=["img1", "img2", "img2"], n_boot=200, seed=0)
>>> value  # (1 + 0 + 1) / (2 + 2 + 4)
0.25
>>> low <= value <= high
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterator, Mapping, Sequence

import numpy as np

Compute = Callable[[Sequence[Mapping[str, float]]], Any]

# Bound on (replicates x clusters) weights held in memory at once.
_MAX_WEIGHT_CELLS = 20_000_000


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap percentile interval (NaN when undefined)."""

    value: float
    low: float
    high: float
    n: int  # items
    clusters: int

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.value, self.low, self.high)


def _as_dict(result: Any) -> dict[str, float]:
    """``compute`` may return a number or a dict of numbers; None means undefined."""
    if isinstance(result, Mapping):
        return {str(k): _number(v) for k, v in result.items()}
    return {"value": _number(result)}


def _number(v: Any) -> float:
    if v is None:
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _close(a: dict[str, float], b: dict[str, float]) -> bool:
    if a.keys() != b.keys():
        return False
    return all((math.isnan(a[k]) and math.isnan(b[k])) or math.isclose(a[k], b[k], rel_tol=1e-9, abs_tol=1e-12)
               for k in a)


def _stat_matrix(stats: Sequence[Mapping[str, float]]) -> tuple[list[str], np.ndarray]:
    # Only numeric entries can be summed; labels such as reefknot's ``task`` are left out
    # (a compute that needs them is then simply not sum-decomposable).
    keys = sorted({k for s in stats for k, v in s.items() if v is None or isinstance(v, (int, float))})
    matrix = np.zeros((len(stats), len(keys)), dtype=np.float64)
    column = {key: j for j, key in enumerate(keys)}
    # One pass over the entries, not one per key: a metric that keys statistics by group (MME's images,
    # HallusionBench's figures) has thousands of keys, each in a few items.
    for i, s in enumerate(stats):
        for key, value in s.items():
            j = column.get(key)
            if j is not None and value:
                matrix[i, j] = float(value)
    return keys, matrix


def is_sum_decomposable(stats: Sequence[Mapping[str, float]], compute: Compute, seed: int = 0,
                        keys: Sequence[str] | None = None) -> bool:
    """Whether ``compute(stats)`` equals ``compute([sum of stats])`` on this data and on a random half.

    With ``keys``, only those outputs of ``compute`` need to agree.
    """
    if not stats:
        return False
    columns, matrix = _stat_matrix(stats)
    rng = np.random.default_rng(seed)
    half = rng.random(len(stats)) < 0.5
    subsets = [np.ones(len(stats), dtype=bool), half] if half.any() else [np.ones(len(stats), dtype=bool)]
    for mask in subsets:
        part = [s for s, keep in zip(stats, mask) if keep]
        summed = dict(zip(columns, matrix[mask].sum(axis=0).tolist()))
        try:
            whole, pseudo = _as_dict(compute(part)), _as_dict(compute([summed]))
            if keys is not None:
                whole = {k: whole.get(k, math.nan) for k in keys}
                pseudo = {k: pseudo.get(k, math.nan) for k in keys}
            if not _close(whole, pseudo):
                return False
        except Exception:  # noqa: BLE001 - a compute that cannot take a summed item is simply not decomposable
            return False
    return True


def _replicate(compute: Compute, items: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """One replicate's numbers; a replicate the metric cannot compute (a degenerate draw) counts as undefined."""
    try:
        return _as_dict(compute(items))
    except (ZeroDivisionError, ValueError, FloatingPointError):
        return {}


def cluster_index(clusters: Sequence[Hashable] | None, n: int) -> tuple[np.ndarray, int]:
    if clusters is None:
        return np.arange(n), n
    if len(clusters) != n:
        raise ValueError(f"clusters has {len(clusters)} entries but there are {n} items")
    codes: dict[Hashable, int] = {}
    index = np.fromiter((codes.setdefault(c, len(codes)) for c in clusters), dtype=np.int64, count=n)
    return index, len(codes)


def cluster_resamples(clusters: Sequence[Hashable] | None, n: int, n_boot: int,
                      seed: int = 0) -> Iterator[np.ndarray]:
    """Item indices of ``n_boot`` replicates, each drawing whole clusters with replacement.

    >>> [sorted(r.tolist()) for r in cluster_resamples(["a", "a", "b"], 3, n_boot=2, seed=1)][0] in (
    ...     [0, 0, 1, 1], [0, 1, 2], [2, 2])
    True
    """
    index, k = cluster_index(clusters, n)
    members = [np.flatnonzero(index == c) for c in range(k)] if clusters is not None else None
    rng = np.random.default_rng(seed)
    for _ in range(n_boot):
        picked = rng.integers(0, k, size=k)
        yield picked if members is None else np.concatenate([members[c] for c in picked])


def _weights(rng: np.random.Generator, rows: int, k: int) -> np.ndarray:
    """Cluster multiplicities of ``rows`` bootstrap replicates (each row sums to ``k``)."""
    draws = rng.integers(0, k, size=(rows, k))
    offsets = (np.arange(rows, dtype=np.int64) * k)[:, None]
    return np.bincount((draws + offsets).ravel(), minlength=rows * k).reshape(rows, k)


def bootstrap_intervals(stats: Sequence[Mapping[str, float]], compute: Compute,
                        clusters: Sequence[Hashable] | None = None, n_boot: int = 1000, alpha: float = 0.05,
                        seed: int = 0, keys: Sequence[str] | None = None) -> dict[str, Interval]:
    """Every number ``compute`` returns (or those named in ``keys``), with its cluster-bootstrap interval."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    n = len(stats)
    index, k = cluster_index(clusters, n)
    if n == 0:
        return {}
    point = _as_dict(compute(stats))
    if keys is not None:
        unknown = [name for name in keys if name not in point]
        if unknown:
            raise ValueError(f"compute returns no {unknown[0]!r}; it returns {sorted(point)}")
        point = {name: point[name] for name in keys}
    names = list(point)
    replicates = np.full((n_boot, len(names)), np.nan)
    rng = np.random.default_rng(seed)
    if is_sum_decomposable(stats, compute, seed, names):
        columns, matrix = _stat_matrix(stats)
        per_cluster = np.zeros((k, len(columns)))
        np.add.at(per_cluster, index, matrix)
        chunk = max(1, _MAX_WEIGHT_CELLS // max(k, 1))
        row = 0
        while row < n_boot:
            rows = min(chunk, n_boot - row)
            totals = _weights(rng, rows, k) @ per_cluster
            for t in totals:
                out = _replicate(compute, [dict(zip(columns, t.tolist()))])
                replicates[row] = [out.get(name, math.nan) for name in names]
                row += 1
    else:
        for row, items in enumerate(cluster_resamples(clusters, n, n_boot, seed)):
            out = _replicate(compute, [stats[i] for i in items])
            replicates[row] = [out.get(name, math.nan) for name in names]
    result = {}
    for j, name in enumerate(names):
        column = replicates[:, j]
        column = column[~np.isnan(column)]
        if math.isnan(point[name]) or column.size == 0:
            low = high = math.nan
        else:
            low, high = (float(x) for x in np.quantile(column, [alpha / 2, 1 - alpha / 2]))
        result[name] = Interval(point[name], low, high, n, k)
    return result


def bootstrap_ci(stats: Sequence[Mapping[str, float]], compute: Compute, clusters: Sequence[Hashable] | None = None,
                 n_boot: int = 1000, alpha: float = 0.05, seed: int = 0,
                 key: str | None = None) -> tuple[float, float, float]:
    """``(value, low, high)``: the micro-averaged value and its cluster-bootstrap interval.

    ``compute`` returns a number, or a dict of numbers of which ``key`` is reported
    (``key`` may be left out when the dict has a single entry).
    """
    intervals = bootstrap_intervals(stats, compute, clusters, n_boot, alpha, seed, [key] if key else None)
    if not intervals:
        return (math.nan, math.nan, math.nan)
    if key is None:
        if len(intervals) != 1:
            raise ValueError(f"compute returns several numbers {sorted(intervals)}; name one with key=")
        key = next(iter(intervals))
    if key not in intervals:
        raise ValueError(f"compute returns no {key!r}; it returns {sorted(intervals)}")
    return intervals[key].as_tuple()
