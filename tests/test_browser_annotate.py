"""In headless Chromium, an annotator rates twenty items with the keys alone: each press stores one rating and moves
on, the queue without a study mixes four models and the images, undo names its item, and a reload comes back to
the Annotate tab at the same item.

Screenshots go to ``test-artifacts/`` (gitignored).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from reliability_helpers import free_port
from test_browser import toasts

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
MODELS = ("probe-a", "probe-b", "probe-c", "probe-d")
RID = "(document.querySelector('#ann-response-id textarea, #ann-response-id input')?.value || '')"
NAME = "document.querySelector('#annotator-name textarea, #annotator-name input')?.value"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from hallu_studio.store import Store
    from synthetic_store import fill_synthetic_store

    store = Store(tmp_path_factory.mktemp("annotate") / "annotate.duckdb")
    fill_synthetic_store(store, n_samples=12, models=MODELS)
    demo = build_app(AppContext(store=store))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield store, url
    demo.close()
    store.close()


def _page_log(page):
    """Record the page's console and its calls to the app, and return a function that prints the last ones: a lost
    press either never reached the server (no call) or came back as something the page did not show."""
    lines: list[str] = []
    page.on("console", lambda m: lines.append(f"console {m.type}: {m.text[:300]}"))
    page.on("pageerror", lambda e: lines.append(f"page error: {e}"))
    page.on("request", lambda r: lines.append(f"event fn {_fn_index(r.post_data)} sent")
            if "/queue/join" in r.url else None)
    # Toasts close by themselves long before a wait times out: each is logged as it appears.
    page.add_init_script("""new MutationObserver(ms => ms.forEach(m => m.addedNodes.forEach(n => {
        const body = n.matches && (n.matches("[data-testid='toast-body']") ? n
                                   : n.querySelector("[data-testid='toast-body']"));
        if (body) console.log('toast: ' + body.innerText);
    }))).observe(document, {childList: true, subtree: true});""")
    return lambda: "page log (last 30):\n  " + "\n  ".join(lines[-30:])


def _fn_index(post_data: str | None) -> str:
    try:
        return str(json.loads(post_data or "{}").get("fn_index"))
    except (ValueError, AttributeError):
        return "?"


def _where_the_page_stood(page, store) -> str:
    """What decides whether a key press reaches the app: the focused element (a field swallows the keys), whether
    the rate buttons are on screen, and what the app stored and told the annotator."""
    page_state = page.evaluate("""() => {
        const a = document.activeElement;
        const rate = [1, 2, 3, 4, 5].map(i => {
            const host = document.getElementById('rate-' + i);
            const b = host && (host.tagName === 'BUTTON' ? host : host.querySelector('button'));
            return b ? (b.offsetParent !== null ? 'shown' : 'hidden') + (b.disabled ? '/disabled' : '') : 'missing';
        });
        return {focus: a ? a.tagName + '#' + (a.id || '') + '.' + (a.className || '') : null, rate};
    }""")
    stored = len(store.list_events(annotator="ria", kind="rating"))
    return (f"ratings stored {stored}; name box {page.evaluate(NAME)!r}; page {page_state}; "
            f"status {page.locator('#ann-status').inner_text()!r}; toasts {toasts(page)}")


def test_twenty_key_presses_rate_twenty_mixed_items_and_a_reload_comes_back(app):
    from playwright.sync_api import sync_playwright

    store, url = app
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        log = _page_log(page)
        page.goto(url)
        page.get_by_role("tab", name="Annotate").click()
        page.locator("#annotator-name textarea, #annotator-name input").first.fill("ria")
        page.click("#ann-start")
        try:
            page.wait_for_function(f"{RID}.startsWith('resp-')", timeout=90_000)
        except Exception:  # noqa: BLE001 - say what the page showed instead of a bare timeout
            raise AssertionError(f"no item after start: the name box holds {page.evaluate(NAME)!r}, the status "
                                 f"says {page.locator('#ann-status').inner_text()!r}, toasts: {toasts(page)}\n"
                                 f"{log()}") from None
        page.locator("#hs-title").click()  # focus leaves the text fields
        page.evaluate("document.addEventListener('keydown', e => console.log('key ' + e.key + ' at '"
                      " + document.activeElement.tagName), true)")  # for the page log: did the press arrive?
        shown = []
        for k in range(20):
            rid = page.evaluate(RID)
            shown.append(rid)
            page.keyboard.press(str(1 + k % 5))
            try:
                page.wait_for_function(f"{RID} !== '{rid}'", timeout=90_000)
            except Exception:  # noqa: BLE001 - a lost key press must say where the page stood
                raise AssertionError(f"press {k + 1} (key {1 + k % 5}) did not move on from {rid}: "
                                     f"{_where_the_page_stood(page, store)}\n{log()}") from None
            assert len(store.list_events(annotator="ria", kind="rating")) == k + 1  # one press, one rating
        ratings = store.list_events(annotator="ria", kind="rating")
        assert [(e.response_id, e.value) for e in ratings] == [(r, 1 + k % 5) for k, r in enumerate(shown)]
        responses = [store.get_response(r) for r in shown]
        samples = [store.get_sample(r.sample_id) for r in responses]
        assert len({r.run_id for r in responses}) == 4 and len({s.image_key for s in samples}) >= 5
        assert all(a.run_id != b.run_id for a, b in zip(responses, responses[1:]))  # models take turns

        page.keyboard.press("u")
        page.wait_for_function("document.querySelector('#ann-status')?.innerText.includes('undid')", timeout=90_000)
        status = page.locator("#ann-status").inner_text()
        assert "undid your rating 5 of" in status and samples[-1].image_key in status and "not the one" in status
        assert not any(m in status for m in MODELS)  # rating blind: the message does not name the model
        page.screenshot(path=str(ARTIFACTS / "annotate-undo.png"))
        on_screen = page.evaluate(RID)
        page.reload()
        page.wait_for_function(f"{RID} === '{on_screen}'", timeout=90_000)
        assert page.locator("#ann-rating-box").is_visible()  # the Annotate tab, not the Overview
        browser.close()
