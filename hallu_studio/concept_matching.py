"""The offline concept matcher: concepts grounded on the reference graph, as the graph judge grounds claims.

HalFscore's default matcher (``scoring.halfscore_matcher = "graph"``) and EMD's grounded cost
(``metrics/emd_ground_cost.py``) both read it; the concepts themselves are ``concepts.py``'s.

The reference concepts (a scene graph's, or those extracted from a dense caption) become a
``grounding.ReferenceGraph``: nodes merged by name with their attributes and multiplicity,
edges with parsed predicates. A response concept is then

- an **object**: matched when its name grounds to a node (lemma, synonym, hypernym, then
  embedding: "animal" for a dog, "couch" for a sofa), else hallucinated;
- an **attribute** (object, attribute): matched when the object grounds and a grounded node
  holds the same attribute ("grey" / "gray"), or its name says it ("external" of the node
  "external tank"). Otherwise hallucinated, whether the reference says something else on the
  same scale (a *conflict*: red for a black laptop) or is *silent*: the A.8 prompt counts
  "each attribute of a matching object that is not present in the GT list" as incorrect and
  only new or different information as a hallucination, so silence is not a pass;
- a **relation**: matched when both ends ground and an edge between them entails it, either
  way round (``grounding.edge_support``: synonyms, passives, inverses), else hallucinated
  (a conflicting edge, or no edge, as A.8's "new or significantly different");
- a **count** (object, n): matched when the grounded nodes' multiplicity is n.

As A.8 asks, a concept that involves a hallucinated object is not counted again (``concepts.absorb``).
Recall runs the same grounding the other way: a reference concept is omitted unless some
response concept matched it (its node, attribute, edge or count). A bare colour word the
extractor took for an object ("The flag is red, gold and silver" -> object "gold") is no
claim of a thing: it is left out of the counts and listed as *ignored*.

Worked example. Reference: two dogs (one brown) on a sofa. Response concepts: animal (matched:
hypernym of dog), couch (matched: synonym of sofa), (dog, brown) matched, (dog, black)
hallucinated (conflict: the graph says brown), (dog, under, sofa) hallucinated (the edge says
on), (dog, 3) hallucinated (the graph has 2). Omitted: the count (dog, 2) and the edge (dog,
on, sofa), which no response concept matched.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Sequence

from .concepts import Concept, MatchOutcome, absorb
from .grounding import (Grounder, Match, ReferenceGraph, attribute_support, counted, edge_support, instances_fitting,
                        stated_counts)
from .lexicon.attributes import attribute_family
from .lexicon.forms import count_of, normalize_name
from .lexicon.predicates import contradicts, parse_predicate
from .model import SceneGraph
from .reference_scope import CLOSED, Scope
from .vectors import PhraseEncoder

Key = tuple[Any, ...]  # what a response concept can cover on the reference side


class _Reference:
    """The reference graph and, for recall, which reference concept each node, attribute, edge and count is."""

    def __init__(self, reference: Sequence[Concept], scene_graph: SceneGraph | None = None) -> None:
        objects = [c.parts[0] for c in reference if c.kind == "object"]
        attributes = [(c.parts[0], c.parts[1]) for c in reference if c.kind == "attribute"]
        triplets = [(c.parts[0], c.parts[1], c.parts[2]) for c in reference if c.kind == "relation"]
        counts = stated_counts((c.parts[0], int(c.parts[1])) for c in reference
                               if c.kind == "count" and c.parts[1].isdigit())
        if scene_graph is not None and not scene_graph.is_empty():
            # The reference concepts are this graph's: built from it, the graph keeps which objects each edge joins.
            self.graph = g = ReferenceGraph.from_scene_graph(scene_graph)
        else:
            self.graph = g = ReferenceGraph.from_triplets(objects, triplets, attributes, counts)
        self.stated = set(counts)  # the names the reference gives a number for
        self.concept_of: dict[Key, Concept] = {}
        for c in reference:
            self.concept_of.setdefault(self._key(c), c)

    def _index(self, name: str) -> int | None:
        key = normalize_name(name) or name.strip().lower()
        return next((i for i, n in enumerate(self.graph.nodes) if n.name == key), None)

    def _key(self, c: Concept) -> Key:
        i = self._index(c.parts[0])
        if c.kind in ("object", "count"):
            return (c.kind, i)
        if c.kind == "attribute":
            return ("attribute", i, c.parts[1].strip().lower())
        j = self._index(c.parts[2])
        for e in self.graph.edges:
            if e.text == c.parts[1] and {e.subject, e.object} == {i, j}:
                return ("edge", e)
        return ("attribute", i, c.parts[2].strip().lower())  # a copula triplet the graph keeps as an attribute


class GraphConceptMatcher:
    """Matches concepts through ``grounding.Grounder`` on the reference graph (see the module docstring)."""

    name = "graph"
    uses_scene_graph = True  # HalFscoreMetric passes the sample's scene graph to ``match``

    def __init__(self, encoder: PhraseEncoder | None = None, *, grounding_threshold: float = 0.8,
                 model_name: str = "") -> None:
        self.encoder = encoder
        self.grounder = Grounder(encoder, grounding_threshold)
        self.model_name = model_name or (getattr(encoder, "model_name", type(encoder).__name__) if encoder else "")
        self._graphs: "OrderedDict[tuple[Any, ...], _Reference]" = OrderedDict()

    def config(self) -> dict[str, Any]:
        return {"matcher": self.name, "version": 2, **self.grounder.config(), "model": self.model_name or None,
                "silent_attribute": "hallucinated (A.8)"}

    def warm(self, pairs: Sequence[tuple[Sequence[Concept], Sequence[Concept]]]) -> None:
        """Encode, in one call, the names the lexicon cannot ground and the nodes they will be compared with."""
        if self.encoder is None:
            return
        names: set[str] = set()
        lexical = Grounder()
        for response, reference in pairs:
            graph = self._reference(reference).graph
            missing = {n for c in response for n in c.objects() if not lexical.ground(n, graph)}
            if missing:
                names.update(normalize_name(n) or n for n in missing)
                names.update(node.name for node in graph.nodes)
        names.discard("")
        if names:
            self.encoder.encode(sorted(names))

    def _reference(self, reference: Sequence[Concept], scene_graph: SceneGraph | None = None) -> _Reference:
        shape = None if scene_graph is None else (
            tuple((o.id, o.name, tuple(o.attributes)) for o in scene_graph.objects),
            tuple((r.subject, r.predicate, r.object) for r in scene_graph.relations))
        key = (tuple(reference), shape)
        if key not in self._graphs:
            self._graphs[key] = _Reference(reference, scene_graph)
            if len(self._graphs) > 256:
                self._graphs.popitem(last=False)
        return self._graphs[key]

    def match(self, response: list[Concept], reference: list[Concept],
              scene_graph: SceneGraph | None = None, scope: Scope = CLOSED) -> MatchOutcome:
        """``scene_graph``: the graph ``reference`` was read from, if it was (its edges say which objects they join).
        ``scope``: what the reference can settle; against open-world references (captions, an object list) what
        they neither state nor contradict is ``unverifiable``, not hallucinated (module docstring)."""
        ref = self._reference(reference, scene_graph)
        graph = ref.graph
        grounded: dict[str, list[Match]] = {}

        def ground(name: str) -> list[Match]:
            if name not in grounded:
                grounded[name] = self.grounder.ground(name, graph)
            return grounded[name]

        tally = _Tally(ref, scope)
        said_as_attribute = {c.parts[1] for c in response if c.kind == "attribute"}
        for c in response:
            name = c.parts[0]
            ms = ground(name)
            if c.kind == "object":
                _object_verdict(tally, c, name, ms, said_as_attribute)
                continue
            if not ms:
                tally.absent(c, name)  # where hallucinated, absorbed by that object below
                continue
            nodes = ", ".join(m.describe() for m in ms)
            if c.kind == "relation" and parse_predicate(c.parts[1]).copula:
                c_attr, attr = c, c.parts[2]
            elif c.kind == "attribute":
                c_attr, attr = c, c.parts[1]
            else:
                c_attr, attr = None, ""
            n = int(c.parts[1]) if c.kind == "count" and c.parts[1].isdigit() else count_of(attr) if attr else None
            if n is not None:
                _count_verdict(tally, c, n, ms, nodes)
            elif c_attr is not None:
                _attribute_verdict(tally, c, attr, ms, nodes)
            else:
                _relation_verdict(tally, c, ms, ground, nodes)
        return tally.finished()


class _Tally:
    """What ``GraphConceptMatcher.match`` has found so far: the outcome it builds, the hallucinated concepts (absorbed
    when it finishes) and the reference keys a response concept covered."""

    def __init__(self, ref: _Reference, scope: Scope) -> None:
        self.ref, self.scope, self.graph = ref, scope, ref.graph
        self.out = MatchOutcome()
        self.hallucinated: list[Concept] = []
        self.covered: set[Key] = set()

    def matched(self, c: Concept, keys: list[Key], ms: Sequence[Match]) -> None:
        out = self.out
        self.covered.update(keys)
        out.covers[c] = list(dict.fromkeys(self.ref.concept_of[k] for k in keys if k in self.ref.concept_of))
        partner = out.covers[c][0] if out.covers[c] else None
        out.matched.append((c, partner, min(m.score for m in ms)))

    def wrong(self, c: Concept, why: str) -> None:
        self.hallucinated.append(c)
        self.out.reasons[c] = why

    def unsettled(self, c: Concept, why: str) -> None:
        self.out.unverifiable.append(c)
        self.out.reasons[c] = f"unverifiable: {why}"

    def absent(self, c: Concept, name: str) -> None:
        """``c`` names a thing no reference object grounds: hallucinated where the reference settles that it is not
        there (a complete graph, an object list's vocabulary), else unverifiable."""
        scope = self.scope
        if scope.objects:
            self.wrong(c, f"{name!r} matches no reference object" + (
                " by lemma, synonym, hypernym or embedding" if c.kind == "object" else ""))
        elif scope.absence(name):
            self.wrong(c, f"{name!r} is not in the picture: {scope.absence(name)}")
        else:
            self.unsettled(c, f"the references do not mention {name!r}, and cannot say it is not there")

    def finished(self) -> MatchOutcome:
        out, ref = self.out, self.ref
        not_things = {c.parts[0] for c in out.ignored}
        out.hallucinated = [c for c in absorb(self.hallucinated) if not not_things & set(c.objects())]
        # What a hallucinated object's attribute or relation says is that object's error, counted once (A.8).
        gone = {c.parts[0] for c in out.hallucinated if c.kind == "object"}
        out.unverifiable = [c for c in out.unverifiable if not (gone | not_things) & set(c.objects())]
        omitted = [c for k, c in ref.concept_of.items() if k not in self.covered]
        out.omitted = absorb(omitted)
        for c in out.omitted:
            out.reasons.setdefault(c, "no response concept matches it")
        return out


def _object_verdict(tally: _Tally, c: Concept, name: str, ms: list[Match], said_as_attribute: set[str]) -> None:
    if ms:
        tally.matched(c, [("object", m.index) for m in ms], ms)
    elif attribute_family(name) == "colour" or name in said_as_attribute:
        tally.out.ignored.append(c)
    elif not tally.scope.objects and tally.scope.presence(name):
        tally.out.matched.append((c, None, 1.0))  # the object list holds its category
    else:
        tally.absent(c, name)


def _count_verdict(tally: _Tally, c: Concept, n: int, ms: list[Match], nodes: str) -> None:
    has = counted(ms)
    stated = [m for m in ms if m.node.name in tally.ref.stated]
    if not tally.scope.details and (not stated or (n == 1 and counted(stated) > 1)):
        tally.unsettled(c, f"the references give no number for {nodes}" if not stated else
                        f"the references say {counted(stated)}; one of them is no total")
    elif has == n:
        tally.matched(c, [("count", m.index) for m in ms], ms)
    else:
        tally.wrong(c, f"the response says {n}, the reference has {has} of {nodes}")


def _attribute_verdict(tally: _Tally, c: Concept, attr: str, ms: list[Match], nodes: str) -> None:
    support = attribute_support(ms, attr)
    in_name = [m for m in ms if attr.lower() in m.node.name.split()]
    if support.agreeing or in_name:
        tally.matched(c, [("attribute", m.index, a) for m in ms for a in support.agreeing], ms)
    elif support.conflicting:
        tally.wrong(c, f"conflicts with the reference: {nodes} is {', '.join(support.conflicting)}")
    elif not tally.scope.details:
        tally.unsettled(c, f"the references do not say whether {nodes} is {attr!r}")
    else:
        tally.wrong(c, f"the reference does not say {nodes} is {attr!r} (A.8 counts it)")
        tally.out.silent.append(c)


def _relation_verdict(tally: _Tally, c: Concept, ms: list[Match], ground: Callable[[str], list[Match]],
                      nodes: str) -> None:
    objects = ground(c.parts[2])
    if not objects:
        tally.absent(c, c.parts[2])
        return
    # "the red cube is left of the blue cube": only edges between those objects.
    support = edge_support(tally.graph, [m.index for m in ms], parse_predicate(c.parts[1]),
                           [m.index for m in objects], instances_fitting(ms, c.qualifiers[0]),
                           instances_fitting(objects, c.qualifiers[1]))
    s_idx, o_idx = {m.index for m in ms}, {m.index for m in objects}
    pred = parse_predicate(c.parts[1])
    if support.edge is not None:
        tally.matched(c, [("edge", support.edge)], list(ms) + list(objects))
    elif not tally.scope.details:
        # Open-world references: only the contrary place contradicts ("under" for "on").
        contrary = [e.text for e in support.between
                    if (e.subject in s_idx and contradicts(e.predicate, pred))
                    or (e.subject in o_idx and contradicts(e.predicate, pred, the_other_way=True))]
        if contrary:
            tally.wrong(c, f"contradicts the references: between {nodes} and {objects[0].describe()} they say "
                           f"{'; '.join(contrary)!r}, the contrary of {c.parts[1]!r}")
        else:
            tally.unsettled(c, f"the references do not say {nodes} is {c.parts[1]!r} "
                               f"{objects[0].describe()}")
    elif support.between:
        texts = "; ".join(e.text for e in support.between)
        tally.wrong(c, f"conflicting edge: between {nodes} and {objects[0].describe()} the reference has "
                       f"{texts!r}, not {c.parts[1]!r}")
    else:
        tally.wrong(c, f"no edge between {nodes} and {objects[0].describe()} in the reference")
        tally.out.silent.append(c)
