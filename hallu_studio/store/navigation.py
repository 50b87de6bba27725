"""Views and navigation, what the app reads: saved views, Browse's filtered response table, Inspect's steps
through the responses, why a cell is empty, the filters' choices."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from .connection import StoreError, dumps
from .events import HumanEvents


class Navigation(HumanEvents):
    """Saved views (versioned like events: the latest save of a name wins) and the app's Browse / Inspect
    queries. Browse's "annotated" reads the events in force (``HumanEvents.EVENTS_IN_FORCE``)."""

    def save_view(self, name: str, filters: dict[str, Any], author: str) -> None:
        """Saved views are versioned like events: a new save adds a row, the latest wins."""
        self._write(lambda cur: cur.execute("INSERT INTO views (name, filters, author) VALUES (?, ?, ?)",
                                            [name, dumps(filters), author]))

    def get_view(self, name: str) -> dict[str, Any] | None:
        text = self._scalar("SELECT filters FROM views WHERE name = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                            [name])
        return None if text is None else json.loads(text)

    def list_views(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT DISTINCT name FROM views ORDER BY name")]

    _COLUMN_NAME = re.compile(r"^[a-z_]+\.[a-z_]+$")
    _BROWSE_ORDER = {"model", "benchmark", "domain", "task", "sample_id", "length", "annotated"}

    def _browse_sql(self, filters: dict[str, Any], metric_columns: Sequence[str],
                    configs: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """The browse query: one row per response, one column per ``"metric.value_key"``.

        ``configs`` (``{metric: config key}``): each column reads its metric's scores under that configuration
        only; a metric it does not name (or None: every metric) averages its scores under every configuration
        in the column. Two per-response flags, not the triplet disagreement Annotate's queue counts
        (``annotation.triplet_disagreement_counts``): ``judges_differ``, Tri-HE's configurations give the
        response different hallucinated-claim counts; ``human_differs``, a correction in force (each annotator's
        latest on a triplet) gives another verdict than a Tri-HE score (of any configuration) gives the triplet at
        that position.
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
            live AS ({self.EVENTS_IN_FORCE}),
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
        params.append(self._undone_ids())
        where, more = self._browse_where(filters, metric_columns)
        if where:
            sql += " WHERE " + " AND ".join(where)
        return sql, params + more

    @staticmethod
    def _browse_where(filters: dict[str, Any], metric_columns: Sequence[str]) -> tuple[list[str], list[Any]]:
        """The browse query's conditions (over its aliases ``x``, ``s``, ``r``, ``m``, ``a``, ``h``) and parameters."""
        where: list[str] = []
        params: list[Any] = []
        for key, col in (("models", "r.model"), ("benchmarks", "s.benchmark"), ("domains", "s.domain"),
                         ("tasks", "s.task"), ("runs", "x.run_id"), ("ids", "x.id")):
            values = filters.get(key)
            if key == "ids" and values is not None and not list(values):
                where.append("false")  # an empty choice of responses keeps none (an empty facet: no filter)
            elif values:
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
        return where, params

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

        ``filters``: ``models / benchmarks / domains / tasks / runs / ids`` (lists; ``ids``: response ids a caller
        chose by a test the store cannot run, such as people's and judges' calls), ``ranges``
        (``{column: [low, high]}``, either end None), ``annotated`` (bool: a rating or correction in force),
        ``disagreement`` (``"judges"``: judges_differ, or ``"judge_human"``: human_differs; see ``_browse_sql``),
        ``text`` (substring). ``configs``: see ``_browse_sql``.
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

    def responses_to_sample(self, sample_id: str) -> list[dict[str, Any]]:
        """Every response to one sample with its run's model (to put two models side by side)."""
        return self._dicts("""SELECT x.id, x.run_id, r.model, coalesce(r.synthetic, false) AS synthetic
                              FROM responses x LEFT JOIN runs r ON r.id = x.run_id
                              WHERE x.sample_id = ? ORDER BY r.model, x.run_id""", [sample_id])

    # ----------------------------------------------------------------- summary & export
