"""Outputs that come back in any order (from worker processes or Ray actors), given back in input order."""

from __future__ import annotations

from typing import Any, Iterator


def in_input_order(outputs: Iterator[tuple[int, Any]]) -> Iterator[Any]:
    """Outputs numbered in input order, yielded in that order (those that arrive early wait)."""
    waiting: dict[int, Any] = {}
    following = 0
    for number, output in outputs:
        waiting[number] = output
        while following in waiting:
            yield waiting.pop(following)
            following += 1
