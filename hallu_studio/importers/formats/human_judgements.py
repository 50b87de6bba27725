"""``--format human-judgements``: people's judgements of model outputs from outside studies (HaELM,
M-HalDetect, FaithScore, IIW-400, or the generic human-judgement JSONL)."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..human import read_human_judgements

    yield read_human_judgements(request.path)


FORMAT = register(ImportFormat("human-judgements", "people's judgements of model outputs (haelm, mhaldetect, "
                                                   "faithscore, iiw400 folders, or generic JSONL)", ("path",), read,
                               path_help="a study's folder or a generic human-judgement JSONL"))
