"""``--format halfscore``: DCI dense captions (HalFscore's ``annotation.json``) and models' caption files."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from .. import halfscore

    path, name = request.path, request.benchmark or "halfscore"
    found = False
    if path.is_dir() or path.suffix == ".json":
        found = True
        yield halfscore.read_halfscore_annotations(path, request.images, benchmark=name)
    caption_files = sorted(path.glob(f"*{halfscore.CAPTIONS_SUFFIX}")) if path.is_dir() else (
        [path] if path.suffix == ".jsonl" else [])
    for f in caption_files:
        found = True
        known = stored.sample_ids(name.split("/")[0])
        if not known:
            raise ValueError(f"the store holds no samples of benchmark {name.split('/')[0]!r}; import it first")
        parsed = halfscore.read_halfscore_captions(f, known, benchmark=name, model=request.model)
        parsed.name = f.name
        yield parsed
    if not found:
        raise ValueError(f"{path}: expected annotation.json, a *{halfscore.CAPTIONS_SUFFIX} file or a folder of them")


FORMAT = register(ImportFormat("halfscore", "DCI dense captions (annotation.json) and models' *_captions.jsonl",
                               ("path", "images", "benchmark", "model"), read))
