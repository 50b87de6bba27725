"""The ordered response-id lists of Browse filters, held once per process (in ``AppContext``).

Inspect's session state keeps only a key to its filter's list: Gradio deep-copies session state
on every event (tens of ms for 100k ids), and re-running the browse query on each click costs
more than the click itself. The lists are derived data, so dropping one is harmless: a session
whose key is gone re-reads its filter's list from the store.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Sequence


class IdLists:
    """>>> lists = IdLists(kept=1)
    >>> key = lists.remember(["a", "b"])
    >>> lists.get(key)
    ('a', 'b')
    >>> _ = lists.remember(["c"]); lists.get(key) is None
    True
    """

    def __init__(self, kept: int = 8) -> None:
        self.kept = kept
        self._lists: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, ids: Sequence[str]) -> str:
        ids = tuple(ids)
        key = hashlib.blake2b("\n".join(ids).encode(), digest_size=12).hexdigest()
        with self._lock:
            self._lists[key] = ids
            self._lists.move_to_end(key)
            while len(self._lists) > self.kept:
                self._lists.popitem(last=False)
        return key

    def get(self, key: str) -> tuple[str, ...] | None:
        with self._lock:
            return self._lists.get(key)
