"""Where the batches of a scoring pass are computed: in this process, in local worker processes, or on Ray actors.

``score_store`` reads each batch from the store (``read_batch``: plain, picklable data), an engine computes it
(``compute_batch``: no store) and the driver alone writes it (``write_batch``: one transaction per batch, as it
arrives). So a run stays resumable whatever the engine: a lost worker loses only batches not yet written, which
the same pass scores again (a new local pool, or a new Ray actor); a stopped pass leaves them to the next one.

A worker builds its models once (``workers.WorkerScorer``), from the pass's settings and metric names, with the
config keys the driver computed and CHAIR's whole-benchmark vocabulary observed on the same samples as every other
worker. Its cache is a ``RecordingCache`` in memory: what it computes (phrase vectors, LLM answers, the concepts of
references) comes back with each batch and the driver writes it into the store's cache, for the next run. A stateless
pass (``score --input``) sends chunks of lines instead, each with the results ``--cache`` keeps for its lines;
their outputs come back in line order.

Local workers are spawned (not forked: torch and its threads do not survive a fork), each with torch's threads set
to its share of the cores, and ignore SIGINT and SIGTERM: the driver, stopped by either, kills them and keeps
what was written. ``engine_ray`` holds the Ray engine.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
from collections import deque
from contextlib import closing
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Iterable, Iterator, Protocol

from .scoring import BatchJob, BatchOutput, StoreTask, score_in_process
from .scoring_jsonl import LinesOutput, LinesTask, score_lines
from .in_input_order import in_input_order
from .workers import LinesJob, WorkerScorer, WorkerSetup, machine_cores

log = logging.getLogger(__name__)

MAX_POOL_RESTARTS = 3  # worker deaths one pass survives (each: a new pool, the unreturned batches scored again)


class Engine(Protocol):
    """Computes a pass's batches (stored responses) or chunks (JSONL lines); yields each one's output as it is done,
    the batches in any order, the chunks in input order. Closing the iterator stops the engine's workers."""

    def score_batches(self, jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
        ...

    def score_lines(self, jobs: Iterable[LinesJob], task: "LinesTask") -> Iterator[LinesOutput]:
        ...


def worker_count(setting: int | None) -> int:
    """``--workers`` / ``scoring.workers``: a count, or 0 (None) for one per core of this machine."""
    if setting is not None and setting < 0:
        raise ValueError(f"workers must be 0 (one per core) or more, not {setting}")
    return setting or machine_cores()


def make_engine(kind: str = "processes", workers: int | None = None, address: str | None = None) -> "Engine":
    """The engine ``score --engine KIND --workers N`` names: ``processes`` (N local processes; one: this process)
    or ``ray`` (N actors, default one per CPU of the cluster, at ``address`` or a local Ray)."""
    count = worker_count(workers)  # a negative count is refused for either kind
    if kind == "ray":
        from .engine_ray import RayActors, import_ray

        import_ray()  # missing: one line, before any work
        return RayActors(workers or None, address)
    if kind != "processes":
        raise ValueError(f"unknown scoring engine {kind!r}; choose processes | ray")
    if address is not None:
        raise ValueError("--ray-address is for --engine ray")
    return InProcess() if count == 1 else LocalProcesses(count)


class InProcess:
    """Today's loop: each batch computed in this process, with the pass's own metrics and the store's cache."""

    in_this_process = True  # its batches need not carry cache entries: it reads the store's cache itself

    def score_batches(self, jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
        return score_in_process(jobs, task)

    def score_lines(self, jobs: Iterable[LinesJob], task: LinesTask) -> Iterator[LinesOutput]:
        for chunk, _ in jobs:  # the kept results are read from this process's own cache
            yield score_lines(chunk, task.scorer)


_WORKER: WorkerScorer | None = None  # this worker process's scorer (``start_worker``)


def start_worker(setup: WorkerSetup) -> None:
    """A local worker process's start: stopping left to the driver (which kills it), its models built.

    Both signals are ignored because they reach the whole process group, not only the driver: Ctrl-C in a
    terminal, ``timeout``, and a service manager's stop (systemd's default KillMode). A worker that died of
    one first would break the pool, and the driver would report the broken pool instead of the stop."""
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _WORKER = WorkerScorer(setup)


def score_in_worker(job: Any) -> Any:
    assert _WORKER is not None, "start_worker runs first"
    return _WORKER.score(job)


class LocalProcesses:
    """``workers`` spawned processes; at most two batches each in flight, so the driver's reads stay ahead.

    A worker that dies (the OOM killer, a crash in native code) breaks its pool: a new pool is started and every
    batch not yet returned is scored again, so nothing is lost and, since a batch is written only when it returns,
    nothing is doubled. After ``MAX_POOL_RESTARTS`` such deaths in one pass the pass stops with an error (a batch
    that kills every worker would loop); what was written stays and the next pass resumes."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.restarts = 0  # pools started again after a worker died, in this engine's passes
        self.worker_pids: list[int] = []  # the live pool's processes (a test kills one)

    def score_batches(self, jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
        return self._map(jobs, WorkerSetup.of(task, self.workers), ordered=False)

    def score_lines(self, jobs: Iterable[LinesJob], task: LinesTask) -> Iterator[LinesOutput]:
        return self._map(jobs, WorkerSetup.of(task, self.workers), ordered=True)

    def _map(self, jobs: Iterable[Any], setup: WorkerSetup, ordered: bool) -> Iterator[Any]:
        outputs = self._stream(enumerate(jobs), setup)
        with closing(outputs):  # a stopped pass (the iterator closed) stops the workers now
            yield from (in_input_order(outputs) if ordered else (output for _, output in outputs))

    def _stream(self, jobs: Iterator[tuple[int, Any]], setup: WorkerSetup) -> Iterator[tuple[int, Any]]:
        retry: deque[tuple[int, Any]] = deque()  # jobs a dead worker's pool never returned, in input order
        deaths = 0
        while True:
            pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=start_worker, initargs=(setup,))
            pending: dict[Future[Any], tuple[int, Any]] = {}
            refused: list[tuple[int, Any]] = []  # taken, but the pool broke before it accepted them
            complete = False
            try:
                while True:
                    while len(pending) < 2 * self.workers and \
                            (job := retry.popleft() if retry else next(jobs, None)) is not None:
                        try:
                            pending[pool.submit(score_in_worker, job[1])] = job
                        except BrokenProcessPool:  # a worker died since the last wait: seen at submit
                            refused.append(job)
                            break
                        self.worker_pids = [p.pid for p in (getattr(pool, "_processes", None) or {}).values()]
                    if refused:
                        break
                    if not pending:
                        complete = True
                        return
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    if any(isinstance(f.exception(), BrokenProcessPool) for f in finished):
                        break
                    for future in finished:
                        yield pending.pop(future)[0], future.result()
            finally:
                stop_pool(pool, terminate=not complete)
            deaths += 1
            self.restarts += 1
            lost = sorted([*pending.values(), *refused], key=lambda job: job[0])
            if deaths > MAX_POOL_RESTARTS:
                raise RuntimeError(f"a scoring worker process died {deaths} times in this pass, the last time with "
                                   f"{len(lost)} batches unreturned; what was scored before is kept (run the "
                                   "command again to resume, or with --workers 1 to see the error in this process)")
            log.warning("a scoring worker process died; %d unreturned batches are scored again by a new pool",
                        len(lost))
            retry.extendleft(reversed(lost))


def stop_pool(pool: ProcessPoolExecutor, terminate: bool) -> None:
    """Shut ``pool`` down; ``terminate``: its workers now, their unfinished batches dropped (scored next pass)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=not terminate, cancel_futures=True)
    if terminate:
        for process in processes:
            if process.is_alive():
                process.kill()  # SIGTERM is ignored (start_worker); a worker holds nothing to save
        for process in processes:
            process.join(timeout=10)

