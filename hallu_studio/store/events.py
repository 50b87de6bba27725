"""Human events (append-only: ratings, corrections, notes, undos, imported judgements) and annotation studies."""

from __future__ import annotations

from typing import Any, Sequence

import duckdb
import pyarrow as pa

from ..model import APP_SOURCE, HumanEvent, canonical_json, undone_event_ids
from .connection import Database, StoreError, dumps, loads


class HumanEvents(Database):
    """The ``events`` log (nothing here updates or deletes an event) and the studies' fixed designs."""

    # The events in force (``model.undone_event_ids``), undos left out; its one parameter is ``_undone_ids()``.
    EVENTS_IN_FORCE = "SELECT * FROM events WHERE kind <> 'undo' AND id NOT IN (SELECT unnest(CAST(? AS BIGINT[])))"

    def _undone_ids(self, cur: duckdb.DuckDBPyConnection | None = None) -> list[int]:
        """The ids of the events an undo in force has undone (``model.undone_event_ids`` over the stored undos),
        read in ``cur``'s transaction where given."""
        sql = "SELECT id, undoes FROM events WHERE kind = 'undo'"
        undos = cur.execute(sql).fetchall() if cur is not None else self._rows(sql)
        return sorted(undone_event_ids(undos))

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
                [event.annotator, event.kind, event.response_id, event.target, dumps(event.value),
                 event.undoes, event.source, dumps(event.meta or None)]).fetchall()[0]
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
                          value=loads(r["value"]), target=r["target"] or "", undoes=r["undoes"], id=int(r["id"]),
                          created_at=str(r["created_at"]), source=r.get("source") or APP_SOURCE,
                          meta=loads(r.get("meta"), {}))

    def undo_latest_event(self, annotator: str, response_id: str | None = None) -> int | None:
        """Append an undo of ``annotator``'s latest event in force (on ``response_id`` if given).

        Finding the event and appending the undo happen in one transaction, so two
        concurrent undos never name the same event. Returns the undo's id, or None
        when the annotator has nothing left to undo.
        """
        def write(cur: duckdb.DuckDBPyConnection) -> int | None:
            # Only what this person did here: an imported judgement under the same name is not theirs to undo.
            sql = f"SELECT id, response_id FROM ({self.EVENTS_IN_FORCE}) WHERE annotator = ? AND source = 'app'"
            params: list[Any] = [self._undone_ids(cur), annotator]
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
                 "value": dumps(e.value), "undoes": e.undoes, "source": e.source, "meta": dumps(e.meta or None)}
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
            seen = {identity(r[0] or APP_SOURCE, r[1], r[2], r[3], r[4], loads(r[5])) for r in cur.execute(
                "SELECT source, annotator, kind, response_id, target, value FROM events "
                "WHERE source IN (SELECT unnest(?))", [sources]).fetchall()} if sources else set()
            rows = []
            for e in events:
                key = identity(e.source, e.annotator, e.kind, e.response_id, e.target, e.value)
                if key in seen:
                    continue
                seen.add(key)
                rows.append({"annotator": e.annotator, "kind": e.kind, "response_id": e.response_id,
                             "target": e.target, "value": dumps(e.value), "undoes": None, "source": e.source,
                             "meta": dumps(e.meta or None)})
            return self._bulk_insert(cur, "events", rows, self._NEW_EVENT_SCHEMA)

        return self._write(write)

    def list_events_of_kinds(self, kinds: Sequence[str], source: str | None = None,
                             response_ids: Sequence[str] | None = None) -> list[HumanEvent]:
        """Events of the given kinds (undos included only when asked), oldest first; of one ``source`` if given
        (``"app"``: this studio's annotators; else an outside study's name); on ``response_ids`` only if given (an
        undo carries the response of what it undoes, so a response's undo chains come whole)."""
        sql = "SELECT * FROM events WHERE kind IN (SELECT unnest(?))"
        params: list[Any] = [list(kinds)]
        if source is not None:
            sql += " AND coalesce(source, ?) = ?"
            params += [APP_SOURCE, source]
        if response_ids is not None:
            sql += " AND response_id IN (SELECT unnest(?))"
            params.append(list(response_ids))
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

    def imported_study_benchmarks(self) -> set[str]:
        """The benchmarks whose responses carry judgements imported from an outside study (any source but the
        app's): what ``import --format human-judgements`` brought."""
        rows = self._rows("""SELECT DISTINCT s.benchmark FROM events e JOIN responses x ON x.id = e.response_id
                             JOIN samples s ON s.id = x.sample_id WHERE coalesce(e.source, ?) <> ?""",
                          [APP_SOURCE, APP_SOURCE])
        return {str(r[0]) for r in rows}

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
                params = [e.annotator, e.kind, e.response_id, e.target, dumps(e.value), undoes, e.created_at,
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
                        "RETURNING id", params + [dumps(e.meta or None)]).fetchall()[0][0])
                if e.id is not None:
                    mapping[e.id] = new_id
            return mapping

        return self._write(write)

    def add_study(self, study_id: str, definition: dict[str, Any], response_ids: Sequence[str],
                  author: str | None = None) -> None:
        """Record a study's design and its items in draw order (one transaction). A study is never changed:
        an id already taken is refused."""
        def write(cur: duckdb.DuckDBPyConnection) -> None:
            if cur.execute("SELECT count(*) FROM studies WHERE id = ?", [study_id]).fetchall()[0][0]:
                raise StoreError(f"a study named {study_id!r} already exists; a changed design needs a new name")
            cur.execute("INSERT INTO studies (id, definition, author) VALUES (?, ?, ?)",
                        [study_id, dumps(definition), author])
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
        study["definition"] = loads(study["definition"], {})
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
            r["definition"] = loads(r["definition"], {})
            r["items"] = int(r["items"])
        return rows

    def study_candidates(self, run_ids: Sequence[str],
                         response_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The responses of these runs with what a study's sample is stratified by: run, model, benchmark,
        task and image (the sample's image key, or the sample itself where it has none); only ``response_ids``
        if given (a study's items: a keyed read, whatever the size of the runs)."""
        sql = """SELECT x.id AS response_id, x.run_id, r.model, x.sample_id, s.benchmark, s.task,
                        coalesce(s.image_key, s.id) AS image
                 FROM responses x JOIN runs r ON r.id = x.run_id JOIN samples s ON s.id = x.sample_id
                 WHERE x.run_id IN (SELECT unnest(?))"""
        params: list[Any] = [list(run_ids)]
        if response_ids is not None:
            sql += " AND x.id IN (SELECT unnest(?))"
            params.append(list(response_ids))
        return self._dicts(sql + " ORDER BY x.run_id, x.sample_id", params)
