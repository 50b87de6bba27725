"""Ray actors (``score --engine ray``) give one process's scores, and an actor killed mid-run loses only its
unfinished batch, rescored in the same run. A file of its own: a local Ray's start-up is most of a minute, which
pytest-xdist then runs beside the local worker processes' tests (test_scoring_engines.py)."""

from __future__ import annotations

import pytest
from test_scoring_engines import _scored, in_process  # noqa: F401  (in_process: fixture)

pytestmark = [pytest.mark.slow]


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
