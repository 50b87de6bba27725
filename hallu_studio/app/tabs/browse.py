"""Browse: a filtered, sortable table of responses with metric columns, and saved named views."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from ...model import ValidationError
from ..columns import BY_KEY, HEADLINE_COLUMNS, headline_keys
from ..context import AppContext
from ..render.palette import esc, md, short_model_label
from ..view_names import check_view_name

PAGE_SIZE = 200


@dataclass
class BrowseTab:
    table: gr.Dataframe
    ids: gr.State  # the response ids of the table's rows, in order (per session)
    filters: gr.State  # the current filter dict (per session)
    controls: list[Any]
    view_name: gr.Textbox
    saved_views: gr.Dropdown
    status: gr.Markdown
    page: gr.Number


def filters_from_controls(models: list[str] | None, benchmarks: list[str] | None, domains: list[str] | None,
                          tasks: list[str] | None, range_column: str | None, low: float | None, high: float | None,
                          annotated: str, disagreement: str, text: str, sort: str | None,
                          worst_first: bool) -> dict[str, Any]:
    """The store's filter dict (plus the sort) from the Browse controls.

    >>> filters_from_controls(["m"], [], None, None, "emd.total", 10, None, "no", "any", "", "emd.total", True)["ranges"]
    {'emd.total': [10.0, None]}
    """
    f: dict[str, Any] = {"models": list(models or []), "benchmarks": list(benchmarks or []),
                         "domains": list(domains or []), "tasks": list(tasks or []),
                         "annotated": {"yes": True, "no": False}.get(annotated),
                         "disagreement": None if disagreement in (None, "", "any") else disagreement,
                         "text": (text or "").strip() or None, "ranges": {}}
    if range_column and (low is not None or high is not None):
        f["ranges"][range_column] = [None if low is None else float(low), None if high is None else float(high)]
    f["sort"] = sort or None
    # "Worst first" means descending when higher is worse, ascending when lower is worse.
    column = BY_KEY.get(sort or "")
    f["descending"] = bool(worst_first) == (column.higher_is_worse if column else True)
    return f


def query(ctx: AppContext, filters: dict[str, Any], page: int = 1) -> tuple[pd.DataFrame, list[str], str]:
    """One page of the table, every matching id (in order, for Inspect), and a status line."""
    store_filters = {k: v for k, v in filters.items() if k not in ("sort", "descending")}
    offset = (max(1, int(page or 1)) - 1) * PAGE_SIZE
    rows = ctx.store.browse_responses(store_filters, headline_keys(), sort=filters.get("sort"),
                                      descending=filters.get("descending", True), limit=PAGE_SIZE, offset=offset)
    ids = ctx.store.browse_response_ids(store_filters, headline_keys(), sort=filters.get("sort"),
                                        descending=filters.get("descending", True))
    present = [c for c in HEADLINE_COLUMNS if any(r.get(c.key) is not None for r in rows)]
    records = []
    for r in rows:
        rec = {"model": short_model_label(r["model"], r["synthetic"]), "response": r["text"], "domain": r["domain"],
               "task": r["task"]}
        rec.update({c.title: r[c.key] for c in present})
        rec.update({"annotated": r["annotated"], "judges differ": r["judges_differ"],
                    "human differs": r["human_differs"], "length": r["length"], "sample_id": r["sample_id"],
                    "benchmark": r["benchmark"], "id": r["id"]})
        records.append(rec)
    columns = ["model", "response", "domain", "task", *[c.title for c in present], "annotated", "judges differ",
               "human differs", "length", "sample_id", "benchmark", "id"]
    frame = pd.DataFrame(records, columns=columns)
    shown = f"{offset + 1}–{offset + len(rows)}" if rows else "none"
    status = f"{len(ids)} responses match; showing {shown} (page {offset // PAGE_SIZE + 1}). Click a row to inspect it."
    return frame, ids[:], status


def controls_from_filters(filters: dict[str, Any]) -> list[Any]:
    """The control values that reproduce a saved filter (the inverse of ``filters_from_controls``)."""
    ranges = filters.get("ranges") or {}
    column, (low, high) = next(iter(ranges.items()), (None, (None, None)))
    annotated = {True: "yes", False: "no"}.get(filters.get("annotated"), "any")
    sort = filters.get("sort")
    col = BY_KEY.get(sort or "")
    worst = bool(filters.get("descending", True)) == (col.higher_is_worse if col else True)
    return [filters.get("models") or [], filters.get("benchmarks") or [], filters.get("domains") or [],
            filters.get("tasks") or [], column, low, high, annotated, filters.get("disagreement") or "any",
            filters.get("text") or "", sort, worst]


def build(ctx: AppContext) -> BrowseTab:
    facets = ctx.store.browse_facets()
    metric_choices = [(c.title, c.key) for c in HEADLINE_COLUMNS]
    with gr.Row():
        models = gr.Dropdown(facets["models"], multiselect=True, label="model")
        benchmarks = gr.Dropdown(facets["benchmarks"], multiselect=True, label="benchmark")
        domains = gr.Dropdown(facets["domains"], multiselect=True, label="domain")
        tasks = gr.Dropdown(facets["tasks"], multiselect=True, label="task")
    with gr.Row():
        range_column = gr.Dropdown(metric_choices, value=None, label="metric range on")
        low = gr.Number(label="min", value=None)
        high = gr.Number(label="max", value=None)
        annotated = gr.Radio(["any", "yes", "no"], value="any", label="annotated")
        disagreement = gr.Radio([("any", "any"), ("between judges", "judges"), ("judge vs human", "judge_human")],
                                value="any", label="disagreement")
    with gr.Row():
        text = gr.Textbox(label="response contains", scale=2)
        sort = gr.Dropdown(metric_choices, value="emd.total", label="sort by")
        worst_first = gr.Checkbox(value=True, label="worst first")
        apply_btn = gr.Button("apply", variant="primary", elem_id="browse-apply")
    with gr.Row():
        view_name = gr.Textbox(label="save this view as", scale=2, elem_id="browse-view-name")
        save_btn = gr.Button("save view", elem_id="browse-save-view")
        saved_views = gr.Dropdown(ctx.store.list_views(), label="saved views", scale=2, elem_id="browse-saved-views")
        load_btn = gr.Button("load view", elem_id="browse-load-view")
    status = gr.Markdown(elem_id="browse-status")
    with gr.Row():
        page = gr.Number(value=1, precision=0, minimum=1, label=f"page ({PAGE_SIZE} rows each)", scale=1)
        page_btn = gr.Button("show page", size="sm", scale=1)
    table = gr.Dataframe(interactive=False, wrap=False, elem_id="browse-table", max_height=520)
    ids = gr.State([])
    filters = gr.State({})
    controls = [models, benchmarks, domains, tasks, range_column, low, high, annotated, disagreement, text, sort,
                worst_first]

    def apply(*values: Any) -> list[Any]:
        f = filters_from_controls(*values)
        frame, row_ids, message = query(ctx, f)
        return [frame, row_ids, f, message, 1]

    apply_btn.click(apply, controls, [table, ids, filters, status, page], api_name="browse")

    def show_page(f: dict[str, Any], number: float | None) -> list[Any]:
        frame, _, message = query(ctx, f or default_filters(), int(number or 1))
        return [frame, message]

    page_btn.click(show_page, [filters, page], [table, status], api_visibility="private")

    def save(name: str, f: dict[str, Any], request: gr.Request) -> list[Any]:
        try:
            name = check_view_name(name)
        except ValidationError as exc:
            # said in the status line, not raised: an error would cover the saved-views list until the next event
            return [gr.update(), f"not saved: {md(exc)}"]
        ctx.store.save_view(name, f or default_filters(),
                            getattr(request, "username", None) or "anonymous")
        return [gr.update(choices=ctx.store.list_views(), value=name), f"saved view **{md(name)}**"]

    save_btn.click(save, [view_name, filters], [saved_views, status], api_visibility="private")

    def load(name: str | None) -> list[Any]:
        saved = ctx.store.get_view(name) if name else None
        if saved is None:
            raise gr.Error(f"no saved view named {esc(repr(name))}")
        frame, row_ids, message = query(ctx, saved)
        return [*controls_from_filters(saved), frame, row_ids, saved, f"view **{md(name)}**: {message}", 1]

    load_btn.click(load, [saved_views], [*controls, table, ids, filters, status, page], api_visibility="private")
    return BrowseTab(table, ids, filters, controls, view_name, saved_views, status, page)


def default_filters() -> dict[str, Any]:
    """Everything, worst EMD first."""
    return filters_from_controls([], [], [], [], None, None, None, "any", "any", "", "emd.total", True)


def load_view_or_default(ctx: AppContext, name: str | None) -> list[Any]:
    """Initial Browse state for a page load: the ``?view=NAME`` view if given, else everything."""
    refused = None
    try:
        name = check_view_name(name) if name else None
    except ValidationError as exc:
        refused, name = exc, None  # a crafted link: say so, never look it up or echo it as it came
    saved = ctx.store.get_view(name) if name else None
    f = saved if saved is not None else default_filters()
    frame, row_ids, message = query(ctx, f)
    if refused is not None:
        message = f"the link's view name was refused ({md(refused)}); showing everything. " + message
    elif name and saved is None:
        message = f"no saved view named {md(repr(name))}; showing everything. " + message
    elif saved is not None:
        message = f"view **{md(name)}**: {message}"
    # Facet choices are re-read on every page load: runs added since the app started show up.
    facets = ctx.store.browse_facets()
    values = controls_from_filters(f)
    for i, key in enumerate(("models", "benchmarks", "domains", "tasks")):
        values[i] = gr.update(choices=facets[key], value=values[i])
    return [*values, frame, row_ids, f, message]
