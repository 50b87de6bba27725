"""Word forms: singular and plural nouns, articles that agree, and the one name normaliser.

Singulars come from WordNet's morphology (its irregular-form lists and suffix rules,
checked against its noun index) when WordNet is installed, else from ``inflect`` guarded
by the same exceptions; plurals and indefinite articles always come from ``inflect``.

>>> singular("petals"), singular("leaves"), singular("glasses"), singular("bus"), singular("women")
('petal', 'leaf', 'glasses', 'bus', 'woman')
>>> plural("woman"), plural("glasses"), plural("traffic light"), plural("leaf")
('women', 'glasses', 'traffic lights', 'leaves')
>>> noun_phrase(1, "umbrella"), noun_phrase(1, "glasses"), noun_phrase(2, "glasses"), noun_phrase(3, "sheep")
('an umbrella', 'a pair of glasses', 'two pairs of glasses', 'three sheep')
>>> normalize_name("The two red Cars"), normalize_name("plant_1"), normalize_name("sports cars")
('red car', 'plant', 'sports car')
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from .wordnet import load_wordnet
from .words import MASS_NOUNS, NUMBER_WORDS, PAIR_NOUNS, PLURAL_ONLY_NOUNS

if TYPE_CHECKING:
    import inflect


@lru_cache(maxsize=1)
def _engine() -> "inflect.engine":
    # Imported on first use: inflect's type checks take a second to set up at import, and a command that
    # forms no word (``score`` answered from its cache, ``--help``) should not wait for them.
    import inflect

    return inflect.engine()


# Nouns spelt the same in both numbers, or whose "-s" is not a plural ending.
_INVARIANT = frozenset({"species", "series", "sheep", "deer", "fish", "aircraft", "news", "means", "moose",
                        "bison", "salmon", "trout", "shrimp", "swiss", "chassis", "corps", "headquarters"})
# Plurals with no "-s" that WordNet also lists as nouns of their own, so nothing above reads them as plural.
_UNMARKED_PLURALS = frozenset({"people", "police", "cattle"})
# The one whose singular is another word: "people" counts persons (WordNet files the word itself under groups).
UNMARKED_PLURAL_OF: dict[str, str] = {"people": "person"}
_NOUN_SUFFIXES: tuple[tuple[str, str], ...] = (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
                                               ("shes", "sh"), ("men", "man"), ("ies", "y"), ("ves", "f"),
                                               ("ves", "fe"), ("s", ""))
_DETERMINERS = frozenset({"a", "an", "the", "some", "any", "another", "other", "its", "his", "her", "their",
                          "this", "that", "these", "those", "several", "many", "few", "each", "every", "both",
                          "my", "our", "your", "one"}) | frozenset(NUMBER_WORDS)
_ID_SUFFIX = re.compile(r"[_\s]*[\d₀-₉]+$")
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


@lru_cache(maxsize=100_000)
def singular(word: str) -> str:
    """The singular of one lower-case noun; plural-only nouns ("glasses", "jeans") stay as they are."""
    w = word.strip().lower()
    if w in UNMARKED_PLURAL_OF:
        return UNMARKED_PLURAL_OF[w]
    if len(w) <= 2 or w in PLURAL_ONLY_NOUNS or w in _INVARIANT or w in MASS_NOUNS:
        return w
    wn = load_wordnet()
    if wn is not None:
        exc = wn._load_exceptions("n").get(w)
        index = wn._load_index("n")
        if exc and exc in index:
            return exc
        for suffix, repl in _NOUN_SUFFIXES:
            if w.endswith(suffix) and len(w) > len(suffix) + 1 and w[: len(w) - len(suffix)] + repl in index:
                return w[: len(w) - len(suffix)] + repl
        if w in index:
            return w
    if w.endswith(("ss", "us", "is")):
        return w
    return _engine().singular_noun(w) or w


def singular_phrase(phrase: str) -> str:
    """A noun phrase with its head (last word) made singular: "sports cars" -> "sports car"."""
    words = phrase.split()
    if not words:
        return phrase
    return " ".join(words[:-1] + [singular(words[-1])])


def is_plural(word: str) -> bool:
    """Whether a noun is a plural form ("dogs", "women"); plural-only nouns are not."""
    w = word.strip().lower()
    return singular(w) != w


def may_be_plural(word: str) -> bool:
    """Whether a noun can stand for several: a plural form, or a noun spelt the same in both numbers.

    >>> [may_be_plural(w) for w in ("cows", "geese", "sheep", "people", "dog", "glasses")]
    [True, True, True, True, False, False]
    """
    w = word.strip().lower()
    return w in _INVARIANT or w in _UNMARKED_PLURALS or is_plural(w)


@lru_cache(maxsize=50_000)
def plural(noun: str) -> str:
    """The plural of a noun phrase (its last word); plural-only and mass nouns are returned as they are."""
    words = noun.split()
    if not words:
        return noun
    head = words[-1].lower()
    if head in PLURAL_ONLY_NOUNS or head in MASS_NOUNS or head in _INVARIANT or head in _UNMARKED_PLURALS:
        return noun
    if is_plural(head):
        return noun
    return " ".join(words[:-1] + [_engine().plural_noun(words[-1])])


def indefinite_article(phrase: str) -> str:
    """"a" or "an" for the phrase as spoken ("an hour", "a one-way sign", "an umbrella")."""
    return _engine().a(phrase).split(" ", 1)[0]


def number_word(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def is_countable(noun: str) -> bool:
    """False where a number means nothing: mass nouns ("grass", "water", "sky"), and a name in the plural
    ("petals", "leaves", "the eaves"), which names a group of unknown size, however many such groups there are.
    Pair nouns are counted in pairs.

    >>> is_countable("dog"), is_countable("grass"), is_countable("petals"), is_countable("eaves"), is_countable("glasses")
    (True, False, False, False, True)
    """
    head = noun.split()[-1].lower() if noun.split() else ""
    if not head or head in MASS_NOUNS:
        return False
    return head in PAIR_NOUNS or not (head in PLURAL_ONLY_NOUNS or is_plural(head))


def takes_plural_verb(noun: str) -> bool:
    """Whether a noun phrase takes "are": plurals and plural-only nouns ("the glasses are", "the eaves are").

    >>> [takes_plural_verb(w) for w in ("dog", "dogs", "glasses", "eaves", "grass", "inner petals")]
    [False, True, True, True, False, True]
    """
    head = noun.split()[-1].lower() if noun.split() else ""
    return bool(head) and (head in PLURAL_ONLY_NOUNS or is_plural(head))


def noun_phrase(n: int, noun: str) -> str:
    """``n`` of ``noun`` as a describer says it, with number and article in agreement.

    Pair nouns are counted in pairs; mass nouns and names of groups ("petals") take no number.

    >>> noun_phrase(1, "petals"), noun_phrase(2, "eaves"), noun_phrase(2, "stairs"), noun_phrase(1, "hour")
    ('petals', 'eaves', 'stairs', 'an hour')
    """
    head = noun.split()[-1].lower() if noun.split() else noun
    if head in PAIR_NOUNS:
        return f"a pair of {noun}" if n == 1 else f"{number_word(n)} pairs of {noun}"
    if not is_countable(noun):
        return noun
    if n == 1:
        return f"{indefinite_article(noun)} {noun}"
    return f"{number_word(n)} {plural(noun)}"


def count_of(word: str) -> int | None:
    """The number a counting word says ("two" -> 2, "3" -> 3, "a" -> None)."""
    w = word.strip().lower()
    if w in NUMBER_WORDS:
        return NUMBER_WORDS.index(w)
    return int(w) if w.isdigit() else None


@lru_cache(maxsize=100_000)
def normalize_name(name: str) -> str:
    """The one comparable form of an object name.

    Lower case; ids ("plant_1", "plant₁"), leading determiners and numbers dropped; the
    head noun singular. Used wherever two object names are compared.
    """
    text = _ID_SUFFIX.sub("", name.strip().lower())
    words = _WORD.findall(text)
    while words and words[0] in _DETERMINERS:
        words = words[1:]
    if not words:
        return ""
    return " ".join(words[:-1] + [singular(words[-1])])


# A name that places its thing: "person with helmet", "food in pan", "player on the right".
_PLACED = re.compile(r"\s+(?:on|in|at|of|to|with|near|by|from|behind|under|inside|for)\s+.*$")


def unplaced(name: str) -> str:
    """The thing a placed name is about: "person with helmet" -> "person" (names that place nothing unchanged)."""
    return _PLACED.sub("", name.strip()) or name.strip()


def head_noun(name: str) -> str:
    """The head noun of the normalised name: "red sports car" -> "car", "person with helmet" -> "person"."""
    norm = normalize_name(unplaced(name))
    return norm.rsplit(" ", 1)[-1] if norm else ""
