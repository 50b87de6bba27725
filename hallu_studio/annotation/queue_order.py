"""The "unrated" queue's order, from what the store gives (pure): each annotator's mixed order of the responses
and, of it, what they still have to rate. ``annotation_queue`` computes it whole; ``queue_cache`` keeps it."""

from __future__ import annotations

from collections import Counter
from typing import Any


def mixed_order(listed: list[str], rows: list[dict[str, Any]], annotator: str) -> list[str]:
    """``listed`` response ids in ``annotator``'s own order, from their study candidate ``rows`` (run, model,
    task, image: ``Store.study_candidates``); the rows are the same for everyone, so a caller may keep them."""
    from .design import annotator_order

    wanted = set(listed)
    mixed = annotator_order([r for r in rows if r["response_id"] in wanted], annotator)
    position = {rid: i for i, rid in enumerate(listed)}
    return mixed + sorted(wanted - set(mixed), key=position.__getitem__)  # a response whose sample is gone: last


def unrated_order(candidates: list[str], ratings: dict[tuple[str, str], int], annotator: str,
                  ratings_per_item: int) -> list[str]:
    """The ``unrated`` queue: ``candidates`` (the annotator's mixed order) this annotator has not rated with fewer
    than ``ratings_per_item`` ratings in force (``current_ratings``), least-rated first, then in that order."""
    order = {rid: i for i, rid in enumerate(candidates)}
    mine = {rid for rid, ann in ratings if ann == annotator}
    counts = Counter(rid for rid, _ in ratings)
    todo = [rid for rid in candidates if rid not in mine and counts[rid] < ratings_per_item]
    todo.sort(key=lambda rid: (counts[rid], order[rid]))
    return todo
