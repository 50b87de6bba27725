"""M-HalDetect (Gunjal et al. 2024) as re-packaged by MHALO: ``processed_mhal_dataset.json``.

A list of ``{id, image_path, prompt, test_solution, hallucination_spans: [{start, end, text}], ...}``: an
InstructBLIP detailed description of a COCO val2014 image (``test_solution``) and the character spans of it
that people marked INACCURATE. MHALO kept only those spans (ACCURATE, ANALYSIS and UNSURE labels were dropped,
overlapping spans merged) and re-balanced the rows 90 % with a span / 10 % without, drawing with
replacement: an ``id`` may repeat, and a repeat must be the same row. ``coco_objects_for_these_images.json``
beside it holds each image's COCO-80 object set.

What the import makes of it:

- one ``caption`` sample per description id (``mhaldetect/<id>``), image key the COCO image id, the prompt
  (without ``<image>``) as ``question``, the image's COCO-80 objects as ``reference_objects`` with
  ``reference_vocabulary = "coco-80"`` (an image missing from the object file: a warning, no object list);
- the description a recorded response of model ``InstructBLIP``;
- one ``span_label`` event per marked span (label ``hallucinated``, its text in the value), and one ``label``
  event per description: ``hallucinated`` when it has a marked span, ``accurate`` when it has none (what the
  re-packaged set calls clean; unmarked text may still be analysis or unsure in the original labels);
  annotator ``mhaldetect``.

A span whose offsets fall outside the description, or whose text differs from the description's text at
those offsets, is a problem naming the row; the description and its other spans still go through.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ...model import Benchmark, Sample, canonical_json
from ..reading import read_json
from .base import (COCO_OBJECTS_FILE, ParsedHumanStudy, StudyBuilder, coco_image_id, read_coco_objects, span_label,
                   study_files)

SOURCE = "mhaldetect"
DATA_FILE = "processed_mhal_dataset.json"
MODEL = "InstructBLIP"
_IMAGE_TOKEN = re.compile(r"\s*<image>\s*")


def clean_prompt(prompt: Any) -> str | None:
    """The prompt without LLaVA-style ``<image>`` tokens, whitespace collapsed (None when empty).

    >>> clean_prompt("<image>\\nWhat are the key elements in this picture?")
    'What are the key elements in this picture?'
    """
    if not isinstance(prompt, str):
        return None
    text = " ".join(_IMAGE_TOKEN.sub(" ", prompt).split())
    return text or None


def read_mhaldetect(path: str | os.PathLike[str], objects_path: str | os.PathLike[str] | None = None,
                    source: str = SOURCE) -> ParsedHumanStudy:
    """The MHALO file (or its folder, which also holds the COCO object file) as a human study."""
    p, folder = study_files(path, DATA_FILE)
    rows = read_json(p, list, "a list of M-HalDetect rows")
    objects_file = Path(objects_path) if objects_path is not None else folder / COCO_OBJECTS_FILE
    objects = read_coco_objects(objects_file) if objects_file.is_file() else {}
    builder = StudyBuilder(source, Benchmark(source, "M-HalDetect (MHALO subset): InstructBLIP descriptions with "
                                                     "the spans people marked inaccurate", str(p)),
                           f"human:{source}")
    if not objects_file.is_file():
        builder.sample_problem(objects_file.name, "no COCO object file: samples have no reference objects",
                               fatal=False)
    seen: dict[str, str] = {}
    for index, row in enumerate(rows):
        where = f"{p.name} row {index}"
        if not isinstance(row, dict):
            builder.problem(where, f"expected an object, got {type(row).__name__}")
            continue
        rid, text = str(row.get("id") or "").strip(), row.get("test_solution")
        if not rid or not isinstance(text, str) or not text.strip():
            builder.problem(where, "needs an 'id' and a non-empty 'test_solution'")
            continue
        where = f"{p.name} row {index} ({rid})"
        if rid in seen:
            # The set was resampled with replacement: a repeat adds nothing, but must be the same row.
            if seen[rid] != canonical_json(row):
                builder.problem(where, f"id {rid} appears again with different content")
            continue
        seen[rid] = canonical_json(row)
        try:
            image = coco_image_id(str(row.get("image_path") or ""))
        except ValueError as exc:
            builder.problem(where, f"image_path: {exc}")
            continue
        spans = row.get("hallucination_spans") or []
        if not isinstance(spans, list):
            builder.problem(where, "hallucination_spans must be a list")
            continue
        if image not in objects and objects:
            builder.sample_problem(where, f"COCO image {image} is not in {objects_file.name}: no reference objects",
                                   fatal=False)
        listed = objects.get(image)
        sample = builder.sample(Sample(
            id=f"{builder.name}/{rid}", benchmark=builder.name, image_key=image, task="caption",
            question=clean_prompt(row.get("prompt")), reference_objects=listed,
            reference_vocabulary="coco-80" if listed is not None else None,
            meta={"image_file": str(row.get("image_path"))}))
        response = builder.response(sample, MODEL, text)
        marked = 0
        for k, span in enumerate(spans):
            try:
                start, end = int(span["start"]), int(span["end"])
                if not 0 <= start < end <= len(text):
                    raise ValueError(f"offsets {start}-{end} fall outside the description ({len(text)} characters)")
                quoted = span.get("text")
                if quoted is not None and text[start:end] != quoted:
                    raise ValueError(f"its text {str(quoted)[:40]!r} differs from the description at {start}-{end}")
                value, target = span_label(start, end, "hallucinated", text[start:end])
                builder.event(source, "span_label", response.id, value, target)
                marked += 1
            except (KeyError, TypeError, ValueError) as exc:
                builder.problem(f"{where} span {k}",
                                f"missing field {exc}" if isinstance(exc, KeyError) else str(exc))
        label = "hallucinated" if spans else "accurate"
        builder.event(source, "label", response.id, {"label": label},
                      meta={"from": "marked INACCURATE spans (none: clean in the re-packaged set)",
                            "spans": len(spans), "spans_imported": marked})
    return builder.finish()
