"""Recorded responses of lmms-eval, matched to stored samples.

* **lmms-eval** ``--log_samples`` JSONL: ``{doc_id, doc, target, resps, filtered_resps, ...}``.
  The response is ``filtered_resps`` (else ``resps``), flattened to its first string.
  Sample keys tried: ``doc.sample_id``, ``doc.id``, ``doc.question_id``, ``doc_id``. The model
  is ``--model``, else the ``pretrained=`` (or ``model``) of a sibling ``*results*.json``.

VLMEvalKit's files are read by ``importers.vlmevalkit``.

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
