"""Concepts as the matchers and metrics compare them: one home beside the grounding (``grounding.py``).

A ``Concept`` is one claim of a text or a reference: an object ``(name,)``, an attribute ``(object, attribute)``,
a relation ``(subject, predicate, object)`` or a count ``(object, "2")``. ``concept_list`` turns an extracted
``ConceptSet`` (or a scene graph's) into the distinct concepts a metric counts, ``concept_spans`` says where a text
states each, ``Concept.text`` writes one as a phrase. A matcher (``ConceptMatcher``; the offline one is
``concept_matching.GraphConceptMatcher``) compares a response's concepts with a reference's and returns a
``MatchOutcome``: hallucinated, omitted, matched, and why. HalFscore counts the outcome; EMD's grounded cost reads
it (``metrics/emd_ground_cost.py``).

>>> cs = ConceptSet.from_dict({"objects": ["cat", "sofa"], "attributes": [["cat", "grey"]],
...                            "relations": [["cat", "on", "sofa"]]})
>>> [c.text() for c in concept_list(cs)]
['cat', 'sofa', 'grey cat', 'cat on sofa']
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

import networkx as nx

from .lexicon.forms import number_word
from .model import ConceptSet, SceneGraph, Span

KINDS: tuple[str, ...] = ("object", "attribute", "relation", "count")


@dataclass(frozen=True)
class Concept:
    kind: str  # object | attribute | relation | count
    parts: tuple[str, ...]  # (name,) | (object, attribute) | (subject, predicate, object) | (object, "2")
    # A relation's adjectives for its subject and object, where the text says which of several objects of one
    # name it means ("the red cube is left of the blue cube"): two such relations are two concepts.
    qualifiers: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def text(self) -> str:
        """The phrase matched: "cat", "grey cat", "cat on sofa", "two cat"."""
        if self.kind == "attribute":
            return f"{self.parts[1]} {self.parts[0]}"
        if self.kind == "count":
            return f"{self.number_word()} {self.parts[0]}"
        return " ".join(self.parts)

    def number_word(self) -> str:
        """A count concept's number as a word ("two")."""
        return number_word(int(self.parts[1])) if self.parts[1].isdigit() else self.parts[1]

    def objects(self) -> tuple[str, ...]:
        if self.kind == "relation":
            return (self.parts[0], self.parts[2])
        return self.parts[:1]

    def to_list(self) -> list[str]:
        return [self.kind, *self.parts]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def concept_graph(concepts: ConceptSet) -> nx.MultiDiGraph:
    """Nodes: every entity (objects, relation ends, attribute owners) with its attributes; edges: relations."""
    g = nx.MultiDiGraph()

    def node(name: str) -> str:
        key = _norm(name)
        if key and key not in g:
            g.add_node(key, attributes=[])
        return key

    for o in concepts.objects:
        node(o.name)
    for a in concepts.attributes:
        key, attr = node(a.object), _norm(a.attribute)
        if key and attr and attr not in g.nodes[key]["attributes"]:
            g.nodes[key]["attributes"].append(attr)
    for r in concepts.relations:
        s, o, p = node(r.subject), node(r.object), _norm(r.predicate)
        q = _qualifiers(r)
        if s and o and p and not any(d["predicate"] == p and d["qualifiers"] == q
                                     for d in (g.get_edge_data(s, o) or {}).values()):
            g.add_edge(s, o, predicate=p, qualifiers=q)
    return g


