"""A stop (SIGTERM or SIGINT) at any moment of the app's life ends it with status 0 and the store checkpointed:
while the first start imports the sample, while the probe models run, while the demo is scored in the
background (idle: ``test_app_shutdown.py``). Before, a stop during background scoring aborted the process ("terminate called
without an active exception", status 134): the scoring thread was still inside torch when the interpreter
finalized.

One store goes through the phases in turn (each start resumes the interrupted first start), so the test
also checks that what a stop leaves behind is a store the next start takes up.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from reliability_helpers import free_port, interruptible

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 240  # per start, on a busy 2-core machine


class App:
    """``app.py`` in a subprocess, its output collected line by line as it comes."""

    def __init__(self, db: Path, env: dict[str, str], *extra: str) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-u", str(ROOT / "app.py"), "--db", str(db), "--port",
                                      str(self.port), *extra], cwd=db.parent, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, preexec_fn=interruptible)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str, times: int = 1) -> None:
        start = time.monotonic()
        try:
            while self.output().count(text) < times:
                assert self.proc.poll() is None, f"the app exited before {text!r}: {self.output()[-3000:]}"
                assert time.monotonic() - start < LIMIT_S, f"no {text!r} within {LIMIT_S} s: {self.output()[-3000:]}"
                time.sleep(0.1)
        except AssertionError:
            if self.proc.poll() is None:  # a failed wait leaves no app running behind the suite
                self.proc.kill()
                self.proc.wait()
            raise

    def stop(self, signum: int) -> tuple[int, str]:
        self.proc.send_signal(signum)
        sent = time.monotonic()
        try:
            code = self.proc.wait(timeout=120)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(10)
        print(f"stopped {time.monotonic() - sent:.1f} s after the signal")
        return code, self.output()


def _check_stopped(code: int, output: str, db: Path) -> dict[str, int]:
    assert code == 0, f"exit status {code}: {output[-3000:]}"
    assert "terminate called" not in output and "Traceback" not in output, output[-3000:]
    assert f"stopped; the store {db} is saved" in output, output[-3000:]
    assert sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name)) == [db.name], \
        "something (a .wal) was left beside the store"
    from hallu_studio.app.bootstrap import DEMO_STATE_KEY
    from hallu_studio.store import Store

    with Store(db, read_only=True) as store:
        counts = store.counts()
        assert store.get_meta(DEMO_STATE_KEY) == "started", "a stopped first start must resume on the next one"
        assert counts["samples"] in (0, 1096), "the sample is imported in one transaction: all or nothing"
        for run in store.list_runs():  # each probe run holds whole chunks, never more than the benchmark
            assert store.count_responses(run["id"]) <= counts["samples"]
        scored = {response.id for response, _ in store.iter_scores()}
        assert scored <= set(store.response_ids()), "a score for a response the store does not hold"
    return counts


def test_a_stop_in_every_phase_ends_with_status_0_and_a_store_the_next_start_resumes(tmp_path):
    db = tmp_path / "store" / "s.duckdb"
    db.parent.mkdir()
    # Small scoring batches: a stop waits for the batch in progress, and the test for the stop.
    (tmp_path / "settings.toml").write_text("[scoring]\nbatch_size = 8\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
           "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "HALLU_STUDIO_CONFIG": str(tmp_path / "settings.toml")}

    # 1. importing the sample benchmark (the main thread renders images; the scoring libraries load beside it)
    app = App(db, env)
    app.wait_for("first start: building the offline demo")
    code, output = app.stop(signal.SIGTERM)
    _check_stopped(code, output, db)

    # 2. running the probe models, in the background behind the opening app
    app = App(db, env)
    app.wait_for("running the probe models [synthetic] and scoring in the background")
    code, output = app.stop(signal.SIGTERM)
    counts = _check_stopped(code, output, db)
    assert counts["samples"] == 1096 and counts["scores"] == 0, counts

    # 3. scoring, in the background, with torch and spaCy at work (the abort this test was written for):
    # the scoring models have loaded (the one embedding model every metric shares: components.Components) and
    # the first slice is under way.
    app = App(db, env)
    app.wait_for("Loading weights: 100%")
    code, output = app.stop(signal.SIGINT)
    counts = _check_stopped(code, output, db)
    assert "stopped early (cancelled)" in output and "stopped with the app" in output, output[-3000:]
    assert counts["responses"] == 4 * 1096, counts
    # Idle (the server up, nothing in the background): tests/test_app_shutdown.py, with both signals.
