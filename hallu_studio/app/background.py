"""One long library call on a daemon thread, with a status line the app polls.

The first start scores the demo this way, so the app opens in seconds and its
views fill in as scores land (the Overview's cache follows the store's scores).
When the app stops, ``stop`` sets ``stopping`` (the work checks it between batches) and
joins the thread: a thread still inside torch or spaCy when the interpreter finalizes is
killed there by a forced unwind through C++ code, which aborts the process
("terminate called without an active exception").
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from ..store import StoreClosedError

log = logging.getLogger(__name__)


class BackgroundWork:
    """>>> work = BackgroundWork()
    >>> work.status() is None
    True
    >>> work.start("counting", lambda: None, done=lambda: "counted"); work.wait(5); work.status() is None
    True
    >>> work.finished()
    'counted (in 0 min)'
    """

    def __init__(self) -> None:
        self._label: str | None = None
        self._error: str | None = None
        self._started = 0.0
        self._thread: threading.Thread | None = None
        self._progress: Callable[[], str] | None = None
        self._finished: str | None = None
        # Set once, when the app stops: the work passed it ends at its next batch.
        self.stopping = threading.Event()

    def start(self, label: str, fn: Callable[[], None], progress: Callable[[], str] | None = None,
              done: Callable[[], str] | None = None) -> None:
        """Run ``fn`` on a daemon thread; ``progress`` says how far it is, ``done`` what it did once it is over.

        ``fn`` should check ``stopping`` between batches and end (by returning or raising) once it is set."""
        if self.stopping.is_set():
            raise RuntimeError("the app is stopping: no new background work")
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError(f"background work already running: {self._label}")
        self._label, self._error, self._started, self._progress = label, None, time.monotonic(), progress
        self._finished = None

        def target() -> None:
            try:
                fn()
                minutes = (time.monotonic() - self._started) / 60
                self._finished = f"{done() if done else label + ': done'} (in {minutes:.0f} min)"
            except StoreClosedError:
                log.info("%s: stopped, the store was closed (the app is stopping); it resumes on the next start", label)
            except Exception as exc:  # noqa: BLE001 - shown in the banner and logged, never lost
                if self.stopping.is_set():  # ended by the stop (between batches, or cut off by the closing store)
                    log.info("%s: stopped with the app (%s); it resumes on the next start", label,
                             type(exc).__name__)
                    return
                log.exception("background work %r failed", label)
                self._error = f"{type(exc).__name__}: {exc}"
            finally:
                if self._error is None:
                    self._label = None

        self._thread = threading.Thread(target=target, daemon=True, name=f"hallu-studio-{label[:20]}")
        self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self, timeout: float | None = None) -> bool:
        """Ask the work to end at its next batch and wait for it; True once no work is running.

        >>> import threading; work, began = BackgroundWork(), threading.Event()
        >>> def batches():
        ...     began.set()
        ...     while not work.stopping.wait(0.01): pass
        >>> work.start("looping", batches); began.wait(5) and work.stop(5)
        True
        >>> work.status() is None and work.finished() is not None
        True
        """
        self.stopping.set()
        self.wait(timeout)
        return not self.running()

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def finished(self) -> str | None:
        """What the work did, once it ended well (None while it runs, after a failure, or when none ran)."""
        return None if self.running() else self._finished

    def status(self) -> str | None:
        """A line for the banner while working (or after a failure); None when there is nothing to say."""
        if self._error is not None:
            return f"{self._label} failed: {self._error}"
        if self._label is None:
            return None
        minutes = (time.monotonic() - self._started) / 60
        extra = f"; {self._progress()}" if self._progress is not None else ""
        return f"{self._label} ({minutes:.0f} min so far{extra}); views fill in as scores land"
