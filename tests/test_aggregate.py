import math

import numpy as np
import pytest

from hallu_studio.metrics.aggregate import bootstrap_ci, bootstrap_intervals, cluster_resamples, is_sum_decomposable


def ratio(stats):
    total = sum(s["n"] for s in stats)
    return {"rate": sum(s["hall"] for s in stats) / total if total else None}


def mean_of_rates(stats):  # a macro average: not a function of summed statistics
    return {"rate": float(np.mean([s["hall"] / s["n"] for s in stats]))}


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    stats = [{"hall": float(h), "n": float(m)} for h, m in zip(rng.integers(0, 3, n), rng.integers(3, 6, n))]
    return stats, [i // 4 for i in range(n)]


def test_value_is_the_micro_average_and_the_interval_contains_it():
    stats, clusters = _data(400)
    value, low, high = bootstrap_ci(stats, ratio, clusters, n_boot=300)
    assert value == pytest.approx(sum(s["hall"] for s in stats) / sum(s["n"] for s in stats))
    assert low < value < high and high - low < 0.1


def test_deterministic_with_seed_and_different_without():
    stats, clusters = _data(200)
    assert bootstrap_ci(stats, ratio, clusters, seed=3) == bootstrap_ci(stats, ratio, clusters, seed=3)
    assert bootstrap_ci(stats, ratio, clusters, seed=3) != bootstrap_ci(stats, ratio, clusters, seed=4)


def test_vectorised_path_matches_the_generic_one():
    stats, clusters = _data(300)
    assert is_sum_decomposable(stats, ratio) and not is_sum_decomposable(stats, mean_of_rates)
    fast = bootstrap_ci(stats, ratio, clusters, n_boot=400, seed=1)

    def opaque_ratio(s):  # the same number, hidden from the decomposability check
        if len(s) == 1:
            raise TypeError("not on summed items")
        return ratio(s)

    assert not is_sum_decomposable(stats, opaque_ratio)
    slow = bootstrap_ci(stats, opaque_ratio, clusters, n_boot=400, seed=1)
    assert fast[0] == slow[0]
    assert abs(fast[1] - slow[1]) < 0.01 and abs(fast[2] - slow[2]) < 0.01


def test_clusters_are_resampled_whole():
    clusters = ["a", "a", "a", "b", "c", "c"]
    for idx in cluster_resamples(clusters, 6, n_boot=50, seed=0):
        picked = sorted(idx.tolist())
        for block in ([0, 1, 2], [4, 5]):
            counts = {picked.count(i) for i in block}
            assert len(counts) == 1  # all members of a cluster come together
        assert len(set(clusters[i] for i in idx)) <= 3


def test_clustered_intervals_are_wider_when_clusters_are_homogeneous():
    # Each image's 10 items share one outcome: the effective sample is 30 images, not 300 items.
    rng = np.random.default_rng(0)
    outcome = rng.integers(0, 2, 30)
    stats = [{"hall": float(outcome[i // 10]), "n": 1.0} for i in range(300)]
    clusters = [i // 10 for i in range(300)]
    _, lo_c, hi_c = bootstrap_ci(stats, ratio, clusters, n_boot=300)
    _, lo_i, hi_i = bootstrap_ci(stats, ratio, None, n_boot=300)
    assert (hi_c - lo_c) > 2 * (hi_i - lo_i)


def test_undefined_values_and_bad_arguments():
    assert all(math.isnan(v) for v in bootstrap_ci([{"hall": 0, "n": 0}], ratio, n_boot=10))
    with pytest.raises(ValueError, match="clusters has 1 entries"):
        bootstrap_ci([{"hall": 1, "n": 2}] * 2, ratio, clusters=["a"])
    with pytest.raises(ValueError, match="several numbers"):
        bootstrap_ci([{"hall": 1, "n": 2}], lambda s: {"a": 1, "b": 2}, n_boot=5)
    with pytest.raises(ValueError, match="returns no 'x'"):
        bootstrap_ci([{"hall": 1, "n": 2}], ratio, n_boot=5, key="x")
    ivs = bootstrap_intervals([{"hall": 1, "n": 2}] * 3, ratio, n_boot=5)
    assert ivs["rate"].n == 3 and ivs["rate"].clusters == 3


def test_hundred_thousand_items_go_through_the_chunked_vectorised_path():
    # Speed is measured side by side in benchmarks/bench_bootstrap.py; this checks the chunking
    # (replicates x clusters above the in-memory bound) gives a sane interval.
    stats, clusters = _data(100_000)
    value, low, high = bootstrap_ci(stats, ratio, clusters, n_boot=1000)
    assert low < value < high and high - low < 0.01


def test_replicates_the_metric_cannot_compute_count_as_undefined():
    def strict_ratio(stats):  # no guard: a draw without any counted item divides by zero
        return {"rate": sum(s["hall"] for s in stats) / sum(s["n"] for s in stats)}

    stats = [{"hall": 1.0, "n": 2.0}] + [{"hall": 0.0, "n": 0.0}] * 3
    value, low, high = bootstrap_ci(stats, strict_ratio, n_boot=50)
    assert value == 0.5 and low == high == 0.5


def test_label_entries_in_values_do_not_break_the_interval():
    """Per-response values may carry labels (reefknot's ``task``); the fallback mean skips them."""
    from hallu_studio.metrics.aggregate import bootstrap_intervals
    from hallu_studio.studies.leaderboard import _mean_of_values

    values = [{"task": "yes_no", "correct": 1.0}, {"task": "mcq", "correct": 0.0}, {"task": "vqa", "correct": 1.0}]
    intervals = bootstrap_intervals(values, _mean_of_values, ["a", "b", "c"], n_boot=50, keys=["correct"])
    assert intervals["correct"].value == pytest.approx(2 / 3)
    assert intervals["correct"].low <= intervals["correct"].value <= intervals["correct"].high
