"""Calls to one or several OpenAI-compatible replicas: adaptive concurrency, timeouts, replica health.

The one home of how HalluStudio talks to servers under load, shared by the LLM client
(extraction, judges, reviser, matcher), server embeddings and the ``openai:`` model backend.

- **Adaptive concurrency (AIMD)**, as lmms-eval and the OpenAI cookbook's parallel processor do:
  start at the configured level; a timeout or an HTTP 429 halves it (once per "window": calls
  sent before the last cut do not cut again); answers raise it by one again, quickly up to just
  below the level that was too much, then slowly (see ``AdaptiveLimit``), up to the configured level.
- **Timeouts grow with the work**: ``timeout = base_s + per_token_s × (prompt_tokens +
  output_tokens)``, prompt tokens estimated as characters / 4 and output tokens the call's
  ``max_tokens`` (its kind's answer cap below; ``LLMSettings.expected_output_tokens`` for a call
  without one). A call that timed out is retried with twice its timeout, and every later call
  waits twice as long too (up to 16×; easing back while answers come quickly), so a slow or
  queueing server is waited for rather than asked again and again.
- **Replicas**: each call goes to the healthy replica with the fewest calls in flight (ties in
  turn). A replica that drops the connection or answers 5xx is rested (1 s, doubling per failure
  in a row, at most 60 s) while the others take the load, then tried again.

The dispatcher for a set of URLs is shared by everything in the process that talks to them
(``shared_dispatcher``), so the extractor, the judge and a model run never add up to more than
the server can take. ``CallStats`` counts what happened (calls, retries, failures, parse
failures per call kind, seconds per call) for progress bars and the score summary.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, TypeVar

from ..config import parse_base_urls

T = TypeVar("T")
log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4  # a rough, tokenizer-free estimate; it sizes timeouts and the reviser's answer cap
REST_BASE_S = 1.0
REST_MAX_S = 60.0
MAX_TIMEOUT_SCALE = 16.0

# Answer caps: the most output tokens each kind of LLM answer may take, sent as its ``max_tokens`` (so
# also the output part of its timeout). A small model that falls into repeating itself would otherwise
# hold a server slot until its context is full (minutes on a one-slot llama.cpp server), for an answer
# that is unusable anyway. An answer cut at its cap (finish_reason "length") is unusable too: the client
# counts it as a parse failure of its kind and never caches it. Each cap is ``max_tokens`` in the
# request, so it is part of the answer's cache key: a changed cap asks again.
EXTRACT_ANSWER_TOKENS = 1024  # VISCON Figure 11, Tri-HE triplets: a dense caption's relations as JSON < ~600
JUDGE_ANSWER_TOKENS = 256  # Tri-HE's two questions: {"answer": "yes"} is ~6 tokens, a word and reasons ~100
LIST_ANSWER_TOKENS = 128  # HalFscore A.8: the "Incorrect Serial Numbers:" line or the JSON around the list,
LIST_TOKENS_PER_ITEM = 4  # plus at most one serial number per listed concept ("12, " is ~2 tokens)
# VISCON Figure 12's two answers, measured on 1,000 real LLaVA-1.5-7B captions with the model's tokenizer
# (benchmarks/bench_reviser_caps.py; caption tokens estimated as characters / 4, which overestimates
# prose by ~20 %): the calls, one per object, attribute and relation the parser finds, take at most
# 2 × caption tokens + 198; the revised caption, at most the caption (+ 6 for its JSON).
REVISE_QUERIES_TOKENS = 256  # the database calls: ~12 tokens per call
REVISE_QUERIES_PER_CAPTION_TOKEN = 2
REVISE_CAPTION_TOKENS = 32  # the revised caption: an edit of the caption, never much longer
REVISE_CAPTION_PER_CAPTION_TOKEN = 1.25


def list_answer_tokens(items: int) -> int:
    """The cap of an answer naming serial numbers out of a list of ``items`` (HalFscore's A.8 matcher).

    >>> list_answer_tokens(10)
    168
    """
    return LIST_ANSWER_TOKENS + LIST_TOKENS_PER_ITEM * max(0, items)


def revise_queries_tokens(caption: str) -> int:
    """The cap of the reviser's first answer about ``caption``: the database calls its concepts need.

    >>> revise_queries_tokens("A red car is parked on the street next to a dog.")  # 48 characters
    280
    """
    return REVISE_QUERIES_TOKENS + REVISE_QUERIES_PER_CAPTION_TOKEN * math.ceil(len(caption) / CHARS_PER_TOKEN)


def revise_caption_tokens(caption: str) -> int:
    """The cap of the reviser's second answer: ``caption`` revised (words removed or replaced).

    >>> revise_caption_tokens("A red car is parked on the street next to a dog.")
    47
    """
    return REVISE_CAPTION_TOKENS + math.ceil(REVISE_CAPTION_PER_CAPTION_TOKEN * math.ceil(len(caption) / CHARS_PER_TOKEN))


class Overloaded(RuntimeError):
    """The server is saturated (HTTP 429 or a timeout): retry, and send less at once."""

    def __init__(self, message: str, *, retry_after: float | None = None, timed_out: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.timed_out = timed_out


class ReplicaDown(RuntimeError):
    """The replica failed (connection refused or dropped, 5xx): rest it and retry elsewhere."""


class Retryable(RuntimeError):
    """Worth another try on any replica (a malformed body, say)."""


class GaveUp(RuntimeError):
    """Every try failed; ``last`` is the last error."""

    def __init__(self, message: str, last: BaseException | None) -> None:
        super().__init__(message)
        self.last = last


def request_timeout(base_s: float, per_token_s: float, prompt_chars: int, output_tokens: int) -> float:
    """``base_s + per_token_s × (prompt_chars / 4 + output_tokens)``: the timeout of one try.

    >>> request_timeout(30.0, 0.02, 4000, 500)
    60.0
    """
    return base_s + per_token_s * (prompt_chars / CHARS_PER_TOKEN + output_tokens)


class AdaptiveLimit:
    """How many calls may be in flight: AIMD between 1 and ``ceiling`` (thread-safe).

    After an overload at level ``L`` the level halves; it then climbs back by one per
    success up to ``L - 1`` (a level the server took a moment ago), and above that by one
    per ``4 × level`` successes in a row, probing slowly for room. Only successes of calls
    sent since the last cut that filled the limit count (as TCP's window grows only on new
    data and when it is the bottleneck). Against a server that
    takes 4 calls at once, a run configured at 32 settles at 4 (tests/test_llm_dispatch.py).
    """

    def __init__(self, ceiling: int) -> None:
        if ceiling < 1:
            raise ValueError(f"concurrency must be at least 1, got {ceiling}")
        self.ceiling = ceiling
        self.level = ceiling
        self.in_flight = 0
        self._window = 0  # bumped at every cut; a call remembers the window it started in
        self._streak = 0
        self._overloaded_at: int | None = None  # the level of the last cut
        self._cond = threading.Condition()
        self.history: list[tuple[float, int]] = [(time.monotonic(), ceiling)]  # (when, level) at every change

    def acquire(self) -> tuple[int, bool]:
        """Wait for room; the token for ``release``: the window, and whether this call filled the limit."""
        with self._cond:
            while self.in_flight >= self.level:
                self._cond.wait()
            self.in_flight += 1
            return self._window, self.in_flight >= self.level

    def release(self, token: tuple[int, bool], outcome: str) -> None:
        """``outcome``: ``ok``, ``overloaded`` (429, timeout) or anything else (neutral)."""
        window, full = token
        with self._cond:
            self.in_flight -= 1
            # Only answers to calls sent at the current level, filling it, say it is safe to grow.
            if outcome == "ok" and self.level < self.ceiling and window == self._window and full:
                self._streak += 1
                known_good = self._overloaded_at is not None and self.level < self._overloaded_at - 1
                if self._streak >= (1 if known_good else 4 * self.level):
                    self._set(self.level + 1)
            elif outcome == "overloaded" and window == self._window:
                self._window += 1
                self._overloaded_at = self.level
                self._set(max(1, self.level // 2))
            self._cond.notify_all()

    def mean_level(self, since: float, until: float | None = None) -> float:
        """The time-weighted mean level between two ``time.monotonic()`` instants."""
        until = time.monotonic() if until is None else until
        total = 0.0
        for (t0, level), (t1, _) in zip(self.history, self.history[1:] + [(until, 0)]):
            total += level * max(0.0, min(t1, until) - max(t0, since))
        return total / (until - since) if until > since else float(self.level)

    def _set(self, level: int) -> None:
        self.level = level
        self._streak = 0
        self.history.append((time.monotonic(), level))


@dataclass
class _Replica:
    url: str
    in_flight: int = 0
    failures: int = 0  # in a row
    rest_until: float = 0.0
    answered: int = 0


class Replicas:
    """Pick a healthy replica with the fewest calls in flight; rest a failing one with back-off."""

    def __init__(self, urls: Sequence[str]) -> None:
        if not urls:
            raise ValueError("no base URL given")
        self._replicas = [_Replica(u) for u in urls]
        self._turn = 0
        self._lock = threading.Lock()

    @property
    def urls(self) -> list[str]:
        return [r.url for r in self._replicas]

    def answered(self) -> dict[str, int]:
        return {r.url: r.answered for r in self._replicas}

    def pick(self) -> str:
        """The healthy replica with the fewest calls in flight; when all rest, the one rested longest.

        Nobody waits for a rest to end: with every replica failing, the caller's own retry
        back-off paces the tries (a lone replica behaves as a plain URL would).
        """
        with self._lock:
            now = time.monotonic()
            healthy = [r for r in self._replicas if r.rest_until <= now]
            self._turn += 1
            n = len(self._replicas)
            if healthy:
                best = min(healthy, key=lambda r: (r.in_flight, (self._replicas.index(r) - self._turn) % n))
            else:
                best = min(self._replicas, key=lambda r: r.rest_until)
            best.in_flight += 1
            return best.url

    def done(self, url: str, ok: bool | None) -> None:
        """``ok``: True answered, False failed (rest it), None neither (a 429, a bad answer)."""
        with self._lock:
            r = next(r for r in self._replicas if r.url == url)
            r.in_flight -= 1
            if ok:
                r.failures, r.rest_until = 0, 0.0
                r.answered += 1
            elif ok is False:
                r.failures += 1
                r.rest_until = time.monotonic() + min(REST_MAX_S, REST_BASE_S * 2 ** (r.failures - 1))


@dataclass
class CallStats:
    """What the calls through a dispatcher did. Counters only grow; ``since`` gives a difference."""

    calls: int = 0  # tries sent to a server
    done: int = 0  # calls answered
    retried: int = 0
    failed: int = 0  # calls given up on
    seconds: float = 0.0  # summed over answered tries
    parse_failures: Counter[str] = field(default_factory=Counter)  # call kind -> answers unusable
    answered_by_kind: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: float) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)

    def parse_failed(self, kind: str) -> None:
        with self._lock:
            self.parse_failures[kind] += 1

    def answered(self, kind: str) -> None:
        with self._lock:
            self.answered_by_kind[kind] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"calls": self.calls, "done": self.done, "retried": self.retried, "failed": self.failed,
                    "seconds": self.seconds, "parse_failures": dict(self.parse_failures),
                    "answered_by_kind": dict(self.answered_by_kind)}


def stats_since(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The counts between two ``CallStats.snapshot()`` (of ``all_stats``), zero kinds left out."""
    out: dict[str, Any] = {k: after[k] - before.get(k, 0) for k in ("calls", "done", "retried", "failed", "seconds")}
    for key in ("parse_failures", "answered_by_kind"):
        diff = {k: v - before.get(key, {}).get(k, 0) for k, v in after[key].items()}
        out[key] = {k: v for k, v in diff.items() if v}
    return out


class Dispatcher:
    """Run calls against ``urls`` with retries, AIMD concurrency and replica health."""

    def __init__(self, urls: Sequence[str], *, concurrency: int, max_retries: int = 4, backoff_s: float = 0.5,
                 backoff_max_s: float = 30.0) -> None:
        self.replicas = Replicas(parse_base_urls(urls))
        self.limit = AdaptiveLimit(int(concurrency))
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.stats = CallStats()
        # Every call's timeout is multiplied by this: doubled when a call times out, so that the
        # calls after it wait as long as the queue now is (not only its own retry); it eases back
        # toward 1 while answers come well within their timeout.
        self.timeout_scale = 1.0
        self._scale_lock = threading.Lock()
        self._in_flight = 0

    def postfix(self) -> dict[str, Any]:
        """For a tqdm postfix: calls done, in flight, retried, failed, and the current concurrency."""
        s = self.stats
        return {"done": s.done, "in_flight": self.limit.in_flight, "retried": s.retried, "failed": s.failed,
                "concurrency": f"{self.limit.level}/{self.limit.ceiling}"}

    def call(self, attempt: Callable[[str, float], T], *, timeout_s: float, what: str = "call") -> T:
        """``attempt(url, timeout_s)`` until it returns; the errors above say how to retry.

        Any other exception is final and propagates at once. After the last try ``GaveUp``.
        """
        tries = max(1, self.max_retries + 1)
        last: BaseException | None = None
        own_scale = 1.0  # this call's: doubled at each of its timeouts
        for n in range(tries):
            if n:
                self.stats.add(retried=1)
                delay = getattr(last, "retry_after", None)
                if delay is None:
                    delay = min(self.backoff_max_s, self.backoff_s * 2 ** (n - 1)) * (0.5 + random.random())
                time.sleep(min(delay, self.backoff_max_s))
            token = self.limit.acquire()
            url = self.replicas.pick()
            outcome, healthy = "other", None
            self.stats.add(calls=1)
            scale = max(own_scale, self.timeout_scale)
            start = time.monotonic()
            try:
                result = attempt(url, timeout_s * scale)
            except Overloaded as exc:
                last, outcome = exc, "overloaded"
                if exc.timed_out:
                    own_scale = 2 * scale
                    with self._scale_lock:
                        self.timeout_scale = min(MAX_TIMEOUT_SCALE, max(self.timeout_scale, own_scale))
            except ReplicaDown as exc:
                last, healthy = exc, False
            except Retryable as exc:
                last = exc
            except BaseException:
                self.stats.add(failed=1)
                raise
            else:
                outcome, healthy = "ok", True
                took = time.monotonic() - start
                self.stats.add(done=1, seconds=took)
                if took < timeout_s * scale / 4:
                    with self._scale_lock:
                        self.timeout_scale = max(1.0, self.timeout_scale * 0.95)
                return result
            finally:
                self.replicas.done(url, healthy)
                self.limit.release(token, outcome)
            log.warning("%s failed (try %d of %d, %s): %s", what, n + 1, tries, url, last)
        self.stats.add(failed=1)
        raise GaveUp(f"{what} failed after {tries} tries: {last}", last)

    def map(self, jobs: Sequence[Callable[[], T]], *, on_progress: Callable[[dict[str, Any]], None] | None = None
            ) -> list[T | BaseException]:
        """Run ``jobs`` (each typically wraps ``call``) side by side; results (or exceptions) in order."""
        if len(jobs) <= 1:
            return [_outcome(j) for j in jobs]
        results: list[T | BaseException] = [None] * len(jobs)  # type: ignore[list-item]

        def run(i: int) -> None:
            results[i] = _outcome(jobs[i])
            if on_progress is not None:
                on_progress(self.postfix())

        with ThreadPoolExecutor(max_workers=min(len(jobs), self.limit.ceiling)) as pool:
            list(pool.map(run, range(len(jobs))))
        return results


def _outcome(job: Callable[[], T]) -> T | BaseException:
    try:
        return job()
    except Exception as exc:  # noqa: BLE001 - each job's failure is its own result
        return exc


_SHARED: dict[tuple[Any, ...], Dispatcher] = {}
_SHARED_LOCK = threading.Lock()


def shared_dispatcher(urls: Sequence[str], *, concurrency: int, max_retries: int, backoff_s: float = 0.5
                      ) -> Dispatcher:
    """The process's one dispatcher for these URLs and settings.

    Everything that talks to the same servers with the same settings shares their concurrency
    limit and replica health; other settings (tests use tiny back-offs) get a dispatcher of their own.
    """
    key = (tuple(parse_base_urls(urls)), int(concurrency), max_retries, backoff_s)
    with _SHARED_LOCK:
        if key not in _SHARED:
            # Back-off doubles per try up to 30 first delays (30 s at the default 1 s).
            _SHARED[key] = Dispatcher(key[0], concurrency=concurrency, max_retries=max_retries, backoff_s=backoff_s,
                                      backoff_max_s=30 * backoff_s)
        return _SHARED[key]


def all_stats() -> dict[str, Any]:
    """The summed ``CallStats`` snapshot of every shared dispatcher (for before/after differences)."""
    total = CallStats().snapshot()
    with _SHARED_LOCK:
        dispatchers = list(_SHARED.values())
    for d in dispatchers:
        snap = d.stats.snapshot()
        for k in ("calls", "done", "retried", "failed", "seconds"):
            total[k] += snap[k]
        for key in ("parse_failures", "answered_by_kind"):
            for kind, n in snap[key].items():
                total[key][kind] = total[key].get(kind, 0) + n
    return total


def live_postfix() -> dict[str, Any]:
    """The progress of every shared dispatcher now (for a tqdm postfix): calls done, in flight,
    retried, failed, and the current concurrency (``level/ceiling`` of each busy dispatcher)."""
    with _SHARED_LOCK:
        dispatchers = list(_SHARED.values())
    parts = [d.postfix() for d in dispatchers]
    if not parts:
        return {}
    out: dict[str, Any] = {k: sum(p[k] for p in parts) for k in ("done", "in_flight", "retried", "failed")}
    busy = [p["concurrency"] for p in parts if p["in_flight"]]
    if busy:
        out["concurrency"] = " ".join(busy)
    return out


@contextmanager
def live_progress(bar: Any, every_s: float = 1.0) -> Iterator[None]:
    """Refresh ``bar``'s postfix (a tqdm bar) with ``live_postfix()`` every second while the block runs."""
    stop = threading.Event()

    def refresh() -> None:
        while not stop.wait(every_s):
            post = live_postfix()
            if post.get("done") or post.get("in_flight"):
                bar.set_postfix(post)

    worker = threading.Thread(target=refresh, daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join()
