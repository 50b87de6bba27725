"""MiniLM phrase-encoding rate with 1 torch thread vs torch's default, side by side in one run.

On a machine shared with other busy processes (load average above the core count), torch's
intra-op threads wait on each other and encoding can get several times SLOWER with more
threads; on an idle machine more threads help. This prints both rates and the load, so
the scoring benchmarks' cold numbers can be read in context (cold scoring is mostly
encoding new phrases). If the ratio is above 1, run scoring with ``OMP_NUM_THREADS=1``.

    python benchmarks/bench_encoder_threads.py [--phrases 512] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import apply_offline_env_defaults  # noqa: E402


def main() -> None:
    apply_offline_env_defaults()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phrases", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per setting (best is kept)")
    args = ap.parse_args()
    import torch

    from hallu_studio.embedding import Embedder

    model = Embedder().model
    phrases = [f"Object: {adj} thing number {i} on the table" for i, adj in
               zip(range(args.phrases), ["red", "small", "wooden", "old", "shiny"] * args.phrases)]
    default_threads = torch.get_num_threads()
    model.encode(phrases[:16], batch_size=64)
    best: dict[int, float] = {}
    load_start = os.getloadavg()[0]
    for _ in range(args.rounds):  # alternate, so both settings see the same background load
        for threads in sorted({1, default_threads}):
            torch.set_num_threads(threads)
            start = time.perf_counter()
            model.encode(phrases, batch_size=64, show_progress_bar=False)
            best[threads] = max(best.get(threads, 0.0), args.phrases / (time.perf_counter() - start))
    torch.set_num_threads(default_threads)
    print(f"machine: {os.cpu_count()} CPUs; load average {load_start:.2f} -> {os.getloadavg()[0]:.2f}")
    for threads, rate in sorted(best.items()):
        print(f"torch threads {threads}: {rate:7.0f} phrases/s (best of {args.rounds})")
    if len(best) > 1:
        print(f"1 thread / {default_threads} threads: {best[1] / best[default_threads]:.2f}x")


if __name__ == "__main__":
    main()
