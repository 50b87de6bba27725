"""Parsing triplet strings such as ``"(laptop, is, black)"``.

Released files are hand-written and messy, so the parser is forgiving where the
intent is clear and says what it did:

>>> parse_triplets("(People, riding ,elephant)")
([('People', 'riding', 'elephant')], [])
>>> parse_triplets("(a, b, c,; (d, e, f)")  # two triplets run together
([('a', 'b', 'c'), ('d', 'e', 'f')], ['two triplets run together; split into 2'])
>>> parse_triplets("(Woman, looks at, Curiosity, photographer)")
([('Woman', 'looks at', 'Curiosity, photographer')], ["'(Woman, looks at, Curiosity, photographer)' has 4 parts; kept parts 3.. as the object"])
>>> parse_triplets("(dog, barking)")
Traceback (most recent call last):
...
ValueError: '(dog, barking)' has 2 parts, a triplet needs 3
"""

from __future__ import annotations

import re

Triplet = tuple[str, str, str]

# A new "(" after a comma or semicolon starts another triplet: "(a, b, c,; (d, e, f)".
_RUN_TOGETHER = re.compile(r"[,;]\s*(?=\()")
_QUOTES = "\"'“”‘’"


def _strip_wrapping_quotes(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return text


def _one(chunk: str, original: str, notes: list[str]) -> Triplet:
    inner = chunk.strip().lstrip("(").rstrip(")").strip().rstrip(",;").strip()
    parts = [p.strip() for p in inner.split(",")]
    parts = [p for p in parts if p]
    if len(parts) < 3:
        raise ValueError(f"{original!r} has {len(parts)} parts, a triplet needs 3")
    if len(parts) > 3:
        # Extra commas almost always sit inside the object ("Curiosity/Distraction, photographer").
        notes.append(f"{original!r} has {len(parts)} parts; kept parts 3.. as the object")
        parts = [parts[0], parts[1], ", ".join(parts[2:])]
    return (parts[0], parts[1], parts[2])


def parse_triplets(text: str) -> tuple[list[Triplet], list[str]]:
    """All triplets in ``text`` plus notes on any repair made; ValueError when nothing sensible is there."""
    if not isinstance(text, str):
        raise ValueError(f"a triplet must be a string like '(s, p, o)', got {type(text).__name__}")
    cleaned = _strip_wrapping_quotes(text)
    if not cleaned:
        raise ValueError("empty triplet")
    chunks = [c for c in _RUN_TOGETHER.split(cleaned) if c.strip()]
    notes: list[str] = []
    if len(chunks) > 1:
        notes.append(f"two triplets run together; split into {len(chunks)}")
    return [_one(c, text, notes) for c in chunks], notes


