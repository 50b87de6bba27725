"""Visual Genome and GQA scene graphs -> one ``caption`` sample per image.

* Visual Genome ``scene_graphs.json``: ``[{image_id, objects: [{object_id, names | name,
  attributes, x, y, w, h}], relationships: [{predicate, subject_id | subject: {object_id, ...},
  object_id | object: {...}}]}]``; optional ``region_descriptions.json``
  ``[{id, regions: [{phrase, image_id, ...}]}]`` -> the graph's ``regions``.
  A relationship end given as a full object that the object list lacks is added.
* GQA ``sceneGraphs``: ``{image_id: {width, height, objects: {oid: {name, x, y, w, h,
  attributes, relations: [{name, object}]}}}}``.

Sample ids are ``<benchmark>/<image_id>`` (benchmarks ``vg`` and ``gqa`` by default).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..images import ImageFolder
from ..model import Benchmark, Sample, SceneGraph, SceneObject, SceneRelation, ValidationError
from .base import ImportProblem, ParsedBenchmark
from .reading import attach_images, read_json


def _box(o: dict[str, Any]) -> tuple[float, float, float, float] | None:
    try:
        return (float(o["x"]), float(o["y"]), float(o.get("w", o.get("width"))), float(o.get("h", o.get("height"))))
    except (KeyError, TypeError, ValueError):
        return None


def _as_list(value: Any, what: str) -> list[Any]:
    """``value`` when it is a list, ``[]`` when absent; a wrong type is the record's clear error."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list, got {type(value).__name__}")
    return value


def _vg_object(o: dict[str, Any]) -> SceneObject:
    if not isinstance(o, dict) or o.get("object_id") is None:
        raise ValueError("object without object_id")
    names = _as_list(o.get("names"), f"object {o['object_id']} 'names'") or ([o["name"]] if o.get("name") else [])
    if not names or not str(names[0]).strip():
        raise ValueError(f"object {o['object_id']} has no name")
    attrs = [str(a).strip() for a in _as_list(o.get("attributes"), f"object {o['object_id']} 'attributes'")
             if str(a).strip()]
    return SceneObject(id=str(o["object_id"]), name=str(names[0]).strip(), attributes=attrs, box=_box(o))


def _vg_end(rel: dict[str, Any], end: str, objects: dict[str, SceneObject]) -> str:
    """The object id at one end of a relationship, adding the object when it is given in full."""
    if rel.get(f"{end}_id") is not None:
        oid = str(rel[f"{end}_id"])
    elif isinstance(rel.get(end), dict):
        oid = str(rel[end].get("object_id"))
        if oid not in objects and (rel[end].get("names") or rel[end].get("name")):
            objects[oid] = _vg_object(rel[end])
    else:
        raise ValueError(f"relationship has no {end}")
    if oid not in objects:
        raise ValueError(f"relationship {end} {oid} is not an object of the image")
    return oid


def _vg_graph(entry: dict[str, Any], where: str, problems: list[ImportProblem]) -> SceneGraph:
    objects: dict[str, SceneObject] = {}
    for o in _as_list(entry.get("objects"), "'objects'"):
        obj = _vg_object(o)
        if obj.id in objects:
            raise ValueError(f"object id {obj.id} appears twice")
        objects[obj.id] = obj
    relations = []
    for k, rel in enumerate(_as_list(entry.get("relationships"), "'relationships'")):
        try:
            if not isinstance(rel, dict) or not str(rel.get("predicate") or "").strip():
                raise ValueError("relationship without predicate")
            relations.append(SceneRelation(_vg_end(rel, "subject", objects), str(rel["predicate"]).strip().lower(),
                                           _vg_end(rel, "object", objects)))
        except ValueError as exc:
            problems.append(ImportProblem(f"{where} relationship {k}", f"{exc}; left out", fatal=False))
    return SceneGraph(objects=list(objects.values()), relations=relations)


def _regions(path: Path, problems: list[ImportProblem]) -> dict[str, list[str]]:
    data = read_json(path, list, "a list of {id, regions}")
    out: dict[str, list[str]] = {}
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("regions"), list):
            problems.append(ImportProblem(f"{path.name} record {i}", "expected {id, regions: [...]}"))
            continue
        for r in entry["regions"]:
            if isinstance(r, dict) and str(r.get("phrase") or "").strip():
                image_id = str(r.get("image_id", entry.get("id")))
                out.setdefault(image_id, []).append(str(r["phrase"]).strip())
    return out


