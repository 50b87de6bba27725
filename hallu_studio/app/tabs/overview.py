"""Overview: per benchmark, the models ranked best first on a few headline numbers with CIs, and the
papers' plots; it follows the store by itself (a timer), and one button writes the shareable report."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gradio as gr

from ...studies.in_force import InForce
from ...presentation import run_names
from ...studies.ranking import benchmark_boards, pivot_leaderboard
from ..columns import all_keys
from ..context import AppContext
from ..overview_cache import score_fingerprint
from ..render import records_table_html
from ..render.leaderboard import LEADERBOARD_CSS, board_html, is_ranked, ranked_first, waiting_html
from ..render.palette import esc
from ..render.plots import figures_html

POLL_SECONDS = 2.0  # how often an open Overview asks whether scores changed (one cheap query)

# What the Overview shows from the first moment, until its numbers come (bootstrap intervals for every run and
# metric: about 20 s on a fresh process with the demo's 4,384 responses), so a restarted app is never a blank page.
LOADING_HTML = (f"<style>{LEADERBOARD_CSS}</style>"
                '<div class="hs-loading" role="status" aria-live="polite"><span class="hs-spin"></span>'
                "Loading the leaderboard: working out each model's numbers and how sure they are "
                "(up to half a minute after a start)…</div>")


def overview_html(ctx: AppContext, benchmark: str | None, in_force: InForce) -> str:
    """Ranked board and plots of each benchmark (or of the one named), of the configurations ``in_force``."""
    boards = ranked_first(benchmark_boards(ctx.store, in_force, benchmark))
    sections = []
    for board in boards:
        if not is_ranked(board) and any(is_ranked(b) for b in boards):
            continue  # said in one line after the ranked ones
        rows = ctx.store.browse_responses({"benchmarks": [board.benchmark]}, all_keys(), limit=1_000_000,
                                          configs=in_force.keys())
        sections.append(board_html(board) + figures_html(rows, {r.run_id: r.name for r in board.runs},
                                                         {h.metric for h in board.headlines}))
    if any(is_ranked(b) for b in boards):
        sections.append(waiting_html([b for b in boards if not is_ranked(b)]))
    if not sections:
        sections.append('<p class="hs-none">No models have been run here yet. Once a researcher imports a benchmark '
                        'and runs models on it (the Run view), their numbers appear here.</p>')
    return f"<style>{LEADERBOARD_CSS}</style>" + "".join(sections)


def every_number_html(ctx: AppContext, benchmark: str | None, in_force: InForce) -> str:
    """Every headline key of every metric, per run and image domain (the long table, in its own scroll box)."""
    from ...studies.leaderboard import leaderboard

    rows = leaderboard(ctx.store, benchmark, by_domain=True, configs=in_force.keys())
    names = run_names(ctx.store.run_manifests(benchmark))
    table = records_table_html(pivot_leaderboard(rows, by_domain=True, names=names), empty="no scored responses yet")
    return (f'<h4>{esc("Every number, per image domain")}</h4>'
            f'<div class="hs-scroll" style="overflow-x:auto;max-width:100%">{table}</div>')


def leaderboard_html(ctx: AppContext, benchmark: str | None, every_number: bool = False,
                     in_force: InForce | None = None) -> str:
    in_force = in_force if in_force is not None else ctx.in_force()
    html = overview_html(ctx, benchmark, in_force)
    return html + every_number_html(ctx, benchmark, in_force) if every_number else html


def _fingerprint(ctx: AppContext, in_force: InForce) -> tuple[Any, ...]:
    """What the Overview is drawn from: the scores and responses, and the configurations in force (which a change
    of settings moves)."""
    return (*score_fingerprint(ctx.store), in_force.fingerprint())


def drawn_from(ctx: AppContext) -> str:
    """The fingerprint an Overview drawn now would carry (the page's ``seen`` state holds the one it was drawn
    from): the banner compares the two."""
    return repr(_fingerprint(ctx, ctx.in_force()))


def compute(ctx: AppContext, benchmark: str | None, every_number: bool) -> list[Any]:
    """The Overview's HTML (cached while the scores and the settings stay the same) and the fingerprint it was
    built on."""
    in_force = ctx.in_force()
    fingerprint = _fingerprint(ctx, in_force)
    html = ctx.leaderboards.get((benchmark, every_number), fingerprint,
                                lambda: leaderboard_html(ctx, benchmark, every_number, in_force))
    return [html, repr(fingerprint)]


def refresh_if_changed(ctx: AppContext, benchmark: str | None, every_number: bool, seen: str | None) -> list[Any]:
    """The timer's tick: rebuild only when scores, responses or the settings changed since this page last drew."""
    if seen is not None and drawn_from(ctx) == seen:
        return [gr.skip(), gr.skip()]
    return compute(ctx, benchmark, every_number)


def write_report_file(ctx: AppContext, benchmark: str | None) -> str:
    from ..report import write_report

    out = Path(tempfile.mkdtemp(prefix="hallu-studio-report-")) / (
        f"hallu-studio-report{'-' + benchmark if benchmark else ''}.html")
    write_report(ctx.store, out, benchmark, ctx.in_force())
    return str(out)


def build(ctx: AppContext) -> list[Any]:
    """Lays out the tab; returns ``(inputs, outputs, fn)`` pieces for the page-load refresh."""
    benchmarks = [b.name for b in ctx.store.benchmark_infos()]
    with gr.Row(equal_height=True):
        benchmark = gr.Dropdown([("all benchmarks", "")] + [(b, b) for b in benchmarks], value="", label="benchmark",
                                scale=2)
        every_number = gr.Checkbox(value=False, label="also every number, per image domain", scale=2)
        report = gr.Button("⤓ shareable report (offline HTML)", elem_id="overview-report", size="sm", scale=1)
    report_file = gr.File(label="report", visible=False, elem_id="overview-report-file")
    table = gr.HTML(LOADING_HTML, elem_id="overview-leaderboard")
    seen = gr.State(None)  # the score fingerprint the page shows
    outputs = [table, seen]
    inputs = [benchmark, every_number]
    fn = lambda b, d: compute(ctx, b or None, bool(d))  # noqa: E731
    for trigger in (benchmark.change, every_number.change):
        trigger(fn, inputs, outputs, api_visibility="private")
    # Scores land in the background (first start, Run jobs): the open page follows them by itself.
    gr.Timer(POLL_SECONDS).tick(lambda b, d, s: refresh_if_changed(ctx, b or None, bool(d), s),
                                [benchmark, every_number, seen], outputs, api_visibility="private",
                                trigger_mode="once", show_progress="hidden")

    def make_report(b: str) -> Any:
        return gr.File(value=write_report_file(ctx, b or None), visible=True)

    report.click(make_report, [benchmark], [report_file], api_visibility="private")
    return [inputs, outputs, fn]
