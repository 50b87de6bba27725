"""Sentence building with character spans, and the small word tables the probe model uses.

Kept apart from the probe's decision logic so each file holds one idea.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..lexicon.forms import is_countable, noun_phrase, plural


# Objects that tend to appear together (COCO / Visual Genome style). An absent
# object that co-occurs with a present one is the typical object hallucination.
CO_OCCURRENCE: dict[str, tuple[str, ...]] = {
    "table": ("chair", "cup", "plate", "vase", "napkin"),
    "chair": ("table", "cushion", "lamp"),
    "cup": ("saucer", "spoon", "plate"),
    "plate": ("fork", "knife", "napkin"),
    "man": ("hat", "bag", "phone", "bicycle"),
    "woman": ("handbag", "umbrella", "phone"),
    "person": ("bag", "hat", "umbrella"),
    "dog": ("leash", "ball", "frisbee"),
    "cat": ("sofa", "cushion", "ball"),
    "car": ("road", "traffic light", "truck", "sign"),
    "street": ("car", "pole", "sidewalk"),
    "tree": ("bench", "grass", "bird"),
    "grass": ("tree", "fence", "dog"),
    "building": ("window", "sign", "tree"),
    "window": ("curtain", "plant"),
    "bed": ("pillow", "lamp", "blanket"),
    "sofa": ("cushion", "lamp", "rug"),
    "water": ("boat", "bird", "rock"),
    "sky": ("cloud", "bird", "kite"),
    "kitchen": ("oven", "sink", "refrigerator"),
    "laptop": ("mouse", "keyboard", "cup"),
    "horse": ("saddle", "fence", "rider"),
    "elephant": ("tree", "water", "rock"),
}
# Used when no present object has a co-occurrence entry.
COMMON_OBJECTS: tuple[str, ...] = ("chair", "cup", "bag", "bottle", "clock", "umbrella", "plant", "bench", "dog",
                                   "car", "lamp", "book")

FALLBACK_ATTRIBUTES: tuple[str, ...] = ("red", "blue", "wooden", "large", "striped", "metal")

RELATION_SWAPS: dict[str, str] = {
    "on": "under", "under": "on", "on top of": "beneath", "beneath": "on top of", "above": "below",
    "below": "above", "left of": "right of", "right of": "left of", "to the left of": "to the right of",
    "to the right of": "to the left of", "in front of": "behind", "behind": "in front of", "inside": "outside",
    "in": "outside", "near": "far from", "holding": "dropping", "wearing": "holding", "riding": "pushing",
    "sitting on": "standing next to", "next to": "far from", "eating": "looking at", "has": "lacks",
}
FALLBACK_RELATIONS: tuple[str, ...] = ("next to", "behind", "on", "under", "holding")


def counted(n: int, noun: str) -> tuple[str, str]:
    """What comes before the noun, and the noun as said, for ``n`` of ``noun`` (``lexicon.noun_phrase``'s split:
    the probe marks the noun's span on its own)."""
    phrase = noun_phrase(n, noun)
    said = plural(noun) if n != 1 and is_countable(noun) else noun
    return phrase[: len(phrase) - len(said)], said


@dataclass
class SpanText:
    """Text assembled piece by piece, remembering where marked pieces sit.

    >>> t = SpanText()
    >>> t.add("There is ")
    >>> a, b = t.mark("a cat")
    >>> t.text[a:b]
    'a cat'
    """

    parts: list[str] = field(default_factory=list)
    length: int = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def mark(self, text: str) -> tuple[int, int]:
        start = self.length
        self.add(text)
        return (start, self.length)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def concept_record(kind: str, concept: list[Any], span: tuple[int, int] | None,
                   truth: list[Any] | None = None, qualifiers: list[list[str]] | None = None) -> dict[str, Any]:
    """The shape of one ``signals["injected"]`` / ``signals["stated"]`` entry.

    ``qualifiers`` (relations only): the attributes the sentence gives its subject and its object to say which
    of several objects of one name it means ("the red cube" -> [["red"], []]).
    """
    rec: dict[str, Any] = {"type": kind, "concept": [str(c) for c in concept],
                           "span": list(span) if span else None}
    if truth is not None:
        rec["truth"] = [str(c) for c in truth]
    if qualifiers:
        rec["qualifiers"] = [[str(a) for a in q] for q in qualifiers]
    return rec
