"""Grounding: the names a response uses, found among the nodes of a reference scene graph.

``ReferenceGraph`` is a scene graph as a judge reads it: objects of one name merged into
one node (how many there are is its *multiplicity*), their attributes pooled, and edges
between nodes with parsed predicates. ``Grounder`` finds the nodes a claimed name refers
to, in order of trust:

1. **lemma**: the same normalised name ("petals" is "petal"), or the claim's head noun
   names the node ("coffee table" for a table);
2. **synonym**: WordNet synonyms and the lexicon's synonym sets ("couch" for a sofa);
3. **hypernym**: the claim names a kind the node belongs to ("animal" for a dog): a true,
   less specific claim;
4. **hyponym**: the claim names a kind of the node ("attire" for the graph's "clothing");
5. **embedding**: cosine of the two names at or above ``threshold`` (calibrated on data;
   see docs/validity.md), for what the lexicon does not know.

Every result says how it was found, so a verdict's reason can name it.

>>> from hallu_studio.model import SceneGraph
>>> g = ReferenceGraph.from_scene_graph(SceneGraph.from_dict({"objects": [
...     {"id": "1", "name": "dog", "attributes": ["brown"]}, {"id": "2", "name": "dog"},
...     {"id": "3", "name": "sofa"}], "relations": [{"subject": "1", "predicate": "on", "object": "3"}]}))
>>> [(n.name, n.multiplicity, sorted(n.attributes)) for n in g.nodes]
[('dog', 2, ['brown']), ('sofa', 1, [])]
>>> [(m.node.name, m.how) for m in Grounder().ground("couch", g)], [(m.node.name, m.how) for m in Grounder().ground("animals", g)]
([('sofa', 'synonym')], [('dog', 'hypernym')])
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from .reference_scope import CLOSED, Scope
from .vectors import PhraseEncoder, unit_rows
from .lexicon.attributes import attribute_family, same_attribute, shares_scale
from .lexicon.forms import normalize_name, unplaced
from .lexicon.nouns import is_animate, relation
from .lexicon.predicates import Predicate, entails, inverse, is_symmetric, parse_predicate, part_of
from .model import SceneGraph

# Predicates whose subject acts on the object: a person wears, holds, rides. Tri-HE's (GQA-derived)
# references often write them backwards ("(shirt, wearing, man)"); such an edge is read the right way.
AGENTIVE_VERBS = frozenset({"wear", "hold", "use", "ride", "carry", "eat", "look", "drink", "throw", "push", "pull",
                            "drive", "watch", "play", "handle", "touch", "hug", "feed", "pet", "cut", "read", "fly",
                            "walk", "catch", "kick", "swing", "type"})
# Predicates that only say "is": the triplet gives its subject an attribute (or a kind).
COPULAS = frozenset({"", "is", "are", "be", "has color", "has colour", "color", "colour", "made of", "is made of"})


_LEADING_PREP = re.compile(r"^(on|in|at|to|toward|towards|into|onto|near|by|under|behind|inside|beside)\s+(.+)$",
                           re.I)


def fold_preposition(p: str, o: str) -> tuple[str, str]:
    """ "(rain, is falling, on street)" -> ("is falling on", "street"): the preposition belongs to the predicate."""
    m = _LEADING_PREP.match(o.strip())
    return (f"{p} {m.group(1)}", m.group(2)) if m else (p, o)


@dataclass
class Node:
    name: str  # the normalised name every object of the node shares
    labels: list[str] = field(default_factory=list)  # the names as the graph wrote them
    attributes: set[str] = field(default_factory=set)
    multiplicity: int = 0
    # Each object's own attributes, where the graph has objects (several spheres: a big red one, a small blue one).
    instances: list[frozenset[str]] = field(default_factory=list)


@dataclass(frozen=True)
class Edge:
    subject: int  # node indices
    object: int
    predicate: Predicate
    text: str  # as the graph wrote it
    reversed: bool = False  # read backwards (an agentive predicate written object-first)




@dataclass
class ReferenceGraph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)  # node name -> its index
    # Which objects an edge joins, where the graph has objects: (subject instance, object instance) pairs, indices
    # into the nodes' ``instances`` ("the red cube is left of the blue cube" holds of one pair of cubes only).
    pairs: dict[Edge, set[tuple[int, int]]] = field(default_factory=dict, repr=False, compare=False)
    scope: Scope = CLOSED  # what absence from the graph settles

    def node_index(self, name: str) -> int:
        """The index of the node named ``name`` (normalised), created when missing."""
        key = normalize_name(name) or name.strip().lower()
        i = self._index.get(key)
        if i is None:
            self.nodes.append(Node(key, [name]))
            i = self._index[key] = len(self.nodes) - 1
        elif name not in self.nodes[i].labels:
            self.nodes[i].labels.append(name)
        return i

    def names_relation(self, s: str, p: str, o: str) -> Node | None:
        """A node whose own name states the relation ("food in pan" for (food, in, pan)), or None."""
        words = f"{normalize_name(s)} {p.strip().lower()} {normalize_name(o)}"
        for node in self.nodes:
            if node.name == normalize_name(words) or any(normalize_name(label) == normalize_name(words)
                                                         for label in node.labels):
                return node
        return None

    def edges_between(self, a: Iterable[int], b: Iterable[int]) -> list[Edge]:
        sa, sb = set(a), set(b)
        return [e for e in self.edges if e.subject in sa and e.object in sb]

    def add_triplet(self, s: str, p: str, o: str, instances: tuple[int, int] | None = None) -> None:
        """A reference triplet: an attribute when ``p`` is a copula and ``o`` is no object, else an edge.

        ``instances``: which object of each end's node it joins, where the graph has objects."""
        if not s.strip() or not o.strip():
            return
        si = self.node_index(s)
        if p.strip().lower() in COPULAS and (attribute_family(o) is not None or len(o.split()) <= 2 and
                                            normalize_name(o) not in self._index):
            self.nodes[si].attributes.add(o.strip().lower())
            return
        p, o = fold_preposition(p, o)
        oi = self.node_index(o)
        # "(snow, is on the ground, ground)": the predicate repeats its object.
        head = normalize_name(o).rsplit(" ", 1)[-1]
        p = re.sub(rf"\b(?:the\s+|a\s+)?{re.escape(head)}s?\s*$", "", p.strip(), flags=re.I) if head else p
        pred = parse_predicate(p)
        backwards = pred.verb in AGENTIVE_VERBS and not pred.passive and is_animate(o) and not is_animate(s)
        if backwards:
            si, oi = oi, si
            instances = instances[::-1] if instances is not None else None
        edge = Edge(si, oi, pred, p, backwards)
        if edge not in self.edges:
            self.edges.append(edge)
        if instances is not None:
            self.pairs.setdefault(edge, set()).add((instances[0], instances[1]))

    def joins(self, e: Edge, subjects: Mapping[int, set[int]] | None, objects: Mapping[int, set[int]] | None) -> bool:
        """Whether edge ``e`` joins allowed objects: ``subjects`` / ``objects`` map a node to the instances its end
        may be (a node absent from the map, or no map: any); an edge without instances joins any."""
        pairs = self.pairs.get(e)
        if pairs is None or (not subjects and not objects):
            return True
        a_ok = subjects.get(e.subject) if subjects else None
        b_ok = objects.get(e.object) if objects else None
        return any((a_ok is None or a in a_ok) and (b_ok is None or b in b_ok) for a, b in pairs)

    @classmethod
    def from_scene_graph(cls, graph: SceneGraph, extra: Sequence[tuple[str, str, str]] = ()) -> "ReferenceGraph":
        g = cls()
        index_of: dict[str, int] = {}
        instance_of: dict[str, int] = {}
        for o in graph.objects:
            i = g.node_index(o.name)
            index_of[o.id] = i
            instance_of[o.id] = len(g.nodes[i].instances)
            g.nodes[i].multiplicity += 1
            g.nodes[i].attributes.update(a.strip().lower() for a in o.attributes)
            g.nodes[i].instances.append(frozenset(a.strip().lower() for a in o.attributes))
        by_id = graph.object_by_id()
        for r in graph.relations:
            g.add_triplet(by_id[r.subject].name, r.predicate, by_id[r.object].name,
                          (instance_of[r.subject], instance_of[r.object]))
        for t in extra:
            g.add_triplet(*t)
        return g

    @classmethod
    def from_triplets(cls, objects: Sequence[str], triplets: Sequence[tuple[str, str, str]],
                      attributes: Sequence[tuple[str, str]] = (),
                      counts: Mapping[str, int] | None = None) -> "ReferenceGraph":
        """A graph from extracted concepts (a dense caption's): each listed object once, unless
        ``counts`` (name -> how many the text says) tells its multiplicity."""
        g = cls()
        for name in objects:
            g.nodes[g.node_index(name)].multiplicity += 1
        for name, attr in attributes:
            if name.strip() and attr.strip():
                g.nodes[g.node_index(name)].attributes.add(attr.strip().lower())
        for t in triplets:
            g.add_triplet(*t)
        for name, n in (counts or {}).items():
            g.nodes[g.node_index(name)].multiplicity = n
        return g


