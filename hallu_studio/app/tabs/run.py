"""Run: choose a benchmark subset, models, prompt, generation preset and mitigation; start, watch, cancel.

Jobs go through the process's one ``JobQueue``: a second run waits until the first ends.
"""

from __future__ import annotations

import threading
from typing import Callable

import gradio as gr

from ...model import TASKS
from ..context import AppContext
from ..render import records_table_html

DEFAULT_MODELS = ["probe:rate=0.0", "probe:rate=0.3"]


def submit_runs(ctx: AppContext, benchmark: str, tasks: list[str], limit: float | None, models: str, prompt: str,
                preset: str, mitigation: str, metrics: list[str]) -> str:
    """Queue one job per model spec (one line each); returns a status line."""
    from ...backends import make_backend
    from ...pipelines.running import RunOptions, execute_run
    from ...pipelines.scoring import score_store

    specs = [m.strip() for m in (models or "").splitlines() if m.strip()]
    if not benchmark:
        raise gr.Error("choose a benchmark")
    if not specs:
        raise gr.Error("name at least one model spec (e.g. probe:rate=0.3, transformers:<hub id>)")
    options = RunOptions(benchmark=benchmark, prompt=prompt.strip() or None, generation=preset,
                         mitigation=mitigation, tasks=list(tasks) or None,
                         limit=int(limit) if limit else None)
    for spec in specs:
        def job(cancel: threading.Event, progress: Callable[[int, int], None], spec: str = spec) -> str:
            summary = execute_run(ctx.store, make_backend(spec), options, cancel=cancel, progress=False,
                                  on_progress=progress)
            if metrics and not cancel.is_set():
                report = score_store(ctx.store, ctx.settings, list(metrics), run_id=summary.run_id, progress=False)
                return summary.line() + "; " + report.summary()
            return summary.line()
        ctx.jobs.submit(f"{spec} on {benchmark}", job)
    return f"queued {len(specs)} run(s); they run one at a time"


def jobs_table(ctx: AppContext) -> str:
    rows = [{"job": j.id, "what": j.title, "status": j.status, "progress": f"{j.done}/{j.total}" if j.total else "",
             "message": j.message} for j in reversed(ctx.jobs.jobs())]
    return records_table_html(rows, empty="no jobs yet") + records_table_html(
        [{k: r[k] for k in ("model", "benchmark", "status", "responses", "failures", "synthetic", "mitigation", "id")}
         for r in ctx.store.list_runs()], empty="no runs in the store")


def build(ctx: AppContext) -> None:
    from ...backends.mitigation import MITIGATIONS
    from ...metrics.registry import METRIC_NAMES
    from ...prompts import GENERATION_PRESETS, PROMPTS

    with gr.Row():
        benchmark = gr.Dropdown([b.name for b in ctx.store.benchmark_infos()], label="benchmark",
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
        metrics = gr.Dropdown(list(METRIC_NAMES), value=["emd", "trihe"], multiselect=True,
                              label="score with (after the run)")
    with gr.Row():
        start = gr.Button("start", variant="primary", elem_id="run-start")
        job_id = gr.Number(label="job id", precision=0)
        cancel = gr.Button("cancel job", elem_id="run-cancel")
    status = gr.Markdown()
    table = gr.HTML(elem_id="run-jobs")
    timer = gr.Timer(2.0)
    # on page load (not a callable value: Gradio makes that a public, unnamed API endpoint)
    gr.on(None, lambda: jobs_table(ctx), None, [table], api_visibility="private")

    start.click(lambda *a: submit_runs(ctx, *a), [benchmark, tasks, limit, models, prompt, preset, mitigation, metrics],
                [status], api_visibility="private")

    def on_cancel(jid: float | None) -> str:
        if jid is None:
            raise gr.Error("give the job id to cancel")
        return f"job {int(jid)}: " + ("cancelling" if ctx.jobs.cancel(int(jid)) else "not running")

    cancel.click(on_cancel, [job_id], [status], api_visibility="private")
    timer.tick(lambda: jobs_table(ctx), None, [table], api_visibility="private", show_progress="hidden")
