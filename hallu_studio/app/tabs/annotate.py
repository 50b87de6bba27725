"""Annotate: a per-annotator queue, the 1–5 guideline, triplet corrections, edit reviews, notes, undo.

Every button is one call of ``hallu_studio.app.actions`` (and so of ``hallu_studio.annotation``);
the same calls are the public API (see ``register_api``). Keyboard shortcuts live in
``assets/shortcuts.js`` and click the buttons by their ``elem_id``. What is blind and how a rating is
recorded is ``annotation.rating``'s; the annotator's place is ``app.annotate_place``'s; the words are
``render.annotate``'s: this module lays out the view and wires it.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from ... import annotation
from ...annotation import CORRECTION_VERDICTS, RATING_GUIDELINE, RATING_NOTES
from ...annotation.rating import CORRECT, RATE, rating_of, shows_judges
from ...model import ValidationError
from .. import actions
from .. import annotate_flow as flow
from .. import annotate_place as places
from ..annotate_api import annotator as _who
from ..annotate_api import register_api  # noqa: F401 - the view's API, registered by build_app
from ..annotate_place import NO_STUDY
from ..context import AppContext
from ..inspection import annotation_item
from ..render.annotate import progress_md, rating_line
from ..render.palette import empty_note, md
from ..toasts import MISTAKES, toast_mistakes

GUIDELINE_MD = ("**Tri-HE rating guideline (Table 8)** — higher is better\n\n" +
                "\n".join(f"- **{k}**: {v}" for k, v in sorted(RATING_GUIDELINE.items(), reverse=True)) +
                "\n\n" + "\n".join(f"- {n}" for n in RATING_NOTES) +
                "\n\nKeys: **1–5** rate (and move on) · **j** next · **k** previous · **u** undo · "
                "**b** back to the undone item (not while typing).")
RATINGS = range(1, 6)
TASKS: tuple[tuple[str, str], ...] = (("rate 1–5 (blind unless the study shows the judges)", RATE),
                                      ("correct the judges' verdicts (shows them)", CORRECT))
# The annotator's place, kept in the browser (localStorage) so that a reload finds it again.
SESSION_KEY = "hallu-studio-annotate"
FRESH = places.FRESH


@dataclass
class AnnotateTab:
    name: gr.Textbox
    study: gr.Dropdown
    current: gr.Textbox
    session: gr.BrowserState
    restore: Callable[..., list[Any]]  # the page-load handler: the annotator's name and place come back
    restore_outputs: list[Any]


@dataclass
class _View:
    """The view's components."""

    session: gr.BrowserState
    name: gr.Textbox
    study: gr.Dropdown
    task: gr.Radio
    per_item: gr.Number
    advance: gr.Checkbox
    start: gr.Button
    prev_btn: gr.Button
    next_btn: gr.Button
    undo_btn: gr.Button
    back_btn: gr.Button
    back_to: gr.State
    current: gr.Textbox
    status: gr.Markdown
    image: gr.HTML
    item: gr.HTML
    rating_box: gr.Column
    rate_btns: list[gr.Button]
    verdicts: gr.HTML
    correction_box: gr.Column
    triplet: gr.Dropdown
    verdict: gr.Radio
    reason: gr.Textbox
    correct_btn: gr.Button
    edit: gr.Dropdown
    accept_btn: gr.Button
    reject_btn: gr.Button
    note_text: gr.Textbox
    note_btn: gr.Button
    export_btn: gr.Button
    export_files: gr.File

    @property
    def controls(self) -> list[Any]:
        """What every action reads: the place, the annotator's choices and the response on screen."""
        return [self.session, self.name, self.study, self.task, self.per_item, self.advance, self.current]

    @property
    def screen(self) -> list[Any]:
        """What every action redraws (``_screen``)."""
        return [self.session, self.current, self.item, self.image, self.verdicts, self.triplet, self.edit,
                *self.rate_btns, self.status, self.rating_box, self.correction_box, self.back_btn, self.back_to]


def study_choices(ctx: AppContext) -> list[tuple[str, str]]:
    """The studies an annotator can rate in, newest first, after "no study"."""
    out = [("no study: every response, mixed across models, tasks and images", NO_STUDY)]
    for s in ctx.store.list_studies():
        mode = "shows the judges" if s["definition"].get("show_judgements") else "blind"
        out.append((f"{s['id']} ({mode}, {s['items']} responses)", s["id"]))
    return out