@dataclass(frozen=True)
class Match:
    node: Node
    index: int
    how: str  # lemma | synonym | hypernym | embedding
    score: float = 1.0

    def describe(self) -> str:
        label = self.node.labels[0] if self.node.labels else self.node.name
        return f"{label!r} ({self.how}{'' if self.how != 'embedding' else f' {self.score:.2f}'})"


# Kinds of match, most trusted first. A hyponym ("attire" for the graph's "clothing", "puppy" for its
# "dog") is more specific than the graph can confirm, but names the same thing: graphs built from
# coarse annotations (GQA, Visual Genome) name things by their kind.
_TRUST = ("lemma", "synonym", "hypernym", "hyponym")
_CONJUNCTION = re.compile(r"\s*(?:,|\band\b|\bor\b|/)\s*")


@lru_cache(maxsize=100_000)
def _alternatives(name: str) -> tuple[str, ...]:
    """A node name and the things it names: each of a list ("vegetables and meat"), and the thing a
    placed name is about ("player on the right" is a player, "food in pan" is food)."""
    out = [name]
    for part in _CONJUNCTION.split(name):
        # "crowd of people" names people too
        of = part.split(" of ", 1)[1] if " of " in part else None
        for alt in (part, unplaced(part), of or ""):
            alt = normalize_name(alt)
            if alt and alt not in out:
                out.append(alt)
    return tuple(out)


