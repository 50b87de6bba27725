"""The store: one DuckDB file, and the only module in the project that writes SQL.

Design (after datasette's ``Database``): one connection per process, a fresh
cursor per call, every write serialised through one lock and run in a
transaction that is retried on a write-write conflict. Human input lives in the
append-only ``events`` table; nothing here updates or deletes an event.

The schema is versioned: ``MIGRATIONS`` is an ordered list and an older file is
upgraded in place when it is opened.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import duckdb
import pyarrow as pa

from .model import (
    APP_SOURCE,
    Benchmark,
    HumanEvent,
    Response,
    Run,
    Sample,
    SceneGraph,
    Score,
    canonical_json,
)

T = TypeVar("T")

DEFAULT_DB_ENV = "HALLU_STUDIO_DB"


def default_db_path() -> Path:
    """``$HALLU_STUDIO_DB``, else ``$XDG_DATA_HOME/hallu-studio/store.duckdb``."""
    env = os.environ.get(DEFAULT_DB_ENV)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "hallu-studio" / "store.duckdb"


class StoreError(RuntimeError):
    pass


class StoreClosedError(StoreError):
    """The store was closed (the app stopping) while something still wanted it."""


class StoreLockedError(StoreError):
    """Another process holds the DuckDB file (typically a running app)."""


class StoreNotFoundError(StoreError):
    """A command that only reads was pointed at a file that does not exist."""


def existing_store_path(path: str | os.PathLike[str] | None = None) -> Path:
    """``path`` (default: ``default_db_path()``) when a store file is there; reading never creates one."""
    found = Path(path).expanduser() if path is not None else default_db_path()
    if not found.is_file():
        raise StoreNotFoundError(
            f"no store at {found} (the file does not exist); check --db / ${DEFAULT_DB_ENV}, "
            "or create one with `hallu-studio import`")
    return found


def _wal_of(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def _file_state(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


# --------------------------------------------------------------------------- schema

# The cached values (LLM answers, concept sets) and phrase vectors: a store's, or a cache file's alone.
CACHE_TABLE = """CREATE TABLE cache (
            key VARCHAR PRIMARY KEY, namespace VARCHAR, value VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp)"""
EMBEDDINGS_TABLE = """CREATE TABLE embeddings (
            model VARCHAR, text VARCHAR, vector FLOAT[], PRIMARY KEY (model, text))"""

MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, [
        "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
        """CREATE TABLE benchmarks (
            name VARCHAR PRIMARY KEY, description VARCHAR, source VARCHAR, meta VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE images (
            sha256 VARCHAR PRIMARY KEY, mime VARCHAR, width INTEGER, height INTEGER, data BLOB)""",
        """CREATE TABLE scene_graphs (key VARCHAR PRIMARY KEY, graph VARCHAR)""",
        """CREATE TABLE samples (
            id VARCHAR PRIMARY KEY, benchmark VARCHAR NOT NULL, image_key VARCHAR, image_sha256 VARCHAR,
            task VARCHAR, domain VARCHAR, source_kind VARCHAR, scene_graph_key VARCHAR,
            question VARCHAR, options VARCHAR, answer VARCHAR, gold_triplets VARCHAR,
            relation_category VARCHAR, reference_text VARCHAR, meta VARCHAR)""",
        "CREATE INDEX samples_benchmark ON samples (benchmark)",
        """CREATE TABLE runs (
            id VARCHAR PRIMARY KEY, benchmark VARCHAR, model VARCHAR, backend VARCHAR, checkpoint VARCHAR,
            prompt VARCHAR, generation VARCHAR, mitigation VARCHAR, seed INTEGER, tool_version VARCHAR,
            synthetic BOOLEAN, meta VARCHAR, status VARCHAR DEFAULT 'created',
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE responses (
            id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, sample_id VARCHAR NOT NULL, text VARCHAR,
            signals VARCHAR, created_at TIMESTAMP DEFAULT current_timestamp)""",
        "CREATE INDEX responses_run ON responses (run_id)",
        "CREATE INDEX responses_sample ON responses (sample_id)",
        """CREATE TABLE failures (
            run_id VARCHAR, sample_id VARCHAR, stage VARCHAR, error VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE scores (
            response_id VARCHAR NOT NULL, metric VARCHAR NOT NULL, config_key VARCHAR NOT NULL,
            "values" VARCHAR, evidence VARCHAR, undefined_reason VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp,
            PRIMARY KEY (response_id, metric, config_key))""",
        CACHE_TABLE,
        EMBEDDINGS_TABLE,
        "CREATE SEQUENCE events_id START 1",
        """CREATE TABLE events (
            id BIGINT PRIMARY KEY DEFAULT nextval('events_id'), annotator VARCHAR NOT NULL,
            kind VARCHAR NOT NULL, response_id VARCHAR, target VARCHAR, value VARCHAR, undoes BIGINT,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        "CREATE INDEX events_response ON events (response_id)",
        """CREATE TABLE views (
            name VARCHAR, filters VARCHAR, author VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
    ]),
    # A metric's per-item sufficient statistics (what its ``compute`` aggregates), kept
    # beside the score so leaderboards micro-average and bootstrap without re-scoring.
    (2, [
        """CREATE TABLE score_stats (
            response_id VARCHAR NOT NULL, metric VARCHAR NOT NULL, config_key VARCHAR NOT NULL, stats VARCHAR,
            PRIMARY KEY (response_id, metric, config_key))""",
    ]),
    # References as real benchmarks have them (several captions, an object list complete within a vocabulary),
    # and where a human judgement comes from (this studio's annotators, or an outside study) and how it was made.
    (3, [
        "ALTER TABLE samples ADD COLUMN reference_texts VARCHAR",  # JSON list, where there are several captions
        "ALTER TABLE samples ADD COLUMN reference_objects VARCHAR",  # JSON list of names
        "ALTER TABLE samples ADD COLUMN reference_vocabulary VARCHAR",  # JSON: a vocabulary's name or a name list
        "ALTER TABLE events ADD COLUMN source VARCHAR DEFAULT 'app'",
        "ALTER TABLE events ADD COLUMN meta VARCHAR",
    ]),
    # Annotation studies: a design fixed when it is created (its sample drawn with a seed, ratings per item,
    # annotators, blind or not) and its items in draw order; a changed design is a new study.
    (4, [
        """CREATE TABLE studies (
            id VARCHAR PRIMARY KEY, definition VARCHAR NOT NULL, author VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE study_items (
            study_id VARCHAR NOT NULL, position INTEGER NOT NULL, response_id VARCHAR NOT NULL,
            PRIMARY KEY (study_id, position))""",
    ]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]

# A failure (alias f) no later pass made good. The failures table is a log: a failure stays in it after
# the next pass scores what failed (a scoring stage ``score:<metric>`` followed by a score of that metric
# for the response) or generates it (``prepare`` / ``generate`` followed by the sample's response in
# that run); only the open ones are counted as the run's failures.
_OPEN_FAILURE = """NOT EXISTS (
    SELECT 1 FROM responses x LEFT JOIN scores c ON c.response_id = x.id
    WHERE x.run_id = f.run_id AND x.sample_id = f.sample_id
      AND ((f.stage IN ('prepare', 'generate') AND x.created_at >= f.created_at)
           OR (f.stage = 'score:' || c.metric AND c.created_at >= f.created_at)))"""


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _loads(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


@dataclass
class BenchmarkInfo:
    name: str
    description: str
    source: str
    images: int
    images_found: int
    samples: int
    tasks: dict[str, int]


class Database:
    """One DuckDB file: one connection per process, a fresh cursor per call, every write serialised
    through one lock and run in a transaction retried on a write-write conflict."""

    # What a file of this kind is called in messages, and what to do when another process holds it.
    KIND = "file"
    HELD_HINT = ". Stop that process, or use another file."

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con: duckdb.DuckDBPyConnection | None = duckdb.connect(self.path, read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise StoreLockedError(
                    f"the {self.KIND} {self.path} is open in another process{self.HELD_HINT}") from exc
            raise StoreError(f"cannot open the {self.KIND} {self.path}: {exc}") from exc
        self._write_lock = threading.RLock()
        self.read_only = read_only

    def checkpoint(self) -> None:
        """Move everything in the write-ahead log (``<file>.wal``) into the ``.duckdb`` file itself.

        Taken between writes (under the write lock), so no transaction of this process is cut in two.
        """
        if self.read_only or self.path == ":memory:" or self._con is None:
            return
        with self._write_lock:
            cur = self._cursor()
            try:
                cur.execute("CHECKPOINT")
            finally:
                cur.close()

    def close(self) -> None:
        """Checkpoint, then close the file: afterwards the ``.duckdb`` file alone holds everything
        (no ``.wal`` beside it), so it can be copied or mailed as it is. Safe to call twice; the
        connection object is dropped so that an object kept alive elsewhere (a UI closure, say) pins
        no DuckDB state."""
        with self._write_lock:  # a write in flight on another thread finishes first; later ones find it closed
            try:
                self.checkpoint()
            except duckdb.Error:
                pass  # closing checkpoints too, where it can; a failed checkpoint must not keep the file open
            con, self._con = self._con, None
            if con is not None:
                con.close()

    def __enter__(self):  # noqa: ANN204 - the subclass itself
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            raise StoreClosedError(f"the {self.KIND} {self.path} is closed")
        return self._con.cursor()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        cur = self._cursor()
        try:
            return cur.execute(sql, list(params)).fetchall()
        finally:
            cur.close()

    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self._cursor()
        try:
            cur.execute(sql, list(params))
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]
        finally:
            cur.close()

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self._rows(sql, params)
        return rows[0][0] if rows else None

    @staticmethod
    def _where(*conditions: tuple[str, Any]) -> tuple[str, list[Any]]:
        """``" WHERE a = ? AND b = ?"`` and its parameters, for the ``(column, value)`` pairs whose
        value is not None (an empty string when none is)."""
        kept = [(col, val) for col, val in conditions if val is not None]
        clause = " WHERE " + " AND ".join(f"{col} = ?" for col, _ in kept) if kept else ""
        return clause, [val for _, val in kept]

    def _write(self, fn: Callable[[duckdb.DuckDBPyConnection], T], retries: int = 5) -> T:
        """Run ``fn(cursor)`` in one transaction, serialised, retried on conflicts."""
        if self.read_only:
            raise StoreError(f"the {self.KIND} {self.path} is open read-only")
        with self._write_lock:
            for attempt in range(retries):
                cur = self._cursor()
                try:
                    cur.execute("BEGIN TRANSACTION")
                    result = fn(cur)
                    cur.execute("COMMIT")
                    return result
                except duckdb.TransactionException:
                    cur.execute("ROLLBACK")
                    if attempt == retries - 1:
                        raise
                    time.sleep(0.01 * 2 ** attempt)
                except BaseException:
                    try:
                        cur.execute("ROLLBACK")
                    except duckdb.Error:
                        pass
                    raise
                finally:
                    cur.close()
        raise AssertionError("unreachable")

    @staticmethod
    def _bulk_insert(cur: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, Any]],
                     schema: pa.Schema, on_conflict: str = "DO NOTHING") -> int:
        """Insert many rows through Arrow (executemany is row by row in DuckDB)."""
        if not rows:
            return 0
        arrow = pa.Table.from_pylist(rows, schema=schema)
        before = cur.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        cur.register("_incoming", arrow)
        cols = ", ".join(f'"{c}"' for c in schema.names)
        try:
            cur.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _incoming ON CONFLICT {on_conflict}")
        finally:
            cur.unregister("_incoming")
        after = cur.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        return after - before


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
        return {k: _loads(v) for k, v in rows}

    def put_many(self, entries: Sequence[tuple[str, str, Any]]) -> None:
        """Cache successful results (a key already cached keeps its first value). Callers never pass failures."""
        if any(value is None for _, _, value in entries):
            raise StoreError("refusing to cache an empty value")
        first: dict[str, dict[str, Any]] = {}
        for key, namespace, value in entries:
            first.setdefault(key, {"key": key, "namespace": namespace, "value": _dumps(value)})
        if first:
            self._db._write(lambda cur: self._db._bulk_insert(cur, "cache", list(first.values()), self._VALUE_SCHEMA))

    def values(self, namespace: str | None = None) -> dict[str, Any]:
        """Every cached value (of one namespace) by key: what audits of "nothing bad cached" read."""
        sql = "SELECT key, value FROM cache" + (" WHERE namespace = ?" if namespace is not None else "")
        return {k: _loads(v) for k, v in self._db._rows(sql, [namespace] if namespace is not None else [])}

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


class Store(Database):
    """A HalluStudio store backed by one DuckDB file (``":memory:"`` for tests).

    >>> with Store(":memory:") as st:
    ...     st.schema_version() == SCHEMA_VERSION
    True
    """

    KIND = "store"
    HELD_HINT = " (is the app running?). Stop it, or point --db / HALLU_STUDIO_DB at another file."

    def __init__(self, path: str | os.PathLike[str] | None = None, *, read_only: bool = False,
                 migrate_to: int | None = None) -> None:
        super().__init__(path if path is not None else default_db_path(), read_only=read_only)
        # Set on a read-only snapshot (``open_for_reading`` of a held store): the live file and when.
        self.snapshot_of: str | None = None
        self.snapshot_taken_at: datetime | None = None
        self.cache = CacheTables(self)  # what embeddings, LLM calls and extraction see of the store
        if not read_only:
            self.migrate(migrate_to)

    # Copying a file that is being written can tear it; a copy is retried while the file changes under it.
    SNAPSHOT_ATTEMPTS = 3

    @classmethod
    def open_for_reading(cls, path: str | os.PathLike[str] | None = None) -> "Store":
        """Open an existing store read-only, never creating one (``StoreNotFoundError`` when missing).

        While another process holds the file for writing (a running app: DuckDB then refuses even a
        read-only connection from a second process), the file and its write-ahead log are copied
        to a temporary folder and the copy is opened read-only instead: ``snapshot_of`` and
        ``snapshot_taken_at`` say so, and ``close()`` removes the copy. An older schema is
        migrated first (in place when nobody holds the file, else in the copy).
        """
        live = existing_store_path(path)
        try:
            return cls._open_read_only_current(live)
        except StoreLockedError:
            return cls._open_snapshot(live)

    @classmethod
    def _open_read_only_current(cls, path: Path) -> "Store":
        store = cls(path, read_only=True)
        if store.schema_version() >= SCHEMA_VERSION:
            return store
        store.close()
        cls(path).close()  # a read-write open migrates
        return cls(path, read_only=True)

    @classmethod
    def _open_snapshot(cls, live: Path) -> "Store":
        folder = Path(tempfile.mkdtemp(prefix="hallu-studio-snapshot-"))
        copy = folder / live.name
        try:
            for _ in range(cls.SNAPSHOT_ATTEMPTS):
                before = (_file_state(live), _file_state(_wal_of(live)))
                taken_at = datetime.now()
                shutil.copyfile(live, copy)
                _wal_of(copy).unlink(missing_ok=True)
                if before[1] is not None:
                    try:
                        shutil.copyfile(_wal_of(live), _wal_of(copy))
                    except FileNotFoundError:  # checkpointed away meanwhile: copy again
                        continue
                if (_file_state(live), _file_state(_wal_of(live))) == before:
                    break
            try:
                store = cls._open_read_only_current(copy)
            except StoreError as exc:
                raise StoreError(f"the store {live} is held by another process, and a snapshot of it could not "
                                 f"be read ({exc}); try again, or stop that process") from exc
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        store.snapshot_of, store.snapshot_taken_at = str(live), taken_at
        return store

    def close(self) -> None:
        super().close()
        if self.snapshot_of is not None:  # the copy's folder goes with it
            shutil.rmtree(Path(self.path).parent, ignore_errors=True)

    # ----------------------------------------------------------------- schema
    def schema_version(self) -> int:
        exists = self._scalar(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'")
        if not exists:
            return 0
        value = self._scalar("SELECT value FROM meta WHERE key = 'schema_version'")
        return int(value) if value is not None else 0

    def migrate(self, upto: int | None = None) -> int:
        """Apply the migrations newer than the file's version (up to ``upto``)."""
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise StoreError(f"the store {self.path} has schema version {current}, newer than this "
                             f"HalluStudio ({SCHEMA_VERSION}); upgrade HalluStudio")
        for version, statements in MIGRATIONS:
            if version <= current or (upto is not None and version > upto):
                continue

            def apply(cur: duckdb.DuckDBPyConnection, statements: list[str] = statements, version: int = version) -> None:
                for sql in statements:
                    cur.execute(sql)
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(version)])

            self._write(apply)
            current = version
        return current

    def get_meta(self, key: str) -> str | None:
        """A value of the store's own key/value table (schema version, first-start state ...)."""
        return self._scalar("SELECT value FROM meta WHERE key = ?", [key])

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda cur: cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value]))

    # ----------------------------------------------------------------- benchmarks & samples
    def add_benchmark(self, benchmark: Benchmark) -> None:
        self._write(lambda cur: cur.execute(
            "INSERT INTO benchmarks (name, description, source, meta) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET description = excluded.description, source = excluded.source, "
            "meta = excluded.meta",
            [benchmark.name, benchmark.description, benchmark.source, _dumps(benchmark.meta)]))

    def get_benchmark(self, name: str) -> Benchmark | None:
        rows = self._dicts("SELECT name, description, source, meta FROM benchmarks WHERE name = ?", [name])
        if not rows:
            return None
        r = rows[0]
        return Benchmark(r["name"], r["description"] or "", r["source"] or "", _loads(r["meta"], {}))

    _SAMPLE_SCHEMA = pa.schema([(n, pa.string()) for n in (
        "id", "benchmark", "image_key", "image_sha256", "task", "domain", "source_kind", "scene_graph_key",
        "question", "options", "answer", "gold_triplets", "relation_category", "reference_text", "meta",
        "reference_texts", "reference_objects", "reference_vocabulary")])
    _IMAGE_SCHEMA = pa.schema([("sha256", pa.string()), ("mime", pa.string()), ("width", pa.int32()),
                               ("height", pa.int32()), ("data", pa.binary())])
    _GRAPH_SCHEMA = pa.schema([("key", pa.string()), ("graph", pa.string())])

    def add_samples(self, benchmark: Benchmark, samples: Iterable[Sample],
                    images: Iterable[tuple[str, str, int, int, bytes]] = ()) -> int:
        """Add a benchmark's samples and images in ONE transaction; returns how many samples were new.

        ``images`` are ``(sha256, mime, width, height, data)``. Samples already in the
        store (same id) are left as they are, so re-importing adds nothing twice.
        """
        graphs: dict[str, str] = {}
        sample_rows = []
        for s in samples:
            gkey = s.scene_graph.key()
            graphs.setdefault(gkey, canonical_json(s.scene_graph.to_dict()))
            sample_rows.append({
                "id": s.id, "benchmark": s.benchmark, "image_key": s.image_key, "image_sha256": s.image_sha256,
                "task": s.task, "domain": s.domain, "source_kind": s.source_kind, "scene_graph_key": gkey,
                "question": s.question, "options": _dumps(s.options), "answer": s.answer,
                "gold_triplets": _dumps([list(t) for t in s.gold_triplets]),
                "relation_category": s.relation_category,
                # One caption keeps the column it always had; several go to their own (a JSON list).
                "reference_text": s.reference_text if isinstance(s.reference_text, str) else None,
                "reference_texts": _dumps(s.reference_text) if isinstance(s.reference_text, list) else None,
                "reference_objects": _dumps(s.reference_objects), "reference_vocabulary": _dumps(s.reference_vocabulary),
                "meta": _dumps(s.meta)})
        image_rows = [{"sha256": sha, "mime": mime, "width": w, "height": h, "data": data}
                      for sha, mime, w, h, data in images]
        graph_rows = [{"key": k, "graph": v} for k, v in graphs.items()]

        def write(cur: duckdb.DuckDBPyConnection) -> int:
            cur.execute(
                "INSERT INTO benchmarks (name, description, source, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET description = excluded.description, source = excluded.source",
                [benchmark.name, benchmark.description, benchmark.source, _dumps(benchmark.meta)])
            # Several samples share one image: de-duplicate before the insert, the
            # primary key rejects duplicates inside one statement.
            seen: set[str] = set()
            unique_images = [r for r in image_rows if not (r["sha256"] in seen or seen.add(r["sha256"]))]
            self._bulk_insert(cur, "images", unique_images, self._IMAGE_SCHEMA)
            self._bulk_insert(cur, "scene_graphs", graph_rows, self._GRAPH_SCHEMA)
            return self._bulk_insert(cur, "samples", sample_rows, self._SAMPLE_SCHEMA)

        return self._write(write)

    def has_image(self, sha256: str) -> bool:
        return bool(self._scalar("SELECT count(*) FROM images WHERE sha256 = ?", [sha256]))

    def get_image(self, sha256: str) -> tuple[bytes, str] | None:
        rows = self._rows("SELECT data, mime FROM images WHERE sha256 = ?", [sha256])
        return (bytes(rows[0][0]), rows[0][1]) if rows else None

    _SAMPLE_SELECT = """SELECT s.*, g.graph FROM samples s LEFT JOIN scene_graphs g ON g.key = s.scene_graph_key"""

    @staticmethod
    def _sample_from_row(r: dict[str, Any]) -> Sample:
        return Sample(
            id=r["id"], benchmark=r["benchmark"], image_key=r["image_key"], image_sha256=r["image_sha256"],
            task=r["task"], domain=r["domain"], source_kind=r["source_kind"],
            scene_graph=SceneGraph.from_dict(_loads(r["graph"])), question=r["question"],
            options=_loads(r["options"], []), answer=r["answer"],
            gold_triplets=[tuple(t) for t in _loads(r["gold_triplets"], [])],
            relation_category=r["relation_category"],
            reference_text=_loads(r["reference_texts"]) if r.get("reference_texts") else r["reference_text"],
            reference_objects=_loads(r.get("reference_objects")),
            reference_vocabulary=_loads(r.get("reference_vocabulary")), meta=_loads(r["meta"], {}))

    def get_sample(self, sample_id: str) -> Sample | None:
        rows = self._dicts(self._SAMPLE_SELECT + " WHERE s.id = ?", [sample_id])
        return self._sample_from_row(rows[0]) if rows else None

    def get_samples(self, sample_ids: Sequence[str]) -> dict[str, Sample]:
        if not sample_ids:
            return {}
        rows = self._dicts(self._SAMPLE_SELECT + " WHERE s.id IN (SELECT unnest(?))", [list(sample_ids)])
        return {r["id"]: self._sample_from_row(r) for r in rows}

    def iter_samples(self, benchmark: str | None = None, *, task: str | None = None,
                     domain: str | None = None, limit: int | None = None) -> Iterator[Sample]:
        where, params = self._where(("s.benchmark", benchmark), ("s.task", task), ("s.domain", domain))
        sql = self._SAMPLE_SELECT + where + " ORDER BY s.id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for r in self._dicts(sql, params):
            yield self._sample_from_row(r)

    def count_samples(self, benchmark: str | None = None) -> int:
        if benchmark is None:
            return int(self._scalar("SELECT count(*) FROM samples"))
        return int(self._scalar("SELECT count(*) FROM samples WHERE benchmark = ?", [benchmark]))

    # ----------------------------------------------------------------- imports (importers / pipelines.importing)
    def sample_ids(self, benchmark: str | None = None) -> set[str]:
        """Ids of the stored samples (of one benchmark): what recorded responses are matched against."""
        if benchmark is None:
            return {r[0] for r in self._rows("SELECT id FROM samples")}
        return {r[0] for r in self._rows("SELECT id FROM samples WHERE benchmark = ?", [benchmark])}

    def add_runs_and_responses(self, runs: Sequence[Run], responses: Sequence[Response],
                               created_at: dict[str, str] | None = None) -> tuple[int, int]:
        """Run manifests and their responses in ONE transaction; returns (new runs, new responses).

        Runs and responses already stored (same id) are left as they are. ``created_at``
        (response id -> timestamp text) keeps the original times of exported responses.
        """
        times = created_at or {}
        rows = [{"id": r.id, "run_id": r.run_id, "sample_id": r.sample_id, "text": r.text,
                 "signals": _dumps(r.signals), "created_at": times.get(r.id)} for r in responses]
        schema = pa.schema([("id", pa.string()), ("run_id", pa.string()), ("sample_id", pa.string()),
                            ("text", pa.string()), ("signals", pa.string()), ("created_at", pa.string())])

        def write(cur: duckdb.DuckDBPyConnection) -> tuple[int, int]:
            new_runs = 0
            for run in runs:
                if cur.execute("SELECT count(*) FROM runs WHERE id = ?", [run.id]).fetchall()[0][0]:
                    continue
                cur.execute(
                    "INSERT INTO runs (id, benchmark, model, backend, checkpoint, prompt, generation, mitigation, "
                    "seed, tool_version, synthetic, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run.id, run.benchmark, run.model, run.backend, run.checkpoint, run.prompt,
                     _dumps(run.generation), run.mitigation, run.seed, run.tool_version, run.synthetic,
                     _dumps(run.meta)])
                new_runs += 1
            if not rows:
                return new_runs, 0
            before = cur.execute("SELECT count(*) FROM responses").fetchall()[0][0]
            cur.register("_incoming", pa.Table.from_pylist(rows, schema=schema))
            try:
                cur.execute("INSERT INTO responses (id, run_id, sample_id, text, signals, created_at) "
                            "SELECT id, run_id, sample_id, text, signals, "
                            "COALESCE(CAST(created_at AS TIMESTAMP), current_timestamp) FROM _incoming "
                            "ON CONFLICT DO NOTHING")
            finally:
                cur.unregister("_incoming")
            return new_runs, cur.execute("SELECT count(*) FROM responses").fetchall()[0][0] - before

        return self._write(write)

    def add_imported_events(self, events: Sequence[HumanEvent]) -> dict[int, int]:
        """Append exported human events (in order, ONE transaction) keeping their times.

        Returns old id -> new id; an ``undoes`` pointing at an imported event is remapped.
        An event identical to a stored one (annotator, kind, response, target, value,
        undone event and time) is not added again, so re-importing a file adds nothing twice.
        """
        def write(cur: duckdb.DuckDBPyConnection) -> dict[int, int]:
            mapping: dict[int, int] = {}
            for e in events:
                undoes = mapping.get(e.undoes, e.undoes) if e.undoes is not None else None
                params = [e.annotator, e.kind, e.response_id, e.target, _dumps(e.value), undoes, e.created_at,
                          e.source]
                same = cur.execute(
                    "SELECT id FROM events WHERE annotator = ? AND kind = ? AND response_id IS NOT DISTINCT FROM ? "
                    "AND target IS NOT DISTINCT FROM ? AND value IS NOT DISTINCT FROM ? "
                    "AND undoes IS NOT DISTINCT FROM ? AND created_at = CAST(? AS TIMESTAMP) "
                    "AND source IS NOT DISTINCT FROM ?", params).fetchall()
                if same:
                    new_id = int(same[0][0])
                else:
                    new_id = int(cur.execute(
                        "INSERT INTO events (annotator, kind, response_id, target, value, undoes, created_at, source, "
                        "meta) VALUES (?, ?, ?, ?, ?, ?, COALESCE(CAST(? AS TIMESTAMP), current_timestamp), ?, ?) "
                        "RETURNING id", params + [_dumps(e.meta or None)]).fetchall()[0][0])
                if e.id is not None:
                    mapping[e.id] = new_id
            return mapping

        return self._write(write)

    def benchmark_infos(self) -> list[BenchmarkInfo]:
        rows = self._dicts("""
            SELECT b.name, b.description, b.source,
                   count(DISTINCT s.image_key) AS images,
                   count(DISTINCT s.image_key) FILTER (WHERE s.image_sha256 IS NOT NULL) AS images_found,
                   count(s.id) AS samples
            FROM benchmarks b LEFT JOIN samples s ON s.benchmark = b.name
            GROUP BY ALL ORDER BY b.name""")
        tasks: dict[str, dict[str, int]] = {}
        for name, task, n in self._rows("SELECT benchmark, task, count(*) FROM samples GROUP BY ALL"):
            tasks.setdefault(name, {})[task] = int(n)
        return [BenchmarkInfo(r["name"], r["description"] or "", r["source"] or "", int(r["images"]),
                              int(r["images_found"]), int(r["samples"]), tasks.get(r["name"], {})) for r in rows]

    # ----------------------------------------------------------------- runs & responses
    def add_run(self, run: Run) -> bool:
        """Record a run's manifest; returns False when a run with that id already exists."""
        def write(cur: duckdb.DuckDBPyConnection) -> bool:
            if cur.execute("SELECT count(*) FROM runs WHERE id = ?", [run.id]).fetchall()[0][0]:
                return False
            cur.execute(
                "INSERT INTO runs (id, benchmark, model, backend, checkpoint, prompt, generation, mitigation, seed, "
                "tool_version, synthetic, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run.id, run.benchmark, run.model, run.backend, run.checkpoint, run.prompt, _dumps(run.generation),
                 run.mitigation, run.seed, run.tool_version, run.synthetic, _dumps(run.meta)])
            return True
        return self._write(write)

    def set_run_status(self, run_id: str, status: str) -> None:
        self._write(lambda cur: cur.execute("UPDATE runs SET status = ? WHERE id = ?", [status, run_id]))

    @staticmethod
    def _run_from_row(r: dict[str, Any]) -> Run:
        return Run(id=r["id"], benchmark=r["benchmark"], model=r["model"], backend=r["backend"],
                   checkpoint=r["checkpoint"] or "", prompt=r["prompt"] or "", generation=_loads(r["generation"], {}),
                   mitigation=r["mitigation"] or "none", seed=int(r["seed"] or 0), tool_version=r["tool_version"] or "",
                   synthetic=bool(r["synthetic"]), meta=_loads(r["meta"], {}))

    def get_run(self, run_id: str) -> Run | None:
        rows = self._dicts("SELECT * FROM runs WHERE id = ?", [run_id])
        return self._run_from_row(rows[0]) if rows else None

    def list_runs(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """Runs with their status and response / failure counts (dicts for display); a failure that a later
        pass made good (``_OPEN_FAILURE``) is not counted."""
        sql = f"""SELECT r.*, (SELECT count(*) FROM responses x WHERE x.run_id = r.id) AS responses,
                         (SELECT count(*) FROM failures f WHERE f.run_id = r.id AND {_OPEN_FAILURE}) AS failures
                  FROM runs r"""
        params: list[Any] = []
        if benchmark is not None:
            sql += " WHERE r.benchmark = ?"
            params.append(benchmark)
        out = []
        for r in self._dicts(sql + " ORDER BY r.created_at, r.id", params):
            d = self._run_from_row(r).to_dict()
            d.update(status=r["status"], responses=int(r["responses"]), failures=int(r["failures"]),
                     created_at=str(r["created_at"]))
            out.append(d)
        return out

    _RESPONSE_SCHEMA = pa.schema([("id", pa.string()), ("run_id", pa.string()), ("sample_id", pa.string()),
                                  ("text", pa.string()), ("signals", pa.string())])

    def add_responses(self, responses: Iterable[Response]) -> int:
        """Insert responses in one transaction; ones already stored (same id) are skipped."""
        rows = [{"id": r.id, "run_id": r.run_id, "sample_id": r.sample_id, "text": r.text,
                 "signals": _dumps(r.signals)} for r in responses]
        return self._write(lambda cur: self._bulk_insert(cur, "responses", rows, self._RESPONSE_SCHEMA))

    def add_failure(self, run_id: str, sample_id: str | None, stage: str, error: str) -> None:
        self._write(lambda cur: cur.execute(
            "INSERT INTO failures (run_id, sample_id, stage, error) VALUES (?, ?, ?, ?)",
            [run_id, sample_id, stage, error]))

    def list_failures(self, run_id: str | None = None, stage: str | None = None, *,
                      open_only: bool = False) -> list[dict[str, Any]]:
        """Failures in the order they happened (the table is a log); ``open_only``: those no later pass made
        good (``_OPEN_FAILURE``)."""
        where, params = self._where(("run_id", run_id), ("stage", stage))
        if open_only:
            where += (" AND " if where else " WHERE ") + _OPEN_FAILURE
        return self._dicts("SELECT * FROM failures f" + where + " ORDER BY created_at", params)

    @staticmethod
    def _response_from_row(r: dict[str, Any]) -> Response:
        return Response(run_id=r["run_id"], sample_id=r["sample_id"], text=r["text"] or "",
                        signals=_loads(r["signals"], {}), id=r["id"])

    def get_response(self, response_id: str) -> Response | None:
        rows = self._dicts("SELECT * FROM responses WHERE id = ?", [response_id])
        return self._response_from_row(rows[0]) if rows else None

    def iter_responses(self, run_id: str | None = None, *, benchmark: str | None = None,
                       limit: int | None = None) -> Iterator[Response]:
        sql = "SELECT x.* FROM responses x" + (" JOIN samples s ON s.id = x.sample_id" if benchmark is not None else "")
        where, params = self._where(("s.benchmark", benchmark), ("x.run_id", run_id))
        sql += where + " ORDER BY x.run_id, x.sample_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for r in self._dicts(sql, params):
            yield self._response_from_row(r)

    def done_sample_ids(self, run_id: str) -> set[str]:
        return {r[0] for r in self._rows("SELECT sample_id FROM responses WHERE run_id = ?", [run_id])}

    def count_responses(self, run_id: str | None = None) -> int:
        if run_id is None:
            return int(self._scalar("SELECT count(*) FROM responses"))
        return int(self._scalar("SELECT count(*) FROM responses WHERE run_id = ?", [run_id]))

    # ----------------------------------------------------------------- scores
    _SCORE_SCHEMA = pa.schema([("response_id", pa.string()), ("metric", pa.string()), ("config_key", pa.string()),
                               ("values", pa.string()), ("evidence", pa.string()),
                               ("undefined_reason", pa.string())])

    def put_scores(self, scores: Iterable[Score]) -> int:
        """Store machine scores; a re-computation under the same config replaces the old row."""
        rows = [{"response_id": s.response_id, "metric": s.metric, "config_key": s.config_key,
                 "values": _dumps(s.values), "evidence": _dumps(s.evidence), "undefined_reason": s.undefined_reason}
                for s in scores]
        update = ('(response_id, metric, config_key) DO UPDATE SET "values" = excluded."values", '
                  "evidence = excluded.evidence, undefined_reason = excluded.undefined_reason")
        return self._write(lambda cur: self._bulk_insert(cur, "scores", rows, self._SCORE_SCHEMA, update) or len(rows))

    @staticmethod
    def _score_from_row(r: dict[str, Any]) -> Score:
        return Score(response_id=r["response_id"], metric=r["metric"], config_key=r["config_key"],
                     values=_loads(r["values"], {}), evidence=_loads(r["evidence"], {}),
                     undefined_reason=r["undefined_reason"])

    def get_scores(self, response_id: str, metric: str | None = None) -> list[Score]:
        sql, params = "SELECT * FROM scores WHERE response_id = ?", [response_id]
        if metric is not None:
            sql += " AND metric = ?"
            params.append(metric)
        return [self._score_from_row(r) for r in self._dicts(sql + " ORDER BY metric, config_key", params)]

    def scored_response_ids(self, metric: str, config_key: str) -> set[str]:
        return {r[0] for r in self._rows(
            "SELECT response_id FROM scores WHERE metric = ? AND config_key = ?", [metric, config_key])}

    def get_responses(self, response_ids: Sequence[str]) -> dict[str, Response]:
        if not response_ids:
            return {}
        rows = self._dicts("SELECT * FROM responses WHERE id IN (SELECT unnest(?))", [list(response_ids)])
        return {r["id"]: self._response_from_row(r) for r in rows}

    def get_scores_for(self, response_ids: Sequence[str], metric: str, config_key: str) -> dict[str, Score]:
        """One metric's scores (with evidence) under one config, by response id."""
        if not response_ids:
            return {}
        rows = self._dicts("SELECT * FROM scores WHERE metric = ? AND config_key = ? "
                           "AND response_id IN (SELECT unnest(?))", [metric, config_key, list(response_ids)])
        return {r["response_id"]: self._score_from_row(r) for r in rows}

    _STATS_SCHEMA = pa.schema([("response_id", pa.string()), ("metric", pa.string()), ("config_key", pa.string()),
                               ("stats", pa.string())])

    def put_score_batch(self, scores: Sequence[Score], stats: Sequence[dict[str, float] | None],
                        failures: Iterable[tuple[str | None, str | None, str, str]] = ()) -> int:
        """Scores, their per-item statistics (parallel to ``scores``) and failures in ONE transaction.

        ``failures`` are ``(run_id, sample_id, stage, error)``. A score under the same
        config replaces the old one, as in ``put_scores``. Returns how many scores were written.
        """
        if len(stats) != len(scores):
            raise StoreError(f"{len(scores)} scores but {len(stats)} statistics")
        score_rows = [{"response_id": s.response_id, "metric": s.metric, "config_key": s.config_key,
                       "values": _dumps(s.values), "evidence": _dumps(s.evidence),
                       "undefined_reason": s.undefined_reason} for s in scores]
        stat_rows = [{"response_id": s.response_id, "metric": s.metric, "config_key": s.config_key,
                      "stats": _dumps(st)} for s, st in zip(scores, stats) if st is not None]
        failure_rows = list(failures)
        score_update = ('(response_id, metric, config_key) DO UPDATE SET "values" = excluded."values", '
                        "evidence = excluded.evidence, undefined_reason = excluded.undefined_reason")

        def write(cur: duckdb.DuckDBPyConnection) -> int:
            self._bulk_insert(cur, "scores", score_rows, self._SCORE_SCHEMA, score_update)
            self._bulk_insert(cur, "score_stats", stat_rows, self._STATS_SCHEMA,
                              "(response_id, metric, config_key) DO UPDATE SET stats = excluded.stats")
            for run_id, sample_id, stage, error in failure_rows:
                cur.execute("INSERT INTO failures (run_id, sample_id, stage, error) VALUES (?, ?, ?, ?)",
                            [run_id, sample_id, stage, error])
            return len(score_rows)
        return self._write(write)

    def score_stat_rows(self, metric: str | None = None, *, benchmark: str | None = None,
                        run_id: str | None = None) -> list[dict[str, Any]]:
        """Per scored response: its run, model, sample, image and domain, with the score's values and stats.

        The leaderboard and the studies aggregate these; ``stats`` is None for scores
        written without statistics (imported ones, say).
        """
        sql = """SELECT c.response_id, c.metric, c.config_key, c."values", c.undefined_reason, t.stats,
                        x.run_id, x.sample_id, r.model, coalesce(r.synthetic, false) AS synthetic,
                        s.benchmark, s.domain, s.task, s.image_key
                 FROM scores c JOIN responses x ON x.id = c.response_id
                 LEFT JOIN score_stats t ON t.response_id = c.response_id AND t.metric = c.metric
                      AND t.config_key = c.config_key
                 LEFT JOIN runs r ON r.id = x.run_id LEFT JOIN samples s ON s.id = x.sample_id"""
        where, params = self._where(("c.metric", metric), ("s.benchmark", benchmark), ("x.run_id", run_id))
        rows = self._dicts(sql + where + " ORDER BY x.run_id, x.sample_id, c.metric", params)
        for r in rows:
            r["values"] = _loads(r["values"], {})
            r["stats"] = _loads(r["stats"])
        return rows

    def iter_scores(self, metric: str | None = None, *, run_id: str | None = None,
                    with_evidence: bool = False) -> Iterator[tuple[Response, Score]]:
        """Scores joined with their responses (evidence left out unless asked: it is large)."""
        ev = "c.evidence" if with_evidence else "NULL AS evidence"
        sql = (f'SELECT x.id, x.run_id, x.sample_id, x.text, x.signals, c.response_id, c.metric, c.config_key, '
               f'c."values", {ev}, c.undefined_reason FROM scores c JOIN responses x ON x.id = c.response_id')
        where, params = self._where(("c.metric", metric), ("x.run_id", run_id))
        for r in self._dicts(sql + where + " ORDER BY x.run_id, x.sample_id, c.metric", params):
            yield self._response_from_row(r), self._score_from_row(r)

    # ----------------------------------------------------------------- human events (append-only)
    def append_event(self, event: HumanEvent) -> int:
        """Append one human event and return its id. Nothing ever updates or deletes one."""
        def write(cur: duckdb.DuckDBPyConnection) -> int:
            if event.undoes is not None:
                owners = cur.execute("SELECT annotator FROM events WHERE id = ?", [event.undoes]).fetchall()
                owner = owners[0] if owners else None
                if owner is None:
                    raise StoreError(f"cannot undo event {event.undoes}: no such event")
                if owner[0] != event.annotator:
                    raise StoreError(f"{event.annotator!r} cannot undo event {event.undoes} of {owner[0]!r}")
            row = cur.execute(
                "INSERT INTO events (annotator, kind, response_id, target, value, undoes, source, meta) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                [event.annotator, event.kind, event.response_id, event.target, _dumps(event.value),
                 event.undoes, event.source, _dumps(event.meta or None)]).fetchall()[0]
            return int(row[0])
        return self._write(write)

    def list_events(self, *, response_id: str | None = None, annotator: str | None = None,
                    kind: str | None = None, source: str | None = None) -> list[HumanEvent]:
        """Events in the order they were made, of one response, annotator, kind and ``source`` where given."""
        where, params = self._where(("response_id", response_id), ("annotator", annotator), ("kind", kind),
                                    ("source", source))
        return [self._event_from_row(r) for r in self._dicts("SELECT * FROM events" + where + " ORDER BY id", params)]

    @staticmethod
    def _event_from_row(r: dict[str, Any]) -> HumanEvent:
        return HumanEvent(annotator=r["annotator"], kind=r["kind"], response_id=r["response_id"],
                          value=_loads(r["value"]), target=r["target"] or "", undoes=r["undoes"], id=int(r["id"]),
                          created_at=str(r["created_at"]), source=r.get("source") or APP_SOURCE,
                          meta=_loads(r.get("meta"), {}))

    def undo_latest_event(self, annotator: str, response_id: str | None = None) -> int | None:
        """Append an undo of ``annotator``'s latest event not yet undone (on ``response_id`` if given).

        Finding the event and appending the undo happen in one transaction, so two
        concurrent undos never name the same event. Returns the undo's id, or None
        when the annotator has nothing left to undo.
        """
        def write(cur: duckdb.DuckDBPyConnection) -> int | None:
            # Only what this person did here: an imported judgement under the same name is not theirs to undo.
            sql = ("SELECT id, response_id FROM events WHERE annotator = ? AND kind <> 'undo' AND source = 'app' "
                   "AND id NOT IN (SELECT undoes FROM events WHERE kind = 'undo' AND undoes IS NOT NULL)")
            params: list[Any] = [annotator]
            if response_id is not None:
                sql += " AND response_id = ?"
                params.append(response_id)
            rows = cur.execute(sql + " ORDER BY id DESC LIMIT 1", params).fetchall()
            if not rows:
                return None
            target_id, target_response = rows[0]
            row = cur.execute(
                "INSERT INTO events (annotator, kind, response_id, target, value, undoes) "
                "VALUES (?, 'undo', ?, '', NULL, ?) RETURNING id", [annotator, target_response, target_id]).fetchall()
            return int(row[0][0])
        return self._write(write)

    _NEW_EVENT_SCHEMA = pa.schema([(n, pa.string()) for n in (
        "annotator", "kind", "response_id", "target", "value")] + [("undoes", pa.int64())] + [
        (n, pa.string()) for n in ("source", "meta")])

    def append_events(self, events: Sequence[HumanEvent]) -> int:
        """Append many new events in ONE transaction, in order (Arrow bulk insert; ids and times are new).

        Unlike ``add_imported_events`` there is no duplicate check and no id remapping: for
        large batches of fresh input (e.g. a benchmark's 100k ratings). Returns how many were added.
        """
        rows = [{"annotator": e.annotator, "kind": e.kind, "response_id": e.response_id, "target": e.target,
                 "value": _dumps(e.value), "undoes": e.undoes, "source": e.source, "meta": _dumps(e.meta or None)}
                for e in events]
        return self._write(lambda cur: self._bulk_insert(cur, "events", rows, self._NEW_EVENT_SCHEMA))

    def append_events_once(self, events: Sequence[HumanEvent]) -> int:
        """Append, in ONE transaction and in order, the events not already stored; returns how many were added.

        For judgements imported from outside studies, which have no time of their own: an event is already
        stored when one of the same source, annotator, kind, response, target and value (compared as JSON
        with sorted keys) exists, so re-importing a study adds nothing twice. Undos are refused here.
        """
        if any(e.kind == "undo" or e.undoes is not None for e in events):
            raise StoreError("append_events_once takes judgements, not undos")

        def identity(source: str, annotator: str, kind: str, response_id: str | None, target: str | None,
                     value: Any) -> tuple[Any, ...]:
            return (source, annotator, kind, response_id, target or "", canonical_json(value))

        def write(cur: duckdb.DuckDBPyConnection) -> int:
            sources = sorted({e.source for e in events})
            seen = {identity(r[0] or APP_SOURCE, r[1], r[2], r[3], r[4], _loads(r[5])) for r in cur.execute(
                "SELECT source, annotator, kind, response_id, target, value FROM events "
                "WHERE source IN (SELECT unnest(?))", [sources]).fetchall()} if sources else set()
            rows = []
            for e in events:
                key = identity(e.source, e.annotator, e.kind, e.response_id, e.target, e.value)
                if key in seen:
                    continue
                seen.add(key)
                rows.append({"annotator": e.annotator, "kind": e.kind, "response_id": e.response_id,
                             "target": e.target, "value": _dumps(e.value), "undoes": None, "source": e.source,
                             "meta": _dumps(e.meta or None)})
            return self._bulk_insert(cur, "events", rows, self._NEW_EVENT_SCHEMA)

        return self._write(write)

    def list_events_of_kinds(self, kinds: Sequence[str], source: str | None = None) -> list[HumanEvent]:
        """Events of the given kinds (undos included only when asked), oldest first; of one ``source`` if given
        (``"app"``: this studio's annotators; else an outside study's name)."""
        sql = "SELECT * FROM events WHERE kind IN (SELECT unnest(?))"
        params: list[Any] = [list(kinds)]
        if source is not None:
            sql += " AND coalesce(source, ?) = ?"
            params += [APP_SOURCE, source]
        return [self._event_from_row(r) for r in self._dicts(sql + " ORDER BY id", params)]

    def event_sources(self) -> list[dict[str, Any]]:
        """Where the stored human judgements come from, "app" (this studio's annotators) first, then each imported
        outside study: ``{source, events, responses, annotators, kinds: {kind: events}}``, undos left out."""
        rows = self._dicts("""SELECT coalesce(source, ?) AS source, kind, count(*) AS events
                              FROM events WHERE kind <> 'undo' GROUP BY ALL""", [APP_SOURCE])
        totals = {r["source"]: r for r in self._dicts(
            """SELECT coalesce(source, ?) AS source, count(DISTINCT response_id) AS responses,
                      count(DISTINCT annotator) AS annotators FROM events WHERE kind <> 'undo' GROUP BY ALL""",
            [APP_SOURCE])}
        out: dict[str, dict[str, Any]] = {}
        for r in sorted(rows, key=lambda r: r["kind"]):
            entry = out.setdefault(r["source"], {"source": r["source"], "events": 0,
                                                 "responses": int(totals[r["source"]]["responses"]),
                                                 "annotators": int(totals[r["source"]]["annotators"]), "kinds": {}})
            entry["kinds"][r["kind"]] = int(r["events"])
            entry["events"] += int(r["events"])
        return sorted(out.values(), key=lambda e: (e["source"] != APP_SOURCE, e["source"]))

    # ----------------------------------------------------------------- annotation studies
    def add_study(self, study_id: str, definition: dict[str, Any], response_ids: Sequence[str],
                  author: str | None = None) -> None:
        """Record a study's design and its items in draw order (one transaction). A study is never changed:
        an id already taken is refused."""
        def write(cur: duckdb.DuckDBPyConnection) -> None:
            if cur.execute("SELECT count(*) FROM studies WHERE id = ?", [study_id]).fetchall()[0][0]:
                raise StoreError(f"a study named {study_id!r} already exists; a changed design needs a new name")
            cur.execute("INSERT INTO studies (id, definition, author) VALUES (?, ?, ?)",
                        [study_id, _dumps(definition), author])
            self._bulk_insert(cur, "study_items", [{"study_id": study_id, "position": i, "response_id": rid}
                                                   for i, rid in enumerate(response_ids)], self._STUDY_ITEM_SCHEMA)
        self._write(write)

    _STUDY_ITEM_SCHEMA = pa.schema([("study_id", pa.string()), ("position", pa.int32()), ("response_id", pa.string())])

    def get_study(self, study_id: str) -> dict[str, Any] | None:
        """``{"id", "definition", "author", "created_at", "items": [response ids in draw order]}``, or None."""
        rows = self._dicts("SELECT id, definition, author, created_at::VARCHAR AS created_at FROM studies WHERE id = ?",
                           [study_id])
        if not rows:
            return None
        study = rows[0]
        study["definition"] = _loads(study["definition"], {})
        study["items"] = [r[0] for r in self._rows(
            "SELECT response_id FROM study_items WHERE study_id = ? ORDER BY position", [study_id])]
        return study

    def list_studies(self) -> list[dict[str, Any]]:
        """Every study, newest first: id, definition, author, created_at and how many items."""
        rows = self._dicts("""SELECT s.id, s.definition, s.author, s.created_at::VARCHAR AS created_at,
                                     count(i.position) AS items
                              FROM studies s LEFT JOIN study_items i ON i.study_id = s.id
                              GROUP BY ALL ORDER BY created_at DESC, s.id""")
        for r in rows:
            r["definition"] = _loads(r["definition"], {})
            r["items"] = int(r["items"])
        return rows

    def study_candidates(self, run_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The responses of these runs with what a study's sample is stratified by: run, model, benchmark,
        task and image (the sample's image key, or the sample itself where it has none)."""
        return self._dicts("""SELECT x.id AS response_id, x.run_id, r.model, x.sample_id, s.benchmark, s.task,
                                     coalesce(s.image_key, s.id) AS image
                              FROM responses x JOIN runs r ON r.id = x.run_id JOIN samples s ON s.id = x.sample_id
                              WHERE x.run_id IN (SELECT unnest(?)) ORDER BY x.run_id, x.sample_id""",
                           [list(run_ids)])

    def response_ids(self, run_id: str | None = None, benchmark: str | None = None) -> list[str]:
        """Response ids in a stable order (run, sample), optionally of one run or benchmark."""
        where, params = self._where(("x.run_id", run_id), ("s.benchmark", benchmark))
        sql = "SELECT x.id FROM responses x LEFT JOIN samples s ON s.id = x.sample_id" + where
        return [r[0] for r in self._rows(sql + " ORDER BY x.run_id, x.sample_id", params)]

    # ----------------------------------------------------------------- saved views
    def save_view(self, name: str, filters: dict[str, Any], author: str) -> None:
        """Saved views are versioned like events: a new save adds a row, the latest wins."""
        self._write(lambda cur: cur.execute("INSERT INTO views (name, filters, author) VALUES (?, ?, ?)",
                                            [name, _dumps(filters), author]))

    def get_view(self, name: str) -> dict[str, Any] | None:
        text = self._scalar("SELECT filters FROM views WHERE name = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                            [name])
        return None if text is None else json.loads(text)

    def list_views(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT DISTINCT name FROM views ORDER BY name")]

    # ----------------------------------------------------------------- app: browse (filtered response tables)
    _COLUMN_NAME = re.compile(r"^[a-z_]+\.[a-z_]+$")
    _BROWSE_ORDER = {"model", "benchmark", "domain", "task", "sample_id", "length", "annotated"}

    def _browse_sql(self, filters: dict[str, Any], metric_columns: Sequence[str],
                    configs: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """The browse query: one row per response, one column per ``"metric.value_key"``.

        ``configs`` (``{metric: config key}``): each column reads its metric's scores under that configuration
        only; a metric it does not name (or None: every metric) averages its scores under every configuration
        in the column. ``judges_differ`` says whether Tri-HE's configurations disagree on the response.
        """
        for col in metric_columns:
            if not self._COLUMN_NAME.match(col):
                raise StoreError(f"metric column {col!r} must look like 'metric.value_key'")
        params: list[Any] = []
        pivots = []
        for col in metric_columns:
            metric, key = col.split(".", 1)
            raw = f"""json_extract_string("values", '$.{key}')"""
            config = ""
            if configs and metric in configs:
                config = " AND config_key = ?"
                params.append(str(configs[metric]))
            # Booleans (Reefknot's "hallucinated") count as 0 / 1 so that they average into rates.
            pivots.append(f"""avg(CASE WHEN metric = '{metric}'{config} THEN coalesce(TRY_CAST({raw} AS DOUBLE),
                              TRY_CAST(TRY_CAST({raw} AS BOOLEAN) AS DOUBLE)) END) AS "{col}" """)
        pivots.append("""count(DISTINCT CASE WHEN metric = 'trihe' THEN json_extract_string("values", '$.hallucinated')
                         END) > 1 AS judges_differ""")
        sql = f"""
            WITH m AS (SELECT response_id, {", ".join(pivots)} FROM scores GROUP BY response_id),
            live AS (SELECT * FROM events WHERE kind <> 'undo'
                     AND id NOT IN (SELECT undoes FROM events WHERE kind = 'undo' AND undoes IS NOT NULL)),
            annotated AS (SELECT DISTINCT response_id FROM live WHERE kind IN ('rating', 'correction')),
            latest_corrections AS (SELECT * FROM live WHERE kind = 'correction'
                     QUALIFY row_number() OVER (PARTITION BY response_id, annotator, target ORDER BY id DESC) = 1),
            human_differs AS (SELECT DISTINCT e.response_id FROM latest_corrections e
                     JOIN scores c ON c.response_id = e.response_id AND c.metric = 'trihe'
                     WHERE json_extract_string(e.value, '$.verdict') IS DISTINCT FROM json_extract_string(
                         c.evidence, '$.triplets[' || split_part(e.target, ':', 2) || '].verdict'))
            SELECT x.id, x.run_id, r.model, coalesce(r.synthetic, false) AS synthetic, s.benchmark, s.domain, s.task,
                   s.relation_category, x.sample_id, length(x.text) AS length, left(x.text, 160) AS text,
                   {", ".join(f'm."{c}"' for c in metric_columns) + "," if metric_columns else ""}
                   coalesce(m.judges_differ, false) AS judges_differ,
                   a.response_id IS NOT NULL AS annotated, h.response_id IS NOT NULL AS human_differs
            FROM responses x JOIN samples s ON s.id = x.sample_id LEFT JOIN runs r ON r.id = x.run_id
            LEFT JOIN m ON m.response_id = x.id LEFT JOIN annotated a ON a.response_id = x.id
            LEFT JOIN human_differs h ON h.response_id = x.id"""
        where: list[str] = []
        for key, col in (("models", "r.model"), ("benchmarks", "s.benchmark"), ("domains", "s.domain"),
                         ("tasks", "s.task"), ("runs", "x.run_id")):
            values = filters.get(key)
            if values:
                where.append(f"{col} IN (SELECT unnest(?))")
                params.append([str(v) for v in values])
        for col, bounds in (filters.get("ranges") or {}).items():
            if col not in metric_columns:
                raise StoreError(f"cannot filter on {col!r}: not one of the metric columns {list(metric_columns)}")
            lo, hi = bounds
            if lo is not None:
                where.append(f'm."{col}" >= ?')
                params.append(float(lo))
            if hi is not None:
                where.append(f'm."{col}" <= ?')
                params.append(float(hi))
        if filters.get("annotated") is not None:
            where.append("a.response_id IS NOT NULL" if filters["annotated"] else "a.response_id IS NULL")
        disagreement = filters.get("disagreement")
        if disagreement == "judges":
            where.append("coalesce(m.judges_differ, false)")
        elif disagreement == "judge_human":
            where.append("h.response_id IS NOT NULL")
        elif disagreement:
            raise StoreError(f"disagreement filter must be 'judges' or 'judge_human', got {disagreement!r}")
        if filters.get("text"):
            where.append("contains(lower(x.text), lower(?))")
            params.append(str(filters["text"]))
        if where:
            sql += " WHERE " + " AND ".join(where)
        return sql, params

    def _browse_order(self, sort: str | None, descending: bool, metric_columns: Sequence[str]) -> str:
        if sort is None:
            return " ORDER BY x.run_id, x.sample_id"
        if sort not in metric_columns and sort not in self._BROWSE_ORDER:
            raise StoreError(f"cannot sort by {sort!r}")
        column = f'"{sort}"' if sort in metric_columns else sort
        return f" ORDER BY {column} {'DESC' if descending else 'ASC'} NULLS LAST, x.run_id, x.sample_id"

    def browse_responses(self, filters: dict[str, Any], metric_columns: Sequence[str] = (), *,
                         sort: str | None = None, descending: bool = True, limit: int = 200,
                         offset: int = 0, configs: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        """Responses with their run, sample facets and metric columns, filtered and sorted.

        ``filters``: ``models / benchmarks / domains / tasks / runs`` (lists), ``ranges``
        (``{column: [low, high]}``, either end None), ``annotated`` (bool), ``disagreement``
        (``"judges"`` or ``"judge_human"``), ``text`` (substring). ``configs``: see ``_browse_sql``.
        """
        sql, params = self._browse_sql(filters, metric_columns, configs)
        sql += self._browse_order(sort, descending, metric_columns) + f" LIMIT {int(limit)} OFFSET {int(offset)}"
        return self._dicts(sql, params)

    def browse_response_ids(self, filters: dict[str, Any], metric_columns: Sequence[str] = (), *,
                            sort: str | None = None, descending: bool = True,
                            configs: Mapping[str, str] | None = None) -> list[str]:
        """Every response id the filter keeps, in display order (for previous / next)."""
        sql, params = self._browse_sql(filters, metric_columns, configs)
        sql = f"SELECT id FROM ({sql}{self._browse_order(sort, descending, metric_columns)})"
        return [r[0] for r in self._rows(sql, params)]

    def response_id_at(self, position: int) -> str | None:
        """The id at ``position`` in the store's (run, sample) order: Inspect steps through everything
        without listing every id (one top-N over ``responses``, no score aggregation)."""
        return self._scalar("SELECT id FROM responses ORDER BY run_id, sample_id LIMIT 1 OFFSET ?", [int(position)])

    def response_id_beside(self, response_id: str, backwards: bool = False) -> str | None:
        """The next (or previous) response after ``response_id`` in the (run, sample) order: a keyset
        step, cheaper than an offset that sorts everything before it. None at either end."""
        op, order = (">", "ASC") if not backwards else ("<", "DESC")
        return self._scalar(f"""SELECT x.id FROM responses x, (SELECT run_id, sample_id FROM responses WHERE id = ?) c
                                WHERE x.run_id {op} c.run_id OR (x.run_id = c.run_id AND x.sample_id {op} c.sample_id)
                                ORDER BY x.run_id {order}, x.sample_id {order} LIMIT 1""", [response_id])

    def response_position(self, response_id: str) -> int | None:
        """Where a response sits in the (run, sample) order; None when it is not in the store."""
        return self._scalar("""SELECT CASE WHEN c.id IS NULL THEN NULL ELSE (SELECT count(*) FROM responses x
                                   WHERE x.run_id < c.run_id OR (x.run_id = c.run_id AND x.sample_id < c.sample_id))
                                   END FROM (SELECT 1) LEFT JOIN responses c ON c.id = ?""", [response_id])

    def score_gaps(self, response_ids: Sequence[str], configs: Mapping[str, str] | None = None
                   ) -> dict[str, dict[str, Any]]:
        """Why a browse cell may be empty, per response: ``{"undefined": {metric: reason}, "failed": {stage: error}}``.

        ``undefined``: scores (under ``configs``' configuration of their metric, where it names one) whose value
        the metric left undefined, with its reason;
        ``failed``: the latest failure of each scoring stage (``score:<metric>``, ``score:concepts``)
        on the response's run and sample.
        """
        out: dict[str, dict[str, Any]] = {rid: {"undefined": {}, "failed": {}} for rid in response_ids}
        if not response_ids:
            return out
        ids = [str(r) for r in response_ids]
        for rid, metric, key, reason in self._rows(
                """SELECT response_id, metric, config_key, undefined_reason FROM scores
                   WHERE response_id IN (SELECT unnest(?)) AND undefined_reason IS NOT NULL""", [ids]):
            if not configs or configs.get(metric, key) == key:
                out[rid]["undefined"][metric] = reason
        for rid, stage, error in self._rows(
                """SELECT x.id, f.stage, f.error FROM responses x
                   JOIN failures f ON f.run_id = x.run_id AND f.sample_id = x.sample_id
                   WHERE x.id IN (SELECT unnest(?)) AND f.stage LIKE 'score%' ORDER BY f.created_at""", [ids]):
            out[rid]["failed"][stage] = error
        return out

    def browse_facets(self) -> dict[str, list[str]]:
        """The distinct values the browse filters offer: models, benchmarks, domains, tasks, metrics."""
        out = {
            "models": [r[0] for r in self._rows("SELECT DISTINCT model FROM runs WHERE model IS NOT NULL ORDER BY 1")],
            "benchmarks": [r[0] for r in self._rows("SELECT name FROM benchmarks ORDER BY 1")],
            "domains": [r[0] for r in self._rows(
                "SELECT DISTINCT domain FROM samples WHERE domain IS NOT NULL ORDER BY 1")],
            "tasks": [r[0] for r in self._rows("SELECT DISTINCT task FROM samples WHERE task IS NOT NULL ORDER BY 1")],
            "metrics": [r[0] for r in self._rows("SELECT DISTINCT metric FROM scores ORDER BY 1")],
        }
        return out

    def benchmark_names(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT name FROM benchmarks ORDER BY 1")]

    def scored_metrics(self, benchmark: str | None = None) -> list[str]:
        """The metrics with at least one stored score (on ``benchmark``'s samples, if given)."""
        if benchmark is None:
            return [r[0] for r in self._rows("SELECT DISTINCT metric FROM scores ORDER BY 1")]
        return [r[0] for r in self._rows(
            "SELECT DISTINCT c.metric FROM scores c JOIN responses x ON x.id = c.response_id "
            "JOIN samples s ON s.id = x.sample_id WHERE s.benchmark = ? ORDER BY 1", [benchmark])]

    def score_value_keys(self, metric: str) -> list[str]:
        """The per-response values of ``metric`` that some stored score holds as a number (or boolean)."""
        return [r[0] for r in self._rows("""
            SELECT DISTINCT key FROM (SELECT unnest(json_keys("values")) AS key, "values" AS v
                                      FROM scores WHERE metric = ?)
            WHERE json_type(v, '$."' || replace(key, '"', '\\"') || '"') IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'BOOLEAN')
            ORDER BY 1""", [metric])]

    def score_configs(self) -> list[dict[str, Any]]:
        """Each metric's configurations in the store: config key, how many scores, when last computed."""
        return self._dicts("""SELECT metric, config_key, count(*) AS scores, max(created_at)::VARCHAR AS computed_at
                              FROM scores GROUP BY ALL ORDER BY metric, computed_at DESC""")

    def responses_to_sample(self, sample_id: str) -> list[dict[str, Any]]:
        """Every response to one sample with its run's model (to put two models side by side)."""
        return self._dicts("""SELECT x.id, x.run_id, r.model, coalesce(r.synthetic, false) AS synthetic
                              FROM responses x LEFT JOIN runs r ON r.id = x.run_id
                              WHERE x.sample_id = ? ORDER BY r.model, x.run_id""", [sample_id])

    # ----------------------------------------------------------------- summary & export
    def counts(self) -> dict[str, int]:
        out = {}
        for table in ("benchmarks", "samples", "images", "runs", "responses", "failures", "scores", "events"):
            out[table] = int(self._scalar(f"SELECT count(*) FROM {table}"))
        out["annotators"] = int(self._scalar("SELECT count(DISTINCT annotator) FROM events"))
        return out

    EXPORT_QUERIES: dict[str, str] = {
        "samples": """SELECT s.id, s.benchmark, s.image_key, s.image_sha256, s.task, s.domain, s.source_kind,
                             g.graph AS scene_graph, s.question, s.options, s.answer, s.gold_triplets,
                             s.relation_category, s.reference_text, s.reference_texts, s.reference_objects,
                             s.reference_vocabulary, s.meta
                      FROM samples s LEFT JOIN scene_graphs g ON g.key = s.scene_graph_key ORDER BY s.id""",
        "responses": """SELECT x.id, x.run_id, x.sample_id, r.model, r.backend, r.synthetic, x.text AS response,
                               x.signals, x.created_at
                        FROM responses x LEFT JOIN runs r ON r.id = x.run_id ORDER BY x.run_id, x.sample_id""",
        "runs": "SELECT * FROM runs ORDER BY id",
        "scores": """SELECT response_id, metric, config_key, "values", evidence, undefined_reason, created_at
                     FROM scores ORDER BY response_id, metric, config_key""",
        "judgments": "SELECT * FROM events ORDER BY id",
        "studies": """SELECT s.id AS study, i.position, i.response_id, x.run_id, x.sample_id, s.definition,
                             s.author, s.created_at
                      FROM studies s JOIN study_items i ON i.study_id = s.id
                      LEFT JOIN responses x ON x.id = i.response_id ORDER BY s.id, i.position""",
    }
    JSON_COLUMNS = {"scene_graph", "options", "gold_triplets", "meta", "signals", "values", "evidence", "value",
                    "generation", "reference_texts", "reference_objects", "reference_vocabulary", "definition"}

    def export_rows(self, table: str) -> list[dict[str, Any]]:
        """Rows of an export table with JSON columns decoded."""
        if table not in self.EXPORT_QUERIES:
            raise StoreError(f"unknown export table {table!r}; choose from {sorted(self.EXPORT_QUERIES)}")
        rows = self._dicts(self.EXPORT_QUERIES[table])
        for r in rows:
            for k in list(r):
                if k in self.JSON_COLUMNS and isinstance(r[k], str):
                    r[k] = json.loads(r[k])
                elif k == "created_at" and r[k] is not None:
                    r[k] = str(r[k])
        return rows

    def export_copy(self, table: str, path: str, fmt: str) -> None:
        """Write an export table as CSV or Parquet with DuckDB's own writer."""
        if table not in self.EXPORT_QUERIES:
            raise StoreError(f"unknown export table {table!r}")
        options = {"csv": "FORMAT csv, HEADER true", "parquet": "FORMAT parquet"}[fmt]
        cur = self._cursor()
        try:
            cur.execute(f"COPY ({self.EXPORT_QUERIES[table]}) TO '{path.replace(chr(39), chr(39) * 2)}' ({options})")
        finally:
            cur.close()
