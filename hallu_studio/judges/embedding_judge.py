"""Tri-HE's released "NLI judge" (``NLI_judge.py``), which is in fact an embedding-similarity check.

The released rule, reproduced step for step:

1. each reference triplet becomes a sentence, its three parts joined by spaces with a period at the end
   ("books piled on desk."), in the reference's order (a triplet listed twice in other letter cases once);
   the claim is its three parts joined by spaces, without a period ("desk sitting at large");
2. the *relevant* references are those whose sentence has cosine > ``reference_threshold`` (0.5) to the
   claim, joined by spaces **in the reference's order**; the *top-k* (3) are the most similar sentences,
   joined by spaces most similar first;
3. the claim's score is the cosine between it and the joined relevant sentences, or the cosine to the
   joined top-k where that is **higher** (the top-k alone when no reference is relevant);
4. the claim is supported when its score is > ``support_threshold`` (0.6).

The released code used all-mpnet-base-v2; offline the configured ``hallu_studio.embedding.Embedder``
model is used (all-MiniLM-L6-v2 by default), so absolute numbers differ from the paper's. Ties in step 2's
ranking keep the reference order (numpy's default sort in the released code may break them otherwise). An
unsupported claim is typed as an object or relation hallucination or a prediction error by
``offline.GraphTyper`` (the project's addition: the released check only says "no").

Worked example with exact bag-of-words vectors (each word its own axis). References ``cat on sofa``,
``dog near table``; claim ``cat near sofa``: the sentences are "cat on sofa." and "dog near table."
(cosines 2/3 and 1/3); relevant: "cat on sofa." → 0.667; top-3: "cat on sofa. dog near table." → 0.707;
the higher, 0.707 > 0.6: supported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .base import JudgeReference, PhraseEncoder, Triplet, TripletJudgement, triplet_text, unit_rows
from .offline import GraphTyper


def reference_sentences(reference: JudgeReference) -> list[str]:
    """The reference triplets as the released code writes them: "s p o.", in order, each once (letter case aside).

    >>> reference_sentences(JudgeReference(triplets=[("Books", "piled", "on desk"), ("books", "piled", "on desk")]))
    ['Books piled on desk.']
    """
    seen: dict[str, str] = {}
    for t in reference.triplets:
        text = triplet_text(t)
        if text:
            seen.setdefault(text.lower(), text + ".")
    return list(seen.values())


@dataclass
class ReleasedScore:
    """How the released rule scored one claim."""

    score: float  # the higher of ``relevant_score`` and ``top_score``
    top: str  # the top-k sentences joined, most similar first
    top_count: int
    top_score: float
    relevant: str  # the relevant sentences joined in the reference's order ("" when none is relevant)
    relevant_score: float | None

    def reason(self, threshold: float) -> str:
        verdict = ">" if self.score > threshold else "<="
        parts = []
        if self.relevant:
            parts.append(f"{self.relevant_score:.4f} to the references above the threshold: {self.relevant}")
        parts.append(f"{self.top_score:.4f} to the top {self.top_count}: {self.top}")
        return f"cosine {self.score:.4f} {verdict} {threshold} (the higher of: {'; '.join(parts)})"


class EmbeddingSimilarityJudge:
    name = "embedding-similarity"

    def __init__(self, encoder: PhraseEncoder, *, model_name: str = "", reference_threshold: float = 0.5,
                 support_threshold: float = 0.6, top_k: int = 3, object_threshold: float | None = None) -> None:
        self.encoder = encoder
        self.model_name = model_name or getattr(encoder, "model_name", type(encoder).__name__)
        self.reference_threshold = reference_threshold
        self.support_threshold = support_threshold
        self.top_k = top_k
        self.object_threshold = support_threshold if object_threshold is None else object_threshold
        self._typer = GraphTyper(encoder, self.object_threshold)
        self._top_count = top_k

    def config(self) -> dict[str, Any]:
        return {"judge": self.name, "model": self.model_name, "reference_threshold": self.reference_threshold,
                "support_threshold": self.support_threshold, "top_k": self.top_k,
                "object_threshold": self.object_threshold,
                "rule": "NLI_judge.py: max(relevant in reference order, top-k), sentences with a period"}

    def _unit(self, texts: Sequence[str]) -> np.ndarray:
        return unit_rows(self.encoder.encode(list(texts)))

    def _premises(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[tuple[str, str]]:
        """Per claim, (the relevant sentences joined, the top-k joined); ("", "") without reference triplets."""
        sentences = reference_sentences(reference)
        if not claims or not sentences:
            return [("", "") for _ in claims]
        self._top_count = min(self.top_k, len(sentences))
        sims = self._unit([triplet_text(c) for c in claims]) @ self._unit(sentences).T
        out = []
        for row in sims:
            relevant = " ".join(s for s, sim in zip(sentences, row) if sim > self.reference_threshold)
            top = " ".join(sentences[i] for i in np.argsort(-row, kind="stable")[:self.top_k])
            out.append((relevant, top))
        return out

    def scores(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[ReleasedScore | None]:
        """The released rule's score of each claim (None where the reference has no triplet)."""
        premises = self._premises(claims, reference)
        texts = sorted({t for pair in premises for t in pair if t})
        if not texts:
            return [None for _ in claims]
        vectors = dict(zip(texts, self._unit(texts)))
        claim_vecs = self._unit([triplet_text(c) for c in claims])
        out: list[ReleasedScore | None] = []
        for vec, (relevant, top) in zip(claim_vecs, premises):
            if not top:
                out.append(None)
                continue
            top_score = float(vec @ vectors[top])
            relevant_score = float(vec @ vectors[relevant]) if relevant else None
            best = top_score if relevant_score is None else max(relevant_score, top_score)
            out.append(ReleasedScore(best, top, self._top_count, top_score, relevant, relevant_score))
        return out

    def warm(self, batches: Sequence[tuple[Sequence[Triplet], JudgeReference]]) -> None:
        """Encode every phrase of many items in few large calls, so that ``judge`` finds them cached."""
        phrases: dict[str, None] = {}
        for claims, reference in batches:
            for c in claims:
                phrases.update(dict.fromkeys((triplet_text(c), c[0], c[1], c[2])))
            phrases.update(dict.fromkeys(reference_sentences(reference)))
            phrases.update(dict.fromkeys(reference.nodes()))
            phrases.update(dict.fromkeys(reference.predicates()))
        phrases.pop("", None)
        if not phrases:
            return
        self.encoder.encode(list(phrases))
        joined = {t for claims, reference in batches if claims for pair in self._premises(claims, reference)
                  for t in pair if t}
        if joined:
            self.encoder.encode(sorted(joined))

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        if not claims:
            return []
        scored = self.scores(claims, reference)
        scores = [s.score if s is not None else 0.0 for s in scored]
        supported = [s is not None and s.score > self.support_threshold for s in scored]
        reasons = [s.reason(self.support_threshold) if s is not None else "the reference has no triplet to compare"
                   for s in scored]
        return self._typer.verdicts(claims, reference, scores, supported, reasons)
