"""Runs and responses: each run's manifest, the responses it produced, and the failures log."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import duckdb
import pyarrow as pa

from ..model import Response, Run
from .connection import Database, dumps, loads

# A failure (alias f) no later pass made good. The failures table is a log: a failure stays in it after
# the next pass scores what failed (a scoring stage ``score:<metric>`` followed by a score of that metric
# for the response) or generates it (``prepare`` / ``generate`` followed by the sample's response in
# that run); only the open ones are counted as the run's failures.
_OPEN_FAILURE = """NOT EXISTS (
    SELECT 1 FROM responses x LEFT JOIN scores c ON c.response_id = x.id
    WHERE x.run_id = f.run_id AND x.sample_id = f.sample_id
      AND ((f.stage IN ('prepare', 'generate') AND x.created_at >= f.created_at)
           OR (f.stage = 'score:' || c.metric AND c.created_at >= f.created_at)))"""


class Runs(Database):
    """Runs, their responses and failures: written by ``pipelines.running`` and ``pipelines.importing``."""

    def add_runs_and_responses(self, runs: Sequence[Run], responses: Sequence[Response],
                               created_at: dict[str, str] | None = None) -> tuple[int, int]:
        """Run manifests and their responses in ONE transaction; returns (new runs, new responses).

        Runs and responses already stored (same id) are left as they are. ``created_at``
        (response id -> timestamp text) keeps the original times of exported responses.
        """
        times = created_at or {}
        rows = [{"id": r.id, "run_id": r.run_id, "sample_id": r.sample_id, "text": r.text,
                 "signals": dumps(r.signals), "created_at": times.get(r.id)} for r in responses]
        schema = pa.schema([("id", pa.string()), ("run_id", pa.string()), ("sample_id", pa.string()),
                            ("text", pa.string()), ("signals", pa.string()), ("created_at", pa.string())])

        def write(cur: duckdb.DuckDBPyConnection) -> tuple[int, int]:
            new_runs = sum(self._insert_run(cur, run) for run in runs)
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

    def add_run(self, run: Run) -> bool:
        """Record a run's manifest; returns False when a run with that id already exists."""
        return self._write(lambda cur: self._insert_run(cur, run))

    @staticmethod
    def _insert_run(cur: duckdb.DuckDBPyConnection, run: Run) -> bool:
        """Insert a run's manifest unless a run with its id is stored (the first manifest stays); True when new."""
        if cur.execute("SELECT count(*) FROM runs WHERE id = ?", [run.id]).fetchall()[0][0]:
            return False
        cur.execute(
            "INSERT INTO runs (id, benchmark, model, backend, checkpoint, prompt, generation, mitigation, seed, "
            "tool_version, synthetic, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [run.id, run.benchmark, run.model, run.backend, run.checkpoint, run.prompt, dumps(run.generation),
             run.mitigation, run.seed, run.tool_version, run.synthetic, dumps(run.meta)])
        return True

    def set_run_status(self, run_id: str, status: str) -> None:
        self._write(lambda cur: cur.execute("UPDATE runs SET status = ? WHERE id = ?", [status, run_id]))

    @staticmethod
    def _run_from_row(r: dict[str, Any]) -> Run:
        return Run(id=r["id"], benchmark=r["benchmark"], model=r["model"], backend=r["backend"],
                   checkpoint=r["checkpoint"] or "", prompt=r["prompt"] or "", generation=loads(r["generation"], {}),
                   mitigation=r["mitigation"] or "none", seed=int(r["seed"] or 0), tool_version=r["tool_version"] or "",
                   synthetic=bool(r["synthetic"]), meta=loads(r["meta"], {}))

    def get_run(self, run_id: str) -> Run | None:
        rows = self._dicts("SELECT * FROM runs WHERE id = ?", [run_id])
        return self._run_from_row(rows[0]) if rows else None

    def run_manifests(self, benchmark: str | None = None) -> list[Run]:
        """Every run's manifest (no counts: cheap), for naming runs (``presentation.run_names``)."""
        where, params = (" WHERE benchmark = ?", [benchmark]) if benchmark is not None else ("", [])
        return [self._run_from_row(r) for r in self._dicts(f"SELECT * FROM runs{where} ORDER BY created_at, id", params)]

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
                 "signals": dumps(r.signals)} for r in responses]
        return self._write(lambda cur: self._bulk_insert(cur, "responses", rows, self._RESPONSE_SCHEMA))

    def add_failure(self, run_id: str, sample_id: str | None, stage: str, error: str) -> None:
        self._write(lambda cur: self._insert_failure(cur, run_id, sample_id, stage, error))

    @staticmethod
    def _insert_failure(cur: duckdb.DuckDBPyConnection, run_id: str | None, sample_id: str | None, stage: str,
                        error: str) -> None:
        cur.execute("INSERT INTO failures (run_id, sample_id, stage, error) VALUES (?, ?, ?, ?)",
                    [run_id, sample_id, stage, error])

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
                        signals=loads(r["signals"], {}), id=r["id"])

    def get_responses(self, response_ids: Sequence[str]) -> dict[str, Response]:
        if not response_ids:
            return {}
        rows = self._dicts("SELECT * FROM responses WHERE id IN (SELECT unnest(?))", [list(response_ids)])
        return {r["id"]: self._response_from_row(r) for r in rows}

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

    def run_ids(self) -> list[str]:
        """Every run's id, sorted (without ``list_runs``' counts)."""
        return [r[0] for r in self._rows("SELECT id FROM runs ORDER BY id")]

    def response_ids(self, run_id: str | None = None, benchmark: str | None = None) -> list[str]:
        """Response ids in a stable order (run, sample), optionally of one run or benchmark."""
        where, params = self._where(("x.run_id", run_id), ("s.benchmark", benchmark))
        sql = "SELECT x.id FROM responses x LEFT JOIN samples s ON s.id = x.sample_id" + where
        return [r[0] for r in self._rows(sql + " ORDER BY x.run_id, x.sample_id", params)]
