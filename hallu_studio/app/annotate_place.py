"""The annotator's place in the Annotate view, kept in the browser (``gr.BrowserState``) so that a reload finds
it: their name, study, task, the items they have seen in order and where they are among them, whether a rating
moves on, and which responses' verdicts this browser has shown. Plain dicts in, plain dicts out: no Gradio, no
store.

>>> place = fresh()
>>> push(place, "r1"); push(place, "r2"); back(place)
'r1'
>>> forward(place), forward(place)
('r2', None)
>>> go_to(place, "r1"), place["index"]
('r1', 0)
"""

from __future__ import annotations

from typing import Any

NO_STUDY = ""
FRESH: dict[str, Any] = {"name": "", "study": NO_STUDY, "task": "rate", "per_item": 1, "history": [], "index": -1,
                         "revealed": [], "advance": True}  # revealed: responses whose verdicts this browser showed
KEEP_REVEALED = 5000  # the browser's storage is small: the oldest are forgotten first


def fresh() -> dict[str, Any]:
    return clean(None)


def clean(place: Any) -> dict[str, Any]:
    """A copy of a stored place with every key (an older or foreign value starts afresh)."""
    out = {k: (list(v) if isinstance(v, list) else v) for k, v in FRESH.items()}
    if isinstance(place, dict):
        out.update({k: place[k] for k in FRESH if k in place})
    out["history"] = [str(r) for r in out.get("history") or []]
    out["revealed"] = [str(r) for r in out.get("revealed") or []]
    index = str(out.get("index", -1))
    out["index"] = int(index) if index.lstrip("-").isdigit() else -1
    out["advance"] = out.get("advance") is not False
    return out


def current(place: dict[str, Any]) -> str | None:
    """The response on screen, or None."""
    history, index = place["history"], place["index"]
    return history[index] if 0 <= index < len(history) else None


def back(place: dict[str, Any]) -> str | None:
    """One item back in what the annotator has seen (stays on the first)."""
    place["index"] = max(0, place["index"] - 1)
    return current(place)


def forward(place: dict[str, Any]) -> str | None:
    """The next item already seen, or None when the annotator is at the end (the queue gives the next one)."""
    if 0 <= place["index"] < len(place["history"]) - 1:
        place["index"] += 1
        return current(place)
    return None


def push(place: dict[str, Any], response_id: str) -> None:
    """A new item from the queue, at the end of what was seen."""
    place["history"].append(response_id)
    place["index"] = len(place["history"]) - 1


def go_to(place: dict[str, Any], response_id: str) -> str:
    """Back to an item (one whose action was undone): its place in what was seen, or a new place at the end."""
    if response_id in place["history"]:
        place["index"] = place["history"].index(response_id)
    else:
        push(place, response_id)
    return response_id


def reveal(place: dict[str, Any], response_id: str) -> None:
    """This browser has shown the response's verdicts: a rating of it is no longer blind."""
    if response_id not in place["revealed"]:
        place["revealed"] = (place["revealed"] + [response_id])[-KEEP_REVEALED:]


def settle(place: dict[str, Any], known_studies: set[str], exists: Any) -> dict[str, Any]:
    """After a reload: a study that is gone starts afresh, and items no longer in the store are dropped
    (``exists(response_id) -> bool``)."""
    if place["study"] not in known_studies:
        place.update(study=NO_STUDY, history=[], index=-1)
    kept = [r for r in place["history"] if exists(r)]
    if len(kept) != len(place["history"]):
        place["history"] = kept
    place["index"] = min(place["index"], len(place["history"]) - 1)
    return place
