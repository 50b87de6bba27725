"""Tri-HE's embedding judge: one item at a time vs ``update_many`` (phrases pre-encoded in batches).

Both sides score the same Tri-HE questions (gold triplets as the response's claims) with
fresh, cold embedders of the same model, side by side in one run, and must agree.

    python benchmarks/trihe_batched_encoding.py [n_questions]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hallu_studio.config import Settings, apply_offline_env_defaults
from hallu_studio.importers.tri_he import read_tri_he
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.trihe import TriHEMetric
from hallu_studio.model import ConceptSet, RelationConcept

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "tri-he"


def main() -> None:
    apply_offline_env_defaults()
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    samples = read_tri_he(DATA).samples[:n]
    items = [ScoringItem(f"r{i}", s.answer or "", s,
                         mentioned=ConceptSet(relations=[RelationConcept(*t) for t in s.gold_triplets]))
             for i, s in enumerate(samples)]
    timings, results = {}, {}
    for mode in ("one-by-one", "update_many"):
        metric = TriHEMetric.from_settings(Settings())
        metric.judge.encoder.encode(["load the model before timing"])  # type: ignore[attr-defined]
        start = time.perf_counter()
        got = [metric.update(i) for i in items] if mode == "one-by-one" else metric.update_many(items)
        timings[mode] = time.perf_counter() - start
        results[mode] = [r.stats for r in got]
    assert results["one-by-one"] == results["update_many"], "the two modes disagree"
    for mode, seconds in timings.items():
        print(f"{mode:12s} {len(items)} questions: {seconds:6.2f} s")
    print(f"speed-up of update_many: {timings['one-by-one'] / timings['update_many']:.2f}x")


if __name__ == "__main__":
    main()
