"""The scoring engines give the same scores: one process, local worker processes (``score --workers``) and Ray
actors (``--engine ray``); a Ray actor killed mid-run loses only its unfinished batch, rescored in the same run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from synthetic_store import SYNTHETIC_CONFIG_KEY, fill_synthetic_store

from hallu_studio.caching import RESULTS_NAMESPACE, MemoryCache
from hallu_studio.config import Settings
from hallu_studio.pipelines.engines import InProcess, LocalProcesses, make_engine, worker_count
from hallu_studio.pipelines.scoring import score_store
from hallu_studio.pipelines.scoring_jsonl import score_jsonl
from hallu_studio.store import Store

pytestmark = [pytest.mark.slow]

METRICS = ["emd", "halfscore", "trihe", "chair"]


def _scores(store: Store) -> dict[tuple[str, str], tuple]:
    out = {}
    for metric in METRICS + ["concepts"]:
        for response, score in store.iter_scores(metric):
            if score.config_key == SYNTHETIC_CONFIG_KEY:
                continue
            key = (response.id, metric)
            assert key not in out, f"{key} scored twice"
            out[key] = (score.config_key, score.values, score.evidence, score.undefined_reason)
    return out


def _scored(tmp_path, name: str, engine, **kw) -> tuple[dict, object]:
    with Store(tmp_path / f"{name}.duckdb") as store:
        fill_synthetic_store(store, n_samples=8)
        report = score_store(store, Settings(), METRICS, progress=False, batch_size=3, engine=engine, **kw)
        return _scores(store), report


@pytest.fixture(scope="module")
def in_process(tmp_path_factory) -> tuple[dict, object]:
    """The scores and report of one process, which every engine is compared with (computed once)."""
    return _scored(tmp_path_factory.mktemp("one"), "one", InProcess())


def test_worker_count_and_engine_choice():
    assert worker_count(3) == 3 and worker_count(0) >= 1
    assert isinstance(make_engine("processes", 1), InProcess)
    assert isinstance(make_engine("processes", 2), LocalProcesses)
    with pytest.raises(ValueError, match="unknown scoring engine"):
        make_engine("threads", 2)
    with pytest.raises(ValueError, match="at least|0 \\(one per core\\)"):
        worker_count(-1)


def test_two_worker_processes_score_exactly_as_one_process(tmp_path, in_process):
    one, one_report = in_process
    two, two_report = _scored(tmp_path, "two", LocalProcesses(2))
    assert one and one.keys() == two.keys()
    for key in one:
        assert one[key] == two[key], key
    assert one_report.scored == two_report.scored and one_report.failed == two_report.failed


@pytest.mark.parametrize("seen_at", ["wait", "submit"])
def test_a_killed_worker_process_loses_nothing_and_its_batches_are_scored_again(tmp_path, in_process, seen_at):
    """A local worker killed mid-run (as the OOM killer would): a new pool scores every batch not yet returned,
    in the same run; every response is written once, with one process's scores. The driver learns of the death
    either while it waits for results or, when the pool broke in between, at its next submit (``seen_at``)."""
    import os
    import signal
    import time

    one, one_report = in_process
    engine = LocalProcesses(2)
    killed = []

    def kill_one(done: int, total: int) -> None:  # after the first stored batch
        if not killed and engine.worker_pids:
            pid = engine.worker_pids[0]
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)
            if seen_at == "submit":  # the pool reaps its dead worker once it has marked itself broken
                deadline = time.monotonic() + 60
                while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
                    time.sleep(0.05)

    got, report = _scored(tmp_path, f"killed-{seen_at}", engine, on_progress=kill_one)
    assert killed and engine.restarts == 1
    assert report.responses_seen == one_report.responses_seen and report.scored == one_report.scored
    assert one.keys() == got.keys()
    for key in one:
        assert one[key] == got[key], key


def test_ray_actors_score_as_one_process_and_a_killed_actor_loses_nothing(tmp_path, in_process):
    ray = pytest.importorskip("ray")
    from hallu_studio.pipelines.engine_ray import RayActors

    one, one_report = in_process
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        engine = RayActors(2)
        killed = []

        def kill_one(done: int, total: int) -> None:  # after the first stored batch: an actor lost mid-run
            if not killed:
                killed.append(engine.actors[0])
                ray.kill(engine.actors[0])

        got, report = _scored(tmp_path, "ray", engine, on_progress=kill_one)
    finally:
        ray.shutdown()
    assert killed and engine.replaced >= 1
    assert report.responses_seen == one_report.responses_seen  # every batch written once: none doubled, none lost
    assert one.keys() == got.keys()
    for key in one:
        assert one[key] == got[key], key


def _lines(tmp_path, n: int = 10) -> Path:
    path = tmp_path / "in.jsonl"
    graph = {"objects": [{"id": "1", "name": "cat", "attributes": ["grey"]},
                         {"id": "2", "name": "mat", "attributes": ["blue"]}, {"id": "3", "name": "dog"}],
             "relations": [{"subject": "1", "predicate": "on", "object": "2"}]}
    responses = ["A grey cat sits on a red mat next to a dog.", "A dog rides a bicycle past a tree.",
                 "Two cats stand on a wooden table by the window."]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"l{i}", "response": responses[i % 3] + f" There are {i} balls.",
                                "scene_graph": graph}) + "\n")
        f.write("{not json\n")
    return path


@pytest.fixture(scope="module")
def lines_in_one_process(tmp_path_factory) -> tuple[Path, str, object]:
    """Ten JSONL lines and a broken one, scored statelessly by one process: (input, output text, report)."""
    folder = tmp_path_factory.mktemp("lines")
    path = _lines(folder)
    report = score_jsonl(path, folder / "one.jsonl", _lines_settings(), METRICS)
    return path, (folder / "one.jsonl").read_text(), report


def _lines_settings() -> Settings:
    settings = Settings()
    settings.scoring.batch_size = 3
    return settings


@pytest.mark.parametrize("kind", ["processes", "ray"])
def test_stateless_lines_through_workers_are_bit_identical_to_one_process(tmp_path, kind, lines_in_one_process):
    if kind == "ray":
        pytest.importorskip("ray")
    path, one_text, one = lines_in_one_process
    cache = MemoryCache()
    engine = LocalProcesses(2) if kind == "processes" else make_engine("ray", 2)
    two = score_jsonl(path, tmp_path / "two.jsonl", _lines_settings(), METRICS, engine=engine, cache=cache)
    # values and evidence, bit for bit (phrase vectors do not depend on their batch), in the input's line order
    assert (tmp_path / "two.jsonl").read_text() == one_text
    assert (one.lines, one.scored, len(one.errors)) == (two.lines, two.scored, len(two.errors)) == (11, 10, 1)
    assert cache.values(RESULTS_NAMESPACE)  # what the workers computed is kept by the driver's cache


def test_engine_ray_without_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails as where it is not installed
    with pytest.raises(ValueError, match=r"pip install 'hallu-studio\[ray\]'"):
        make_engine("ray", 2)


def test_a_worker_reads_the_reference_captions_an_earlier_run_parsed_from_the_batch(tmp_path):
    """A second model's pass over the same samples (a sweep): the driver sends each batch's reference captions'
    concepts from the store's cache, so a worker (no store) parses only the new responses, as one process
    would; and scores exactly as one process does."""
    import torch

    from hallu_studio.importers.registry import ImportRequest
    from hallu_studio.pipelines.importing import import_format
    from hallu_studio.pipelines.workers import WorkerScorer, WorkerSetup

    captions = {f"img-{i}": [f"A dog {i} lies on the green grass.", f"A brown dog rests on a lawn {i}."]
                for i in range(4)}
    lines = [{"source": "sweep", "sample_id": sid, "reference_text": refs, "model": model,
              "response": f"{model}: a dog and a red ball on the grass of {sid}.", "label": "accurate"}
             for model in ("m1", "m2") for sid, refs in captions.items()]
    path = tmp_path / "sweep.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))

    class WorkerHere:  # the worker's own code, run in this process, counting what its extractor parsed
        def __init__(self, drop_cached: bool) -> None:
            self.drop_cached, self.parsed = drop_cached, None

        def score_batches(self, jobs, task):
            worker = WorkerScorer(WorkerSetup.of(task, 2))
            for job in jobs:
                if self.drop_cached:
                    job.cached = {}
                yield worker.score(job)
            self.parsed = worker.scorer.extractor.extracted

    threads = torch.get_num_threads()  # a worker sets its share; this process keeps its own
    try:
        results = {}
        for name, engine in (("one process", None), ("worker", WorkerHere(False)), ("no seeds", WorkerHere(True))):
            with Store(tmp_path / f"{name}.duckdb") as store:
                import_format(store, "human-judgements", ImportRequest(path=Path(path)))
                runs = {r["model"]: r["id"] for r in store.list_runs()}
                score_store(store, Settings(), ["emd"], run_id=runs["m1"], progress=False)  # the sweep's first
                score_store(store, Settings(), ["emd"], run_id=runs["m2"], progress=False, engine=engine,
                            batch_size=2)
                results[name] = sorted((r.text, s.values, s.evidence) for r, s in store.iter_scores("emd")
                                       if r.run_id == runs["m2"])
                if engine is not None:
                    results[name + " parsed"] = engine.parsed
    finally:
        torch.set_num_threads(threads)
    assert results["worker"] == results["one process"] and len(results["worker"]) == 4
    assert results["worker parsed"] == 4  # the four new responses; every caption was read from the batch
    assert results["no seeds"] == results["one process"] and results["no seeds parsed"] == 4 + 8
