"""Object nouns: synonyms, the kinds they belong to, and whether they name something one can see.

``relation(claim, node)`` says how a claimed object name stands to a graph node's name:
``"same"`` (same lemma, a WordNet synonym or a listed synonym), ``"general"`` (the claim
names a kind the node belongs to: "animal" for a dog, which is a true, less specific
claim), ``"specific"`` (the claim is a kind of the node: "puppy" for a dog, which the graph
cannot confirm) or None.

>>> relation("dogs", "dog"), relation("animal", "dog"), relation("couch", "sofa"), relation("cat", "dog")
('same', 'general', 'same', None)
>>> relation("people", "boy"), relation("girl", "people")  # "people" is persons (``forms.singular``)
('general', 'specific')
"""

from __future__ import annotations

from functools import lru_cache

from .attributes import attribute_family
from .forms import head_noun, normalize_name, singular, unplaced
from .vocabularies import COCO_80_ALIASES
from .wordnet import load_wordnet
from .words import (ABSTRACT_LEXNAMES, FRAMING_NOUNS, MASS_NOUNS, NON_VISUAL_LEXNAMES, VISIBLE_ABSTRACT_NOUNS,
                    VISUAL_LEXNAMES)

# Categories CHAIR's image vocabulary and POPE read as one object: COCO's 80 with their other names (the one
# COCO category map, ``vocabularies.COCO_80_ALIASES``), and a few groups outside COCO. Broader than synonymy
# ("man" counts as "person", "table" as COCO's dining table), so only CHAIR and POPE use it as a category map.
_OTHER_CATEGORY_GROUPS: dict[str, tuple[str, ...]] = {
    "hat": ("cap", "helmet"),
    "shirt": ("t-shirt", "tshirt", "tee"),
    "rock": ("stone", "boulder"),
    "street": ("road",),
    "sign": ("signboard", "signage"),
    "building": ("house", "skyscraper"),
    "hill": ("hillside",),
}
CATEGORY_GROUPS: dict[str, tuple[str, ...]] = {
    **{category: names for category, names in COCO_80_ALIASES.items() if names}, **_OTHER_CATEGORY_GROUPS}
CATEGORY_OF: dict[str, str] = {syn: canon for canon, syns in CATEGORY_GROUPS.items() for syn in syns}

# True synonyms WordNet misses or ranks low (each set names one kind of thing).
_SYNONYM_SETS: tuple[frozenset[str], ...] = tuple(frozenset(s) for s in (
    {"bicycle", "bike"}, {"motorcycle", "motorbike"}, {"car", "automobile"}, {"airplane", "plane", "aeroplane",
    "aircraft", "jet"}, {"tv", "television"}, {"couch", "sofa"}, {"cellphone", "phone", "cell phone", "mobile phone",
    "smartphone", "telephone"}, {"cup", "mug"}, {"person", "human", "individual"}, {"man", "guy", "gentleman"},
    {"woman", "lady"}, {"child", "kid"}, {"rock", "stone", "boulder"}, {"street", "road"}, {"hill", "hillside"},
    {"sign", "signboard", "signage"}, {"kitten", "kitty"}, {"puppy", "pup"}, {"taxi", "cab"},
    {"refrigerator", "fridge"}, {"doughnut", "donut"}, {"hotdog", "hot dog"}, {"tshirt", "t-shirt", "tee shirt"},
    {"sneaker", "shoe"}, {"pavement", "sidewalk"}, {"lamp", "light"}, {"curtain", "drape"},
    {"ocean", "sea"}, {"grass", "lawn"}, {"tree", "trees"}, {"people", "person"}, {"boy", "young man"},
    {"girl", "young woman"}, {"picture", "photo", "photograph"}, {"pillow", "cushion"}, {"purse", "handbag"},
    {"cap", "hat"}, {"pants", "trousers"}, {"jeans", "denim"},
))
_SYNONYM_OF: dict[str, frozenset[str]] = {}
for _s in _SYNONYM_SETS:
    for _w in _s:
        _SYNONYM_OF[_w] = _SYNONYM_OF.get(_w, frozenset()) | _s


