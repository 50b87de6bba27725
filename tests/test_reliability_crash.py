"""Crash safety: ``kill -9`` of a scoring run, of a model run and of the app, then restart.

The CLI runs as a subprocess (``python -m hallu_studio``, the ``hallu-studio`` entry point) and is
killed with SIGKILL at a seeded random moment once it has started writing. The store must then
open cleanly and hold only whole batches: no finished item lost, none duplicated, no half-written
row (a response has all its scores of a batch and their statistics, or none). A restart finishes
exactly the rest.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_helpers import free_port, http_status

from synthetic_store import SYNTHETIC_CONFIG_KEY, fill_synthetic_store
from hallu_studio.backends import make_backend
from hallu_studio.config import Settings
from hallu_studio.metrics.registry import not_applicable_reason
from hallu_studio.pipelines.running import RunOptions, execute_run
from hallu_studio.pipelines.scoring import score_store
from hallu_studio.store import Store

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
SEED = 20261122
START_TIMEOUT_S = 60


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLU_STUDIO_")}
    env.update(GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1",
               PYTHONUNBUFFERED="1", HOME=str(tmp_path))  # no ~/.local store, no user config
    return env


def done_at_least(k: int, bar: str) -> Callable[[str], bool]:
    """True once the tqdm bar named ``bar`` (a regex; "scoring:  9%|█  | 3/32 ...") has reached ``k``
    items, k >= 1: something is committed. Other bars (model weights loading) do not count."""
    pattern = re.compile(bar + r":\s+[0-9]+%\|[^|]*\| *([0-9]+)/[0-9]+")
    return lambda text: any(int(n) >= k for n in pattern.findall(text))


def _kill_when(cmd: list[str], tmp_path: Path, started: Callable[[str], bool], rng: random.Random,
               max_extra_s: float) -> str:
    """Start ``cmd``; once ``started(output)``, wait a random while and SIGKILL it.

    Returns the output seen. A process that finishes first is fine (the checks still hold).
    """
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace")
    seen: list[str] = []
    hit = threading.Event()

    def read() -> None:
        for chunk in iter(lambda: proc.stdout.read(64), ""):
            seen.append(chunk)
            if started("".join(seen[-16:])):
                hit.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        hit.wait(START_TIMEOUT_S)
        assert hit.is_set() or proc.poll() is not None, f"{cmd[3]} never started: {''.join(seen)[-800:]}"
        time.sleep(rng.uniform(0.0, max_extra_s))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    reader.join(timeout=5)
    return "".join(seen)


def _cli(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "hallu_studio", args[0], "--db", str(db), *args[1:]]


def test_kill_9_of_a_scoring_run_keeps_whole_batches_and_a_restart_finishes(tmp_path):
    db = tmp_path / "score.duckdb"
    with Store(db) as store:
        fill_synthetic_store(store, n_samples=40, models=("probe-a", "probe-b"))
        applicable = {m: {rid for rid in store.response_ids() if not_applicable_reason(
            m, store.get_sample(store.get_response(rid).sample_id)) is None} for m in ("chair", "edit")}
    rng = random.Random(SEED)
    metrics = ["chair", "edit"]
    _kill_when(_cli(db, "score", "--metrics", ",".join(metrics), "--batch-size", "1"), tmp_path,
               done_at_least(rng.randint(1, 40), "scoring"), rng, 0.1)

    with Store(db) as store:  # opens cleanly after SIGKILL
        keys = {c["metric"]: c["config_key"] for c in store.score_configs() if c["config_key"] != SYNTHETIC_CONFIG_KEY}
        rows = [(s.response_id, s.metric) for _, s in store.iter_scores() if s.config_key != SYNTHETIC_CONFIG_KEY]
        assert len(rows) == len(set(rows)), "a score row is duplicated"
        by_response = Counter(rid for rid, m in rows if m in metrics)
        concepts = {rid for rid, m in rows if m == "concepts"}
        for rid, n in by_response.items():
            # a batch writes a response's concepts and every applicable metric's score together
            wanted = sum(rid in applicable[m] for m in metrics)
            assert n == wanted and rid in concepts, f"{rid} is half-written: {n} of {wanted} metric scores"
        assert by_response, "the kill came before the first batch: move it later"
        stats = {(r["response_id"], r["metric"]) for r in store.score_stat_rows()}
        assert {(rid, m) for rid, m in rows if m in metrics} <= stats, "a score lost its statistics row"
        interrupted = set(by_response)

        settings = Settings()  # the CLI's defaults; its --batch-size 1 is not part of the configuration
        again = score_store(store, settings, metrics, progress=False, batch_size=16)
        after = [(s.response_id, s.metric) for _, s in store.iter_scores() if s.config_key != SYNTHETIC_CONFIG_KEY]
        assert len(after) == len(set(after)), "the restart did not continue the killed run's configuration"
        for metric in metrics:
            scored = {rid for rid, m in after if m == metric}
            assert scored == applicable[metric]
            assert again.scored[metric] == len(applicable[metric] - interrupted), "a finished item was scored again"
        if keys:  # the restart used the same configuration as the killed CLI
            assert {c["config_key"] for c in store.score_configs() if c["metric"] in metrics} - {SYNTHETIC_CONFIG_KEY} \
                == {keys[m] for m in metrics if m in keys}
        assert not store.list_failures()


PROBE = "probe:rate=0.4,mix=object+relation,seed=3,delay_ms=40"


def test_kill_9_of_a_model_run_loses_and_doubles_nothing(tmp_path):
    db = tmp_path / "run.duckdb"
    with Store(db) as store:
        fill_synthetic_store(store, n_samples=40, models=("probe-a",))
        bench_ids = store.sample_ids("synthetic-ui")
    rng = random.Random(SEED + 1)
    _kill_when(_cli(db, "run", "--benchmark", "synthetic-ui", "--model", PROBE, "--batch-size", "3"), tmp_path,
               done_at_least(rng.randint(3, 30), "probe[^:|]*"), rng, 0.3)

    reference_store = Store(tmp_path / "reference.duckdb")  # the same run, never interrupted
    fill_synthetic_store(reference_store, n_samples=40, models=("probe-a",))
    fast = PROBE.replace("delay_ms=40", "delay_ms=0")
    ref = execute_run(reference_store, make_backend(fast), RunOptions("synthetic-ui", chunk_size=3), progress=False)
    expected = {r.sample_id: r.text for r in reference_store.iter_responses(ref.run_id)}
    reference_store.close()

    with Store(db) as store:
        runs = [r for r in store.list_runs() if r["id"] == ref.run_id]
        assert len(runs) == 1, "the killed run is not the run its settings name"
        done = store.done_sample_ids(ref.run_id)
        assert store.count_responses(ref.run_id) == len(done)  # one response per finished sample
        assert len(done) % 3 == 0 or len(done) == len(bench_ids)  # whole chunks only
        for r in store.iter_responses(ref.run_id):
            assert r.text == expected[r.sample_id]  # no half-written text
        summary = execute_run(store, make_backend(fast), RunOptions("synthetic-ui", chunk_size=3), progress=False)
        assert summary.run_id == ref.run_id and summary.skipped == len(done)
        assert summary.done == len(bench_ids) - len(done) and summary.failed == 0
        assert store.count_responses(ref.run_id) == len(bench_ids)
        assert {r.sample_id: r.text for r in store.iter_responses(ref.run_id)} == expected


def _wait_http(url: str, proc: subprocess.Popen, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"app.py exited early with {proc.returncode}: {proc.stdout.read()[-800:]}")
        status = http_status(url)
        if status is not None:
            return status
        time.sleep(0.3)
    pytest.fail(f"app.py did not answer {url} within {timeout_s}s")


def test_store_opens_cleanly_after_the_app_is_killed_with_sigkill(tmp_path):
    db = tmp_path / "app.duckdb"
    with Store(db) as store:
        ids = fill_synthetic_store(store, n_samples=5, models=("probe-a",))
        counts = store.counts()
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(REPO / "app.py"), "--db", str(db), "--no-bootstrap",
                             "--port", str(port)], cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    try:
        assert _wait_http(f"http://127.0.0.1:{port}/", proc, START_TIMEOUT_S) == 200
        time.sleep(random.Random(SEED + 2).uniform(0.0, 1.0))  # the warm-up thread may be mid-query
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    with Store(db) as store:
        assert store.counts() == counts
        assert sorted(store.response_ids()) == sorted(ids)
        assert store.get_response(ids[0]).text


def test_batch_size_is_not_part_of_the_scoring_configuration():
    # Found by the kill -9 test: `score --batch-size 1` and a restart without it used to get
    # different config keys, so the restart scored everything again beside the killed run's scores.
    import dataclasses

    from hallu_studio.metrics.keys import current_config_keys

    small, large = Settings(), Settings()
    small.scoring = dataclasses.replace(small.scoring, batch_size=1)
    assert current_config_keys(small).keys == current_config_keys(large).keys
    other = dataclasses.replace(large.scoring, chair_vocabulary="coco-80")
    assert current_config_keys(dataclasses.replace(large, scoring=other)).get("chair") != \
        current_config_keys(large).get("chair")
