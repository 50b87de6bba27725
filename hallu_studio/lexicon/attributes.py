"""Attribute families: which attributes exclude each other, which say the same thing.

A family (colour, material, size, shape, count, state, pattern) is a list of *scales*;
each scale a list of *classes* of words that mean the same. Two attributes conflict when
they sit on the same scale in different classes ("red" / "blue", "open" / "closed",
"large" / "tiny"); attributes on different scales never do ("tall" / "wide"). An object
may carry several classes of one scale in its graph ("black and white cat"): a claim is
then supported by any of them.

>>> attribute_family("grey"), attribute_family("wooden"), attribute_family("two"), attribute_family("smiling")
('colour', 'material', 'count', None)
>>> same_attribute("grey", "gray"), same_attribute("wood", "wooden"), same_attribute("big", "large")
(True, True, True)
"""

from __future__ import annotations

import re
from functools import lru_cache

from .words import NUMBER_WORDS

Scale = tuple[frozenset[str], ...]


def _scale(*classes: str) -> Scale:
    return tuple(frozenset(c.split()) for c in classes)


FAMILIES: dict[str, tuple[Scale, ...]] = {
    "colour": (_scale(
        "red crimson scarlet", "blue navy azure", "green", "yellow", "orange", "purple violet lavender",
        "pink", "brown tan beige khaki", "black", "white", "gray grey", "silver", "gold golden", "maroon burgundy",
        "teal turquoise cyan aqua", "blond blonde"),),
    "material": (_scale(
        "wood wooden", "metal metallic steel iron aluminum aluminium chrome", "plastic", "glass", "stone",
        "brick", "concrete cement", "leather", "ceramic porcelain", "marble", "paper cardboard", "fabric cloth cotton",
        "wicker", "rubber"),),
    "size": (_scale("large big huge giant enormous massive", "small little tiny mini"),
             _scale("tall high", "short low"), _scale("long", "short"), _scale("wide broad", "narrow"),
             _scale("thick", "thin")),
    "shape": (_scale("round circular", "square", "rectangular", "triangular", "oval"),
              _scale("curved", "straight")),
    "count": (_scale(*NUMBER_WORDS[1:]),),
    "state": (_scale("open", "closed shut"), _scale("empty", "full"), _scale("wet", "dry"),
              _scale("old", "new"), _scale("on", "off"), _scale("lit", "unlit dark"), _scale("clean", "dirty"),
              _scale("standing", "sitting seated", "lying"), _scale("young", "old elderly"),
              _scale("parked", "moving driving"), _scale("sunny", "cloudy overcast", "rainy"),
              _scale("cooked", "raw"), _scale("bare", "leafy"), _scale("asleep sleeping", "awake")),
    "pattern": (_scale("striped", "checkered plaid", "spotted dotted", "floral", "plain solid"),),
}

# "short" sits on two size scales; a word's scales are all those that hold it.
_SCALES_OF: dict[str, list[tuple[str, Scale, int]]] = {}
for _family, _scales in FAMILIES.items():
    for _s in _scales:
        for _i, _cls in enumerate(_s):
            for _w in _cls:
                _SCALES_OF.setdefault(_w, []).append((_family, _s, _i))

_MODIFIERS = re.compile(r"^(?:light|dark|bright|pale|deep|very|mostly|partly|slightly)\s+")


def _key(word: str) -> str:
    w = _MODIFIERS.sub("", word.strip().lower())
    w = w[:-4] if w.endswith("-ish") else w
    return w[:-3] if w.endswith("ish") and w[:-3] in _SCALES_OF else w


@lru_cache(maxsize=50_000)
def attribute_family(word: str) -> str | None:
    """The family an attribute word belongs to, or None when no family holds it."""
    found = _SCALES_OF.get(_key(word))
    return found[0][0] if found else None


def same_attribute(a: str, b: str) -> bool:
    """Whether two attribute words say the same ("grey" / "gray", "big" / "large")."""
    ka, kb = _key(a), _key(b)
    if ka == kb:
        return True
    return any(s is t and i == j for _, s, i in _SCALES_OF.get(ka, ()) for _, t, j in _SCALES_OF.get(kb, ()))


def shares_scale(a: str, b: str) -> bool:
    """Whether the graph's attribute ``b`` speaks to the claim ``a`` (same scale), agreeing or not."""
    ka, kb = _key(a), _key(b)
    return any(s is t for _, s, _ in _SCALES_OF.get(ka, ()) for _, t, _ in _SCALES_OF.get(kb, ()))


def alternatives(word: str) -> list[str]:
    """One word of every other class on ``word``'s scales: what it could wrongly be said to be."""
    out: list[str] = []
    for _, scale, i in _SCALES_OF.get(_key(word), ()):
        out += [sorted(cls)[0] for j, cls in enumerate(scale) if j != i]
    return list(dict.fromkeys(out))
