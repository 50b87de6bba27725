"""Recorded responses from other evaluation toolkits, matched to stored samples (lmms-eval: ``lmms_eval``).

* **VLMEvalKit** prediction files (``.xlsx`` / ``.tsv``) with ``index, question, answer,
  prediction`` columns; sample key ``sample_id`` when present, else ``index``; the model is
  ``--model`` (VLMEvalKit's file names ``<model>_<dataset>`` cannot be split reliably).

Matching follows :class:`.recorded.SampleIdResolver`; unmatched rows are problems.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..model import Response
from .base import ImportProblem, ParsedResponses
from .reading import FatalImportError
from .recorded import RecordedRuns, SampleIdResolver, benchmark_of


def _table(p: Path) -> Any:
    import pandas as pd

    try:
        if p.suffix.lower() in (".xlsx", ".xls"):
            return pd.read_excel(p, dtype=str, keep_default_na=False)
        if p.suffix.lower() in (".tsv", ".csv"):
            return pd.read_csv(p, sep="\t" if p.suffix.lower() == ".tsv" else ",", dtype=str, keep_default_na=False)
    except Exception as exc:  # noqa: BLE001 - pandas raises many kinds; all mean "cannot read this table"
        raise FatalImportError(f"{p.name}: cannot read the table ({exc})") from exc
    raise FatalImportError(f"{p.name}: VLMEvalKit predictions must be .xlsx or .tsv")


def read_vlmevalkit(path: str | os.PathLike[str], known_ids: set[str], *, benchmark: str | None,
                    model: str | None) -> ParsedResponses:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist")
    if not model:
        raise FatalImportError(f"{p.name}: give the model's name with --model")
    df = _table(p)
    missing = [c for c in ("index", "prediction") if c not in df.columns]
    if missing:
        raise FatalImportError(f"{p.name}: missing column(s) {missing}; found {list(df.columns)}")
    out = ParsedResponses()
    resolver = SampleIdResolver(benchmark, known_ids)
    runs = RecordedRuns(f"vlmevalkit:{p.name}")
    for i, row in enumerate(df.to_dict("records")):
        where = f"{p.name} row {i + 2}"  # +2: spreadsheet rows count from 1 and the header is row 1
        try:
            text = str(row.get("prediction") or "")
            if not text.strip():
                raise ValueError("empty prediction")
            sid = resolver.resolve([row.get("sample_id"), row.get("index")])
            out.responses.append(Response(runs.run_for(benchmark_of(sid), model).id, sid, text))
        except ValueError as exc:
            out.problems.append(ImportProblem(where, str(exc)))
    out.runs = runs.runs()
    return out
