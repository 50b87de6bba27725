"""What the offline parser reads off spaCy's tokens: mentions and their names, compound tails, conjuncts, hedges,
negation, counts, claims about the scene, qualifiers, and the deduplication of what it found.

``extraction/parser.py``'s ``ParserExtractor`` walks a parse with these rules; the rules' version is its
``RULES_VERSION`` (bump it when one changes: extracted concepts, and the scores built on them, change too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..lexicon.attributes import attribute_family
from ..lexicon.forms import count_of, normalize_name
from ..lexicon.nouns import (is_abstract_noun, is_activity_noun, is_adjective_only, is_colour_noun, is_compound_noun,
                             is_noun_only, is_visual_noun, names_other_kind)
from ..lexicon.words import (COLORS, FRAMING_NOUNS, HEDGE_WORDS, INFERENCE_PREDICATES, MATERIALS, POSITION_ADJECTIVES,
                             PRONOUNS, QUANTIFIER_NOUNS, SCENE_SUBJECT)
from ..model import AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept

DESCRIPTIVE_NOUNS = COLORS | MATERIALS
NOUN_SLOTS = frozenset({"attr", "dobj", "pobj", "nsubj", "nsubjpass", "appos", "conj"})


@dataclass
class Mention:
    root: int  # token index of the head noun
    name: str
    span: tuple[int, int]
    hedged: bool = False
    # False for a noun that is no object but may end a claim: an activity ("engaged in surfing") or
    # an inferred notion ("used for transportation").
    listed: bool = True
    aliases: tuple[int, ...] = ()  # other token indices standing for it ("hanging" in "a mat hanging")
    tail: int | None = None  # the head noun spaCy hung on the name's first word ("hydrant" in "a fire hydrant")


def char_span(tokens: Iterable[Any]) -> tuple[int, int]:
    toks = list(tokens)
    return (min(t.idx for t in toks), max(t.idx + len(t.text) for t in toks))


def compound_tokens(root: Any) -> list[Any]:
    """The compound modifiers left of a head noun, outermost first ("living room table")."""
    out: list[Any] = []
    for child in root.lefts:
        if (child.dep_ == "compound" and child.is_alpha and not describes(child)) or lexical_compound(child):
            out.extend(compound_tokens(child))
            out.append(child)
    return out


def lexical_compound(modifier: Any) -> bool:
    """A modifier spaCy's small model tagged as an adjective that is the first word of a noun:

    * a word WordNet knows only as a noun ("oven" in "an oven mitt", "dish" in "a dish rack");
    * a word that forms one noun WordNet lists with the head right after it, where that noun is no kind of the
      head ("hot dog", "remote control", "light bulb": ``names_other_kind``) or the word is a gerund or noun
      ("living room", "walking stick", "retaining wall").

    A word that names a kind of the head stays an attribute ("polar bear", "electric guitar"), as do the words
    of the lexicon's attribute families ("red wine", "old man", "wooden spoon"), positions ("right hand", "left
    wing"), participles ("fried egg", "painted leaves") and comparatives or superlatives ("a lower level")."""
    if modifier.dep_ != "amod" or not modifier.is_alpha or modifier.tag_ in ("JJR", "JJS", "RBR", "RBS") or \
            attribute_family(modifier.lower_) is not None:
        return False
    if modifier.tag_ == "JJ" and is_noun_only(modifier.lower_):
        return True
    head = modifier.head
    # A participle describes ("painted leaves", "fried egg"); a position places ("left wing", "front end").
    if modifier.i + 1 != head.i or head.pos_ != "NOUN" or modifier.tag_ in ("VBN", "VBD") or \
            modifier.lower_ in POSITION_ADJECTIVES:
        return False
    word, name = modifier.lower_, head.lemma_.lower() or head.lower_
    return is_compound_noun(word, name) and (modifier.tag_ in ("NN", "NNS", "VBG") or word.endswith("ing")
                                             or names_other_kind(word, name))


# How spaCy's small model hangs the head noun of a compound on its first word after "and" ("a kite and a fire
# hydrant": "fire" is the conjunct, "hydrant" its amod).
_TAIL_DEPS = frozenset({"amod", "compound", "nmod", "npadvmod", "dep"})


