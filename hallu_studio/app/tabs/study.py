"""Study: annotation studies (design, progress, agreement), metrics against human ratings, judge accuracy,
probe detection, A/B preferences with Bradley–Terry strengths, and export of everything."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path
from typing import Any

import gradio as gr

from ... import annotation
from ...model import APP_SOURCE
from ...annotation.design import StudyDesign
from ..context import AppContext
from ...presentation import short_model_label
from ..render.palette import esc, md
from ..scoring_jobs import submit_scoring
from ..toasts import Mistake, toast_mistakes
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


def run_choices(ctx: AppContext) -> list[tuple[str, str]]:
    return [(f"{short_model_label(r['model'], r.get('synthetic'))} · {r['benchmark']} · {r['id']}", r["id"])
            for r in ctx.store.list_runs()]


def task_choices(ctx: AppContext) -> list[str]:
    return sorted({t for b in ctx.store.benchmark_infos() for t in b.tasks})


def create_study(ctx: AppContext, author: str | None, name: str, runs: list[str] | None, images: float | None,
                 per_item: float | None, annotators: str, seed: float | None, benchmarks: list[str] | None,
                 tasks: list[str] | None, show_judgements: bool) -> str:
    """Draw a study's sample and record it; returns what was drawn (a refused design is a toast)."""
    design = StudyDesign(
        name=(name or "").strip(), runs=tuple(runs or ()), images=int(images or 0), ratings_per_item=int(per_item or 0),
        annotators=tuple(a.strip() for a in (annotators or "").split(",") if a.strip()), seed=int(seed or 0),
        benchmarks=tuple(benchmarks or ()), tasks=tuple(tasks or ()), show_judgements=bool(show_judgements))
    drawn = annotation.create_study(ctx.store, design, author)
    return (f"**study {md(design.name)}** ({md(design.mode)}) drawn with seed {int(design.seed)}: "
            f"{md(drawn.summary())}. "
            "Annotators find it in the Annotate view's study list.")


def _design_controls(ctx: AppContext) -> tuple[list[Any], Any, Any]:
    """The "design a new study" fold: its inputs (in ``create_study``'s order), its button and its result line."""
    with gr.Accordion("design a new study", open=False, elem_id="study-design"):
        gr.Markdown("A study rates the responses of the chosen models to the same images, drawn with "
                    "a seed from each benchmark × task in turn (one sample per image, only samples every "
                    "model answered). Each annotator's queue alternates the models. Ratings are blind "
                    "(no verdict, score or model name on screen) unless the study shows the judges. "
                    "A study is fixed once made; a changed design is a new study.")
        with gr.Row():
            name = gr.Textbox(label="study name", elem_id="study-new-name", scale=2)
            runs = gr.Dropdown(run_choices(ctx), multiselect=True, label="models (runs) compared",
                               elem_id="study-new-runs", scale=4)
        with gr.Row():
            images = gr.Number(value=20, precision=0, minimum=1, label="images", elem_id="study-new-images")
            per_item = gr.Number(value=2, precision=0, minimum=1, label="ratings per response",
                                 elem_id="study-new-per-item")
            seed = gr.Number(value=0, precision=0, label="seed", elem_id="study-new-seed")
            annotators = gr.Textbox(label="annotators (comma-separated; empty: anyone)",
                                    elem_id="study-new-annotators", scale=2)
        with gr.Row():
            benchmarks = gr.Dropdown(ctx.store.benchmark_names(), multiselect=True, label="benchmarks (empty: all)",
                                     elem_id="study-new-benchmarks")
            tasks = gr.Dropdown(task_choices(ctx), multiselect=True, label="tasks (empty: all)",
                                elem_id="study-new-tasks")
            show = gr.Checkbox(value=False, label="show the judges' verdicts while rating (unblinded)",
                               elem_id="study-new-show")
            create_btn = gr.Button("draw the sample and create the study", variant="primary",
                                   elem_id="study-new-create")
        created = gr.Markdown(elem_id="study-new-result")
    return [name, runs, images, per_item, annotators, seed, benchmarks, tasks, show], create_btn, created


