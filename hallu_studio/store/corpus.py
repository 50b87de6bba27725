"""The corpus: benchmarks, their samples, images and scene graphs, as the importers bring them in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import duckdb
import pyarrow as pa

from ..model import Benchmark, Sample, SceneGraph, canonical_json
from .connection import Database, dumps, loads


@dataclass
class BenchmarkInfo:
    name: str
    description: str
    source: str
    images: int
    images_found: int
    samples: int
    tasks: dict[str, int]


class Corpus(Database):
    """Benchmarks and their samples (with images and scene graphs): written by ``pipelines.importing``."""

    def get_benchmark(self, name: str) -> Benchmark | None:
        rows = self._dicts("SELECT name, description, source, meta FROM benchmarks WHERE name = ?", [name])
        if not rows:
            return None
        r = rows[0]
        return Benchmark(r["name"], r["description"] or "", r["source"] or "", loads(r["meta"], {}))

    _SAMPLE_SCHEMA = pa.schema([(n, pa.string()) for n in (
        "id", "benchmark", "image_key", "image_sha256", "task", "domain", "source_kind", "scene_graph_key",
        "question", "options", "answer", "gold_triplets", "relation_category", "reference_text", "meta",
        "reference_texts", "reference_objects", "reference_vocabulary", "reference_kind")])
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
                "question": s.question, "options": dumps(s.options), "answer": s.answer,
                "gold_triplets": dumps([list(t) for t in s.gold_triplets]),
                "relation_category": s.relation_category,
                # One caption keeps the column it always had; several go to their own (a JSON list).
                "reference_text": s.reference_text if isinstance(s.reference_text, str) else None,
                "reference_texts": dumps(s.reference_text) if isinstance(s.reference_text, list) else None,
                "reference_objects": dumps(s.reference_objects), "reference_vocabulary": dumps(s.reference_vocabulary),
                "reference_kind": s.reference_kind,
                "meta": dumps(s.meta)})
        image_rows = [{"sha256": sha, "mime": mime, "width": w, "height": h, "data": data}
                      for sha, mime, w, h, data in images]
        graph_rows = [{"key": k, "graph": v} for k, v in graphs.items()]

        def write(cur: duckdb.DuckDBPyConnection) -> int:
            cur.execute(
                "INSERT INTO benchmarks (name, description, source, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET description = excluded.description, source = excluded.source",
                [benchmark.name, benchmark.description, benchmark.source, dumps(benchmark.meta)])
            # Several samples share one image: de-duplicate before the insert, the
            # primary key rejects duplicates inside one statement.
            seen: set[str] = set()
            unique_images = [r for r in image_rows if not (r["sha256"] in seen or seen.add(r["sha256"]))]
            self._bulk_insert(cur, "images", unique_images, self._IMAGE_SCHEMA)
            self._bulk_insert(cur, "scene_graphs", graph_rows, self._GRAPH_SCHEMA)
            return self._bulk_insert(cur, "samples", sample_rows, self._SAMPLE_SCHEMA)

        return self._write(write)

    def get_image(self, sha256: str) -> tuple[bytes, str] | None:
        rows = self._rows("SELECT data, mime FROM images WHERE sha256 = ?", [sha256])
        return (bytes(rows[0][0]), rows[0][1]) if rows else None

    _SAMPLE_SELECT = """SELECT s.*, g.graph FROM samples s LEFT JOIN scene_graphs g ON g.key = s.scene_graph_key"""

    @staticmethod
    def _sample_from_row(r: dict[str, Any]) -> Sample:
        return Sample(
            id=r["id"], benchmark=r["benchmark"], image_key=r["image_key"], image_sha256=r["image_sha256"],
            task=r["task"], domain=r["domain"], source_kind=r["source_kind"],
            scene_graph=SceneGraph.from_dict(loads(r["graph"])), question=r["question"],
            options=loads(r["options"], []), answer=r["answer"],
            gold_triplets=[tuple(t) for t in loads(r["gold_triplets"], [])],
            relation_category=r["relation_category"],
            reference_text=loads(r["reference_texts"]) if r.get("reference_texts") else r["reference_text"],
            reference_objects=loads(r.get("reference_objects")),
            reference_vocabulary=loads(r.get("reference_vocabulary")), reference_kind=r.get("reference_kind") or "captions",
            meta=loads(r["meta"], {}))

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

    def sample_ids(self, benchmark: str | None = None) -> set[str]:
        """Ids of the stored samples (of one benchmark): what recorded responses are matched against."""
        if benchmark is None:
            return {r[0] for r in self._rows("SELECT id FROM samples")}
        return {r[0] for r in self._rows("SELECT id FROM samples WHERE benchmark = ?", [benchmark])}

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

    def benchmark_names(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT name FROM benchmarks ORDER BY 1")]
