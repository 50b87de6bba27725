"""Recorded responses from other evaluation toolkits, matched to stored samples.

* **lmms-eval** ``--log_samples`` JSONL: ``{doc_id, doc, target, resps, filtered_resps, ...}``.
  The response is ``filtered_resps`` (else ``resps``), flattened to its first string.
  Sample keys tried: ``doc.sample_id``, ``doc.id``, ``doc.question_id``, ``doc_id``. The model
  is ``--model``, else the ``pretrained=`` (or ``model``) of a sibling ``*results*.json``.
* **VLMEvalKit** prediction files (``.xlsx`` / ``.tsv``) with ``index, question, answer,
  prediction`` columns; sample key ``sample_id`` when present, else ``index``; the model is
  ``--model`` (VLMEvalKit's file names ``<model>_<dataset>`` cannot be split reliably).

Matching follows :class:`.recorded.SampleIdResolver`; unmatched rows are problems.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..model import Response
from .base import ImportProblem, ParsedResponses
from .reading import FatalImportError, iter_jsonl
from .recorded import RecordedRuns, SampleIdResolver, benchmark_of


def _first_text(value: Any) -> str | None:
    """``[["a"]]`` / ``["a"]`` / ``"a"`` -> ``"a"``."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def lmms_eval_model(samples_path: Path) -> str | None:
    """The model named by a results file beside an lmms-eval samples file, if any."""
    for results in sorted(samples_path.parent.glob("*results*.json")):
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        config = data.get("config") or {}
        args = str(config.get("model_args") or "")
        m = re.search(r"pretrained=([^,]+)", args)
        name = m.group(1) if m else (data.get("model_name") or config.get("model"))
        if name:
            return str(name).strip()
    return None


def read_lmms_eval(path: str | os.PathLike[str], known_ids: set[str], *, benchmark: str | None,
                   model: str | None = None) -> ParsedResponses:
    p = Path(path)
    name = model or lmms_eval_model(p)
    if not name:
        raise FatalImportError(f"{p.name}: no model name (no --model and no results file beside it naming one)")
    out = ParsedResponses()
    resolver = SampleIdResolver(benchmark, known_ids)
    runs = RecordedRuns(f"lmms-eval:{p.name}")
    for lineno, rec in iter_jsonl(p, out.problems):
        where = f"{p.name} line {lineno}"
        try:
            text = _first_text(rec.get("filtered_resps")) or _first_text(rec.get("resps"))
            if text is None:
                raise ValueError("no response in filtered_resps / resps")
            doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
            sid = resolver.resolve([doc.get("sample_id"), doc.get("id"), doc.get("question_id"), rec.get("doc_id")])
            run = runs.run_for(benchmark_of(sid), name)
            out.responses.append(Response(run.id, sid, text))
        except ValueError as exc:
            out.problems.append(ImportProblem(where, str(exc)))
    out.runs = runs.runs()
    return out


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
