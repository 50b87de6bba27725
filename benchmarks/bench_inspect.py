"""Inspect's "next" with 10,000 responses in the store, measured through gradio_client.

Fills a temporary store with synthetic scored responses (``fill_synthetic_store``:
5,000 samples x 2 models), launches the app in-process, and times the ``inspect_next``
endpoint (the Next button) warm, as a user would see it minus the browser's drawing.
It also times the library call alone, side by side, to show what Gradio adds.

    python benchmarks/bench_inspect.py [--responses 10000] [--steps 200]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--responses", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()

    from gradio_client import Client

    from hallu_studio.app import AppContext, build_app
    from hallu_studio.app.inspection import inspect_response
    from hallu_studio.app.synthetic_store import fill_synthetic_store
    from hallu_studio.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        t0 = time.perf_counter()
        ids = fill_synthetic_store(store, n_samples=args.responses // 2)
        print(f"filled {len(ids)} responses ({store.counts()['scores']} scores) in {time.perf_counter() - t0:.1f} s")
        demo = build_app(AppContext(store=store))
        demo.queue()
        _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=_free_port(),
                                quiet=True, footer_links=[])
        try:
            client = Client(url, verbose=False)
            for _ in range(args.warmup):
                client.predict(api_name="/inspect_next")
            through_gradio = []
            for _ in range(args.steps):
                t = time.perf_counter()
                out = client.predict(api_name="/inspect_next")
                through_gradio.append(time.perf_counter() - t)
            assert out[0] in set(ids)
            library = []
            for rid in ids[:args.steps]:
                t = time.perf_counter()
                inspect_response(store, rid)
                library.append(time.perf_counter() - t)
        finally:
            demo.close()
            store.close()
    g50, g95 = _pct(through_gradio, .5) * 1000, _pct(through_gradio, .95) * 1000
    l50, l95 = _pct(library, .5) * 1000, _pct(library, .95) * 1000
    print(f"inspect next via gradio_client: p50 {g50:.0f} ms  p95 {g95:.0f} ms  "
          f"(mean {statistics.mean(through_gradio) * 1000:.0f} ms, n={len(through_gradio)})")
    print(f"inspect_response() alone:       p50 {l50:.0f} ms  p95 {l95:.0f} ms")
    print(f"ratio gradio / library p50: {g50 / l50:.1f}x; target p95 < 300 ms: {'met' if g95 < 300 else 'NOT met'}")


if __name__ == "__main__":
    main()
