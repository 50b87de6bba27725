"""``--format lmms-eval``: recorded responses of lmms-eval (VLMEvalKit's format is ``formats/vlmevalkit.py``)."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def _known(request: ImportRequest, stored: StoredCorpus, fmt: str) -> set[str]:
    if not request.benchmark:
        raise ValueError(f"--format {fmt} needs --benchmark NAME (the benchmark the responses answer)")
    name = request.benchmark.split("/")[0]
    if name not in stored.benchmark_names():
        from ...names import unknown_name

        raise ValueError(unknown_name("benchmark", name, stored.benchmark_names(), listing="the store holds"))
    known = stored.sample_ids(name)
    if not known:
        raise ValueError(f"the store holds no samples of benchmark {name!r}; import it first")
    return known


def read_lmms(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..toolkits import read_lmms_eval

    parsed = read_lmms_eval(request.path, _known(request, stored, "lmms-eval"), benchmark=request.benchmark,
                            model=request.model)
    parsed.name = request.path.name
    yield parsed


LMMS_EVAL = register(ImportFormat("lmms-eval", "lmms-eval --log_samples JSONL (responses to a stored benchmark)",
                                  ("path", "benchmark", "model"), read_lmms))
