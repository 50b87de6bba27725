"""The Overview's leaderboard is expensive (bootstrap per run and metric): keep the last one per
(benchmark, by-domain) for as long as the scores behind it do not change.

One ``LeaderboardCache`` per process (in ``AppContext``); entries are derived data, rebuilt when
the store's score fingerprint moves, so no session ever sees stale numbers.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..store import Store


def score_fingerprint(store: "Store") -> tuple[Any, ...]:
    """Changes whenever a score or response is added or recomputed."""
    configs = store.score_configs()
    return (store.count_responses(), tuple((c["metric"], c["config_key"], c["scores"], c["computed_at"])
                                           for c in configs))


class LeaderboardCache:
    """>>> cache = LeaderboardCache()
    >>> calls = []
    >>> cache.get(("b", False), ("fp",), lambda: calls.append(1) or "board")
    'board'
    >>> cache.get(("b", False), ("fp",), lambda: calls.append(1) or "board"), len(calls)
    ('board', 1)
    """

    def __init__(self) -> None:
        self._entries: dict[Any, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, fingerprint: Any, build: Callable[[], Any]) -> Any:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] == fingerprint:
                return hit[1]
            # Built under the lock: two sessions asking at once build it once.
            value = build()
            self._entries[key] = (fingerprint, value)
            return value
