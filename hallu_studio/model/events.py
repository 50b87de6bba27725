"""Human input, append-only: ratings, corrections, notes, preferences, undos, and imported studies' judgements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from .base import ValidationError

APP_SOURCE = "app"  # ``HumanEvent.source`` of what this studio's own annotators enter
# rating .. undo: what this studio's annotators enter; label .. comparison: judgements made in outside studies
# (a published human study, a crowd task), imported with their source (``importers.human``).
EVENT_KINDS: tuple[str, ...] = ("rating", "correction", "revision_review", "note", "preference", "undo",
                                "label", "span_label", "fact_label", "comparison")
# What a person may say about a whole response, a span of it or one atomic fact of it. "unsure" is kept but
# left out of every accurate-vs-hallucinated table.
JUDGEMENT_LABELS: tuple[str, ...] = ("accurate", "hallucinated", "unsure")
# A comparative rating of a response against another text, from -2 (the other is much better) to +2 (this one
# is much better): a 5-point side-by-side scale; a 3-point one uses -1..1.
COMPARISON_RANGE: tuple[int, int] = (-2, 2)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_judgement_value(kind: str, value: Any, target: str = "") -> None:
    """Raise ``ValidationError`` saying what is wrong when ``value`` (and ``target``) do not fit ``kind``.

    Shapes of the outside-study kinds (``target`` in brackets):

    - label [""]: ``{"label"}``, one of ``JUDGEMENT_LABELS``;
    - span_label ["span:<start>-<end>"]: ``{"start", "end", "label"}`` (+ optional ``"text"``), character
      offsets into the response, 0 <= start < end;
    - fact_label ["fact:<i>"]: ``{"fact", "label"}``, an atomic fact's text and its label;
    - comparison ["vs:<other>:<aspect>"]: ``{"other", "aspect", "score"}`` (+ optional ``"scale"``, the
      study's own wording), score an integer in ``COMPARISON_RANGE``, positive when the response is better.

    >>> check_judgement_value("span_label", {"start": 4, "end": 9, "label": "hallucinated"}, "span:4-9")
    >>> check_judgement_value("span_label", {"start": 9, "end": 4, "label": "hallucinated"}, "span:9-4")
    Traceback (most recent call last):
    ...
    hallu_studio.model.base.ValidationError: a span_label needs 0 <= start < end, got start 9 and end 4
    """
    if kind == "rating":
        if not _is_int(value) or not 1 <= value <= 5:
            raise ValidationError(f"a rating must be an integer 1-5, got {value!r}")
        return
    if kind not in ("label", "span_label", "fact_label", "comparison"):
        return
    if not isinstance(value, dict):
        raise ValidationError(f"a {kind} value must be an object, got {type(value).__name__}")
    if kind != "comparison" and value.get("label") not in JUDGEMENT_LABELS:
        what = "a label" if kind == "label" else f"the label of a {kind}"
        raise ValidationError(f"{what} must be one of {JUDGEMENT_LABELS}, got {value.get('label')!r}")
    if kind == "label" and target:
        raise ValidationError(f"a label is about the whole response: its target must be empty, got {target!r}")
    if kind == "span_label":
        start, end = value.get("start"), value.get("end")
        if not _is_int(start) or not _is_int(end):
            raise ValidationError(f"a span_label needs integer start and end offsets, got {start!r} and {end!r}")
        if not 0 <= start < end:
            raise ValidationError(f"a span_label needs 0 <= start < end, got start {start} and end {end}")
        if target != f"span:{start}-{end}":
            raise ValidationError(f"a span_label's target must be 'span:{start}-{end}', got {target!r}")
    if kind == "fact_label":
        if not isinstance(value.get("fact"), str) or not value["fact"].strip():
            raise ValidationError("a fact_label needs the fact's text ('fact')")
        if not target.startswith("fact:") or not target[5:].isdigit():
            raise ValidationError(f"a fact_label's target must be 'fact:<index>', got {target!r}")
    if kind == "comparison":
        for key in ("other", "aspect"):
            if not isinstance(value.get(key), str) or not value[key].strip():
                raise ValidationError(f"a comparison needs {key!r} (a non-empty string)")
        low, high = COMPARISON_RANGE
        score = value.get("score")
        if not _is_int(score) or not low <= score <= high:
            raise ValidationError(f"a comparison score must be an integer {low}..{high}, got {score!r}")
        if target != f"vs:{value['other']}:{value['aspect']}":
            raise ValidationError(f"a comparison's target must be 'vs:{value['other']}:{value['aspect']}', "
                                  f"got {target!r}")


@dataclass
class HumanEvent:
    """One append-only human input. The current value of a target is its latest
    event that has not been undone; an undo is itself an event naming the undone one."""

    annotator: str
    kind: str
    response_id: str | None
    value: Any
    target: str = ""  # e.g. "triplet:3", "edit:5"; empty for the response itself
    undoes: int | None = None
    id: int | None = None
    created_at: str | None = None
    # Where the judgement was made: "app" (an annotator in this studio), else the named outside source it was
    # imported from (a published human study, a crowd task), which is never mixed with the app's annotators.
    source: str = APP_SOURCE
    # How it was made (the annotation mode, the study it belongs to ...), as the recording code says.
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not str(self.source).strip():
            raise ValidationError("event needs a source (\"app\" for this studio's annotators)")
        if self.kind not in EVENT_KINDS:
            raise ValidationError(f"event kind must be one of {EVENT_KINDS}, got {self.kind!r}")
        if not str(self.annotator).strip():
            raise ValidationError("event needs an annotator name")
        check_judgement_value(self.kind, self.value, self.target)
        if self.kind == "undo" and self.undoes is None:
            raise ValidationError("an undo event must name the event it undoes")


def undone_event_ids(undos: Iterable[tuple[int | None, int | None]]) -> set[int]:
    """The ids of the events that an undo in force has undone, from every undo's ``(id, id it undoes)``.

    The one definition of "events in force": an event is in force unless an undo in force undoes it, and an
    undo is itself in force unless one undoes it (undoing an undo is a redo). An undo always comes after what
    it undoes, so walking the undos backwards settles every chain; an undo not yet stored (id None) is the
    newest. ``annotation.active_events`` filters a list of events with it, the store its SQL (Browse's
    "annotated", ``undo_latest_event``).

    >>> sorted(undone_event_ids([(2, 1)]))  # 1 rated, 2 undoes it
    [1]
    >>> sorted(undone_event_ids([(2, 1), (3, 2)]))  # ... 3 undoes the undo: 1 is in force again
    [2]
    >>> sorted(undone_event_ids([(2, 1), (3, 2), (4, 1)]))  # ... 4 undoes 1 once more
    [1, 2]
    """
    undone: set[int] = set()
    for undo_id, target in sorted(undos, key=lambda u: (u[0] is None, u[0] or 0), reverse=True):
        if target is None or (undo_id is not None and (undo_id in undone or target >= undo_id)):
            continue
        undone.add(target)
    return undone

