"""``hallu-studio report``: the Overview as one self-contained offline HTML file, to share."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import add_db_option, settings_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained offline HTML report (leaderboard, plots, failures)")
    add_db_option(p)
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--benchmark", default=None, help="only this benchmark (default: every benchmark)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..store import Store

    db = settings_from(args).db
    if str(db) != ":memory:" and not Path(db).exists():
        raise FileNotFoundError(f"no store at {db} (pass --db, or set HALLU_STUDIO_DB)")
    with Store(db, read_only=True) as store:  # a report only reads
        from ..app.report import write_report

        out = write_report(store, args.output, args.benchmark)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB); it opens offline in any browser", file=sys.stderr)
    return 0
