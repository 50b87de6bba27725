"""The scripted annotation API (``gradio_client``): the Annotate view's actions with stable names, and who is
acting (the signed-in user, or the name typed)."""

from __future__ import annotations

from typing import Any, Callable

import gradio as gr

from ..model import APP_SOURCE
from . import actions
from .context import AppContext
from .toasts import MISTAKES, api_error


def annotator(ctx: AppContext, request: gr.Request | None, typed: str | None) -> str:
    """The annotator, checked before anything is read or written (a missing name is one toast)."""
    return actions.annotator_for(ctx, getattr(request, "username", None), typed)


def _api_who(ctx: AppContext, request: gr.Request | None, typed: str | None) -> str:
    try:
        return annotator(ctx, request, typed)
    except MISTAKES as exc:
        raise api_error(exc) from exc


def _guard(fn: Callable[[], Any]) -> Any:
    """An API call's refused input is the caller's error message (and no traceback in the server log)."""
    try:
        return fn()
    except MISTAKES as exc:
        raise api_error(exc) from exc



def register_api(ctx: AppContext) -> None:
    """The scripted annotation API (``gradio_client``), with stable names.

    With sign-in on, ``annotator`` is ignored and the signed-in user is recorded.
    """
    def rate(response_id: str, value: int, annotator: str = "", study: str = "", then_next: bool = False,
             request: gr.Request = None) -> dict:
        """``then_next``: the answer carries the annotator's next item too (``next``, as ``next_item`` gives it),
        as the Annotate view moves on after a rating: one round trip a key press, not two."""
        who = _api_who(ctx, request, annotator)

        def rated() -> dict:
            # a script shows what its caller chose: the event says "api", not blind
            out = actions.rate(ctx, who, response_id, int(value), "api", study or None)
            if then_next:
                out["next"] = actions.next_item(ctx, who, "unrated", 1, None, study or None)
            return out
        return _guard(rated)

    def correct_triplet(response_id: str, triplet_index: int, verdict: str, reason: str = "", annotator: str = "",
                        request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.correct_triplet(ctx, who, response_id, int(triplet_index), verdict, reason))

    def review_edit(response_id: str, edit_index: int, accept: bool, annotator: str = "",
                    request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.review_edit(ctx, who, response_id, int(edit_index), bool(accept)))

    def note(response_id: str, text: str, annotator: str = "", request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.note(ctx, who, response_id, text))

    def undo(response_id: str = "", annotator: str = "", request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.undo(ctx, who, response_id))

    def next_item(mode: str = "unrated", ratings_per_item: int = 1, after: str = "", annotator: str = "",
                  study: str = "", request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.next_item(ctx, who, mode, int(ratings_per_item), after or None, study or None))

    def prefer(response_a: str, response_b: str, winner: str, aspect: str = "overall", annotator: str = "",
               request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.prefer(ctx, who, response_a, response_b, winner, aspect))

    def my_events(annotator: str = "", request: gr.Request = None) -> list:
        who = _api_who(ctx, request, annotator)
        return [{"id": e.id, "kind": e.kind, "response_id": e.response_id, "target": e.target, "value": e.value,
                 "undoes": e.undoes, "meta": e.meta} for e in ctx.store.list_events(annotator=who, source=APP_SOURCE)]

    # Unqueued: each action is also one plain POST to /gradio_api/run/<name>, answered with its result, as a Label
    # Studio client expects; the queued path (/gradio_api/call/<name>, what gradio_client uses) still works. An
    # action is a few keyed queries (tens of ms): the queue's join, event stream and worker hand-off cost an
    # annotation day more than the action itself (benchmarks/bench_annotation_load.py, both protocols). The
    # store serialises its writes itself, so the calls may overlap.
    for fn in (rate, correct_triplet, review_edit, note, undo, next_item, prefer, my_events):
        gr.api(fn, api_name=fn.__name__, queue=False)
