"""The connection and the schema: one DuckDB file, its plumbing, its versioned tables.

Design (after datasette's ``Database``): one connection per process, a fresh cursor per call, every write
serialised through one lock and run in a transaction that is retried on a write-write conflict.

Closing while other threads still use the store (the app stopping beside a scoring job, a test's teardown beside a
read) is safe: every call's cursor is counted while it runs; ``close`` refuses new calls at once, waits a bounded
time for the running ones, interrupts those still running (a write's transaction then rolls back whole), and only
then checkpoints and closes. DuckDB itself refuses to close a connection one of whose cursors is busy
(``ResourceInUseException``), so the count is what makes closing possible at all.

The schema is versioned: ``MIGRATIONS`` is an ordered list and an older file is upgraded in place when it
is opened (``Schema.migrate``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

import duckdb
import pyarrow as pa

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
    # What each config key was made of (its metric's and its extractor's configuration), so configurations are
    # named by what differs between them ("judge llm") rather than by number alone.
    (5, [
        """CREATE TABLE configs (
            metric VARCHAR NOT NULL, config_key VARCHAR NOT NULL, config VARCHAR NOT NULL,
            PRIMARY KEY (metric, config_key))""",
    ]),
    # What a sample's captions settle, said rather than guessed from their JSON type (``Sample.reference_kind``).
    # A stored sample keeps the reading its scores were made under: one caption (the ``reference_text`` column,
    # a JSON string) was read as a dense description (HalFscore/DCI, IIW-400, the embedded sample, a JSONL
    # string), several (``reference_texts``, a JSON list: COCO, HaELM) as short captions.
    (6, [
        "ALTER TABLE samples ADD COLUMN reference_kind VARCHAR DEFAULT 'captions'",
        """UPDATE samples SET reference_kind = CASE
               WHEN reference_texts IS NULL AND trim(coalesce(reference_text, '')) <> '' THEN 'dense'
               ELSE 'captions' END""",
    ]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]



def dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def loads(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)




class Database:
    """One DuckDB file: one connection per process, a fresh cursor per call, every write serialised
    through one lock and run in a transaction retried on a write-write conflict."""

    # What a file of this kind is called in messages, and what to do when another process holds it.
    KIND = "file"
    HELD_HINT = ". Stop that process, or use another file."
    # How long ``close`` lets running calls finish before interrupting them, and then how long it interrupts.
    CLOSE_WAIT_S = 5.0
    INTERRUPT_WAIT_S = 10.0

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
        # The cursors of the calls running now, and whether ``close`` has begun (it refuses new calls).
        self._calls = threading.Condition()
        self._running: set[duckdb.DuckDBPyConnection] = set()
        self._closing = False

    def checkpoint(self) -> None:
        """Move everything in the write-ahead log (``<file>.wal``) into the ``.duckdb`` file itself.

        Taken between writes (under the write lock), so no transaction of this process is cut in two.
        """
        if self.read_only or self.path == ":memory:" or self._con is None or self._closing:
            return  # closing checkpoints by itself
        with self._write_lock, self._using() as cur:
            cur.execute("CHECKPOINT")

    def close(self, wait_s: float | None = None) -> None:
        """Stop whatever uses the store, checkpoint, then close the file: afterwards the ``.duckdb`` file alone holds
        everything (no ``.wal`` beside it), so it can be copied or mailed as it is.

        New calls fail at once with ``StoreClosedError``. Calls already running get ``wait_s`` seconds (default
        ``CLOSE_WAIT_S``) to finish; those still running are then interrupted (their reads raise
        ``StoreClosedError``, their write transactions roll back whole). Safe to call twice, and from several
        threads; the connection object is dropped so that an object kept alive elsewhere (a UI closure, say) pins
        no DuckDB state."""
        with self._calls:
            if self._con is None:
                return
            self._closing = True
            self._drain(self.CLOSE_WAIT_S if wait_s is None else wait_s)
            con, self._con = self._con, None
            if con is None:
                return  # another thread closed it while this one waited
            if not self.read_only and self.path != ":memory:":
                try:
                    con.execute("CHECKPOINT")
                except duckdb.Error:
                    pass  # closing checkpoints too, where it can; a failed checkpoint must not keep the file open
            con.close()

    def _drain(self, wait_s: float) -> None:
        """Wait (holding ``_calls``'s lock between waits) until no call runs: ``wait_s`` seconds for them to end on
        their own, then interrupting each still running until it has. A call whose Python work sits between two
        queries is caught at its next query, so interrupts are repeated."""
        deadline = time.monotonic() + max(0.0, wait_s)
        while self._running and time.monotonic() < deadline:
            self._calls.wait(deadline - time.monotonic())
        hard = time.monotonic() + self.INTERRUPT_WAIT_S
        while self._running:
            if time.monotonic() >= hard:
                raise StoreError(f"cannot close the {self.KIND} {self.path}: {len(self._running)} call(s) still "
                                 f"running after being interrupted for {self.INTERRUPT_WAIT_S:.0f} s")
            for cur in list(self._running):
                try:
                    cur.interrupt()
                except duckdb.Error:
                    pass  # that call ended meanwhile
            self._calls.wait(0.05)

    def __enter__(self):  # noqa: ANN204 - the subclass itself
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _using(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A fresh cursor, counted as running until the block ends (what ``close`` waits for or interrupts)."""
        with self._calls:
            if self._closing or self._con is None:
                raise StoreClosedError(f"the {self.KIND} {self.path} is closed")
            cur = self._con.cursor()
            self._running.add(cur)
        try:
            yield cur
        except duckdb.InterruptException as exc:
            if self._closing:
                raise StoreClosedError(f"the {self.KIND} {self.path} was closed while this call ran") from exc
            raise
        finally:
            try:
                cur.close()
            finally:
                with self._calls:
                    self._running.discard(cur)
                    self._calls.notify_all()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._using() as cur:
            return cur.execute(sql, list(params)).fetchall()

    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._using() as cur:
            cur.execute(sql, list(params))
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]

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
                with self._using() as cur:
                    try:
                        cur.execute("BEGIN TRANSACTION")
                        result = fn(cur)
                        cur.execute("COMMIT")
                        return result
                    except duckdb.TransactionException:
                        cur.execute("ROLLBACK")
                        if attempt == retries - 1:
                            raise
                    except BaseException:
                        try:
                            cur.execute("ROLLBACK")
                        except duckdb.Error:
                            pass  # an interrupted (or closed) transaction is rolled back by DuckDB itself
                        raise
                time.sleep(0.01 * 2 ** attempt)
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


class Schema(Database):
    """The schema's version and the store's own key/value table (``meta``)."""

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

