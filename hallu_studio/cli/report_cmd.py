"""``hallu-studio report``: the Overview as one self-contained offline HTML file, to share."""

from __future__ import annotations

import argparse
import sys

from .common import add_db_option, check_benchmark, open_store_for_reading, settings_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained offline HTML report (leaderboard, plots, failures)")
    add_db_option(p)
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--benchmark", default=None, help="only this benchmark (default: every benchmark)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..app.report import write_report
    from ..studies.in_force import configs_in_force

    settings = settings_from(args)
    with open_store_for_reading(args) as store:  # a report only reads, also while the app holds the store
        check_benchmark(store, args.benchmark)
        in_force = configs_in_force(store, settings)  # the settings' configuration of each metric, as the app's
        out = write_report(store, args.output, args.benchmark, in_force)
        for note in in_force.notes():
            print(f"note: {note}", file=sys.stderr)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB); it opens offline in any browser", file=sys.stderr)
    return 0
