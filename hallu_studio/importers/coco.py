"""COCO's own annotation files: ``captions_<split>.json`` and ``instances_<split>.json`` (2014 and 2017).

Both are one JSON object ``{"info", "licenses", "images": [{id, file_name, ...}], "annotations": [...]}``;
a captions file's annotations are ``{id, image_id, caption}``, an instances file's
``{id, image_id, category_id, iscrowd, bbox, segmentation, area}`` with ``"categories": [{id, name,
supercategory}]``. PATH is one such file or a folder holding them; a folder's files are grouped by split,
and the two files of a split are read together into one benchmark.

One ``caption`` sample per image, id ``<benchmark>/<image id>`` (benchmark ``coco-<split>``, e.g.
``coco-val2014``; ``coco`` when the file name gives no split), ``image_key`` the image's ``file_name``:

* ``reference_text``: the image's captions, in annotation order (captions file);
* ``reference_objects``: the names of the categories its instance annotations have, each once, in the
  order first annotated; an image the instances file lists with no annotation gets ``[]`` (no object of
  the vocabulary is in it). ``reference_vocabulary``: ``"coco-80"`` when the file's categories are COCO's
  80 (by name), else the file's own category names;
* ``meta["instance_counts"]``: instances per category; ``meta["crowd_categories"]``: the categories with
  a crowd annotation (``iscrowd`` 1: one region for many instances, so their count is a lower bound);
* ``meta["image_source"] = "coco"`` unless an instances file names categories of its own (:func:`coco_sample`):
  CHAIR then reads the sample over COCO-80, captions only or not.

The files are read member by member (:func:`~.reading.iter_json_members`): an annotation is kept as the
few fields used and its polygons dropped, so a 160 MB instances file is never held whole.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..images import ImageFolder
from ..lexicon.vocabularies import COCO_80, IMAGE_SOURCE_VOCABULARIES
from ..model import Benchmark, Sample
from .base import ImportProblem, ParsedBenchmark
from .reading import FatalImportError, attach_images, iter_json_members

BENCHMARK = "coco"
KINDS = ("captions", "instances")
FILE_NAME = re.compile(r"^(?P<kind>captions|instances)_(?P<split>.+)\.json$")
COCO_FORMAT = "a COCO annotation file (a JSON object with 'images' and 'annotations' lists)"
_EXAMPLES = 5  # image ids named in an aggregated warning


def file_vocabulary(names: list[str]) -> str | list[str]:
    """What an object list drawn from these categories is complete for: ``"coco-80"`` when they are COCO's 80
    (by name, any order or case), else the names themselves.

    >>> file_vocabulary(list(reversed(COCO_80)))
    'coco-80'
    >>> file_vocabulary(["person", "dog"])
    ['person', 'dog']
    """
    if sorted(n.strip().lower() for n in names) == sorted(COCO_80):
        return "coco-80"
    return list(names)


def coco_sample(sample_id: str, benchmark: str, image_key: str, captions: Sequence[str] | None,
                objects: Sequence[str] | None = None, *, vocabulary: str | list[str] = "coco-80",
                meta: dict[str, Any] | None = None, **fields: Any) -> Sample:
    """A caption sample of a COCO image: the one place a COCO-based sample is made (this importer and the toolkits'
    COCO caption files, VLMEvalKit's ``COCO_VAL``, call it).

    ``captions``: the image's reference captions (``reference_text``); ``objects``: its instance categories, complete
    within ``vocabulary`` (``reference_objects``; None: no instances file). With COCO's 80 categories the sample is
    marked ``meta["image_source"] = "coco"``, so CHAIR reads it over COCO-80 by default, its ground truth the
    instances and the COCO-80 objects the captions mention (as published); the captions alone when there are no
    instances. The marker settles nothing else: the captions are short captions (``reference_kind = "captions"``),
    open-world for every other judge.

    >>> s = coco_sample("COCO_VAL/1", "COCO_VAL", "1", ["A man rides a horse.", "A rider on a brown horse."])
    >>> s.meta, s.reference_objects, s.reference_vocabulary, s.task
    ({'image_source': 'coco'}, None, None, 'caption')
    >>> coco_sample("coco/2", "coco", "2.jpg", None, ["horse"], vocabulary=["horse", "cone"]).meta
    {}
    """
    meta = dict(meta or {})
    if vocabulary == IMAGE_SOURCE_VOCABULARIES["coco"]:
        meta["image_source"] = "coco"
    return Sample(id=sample_id, benchmark=benchmark, image_key=image_key, task=fields.pop("task", "caption"),
                  reference_text=list(captions) if captions else None,
                  reference_kind="captions",  # five short captions, each of what struck its writer: open-world
                  reference_objects=list(objects) if objects is not None else None,
                  reference_vocabulary=vocabulary if objects is not None else None, meta=meta, **fields)


def _id(value: Any) -> str | None:
    """An image or category id as a key: COCO's are integers; a non-empty string is taken too."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


@dataclass
class _Objects:
    """The instance annotations of one category on one image."""

    count: int = 0
    crowd: bool = False


@dataclass
class CocoFile:
    """What one annotation file says, image by image (its polygons, boxes and licences are not kept)."""

    path: Path
    kind: str  # captions | instances
    images: dict[str, str] = field(default_factory=dict)  # image id -> file name, in the file's order
    refused_images: set[str] = field(default_factory=set)  # listed, but left out (no file_name)
    captions: dict[str, list[str]] = field(default_factory=dict)
    objects: dict[str, dict[str, _Objects]] = field(default_factory=dict)  # image id -> category name -> instances
    categories: list[str] = field(default_factory=list)  # names, in the file's order
    vocabulary: str | list[str] | None = None  # what its object lists are complete for (file_vocabulary)
    info: dict[str, Any] = field(default_factory=dict)


def read_coco_file(path: str | os.PathLike[str], problems: list[ImportProblem], kind: str | None = None) -> CocoFile:
    """Read one captions or instances file; bad records become ``problems``, the rest go through.

    ``kind`` defaults to the file name's prefix, else to what the file holds (``categories``: instances).
    Raises :class:`FatalImportError` for a file that is not COCO's format or not valid JSON.
    """
    p = Path(path)
    name = p.name
    if kind is None:
        match = FILE_NAME.match(name)
        kind = match["kind"] if match else None
    images: dict[str, str] = {}
    refused: set[str] = set()
    # (position, annotation id, image id, caption, category id, iscrowd): all an annotation is needed for. The
    # categories may come after the annotations (they do in COCO's instances files), so these are resolved at the end.
    annotations: list[tuple[int, Any, Any, Any, Any, Any]] = []
    categories: Any = None
    info: dict[str, Any] = {}
    keys: dict[str, None] = {}  # the top-level keys met, in order
    for key, index, value in iter_json_members(p, arrays=("images", "annotations"), what=COCO_FORMAT):
        keys.setdefault(key)
        if key in ("images", "annotations") and index is None:
            raise FatalImportError(f"{name}: not {COCO_FORMAT}: '{key}' is a {type(value).__name__}, not a list")
        if key == "images":
            where = f"{name} images record {index}"
            if not isinstance(value, dict):
                problems.append(ImportProblem(where, f"expected an object, got {type(value).__name__}"))
                continue
            image_id, file_name = _id(value.get("id")), value.get("file_name")
            if image_id is None:
                problems.append(ImportProblem(where, "missing field 'id' (an integer)"))
            elif not isinstance(file_name, str) or not file_name.strip():
                problems.append(ImportProblem(f"{name} image {image_id}", "missing field 'file_name'"))
                refused.add(image_id)
            elif image_id in images:
                problems.append(ImportProblem(f"{name} image {image_id}", "listed twice; the first kept"))
            else:
                images[image_id] = file_name.strip()
        elif key == "annotations":
            if not isinstance(value, dict):
                problems.append(ImportProblem(f"{name} annotation {index}",
                                              f"expected an object, got {type(value).__name__}"))
                continue
            annotations.append((index, value.get("id"), value.get("image_id"), value.get("caption"),
                                value.get("category_id"), value.get("iscrowd", 0)))
        elif key == "categories":
            categories = value
        elif key == "info" and isinstance(value, dict):
            info = value
    missing = [k for k in ("images", "annotations") if k not in keys]
    if missing:
        shown = ", ".join(repr(k) for k in list(keys)[:6]) + (f", … ({len(keys)} keys)" if len(keys) > 6 else "")
        raise FatalImportError(f"{name}: not {COCO_FORMAT}: no {' or '.join(repr(k) for k in missing)} "
                               f"(its keys: {shown or 'none'})")
    if kind is None:
        kind = "instances" if categories is not None else "captions"
    out = CocoFile(p, kind, images=images, refused_images=refused - images.keys(), info=info)
    if kind == "captions":
        _resolve_captions(out, annotations, problems)
    else:
        _resolve_instances(out, annotations, _categories(name, categories, problems), problems)
    return out


def _categories(name: str, raw: Any, problems: list[ImportProblem]) -> dict[str, str]:
    """Category id -> name."""
    if not isinstance(raw, list):
        got = "none" if raw is None else f"a {type(raw).__name__}"
        raise FatalImportError(f"{name}: an instances file names its categories in a 'categories' list; got {got}")
    out: dict[str, str] = {}
    for i, rec in enumerate(raw):
        where = f"{name} categories record {i}"
        if not isinstance(rec, dict):
            problems.append(ImportProblem(where, f"expected an object, got {type(rec).__name__}"))
            continue
        category_id, category = _id(rec.get("id")), rec.get("name")
        if category_id is None:
            problems.append(ImportProblem(where, "missing field 'id' (an integer)"))
        elif not isinstance(category, str) or not category.strip():
            problems.append(ImportProblem(f"{name} category {category_id}", "missing field 'name'"))
        elif category_id in out:
            problems.append(ImportProblem(f"{name} category {category_id}", "listed twice; the first kept"))
        else:
            out[category_id] = category.strip()
    if not out:
        raise FatalImportError(f"{name}: its 'categories' list names no category, so no annotation can be read")
    return out


def _where(name: str, index: int, annotation_id: Any) -> str:
    return f"{name} annotation {index}" + (f" (id {annotation_id})" if _id(annotation_id) is not None else "")


def _image_of(image_id: Any, read: CocoFile) -> str:
    key = _id(image_id)
    if key is None:
        raise ValueError("missing field 'image_id'")
    if key in read.refused_images:
        raise ValueError(f"its image {key} was left out (see that image's error)")
    if key not in read.images:
        raise ValueError(f"image {key} is not among the file's images")
    return key


def _resolve_captions(out: CocoFile, annotations: list[tuple[int, Any, Any, Any, Any, Any]],
                      problems: list[ImportProblem]) -> None:
    name = out.path.name
    for index, annotation_id, image_id, caption, _, _ in annotations:
        try:
            image = _image_of(image_id, out)
            if not isinstance(caption, str) or not caption.strip():
                raise ValueError("missing field 'caption'" if caption is None or isinstance(caption, str)
                                 else f"'caption' must be a string, got {type(caption).__name__}")
        except ValueError as exc:
            problems.append(ImportProblem(_where(name, index, annotation_id), str(exc)))
            continue
        out.captions.setdefault(image, []).append(caption.strip())


def _resolve_instances(out: CocoFile, annotations: list[tuple[int, Any, Any, Any, Any, Any]],
                       categories: dict[str, str], problems: list[ImportProblem]) -> None:
    name = out.path.name
    out.categories = list(dict.fromkeys(categories.values()))
    out.vocabulary = file_vocabulary(out.categories)
    out.objects = {image: {} for image in out.images}  # listed without annotations: none of the categories is there
    for index, annotation_id, image_id, _, category_id, iscrowd in annotations:
        try:
            image = _image_of(image_id, out)
            key = _id(category_id)
            if key is None:
                raise ValueError("missing field 'category_id'")
            if key not in categories:
                raise ValueError(f"category id {key} is not among the file's categories")
            if iscrowd not in (0, 1, None):  # True and False are 1 and 0
                raise ValueError(f"'iscrowd' must be 0 or 1, got {iscrowd!r}")
        except ValueError as exc:
            problems.append(ImportProblem(_where(name, index, annotation_id), str(exc)))
            continue
        found = out.objects[image].setdefault(categories[key], _Objects())
        found.count += 1
        found.crowd = found.crowd or bool(iscrowd)


def _split_files(p: Path) -> dict[str | None, list[tuple[str | None, Path]]]:
    """The files to read, by split: a folder's ``captions_*`` / ``instances_*`` files, or the one file given."""
    if p.is_dir():
        groups: dict[str | None, list[tuple[str | None, Path]]] = {}
        for f in sorted(p.iterdir()):
            match = FILE_NAME.match(f.name)
            if match and f.is_file():
                groups.setdefault(match["split"], []).append((match["kind"], f))
        if not groups:
            raise FatalImportError(f"{p}: no captions_<split>.json or instances_<split>.json in this folder")
        return groups
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist")
    match = FILE_NAME.match(p.name)
    return {match["split"] if match else None: [(match["kind"] if match else None, p)]}


def read_coco(path: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None,
              benchmark: str | None = None) -> list[ParsedBenchmark]:
    """One parsed benchmark per split found at ``path`` (a COCO annotation file or a folder of them).

    ``benchmark`` names it (only when there is one split); by default ``coco-<split>``, or ``coco`` for a
    file whose name gives no split. Images by ``file_name`` from ``images_dir`` (and its subfolders).
    """
    p = Path(path)
    groups = _split_files(p)
    if benchmark and len(groups) > 1:
        raise FatalImportError(f"{p}: holds {len(groups)} splits ({', '.join(str(s) for s in groups)}) and "
                               "--benchmark names one benchmark: give one split's file, or leave --benchmark out "
                               "(each split is then coco-<split>)")
    folder = ImageFolder(images_dir, depth=1) if images_dir is not None else None
    return [_read_split(split, files, benchmark or (f"{BENCHMARK}-{split}" if split else BENCHMARK), folder,
                        single_file=not p.is_dir())
            for split, files in groups.items()]


def _read_split(split: str | None, files: list[tuple[str | None, Path]], name: str, folder: ImageFolder | None,
                single_file: bool) -> ParsedBenchmark:
    problems: list[ImportProblem] = []
    read = [read_coco_file(f, problems, kind) for kind, f in files]
    kinds = {f.kind for f in read}
    what = " and ".join({"captions": "captions", "instances": "object instances"}[k] for k in KINDS if k in kinds)
    meta: dict[str, Any] = {"files": [f.path.name for f in read]}
    if split:
        meta["split"] = split
    info = next((f.info for f in read if f.info), None)
    if info:
        meta["info"] = info
    instances = next((f for f in read if f.kind == "instances"), None)
    if instances is not None:
        meta["categories"] = instances.categories
    parsed = ParsedBenchmark(Benchmark(name, f"COCO{' ' + split if split else ''}: {what}",
                                       ", ".join(str(f.path) for f in read), meta), problems=problems)
    if single_file and split:
        [(_, path)] = files
        for other in KINDS:
            sibling = path.with_name(f"{other}_{split}.json")
            if other != read[0].kind and sibling.is_file():
                problems.append(ImportProblem(path.name, f"{sibling.name} beside it was not read; give the folder "
                                              "to read both into the same samples", fatal=False))
    parsed.samples = _samples(name, read, problems)
    attach_images(parsed, folder, name)
    return parsed


def _samples(name: str, read: list[CocoFile], problems: list[ImportProblem]) -> list[Sample]:
    file_names: dict[str, str] = {}
    refused: set[str] = set()
    for f in read:
        for image, file_name in f.images.items():
            known = file_names.setdefault(image, file_name)
            if known != file_name and image not in refused:
                refused.add(image)
                problems.append(ImportProblem(f"{f.path.name} image {image}", f"file_name {file_name!r} here but "
                                              f"{known!r} in {read[0].path.name}; image left out"))
    captions = [f for f in read if f.kind == "captions"]
    instances = [f for f in read if f.kind == "instances"]
    samples: list[Sample] = []
    no_caption: list[str] = []
    for image, file_name in file_names.items():
        if image in refused:
            continue
        texts = [t for f in captions for t in f.captions.get(image, ())]
        if captions and not texts:
            no_caption.append(image)
        listing = next((f for f in instances if image in f.objects), None)
        objects = listing.objects[image] if listing is not None else None
        meta: dict[str, Any] = {}
        if objects is not None:
            meta["instance_counts"] = {category: o.count for category, o in objects.items()}
            meta["crowd_categories"] = [category for category, o in objects.items() if o.crowd]
        # An image the instances file does not list keeps that file's vocabulary: it is no COCO-80 image if the
        # file's categories are its own.
        vocabulary = next((f.vocabulary for f in ([listing] if listing else instances) if f.vocabulary), "coco-80")
        samples.append(coco_sample(f"{name}/{image}", name, file_name, texts,
                                   list(objects) if objects is not None else None, vocabulary=vocabulary, meta=meta))
    if no_caption:
        shown = ", ".join(no_caption[:_EXAMPLES]) + (", …" if len(no_caption) > _EXAMPLES else "")
        problems.append(ImportProblem(" + ".join(f.path.name for f in captions),
                                      f"{len(no_caption)} images have no caption ({shown}); imported without one",
                                      fatal=False))
    return samples
