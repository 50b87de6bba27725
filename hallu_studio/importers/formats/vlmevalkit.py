"""``--format vlmevalkit``: VLMEvalKit's prediction tables and dataset TSVs; the benchmark comes from the file."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..vlmevalkit import read_vlmevalkit

    yield from read_vlmevalkit(request.path, stored, benchmark=request.benchmark, model=request.model,
                               images=request.images)


FORMAT = register(ImportFormat(
    "vlmevalkit", "VLMEvalKit prediction tables <model>_<DATASET>.xlsx / .tsv / .csv (the benchmark from its "
                  "columns, and the model's run) and dataset TSVs with base64 images",
    ("path", "images", "benchmark", "model"), read,
    path_help="a VLMEvalKit prediction table (<model>_<DATASET>.xlsx, its _auxmatch copy) or dataset TSV"))