def _forms(name: str) -> tuple[str, str]:
    return normalize_name(name), head_kind(name)


@lru_cache(maxsize=100_000)
def head_kind(name: str) -> str:
    """What kind of thing a name names: its head noun ("red sports car" is a car), or its last words where
    WordNet lists them as one noun that is no kind of their last word ("teddy bear" is a toy, "hot dog" a
    sausage, "sea lion" a seal: none is a bear, a dog or a lion).

    >>> head_kind("red sports cars"), head_kind("a big teddy bear"), head_kind("hot dogs"), head_kind("polar bear")
    ('car', 'teddy bear', 'hot dog', 'bear')
    """
    words = normalize_name(unplaced(name)).split()
    head = words[-1] if words else ""
    wn = load_wordnet()
    if wn is None or len(words) < 2:
        return head
    heads = set(wn.synset_offsets(head, "n"))
    for k in (3, 2):
        tail = "_".join(words[-k:])
        senses = len(wn.synset_offsets(tail, "n")) if len(words) >= k else 0
        if senses:
            # Hypernyms only: WordNet lists "dog" among the names of a frankfurter, yet a hot dog is no dog.
            return head if wn.hypernym_closure(tail, "n", senses=senses) & heads else " ".join(words[-k:])
    return head


@lru_cache(maxsize=200_000)
def relation(claim: str, node: str) -> str | None:
    """How the claimed name ``claim`` stands to the graph name ``node`` (see the module docstring)."""
    c_full, c_head = _forms(claim)
    n_full, n_head = _forms(node)
    if not c_full or not n_full:
        return None
    if c_full == n_full or c_full in _SYNONYM_OF.get(n_full, ()) or c_full in _SYNONYM_OF.get(n_head, ()):
        return "same"
    # "coffee table" vs "table": the claim's modifier adds what the graph may not say.
    if c_head == n_full:
        return "same"
    if n_head == c_full:
        return "general"
    if c_head == n_head and len(c_full.split()) > 1 and len(n_full.split()) > 1:
        return "same"
    wn = load_wordnet()
    if wn is None:
        return None
    c_syn = _first_synsets(c_full) or _first_synsets(c_head)
    n_syn = _first_synsets(n_full) or _first_synsets(n_head)
    if not c_syn or not n_syn:
        return None
    if c_syn & n_syn:
        return "same"
    if c_syn & _hypernyms(n_full if _first_synsets(n_full) else n_head):
        return "general"
    if n_syn & _hypernyms(c_full if _first_synsets(c_full) else c_head):
        return "specific"
    return None


# How many of a noun's senses count: its most frequent ones, as people name things.
_SENSES = 2


@lru_cache(maxsize=100_000)
def _first_synsets(word: str) -> frozenset[int]:
    wn = load_wordnet()
    if wn is None:
        return frozenset()
    return frozenset(s.offset for s in wn.synsets(word, "n")[:_SENSES])


# Hypernyms so general that "is a kind of" says nothing ("entity", "object", "whole", "artifact").
_TOO_GENERAL = frozenset({"entity", "physical entity", "object", "whole", "artifact", "abstraction", "matter",
                          "thing", "unit", "living thing", "organism", "being", "causal agent", "instrumentality",
                          "group", "location", "region", "structure", "part", "portion", "piece"})


@lru_cache(maxsize=100_000)
def _hypernyms(word: str) -> frozenset[int]:
    wn = load_wordnet()
    if wn is None:
        return frozenset()
    out = set()
    for off in wn.hypernym_closure(word, "n", senses=1):
        syn = wn.synset(off, "n")
        if not set(w.lower() for w in syn.words) & _TOO_GENERAL:
            out.add(off)
    return frozenset(out)


# Senses of an "-ing" noun that make it a thing rather than an activity ("building", "frosting", "packaging",
# and "lettering", "writing": text one sees).
_THING_LEXNAMES = frozenset({"noun.artifact", "noun.food", "noun.object", "noun.substance", "noun.plant",
                             "noun.animal", "noun.body", "noun.location", "noun.communication"})
