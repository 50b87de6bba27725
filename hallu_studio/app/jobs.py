"""One model job at a time: a queue worked by a single thread, with progress and cancel.

The app owns one ``JobQueue`` per process (GPU memory allows one run at a time);
sessions submit jobs and poll their status. A job is a callable taking a cancel
event and a progress callback.
"""

from __future__ import annotations

import itertools
import queue
import threading
import traceback
from dataclasses import dataclass, field
from typing import Callable

JobFn = Callable[[threading.Event, Callable[[int, int], None]], str]


@dataclass
class Job:
    id: int
    title: str
    fn: JobFn
    status: str = "queued"  # queued | running | done | failed | cancelled
    done: int = 0
    total: int = 0
    message: str = ""
    cancel: threading.Event = field(default_factory=threading.Event)


class JobQueue:
    """FIFO of jobs run one at a time by a daemon worker thread.

    >>> q = JobQueue()
    >>> job = q.submit("noop", lambda cancel, progress: "ok")
    >>> q.wait(job.id, timeout=5).status
    'done'
    """

    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._queue: queue.Queue[Job] = queue.Queue()
        self._finished = threading.Condition(self._lock)
        threading.Thread(target=self._work, name="hallu-studio-jobs", daemon=True).start()

    def submit(self, title: str, fn: JobFn) -> Job:
        with self._lock:
            job = Job(next(self._ids), title, fn)
            self._jobs[job.id] = job
        self._queue.put(job)
        return job

    def cancel(self, job_id: int) -> bool:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.status in ("done", "failed", "cancelled"):
                return False
            job.cancel.set()
            if job.status == "queued":
                job.status = "cancelled"
            return True

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def wait(self, job_id: int, timeout: float | None = None) -> Job:
        with self._finished:
            self._finished.wait_for(lambda: self._jobs[job_id].status in ("done", "failed", "cancelled"), timeout)
            return self._jobs[job_id]

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            with self._lock:
                if job.status == "cancelled":
                    continue
                job.status = "running"

            def progress(done: int, total: int, job: Job = job) -> None:
                job.done, job.total = done, total

            try:
                message = job.fn(job.cancel, progress)
                status = "cancelled" if job.cancel.is_set() else "done"
            except Exception as exc:  # noqa: BLE001 - a failed job is shown, the worker goes on
                message, status = f"{type(exc).__name__}: {exc}", "failed"
                traceback.print_exc()
            with self._finished:
                job.status, job.message = status, str(message or "")
                self._finished.notify_all()
