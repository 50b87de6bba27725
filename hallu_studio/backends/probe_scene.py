"""What a probe knows of a scene, and how it says something false about it.

``SceneTruth`` answers, by the judges' own check (``grounding.edge_support``), whether a statement holds of the
sample's scene; the rest draws a hallucination that the scene does not support (an absent object, a wrong
attribute, predicate or count) and writes a relation as a sentence. Shared by the caption writer
(``probe_caption``) and the answer writers (``probe``).
"""

from __future__ import annotations

import random
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Sequence

from ..grounding import Grounder, Match, ReferenceGraph, edge_support, instances_fitting
from ..model import Sample
from ..lexicon.attributes import alternatives, attribute_family
from ..lexicon.forms import count_of, head_noun, normalize_name, takes_plural_verb
from ..lexicon.nouns import is_adjective_only, is_noun, is_noun_only, is_visual_noun
from ..lexicon.predicates import PREPOSITIONS, parse_predicate
from ..lexicon.words import NEGATIONS, PRONOUNS
from .probe_text import CO_OCCURRENCE, COMMON_OBJECTS, FALLBACK_ATTRIBUTES, FALLBACK_RELATIONS, RELATION_SWAPS, SpanText

if TYPE_CHECKING:
    from .probe_options import ProbeOptions

_ARTICLES = frozenset({"a", "an", "the"})
MAX_RELATIONS = 15


def inject(options: ProbeOptions, rng: random.Random, kind: str) -> bool:
    # Draw even when the type is off, so turning one type on does not reshuffle the others.
    draw = rng.random()
    return kind in options.mix and draw < options.rate


def absent_object(present: set[str], near: str, rng: random.Random,
                   truth: "SceneTruth | None" = None) -> str | None:
    """An object to say that is not there: one that co-occurs with ``near``, else a common one; not a name in
    ``present``, nor (with ``truth``) one the judges ground to the scene ("plant" where trees are, "bottle" where
    the graph says "bottles")."""
    def absent(o: str) -> bool:
        return o not in present and (truth is None or not truth.grounds(o))

    pool = [o for o in CO_OCCURRENCE.get(near, ()) if absent(o)]
    if not pool:
        pool = [o for o in COMMON_OBJECTS if absent(o)]
    return rng.choice(pool) if pool else None


def wrong_attribute(attr: str, own: set[str], rng: random.Random) -> str:
    """Another attribute of the same kind (a colour for a colour) where the lexicon knows one."""
    pool = [a for a in alternatives(attr) if a not in own]
    if pool:
        return rng.choice(pool)
    return rng.choice([a for a in FALLBACK_ATTRIBUTES if a not in own] or ["striped"])


def wrong_predicate(pred: str, rng: random.Random, holds: "Callable[[str], bool] | None" = None) -> str | None:
    """A predicate that replaces ``pred``: its opposite where there is one, else another common one.

    ``holds`` says whether a predicate is true of the pair the sentence names (where the scene is known):
    a swap the scene makes true anyway ("holding" for a man the graph has "holding" the camera too, "right
    of" between two cubes of which one is left of the other) is no hallucination, so the next candidate is
    tried; None when every candidate is true.
    """
    swap = RELATION_SWAPS.get(pred)
    if swap and (holds is None or not holds(swap)):
        return swap
    others = [p for p in FALLBACK_RELATIONS if p != pred and p != swap and (holds is None or not holds(p))]
    return rng.choice(others) if others else None


_GROUNDER = Grounder()  # lexicon only (lemma, synonym, hypernym, hyponym): the probe loads no embedding model


class SceneTruth:
    """What a sample's scene graph (and its gold triplets) make true of a relation, by the judges' own check.

    The graph is read as the judges read it (``grounding.ReferenceGraph``: objects of one name merged into
    a node, agentive edges written backwards turned round), the names are grounded as they ground them
    (``grounding.Grounder``, no embeddings), and a relation holds when ``grounding.edge_support`` finds an
    edge that entails it either way round (an inverse: "under" for "on"; a symmetric predicate; a passive).
    Built once per response, only when a swap needs checking.
    """

    def __init__(self, sample: Sample) -> None:
        self.sample = sample
        self._grounded: dict[str, list[Match]] = {}

    @cached_property
    def graph(self) -> ReferenceGraph:
        return ReferenceGraph.from_scene_graph(self.sample.scene_graph,
                                               extra=[tuple(t) for t in self.sample.gold_triplets])  # type: ignore[misc]

    def _ground(self, name: str) -> list[Match]:
        if name not in self._grounded:
            self._grounded[name] = _GROUNDER.ground(name, self.graph)
        return self._grounded[name]

    def grounds(self, name: str) -> bool:
        """Whether the judges would find ``name`` in the scene (by lemma, synonym or kind)."""
        return bool(self._ground(name))

    def holds(self, subj: str, pred: str, obj: str, subject_attributes: Sequence[str] = (),
              object_attributes: Sequence[str] = ()) -> bool:
        """Whether "the <subject_attributes> <subj> <pred> the <object_attributes> <obj>" is true of some pair of
        objects the sentence can mean (``instances_fitting``: "the red cube" is the red one; no adjective, any)."""
        subjects, objects = self._ground(subj), self._ground(obj)
        if not subjects or not objects:
            return False
        return edge_support(self.graph, [m.index for m in subjects], parse_predicate(pred), [m.index for m in objects],
                            instances_fitting(subjects, subject_attributes),
                            instances_fitting(objects, object_attributes)).supported


