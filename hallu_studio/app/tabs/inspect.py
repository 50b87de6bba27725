"""Inspect: one response side by side with its image, graphs, spans, heatmaps, diff and verdicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import gradio as gr

from ...annotation import PREFERENCE_ASPECTS
from ...metrics.registry import metric_specs
from ...presentation import run_names, short_model_label
from ...studies.in_force import InForce
from .. import actions
from ..columns import headline_keys
from ..context import AppContext
from ..id_lists import STORE_ORDER
from ..inspection import SIDE_BY_SIDE, InspectPanels, inspect_response
from ..render.heatmap import PLAN_LINE
from ..render.palette import empty_note, esc, legend_html, md
from ..toasts import Mistake, toast_mistakes


@dataclass
class InspectTab:
    nav: gr.State  # small: {"filters", "list", "index", "id", "count"} (see ``nav_for``); never the id list
    response_id: gr.Textbox
    position: gr.Markdown
    compare: gr.Dropdown
    panels: list[gr.HTML]
    compare_panels: list[gr.HTML]

    @property
    def outputs(self) -> list[Any]:
        return [self.nav, self.response_id, self.position, self.compare, *self.panels, *self.compare_panels]


# header, image, text, two graphs, the side-by-side drawings, disagreements, rows, people
N_PANELS = 5 + len(SIDE_BY_SIDE) + 3


def _panel_values(p: InspectPanels) -> list[str]:
    side = [p.drawings.get(kind) or empty_note(_not_drawn(kind)) for kind in SIDE_BY_SIDE]
    return [p.header + p.people_line + LEGEND, p.image, p.response_text, p.reference_graph, p.response_graph, *side,
            p.disagreements, p.evidence, p.people]


def _drawn_by(kind: str) -> str:
    """The metrics whose specs ask for drawing ``kind``, as people call them."""
    return " / ".join(" ".join(dict.fromkeys((s.family, s.display_name)))
                      for s in metric_specs() if s.panel == kind) or kind


def _not_drawn(kind: str) -> str:
    return " ".join(("no", _drawn_by(kind), "score for this response (not applicable to its task, or not scored yet)"))


LEGEND = (f'<p class="hs-panel-line" id="inspect-graph-legend">verdict colours, the same in the text, the graphs and '
          f'the tables: {legend_html()}</p>')
# One line under each side-by-side panel: what it shows.
PANEL_LINES = {
    "image": "The image the model described.",
    "reference": "What is there: a box per object with its attributes, an arrow per relation.",
    "response": "What the response claims, by verdict: boxes objects, ovals attributes and counts, arrows relations; "
                "a box with no arrow is in no relation (hover: why).",
    "transport_plan": PLAN_LINE,
    "edit_diff": "The smallest revision that makes the response agree with the reference, sentence beside sentence; "
                 "its word edits are the distance.",
}


def _line(key: str, title: str) -> None:
    gr.HTML(f'<p class="hs-panel-line"><b>{esc(title)}</b> · {esc(PANEL_LINES.get(key, ""))}</p>',
            elem_id=f"inspect-line-{key.replace('_', '-')}")


def _filter_ids(ctx: AppContext, filters: dict[str, Any]) -> list[str]:
    """Every id the Browse filter keeps, in Browse order (the same query as ``browse.query``)."""
    from .browse import store_filters  # Browse's filter as the store reads it ("people and judges disagree": ids)

    return ctx.store.browse_response_ids(store_filters(ctx, filters), headline_keys(), sort=filters.get("sort"),
                                         descending=filters.get("descending", True), configs=ctx.in_force().keys())


def nav_for(ctx: AppContext, filters: dict[str, Any], ids: list[str] | tuple[str, ...], index: int,
            current: str | None = None) -> dict[str, Any]:
    """Session state for Inspect: the Browse filter, a key to its id list (kept in ``ctx.id_lists``,
    not in the state), the position and the id shown."""
    return {"filters": dict(filters), "list": ctx.id_lists.remember(ids), "index": index, "count": len(ids),
            "id": current}


def default_nav(ctx: AppContext) -> dict[str, Any]:
    # No Browse filter: every response in the store's order, read by position, never listed.
    return {"filters": {}, "list": STORE_ORDER, "index": 0, "count": ctx.store.count_responses(), "id": None}


def _ids(ctx: AppContext, key: str) -> Sequence[str] | None:
    return ctx.id_lists.store_order(ctx.store) if key == STORE_ORDER else ctx.id_lists.get(key)


def _session(ctx: AppContext, nav: dict[str, Any] | None) -> tuple[dict[str, Any], Sequence[str]]:
    """The session's state and its id list; the list is re-read from the store when it was dropped here."""
    nav = dict(nav or {})
    if "ids" in nav:  # the earlier shape, with the list inside: still accepted
        nav = nav_for(ctx, {}, nav["ids"], nav.get("index", 0))
    if not nav.get("list"):
        nav = default_nav(ctx)
    ids = _ids(ctx, nav["list"])
    if ids is None:  # evicted or another process: the filter's list as it is now
        ids = tuple(_filter_ids(ctx, nav.get("filters") or {}))
        nav["list"] = ctx.id_lists.remember(ids)
        if nav.get("id") in ids:
            nav["index"] = ids.index(nav["id"])
    nav["count"] = len(ids)
    return nav, ids