def compound_tail(root: Any) -> Any | None:
    """The noun right after ``root`` that is the real head of its name, where the parse made ``root`` the head:
    a noun hung on it as a modifier ("fire" <- "hydrant"), or any word WordNet says forms one noun with it
    whatever its tag ("a trash can are": "can" read as an auxiliary). None for a noun standing on its own."""
    if root.pos_ != "NOUN" or describes(root) or root.i + 1 >= len(root.doc):
        return None
    tail = root.doc[root.i + 1]
    if not tail.is_alpha or any(c.dep_ == "det" for c in tail.children) or any(t.i != root.i for t in tail.lefts):
        return None
    if tail.head.i == root.i and tail.dep_ in _TAIL_DEPS and tail.tag_ in ("NN", "NNS"):
        return tail
    # A participle is never the second word of a noun ("a dog staring": spaCy's lemma "star" makes "dog star").
    if tail.tag_ in ("VBG", "VBN", "VBD"):
        return None
    if root.head.i == tail.i:
        # "The trash can is white", "A trash can beside a bench": "trash" read as the subject of "can" (a modal
        # in the subject's slot, or the root).
        if root.dep_ != "nsubj" or not (tail.dep_ in NOUN_SLOTS or (tail.dep_ == "ROOT" and tail.pos_ == "NOUN")):
            return None
    elif tail.head.i == tail.i:
        return None
    return tail if is_compound_noun(root.lower_, tail.lemma_ or tail.lower_) else None


def describes(compound: Any) -> bool:
    """A compound modifier that describes rather than names: "plastic table", "spiky hair"."""
    # A lower-case word tagged as a proper noun is no name ("a grassy hill" after a verb read as a noun).
    return compound.lower_ in DESCRIPTIVE_NOUNS or ((compound.pos_ != "PROPN" or compound.is_lower) and
                                                    is_adjective_only(compound.lower_))


def object_name(root: Any, tail: Any | None = None) -> str:
    """The object's name: compound modifiers and the head (and the head's ``compound_tail``), through the
    lexicon's normaliser ("tennis rackets" -> "tennis racket", "storage silos" -> "storage silo", "glasses"
    stays)."""
    parts = [t.lower_ for t in compound_tokens(root)] + [root.lower_] + ([tail.lower_] if tail is not None else [])
    if root.pos_ == "PROPN":  # "United States", "Olympic Games": a name, not a plural
        return " ".join(parts)
    return normalize_name(" ".join(parts)) or root.lower_


def conjuncts(token: Any) -> list[Any]:
    """The token and the words joined to it by "and" / "or" (recursively)."""
    out = [token]
    for child in token.children:
        if child.dep_ == "conj":
            out.extend(conjuncts(child))
    return out


def is_hedged(token: Any) -> bool:
    """An appositive marked as a guess, or an alternative joined to one."""
    node = token
    while node.dep_ == "conj" and node.head is not node:
        node = node.head
    if node.dep_ != "appos":
        return False
    window = [t.lower_ for t in node.doc[max(node.left_edge.i - 1, 0):node.i]]
    return any(c.dep_ == "advmod" and c.lower_ in HEDGE_WORDS for c in node.children) or \
        any(w in HEDGE_WORDS for w in window)


def drop_negated(doc: Any, found: dict[tuple[int, int], tuple[str, list[Any]]], subjects_of: Any) -> None:
    """A negated verb claims no relation: "is not wearing the goggles", "cannot feel the kite" (sng_parser
    keeps the verb and drops the "not")."""
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX") or not any(c.dep_ == "neg" for c in verb.children):
            continue
        objects = [g for c in verb.children if c.dep_ == "dobj" for g in conjuncts(c)]
        objects += [g for c in verb.children if c.dep_ in ("prep", "agent")
                    for p in c.children if p.dep_ == "pobj" for g in conjuncts(p)]
        for subject in subjects_of(verb):
            for obj in objects:
                found.pop((subject.root, obj.i), None)


# Nouns that make a preposition of three words with the ones around them ("in front of", "on top of").
PLACE_NOUNS = frozenset({"front", "top", "back", "side", "middle", "left", "right", "bottom", "edge", "center",
                          "centre"})


