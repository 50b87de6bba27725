"""Browse: a filtered, sortable table of responses with metric columns, and saved named views."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import gradio as gr
import pandas as pd

from ...metrics.registry import metric_names, not_applicable_reason
from ...model import ValidationError
from ...studies.people_judges import DISAGREE_RULE, disagreeing_responses, responses_beside
from ..render.people import people_cell
from ..columns import MetricColumn, column_of, default_sort, headline_columns, headline_keys, metric_of
from ..context import AppContext
from ...presentation import UNDEFINED, number, run_names, short_model_label
from ..render.palette import esc, md
from ..toasts import Mistake, toast_mistakes
from ..view_names import check_view_name

PAGE_SIZE = 200
# The table's fixed columns: "model" and "response" lead, then what the view is filtered and sorted on
# (``column_order``), then the other metric columns (those with a value on the page), then these.
PEOPLE = "people vs judges"
LEADING = ["model", "response"]
TRAILING = [PEOPLE, "domain", "task", "annotated", "judges differ", "human differs", "length", "sample_id",
            "benchmark", "id"]
# The "differs" filter's choices: the store's two per-response flags, and people against the judges' calls.
PEOPLE_JUDGES = "people_judges"
DIFFERS = [("any", "any"), ("judges differ", "judges"), ("human differs", "judge_human"),
           ("people and judges disagree", PEOPLE_JUDGES)]
_RULE_HTML = f'<p class="hs-rule" style="font-size:0.85em;color:#555;margin:0">{esc(DISAGREE_RULE)}.</p>'
_FLAG_COLUMN = {"judges": "judges differ", "judge_human": "human differs", PEOPLE_JUDGES: PEOPLE}
_FACET_COLUMN = {"models": "model", "benchmarks": "benchmark", "domains": "domain", "tasks": "task"}


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


def ranges_from_bounds(bounds: Sequence[float | None]) -> dict[str, list[float | None]]:
    """``{column: [low, high]}`` from the (min, max) pair of each headline column, in order; empty pairs dropped.

    >>> ranges_from_bounds([10, None] + [None, None] * 2 + [None, 0.5] + [None, None] * 2)
    {'trihe.hallucinated': [10.0, None], 'halfscore.f': [None, 0.5]}
    """
    ranges = {}
    for column, low, high in zip(headline_columns(), bounds[0::2], bounds[1::2]):
        if low is not None or high is not None:
            ranges[column.key] = [None if low is None else float(low), None if high is None else float(high)]
    return ranges


def filters_from_controls(models: list[str] | None, benchmarks: list[str] | None, domains: list[str] | None,
                          tasks: list[str] | None, ranges: dict[str, Sequence[float | None]] | None,
                          annotated: str, disagreement: str, text: str, sort: str | None,
                          worst_first: bool) -> dict[str, Any]:
    """The store's filter dict (plus the sort) from the Browse controls; ``ranges`` may name several metrics.

    >>> filters_from_controls(["m"], [], None, None, {"emd.total": [10, None], "halfscore.f": [None, 0.5]},
    ...                       "no", "any", "", "emd.total", True)["ranges"]
    {'emd.total': [10.0, None], 'halfscore.f': [None, 0.5]}
    """
    f: dict[str, Any] = {"models": list(models or []), "benchmarks": list(benchmarks or []),
                         "domains": list(domains or []), "tasks": list(tasks or []),
                         "annotated": {"yes": True, "no": False}.get(annotated),
                         "disagreement": None if disagreement in (None, "", "any") else disagreement,
                         "text": (text or "").strip() or None, "ranges": {}}
    for column, (low, high) in (ranges or {}).items():
        if low is not None and high is not None and float(low) > float(high):
            title = column_of(column).title if column_of(column) else column
            raise Mistake(f"{title}: the minimum {low} is above the maximum {high}")
        if low is not None or high is not None:
            f["ranges"][column] = [None if low is None else float(low), None if high is None else float(high)]
    f["sort"] = sort or None
    # "Worst first" means descending when higher is worse, ascending when lower is worse.
    column = column_of(sort or "")
    f["descending"] = bool(worst_first) == (column.higher_is_worse if column else True)
    return f


def filters_from_ui(values: Sequence[Any]) -> dict[str, Any]:
    """The filter from the controls' values in ``BrowseTab.controls`` order (the range bounds flattened)."""
    n = 2 * len(headline_columns())
    models, benchmarks, domains, tasks = values[:4]
    bounds, rest = values[4:4 + n], values[4 + n:]
    return filters_from_controls(models, benchmarks, domains, tasks, ranges_from_bounds(bounds), *rest)


def missing_reason(column: str, sample: Any, gaps: dict[str, Any]) -> tuple[str, str]:
    """(short text, hover) for an empty metric cell: not applicable, undefined, failed, or not scored yet."""
    metric = metric_of(column)
    if metric in metric_names() and sample is not None:
        reason = not_applicable_reason(metric, sample)
        if reason is not None:
            return "n/a", f"not applicable to this task: {reason}"
    if metric in gaps.get("undefined", {}):
        return UNDEFINED, f"undefined: {gaps['undefined'][metric] or 'the metric gives no value here'}"
    failed = gaps.get("failed", {})
    for stage in (f"score:{metric}", "score:concepts", "score"):
        if stage in failed:
            return "failed", f"failed: {failed[stage]}"
    return "not yet", "not scored yet (score it from the Run view or `hallu-studio score`)"


