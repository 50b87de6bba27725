"""CHAIR (Rohrbach et al., 2018) over each image's own scene-graph vocabulary.

An object the response mentions (``item.mentioned.objects``, one per mention as the
extractor gives them) is *hallucinated* when it matches no object of the image's scene
graph. Matching, in order:

1. canonical names: lower case, leading determiners and numbers dropped, the head
   noun singularised (``lexicon.normalize_name``), then mapped through ``SYNONYMS``
   (``lexicon.nouns.CATEGORY_GROUPS``, in the spirit of CHAIR's COCO synonym list). The full phrase and its head noun are
   both tried, so "red sports car" matches "car";
2. grounding (``grounding.Grounder``, lexicon only): a WordNet synonym ("couch" for a
   sofa) or a kind the object belongs to ("animal" for a dog: a true, less specific word,
   not a hallucination);
3. optionally, embedding cosine ≥ ``threshold`` to a graph object name.

Framing words that are never things in the picture ("image", "scene", "background"
…, ``FRAMING_WORDS`` from the lexicon) are ignored, as CHAIR ignores words outside its vocabulary.

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

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..grounding import Grounder, ReferenceGraph
from ..judges.base import PhraseEncoder, unit_rows
from ..lexicon.forms import normalize_name
from ..lexicon.nouns import CATEGORY_OF
from ..lexicon.words import FRAMING_NOUNS, PRONOUNS, QUANTIFIER_NOUNS
from .base import ItemResult, ScoringItem

if TYPE_CHECKING:
    from ..config import Settings

SYNONYMS: dict[str, str] = CATEGORY_OF
# Words that are never things in the picture: CHAIR ignores them, as it ignores words outside its vocabulary.
FRAMING_WORDS: frozenset[str] = FRAMING_NOUNS | PRONOUNS | QUANTIFIER_NOUNS


def canonical_forms(name: str) -> list[str]:
    """The canonical full phrase and head noun of an object name: "two red Cars" → ["red car", "car"]."""
    full = normalize_name(name)
    if not full:
        return []
    out = []
    for form in (full, full.rsplit(" ", 1)[-1]):
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
        self._grounder = Grounder()  # the lexicon's grounding; the embedding fallback stays this metric's own

    @classmethod
    def from_settings(cls, settings: "Settings", *, encoder: PhraseEncoder | None = None) -> "ChairMetric":
        """Synonym matching, plus the embedding fallback when an encoder is given (threshold 0.8)."""
        return cls(encoder, model_name=settings.scoring.embedding_identity if encoder is not None else "")

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "synonyms": len(SYNONYMS), "framing_words": len(FRAMING_WORDS),
                "grounding": "lemma>synonym>hypernym",
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
        grounded: list[list[str]] = []
        if unmatched:
            graph = ReferenceGraph.from_scene_graph(item.sample.scene_graph)
            for m in unmatched:
                found = self._grounder.ground(m, graph)
                if found:
                    grounded.append([m, found[0].node.name, found[0].how])
            unmatched = [m for m in unmatched if m not in {g[0] for g in grounded}]
        sims = self._embedding_matches(unmatched, graph_names)
        hallucinated = [m for m, sim in zip(unmatched, sims) if sim < self.threshold]
        stats.update(mentioned=float(len(counted)), hallucinated=float(len(hallucinated)),
                     hallucinated_responses=float(bool(hallucinated)))
        values.update(hallucinated_objects=len(hallucinated), mentioned_objects=len(counted),
                      chair_i_item=100.0 * len(hallucinated) / len(counted) if counted else None)
        evidence = {"hallucinated": hallucinated, "mentioned": counted, "ignored": ignored, "grounded": grounded}
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
