"""Predicates: one canonical form, synonyms, passives, inverses and what entails what.

A predicate is read as a verb (its lemma) and a preposition (its canonical form), either
may be missing: "is sitting on top of" -> (sit, on), "left of" -> (None, left of),
"holding" -> (hold, None), "held by" -> (hold, None) passive. A passive claim is turned
active by swapping its ends, and an inverse ("under" for "on", "right of" for "left of")
lets a claim be checked against an edge written the other way round.

>>> parse_predicate("is sitting on top of")
Predicate(verb='sit', prep='on', passive=False)
>>> parse_predicate("held by")
Predicate(verb='hold', prep=None, passive=True)
>>> entails(parse_predicate("sitting on"), parse_predicate("on")), entails(parse_predicate("on"), parse_predicate("under"))
(True, False)
>>> inverse(parse_predicate("to the left of")), inverse(parse_predicate("on"))
(Predicate(verb=None, prep='right of', passive=False), Predicate(verb=None, prep='under', passive=False))
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .wordnet import load_wordnet

# Canonical preposition: the phrasings that mean it. Longest phrasings are matched first.
_PREP_GROUPS: dict[str, tuple[str, ...]] = {
    "on": ("on", "on top of", "atop", "upon", "onto", "on the top of", "over the top of"),
    "under": ("under", "beneath", "below", "underneath", "under the", "at the bottom of"),
    "above": ("above", "over", "higher than"),
    "in": ("in", "inside", "within", "into", "inside of", "in the middle of", "among", "amid", "amongst"),
    "outside": ("outside", "outside of", "out of"),
    "near": ("near", "next to", "beside", "by", "close to", "adjacent to", "alongside", "nearby", "beside of",
             "near to", "at the side of", "by the side of", "around", "at"),
    "far from": ("far from", "away from", "far away from"),
    "left of": ("left of", "to the left of", "on the left of", "on the left side of", "at the left of"),
    "right of": ("right of", "to the right of", "on the right of", "on the right side of", "at the right of"),
    "in front of": ("in front of", "before", "ahead of", "at the front of"),
    "behind": ("behind", "in back of", "at the back of", "in the back of"),
    "against": ("against", "leaning on", "leaning against"),
    "with": ("with", "having", "has", "have", "has a", "with a", "featuring", "containing", "contains", "contain"),
    "of": ("of", "part of", "belonging to", "on the side of", "from"),
    "across": ("across", "across from", "opposite", "facing"),
    "along": ("along", "down", "through", "past"),
    "between": ("between",),
    "toward": ("toward", "towards", "to", "into the direction of"),
}
_AUXILIARIES = frozenset({"is", "are", "was", "were", "be", "been", "being", "am", "'s", "seems", "appears",
                          "the", "a", "an", "its", "their", "his", "her", "can", "could", "will", "would",
                          "also", "currently", "just", "still", "directly"})


def _content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z']+", text.lower()) if w not in _AUXILIARIES]


PREPOSITIONS: dict[str, str] = {" ".join(_content_words(p)): canon for canon, ps in _PREP_GROUPS.items() for p in ps}
_PREP_PATTERN = re.compile(r"\b(" + "|".join(sorted((re.escape(p) for p in PREPOSITIONS), key=len, reverse=True))
                           + r")$")

# Verbs that say the same relation (lemma -> canonical lemma).
_VERB_GROUPS: dict[str, tuple[str, ...]] = {
    "hold": ("hold", "grasp", "grip", "clutch", "hold up"),
    "wear": ("wear", "dress", "sport", "have on"),
    "look": ("look", "watch", "stare", "gaze", "view", "observe", "see"),
    "sit": ("sit", "seat", "perch"),
    "lie": ("lie", "lay", "rest", "recline"),
    "stand": ("stand",),
    "eat": ("eat", "bite", "chew", "munch", "graze"),
    "ride": ("ride",),
    "cover": ("cover", "coat"),
    "hang": ("hang", "dangle", "suspend"),
    "park": ("park",),
    "walk": ("walk", "stroll"),
    "play": ("play",),
    "carry": ("carry", "tote"),
    "drink": ("drink", "sip"),
    "contain": ("contain", "include", "hold in"),
    "throw": ("throw", "toss"),
    "drive": ("drive",),
    "fly": ("fly",),
    "push": ("push",),
    "pull": ("pull", "tow", "drag"),
    "surround": ("surround", "encircle", "enclose"),
    "lean": ("lean",),
    "grow": ("grow", "sprout"),
}
_VERBS: dict[str, str] = {v: canon for canon, vs in _VERB_GROUPS.items() for v in vs}
# Verbs whose claims a picture can show (what the probe and real hallucinations swap between).
VISUAL_VERBS: frozenset[str] = frozenset(_VERB_GROUPS) | frozenset({"drop", "lack", "face", "touch", "follow",
                                                                     "chase", "cross", "climb", "swim", "jump", "run"})
# Verbs that only say where a thing is placed: "sitting on" states no more than "on" can check.
# Verbs whose subject has one object at a time: one sits, stands, lies, rides on one thing, drives one car.
ONE_AT_A_TIME: frozenset[str] = frozenset({"sit", "stand", "lie", "ride", "drive", "perch", "sleep"})
PLACEMENT_VERBS: frozenset[str] = frozenset({"sit", "lie", "stand", "hang", "park", "lean", "place", "set", "put",
                                             "locate", "situate", "position", "mount", "attach", "float", "sleep",
                                             "stack", "display", "grow", "perch", "rest"})
# Relations that say only that the two are connected ("has", "with"): any edge between them supports them.
GENERIC: frozenset[str] = frozenset({"with", "of", "have"})

_INVERSE_PREP = {"on": "under", "under": "on", "above": "under", "in": "with", "left of": "right of",
                 "right of": "left of", "in front of": "behind", "behind": "in front of", "near": "near",
                 "far from": "far from", "across": "across", "between": "between", "against": "against",
                 "with": "of", "of": "with", "outside": "outside"}
_SYMMETRIC = frozenset({"near", "far from", "across", "against"})
# The preposition that says the opposite of a canonical one *with the same ends* ("the cup under the table"
# against "the cup on the table"), as written in its place; unlike _INVERSE_PREP, which swaps the ends.
_CONTRARY_PREP = {"on": "under", "under": "on", "above": "below", "in": "outside", "outside": "inside",
                  "near": "far from", "far from": "next to", "left of": "right of", "right of": "left of",
                  "in front of": "behind", "behind": "in front of"}

# The same pairs as canonical prepositions, either way round ("above" is as contrary to "under" as "on" is).
_CONTRARY_PAIRS = frozenset({frozenset({PREPOSITIONS.get(a, a), PREPOSITIONS.get(b, b)}) for a, b in _CONTRARY_PREP.items()}
                            | {frozenset({"above", "under"})})


@dataclass(frozen=True)
class Predicate:
    verb: str | None
    prep: str | None
    passive: bool = False

    def text(self) -> str:
        return " ".join(x for x in (self.verb, self.prep) if x) or "is"

    @property
    def copula(self) -> bool:
        """ "is" alone: the claim names an attribute or a kind, not a relation."""
        return self.verb is None and self.prep is None


_VERB_SUFFIXES = (("ies", "y"), ("ying", "ie"), ("ing", "e"), ("ing", ""), ("es", "e"), ("es", ""), ("s", ""),
                  ("ed", "e"), ("ed", ""), ("d", ""))
_IRREGULAR_VERBS = {"held": "hold", "worn": "wear", "wore": "wear", "sat": "sit", "lying": "lie", "laid": "lay",
                    "lay": "lie", "ate": "eat", "eaten": "eat", "ridden": "ride", "rode": "ride", "stood": "stand",
                    "hung": "hang", "has": "have", "had": "have", "having": "have", "flew": "fly", "flown": "fly",
                    "drove": "drive", "driven": "drive", "grown": "grow", "grew": "grow", "thrown": "throw",
                    "threw": "throw", "seen": "see", "saw": "see", "built": "build", "made": "make",
                    "sitting": "sit", "putting": "put", "set": "set", "put": "put", "seated": "seat",
                    "parked": "park", "covered": "cover", "filled": "fill", "topped": "top", "surrounded": "surround"}


@lru_cache(maxsize=20_000)
def verb_lemma(word: str) -> str:
    """The base form of a verb ("sitting" -> "sit", "holds" -> "hold"), WordNet-checked where installed."""
    w = word.lower()
    if w in _IRREGULAR_VERBS:
        return _IRREGULAR_VERBS[w]
    wn = load_wordnet()
    if wn is not None:
        index = wn._load_index("v")
        exc = wn._load_exceptions("v").get(w)
        if exc and exc in index:
            return exc
        if w in index and not w.endswith(("ing", "ed")):
            return w
        for suffix, repl in _VERB_SUFFIXES:
            if w.endswith(suffix) and len(w) > len(suffix) + 1:
                stem = w[: len(w) - len(suffix)] + repl
                if stem in index:
                    # "sitting" -> "sitt" is no verb; a doubled final consonant comes off.
                    return stem
                if len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in index:
                    return stem[:-1]
        return w
    for suffix, repl in (("ing", ""), ("es", ""), ("s", ""), ("ed", "")):
        if w.endswith(suffix) and len(w) > len(suffix) + 2:
            return w[: len(w) - len(suffix)] + repl
    return w


def verb_base(word: str) -> str | None:
    """The verb whose form ``word`` is ("inhales" -> "inhale", "drinking" -> "drink", "graze" -> "graze"), or None
    where WordNet knows no such verb (or is not installed): ``verb_lemma`` checked against WordNet's verbs."""
    wn = load_wordnet()
    if wn is None:
        return None
    lemma = verb_lemma(word)
    return lemma if lemma in wn._load_index("v") else None


