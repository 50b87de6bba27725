"""The Study view's analyses panel: pick one of the papers' analyses, run it, see its table and plot.

Thin: the analysis is ``hallu_studio.studies.analyses.run_analysis``; this module only
lays out the inputs and renders the result (escaped HTML, the matplotlib figure).
"""

from __future__ import annotations

import html
from typing import Any

import gradio as gr

from ...studies.analyses import ANALYSES, AnalysisResult, analysis_title, run_analysis
from ..context import AppContext
from ..render import records_table_html


def analysis_choices() -> list[tuple[str, str]]:
    """(label, name) for the dropdown, in the registry's order."""
    return [(f"{name}: {analysis_title(name)}", name) for name in ANALYSES]


def result_html(result: AnalysisResult) -> str:
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.notes)
    return (f"<h4>{html.escape(result.title)}</h4>"
            + records_table_html(result.rows, result.columns, empty="no rows: see the notes")
            + (f'<ul class="hs-notes">{notes}</ul>' if notes else ""))


def compute(ctx: AppContext, name: str, benchmark: str | None, runs_text: str, limit: float | None) -> list[Any]:
    """The panel's HTML and figure; a refused input (unknown run, too few runs) is shown, not raised."""
    options: dict[str, Any] = {}
    if benchmark:
        options["benchmark"] = benchmark
    runs = [r.strip() for r in (runs_text or "").split(",") if r.strip()]
    if runs:
        options["runs"] = runs
    if limit:
        options["limit"] = int(limit)
    try:
        result = run_analysis(ctx.store, name, ctx.settings, **options)
    except (ValueError, NotImplementedError) as exc:
        return [f'<p class="hs-error">{html.escape(str(exc))}</p>', None]
    return [result_html(result), result.figure]


def build(ctx: AppContext) -> None:
    with gr.Column(elem_id="study-analyses"):
        _panel(ctx)


def _panel(ctx: AppContext) -> None:
    gr.Markdown("The papers' analyses, on any benchmark and runs in the store (the length analysis derives and "
                "scores truncated runs; vocabulary and extractor analyses re-score in memory).")
    with gr.Row():
        choice = gr.Dropdown(analysis_choices(), value=next(iter(ANALYSES)), label="analysis",
                             elem_id="study-analysis-name")
        benchmark = gr.Dropdown([""] + ctx.store.browse_facets()["benchmarks"], value="", label="benchmark",
                                allow_custom_value=True, elem_id="study-analysis-benchmark")
        runs = gr.Textbox(label="run ids (comma-separated; empty: all)", elem_id="study-analysis-runs")
        limit = gr.Number(value=100, precision=0, label="responses per run (in-memory re-scoring)")
    run_btn = gr.Button("run analysis", elem_id="study-analysis-run")
    table = gr.HTML(elem_id="study-analysis-table")
    plot = gr.Plot(label="analysis plot", format="png", elem_id="study-analysis-plot")
    run_btn.click(lambda n, b, r, k: compute(ctx, n, b, r, k), [choice, benchmark, runs, limit], [table, plot],
                  api_visibility="private")
