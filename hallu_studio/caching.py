"""What embeddings, LLM calls and concept extraction keep between calls: the cache they see.

Everything cached is content-addressed: an answer, a concept set or a vector is stored under a key that
hashes everything that shaped it (``model.content_key``: the model, the prompt or text, the settings), so
a cached value is never stale, only unused. Failures are never cached (a caller only puts what it could
use). Three places hold one:

* the store (``Store.cache``): on for every scoring pass of the store, shared by its runs;
* a cache file (``store.CacheFile``, ``score --input ... --cache FILE``): the same two tables in a DuckDB file of
  their own, for stateless runs, which also keep each line's metric results there (``RESULTS_NAMESPACE``,
  ``pipelines.scoring.KeptResults``) as a store keeps scores;
* ``MemoryCache``: one stateless run's own, forgotten when it ends (the default without ``--cache``), so a
  run still extracts each distinct text and asks each distinct question once.

Callers see only this interface (``ScoringCache``), never a store:

>>> cache = MemoryCache()
>>> cache.put_many([("k1", "demo", {"answer": 1})]); cache.get_many(["k1", "k2"])
{'k1': {'answer': 1}}
>>> cache.put_vectors("m", {"Object: cat": [1.0, 0.0]}); cache.vectors("m", ["Object: cat", "Object: dog"])
{'Object: cat': [1.0, 0.0]}
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, Sequence

# Namespaces of the cached values besides LLM answers: concept sets (``extraction.cached.CachedExtractor``) and
# the metric results of stateless runs (``pipelines.scoring.KeptResults``).
CONCEPTS_NAMESPACE = "concepts"
RESULTS_NAMESPACE = "result"


class ScoringCache(Protocol):
    """Cached values by content key (LLM answers, concept sets) and phrase vectors by (model, text)."""

    read_only: bool  # a read-only cache answers but keeps nothing new

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The cached value of each key that has one."""

    def put_many(self, entries: Sequence[tuple[str, str, Any]]) -> None:
        """Keep ``(key, namespace, value)`` entries; a key already cached keeps its first value."""

    def vectors(self, model: str, texts: Sequence[str]) -> dict[str, Sequence[float]]:
        """The cached vector of each text (of ``model``) that has one."""

    def put_vectors(self, model: str, vectors: dict[str, Sequence[float]]) -> None:
        """Keep these vectors of ``model``; a text already cached keeps its first vector."""


def cached_value(cache: ScoringCache | None, key: str) -> Any:
    """One key's cached value, or None (no cache, or nothing cached under it)."""
    return None if cache is None else cache.get_many([key]).get(key)


def keep(cache: ScoringCache | None, key: str, namespace: str, value: Any) -> None:
    """Cache one value where there is a cache that keeps things; never a failure or an empty value."""
    if value is None:
        raise ValueError("refusing to cache an empty value")
    if cache is not None and not cache.read_only:
        cache.put_many([(key, namespace, value)])


class MemoryCache:
    """A ``ScoringCache`` in memory, for one run."""

    read_only = False

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._namespaces: dict[str, str] = {}
        self._vectors: dict[tuple[str, str], list[float]] = {}
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        with self._lock:
            return {k: self._values[k] for k in keys if k in self._values}

    def put_many(self, entries: Sequence[tuple[str, str, Any]]) -> None:
        with self._lock:
            for key, namespace, value in entries:
                if value is None:
                    raise ValueError("refusing to cache an empty value")
                if key not in self._values:
                    self._values[key], self._namespaces[key] = value, namespace

    def values(self, namespace: str | None = None) -> dict[str, Any]:
        """Every cached value (of one namespace) by key."""
        with self._lock:
            return {k: v for k, v in self._values.items() if namespace is None or self._namespaces[k] == namespace}

    def vectors(self, model: str, texts: Sequence[str]) -> dict[str, Sequence[float]]:
        with self._lock:
            return {t: self._vectors[(model, t)] for t in texts if (model, t) in self._vectors}

    def put_vectors(self, model: str, vectors: dict[str, Sequence[float]]) -> None:
        with self._lock:
            for text, vector in vectors.items():
                self._vectors.setdefault((model, text), vector)  # kept as given: the embedder's own array


class RecordingCache(MemoryCache):
    """A ``MemoryCache`` that also remembers what was put in it since it was last drained: a worker process's cache,
    whose new entries the driver writes into the store's (``pipelines.engines``), so what a worker computed (an LLM
    answer, a phrase vector, a reference's concepts) is cached for the next run as if this process had."""

    def __init__(self) -> None:
        super().__init__()
        self._new: list[tuple[str, str, Any]] = []
        self._new_vectors: dict[str, dict[str, Sequence[float]]] = {}

    def put_many(self, entries: Sequence[tuple[str, str, Any]]) -> None:
        fresh = [e for e in entries if not self.get_many([e[0]])]
        super().put_many(entries)
        with self._lock:
            self._new.extend(fresh)

    def put_vectors(self, model: str, vectors: dict[str, Sequence[float]]) -> None:
        fresh = {t: v for t, v in vectors.items() if not self.vectors(model, [t])}
        super().put_vectors(model, vectors)
        with self._lock:
            self._new_vectors.setdefault(model, {}).update(fresh)

    def seed(self, values: dict[str, Any]) -> None:
        """Hold ``values`` (key -> value, read from a cache elsewhere) without counting them as new."""
        with self._lock:
            for key, value in values.items():
                self._values.setdefault(key, value)
                self._namespaces.setdefault(key, "")

    def drain(self) -> tuple[list[tuple[str, str, Any]], dict[str, dict[str, Sequence[float]]]]:
        """The entries and vectors (model -> text -> vector) put since the last drain."""
        with self._lock:
            new, vectors = self._new, self._new_vectors
            self._new, self._new_vectors = [], {}
        return new, vectors


def keep_drained(cache: ScoringCache, entries: Sequence[tuple[str, str, Any]],
                 vectors: dict[str, dict[str, Sequence[float]]]) -> None:
    """Write what a worker's ``RecordingCache.drain`` gave (entries, then vectors by model) into ``cache``: the
    driver's, so the next run reads what the worker computed."""
    if entries:
        cache.put_many(entries)
    for model, by_text in vectors.items():
        cache.put_vectors(model, by_text)