def _item_view(ctx: AppContext, rid: str | None, annotator: str | None, task: str = RATE,
               study: str | None = None) -> list[Any]:
    """The item, the image, the judges' verdicts (never while rating blind), the two choosers, and the five
    rating buttons (yours marked)."""
    if not rid:
        blank = empty_note("the queue is empty: nothing left for you here")
        return [blank, blank, "", gr.update(choices=[], value=None), gr.update(choices=[], value=None),
                *[gr.update(variant="secondary") for _ in RATINGS]]
    blind = not shows_judges(ctx.store, task, study)
    p = annotation_item(ctx.store, rid, blind=blind, in_force=None if blind else ctx.in_force())
    mine = rating_of(ctx.store, rid, annotator, study)
    # a long verdict list scrolls in its own box, keeping the correction controls near the item
    verdicts = f'<div class="hs-scroll" style="max-height:460px;overflow:auto">{p.verdicts}</div>' if p.verdicts \
        else ""
    return [rating_line(mine) + p.header + p.response_text, p.image, verdicts,
            gr.update(choices=[(c, i) for i, c in enumerate(p.triplet_choices)], value=None),
            gr.update(choices=[(c, int(c.split(":", 1)[0])) for c in p.edit_choices], value=None),
            *[gr.update(variant="primary" if v == mine else "secondary") for v in RATINGS]]


def _status(ctx: AppContext, annotator: str, message: str, study: str | None = None) -> str:
    return progress_md(annotator, message, actions.progress(ctx, annotator, study), study)


def _boxes(task_value: str) -> list[Any]:
    return [gr.update(visible=task_value != CORRECT), gr.update(visible=task_value == CORRECT)]


def _screen(ctx: AppContext, place: dict[str, Any], who: str | None, shown: flow.Outcome) -> list[Any]:
    """Everything an action redraws (``_View.screen``): the place, the item, the status and the boxes of the
    task, and the offer to go back to an item whose action was just undone."""
    study, rid = place["study"] or None, shown.response_id
    if rid and shows_judges(ctx.store, place["task"], study):
        places.reveal(place, rid)
    status = _status(ctx, who, shown.message, study) if who else gr.skip()
    return [place, rid or "", *_item_view(ctx, rid, who, place["task"], study), status, *_boxes(place["task"]),
            gr.update(visible=bool(shown.back_to)), shown.back_to or ""]


def _read(ctx: AppContext, request: gr.Request | None, sess: Any, typed: str, study_id: str | None,
          task_value: str | None, per_item: float | None, advance: bool | None) -> tuple[dict[str, Any], str]:
    """The annotator (checked) and their place with the choices on screen; another study is another place."""
    who = _who(ctx, request, typed)
    place = places.clean(sess)
    study_id = study_id or NO_STUDY
    if study_id:
        annotation.check_study_annotator(annotation.study_design(ctx.store, study_id), who)
    if place["study"] != study_id:
        place.update(history=[], index=-1)
    place.update(name=typed or "", study=study_id, task=task_value or RATE, per_item=int(per_item or 1),
                 advance=advance is not False)
    return place, who


def _need_item(rid: str | None) -> str:
    if not rid:
        raise ValidationError("no response on screen: press “start / next in queue” first")
    return rid


def export_ratings(ctx: AppContext) -> list[str]:
    """Two CSV files: each annotator's rating in force per item, and the raw event log (undos included)."""
    from ...pipelines.exporting import export_table

    out = Path(tempfile.mkdtemp(prefix="hallu-studio-ratings-"))
    resolved = out / "ratings_resolved.csv"
    export_table(ctx.store, "ratings", "csv", str(resolved))
    log = out / "judgments_event_log.csv"
    ctx.store.export_copy("judgments", str(log), "csv")
    return [str(resolved), str(log)]


def browser_session() -> gr.BrowserState:
    """The annotator's name and place in the browser's storage. Made outside the tabs (``build_app``): a component
    inside a tab not yet shown is not mounted, and would not have read the storage when the page loads."""
    return gr.BrowserState(places.fresh(), storage_key=SESSION_KEY, secret=SESSION_KEY)