def show(ctx: AppContext, nav: dict[str, Any] | None, response_id: str | None = None) -> list[Any]:
    """Outputs of the tab for ``response_id`` (or the current position of ``nav``)."""
    nav, ids = _session(ctx, nav)
    if response_id:
        # outside the current filter: show it, and keep the list as it was
        nav["index"] = ids.index(response_id) if response_id in ids else -1
    index = nav.get("index", 0)
    rid = response_id or (ids[index] if 0 <= index < len(ids) else nav.get("id"))
    nav["id"] = rid
    if rid is None:
        blank = empty_note("no responses match the current filter")
        return [nav, "", "0 of 0", gr.update(choices=[], value=None), *[blank] * N_PANELS, "", ""]
    in_force = ctx.in_force()
    nav["drawn"] = _drawn_from(in_force)
    try:
        panels = inspect_response(ctx.store, rid, in_force)
    except KeyError as exc:
        blank = empty_note(str(exc))
        return [nav, rid, "not found", gr.update(choices=[], value=None), *[blank] * N_PANELS, "", ""]
    others = [o for o in ctx.store.responses_to_sample(ctx.store.get_response(rid).sample_id) if o["id"] != rid]
    names = run_names(ctx.store.run_manifests())
    choices = [(f"{short_model_label(o['model'], o['synthetic'], name=names.get(o['run_id']))} · {o['run_id']}", o["id"])
               for o in others]
    where = f"{index + 1} of {len(ids)}" if index >= 0 else f"outside the filter ({len(ids)} in it)"
    return [nav, rid, f"**{where}**", gr.update(choices=choices, value=None), *_panel_values(panels), "", ""]


def _drawn_from(in_force: InForce) -> str:
    """What the panels are drawn from: each metric's configuration in force and its count of scores (read with the
    configurations in force, so a step costs no query of its own)."""
    return repr(sorted((m, s.key, s.scores) for m, s in in_force.shown.items()))


def refresh(ctx: AppContext, nav: dict[str, Any] | None, n_outputs: int) -> list[Any]:
    """Back on the tab: the response shown is drawn again where scores landed since it was drawn (the first
    start scores in the background while the page is open; a Run job); else nothing moves (a comparison stays)."""
    if nav and nav.get("drawn") == _drawn_from(ctx.in_force()):
        return [gr.skip()] * n_outputs
    return show(ctx, nav, (nav or {}).get("id"))


def step(ctx: AppContext, nav: dict[str, Any] | None, delta: int) -> list[Any]:
    """Previous / next within the session's filtered list (wrapping around)."""
    nav, ids = _session(ctx, nav)
    n, index = len(ids), nav.get("index", 0)
    if n:
        # index -1: the response shown is outside the list; next starts at its top, previous at its end.
        nav["index"] = (index + delta) % n if index >= 0 else (0 if delta > 0 else n - 1)
    return show(ctx, nav)


def compare_with(ctx: AppContext, other_id: str | None) -> list[Any]:
    """The other response and its verdicts, and the A/B panel shown only while there is a comparison."""
    if not other_id:
        return ["", "", gr.update(visible=False), gr.update(visible=False)]
    p = inspect_response(ctx.store, other_id, ctx.in_force(), with_graphs=False)
    return [p.header + p.response_text, f"<h4>{esc('the other response: what each metric judged')}</h4>"
            f"{p.disagreements}{p.evidence}", gr.update(visible=True), gr.update(visible=True)]


