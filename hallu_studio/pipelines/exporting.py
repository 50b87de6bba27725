"""Export store tables as JSONL, CSV or Parquet.

JSONL is HalluStudio's own import format (``importers.jsonl``), so an export can be
imported again without loss: samples carry their images (written beside the output as
``<output>.images/<sha256>.<ext>``), responses their full run manifest and time,
judgments their ids, undo links and times. CSV and Parquet are for other tools
(DuckDB's own writer) and are not re-imported. ``ratings`` is not a stored table but the
event log resolved (``annotation.resolved_ratings``): each annotator's current rating of
each response, undone ones left out; it is for reading, the judgments export is for re-importing.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from ..annotation import RESOLVED_RATING_COLUMNS, resolved_ratings
from ..images import extension_for
from ..store import Store

TABLES = ("samples", "responses", "scores", "judgments", "ratings")
# Tables computed from the store rather than read from it: their columns and what computes their rows.
DERIVED_TABLES: dict[str, tuple[tuple[str, ...], Callable[[Store], list[dict[str, Any]]]]] = {
    "ratings": (RESOLVED_RATING_COLUMNS, resolved_ratings)}
FORMATS = ("jsonl", "csv", "parquet")


@dataclass
class ExportReport:
    table: str
    path: Path
    rows: int
    images: int = 0

    def summary(self) -> str:
        extra = f" and {self.images} images in {self.path.name}.images/" if self.images else ""
        return f"{self.table}: {self.rows} rows written to {self.path}{extra}"


def _line(record: dict[str, Any]) -> str:
    # Sorted keys: the same store always exports the same bytes.
    return json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def _sample_lines(store: Store, output: Path) -> Iterator[tuple[str, bool, int]]:
    """JSONL lines of all samples, writing each image once; yields (line, is a sample, images written).

    The store's export rows already have the ``Sample.to_dict()`` shape (JSON columns
    decoded), which is much faster than rebuilding every Sample.
    """
    image_dir = output.with_name(output.name + ".images")
    file_names: dict[str, str | None] = {}  # sha256 -> file name (None: not in the store)
    current: str | None = None
    for record in store.export_rows("samples"):
        new_images = 0
        if record["benchmark"] != current:
            current = record["benchmark"]
            b = store.get_benchmark(current)
            if b is not None:
                yield _line({"benchmark_info": {"name": b.name, "description": b.description, "source": b.source,
                                                "meta": b.meta}}), False, 0
        # Several captions are the sample's ``reference_text`` list, as ``Sample.to_dict`` has it.
        several = record.pop("reference_texts", None)
        if several:
            record["reference_text"] = several
        sha = record["image_sha256"]
        if sha and sha not in file_names:
            found = store.get_image(sha)
            file_names[sha] = None
            if found is not None:
                data, mime = found
                file_names[sha] = sha + extension_for(mime)
                image_dir.mkdir(parents=True, exist_ok=True)
                (image_dir / file_names[sha]).write_bytes(data)
                new_images = 1
        if sha and file_names[sha]:
            record["image"] = f"{image_dir.name}/{file_names[sha]}"
        yield _line(record), True, new_images


def _response_lines(store: Store) -> Iterator[str]:
    runs: dict[str, dict[str, Any]] = {}
    for row in store.export_rows("responses"):
        if row["run_id"] not in runs:
            run = store.get_run(row["run_id"])
            runs[row["run_id"]] = run.to_dict() if run else {}
        record = {"id": row["id"], "sample_id": row["sample_id"], "model": row["model"], "response": row["response"],
                  "signals": row["signals"] or {}, "created_at": row["created_at"]}
        if runs[row["run_id"]]:
            record["run"] = runs[row["run_id"]]
        yield _line(record)


def _export_derived(store: Store, table: str, fmt: str, out: Path) -> ExportReport:
    """A computed table in any format, written under a temporary name and renamed when whole."""
    columns, compute = DERIVED_TABLES[table]
    rows = compute(store)
    tmp = out.with_name(out.name + ".partial")
    if fmt == "jsonl":
        tmp.write_text("".join(_line(r) for r in rows), encoding="utf-8")
    elif fmt == "csv":
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    else:
        pq.write_table(pa.Table.from_pylist(rows) if rows else pa.table({c: pa.array([], pa.string()) for c in columns}),
                       tmp)
    tmp.replace(out)
    return ExportReport(table, out, len(rows))


def export_table(store: Store, table: str, fmt: str, output: str | os.PathLike[str]) -> ExportReport:
    """Write ``table`` to ``output`` in ``fmt``; returns how many rows (and images) were written."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; choose from {', '.join(TABLES)}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if table in DERIVED_TABLES:
        return _export_derived(store, table, fmt, out)
    if fmt != "jsonl":
        store.export_copy(table, str(out), fmt)
        return ExportReport(table, out, len(store.export_rows(table)))
    rows = images = 0
    tmp = out.with_name(out.name + ".partial")
    progress = tqdm(desc=f"export {table}", unit="row", disable=None, leave=False, file=sys.stderr)
    with open(tmp, "w", encoding="utf-8") as fh, progress:
        if table == "samples":
            for line, is_sample, new_images in _sample_lines(store, out):
                fh.write(line)
                rows += is_sample
                progress.update(1)
                images += new_images
        elif table == "responses":
            for line in _response_lines(store):
                fh.write(line)
                rows += 1
                progress.update(1)
        else:
            for row in store.export_rows(table):
                fh.write(_line(row))
                rows += 1
                progress.update(1)
    # Write-then-rename: an interrupted export never leaves a truncated file under the real name.
    tmp.replace(out)
    return ExportReport(table, out, rows, images)
