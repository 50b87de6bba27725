"""Human judgements made elsewhere (published human studies, crowd tasks), read as ``ParsedHumanStudy``.

``read_human_judgements(path)`` tells the study from its files and reads it:

| study | detected by | reader |
|---|---|---|
| HaELM | ``eval_data.jsonl`` | ``haelm.read_haelm`` |
| M-HalDetect (MHALO subset) | ``processed_mhal_dataset.json`` | ``mhaldetect.read_mhaldetect`` |
| FaithScore | ``annotation.jsonl`` with ``coco_objects_for_these_images.json`` beside it | ``faithscore.read_faithscore`` |
| IIW-400 | ``data.jsonl`` whose lines hold ``image/key`` and ``IIW`` | ``iiw400.read_iiw400`` |
| generic | any ``.jsonl`` whose first line has ``source`` and a judgement | ``generic.read_generic_judgements`` |

A path may be the study's folder or its data file. Writing to a store:
``pipelines.importing.import_format(store, "human-judgements", ImportRequest(path=...))`` (what
``hallu-studio import --format human-judgements PATH`` runs).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from ..reading import FatalImportError
from .base import ParsedHumanStudy
from .faithscore import read_faithscore
from .generic import looks_generic, read_generic_judgements
from .haelm import read_haelm
from .iiw400 import read_iiw400
from .mhaldetect import read_mhaldetect

__all__ = ["STUDY_READERS", "ParsedHumanStudy", "detect_study", "read_human_judgements"]

STUDY_READERS: dict[str, Callable[[Path], ParsedHumanStudy]] = {
    "haelm": read_haelm,
    "mhaldetect": read_mhaldetect,
    "faithscore": read_faithscore,
    "iiw400": read_iiw400,
    "generic": read_generic_judgements,
}
# The file each study is told by, in a folder.
_DATA_FILES: dict[str, str] = {"haelm": "eval_data.jsonl", "mhaldetect": "processed_mhal_dataset.json",
                               "faithscore": "annotation.jsonl", "iiw400": "data.jsonl"}


def _first_record(path: Path) -> dict | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    return record if isinstance(record, dict) else None
    except (OSError, json.JSONDecodeError):
        return None
    return None


def _study_of_file(path: Path) -> str | None:
    if path.name == _DATA_FILES["mhaldetect"]:
        return "mhaldetect"
    if path.suffix != ".jsonl":
        return None
    record = _first_record(path) or {}
    if looks_generic(record):
        return "generic"
    if path.name == _DATA_FILES["haelm"] or {"instruction", "output"} <= set(record):
        return "haelm"
    if "image/key" in record and "IIW" in record:
        return "iiw400"
    if {"id", "answer", "stage 2"} <= set(record):
        return "faithscore"
    return None


def detect_study(path: str | os.PathLike[str]) -> tuple[str, Path]:
    """``(study, data file)`` for a study's folder or file; FatalImportError saying what was looked for."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p} does not exist")
    if p.is_dir():
        found = [(study, p / name) for study, name in _DATA_FILES.items() if (p / name).is_file()]
        found = [(study, f) for study, f in found if _study_of_file(f) == study]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise FatalImportError(f"{p}: holds the files of several studies ({', '.join(s for s, _ in found)}); "
                                   "give the data file")
        raise FatalImportError(f"{p}: no human-judgement data file found (looked for "
                               f"{', '.join(sorted(set(_DATA_FILES.values())))}); give a generic JSONL file instead")
    study = _study_of_file(p)
    if study is None:
        raise FatalImportError(f"{p.name}: not a known human study and not a generic human-judgement JSONL "
                               "(its first line needs 'source' and a judgement: label, rating, spans, facts or "
                               "comparisons; docs/formats.md)")
    return study, p


def read_human_judgements(path: str | os.PathLike[str]) -> ParsedHumanStudy:
    """Read a human study's folder or file (see the module docstring), without touching any store."""
    study, data_file = detect_study(path)
    return STUDY_READERS[study](data_file)
