"""Scores: each metric's per-response values and evidence under a config key, and their per-item statistics."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import duckdb
import pyarrow as pa

from ..model import Response, Score
from .connection import Database, StoreError, dumps, loads
from .runs import Runs


class Scores(Database):
    """Machine scores (``scores``) and the per-item statistics leaderboards aggregate (``score_stats``):
    written by ``pipelines.scoring``."""

    _SCORE_SCHEMA = pa.schema([("response_id", pa.string()), ("metric", pa.string()), ("config_key", pa.string()),
                               ("values", pa.string()), ("evidence", pa.string()),
                               ("undefined_reason", pa.string())])
    _SCORE_UPSERT = ('(response_id, metric, config_key) DO UPDATE SET "values" = excluded."values", '
                     "evidence = excluded.evidence, undefined_reason = excluded.undefined_reason")

    def put_scores(self, scores: Iterable[Score]) -> int:
        """Store machine scores; a re-computation under the same config replaces the old row."""
        rows = [self._score_row(s) for s in scores]
        return self._write(lambda cur: self._upsert_scores(cur, rows) or len(rows))

    def _upsert_scores(self, cur: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> int:
        """Insert score rows; a score under the same (response, metric, config) is replaced. Returns how many
        rows are new."""
        return self._bulk_insert(cur, "scores", rows, self._SCORE_SCHEMA, self._SCORE_UPSERT)

    @staticmethod
    def _score_row(s: Score) -> dict[str, Any]:
        return {"response_id": s.response_id, "metric": s.metric, "config_key": s.config_key,
                "values": dumps(s.values), "evidence": dumps(s.evidence), "undefined_reason": s.undefined_reason}

    @staticmethod
    def _score_from_row(r: dict[str, Any]) -> Score:
        return Score(response_id=r["response_id"], metric=r["metric"], config_key=r["config_key"],
                     values=loads(r["values"], {}), evidence=loads(r["evidence"], {}),
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
        score_rows = [self._score_row(s) for s in scores]
        stat_rows = [{"response_id": s.response_id, "metric": s.metric, "config_key": s.config_key,
                      "stats": dumps(st)} for s, st in zip(scores, stats) if st is not None]
        failure_rows = list(failures)

        def write(cur: duckdb.DuckDBPyConnection) -> int:
            self._upsert_scores(cur, score_rows)
            self._bulk_insert(cur, "score_stats", stat_rows, self._STATS_SCHEMA,
                              "(response_id, metric, config_key) DO UPDATE SET stats = excluded.stats")
            for run_id, sample_id, stage, error in failure_rows:
                Runs._insert_failure(cur, run_id, sample_id, stage, error)
            return len(score_rows)
        return self._write(write)

    def score_stat_rows(self, metric: str | None = None, *, benchmark: str | None = None,
                        run_id: str | None = None) -> list[dict[str, Any]]:
        """Per scored response: its run, model, sample, image and domain, with the score's values and stats.

        ``cluster`` is the sample's ``meta["cluster"]`` (None for most): a unit larger than one image that the
        bootstrap resamples whole (HallusionBench's set of figures, which its fAcc and qAcc group by).

        The leaderboard and the studies aggregate these; ``stats`` is None for scores
        written without statistics (imported ones, say).
        """
        sql = """SELECT c.response_id, c.metric, c.config_key, c."values", c.undefined_reason, t.stats,
                        x.run_id, x.sample_id, r.model, coalesce(r.synthetic, false) AS synthetic,
                        s.benchmark, s.domain, s.task, s.image_key,
                        json_extract_string(s.meta, '$.cluster') AS cluster
                 FROM scores c JOIN responses x ON x.id = c.response_id
                 LEFT JOIN score_stats t ON t.response_id = c.response_id AND t.metric = c.metric
                      AND t.config_key = c.config_key
                 LEFT JOIN runs r ON r.id = x.run_id LEFT JOIN samples s ON s.id = x.sample_id"""
        where, params = self._where(("c.metric", metric), ("s.benchmark", benchmark), ("x.run_id", run_id))
        rows = self._dicts(sql + where + " ORDER BY x.run_id, x.sample_id, c.metric", params)
        for r in rows:
            r["values"] = loads(r["values"], {})
            r["stats"] = loads(r["stats"])
        return rows

    def iter_scores(self, metric: str | None = None, *, run_id: str | None = None,
                    with_evidence: bool = False) -> Iterator[tuple[Response, Score]]:
        """Scores joined with their responses (evidence left out unless asked: it is large)."""
        ev = "c.evidence" if with_evidence else "NULL AS evidence"
        sql = (f'SELECT x.id, x.run_id, x.sample_id, x.text, x.signals, c.response_id, c.metric, c.config_key, '
               f'c."values", {ev}, c.undefined_reason FROM scores c JOIN responses x ON x.id = c.response_id')
        where, params = self._where(("c.metric", metric), ("x.run_id", run_id))
        for r in self._dicts(sql + where + " ORDER BY x.run_id, x.sample_id, c.metric", params):
            yield Runs._response_from_row(r), self._score_from_row(r)

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
        """Each metric's configurations in the store: config key, how many scores, when last computed, and what
        the key was made of (``config``; None for scores written before the store kept it)."""
        rows = self._dicts("""SELECT s.metric, s.config_key, count(*) AS scores,
                                     max(s.created_at)::VARCHAR AS computed_at, any_value(c.config) AS config
                              FROM scores s LEFT JOIN configs c USING (metric, config_key)
                              GROUP BY s.metric, s.config_key ORDER BY s.metric, computed_at DESC""")
        for r in rows:
            r["config"] = loads(r["config"], None)
        return rows

    def describe_configs(self, configs: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Keep what each ``(metric, config_key)`` was made of; a key already described stays as it is (a key
        is a hash of its configuration, so the two are the same)."""
        rows = [[metric, key, dumps(config)] for (metric, key), config in configs.items()]
        if rows:
            self._write(lambda cur: cur.executemany(
                "INSERT INTO configs VALUES (?, ?, ?) ON CONFLICT (metric, config_key) DO NOTHING", rows))
