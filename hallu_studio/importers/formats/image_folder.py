"""``--format image-folder``: a folder of one's own images as a benchmark, with the responses to them if any.

``hallu-studio import --format image-folder DIR [--benchmark NAME] [--responses FILE] [--model NAME]``

* **The images**: every image file under ``DIR`` (``.jpg .jpeg .png .webp .bmp .gif``, subfolders included), each
  read and validated (``images.read_image``: a path escaping ``DIR``, a file too large, a decompression bomb or a
  corrupt file is refused, naming the file) and stored under its sha256. Each becomes one sample of the caption
  task ("describe the image": ``run`` asks the default caption prompt), id ``<benchmark>/<path under DIR>``, with
  no reference: its scope reads "reference: none", and the metrics that read a reference say they do not apply
  (Tri-HE and EMD are not run on it; HalFscore, CHAIR and Evaluate-by-Edit leave it undefined and say why).
  The benchmark is ``--benchmark``, else the folder's name.
* **The responses** (``--responses FILE``, optional): a JSONL file of ``{"image", "response", "model"?}`` or a CSV
  with those columns. ``image`` names a file of the folder: its path under ``DIR``, or its file name where one
  file has it. ``model`` is the row's, else ``--model``. Each (model, image) once. One ``recorded`` run per
  model. A row that names no image of the folder, lacks a response or a model, or repeats a (model, image) is
  an error naming the file, the row and the reason; the other rows go through.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path
from typing import Any, Iterator

from ...images import IMAGE_SUFFIXES, ImageRejected, read_image
from ...model import Benchmark, Response, Sample
from ..base import ImportProblem, ParsedBenchmark, ParsedResponses
from ..reading import FatalImportError, iter_jsonl
from ..recorded import RecordedRuns
from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register

NAME = "image-folder"
RESPONSE_SUFFIXES = (".jsonl", ".csv")


def benchmark_name(folder: Path, given: str | None) -> str:
    """``--benchmark``, else the folder's name made an id (lower case; letters, digits, ``-`` and ``_``).

    >>> benchmark_name(Path("/data/My Photos"), None), benchmark_name(Path("x"), "trip-2024")
    ('my-photos', 'trip-2024')
    """
    name = given if given is not None else re.sub(r"[^a-z0-9_-]+", "-", folder.resolve().name.lower()).strip("-")
    if not name or "/" in name:
        raise FatalImportError(f"benchmark name {name!r}: give --benchmark NAME (no '/')")
    return name


def image_paths(folder: Path) -> list[str]:
    """The image files under ``folder`` (subfolders too), as sorted POSIX paths relative to it."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.lower().endswith(IMAGE_SUFFIXES) and not name.startswith("."):
                out.append(Path(root, name).relative_to(folder).as_posix())
    return sorted(out)


def read_images(folder: Path, benchmark: str) -> ParsedBenchmark:
    """One sample per readable image of ``folder``; an image refused is a problem naming it, not a sample."""
    if not folder.is_dir():
        raise FatalImportError(f"{folder}: --format {NAME} reads a folder of images")
    paths = image_paths(folder)
    if not paths:
        raise FatalImportError(f"{folder}: no image files ({' '.join(IMAGE_SUFFIXES)}) in the folder")
    parsed = ParsedBenchmark(Benchmark(benchmark, description=f"the images of {folder.name}", source=str(folder),
                                       meta={"format": NAME, "reference": "none"}))
    for rel in paths:
        try:
            image = read_image(rel, folder)
        except ImageRejected as exc:
            parsed.problems.append(ImportProblem(f"{folder.name}/{rel}", str(exc).removeprefix(f"{rel}: ")))
            continue
        parsed.images.setdefault(image.sha256, image)
        parsed.samples.append(Sample(id=f"{benchmark}/{rel}", benchmark=benchmark, image_key=rel, task="caption",
                                     image_sha256=image.sha256, meta={"file": rel}))
    return parsed


