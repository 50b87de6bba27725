"""``--format tri-he``: Tri-HE's ``tri-he.json`` (GQA images, questions, reference triplets)."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..tri_he import read_tri_he

    yield read_tri_he(request.path, request.images, benchmark=request.benchmark or "tri-he")


FORMAT = register(ImportFormat("tri-he", "Tri-HE's tri-he.json (questions and reference triplets per image)",
                               ("path", "images", "benchmark"), read, path_help="tri-he.json or its folder"))
