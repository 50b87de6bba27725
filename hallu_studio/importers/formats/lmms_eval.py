"""``--format lmms-eval``: lmms-eval ``--log_samples`` files (a file or a folder of them) with their results JSON:
the task's benchmark when the store lacks it, checked against it when it holds it, and the model's answers."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..lmms_eval import read_samples, samples_files

    assert request.path is not None  # the registry refuses a missing PATH for formats that read one
    files = samples_files(request.path, model_given=bool(request.model))
    if request.benchmark and len({f.task for f in files}) > 1:
        tasks = ", ".join(sorted({f.task for f in files}))
        raise ValueError(f"{request.path}: --benchmark names one benchmark and the folder holds several tasks "
                         f"({tasks}); leave --benchmark out to import each as its task")
    for source in files:
        yield from read_samples(source, stored, benchmark=request.benchmark, model=request.model)


LMMS_EVAL = register(ImportFormat(
    "lmms-eval", "lmms-eval --log_samples JSONL, v0.3-v0.6, with its results JSON (creates the task's benchmark)",
    ("path", "benchmark", "model"), read,
    path_help="a <date>_samples_<task>.jsonl file, or a folder of them (its <date>_results.json beside each)"))