def is_thing(root: Any) -> bool:
    """Whether a head noun names something visible: not a pronoun, number, framing, collective or
    colour word, fraction or activity."""
    lemma = (root.lemma_ or root.text).lower()
    if root.pos_ in ("PRON", "NUM", "DET") or lemma in PRONOUNS or root.lower_ in PRONOUNS:
        return False
    if not any(ch.isalpha() for ch in root.text):
        return False
    if lemma in FRAMING_NOUNS or lemma in QUANTIFIER_NOUNS or root.lower_ in QUANTIFIER_NOUNS:
        return False
    if root.pos_ == "PROPN":  # a name: "Nissan" is a car here, not WordNet's month
        return True
    return not is_colour_noun(root.lower_) and not is_activity(root) and not is_abstract_noun(lemma)


def is_activity(token: Any) -> bool:
    return token.lower_.endswith("ing") and (token.tag_ == "VBG" or is_activity_noun(token.lower_))


def is_claim_end(token: Any) -> bool:
    """A noun that is no object but can end an inference or activity claim (see ``Mention.listed``)."""
    if token.pos_ not in ("NOUN", "VERB") or not token.is_alpha or token.lower_ in PRONOUNS:
        return False
    lemma = (token.lemma_ or token.text).lower()
    return is_activity(token) or is_abstract_noun(lemma) or (lemma in FRAMING_NOUNS and lemma not in QUANTIFIER_NOUNS)


def is_inference(predicate: str) -> bool:
    return predicate in INFERENCE_PREDICATES or predicate.split()[-1] == "for"


_MODALS = frozenset({"may", "might", "could", "must"})
_SEEMING_VERBS = frozenset({"appear", "seem"})
_PICTURE_PRONOUNS = frozenset({"it", "this", "that"})


def scene_claim_relations(doc: Any) -> list[tuple[int, RelationConcept]]:
    """Hedged claims about the whole picture: "it is probably summer", "it may be evening or night",
    "it appears to be a birthday celebration" -> (scene, <hedged copula>, noun).

    Only nouns that are no object make such a claim ("it is probably a kitchen" names a kitchen).
    """
    out: list[tuple[int, RelationConcept]] = []
    for token in doc:
        # spaCy's small model tags some time words as adjectives ("it appears to be daytime").
        if token.dep_ not in ("attr", "acomp") or token.head.lemma_ != "be" or not (
                token.pos_ == "NOUN" or token.lemma_.lower() in FRAMING_NOUNS):
            continue
        copula = token.head
        governor = copula.head if copula.dep_ == "xcomp" else copula
        subjects = [c for c in governor.children if c.dep_ == "nsubj"]
        if not subjects or subjects[0].lower_ not in _PICTURE_PRONOUNS:
            continue
        modal = next((c for c in copula.children if c.dep_ == "aux" and c.lower_ in _MODALS), None)
        hedge = next((c for c in (*copula.children, *governor.children)
                      if c.dep_ == "advmod" and c.lower_ in HEDGE_WORDS), None)
        if modal is not None:
            predicate, marker = f"{modal.lower_} be", modal
        elif governor is not copula and governor.lemma_ in _SEEMING_VERBS:
            predicate, marker = f"{governor.lemma_}s to be", governor
        elif hedge is not None:
            predicate, marker = f"is {hedge.lower_}", hedge
        else:
            continue
        for noun in conjuncts(token):
            if not (noun.pos_ == "NOUN" or noun.lemma_.lower() in FRAMING_NOUNS) or \
                    (is_thing(noun) and is_visual_noun(noun.lower_) is not False):
                continue
            out.append((noun.i, RelationConcept(SCENE_SUBJECT, predicate, object_name(noun),
                                                char_span([marker, noun]))))
    return out


def count_concepts(doc: Any, mentions: list[Mention]) -> list[CountConcept]:
    """ "two dogs" -> (dog, 2), "two pairs of glasses" -> (glasses, 2); the span is the number's alone."""
    out: list[CountConcept] = []
    for m in mentions:
        root = doc[m.root]
        counted = root
        # "two pairs of glasses": the number sits on "pairs".
        if root.head.dep_ == "prep" and root.head.lower_ == "of" and root.head.head.lemma_.lower() == "pair":
            counted = root.head.head
        number = _number_of(counted)
        if number is not None:
            out.append(CountConcept(m.name, number[0], char_span([number[1]])))
            continue
        # "two astronauts, a face and two visors": in a list that counts, "a" says one.
        left = _word_before(root)
        if left is not None and left.lower_ in ("a", "an") and _in_counting_list(left, root):
            out.append(CountConcept(m.name, 1, char_span([left])))
    return out