def read_visual_genome(path: str | os.PathLike[str], regions_path: str | os.PathLike[str] | None = None,
                       images_dir: str | os.PathLike[str] | None = None, benchmark: str = "vg") -> ParsedBenchmark:
    """``path``: ``scene_graphs.json`` or a folder holding it (and maybe ``region_descriptions.json``)."""
    p = Path(path)
    if p.is_dir():
        if regions_path is None and (p / "region_descriptions.json").is_file():
            regions_path = p / "region_descriptions.json"
        p = p / "scene_graphs.json"
    data = read_json(p, list, "a list of scene graphs")
    parsed = ParsedBenchmark(Benchmark(benchmark, "Visual Genome scene graphs", str(p)))
    regions = _regions(Path(regions_path), parsed.problems) if regions_path is not None else {}
    for i, entry in enumerate(data):
        where = f"{p.name} record {i}"
        try:
            if not isinstance(entry, dict) or entry.get("image_id") is None:
                raise ValueError("missing field 'image_id'")
            image_id = str(entry["image_id"])
            where = f"{p.name} image {image_id}"
            graph = _vg_graph(entry, where, parsed.problems)
            graph.regions = regions.get(image_id, [])
            parsed.samples.append(Sample(id=f"{benchmark}/{image_id}", benchmark=benchmark, image_key=image_id,
                                         task="caption", scene_graph=graph))
        except (ValueError, ValidationError) as exc:
            parsed.problems.append(ImportProblem(where, str(exc)))
    attach_images(parsed, ImageFolder(images_dir, depth=1) if images_dir is not None else None, p.name)
    return parsed


def _gqa_graph(entry: dict[str, Any], where: str, problems: list[ImportProblem]) -> SceneGraph:
    raw = entry.get("objects")
    if not isinstance(raw, dict):
        raise ValueError("'objects' must be an object keyed by object id")
    objects = []
    for oid, o in raw.items():
        if not isinstance(o, dict) or not str(o.get("name") or "").strip():
            raise ValueError(f"object {oid} has no name")
        objects.append(SceneObject(id=str(oid), name=str(o["name"]).strip(),
                                   attributes=[str(a).strip() for a in _as_list(o.get("attributes"),
                                               f"object {oid} 'attributes'") if str(a).strip()],
                                   box=_box(o)))
    relations = []
    for oid, o in raw.items():
        for k, rel in enumerate(_as_list(o.get("relations"), f"object {oid} 'relations'")):
            target = str(rel.get("object")) if isinstance(rel, dict) else None
            if not isinstance(rel, dict) or not str(rel.get("name") or "").strip() or target not in raw:
                problems.append(ImportProblem(f"{where} object {oid} relation {k}",
                                              f"needs a name and a known object, got {rel!r}; left out", fatal=False))
                continue
            relations.append(SceneRelation(str(oid), str(rel["name"]).strip(), target))
    return SceneGraph(objects=objects, relations=relations)


def read_gqa(path: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None,
             benchmark: str = "gqa") -> ParsedBenchmark:
    p = Path(path)
    data = read_json(p, dict, "an object keyed by image id")
    parsed = ParsedBenchmark(Benchmark(benchmark, "GQA scene graphs", str(p)))
    for image_id, entry in data.items():
        where = f"{p.name} image {image_id}"
        try:
            if not isinstance(entry, dict):
                raise ValueError("expected an object with 'objects'")
            graph = _gqa_graph(entry, where, parsed.problems)
            meta = {k: entry[k] for k in ("width", "height", "location", "weather") if k in entry}
            parsed.samples.append(Sample(id=f"{benchmark}/{image_id}", benchmark=benchmark, image_key=str(image_id),
                                         task="caption", scene_graph=graph, meta=meta))
        except (ValueError, ValidationError) as exc:
            parsed.problems.append(ImportProblem(where, str(exc)))
    attach_images(parsed, ImageFolder(images_dir, depth=1) if images_dir is not None else None, p.name)
    return parsed