def _rows(path: Path, problems: list[ImportProblem]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, row)`` for each row of a JSONL or CSV file; ``where`` names the file and the line or row."""
    if path.suffix.lower() == ".jsonl":
        for line, record in iter_jsonl(path, problems):
            yield f"{path.name} line {line}", record
        return
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"image", "response"} - set(reader.fieldnames or [])
        if missing:
            raise FatalImportError(f"{path.name}: the CSV has no {' or '.join(sorted(missing))} column (its columns: "
                                   f"{', '.join(reader.fieldnames or []) or 'none'})")
        for n, row in enumerate(reader, start=1):  # row 1: the first under the header
            yield f"{path.name} row {n}", row


class _ImageNames:
    """A response row's ``image`` -> the sample it answers: a path under the folder, or a file name one file has."""

    def __init__(self, samples: list[Sample]) -> None:
        self.by_path = {s.image_key: s.id for s in samples}
        self.by_name: dict[str, list[str]] = {}
        for s in samples:
            self.by_name.setdefault(Path(s.image_key).name, []).append(s.image_key)

    def sample_id(self, image: str) -> str:
        key = image.strip().replace("\\", "/").removeprefix("./")
        if key in self.by_path:
            return self.by_path[key]
        paths = self.by_name.get(Path(key).name, []) if "/" not in key else []
        if len(paths) == 1:
            return self.by_path[paths[0]]
        if len(paths) > 1:
            raise ValueError(f"image {image!r} names {len(paths)} files ({', '.join(paths[:3])}): give its path "
                             "under the folder")
        raise ValueError(f"image {image!r} is not an image of the folder")


def read_responses(path: Path, samples: list[Sample], benchmark: str, model: str | None) -> ParsedResponses:
    """The responses of ``path`` matched to the folder's ``samples`` (see the module docstring)."""
    if path.suffix.lower() not in RESPONSE_SUFFIXES:
        raise FatalImportError(f"{path.name}: --responses reads a .jsonl or .csv file")
    out = ParsedResponses(name=path.name)
    names, recorded = _ImageNames(samples), RecordedRuns(f"{NAME}:{path.name}")
    first: dict[tuple[str, str], str] = {}
    for where, row in _rows(path, out.problems):
        try:
            image, text = row.get("image"), row.get("response")
            if not isinstance(image, str) or not image.strip():
                raise ValueError("missing field 'image' (the image's file name or path under the folder)")
            if not isinstance(text, str):
                raise ValueError("missing field 'response' (a string)")
            name = str(row.get("model") or model or "").strip()
            if not name:
                raise ValueError("no model: give a 'model' field or --model")
            sid = names.sample_id(image)
            if (name, sid) in first:
                raise ValueError(f"a second response of {name} to {image!r} (the first: {first[name, sid]})")
            first[name, sid] = where
            run = recorded.run_for(benchmark, name)
            out.responses.append(Response(run.id, sid, text))
        except ValueError as exc:
            out.problems.append(ImportProblem(where, str(exc)))
    out.runs = recorded.runs()
    if not out.responses and not out.problems:
        raise FatalImportError(f"{path.name}: no responses")
    return out


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    folder = request.path
    assert folder is not None  # the registry refuses the format without a PATH
    benchmark = benchmark_name(folder, request.benchmark)
    if request.model is not None and request.responses is None:
        raise ValueError("--model names the model of --responses FILE, and no responses file was given")
    parsed = read_images(folder, benchmark)
    yield parsed
    if request.responses is not None:
        yield read_responses(request.responses, parsed.samples, benchmark, request.model)


FORMAT = register(ImportFormat(
    NAME, "a folder of one's own images (no reference), with responses to them (--responses JSONL/CSV) if any",
    ("path", "benchmark", "model", "responses"), read,
    path_help="the folder of images (subfolders too)"))