@lru_cache(maxsize=20_000)
def mostly_verb(word: str) -> bool:
    """Whether a word that is both a noun and a verb is used as a verb more than twice as often as a noun in
    WordNet's sense-tagged corpus: "stop" (162 / 11), "graze", "smile" are; "sign" (40 / 36), "herd", "bed" are not.

    >>> mostly_verb("stop"), mostly_verb("sign"), mostly_verb("table")
    (True, False, False)
    """
    wn = load_wordnet()
    lemma = verb_base(word)
    if wn is None or lemma is None:
        return False
    return wn.tag_count(lemma, "v") > 2 * wn.tag_count(wn.base_form(lemma, "n") or lemma, "n")


@lru_cache(maxsize=50_000)
def parse_predicate(text: str) -> Predicate:
    """A predicate's verb lemma, canonical preposition and voice."""
    phrase = " ".join(_content_words(text))
    passive = False
    prep = None
    m = _PREP_PATTERN.search(phrase)
    if m:
        prep = PREPOSITIONS[m.group(1)]
        phrase = phrase[: m.start()].strip()
    if phrase.endswith(" by") or phrase == "by":
        passive, phrase = True, phrase[:-2].strip()
    words = [w for w in phrase.split() if w != "to"]
    verb = None
    if words:
        lemma = verb_lemma(words[0])
        if prep is None and len(words) > 1 and f"{lemma} {words[1]}" in _VERBS:
            lemma = f"{lemma} {words[1]}"
        verb = _VERBS.get(lemma, lemma)
        if verb == "have":
            verb, prep = None, prep or "with"
        elif verb == "contain":
            verb, prep = None, "with"
        if words[0].endswith(("ed", "en")) or words[0] in ("held", "worn", "hung", "built", "made"):
            # A participle before "by" or a preposition: "covered by", "filled with".
            passive = passive or (prep == "by")
    if prep == "by" or (m and m.group(1) == "by" and verb is not None):
        passive, prep = True, None
    if verb is None and prep is None and passive:
        prep = "near"  # "by" alone is a place
        passive = False
    return Predicate(verb, prep, passive)


