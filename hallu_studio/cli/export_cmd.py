"""``hallu-studio export``: write a store table as JSONL (re-importable), CSV or Parquet.

``judgments`` is the raw, append-only event log (undos included); ``ratings`` is that log
resolved: each annotator's current rating of each response.
"""

from __future__ import annotations

import argparse

from ..pipelines.exporting import FORMATS, TABLES, export_table
from .common import add_db_option, open_store_for_reading


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export samples, responses, scores, judgments or ratings")
    p.add_argument("--table", required=True, choices=TABLES,
                   help="judgments: the raw event log (undos included, re-importable); ratings: each "
                        "annotator's current rating per response (undone ones left out)")
    p.add_argument("--format", default="jsonl", choices=FORMATS,
                   help="jsonl (default; re-importable with 'import --format jsonl'), csv or parquet")
    p.add_argument("--output", required=True, metavar="PATH")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with open_store_for_reading(args) as store:
        report = export_table(store, args.table, args.format, args.output)
    print(report.summary())
    return 0
