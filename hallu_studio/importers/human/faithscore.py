"""FaithScore's human annotation (Jing et al. 2023, ``annotation.jsonl``).

One line per LVLM answer: ``{"id": "<zero-padded COCO val2014 id>", "answer", "stage 1": {sub-sentence: 0/1},
"stage 2": {atomic fact: 0/1}}``. ``coco_objects_for_these_images.json`` beside it holds each image's
COCO-80 object set.

**Label direction.** The release's README says a stage-2 ``1`` means the fact contains a hallucination; in
the data ``1`` means the fact is correct ("There is a skateboard." on an image with a skateboard is 1). The
reader does not trust either: ``label_direction`` reads the facts of the form "There is a/an <X>." whose X
is a COCO-80 category and checks, under each reading, how often the label agrees with the image's object
set (X listed: present; X a category not listed: absent). The reading that agrees more is used, and the
import reports the evidence as a warning; when fewer than ``MIN_DIRECTION_EVIDENCE`` such facts exist or
neither reading agrees on at least ``MIN_DIRECTION_AGREEMENT`` of them, the import stops with that evidence.

**Models and questions.** The release names neither. Its lines list each image's answers in passes of
consecutive lines (two passes of three: LLaVA-Bench's conversation, detail and complex-reasoning questions,
by their wording); the k-th pass over an image is taken as model ``faithscore-lvlm-<k>``, the n-th answer in
a pass as the image's n-th question (sample ``faithscore/<image id>/q<n>``, task ``vqa``, no question text).

Each stage-2 fact becomes a ``fact_label`` event (target ``fact:<i>`` in the file's order; ``accurate`` /
``hallucinated``), annotator ``faithscore``. Stage 1 (descriptive vs analytical sub-sentences) is not a
hallucination label and is not imported.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...model import Benchmark, Sample
from ..reading import FatalImportError, iter_jsonl
from .base import (COCO_OBJECTS_FILE, ParsedHumanStudy, StudyBuilder, coco_image_id, fact_label, read_coco_objects,
                   study_files)

SOURCE = "faithscore"
DATA_FILE = "annotation.jsonl"
MODEL_PREFIX = "faithscore-lvlm-"
FACTS_KEY = "stage 2"
MIN_DIRECTION_EVIDENCE = 20
MIN_DIRECTION_AGREEMENT = 0.8
_EXISTENCE = re.compile(r"^there (?:is|are) (?:a |an |some |the )?(.+?)\.?$", re.I)


@dataclass(frozen=True)
class LabelDirection:
    """Which stage-2 label value means a correct fact, and the evidence it was read from."""

    correct_value: int  # 1 or 0
    facts: int  # "There is a X." facts with X a COCO-80 category, on an image with an object set
    agreeing: int  # of those, how many agree with the object set under this reading

    def describe(self) -> str:
        return (f"stage-2 label {self.correct_value} read as 'correct': on {self.agreeing} of {self.facts} "
                f"'There is a <COCO object>.' facts it agrees with the image's COCO object set")


def existence_category(fact: str) -> str | None:
    """The COCO-80 category a "There is a X." fact claims, or None.

    >>> existence_category("There is a skateboarder."), existence_category("There is a ramp.")
    ('person', None)
    """
    from ...lexicon.vocabularies import vocabulary

    found = _EXISTENCE.match(fact.strip())
    return vocabulary("coco-80").category_of(found.group(1)) if found else None


def label_direction(facts: Sequence[tuple[str, str, int]], objects: Mapping[str, Sequence[str]]) -> LabelDirection:
    """The reading of 0/1 under which ``(image id, fact, label)`` agree best with the images' COCO object sets.

    >>> objects = {"1": ["dog"]}
    >>> facts = [("1", "There is a dog.", 1), ("1", "There is a cat.", 0), ("1", "There is a dog.", 1)]
    >>> d = label_direction(facts * 7, objects); d.correct_value, d.agreeing, d.facts
    (1, 21, 21)
    """
    checkable = []
    for image, fact, label in facts:
        category = existence_category(fact) if image in objects else None
        if category is not None:
            checkable.append((category in objects[image], label))
    agree_one = sum(1 for present, label in checkable if present == (label == 1))
    best = LabelDirection(1, len(checkable), agree_one) if agree_one * 2 >= len(checkable) else \
        LabelDirection(0, len(checkable), len(checkable) - agree_one)
    if best.facts < MIN_DIRECTION_EVIDENCE or best.agreeing < MIN_DIRECTION_AGREEMENT * best.facts:
        raise FatalImportError(
            f"cannot tell what FaithScore's labels mean from the data: under the better reading only "
            f"{best.agreeing} of {best.facts} 'There is a <COCO object>.' facts agree with the images' object sets "
            f"(need at least {MIN_DIRECTION_EVIDENCE} facts and {MIN_DIRECTION_AGREEMENT:.0%} agreement)")
    return best


def read_faithscore(path: str | os.PathLike[str], objects_path: str | os.PathLike[str] | None = None,
                    source: str = SOURCE) -> ParsedHumanStudy:
    """FaithScore's ``annotation.jsonl`` (or its folder, with the COCO object file) as a human study."""
    p, folder = study_files(path, DATA_FILE)
    objects_file = Path(objects_path) if objects_path is not None else folder / COCO_OBJECTS_FILE
    if not objects_file.is_file():
        raise FatalImportError(f"{objects_file}: FaithScore's COCO object sets are needed (they settle the label "
                               "direction and are the samples' references)")
    objects = read_coco_objects(objects_file)
    builder = StudyBuilder(source, Benchmark(source, "FaithScore: LVLM answers with atomic facts people labelled",
                                             str(p)), f"human:{source}")
    records: list[tuple[str, int, str, dict[str, Any]]] = []  # (where, line, image, record)
    for lineno, record in iter_jsonl(p, builder.study.problems):
        where = f"{p.name} line {lineno}"
        try:
            image = coco_image_id(str(record.get("id") or ""))
            answer = record.get("answer")
            facts = record.get(FACTS_KEY)
            if not isinstance(answer, str) or not answer.strip():
                raise ValueError("needs a non-empty 'answer'")
            if not isinstance(facts, dict) or not all(v in (0, 1) and not isinstance(v, bool)
                                                      for v in facts.values()):
                raise ValueError(f"'{FACTS_KEY}' must map each atomic fact to 0 or 1")
        except ValueError as exc:
            builder.problem(where, str(exc))
            continue
        records.append((where, lineno, image, record))
    direction = label_direction([(image, fact, label) for _, _, image, r in records
                                 for fact, label in r[FACTS_KEY].items()], objects)
    builder.problem(p.name, direction.describe(), fatal=False)
    builder.study.benchmark.benchmark.meta = {"label_direction": direction.describe()}
    passes: dict[str, int] = {}
    position, previous = 0, None
    for where, lineno, image, record in records:
        if image != previous:
            passes[image] = passes.get(image, 0) + 1
            position, previous = 0, image
        else:
            position += 1
        listed = objects.get(image)
        if listed is None:
            builder.sample_problem(where, f"COCO image {image} is not in {objects_file.name}: no reference objects",
                                   fatal=False)
        sample = builder.sample(Sample(
            id=f"{builder.name}/{image}/q{position}", benchmark=builder.name, image_key=image, task="vqa",
            reference_objects=listed, reference_vocabulary="coco-80" if listed is not None else None,
            meta={"question": f"not in the release: the image's question {position} (its answers' order)"}))
        try:
            response = builder.response(sample, f"{MODEL_PREFIX}{passes[image]}", record["answer"].strip(), {
                "note": "FaithScore's release does not name its models: the k-th pass of its lines over an image"})
        except ValueError as exc:
            builder.problem(where, str(exc))
            continue
        for i, (fact, label) in enumerate(record[FACTS_KEY].items()):
            if not fact.strip():
                builder.problem(f"{where} fact {i}", "empty fact text")
                continue
            value, target = fact_label(i, fact.strip(), "accurate" if label == direction.correct_value
                                       else "hallucinated")
            builder.event(source, "fact_label", response.id, value, target, meta={"line": lineno, "raw_label": label})
    return builder.finish()
