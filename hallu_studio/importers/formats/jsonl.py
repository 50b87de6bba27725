"""``--format jsonl``: HalluStudio's own JSONL (samples, responses or judgments, told by the first record)."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, ParsedEvents, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from .. import jsonl

    path = request.path
    kind = jsonl.detect_kind(path)
    if kind == "samples":
        yield from jsonl.read_jsonl_samples(path, request.images)
    elif kind == "judgments":
        events, problems = jsonl.read_jsonl_judgments(path)
        yield ParsedEvents(path.name, events, problems)
    else:
        known = stored.sample_ids(request.benchmark.split("/")[0] if request.benchmark else None)
        parsed = jsonl.read_jsonl_responses(path, known, benchmark=request.benchmark, model=request.model)
        parsed.name = path.name
        yield parsed


FORMAT = register(ImportFormat("jsonl", "HalluStudio's JSONL: samples, responses or judgments (what export writes)",
                               ("path", "images", "benchmark", "model"), read))
