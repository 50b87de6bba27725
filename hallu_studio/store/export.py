"""Export: the store's tables as the exporters write them (JSON lines, CSV, Parquet), and its row counts."""

from __future__ import annotations

import json
from typing import Any

from .connection import Database, StoreError


class Export(Database):
    """What ``pipelines.exporting`` and ``hallu-studio export`` write: one query per export table."""

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
                             s.reference_vocabulary, s.reference_kind, s.meta
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
        with self._using() as cur:
            cur.execute(f"COPY ({self.EXPORT_QUERIES[table]}) TO '{path.replace(chr(39), chr(39) * 2)}' ({options})")
