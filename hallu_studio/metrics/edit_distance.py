"""Word-level edit distance (VISCON Evaluate-by-Edit, §3.2.2 and Table 3).

Words are maximal runs of letters, digits and apostrophes (any script), compared
case-insensitively; the distance is Levenshtein with unit costs over word sequences. VISCON
reports the total distance and the distance per word of the original, and the slope α of total
distance against response length per model (least squares).

Worked example, counted by hand:

    original: "A red car is parked."          -> a red car is parked          (5 words)
    revised:  "A blue car is parked near it." -> a blue car is parked near it (7 words)
    red -> blue is one substitution, "near it" two insertions: distance 3, per word 3 / 5 = 0.6

>>> d = word_edit_distance("A red car is parked.", "A blue car is parked near it.")
>>> d.distance, d.per_word, d.words
(3, 0.6, 5)
>>> [step[0] for step in d.alignment]
['equal', 'substitute', 'equal', 'insert']
>>> edit_slope_alpha([10, 20, 30], [5, 15, 25])
1.0
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

# A letter or digit of any script; apostrophes (straight or curly) join them ("don't", "o’clock").
_WORD = re.compile(r"(?:[^\W_]|['’])*[^\W_](?:[^\W_]|['’])*")
_OPS = {"equal": "equal", "delete": "delete", "insert": "insert", "replace": "substitute"}


def words_of(text: str) -> list[str]:
    """The words of a text, in order, as written.

    >>> words_of("Don't stop: 2 cafés, naïve-ish!")
    ["Don't", 'stop', '2', 'cafés', 'naïve', 'ish']
    """
    return _WORD.findall(text)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Where each word of ``words_of(text)`` stands in ``text`` (character offsets), so that a view can show
    the words with the punctuation and spacing between them.

    >>> word_spans("A cat, sat.")
    [(0, 1), (2, 5), (7, 10)]
    """
    return [m.span() for m in _WORD.finditer(text)]


@dataclass
class WordEdit:
    """The edit distance between two texts and the word alignment behind it.

    ``alignment`` steps are ``[op, original_words, revised_words]`` with op in
    equal / delete / insert / substitute (runs of the same op are one step).
    """

    distance: int
    words: int  # words in the original
    per_word: float | None  # None when the original has no words
    alignment: list[list] = field(default_factory=list)


def word_edit_distance(original: str, revised: str) -> WordEdit:
    """Levenshtein distance over case-folded words (unit costs), with the alignment kept."""
    from rapidfuzz.distance import Levenshtein

    a_words, b_words = words_of(original), words_of(revised)
    # rapidfuzz compares sequences of hashables; ints make the comparison case-insensitive and fast.
    vocab: dict[str, int] = {}
    a = [vocab.setdefault(w.casefold(), len(vocab)) for w in a_words]
    b = [vocab.setdefault(w.casefold(), len(vocab)) for w in b_words]
    distance = int(Levenshtein.distance(a, b))
    alignment: list[list] = []
    for op in Levenshtein.opcodes(a, b):
        alignment.append([_OPS[op.tag], a_words[op.src_start:op.src_end], b_words[op.dest_start:op.dest_end]])
    per_word = distance / len(a_words) if a_words else None
    return WordEdit(distance=distance, words=len(a_words), per_word=per_word, alignment=alignment)


def edit_slope_alpha(lengths: Sequence[float], distances: Sequence[float]) -> float:
    """Least-squares slope α of total edit distance against response length (VISCON Table 3).

    Fits ``distance = α · length + β``; needs at least two distinct lengths.
    """
    x = np.asarray(lengths, dtype=np.float64)
    y = np.asarray(distances, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"got {len(x)} lengths and {len(y)} distances")
    if len(x) < 2 or np.ptp(x) == 0:
        raise ValueError("the slope needs at least two responses of different lengths")
    alpha, _beta = np.polyfit(x, y, 1)
    return float(round(alpha, 12))

