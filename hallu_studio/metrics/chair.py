"""CHAIR (Rohrbach et al., 2018) over each image's own scene-graph vocabulary.

An object the response mentions (``item.mentioned.objects``, one per mention as the
extractor gives them) is *hallucinated* when it matches no object of the image's scene
graph. Matching, in order:

1. canonical names: lower case, leading determiners and numbers dropped, the head
   noun singularised (a short irregular list + suffix rules), then mapped through
   ``SYNONYMS`` (a small hand-written table in the spirit of CHAIR's COCO synonym
   list; WordNet is not installed offline). The full phrase and its head noun are
   both tried, so "red sports car" matches "car";
2. optionally, embedding cosine ≥ ``threshold`` to a graph object name.

Framing words that are never things in the picture ("image", "scene", "background"
…, ``FRAMING_WORDS``) are ignored, as CHAIR ignores words outside its vocabulary.

    CHAIR_i = 100 × Σ hallucinated mentions / Σ object mentions
    CHAIR_s = 100 × responses with ≥ 1 hallucinated mention / responses

A response without object mentions counts in CHAIR_s's denominator (as in the
original code) and has no per-item CHAIR_i.

Worked example. Graph {man, dog, frisbee}. Response 1 mentions "men", "puppy", "cat"
→ man ✓ (plural), dog ✓ (synonym), cat ✗: 1 of 3. Response 2 mentions "frisbee",
"the image" → frisbee ✓, image ignored: 0 of 1. CHAIR_i = 100 × 1/4 = 25,
CHAIR_s = 100 × 1/2 = 50.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..judges.base import PhraseEncoder, unit_rows
from .base import ItemResult, ScoringItem

if TYPE_CHECKING:
    from ..config import Settings

# canonical name: the words and phrases that mean it
_SYNONYM_GROUPS: dict[str, tuple[str, ...]] = {
    "person": ("man", "woman", "boy", "girl", "child", "kid", "people", "guy", "lady", "gentleman", "adult",
               "player", "skier", "surfer", "skateboarder", "rider", "pedestrian", "baby", "toddler", "teenager",
               "human", "individual", "worker", "officer", "spectator", "passenger", "biker", "cyclist"),
    "bicycle": ("bike", "cycle"),
    "motorcycle": ("motorbike", "scooter", "moped"),
    "car": ("automobile", "sedan", "suv", "taxi", "cab", "jeep"),
    "airplane": ("plane", "jet", "aircraft", "airliner"),
    "tv": ("television", "tv screen", "monitor"),
    "couch": ("sofa", "loveseat"),
    "cellphone": ("phone", "cell phone", "mobile phone", "smartphone"),
    "laptop": ("notebook computer", "laptop computer"),
    "cup": ("mug",),
    "dog": ("puppy", "pup", "doggy"),
    "cat": ("kitten", "kitty"),
    "horse": ("pony", "foal"),
    "cow": ("cattle", "calf", "bull"),
    "sheep": ("lamb", "ram"),
    "boat": ("ship", "sailboat", "canoe", "kayak", "yacht"),
    "table": ("dining table", "desk"),
    "plant": ("potted plant", "houseplant"),
    "bag": ("handbag", "purse", "backpack"),
    "hat": ("cap", "helmet"),
    "shirt": ("t-shirt", "tshirt", "tee"),
    "rock": ("stone", "boulder"),
    "street": ("road",),
    "sign": ("signboard", "signage"),
    "building": ("house", "skyscraper"),
    "hill": ("hillside",),
}
SYNONYMS: dict[str, str] = {syn: canon for canon, syns in _SYNONYM_GROUPS.items() for syn in syns}

FRAMING_WORDS = frozenset({
    "image", "picture", "photo", "photograph", "scene", "setting", "background", "foreground", "environment",
    "atmosphere", "presence", "summary", "view", "side", "left", "right", "top", "bottom", "front", "middle",
    "center", "centre", "area", "part", "detail", "color", "colour", "shade", "tone", "moment", "variety",
    "number", "group", "kind", "type", "lot", "it", "they", "them", "which", "this", "that", "one", "something"})

_IRREGULAR = {"men": "man", "women": "woman", "people": "person", "children": "child", "feet": "foot",
              "teeth": "tooth", "mice": "mouse", "geese": "goose", "knives": "knife", "leaves": "leaf",
              "shelves": "shelf", "wolves": "wolf", "loaves": "loaf", "halves": "half", "glasses": "glass",
              "buses": "bus", "boxes": "box", "benches": "bench", "dishes": "dish", "sheep": "sheep",
              "species": "species", "grass": "grass", "bus": "bus", "glass": "glass", "pants": "pants",
              "jeans": "jeans", "scissors": "scissors", "skis": "ski", "tennis": "tennis"}
_DETERMINERS = {"a", "an", "the", "some", "two", "three", "four", "five", "several", "many", "few", "one",
                "another", "other", "its", "his", "her", "their", "this", "that", "these", "those"}


def singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if re.search(r"(ches|shes|sses|xes)$", word):
        return word[:-2]
    if word.endswith("s") and not re.search(r"(ss|us|is)$", word) and len(word) > 3:
        return word[:-1]
    return word


def canonical_forms(name: str) -> list[str]:
    """The canonical full phrase and head noun of an object name: "two red Cars" → ["red car", "car"]."""
    words = re.findall(r"[a-z][a-z\-]*", name.lower())
    while words and words[0] in _DETERMINERS:
        words = words[1:]
    if not words:
        return []
    words[-1] = singular(words[-1])
    full, head = " ".join(words), words[-1]
    out = []
    for form in (full, head):
        canon = SYNONYMS.get(form, form)
        if canon not in out:
            out.append(canon)
    return out


def is_framing(name: str) -> bool:
    forms = canonical_forms(name)
    return not forms or forms[-1] in FRAMING_WORDS


class ChairMetric:
    name = "chair"

    def __init__(self, encoder: PhraseEncoder | None = None, *, threshold: float = 0.8, model_name: str = "") -> None:
        self.encoder = encoder
        self.threshold = threshold
        self.model_name = model_name or (getattr(encoder, "model_name", type(encoder).__name__) if encoder else "")
        self._vectors: dict[str, Any] = {}  # unit vectors encoded by ``update_many`` for its batch

    @classmethod
    def from_settings(cls, settings: "Settings", *, encoder: PhraseEncoder | None = None) -> "ChairMetric":
        """Synonym matching, plus the embedding fallback when an encoder is given (threshold 0.8)."""
        return cls(encoder, model_name=settings.scoring.embedding_identity if encoder is not None else "")

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "synonyms": len(SYNONYMS), "framing_words": len(FRAMING_WORDS),
                "embedding_model": self.model_name or None, "threshold": self.threshold if self.encoder else None}

    def _embedding_matches(self, names: list[str], vocabulary: list[str]) -> list[float]:
        if self.encoder is None or not names or not vocabulary:
            return [0.0] * len(names)
        sims = self._unit(names) @ self._unit(vocabulary).T
        return [float(row.max()) for row in sims]

    def _unit(self, texts: list[str]) -> Any:
        if all(t in self._vectors for t in texts):
            return np.stack([self._vectors[t] for t in texts])
        return unit_rows(self.encoder.encode(texts))  # type: ignore[union-attr]

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        """``update`` on each item, every phrase the embedding fallback needs encoded in ONE call first.

        One encoder call per response costs a model forward pass each; the verdicts are the same.
        """
        self._vectors = {}
        if self.encoder is not None:
            texts: set[str] = set()
            for item in items:
                graph_names = item.sample.scene_graph.object_names()
                if not graph_names or item.mentioned is None:
                    continue
                vocabulary = {form for n in graph_names for form in canonical_forms(n)}
                unmatched = [o.name for o in item.mentioned.objects if o.name.strip() and not is_framing(o.name)
                             and not vocabulary.intersection(canonical_forms(o.name))]
                if unmatched:
                    texts.update(unmatched)
                    texts.update(graph_names)
            if texts:
                ordered = sorted(texts)
                self._vectors = dict(zip(ordered, unit_rows(self.encoder.encode(ordered))))
        try:
            return [self.update(item) for item in items]
        finally:
            self._vectors = {}

    def update(self, item: ScoringItem) -> ItemResult:
        stats = {"responses": 1.0, "hallucinated_responses": 0.0, "mentioned": 0.0, "hallucinated": 0.0}
        values: dict[str, Any] = {"hallucinated_objects": 0, "mentioned_objects": 0, "chair_i_item": None}
        graph_names = item.sample.scene_graph.object_names()
        if not graph_names:
            return ItemResult({k: 0.0 for k in stats}, values, {"hallucinated": [], "mentioned": []},
                              f"sample {item.sample.id} has no scene-graph objects: CHAIR has no vocabulary")
        if item.mentioned is None:
            return ItemResult({k: 0.0 for k in stats}, values, {"hallucinated": [], "mentioned": []},
                              "no concepts were extracted for this response; run concept extraction first")
        vocabulary = {form for n in graph_names for form in canonical_forms(n)}
        mentions = [o.name for o in item.mentioned.objects if o.name.strip()]
        ignored = [m for m in mentions if is_framing(m)]
        counted = [m for m in mentions if not is_framing(m)]
        unmatched = [m for m in counted if not vocabulary.intersection(canonical_forms(m))]
        sims = self._embedding_matches(unmatched, graph_names)
        hallucinated = [m for m, sim in zip(unmatched, sims) if sim < self.threshold]
        stats.update(mentioned=float(len(counted)), hallucinated=float(len(hallucinated)),
                     hallucinated_responses=float(bool(hallucinated)))
        values.update(hallucinated_objects=len(hallucinated), mentioned_objects=len(counted),
                      chair_i_item=100.0 * len(hallucinated) / len(counted) if counted else None)
        evidence = {"hallucinated": hallucinated, "mentioned": counted, "ignored": ignored}
        reason = None if counted else "the response mentions no objects: CHAIR_i is undefined for it"
        return ItemResult(stats, values, evidence, reason)

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        total = {k: sum(s.get(k, 0.0) for s in stats) for k in ("responses", "hallucinated_responses",
                                                                 "mentioned", "hallucinated")}
        out = {"responses": total["responses"], "mentioned": total["mentioned"]}
        if total["responses"]:
            out["chair_s"] = 100.0 * total["hallucinated_responses"] / total["responses"]
        if total["mentioned"]:
            out["chair_i"] = 100.0 * total["hallucinated"] / total["mentioned"]
        return out