def _number_of(token: Any) -> tuple[int, Any] | None:
    """The number counting a noun: its "nummod", or (the small model's long lists go astray) a number
    right before it that counts nothing else."""
    for child in token.children:
        # A number after its noun names it ("model 4708", "platform 9"): it counts nothing.
        n = count_of(child.text) if child.dep_ == "nummod" and child.i < token.i else None
        if n is not None and n > 0:
            return n, child
    left = _word_before(token)
    if left is not None and left.pos_ == "NUM" and left.dep_ != "nummod":
        n = count_of(left.text)
        if n is not None and n > 0:
            return n, left
    return None


def _word_before(noun: Any) -> Any | None:
    """The word before a noun's modifiers ("two" in "two large blue cranes")."""
    i = noun.i - 1
    while i >= 0 and (noun.doc[i].dep_ in ("amod", "compound") or noun.doc[i].pos_ == "ADJ"):
        i -= 1
    return noun.doc[i] if i >= 0 else None


def _in_counting_list(article: Any, noun: Any) -> bool:
    """Whether a noun sits in a list where another kind is counted: between it and a number there is no
    verb, preposition or clause break, and the number does not count the same noun ("three levels -
    a lower level")."""
    doc = noun.doc
    for t in noun.sent:
        if t.i == article.i or t.pos_ != "NUM" or not count_of(t.text):
            continue
        lo, hi = sorted((t.i, noun.i))
        if any(x.pos_ in ("VERB", "AUX", "ADP", "SCONJ", "PRON") or x.text in ".;:-–—" for x in doc[lo + 1:hi]):
            continue
        counted = next((x for x in doc[t.i + 1:] if x.pos_ in ("NOUN", "PROPN")), None)
        if counted is not None and counted.lemma_ != noun.lemma_:
            return True
    return False


def has_prep_object(verb: Any) -> bool:
    return any(c.dep_ in ("prep", "agent") and any(g.dep_ == "pobj" for g in c.children) for c in verb.children) \
        or any(c.dep_ == "dobj" for c in verb.children)


def qualifiers(noun: Any) -> tuple[str, ...]:
    """The attributes (colour, size, material, ...) written before a noun, which say which of several things of
    its name it is: "the small red metal cone" -> ("small", "red", "metal")."""
    words: list[Any] = []
    for child in noun.children:
        if child.i < noun.i and (child.dep_ == "amod" or (child.dep_ == "compound" and describes(child))):
            words += conjuncts(child)
            # "red metal cone": spaCy hangs "red" on "metal"
            words += [g for g in child.children if g.dep_ == "amod" and g.i < child.i]
    return tuple(w.lower_ for w in sorted(set(words), key=lambda w: w.i) if attribute_family(w.lower_) is not None)


def dedupe(objects: list[ObjectConcept], attributes: list[AttributeConcept],
            relations: list[RelationConcept], counts: list[CountConcept]) -> ConceptSet:
    """Each concept once per response, at its first mention."""
    seen_o: set[str] = set()
    seen_a: set[tuple[str, str]] = set()
    objs = [o for o in objects if not (o.name in seen_o or seen_o.add(o.name))]  # type: ignore[func-returns-value]
    attrs = [a for a in attributes if a.attribute != a.object and
             not ((a.object, a.attribute) in seen_a or seen_a.add((a.object, a.attribute)))]  # type: ignore[func-returns-value]
    # One relation per (subject, predicate, object), unless each says which objects it means, differently
    # ("the red cube is left of the blue cube", "the blue cube is left of the gray cube").
    kept: dict[tuple[str, str, str], list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
    rels = []
    for r in relations:
        key, quals = (r.subject, r.predicate, r.object), (r.subject_attributes, r.object_attributes)
        earlier = kept.get(key)
        if earlier is None or (any(quals) and all(any(q) for q in earlier) and quals not in earlier):
            kept.setdefault(key, []).append(quals)
            rels.append(r)
    seen_c: set[tuple[str, int]] = set()
    cnts = [c for c in counts if not ((c.object, c.count) in seen_c or seen_c.add((c.object, c.count)))]  # type: ignore[func-returns-value]
    return ConceptSet(objects=objs, attributes=attrs, relations=rels, counts=cnts)
