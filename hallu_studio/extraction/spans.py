"""Finding where a response mentions a concept an LLM named (LLMs return words, not offsets).

>>> text = "A red apple lies under the blue desk."
>>> find_span(text, ["apple"]), find_span(text, ["desk", "blue"]), find_span(text, ["apples"])
((6, 11), (27, 36), (6, 11))
>>> find_span(text, ["banana"]) is None
True
"""

from __future__ import annotations

import re

from ..lexicon.forms import plural, singular_phrase
from ..lexicon.words import PREMISE_OPENINGS, SPECULATION_WORDS


def _variants(word: str) -> list[str]:
    """The phrase and its singular and plural forms, so "apples" finds "apple" and back."""
    w = word.strip().lower()
    return [v for v in dict.fromkeys((w, singular_phrase(w), plural(w))) if v]


def _occurrences(text: str, phrase: str) -> list[tuple[int, int]]:
    lower = text.lower()
    for variant in _variants(phrase):
        found = [(m.start(), m.end()) for m in re.finditer(rf"(?<![^\W_]){re.escape(variant)}(?![^\W_])", lower)]
        if found:
            return found
    head = phrase.strip().split()[-1] if phrase.strip() else ""
    if head and head.lower() != phrase.strip().lower():
        return _occurrences(text, head)
    return []


def find_span(text: str, words: list[str]) -> tuple[int, int] | None:
    """The character span covering the first mention of ``words[0]`` and the nearest mentions of
    the others; None when the first word is not in the text (a concept the LLM inferred)."""
    words = [w for w in words if w and w.strip()]
    if not words:
        return None
    anchors = _occurrences(text, words[0])
    if not anchors:
        return None
    start, end = anchors[0]
    for word in words[1:]:
        occ = _occurrences(text, word)
        if not occ:
            continue
        nearest = min(occ, key=lambda se: abs(se[0] - anchors[0][0]))
        start, end = min(start, nearest[0]), max(end, nearest[1])
    return (start, end)


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Each sentence of ``text`` as a character span (split at . ! ?).

    >>> sentence_spans("A cat. A dog!")
    [(0, 6), (6, 13)]
    """
    return [(m.start(), m.end()) for m in _SENTENCE.finditer(text)]


_CLAUSE_BREAK = re.compile(r"[,;:(]|\s[-\u2013\u2014]\s")
# Hedges that open a clause of their own after what the sentence reports ("..., suggesting a party", "..., possibly
# a market"); any other hedge (a modal or a verb of the main clause: "could", "seems", "suggest"; a premise:
# "given", "considering") makes the whole sentence a guess.
_CLAUSE_HEDGES = frozenset({"suggesting", "indicating", "implying", "possibly", "likely", "probably", "perhaps",
                            "presumably", "apparently", "seemingly", "potentially", "typically", "usually", "often",
                            "maybe"})


def speculative_spans(text: str) -> list[tuple[int, int]]:
    """The parts of ``text`` that guess rather than report ("the person might be commuting"), as character
    spans, for each sentence holding a modal verb, a hedge or a reasoning word (``SPECULATION_WORDS``): the
    whole sentence, unless its first such word opens a clause of its own after what the sentence reports
    ("there are cups on the floor, suggesting a party": the cups are a claim, the party a guess), where the
    span starts at that clause. A sentence that opens with its premise ("Based on the shadows, it might be
    afternoon": ``PREMISE_OPENINGS``) is a guess as a whole. A claim is a guess when its span ends inside one.

    >>> t = "A man rides a horse. He might be going to a market. Cups lie around, suggesting a party."
    >>> [t[a:b] for a, b in speculative_spans(t)]
    [' He might be going to a market.', ', suggesting a party.']
    >>> t = "Given the shadows, it could be late. Warm clothes, a coat and a hat, would be wise."
    >>> [t[a:b] for a, b in speculative_spans(t)]
    ['Given the shadows, it could be late.', ' Warm clothes, a coat and a hat, would be wise.']
    """
    out: list[tuple[int, int]] = []
    for a, b in sentence_spans(text):
        words = list(re.finditer(r"[a-z]+", text[a:b].lower()))
        hedge = next((m for m in words if m.group(0) in SPECULATION_WORDS), None)
        if hedge is None:
            continue
        opening = " ".join(m.group(0) for m in words[:3])
        own_clause = hedge.group(0) in _CLAUSE_HEDGES and not any(opening.startswith(p) for p in PREMISE_OPENINGS)
        breaks = [m.start() for m in _CLAUSE_BREAK.finditer(text, a, a + hedge.start())] if own_clause else []
        out.append((breaks[-1] if breaks else a, b))
    return out
