"""How a claim's words read against the reference's, for the scene-graph judge (``graph_judge``).

An edge written out for a reason; the reference edge that puts another thing where a claim puts its object;
whether a predicate is one a picture shows; whether a gold triplet says an attribute or spells a whole claim
out in its own wording; whether the question itself states a count; what a reason calls the reference.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..grounding import Edge, Match, ReferenceGraph
from ..lexicon.attributes import attribute_family
from ..lexicon.forms import count_of, normalize_name
from ..lexicon.nouns import is_visual_noun, relation as noun_relation
from ..lexicon.predicates import ONE_AT_A_TIME, VISUAL_VERBS, Predicate
from ..lexicon.words import NEGATIONS
from .base import JudgeReference, Triplet


def edge_text(graph: ReferenceGraph, e: Edge) -> str:
    s, o = graph.nodes[e.subject], graph.nodes[e.object]
    backwards = " (read backwards)" if e.reversed else ""
    return f"({s.labels[0] if s.labels else s.name}, {e.text}, {o.labels[0] if o.labels else o.name}){backwards}"


def named_instead(graph: ReferenceGraph, grounded: Sequence[Match], pred: Predicate, name: str,
                   mentioned: set[int] | frozenset[int]) -> Edge | None:
    """The reference edge that puts another thing where a claim puts ``name``: from the claim's grounded subject,
    with a relation its subject has with one thing at a time (one sits, stands, lies or rides on one thing:
    ``predicates.ONE_AT_A_TIME``) and the claim's own verb (or, from an edge with none, its preposition), to a thing
    of another kind that the response names nowhere ("a child sitting on a box" where the captions say "a boy
    sitting on top of a briefcase"). Where a subject may have many ("in", "with", "next to", "holding"), another
    thing in the references' sentence does not make the response's untrue."""
    if not grounded or pred.verb not in ONE_AT_A_TIME or pred.passive:
        return None
    ends = {m.index for m in grounded}
    for e in graph.edges:
        if e.subject not in ends or e.object in ends or e.object in mentioned or e.predicate.passive:
            continue
        same_slot = e.predicate.verb == pred.verb if e.predicate.verb is not None else (
            e.predicate.prep is not None and e.predicate.prep == pred.prep)
        if not same_slot or (pred.prep is not None and e.predicate.prep not in (None, pred.prep)):
            continue
        node = graph.nodes[e.object]
        if noun_relation(name, node.name) is None and is_visual_noun(node.name) and is_visual_noun(name) \
                and attribute_family(name) is None:
            return e
    return None


def is_visual(pred: Predicate) -> bool:
    return (pred.verb is None and pred.prep is not None) or (pred.verb is not None and pred.verb in VISUAL_VERBS)


_WORD = re.compile(r"[a-z0-9'-]+")


def _words(text: str) -> list[str]:
    """Lower-case words, each singular ("benches" -> "bench") so that a claim's and a triplet's wording compare."""
    return [normalize_name(w) or w for w in _WORD.findall(text.lower())]


def says_attribute(attr: str, predicate: str, obj: str) -> bool:
    """Whether a gold triplet's predicate or object says the attribute in so many words: "(benches, mostly
    empty, platform)" says empty, "(field, is, wide and open)" says open; not under a negation."""
    words = _words(f"{predicate} {obj}")
    return attr.lower() in words and not NEGATIONS & set(words[: words.index(attr.lower())])


def gold_spelling(claim: Triplet, reference: JudgeReference) -> str | None:
    """The gold triplet that spells the claim out, predicate and object in its own words, as text, or None.

    Tri-HE's gold triplets often fold the object into the predicate ("(people, wearing sports attire,
    indicative of sport)", "(disc, flying in air close to, dog)", "(bus, has registration, V116 MEV)"):
    the claim (people, wearing, sports attire) is that triplet's own wording. The subject must be the
    gold one (or more general), the claim's predicate and object words must follow each other in that
    order in the gold predicate and object, and no negation may come before them ("not covering").
    """
    s, p, o = claim
    said = _words(f"{p} {o}")
    if not said:
        return None
    for gs, gp, go in reference.gold:
        if noun_relation(s, gs) not in ("same", "general"):
            continue
        words = _words(f"{gp} {go}")
        at = 0
        for w in said:
            if w not in words[at:]:
                break
            at = words.index(w, at) + 1
        else:
            if not NEGATIONS & set(words[: at]):
                return f"({gs}, {gp}, {go})"
    return None


def states_count(question: str | None, name: str, n: int) -> bool:
    """Whether the question says there are ``n`` of ``name`` ("What are the two horses doing?")."""
    if not question:
        return False
    words = _WORD.findall(question.lower())
    target = normalize_name(name)
    return any(count_of(w) == n and target in (normalize_name(" ".join(words[i + 1:j]))
                                               for j in range(i + 2, min(i + 5, len(words) + 1)))
               for i, w in enumerate(words))


def said_by(reference: JudgeReference) -> str:
    return "graph" if reference.scope.closed else "references"
