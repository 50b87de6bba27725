"""HTML injection in a real browser: every tab of the app on a store whose every label is markup.

Headless Chromium (``/usr/bin/chromium``, the recipe of ``test_browser.py``) visits each tab,
computes the Study tables, opens the hostile response in Inspect and in Annotate; the payload's
handlers would set ``window.__xss``: it must stay unset, and nothing may load from off the machine.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pytest
from reliability_helpers import fill_hostile_store, free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
TABS = ["Overview", "Browse", "Inspect", "Annotate", "Study", "Run", "Settings"]


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from hallu_studio.store import Store

    store = Store(tmp_path_factory.mktemp("xss-browser") / "xss.duckdb")
    ids = fill_hostile_store(store)
    demo = build_app(AppContext(store=store))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield ids, url
    demo.close()
    store.close()


def test_no_tab_runs_the_payload(hostile_app):
    from playwright.sync_api import sync_playwright

    ids, url = hostile_app
    hosts: set[str] = set()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("request", lambda r: hosts.add(urlparse(r.url).netloc or r.url.split(":", 1)[0]))
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(url)
            page.wait_for_selector("#overview-leaderboard table", state="attached", timeout=30_000)
            for name in TABS:
                page.get_by_role("tab", name=name).click()
                page.wait_for_timeout(500)
                if name == "Inspect":
                    box = page.locator("#inspect-response-id textarea, #inspect-response-id input").first
                    box.fill(ids["response"])
                    box.press("Enter")
                    page.wait_for_function("document.querySelector('#inspect-text')?.innerText.includes('onerror')",
                                           timeout=15_000)
                    page.frame_locator("#inspect-resp-graph iframe").locator("canvas").first.wait_for(timeout=15_000)
                    page.wait_for_timeout(1000)
                if name == "Annotate":
                    page.locator("#annotator-name textarea, #annotator-name input").first.fill(
                        "<img src=x onerror=window.__xss=7>")
                    page.click("#ann-start")
                    page.wait_for_function("document.querySelector('#ann-response-id textarea, "
                                           "#ann-response-id input')?.value.startsWith('resp-')", timeout=15_000)
                    page.wait_for_timeout(500)
                if name == "Study":
                    page.click("#study-compute")
                    page.wait_for_selector("#study-agreement table", timeout=20_000)
                    page.wait_for_timeout(500)
                assert page.evaluate("window.__xss") is None, f"the payload ran on the {name} tab"
            # saved view named by the payload, opened by URL
            page.goto(url.rstrip("/") + "/?view=" + "%22%27%3E%3Cimg%20src%3Dx%20onerror%3Dwindow.__xss%3D1%3E")
            page.wait_for_selector("#browse-table", timeout=15_000)
            page.wait_for_timeout(1000)
            assert page.evaluate("window.__xss") is None
            assert page.locator("hsxss").count() == 0
            assert not dialogs
            page.close()
        finally:
            browser.close()
    assert hosts <= {urlparse(url).netloc, "data"}, f"requests left the machine: {hosts}"
