"""Tri-HE (``tri-he.json`` + an image folder, by default ``<dir>/usage_figures``).

The file is a dict keyed by image id::

    {"2374892": {"instance": [{"question", "answer", "triplet": ["(s, p, o)", ...]}, ...],
                 "triplets": [...every reference triplet of the image...],
                 "all_object": [...every object, duplicates included...],
                 "object": [...a subset that also holds non-objects...]}}

Scene graph of an image (one per image, shared by its questions):

* objects: ``all_object`` in order, ids ``o0, o1, ...``; duplicates stay separate objects;
* each reference triplet ``(s, p, o)`` becomes

  - an **attribute** ``o`` of ``s`` when ``p`` is "is"/"are", ``o`` has at most two words and
    ``o`` does not name a listed object ("(laptop, is, black)" -> laptop: black);
  - otherwise a **relation** ``s -p-> o``;

  an end names a listed object when their names normalise alike (``lexicon.forms.normalize_name``:
  "Giraffes", "two giraffes" and "another giraffe" are the listed "giraffe", the first one listed);
  an end naming none is added as object ``t0, t1, ...`` and named in the sample's
  ``meta["added_objects"]`` (the graph's own objects are the others). A number an end states
  ("(Two people, sharing, one umbrella)") is the annotators' count of that thing: where the list holds
  fewer objects of that name, objects are added (named without the number) up to the largest number
  stated, as ``grounding.stated_counts`` reads a caption's counts; where it holds more, the list stands
  (two of six giraffes).

  Ends that name more than one thing are read as the annotators meant them, where every part is a
  thing (a listed object, or a noun WordNet files under things one sees):

  - a **coordination** "A and B" ("(books and magazines, on, table)") is the triplet once for each
    part, so each is an object of its own with that relation;
  - a **placed** name "X PREP Y" ("(snow on the ground, covers, mountains)", "person with camera",
    "eyes of cats") or "X VERBing Y" with a verb one sees ("people wearing hat") is the thing X, with
    the relation ``X -PREP-> Y`` it states, unless "X VERBing" is itself a compound noun
    ("pedestrian crossing signal").

One ``vqa`` sample per question, id ``tri-he/<image_id>/q<k>`` (``k`` from 0), with that
question's triplets as ``gold_triplets``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..images import ImageFolder
from ..lexicon.attributes import attribute_family
from ..lexicon.forms import count_of, normalize_name
from ..lexicon.nouns import is_compound_noun, is_visual_noun
from ..lexicon.predicates import PREPOSITIONS, VISUAL_VERBS, parse_predicate
from ..lexicon.words import FRAMING_NOUNS, NEGATIONS
from ..model import Benchmark, Sample, SceneGraph, SceneObject, SceneRelation, ValidationError
from .base import ImportProblem, ParsedBenchmark
from .reading import attach_images, read_json
from .triplets import Triplet, parse_triplets

BENCHMARK = "tri-he"
ATTRIBUTE_PREDICATES = {"is", "are"}


def _triplets(raw: Any, where: str, problems: list[ImportProblem]) -> list[Triplet]:
    out: list[Triplet] = []
    for i, text in enumerate(raw or []):
        try:
            found, notes = parse_triplets(text)
        except ValueError as exc:
            problems.append(ImportProblem(f"{where} triplet {i}", f"{exc}; triplet left out", fatal=False))
            continue
        for note in notes:
            problems.append(ImportProblem(f"{where} triplet {i}", note, fatal=False))
        out.extend(found)
    return out


def _key(name: str) -> str:
    """The form two names of one thing share: "Two giraffes", "another giraffe" and "giraffe" read "giraffe"."""
    return normalize_name(name) or name.strip().lower()


def _stated_number(name: str) -> tuple[int | None, str]:
    """The number a name states and the name without it: "Two people" -> (2, "people"); "giraffe" -> (None, ...)."""
    first, _, rest = name.strip().partition(" ")
    n = count_of(first) if rest.strip() else None
    return (n, rest.strip()) if n is not None else (None, name.strip())


# The prepositions a placed end is split at ("snow on the ground", "person with camera"), longest first.
_PLACING = ("on top of", "next to", "in front of", "on", "in", "at", "with", "near", "by", "behind", "under",
            "inside", "beside", "of")
_PLACED_END = re.compile(rf"^(.+?)\s+({'|'.join(re.escape(p) for p in _PLACING)})\s+(.+)$", re.I)
_PARTICIPLE_END = re.compile(r"^(.+?)\s+([a-z]+ing)\s+(.+)$", re.I)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_COORDINATION = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.I)


class _Ends:
    """How the triplet ends of one image are read: which name a listed object, which are things, and the
    coordinated and placed ends split (module docstring)."""

    def __init__(self, listed: set[str]) -> None:
        self.listed = listed

    def is_thing(self, name: str) -> bool:
        key = _key(name)
        words = name.lower().split()
        if not key or not words or words[0] in NEGATIONS or words[0] in PREPOSITIONS:
            return False
        if key in self.listed:
            return True
        head = key.rsplit(" ", 1)[-1]
        return head not in FRAMING_NOUNS and attribute_family(name) is None and is_visual_noun(name) is True

    def parts(self, end: str) -> list[str]:
        """ "books and magazines" -> ["books", "magazines"] when every part is a thing; else [end]."""
        parts = [p for p in _COORDINATION.split(end.strip()) if p]
        return parts if len(parts) > 1 and all(self.is_thing(p) for p in parts) else [end]

    def placed(self, end: str) -> tuple[str, str, str] | None:
        """ "snow on the ground" -> ("snow", "on", "the ground"): the thing, the relation it states and to what."""
        if _key(end) in self.listed:
            return None
        m = _PLACED_END.match(end.strip())
        if m and self.is_thing(m.group(1)) and self.is_thing(m.group(3)):
            return m.group(1), m.group(2).lower(), _ARTICLE.sub("", m.group(3))
        m = _PARTICIPLE_END.match(end.strip())
        if m and parse_predicate(m.group(2)).verb in VISUAL_VERBS and self.is_thing(m.group(1)) \
                and self.is_thing(m.group(3)) and not is_compound_noun(m.group(1).split()[-1], m.group(2)):
            return m.group(1), m.group(2).lower(), _ARTICLE.sub("", m.group(3))
        return None


def build_scene_graph(all_objects: list[str], triplets: list[Triplet]) -> tuple[SceneGraph, list[str]]:
    """The image's scene graph and the names of objects added for triplet ends not in the list.

    >>> g, added = build_scene_graph(["laptop", "man"], [("laptop", "is", "black"), ("man", "using", "laptop"),
    ...                                                   ("man", "near", "window")])
    >>> g.attribute_pairs(), g.triplets(), added
    ([('laptop', 'black')], [('man', 'using', 'laptop'), ('man', 'near', 'window')], ['window'])
    >>> g, added = build_scene_graph(["giraffe", "person", "giraffe"], [("two giraffes", "near", "person"),
    ...                                                                 ("Two people", "watching", "giraffes")])
    >>> g.triplets(), [o.name for o in g.objects], added
    ([('giraffe', 'near', 'person'), ('person', 'watching', 'giraffe')], ['giraffe', 'person', 'giraffe', 'people'], [])
    """
    objects = [SceneObject(id=f"o{i}", name=str(n).strip()) for i, n in enumerate(all_objects) if str(n).strip()]
    by_key: dict[str, SceneObject] = {}
    for o in objects:
        by_key.setdefault(_key(o.name), o)
    listed = set(by_key)
    added: list[str] = []
    stated: dict[str, tuple[int, str]] = {}  # name key -> the largest number an end states of it, and the bare name
    extra = 0

    def add(name: str, unlisted: bool) -> SceneObject:
        nonlocal extra
        obj = SceneObject(id=f"t{extra}", name=name)
        extra += 1
        objects.append(obj)
        if unlisted and name not in added:
            added.append(name)
        return obj

    ends = _Ends(listed)
    relations: list[SceneRelation] = []

    def relate(s: SceneObject, p: str, o: SceneObject) -> None:
        relation = SceneRelation(s.id, p, o.id)
        if relation not in relations:
            relations.append(relation)

    def node(name: str) -> SceneObject:
        placed = ends.placed(name)
        if placed is not None:
            thing, prep, where = placed
            relate(node(thing), prep, node(where))
            return node(thing)
        key = _key(name)
        n, bare = _stated_number(name)
        if n is not None and n > stated.get(key, (0, ""))[0]:
            stated[key] = (n, bare)
        if key not in by_key:
            by_key[key] = add(bare, True)
        return by_key[key]

    for s, p, o in triplets:
        if p.lower() in ATTRIBUTE_PREDICATES and len(o.split()) <= 2 and _key(o) not in listed:
            for part in ends.parts(s):
                subject = node(part)
                if o not in subject.attributes:
                    subject.attributes.append(o)
            continue
        for s_part in ends.parts(s):
            for o_part in ends.parts(o):
                relations.append(SceneRelation(node(s_part).id, p, node(o_part).id))
    # The annotators' own count of a thing, where the list holds fewer of it.
    for key, (n, bare) in stated.items():
        for _ in range(n - sum(_key(o.name) == key for o in objects)):
            add(bare, key not in listed)
    return SceneGraph(objects=objects, relations=relations), added


def read_tri_he(path: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None,
                benchmark: str = BENCHMARK) -> ParsedBenchmark:
    """Parse ``tri-he.json`` (or a folder holding it); images from ``images_dir`` or ``usage_figures``."""
    p = Path(path)
    if p.is_dir():
        p = p / "tri-he.json"
    data = read_json(p, dict, "a JSON object keyed by image id")
    parsed = ParsedBenchmark(Benchmark(benchmark, "Tri-HE: triplet-level hallucination evaluation", str(p)))
    for image_id, entry in data.items():
        where = f"{p.name} image {image_id}"
        if not isinstance(entry, dict) or not isinstance(entry.get("instance"), list):
            parsed.problems.append(ImportProblem(where, "expected an object with an 'instance' list"))
            continue
        all_objects = entry.get("all_object") or []
        if not isinstance(all_objects, list):
            parsed.problems.append(ImportProblem(where, "'all_object' must be a list"))
            continue
        try:
            graph, added = build_scene_graph(all_objects, _triplets(entry.get("triplets"), where, parsed.problems))
        except ValidationError as exc:
            parsed.problems.append(ImportProblem(where, f"scene graph: {exc}"))
            continue
        for k, inst in enumerate(entry["instance"]):
            qwhere = f"{where} question {k}"
            if not isinstance(inst, dict) or not str(inst.get("question") or "").strip():
                parsed.problems.append(ImportProblem(qwhere, "missing field 'question'"))
                continue
            meta: dict[str, Any] = {"listed_objects": [str(x) for x in entry.get("object") or []]}
            if added:
                meta["added_objects"] = added
            parsed.samples.append(Sample(
                id=f"{benchmark}/{image_id}/q{k}", benchmark=benchmark, image_key=str(image_id), task="vqa",
                scene_graph=graph, question=str(inst["question"]).strip(),
                answer=str(inst.get("answer") or "").strip() or None,
                gold_triplets=_triplets(inst.get("triplet"), qwhere, parsed.problems), meta=meta))
    folder_path = Path(images_dir) if images_dir is not None else p.parent / "usage_figures"
    folder = ImageFolder(folder_path, depth=0) if folder_path.is_dir() else None
    if images_dir is not None and folder is None:
        raise FileNotFoundError(f"image folder {images_dir} does not exist")
    attach_images(parsed, folder, p.name)
    return parsed
