"""Inspect's "next" latency at 1k, 10k and 100k responses: the handler alone and through gradio_client,
the FIRST "next" of a fresh session included.

Each store is filled with synthetic scored responses (``fill_synthetic_store``: n/2 samples x 2
models, 6 scores each with evidence) and cached under ``--cache-dir`` (built once; a 100k store
takes minutes to build, a few seconds to reopen). Per size, side by side in one run:

* ``first next``: the handler (``app.tabs.inspect.step``) with an empty session: it steps through
  the store's (run, sample) order read by position (``id_lists.StoreOrder``), listing nothing;
* ``first next, listing``: the same first step the way it was done before, listing the Browse order
  of every response first (kept for the comparison);
* ``session state``: the bytes of the ``nav`` state Gradio copies on every event;
* ``neighbour by SQL``: p50 / p95 of the browse query with ``LIMIT 1 OFFSET k`` (Browse's EMD
  sort): what fetching a metric-sorted neighbour from the store on each click would cost;
* ``next (handler)``: p50 / p95 of the warm handler, stepping on;
* ``inspect_response()``: p50 / p95 of the panel rendering alone;
* ``next via gradio_client``: the ``/inspect_next`` endpoint on the launched app (the Next button
  minus the browser's drawing): ``--fresh`` new sessions' FIRST next each, then ``--steps`` more;
  p95 over both together, for the sizes in ``--gradio-sizes``.

    python benchmarks/bench_inspect.py [--sizes 1000,10000,100000] [--steps 100] [--gradio-sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tests' helpers: synthetic stores, tiny models

from hallu_studio.config import apply_offline_env_defaults  # noqa: E402
from hallu_studio.store import Store  # noqa: E402

TARGET_P95_MS = 300.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def _ms(xs: list[float]) -> str:
    return f"p50 {_pct(xs, .5) * 1000:7.1f} ms  p95 {_pct(xs, .95) * 1000:7.1f} ms  mean {statistics.mean(xs) * 1000:7.1f} ms"


def cached_store(n_responses: int, cache_dir: Path) -> Path:
    """Path of a synthetic store with ``n_responses`` scored responses, built on first use."""
    from synthetic_store import fill_synthetic_store

    path = cache_dir / f"synthetic-{n_responses}.duckdb"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".building")
    partial.unlink(missing_ok=True)
    start = time.perf_counter()
    with Store(partial) as store:
        fill_synthetic_store(store, n_samples=n_responses // 2)
        counts = store.counts()
    partial.rename(path)  # only a finished store is ever reused
    print(f"built {path} ({counts['responses']} responses, {counts['scores']} scores) "
          f"in {time.perf_counter() - start:.0f} s", flush=True)
    return path


def _times(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def bench_size(n: int, path: Path, args: argparse.Namespace, via_gradio: bool) -> dict[str, Any]:
    import json

    from hallu_studio.app import AppContext, build_app
    from hallu_studio.app.columns import headline_keys
    from hallu_studio.app.inspection import inspect_response
    from hallu_studio.app.tabs.inspect import _filter_ids, nav_for, step

    with Store(path) as store:
        inspect_response(store, store.response_id_at(0))  # the process's first queries are not the first next
        # A fresh session's first next, each time in a fresh app context (nothing known or cached), interleaved
        # with the same first step done the way it was before: list every id of the filter, then step.
        first, first_listing = [], []
        for _ in range(args.first_reps):
            ctx = AppContext(store=store)
            first += _times(lambda: step(ctx, {}, +1), 1)
            ctx = AppContext(store=store)
            first_listing += _times(lambda: step(ctx, nav_for(ctx, {}, _filter_ids(ctx, {}), 0), +1), 1)
        ctx = AppContext(store=store)
        out = step(ctx, {}, +1)
        nav = out[0]
        ids = store.browse_response_ids({}, headline_keys())
        for _ in range(args.warmup):
            nav = step(ctx, nav, +1)[0]

        def handler_next() -> None:
            nonlocal nav
            nav = step(ctx, nav, +1)[0]

        handler = _times(handler_next, args.steps)
        stride = max(1, len(ids) // args.steps)  # spread over the whole store, not one corner
        sampled = iter(ids[::stride])
        library = _times(lambda: inspect_response(store, next(sampled)), min(args.steps, len(ids[::stride])))
        offsets = iter(range(0, len(ids), stride))
        by_sql = _times(lambda: store.browse_responses({}, headline_keys(), sort="emd.total", limit=1,
                                                       offset=next(offsets)), min(args.sql_steps, len(ids[::stride])))
        result: dict[str, Any] = {"n": len(ids), "first": first, "first_listing": first_listing,
                                  "handler": handler, "library": library,
                                  "state_bytes": len(json.dumps(nav)), "by_sql": by_sql}
        if via_gradio:
            from gradio_client import Client

            demo = build_app(ctx)
            demo.queue()
            _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=_free_port(),
                                    quiet=True, footer_links=[])
            try:
                client = Client(url, verbose=False)
                for _ in range(args.warmup):
                    client.predict(api_name="/inspect_next")
                fresh = []
                for _ in range(args.fresh):  # a new session each: its FIRST next
                    other = Client(url, verbose=False)
                    fresh += _times(lambda: other.predict(api_name="/inspect_next"), 1)
                result["gradio_first"] = fresh
                result["gradio"] = fresh + _times(lambda: client.predict(api_name="/inspect_next"), args.steps)
                got = client.predict(api_name="/inspect_next")
                assert got[0] in set(ids), "the endpoint returned a response id that is not in the store"
            finally:
                demo.close()
    return result


def main() -> None:
    apply_offline_env_defaults()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="responses in the store, comma-separated")
    ap.add_argument("--gradio-sizes", default="10000,100000", help="sizes also timed through gradio_client")
    ap.add_argument("--fresh", type=int, default=10, help="new sessions timed on their first next (gradio)")
    ap.add_argument("--first-reps", type=int, default=10, help="fresh-session first nexts timed on the handler")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--sql-steps", type=int, default=20, help="timings of the neighbour-by-SQL alternative")
    ap.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "hallu-studio-bench"))
    ap.add_argument("--busy", type=int, default=0,
                    help="a loaded machine on demand: this many busy-looping processes run while timing "
                         "(one per core loads every core fully); they stop with the bench")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    gradio_sizes = {int(s) for s in args.gradio_sizes.split(",") if s.strip()}
    paths = {n: cached_store(n, Path(args.cache_dir)) for n in sizes}
    busy = start_busy(args.busy)
    print(f"machine: {os.cpu_count()} CPUs, {args.busy} busy-looping processes beside the bench; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    try:
        run_sizes(sizes, gradio_sizes, paths, args)
    finally:
        for proc in busy:
            proc.terminate()


def start_busy(n: int) -> list[Any]:
    """``n`` processes that spin until terminated (or for 30 minutes at most), to load the machine."""
    import subprocess

    code = "import time\nend = time.monotonic() + 1800\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def run_sizes(sizes: list[int], gradio_sizes: set[int], paths: dict[int, Path], args: argparse.Namespace) -> None:
    results = {}
    for n in sizes:
        r = results[n] = bench_size(n, paths[n], args, n in gradio_sizes)
        ratio = _pct(r["first_listing"], .5) / _pct(r["first"], .5)
        print(f"{r['n']:>7d} responses  first next (handler, fresh session): {_ms(r['first'])}", flush=True)
        print(f"{'':>17s}  first next listing every id (before):    {_ms(r['first_listing'])}  p50 ratio {ratio:.1f}x")
        print(f"{'':>17s}  next (handler):          {_ms(r['handler'])}")
        print(f"{'':>17s}  inspect_response():      {_ms(r['library'])}")
        print(f"{'':>17s}  neighbour by SQL:        {_ms(r['by_sql'])}  (not used; per click it would add this)")
        print(f"{'':>17s}  session state:           {r['state_bytes']} bytes")
        if "gradio" in r:
            g95 = _pct(r["gradio"], .95) * 1000
            print(f"{'':>17s}  first next, fresh sessions (gradio): {_ms(r['gradio_first'])}")
            print(f"{'':>17s}  next via gradio_client, first ones included: {_ms(r['gradio'])}  "
                  f"(target p95 < {TARGET_P95_MS:.0f} ms: {'met' if g95 < TARGET_P95_MS else 'NOT met'})")
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        growth = _pct(results[hi]["handler"], .5) / _pct(results[lo]["handler"], .5)
        print(f"handler p50 at {hi} / at {lo} responses ({hi // lo}x more): {growth:.2f}x")
        first = _pct(results[hi]["first"], .5) / _pct(results[lo]["first"], .5)
        print(f"first next at {hi} / at {lo}: {first:.2f}x")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
