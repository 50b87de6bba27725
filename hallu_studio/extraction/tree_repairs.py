"""Repairs to spaCy's dependency tree before SceneGraphParser reads it, for short captions.

spaCy's small model reads many short captions as one long noun phrase, so a verb ends up inside a noun
compound and then inside an object's name:

* "Sheep graze in a field" -> ``sheep graze``; "A boy and his dog herd goats" -> ``dog herd goat``;
  "A truck and a taxi stop at the stop sign" -> ``taxi stop``; "A young girl inhales" -> ``girl inhale``;
* "An elephant drinking water" -> ``elephant drinking water`` (a participle and its object).

``repair_glued_verbs`` gives such a verb back its clause on the same parse: the words before it are its
subject, the nouns after it its object, and its own dependents (prepositions, a coordinated verb) stay with
it, so the rules downstream read (sheep, graze in, field), (dog, herd, goat), (elephant, drinking, water).
A word is taken for a glued verb only where the sentence itself says so, beyond the tag, and never where
the two words are one noun WordNet knows ("bus stop", "dining table"):

* an "-s" form after a singular article ("A girl inhales", "a summer shirt smiles", "A paved path runs"):
  a plural head cannot follow "a", so the word is the verb of a singular subject; the subject acts (a
  person, an animal or a vehicle: ``lexicon.nouns.is_agent``) or the word is mostly a verb (WordNet's tag
  counts, ``lexicon.predicates.mostly_verb``), which keeps "a stop lights" (a slip) a noun;
* a base form after a plural subject that acts: a plural noun ("cows graze", "geese swim"), a noun spelt
  the same in both numbers ("sheep graze"), or two nouns joined by "and" that both act ("a truck and a taxi
  stop"); and the word is mostly a verb ("stop", "graze") or has an object after it ("herd goats");
* an "-ing" form after a noun that acts ("an elephant drinking water"), or after one that does not but hangs
  on one that does ("a man on a bench drinking coffee", "men wearing clothing standing on a slope"); an
  "-ing" word whose first WordNet sense is a thing stays that thing ("scaffolding", "landing").

A finite verb is repaired only in a caption whose root is a noun (a verbless reading). "A car and a street
sign", "a bed and a night stand", "sports cars", "a hotel swimming pool" are left alone.

``repair_verb_roots`` handles the verbs the parse itself marks as verbs while tagging them nouns: a noun root
with a subject ("Horses and a dog run along the beach") and a plural noun tagged as the adjective of a verb
("Geese swim across a pond"). ``repair_nouns_read_as_verbs`` handles the mirror fault: a root "verb" after an
article and an adjective ("A small moped parked on a dirt road": the past of "mope") or after a noun compound
("Street signs on a metal pole") is the noun WordNet knows.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..lexicon.attributes import attribute_family
from ..lexicon.forms import is_plural, may_be_plural
from ..lexicon.nouns import is_agent, is_compound_noun, names_a_thing_first, noun_base
from ..lexicon.predicates import mostly_verb, verb_base

# Articles that say their noun is one: "a girl inhales" cannot be a noun phrase headed by "inhales".
_SINGULAR_ARTICLES = frozenset({"a", "an", "one", "each", "every", "another", "this", "that"})
# How spaCy hangs one word of a noun compound on the next.
_MODIFIER_DEPS = frozenset({"compound", "amod", "nmod"})
# Where a noun phrase sits under a noun root: "A woman in a pink shirt smiles", "A boy and his dog herd".
_PHRASE_DEPS = frozenset({"conj", "pobj", "prep", "appos"})


def repair_tree(doc: Any) -> None:
    """All repairs of this module, in place (one pass over the tokens: building spaCy's token objects is most
    of the cost)."""
    tokens = list(doc)
    roots = [t for t in tokens if t.dep_ == "ROOT"]
    repair_nouns_read_as_verbs(doc, roots)
    repair_verb_roots(doc, roots)
    repair_glued_verbs(doc, tokens)


def repair_verb_roots(doc: Any, roots: Sequence[Any] | None = None) -> None:
    """Verbs the parse itself shows to be verbs although it tags them nouns or adjectives:

    * a noun root with a subject: "Horses and a dog run along the beach", "A man with a hat and a backpack hikes
      up a trail" (the backpack, hung on "hikes", ends the list before it);
    * a plural noun tagged as an adjective of a verb, which is that verb's subject: "Geese swim across a pond".
    """
    for v in (roots if roots is not None else [t for t in doc if t.dep_ == "ROOT"]):
        if v.dep_ != "ROOT" or not v.is_alpha or not v.is_lower:
            continue
        if v.pos_ == "VERB" and not any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in v.children):
            left = [c for c in v.lefts if c.dep_ == "amod" and c.pos_ == "ADJ" and c.is_alpha and is_plural(c.lower_)
                    and is_agent(c.lower_)]
            if len(left) == 1:
                _as_noun(left[0])
                left[0].dep_ = "nsubj"
            continue
        if v.pos_ != "NOUN":
            continue
        subjects = [c for c in v.lefts if c.dep_ == "nsubj" and c.pos_ in ("NOUN", "PROPN")]
        lemma = verb_base(v.lower_)
        if len(subjects) != 1 or lemma is None or not is_agent(subjects[0].lower_):
            continue
        subject = subjects[0]
        if is_compound_noun(doc[v.i - 1].lower_, v.lower_):  # "A trash can beside a bench"
            continue
        plural = may_be_plural(subject.lower_) or any(c.dep_ == "conj" for c in subject.children)
        if lemma == v.lower_ and plural:
            tag = "VBP"
        elif v.lower_.endswith("s") and lemma != v.lower_ and not plural:
            tag = "VBZ"
        else:
            continue
        modifiers = [c for c in v.lefts if c.dep_ in _MODIFIER_DEPS and c.i > subject.i]
        if modifiers:
            # "... and a backpack hikes": the noun hung on the verb continues a list after the subject.
            listed = [t for t in doc[subject.i + 1:modifiers[0].i] if t.dep_ == "pobj" and t.pos_ in ("NOUN", "PROPN")]
            if len(modifiers) != 1 or not listed or modifiers[0].i != v.i - 1:
                continue
            modifiers[0].head, modifiers[0].dep_ = listed[-1], "conj"
            _as_noun(modifiers[0])
        _as_verb(v, lemma, tag)


def repair_glued_verbs(doc: Any, tokens: Sequence[Any] | None = None) -> None:
    """Give verbs that spaCy glued into a noun compound their clause back (see the module docstring)."""
    for w in (tokens if tokens is not None else list(doc)):
        # A noun, or a participle the small model hung on the next noun ("a bench drinking coffee").
        if w.i == 0 or not w.is_alpha or not w.is_lower or \
                not (w.pos_ == "NOUN" or (w.tag_ == "VBG" and w.dep_ in _MODIFIER_DEPS)):
            continue
        p = doc[w.i - 1]
        if p.dep_ not in _MODIFIER_DEPS | {"npadvmod"} or p.head.i < w.i or not _is_subject_word(p):
            continue
        lemma = verb_base(w.lower_)
        if lemma is None or is_compound_noun(p.lower_, w.lower_):
            continue
        head = _chain_head(w)
        if w.lower_.endswith("ing") and lemma != w.lower_:
            # A thing named by an "-ing" word stays one ("scaffolding", "building", "landing").
            if w.tag_ == "VBG" or not names_a_thing_first(w.lower_):
                _repair_participle(doc, p, w, head, lemma)
        elif w.lower_.endswith("s") and lemma != w.lower_ and is_plural(w.lower_):
            if not is_plural(p.lower_) and _singular_article(doc, p, w, head):
                _repair_finite(doc, p, w, head, lemma, "VBZ", plural_subject=False)
        elif lemma == w.lower_:
            _repair_finite(doc, p, w, head, lemma, "VBP", plural_subject=True)


def repair_nouns_read_as_verbs(doc: Any, roots: Sequence[Any] | None = None) -> None:
    """Nouns read as the root verb: "A small moped on a dirt road" ("moped" with the adjective "small" as its
    subject), "A small moped parked on a dirt road" (an article and an adjective before it), "Street signs on a
    metal pole" (a noun compound before it). A verb takes none of these; WordNet must know the word as a noun."""
    for v in (roots if roots is not None else [t for t in doc if t.dep_ == "ROOT"]):
        if v.dep_ != "ROOT" or v.pos_ not in ("VERB", "AUX") or v.i == 0 or not v.is_alpha or \
                any(c.dep_ in ("dobj", "attr", "acomp") for c in v.children):
            continue
        subjects = [c for c in v.children if c.dep_ in ("nsubj", "nsubjpass")]
        before = doc[v.i - 1]
        article = v.i >= 2 and doc[v.i - 2].dep_ == "det" and doc[v.i - 2].head.i == v.i
        if not subjects and before.head.i == v.i and (
                (article and before.pos_ == "ADJ") or  # "A small moped parked on a dirt road"
                (before.dep_ == "compound" and before.pos_ in ("NOUN", "PROPN"))):  # "Street signs on a pole"
            _read_as_noun(v)
        elif len(subjects) == 1 and subjects[0].i == v.i - 1 and subjects[0].pos_ == "ADJ" and \
                any(c.dep_ == "det" for c in subjects[0].children) and _read_as_noun(v):  # "A small moped on"
            adj = subjects[0]
            for c in list(adj.children):
                c.head = v
            adj.head, adj.dep_ = v, "amod"


