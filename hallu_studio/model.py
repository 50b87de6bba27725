"""The data model: plain typed classes shared by every layer.

Nothing here knows about SQL, files or the UI. Each class converts to and from
plain JSON-able dicts (``to_dict`` / ``from_dict``) so that the store, the
importers and the exporters all speak the same shape.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Sequence

import networkx as nx

Task = Literal["caption", "vqa", "yes_no", "mcq"]
TASKS: tuple[str, ...] = ("caption", "vqa", "yes_no", "mcq")
RelationCategory = Literal["perception", "cognition"]
RELATION_CATEGORIES: tuple[str, ...] = ("perception", "cognition")
Span = tuple[int, int]


class ValidationError(ValueError):
    """A record does not fit the data model; the message says which field and why."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the input of every content hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_key(*parts: Any) -> str:
    """A sha256 hex digest of the canonical JSON of ``parts``."""
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()


def _span(value: Any) -> Span | None:
    if value is None:
        return None
    start, end = value
    return (int(start), int(end))


# --------------------------------------------------------------------------- scene graph


@dataclass
class SceneObject:
    id: str
    name: str
    attributes: list[str] = field(default_factory=list)
    box: tuple[float, float, float, float] | None = None  # x, y, width, height in pixels

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "attributes": list(self.attributes)}
        if self.box is not None:
            d["box"] = list(self.box)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SceneObject":
        if not isinstance(d, dict):
            raise ValidationError(f"scene-graph object must be an object, got {type(d).__name__}")
        if "name" not in d or not str(d["name"]).strip():
            raise ValidationError(f"scene-graph object {d.get('id')!r} has no name")
        attrs = d.get("attributes") or []
        if not isinstance(attrs, list):
            raise ValidationError(f"attributes of object {d.get('id')!r} must be a list")
        box = d.get("box")
        return cls(
            id=str(d.get("id", d["name"])),
            name=str(d["name"]).strip(),
            attributes=[str(a).strip() for a in attrs if str(a).strip()],
            box=tuple(float(v) for v in box) if box else None,  # type: ignore[arg-type]
        )


@dataclass
class SceneRelation:
    subject: str  # object id
    predicate: str
    object: str  # object id

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "predicate": self.predicate, "object": self.object}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SceneRelation":
        try:
            return cls(subject=str(d["subject"]), predicate=str(d["predicate"]).strip(), object=str(d["object"]))
        except (KeyError, TypeError) as exc:
            raise ValidationError(f"relation needs subject, predicate and object: {d!r}") from exc


@dataclass
class SceneGraph:
    """Objects with attributes and optional boxes, and relations between object ids.

    >>> g = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat", "attributes": ["grey"]},
    ...                                       {"id": "2", "name": "sofa"}],
    ...                           "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
    >>> g.triplets()
    [('cat', 'on', 'sofa')]
    >>> SceneGraph.from_networkx(g.to_networkx()) == g
    True
    """

    objects: list[SceneObject] = field(default_factory=list)
    relations: list[SceneRelation] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)  # free-text region descriptions (VG)

    def __post_init__(self) -> None:
        ids = [o.id for o in self.objects]
        if len(ids) != len(set(ids)):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValidationError(f"scene graph has duplicate object ids: {dup[:5]}")
        known = set(ids)
        for r in self.relations:
            for end in (r.subject, r.object):
                if end not in known:
                    raise ValidationError(f"relation {r.subject}-{r.predicate}-{r.object} names unknown object id {end!r}")

    # -- access
    def object_by_id(self) -> dict[str, SceneObject]:
        return {o.id: o for o in self.objects}

    def object_names(self) -> list[str]:
        return [o.name for o in self.objects]

    def attribute_pairs(self) -> list[tuple[str, str]]:
        return [(o.name, a) for o in self.objects for a in o.attributes]

    def triplets(self) -> list[tuple[str, str, str]]:
        by_id = self.object_by_id()
        return [(by_id[r.subject].name, r.predicate, by_id[r.object].name) for r in self.relations]

    def is_empty(self) -> bool:
        return not self.objects

    # -- conversion
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "objects": [o.to_dict() for o in self.objects],
            "relations": [r.to_dict() for r in self.relations],
        }
        if self.regions:
            d["regions"] = list(self.regions)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "SceneGraph":
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise ValidationError(f"scene_graph must be an object, got {type(d).__name__}")
        objects = [SceneObject.from_dict(o) for o in d.get("objects") or []]
        relations = [SceneRelation.from_dict(r) for r in d.get("relations") or []]
        regions = [str(r) for r in d.get("regions") or []]
        return cls(objects=objects, relations=relations, regions=regions)

    def key(self) -> str:
        return content_key(self.to_dict())

    def to_networkx(self) -> nx.MultiDiGraph:
        g = nx.MultiDiGraph()
        for o in self.objects:
            g.add_node(o.id, name=o.name, attributes=list(o.attributes), box=o.box)
        for r in self.relations:
            g.add_edge(r.subject, r.object, predicate=r.predicate)
        g.graph["regions"] = list(self.regions)
        return g

    @classmethod
    def from_networkx(cls, g: nx.Graph) -> "SceneGraph":
        objects = [
            SceneObject(id=str(n), name=data.get("name", str(n)), attributes=list(data.get("attributes") or []),
                        box=tuple(data["box"]) if data.get("box") else None)
            for n, data in g.nodes(data=True)
        ]
        relations = [SceneRelation(str(u), data.get("predicate", ""), str(v)) for u, v, data in g.edges(data=True)]
        return cls(objects=objects, relations=relations, regions=list(g.graph.get("regions", [])))


