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


def _keep_last(entries: OrderedDict, key: object, value: object, kept: int) -> None:
    """Put ``key`` last (most recent) and drop the oldest entries beyond ``kept``."""
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > kept:
        entries.popitem(last=False)


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
        self._order: StoreOrder | None = None

    def remember(self, ids: Sequence[str]) -> str:
        ids = tuple(ids)
        key = hashlib.blake2b("\n".join(ids).encode(), digest_size=12).hexdigest()
        with self._lock:
            _keep_last(self._lists, key, ids, self.kept)
        return key

    def get(self, key: str) -> tuple[str, ...] | None:
        with self._lock:
            return self._lists.get(key)

    def store_order(self, store: "Store") -> "StoreOrder":
        """The process's one ``StoreOrder`` of ``store`` (its known positions shared by every session)."""
        with self._lock:
            if self._order is None or self._order.store is not store:
                self._order = StoreOrder(store)
            return self._order


STORE_ORDER = "store-order"  # the key of "every response, in (run, sample) order": read from the store, never listed


class StoreOrder(Sequence[str]):
    """Every response in the store's (run, sample) order, as a sequence read by position from the store.

    A session with no Browse filter steps through this instead of a list of every id: its first
    "next" costs a count and two small queries, not a 100k-row listing. Positions seen are kept
    (per process, while the count of responses stays the same), so a step to a neighbour of a
    known position is a keyset query from that response instead of an offset.
    """

    def __init__(self, store: "Store", kept: int = 4096) -> None:
        self.store = store
        self.kept = kept
        self._lock = threading.Lock()
        self._count = -1
        self._seen: OrderedDict[int, str] = OrderedDict()

    def __len__(self) -> int:
        count = self.store.count_responses()
        with self._lock:
            if count != self._count:  # responses came or went: positions may have moved
                self._count, self._seen = count, OrderedDict()
        return count

    def _remember(self, index: int, response_id: str) -> str:
        with self._lock:
            _keep_last(self._seen, index, response_id, self.kept)
        return response_id

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        n = len(self)
        if not -n <= index < n:
            raise IndexError(index)
        index %= n
        with self._lock:
            hit = self._seen.get(index)
            before, after = self._seen.get(index - 1), self._seen.get(index + 1)
        found = hit or (self.store.response_id_beside(before) if before else
                        self.store.response_id_beside(after, backwards=True) if after else
                        self.store.response_id_at(index))
        if found is None:
            raise IndexError(index)
        return self._remember(index, found)

    def __contains__(self, response_id: object) -> bool:
        return isinstance(response_id, str) and self.store.response_position(response_id) is not None

    def index(self, response_id: str, *_: object) -> int:  # type: ignore[override]
        found = self.store.response_position(response_id)
        if found is None:
            raise ValueError(f"{response_id!r} is not in the store")
        len(self)  # drops stale positions before this one is kept
        self._remember(found, response_id)
        return found
