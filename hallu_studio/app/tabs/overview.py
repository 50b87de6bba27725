"""Overview: the leaderboard (models × metrics with CIs, per benchmark and per domain) and the papers' plots."""

from __future__ import annotations

from typing import Any

import gradio as gr
import matplotlib.pyplot as plt

from ..columns import all_keys
from ..context import AppContext
from ..overview_cache import score_fingerprint
from ..overview_data import pivot_leaderboard
from ..render import records_table_html
from ..render.palette import esc
from ..render.plots import edit_vs_length_figure, emd_by_domain_figure, halr_figure, object_relation_figure

_NOTE = ("Each metric's own aggregate per run with a 95% bootstrap interval resampled by image "
         "(\"(mean)\": a mean of per-response values, for scores stored without statistics). "
         "Runs marked [synthetic] are probe models, not real LVLMs.")


def leaderboard_html(ctx: AppContext, benchmark: str | None, by_domain: bool) -> str:
    """The pivoted leaderboard; a metric that cannot be aggregated is named below the table."""
    from ...studies.leaderboard import leaderboard

    try:
        board = leaderboard(ctx.store, benchmark, by_domain)
        problems: list[str] = []
    except (ValueError, TypeError, KeyError):
        # Metric by metric, so that one metric that cannot be aggregated does not blank the table.
        board, problems = [], []
        for metric in ctx.store.browse_facets()["metrics"]:
            if metric == "concepts":
                continue
            try:
                board += leaderboard(ctx.store, benchmark, by_domain, metrics=[metric])
            except (ValueError, TypeError, KeyError) as exc:
                problems.append(f"<li>{esc(metric)}: not aggregated ({esc(exc)})</li>")
    table = records_table_html(pivot_leaderboard(board, by_domain), empty="no scored responses yet")
    if problems:
        table += f'<ul class="hs-problems">{"".join(problems)}</ul>'
    return f'<div class="hs-scroll" style="overflow-x:auto;max-width:100%">{table}</div>'


def compute(ctx: AppContext, benchmark: str | None, by_domain: bool) -> list[Any]:
    filters = {"benchmarks": [benchmark]} if benchmark else {}
    rows = ctx.store.browse_responses(filters, all_keys(), limit=1_000_000)
    table = ctx.leaderboards.get((benchmark, by_domain), score_fingerprint(ctx.store),
                                 lambda: leaderboard_html(ctx, benchmark, by_domain))
    figures = [emd_by_domain_figure(rows), edit_vs_length_figure(rows), object_relation_figure(rows),
               halr_figure(rows)]
    out: list[Any] = [table, *figures]
    for fig in figures:
        plt.close(fig)  # gr.Plot has rendered what it needs; keep pyplot's registry empty
    return out


def build(ctx: AppContext) -> list[Any]:
    """Lays out the tab; returns ``(inputs, outputs, fn)`` pieces for the page-load refresh."""
    benchmarks = [b.name for b in ctx.store.benchmark_infos()]
    with gr.Row():
        benchmark = gr.Dropdown([("all benchmarks", "")] + [(b, b) for b in benchmarks], value="", label="benchmark")
        by_domain = gr.Checkbox(value=False, label="per image domain")
        refresh = gr.Button("refresh", size="sm")
    gr.Markdown(_NOTE)
    table = gr.HTML(elem_id="overview-leaderboard")
    with gr.Row():
        emd_plot = gr.Plot(label="EMD per domain (VISCON Fig. 4a)", format="png")
        edit_plot = gr.Plot(label="edit distance vs length (VISCON Fig. 5b)", format="png")
    with gr.Row():
        or_plot = gr.Plot(label="object vs relation hallucination (Tri-HE)", format="png")
        halr_plot = gr.Plot(label="Reefknot Halr by task and category", format="png")
    outputs = [table, emd_plot, edit_plot, or_plot, halr_plot]
    inputs = [benchmark, by_domain]
    fn = lambda b, d: compute(ctx, b or None, bool(d))  # noqa: E731
    for trigger in (refresh.click, benchmark.change, by_domain.change):
        trigger(fn, inputs, outputs, api_visibility="private")
    return [inputs, outputs, fn]