def inverse(p: Predicate) -> Predicate | None:
    """The predicate that says the same with the ends swapped, if there is one."""
    if p.passive:
        return Predicate(p.verb, p.prep, False)
    if p.verb is not None:
        if p.verb in PLACEMENT_VERBS and p.prep in _INVERSE_PREP:
            return Predicate(None, _INVERSE_PREP[p.prep])
        return Predicate(p.verb, p.prep, True)
    if p.prep in _INVERSE_PREP:
        return Predicate(None, _INVERSE_PREP[p.prep])
    return None


def contrary_preposition(text: str) -> str | None:
    """The preposition to write instead of ``text`` to say the opposite of it between the same two things.

    >>> contrary_preposition("on top of"), contrary_preposition("next to"), contrary_preposition("left of")
    ('under', 'far from', 'right of')
    >>> contrary_preposition("with") is None
    True
    """
    canon = PREPOSITIONS.get(" ".join(_content_words(text)))
    return _CONTRARY_PREP.get(canon) if canon else None


def contradicts(edge: Predicate, claim: Predicate, the_other_way: bool = False) -> bool:
    """Whether an edge says the contrary of a claim about the same two things: "under" against "on", "left of"
    against "right of", "outside" against "in". ``the_other_way``: the edge runs from the claim's object to its
    subject ("the table is on the cup" against "the cup is on the table").

    A different relation is no contradiction ("next to" and "in front of", "riding" and "on" can both hold):
    only a contrary place is.

    >>> on, under, near = parse_predicate("on top of"), parse_predicate("under"), parse_predicate("next to")
    >>> contradicts(under, on), contradicts(near, on), contradicts(on, on, the_other_way=True)
    (True, False, True)
    >>> contradicts(near, parse_predicate("far from")), contradicts(parse_predicate("in"), parse_predicate("outside"))
    (True, True)
    """
    if edge.passive or claim.passive or claim.prep is None or edge.prep is None:
        return False
    said = _INVERSE_PREP.get(edge.prep) if the_other_way else edge.prep
    if said is None or (the_other_way and edge.prep in _SYMMETRIC):
        return False
    return frozenset({said, claim.prep}) in _CONTRARY_PAIRS


