"""Import throughput of the three Reefknot files: parsing and storing, timed separately.

Target: all three files (21,560 questions) in under 10 s on 2 cores. Run:

    python benchmarks/bench_import.py [REEFKNOT_DIR] [--images DIR]

Prints seconds and questions/s for parse, store and the two together (into a fresh
temporary store), plus a re-import (nothing new to add) for comparison.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from hallu_studio.config import apply_offline_env_defaults
from hallu_studio.importers.reefknot import read_reefknot
from hallu_studio.pipelines.importing import import_benchmark
from hallu_studio.store import Store

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "reefknot"
TARGET_S = 10.0


def main() -> int:
    apply_offline_env_defaults()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(DEFAULT_DIR))
    ap.add_argument("--images", default=None, help="image folder (e.g. ../shared/datasets/tri-he/usage_figures)")
    args = ap.parse_args()
    if not Path(args.folder).is_dir():
        print(f"no Reefknot folder at {args.folder}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    parsed, _ = read_reefknot(args.folder, args.images)
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.duckdb") as store:
        t2 = time.perf_counter()
        report = import_benchmark(store, parsed)
        t3 = time.perf_counter()
        again = import_benchmark(store, parsed)
        t4 = time.perf_counter()
    n = len(parsed.samples)
    parse_s, store_s, reimport_s = t1 - t0, t3 - t2, t4 - t3
    total = parse_s + store_s
    print(f"questions: {n} ({report.added} added; re-import added {again.added}); "
          f"images found: {report.images_found}")
    for label, secs in (("parse", parse_s), ("store", store_s), ("parse+store", total), ("re-import", reimport_s)):
        print(f"{label:>12}: {secs:6.2f} s  {n / secs:10.0f} questions/s")
    print(f"target < {TARGET_S:.0f} s: {'met' if total < TARGET_S else 'MISSED'} "
          f"(ratio target/actual = {TARGET_S / total:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