def _qualifiers(r: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (tuple(_norm(a) for a in getattr(r, "subject_attributes", ())),
            tuple(_norm(a) for a in getattr(r, "object_attributes", ())))


def count_concepts(concepts: ConceptSet, graph: SceneGraph | None = None) -> list[Concept]:
    """(object, n) for each count the concept set states ("two dogs": ``counts``).

    A scene graph's own concept set (``graph`` given, and the set lists its objects) states
    a count for every name the graph has two or more objects of.
    """
    # Each distinct number is a claim: "four people ... five people" states two, one of them wrong.
    counts = list(dict.fromkeys((_norm(c.object), int(c.count)) for c in getattr(concepts, "counts", None) or []
                                if _norm(c.object)))
    if not counts and graph is not None and [o.name for o in concepts.objects] == graph.object_names():
        tally = Counter(_norm(name) for name in graph.object_names())
        counts = [(name, n) for name, n in tally.items() if name and n >= 2]
    return [Concept("count", (name, str(n))) for name, n in counts]


def concept_list(concepts: ConceptSet, graph: SceneGraph | None = None) -> list[Concept]:
    """The distinct concepts HalFscore counts: the concept graph's, then the counts."""
    return graph_concepts(concept_graph(concepts)) + count_concepts(concepts, graph)


def concept_spans(concepts: ConceptSet) -> dict[Concept, Span]:
    """Where the response first states each concept (extracted concepts carry spans)."""
    out: dict[Concept, Span] = {}
    found: list[tuple[Concept, Span | None]] = [(Concept("object", (_norm(o.name),)), o.span) for o in concepts.objects]
    found += [(Concept("attribute", (_norm(a.object), _norm(a.attribute))), a.span) for a in concepts.attributes]
    found += [(Concept("relation", (_norm(r.subject), _norm(r.predicate), _norm(r.object)), _qualifiers(r)), r.span)
              for r in concepts.relations]
    found += [(Concept("count", (_norm(c.object), str(int(c.count)))), getattr(c, "span", None))
              for c in getattr(concepts, "counts", None) or []]
    for concept, span in found:
        if span is not None and concept not in out:
            out[concept] = span
    return out


def pointer(concept: Concept, span: Span | None, text: str) -> list[int] | None:
    """The words of a concept's span that make it itself: an attribute's word, a relation's predicate.

    An attribute span runs from its object to the word ("helmet is black, wooden") and a relation
    span over the clause; pointing at the distinctive word leaves correct neighbours unflagged.
    """
    if span is None:
        return None
    start, end = int(span[0]), int(span[1])
    if concept.kind in ("attribute", "relation"):
        pattern = re.compile(r"(?<![\w])" + re.escape(concept.parts[1]) + r"(?![\w])", re.IGNORECASE)
        hits = list(pattern.finditer(text, start, end))
        if hits:
            hit = hits[-1] if concept.kind == "attribute" else hits[0]
            return [hit.start(), hit.end()]
    return [start, end]


def graph_concepts(g: nx.MultiDiGraph) -> list[Concept]:
    """The distinct concepts of a concept graph: objects, then attributes, then relations."""
    out = [Concept("object", (n,)) for n in g.nodes]
    out += [Concept("attribute", (n, a)) for n, data in g.nodes(data=True) for a in data["attributes"]]
    out += [Concept("relation", (s, d["predicate"], o), d.get("qualifiers", ((), ()))) for s, o, d in g.edges(data=True)]
    return out


@dataclass
class MatchOutcome:
    hallucinated: list[Concept] = field(default_factory=list)
    omitted: list[Concept] = field(default_factory=list)
    matched: list[tuple[Concept, Concept | None, float | None]] = field(default_factory=list)
    # Response concepts that are no claim (an attribute word the extractor took for a thing).
    ignored: list[Concept] = field(default_factory=list)
    reasons: dict[Concept, str] = field(default_factory=dict)  # why a concept is hallucinated or omitted
    # Matchers that know them: each matched response concept's reference concepts, and the hallucinated
    # concepts the reference is silent on (an attribute it does not give, two things it does not relate):
    # A.8 counts them, though they contradict nothing the reference says.
    covers: dict[Concept, list[Concept]] = field(default_factory=dict)
    silent: list[Concept] = field(default_factory=list)
    # Against open-world references (captions, an object list: ``reference_scope.Scope``), what they neither state nor
    # contradict: not hallucinated, and not matched either.
    unverifiable: list[Concept] = field(default_factory=list)


class ConceptMatcher(Protocol):
    name: str

    def config(self) -> dict[str, Any]: ...

    def match(self, response: list[Concept], reference: list[Concept]) -> MatchOutcome: ...


def absorb(unmatched: list[Concept]) -> list[Concept]:
    """Drop attributes / relations that involve an unmatched object: that object already counts (A.8)."""
    missing = {c.parts[0] for c in unmatched if c.kind == "object"}
    return [c for c in unmatched if c.kind == "object" or not any(o in missing for o in c.objects())]
