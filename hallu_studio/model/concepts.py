"""Concept sets: the objects, attributes, relations and counts a text states, with where it states them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from .base import Span, ValidationError, span_from
from .graph import SceneGraph


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
            return [span_from(s) for s in raw] + [None] * (n - len(raw))

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