def build(ctx: AppContext, session: gr.BrowserState | None = None) -> AnnotateTab:
    view = _layout(ctx, session if session is not None else browser_session())
    _wire_navigation(ctx, view)
    _wire_rating(ctx, view)
    _wire_judgements(ctx, view)
    _wire_undo(ctx, view)
    view.export_btn.click(toast_mistakes(1)(lambda: gr.update(value=export_ratings(ctx), visible=True)), None,
                          [view.export_files], api_visibility="private")
    restore_outputs = [view.name, view.study, view.task, view.per_item, view.advance, *view.screen]
    return AnnotateTab(view.name, view.study, view.current, view.session, _restorer(ctx, view), restore_outputs)


def _layout(ctx: AppContext, session: gr.BrowserState) -> _View:
    parts: dict[str, Any] = {"session": session}
    with gr.Row():
        parts["name"] = gr.Textbox(label="your annotator name", visible=not ctx.auth_enabled,
                                   elem_id="annotator-name")
        parts["study"] = gr.Dropdown(study_choices(ctx), value=NO_STUDY, label="study (designed in the Study view)",
                                     elem_id="ann-study", scale=2)
        parts["task"] = gr.Radio(list(TASKS), value=RATE, label="task", elem_id="ann-task", scale=2)
        parts["per_item"] = gr.Number(value=1, precision=0, minimum=1, label="ratings per item (without a study)",
                                      elem_id="ann-per-item")
        parts["advance"] = gr.Checkbox(value=True, label="move on after rating", elem_id="ann-advance",
                                       info="off: stay on the item you rated")
        parts["start"] = gr.Button("start / next in queue", variant="primary", elem_id="ann-start")
    with gr.Row():
        parts["prev_btn"] = gr.Button("◀ previous (k)", elem_id="ann-prev", size="sm")
        parts["next_btn"] = gr.Button("next (j) ▶", elem_id="ann-next", size="sm")
        parts["undo_btn"] = gr.Button("undo (u)", elem_id="ann-undo", size="sm")
        parts["back_btn"] = gr.Button("↩ back to the undone item (b)", elem_id="ann-undo-back", size="sm",
                                      visible=False, variant="primary")
        parts["current"] = gr.Textbox(label="response id", interactive=False, elem_id="ann-response-id", scale=2)
    parts["back_to"] = gr.State("")
    parts["status"] = gr.Markdown(elem_id="ann-status")
    with gr.Row():
        with gr.Column(scale=2):
            parts["image"] = gr.HTML(elem_id="ann-image")
        with gr.Column(scale=3):
            parts["item"] = gr.HTML(elem_id="ann-item")
        with gr.Column(scale=3, elem_id="ann-rating-box") as rating_box:
            with gr.Row():
                parts["rate_btns"] = [gr.Button(str(v), elem_id=f"rate-{v}", min_width=40, variant="secondary")
                                      for v in RATINGS]
            gr.Markdown(GUIDELINE_MD, elem_id="ann-guideline")
    parts["rating_box"] = rating_box
    parts["verdicts"] = gr.HTML(elem_id="ann-verdicts")
    return _View(**parts, **_layout_judgements())


def _layout_judgements() -> dict[str, Any]:
    """The correction box (shown for the correcting task), the note, and the export."""
    parts: dict[str, Any] = {}
    with gr.Column(visible=False, elem_id="ann-correction-box") as correction_box:
        gr.Markdown("Correcting the judges shows their verdicts: these corrections are recorded as unblinded, "
                    "apart from the blind ratings.")
        with gr.Row():
            parts["triplet"] = gr.Dropdown(label="triplet", choices=[], elem_id="ann-triplet", scale=3)
            parts["verdict"] = gr.Radio(list(CORRECTION_VERDICTS), label="your verdict", elem_id="ann-verdict",
                                        scale=3)
            parts["reason"] = gr.Textbox(label="reason", elem_id="ann-reason", scale=2)
            parts["correct_btn"] = gr.Button("correct triplet", elem_id="ann-correct")
        with gr.Row():
            parts["edit"] = gr.Dropdown(label="edit of the revision", choices=[], scale=3)
            parts["accept_btn"] = gr.Button("accept edit", elem_id="ann-accept")
            parts["reject_btn"] = gr.Button("reject edit", elem_id="ann-reject")
    parts["correction_box"] = correction_box
    with gr.Row():
        parts["note_text"] = gr.Textbox(label="note", scale=3, elem_id="ann-note")
        parts["note_btn"] = gr.Button("add note", elem_id="ann-add-note", scale=0, min_width=120)
    with gr.Accordion("export the ratings", open=False):
        gr.Markdown("Each annotator's rating in force per item (undone ratings resolved away), beside the raw "
                    "event log of every action, undos included; its `meta` column says how each was made "
                    "(`mode`: blind or unblinded, and the `study`).")
        parts["export_btn"] = gr.Button("export ratings (CSV)", size="sm", elem_id="ann-export")
        parts["export_files"] = gr.File(label="ratings", file_count="multiple", elem_id="ann-export-files",
                                        visible=False)
    return parts