def store_filters(ctx: AppContext, filters: dict[str, Any]) -> dict[str, Any]:
    """The store's filter from Browse's (Inspect steps through the same): "people and judges disagree" is a test
    the store cannot run (``studies.people_judges.DISAGREE_RULE``), so it becomes the response ids it keeps."""
    out = {k: v for k, v in filters.items() if k not in ("sort", "descending")}
    if out.get("disagreement") == PEOPLE_JUDGES:
        out["disagreement"] = None
        out["ids"] = sorted(disagreeing_responses(ctx.store, ctx.in_force()))
    return out


def column_order(filters: dict[str, Any], present: Sequence[MetricColumn], people: bool = True) -> list[str]:
    """The table's columns, those the view is sorted and filtered on right after the model and the response, so
    that they are on screen at 1,400 px; the other metric columns next, in the registry's order, then the rest
    (``people``: the "people vs judges" column, where people judged any response).

    >>> cols = headline_columns()
    >>> column_order({"sort": cols[2].key, "ranges": {cols[1].key: [0, None]}, "disagreement": "judge_human",
    ...               "tasks": ["caption"]}, cols[:3])[:6] == ["model", "response", cols[2].title, cols[1].title,
    ...                                                     "human differs", "task"]
    True
    """
    by_key = {c.key: c.title for c in present}
    focus = [by_key[k] for k in [filters.get("sort"), *(filters.get("ranges") or {})] if k in by_key]
    if filters.get("disagreement") in _FLAG_COLUMN:
        focus.append(_FLAG_COLUMN[filters["disagreement"]])
    if filters.get("annotated") is not None:
        focus.append("annotated")
    focus += [column for key, column in _FACET_COLUMN.items() if filters.get(key)]
    trailing = [c for c in TRAILING if people or c != PEOPLE]
    rest = [c.title for c in present] + trailing
    return list(dict.fromkeys([*LEADING, *focus, *(c for c in rest if c in focus or c not in LEADING)]))


def _number_cell(value: float) -> str:
    # the rounded number, the exact one on hover
    return f'<span class="hs-num" title="{esc(repr(value))}">{esc(number(value))}</span>'


def _missing_cell(text: str, why: str) -> str:
    return f'<span class="hs-missing" title="{esc(why)}">{esc(text)}</span>'


def query(ctx: AppContext, filters: dict[str, Any], page: int = 1) -> tuple[pd.DataFrame, list[str], str]:
    """One page of the table, every matching id (in order, for Inspect), and a status line."""
    kept = store_filters(ctx, filters)
    offset = (max(1, int(page or 1)) - 1) * PAGE_SIZE
    in_force = ctx.in_force()
    configs = in_force.keys()
    rows = ctx.store.browse_responses(kept, headline_keys(), sort=filters.get("sort"), configs=configs,
                                      descending=filters.get("descending", True), limit=PAGE_SIZE, offset=offset)
    ids = ctx.store.browse_response_ids(kept, headline_keys(), sort=filters.get("sort"), configs=configs,
                                        descending=filters.get("descending", True))
    people = responses_beside(ctx.store, in_force)
    # a metric the store holds scores of gets its column, so its empty cells can say why they are empty
    scored = set(ctx.store.browse_facets()["metrics"])
    present = [c for c in headline_columns() if metric_of(c.key) in scored or any(r.get(c.key) is not None for r in rows)]
    gaps = ctx.store.score_gaps([r["id"] for r in rows if any(r.get(c.key) is None for c in present)], configs)
    samples = ctx.store.get_samples(sorted({r["sample_id"] for r in rows if r["id"] in gaps}))
    records = []
    names = run_names(ctx.store.run_manifests())
    for r in rows:
        rec = {"model": short_model_label(r["model"], r["synthetic"], name=names.get(r["run_id"])),
               "response": r["text"], "domain": r["domain"], "task": r["task"], PEOPLE: people_cell(people.get(r["id"]))}
        for c in present:
            value = r[c.key]
            rec[c.title] = (_number_cell(value) if value is not None else
                            _missing_cell(*missing_reason(c.key, samples.get(r["sample_id"]), gaps.get(r["id"], {}))))
        rec.update({"annotated": r["annotated"], "judges differ": r["judges_differ"],
                    "human differs": r["human_differs"], "length": r["length"], "sample_id": r["sample_id"],
                    "benchmark": r["benchmark"], "id": r["id"]})
        records.append(rec)
    frame = pd.DataFrame(records, columns=column_order(filters, present, people=bool(people)))
    shown = f"{offset + 1}–{offset + len(rows)}" if rows else "none"
    order = column_of(filters["sort"]).title if column_of(filters.get("sort") or "") else "store order"
    notes = in_force.notes({c.spec.name for c in present})
    shown_under = f" Shown under other configurations than the current settings': {md('; '.join(notes))}." \
        if notes else ""
    focus = "; people and judges disagree on each (see the rule above)" \
        if filters.get("disagreement") == PEOPLE_JUDGES else ""
    status = (f"{len(ids)} responses match{focus}; showing {shown} (page {offset // PAGE_SIZE + 1}), "
              f"sorted by {order}. Hover an empty cell for why it is empty; click a row to inspect it.{shown_under}")
    return frame, ids[:], status


