"""Run: choose a benchmark subset, models, prompt, generation preset and mitigation; start, watch, cancel; and score
stored runs (imported responses included) with the metrics chosen, watching the plan fill in as scores land.

Jobs go through the process's one ``JobQueue``: a second run waits until the first ends.
"""

from __future__ import annotations

import threading
from typing import Any

import gradio as gr

from ...model import TASKS
from ..context import AppContext
from ..import_panel import build_import
from ..jobs import COMPLETED, CANCELLED, SCORING, JobResult, Progress
from ..render import records_table_html
from ..render.palette import md
from ..scoring_jobs import metric_choices, plan_for_runs, plan_table_html, run_labels, submit_scoring
from ..toasts import Mistake, toast_mistakes

DEFAULT_MODELS = ["probe:rate=0.0", "probe:rate=0.3"]


def submit_runs(ctx: AppContext, benchmark: str, tasks: list[str], limit: float | None, models: str, prompt: str,
                preset: str, mitigation: str, metrics: list[str]) -> str:
    """Queue one job per model spec (one line each); returns a status line."""
    from ...backends import make_backend
    from ...pipelines.running import RunOptions, execute_run
    from ...pipelines.scoring import score_store

    specs = [m.strip() for m in (models or "").splitlines() if m.strip()]
    if not benchmark:
        raise Mistake("choose a benchmark")
    if not specs:
        raise Mistake("name at least one model spec (e.g. probe:rate=0.3, transformers:<hub id>)")
    options = RunOptions(benchmark=benchmark, prompt=(prompt or "").strip() or None, generation=preset,
                         mitigation=mitigation, tasks=list(tasks or []) or None,
                         limit=int(limit) if limit else None)
    for spec in specs:
        def job(cancel: threading.Event, progress: Progress, spec: str = spec) -> JobResult:
            summary = execute_run(ctx.store, make_backend(spec), options, cancel=cancel, progress=False,
                                  on_progress=progress)
            if summary.status == "cancelled":
                return JobResult(CANCELLED, summary.line())
            # From here the run is complete: a cancel only stops its scoring, and says so.
            if not metrics:
                return JobResult(COMPLETED, summary.line())
            if cancel.is_set():
                return JobResult(COMPLETED, summary.line() + "; scoring skipped (cancelled)")
            progress(0, summary.total, SCORING)
            report = score_store(ctx.store, ctx.settings, list(metrics), run_id=summary.run_id, progress=False,
                                 cancel=cancel, on_progress=lambda done, total: progress(done, total, SCORING),
                                 components=ctx.components)
            return JobResult(COMPLETED, summary.line() + "; " + report.summary())
        ctx.jobs.submit(f"{spec} on {benchmark}", job)
    return (f"queued {len(specs)} run{'s' if len(specs) != 1 else ''}; the jobs run one after another, never two "
            "at once")


def benchmark_metrics(ctx: AppContext, benchmark: str | None) -> list[str]:
    """The metrics whose specs apply to some sample of ``benchmark`` (what a new run is scored with unless told
    otherwise; none for an unknown benchmark)."""
    from ...metrics.registry import METRIC_NAMES
    from ...studies.ranking import applicability

    if not benchmark or benchmark not in ctx.store.benchmark_names():
        return []
    _, none_of = applicability(ctx.store, benchmark)
    return [m for m in METRIC_NAMES if m not in none_of]


def jobs_table(ctx: AppContext) -> str:
    rows = [{"job": j.id, "what": j.title, "state": j.state_text(), "progress": j.progress_text(),
             "message": j.message} for j in reversed(ctx.jobs.jobs())]
    return records_table_html(rows, empty="no jobs yet")


def runs_table(ctx: AppContext) -> str:
    return records_table_html(
        [{k: r[k] for k in ("model", "benchmark", "status", "responses", "failures", "synthetic", "mitigation", "id")}
         for r in ctx.store.list_runs()], empty="no runs in the store")


def cancellable(ctx: AppContext) -> list[list[Any]]:
    """``[id, title, state]`` of each job that can still be cancelled (what the cancel buttons follow)."""
    return [[j.id, j.title, j.state_text()] for j in ctx.jobs.jobs() if j.active]


