"""End to end in headless Chromium: every tab, the graph canvas, keyboard rating, a triplet
correction, undo, saved views by URL, XSS, and no request leaving 127.0.0.1.

Screenshots of each view go to ``test-artifacts/`` (gitignored).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

import pytest
from reliability_helpers import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
XSS = "<img src=x onerror=window.__xss=1><script>window.__xss=2</script>"
TABS = ["Overview", "Browse", "Inspect", "Annotate", "Study", "Run", "Settings"]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from synthetic_store import SYNTHETIC_CONFIG_KEY, fill_synthetic_store
    from hallu_studio.model import Response, Score
    from hallu_studio.store import Store

    store = Store(tmp_path_factory.mktemp("browser") / "browser.duckdb")
    ids = fill_synthetic_store(store, n_samples=8)
    first = store.get_response(ids[0])
    # A hostile response on the same sample, with the payload as a concept label too (pyvis nodes).
    evil = Response(first.run_id + "-evil", first.sample_id, f"A cat {XSS} on a mat")
    store.add_responses([evil])
    store.put_scores([Score(evil.id, "concepts", SYNTHETIC_CONFIG_KEY, {"objects": 2},
                            {"extractor": "test", "concepts": {"objects": ["cat", XSS], "attributes": [],
                                                               "relations": [["cat", XSS, "mat"]]}}),
                      Score(evil.id, "trihe", SYNTHETIC_CONFIG_KEY, {"n_triplets": 1, "hallucinated": 1},
                            {"judge": XSS, "triplets": [{"triplet": ["cat", "on", XSS], "span": [2, 5],
                                                         "verdict": "object", "score": 0.1, "reason": XSS}]})])
    store.save_view("worst-sketch", {"domains": ["sketch"], "sort": "emd.total", "descending": True}, "test")
    demo = build_app(AppContext(store=store))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield store, ids, evil.id, url
    demo.close()
    store.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def wait_for_text(page, selector: str, text: str, timeout: int, also: object = None) -> None:
    """Wait until ``selector``'s text includes ``text``; on timeout, fail with what it showed instead, its toasts and
    ``also()``'s answer (the app's side, such as its jobs), since a bare timeout says nothing. The threads of this
    process come with every failed browser test (conftest)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function("([s, t]) => document.querySelector(s)?.innerText.includes(t)", arg=[selector, text],
                               timeout=timeout)
    except PlaywrightTimeout:
        shown = page.evaluate("s => document.querySelector(s)?.innerText ?? null", selector)
        extra = f"; {also()}" if callable(also) else ""
        raise AssertionError(f"{selector} did not show {text!r} within {timeout / 1000:.0f} s; it shows "
                             f"{shown!r}; toasts: {toasts(page)}{extra}") from None


def toasts(page) -> list[str]:
    """The texts of the toasts on the page (a mistake the app told the person, where a wait expected a change)."""
    return page.evaluate("[...document.querySelectorAll(\"[data-testid='toast-body']\")].map(e => e.innerText)")


def show_in_inspect(page, response_id: str) -> None:
    """Type a response id in Inspect and press Enter, as a person would, until the header shows it. The tab's own
    redraw is cancelled by the Enter, but the page load's answer (Browse and Inspect drawn together) can still land
    after it on a busy machine and show the first response again: then the id is typed again, as a person would."""
    box = page.locator("#inspect-response-id textarea, #inspect-response-id input").first
    shows = f"document.querySelector('#inspect-header')?.innerText.includes('{response_id}')"
    for attempt in range(6):
        box.fill(response_id)
        box.press("Enter")
        try:
            page.wait_for_function(shows, timeout=15_000 * (attempt + 1))
            return
        except Exception:  # noqa: BLE001 - the last attempt's assertion says what the page showed
            continue
    header = page.locator("#inspect-header").inner_text()
    raise AssertionError(f"Inspect never showed {response_id} after 6 Enters; its header: {header[:300]!r}")


def _open(browser, url: str, hosts: set[str]):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("request", lambda r: hosts.add(urlparse(r.url).netloc or r.url.split(":", 1)[0]))
    page.goto(url)
    # Gradio renders a tab's components when the tab is first shown: wait for the first tab's table.
    page.wait_for_selector("#overview-leaderboard table", state="attached", timeout=90_000)
    return page


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    page.wait_for_timeout(400)
    if name == "Inspect":
        page.wait_for_function("document.querySelector('#inspect-position')?.innerText.includes('of')",
                               timeout=45_000)


