"""EMD's *grounded* ground cost: the scene-graph grounding's verdict where it has one, the embedding's elsewhere.

VISCON's cost between two concepts is their embeddings' cosine dissimilarity ``1 - cos`` (0 the
same, 1 orthogonal, 2 opposite). It is robust to vocabulary shift ("puppy" / "dog") but blind to
what a hallucination changes: MiniLM puts "Relation: cup - under - table" at cosine 0.97 of
"Relation: cup - on - table". And with uniform masses, a wrong concept close to *some* reference
concept lowers the mean: adding "The people is far from the water." to a caption lowered its EMD
on 14 of 24 real DCI images.

The grounded cost asks HalFscore's graph matcher (``concept_matching.GraphConceptMatcher``: the
grounding the graph judge uses too) about each response concept:

- **matched** (the reference states it: "couch" for its sofa, the colour it gives, an edge that
  entails the relation either way round, the number it has): cost 0 to the reference concepts it
  matches;
- **contradicted** (an object the reference does not have, a colour or count it states otherwise,
  a relation its edges between the two grounded ends do not make true): cost 2 to every
  reference concept, the far end of the cosine scale. Above the 1 of an orthogonal concept, so that
  a contradicted concept always costs more than the reference mass it displaces: with uniform
  masses, a caption's EMD rises with every contradicted concept added to it;
- **undecided** (an attribute or relation of an object the reference does not have: that object
  is charged already, as A.8 charges it once; what the reference is silent on: an attribute it does not give, two things it
  names but does not relate; an extraction artefact the matcher ignores): the embedding's
  ``1 - cos``, as in VISCON.

Counts, which VISCON's concept types leave out, join the attributes as ``Attribute of dog: two``
(VISCON's GPT extractor lists a number as an attribute); a relation's phrase carries the
adjectives that say which objects it joins ("Relation: red cube - left of - blue cube").

Worked example: reference "two dogs on a red sofa", response "a puppy under a green couch".
puppy -> dog (hyponym): 0 to "Object: dog"; couch -> sofa (synonym): 0 to "Object: sofa";
(couch, green): the sofa is red, contradicted: 2 everywhere; (puppy, under, couch): the edge says
"on", contradicted: 2 everywhere. NaN: the embedding's cost stands.

>>> from hallu_studio.model import AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept
>>> ref = ConceptSet([ObjectConcept("dog"), ObjectConcept("sofa")], [AttributeConcept("sofa", "red")],
...                  [RelationConcept("dog", "on", "sofa")], [CountConcept("dog", 2)])
>>> said = ConceptSet([ObjectConcept("puppy"), ObjectConcept("couch")], [AttributeConcept("couch", "green")],
...                   [RelationConcept("puppy", "under", "couch")])
>>> g = grounded_concepts(reference_list(ref, None), said, None, GraphConceptMatcher())
>>> [phrase(c) for c in g.reference["attribute"]], [phrase(c) for c in g.response["attribute"]]
(['Attribute of sofa: red', 'Attribute of dog: two'], ['Attribute of couch: green'])
>>> g.decided["object"].tolist(), g.decided["attribute"].tolist(), g.decided["relation"].tolist()
([[0.0, nan], [nan, 0.0]], [[2.0], [2.0]], [[2.0]])
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..concept_matching import GraphConceptMatcher
from ..concepts import Concept, MatchOutcome, concept_list, concept_spans
from ..config import EMD_GROUND_COSTS
from ..reference_scope import CLOSED, Scope
from ..model import ConceptSet, SceneGraph, Span

GROUND_COSTS: tuple[str, ...] = EMD_GROUND_COSTS  # the setting scoring.emd_ground_cost
CONTRADICTED = 2.0  # the cosine dissimilarity of opposite vectors
TYPES: tuple[str, ...] = ("object", "attribute", "relation")


def emd_type(c: Concept) -> str:
    """The EMD concept type a concept is transported within (a count is an attribute of its object)."""
    return "attribute" if c.kind == "count" else c.kind


@lru_cache(maxsize=200_000)
def phrase(c: Concept) -> str:
    """VISCON's Table 11 template, filled; a count's number as a word, a relation's ends with their adjectives."""
    if c.kind == "object":
        return f"Object: {c.parts[0]}"
    if c.kind == "attribute":
        return f"Attribute of {c.parts[0]}: {c.parts[1]}"
    if c.kind == "count":
        return f"Attribute of {c.parts[0]}: {c.number_word()}"
    s, p, o = c.parts
    q_s, q_o = c.qualifiers
    return f"Relation: {' '.join((*q_s, s))} - {p} - {' '.join((*q_o, o))}"


