"""One model job at a time: a queue worked by a single thread, with progress, stages and cancel.

The app owns one ``JobQueue`` per process (GPU memory allows one run at a time);
sessions submit jobs and poll their status. A job is a callable taking a cancel
event and a progress callback ``progress(done, total, stage)``; it returns a message,
or a ``JobResult`` when it knows its final state better than the queue does (a run that
completed, whose scoring was then cancelled, is still a completed run).
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..store import StoreClosedError

log = logging.getLogger(__name__)

QUEUED, RUNNING, SCORING, COMPLETED, FAILED, CANCELLED = (
    "queued", "running", "scoring", "completed", "failed", "cancelled")
ACTIVE = (QUEUED, RUNNING, SCORING)
FINAL = (COMPLETED, FAILED, CANCELLED)


class Progress(Protocol):
    def __call__(self, done: int, total: int, stage: str = RUNNING) -> None: ...


@dataclass(frozen=True)
class JobResult:
    status: str  # one of FINAL
    message: str


JobFn = Callable[[threading.Event, Progress], "str | JobResult"]


@dataclass
class Job:
    id: int
    title: str
    fn: JobFn
    status: str = QUEUED  # queued | running | scoring | completed | failed | cancelled
    done: int = 0
    total: int = 0
    message: str = ""
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    def state_text(self) -> str:
        """The state as a person reads it: "running (cancelling…)" once a cancel was asked for."""
        return f"{self.status} (cancelling…)" if self.active and self.cancel.is_set() else self.status

    def progress_text(self) -> str:
        if not self.total:
            return ""
        unit = {SCORING: "scored"}.get(self.status, "generated" if self.status == RUNNING else "")
        return f"{self.done}/{self.total} {unit}".strip()


class JobQueue:
    """FIFO of jobs run one at a time by a daemon worker thread.

    >>> q = JobQueue()
    >>> job = q.submit("noop", lambda cancel, progress: "ok")
    >>> q.wait(job.id, timeout=5).status
    'completed'
    """

    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._finished = threading.Condition(self._lock)
        self._worker = threading.Thread(target=self._work, name="hallu-studio-jobs", daemon=True)
        self._worker.start()

    def submit(self, title: str, fn: JobFn) -> Job:
        with self._lock:
            job = Job(next(self._ids), title, fn)
            self._jobs[job.id] = job
        self._queue.put(job)
        return job

    def cancel(self, job_id: int) -> bool:
        """Ask a queued, running or scoring job to stop; False when it has already ended."""
        with self._finished:
            job = self._jobs.get(job_id)
            if job is None or not job.active:
                return False
            job.cancel.set()
            if job.status == QUEUED:
                job.status, job.message = CANCELLED, "cancelled before it started"
                self._finished.notify_all()
            return True

    def cancel_all(self) -> None:
        """Ask every queued, running or scoring job to stop."""
        with self._lock:
            active = [job.id for job in self._jobs.values() if job.active]
        for job_id in active:
            self.cancel(job_id)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Cancel every queued or running job and end the worker (a running job stops at its next chunk or
        batch); True once the worker has ended. The app calls it on its way out.

        >>> q = JobQueue(); q.shutdown(5)
        True
        """
        self.cancel_all()
        self._queue.put(None)  # the worker ends when it reaches this
        self._worker.join(timeout)
        return not self._worker.is_alive()

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def wait(self, job_id: int, timeout: float | None = None) -> Job:
        with self._finished:
            self._finished.wait_for(lambda: self._jobs[job_id].status in FINAL, timeout)
            return self._jobs[job_id]

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            with self._lock:
                if job.status == CANCELLED:
                    continue
                job.status = RUNNING

            def progress(done: int, total: int, stage: str = RUNNING, job: Job = job) -> None:
                with self._lock:
                    job.done, job.total, job.status = done, total, stage

            try:
                outcome = job.fn(job.cancel, progress)
                if isinstance(outcome, JobResult):
                    status, message = outcome.status, outcome.message
                else:
                    status, message = (CANCELLED if job.cancel.is_set() else COMPLETED), outcome
            except StoreClosedError:  # the app is stopping: what was stored stays, the rest is asked again later
                message, status = "stopped: the store was closed (the app is stopping)", CANCELLED
                log.info("job %d (%s) stopped: the store was closed", job.id, job.title)
            except Exception as exc:  # noqa: BLE001 - a failed job is shown, the worker goes on
                message, status = f"{type(exc).__name__}: {exc}", FAILED
                log.exception("job %d (%s) failed", job.id, job.title)
            with self._finished:
                job.status, job.message = status, str(message or "")
                self._finished.notify_all()
