"""The Gradio app: tabs laid out and wired to library calls; nothing here computes or writes SQL."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ..config import ASSETS_DIR
from ..lexicon.wordnet import lexicon_note
from .context import AppContext
from .render.palette import md
from . import serial_ast, tab_memory
from .security import app_kwargs
from .tabs import annotate, browse, inspect, overview, run, settings, study

TITLE = "HalluStudio"


def launch_kwargs() -> dict[str, Any]:
    """What Gradio 6 takes at ``launch()``: the theme, our CSS, the keyboard-shortcut script and the
    Content-Security-Policy middleware (``security.py``)."""
    css = (ASSETS_DIR / "app.css").read_text(encoding="utf-8")
    js = (ASSETS_DIR / "shortcuts.js").read_text(encoding="utf-8")
    return {"css": css, "head": f"<script>{js}</script>", "app_kwargs": app_kwargs(),
            "theme": gr.themes.Default(font=["sans-serif"], font_mono=["monospace"])}


@dataclass
class Views:
    """The tabs' components that other tabs' events read or write."""

    tabs: Any
    every_tab: tuple[Any, ...]
    annotate_tab: Any
    browse: Any
    inspect: Any
    annotate: Any
    overview: tuple[list[Any], list[Any], Any]  # the Overview's inputs, outputs and draw function


def build_app(ctx: AppContext) -> gr.Blocks:
    serial_ast.install()  # the app's threads import at once (an app built in a notebook or a test too)
    # Every view's first draw needs the configuration in force, which builds every metric once (seconds on a
    # cold process): start it now, while the page loads, not in the first visitor's request.
    threading.Thread(target=_warm_config_keys, args=(ctx,), daemon=True, name="hallu-studio-config-keys").start()
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        gr.Markdown(f"## {TITLE} — hallucination in vision-language models", elem_id="hs-title")
        banner = gr.Markdown(visible=False, elem_id="hs-banner")
        # Scores made with another lexicon than the shipped WordNet 3.0 differ (and are keyed apart): say so.
        note = lexicon_note()
        gr.Markdown(f"**Lexicon:** {md(note)}" if note else "", visible=bool(note), elem_id="hs-lexicon")
        views = _tabs(ctx)
        annotate.register_api(ctx)
        tab_in_use = tab_memory.remember_tabs(views.every_tab)
        # a study created in the Study view is in the Annotate view's list when that view is opened
        views.annotate_tab.select(lambda: gr.update(choices=annotate.study_choices(ctx)), None, [views.annotate.study],
                                  api_visibility="private", show_progress="hidden")
        _browse_opens_inspect(ctx, views)
        _page_loads(ctx, demo, views, tab_in_use)
        _background_banner(ctx, demo, banner, views.overview[1][1])
    return demo


def _tabs(ctx: AppContext) -> Views:
    """Every tab, laid out in order."""
    annotator_place = annotate.browser_session()
    with gr.Tabs(selected="overview") as tabs:
        with gr.Tab("Overview", id="overview", elem_id="tab-overview") as overview_tab:
            ov = overview.build(ctx)
        with gr.Tab("Browse", id="browse", elem_id="tab-browse") as browse_tab:
            br = browse.build(ctx)
        with gr.Tab("Inspect", id="inspect", elem_id="tab-inspect") as inspect_tab:
            ins = inspect.build(ctx, inspect_tab)
        with gr.Tab("Annotate", id="annotate", elem_id="tab-annotate") as annotate_tab:
            ann = annotate.build(ctx, annotator_place)
        with gr.Tab("Study", id="study", elem_id="tab-study") as study_tab:
            study.build(ctx, study_tab)
        with gr.Tab("Run", id="run", elem_id="tab-run") as run_tab:
            run.build(ctx)
        with gr.Tab("Settings", id="settings", elem_id="tab-settings") as settings_tab:
            settings.build(ctx)
    every_tab = (overview_tab, browse_tab, inspect_tab, annotate_tab, study_tab, run_tab, settings_tab)
    return Views(tabs, every_tab, annotate_tab, br, ins, ann, ov)


def _browse_opens_inspect(ctx: AppContext, views: Views) -> None:
    """A click on a Browse row opens it in Inspect; Browse's filter is Inspect's previous / next list."""
    br, ins = views.browse, views.inspect

    def open_row(row_ids: list[str], filters: dict[str, Any], page: float | None,
                 evt: gr.SelectData) -> list[Any]:
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        position = None if row is None else (max(1, int(page or 1)) - 1) * browse.PAGE_SIZE + int(row)
        if not row_ids or position is None or position >= len(row_ids):
            raise gr.Error("that row is no longer in the table; apply the filter again")
        nav = inspect.nav_for(ctx, filters or {}, row_ids, position, row_ids[position])
        return [gr.Tabs(selected="inspect"), *inspect.show(ctx, nav, row_ids[position])]

    br.table.select(open_row, [br.ids, br.filters, br.page], [views.tabs, *ins.outputs], api_visibility="private")

    def follow_filter(row_ids: list[str], filters: dict[str, Any], nav: dict[str, Any]) -> dict[str, Any]:
        # A new Browse filter becomes Inspect's previous / next list; the response shown stays.
        nav = nav or {}
        current = nav.get("id")
        if current is None and nav.get("ids"):  # the earlier state shape
            current = nav["ids"][nav.get("index", 0)]
        index = row_ids.index(current) if current in row_ids else -1
        return inspect.nav_for(ctx, filters or {}, row_ids, index, current)

    br.ids.change(follow_filter, [br.ids, br.filters, ins.nav], [ins.nav], api_visibility="private")


def _page_loads(ctx: AppContext, demo: gr.Blocks, views: Views, tab_in_use: Any) -> None:
    """What a page load draws: Browse and Inspect, the Overview, the annotator's place and the tab in use."""
    br, ins, ann = views.browse, views.inspect, views.annotate
    _, ov_outputs, ov_fn = views.overview

    def on_load(request: gr.Request) -> list[Any]:
        view = request.query_params.get("view") if request is not None else None
        browse_values = browse.load_view_or_default(ctx, view)
        nav = inspect.nav_for(ctx, browse_values[-2], browse_values[-3], 0)
        selected = gr.Tabs(selected="browse") if view else gr.Tabs()
        return [selected, *browse_values, *inspect.show(ctx, nav)]

    # Two load events: Browse and Inspect do not wait for the (slower) leaderboard.
    demo.load(on_load, None, [views.tabs, *br.controls, br.table, br.ids, br.filters, br.status, *ins.outputs],
              api_visibility="private")
    # The Overview says it is loading in its own words (overview.LOADING_HTML); Gradio's overlay would grey them.
    demo.load(lambda: ov_fn("", False), None, ov_outputs, api_visibility="private", show_progress="hidden")
    # The annotator's name and place come back from the browser's storage after a reload.
    demo.load(ann.restore, [ann.session], ann.restore_outputs, api_visibility="private")
    demo.load(None, [tab_in_use], None, js=tab_memory.reopen_js(views.every_tab), api_visibility="private")


