"""Annotate: a per-annotator queue, the 1–5 guideline, triplet corrections, edit reviews, notes, undo.

Every button is one call of ``hallu_studio.app.actions`` (and so of ``hallu_studio.annotation``);
the same calls are the public API (see ``register_api``). Keyboard shortcuts live in
``assets/shortcuts.js`` and click the buttons by their ``elem_id``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from ...annotation import CORRECTION_VERDICTS, RATING_GUIDELINE, RATING_NOTES, current_ratings
from ...model import ValidationError
from .. import actions
from ..context import AppContext
from ..inspection import inspect_response
from ..render.palette import empty_note, esc, md
from ..toasts import MISTAKES, api_error, toast_mistakes

GUIDELINE_MD = ("**Tri-HE rating guideline (Table 8)** — higher is better\n\n" +
                "\n".join(f"- **{k}**: {v}" for k, v in sorted(RATING_GUIDELINE.items(), reverse=True)) +
                "\n\n" + "\n".join(f"- {n}" for n in RATING_NOTES) +
                "\n\nKeys: **1–5** rate · **j** next · **k** previous · **u** undo (not while typing).")
RATINGS = range(1, 6)


@dataclass
class AnnotateTab:
    name: gr.Textbox
    current: gr.Textbox
    session: gr.State


def _who(ctx: AppContext, request: gr.Request | None, typed: str | None) -> str:
    """The annotator, checked before anything is read or written (a missing name is one toast)."""
    return actions.annotator_for(ctx, getattr(request, "username", None), typed)


def _api_who(ctx: AppContext, request: gr.Request | None, typed: str | None) -> str:
    try:
        return _who(ctx, request, typed)
    except MISTAKES as exc:
        raise api_error(exc) from exc


def _guard(fn: Callable[[], Any]) -> Any:
    """An API call's refused input is the caller's error message (and no traceback in the server log)."""
    try:
        return fn()
    except MISTAKES as exc:
        raise api_error(exc) from exc


def _rating_line(rating: int | None) -> str:
    if rating is None:
        return '<p class="hs-your-rating hs-unrated">you have not rated this response yet</p>'
    return (f'<p class="hs-your-rating" data-rating="{rating}">your rating: <b>{rating}</b> — '
            f'{esc(RATING_GUIDELINE[rating])}</p>')


def _item_view(ctx: AppContext, rid: str | None, annotator: str | None) -> list[Any]:
    """The item, the image, its verdicts, the two choosers, and the five rating buttons (yours marked)."""
    if not rid:
        blank = empty_note("the queue is empty: nothing left for you to rate")
        return [blank, blank, blank, gr.update(choices=[], value=None), gr.update(choices=[], value=None),
                *[gr.update(variant="secondary") for _ in RATINGS]]
    p = inspect_response(ctx.store, rid, with_graphs=False)
    mine = current_ratings(ctx.store.list_events(response_id=rid, annotator=annotator)).get((rid, annotator)) \
        if annotator else None
    # a long verdict list scrolls in its own box, keeping the correction controls near the item
    verdicts = f'<div class="hs-scroll" style="max-height:460px;overflow:auto">{p.triplets}{p.edit}</div>'
    return [_rating_line(mine) + p.header + p.response_text, p.image, verdicts,
            gr.update(choices=[(c, i) for i, c in enumerate(p.triplet_choices)], value=None),
            gr.update(choices=[(c, int(c.split(":", 1)[0])) for c in p.edit_choices], value=None),
            *[gr.update(variant="primary" if v == mine else "secondary") for v in RATINGS]]


def _status(ctx: AppContext, annotator: str, message: str) -> str:
    prog = actions.progress(ctx, annotator)
    return f"{message}\n\n**{md(annotator)}**: {int(prog['rated'])} rated of {int(prog['total'])} responses"


def export_ratings(ctx: AppContext) -> list[str]:
    """Two CSV files: each annotator's rating in force per item, and the raw event log (undos included)."""
    from ...pipelines.exporting import export_table

    out = Path(tempfile.mkdtemp(prefix="hallu-studio-ratings-"))
    resolved = out / "ratings_resolved.csv"
    export_table(ctx.store, "ratings", "csv", str(resolved))
    log = out / "judgments_event_log.csv"
    ctx.store.export_copy("judgments", str(log), "csv")
    return [str(resolved), str(log)]