def build(ctx: AppContext) -> None:
    from ...backends.mitigation import MITIGATIONS
    from ...metrics.registry import METRIC_NAMES
    from ...prompts import GENERATION_PRESETS, PROMPTS

    names = [b.name for b in ctx.store.benchmark_infos()]
    gr.Markdown("**Run models** on a benchmark (then score their responses)")
    with gr.Row():
        benchmark = gr.Dropdown(names, value=names[0] if names else None, label="benchmark",
                                elem_id="run-benchmark")
        tasks = gr.Dropdown(list(TASKS), multiselect=True, label="tasks (all when empty)")
        limit = gr.Number(value=0, precision=0, minimum=0, label="first N samples (0: all)")
    models = gr.Textbox("\n".join(DEFAULT_MODELS), lines=3, label="model specs, one per line "
                        "(probe:rate=…, transformers:<hub id>, openai:<model>@<url>, or a preset name)")
    with gr.Row():
        prompt = gr.Dropdown([""] + sorted(PROMPTS), value="", allow_custom_value=True,
                             label="prompt (name or text; empty: per-task default)")
        preset = gr.Dropdown(sorted(GENERATION_PRESETS), value="greedy", label="generation preset")
        mitigation = gr.Dropdown(list(MITIGATIONS), value="none", label="mitigation")
        metrics = gr.Dropdown(list(METRIC_NAMES), value=benchmark_metrics(ctx, names[0] if names else None),
                              multiselect=True, label="score with (after the run; default: every metric that "
                                                      "applies to the benchmark)")
    start = gr.Button("start", variant="primary", elem_id="run-start")
    status = gr.Markdown(elem_id="run-status")
    imported = build_import(ctx)
    runs_to_score = build_scoring(ctx)
    # a run just imported is offered for scoring at once
    imported.then(lambda: gr.update(choices=[(label, rid) for rid, label in run_labels(ctx).items()]), None,
                  [runs_to_score], api_visibility="private")
    gr.Markdown("**Jobs** — queued → running → scoring → completed (or cancelled / failed); one job runs at a "
                "time, the others wait in the queue")
    active = gr.State([])

    @gr.render(inputs=[active])
    def cancel_buttons(jobs: list[list[Any]]) -> None:
        for job_id, title, state in jobs:
            with gr.Row(elem_classes=["hs-job-row"]):
                gr.Markdown(f"job {int(job_id)} · {md(title)} · **{md(state)}**")
                button = gr.Button(f"cancel job {int(job_id)}", size="sm", variant="stop", min_width=120,
                                   elem_id=f"run-cancel-{int(job_id)}", scale=0)

                def on_cancel(job_id: int = int(job_id)) -> list[Any]:
                    asked = ctx.jobs.cancel(job_id)
                    line = f"job {int(job_id)}: " + ("cancel asked; it stops at the next batch" if asked
                                                 else "already ended")
                    return [line, jobs_table(ctx), cancellable(ctx)]

                button.click(on_cancel, None, [status, table, active], api_visibility="private")

    table = gr.HTML(elem_id="run-jobs")
    gr.Markdown("**Runs in the store**")
    runs = gr.HTML(elem_id="run-runs")
    timer = gr.Timer(2.0)
    # on page load (not a callable value: Gradio makes that a public, unnamed API endpoint)
    gr.on(None, lambda: (jobs_table(ctx), runs_table(ctx), cancellable(ctx)), None, [table, runs, active],
          api_visibility="private")

    @toast_mistakes(4)
    def on_start(*values: Any) -> list[Any]:
        return [submit_runs(ctx, *values), jobs_table(ctx), cancellable(ctx), runs_table(ctx)]

    start.click(on_start, [benchmark, tasks, limit, models, prompt, preset, mitigation, metrics],
                [status, table, active, runs], api_visibility="private")
    benchmark.input(lambda b: benchmark_metrics(ctx, b), [benchmark], [metrics], api_visibility="private")

    def poll(shown: list[list[Any]]) -> list[Any]:
        now = cancellable(ctx)
        # the buttons re-render only when the set of cancellable jobs or their states change
        return [jobs_table(ctx), now if now != shown else gr.skip(), runs_table(ctx)]

    timer.tick(poll, [active], [table, active, runs], api_visibility="private", show_progress="hidden")


