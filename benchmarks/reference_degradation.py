"""Degraded copies of a caption that are more wrong *as far as its reference can tell*.

A degradation test asks whether a score prefers a caption to a copy with errors written into
it. It measures the score only if the reference can see the errors: changing a colour the
reference never gives, or swapping a relation between things it never links, leaves the copy
no more wrong against that reference, and a score that ties is right to tie. So each kind of
copy here changes only concepts the reference **verifies**, and only ones the caption states
**correctly** (an error made worse is no new error):

- ``colours changed``: a colour the caption gives an object that the reference gives it too
  ("the red car" beside the reference's "a red car") becomes a colour the reference
  contradicts (no class of the reference's colours for that object);
- ``counts changed``: a number the caption gives an object that equals the number the
  reference states for it becomes that number plus one ("two dogs" -> "three dogs"). Where
  the caption names the object but gives no number, none is there to change: the copy adds a
  sentence stating a wrong one ("There are three dogs in the image."), recorded as *stated*;
- ``relations swapped``: a spatial relation the caption states between two objects that a
  reference edge supports ("the cup on the table", reference: the cup on the table) takes the
  contrary preposition (``lexicon.predicates.contrary_preposition``: on -> under, left ->
  right, next to -> far from, ...), checked to be supported by no edge between the two;
- ``objects added``: two objects the reference names nowhere (no node grounds them) in one
  added sentence.

The reference's concepts become a ``grounding.ReferenceGraph`` (as HalFscore's graph matcher and
the graph judge read a dense caption), and the caption's names are grounded on it lexically
(lemma, synonym, hypernym, hyponym; no embedding, so that "verified" does not depend on a model).
A kind with nothing to change on an image gives no copy (``Degradation.copy`` is None): the
caller excludes that image from that kind and counts it. ``all four`` is one copy with every
kind's changes applied together, defined where all four kinds apply.

>>> from hallu_studio.model import AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept
>>> caption = "Two dogs sit on a red sofa."
>>> said = ConceptSet([ObjectConcept("dog", (4, 8)), ObjectConcept("sofa", (22, 26))],
...     [AttributeConcept("sofa", "red", (18, 21))], [RelationConcept("dog", "sit on", "sofa", (4, 26))],
...     [CountConcept("dog", 2, (0, 3))])
>>> ref = ConceptSet([ObjectConcept("dog"), ObjectConcept("couch")], [AttributeConcept("couch", "red")],
...     [RelationConcept("dog", "on", "couch")], [CountConcept("dog", 2)])
>>> d = degrade(caption, said, ref, random.Random(0))
>>> d.copy(["relations swapped"]), d.copy(["counts changed"])
('Two dogs sit under a red sofa.', 'Three dogs sit on a red sofa.')
>>> d.copy(["colours changed"]).replace(d.edits["colours changed"][0].new, "X")
'Two dogs sit on a X sofa.'
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from hallu_studio.grounding import Grounder, ReferenceGraph, attribute_support, counted, edge_support, stated_counts
from hallu_studio.lexicon.attributes import FAMILIES, attribute_family, same_attribute
from hallu_studio.lexicon.forms import is_countable, normalize_name, noun_phrase, number_word
from hallu_studio.lexicon.predicates import contrary_preposition, parse_predicate
from hallu_studio.model import ConceptSet

KINDS: tuple[str, ...] = ("relations swapped", "colours changed", "counts changed", "objects added")
ALL = "all four"
_COLOUR_CLASSES: tuple[frozenset[str], ...] = FAMILIES["colour"][0]
# The plain colour words a changed colour is drawn from (not "crimson", not a hair's "blond").
BASIC_COLOURS: tuple[str, ...] = ("red", "blue", "green", "yellow", "orange", "purple", "pink", "brown", "black",
                                  "white", "gray", "silver")
# Everyday objects, one of which is added where the reference names none of its words.
ADDABLE_OBJECTS: tuple[str, ...] = ("giraffe", "pizza", "umbrella", "surfboard", "elephant", "toaster", "kite",
                                    "teddy bear", "zebra", "snowboard", "saxophone", "fire hydrant")


@dataclass(frozen=True)
class Edit:
    """One change: characters ``start:end`` of the caption become ``new`` (an insertion where equal)."""

    start: int
    end: int
    new: str
    concept: str  # what was changed, as "(object, old -> new)"
    reference: str  # what the reference says of it
    how: str = "changed"  # changed | stated (a sentence added: the caption gave no such concept to change)


@dataclass
class Degradation:
    caption: str
    edits: dict[str, list[Edit]] = field(default_factory=dict)  # kind -> its changes (empty: none possible)

    def applies(self, kind: str) -> bool:
        return all(self.edits.get(k) for k in KINDS) if kind == ALL else bool(self.edits.get(kind))

    def copy(self, kinds: Iterable[str]) -> str | None:
        """The caption with every change of ``kinds`` applied; None when one of them has no change."""
        kinds = list(kinds)
        if not kinds or not all(self.applies(k) for k in kinds):
            return None
        text = self.caption
        taken: list[tuple[int, int]] = []
        for e in sorted((e for k in kinds for e in self.edits[k]), key=lambda e: (e.start, e.end), reverse=True):
            if e.start < e.end and any(e.start < b and a < e.end for a, b in taken):
                continue  # two kinds reach the same words: the first applied stands
            taken.append((e.start, e.end))
            text = text[: e.start] + e.new + text[e.end:]
        return text


def reference_graph(reference: ConceptSet) -> tuple[ReferenceGraph, dict[str, int]]:
    """The reference concepts as a graph, and the counts the reference states (normalised name -> n)."""
    counts = stated_counts((c.object, c.count) for c in reference.counts)
    graph = ReferenceGraph.from_triplets([o.name for o in reference.objects],
                                         [(r.subject, r.predicate, r.object) for r in reference.relations],
                                         [(a.object, a.attribute) for a in reference.attributes], counts)
    return graph, counts


def _colour_classes_of(words: Sequence[str]) -> set[int]:
    return {i for i, cls in enumerate(_COLOUR_CLASSES) for w in words if any(same_attribute(w, c) for c in cls)}


def _as_in(caption: str, name: str) -> str:
    """``name`` cased as the caption writes it ("John Deere model", not "john deere model", which the parser
    cannot read back), else as it is."""
    m = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", caption, re.IGNORECASE)
    return m.group(0) if m else name


def _as_written(old: str, new: str) -> str:
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def _name(name: str) -> str:
    return normalize_name(name) or name.strip().lower()


def _sentence(text: str) -> str:
    return f" {text[:1].upper()}{text[1:]}."


def degrade(caption: str, said: ConceptSet, reference: ConceptSet, rng: random.Random, *,
            grounder: Grounder | None = None) -> Degradation:
    """Every change of each kind the reference can verify (see the module docstring)."""
    grounder = grounder or Grounder()
    graph, counts = reference_graph(reference)
    out = Degradation(caption, {k: [] for k in KINDS})
    end = len(caption)
    # The caption's objects and the reference nodes each grounds to, in order of mention.
    objects: dict[str, list[int]] = {}
    for o in said.objects:
        if _name(o.name) not in objects:
            objects[_name(o.name)] = [m.index for m in grounder.ground(o.name, graph)]

    def node_colours(indices: Sequence[int]) -> list[str]:
        return sorted({h for i in indices for h in graph.nodes[i].attributes if attribute_family(h) == "colour"})

    def wrong_colour(held: Sequence[str]) -> str:
        ruled_out = _colour_classes_of(held)
        return rng.choice([c for c in BASIC_COLOURS if not _colour_classes_of([c]) & ruled_out])

    coloured = set()
    for a in said.attributes:
        if attribute_family(a.attribute) != "colour":
            continue
        coloured.add(_name(a.object))
        held = node_colours([m.index for m in grounder.ground(a.object, graph)])
        if a.span is None or not any(same_attribute(a.attribute, h) for h in held):
            continue  # the reference gives it no colour, or another one: no verified colour to change
        old = caption[a.span[0]:a.span[1]]
        new = wrong_colour(held + [a.attribute])
        out.edits["colours changed"].append(Edit(a.span[0], a.span[1], _as_written(old, new),
                                                 f"({a.object}, {old} -> {new})", f"{a.object} is {', '.join(held)}"))
    if not out.edits["colours changed"]:
        for name, indices in objects.items():
            held = node_colours(indices)
            if held and name not in coloured:
                new = wrong_colour(held)
                out.edits["colours changed"].append(Edit(end, end, _sentence(f"the {_as_in(caption, name)} is {new}"),
                                                         f"({name}, none -> {new})",
                                                         f"{name} is {', '.join(held)}", "stated"))
                break

    said_counts = set()
    for c in said.counts:
        said_counts.add(_name(c.object))
        found = grounder.ground(c.object, graph)
        # The reference must state a number for one of the nodes; the nodes together hold what ``counted`` says
        # (the judges' own reading: "two women ... a man" are three individuals).
        stated = [m for m in found if m.node.name in counts]
        if c.span is None or c.count < 2 or not stated or counted(found) != c.count:
            continue  # "a"/"one" would need the noun made plural; a number the reference does not state or contradicts
        old = caption[c.span[0]:c.span[1]]
        new = number_word(c.count + 1)
        out.edits["counts changed"].append(Edit(c.span[0], c.span[1], _as_written(old, new),
                                                f"({c.object}, {c.count} -> {c.count + 1})",
                                                f"{counted(found)} {c.object}"))
    if not out.edits["counts changed"]:
        for name, indices in objects.items():
            found = [m for m in grounder.ground(name, graph) if m.index in indices]
            if any(m.node.name in counts for m in found) and name not in said_counts and is_countable(name):
                n = counted(found) + 1
                written = noun_phrase(n, _as_in(caption, name))
                out.edits["counts changed"].append(Edit(end, end, _sentence(f"there are {written} in the image"),
                                                        f"({name}, none -> {n})", f"{n - 1} {name}", "stated"))
                break

    linked = set()
    for r in said.relations:
        subjects, objects_ = grounder.ground(r.subject, graph), grounder.ground(r.object, graph)
        if not subjects or not objects_:
            continue
        si, oi = [m.index for m in subjects], [m.index for m in objects_]
        linked.update({(a, b) for a in si for b in oi} | {(b, a) for a in si for b in oi})
        pred = parse_predicate(r.predicate)
        support = edge_support(graph, si, pred, oi)
        # Only where an edge says where the two are with the same preposition ("walking on" for "on"): a
        # relation the reference only implies ("wearing" for "in") has no contrary it would contradict.
        if r.span is None or support.edge is None or pred.prep is None or support.edge.predicate.prep != pred.prep \
                or support.the_other_way:
            continue
        swap = _swap_in(caption, r.span, r.predicate)
        if swap is None:
            continue
        start, stop, new = swap
        if edge_support(graph, si, parse_predicate(_replace_last(r.predicate, caption[start:stop], new)), oi).supported:
            continue  # the contrary is also true of the reference (two edges): not made wrong
        out.edits["relations swapped"].append(Edit(start, stop, new, f"({r.subject}, {caption[start:stop]} -> {new}, "
                                                   f"{r.object})", f"edge ({r.subject}, {support.edge.text}, {r.object})"))
    if not out.edits["relations swapped"]:
        by_node = {}
        for name, indices in objects.items():
            for i in indices:
                by_node.setdefault(i, name)
        for e in graph.edges:
            s, o = by_node.get(e.subject), by_node.get(e.object)
            new = contrary_preposition(e.predicate.prep) if e.predicate.prep else None
            if s is None or o is None or s == o or new is None or (e.subject, e.object) in linked:
                continue
            if edge_support(graph, [e.subject], parse_predicate(new), [e.object]).supported:
                continue
            out.edits["relations swapped"].append(Edit(end, end, _sentence(f"the {s} is {new} the {o}"),
                                                       f"({s}, none -> {new}, {o})", f"edge ({s}, {e.text}, {o})",
                                                       "stated"))
            break

    absent = [x for x in ADDABLE_OBJECTS if x not in objects and not grounder.ground(x, graph)]
    if len(absent) >= 2:
        a, b = rng.sample(absent, 2)
        out.edits["objects added"].append(Edit(end, end, _sentence(f"there is also {noun_phrase(1, a)} and "
                                                                   f"{noun_phrase(1, b)} in the image"),
                                               f"{a}, {b}", "no reference object grounds either", "stated"))
    return out


def _replace_last(predicate: str, old: str, new: str) -> str:
    i = predicate.lower().rfind(old.lower())
    return predicate if i < 0 else predicate[:i] + new + predicate[i + len(old):]


def _swap_in(caption: str, span: tuple[int, int], predicate: str) -> tuple[int, int, str] | None:
    """Where the relation's preposition is written inside its span, and its contrary: (start, end, new)."""
    words = predicate.lower().split()
    for n in range(len(words), 0, -1):  # the longest tail of the predicate that has a contrary ("in front of")
        tail = " ".join(words[-n:])
        new = contrary_preposition(tail)
        if new is None:
            continue
        text = caption[span[0]:span[1]]
        found = list(re.finditer(rf"\b{re.escape(tail)}\b", text, re.IGNORECASE))
        if found:
            m = found[-1]  # the preposition before the relation's object, not a word of the subject's
            return span[0] + m.start(), span[0] + m.end(), new
    return None


