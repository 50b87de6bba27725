"""Study: metrics against human ratings, annotator agreement, judge accuracy, probe detection,
A/B preferences with Bradley–Terry strengths, and export of everything."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path
from typing import Any

import gradio as gr

from ..context import AppContext
from . import annotate, study_analyses, study_compute


def export_zip(ctx: AppContext) -> str:
    """Every export table as CSV in one zip file (the store's own writer)."""
    out_dir = Path(tempfile.mkdtemp(prefix="hallu-studio-export-"))
    archive = out_dir / "hallu-studio-export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for table in ctx.store.EXPORT_QUERIES:
            path = out_dir / f"{table}.csv"
            ctx.store.export_copy(table, str(path), "csv")
            zf.write(path, path.name)
        # each annotator's rating in force per item, beside the raw event log (judgments.csv)
        resolved = annotate.export_ratings(ctx)[0]
        zf.write(resolved, Path(resolved).name)
        for name, html_table in study_compute.all_tables_html(ctx).items():
            zf.writestr(f"study_{name}.html", html_table)
    return str(archive)


def build(ctx: AppContext, tab: gr.Tab | None = None) -> None:
    """The Study view; with its ``tab``, the tables are computed as soon as the view is opened."""
    with gr.Row():
        gr.Markdown("The studies are computed when this view opens (bootstrap intervals resample images; "
                    "synthetic probe runs are labelled [synthetic]).", elem_id="study-intro")
        compute_btn = gr.Button("recompute", size="sm", scale=0, min_width=120, elem_id="study-compute")
    outputs: list[Any] = []
    for key, title in study_compute.SECTIONS:
        with gr.Accordion(title, open=True):
            outputs.append(gr.HTML(elem_id=f"study-{key}"))
    gr.Markdown("**each metric against the mean human rating**")
    # no label badge: it sat over the first panel's title
    scatter = gr.Plot(label="each metric against the mean human rating", show_label=False, format="png",
                      elem_id="study-scatter")
    with gr.Row():
        export_btn = gr.Button("export everything (zip of CSV)", elem_id="study-export")
        export_file = gr.File(label="export", height=80)
    compute_btn.click(lambda: study_compute.compute(ctx), None, [*outputs, scatter], api_visibility="private")
    if tab is not None:
        tab.select(lambda: study_compute.compute(ctx), None, [*outputs, scatter], api_visibility="private")
    export_btn.click(lambda: export_zip(ctx), None, [export_file], api_name="export")
    with gr.Accordion("the papers' analyses (frequent pairs, length, domain shift ...)", open=True):
        study_analyses.build(ctx)
