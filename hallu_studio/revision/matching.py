"""Matching a mentioned object name to scene-graph objects, tolerant of plurals, compounds and synonyms.

>>> normalize_name("The Dogs")
'dog'
>>> m = ObjectMatcher()
>>> [o.name for o in m.match("coffee tables", [SceneObject("1", "table"), SceneObject("2", "chair")])]
['table']
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from ..model import SceneObject

_ARTICLES = re.compile(r"^(?:the|a|an|some|two|three|several|many)\s+")
_PLURAL_ONLY = frozenset({"glasses", "pants", "jeans", "shorts", "trousers", "clothes", "scissors", "stairs",
                          "sunglasses", "goggles", "headphones", "grass", "bus", "glass", "dress", "cross"})


_IRREGULAR = {
    "leaves": "leaf", "knives": "knife", "shelves": "shelf", "wolves": "wolf", "halves": "half", "scarves": "scarf",
    "loaves": "loaf", "calves": "calf", "wives": "wife", "men": "man", "women": "woman", "children": "child",
    "feet": "foot", "teeth": "tooth", "mice": "mouse", "geese": "goose", "people": "person", "persons": "person",
}


def singular(word: str) -> str:
    """A rough English singular, good enough to compare names ("benches" -> "bench", "people" -> "person")."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word in _PLURAL_ONLY or len(word) <= 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalize_name(name: str) -> str:
    """Lower case, articles and counts dropped, each word singular, ids ("plant_1", "plant₁") removed."""
    text = name.strip().lower()
    text = re.sub(r"[_\s]*[\d₀-₉]+$", "", text)
    text = _ARTICLES.sub("", text)
    return " ".join(singular(w) for w in re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", text))


class ObjectMatcher:
    """Finds the scene-graph objects a name refers to.

    Exact match of normalised names first, then the same head noun ("coffee table" ~ "table"),
    then, when an ``embedder`` is given, the most similar object name by cosine of
    ``Object: {name}`` phrases at or above ``threshold`` (synonyms: "puppy" ~ "dog").
    """

    def __init__(self, embedder: Any | None = None, threshold: float = 0.75) -> None:
        self.embedder = embedder
        self.threshold = threshold

    def config(self) -> dict[str, Any]:
        return {"embedder": getattr(self.embedder, "model_name", None), "threshold": self.threshold}

    def match(self, name: str, objects: Sequence[SceneObject]) -> list[SceneObject]:
        wanted = normalize_name(name)
        if not wanted or not objects:
            return []
        names = [normalize_name(o.name) for o in objects]
        exact = [o for o, n in zip(objects, names) if n == wanted]
        if exact:
            return exact
        head = wanted.split()[-1]
        same_head = [o for o, n in zip(objects, names) if n and n.split()[-1] == head]
        if same_head:
            return same_head
        if self.embedder is None:
            return []
        distinct = list(dict.fromkeys(names))
        vecs = self.embedder.encode([f"Object: {wanted}"] + [f"Object: {n}" for n in distinct])
        vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        sims = vecs[1:] @ vecs[0]
        best = int(np.argmax(sims))
        if float(sims[best]) < self.threshold:
            return []
        return [o for o, n in zip(objects, names) if n == distinct[best]]