# Adjectives in the order English puts them before a noun ("the small red metal cube").


def is_object(name: str, annotated: set[str]) -> bool:
    """Whether a triplet end names a thing one could see: an object the scene graph's annotators listed
    (``annotated``, normalised names), else not an adjective ("large"), a number, a noun the lexicon
    knows as unseen ("familiarity"), nor a phrase led by a preposition ("on street")."""
    if normalize_name(name) in annotated:
        return True
    words = name.lower().split()
    # A head WordNet does not know as a noun ("unmowed", "curious/excited", "alone in the room") is no thing either.
    return bool(words) and words[0] not in PREPOSITIONS and attribute_family(name) is None and \
        count_of(name) is None and not is_adjective_only(name) and is_visual_noun(name) is not False and \
        is_noun(head_noun(name)) is not False


def false_predicate(pred: str, holds: "Callable[[str], bool]", rng: random.Random) -> str | None:
    """A predicate to say instead of ``pred`` that ``holds`` (``SceneTruth.holds`` of the triplet's two ends)
    finds false; None if none is left.

    The swap table's contrary comes first, then the fallbacks in random order (shuffled whether or not they are
    needed, so the draws that follow do not depend on the graph). A candidate the graph supports ("on" for
    "piled on", "under" for "(desk, on, book)" read the other way round, "holding" for Tri-HE's backwards
    "(kite, holding, boy)") would be no error, and is refused.
    """
    fallbacks = [p for p in FALLBACK_RELATIONS if p != pred]
    rng.shuffle(fallbacks)
    swap = RELATION_SWAPS.get(pred)
    for candidate in ([swap] if swap else []) + fallbacks:
        if not holds(candidate):
            return candidate
    return None


def wrong_count(n: int, rng: random.Random) -> int:
    return 2 if n <= 1 else rng.choice([n - 1, n + 1])


def _takes_article(pred: str, obj: str) -> bool:
    """Whether a sentence says "the" before a triplet's object: before a noun ("is left of the cube"), not before
    an adjective or participle a copula gives ("(sky, is, clear)": "the sky is clear", not "the sky is the clear",
    which a parser reads as a thing called "clear"), nor before a phrase with its own determiner, number, negation
    or preposition ("two giraffes", "no water flowing", "in the image")."""
    words = obj.lower().split()
    if not words:
        return False
    first, head = words[0], words[-1]
    if first in PRONOUNS or first in _ARTICLES or first in NEGATIONS or first in PREPOSITIONS or \
            count_of(first) is not None:
        return False
    if is_noun(head) is False or is_adjective_only(first):
        return False  # "shirtless", "well-maintained", "alone in the room"
    copula = pred.lower() in ("is", "are")
    return not (copula and len(words) == 1 and (attribute_family(obj) is not None or is_noun_only(obj) is False))


def relation_sentence(t: SpanText, subj: str, pred: str, obj: str, subject_attributes: Sequence[str] = (),
                       object_attributes: Sequence[str] = (), object_is_thing: bool = False) -> tuple[int, int]:
    """ "The red cube is left of the small cube. ": the span runs from the subject's first word to the object's
    last, so it covers the words that say which objects are meant. ``object_is_thing``: the object is a thing
    whatever else its word can be (an injected "umbrella", which WordNet also knows as an adjective)."""
    t.add("The ")
    start = t.length
    verb_led = pred.split()[0] in {"has", "have", "is", "are", "wears", "holds", "lacks", "lack"}
    said_subj = " ".join([*subject_attributes, subj])
    said_obj = " ".join([*object_attributes, obj])
    article = "the " if object_attributes or object_is_thing or _takes_article(pred, obj) else ""
    t.add(f"{said_subj} {pred if verb_led else ('are ' if takes_plural_verb(subj) else 'is ') + pred} {article}"
          f"{said_obj}")
    end = t.length
    t.add(". ")
    return start, end
