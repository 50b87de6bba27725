"""What the two offline judges (embedding similarity, NLI) share.

1. **Premise retrieval** (the NLI judge's, after Tri-HE's released code): the reference triplets
   whose cosine to the claim is above ``reference_threshold`` are concatenated into one
   premise; when none is, the ``top_k`` most similar are used. The embedding judge follows the
   released rule exactly instead (``embedding_judge``: both premises, the higher score).
2. **Hallucination type** for an unsupported claim (our addition, since the released
   offline check only says "hallucinated"): a subject or object that matches no node of
   the reference (cosine below ``object_threshold``) makes it an *object* hallucination;
   both ends in the graph and the predicate matching a reference predicate makes it a
   *prediction error* (§3.1); otherwise a *relation* hallucination.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .base import JudgeReference, PhraseEncoder, Triplet, TripletJudgement, triplet_text, unit_rows


@dataclass
class Premise:
    text: str
    references: list[str]  # the reference triplet texts it was built from


def retrieve_premises(encoder: PhraseEncoder, claims: Sequence[Triplet], reference: JudgeReference,
                      reference_threshold: float, top_k: int) -> list[Premise]:
    """One premise per claim: the concatenated reference triplets most like it."""
    ref_texts = list(dict.fromkeys(triplet_text(t) for t in reference.triplets))
    if not ref_texts:
        return [Premise("", []) for _ in claims]
    claim_vecs = unit_rows(encoder.encode([triplet_text(c) for c in claims]))
    ref_vecs = unit_rows(encoder.encode(ref_texts))
    sims = claim_vecs @ ref_vecs.T
    out = []
    for row in sims:
        keep = [i for i in np.argsort(-row, kind="stable") if row[i] > reference_threshold]
        if not keep:
            keep = list(np.argsort(-row, kind="stable")[:top_k])
        chosen = [ref_texts[i] for i in keep]
        out.append(Premise(". ".join(chosen), chosen))
    return out


def warm_encoder(encoder: PhraseEncoder, batches: Sequence[tuple[Sequence[Triplet], JudgeReference]],
                 reference_threshold: float, top_k: int) -> None:
    """Encode every phrase a batch of judgements will need in two large calls.

    With a caching encoder (``hallu_studio.embedding.Embedder``) the per-item calls
    that follow are cache hits; batching amortises the model's per-call cost.
    """
    phrases: dict[str, None] = {}
    for claims, reference in batches:
        for c in claims:
            phrases.update(dict.fromkeys((triplet_text(c), c[0], c[1], c[2])))
        phrases.update(dict.fromkeys(triplet_text(t) for t in reference.triplets))
        phrases.update(dict.fromkeys(reference.nodes()))
        phrases.update(dict.fromkeys(reference.predicates()))
    phrases.pop("", None)
    if not phrases:
        return
    encoder.encode(list(phrases))
    premises = [p.text for claims, reference in batches if claims and reference.triplets
                for p in retrieve_premises(encoder, claims, reference, reference_threshold, top_k)]
    if premises:
        encoder.encode(list(dict.fromkeys(premises)))


class GraphTyper:
    """Classifies an unsupported claim as object / relation hallucination or prediction error."""

    def __init__(self, encoder: PhraseEncoder, object_threshold: float) -> None:
        self.encoder = encoder
        self.object_threshold = object_threshold

    def _best(self, phrases: Sequence[str], pool: Sequence[str]) -> list[tuple[str | None, float]]:
        if not pool:
            return [(None, 0.0) for _ in phrases]
        sims = unit_rows(self.encoder.encode(list(phrases))) @ unit_rows(self.encoder.encode(list(pool))).T
        return [(pool[int(np.argmax(r))], float(np.max(r))) for r in sims]

    def classify(self, claims: Sequence[Triplet], reference: JudgeReference, scores: Sequence[float | None],
                 support_reason: Sequence[str]) -> list[TripletJudgement]:
        if not claims:
            return []
        nodes, predicates = reference.nodes(), reference.predicates()
        ends = self._best([c[0] for c in claims] + [c[2] for c in claims], nodes)
        subj, obj = ends[:len(claims)], ends[len(claims):]
        preds = self._best([c[1] for c in claims], predicates)
        out = []
        for i, claim in enumerate(claims):
            missing = [f"{role} {claim[k]!r} (best match {m!r}, {s:.2f})"
                       for role, k, (m, s) in (("subject", 0, subj[i]), ("object", 2, obj[i]))
                       if s < self.object_threshold]
            if missing:
                verdict, why = "object", "not in the image: " + "; ".join(missing)
            elif preds[i][1] >= self.object_threshold:
                verdict, why = "prediction_error", (f"objects and relation {preds[i][0]!r} are in the graph, "
                                                    "but not as this triplet")
            else:
                verdict, why = "relation", f"objects are in the graph; relation {claim[1]!r} is not"
            out.append(TripletJudgement(tuple(claim), verdict, scores[i], f"{support_reason[i]}; {why}"))
        return out

    def verdicts(self, claims: Sequence[Triplet], reference: JudgeReference, scores: Sequence[float],
                 supported: Sequence[bool], reasons: Sequence[str]) -> list[TripletJudgement]:
        """Each claim's judgement, in order: "supported" where the judge's score passed,
        else typed by ``classify``. Shared by the score-threshold judges (embedding, NLI)."""
        out: list[TripletJudgement | None] = [
            TripletJudgement(tuple(c), "supported", float(sc), why) if ok else None
            for c, sc, ok, why in zip(claims, scores, supported, reasons)]
        unsupported = [i for i, j in enumerate(out) if j is None]
        typed = self.classify([claims[i] for i in unsupported], reference, [float(scores[i]) for i in unsupported],
                              [reasons[i] for i in unsupported])
        for i, judgement in zip(unsupported, typed):
            out[i] = judgement
        return [j for j in out if j is not None]
