"""ImageInWords IIW-400 (Garg et al. 2024, ``datasets/IIW-400/data.jsonl``).

One line per DOCCI image: ``image/key``, ``IIW`` (a human hyper-detailed description), ``objects`` (human
object annotations: ``label``, ``description``, ``normalized_coords``), and on 100 images ``IIW-P5B`` (a
PaLI-5B description) with ``iiw-human-sxs-iiw-p5b``: 5-point side-by-side ratings of the two descriptions,
one per aspect (``metrics/Hallucination``, ``metrics/Comprehensiveness`` ...), worded "IIW-Human is
substantially better" ... "Neutral" ... "IIW-P5B is substantially better".

What the import makes of it:

- one ``caption`` sample per image (``iiw400/<image key>``, all 400). The reference is one dense description
  (``reference_text`` a string, read as DCI's: what it does not name is not in the picture, attributes and
  relations it does not give are unverifiable; ``reference_scope.Scope``): the human hyper-detailed description,
  then each annotated object's "<label>. <description>" as a paragraph of it (the annotators labelled the
  salient objects, not every object, and their labels are free-form, so they are not an object list
  complete within a vocabulary). The objects as annotated (label, description, box) are kept in
  ``meta["objects"]``;
- each ``IIW-P5B`` description a recorded response of model ``IIW-P5B``;
- one ``comparison`` event per rated aspect, against ``other = "IIW-Human"`` with the aspect in lower case
  (``hallucination``, ``comprehensiveness`` ...), score +2 / +1 when the P5B description is substantially /
  marginally better, 0 when neutral, -1 / -2 when the human one is; the wording is kept in ``scale``.
  The rating is comparative: it says how the model's description compares with a person's, not how much
  it hallucinates in absolute terms. Annotator ``iiw400``.

``iiw-human-sxs-gpt4v`` ratings are left out with a warning: the GPT-4V descriptions they compare are not
in the file.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ...model import Benchmark, Sample
from ..reading import iter_jsonl
from .base import ParsedHumanStudy, StudyBuilder, comparison, study_files

SOURCE = "iiw400"
DATA_FILE = "data.jsonl"
HUMAN, MODEL = "IIW-Human", "IIW-P5B"
RATINGS_KEY = "iiw-human-sxs-iiw-p5b"
UNREADABLE_RATINGS_KEY = "iiw-human-sxs-gpt4v"
_BETTER = re.compile(r"^(.+?) is (substantially|marginally) better$", re.I)
_STEP = {"substantially": 2, "marginally": 1}


def side_by_side_score(wording: str, response: str = MODEL, other: str = HUMAN) -> int:
    """The wording of a 5-point side-by-side rating as a score for ``response`` against ``other``.

    >>> [side_by_side_score(w) for w in ("IIW-Human is substantially better", "Neutral", "IIW-P5B is marginally better")]
    [-2, 0, 1]
    """
    text = " ".join(str(wording).split())
    if text.lower() == "neutral":
        return 0
    found = _BETTER.match(text)
    if not found or found.group(1) not in (response, other):
        raise ValueError(f"unknown side-by-side rating {wording!r} (expected '<{response} or {other}> is "
                         "substantially/marginally better' or 'Neutral')")
    step = _STEP[found.group(2).lower()]
    return step if found.group(1) == response else -step


def aspect_name(key: str) -> str:
    """``"metrics/Human Like"`` -> ``"human like"``."""
    return " ".join(str(key).split("/", 1)[-1].split()).lower()


def _references(record: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    description = str(record.get("IIW") or "").strip()
    objects = [o for o in record.get("objects") or [] if isinstance(o, dict)]
    texts = [description] if description else []
    for o in objects:
        label, text = str(o.get("label") or "").strip(), str(o.get("description") or "").strip()
        if label or text:
            texts.append(f"{label}. {text}" if label and text else label or text)
    kept = [{"label": o.get("label"), "description": o.get("description"),
             "normalized_coords": o.get("normalized_coords")} for o in objects]
    return texts, kept


def read_iiw400(path: str | os.PathLike[str], source: str = SOURCE) -> ParsedHumanStudy:
    """IIW-400's ``data.jsonl`` (or its folder) as a human study (see the module docstring)."""
    p, _ = study_files(path, DATA_FILE)
    builder = StudyBuilder(source, Benchmark(source, "IIW-400: human hyper-detailed descriptions, and PaLI-5B's "
                                                     "rated side by side against them", str(p)), f"human:{source}")
    unreadable = 0
    for lineno, record in iter_jsonl(p, builder.study.problems):
        where = f"{p.name} line {lineno}"
        key = str(record.get("image/key") or "").strip()
        if not key:
            builder.sample_problem(where, "missing 'image/key'")
            continue
        where = f"{p.name} line {lineno} ({key})"
        references, objects = _references(record)
        if not references:
            builder.sample_problem(where, "no human description ('IIW') and no annotated objects")
            continue
        sample = builder.sample(Sample(id=f"{builder.name}/{key}", benchmark=builder.name, image_key=key,
                                       task="caption", reference_text="\n\n".join(references), reference_kind="dense",
                                       meta={"objects": objects, "reference_text": "IIW description, then one "
                                             "'<label>. <description>' paragraph per annotated object"}))
        unreadable += bool(record.get(UNREADABLE_RATINGS_KEY))
        text, ratings = record.get(MODEL), record.get(RATINGS_KEY)
        if not isinstance(text, str) or not text.strip():
            if ratings:
                builder.problem(where, f"{RATINGS_KEY} ratings but no {MODEL} description to attach them to")
            continue
        response = builder.response(sample, MODEL, text.strip())
        if not isinstance(ratings, dict):
            continue
        for metric, wording in ratings.items():
            try:
                value, target = comparison(HUMAN, aspect_name(metric), side_by_side_score(wording), str(wording))
                builder.event(source, "comparison", response.id, value, target, meta={"line": lineno})
            except ValueError as exc:
                builder.problem(f"{where} {metric}", str(exc))
    if unreadable:
        builder.problem(p.name, f"{unreadable} {UNREADABLE_RATINGS_KEY} ratings left out: the GPT-4V descriptions "
                                "they compare are not in the file", fatal=False)
    return builder.finish()