def summary(degradations: Mapping[str, Degradation]) -> dict[str, tuple[int, int]]:
    """Per kind (and ``all four``): (images it applies to, images with a stated rather than changed concept)."""
    out = {}
    for k in (*KINDS, ALL):
        have = [d for d in degradations.values() if d.applies(k)]
        stated = [d for d in have if any(e.how == "stated" for kk in (KINDS if k == ALL else (k,))
                                         for e in d.edits[kk] if kk != "objects added")]
        out[k] = (len(have), len(stated))
    return out


def wins_ties_losses(real: Mapping[str, float | None], degraded: Mapping[str, float | None],
                     higher_is_better: bool) -> tuple[int, int, int]:
    """Over the images of ``degraded``: where the real caption scores strictly better than its copy, the same,
    or worse. A score undefined on either side counts as a tie: it does not tell the two apart.

    >>> wins_ties_losses({"a": 0.9, "b": 0.5, "c": None}, {"a": 0.7, "b": 0.5, "c": 0.1}, True)
    (1, 2, 0)
    >>> wins_ties_losses({"a": 10.0}, {"a": 12.0}, False)
    (1, 0, 0)
    """
    win = tie = loss = 0
    for key, worse in degraded.items():
        score = real.get(key)
        if score is None or worse is None or score == worse:
            tie += 1
        elif (score > worse) == higher_is_better:
            win += 1
        else:
            loss += 1
    return win, tie, loss