def label(c: Concept) -> str:
    """A concept as the Inspect view lists it: "dog", "sofa: red", "dog: two", "dog - on - sofa"."""
    if c.kind == "object":
        return c.parts[0]
    if c.kind in ("attribute", "count"):
        return f"{c.parts[0]}: {c.number_word() if c.kind == 'count' else c.parts[1]}"
    return phrase(c).removeprefix("Relation: ")


@dataclass
class GroundedConcepts:
    """One response against one reference: the distinct concepts of each, per EMD type, in order, and the
    cost the grounding decides between them (reference rows, response columns; NaN: undecided)."""

    reference: dict[str, list[Concept]]
    response: dict[str, list[Concept]]
    decided: dict[str, np.ndarray]
    spans: dict[Concept, Span]
    grounding: dict[Concept, str]  # each response concept: matched | contradicted | embedding (undecided)


def reference_list(reference: ConceptSet, scene_graph: SceneGraph | None) -> list[Concept]:
    """The reference's distinct concepts as HalFscore lists them (counts of a graph's repeated names included)."""
    return concept_list(reference, scene_graph if scene_graph is not None and not scene_graph.is_empty() else None)


def _by_type(concepts: Sequence[Concept]) -> dict[str, list[Concept]]:
    out: dict[str, list[Concept]] = {t: [] for t in TYPES}
    seen: set[str] = set()
    for c in concepts:
        if phrase(c) not in seen:  # a concept set: one phrase, one concept
            seen.add(phrase(c))
            out[emd_type(c)].append(c)
    return out


def grounded_concepts(ref_list: list[Concept], response: ConceptSet, scene_graph: SceneGraph | None,
                      matcher: GraphConceptMatcher, scope: Scope = CLOSED) -> GroundedConcepts:
    """The concepts of both sides and the costs the graph matcher decides (see the module docstring).
    ``ref_list``: the reference's ``reference_list`` (the caller keeps it per sample); ``scope``: what the reference
    can settle (what open-world references neither state nor contradict stays undecided: the embedding prices it)."""
    graph = scene_graph if scene_graph is not None and not scene_graph.is_empty() else None
    resp_list = concept_list(response)
    outcome = (matcher.match(resp_list, ref_list, scene_graph=graph, scope=scope) if ref_list and resp_list
               else MatchOutcome())
    ref, resp = _by_type(ref_list), _by_type(resp_list)
    # An attribute or relation of an object the reference does not have is that object's error, charged once
    # on the object (A.8's rule, which ``outcome.hallucinated`` follows): the embedding prices the rest of it.
    contradicted = set(outcome.hallucinated) - set(outcome.silent)
    decided: dict[str, np.ndarray] = {}
    grounding: dict[Concept, str] = {}
    for t in TYPES:
        rows = {phrase(c): i for i, c in enumerate(ref[t])}
        m = np.full((len(ref[t]), len(resp[t])), np.nan)
        for j, c in enumerate(resp[t]):
            grounding[c] = "embedding"
            if c in outcome.covers:
                for partner in outcome.covers[c]:
                    if phrase(partner) in rows:
                        m[rows[phrase(partner)], j] = 0.0
                        grounding[c] = "matched"
            elif c in contradicted:
                m[:, j] = CONTRADICTED
                grounding[c] = "contradicted"
        decided[t] = m
    return GroundedConcepts(ref, resp, decided, concept_spans(response), grounding)
