"""Export -> re-import -> export gives the same bytes: samples (with images), responses, judgments."""

import json

import duckdb
import pytest
from PIL import Image

from hallu_studio.cli import main
from image_files import encode_image
from hallu_studio.importers.base import ParsedBenchmark
from hallu_studio.model import Benchmark, HumanEvent, Response, Run, Sample, SceneGraph
from hallu_studio.pipelines.exporting import export_table
from hallu_studio.pipelines.importing import import_benchmark
from hallu_studio.store import Store


def _fill(store: Store) -> None:
    red, blue = encode_image(Image.new("RGB", (8, 6), "red")), encode_image(Image.new("RGB", (5, 5), "blue"), "JPEG")
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat", "attributes": ["grey"], "box": [1, 2, 3, 4]},
                                              {"id": "2", "name": "sofa"}],
                                  "relations": [{"subject": "1", "predicate": "on", "object": "2"}],
                                  "regions": ["a cat on a sofa"]})
    samples = [
        Sample(id="toy/a", benchmark="toy", image_key="a", task="mcq", image_sha256=red.sha256, scene_graph=graph,
               question="Where is the cat? A. on B. under", options=["on", "under"], answer="A",
               gold_triplets=[("cat", "on", "sofa")], relation_category="perception", meta={"ü": [1, {"x": None}]}),
        Sample(id="toy/b", benchmark="toy", image_key="b", task="caption", image_sha256=blue.sha256,
               reference_text="A blue square.", domain="sketch", source_kind="synthetic"),
        Sample(id="toy/c", benchmark="toy", image_key="missing", task="yes_no", question="Is it?", answer="no"),
    ]
    import_benchmark(store, ParsedBenchmark(Benchmark("toy", "a toy benchmark", "/somewhere", {"v": 2}), samples,
                                            {red.sha256: red, blue.sha256: blue}))
    run = Run(id=Run.make_id("toy", "m", "transformers", "Describe.", {"max_new_tokens": 8}, "none", 3),
              benchmark="toy", model="m", backend="transformers", prompt="Describe.", generation={"max_new_tokens": 8},
              seed=3, tool_version="0.1.0", meta={"device": "cpu"})
    store.add_run(run)
    store.add_responses([Response(run.id, "toy/a", "On the sofa.", {"entropy": [0.5, 0.25]}),
                         Response(run.id, "toy/b", "A blue\nsquare, \"quoted\".")])
    first = store.append_event(HumanEvent("ann", "rating", Response.make_id(run.id, "toy/a"), 4))
    store.append_event(HumanEvent("ann", "correction", None, {"triplet": ["cat", "on", "sofa"]}, target="triplet:0"))
    store.append_event(HumanEvent("ann", "undo", None, None, undoes=first))


def _export_all(db, folder):
    folder.mkdir()
    with Store(db) as st:
        for table in ("samples", "responses", "judgments"):
            export_table(st, table, "jsonl", folder / f"{table}.jsonl")


def test_export_then_import_round_trips_without_loss(tmp_path):
    with Store(tmp_path / "a.duckdb") as a:
        _fill(a)
    _export_all(tmp_path / "a.duckdb", tmp_path / "a")
    for table in ("samples", "responses", "judgments"):
        status = main(["import", "--format", "jsonl", str(tmp_path / "a" / f"{table}.jsonl"),
                       "--db", str(tmp_path / "b.duckdb")])
        assert status == 0
    _export_all(tmp_path / "b.duckdb", tmp_path / "b")
    for name in ("samples.jsonl", "responses.jsonl", "judgments.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    images_a = sorted(p.name for p in (tmp_path / "a" / "samples.jsonl.images").iterdir())
    assert len(images_a) == 2 and images_a == sorted(p.name for p in (tmp_path / "b" / "samples.jsonl.images").iterdir())
    with Store(tmp_path / "a.duckdb") as a, Store(tmp_path / "b.duckdb") as b:
        for table in ("samples", "responses", "judgments"):
            assert a.export_rows(table) == b.export_rows(table), table
        assert [r["id"] for r in a.list_runs()] == [r["id"] for r in b.list_runs()]
        assert a.get_run(a.list_runs()[0]["id"]) == b.get_run(a.list_runs()[0]["id"])  # the full manifest
        assert a.get_benchmark("toy") == b.get_benchmark("toy")
    # Importing the same files again adds nothing twice.
    for table in ("samples", "responses", "judgments"):
        main(["import", "--format", "jsonl", str(tmp_path / "a" / f"{table}.jsonl"), "--db", str(tmp_path / "b.duckdb")])
    with Store(tmp_path / "b.duckdb") as b:
        assert (b.counts()["samples"], b.counts()["responses"], b.counts()["events"]) == (3, 2, 3)


def test_judgments_imported_into_a_store_with_events_remap_undo_links(tmp_path):
    with Store(tmp_path / "a.duckdb") as a:
        _fill(a)
        export_table(a, "judgments", "jsonl", tmp_path / "j.jsonl")
    with Store(tmp_path / "b.duckdb") as b:
        b.append_event(HumanEvent("other", "note", None, "first"))
    assert main(["import", "--format", "jsonl", str(tmp_path / "j.jsonl"), "--db", str(tmp_path / "b.duckdb")]) == 0
    with Store(tmp_path / "b.duckdb") as b:
        events = b.list_events(annotator="ann")
        assert [e.kind for e in events] == ["rating", "correction", "undo"]
        assert events[2].undoes == events[0].id != 1


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_csv_and_parquet_exports(tmp_path, fmt):
    with Store(tmp_path / "a.duckdb") as a:
        _fill(a)
        for table in ("samples", "responses", "scores", "judgments"):
            report = export_table(a, table, fmt, tmp_path / f"{table}.{fmt}")
            reader = "read_csv_auto" if fmt == "csv" else "read_parquet"
            n = duckdb.sql(f"SELECT count(*) FROM {reader}('{tmp_path / f'{table}.{fmt}'}')").fetchall()[0][0]
            assert n == report.rows == {"samples": 3, "responses": 2, "scores": 0, "judgments": 3}[table]


def test_export_jsonl_lines_are_the_documented_shapes(tmp_path):
    with Store(tmp_path / "a.duckdb") as a:
        _fill(a)
        export_table(a, "samples", "jsonl", tmp_path / "s.jsonl")
        export_table(a, "responses", "jsonl", tmp_path / "r.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert lines[0] == {"benchmark_info": {"name": "toy", "description": "a toy benchmark", "source": "/somewhere",
                                           "meta": {"v": 2}}}
    assert lines[1]["image"].startswith("s.jsonl.images/") and lines[1]["image"].endswith(".png")
    assert lines[2]["image"].endswith(".jpg") and "image" not in lines[3]
    first = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    assert {"sample_id", "model", "response", "run", "signals", "id", "created_at"} <= set(first)
