"""Models x metrics with bootstrap intervals: the app's Overview table.

Per run (one model under one prompt and setting) and metric configuration, the
stored per-item statistics are aggregated with the metric's own ``compute`` (so
every number is the metric's micro-average as defined in its module) and a
bootstrap interval resampled by image. Scores stored without statistics fall back
to the mean of the per-response values, and the row says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping, Sequence

from ..config import Settings
from ..metrics.aggregate import bootstrap_intervals

if TYPE_CHECKING:
    from ..store import Store

CONCEPTS = "concepts"
# Bootstrap replicates of every interval the Overview, the report and the command-line leaderboard show (one
# number, so that they show the same intervals).
N_BOOT = 1000
Compute = Callable[[Sequence[Mapping[str, float]]], Any]

def _mean_of_values(stats: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Fallback aggregation: the mean of each numeric per-response value."""
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for s in stats:
        for k, v in s.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(float(v)):
                sums[k] += float(v)
                counts[k] += 1
    return {k: sums[k] / counts[k] for k in sums}


# ``compute`` aggregates statistics and does not depend on the settings that shaped them,
# so one instance per metric (built under default settings) serves every leaderboard.
_COMPUTES: dict[str, Compute] = {}


def metric_computes(names: Sequence[str]) -> dict[str, Compute]:
    """Each named metric's ``compute`` (metrics that cannot be built here are left out)."""
    from ..metrics.registry import METRIC_NAMES, make_metric

    out: dict[str, Compute] = {}
    for name in names:
        if name not in METRIC_NAMES:
            continue
        if name not in _COMPUTES:
            try:
                _COMPUTES[name] = make_metric(name, Settings()).compute
            except (NotImplementedError, ImportError, ValueError, RuntimeError):
                continue  # the row falls back to the mean of values, and says so
        out[name] = _COMPUTES[name]
    return out


def _listed(metric: str, point: Mapping[str, Any]) -> list[tuple[str | None, str, str]]:
    """``(split, key, compute key)`` of each number of ``point`` (``metric``'s ``compute`` output) the leaderboard
    lists: its spec's headline and summary keys (split None), then its breakdown's per-split numbers; a metric
    without a spec, every number."""
    from ..metrics.registry import METRIC_NAMES, metric_spec

    spec = metric_spec(metric) if metric in METRIC_NAMES else None
    listed: list[tuple[str | None, str, str]] = [
        (None, k, k) for k in (spec.leaderboard_keys if spec else ()) if k in point]
    parts = spec.breakdown.entries(point) if spec is not None and spec.breakdown is not None else []
    if not listed:  # none of its headline numbers (an MME run of some subtasks): every other number, once
        by_part = {key for _, _, key in parts}
        listed = [(None, k, k) for k, v in point.items()
                  if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in by_part]
    return listed + parts


def _split_counts(split: str, stats: Sequence[Mapping[str, float]], clusters: Sequence[str]) -> tuple[int, int]:
    """How many items, and images, a split's numbers are of: the items whose statistics have a ``<split>.`` key."""
    prefix = f"{split}."
    members = [i for i, s in enumerate(stats) if any(str(k).startswith(prefix) for k in s)]
    return len(members), len({clusters[i] for i in members})


def leaderboard(store: "Store", benchmark: str | None = None, by_domain: bool = False, *,
                metrics: Sequence[str] | None = None, n_boot: int = N_BOOT, alpha: float = 0.05, seed: int = 0,
                computes: Mapping[str, Compute] | None = None, configs: Mapping[str, str] | None = None,
                sample_ids: Collection[str] | None = None) -> list[dict[str, Any]]:
    """One row per run x metric config x headline number (x domain), with a bootstrap interval.

    ``configs`` (``{metric: config key}``, ``studies.in_force``): only those configurations; None: every one.
    ``sample_ids``: only the responses to these samples (a split: the questions a method was tuned on, the
    rest); None, all. Row keys: model, run_id, synthetic, benchmark, domain (with ``by_domain``), metric,
    config_key, key, split (None, or the part of the benchmark a spec's ``breakdown`` number is of: POPE's
    ``adversarial``; its n and images count that part's answers), value, low, high, n, images, aggregation
    ("metric" or "mean of values").
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    only = metrics[0] if metrics is not None and len(metrics) == 1 else None
    for row in store.score_stat_rows(only, benchmark=benchmark):
        if row["metric"] == CONCEPTS or (metrics and row["metric"] not in metrics):
            continue
        if configs is not None and configs.get(row["metric"]) != row["config_key"]:
            continue
        if sample_ids is not None and row["sample_id"] not in sample_ids:
            continue
        domain = row["domain"] if by_domain else None
        groups[(row["run_id"], row["metric"], row["config_key"], domain)].append(row)
    if computes is None:
        computes = metric_computes(sorted({m for _, m, _, _ in groups}))
    out = []
    for (run_id, metric, config_key, domain), rows in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        with_stats = all(r["stats"] is not None for r in rows) and metric in computes
        stats = [r["stats"] for r in rows] if with_stats else [r["values"] for r in rows]
        compute = computes[metric] if with_stats else _mean_of_values
        point = compute(stats)
        point = point if isinstance(point, Mapping) else {"value": point}
        listed = _listed(metric, point)
        # One item per answer, clustered by image: an answer that counts in several splits is one item, so a
        # replicate draws its copies together. A sample may name a larger unit (meta["cluster"]) when its metric
        # groups questions across images (HallusionBench's sets): resampling inside it would break those groups.
        clusters = [f"{r['benchmark']}/{r.get('cluster') or r['image_key'] or r['sample_id']}" for r in rows]
        intervals = bootstrap_intervals(stats, compute, clusters, n_boot=n_boot, alpha=alpha, seed=seed,
                                        keys=list(dict.fromkeys(c for _, _, c in listed)))
        first = rows[0]
        for split, key, computed in listed:
            iv = intervals[computed]
            n, images = (iv.n, iv.clusters) if split is None else _split_counts(split, stats, clusters)
            record = {"model": first["model"], "run_id": run_id, "synthetic": bool(first["synthetic"]),
                      "benchmark": first["benchmark"], "metric": metric, "config_key": config_key, "key": key,
                      "split": split, "value": iv.value, "low": iv.low, "high": iv.high, "n": n, "images": images,
                      "aggregation": "metric" if with_stats else "mean of values"}
            if by_domain:
                record["domain"] = domain
            out.append(record)
    return out
