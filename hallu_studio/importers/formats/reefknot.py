"""``--format reefknot``: Reefknot's YESNO / Multichoice / VQA JSONL files, and the responses they record."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..reefknot import read_reefknot

    bench, recorded = read_reefknot(request.path, request.images, benchmark=request.benchmark or "reefknot")
    yield bench
    if recorded.responses:
        recorded.name = f"{bench.benchmark.name} recorded responses"
        yield recorded


FORMAT = register(ImportFormat("reefknot", "Reefknot's YESNO / Multichoice / VQA JSONL (questions, and the "
                                           "responses they record)", ("path", "images", "benchmark"), read,
                               path_help="the folder of Reefknot's JSONL files"))
