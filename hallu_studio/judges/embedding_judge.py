"""Tri-HE's released "NLI judge", which is in fact an embedding-similarity check.

A claim is *supported* when the cosine between its embedding and the embedding of
its retrieved premise (see ``offline.retrieve_premises``) is above
``support_threshold`` (0.6). The released code used all-mpnet-base-v2; offline we
use the configured ``hallu_studio.embedding.Embedder`` model (all-MiniLM-L6-v2 by
default), so absolute numbers differ from the paper's.

Worked example with fixed 2-d vectors: claim ``cat on sofa`` = (1, 0), reference
``cat on sofa`` = (1, 0) → premise "cat on sofa", cosine 1.0 > 0.6 → supported.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .base import JudgeReference, PhraseEncoder, Triplet, TripletJudgement, triplet_text, unit_rows
from .offline import GraphTyper, retrieve_premises, warm_encoder


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

    def config(self) -> dict[str, Any]:
        return {"judge": self.name, "model": self.model_name, "reference_threshold": self.reference_threshold,
                "support_threshold": self.support_threshold, "top_k": self.top_k,
                "object_threshold": self.object_threshold}

    def warm(self, batches: Sequence[tuple[Sequence[Triplet], JudgeReference]]) -> None:
        """Pre-encode the phrases of many items at once (see ``offline.warm_encoder``)."""
        warm_encoder(self.encoder, batches, self.reference_threshold, self.top_k)

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        if not claims:
            return []
        premises = retrieve_premises(self.encoder, claims, reference, self.reference_threshold, self.top_k)
        claim_vecs = unit_rows(self.encoder.encode([triplet_text(c) for c in claims]))
        premise_vecs = unit_rows(self.encoder.encode([p.text or " " for p in premises]))
        scores = np.sum(claim_vecs * premise_vecs, axis=1)
        supported = [bool(sc > self.support_threshold) for sc in scores]
        reasons = [f"cosine {sc:.2f} {'>' if ok else '<='} {self.support_threshold} to: {p.text}"
                   for sc, ok, p in zip(scores, supported, premises)]
        return self._typer.verdicts(claims, reference, [float(sc) for sc in scores], supported, reasons)