def part_of(edge: Predicate, claim: Predicate) -> bool:
    """Whether an edge ``A has B`` supports the claim ``B <claim> A`` ("the bicycle has bags": the bags are on
    it, attached to it, hang from it)."""
    return edge.verb is None and edge.prep in GENERIC and not claim.passive and (
        claim.verb in PLACEMENT_VERBS or claim.verb == "attach" or claim.prep in ("on", "in", "of", "toward", "near"))


def is_generic(p: Predicate) -> bool:
    """Whether a predicate only says that two things go together ("with", "of", "has"), not how."""
    return p.verb is None and p.prep in GENERIC


def is_symmetric(p: Predicate) -> bool:
    return p.verb is None and p.prep in _SYMMETRIC


def entails(edge: Predicate, claim: Predicate) -> bool:
    """Whether a graph edge with predicate ``edge`` supports a claim with predicate ``claim`` (same direction)."""
    if edge == claim:
        return True
    if edge.passive != claim.passive:
        return False
    if claim.verb is None and claim.prep in GENERIC:
        return True  # "has", "with": any edge between them
    if claim.verb is None and edge.verb is not None and edge.verb == "wear" and claim.prep in ("with", "in"):
        return True  # "a man in an apron", "a man with a hat": what he wears
    if claim.verb is None:
        # A less specific claim: "on" from "sitting on"; "near" from anything that touches or faces it. A copula
        # edge ("(lambs, are, small sheep)") says what a thing is, not where: it places nothing near anything.
        return claim.prep == edge.prep or (claim.prep == "near" and not edge.copula
                                           and edge.prep not in ("far from", "outside"))
    if claim.verb == edge.verb:
        return claim.prep is None or edge.prep is None or claim.prep == edge.prep
    if claim.verb in PLACEMENT_VERBS and edge.verb is None:
        return claim.prep == edge.prep  # "sitting on" a thing the graph says it is "on"
    if claim.verb in PLACEMENT_VERBS and edge.verb in PLACEMENT_VERBS:
        return claim.prep is not None and claim.prep == edge.prep and claim.verb == edge.verb
    return False
