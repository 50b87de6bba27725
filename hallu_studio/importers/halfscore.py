"""HalFscore / DCI: dense gold captions and models' recorded captions.

* ``annotation.json``: ``[{image, caption}]`` -> one ``caption`` sample per image, id
  ``halfscore/<image file stem>``, the caption as ``reference_text``; images by file
  name in an optional folder (missing ones are non-fatal problems).
* ``<model>_captions.jsonl``: ``{image, caption}`` per line -> recorded responses of
  model ``<model>`` (or ``--model``), matched to samples by image stem. ``caption`` may be
  a list of strings (joined with a blank line) and may carry chat-template text, which
  is stripped (:func:`strip_chat_template`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..images import ImageFolder
from ..model import Benchmark, Response, Sample
from .base import ImportProblem, ParsedBenchmark, ParsedResponses
from .reading import FatalImportError, attach_images, iter_jsonl, read_json, require_str
from .recorded import RecordedRuns, SampleIdResolver

BENCHMARK = "halfscore"
CAPTIONS_SUFFIX = "_captions.jsonl"

# Everything up to the LAST assistant marker is the prompt echoed back by the model.
_ASSISTANT_MARKERS = re.compile(r"(?:ASSISTANT:|<\|im_start\|>\s*assistant|\[/INST\]|<\|assistant\|>|"
                                r"<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>)", re.I)
_SPECIAL_TOKENS = re.compile(r"</s>|<s>|<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>|<\|end\|>|<image>")


def strip_chat_template(text: str) -> str:
    """The model's answer without the echoed prompt and special tokens.

    >>> strip_chat_template("USER: <image>\\nDescribe the image. ASSISTANT: A red bus.</s>")
    'A red bus.'
    >>> strip_chat_template("<|im_start|>user\\nDescribe<|im_end|><|im_start|>assistant\\nTwo cats.<|im_end|>")
    'Two cats.'
    >>> strip_chat_template("[INST] <image> Describe [/INST] A dog.")
    'A dog.'
    """
    found = list(_ASSISTANT_MARKERS.finditer(text))
    if found:
        text = text[found[-1].end():]
    return _SPECIAL_TOKENS.sub("", text).strip()


def image_stem(name: str) -> str:
    return os.path.splitext(os.path.basename(name.strip()))[0]


def read_halfscore_annotations(path: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None,
                               benchmark: str = BENCHMARK) -> ParsedBenchmark:
    p = Path(path)
    if p.is_dir():
        p = p / "annotation.json"
    data = read_json(p, list, "a list of {image, caption}")
    parsed = ParsedBenchmark(Benchmark(benchmark, "HalFscore: dense captions (DCI)", str(p)))
    seen: set[str] = set()
    for i, rec in enumerate(data):
        where = f"{p.name} record {i}"
        try:
            if not isinstance(rec, dict):
                raise ValueError(f"expected an object, got {type(rec).__name__}")
            image, caption = require_str(rec, "image", where), require_str(rec, "caption", where)
            stem = image_stem(image)
            if stem in seen:
                raise ValueError(f"image {image} appears twice")
            seen.add(stem)
            parsed.samples.append(Sample(id=f"{benchmark}/{stem}", benchmark=benchmark, image_key=image.strip(),
                                         task="caption", reference_text=caption.strip(), reference_kind="dense"))
        except ValueError as exc:
            parsed.problems.append(ImportProblem(where, str(exc).removeprefix(f"{where}: ")))
    attach_images(parsed, ImageFolder(images_dir, depth=0) if images_dir is not None else None, p.name)
    return parsed


def model_from_filename(path: str | os.PathLike[str]) -> str | None:
    """``llava-1.5-7b_captions.jsonl`` -> ``llava-1.5-7b``."""
    name = Path(path).name
    if name.endswith(CAPTIONS_SUFFIX) and len(name) > len(CAPTIONS_SUFFIX):
        return name[: -len(CAPTIONS_SUFFIX)]
    return None


def read_halfscore_captions(path: str | os.PathLike[str], known_ids: set[str], *, model: str | None = None,
                            benchmark: str = BENCHMARK) -> ParsedResponses:
    p = Path(path)
    name = model or model_from_filename(p)
    if not name:
        raise FatalImportError(f"{p.name}: cannot tell the model from the file name (expected "
                               f"<model>{CAPTIONS_SUFFIX}); give --model")
    out = ParsedResponses()
    run = RecordedRuns(f"halfscore:{p.name}").run_for(benchmark, name)
    resolver = SampleIdResolver(benchmark, known_ids)
    for lineno, rec in iter_jsonl(p, out.problems):
        where = f"{p.name} line {lineno}"
        try:
            image = require_str(rec, "image", where)
            raw = rec.get("caption")
            parts = raw if isinstance(raw, list) else [raw]
            if not parts or not all(isinstance(x, str) for x in parts):
                raise ValueError("caption must be a string or a list of strings")
            text = "\n\n".join(t for t in (strip_chat_template(x) for x in parts) if t)
            if not text:
                raise ValueError("empty caption")
            sid = resolver.resolve([f"{benchmark}/{image_stem(image)}"])
            out.responses.append(Response(run.id, sid, text))
        except ValueError as exc:
            out.problems.append(ImportProblem(where, str(exc).removeprefix(f"{where}: ")))
    out.runs = [run] if out.responses else []
    return out