# --------------------------------------------------------------------------- concepts


@dataclass(frozen=True)
class ObjectConcept:
    name: str
    span: Span | None = None


@dataclass(frozen=True)
class AttributeConcept:
    object: str
    attribute: str
    span: Span | None = None


@dataclass(frozen=True)
class RelationConcept:
    subject: str
    predicate: str
    object: str
    span: Span | None = None
    # The attributes the text gives each end where it names it ("the red cube is left of the small cube":
    # ("red",), ("small",)): they say which of several objects of one name the relation is about.
    subject_attributes: tuple[str, ...] = ()
    object_attributes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CountConcept:
    """A number the text gives for an object: "two dogs" -> ("dog", 2).

    ``span`` covers the counting word only ("two"), so an edit that changes the number
    leaves the object's own span alone.
    """

    object: str
    count: int
    span: Span | None = None


@dataclass
class ConceptSet:
    """Objects, (object, attribute) pairs and (subject, predicate, object) triplets.

    Either extracted from a response (each concept may carry the character span
    where the response mentions it) or derived from a scene graph.

    >>> cs = ConceptSet.from_scene_graph(SceneGraph.from_dict(
    ...     {"objects": [{"id": "a", "name": "dog", "attributes": ["brown"]}, {"id": "b", "name": "ball"}],
    ...      "relations": [{"subject": "a", "predicate": "chasing", "object": "b"}]}))
    >>> cs.to_dict()
    {'objects': ['dog', 'ball'], 'attributes': [['dog', 'brown']], 'relations': [['dog', 'chasing', 'ball']]}
    >>> counted = ConceptSet(objects=[ObjectConcept("dog", (4, 8))], counts=[CountConcept("dog", 2, (0, 3))])
    >>> counted.to_dict(with_spans=True)["counts"], counted.to_dict(with_spans=True)["count_spans"], len(counted)
    ([['dog', 2]], [[0, 3]], 1)
    >>> ConceptSet.from_dict(counted.to_dict(with_spans=True)) == counted
    True
    """

    objects: list[ObjectConcept] = field(default_factory=list)
    attributes: list[AttributeConcept] = field(default_factory=list)
    relations: list[RelationConcept] = field(default_factory=list)
    # Numbers the text gives; not concepts of their own (``len`` and EMD leave them out), but what a
    # judge checks against a graph's node multiplicity.
    counts: list[CountConcept] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.objects) + len(self.attributes) + len(self.relations)

    @classmethod
    def union(cls, sets: Sequence["ConceptSet"]) -> "ConceptSet":
        """Every concept of several sets once (the first's span kept): what several captions of one image say.

        >>> a = ConceptSet(objects=[ObjectConcept("man")], counts=[CountConcept("dog", 2)])
        >>> b = ConceptSet(objects=[ObjectConcept("man"), ObjectConcept("moped")], counts=[CountConcept("dog", 3)])
        >>> u = ConceptSet.union([a, b]); [o.name for o in u.objects], [(c.object, c.count) for c in u.counts]
        (['man', 'moped'], [('dog', 2), ('dog', 3)])
        """
        if len(sets) == 1:
            return sets[0]

        def once(items: Iterable[Any], key: Callable[[Any], Any]) -> list[Any]:
            seen: dict[Any, Any] = {}
            for item in items:
                seen.setdefault(key(item), item)
            return list(seen.values())

        return cls(objects=once((o for s in sets for o in s.objects), lambda o: o.name),
                   attributes=once((a for s in sets for a in s.attributes), lambda a: (a.object, a.attribute)),
                   relations=once((r for s in sets for r in s.relations),
                                  lambda r: (r.subject, r.predicate, r.object, r.subject_attributes,
                                             r.object_attributes)),
                   counts=once((c for s in sets for c in s.counts), lambda c: (c.object, c.count)))

    @classmethod
    def from_scene_graph(cls, graph: SceneGraph) -> "ConceptSet":
        return cls(
            objects=[ObjectConcept(n) for n in graph.object_names()],
            attributes=[AttributeConcept(o, a) for o, a in graph.attribute_pairs()],
            relations=[RelationConcept(s, p, o) for s, p, o in graph.triplets()],
        )

    def to_dict(self, with_spans: bool = False) -> dict[str, Any]:
        """The stateless scoring format: ``{"objects": [o], "attributes": [[o, a]], "relations": [[s, p, o]]}``.

        With ``with_spans`` the spans travel in parallel lists ``object_spans`` etc. Counts appear as
        ``"counts": [[object, n]]`` (and ``count_spans``) only when there are any, so a set without
        counts has the same dict (and content key) as before counts existed.
        """
        d: dict[str, Any] = {
            "objects": [c.name for c in self.objects],
            "attributes": [[c.object, c.attribute] for c in self.attributes],
            "relations": [[c.subject, c.predicate, c.object] for c in self.relations],
        }
        if with_spans:
            d["object_spans"] = [list(c.span) if c.span else None for c in self.objects]
            d["attribute_spans"] = [list(c.span) if c.span else None for c in self.attributes]
            d["relation_spans"] = [list(c.span) if c.span else None for c in self.relations]
        if any(c.subject_attributes or c.object_attributes for c in self.relations):
            # Only when some relation has them, so a set without has the same dict (and content key) as before.
            d["relation_qualifiers"] = [[list(c.subject_attributes), list(c.object_attributes)] for c in self.relations]
        if self.counts:
            d["counts"] = [[c.object, c.count] for c in self.counts]
            if with_spans:
                d["count_spans"] = [list(c.span) if c.span else None for c in self.counts]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "ConceptSet":
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise ValidationError(f"concept set must be an object, got {type(d).__name__}")

        def spans(key: str, n: int) -> list[Span | None]:
            raw = d.get(key) or []
            return [_span(s) for s in raw] + [None] * (n - len(raw))

        try:
            objs = [str(o) for o in d.get("objects") or []]
            attrs = [(str(o), str(a)) for o, a in d.get("attributes") or []]
            rels = [(str(s), str(p), str(o)) for s, p, o in d.get("relations") or []]
            counts = [(str(o), int(n)) for o, n in d.get("counts") or []]
            quals = [(tuple(str(a) for a in sq), tuple(str(a) for a in oq)) for sq, oq in d.get("relation_qualifiers") or []]
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"concept set has a malformed entry: {exc}") from exc
        osp, asp, rsp = spans("object_spans", len(objs)), spans("attribute_spans", len(attrs)), spans("relation_spans", len(rels))
        csp = spans("count_spans", len(counts))
        return cls(
            objects=[ObjectConcept(n, osp[i]) for i, n in enumerate(objs)],
            attributes=[AttributeConcept(o, a, asp[i]) for i, (o, a) in enumerate(attrs)],
            relations=[RelationConcept(s, p, o, rsp[i], *(quals[i] if i < len(quals) else ((), ())))
                       for i, (s, p, o) in enumerate(rels)],
            counts=[CountConcept(o, n, csp[i]) for i, (o, n) in enumerate(counts)],
        )


