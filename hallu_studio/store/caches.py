"""The caches: the ``cache`` table (LLM answers, concept sets) and ``embeddings`` (phrase vectors) of a store,
or of a cache file that holds them alone (``score --input ... --cache FILE``)."""

from __future__ import annotations

import os
from typing import Any, Sequence

import pyarrow as pa

from .connection import CACHE_TABLE, EMBEDDINGS_TABLE, Database, StoreError, dumps, loads


class CacheTables:
    """The ``cache`` and ``embeddings`` tables of a store or a cache file, as a ``caching.ScoringCache``:
    all that embeddings, LLM calls and concept extraction see of either."""

    _VECTOR_SCHEMA = pa.schema([("model", pa.string()), ("text", pa.string()), ("vector", pa.list_(pa.float32()))])
    _VALUE_SCHEMA = pa.schema([("key", pa.string()), ("namespace", pa.string()), ("value", pa.string())])

    def __init__(self, db: Database) -> None:
        self._db = db

    @property
    def read_only(self) -> bool:
        return self._db.read_only

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        if not keys:
            return {}
        rows = self._db._rows("SELECT key, value FROM cache WHERE key IN (SELECT unnest(?))", [list(dict.fromkeys(keys))])
        return {k: loads(v) for k, v in rows}

    def put_many(self, entries: Sequence[tuple[str, str, Any]]) -> None:
        """Cache successful results (a key already cached keeps its first value). Callers never pass failures."""
        if any(value is None for _, _, value in entries):
            raise StoreError("refusing to cache an empty value")
        first: dict[str, dict[str, Any]] = {}
        for key, namespace, value in entries:
            first.setdefault(key, {"key": key, "namespace": namespace, "value": dumps(value)})
        if first:
            self._db._write(lambda cur: self._db._bulk_insert(cur, "cache", list(first.values()), self._VALUE_SCHEMA))

    def values(self, namespace: str | None = None) -> dict[str, Any]:
        """Every cached value (of one namespace) by key: what audits of "nothing bad cached" read."""
        sql = "SELECT key, value FROM cache" + (" WHERE namespace = ?" if namespace is not None else "")
        return {k: loads(v) for k, v in self._db._rows(sql, [namespace] if namespace is not None else [])}

    def vectors(self, model: str, texts: Sequence[str]) -> dict[str, list[float]]:
        if not texts:
            return {}
        rows = self._db._rows("SELECT text, vector FROM embeddings WHERE model = ? AND text IN (SELECT unnest(?))",
                              [model, list(texts)])
        return {t: v for t, v in rows}

    def put_vectors(self, model: str, vectors: dict[str, Sequence[float]]) -> None:
        rows = [{"model": model, "text": t, "vector": [float(x) for x in v]} for t, v in vectors.items()]
        if rows:
            self._db._write(lambda cur: self._db._bulk_insert(cur, "embeddings", rows, self._VECTOR_SCHEMA))


class CacheFile(Database):
    """A DuckDB file holding only the cache tables (``score --input ... --cache FILE``): concept sets, LLM answers
    and phrase vectors kept between stateless runs. A store file serves as well (it has the same tables); a file
    that is neither is refused rather than written into.

    >>> with CacheFile(":memory:") as f:
    ...     f.cache.put_many([("k", "demo", [1, 2])]); f.cache.get_many(["k"])
    {'k': [1, 2]}
    """

    KIND = "cache file"
    HELD_HINT = ". Wait for that run to end, or use another --cache file."

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        try:
            tables = {r[0] for r in self._rows("SELECT table_name FROM information_schema.tables")}
            if tables and not {"cache", "embeddings"} <= tables:
                raise StoreError(f"{self.path} is a DuckDB file but not a cache (its tables: "
                                 f"{', '.join(sorted(tables))}); give --cache a new file or an earlier cache")
            if not tables:
                self._write(lambda cur: [cur.execute(sql) for sql in (CACHE_TABLE, EMBEDDINGS_TABLE)])
        except BaseException:
            self.close()
            raise
        self.cache = CacheTables(self)
