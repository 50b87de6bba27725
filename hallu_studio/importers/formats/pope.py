"""``--format pope``: POPE's released question files (the three COCO splits, LLaVA's combined question file)."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..pope import read_pope, refuse_changed_questions

    parsed = read_pope(request.path, request.images, benchmark=request.benchmark)
    if parsed.benchmark.name in stored.benchmark_names():
        held = stored.sample_ids(parsed.benchmark.name) & {s.id for s in parsed.samples}
        refuse_changed_questions(parsed, stored.get_samples(sorted(held)) if held else {})
    yield parsed


FORMAT = register(ImportFormat("pope", "POPE's question files coco_pope_<split>.json (+ LLaVA's llava_pope_test.jsonl)"
                                       ", the split from the file name", ("path", "images", "benchmark"), read,
                               path_help="a coco_pope_<split>.json file or a folder of them"))