def table_update(frame: pd.DataFrame) -> Any:
    """The Dataframe value with the metric columns rendered as HTML (rounded number, reason on hover)."""
    html_columns = set(frame.columns) - set(LEADING) - set(TRAILING) | {PEOPLE}
    widths = {"model": "150px", "response": "300px", "domain": "90px", "task": "80px", PEOPLE: "280px"}
    return gr.Dataframe(value=frame, datatype=["html" if c in html_columns else "str" for c in frame.columns],
                        column_widths=[widths.get(c, f"{max(100, 9 * len(str(c)) + 40)}px") for c in frame.columns])


def controls_from_filters(filters: dict[str, Any]) -> list[Any]:
    """The control values that reproduce a saved filter (the inverse of ``filters_from_ui``)."""
    ranges = filters.get("ranges") or {}
    bounds: list[Any] = []
    for column in headline_columns():
        low, high = ranges.get(column.key) or (None, None)
        bounds += [low, high]
    annotated = {True: "yes", False: "no"}.get(filters.get("annotated"), "any")
    sort = filters.get("sort")
    col = column_of(sort or "")
    worst = bool(filters.get("descending", True)) == (col.higher_is_worse if col else True)
    return [filters.get("models") or [], filters.get("benchmarks") or [], filters.get("domains") or [],
            filters.get("tasks") or [], *bounds, annotated, filters.get("disagreement") or "any",
            filters.get("text") or "", sort, worst]


def build(ctx: AppContext) -> BrowseTab:
    facets = ctx.store.browse_facets()
    metric_choices = [(c.title, c.key) for c in headline_columns()]
    with gr.Row():
        models = gr.Dropdown(facets["models"], multiselect=True, label="model")
        benchmarks = gr.Dropdown(facets["benchmarks"], multiselect=True, label="benchmark")
        domains = gr.Dropdown(facets["domains"], multiselect=True, label="domain")
        tasks = gr.Dropdown(facets["tasks"], multiselect=True, label="task")
    bounds: list[gr.Number] = []
    with gr.Accordion("metric ranges (set any number at once; empty: no limit)", open=False,
                      elem_id="browse-ranges"):
        with gr.Row():
            for c in headline_columns():
                with gr.Column(min_width=150):
                    slug = c.key.replace(".", "-")
                    bounds.append(gr.Number(label=f"{c.title} min", value=None, elem_id=f"browse-min-{slug}"))
                    bounds.append(gr.Number(label=f"{c.title} max", value=None, elem_id=f"browse-max-{slug}"))
    with gr.Row():
        annotated = gr.Radio(["any", "yes", "no"], value="any", label="annotated")
        # The two per-response flags of the table's columns (not Annotate's per-triplet disagreement queue).
        disagreement = gr.Radio(DIFFERS, value="any", label="differs", scale=2, elem_id="browse-differs")
        text = gr.Textbox(label="response contains", scale=2)
    gr.HTML(_RULE_HTML, elem_id="browse-people-rule")
    with gr.Row():
        sort = gr.Dropdown(metric_choices, value=default_sort(), label="sort by", elem_id="browse-sort")
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
    controls = [models, benchmarks, domains, tasks, *bounds, annotated, disagreement, text, sort, worst_first]

    @toast_mistakes(5)
    def apply(*values: Any) -> list[Any]:
        f = filters_from_ui(values)
        frame, row_ids, message = query(ctx, f)
        return [table_update(frame), row_ids, f, message, 1]

    apply_btn.click(apply, controls, [table, ids, filters, status, page], api_name="browse")

    @toast_mistakes(2)
    def show_page(f: dict[str, Any], number: float | None) -> list[Any]:
        frame, _, message = query(ctx, f or default_filters(), int(number or 1))
        return [table_update(frame), message]

    page_btn.click(show_page, [filters, page], [table, status], api_visibility="private")

    @toast_mistakes(2)
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

    @toast_mistakes(len(controls) + 5)
    def load(name: str | None) -> list[Any]:
        saved = ctx.store.get_view(name) if name else None
        if saved is None:
            raise Mistake(f"no saved view named {name!r}")
        frame, row_ids, message = query(ctx, saved)
        return [*controls_from_filters(saved), table_update(frame), row_ids, saved,
                f"view **{md(name)}**: {message}", 1]

    load_btn.click(load, [saved_views], [*controls, table, ids, filters, status, page], api_visibility="private")
    return BrowseTab(table, ids, filters, controls, view_name, saved_views, status, page)


def default_filters() -> dict[str, Any]:
    """Everything, the most hallucinated claims first."""
    return filters_from_controls([], [], [], [], {}, "any", "any", "", default_sort(), True)


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
    return [*values, table_update(frame), row_ids, f, message]