# Senses of a colour word used as a noun that are a thing ("an orange" is a fruit; "the blue" is not).
_COLOUR_THING_LEXNAMES = frozenset({"noun.food", "noun.plant", "noun.animal", "noun.artifact"})


@lru_cache(maxsize=100_000)
def is_abstract_noun(name: str) -> bool:
    """Whether a noun names nothing one could point at: its head's first WordNet senses are all attributes,
    states, feelings, relations, times ... ("posture", "likelihood", "readiness"); False where WordNet is
    missing or does not know the word."""
    head = head_noun(name)
    if not head or head in VISIBLE_ABSTRACT_NOUNS:
        return False
    wn = load_wordnet()
    senses = wn.synsets(head, "n")[:3] if wn is not None else []
    return bool(senses) and all(s.lexname in ABSTRACT_LEXNAMES for s in senses)


@lru_cache(maxsize=100_000)
def is_adjective_only(word: str) -> bool:
    """Whether WordNet knows a word as an adjective and never as a noun ("spiky" in "spiky hair", which
    spaCy's small model sometimes tags as a compound noun)."""
    wn = load_wordnet()
    w = word.strip().lower()
    return wn is not None and bool(wn.synsets(w, "a")) and not wn.synsets(w, "n")


@lru_cache(maxsize=100_000)
def is_compound_noun(modifier: str, head: str) -> bool:
    """Whether WordNet lists "modifier head" as one noun naming something one can see ("fire hydrant",
    "light bulb", "picture frame", "trash can", "power line").

    The two words are then one object even where spaCy's small model reads the first as an adjective
    ("light" in "a light bulb") or the second as a verb or auxiliary ("can" in "a trash can are").
    """
    wn = load_wordnet()
    m, h = modifier.strip().lower(), head.strip().lower()
    if wn is None or not m.isalpha() or not h.isalpha():
        return False
    return any(s.lexname in VISUAL_LEXNAMES for s in wn.synsets(f"{m}_{h}", "n")[:3])


@lru_cache(maxsize=100_000)
def names_other_kind(modifier: str, head: str) -> bool:
    """Whether "modifier head", a noun WordNet knows, names something that is no kind of ``head`` in its most
    frequent sense: a hot dog is no dog, a remote control no control, a light bulb no (plant) bulb, a great dane
    no Dane; a right hand is a hand, a polar bear a bear, an electric guitar a guitar. False where WordNet does
    not know the compound (or is not installed).

    >>> names_other_kind("hot", "dog"), names_other_kind("right", "hand")
    (True, False)
    """
    wn = load_wordnet()
    m, h = modifier.strip().lower(), head.strip().lower()
    if wn is None or not m.isalpha() or not h.isalpha():
        return False
    compound = f"{m}_{h}"
    senses = wn.synset_offsets(compound, "n")[:3]
    first = wn.synset_offsets(h, "n")[:1]
    if not senses or not first:
        return False
    return first[0] not in set(senses) | wn.hypernym_closure(compound, "n", senses=3)


@lru_cache(maxsize=100_000)
def noun_base(word: str) -> str | None:
    """The noun WordNet knows ``word`` as ("moped" -> "moped", "signs" -> "sign"), or None (or WordNet absent)."""
    wn = load_wordnet()
    return wn.base_form(word.strip().lower(), "n") if wn is not None else None


def is_noun(word: str) -> bool | None:
    """Whether WordNet knows a word (or its singular) as a noun at all: "sky", "clear" are, "shirtless",
    "well-maintained", "appear" are not; None where WordNet is missing."""
    if load_wordnet() is None:
        return None
    w = word.strip().lower()
    return noun_base(w) is not None or noun_base(singular(w)) is not None


@lru_cache(maxsize=100_000)
def is_noun_only(word: str) -> bool:
    """Whether WordNet knows a word as a noun and never as an adjective ("oven" in "an oven mitt", which
    spaCy's small model sometimes tags as an adjective): the mirror of ``is_adjective_only``."""
    wn = load_wordnet()
    w = word.strip().lower()
    return wn is not None and bool(wn.synsets(w, "n")) and not wn.synsets(w, "a")


