"""Closing the store while other threads use it: a long read, a write in flight, a scoring job.

DuckDB refuses to close a connection one of whose cursors is busy (``ResourceInUseException: connection is busy with
another call``); ``Store.close`` waits a bounded time for running calls, interrupts the rest, then checkpoints and
closes. Nothing here depends on timing: the slow read runs until it is interrupted, the write waits on an event.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from synthetic_store import SYNTHETIC_CONFIG_KEY, fill_synthetic_store
from hallu_studio.config import Settings
from hallu_studio.metrics.registry import not_applicable_reason
from hallu_studio.pipelines.scoring import score_store
from hallu_studio.store import Store, StoreClosedError

# A cross join of 4e10 rows: minutes of work, so it is still running whenever close comes.
ENDLESS_READ = "SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b"


def _in_thread(fn) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _wait_running(store: Store) -> None:
    for _ in range(600):
        with store._calls:
            if store._running:
                return
            store._calls.wait(0.05)
    raise AssertionError("the call never started")


def test_close_during_a_long_read_interrupts_it_and_closes(tmp_path):
    db = tmp_path / "s.duckdb"
    store = Store(db)
    store.set_meta("kept", "yes")
    thread, outcome = _in_thread(lambda: store._rows(ENDLESS_READ))
    _wait_running(store)
    store.close(wait_s=0.1)
    thread.join(60)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), StoreClosedError), outcome
    assert "closed while this call ran" in str(outcome["error"])
    assert not (tmp_path / "s.duckdb.wal").exists()  # checkpointed
    with pytest.raises(StoreClosedError, match="is closed"):
        store.get_meta("kept")  # a call after close gets a clear error
    store.close()  # twice is fine
    with Store(db) as again:
        assert again.get_meta("kept") == "yes"


def test_close_lets_a_write_in_flight_finish_and_refuses_new_calls_meanwhile(tmp_path):
    db = tmp_path / "s.duckdb"
    store = Store(db)
    inside, release = threading.Event(), threading.Event()

    def slow_write(cur):
        cur.execute("INSERT OR REPLACE INTO meta VALUES ('written', 'whole')")
        inside.set()
        assert release.wait(60)
        return "committed"
    writer, written = _in_thread(lambda: store._write(slow_write))
    assert inside.wait(60)
    closer, closed = _in_thread(lambda: store.close(wait_s=60))
    for _ in range(600):  # close has begun once new calls are refused
        if store._closing:
            break
        threading.Event().wait(0.01)
    with pytest.raises(StoreClosedError):
        store.get_meta("written")
    release.set()
    writer.join(60)
    closer.join(60)
    assert written == {"value": "committed"} and "error" not in closed
    with Store(db) as again:
        assert again.get_meta("written") == "whole"


def test_an_interrupted_write_leaves_nothing_half_written(tmp_path):
    db = tmp_path / "s.duckdb"
    store = Store(db)

    def write_then_read_forever(cur):
        cur.execute("INSERT OR REPLACE INTO meta VALUES ('half', 'written')")
        return cur.execute(ENDLESS_READ).fetchall()
    thread, outcome = _in_thread(lambda: store._write(write_then_read_forever))
    _wait_running(store)
    store.close(wait_s=0.1)
    thread.join(60)
    assert isinstance(outcome.get("error"), StoreClosedError), outcome
    with Store(db) as again:
        assert again.get_meta("half") is None  # its transaction rolled back whole


def test_close_during_a_scoring_job_keeps_whole_batches_and_a_restart_finishes(tmp_path):
    db = tmp_path / "score.duckdb"
    metrics = ["chair", "edit"]
    store = Store(db)
    fill_synthetic_store(store, n_samples=30, models=("probe-a",))
    applicable = {m: {rid for rid in store.response_ids() if not_applicable_reason(
        m, store.get_sample(store.get_response(rid).sample_id)) is None} for m in metrics}
    first_batch = threading.Event()
    thread, outcome = _in_thread(lambda: score_store(
        store, Settings(), metrics, progress=False, batch_size=1, on_progress=lambda done, total: first_batch.set()))
    assert first_batch.wait(120), outcome
    store.close(wait_s=0.0)  # interrupt at once: whatever batch is being written is cut
    thread.join(120)
    assert not thread.is_alive()
    # the job either finished before the close or stopped with the store's own error, never DuckDB's
    assert "error" not in outcome or isinstance(outcome["error"], StoreClosedError), outcome

    with Store(db) as again:
        rows = [(s.response_id, s.metric) for _, s in again.iter_scores() if s.config_key != SYNTHETIC_CONFIG_KEY]
        assert len(rows) == len(set(rows))
        by_response = Counter(rid for rid, m in rows if m in metrics)
        assert by_response, "the first batch was committed before the close"
        for rid, n in by_response.items():
            wanted = sum(rid in applicable[m] for m in metrics)
            assert n == wanted, f"{rid} is half-written: {n} of {wanted} metric scores"
        score_store(again, Settings(), metrics, progress=False, batch_size=16)
        after = {(s.response_id, s.metric) for _, s in again.iter_scores() if s.config_key != SYNTHETIC_CONFIG_KEY}
        for metric in metrics:
            assert {rid for rid, m in after if m == metric} == applicable[metric]


def test_an_app_job_cut_by_the_closing_store_ends_cancelled_not_failed(tmp_path):
    from hallu_studio.app.jobs import CANCELLED, JobQueue

    store = Store(tmp_path / "s.duckdb")
    jobs = JobQueue()
    job = jobs.submit("endless read", lambda cancel, progress: store._rows(ENDLESS_READ))
    _wait_running(store)
    store.close(wait_s=0.0)
    done = jobs.wait(job.id, timeout=60)
    jobs.shutdown(timeout=10)
    assert done.status == CANCELLED and "the store was closed" in done.message, (done.status, done.message)
