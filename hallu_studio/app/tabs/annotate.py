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

from ... import annotation
from ...annotation import CORRECTION_VERDICTS, RATING_GUIDELINE, RATING_NOTES, current_ratings
from ...model import APP_SOURCE, ValidationError
from .. import actions
from ..context import AppContext
from ..inspection import annotation_item
from ..render.palette import empty_note, esc, md
from ..toasts import MISTAKES, api_error, toast_mistakes

GUIDELINE_MD = ("**Tri-HE rating guideline (Table 8)** — higher is better\n\n" +
                "\n".join(f"- **{k}**: {v}" for k, v in sorted(RATING_GUIDELINE.items(), reverse=True)) +
                "\n\n" + "\n".join(f"- {n}" for n in RATING_NOTES) +
                "\n\nKeys: **1–5** rate · **j** next · **k** previous · **u** undo (not while typing).")
RATINGS = range(1, 6)


TASKS: tuple[tuple[str, str], ...] = (("rate 1–5 (blind unless the study shows the judges)", "rate"),
                                      ("correct the judges' verdicts (shows them)", "correct"))
NO_STUDY = ""
# The annotator's place, kept in the browser (localStorage) so that a reload finds it again.
SESSION_KEY = "hallu-studio-annotate"
FRESH: dict[str, Any] = {"name": "", "study": NO_STUDY, "task": "rate", "per_item": 1, "history": [], "index": -1,
                         "revealed": []}  # revealed: responses whose verdicts this browser has shown


@dataclass
class AnnotateTab:
    name: gr.Textbox
    study: gr.Dropdown
    current: gr.Textbox
    session: gr.BrowserState
    restore: Callable[..., list[Any]]  # the page-load handler: the annotator's name and place come back
    restore_outputs: list[Any]


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


def study_choices(ctx: AppContext) -> list[tuple[str, str]]:
    """The studies an annotator can rate in, newest first, after "no study"."""
    out = [("no study: every response", NO_STUDY)]
    for s in ctx.store.list_studies():
        mode = "shows the judges" if s["definition"].get("show_judgements") else "blind"
        out.append((f"{s['id']} ({mode}, {s['items']} responses)", s["id"]))
    return out


def _blind(ctx: AppContext, task: str, study: str | None) -> bool:
    """Ratings are blind unless the study says to show the judges; corrections always show them."""
    if task == "correct":
        return False
    return not (study and annotation.study_design(ctx.store, study).show_judgements)


def _mode(ctx: AppContext, task: str, study: str | None, revealed: bool = False) -> str:
    """How a rating is recorded: blind only when nothing of the judges was shown for this response (a response
    whose verdicts were shown for correcting stays unblinded for this annotator)."""
    return "blind" if _blind(ctx, task, study) and not revealed else "unblinded"


def _rating_line(rating: int | None) -> str:
    if rating is None:
        return '<p class="hs-your-rating hs-unrated">you have not rated this response yet</p>'
    return (f'<p class="hs-your-rating" data-rating="{rating}">your rating: <b>{rating}</b> — '
            f'{esc(RATING_GUIDELINE[rating])}</p>')


def _my_rating(ctx: AppContext, rid: str, annotator: str | None, study: str | None) -> int | None:
    if not annotator:
        return None
    events = ctx.store.list_events(response_id=rid, source=APP_SOURCE)
    if study:
        found = annotation.study_rating_events(events, study).get((rid, annotator))
        return int(found.value) if found is not None else None
    return current_ratings(events).get((rid, annotator))


def _item_view(ctx: AppContext, rid: str | None, annotator: str | None, task: str = "rate",
               study: str | None = None) -> list[Any]:
    """The item, the image, the judges' verdicts (never while rating blind), the two choosers, and the five
    rating buttons (yours marked)."""
    if not rid:
        blank = empty_note("the queue is empty: nothing left for you here")
        return [blank, blank, "", gr.update(choices=[], value=None), gr.update(choices=[], value=None),
                *[gr.update(variant="secondary") for _ in RATINGS]]
    blind = _blind(ctx, task, study)
    p = annotation_item(ctx.store, rid, blind=blind, in_force=None if blind else ctx.in_force())
    mine = _my_rating(ctx, rid, annotator, study)
    # a long verdict list scrolls in its own box, keeping the correction controls near the item
    verdicts = f'<div class="hs-scroll" style="max-height:460px;overflow:auto">{p.verdicts}</div>' if p.verdicts \
        else ""
    return [_rating_line(mine) + p.header + p.response_text, p.image, verdicts,
            gr.update(choices=[(c, i) for i, c in enumerate(p.triplet_choices)], value=None),
            gr.update(choices=[(c, int(c.split(":", 1)[0])) for c in p.edit_choices], value=None),
            *[gr.update(variant="primary" if v == mine else "secondary") for v in RATINGS]]