def _read_as_noun(v: Any) -> bool:
    """Tag ``v`` as the noun WordNet knows it as; False (and nothing changed) where WordNet knows no such noun."""
    lemma = noun_base(v.lower_)
    if lemma is None:
        return False
    v.pos_, v.lemma_, v.tag_ = "NOUN", lemma, ("NNS" if lemma != v.lower_ else "NN")
    return True


def _is_subject_word(p: Any) -> bool:
    """A noun, or a plural noun the small model tagged as an adjective ("Two canadian geese swim"); not a word
    of the attribute families ("White scaffolding": WordNet's first "white" is a person)."""
    if not p.is_alpha or attribute_family(p.lower_) is not None:
        return False
    return p.pos_ in ("NOUN", "PROPN") or (p.pos_ == "ADJ" and is_plural(p.lower_))


def _chain_head(w: Any) -> Any:
    """The last noun of the compound ``w`` is in ("water" for "drinking" in "drinking water")."""
    head = w
    while head.dep_ in _MODIFIER_DEPS and head.head.i > head.i and head.head.pos_ in ("NOUN", "PROPN"):
        head = head.head
    return head


def _singular_article(doc: Any, p: Any, w: Any, head: Any) -> bool:
    """Whether the phrase ending in ``p w`` opens with "a", "an", "one" ... (its determiner hangs on the chain)."""
    i = p.i - 1
    while i >= 0 and doc[i].dep_ in _MODIFIER_DEPS | {"advmod"} and doc[i].head.i > i:
        i -= 1
    return i >= 0 and doc[i].lower_ in _SINGULAR_ARTICLES and w.i <= doc[i].head.i <= head.i