def test_every_view_renders_offline_with_graphs_and_screenshots(app, browser):
    store, ids, _, url = app
    hosts: set[str] = set()
    page = _open(browser, url, hosts)
    ARTIFACTS.mkdir(exist_ok=True)
    for name in TABS:
        _tab(page, name)
        if name == "Inspect":
            for graph in ("#inspect-ref-graph", "#inspect-resp-graph"):
                canvas = page.frame_locator(f"{graph} iframe").locator("canvas")
                canvas.first.wait_for(timeout=45_000)
                box = canvas.first.bounding_box()
                assert box and box["width"] > 100 and box["height"] > 100
            page.wait_for_timeout(800)  # let vis.js settle before the picture
        if name == "Study":
            page.click("#study-compute")
            page.wait_for_selector("#study-agreement table", timeout=180_000)
        page.screenshot(path=str(ARTIFACTS / f"view-{name.lower()}.png"), full_page=True)
    assert page.evaluate("window.__xss") is None
    assert hosts <= {urlparse(url).netloc, "data"}, f"requests left the machine: {hosts}"
    page.close()


def test_browse_row_opens_inspect_and_views_load_by_url(app, browser):
    store, ids, _, url = app
    hosts: set[str] = set()
    page = _open(browser, url.rstrip("/") + "/?view=worst-sketch", hosts)
    page.wait_for_selector("#browse-table", timeout=45_000)  # the view opens on Browse
    page.wait_for_function("document.querySelector('#browse-status')?.innerText.includes('worst-sketch')",
                           timeout=45_000)
    sketch = store.browse_response_ids({"domains": ["sketch"]}, ["emd.total"], sort="emd.total")
    first_sample = store.get_response(sketch[0]).sample_id  # the first row's (its first occurrence)
    # Gradio 6's table is virtual: its visible cells are .body-cell divs (a hidden <table> sizes them)
    page.locator("#browse-table .virtual-row .body-cell", has_text=first_sample).first.click()
    page.wait_for_function(f"document.querySelector('#inspect-response-id textarea, #inspect-response-id input')"
                           f"?.value === '{sketch[0]}'", timeout=45_000)
    assert page.locator("#inspect-position").inner_text().endswith(f"of {len(sketch)}")
    page.click("#inspect-next")
    page.wait_for_function(f"document.querySelector('#inspect-response-id textarea, #inspect-response-id input')"
                           f"?.value === '{sketch[1]}'", timeout=45_000)

    # put the other model's response beside it, and prefer the left one
    page.locator("#inspect-compare-choice input").first.click()
    page.locator("ul[role=listbox] li").first.click()
    page.wait_for_function("document.querySelector('#inspect-compare')?.innerText.includes('[synthetic]')",
                           timeout=45_000)
    page.locator("#prefer-name textarea, #prefer-name input").first.fill("lee")
    page.click("#prefer-left")
    page.wait_for_timeout(1000)
    prefs = store.list_events(annotator="lee", kind="preference")
    assert len(prefs) == 1 and prefs[0].value["winner"] == sketch[1] == prefs[0].value["a"]
    page.close()


def test_hostile_response_is_shown_as_text_and_runs_nothing(app, browser):
    _, _, evil_id, url = app
    hosts: set[str] = set()
    page = _open(browser, url, hosts)
    _tab(page, "Inspect")
    box = page.locator("#inspect-response-id textarea, #inspect-response-id input").first
    box.fill(evil_id)
    box.press("Enter")
    page.wait_for_function("document.querySelector('#inspect-text')?.innerText.includes('onerror')", timeout=45_000)
    page.frame_locator("#inspect-resp-graph iframe").locator("canvas").first.wait_for(timeout=45_000)
    page.wait_for_timeout(1500)
    assert "<script>window.__xss=2</script>" in page.locator("#inspect-text").inner_text()
    assert page.evaluate("window.__xss") is None
    assert page.locator("#inspect-text img, #inspect-evidence img, #inspect-text script, #inspect-evidence script").count() == 0
    page.screenshot(path=str(ARTIFACTS / "xss-inspect.png"), full_page=True)
    page.close()


def _rid(page) -> str:
    return page.locator("#ann-response-id textarea, #ann-response-id input").first.input_value()


def _wait_rid(page, test: str) -> None:
    page.wait_for_function("(document.querySelector('#ann-response-id textarea, #ann-response-id input')?.value "
                           f"|| '') {test}", timeout=45_000)


