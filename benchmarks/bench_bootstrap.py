"""Cluster-bootstrap speed: the vectorised path (sum-decomposable metrics) vs calling ``compute`` per replicate.

Both paths compute the same interval (a ratio of summed counts, resampled by image);
the generic path is what any metric whose ``compute`` is not a function of summed
statistics gets. Measured side by side in one run:

    python benchmarks/bench_bootstrap.py [--items 20000] [--per-image 4] [--n-boot 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hallu_studio.metrics.aggregate import bootstrap_ci


def ratio(stats):
    total = sum(s["n"] for s in stats)
    return {"rate": sum(s["hall"] for s in stats) / total if total else None}


def opaque_ratio(stats):
    """The same number, but refusing summed pseudo-items, so the generic path is taken."""
    if len(stats) == 1:
        raise TypeError("not on summed items")
    return ratio(stats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--per-image", type=int, default=4)
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    stats = [{"hall": float(h), "n": float(m)}
             for h, m in zip(rng.integers(0, 3, args.items), rng.integers(3, 6, args.items))]
    clusters = [i // args.per_image for i in range(args.items)]

    start = time.perf_counter()
    fast = bootstrap_ci(stats, ratio, clusters, n_boot=args.n_boot)
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    slow = bootstrap_ci(stats, opaque_ratio, clusters, n_boot=args.n_boot)
    t_slow = time.perf_counter() - start

    print(f"{args.items} items, {args.items // args.per_image} images, {args.n_boot} replicates")
    print(f"vectorised: {t_fast:.2f} s  value {fast[0]:.5f} [{fast[1]:.5f}, {fast[2]:.5f}]")
    print(f"generic:    {t_slow:.2f} s  value {slow[0]:.5f} [{slow[1]:.5f}, {slow[2]:.5f}]")
    print(f"speed-up: {t_slow / t_fast:.1f}x")


if __name__ == "__main__":
    main()
