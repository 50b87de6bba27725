"""``--format mme-eval-tool``: MME's eval-tool answer files (``<subtask>.txt``), the questions and one model's answers."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..mme_eval_tool import read_mme_eval_tool

    yield from read_mme_eval_tool(request.path, stored, benchmark=request.benchmark, model=request.model)


FORMAT = register(ImportFormat(
    "mme-eval-tool", "MME's eval-tool answer files <subtask>.txt (image, question, gold, answer per line): the "
                     "questions and the model's answers", ("path", "benchmark", "model"), read,
    path_help="the folder of MME eval-tool <subtask>.txt files"))
