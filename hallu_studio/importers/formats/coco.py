"""``--format coco``: COCO's captions and instances files (reference captions and the COCO-80 object list)."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..coco import read_coco

    for parsed in read_coco(request.path, request.images, benchmark=request.benchmark):
        parsed.label = f"{parsed.benchmark.name} ({' + '.join(parsed.benchmark.meta['files'])})"
        yield parsed


FORMAT = register(ImportFormat("coco", "COCO captions_*.json and instances_*.json (reference captions, COCO-80 "
                                       "objects)", ("path", "images", "benchmark"), read))
