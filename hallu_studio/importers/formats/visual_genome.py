"""``--format vg`` and ``--format gqa``: scene graphs of Visual Genome and GQA as caption benchmarks."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read_vg(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..scene_graphs import read_visual_genome

    yield read_visual_genome(request.path, request.regions, request.images, benchmark=request.benchmark or "vg")


def read_gqa(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..scene_graphs import read_gqa as read

    yield read(request.path, request.images, benchmark=request.benchmark or "gqa")


VG = register(ImportFormat("vg", "Visual Genome scene graphs (scene_graphs.json; --regions for region captions)",
                           ("path", "images", "regions", "benchmark"), read_vg))
GQA = register(ImportFormat("gqa", "GQA scene graphs (train/val_sceneGraphs.json)", ("path", "images", "benchmark"),
                            read_gqa))
