"""HaELM's manually labelled validation set (Wang et al. 2023, ``data/eval_data.jsonl``).

Each line is ``{"instruction", "output"}`` with the instruction
``"reference captions:\\n<one COCO caption>\\nour caption:\\n<LVLM caption> Is our caption accurate?\\n"``
and the output ``"yes"`` (people judged the caption accurate) or ``"no"`` (it hallucinates). The release
repeats each LVLM caption on consecutive lines, once per reference caption of its image (five), with the
same label on each; it names neither the image nor the model.

What the import makes of it:

- one ``caption`` sample per image, the image being the set of reference captions (id
  ``haelm/refs-<12 hex of their content hash>``), with the captions as ``reference_text`` (a list);
- each LVLM caption a recorded response. The models are not named: the n-th caption of an image (in file
  order) is answered by model ``haelm-lvlm-<n>`` (the release lists three captions per image, in three
  passes over the same 100 images);
- one ``label`` event per caption, ``accurate`` for "yes", ``hallucinated`` for "no", by annotator
  ``haelm`` (the people are not identified), meta ``{"lines": [first, last]}``.

Lines of one caption that disagree on the label, or a line that does not follow the template, are
problems naming the lines; the other captions still go through.

>>> parse_instruction("reference captions:\\nA dog.\\nour caption:\\nA cat sits.Is our caption accurate?\\n")
('A dog.', 'A cat sits.')
"""

from __future__ import annotations

import os

from ...model import Benchmark, Sample, content_key
from ..reading import iter_jsonl
from .base import ParsedHumanStudy, StudyBuilder, study_files

SOURCE = "haelm"
DATA_FILE = "eval_data.jsonl"
MODEL_PREFIX = "haelm-lvlm-"
LABELS = {"yes": "accurate", "no": "hallucinated"}
_HEAD, _MIDDLE, _TAIL = "reference captions:\n", "\nour caption:\n", "Is our caption accurate?"


def parse_instruction(text: str) -> tuple[str, str]:
    """``(reference caption, judged caption)`` of one instruction; ValueError when it does not fit the template."""
    if not isinstance(text, str) or not text.startswith(_HEAD) or _MIDDLE not in text:
        raise ValueError("instruction does not start 'reference captions:' ... 'our caption:'")
    reference, _, rest = text[len(_HEAD):].partition(_MIDDLE)
    rest = rest.rstrip()
    if not rest.endswith(_TAIL):
        raise ValueError(f"instruction does not end with {_TAIL!r}")
    caption = rest[:-len(_TAIL)].strip()
    if not reference.strip() or not caption:
        raise ValueError("instruction has an empty reference or caption")
    return reference.strip(), caption


def read_haelm(path: str | os.PathLike[str], source: str = SOURCE) -> ParsedHumanStudy:
    """HaELM's ``eval_data.jsonl`` (or its folder) as a human study (see the module docstring)."""
    p, _ = study_files(path, DATA_FILE)
    builder = StudyBuilder(source, Benchmark(source, "HaELM: LVLM captions people judged accurate or not, "
                                                     "with COCO reference captions", str(p)), f"human:{source}")
    # Consecutive lines with the same caption are one judged caption: [(first line, last line, refs, caption, outputs)]
    groups: list[tuple[int, int, list[str], str, list[str]]] = []
    for lineno, record in iter_jsonl(p, builder.study.problems):
        where = f"{p.name} line {lineno}"
        try:
            reference, caption = parse_instruction(record.get("instruction"))  # type: ignore[arg-type]
            output = str(record.get("output") or "").strip().lower()
            if output not in LABELS:
                raise ValueError(f"output must be 'yes' or 'no', got {record.get('output')!r}")
        except ValueError as exc:
            builder.problem(where, str(exc))
            continue
        if groups and groups[-1][3] == caption and groups[-1][1] == lineno - 1:
            first, _, refs, _, outputs = groups[-1]
            groups[-1] = (first, lineno, refs + [reference], caption, outputs + [output])
        else:
            groups.append((lineno, lineno, [reference], caption, [output]))
    captions_of_image: dict[str, int] = {}
    for first, last, refs, caption, outputs in groups:
        where = f"{p.name} lines {first}-{last}"
        references = list(dict.fromkeys(refs))
        key = "refs-" + content_key(sorted(references))[:12]
        # Counted before any check, so a bad caption does not shift the model numbers of the image's next ones.
        captions_of_image[key] = captions_of_image.get(key, 0) + 1
        model = f"{MODEL_PREFIX}{captions_of_image[key]}"
        if len(set(outputs)) != 1:
            builder.problem(where, f"the lines of one caption disagree on the label ({', '.join(outputs)})")
            continue
        try:
            sample = builder.sample(Sample(id=f"{builder.name}/{key}", benchmark=builder.name, image_key=key,
                                           task="caption", reference_text=references, reference_kind="captions"))
        except ValueError as exc:
            builder.problem(where, str(exc))
            continue
        response = builder.response(sample, model, caption, {
            "note": "HaELM's release does not name its models: the n-th caption of each image in file order"})
        builder.event(source, "label", response.id, {"label": LABELS[outputs[0]]}, meta={"lines": [first, last]})
    return builder.finish()
