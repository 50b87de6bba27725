"""Kill -9 in the middle of a CLI run, restart: nothing finished is lost and nothing is duplicated."""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from tiny_models import tiny_benchmark
from hallu_studio.store import Store

pytestmark = [pytest.mark.slow]


def _cli(db, *extra):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "hallu_studio", "run", "--db", str(db), "--benchmark", "tiny",
                             "--model", "probe:rate=0.3,seed=4,delay_ms=150", "--batch-size", "2", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def test_kill_dash_nine_then_resume(tmp_path):
    db = tmp_path / "run.duckdb"
    bench, samples, images = tiny_benchmark(n_images=3)
    with Store(db) as st:
        st.add_samples(bench, samples, images)

    proc = _cli(db)
    progress = []

    def read_progress():
        buf = b""
        while True:
            ch = proc.stderr.read(1)
            if not ch:
                return
            buf += ch
            for m in re.finditer(rb"(\d+)/%d" % len(samples), buf[-200:]):
                progress.append(int(m.group(1)))

    reader = threading.Thread(target=read_progress, daemon=True)
    reader.start()
    deadline = time.time() + 60
    while (not progress or progress[-1] < 4) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.01)
    shown = progress[-1] if progress else 0
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert 4 <= shown < len(samples), "the run must be killed part-way"

    with Store(db) as st:
        run_id = st.list_runs()[0]["id"]
        before = {r.sample_id: r.text for r in st.iter_responses(run_id)}
        assert st.list_runs()[0]["status"] == "running"  # killed: never marked finished
    assert len(before) >= shown  # every item the progress bar counted was already committed

    proc = _cli(db, "--quiet")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    line = out.decode().strip().splitlines()[-1]
    assert f"{len(samples) - len(before)} done" in line and f"{len(before)} skipped" in line

    with Store(db) as st:
        after = list(st.iter_responses(run_id))
        assert len(after) == len(samples) == len({r.sample_id for r in after})
        assert all(before[r.sample_id] == r.text for r in after if r.sample_id in before)
        assert st.list_runs()[0]["status"] == "completed"