def scoring_status(ctx: AppContext, run_ids: list[str] | None, metrics: list[str] | None) -> list[Any]:
    """The metric chooser (labels saying which metrics do not apply) and the plan table of the chosen runs."""
    if not run_ids:
        return [gr.update(), "<p class='hs-note'>choose one or more runs above: the table says what each metric "
                             "would score</p>"]
    plan = plan_for_runs(ctx, run_ids)
    return [gr.update(choices=metric_choices(plan)), plan_table_html(plan, metrics, run_labels(ctx, counts=False))]


def follow_scoring(ctx: AppContext, job_id: int, run_ids: list[str] | None, metrics: list[str] | None) -> list[Any]:
    """The followed scoring job's line, the plan of the runs chosen, and the job still followed (0 once it ended).

    The plan fills in while the job scores, and once more when it ends; then the timer stops following it. The
    job's line does not hang on the runs box: emptied after the start, it still says how the job went."""
    job = next((j for j in ctx.jobs.jobs() if j.id == job_id), None)
    if job is None:
        return [gr.skip(), gr.skip(), gr.skip()]
    line = f"job {int(job.id)}: **{md(job.state_text())}** {md(job.progress_text())}"
    if not job.active:
        line += f" — {md(job.message)}"
    plan = scoring_status(ctx, run_ids, metrics)[1] if run_ids else gr.skip()
    return [line, plan, job_id if job.active else 0]


def build_scoring(ctx: AppContext) -> Any:
    """Score stored runs: choose runs (imported ones too) and metrics, see what is left, start, follow the plan;
    returns the runs' dropdown (what an import refreshes)."""
    gr.Markdown("**Score stored runs** — any run in the store, imported responses included (a human study's, a "
                "toolkit's): choose the runs and the metrics; the table says what each metric applies to and what "
                "is scored under the current settings, and fills in as scores land. The job joins the queue below "
                "(cancel keeps what was scored).")
    labels = run_labels(ctx)
    with gr.Row():
        runs = gr.Dropdown([(label, rid) for rid, label in labels.items()], multiselect=True,
                           label="runs to score", elem_id="score-runs", scale=3)
        metrics = gr.Dropdown([], multiselect=True, label="metrics (empty: every one that applies)",
                              elem_id="score-metrics", scale=3)
        start = gr.Button("score", variant="primary", elem_id="score-start", scale=0, min_width=120)
    status = gr.Markdown(elem_id="score-status")
    plan = gr.HTML(elem_id="score-plan")
    watching = gr.State(0)  # the id of the last scoring job started here (0: none)
    timer = gr.Timer(2.0)

    def choose(run_ids: list[str], chosen: list[str]) -> list[Any]:
        return scoring_status(ctx, run_ids, chosen)

    for event in (runs.input, metrics.input):
        event(choose, [runs, metrics], [metrics, plan], api_visibility="private")
    # on page load: runs imported or made since the app started are offered too
    gr.on(None, lambda: gr.update(choices=[(label, rid) for rid, label in run_labels(ctx).items()]), None, [runs],
          api_visibility="private")

    @toast_mistakes(3)
    def on_score(run_ids: list[str], chosen: list[str]) -> list[Any]:
        if not run_ids:
            raise Mistake("choose the runs to score")
        labels = run_labels(ctx)
        job = submit_scoring(ctx, plan_for_runs(ctx, run_ids, chosen),
                             " + ".join(labels.get(r, r) for r in run_ids))
        return [f"queued job {int(job.id)}: {md(job.title)}", job.id, scoring_status(ctx, run_ids, chosen)[1]]

    start.click(on_score, [runs, metrics], [status, watching, plan], api_visibility="private")

    timer.tick(lambda job_id, run_ids, chosen: follow_scoring(ctx, job_id, run_ids, chosen),
               [watching, runs, metrics], [status, plan, watching], api_visibility="private", show_progress="hidden")
    return runs
