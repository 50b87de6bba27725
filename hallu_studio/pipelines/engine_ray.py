"""``score --engine ray``: a pass's batches computed by Ray actors, each building its models once
(``engines.WorkerScorer``), on a local Ray or the cluster at ``--ray-address``; the driver streams each result into
the store as it arrives (``engines`` says how a pass is split).

A lost actor (its node gone, ``ray.kill``) loses only the batches it had not returned: they go back to the queue
and a new actor scores them in the same run. Nothing is written twice: a batch is written once, when its result
arrives, and a batch the driver never received was never written. Ray is an optional extra.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterable, Iterator

from .in_input_order import in_input_order
from .workers import LinesJob, WorkerScorer, WorkerSetup
from .scoring import BatchJob, BatchOutput, StoreTask
from .scoring_jsonl import LinesOutput, LinesTask

RAY_MISSING = "--engine ray needs Ray: pip install 'hallu-studio[ray]'"
IN_FLIGHT = 2  # batches queued on each actor, so none waits while the driver writes


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ValueError(RAY_MISSING) from exc
    return ray


class RayActors:
    """``workers`` Ray actors (default: one per CPU of the cluster) at ``address`` (None: a local Ray, or the one
    this process is already connected to). ``actors`` are the live ones (a test kills one)."""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        self.workers, self.address = workers, address
        self.actors: list[Any] = []
        self.replaced = 0  # actors lost and replaced during the run

    def score_batches(self, jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
        return self._map(jobs, lambda count: WorkerSetup.of(task, count), ordered=False)

    def score_lines(self, jobs: Iterable[LinesJob], task: LinesTask) -> Iterator[LinesOutput]:
        return self._map(jobs, lambda count: WorkerSetup.of(task, count), ordered=True)

    def _map(self, jobs: Iterable[Any], setup_for: Callable[[int], WorkerSetup], ordered: bool) -> Iterator[Any]:
        ray = import_ray()
        started = not ray.is_initialized()
        if started:
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
        try:
            count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            setup = ray.put(setup_for(count))
            actor_class = ray.remote(num_cpus=1)(WorkerScorer)
            self.actors = [actor_class.remote(setup) for _ in range(count)]
            outputs = self._stream(ray, enumerate(jobs), lambda: actor_class.remote(setup))
            yield from (in_input_order(outputs) if ordered else (output for _, output in outputs))
        finally:
            for actor in self.actors:
                ray.kill(actor)
            self.actors = []
            if started:
                ray.shutdown()

    def _stream(self, ray: Any, jobs: Iterator[tuple[int, Any]], new_actor: Any) -> Iterator[tuple[int, Any]]:
        retry: deque[tuple[int, Any]] = deque()
        pending: dict[Any, tuple[tuple[int, Any], int, Any]] = {}  # result ref -> (job, actor slot, actor)
        load = [0] * len(self.actors)
        while True:
            for slot in range(len(self.actors)):
                while load[slot] < IN_FLIGHT and (job := retry.popleft() if retry else next(jobs, None)) is not None:
                    pending[self.actors[slot].score.remote(job[1])] = (job, slot, self.actors[slot])
                    load[slot] += 1
            if not pending:
                return
            [ref], _ = ray.wait(list(pending), num_returns=1)
            job, slot, actor = pending.pop(ref)
            try:
                output = ray.get(ref)
            except ray.exceptions.RayActorError:  # lost with the actor: scored again by its replacement
                retry.append(job)
                if self.actors[slot] is actor:
                    self.actors[slot] = new_actor()
                    self.replaced += 1
                    load[slot] = 0
                continue
            if self.actors[slot] is actor:
                load[slot] -= 1
            yield job[0], output