def _wire_navigation(ctx: AppContext, v: _View) -> None:
    """Start / next / previous, the annotator's name and choices remembered, the study and task switched."""
    size = len(v.screen)

    @toast_mistakes(size)
    def forward(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                request: gr.Request) -> list[Any]:
        place, who = _read(ctx, request, s, t, st, k, n, adv)
        return _screen(ctx, place, who, flow.step(ctx, place, who, forward=True))

    @toast_mistakes(size)
    def backward(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                 request: gr.Request) -> list[Any]:
        place, who = _read(ctx, request, s, t, st, k, n, adv)
        return _screen(ctx, place, who, flow.step(ctx, place, who, forward=False))

    for button, fn in ((v.start, forward), (v.next_btn, forward), (v.prev_btn, backward)):
        button.click(fn, v.controls, v.screen, api_visibility="private")

    def remember(sess: Any, typed: str, advance: bool) -> dict[str, Any]:
        place = places.clean(sess)
        place.update(name=typed or "", advance=advance is not False)
        return place

    for box in (v.name, v.advance):
        box.input(remember, [v.session, v.name, v.advance], [v.session], api_visibility="private",
                  show_progress="hidden")

    def switch_study() -> list[Any]:
        """Another study is another queue: the item goes."""
        blank = empty_note("press “start / next in queue”")
        return [blank, blank, "", ""]

    v.study.input(switch_study, None, [v.item, v.image, v.verdicts, v.current], api_visibility="private",
                  show_progress="hidden")

    @toast_mistakes(size)
    def switch_task(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                    request: gr.Request) -> list[Any]:
        """The item on screen stays, shown as the task needs it: correcting shows its verdicts (and a rating of
        it made afterwards is recorded as unblinded); rating shows it blind again where the study is blind."""
        if not rid:
            place = places.clean(s)
            place["task"] = k or RATE
            return [place, *[gr.skip()] * (len(v.screen) - 5), *_boxes(place["task"]), gr.skip(), gr.skip()]
        place, who = _read(ctx, request, s, t, st, k, n, adv)
        return _screen(ctx, place, who, flow.Outcome(rid, f"item {md(rid)}"))

    v.task.input(switch_task, v.controls, v.screen, api_visibility="private", show_progress="hidden")


def _wire_rating(ctx: AppContext, v: _View) -> None:
    """The five rating buttons (keys 1–5): one rating, then the next item unless the annotator chose to stay."""
    for value, btn in zip(RATINGS, v.rate_btns):
        @toast_mistakes(len(v.screen))
        def on_rate(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                    request: gr.Request, value: int = value) -> list[Any]:
            place, who = _read(ctx, request, s, t, st, k, n, adv)
            return _screen(ctx, place, who, flow.rate(ctx, place, who, rid, value))

        btn.click(on_rate, v.controls, v.screen, api_visibility="private")


