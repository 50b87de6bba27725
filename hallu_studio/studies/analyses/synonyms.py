"""Synonyms for the vocabulary-shift study: WordNet when installed, else a small built-in table.

A response's objects (nouns) and attributes (adjectives), located by the extractor's
spans, are the words swapped: they are what EMD compares with the reference.

Worked example: "dog" has no synonym in the table given, so the two swaps are big and sofa.

>>> table = {"big": ["large"], "sofa": ["couch"]}
>>> swap_words("A big dog sits on a sofa.", [((2, 5), "big", "a"), ((6, 9), "dog", "n"), ((20, 24), "sofa", "n")],
...            lambda w, pos: table.get(w, []), n_words=2, seed=0)
('A large dog sits on a couch.', [('big', 'large'), ('sofa', 'couch')])
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

from ...lexicon.wordnet import WORDNET_MISSING, load_wordnet, wordnet_source

SynonymFn = Callable[[str, str], list[str]]
Candidate = tuple[tuple[int, int], str, str]  # (character span, word, "n" or "a")

# Common words of image descriptions and a plain synonym each (our choice, for machines without WordNet).
BUILT_IN: dict[str, list[str]] = {
    "big": ["large"], "large": ["big"], "small": ["little"], "little": ["small"], "tiny": ["minute"],
    "car": ["automobile"], "sofa": ["couch"], "couch": ["sofa"], "man": ["guy"], "woman": ["lady"],
    "boy": ["lad"], "girl": ["lass"], "child": ["kid"], "kid": ["child"], "picture": ["photo"],
    "photo": ["picture"], "road": ["street"], "street": ["road"], "shirt": ["top"], "cup": ["mug"],
    "mug": ["cup"], "hat": ["cap"], "cap": ["hat"], "rock": ["stone"], "stone": ["rock"],
    "puppy": ["pup"], "dog": ["hound"], "cat": ["feline"], "bike": ["bicycle"], "bicycle": ["bike"],
    "jacket": ["coat"], "coat": ["jacket"], "pants": ["trousers"], "trousers": ["pants"], "sign": ["signboard"],
    "building": ["edifice"], "house": ["home"], "bag": ["sack"], "plate": ["dish"], "dish": ["plate"],
    "bright": ["vivid"], "dark": ["dim"], "old": ["aged"], "young": ["youthful"], "pretty": ["lovely"],
    "happy": ["cheerful"], "round": ["circular"], "wooden": ["wood"], "tall": ["high"], "grey": ["gray"],
    "gray": ["grey"], "shiny": ["glossy"], "empty": ["vacant"], "wet": ["damp"], "quiet": ["calm"],
}


def synonym_source() -> tuple[SynonymFn, str]:
    """WordNet's synonyms (most frequent sense) when installed, else the built-in table; and a note."""
    wn = load_wordnet()
    if wn is None:
        return (lambda word, pos: BUILT_IN.get(word.lower(), [])), (
            f"synonyms from the built-in table of {len(BUILT_IN)} words: {WORDNET_MISSING}")

    def wordnet_synonyms(word: str, pos: str) -> list[str]:
        # One-word synonyms only: a multi-word swap also changes the length.
        return [w for w in wn.synonyms(word, pos) if " " not in w and w.isalpha()]

    return wordnet_synonyms, f"synonyms from the word's most frequent sense ({wordnet_source().describe()})"


def _match_case(original: str, new: str) -> str:
    return new[:1].upper() + new[1:] if original[:1].isupper() else new


def swap_words(text: str, candidates: Sequence[Candidate], synonyms: SynonymFn, n_words: int = 1,
               seed: int | str = 0) -> tuple[str, list[tuple[str, str]]]:
    """Replace up to ``n_words`` candidate words that have a synonym; returns the text and the swaps.

    Which candidates are swapped is drawn with ``random.Random(seed)`` (a response id
    makes it repeatable per response); each gets its first synonym.
    """
    usable = []
    for span, word, pos in candidates:
        if text[span[0]:span[1]].lower() != word.lower() or " " in word:
            continue  # the span does not hold the single word (multi-word names are left alone)
        choices = [s for s in synonyms(word.lower(), pos) if s.lower() != word.lower()]
        if choices:
            usable.append((span, word, choices[0]))
    usable = list({span: (span, w, s) for span, w, s in usable}.values())
    picked = sorted(random.Random(seed).sample(usable, min(n_words, len(usable))), key=lambda c: c[0][0])
    out, position, swaps = [], 0, []
    for (start, end), word, synonym in picked:
        out.append(text[position:start])
        out.append(_match_case(text[start:end], synonym))
        swaps.append((text[start:end], synonym))
        position = end
    out.append(text[position:])
    return "".join(out), swaps
