"""The store: one DuckDB file, and the only package in the project that writes SQL.

Human input lives in the append-only ``events`` table; nothing here updates or deletes an event. The store is
split along what it holds, each module with its SQL; ``Store`` is their sum, and every name below is imported
from ``hallu_studio.store``:

- ``connection``: the file, its plumbing (``Database``: a connection per process, serialised, retried writes),
  errors, the versioned schema (``MIGRATIONS``) and the ``meta`` table (``Schema``);
- ``corpus``: benchmarks, samples, images, scene graphs (``Corpus``);
- ``runs``: runs, responses, the failures log (``Runs``);
- ``scores``: scores and their per-item statistics (``Scores``);
- ``caches``: the LLM-answer / concept-set cache and phrase vectors (``CacheTables``, what embeddings, LLM calls
  and extraction see), and a file holding them alone (``CacheFile``);
- ``events``: human events, the events in force, annotation studies (``HumanEvents``);
- ``navigation``: saved views, Browse's table, Inspect's steps (``Navigation``);
- ``export``: the export tables and row counts (``Export``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

from .caches import CacheFile, CacheTables
from .connection import (
    CACHE_TABLE,
    DEFAULT_DB_ENV,
    EMBEDDINGS_TABLE,
    MIGRATIONS,
    SCHEMA_VERSION,
    Database,
    Schema,
    StoreClosedError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    default_db_path,
    existing_store_path,
)
from .corpus import BenchmarkInfo, Corpus
from .events import HumanEvents
from .export import Export
from .navigation import Navigation
from .runs import Runs
from .scores import Scores

__all__ = [
    "BenchmarkInfo",
    "CACHE_TABLE",
    "CacheFile",
    "CacheTables",
    "Database",
    "DEFAULT_DB_ENV",
    "default_db_path",
    "EMBEDDINGS_TABLE",
    "existing_store_path",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Store",
    "StoreClosedError",
    "StoreError",
    "StoreLockedError",
    "StoreNotFoundError",
]


def _wal_of(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def _file_state(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


class Store(Schema, Corpus, Runs, Scores, Navigation, HumanEvents, Export):
    """A HalluStudio store backed by one DuckDB file (``":memory:"`` for tests): its families together, and how
    a file is opened (created and migrated, read-only, or a snapshot of a file another process holds).

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

    def close(self, wait_s: float | None = None) -> None:
        super().close(wait_s)
        if self.snapshot_of is not None:  # the copy's folder goes with it
            shutil.rmtree(Path(self.path).parent, ignore_errors=True)
