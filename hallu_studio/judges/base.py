"""What every triplet judge takes and returns.

A judge sees a response's claims ``(subject, predicate, object)`` and a
``JudgeReference`` (the image's scene-graph triplets, its object names, and for
Tri-HE the question's gold answer), and returns one ``TripletJudgement`` per claim
with a verdict from ``VERDICTS`` (Tri-HE §3.1):

- ``supported``: the claim follows from the reference;
- ``object``: object hallucination, a subject or object is not in the image;
- ``relation``: relation hallucination, both ends are in the image, the relation is not;
- ``prediction_error``: both ends and the relation occur in the graph, but not as this triplet;
- ``unparseable``: the judge's answer could not be read (counts in Hallu_Q's
  denominator, not as a hallucination, as in the released code).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

import numpy as np

Triplet = tuple[str, str, str]
VERDICTS: tuple[str, ...] = ("supported", "object", "relation", "prediction_error", "unparseable")
HALLUCINATION_VERDICTS: tuple[str, ...] = ("object", "relation")


@dataclass
class TripletJudgement:
    triplet: Triplet
    verdict: str
    score: float | None = None  # the judge's support score (cosine, entailment probability); None for the LLM
    reason: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r} for {self.triplet}; expected one of {VERDICTS}")


@dataclass
class JudgeReference:
    """What a claim is checked against."""

    triplets: list[Triplet] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)  # scene-graph object names
    question: str | None = None
    answer: str | None = None  # the gold answer (Tri-HE)

    def nodes(self) -> list[str]:
        """Everything that counts as "in the image": object names and both ends of every reference triplet.

        Tri-HE's references hold attribute triplets such as ``(laptop, is, black)``;
        their second end is a node too, as in the benchmark's own graphs.
        """
        seen: dict[str, None] = {}
        for name in self.objects:
            seen.setdefault(name.strip(), None)
        for s, _, o in self.triplets:
            seen.setdefault(s.strip(), None)
            seen.setdefault(o.strip(), None)
        return [n for n in seen if n]

    def predicates(self) -> list[str]:
        return list(dict.fromkeys(p.strip() for _, p, _ in self.triplets if p.strip()))


def triplet_text(t: Sequence[str]) -> str:
    """The phrase a triplet is embedded or judged as: ``"man holding pen"``."""
    return " ".join(part.strip() for part in t if part.strip())


class TripletJudge(Protocol):
    name: str

    def config(self) -> dict[str, Any]:
        """The settings that shape the verdicts (part of the score's config key)."""

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        """One judgement per claim, in order."""


class PhraseEncoder(Protocol):
    """Anything with ``encode(texts) -> (n, d) array``: ``hallu_studio.embedding.Embedder`` or a test fake."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def unit_rows(vectors: np.ndarray, *, zero: str = "keep") -> np.ndarray:
    """Rows scaled to unit length, so dot products are cosines: the one normaliser of the library.

    A zero row has no direction: with ``zero="keep"`` it stays zero (cosine 0 to everything, as a
    judge wants for an empty phrase); with ``zero="error"`` it raises (EMD's cost is undefined).
    """
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if zero == "error" and np.any(norms == 0):
        raise ValueError("a concept embedding is the zero vector; cosine is undefined")
    return vectors / np.where(norms == 0, 1.0, norms)
