"""Each annotator's "unrated" queue kept between actions, and the item each one has on screen held for them.

``annotation_queue`` reads every response and every rating: right once, too slow per key press on a busy day
(100-300 ms on a few thousand responses, growing with the store). Here the queue is computed once per annotator
and then walked: each ``next_item`` reads the ratings in force of a few candidates only (one keyed query per
batch of ``BATCH``), drops those the annotator rated or that have all their ratings, and hands out the first
that is still open. The order is recomputed when the number of responses changes (an import, a run) and at the
latest every ``REFRESH_S`` seconds (others' ratings reorder "least-rated first"; between, an item someone else
rated keeps its place, but one with all its ratings is never handed out). An undo puts its item back in the
annotator's queue (``reopen``), without recomputing it.

The item handed out is held for its annotator for ``HOLD_S`` seconds (their next item or an undo lets it go):
while held it counts as a rating on its way, so with one rating per item two people are not given the same
item at once (what Label Studio users expect of a queue). A hold is advice to the queue, never a lock on the
store: a rating of any item is still accepted.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING

from ..model import APP_SOURCE, ValidationError
from .queue_order import mixed_order, unrated_order

if TYPE_CHECKING:
    from ..store import Store

BATCH = 20
REFRESH_S = 600.0
HOLD_S = 120.0


@dataclass
class _Order:
    response_ids: list[str]
    responses: int  # the store's response count it was computed on
    made_at: float
    dropped: set[str] = field(default_factory=set)


class UnratedQueues:
    """Per process: every annotator's cached "unrated" order and the items held for them (thread-safe)."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._orders: dict[tuple[str, int], _Order] = {}
        self._holding: dict[str, tuple[str, float]] = {}  # annotator -> (response id, held until)
        self._rows: tuple[int, list[str], list[dict]] | None = None  # (response count, ids, candidate rows)

    def reopen(self, annotator: str, response_id: str | None) -> None:
        """The annotator undid something on ``response_id``: it may be open to them again, first in their
        queue (the next walk checks it like any other), and what they held is free again."""
        with self._lock:
            self._holding.pop(annotator, None)
            if not response_id:
                return
            for (who, _), order in self._orders.items():
                if who == annotator:
                    order.dropped.discard(response_id)
                    if response_id in order.response_ids:
                        order.response_ids.remove(response_id)
                    order.response_ids.insert(0, response_id)

    def _shared(self, store: "Store", responses: int) -> tuple[list[str], list[dict]]:
        """Every response id and their study candidate rows: the same for every annotator, read once per count."""
        with self._lock:
            if self._rows is not None and self._rows[0] == responses:
                return self._rows[1], self._rows[2]
        listed, rows = store.response_ids(), store.study_candidates(store.run_ids())
        with self._lock:
            self._rows = (responses, listed, rows)
        return listed, rows

    def _order(self, store: "Store", annotator: str, per_item: int) -> _Order:
        from . import current_ratings

        if per_item < 1:
            raise ValidationError(f"ratings_per_item must be at least 1, got {per_item}")
        responses = store.count_responses()
        with self._lock:
            order = self._orders.get((annotator, per_item))
        if order is None or order.responses != responses or self._clock() - order.made_at > REFRESH_S:
            listed, rows = self._shared(store, responses)
            ratings = current_ratings(store.list_events_of_kinds(["rating", "undo"], source=APP_SOURCE))
            ids = unrated_order(mixed_order(listed, rows, annotator), ratings, annotator, per_item)
            order = _Order(ids, responses, self._clock())
            with self._lock:
                self._orders[(annotator, per_item)] = order
        return order

    def next_item(self, store: "Store", annotator: str, per_item: int, after: str | None = None) -> tuple[str | None, int]:
        """The annotator's next item (None: nothing left) and how many candidates are left at most.

        ``after``: the item on screen, not rated: the walk starts past it (and comes back round to it last).
        """
        from . import current_ratings

        order = self._order(store, annotator, per_item)
        ids, n = order.response_ids, len(order.response_ids)
        begin = ids.index(after) + 1 if after and after in ids else 0
        walk = (ids[(begin + k) % n] for k in range(n))  # no copy of the order: a key press reads a batch or two
        open_ids = (rid for rid in walk if rid not in order.dropped)
        seen = 0
        while batch := list(islice(open_ids, BATCH)):
            seen += len(batch)
            ratings = current_ratings(store.list_events_of_kinds(["rating", "undo"], source=APP_SOURCE,
                                                                  response_ids=batch))
            raters: dict[str, set[str]] = {}
            for rid, who in ratings:
                raters.setdefault(rid, set()).add(who)
            with self._lock:  # checked and held together: two callers never take the last open place
                now = self._clock()
                held = Counter(rid for who, (rid, until) in self._holding.items()
                               if who != annotator and until > now and who not in raters.get(rid, ()))
                for rid in batch:
                    done = raters.get(rid, set())
                    if annotator in done or len(done) >= per_item:
                        order.dropped.add(rid)  # for good, until the order is recomputed
                    elif len(done) + held[rid] < per_item:
                        self._holding[annotator] = (rid, now + HOLD_S)
                        return rid, n - len(order.dropped) - seen + 1
        with self._lock:
            self._holding.pop(annotator, None)
        return None, 0
