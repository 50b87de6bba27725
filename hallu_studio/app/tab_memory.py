"""The tab in use, kept in the browser's storage so that a reload opens the same view (the Annotate view with
its item, rather than the Overview)."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import gradio as gr

TAB_KEY = "hallu-studio-tab"


def remember_tabs(tabs: Iterable[gr.Tab]) -> gr.BrowserState:
    """A browser state that each tab, when selected, writes its id into."""
    memory = gr.BrowserState("", storage_key=TAB_KEY)
    for tab in tabs:
        tab.select(lambda tab_id=tab.id: tab_id, None, [memory], api_visibility="private", show_progress="hidden",
                   queue=False)
    return memory


def reopener(tabs: Iterable[gr.Tab]) -> Callable[[Any, gr.Request], Any]:
    """The page-load handler: the stored tab again (a link that names a saved view opens Browse instead, as
    ``build_app`` decides)."""
    known = {tab.id for tab in tabs}

    def reopen(stored: Any, request: gr.Request) -> Any:
        linked = request is not None and request.query_params.get("view")
        return gr.Tabs(selected=stored) if stored in known and not linked else gr.Tabs()

    return reopen
