"""Where the batches of a scoring pass are computed: in this process, in local worker processes, or on Ray actors.

``score_store`` reads each batch from the store (``read_batch``: plain, picklable data), an engine computes it
(``compute_batch``: no store) and the driver alone writes it (``write_batch``: one transaction per batch, as it
arrives). So a run stays resumable whatever the engine, and a lost or stopped worker loses only batches not yet
written, which the next pass (or, on Ray, the same one) scores again.

A worker builds its models once (``WorkerScorer``), from the pass's settings and metric names, with the config keys
the driver computed (so its scores are stored under the same keys) and CHAIR's whole-benchmark vocabulary observed
on the same samples as every other worker. Its cache is a ``RecordingCache`` in memory: what it computes (phrase
vectors, LLM answers, the concepts of references) comes back with each batch and the driver writes it into the
store's cache, for the next run.

Local workers are spawned (not forked: torch and its threads do not survive a fork), each with torch's threads set
to its share of the cores, and ignore SIGINT: the driver, stopped by Ctrl-C or SIGTERM, terminates them and keeps
what was written. ``engine_ray`` holds the Ray engine.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Protocol, Sequence

from ..caching import RecordingCache
from ..components import Components
from ..config import Settings
from ..model import Sample
from .scoring import (BatchJob, BatchOutput, BatchScorer, KeptResults, StoreTask, compute_batch, observe_benchmarks,
                      resolve)
from .scoring_jsonl import LineScorer, LinesOutput, score_lines

if TYPE_CHECKING:
    from ..extraction.base import ConceptExtractor
    from ..metrics.base import Metric


class Engine(Protocol):
    """Computes a pass's batches (stored responses) or chunks (JSONL lines); yields each one's output as it is done,
    the batches in any order, the chunks in input order. Closing the iterator stops the engine's workers."""

    def score_batches(self, jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
        ...

    def score_lines(self, jobs: Iterable[LinesJob], task: "LinesTask") -> Iterator[LinesOutput]:
        ...


LinesJob = tuple  # (chunk of (line number, text), the kept results of its lines by key)


@dataclass
class LinesTask:
    """What an engine scoring JSONL chunks elsewhere needs: the settings, metrics and extractor its workers build
    from, the scorer built here, the whole benchmark CHAIR observes, whether results are kept (``--cache``)."""

    settings: Settings
    metrics: Sequence[Any]
    extractor: Any
    scorer: LineScorer
    benchmarks: dict[str, list[Sample]]
    keeps_results: bool


def machine_cores() -> int:
    """The cores this process may use (``os.process_cpu_count`` where Python has it)."""
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return max(1, count or 1)


def worker_count(setting: int | None) -> int:
    """``--workers`` / ``scoring.workers``: a count, or 0 (None) for one per core of this machine."""
    if setting is not None and setting < 0:
        raise ValueError(f"workers must be 0 (one per core) or more, not {setting}")
    return setting or machine_cores()


def make_engine(kind: str = "processes", workers: int | None = None, address: str | None = None) -> "Engine":
    """The engine ``score --engine KIND --workers N`` names: ``processes`` (N local processes; one: this process)
    or ``ray`` (N actors, default one per CPU of the cluster, at ``address`` or a local Ray)."""
    if kind == "ray":
        from .engine_ray import RayActors, import_ray

        import_ray()  # missing: one line, before any work
        return RayActors(workers or None, address)
    if kind != "processes":
        raise ValueError(f"unknown scoring engine {kind!r}; choose processes | ray")
    if address is not None:
        raise ValueError("--ray-address is for --engine ray")
    count = worker_count(workers)
    return InProcess() if count == 1 else LocalProcesses(count)


class InProcess:
    """Today's loop: each batch computed in this process, with the pass's own metrics and the store's cache."""

    def score_batches(self, jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
        observed: set[str] = set()
        for job in jobs:
            observe_benchmarks(task.scorer.metrics, {s.benchmark for s in job.samples.values()},
                               task.store.iter_samples, observed)
            yield compute_batch(job, task.scorer)

    def score_lines(self, jobs: Iterable[LinesJob], task: LinesTask) -> Iterator[LinesOutput]:
        for chunk, _ in jobs:  # the kept results are read from this process's own cache
            yield score_lines(chunk, task.scorer)


@dataclass
class WorkerSetup:
    """What a worker builds its scorer from (picklable): the pass's settings, metric names and extractor (None:
    built from the settings), the driver's config keys, the whole benchmarks some metric observes, its threads."""

    settings: Settings
    metrics: list[str]
    extractor: "ConceptExtractor | None"
    keys: dict[str, str]
    concepts_key: str
    benchmarks: dict[str, list[Sample]]
    threads: int
    lines: tuple[Path | None, bool] | None = None  # JSONL chunks: (image root, results kept); None: stored batches

    @classmethod
    def of(cls, task: StoreTask | LinesTask, workers: int) -> "WorkerSetup":
        from ..metrics.registry import METRIC_NAMES

        names = [m if isinstance(m, str) else m.name for m in task.metrics]
        custom = [n for n in names if n not in METRIC_NAMES]
        if custom:
            raise ValueError(f"scoring in workers builds metrics by name; {custom} are not registered metrics "
                             f"(score them with one worker)")
        threads = max(1, machine_cores() // workers)
        if isinstance(task, LinesTask):
            return cls(task.settings, names, task.extractor, {}, "", task.benchmarks, threads,
                       (task.scorer.image_root, task.keeps_results))
        return cls(task.settings, names, task.extractor, dict(task.scorer.keys), task.scorer.concepts_key,
                   task.benchmarks(), threads)


class WorkerScorer:
    """A worker's models, built once, and its scoring of one batch after another."""

    def __init__(self, setup: WorkerSetup) -> None:
        _limit_threads(setup.threads)
        self.cache = RecordingCache()
        parts = Components(setup.settings, self.cache, extractor=setup.extractor).scoring()
        metrics: list["Metric"] = resolve(setup.metrics, parts)
        self.scorer = BatchScorer(metrics, setup.keys, parts.extractor(), setup.concepts_key)
        if setup.lines is not None:
            root, keeps = setup.lines
            kept = KeptResults.for_metrics(self.cache, metrics, parts.extractor()) if keeps else None
            self.line_scorer = LineScorer(parts.extractor(), metrics, kept, root)
        observe_benchmarks(metrics, setup.benchmarks, setup.benchmarks.__getitem__, set())

    def score(self, job: BatchJob | LinesJob) -> BatchOutput | LinesOutput:
        """A stored batch's output, or a JSONL chunk's (given the results kept for its lines)."""
        if isinstance(job, BatchJob):
            output: Any = compute_batch(job, self.scorer)
        else:
            chunk, kept = job
            self.cache.seed(kept)
            output = score_lines(chunk, self.line_scorer)
        output.cache_entries, output.vectors = self.cache.drain()
        return output


def _limit_threads(threads: int) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency; a stripped install still scores
        return
    torch.set_num_threads(threads)


_WORKER: WorkerScorer | None = None  # this worker process's scorer (``start_worker``)


def start_worker(setup: WorkerSetup) -> None:
    """A local worker process's start: SIGINT left to the driver (which terminates it), its models built."""
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = WorkerScorer(setup)


def score_in_worker(job: Any) -> Any:
    assert _WORKER is not None, "start_worker runs first"
    return _WORKER.score(job)


class LocalProcesses:
    """``workers`` spawned processes; at most two batches each in flight, so the driver's reads stay ahead."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def score_batches(self, jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
        return self._map(jobs, WorkerSetup.of(task, self.workers), ordered=False)

    def score_lines(self, jobs: Iterable[LinesJob], task: LinesTask) -> Iterator[LinesOutput]:
        return self._map(jobs, WorkerSetup.of(task, self.workers), ordered=True)

    def _map(self, jobs: Iterable[Any], setup: WorkerSetup, ordered: bool) -> Iterator[Any]:
        pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=start_worker, initargs=(setup,))
        complete = False
        try:
            waiting = iter(jobs)
            pending: list[Future[Any]] = []
            while True:
                while len(pending) < 2 * self.workers and (job := next(waiting, None)) is not None:
                    pending.append(pool.submit(score_in_worker, job))
                if not pending:
                    break
                if ordered:  # the next in input order
                    yield pending.pop(0).result()
                    continue
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    pending.remove(future)
                    yield future.result()
            complete = True
        finally:
            stop_pool(pool, terminate=not complete)


def stop_pool(pool: ProcessPoolExecutor, terminate: bool) -> None:
    """Shut ``pool`` down; ``terminate``: its workers now, their unfinished batches dropped (scored next pass)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=not terminate, cancel_futures=True)
    if terminate:
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=10)

