import subprocess
import sys
import threading

import pytest

from hallu_studio.model import Benchmark, HumanEvent, Response, Run, Sample, SceneGraph, Score, ValidationError
from hallu_studio.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError, StoreLockedError


def _sample(i: int, bench: str = "b") -> Sample:
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat", "attributes": ["grey"]},
                                              {"id": "2", "name": "mat"}],
                                  "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
    return Sample(id=f"{bench}/{i}", benchmark=bench, image_key=str(i), task="vqa", scene_graph=graph,
                  question="Where is the cat?", answer="on the mat", gold_triplets=[("cat", "on", "mat")])


def test_samples_round_trip_and_reimport_adds_nothing(store):
    assert store.add_samples(Benchmark("b"), [_sample(i) for i in range(3)]) == 3
    assert store.add_samples(Benchmark("b"), [_sample(i) for i in range(3)]) == 0
    got = store.get_sample("b/1")
    assert got == _sample(1)
    assert [s.id for s in store.iter_samples("b")] == ["b/0", "b/1", "b/2"]
    info = store.benchmark_infos()[0]
    assert (info.samples, info.images, info.images_found) == (3, 3, 0)


def test_failed_write_leaves_nothing(store):
    class Boom(Exception):
        pass

    def bad_samples():
        yield _sample(1)
        raise Boom()

    with pytest.raises(Boom):
        store.add_samples(Benchmark("b"), bad_samples())
    assert store.count_samples() == 0


def test_responses_are_keyed_by_run_and_sample(store):
    run = Run(id="r", benchmark="b", model="m", backend="probe")
    assert store.add_run(run) and not store.add_run(run)
    assert store.add_responses([Response("r", "b/1", "a cat")]) == 1
    assert store.add_responses([Response("r", "b/1", "a cat again")]) == 0
    assert store.done_sample_ids("r") == {"b/1"}
    assert store.get_run("r") == run


def test_scores_replace_under_same_config(store):
    store.put_scores([Score("x", "emd", "k", {"total": 1.0})])
    store.put_scores([Score("x", "emd", "k", {"total": 2.0})])
    store.put_scores([Score("x", "emd", "k2", {"total": 3.0})])
    assert sorted(s.values["total"] for s in store.get_scores("x")) == [2.0, 3.0]


def test_events_are_append_only_and_undo_is_an_event(store):
    first = store.append_event(HumanEvent("ann", "rating", "x", 4))
    undo = store.append_event(HumanEvent("ann", "undo", "x", None, undoes=first))
    assert undo > first
    assert [e.kind for e in store.list_events(response_id="x")] == ["rating", "undo"]
    with pytest.raises(StoreError):
        store.append_event(HumanEvent("eve", "undo", "x", None, undoes=first))
    with pytest.raises(ValidationError):
        HumanEvent("ann", "rating", "x", 6)


def test_concurrent_writes_from_threads_lose_nothing(store):
    def rate(worker: int) -> None:
        for i in range(25):
            store.append_event(HumanEvent(f"ann{worker}", "rating", f"r{i}", 1 + i % 5))

    threads = [threading.Thread(target=rate, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = store.list_events()
    assert len(events) == 200
    assert len({e.id for e in events}) == 200


def test_older_file_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.duckdb"
    Store(path, migrate_to=0).close()
    with Store(path) as st:
        assert st.schema_version() == SCHEMA_VERSION == MIGRATIONS[-1][0]


def test_second_process_gets_a_clear_error(tmp_path):
    path = tmp_path / "locked.duckdb"
    with Store(path) as st:
        st.add_samples(Benchmark("b"), [_sample(1)])
        code = ("import sys\nfrom hallu_studio.store import Store, StoreLockedError\n"
                f"try:\n    Store({str(path)!r})\nexcept StoreLockedError as e:\n    print('LOCKED', e); sys.exit(3)\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 3, proc.stderr
        assert "another process" in proc.stdout
        assert st.count_samples() == 1
    with Store(path) as st:
        assert st.count_samples() == 1


def test_saved_views_keep_history(store):
    store.save_view("worst", {"metric": "emd"}, "ann")
    store.save_view("worst", {"metric": "trihe"}, "ann")
    assert store.get_view("worst") == {"metric": "trihe"}
    assert store.list_views() == ["worst"]


def test_a_schema_3_store_gains_the_study_tables_and_keeps_its_events(tmp_path):

    path = tmp_path / "three.duckdb"
    with Store(path, migrate_to=3) as old:
        assert old.schema_version() == 3
        old.append_event(HumanEvent("ann", "rating", "r1", 4))
    with Store(path) as st:
        assert st.schema_version() == SCHEMA_VERSION >= 4
        assert [e.value for e in st.list_events()] == [4]
        st.add_study("pilot", {"name": "pilot", "seed": 3}, ["r2", "r1"], author="ann")
        study = st.get_study("pilot")
        assert (study["items"], study["definition"]["seed"], study["author"]) == (["r2", "r1"], 3, "ann")
        assert [(s["id"], s["items"]) for s in st.list_studies()] == [("pilot", 2)]
        with pytest.raises(StoreError, match="already exists"):
            st.add_study("pilot", {}, [])
        assert st.get_study("nope") is None


def test_closing_checkpoints_so_the_file_alone_holds_everything(tmp_path):
    """After close there is no write-ahead log beside the file: copying the .duckdb alone copies everything."""

    path = tmp_path / "s.duckdb"
    st = Store(path)
    st.append_event(HumanEvent("ann", "rating", "r1", 4))
    assert (tmp_path / "s.duckdb.wal").exists()  # small writes wait in the log
    st.close()
    assert not (tmp_path / "s.duckdb.wal").exists()
    copy = tmp_path / "copy" / "s.duckdb"
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    with Store(copy, read_only=True) as again:
        assert [e.value for e in again.list_events()] == [4]
