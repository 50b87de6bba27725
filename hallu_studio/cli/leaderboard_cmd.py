"""``hallu-studio leaderboard``: models x metrics with bootstrap intervals, ranked as the app's Overview ranks them.

Each metric's numbers are those of its configuration in force under the settings (``--config``; the rule:
``studies.in_force``), ranked per benchmark by ``studies.ranking`` with the Overview's intervals; every row names
its configuration. ``--all-configs`` lists every stored configuration beside the one in force.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import add_db_option, check_benchmark, check_metrics, open_store_for_reading, settings_from
from .output import add_format_option, write_records


# Enough significant digits that a toolkit's recorded number (POPE F1 83.34, MME 1558.52) can be checked against the
# value column by eye; the interval keeps the views' three.
VALUE_DIGITS = 5

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="models x metrics with bootstrap CIs by image, ranked as the Overview")
    add_db_option(p)
    p.add_argument("--benchmark", default=None, help="only this benchmark")
    p.add_argument("--metrics", default=None, help="comma-separated metrics (default: all scored)")
    p.add_argument("--by-domain", action="store_true", help="one row per image domain too")
    p.add_argument("--all-configs", action="store_true",
                   help="every stored configuration of each metric, not only the one in force (each row names its "
                        "configuration)")
    p.add_argument("--n-boot", type=int, default=None,
                   help="bootstrap replicates (default: as many as the Overview draws, studies.leaderboard.N_BOOT)")
    add_format_option(p)
    p.set_defaults(func=run)


def ranked_rows(rows: list[dict[str, Any]], boards: list[Any], in_force: Any) -> list[dict[str, Any]]:
    """``rows`` with ``rank`` and ``config`` (the configuration's name), ordered as the boards rank the runs: per
    benchmark, best run first; per run the metrics in ranking order, the configuration in force first."""
    from ..metrics.registry import METRIC_NAMES

    place = {(b.benchmark, r.run_id): (i, j, r.rank) for i, b in enumerate(boards) for j, r in enumerate(b.runs)}
    metric_order = {m: i for i, m in enumerate(METRIC_NAMES)}
    out = []
    for row in rows:
        board, position, rank = place.get((row["benchmark"], row["run_id"]), (len(boards), 0, None))
        out.append({**row, "rank": rank, "config": in_force.label(row["metric"], row["config_key"]),
                    "_order": (board, str(row["benchmark"]), position, metric_order.get(row["metric"], len(METRIC_NAMES)),
                               row["metric"], row["config_key"] != in_force.key(row["metric"]), row["config_key"],
                               str(row.get("domain")))})
    out.sort(key=lambda r: r["_order"])
    for r in out:
        del r["_order"]
    return out


def _text(rows: list[dict[str, Any]], boards: list[Any], by_domain: bool) -> None:
    from ..presentation import interval, number, short_model_label

    ranked_by = {b.benchmark: b.ranked_by for b in boards}
    # A split's numbers (POPE's adversarial, ...) name it beside the key; the column shows only where there are some.
    splits = any(r.get("split") for r in rows)
    names = {(b.benchmark, r.run_id): r.name for b in boards for r in b.runs}  # unique per benchmark
    header = ["rank", "model"] + (["domain"] if by_domain else []) + [
        "metric", "key"] + (["split"] if splits else []) + ["value", "95% interval", "n", "images", "configuration"]
    for benchmark in dict.fromkeys(r["benchmark"] for r in rows):
        h = ranked_by.get(benchmark)
        how = (f"ranked by {h.spec.title(h.number)} {h.arrow} ({h.number.better}), best first" if h is not None
               else "no headline number yet: nothing to rank by")
        print(f"{benchmark} · {how}")
        shown = [[number(r["rank"]) if r["rank"] is not None else "–", short_model_label(
                     r["model"], r["synthetic"], name=names.get((r["benchmark"], r["run_id"])))]
                 + ([str(r.get("domain"))] if by_domain else [])
                 + [r["metric"], r["key"]] + ([r.get("split") or ""] if splits else [])
                 + [number(r["value"], VALUE_DIGITS) + (" (mean)" if r["aggregation"] == "mean of values" else ""),
                    interval(r["low"], r["high"]), number(r["n"]), number(r["images"]), r["config"]]
                 for r in rows if r["benchmark"] == benchmark]
        widths = [max(len(h), *(len(row[i]) for row in shown)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        for row in shown:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
        print()


def run(args: argparse.Namespace) -> int:
    from ..studies.in_force import configs_in_force
    from ..studies.leaderboard import N_BOOT, leaderboard
    from ..studies.ranking import benchmark_boards

    settings = settings_from(args)
    n_boot = args.n_boot or N_BOOT
    with open_store_for_reading(args) as store:
        check_benchmark(store, args.benchmark)
        metrics = check_metrics(store, args.metrics, args.benchmark)
        in_force = configs_in_force(store, settings)
        boards = benchmark_boards(store, in_force, args.benchmark, n_boot=n_boot)
        rows = leaderboard(store, args.benchmark, by_domain=args.by_domain, metrics=metrics, n_boot=n_boot,
                           configs=None if args.all_configs else in_force.keys())
    if not rows:
        where = f" on benchmark {args.benchmark!r}" if args.benchmark else ""
        print(f"no scores{where} yet: run `hallu-studio score` first", file=sys.stderr)
        return 1
    rows = ranked_rows(rows, boards, in_force)
    for note in in_force.notes({r["metric"] for r in rows}):
        print(f"note: {note}", file=sys.stderr)
    columns = ["rank", "model", "benchmark"] + (["domain"] if args.by_domain else []) + [
        "metric", "key", "split", "value", "low", "high", "n", "images", "aggregation", "config", "config_key",
        "run_id"]
    if args.format != "table":
        write_records(rows, columns, args.format)
    else:
        _text(rows, boards, args.by_domain)
        print(f"({len(rows)} rows; the interval is a 95% bootstrap interval resampled by image, {n_boot} "
              f"replicates; each metric's configuration in force: the current settings' where it is scored)")
    return 0