@lru_cache(maxsize=100_000)
def is_activity_noun(word: str) -> bool:
    """Whether an "-ing" word names an activity, not a thing: "walking", "surfing", "relaxing" are;
    "building", "packaging", "frosting" are not (one of their WordNet senses is a thing).

    Without WordNet only "-ing" words that are not listed mass nouns count as activities.
    """
    w = word.strip().lower()
    if not w.endswith("ing") or len(w) <= 4 or w in MASS_NOUNS:
        return False
    wn = load_wordnet()
    if wn is None:
        return True
    return not any(s.lexname in _THING_LEXNAMES for s in wn.synsets(w, "n"))


@lru_cache(maxsize=100_000)
def names_a_thing_first(word: str) -> bool:
    """Whether an "-ing" word's most frequent WordNet sense is a thing: "scaffolding", "landing", "building" are
    (read as the object they name even after another noun); "standing", "drinking", "grazing" are not (there
    they are the verb of the noun before them). Stricter than ``is_activity_noun``, which any thing sense
    decides."""
    wn = load_wordnet()
    senses = wn.synsets(word.strip().lower(), "n")[:1] if wn is not None else []
    return bool(senses) and senses[0].lexname in _THING_LEXNAMES


@lru_cache(maxsize=100_000)
def is_colour_noun(word: str) -> bool:
    """Whether a word used as a noun only names a colour ("the blue", "a silver Nissan"), not a thing
    ("an orange")."""
    w = word.strip().lower()
    if attribute_family(w) != "colour":
        return False
    wn = load_wordnet()
    senses = wn.synsets(w, "n")[:1] if wn is not None else []
    return not (senses and senses[0].lexname in _COLOUR_THING_LEXNAMES)


@lru_cache(maxsize=100_000)
def is_visual_noun(name: str) -> bool | None:
    """Whether a noun names something one can see: True, False, or None when WordNet does not know it.

    Framing words ("image", "scene") are not. Otherwise the most frequent senses decide:
    a noun is visual when any of its first senses is a thing, animal, person, plant, food,
    body part, substance, place or natural object ("quality", "likelihood" are not).
    """
    norm = normalize_name(name)
    head = head_noun(name)
    if not norm or head in FRAMING_NOUNS:
        return False
    wn = load_wordnet()
    if wn is None:
        return None
    for word in (norm.replace(" ", "_"), head):
        senses = wn.synsets(word, "n")[:3]
        if senses:
            names = {s.lexname for s in senses}
            if names & VISUAL_LEXNAMES:
                return True
            if names <= NON_VISUAL_LEXNAMES:
                return False
    return None


_ANIMATE_LEXNAMES = frozenset({"noun.person", "noun.animal"})
_PEOPLE = frozenset({"man", "woman", "person", "people", "boy", "girl", "child", "kid", "player", "guy", "lady",
                     "baby", "skier", "surfer", "rider", "skateboarder", "crowd", "family", "couple", "team"})


@lru_cache(maxsize=100_000)
def is_animate(name: str) -> bool:
    """Whether a name is a person or an animal (by its most frequent sense): who can wear, hold or ride."""
    head = head_noun(name)
    if head in _PEOPLE:
        return True
    wn = load_wordnet()
    if wn is None or not head:
        return False
    senses = wn.synsets(head, "n")[:1]
    return bool(senses) and senses[0].lexname in _ANIMATE_LEXNAMES


@lru_cache(maxsize=100_000)
def is_agent(name: str) -> bool:
    """Whether a name is something that acts on its own in a picture: a person, an animal, or a vehicle
    (anything WordNet files under conveyance, by its most frequent sense): who can graze, herd or stop.

    >>> is_agent("girl"), is_agent("sheep"), is_agent("taxi"), is_agent("scarf"), is_agent("field")
    (True, True, True, False, False)
    """
    if is_animate(name):
        return True
    wn = load_wordnet()
    head = head_noun(name)
    if wn is None or not head:
        return False
    return any("conveyance" in wn.synset(off, "n").words for off in wn.hypernym_closure(head, "n", senses=1))
