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
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ..store import Store


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


STORE_ORDER = "store-order"  # the key of "every response, in (run, sample) order": read from the store, never listed


class StoreOrder(Sequence[str]):
    """Every response in the store's (run, sample) order, as a sequence read by position from the store.

    A session with no Browse filter steps through this instead of a list of every id: its first
    "next" costs two point queries, not a 100k-row listing.
    """

    def __init__(self, store: "Store") -> None:
        self.store = store
        self._len = store.count_responses()

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if not -self._len <= index < self._len:
            raise IndexError(index)
        found = self.store.response_id_at(index % self._len)
        if found is None:
            raise IndexError(index)
        return found

    def __contains__(self, response_id: object) -> bool:
        return isinstance(response_id, str) and self.store.response_position(response_id) is not None

    def index(self, response_id: str, *_: object) -> int:  # type: ignore[override]
        found = self.store.response_position(response_id)
        if found is None:
            raise ValueError(f"{response_id!r} is not in the store")
        return found