def _noun_root(token: Any) -> Any | None:
    """The root of the sentence when it is a noun reached from ``token`` through phrases and coordination."""
    node = token
    while node.dep_ != "ROOT":
        if node.dep_ not in _PHRASE_DEPS:
            return None
        node = node.head
    return node if node.pos_ in ("NOUN", "PROPN") else None


# How a noun phrase hangs under the noun it tells about: "a man on a bench", "men wearing clothing".
_ABOVE_DEPS = frozenset({"pobj", "prep", "conj", "dobj", "acl", "appos"})


def _agent_above(token: Any) -> Any | None:
    """The nearest person, animal or vehicle above ``token`` through phrases, coordination and participles."""
    node = token
    while node.dep_ in _ABOVE_DEPS and node.head.i != node.i:
        node = node.head
        if node.pos_ in ("NOUN", "PROPN") and is_agent(node.lower_):
            return node
    return None


def _take_modifiers(doc: Any, p: Any, start: int, end: int) -> None:
    """Words before ``p`` that hang on the verb or its object (the article, a number, adjectives) go to ``p``."""
    for t in doc[:p.i]:
        if start <= t.head.i <= end and t.i < p.i:
            t.head = p


def _as_verb(w: Any, lemma: str, tag: str) -> None:
    w.pos_, w.tag_, w.lemma_ = "VERB", tag, lemma