class Grounder:
    """Finds the nodes of a ``ReferenceGraph`` that a claimed object name refers to (see the module docstring)."""

    def __init__(self, encoder: PhraseEncoder | None = None, threshold: float = 0.8) -> None:
        self.encoder = encoder
        self.threshold = threshold

    def config(self) -> dict[str, object]:
        return {"grounding": "lemma>synonym>hypernym>embedding", "embedding_threshold": self.threshold,
                "embedding": getattr(self.encoder, "model_name", None) if self.encoder is not None else None}

    def ground(self, name: str, graph: ReferenceGraph) -> list[Match]:
        """The nodes ``name`` refers to, best kind of match only; empty when none is found."""
        found: dict[str, list[Match]] = {}
        claim_head = normalize_name(name).rsplit(" ", 1)[-1]
        for i, node in enumerate(graph.nodes):
            for alt in _alternatives(node.name):
                rel = relation(name, alt)
                how = {"same": "synonym", "general": "hypernym", "specific": "hyponym"}.get(rel or "")
                if how == "synonym" and claim_head == alt.rsplit(" ", 1)[-1]:
                    how = "lemma"
                if how:
                    found.setdefault(how, []).append(Match(node, i, how))
                    break
        # A node of exactly the claimed name is the one meant: "lightning tower" is not also the "tower".
        exact = [m for m in found.get("lemma", []) if m.node.name == normalize_name(name)]
        if exact:
            return exact
        for how in _TRUST:
            if found.get(how):
                return found[how]
        return self._by_embedding(name, graph)

    def nearest(self, name: str, graph: ReferenceGraph) -> tuple[str, float] | None:
        """The most similar node name and its cosine (for a reason that says what was closest)."""
        sims = self._similarities(name, graph)
        if sims is None:
            return None
        best = int(np.argmax(sims))
        return graph.nodes[best].name, float(sims[best])

    def _similarities(self, name: str, graph: ReferenceGraph) -> np.ndarray | None:
        if self.encoder is None or not graph.nodes or not name.strip():
            return None
        vecs = unit_rows(self.encoder.encode([normalize_name(name) or name] + [n.name for n in graph.nodes]))
        return vecs[1:] @ vecs[0]

    def _by_embedding(self, name: str, graph: ReferenceGraph) -> list[Match]:
        sims = self._similarities(name, graph)
        if sims is None:
            return []
        return [Match(graph.nodes[i], i, "embedding", float(s)) for i, s in enumerate(sims) if s >= self.threshold]


@dataclass(frozen=True)
class EdgeSupport:
    """What the edges between two grounded ends say of a claimed predicate."""

    edge: Edge | None  # the edge that entails the claim, if one does
    the_other_way: bool  # that edge runs object -> subject (an inverse or symmetric predicate)
    between: list[Edge]  # every edge between the ends, either way (a conflict's reason names them)

    @property
    def supported(self) -> bool:
        return self.edge is not None


def edge_support(graph: ReferenceGraph, subjects: Iterable[int], pred: Predicate, objects: Iterable[int],
                 subject_instances: Mapping[int, set[int]] | None = None,
                 object_instances: Mapping[int, set[int]] | None = None) -> EdgeSupport:
    """Whether an edge between ``subjects`` and ``objects`` (node indices) entails ``pred``.

    Checked in both directions: forward by entailment, backward by the inverse predicate
    ("under" for "on", "held by" for "holding") or a symmetric one ("near"). A passive claim
    is read active with its ends swapped. ``subject_instances`` / ``object_instances`` (node ->
    instance indices, ``instances_fitting``) keep only edges between the objects the claim means.
    """
    si, oi = list(subjects), list(objects)
    if pred.passive:
        si, oi, pred = oi, si, Predicate(pred.verb, pred.prep, False)
        subject_instances, object_instances = object_instances, subject_instances
    forward = [e for e in graph.edges_between(si, oi) if graph.joins(e, subject_instances, object_instances)]
    backward = [e for e in graph.edges_between(oi, si) if graph.joins(e, object_instances, subject_instances)]
    for e in forward:
        if entails(e.predicate, pred):
            return EdgeSupport(e, False, forward + backward)
    inv = inverse(pred)
    for e in backward:
        if ((inv is not None and entails(e.predicate, inv)) or (is_symmetric(pred) and entails(e.predicate, pred))
                or part_of(e.predicate, pred)):
            return EdgeSupport(e, True, forward + backward)
    return EdgeSupport(None, False, forward + backward)


