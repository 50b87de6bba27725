"""The tab in use, kept in the browser's storage so that a reload opens the same view (the Annotate view with
its item, rather than the Overview).

The tab is reopened in the browser, by clicking its button as the person would: its ``select`` listeners run
(the Study view computes its tables when opened), which a ``gr.Tabs(selected=...)`` from the server would skip.
"""

from __future__ import annotations

import json
from typing import Iterable

import gradio as gr

TAB_KEY = "hallu-studio-tab"


def remember_tabs(tabs: Iterable[gr.Tab]) -> gr.BrowserState:
    """A browser state that each tab, when selected, writes its ``elem_id`` into."""
    memory = gr.BrowserState("", storage_key=TAB_KEY)
    for tab in tabs:
        tab.select(lambda elem_id=tab.elem_id: elem_id, None, [memory], api_visibility="private",
                   show_progress="hidden", queue=False)
    return memory


def reopen_js(tabs: Iterable[gr.Tab]) -> str:
    """The page-load script: click the stored tab's button, unless the link names a saved view (``?view=``, which
    opens Browse) or the stored value is not one of ``tabs``."""
    known = json.dumps([tab.elem_id for tab in tabs])
    return (f"(stored) => {{ const known = {known}; "
            "if (known.includes(stored) && !new URLSearchParams(window.location.search).get('view')) "
            "{ document.getElementById(stored + '-button')?.click(); } return []; }")
