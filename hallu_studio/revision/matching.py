"""Matching a mentioned object name to scene-graph objects, tolerant of plurals, compounds and synonyms.

>>> normalize_name("The Dogs")
'dog'
>>> m = ObjectMatcher()
>>> [o.name for o in m.match("coffee tables", [SceneObject("1", "table"), SceneObject("2", "chair")])]
['table']
>>> [o.name for o in m.match("animal", [SceneObject("1", "dog"), SceneObject("2", "chair")])]
['dog']
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..grounding import Grounder, ReferenceGraph
from ..lexicon.forms import normalize_name
from ..model import SceneObject

class ObjectMatcher:
    """Finds the scene-graph objects a name refers to.

    First by grounding (``grounding.Grounder``, lexicon only): the same normalised name, the
    same head noun ("coffee table" ~ "table"), a WordNet or listed synonym ("couch" ~ "sofa"),
    or a kind the object belongs to ("animal" ~ "dog"); then, when an ``embedder`` is given,
    the most similar object name by cosine of ``Object: {name}`` phrases at or above
    ``threshold`` (what the lexicon does not know).
    """

    def __init__(self, embedder: Any | None = None, threshold: float = 0.75) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.grounder = Grounder()

    def config(self) -> dict[str, Any]:
        return {"embedder": getattr(self.embedder, "model_name", None), "threshold": self.threshold,
                "grounding": "lemma>synonym>hypernym"}

    def match(self, name: str, objects: Sequence[SceneObject]) -> list[SceneObject]:
        wanted = normalize_name(name)
        if not wanted or not objects:
            return []
        names = [normalize_name(o.name) or o.name.strip().lower() for o in objects]
        graph = ReferenceGraph.from_triplets([o.name for o in objects], [])
        grounded = {m.node.name for m in self.grounder.ground(name, graph)}
        if grounded:
            return [o for o, n in zip(objects, names) if n in grounded]
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
