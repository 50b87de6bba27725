"""``--format llava``: LLaVA's answer files (model_vqa_loader's JSONL), answers to a stored benchmark."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..llava import read_llava

    yield read_llava(request.path, stored, benchmark=request.benchmark, model=request.model)


FORMAT = register(ImportFormat("llava", "LLaVA answer files {question_id, prompt, text, model_id} (answers to a "
                                        "stored benchmark; POPE's per split)", ("path", "benchmark", "model"), read,
                               path_help="a LLaVA answers .jsonl (--benchmark pope/adversarial for one split's)"))