def _background_banner(ctx: AppContext, demo: gr.Blocks, banner: Any, overview_shows: Any) -> None:
    """The banner over the tabs while the first start works in the background; ``overview_shows`` is the score
    fingerprint the page's Overview was drawn from."""
    watching = gr.State(False)  # this page has seen the background work running
    banner_timer = gr.Timer(2.0, active=ctx.background.running())

    def show_background(seen: bool, drawn_from: str | None) -> list[Any]:
        """While the first start scores the demo, what it is doing. Once it ends, on a page that watched it:
        that the Overview is catching up, until this page's Overview is drawn from every score; then that it
        is done, and the poll stops. So the banner never says done beside a partial Overview."""
        line = ctx.background.status()
        if line:
            return [gr.Markdown(f"**Working:** {md(line)}", visible=True), True, gr.skip()]
        finished = ctx.background.finished()
        if seen and finished:
            if drawn_from != overview.drawn_from(ctx):
                return [gr.Markdown(f"**Almost done:** {md(finished)}; the Overview is being redrawn with "
                                    "every score", visible=True), True, gr.skip()]
            return [gr.Markdown(f"**Done:** {md(finished)}", visible=True), False, gr.Timer(active=False)]
        return [gr.Markdown("", visible=False), False, gr.Timer(active=False)]

    demo.load(show_background, [watching, overview_shows], [banner, watching, banner_timer],
              api_visibility="private")
    banner_timer.tick(show_background, [watching, overview_shows], [banner, watching, banner_timer],
                      api_visibility="private", show_progress="hidden")


def _warm_config_keys(ctx: AppContext) -> None:
    from ..metrics.keys import current_config_keys

    current_config_keys(ctx.settings)  # cached per settings; a metric that cannot be built is noted there