def _repair_finite(doc: Any, p: Any, w: Any, head: Any, lemma: str, tag: str, plural_subject: bool) -> None:
    """``p w [object]`` under a noun root: ``p``, or the root, becomes the subject of the verb ``w``."""
    if head.dep_ == "nsubj" and head.i == w.i and head.head.dep_ == "ROOT" and head.head.pos_ == "NOUN":
        root = head.head  # "A dog herds goats": the object read as the root, the verb as its subject
    else:
        root = _noun_root(head)
    if root is None:
        return
    coordinated = head.dep_ == "conj" and head.head.i == root.i
    # "Sheep graze in a field", "A dog herds goats": p is the subject; else the root is ("A woman in a pink
    # summer shirt smiles", "A truck and a taxi stop").
    subject = p if head.dep_ == "ROOT" or root.i > head.i else root
    # A thing that acts, or a word that is mostly a verb ("a paved path runs"; not "a stop lights", a slip).
    if not (is_agent(subject.lower_) or (not plural_subject and mostly_verb(w.lower_))):
        return
    if plural_subject:
        # Both conjuncts act ("a truck and a taxi stop"; not "a woman and a fruit stand").
        if not (may_be_plural(subject.lower_) or (coordinated and is_agent(p.lower_))):
            return
        has_object = head.i != w.i and not head.lower_.endswith("ing")
        if not (mostly_verb(w.lower_) or (has_object and is_agent(p.lower_))):
            return
    # Where p goes: its phrase's place; after "and", a conjunct of the root when the verb is plural, else the
    # end of the list before it ("a woman with glasses and a scarf skateboards": the scarf is worn).
    place = (head.head, head.dep_)
    if coordinated and not plural_subject:
        listed = [t for t in doc[root.i + 1:p.i] if t.dep_ == "pobj" and t.pos_ in ("NOUN", "PROPN")]
        place = (listed[-1], "conj") if listed else place
    _as_verb(w, lemma, tag)
    _take_modifiers(doc, p, w.i, head.i)
    _as_noun(p)
    w.head, w.dep_ = w, "ROOT"
    if head.i != w.i:
        head.head, head.dep_ = w, "dobj"
    if subject.i == p.i:
        p.head, p.dep_ = w, "nsubj"
        if root.i not in (head.i, w.i):  # "A dog herds goats"
            root.head, root.dep_ = w, "dobj"
        return
    p.head, p.dep_ = place
    root.head, root.dep_ = w, "nsubj"


def _repair_participle(doc: Any, p: Any, w: Any, head: Any, lemma: str) -> None:
    """ "An elephant drinking water": ``p`` takes the compound's place, ``w`` describes it (as spaCy reads
    "a cat drinking milk"), and the nouns after ``w`` are its object. Where ``p`` is no agent, the participle
    describes the nearest agent above the phrase ("a man on a bench drinking coffee", "two men wearing blue
    clothing standing on a slope")."""
    if is_agent(p.lower_):
        doer = p
    elif p.pos_ != "NOUN" or (head.i > w.i and is_compound_noun(w.lower_, doc[w.i + 1].lower_)):
        return  # "a Nintendo Wii gaming console", "a dirt parking lot": one name
    else:
        doer = _agent_above(head)
    if doer is None:
        return
    place = (p, "ROOT") if head.dep_ == "ROOT" else (head.head, head.dep_)
    _as_verb(w, lemma, "VBG")
    _take_modifiers(doc, p, w.i, head.i)
    _as_noun(p)
    p.head, p.dep_ = place
    if head.i != w.i:
        head.head, head.dep_ = w, "dobj"
    w.head, w.dep_ = doer, "acl"


def _as_noun(p: Any) -> None:
    if p.pos_ == "ADJ":  # "geese" tagged as an adjective
        p.tag_ = "NNS" if is_plural(p.lower_) else "NN"
    if p.pos_ != "PROPN":
        p.pos_ = "NOUN"
