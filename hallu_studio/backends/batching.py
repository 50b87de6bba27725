"""Batch a list of items, halving the batch size when the accelerator runs out of memory.

Pure logic (no torch): ``run_batch`` does the work and ``is_oom`` recognises an
out-of-memory error, so the back-off is tested on CPU with a fake OOM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class BackoffOutcome(Generic[R]):
    results: list[R | BaseException]  # one per item, same order: a result or the error that item met
    final_batch_size: int
    halvings: int


def is_cuda_oom(exc: BaseException) -> bool:
    """torch.cuda.OutOfMemoryError, or the RuntimeError older builds raise."""
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def run_with_oom_backoff(items: Sequence[T], batch_size: int, run_batch: Callable[[list[T]], list[R]],
                         is_oom: Callable[[BaseException], bool] = is_cuda_oom,
                         on_oom: Callable[[], None] | None = None) -> BackoffOutcome[R]:
    """Run ``run_batch`` over chunks of ``items``; on OOM halve the batch and retry that chunk.

    The smaller batch size is kept for the rest of the items (memory pressure
    rarely goes away). An item that runs out of memory alone gets the error as
    its result; any other error fails just that chunk's items.

    >>> calls = []
    >>> def work(chunk):
    ...     calls.append(len(chunk))
    ...     if len(chunk) > 2:
    ...         raise RuntimeError("CUDA out of memory")
    ...     return [x * 10 for x in chunk]
    >>> out = run_with_oom_backoff([1, 2, 3, 4, 5], 8, work)
    >>> out.results, out.final_batch_size, calls
    ([10, 20, 30, 40, 50], 2, [5, 4, 2, 2, 1])
    """
    if batch_size < 1:
        raise ValueError(f"batch size must be at least 1, got {batch_size}")
    results: list[R | BaseException] = []
    size, halvings, start = batch_size, 0, 0
    while start < len(items):
        chunk = list(items[start:start + size])
        try:
            out = run_batch(chunk)
            if len(out) != len(chunk):
                raise RuntimeError(f"backend returned {len(out)} results for {len(chunk)} requests")
            results.extend(out)
            start += len(chunk)
        except BaseException as exc:  # noqa: BLE001 - sorted below: OOM backs off, the rest fail the chunk
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            if on_oom is not None and is_oom(exc):
                on_oom()
            if is_oom(exc) and size > 1:
                size = max(1, size // 2)
                halvings += 1
                continue
            results.extend([exc] * len(chunk))
            start += len(chunk)
    return BackoffOutcome(results=results, final_batch_size=size, halvings=halvings)