# --------------------------------------------------------------------------- benchmark items


@dataclass
class ImageRef:
    """Where a sample's image comes from, before and after it is stored.

    ``sha256`` is set once the bytes are in the store; ``source`` is the path or
    name the importer saw (kept for the error message when the image is missing).
    """

    source: str
    sha256: str | None = None
    width: int | None = None
    height: int | None = None
    missing_reason: str | None = None  # set when the image could not be found or read


@dataclass
class Sample:
    """One benchmark item: an image, its scene graph and (for QA tasks) a question."""

    id: str  # unique in the store: "<benchmark>/<source id>"
    benchmark: str
    image_key: str  # the dataset's own image id (GQA / VG id, file name ...)
    task: str = "caption"
    image_sha256: str | None = None  # None when the image is missing
    domain: str = "original"  # VISCON style tag: original, cartoon, sketch, oil, line
    source_kind: str = "real"  # real | synthetic
    scene_graph: SceneGraph = field(default_factory=SceneGraph)
    question: str | None = None
    options: list[str] = field(default_factory=list)
    answer: str | None = None  # gold answer / label (MCQ: the letter, Y/N: yes|no)
    gold_triplets: list[tuple[str, str, str]] = field(default_factory=list)
    relation_category: str | None = None  # perception | cognition (Reefknot)
    # Human captions of the image: one dense caption (DCI / HalFscore) or several short ones (COCO's five). Either
    # way open-world: what they do not mention may still be in the picture.
    reference_text: str | list[str] | None = None
    # The names of the objects in the image, complete within ``reference_vocabulary`` (COCO's instance
    # annotations: "coco-80", or a list of category names): inside it a missing object is absent, outside it the
    # list says nothing. None: no object list.
    reference_objects: list[str] | None = None
    reference_vocabulary: str | list[str] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def reference_captions(self) -> list[str]:
        """The human captions as a list (empty when there are none)."""
        texts = [self.reference_text] if isinstance(self.reference_text, str) else list(self.reference_text or [])
        return [t for t in texts if t.strip()]

    def __post_init__(self) -> None:
        if isinstance(self.reference_text, (list, tuple)):
            if not all(isinstance(t, str) for t in self.reference_text):
                raise ValidationError(f"sample {self.id}: reference_text must be a string or a list of strings")
            self.reference_text = [t.strip() for t in self.reference_text if t.strip()] or None
        elif self.reference_text is not None and not isinstance(self.reference_text, str):
            raise ValidationError(f"sample {self.id}: reference_text must be a string or a list of strings, "
                                  f"got {type(self.reference_text).__name__}")
        if self.reference_objects is not None:
            if not isinstance(self.reference_objects, (list, tuple)) or not all(
                    isinstance(o, str) for o in self.reference_objects):
                raise ValidationError(f"sample {self.id}: reference_objects must be a list of object names")
            self.reference_objects = [o.strip() for o in self.reference_objects if o.strip()]
        if self.reference_vocabulary is not None:
            from .lexicon.vocabularies import vocabulary

            if self.reference_objects is None:
                raise ValidationError(f"sample {self.id}: reference_vocabulary names what reference_objects is "
                                      "complete for, and there is no reference_objects")
            if isinstance(self.reference_vocabulary, (list, tuple)):
                self.reference_vocabulary = [str(v) for v in self.reference_vocabulary]
            try:
                vocabulary(self.reference_vocabulary)
            except ValueError as exc:
                raise ValidationError(f"sample {self.id}: reference_vocabulary: {exc}") from exc
        if self.task not in TASKS:
            raise ValidationError(f"sample {self.id}: task must be one of {TASKS}, got {self.task!r}")
        if self.relation_category is not None and self.relation_category not in RELATION_CATEGORIES:
            raise ValidationError(
                f"sample {self.id}: relation_category must be one of {RELATION_CATEGORIES}, got {self.relation_category!r}")
        self.gold_triplets = [tuple(str(x) for x in t) for t in self.gold_triplets]  # type: ignore[misc]
        for t in self.gold_triplets:
            if len(t) != 3:
                raise ValidationError(f"sample {self.id}: gold triplet {t!r} does not have three parts")

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["scene_graph"] = self.scene_graph.to_dict()
        d["gold_triplets"] = [list(t) for t in self.gold_triplets]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Sample":
        d = dict(d)
        d["scene_graph"] = SceneGraph.from_dict(d.get("scene_graph"))
        d["gold_triplets"] = [tuple(t) for t in d.get("gold_triplets") or []]
        d["options"] = list(d.get("options") or [])
        d["meta"] = dict(d.get("meta") or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValidationError(f"sample {d.get('id')!r}: unknown fields {sorted(unknown)}")
        return cls(**d)


@dataclass
class Benchmark:
    name: str
    description: str = ""
    source: str = ""  # where it was imported from
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Run:
    """The manifest of one model run: everything needed to reproduce it."""

    id: str
    benchmark: str
    model: str
    backend: str  # transformers | openai | probe | recorded
    checkpoint: str = ""  # hub revision, local path hash or server-reported model
    prompt: str = ""
    generation: dict[str, Any] = field(default_factory=dict)
    mitigation: str = "none"
    seed: int = 0
    tool_version: str = ""
    synthetic: bool = False  # probe models: label as synthetic wherever shown
    meta: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def make_id(benchmark: str, model: str, backend: str, prompt: str, generation: dict[str, Any],
                mitigation: str, seed: int) -> str:
        """Runs with the same settings share an id, so re-running resumes instead of duplicating."""
        return "run-" + content_key(benchmark, model, backend, prompt, generation, mitigation, seed)[:16]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Run":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class Response:
    """A model's answer to one sample in one run."""

    run_id: str
    sample_id: str
    text: str
    signals: dict[str, Any] = field(default_factory=dict)  # logprobs, entropy, logit lens, injected concepts
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = self.make_id(self.run_id, self.sample_id)

    @staticmethod
    def make_id(run_id: str, sample_id: str) -> str:
        return "resp-" + content_key(run_id, sample_id)[:20]


@dataclass
class Score:
    """One metric's result for one response under one configuration.

    ``values`` holds the numbers (a value may be None with ``undefined_reason``
    saying why); ``evidence`` whatever the app shows to explain them.
    """

    response_id: str
    metric: str
    config_key: str
    values: dict[str, Any]
    evidence: dict[str, Any] = field(default_factory=dict)
    undefined_reason: str | None = None


APP_SOURCE = "app"  # ``HumanEvent.source`` of what this studio's own annotators enter
# rating .. undo: what this studio's annotators enter; label .. comparison: judgements made in outside studies
# (a published human study, a crowd task), imported with their source (``importers.human``).
EVENT_KINDS: tuple[str, ...] = ("rating", "correction", "revision_review", "note", "preference", "undo",
                                "label", "span_label", "fact_label", "comparison")
# What a person may say about a whole response, a span of it or one atomic fact of it. "unsure" is kept but
# left out of every accurate-vs-hallucinated table.
JUDGEMENT_LABELS: tuple[str, ...] = ("accurate", "hallucinated", "unsure")
# A comparative rating of a response against another text, from -2 (the other is much better) to +2 (this one
# is much better): a 5-point side-by-side scale; a 3-point one uses -1..1.
COMPARISON_RANGE: tuple[int, int] = (-2, 2)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_judgement_value(kind: str, value: Any, target: str = "") -> None:
    """Raise ``ValidationError`` saying what is wrong when ``value`` (and ``target``) do not fit ``kind``.

    Shapes of the outside-study kinds (``target`` in brackets):

    - label [""]: ``{"label"}``, one of ``JUDGEMENT_LABELS``;
    - span_label ["span:<start>-<end>"]: ``{"start", "end", "label"}`` (+ optional ``"text"``), character
      offsets into the response, 0 <= start < end;
    - fact_label ["fact:<i>"]: ``{"fact", "label"}``, an atomic fact's text and its label;
    - comparison ["vs:<other>:<aspect>"]: ``{"other", "aspect", "score"}`` (+ optional ``"scale"``, the
      study's own wording), score an integer in ``COMPARISON_RANGE``, positive when the response is better.

    >>> check_judgement_value("span_label", {"start": 4, "end": 9, "label": "hallucinated"}, "span:4-9")
    >>> check_judgement_value("span_label", {"start": 9, "end": 4, "label": "hallucinated"}, "span:9-4")
    Traceback (most recent call last):
    ...
    hallu_studio.model.ValidationError: a span_label needs 0 <= start < end, got start 9 and end 4
    """
    if kind == "rating":
        if not _is_int(value) or not 1 <= value <= 5:
            raise ValidationError(f"a rating must be an integer 1-5, got {value!r}")
        return
    if kind not in ("label", "span_label", "fact_label", "comparison"):
        return
    if not isinstance(value, dict):
        raise ValidationError(f"a {kind} value must be an object, got {type(value).__name__}")
    if kind != "comparison" and value.get("label") not in JUDGEMENT_LABELS:
        what = "a label" if kind == "label" else f"the label of a {kind}"
        raise ValidationError(f"{what} must be one of {JUDGEMENT_LABELS}, got {value.get('label')!r}")
    if kind == "label" and target:
        raise ValidationError(f"a label is about the whole response: its target must be empty, got {target!r}")
    if kind == "span_label":
        start, end = value.get("start"), value.get("end")
        if not _is_int(start) or not _is_int(end):
            raise ValidationError(f"a span_label needs integer start and end offsets, got {start!r} and {end!r}")
        if not 0 <= start < end:
            raise ValidationError(f"a span_label needs 0 <= start < end, got start {start} and end {end}")
        if target != f"span:{start}-{end}":
            raise ValidationError(f"a span_label's target must be 'span:{start}-{end}', got {target!r}")
    if kind == "fact_label":
        if not isinstance(value.get("fact"), str) or not value["fact"].strip():
            raise ValidationError("a fact_label needs the fact's text ('fact')")
        if not target.startswith("fact:") or not target[5:].isdigit():
            raise ValidationError(f"a fact_label's target must be 'fact:<index>', got {target!r}")
    if kind == "comparison":
        for key in ("other", "aspect"):
            if not isinstance(value.get(key), str) or not value[key].strip():
                raise ValidationError(f"a comparison needs {key!r} (a non-empty string)")
        low, high = COMPARISON_RANGE
        score = value.get("score")
        if not _is_int(score) or not low <= score <= high:
            raise ValidationError(f"a comparison score must be an integer {low}..{high}, got {score!r}")
        if target != f"vs:{value['other']}:{value['aspect']}":
            raise ValidationError(f"a comparison's target must be 'vs:{value['other']}:{value['aspect']}', "
                                  f"got {target!r}")


@dataclass
class HumanEvent:
    """One append-only human input. The current value of a target is its latest
    event that has not been undone; an undo is itself an event naming the undone one."""

    annotator: str
    kind: str
    response_id: str | None
    value: Any
    target: str = ""  # e.g. "triplet:3", "edit:5"; empty for the response itself
    undoes: int | None = None
    id: int | None = None
    created_at: str | None = None
    # Where the judgement was made: "app" (an annotator in this studio), else the named outside source it was
    # imported from (a published human study, a crowd task), which is never mixed with the app's annotators.
    source: str = APP_SOURCE
    # How it was made (the annotation mode, the study it belongs to ...), as the recording code says.
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not str(self.source).strip():
            raise ValidationError("event needs a source (\"app\" for this studio's annotators)")
        if self.kind not in EVENT_KINDS:
            raise ValidationError(f"event kind must be one of {EVENT_KINDS}, got {self.kind!r}")
        if not str(self.annotator).strip():
            raise ValidationError("event needs an annotator name")
        check_judgement_value(self.kind, self.value, self.target)
        if self.kind == "undo" and self.undoes is None:
            raise ValidationError("an undo event must name the event it undoes")


def iter_chunks(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