def build(ctx: AppContext) -> AnnotateTab:
    session = gr.State({"history": [], "index": -1})
    with gr.Row():
        name = gr.Textbox(label="your annotator name", visible=not ctx.auth_enabled, elem_id="annotator-name")
        mode = gr.Radio([("unrated first", "unrated"), ("judge disagreement first", "disagreement")],
                        value="unrated", label="queue")
        per_item = gr.Number(value=1, precision=0, minimum=1, label="ratings per item")
        start = gr.Button("start / next in queue", variant="primary", elem_id="ann-start")
    with gr.Row():
        prev_btn = gr.Button("◀ previous (k)", elem_id="ann-prev", size="sm")
        next_btn = gr.Button("next (j) ▶", elem_id="ann-next", size="sm")
        undo_btn = gr.Button("undo (u)", elem_id="ann-undo", size="sm")
        current = gr.Textbox(label="response id", interactive=False, elem_id="ann-response-id")
    status = gr.Markdown(elem_id="ann-status")
    with gr.Row():
        with gr.Column(scale=2):
            image = gr.HTML(elem_id="ann-image")
        with gr.Column(scale=3):
            item = gr.HTML(elem_id="ann-item")
        with gr.Column(scale=3):
            gr.Markdown(GUIDELINE_MD, elem_id="ann-guideline")
            with gr.Row():
                rate_btns = [gr.Button(str(v), elem_id=f"rate-{v}", min_width=40, variant="secondary")
                             for v in RATINGS]
    verdicts = gr.HTML(elem_id="ann-verdicts")
    with gr.Row():
        triplet = gr.Dropdown(label="triplet", choices=[], elem_id="ann-triplet", scale=3)
        verdict = gr.Radio(list(CORRECTION_VERDICTS), label="your verdict", elem_id="ann-verdict", scale=3)
        reason = gr.Textbox(label="reason", elem_id="ann-reason", scale=2)
        correct_btn = gr.Button("correct triplet", elem_id="ann-correct")
    with gr.Row():
        edit = gr.Dropdown(label="edit of the revision", choices=[], scale=3)
        accept_btn = gr.Button("accept edit", elem_id="ann-accept")
        reject_btn = gr.Button("reject edit", elem_id="ann-reject")
        note_text = gr.Textbox(label="note", scale=3, elem_id="ann-note")
        note_btn = gr.Button("add note", elem_id="ann-add-note")
    with gr.Accordion("export the ratings", open=False):
        gr.Markdown("Each annotator's rating in force per item (undone ratings resolved away), beside the raw "
                    "event log of every action, undos included.")
        export_btn = gr.Button("export ratings (CSV)", size="sm", elem_id="ann-export")
        export_files = gr.File(label="ratings", file_count="multiple", elem_id="ann-export-files")
    view_outputs = [item, image, verdicts, triplet, edit, *rate_btns]
    item_outputs = [*view_outputs, status]

    def go(sess: dict[str, Any], typed: str, queue_mode: str, n: float, delta: int,
           request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        sess = {"history": list(sess.get("history", [])), "index": sess.get("index", -1)}
        if delta < 0:
            sess["index"] = max(0, sess["index"] - 1)
            rid = sess["history"][sess["index"]] if sess["history"] else None
        elif 0 <= sess["index"] < len(sess["history"]) - 1:
            sess["index"] += 1
            rid = sess["history"][sess["index"]]
        else:
            after = sess["history"][sess["index"]] if sess["history"] else None
            rid = actions.next_item(ctx, who, queue_mode, int(n or 1), after)["response_id"]
            if rid:
                sess["history"].append(rid)
                sess["index"] = len(sess["history"]) - 1
        return [sess, rid or "", *_item_view(ctx, rid, who), _status(ctx, who, f"item {md(rid)}" if rid else "done")]

    nav_in = [session, name, mode, per_item]
    nav_out = [session, current, *item_outputs]

    @toast_mistakes(len(nav_out))
    def forward(s: dict[str, Any], t: str, m: str, n: float, request: gr.Request) -> list[Any]:
        return go(s, t, m, n, +1, request)

    @toast_mistakes(len(nav_out))
    def backward(s: dict[str, Any], t: str, m: str, n: float, request: gr.Request) -> list[Any]:
        return go(s, t, m, n, -1, request)

    start.click(forward, nav_in, nav_out, api_visibility="private")
    next_btn.click(forward, nav_in, nav_out, api_visibility="private")
    prev_btn.click(backward, nav_in, nav_out, api_visibility="private")

    def after_action(rid: str, who: str, message: str) -> list[Any]:
        return [*_item_view(ctx, rid, who), _status(ctx, who, message)]

    def need_item(rid: str | None) -> str:
        if not rid:
            raise ValidationError("no response on screen: press “start / next in queue” first")
        return rid

    for value, btn in zip(RATINGS, rate_btns):
        @toast_mistakes(len(item_outputs))
        def on_rate(rid: str, typed: str, request: gr.Request, value: int = value) -> list[Any]:
            who = _who(ctx, request, typed)
            actions.rate(ctx, who, need_item(rid), value)
            return after_action(rid, who, f"rated {md(rid)} **{int(value)}**")
        btn.click(on_rate, [current, name], item_outputs, api_visibility="private")

    @toast_mistakes(len(item_outputs))
    def on_correct(rid: str, typed: str, index: int | None, v: str | None, why: str,
                   request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        need_item(rid)
        if index is None or not v:
            raise ValidationError("choose a triplet and your verdict")
        actions.correct_triplet(ctx, who, rid, int(index), v, why or "")
        return after_action(rid, who, f"triplet {int(index)} corrected to **{md(v)}**")

    correct_btn.click(on_correct, [current, name, triplet, verdict, reason], item_outputs, api_visibility="private")

    def on_review(rid: str, typed: str, index: int | None, accept: bool, request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        need_item(rid)
        if index is None:
            raise ValidationError("choose an edit of the revision")
        actions.review_edit(ctx, who, rid, int(index), accept)
        return after_action(rid, who, f"edit {int(index)} {'accepted' if accept else 'rejected'}")

    @toast_mistakes(len(item_outputs))
    def on_accept(r: str, t: str, i: int | None, request: gr.Request) -> list[Any]:
        return on_review(r, t, i, True, request)

    @toast_mistakes(len(item_outputs))
    def on_reject(r: str, t: str, i: int | None, request: gr.Request) -> list[Any]:
        return on_review(r, t, i, False, request)

    accept_btn.click(on_accept, [current, name, edit], item_outputs, api_visibility="private")
    reject_btn.click(on_reject, [current, name, edit], item_outputs, api_visibility="private")

    @toast_mistakes(len(item_outputs) + 1)
    def on_note(rid: str, typed: str, text: str, request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        actions.note(ctx, who, need_item(rid), text)
        return [*after_action(rid, who, "note added"), ""]

    note_btn.click(on_note, [current, name, note_text], [*item_outputs, note_text], api_visibility="private")

    @toast_mistakes(len(item_outputs))
    def on_undo(rid: str, typed: str, request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        result = actions.undo(ctx, who, None)
        message = "undid your last action" if result["undone"] else "nothing of yours to undo"
        if not rid:
            return [*[gr.skip()] * (len(item_outputs) - 1), _status(ctx, who, message)]
        return after_action(rid, who, message)

    undo_btn.click(on_undo, [current, name], item_outputs, api_visibility="private")
    export_btn.click(toast_mistakes(1)(lambda: export_ratings(ctx)), None, [export_files], api_visibility="private")
    return AnnotateTab(name, current, session)


def register_api(ctx: AppContext) -> None:
    """The scripted annotation API (``gradio_client``), with stable names.

    With sign-in on, ``annotator`` is ignored and the signed-in user is recorded.
    """
    def rate(response_id: str, value: int, annotator: str = "", request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.rate(ctx, who, response_id, int(value)))

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
                  request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.next_item(ctx, who, mode, int(ratings_per_item), after or None))

    def prefer(response_a: str, response_b: str, winner: str, aspect: str = "overall", annotator: str = "",
               request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        return _guard(lambda: actions.prefer(ctx, who, response_a, response_b, winner, aspect))

    def my_events(annotator: str = "", request: gr.Request = None) -> list:
        who = _api_who(ctx, request, annotator)
        return [{"id": e.id, "kind": e.kind, "response_id": e.response_id, "target": e.target, "value": e.value,
                 "undoes": e.undoes} for e in ctx.store.list_events(annotator=who)]

    for fn in (rate, correct_triplet, review_edit, note, undo, next_item, prefer, my_events):
        gr.api(fn, api_name=fn.__name__)
