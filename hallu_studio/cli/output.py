"""Machine-readable output of table-like results: ``--format {table,jsonl,csv}``.

``jsonl`` writes one JSON object per row and ``csv`` a header then one line per row,
both on stdout so that they pipe; a missing number (None, NaN) is JSON ``null`` and an
empty CSV cell. Commands print their own human table for ``table``.

>>> write_records([{"metric": "emd", "rate": float("nan"), "n": 3}], ["metric", "rate", "n"], "jsonl")
{"metric": "emd", "rate": null, "n": 3}
>>> write_records([{"metric": "emd", "rate": 0.5, "n": 3}], ["metric", "rate"], "csv")
metric,rate
emd,0.5
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from typing import Any, Iterable, Mapping, Sequence, TextIO

FORMATS: tuple[str, ...] = ("table", "jsonl", "csv")


def add_format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (default, for people), jsonl (one JSON object per row) or csv (with a header)")


def plain(value: Any) -> Any:
    """``value`` as JSON can hold it: NaN and infinities become None, numpy scalars Python numbers."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        value = value.item()  # a numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _csv_cell(value: Any) -> Any:
    value = plain(value)
    if value is None:
        return ""
    return json.dumps(value) if isinstance(value, (dict, list)) else value


def write_records(rows: Iterable[Mapping[str, Any]], columns: Sequence[str], fmt: str,
                  stream: TextIO | None = None) -> None:
    """Write ``rows`` (only ``columns``, in that order) as ``jsonl`` or ``csv``."""
    out = stream if stream is not None else sys.stdout
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps({c: plain(row.get(c)) for c in columns}, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_csv_cell(row.get(c)) for c in columns])
    else:
        raise ValueError(f"write_records writes jsonl or csv, not {fmt!r}")


def columns_of(rows: Sequence[Mapping[str, Any]], first: Sequence[str] = ()) -> list[str]:
    """``first``, then every other key of ``rows`` in the order they appear."""
    seen = dict.fromkeys(first)
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)
