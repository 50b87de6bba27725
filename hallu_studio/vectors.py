"""Phrase vectors: what an encoder offers, and the one unit-row normaliser."""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np


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
