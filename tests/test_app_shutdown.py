"""Stopping the app (SIGTERM or SIGINT) checkpoints the store: the ``.duckdb`` file alone then holds every
human event and score, with no ``.wal`` left beside it, so it can be copied or mailed as it is."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import free_port, interruptible

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
# Fills a store and ends without closing it: everything it wrote is still in the write-ahead log.
PREPARE = """
import os, sys
from synthetic_store import fill_synthetic_store
from hallu_studio.model import HumanEvent
from hallu_studio.store import Store
store = Store(sys.argv[1])
ids = fill_synthetic_store(store, n_samples=6)
store.append_event(HumanEvent("earlier", "rating", ids[0], 2))
print(store.counts()["scores"], store.counts()["events"], ",".join(ids), flush=True)
os._exit(0)
"""


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stopping_the_app_leaves_every_event_and_score_in_the_duckdb_file_alone(tmp_path, stop):
    gradio_client = pytest.importorskip("gradio_client")
    db = tmp_path / "live" / "s.duckdb"
    db.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
           "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    made = subprocess.run([sys.executable, "-c", PREPARE, str(db)], env=env, capture_output=True, text=True,
                          check=True).stdout.split()
    scores, events, ids = int(made[0]), int(made[1]), made[2].split(",")
    assert (db.parent / "s.duckdb.wal").exists(), "the scores should start out in the write-ahead log"

    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--db", str(db), "--port", str(port),
                             "--no-bootstrap"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=interruptible)
    try:
        start = time.monotonic()
        while True:
            assert proc.poll() is None, f"the app exited: {proc.stdout.read()[-2000:]}"
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.3)
            assert time.monotonic() - start < 300, "the app did not open within 5 minutes"
        client = gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False)
        for value, rid in zip((1, 3, 5), ids):
            client.predict(rid, value, "ann", api_name="/rate")
        client.predict(ids[1], "a note written just before the stop", "ann", api_name="/note")
        proc.send_signal(stop)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, output[-2000:]
    assert "stopped; the store" in output and "Traceback" not in output, output[-2000:]
    assert not (db.parent / "s.duckdb.wal").exists(), "a write-ahead log was left beside the store"

    copy = tmp_path / "copy" / "s.duckdb"
    copy.parent.mkdir()
    shutil.copyfile(db, copy)  # the file alone
    from hallu_studio.store import Store

    with Store(copy, read_only=True) as st:
        assert st.counts()["scores"] == scores
        written = [(e.annotator, e.kind, e.response_id, e.value) for e in st.list_events()]
    assert len(written) == events + 4
    assert written[-4:] == [("ann", "rating", ids[0], 1), ("ann", "rating", ids[1], 3), ("ann", "rating", ids[2], 5),
                            ("ann", "note", ids[1], {"text": "a note written just before the stop"})]
