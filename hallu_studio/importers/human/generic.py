"""The generic human-judgement JSONL: any study's judgements, one line per person and judged response.

Documented in ``docs/formats.md`` (section "Human judgements"). A line names the study (``source``), who
judged (``annotator``, default the source), the judged response — either ``response_id`` of a response
already in the store, or the sample and the model's text (``sample_id``, ``model``, ``response``, and the
sample's references) — and at least one judgement: ``label``, ``rating``, ``spans``, ``facts``,
``comparisons``. Lines of one sample must agree on its fields; several people judging one response are
several lines.

>>> from pathlib import Path; import json, tempfile
>>> line = {"source": "pilot", "sample_id": "img-1", "reference_text": ["A dog on grass."], "model": "m",
...         "response": "A cat on grass.", "label": "hallucinated",
...         "spans": [{"start": 2, "end": 5, "label": "hallucinated"}]}
>>> with tempfile.TemporaryDirectory() as d:
...     f = Path(d) / "study.jsonl"; _ = f.write_text(json.dumps(line) + "\\n")
...     study = read_generic_judgements(f)
>>> [s.id for s in study.benchmark.samples], [(e.kind, e.target) for e in study.events]
(['pilot/img-1'], [('label', ''), ('span_label', 'span:2-5')])
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...model import APP_SOURCE, Benchmark, Sample
from ..reading import FatalImportError, iter_jsonl
from .base import ParsedHumanStudy, StudyBuilder, comparison, fact_label, span_label

JUDGEMENT_KEYS: tuple[str, ...] = ("label", "rating", "spans", "facts", "comparisons")
SAMPLE_KEYS: tuple[str, ...] = ("image_key", "task", "question", "reference_text", "reference_kind",
                                "reference_objects", "reference_vocabulary")
RESPONSE_KEYS: tuple[str, ...] = ("sample_id", "model", "response")  # and "written_by": "human" | "model"


def looks_generic(record: dict[str, Any]) -> bool:
    """Whether a record is a line of this format (a ``source`` and some judgement)."""
    return "source" in record and any(k in record for k in JUDGEMENT_KEYS)


def _list(record: dict[str, Any], key: str) -> list[Any]:
    value = record.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{key!r} must be a list")
    return value


def _judgements(builder: StudyBuilder, record: dict[str, Any], annotator: str, response_id: str,
                text: str | None, meta: dict[str, Any]) -> None:
    """Every judgement of one line as events; ValueError / ValidationError naming the first bad one (the
    caller's ``StudyBuilder.record`` then takes back the line's other events)."""
    if record.get("label") is not None:
        builder.event(annotator, "label", response_id, {"label": record["label"]}, meta=meta)
    if record.get("rating") is not None:
        builder.event(annotator, "rating", response_id, record["rating"], meta=meta)
    for i, span in enumerate(_list(record, "spans")):
        if not isinstance(span, dict):
            raise ValueError(f"spans[{i}] must be an object {{start, end, label}}")
        start, end = span.get("start"), span.get("end")
        if text is not None and isinstance(end, int) and end > len(text):
            raise ValueError(f"spans[{i}] ends at {end}, after the response's {len(text)} characters")
        value, target = span_label(start, end, span.get("label"),  # type: ignore[arg-type]
                                   text[start:end] if text is not None and isinstance(start, int)
                                   and isinstance(end, int) else span.get("text"))
        builder.event(annotator, "span_label", response_id, value, target, meta=meta)
    for i, fact in enumerate(_list(record, "facts")):
        if not isinstance(fact, dict) or not isinstance(fact.get("fact"), str):
            raise ValueError(f"facts[{i}] must be an object {{fact, label}}")
        value, target = fact_label(i, fact["fact"].strip(), fact.get("label"))  # type: ignore[arg-type]
        builder.event(annotator, "fact_label", response_id, value, target, meta=meta)
    for i, c in enumerate(_list(record, "comparisons")):
        if not isinstance(c, dict):
            raise ValueError(f"comparisons[{i}] must be an object {{other, aspect, score}}")
        value, target = comparison(str(c.get("other") or ""), str(c.get("aspect") or ""), c.get("score"),  # type: ignore[arg-type]
                                   c.get("scale"))
        builder.event(annotator, "comparison", response_id, value, target, meta=meta)


def read_generic_judgements(path: str | os.PathLike[str]) -> ParsedHumanStudy:
    """A generic human-judgement JSONL file as a human study: one ``source`` and one benchmark per file."""
    p = Path(path)
    problems: list[Any] = []
    lines = list(iter_jsonl(p, problems))
    if not lines:
        raise FatalImportError(f"{p.name}: no records" + (f" ({problems[0]})" if problems else ""))
    first = lines[0][1]
    source = str(first.get("source") or "").strip()
    if not source or source == APP_SOURCE:
        raise FatalImportError(f"{p.name} line {lines[0][0]}: 'source' must name the study (not {APP_SOURCE!r}), "
                               f"got {first.get('source')!r}")
    name = str(first.get("benchmark") or source).strip()
    builder = StudyBuilder(source, Benchmark(name, f"human judgements of study {source}", str(p)),
                           f"human:{source}:{p.name}")
    builder.study.problems.extend(problems)
    for lineno, record in lines:
        with builder.record(f"{p.name} line {lineno}"):
            _line(builder, record, source, name)
    study = builder.finish()
    if not study.benchmark.samples and not study.events:
        raise FatalImportError(f"{p.name}: no line went through ({study.problems[0] if study.problems else 'empty'})")
    return study


def _line(builder: StudyBuilder, record: dict[str, Any], source: str, benchmark: str) -> None:
    if str(record.get("source") or "").strip() != source:
        raise ValueError(f"source {record.get('source')!r} differs from the first line's ({source!r}); "
                         "one file holds one study")
    if not any(record.get(k) is not None for k in JUDGEMENT_KEYS):
        raise ValueError(f"no judgement: give at least one of {', '.join(JUDGEMENT_KEYS)}")
    annotator = str(record.get("annotator") or source).strip()
    meta = record.get("meta") or {}
    if not isinstance(meta, dict):
        raise ValueError("'meta' must be an object")
    if record.get("response_id") is not None:
        given = [k for k in (*RESPONSE_KEYS, *SAMPLE_KEYS, "benchmark", "written_by") if k in record]
        if given:
            raise ValueError(f"give either response_id (a stored response) or the sample and response "
                             f"({', '.join(given)}), not both")
        _judgements(builder, record, annotator, str(record["response_id"]), None, meta)
        return
    missing = [k for k in RESPONSE_KEYS if not isinstance(record.get(k), str) or not record[k].strip()]
    if missing:
        raise ValueError(f"missing {', '.join(repr(k) for k in missing)} (or a stored 'response_id')")
    if str(record.get("benchmark") or source).strip() != benchmark:
        raise ValueError(f"benchmark {record.get('benchmark')!r} differs from the first line's ({benchmark!r}); "
                         "one file holds one benchmark")
    written_by = record.get("written_by")
    if written_by not in (None, "human", "model"):
        raise ValueError(f"written_by must be 'human' or 'model', got {written_by!r}")
    sample_key = record["sample_id"].strip()
    sample = builder.sample(Sample(
        id=f"{benchmark}/{sample_key}", benchmark=benchmark, image_key=str(record.get("image_key") or sample_key),
        task=str(record.get("task") or "caption"), question=record.get("question"),
        reference_text=record.get("reference_text"), reference_objects=record.get("reference_objects"),
        reference_vocabulary=record.get("reference_vocabulary"),
        reference_kind=record.get("reference_kind") or "captions"))
    model = record["model"].strip()
    if builder.written_by.setdefault(model, written_by or "model") != (written_by or "model"):
        raise ValueError(f"written_by of {model!r} differs from an earlier line's ({builder.written_by[model]!r})")
    response = builder.response(sample, model, record["response"],
                                {"written_by": "human"} if written_by == "human" else None)
    _judgements(builder, record, annotator, response.id, record["response"], meta)
