"""``--format sample``: the embedded offline sample benchmark (``docs/sample_benchmark.md``)."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    try:
        from ...sample import build_sample_benchmark
    except ImportError as exc:
        raise ValueError(f"the embedded sample benchmark is not available ({exc})") from exc
    yield build_sample_benchmark()


FORMAT = register(ImportFormat("sample", "the embedded sample benchmark (real photos, rendered scenes, "
                                         "stylized variants), offline", (), read))