def _wire_judgements(ctx: AppContext, v: _View) -> None:
    """Triplet corrections, edit reviews and notes: each one event, then the same item redrawn."""
    size = len(v.screen)

    @toast_mistakes(size)
    def on_correct(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                   index: int | None, verdict: str | None, why: str,
                   request: gr.Request) -> list[Any]:
        place, who = _read(ctx, request, s, t, st, k, n, adv)
        rid = _need_item(rid)
        if index is None or not verdict:
            raise ValidationError("choose a triplet and your verdict")
        actions.correct_triplet(ctx, who, rid, int(index), verdict, why or "", mode="unblinded")
        return _screen(ctx, place, who, flow.Outcome(rid, f"triplet {int(index)} corrected to **{md(verdict)}**"))

    v.correct_btn.click(on_correct, [*v.controls, v.triplet, v.verdict, v.reason], v.screen,
                        api_visibility="private")

    for button, accept in ((v.accept_btn, True), (v.reject_btn, False)):
        @toast_mistakes(size)
        def on_review(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                      index: int | None, request: gr.Request,
                      accept: bool = accept) -> list[Any]:
            place, who = _read(ctx, request, s, t, st, k, n, adv)
            rid = _need_item(rid)
            if index is None:
                raise ValidationError("choose an edit of the revision")
            actions.review_edit(ctx, who, rid, int(index), accept, mode="unblinded")
            done = f"edit {int(index)} {'accepted' if accept else 'rejected'}"
            return _screen(ctx, place, who, flow.Outcome(rid, done))

        button.click(on_review, [*v.controls, v.edit], v.screen, api_visibility="private")

    @toast_mistakes(size + 1)
    def on_note(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                text: str, request: gr.Request) -> list[Any]:
        place, who = _read(ctx, request, s, t, st, k, n, adv)
        rid = _need_item(rid)
        actions.note(ctx, who, rid, text)
        return [*_screen(ctx, place, who, flow.Outcome(rid, "note added")), ""]

    v.note_btn.click(on_note, [*v.controls, v.note_text], [*v.screen, v.note_text], api_visibility="private")


def _wire_undo(ctx: AppContext, v: _View) -> None:
    """Undo (key u) takes back the annotator's latest action with a new event and says which, on which item; when
    that item is not the one on screen (a rating that moved on), it offers to go back there (key b)."""
    size = len(v.screen)

    @toast_mistakes(size)
    def on_undo(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                request: gr.Request) -> list[Any]:
        place, who = _read(ctx, request, s, t, st, k, n, adv)
        return _screen(ctx, place, who, flow.undo(ctx, place, who, rid or None))

    v.undo_btn.click(on_undo, v.controls, v.screen, api_visibility="private")

    @toast_mistakes(size)
    def on_back(s: Any, t: str, st: str | None, k: str | None, n: float | None, adv: bool | None, rid: str,
                target: str, request: gr.Request) -> list[Any]:
        place, who = _read(ctx, request, s, t, st, k, n, adv)
        return _screen(ctx, place, who, flow.back_to(ctx, place, target))

    v.back_btn.click(on_back, [*v.controls, v.back_to], v.screen, api_visibility="private")


def _stored(place: dict[str, Any], key: str) -> Any:
    """The control's stored value, or no change where the browser stored only the default."""
    return gr.update(value=place[key]) if place[key] != places.FRESH[key] else gr.skip()


def _restorer(ctx: AppContext, v: _View) -> Callable[..., list[Any]]:
    """The page-load handler: the name, the study, the task, the setting and the item the annotator was on come
    back from the browser's storage. Without an item to go back to, only what was stored comes back: on a fresh
    page it changes nothing, whatever the person typed or started before its answer came."""
    def restore(sess: Any, request: gr.Request) -> list[Any]:
        stored = places.clean(sess)
        place = places.settle(places.clean(sess), {value for _, value in study_choices(ctx)},
                              lambda r: ctx.store.get_response(r) is not None)
        rid = places.current(place)
        try:
            who = _who(ctx, request, place["name"])
        except MISTAKES:
            who = None
        if rid is not None and who is not None:
            controls = [gr.update(value=place["name"]), gr.update(choices=study_choices(ctx), value=place["study"]),
                        gr.update(value=place["task"]), gr.update(value=place["per_item"]),
                        gr.update(value=place["advance"])]
            return [*controls, *_screen(ctx, place, who, flow.back_to(ctx, place, rid))]
        # No item to go back to: only what this browser stored is put back. The load's answer can come after the
        # person has typed their name and started (a busy server), and a fresh page's defaults must not blank them.
        study = ({"value": place["study"]} if place["study"] != places.FRESH["study"] else {})
        controls = [_stored(place, "name"), gr.update(choices=study_choices(ctx), **study),
                    _stored(place, "task"), _stored(place, "per_item"), _stored(place, "advance")]
        boxes = _boxes(place["task"]) if place["task"] != places.FRESH["task"] else [gr.skip(), gr.skip()]
        return [*controls, place if place != stored else gr.skip(), *[gr.skip()] * (len(v.screen) - 5), *boxes,
                gr.skip(), gr.skip()]

    return restore