def _wire_scoring(ctx: AppContext, button: Any, progress_html: Any, source: Any, which: Any, everything: list[Any],
                  recompute: Any) -> None:
    """The imported section's "score them" button: the Run view's scoring job on what the section says is not
    scored; its progress shows under the button, and every table recomputes when it ends."""
    watching = gr.State(0)
    timer = gr.Timer(2.0)

    @toast_mistakes(3)
    def on_score(src: str | None) -> list[Any]:
        if not src or src == APP_SOURCE:
            raise Mistake("pick an imported source above")
        job = submit_scoring(ctx, study_compute.not_scored_plan(ctx, src), f"{src}'s judged responses")
        # not twice: the button comes back (or goes) when the tables recompute after the job
        return [f'<p class="hs-note">queued job {int(job.id)}: {esc(job.title)}</p>', job.id,
                gr.update(interactive=False)]

    button.click(on_score, [source], [progress_html, watching, button], api_visibility="private")

    def follow(job_id: int, src: str | None, study_id: str | None) -> list[Any]:
        job = next((j for j in ctx.jobs.jobs() if j.id == job_id), None)
        if job is None:
            return [gr.skip()] * (2 + len(everything))
        line = f"job {int(job.id)}: <b>{esc(job.state_text())}</b> {esc(job.progress_text())}"
        if job.active:
            return [f'<p class="hs-note">{line}</p>', job_id] + [gr.skip()] * len(everything)
        return [f'<p class="hs-note">{line} — {esc(job.message)}</p>', 0, *recompute(src, study_id)]

    timer.tick(follow, [watching, source, which], [progress_html, watching, *everything], api_visibility="private",
               show_progress="hidden")


def build(ctx: AppContext, tab: gr.Tab | None = None) -> dict[str, Any]:
    """The Study view; with its ``tab``, the tables are computed as soon as the view is opened.

    Returns the components other views follow (the study list, after a study is created)."""
    with gr.Row():
        source = gr.Dropdown(study_compute.source_choices(ctx), value=APP_SOURCE, label="whose judgements",
                             elem_id="study-source", scale=2)
        which = gr.Dropdown(study_compute.study_choices(ctx), value="", label="which of this studio's ratings",
                            elem_id="study-which", scale=2)
        compute_btn = gr.Button("recompute", size="sm", scale=0, min_width=120, elem_id="study-compute")
    gr.Markdown("Computed when this view opens (bootstrap intervals resample images; synthetic probe runs are "
                "labelled [synthetic]). Every table names the direction of each number.", elem_id="study-intro")
    outputs: list[Any] = []
    for key, title in study_compute.SECTIONS:
        with gr.Accordion(title, open=True, visible=key != "imported", elem_id=f"study-{key}-section") as fold:
            if key == "imported":  # what is not scored yet, and the button that scores it, above the tables
                imported_fold, coverage = fold, gr.HTML(elem_id="study-coverage")
                score_btn = gr.Button("score", variant="primary", visible=False, elem_id="study-score")
                score_status = gr.HTML(elem_id="study-score-status")  # HTML: the tables recompute into it too
            outputs.append(gr.HTML(elem_id=f"study-{key}"))
            if key == "studies":
                inputs, create_btn, created = _design_controls(ctx)
    gr.Markdown("**each metric against the mean human rating**")
    # no label badge: it sat over the first panel's title
    scatter = gr.Plot(label="each metric against the mean human rating", show_label=False, format="png",
                      elem_id="study-scatter")
    with gr.Row():
        export_btn = gr.Button("export everything (zip of CSV)", elem_id="study-export", scale=0, min_width=260)
        export_file = gr.File(label="export", height=80, visible=False, elem_id="study-export-file")

    def recompute(src: str | None, study_id: str | None) -> list[Any]:
        return [*study_compute.compute(ctx, src, study_id),
                gr.update(choices=study_compute.source_choices(ctx)),
                gr.update(choices=study_compute.study_choices(ctx), interactive=(src or APP_SOURCE) == APP_SOURCE)]

    everything = [*outputs, scatter, imported_fold, coverage, score_btn, source, which]
    for trigger in (compute_btn.click, source.input, which.input):
        trigger(recompute, [source, which], everything, api_visibility="private")
    if tab is not None:
        tab.select(recompute, [source, which], everything, api_visibility="private")
    _wire_scoring(ctx, score_btn, score_status, source, which, everything, recompute)

    @toast_mistakes(3)
    def on_create(n: str, r: list[str], i: float, k: float, a: str, s: float, b: list[str], t: list[str],
                  sh: bool, request: gr.Request) -> list[Any]:
        message = create_study(ctx, getattr(request, "username", None), n, r, i, k, a, s, b, t, sh)
        return [message, study_compute.studies_html(ctx), gr.update(choices=study_compute.study_choices(ctx))]

    create_btn.click(on_create, inputs, [created, outputs[0], which], api_visibility="private")
    # the API's ``export`` returns the zip's path; the box shows only once there is a file in it
    export_btn.click(lambda: export_zip(ctx), None, [export_file], api_name="export").then(
        lambda: gr.update(visible=True), None, [export_file], api_visibility="private", show_progress="hidden")
    with gr.Accordion("the papers' analyses (frequent pairs, length, domain shift ...)", open=True):
        study_analyses.build(ctx)
    return {"created": create_btn}