@dataclass(frozen=True)
class AttributeSupport:
    """What the grounded nodes' attributes say of a claimed attribute."""

    held: list[str]  # every attribute the nodes have
    agreeing: list[str]  # those that say the same ("grey" for "gray")
    conflicting: list[str]  # those on the same scale that say otherwise ("black" for "red")


_KIND_OF = ("same", "general", "specific")


def counted(matches: Sequence[Match]) -> int:
    """How many things the nodes a counted name grounds to hold.

    Nodes that name one kind, or one a kind of the other ("individual" and "person", "person" and
    "man"), are the same things named twice: their group counts as its largest multiplicity. Kinds
    apart from each other ("woman" and "man", "boy" and "girl") add up.

    >>> g = ReferenceGraph.from_triplets(["individual", "person", "woman", "man"], [], counts={"individual": 2})
    >>> counted([Match(g.nodes[0], 0, "lemma"), Match(g.nodes[1], 1, "synonym")])
    2
    >>> counted([Match(g.nodes[2], 2, "hypernym"), Match(g.nodes[3], 3, "hypernym")])
    2
    """
    groups: list[list[Match]] = []
    for m in matches:
        joined = [g for g in groups if any(relation(m.node.name, x.node.name) in _KIND_OF for x in g)]
        merged = [m] + [x for g in joined for x in g]
        groups = [g for g in groups if not any(g is j for j in joined)] + [merged]
    return sum(max(x.node.multiplicity for x in g) for g in groups)


def stated_counts(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """How many of each thing a text says there are, by normalised name: the largest number it states for a
    name ("two screens ... the screen on the right": two, the one is one of them).

    >>> stated_counts([("screens", 2), ("screen", 1), ("dragon", 3), ("", 4)])
    {'screen': 2, 'dragon': 3}
    """
    out: dict[str, int] = {}
    for name, n in counts:
        key = normalize_name(name)
        if key:
            out[key] = max(out.get(key, 0), int(n))
    return out


def attribute_support(matches: Sequence[Match], attr: str) -> AttributeSupport:
    """The grounded nodes' attributes that agree or conflict with ``attr``; neither: the graph is silent."""
    held = sorted({a for m in matches for a in m.node.attributes})
    agreeing = [a for a in held if same_attribute(attr, a)]
    conflicting = [] if agreeing else [a for a in held if shares_scale(attr, a)]
    return AttributeSupport(held, agreeing, conflicting)


def instances_fitting(matches: Sequence[Match], attributes: Sequence[str]) -> dict[int, set[int]]:
    """For each grounded node, the objects ("instances") that ``attributes`` can describe: those holding every one
    ("the red cube"), else those none of them contradicts; a node where none fits is left out of the map (any
    object), so a wrong adjective is the attribute claim's error, not the relation's.

    >>> from hallu_studio.model import SceneGraph
    >>> g = ReferenceGraph.from_scene_graph(SceneGraph.from_dict({"objects": [
    ...     {"id": "a", "name": "cube", "attributes": ["red", "small"]}, {"id": "b", "name": "cube", "attributes": ["blue"]}]}))
    >>> m = Grounder().ground("cube", g)
    >>> instances_fitting(m, ["red"]), instances_fitting(m, ["small"]), instances_fitting(m, ["large"])
    ({0: {0}}, {0: {0}}, {0: {1}})
    >>> instances_fitting(m, ["green"]), instances_fitting(m, ["round"])  # fits none; says nothing either holds
    ({}, {})
    """
    out: dict[int, set[int]] = {}
    if not attributes:
        return out
    for m in matches:
        insts = m.node.instances
        if len(insts) < 2:
            continue
        holding = {k for k, inst in enumerate(insts) if all(any(same_attribute(a, h) for h in inst) for a in attributes)}
        if not holding:
            holding = {k for k, inst in enumerate(insts) if not any(
                shares_scale(a, h) and not any(same_attribute(a, x) for x in inst) for a in attributes for h in inst)}
        if holding and len(holding) < len(insts):
            out[m.index] = holding
    return out
