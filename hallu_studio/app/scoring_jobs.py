"""Scoring stored responses from the app: one job on the process's ``JobQueue`` (the Run view's "score stored runs"
and the Study view's "score what is not scored" start the same one), with its progress in the jobs table.

The job scores the responses the plan (``pipelines.scoring_plan``) leaves to score, with the metrics it leaves them
to, exactly as ``hallu-studio score`` would (``score_store``: resumable, in batches, cancel between batches).
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from ..pipelines.scoring_plan import MetricPlan, plan_metrics, plan_response_ids, scoring_plan, why_not_applicable
from ..presentation import short_model_label
from .context import AppContext
from .jobs import CANCELLED, COMPLETED, SCORING, Job, JobResult, Progress
from .render import records_table_html
from .render.palette import esc
from .toasts import Mistake


def run_labels(ctx: AppContext, counts: bool = True) -> dict[str, str]:
    """Each stored run's label in the views' choosers: "model · benchmark · N responses" (imported runs too;
    without ``counts``, "model · benchmark")."""
    return {r["id"]: f"{short_model_label(r['model'], r.get('synthetic'))} · {r['benchmark']}"
                     + (f" · {int(r['responses']):,} responses" if counts else "") for r in ctx.store.list_runs()}


def submit_scoring(ctx: AppContext, plan: Sequence[MetricPlan], title: str) -> Job:
    """Queue one job scoring what ``plan`` leaves to score; a plan that leaves nothing is refused (``Mistake``)."""
    from ..metrics.registry import check_llm_configured

    metrics, only = plan_metrics(plan), plan_response_ids(plan)
    if not metrics:
        raise Mistake("nothing left to score: every chosen metric has scored every response it applies to")
    check_llm_configured(ctx.settings, metrics)  # a missing [llm] endpoint is told now, not after the queue

    def job(cancel: threading.Event, progress: Progress) -> JobResult:
        from ..pipelines.engines import make_engine
        from ..pipelines.scoring import score_store

        progress(0, len(only), SCORING)
        # The engine of `score --workers` (Settings: scoring.workers), run from this job's thread.
        report = score_store(ctx.store, ctx.settings, metrics, only=only, progress=False, cancel=cancel,
                             on_progress=lambda done, total: progress(done, total, SCORING),
                             engine=make_engine("processes", ctx.settings.scoring.workers))
        return JobResult(CANCELLED if report.stopped_early else COMPLETED, report.summary())

    from ..metrics.registry import metric_spec

    names = ", ".join(metric_spec(m).display_name for m in metrics)
    return ctx.jobs.submit(f"score {len(only):,} responses of {title} with {names}", job)


def plan_for_runs(ctx: AppContext, run_ids: Sequence[str] | None, metrics: Sequence[str] | None = None,
                  response_ids: Any = None) -> list[MetricPlan]:
    """The scoring plan of the chosen runs (every registered metric when ``metrics`` is empty)."""
    return scoring_plan(ctx.store, ctx.settings, list(run_ids or ()), list(metrics or ()) or None, response_ids)


def metric_choices(plan: Sequence[MetricPlan]) -> list[tuple[str, str]]:
    """``(label, name)`` of every metric in ``plan``, in registry order: its display name, and "does not apply"
    where it applies to none of the responses asked about."""
    from ..metrics.registry import metric_spec

    why = why_not_applicable(plan)
    return [(f"{metric_spec(m).display_name} ({m})" + ("" if reason is None else ": does not apply"), m)
            for m, reason in why.items()]


def plan_table_html(plan: Sequence[MetricPlan], metrics: Sequence[str] | None, labels: dict[str, str]) -> str:
    """The plan of ``metrics`` (every applicable one when empty) as a table, one row per run and metric, then one
    line per metric that applies to none of these responses, saying why."""
    from ..metrics.registry import metric_spec

    why = why_not_applicable(plan)
    shown = [m for m in (metrics or [m for m, reason in why.items() if reason is None]) if m in why]
    rows = [{"responses of": labels.get(row.run_id, row.run_id),
             "metric": metric_spec(row.metric).display_name, "responses": row.responses,
             "it applies to": row.applicable, "scored (current settings)": row.scored, "to score": row.to_score,
             "status": row.status()}
            for row in plan if row.metric in shown and (row.applicable or row.problem)]
    table = records_table_html(rows, empty="no chosen metric applies to these responses")
    skipped = [f"{metric_spec(m).display_name}: {reason}" for m, reason in why.items() if reason is not None]
    note = ('<p class="hs-note">Not applicable here: ' + esc("; ".join(skipped)) + ".</p>") if skipped else ""
    return table + note