def test_annotate_with_the_keyboard_correct_and_undo(app, browser):
    store, ids, _, url = app
    hosts: set[str] = set()
    page = _open(browser, url, hosts)
    _tab(page, "Annotate")
    page.locator("#annotator-name textarea, #annotator-name input").first.fill("kim")
    page.click("#ann-start")
    _wait_rid(page, ".startsWith('resp-')")
    rid = _rid(page)

    # a rating moves on: 4 rates this item and shows the next, 5 rates that one
    page.locator("#hs-title").click()  # focus leaves the text fields
    page.keyboard.press("4")
    _wait_rid(page, f"!== '{rid}'")
    second = _rid(page)
    page.keyboard.press("5")
    _wait_rid(page, f"!== '{second}'")
    third = _rid(page)
    ratings = store.list_events(annotator="kim", kind="rating")
    assert [(e.response_id, e.value) for e in ratings] == [(rid, 4), (second, 5)] and third not in (rid, second)
    # the model takes turns in the queue without a study
    runs = [store.get_response(r).run_id for r in (rid, second, third)]
    assert runs[0] != runs[1] != runs[2]

    # undo on the next, unrated item names what it took back and where, and offers to go back there
    page.keyboard.press("u")
    page.wait_for_function("document.querySelector('#ann-status')?.innerText.includes('undid')", timeout=45_000)
    status = page.locator("#ann-status").inner_text()
    assert "undid your rating 5 of" in status and "an earlier item, not the one on screen" in status, status
    assert _rid(page) == third
    undos = store.list_events(annotator="kim", kind="undo")
    assert [u.undoes for u in undos] == [ratings[1].id]
    page.locator("#ann-undo-back").wait_for(state="visible", timeout=45_000)
    page.keyboard.press("b")
    _wait_rid(page, f"=== '{second}'")
    page.wait_for_selector("#ann-item .hs-unrated", timeout=45_000)
    rid = second

    # typing a digit in a text field is text, not a rating
    page.locator("#ann-note textarea, #ann-note input").first.fill("")
    page.locator("#ann-note textarea, #ann-note input").first.type("5 objects")
    page.wait_for_timeout(500)
    assert len(store.list_events(annotator="kim", kind="rating")) == 2

    # correct triplet 1 of this response: a separate task, which shows the judges' verdicts
    assert page.locator("#ann-triplet").count() == 0 or not page.locator("#ann-triplet").is_visible()
    page.locator("#ann-task label", has_text="correct the judges").click()
    page.wait_for_selector("#ann-triplet input", state="visible", timeout=45_000)
    page.locator("#ann-triplet input").first.click()
    page.locator("ul[role=listbox] li").nth(1).click()
    page.locator("#ann-verdict label", has_text="supported").click()
    page.locator("#ann-reason textarea, #ann-reason input").first.fill("it is in the picture")
    page.click("#ann-correct")
    page.wait_for_function("document.querySelector('#ann-status')?.innerText.includes('corrected')", timeout=45_000)
    corrections = store.list_events(annotator="kim", kind="correction")
    assert len(corrections) == 1 and corrections[0].target == "triplet:1"
    assert corrections[0].value["verdict"] == "supported" and corrections[0].value["reason"] == "it is in the picture"

    page.locator("#hs-title").click()
    page.keyboard.press("u")
    page.wait_for_function("document.querySelector('#ann-status')?.innerText.includes('undid your verdict')",
                           timeout=45_000)
    assert "not the one on screen" not in page.locator("#ann-status").inner_text()
    undos = store.list_events(annotator="kim", kind="undo")
    assert len(undos) == 2 and undos[-1].undoes == corrections[0].id

    page.keyboard.press("j")
    _wait_rid(page, f"!== '{rid}'")
    page.keyboard.press("k")
    _wait_rid(page, f"=== '{rid}'")
    page.screenshot(path=str(ARTIFACTS / "annotate-after.png"), full_page=True)

    # a reload comes back to the Annotate tab, the item and the task in use
    page.reload()
    _wait_rid(page, f"=== '{rid}'")
    page.wait_for_selector("#ann-correction-box", state="visible", timeout=45_000)
    assert page.locator("#tab-annotate").is_visible() and "back at" in page.locator("#ann-status").inner_text()
    assert page.locator("#ann-task input[type=radio]:checked").first.evaluate("e => e.value") == "correct"
    assert len(store.list_events(annotator="kim")) == 5  # 2 ratings, 1 correction, 2 undos: nothing lost
    assert hosts <= {urlparse(url).netloc, "data"}
    page.close()


def test_a_response_asked_for_while_the_tab_redraws_is_not_replaced_by_the_redraw(app, browser, monkeypatch):
    """On a busy server, the Inspect tab's own redraw (on selecting it) can be answered after the person typed
    another id: what they asked for cancels the redraw, which would otherwise land late and show the old one."""
    import threading
    import time

    from hallu_studio.app.tabs import inspect as inspect_view

    _, ids, _, url = app
    redrawing = threading.Event()

    def slow_redraw(ctx, nav, n_outputs):  # a redraw that lands late, and always draws (no "nothing landed" skip)
        redrawing.set()
        time.sleep(5)
        return inspect_view.show(ctx, nav, (nav or {}).get("id"))

    monkeypatch.setattr(inspect_view, "refresh", slow_redraw)
    page = _open(browser, url, set())
    page.get_by_role("tab", name="Inspect").click()
    assert redrawing.wait(30), "selecting the tab did not redraw it"
    box = page.locator("#inspect-response-id textarea, #inspect-response-id input").first
    page.wait_for_function("document.querySelector('#inspect-header')?.innerText.length > 0", timeout=90_000)
    shown_first = page.locator("#inspect-header").inner_text()
    asked = next(r for r in ids if r not in shown_first)
    box.fill(asked)
    box.press("Enter")
    page.wait_for_function(f"document.querySelector('#inspect-header')?.innerText.includes('{asked}')",
                           timeout=90_000)
    page.wait_for_timeout(7_000)  # past the redraw's answer
    assert asked in page.locator("#inspect-header").inner_text()
    page.close()
