"""What the Annotate view's actions do, without Gradio: the next item, a rating that moves on, an undo that says
what it took back and where. Each takes the annotator's place (``annotate_place``) and changes it in place; the
view draws the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..annotation.rating import CORRECT, describe_item, recorded_mode, shows_judges
from ..model import ValidationError
from . import actions
from . import annotate_place as places
from .context import AppContext
from .render.annotate import rated_line, undo_line
from .render.palette import md


@dataclass(frozen=True)
class Outcome:
    """What the screen shows after an action: the item (None: the queue is empty), the message (Markdown), and
    the item an undo took something back from when that is not the one on screen (offered to go back to)."""

    response_id: str | None
    message: str
    back_to: str | None = None


def item_name(ctx: AppContext, place: dict[str, Any], rid: str) -> str:
    """The item in words, without its model while the annotator rates blind."""
    return describe_item(ctx.store, rid, blind=not shows_judges(ctx.store, place["task"], place["study"] or None))


def next_item(ctx: AppContext, place: dict[str, Any], who: str) -> str | None:
    """The next item: the one seen after this, or else the queue's next (then it is added to what was seen)."""
    rid = places.forward(place)
    if rid is None:
        mode = "uncorrected" if place["task"] == CORRECT else "unrated"
        rid = actions.next_item(ctx, who, mode, place["per_item"], places.current(place),
                                place["study"] or None)["response_id"]
        if rid:
            places.push(place, rid)
    return rid


def step(ctx: AppContext, place: dict[str, Any], who: str, forward: bool = True) -> Outcome:
    """Next (the queue's next at the end of what was seen) or previous."""
    rid = next_item(ctx, place, who) if forward else places.back(place)
    if rid:
        return Outcome(rid, f"item {md(rid)}")
    return Outcome(None, "done: nothing left in this queue for you" if forward else "nothing seen yet")


def rate(ctx: AppContext, place: dict[str, Any], who: str, rid: str | None, value: int) -> Outcome:
    """Rate the item on screen (one event, recorded blind only when nothing of the judges was shown), then move
    on to the next item unless the annotator chose to stay (``place["advance"]``)."""
    if not rid:
        raise ValidationError("no response on screen: press “start / next in queue” first")
    if place["task"] == CORRECT:
        raise ValidationError("ratings are made in the rating task; switch the task to rate")
    study = place["study"] or None
    actions.rate(ctx, who, rid, value, recorded_mode(ctx.store, place["task"], study, rid in place["revealed"]),
                 study)
    item = item_name(ctx, place, rid)
    if not place["advance"]:
        return Outcome(rid, rated_line(value, item, moved_on=False))
    places.go_to(place, rid)
    following = next_item(ctx, place, who)
    done = "" if following else " — nothing left in this queue for you"
    return Outcome(following, rated_line(value, item, moved_on=bool(following)) + done)


def undo(ctx: AppContext, place: dict[str, Any], who: str, rid: str | None) -> Outcome:
    """Undo the annotator's latest action, wherever it was (a new event: nothing is deleted), and say what it
    took back and of which item; the screen stays, and an item that is not the one on screen is offered."""
    undone = actions.undo(ctx, who, None)
    if not undone["undone"]:
        return Outcome(rid, "nothing of yours to undo")
    target = undone["response_id"]
    elsewhere = bool(target) and target != rid
    message = undo_line(undone["what"], item_name(ctx, place, target) if target else "the studio", elsewhere)
    return Outcome(rid, message, target if elsewhere else None)


def back_to(ctx: AppContext, place: dict[str, Any], target: str | None) -> Outcome:
    """Back to the item an undo took something back from."""
    if not target:
        raise ValidationError("nothing was undone on another item")
    rid = places.go_to(place, target)
    return Outcome(rid, f"back at {md(item_name(ctx, place, rid))}")
