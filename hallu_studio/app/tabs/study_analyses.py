"""The Study view's analyses panel: pick one of the papers' analyses, run it, see its table and plot.

Thin: the analysis is ``hallu_studio.studies.analyses.run_analysis``; this module only
lays out the inputs and renders the result (escaped HTML, the matplotlib figure).
"""

from __future__ import annotations

import html
import textwrap
from typing import Any

import gradio as gr
from matplotlib.figure import Figure

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


LONG_TICK = 24  # characters; run labels ("probe rate=0.4 mix=... seed=0 [synthetic]") run to ~70
X_WRAP, Y_WRAP = 20, 40  # characters per line of a wrapped category label under / beside the axes
INCHES_PER_CHAR = 0.07  # a character of a "small" (8 pt) tick label, with a little air between labels
LINE_INCHES = 0.2  # height of one line of a "small" y tick label, with spacing
MAX_WIDTH = 14.0  # inches: the widest figure the panel still shows whole


def readable_figure(fig: Figure) -> Figure:
    """Wrap long category tick labels onto lines, put long legends beside the axes, widen to fit.

    The analyses label bars and rows by the run's display name; rotated at full length those
    took most of the figure and left the plot a sliver. Numeric ticks are short and left alone.
    """
    fig.canvas.draw()  # tick label texts are only final once drawn
    need_x: dict[Any, float] = {}  # axes -> inches its wrapped x labels need side by side
    need_y: dict[Any, float] = {}
    for ax in fig.axes:
        for axis, wrap in ((ax.xaxis, X_WRAP), (ax.yaxis, Y_WRAP)):
            labels = [t.get_text() for t in axis.get_ticklabels()]
            if not any(len(t) > LONG_TICK for t in labels):
                continue
            # break at spaces only: a run name's "mix=object+attribute+..." stays one readable word
            wrapped = [textwrap.fill(t, wrap, break_long_words=False) for t in labels]
            axis.set_ticks(axis.get_ticklocs())
            axis.set_ticklabels(wrapped, rotation=0, fontsize="small",
                                **({"ha": "center"} if axis is ax.xaxis else {"va": "center"}))
            if axis is ax.xaxis:
                need_x[ax] = sum(max(map(len, w.split("\n"))) for w in wrapped) * INCHES_PER_CHAR
            else:
                need_y[ax] = sum(w.count("\n") + 1 for w in wrapped) * LINE_INCHES
    legend_inches = sum(_legend_beside(ax) for ax in fig.axes)
    if need_x or need_y or legend_inches:
        fig.tight_layout()  # measure the axes as laid out with the wrapped labels
        width, height = fig.get_size_inches()
        grow_x = max([1.0 + legend_inches / width]
                     + [n / (ax.get_position().width * width) for ax, n in need_x.items()])
        grow_y = max([1.0] + [n / (ax.get_position().height * height) for ax, n in need_y.items()])
        grow_y = max(grow_y, min(grow_x, 1.3))  # keep wider figures from turning into strips
        fig.set_size_inches(min(width * grow_x, MAX_WIDTH), min(height * grow_y, 2.5 * height))
    fig.tight_layout()
    return fig


def _legend_beside(ax: Any) -> float:
    """Move a legend of long run names beside the axes (it covered the bars); returns the inches it takes."""
    legend = ax.get_legend()
    if legend is None:
        return 0.0
    texts = [t.get_text() for t in legend.get_texts()]
    if not any(len(t) > LONG_TICK for t in texts):
        return 0.0
    handles = legend.legend_handles
    wrapped = [textwrap.fill(t, Y_WRAP, break_long_words=False) for t in texts]
    ax.legend(handles, wrapped, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="x-small", frameon=False)
    return max(len(line) for w in wrapped for line in w.split("\n")) * INCHES_PER_CHAR * 0.85 + 0.4


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
    return [result_html(result), readable_figure(result.figure)]


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
    # no label badge: it sat over the first subplot's title
    plot = gr.Plot(label="analysis plot", show_label=False, format="png", elem_id="study-analysis-plot")
    run_btn.click(lambda n, b, r, k: compute(ctx, n, b, r, k), [choice, benchmark, runs, limit], [table, plot],
                  api_visibility="private")
