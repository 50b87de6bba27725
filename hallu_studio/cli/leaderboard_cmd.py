"""``hallu-studio leaderboard``: models x metrics with bootstrap intervals, as the app's Overview."""

from __future__ import annotations

import argparse
import sys

from .common import add_db_option, check_benchmark, check_metrics, open_store_for_reading
from .output import add_format_option, write_records


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="models x metrics with bootstrap CIs by image")
    add_db_option(p)
    p.add_argument("--benchmark", default=None, help="only this benchmark")
    p.add_argument("--metrics", default=None, help="comma-separated metrics (default: all scored)")
    p.add_argument("--by-domain", action="store_true", help="one row per image domain too")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates (default 1000)")
    add_format_option(p)
    p.set_defaults(func=run)


def _fmt(value: object) -> str:
    return "-" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)


def run(args: argparse.Namespace) -> int:
    from ..studies.leaderboard import leaderboard

    with open_store_for_reading(args) as store:
        check_benchmark(store, args.benchmark)
        metrics = check_metrics(store, args.metrics, args.benchmark)
        rows = leaderboard(store, args.benchmark, by_domain=args.by_domain, metrics=metrics, n_boot=args.n_boot)
    if not rows:
        where = f" on benchmark {args.benchmark!r}" if args.benchmark else ""
        print(f"no scores{where} yet: run `hallu-studio score` first", file=sys.stderr)
        return 1
    columns = ["model", "benchmark"] + (["domain"] if args.by_domain else []) + [
        "metric", "key", "value", "low", "high", "n", "images", "aggregation", "run_id"]
    if args.format != "table":
        write_records(rows, columns, args.format)
    else:
        shown = [[_fmt(r.get(c)) for c in columns[:-2]] for r in rows]
        header = columns[:-2]
        widths = [max(len(h), *(len(row[i]) for row in shown)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for row in shown:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths)))
        print(f"({len(rows)} rows; value [low, high] is a 95% bootstrap interval resampled by image)")
    return 0
