"""Read commands answer while another process holds the store.

A process that has the DuckDB file open for writing (the app) locks it: a second process cannot
open it, not even read-only. The read commands then copy the file and its write-ahead log and
answer from the copy, and say so; when the holder only reads, they open the live file read-only.
Both are tested with a real second process, and the CLI runs as a subprocess as a user runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hallu_studio.cli import main
from hallu_studio.model import Benchmark, HumanEvent, Sample
from hallu_studio.store import Store

REPO = Path(__file__).resolve().parents[1]

# Holds the store open until its stdin closes; with "write" it first adds a benchmark and a rating
# that live only in the write-ahead log (DuckDB checkpoints a small log only on close).
HOLDER = """
import sys
from hallu_studio.cli import main
from hallu_studio.model import Benchmark, HumanEvent, Sample
from hallu_studio.store import Store
mode, path = sys.argv[1], sys.argv[2]
store = Store(path, read_only=mode == "read")
if mode == "write":
    store.add_samples(Benchmark("held"), [Sample(id="held/1", benchmark="held", image_key="1")])
    store.append_event(HumanEvent("bob", "rating", "r-1", 2))
print("holding", flush=True)
sys.stdin.read()
store.close()
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLU_STUDIO_")}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])), HOME=str(tmp_path),
               TMPDIR=str(tmp_path / "tmp"), GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1")
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return env


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "held.duckdb"
    with Store(path) as st:
        st.add_samples(Benchmark("b"), [Sample(id="b/1", benchmark="b", image_key="1")])
        st.append_event(HumanEvent("ann", "rating", "r-1", 4))
    return path


@pytest.fixture
def holder(tmp_path, db):
    """``holder("write" | "read")`` starts a second process holding ``db`` and returns it."""
    procs: list[subprocess.Popen] = []

    def start(mode: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, mode, str(db)], env=_env(tmp_path), cwd=tmp_path,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(proc)
        line = proc.stdout.readline()
        assert line.strip() == "holding", line + proc.stdout.read()
        return proc

    yield start
    for proc in procs:
        proc.stdin.close()
        proc.wait(timeout=30)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hallu_studio", *args], env=_env(tmp_path), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def test_while_the_app_writes_read_commands_answer_from_a_snapshot_and_say_so(tmp_path, db, holder, capsys,
                                                                               monkeypatch):
    holder("write")
    with pytest.raises(Exception, match="open in another process"):
        Store(db, read_only=True)  # what makes the snapshot necessary: DuckDB refuses a second reader
    before = db.read_bytes()
    info = _cli(tmp_path, "info", "--db", str(db))
    assert info.returncode == 0, info.stderr
    assert info.stderr.startswith("note: store held by another process (the app?); answered from a read-only "
                                  "snapshot taken at ")
    assert f"store: {db} (schema v" in info.stdout and "read-only snapshot taken at" in info.stdout
    # what the holder wrote is only in its write-ahead log, and the snapshot has it
    assert "held: 1 images" in info.stdout and "annotators: 2" in info.stdout
    out = tmp_path / "ratings.jsonl"
    export = _cli(tmp_path, "export", "--table", "ratings", "--output", str(out), "--db", str(db))
    assert export.returncode == 0, export.stderr
    assert "read-only snapshot" in export.stderr
    assert {(r["annotator"], r["rating"]) for r in map(json.loads, out.read_text().splitlines())} == {
        ("ann", 4), ("bob", 2)}
    # the same in this process (faster than another interpreter): the lock is the holder's
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile reads TMPDIR once, then caches
    assert main(["leaderboard", "--db", str(db)]) == 1  # an answer, not a lock error
    assert "no scores yet" in capsys.readouterr().err
    assert db.read_bytes() == before, "reading changed the live file"
    assert not any((tmp_path / "tmp").iterdir()), "the snapshot was left behind"
    # writing still refuses, with the reason
    assert main(["score", "--metrics", "chair", "--db", str(db)]) == 2
    assert "is open in another process (is the app running?)" in capsys.readouterr().err


def test_while_another_process_only_reads_the_live_file_is_read(tmp_path, db, holder):
    holder("read")
    info = _cli(tmp_path, "info", "--db", str(db))
    assert info.returncode == 0, info.stderr
    assert "snapshot" not in info.stderr + info.stdout
    assert f"store: {db} (schema v" in info.stdout and "b: 1 images" in info.stdout


def test_open_for_reading_opens_read_only_and_creates_nothing(tmp_path, db):
    with Store.open_for_reading(db) as st:
        assert st.read_only and st.snapshot_of is None and st.benchmark_names() == ["b"]
    with pytest.raises(Exception, match="no store at"):
        Store.open_for_reading(tmp_path / "missing.duckdb")
    assert not (tmp_path / "missing.duckdb").exists()
