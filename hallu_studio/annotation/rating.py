"""What rating in the app means for one annotator: whether an item is shown blind, how a rating is recorded, the
annotator's own rating of an item, and what an undo took back, in words the app can say.

The views call these; none of them decides blindness or reads the event log itself.

>>> describe_event(HumanEvent("ann", "rating", "r1", 4))
'your rating 4'
>>> describe_event(HumanEvent("ann", "correction", "r1", {"verdict": "relation"}, target="triplet:2"))
'your verdict “relation” on triplet 2'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import APP_SOURCE, HumanEvent
from . import current_ratings, study_design, study_rating_events, undo_last

if TYPE_CHECKING:
    from ..store import Store

RATE, CORRECT = "rate", "correct"  # the two tasks of the Annotate view
ANNOTATE_TASKS: tuple[str, ...] = (RATE, CORRECT)


def shows_judges(store: "Store", task: str, study: str | None) -> bool:
    """Whether the judges' verdicts are on screen: always while correcting them; while rating, only in a study
    that says to show them (rating is blind by default)."""
    if task == CORRECT:
        return True
    return bool(study) and study_design(store, study).show_judgements


def recorded_mode(store: "Store", task: str, study: str | None, revealed: bool = False) -> str:
    """How a rating made now is recorded: "blind" only when nothing of the judges was shown for this response
    (one whose verdicts this annotator has seen for correcting stays "unblinded")."""
    return "unblinded" if revealed or shows_judges(store, task, study) else "blind"


def rating_of(store: "Store", response_id: str, annotator: str | None, study: str | None = None) -> int | None:
    """``annotator``'s rating in force of a response (in ``study``: the one made there), or None."""
    if not annotator:
        return None
    events = store.list_events(response_id=response_id, source=APP_SOURCE)
    if study:
        found = study_rating_events(events, study).get((response_id, annotator))
        return int(found.value) if found is not None else None
    return current_ratings(events).get((response_id, annotator))


def describe_event(event: HumanEvent) -> str:
    """One of the annotator's own events in a few words ("your rating 4")."""
    value = event.value if isinstance(event.value, dict) else {}
    index = event.target.split(":", 1)[1] if ":" in (event.target or "") else ""
    if event.kind == "rating":
        return f"your rating {event.value}"
    if event.kind == "correction":
        return f"your verdict “{value.get('verdict')}” on triplet {index}"
    if event.kind == "revision_review":
        return f"your {'acceptance' if value.get('accept') else 'rejection'} of edit {index}"
    if event.kind == "note":
        text = str(value.get("text", ""))
        return f"your note “{text[:40]}{'…' if len(text) > 40 else ''}”"
    if event.kind == "undo":
        return "your undo (what it took back is in force again)"
    return f"your {event.kind}"


@dataclass(frozen=True)
class Undone:
    """An undo the annotator made: its event id and the event it took back."""

    undo_id: int
    event: HumanEvent

    @property
    def response_id(self) -> str | None:
        return self.event.response_id

    @property
    def what(self) -> str:
        return describe_event(self.event)


def undo_latest(store: "Store", annotator: str, response_id: str | None = None) -> Undone | None:
    """Undo the annotator's latest action in force (on ``response_id`` if given) with a new event
    (``annotation.undo_last``: nothing is deleted) and say what it took back; None when nothing is left."""
    undo_id = undo_last(store, annotator, response_id)
    if undo_id is None:
        return None
    mine = {e.id: e for e in store.list_events(annotator=annotator.strip(), source=APP_SOURCE)}
    return Undone(undo_id, mine[mine[undo_id].undoes])


def describe_item(store: "Store", response_id: str, blind: bool = True) -> str:
    """A response as an annotator recognises it, in plain text: its question (or its task) and its image, and
    its model where the judges may be seen (never while rating blind)."""
    response = store.get_response(response_id)
    sample = store.get_sample(response.sample_id) if response is not None else None
    if response is None or sample is None:
        return f"response {response_id}"
    question = sample.question or ""
    asked = f"“{question[:60]}{'…' if len(question) > 60 else ''}”" if question else f"the {sample.task}"
    out = f"{asked} on image {sample.image_key or sample.id}"
    if not blind:
        model = next((r["model"] for r in store.list_runs() if r["id"] == response.run_id), response.run_id)
        out += f", by {model}"
    return out
