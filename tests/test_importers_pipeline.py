"""Writing parsed imports to the store: one transaction, nothing twice."""

import pyarrow
import pytest

from hallu_studio.importers.base import ImportProblem, ParsedBenchmark, ParsedResponses
from image_files import encode_image
from hallu_studio.model import Benchmark, Response, Run, Sample
from hallu_studio.pipelines.importing import import_benchmark, import_responses
from hallu_studio.store import Store


def _parsed() -> ParsedBenchmark:
    from PIL import Image

    img = encode_image(Image.new("RGB", (6, 4), "green"))
    samples = [Sample(id=f"toy/{i}", benchmark="toy", image_key=str(i % 2), task="yes_no", question="Is it green?",
                      answer="yes", image_sha256=img.sha256 if i % 2 == 0 else None) for i in range(4)]
    return ParsedBenchmark(Benchmark("toy", "a toy"), samples, {img.sha256: img},
                           [ImportProblem("toy image 1", "not found", fatal=False)])


def test_import_reports_counts_and_reimport_adds_nothing_twice(store):
    first = import_benchmark(store, _parsed())
    assert (first.records, first.added, first.already_present, first.images, first.images_found) == (4, 4, 0, 2, 1)
    assert first.ok and first.summary() == ("toy: 2 images (1 found), 4 questions; 4 added, 0 already present; "
                                            "0 problems (+1 warnings)")
    again = import_benchmark(store, _parsed())
    assert (again.added, again.already_present) == (0, 4)
    assert store.counts()["samples"] == 4 and store.counts()["images"] == 1
    sample = store.get_sample("toy/0")
    assert store.get_image(sample.image_sha256)[1] == "image/png"


def test_a_crash_mid_import_leaves_the_store_unchanged(store, monkeypatch):
    import_benchmark(store, ParsedBenchmark(Benchmark("other"), [Sample(id="other/1", benchmark="other",
                                                                        image_key="1")]))
    before = store.counts()
    calls = []
    original = Store._bulk_insert

    def failing(cur, table, rows, schema, on_conflict="DO NOTHING"):
        calls.append(table)
        if table == "samples":  # images and scene graphs are already written in this transaction
            raise RuntimeError("disk full")
        return original(cur, table, rows, schema, on_conflict)

    monkeypatch.setattr(Store, "_bulk_insert", staticmethod(failing))
    with pytest.raises(RuntimeError, match="disk full"):
        import_benchmark(store, _parsed())
    assert calls == ["images", "scene_graphs", "samples"]
    monkeypatch.undo()
    assert store.counts() == before and store.get_benchmark("toy") is None


def test_recorded_responses_in_one_transaction_and_idempotent(store, monkeypatch):
    import_benchmark(store, _parsed())
    run = Run(id="run-x", benchmark="toy", model="m", backend="recorded")
    parsed = ParsedResponses([run], [Response("run-x", "toy/0", "yes"), Response("run-x", "toy/1", "no")])
    report = import_responses(store, parsed)
    assert (report.runs_added, report.added, report.already_present) == (1, 2, 0)
    assert import_responses(store, parsed).added == 0
    assert store.get_run("run-x") == run

    def boom(*args, **kwargs):
        raise RuntimeError("crash")

    bad = ParsedResponses([Run(id="run-y", benchmark="toy", model="n", backend="recorded")],
                          [Response("run-y", "toy/0", "maybe")])
    class ArrowFailingOnTables:  # the run is inserted first, then the responses' Arrow table fails
        Table = type("Table", (), {"from_pylist": staticmethod(boom)})

        def __getattr__(self, name):
            return getattr(pyarrow, name)

    monkeypatch.setattr("hallu_studio.store.runs.pa", ArrowFailingOnTables())
    with pytest.raises(RuntimeError):
        import_responses(store, bad)
    monkeypatch.undo()
    assert store.get_run("run-y") is None and store.count_responses() == 2
