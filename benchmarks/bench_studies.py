"""Study queries at 1k, 10k and 100k human ratings: every metric-vs-human correlation with bootstrap CIs.

Each size reuses the synthetic scored store of ``bench_inspect.py`` (n responses, built once
and cached), copied to a temporary file, and appends ratings (``Store.append_events``): every
response rated by one of three annotators, every tenth also by a second one (so
Krippendorff's alpha has overlap): 1.1 n ratings. Ratings are random, so the coefficients are
near zero; what is timed is the work. Side by side in one run, per size:

* ``ratings``: ``mean_human_ratings`` (reads and folds the event log);
* ``score rows``: ``Store.score_stat_rows`` (the one query the correlations read);
* ``correlations``: ``correlation_table(n_boot=...)``: Pearson, Spearman and Kendall per metric
  and config, each with a cluster bootstrap by image;
* ``alpha``: ``annotator_agreement`` (Krippendorff's alpha, ordinal).

Then, on one set of arrays (``--compare-n`` pairs, two per image), the bootstrap of
``studies.correlation.correlate`` (replicates as item weights) against the generic path it
replaced (scipy on each copied replicate), with the same draws and the same intervals.

    python benchmarks/bench_studies.py [--sizes 1000,10000,100000] [--n-boot 1000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_inspect import cached_store  # noqa: E402

from hallu_studio.config import apply_offline_env_defaults  # noqa: E402
from hallu_studio.model import HumanEvent  # noqa: E402
from hallu_studio.store import Store  # noqa: E402
from hallu_studio.studies.collect import annotator_agreement, correlation_table, mean_human_ratings  # noqa: E402

ANNOTATORS = ("rater-a", "rater-b", "rater-c")


def ratings_for(response_ids: list[str], seed: int = 0) -> list[HumanEvent]:
    rng = random.Random(seed)
    events = []
    for i, rid in enumerate(response_ids):
        events.append(HumanEvent(ANNOTATORS[i % 3], "rating", rid, rng.randint(1, 5)))
        if i % 10 == 0:
            events.append(HumanEvent(ANNOTATORS[(i + 1) % 3], "rating", rid, rng.randint(1, 5)))
    return events


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def bench_size(path: Path, n_boot: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        with Store(copy) as store:
            events = ratings_for(store.response_ids())
            add_s, _ = _timed(lambda: store.append_events(events))
            ratings_s, human = _timed(lambda: mean_human_ratings(store))
            rows_s, rows = _timed(store.score_stat_rows)
            corr_s, table = _timed(lambda: correlation_table(store, n_boot=n_boot))
            alpha_s, alpha = _timed(lambda: annotator_agreement(store))
    return {"ratings": len(events), "rated": len(human), "score_rows": len(rows), "add": add_s,
            "mean_ratings": ratings_s, "rows": rows_s, "corr": corr_s, "alpha": alpha_s,
            "metrics": len(table), "alpha_value": alpha["alpha"]}


def compare_paths(n: int, n_boot: int) -> None:
    """Weighted replicates vs scipy on each expanded replicate: same draws, timed side by side."""
    import numpy as np

    from hallu_studio.metrics.aggregate import cluster_resamples
    from hallu_studio.studies.correlation import _coefficients, correlate

    rng = np.random.default_rng(0)
    x = (rng.random(n) * 60).round(2)  # a metric value, like EMD x100
    y = rng.integers(2, 11, n) / 2  # mean of two 1-5 ratings
    clusters = [i // 2 for i in range(n)]
    fast_s, fast = _timed(lambda: correlate(x, y, clusters, n_boot=n_boot))
    slow_s, reps = _timed(lambda: np.array([_coefficients(x[i], y[i]) for i in cluster_resamples(clusters, n, n_boot)]))
    same = np.allclose(np.quantile(reps, [0.025, 0.975], axis=0),
                       [[fast.pearson.low, fast.spearman.low, fast.kendall.low],
                        [fast.pearson.high, fast.spearman.high, fast.kendall.high]], atol=1e-9)
    print(f"bootstrap of one correlation, {n} pairs, {n_boot} replicates: weighted {fast_s:.2f} s, "
          f"scipy per replicate {slow_s:.2f} s: {slow_s / fast_s:.1f}x faster (same intervals: {same})")


def main() -> None:
    apply_offline_env_defaults()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "hallu-studio-bench"))
    ap.add_argument("--compare-n", type=int, default=10_000, help="pairs for the old-vs-new bootstrap (0: skip)")
    ap.add_argument("--compare-boot", type=int, default=100)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(f"machine: {os.cpu_count()} CPUs; load average at start {os.getloadavg()[0]:.2f}; "
          f"{args.n_boot} bootstrap replicates")
    print(f"{'ratings':>8s} {'rated':>7s} {'score rows':>10s} {'append s':>8s} {'ratings s':>9s} {'rows s':>7s} "
          f"{'correlations s':>14s} {'alpha s':>8s}  metrics")
    results = {}
    for n in sizes:
        r = results[n] = bench_size(cached_store(n, Path(args.cache_dir)), args.n_boot)
        print(f"{r['ratings']:8d} {r['rated']:7d} {r['score_rows']:10d} {r['add']:8.2f} {r['mean_ratings']:9.2f} "
              f"{r['rows']:7.2f} {r['corr']:14.2f} {r['alpha']:8.2f}  {r['metrics']} (alpha {r['alpha_value']:.3f})",
              flush=True)
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        print(f"correlations at {hi} / at {lo} ({hi // lo}x the ratings): {results[hi]['corr'] / results[lo]['corr']:.1f}x")
    if args.compare_n:
        compare_paths(args.compare_n, args.compare_boot)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
