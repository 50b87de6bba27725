"""The app's annotation actions: who is acting, then one ``hallu_studio.annotation`` call.

These are the functions behind both the Annotate buttons and the public Gradio API
(``rate``, ``correct_triplet``, ``review_edit``, ``note``, ``undo``, ``next_item``,
``prefer``). With sign-in on, the annotator is always the signed-in user: a name
passed as an argument is ignored, so nobody can write in another's name.
"""

from __future__ import annotations

from typing import Any

from .. import annotation
from ..annotation.rating import undo_latest
from ..metrics.registry import spec_with
from ..model import APP_SOURCE, ValidationError
from .context import AppContext


class NotSignedIn(PermissionError):
    pass


def annotator_for(ctx: AppContext, username: str | None, typed_name: str | None) -> str:
    """The name recorded on an event: the signed-in user when auth is on, else the typed name."""
    if ctx.auth_enabled:
        if not username:
            raise NotSignedIn("sign in to annotate: this app requires a user name and password")
        return username
    name = (typed_name or "").strip()
    if not name:
        raise ValidationError("type your annotator name first (the app runs without sign-in)")
    return name


def _known_response(ctx: AppContext, response_id: str) -> str:
    rid = (response_id or "").strip()
    if not rid or ctx.store.get_response(rid) is None:
        raise ValidationError(f"response {rid!r} is not in the store")
    return rid


def rate(ctx: AppContext, annotator: str, response_id: str, value: int, mode: str = "api",
         study: str | None = None) -> dict[str, Any]:
    """One rating; ``mode`` says what the annotator saw ("blind", "unblinded"; "api" for a script) and is
    recorded with ``study`` in the event's meta."""
    rid = _known_response(ctx, response_id)
    event = annotation.rate(ctx.store, annotator, rid, int(value), mode=mode, study=(study or "").strip() or None)
    return {"event_id": event, "annotator": annotator, "response_id": rid, "rating": int(value), "mode": mode,
            "study": (study or "").strip() or None}


def correct_triplet(ctx: AppContext, annotator: str, response_id: str, triplet_index: int, verdict: str,
                    reason: str = "", mode: str = "api") -> dict[str, Any]:
    rid = _known_response(ctx, response_id)
    spec = spec_with("corrected_claims")  # the metric whose claims people correct
    triplet = None
    for score in ctx.store.get_scores(rid, spec.name) if spec is not None else ():
        claims = spec.corrected_claims(score.evidence)
        if 0 <= int(triplet_index) < len(claims):
            triplet = claims[int(triplet_index)][0]
    if triplet is None:
        judged = f"{spec.display_name} triplet" if spec is not None else "judged triplet"
        raise ValidationError(f"response {rid!r} has no {judged} number {triplet_index}")
    event = annotation.correct_triplet(ctx.store, annotator, rid, int(triplet_index), verdict, reason, triplet,
                                       mode=mode)
    return {"event_id": event, "annotator": annotator, "response_id": rid, "triplet_index": int(triplet_index),
            "verdict": verdict}


def review_edit(ctx: AppContext, annotator: str, response_id: str, edit_index: int, accept: bool,
                mode: str = "api") -> dict[str, Any]:
    rid = _known_response(ctx, response_id)
    spec = spec_with("reviewed_edits")  # the metric whose revision people review
    edits = max((spec.reviewed_edits(s.evidence) for s in ctx.store.get_scores(rid, spec.name)), default=0) \
        if spec is not None else 0
    if not 0 <= int(edit_index) < edits:
        raise ValidationError(f"response {rid!r} has no revision edit number {edit_index} ({edits} edits)")
    event = annotation.review_edit(ctx.store, annotator, rid, int(edit_index), bool(accept), mode=mode)
    return {"event_id": event, "annotator": annotator, "response_id": rid, "edit_index": int(edit_index),
            "accept": bool(accept)}


def note(ctx: AppContext, annotator: str, response_id: str, text: str) -> dict[str, Any]:
    rid = _known_response(ctx, response_id)
    return {"event_id": annotation.add_note(ctx.store, annotator, rid, text), "annotator": annotator,
            "response_id": rid}


def undo(ctx: AppContext, annotator: str, response_id: str | None = None) -> dict[str, Any]:
    """Undo the annotator's latest action (on ``response_id`` if given) with a new event; the answer says which
    event it took back (``undone_event_id``), on which response, and what it was in words (``what``)."""
    rid = (response_id or "").strip() or None
    undone = undo_latest(ctx.store, annotator, rid)
    if undone is None:
        return {"undo_event_id": None, "annotator": annotator, "undone": False, "undone_event_id": None,
                "response_id": None, "what": None}
    ctx.queues.reopen(annotator, undone.response_id)  # what was undone may be open to them again
    return {"undo_event_id": undone.undo_id, "annotator": annotator, "undone": True,
            "undone_event_id": undone.event.id, "response_id": undone.response_id, "what": undone.what}


def prefer(ctx: AppContext, annotator: str, response_a: str, response_b: str, winner: str,
           aspect: str = "overall") -> dict[str, Any]:
    a, b = _known_response(ctx, response_a), _known_response(ctx, response_b)
    event = annotation.prefer(ctx.store, annotator, a, b, winner, aspect)
    return {"event_id": event, "annotator": annotator, "a": a, "b": b, "winner": winner, "aspect": aspect}


def next_item(ctx: AppContext, annotator: str, mode: str = "unrated", ratings_per_item: int = 1,
              after: str | None = None, study: str | None = None) -> dict[str, Any]:
    """The annotator's next response id from their queue (``None`` when the queue is empty).

    ``study``: the study's own queue (its sample and ratings per item; ``mode`` and
    ``ratings_per_item`` do not apply). ``after`` skips past a response the annotator is
    looking at but has not rated yet.
    """
    study = (study or "").strip() or None
    if mode == "unrated" and study is None:
        # the common key press: the annotator's cached order, a few candidates read (``annotation.queue_cache``)
        rid, remaining = ctx.queues.next_item(ctx.store, annotator, int(ratings_per_item), after)
        return {"response_id": rid, "remaining": remaining, "annotator": annotator, "study": None}
    if study is not None:  # a study's key press: its own items and their events only
        rid, remaining = annotation.study_next(ctx.store, annotator, study, after)
        return {"response_id": rid, "remaining": remaining, "annotator": annotator, "study": study}
    queue = annotation.annotation_queue(ctx.store, annotator, mode=mode, ratings_per_item=int(ratings_per_item),
                                        limit=1000, study=study)
    if after and after in queue:
        i = queue.index(after)
        queue = queue[i + 1:] + queue[:i]
    return {"response_id": queue[0] if queue else None, "remaining": len(queue), "annotator": annotator,
            "study": study}


def progress(ctx: AppContext, annotator: str, study: str | None = None) -> dict[str, Any]:
    """How many responses this annotator has rated, of how many in the store (this studio's ratings only);
    in a study, the study's progress (``annotation.study_progress``) with the annotator's own count."""
    if study:
        prog = annotation.study_progress(ctx.store, study)
        return {**prog, "rated": prog["annotators"].get(annotator, 0)}
    ratings = annotation.current_ratings(ctx.store.list_events_of_kinds(["rating", "undo"], source=APP_SOURCE))
    mine = sum(1 for _, ann in ratings if ann == annotator)
    return {"rated": mine, "total": ctx.store.count_responses()}
