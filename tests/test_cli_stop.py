"""``score`` stopped by SIGTERM or SIGINT ends with one clear line and a checkpointed store: every finished batch
stays, nothing is left beside the ``.duckdb`` file, and the same command resumes. (SIGTERM used to end the
process at once, with no ``finally`` run and the store's write-ahead log left beside it.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import interruptible
from synthetic_store import fill_synthetic_store

from hallu_studio.store import Store

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("stop,status,workers", [(signal.SIGTERM, 143, "2"), (signal.SIGINT, 130, "1")],
                         ids=["SIGTERM, two worker processes", "SIGINT, in-process"])
def test_score_stopped_mid_run_ends_in_one_line_with_the_store_saved(tmp_path, stop, status, workers):
    db = tmp_path / "store" / "s.duckdb"
    db.parent.mkdir()
    with Store(db) as store:
        fill_synthetic_store(store, n_samples=12)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-u", "-m", "hallu_studio", "score", "--db", str(db), "--metrics",
                             "emd,halfscore", "--batch-size", "1", "--workers", workers], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=interruptible)
    seen = ""
    try:
        start = time.monotonic()
        while "scoring" not in seen:  # the progress bar: the store is open and scoring has begun
            line = proc.stdout.readline()
            assert line, f"score ended before it began scoring: {seen[-2000:]}"
            seen += line
            assert time.monotonic() - start < 240
        proc.send_signal(stop)
        rest, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = seen + rest
    assert proc.returncode == status, output[-2000:]
    assert f"interrupted ({signal.Signals(stop).name}): what finished before is saved" in output, output[-2000:]
    assert "Traceback" not in output and "terminate called" not in output, output[-2000:]
    assert sorted(p.name for p in db.parent.iterdir()) == ["s.duckdb"], "a .wal was left beside the store"
    with Store(db, read_only=True) as store:
        scored = {r.id for r, _ in store.iter_scores("emd")}
        assert scored <= set(store.response_ids())