def _status(ctx: AppContext, annotator: str, message: str, study: str | None = None) -> str:
    prog = actions.progress(ctx, annotator, study)
    if study:
        return (f"{message}\n\n**{md(annotator)}** in study **{md(study)}** ({md(prog['mode'])}): you rated "
                f"{int(prog['rated'])}; the study has {int(prog['done'])} of {int(prog['needed'])} ratings "
                f"({int(prog['complete'])} of {int(prog['items'])} responses complete)")
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


def _session(sess: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of the stored session, with every key (an older or foreign value starts afresh)."""
    out = dict(FRESH)
    if isinstance(sess, dict):
        out.update({k: sess[k] for k in FRESH if k in sess})
    out["history"] = [str(r) for r in out.get("history") or []]
    out["revealed"] = [str(r) for r in out.get("revealed") or []]
    out["index"] = int(out.get("index", -1)) if str(out.get("index", -1)).lstrip("-").isdigit() else -1
    return out


def browser_session() -> gr.BrowserState:
    """The annotator's name and place in the browser's storage. Made outside the tabs (``build_app``): a component
    inside a tab not yet shown is not mounted, and would not have read the storage when the page loads."""
    return gr.BrowserState(dict(FRESH), storage_key=SESSION_KEY, secret=SESSION_KEY)


def build(ctx: AppContext, session: gr.BrowserState | None = None) -> AnnotateTab:
    session = session if session is not None else browser_session()
    with gr.Row():
        name = gr.Textbox(label="your annotator name", visible=not ctx.auth_enabled, elem_id="annotator-name")
        study = gr.Dropdown(study_choices(ctx), value=NO_STUDY, label="study (designed in the Study view)",
                            elem_id="ann-study", scale=2)
        task = gr.Radio(list(TASKS), value="rate", label="task", elem_id="ann-task", scale=2)
        per_item = gr.Number(value=1, precision=0, minimum=1, label="ratings per item (without a study)",
                             elem_id="ann-per-item")
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
        with gr.Column(scale=3, elem_id="ann-rating-box") as rating_box:
            gr.Markdown(GUIDELINE_MD, elem_id="ann-guideline")
            with gr.Row():
                rate_btns = [gr.Button(str(v), elem_id=f"rate-{v}", min_width=40, variant="secondary")
                             for v in RATINGS]
    verdicts = gr.HTML(elem_id="ann-verdicts")
    with gr.Column(visible=False, elem_id="ann-correction-box") as correction_box:
        gr.Markdown("Correcting the judges shows their verdicts: these corrections are recorded as unblinded, "
                    "apart from the blind ratings.")
        with gr.Row():
            triplet = gr.Dropdown(label="triplet", choices=[], elem_id="ann-triplet", scale=3)
            verdict = gr.Radio(list(CORRECTION_VERDICTS), label="your verdict", elem_id="ann-verdict", scale=3)
            reason = gr.Textbox(label="reason", elem_id="ann-reason", scale=2)
            correct_btn = gr.Button("correct triplet", elem_id="ann-correct")
        with gr.Row():
            edit = gr.Dropdown(label="edit of the revision", choices=[], scale=3)
            accept_btn = gr.Button("accept edit", elem_id="ann-accept")
            reject_btn = gr.Button("reject edit", elem_id="ann-reject")
    with gr.Row():
        note_text = gr.Textbox(label="note", scale=3, elem_id="ann-note")
        note_btn = gr.Button("add note", elem_id="ann-add-note", scale=0, min_width=120)
    with gr.Accordion("export the ratings", open=False):
        gr.Markdown("Each annotator's rating in force per item (undone ratings resolved away), beside the raw "
                    "event log of every action, undos included; its `meta` column says how each was made "
                    "(`mode`: blind or unblinded, and the `study`).")
        export_btn = gr.Button("export ratings (CSV)", size="sm", elem_id="ann-export")
        export_files = gr.File(label="ratings", file_count="multiple", elem_id="ann-export-files", visible=False)
    view_outputs = [item, image, verdicts, triplet, edit, *rate_btns]
    item_outputs = [*view_outputs, status]

    def boxes(task_value: str) -> list[Any]:
        return [gr.update(visible=task_value != "correct"), gr.update(visible=task_value == "correct")]

    def go(sess: dict[str, Any], typed: str, study_id: str, task_value: str, n: float, delta: int,
           request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        sess = _session(sess)
        study_id = study_id or NO_STUDY
        if study_id:
            annotation.check_study_annotator(annotation.study_design(ctx.store, study_id), who)
        if sess["study"] != study_id:
            sess.update(history=[], index=-1)  # another study: its own place
        sess.update(name=typed or "", study=study_id, task=task_value, per_item=int(n or 1))
        if delta < 0:
            sess["index"] = max(0, sess["index"] - 1)
            rid = sess["history"][sess["index"]] if sess["history"] else None
        elif 0 <= sess["index"] < len(sess["history"]) - 1:
            sess["index"] += 1
            rid = sess["history"][sess["index"]]
        else:
            after = sess["history"][sess["index"]] if sess["history"] else None
            mode = "uncorrected" if task_value == "correct" else "unrated"
            rid = actions.next_item(ctx, who, mode, int(n or 1), after, study_id or None)["response_id"]
            if rid:
                sess["history"].append(rid)
                sess["index"] = len(sess["history"]) - 1
        if rid and not _blind(ctx, task_value, study_id or None) and rid not in sess["revealed"]:
            sess["revealed"] = (sess["revealed"] + [rid])[-5000:]
        return [sess, rid or "", *_item_view(ctx, rid, who, task_value, study_id or None),
                _status(ctx, who, f"item {md(rid)}" if rid else "done: nothing left in this queue for you",
                        study_id or None), *boxes(task_value)]

    nav_in = [session, name, study, task, per_item]
    nav_out = [session, current, *item_outputs, rating_box, correction_box]

    @toast_mistakes(len(nav_out))
    def forward(s: dict[str, Any], t: str, st: str, k: str, n: float, request: gr.Request) -> list[Any]:
        return go(s, t, st, k, n, +1, request)

    @toast_mistakes(len(nav_out))
    def backward(s: dict[str, Any], t: str, st: str, k: str, n: float, request: gr.Request) -> list[Any]:
        return go(s, t, st, k, n, -1, request)

    start.click(forward, nav_in, nav_out, api_visibility="private")
    next_btn.click(forward, nav_in, nav_out, api_visibility="private")
    prev_btn.click(backward, nav_in, nav_out, api_visibility="private")

    def remember_name(sess: dict[str, Any], typed: str) -> dict[str, Any]:
        sess = _session(sess)
        sess["name"] = typed or ""
        return sess

    name.input(remember_name, [session, name], [session], api_visibility="private", show_progress="hidden")

    def switch_study(sess: dict[str, Any], study_id: str, task_value: str) -> list[Any]:
        """Another study is another queue: the item goes."""
        blank = empty_note("press “start / next in queue”")
        return [blank, blank, "", ""]

    study.input(switch_study, [session, study, task], [item, image, verdicts, current], api_visibility="private",
                show_progress="hidden")

    @toast_mistakes(len(view_outputs) + 3)
    def switch_task(sess: dict[str, Any], rid: str, typed: str, study_id: str, task_value: str,
                    request: gr.Request) -> list[Any]:
        """The item on screen stays, shown as the task needs it: correcting shows its verdicts (and a rating of
        it made afterwards is recorded as unblinded); rating shows it blind again where the study is blind."""
        sess = _session(sess)
        sess["task"] = task_value
        if not rid:
            return [sess, *[gr.skip()] * len(view_outputs), *boxes(task_value)]
        who = _who(ctx, request, typed)
        if not _blind(ctx, task_value, study_id or None) and rid not in sess["revealed"]:
            sess["revealed"] = (sess["revealed"] + [rid])[-5000:]
        return [sess, *_item_view(ctx, rid, who, task_value, study_id or None), *boxes(task_value)]

    task.input(switch_task, [session, current, name, study, task],
               [session, *view_outputs, rating_box, correction_box], api_visibility="private",
               show_progress="hidden")

    def restore(sess: dict[str, Any], request: gr.Request) -> list[Any]:
        """On page load: the name, the study, the task and the item the annotator was on come back."""
        sess = _session(sess)
        studies = {value for _, value in study_choices(ctx)}
        if sess["study"] not in studies:
            sess.update(study=NO_STUDY, history=[], index=-1)
        sess["history"] = [r for r in sess["history"] if ctx.store.get_response(r) is not None]
        sess["index"] = min(sess["index"], len(sess["history"]) - 1)
        rid = sess["history"][sess["index"]] if sess["index"] >= 0 else None
        controls = [gr.update(value=sess["name"]), gr.update(choices=study_choices(ctx), value=sess["study"]),
                    gr.update(value=sess["task"]), gr.update(value=sess["per_item"])]
        try:
            who = _who(ctx, request, sess["name"])
        except MISTAKES:
            who = None
        if rid is None or who is None:
            return [sess, *controls, "", *[gr.skip()] * len(view_outputs), gr.skip(), *boxes(sess["task"])]
        return [sess, *controls, rid, *_item_view(ctx, rid, who, sess["task"], sess["study"] or None),
                _status(ctx, who, f"back at item {md(rid)}", sess["study"] or None), *boxes(sess["task"])]

    restore_outputs = [session, name, study, task, per_item, current, *item_outputs, rating_box, correction_box]

    def context_of(sess: dict[str, Any]) -> tuple[str, str | None]:
        sess = _session(sess)
        return sess["task"], sess["study"] or None

    def after_action(rid: str, who: str, message: str, sess: dict[str, Any]) -> list[Any]:
        task_value, study_id = context_of(sess)
        return [*_item_view(ctx, rid, who, task_value, study_id), _status(ctx, who, message, study_id)]

    def need_item(rid: str | None) -> str:
        if not rid:
            raise ValidationError("no response on screen: press “start / next in queue” first")
        return rid

    for value, btn in zip(RATINGS, rate_btns):
        @toast_mistakes(len(item_outputs))
        def on_rate(rid: str, typed: str, sess: dict[str, Any], request: gr.Request, value: int = value) -> list[Any]:
            who = _who(ctx, request, typed)
            task_value, study_id = context_of(sess)
            if task_value == "correct":
                raise ValidationError("ratings are made in the rating task; switch the task to rate")
            revealed = rid in _session(sess)["revealed"]
            actions.rate(ctx, who, need_item(rid), value, _mode(ctx, task_value, study_id, revealed), study_id)
            return after_action(rid, who, f"rated {md(rid)} **{int(value)}**", sess)
        btn.click(on_rate, [current, name, session], item_outputs, api_visibility="private")

    @toast_mistakes(len(item_outputs))
    def on_correct(rid: str, typed: str, index: int | None, v: str | None, why: str, sess: dict[str, Any],
                   request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        need_item(rid)
        if index is None or not v:
            raise ValidationError("choose a triplet and your verdict")
        actions.correct_triplet(ctx, who, rid, int(index), v, why or "", mode="unblinded")
        return after_action(rid, who, f"triplet {int(index)} corrected to **{md(v)}**", sess)

    correct_btn.click(on_correct, [current, name, triplet, verdict, reason, session], item_outputs,
                      api_visibility="private")

    def on_review(rid: str, typed: str, index: int | None, accept: bool, sess: dict[str, Any],
                  request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        need_item(rid)
        if index is None:
            raise ValidationError("choose an edit of the revision")
        actions.review_edit(ctx, who, rid, int(index), accept, mode="unblinded")
        return after_action(rid, who, f"edit {int(index)} {'accepted' if accept else 'rejected'}", sess)

    @toast_mistakes(len(item_outputs))
    def on_accept(r: str, t: str, i: int | None, sess: dict[str, Any], request: gr.Request) -> list[Any]:
        return on_review(r, t, i, True, sess, request)

    @toast_mistakes(len(item_outputs))
    def on_reject(r: str, t: str, i: int | None, sess: dict[str, Any], request: gr.Request) -> list[Any]:
        return on_review(r, t, i, False, sess, request)

    accept_btn.click(on_accept, [current, name, edit, session], item_outputs, api_visibility="private")
    reject_btn.click(on_reject, [current, name, edit, session], item_outputs, api_visibility="private")

    @toast_mistakes(len(item_outputs) + 1)
    def on_note(rid: str, typed: str, text: str, sess: dict[str, Any], request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        actions.note(ctx, who, need_item(rid), text)
        return [*after_action(rid, who, "note added", sess), ""]

    note_btn.click(on_note, [current, name, note_text, session], [*item_outputs, note_text],
                   api_visibility="private")

    @toast_mistakes(len(item_outputs))
    def on_undo(rid: str, typed: str, sess: dict[str, Any], request: gr.Request) -> list[Any]:
        who = _who(ctx, request, typed)
        result = actions.undo(ctx, who, None)
        message = "undid your last action" if result["undone"] else "nothing of yours to undo"
        if not rid:
            return [*[gr.skip()] * (len(item_outputs) - 1), _status(ctx, who, message, context_of(sess)[1])]
        return after_action(rid, who, message, sess)

    undo_btn.click(on_undo, [current, name, session], item_outputs, api_visibility="private")
    export_btn.click(toast_mistakes(1)(lambda: gr.update(value=export_ratings(ctx), visible=True)), None,
                     [export_files], api_visibility="private")
    return AnnotateTab(name, study, current, session, restore, restore_outputs)


def register_api(ctx: AppContext) -> None:
    """The scripted annotation API (``gradio_client``), with stable names.

    With sign-in on, ``annotator`` is ignored and the signed-in user is recorded.
    """
    def rate(response_id: str, value: int, annotator: str = "", study: str = "", request: gr.Request = None) -> dict:
        who = _api_who(ctx, request, annotator)
        # a script shows what its caller chose: the event says "api", not blind
        return _guard(lambda: actions.rate(ctx, who, response_id, int(value), "api", study or None))

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

    for fn in (rate, correct_triplet, review_edit, note, undo, next_item, prefer, my_events):
        gr.api(fn, api_name=fn.__name__)