def build(ctx: AppContext, tab_component: gr.Tab | None = None) -> InspectTab:
    """The Inspect view; ``tab_component``, the tab it is in, redraws it when selected (``refresh``)."""
    nav = gr.State({})
    with gr.Row():
        prev_btn = gr.Button("◀ previous", elem_id="inspect-prev", size="sm")
        next_btn = gr.Button("next ▶", elem_id="inspect-next", size="sm")
        position = gr.Markdown("", elem_id="inspect-position")
        response_id = gr.Textbox(label="response id", elem_id="inspect-response-id", scale=3)
        compare = gr.Dropdown(label="put another model's response beside it", choices=[], scale=3,
                              elem_id="inspect-compare-choice")
    header = gr.HTML(elem_id="inspect-header")
    # Side by side at 1,400 px, nothing to open: the image and the response beside the two graphs, then the
    # transport plan beside the edit diff; every metric's evidence follows, open.
    with gr.Row(equal_height=False, elem_id="inspect-row-graphs"):
        with gr.Column(scale=2, min_width=260):
            _line("image", "image")
            image = gr.HTML(elem_id="inspect-image")
        with gr.Column(scale=3, min_width=300):
            _line("reference", "reference scene graph")
            ref_graph = gr.HTML(elem_id="inspect-ref-graph")
        with gr.Column(scale=3, min_width=300):
            _line("response", "response concept graph")
            resp_graph = gr.HTML(elem_id="inspect-resp-graph")
        with gr.Column(scale=3, min_width=200, visible=False, elem_id="inspect-compare-column") as compare_column:
            compare_text = gr.HTML(elem_id="inspect-compare")
    with gr.Row(equal_height=False, elem_id="inspect-row-plans"):
        with gr.Column(scale=2, min_width=260):
            text = gr.HTML(elem_id="inspect-text")
        side = []
        for kind in SIDE_BY_SIDE:
            with gr.Column(scale=3, min_width=320):
                _line(kind, _drawn_by(kind))
                side.append(gr.HTML(elem_id=f"inspect-{kind.replace('_', '-')}"))
    disagreements = gr.HTML(elem_id="inspect-disagreements")
    # People beside the judges: what people said of this response (imported studies, ratings, corrections), above
    # each metric's own section.
    gr.Markdown("**people beside the judges**")
    people = gr.HTML(elem_id="inspect-people")
    evidence = gr.HTML(elem_id="inspect-evidence")
    with gr.Group(visible=False, elem_id="inspect-ab") as ab_panel:
        compare_verdicts = gr.HTML(elem_id="inspect-compare-verdicts")
        with gr.Row():
            aspect = gr.Radio(list(PREFERENCE_ASPECTS), value="overall", label="which response is better? aspect")
            prefer_name = gr.Textbox(label="your annotator name", visible=not ctx.auth_enabled,
                                     elem_id="prefer-name")
            left_btn = gr.Button("left is better", size="sm", elem_id="prefer-left")
            tie_btn = gr.Button("tie", size="sm", elem_id="prefer-tie")
            right_btn = gr.Button("right is better", size="sm", elem_id="prefer-right")
        prefer_status = gr.Markdown(elem_id="inspect-prefer-status")
    tab = InspectTab(nav, response_id, position, compare,
                     [header, image, text, ref_graph, resp_graph, *side, disagreements, evidence, people],
                     [compare_text, compare_verdicts])
    redraws = []
    if tab_component is not None:
        redraws.append(tab_component.select(lambda n: refresh(ctx, n, len(tab.outputs)), [nav], tab.outputs,
                                            api_visibility="private", show_progress="hidden"))
    # What the person asks for cancels a redraw of the tab still under way: answered late (a busy server), it would
    # replace the response they asked for with the one the tab showed before.
    next_btn.click(lambda n: step(ctx, n, +1), [nav], tab.outputs, api_name="inspect_next", cancels=redraws)
    prev_btn.click(lambda n: step(ctx, n, -1), [nav], tab.outputs, api_name="inspect_previous", cancels=redraws)
    response_id.submit(lambda n, rid: show(ctx, n, rid.strip()), [nav, response_id], tab.outputs,
                       api_name="inspect", cancels=redraws)
    compare.change(lambda other: compare_with(ctx, other), [compare],
                   [*tab.compare_panels, compare_column, ab_panel], api_visibility="private")

    def prefer(left: str, right: str | None, which: str, how: str, typed: str, request: gr.Request) -> str:
        who = actions.annotator_for(ctx, getattr(request, "username", None), typed)  # before anything else
        if not left or not right:
            raise Mistake("put another model's response beside this one first")
        winner = {"left": left, "right": right, "tie": "tie"}[which]
        actions.prefer(ctx, who, left, right, winner, how)
        return f"recorded: {md(which)} ({md(how)}) by {md(who)}"

    for which, btn in (("left", left_btn), ("tie", tie_btn), ("right", right_btn)):
        @toast_mistakes(1)
        def on_prefer(left: str, right: str | None, how: str, typed: str, request: gr.Request,
                      which: str = which) -> str:
            return prefer(left, right, which, how, typed, request)
        btn.click(on_prefer, [response_id, compare, aspect, prefer_name], [prefer_status], api_visibility="private")
    return tab
