"""The first start's banner and the open Overview agree at the end: the banner says done only once the page's
Overview is drawn from every score (no "Partial runs" beside it), without a reload.

The first start's steps are stand-ins here (a small synthetic benchmark scored in three batches) and the Overview
is made slow to redraw, so the banner would run ahead of it if it did not wait. Screenshot in ``test-artifacts/``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from reliability_helpers import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
REDRAW_S = 4.0  # how long the Overview takes to redraw here


def test_the_banner_says_done_only_beside_an_overview_drawn_from_every_score(tmp_path, monkeypatch):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from hallu_studio.app.bootstrap import BootstrapSteps
    from hallu_studio.app.main import start_demo
    from synthetic_store import fill_synthetic_store
    from hallu_studio.app.tabs import overview
    from hallu_studio.store import Store

    source = Store(":memory:")
    fill_synthetic_store(source, n_samples=12)
    store = Store(tmp_path / "first.duckdb")

    def import_sample(st: Store) -> str:
        samples = list(source.iter_samples())
        images = {s.image_sha256: source.get_image(s.image_sha256) for s in samples}
        st.add_samples(source.get_benchmark("synthetic-ui"), samples,
                       [(sha, mime, 64, 48, data) for sha, (data, mime) in images.items()])
        return "synthetic-ui"

    def run_probes(st: Store, benchmark: str) -> None:
        for run in source.list_runs():
            st.add_run(source.get_run(run["id"]))
        st.add_responses(list(source.iter_responses()))

    def score(st: Store, settings: object) -> None:
        scores = [s for _, s in source.iter_scores(None, with_evidence=True)]
        for k in range(3):  # three batches, a while apart: the open page sees partial runs first
            time.sleep(REDRAW_S + 4)  # longer than a redraw (and the first one's configuration in force)
            st.put_scores(scores[k::3])

    slow = overview.leaderboard_html

    def slow_redraw(*args, **kwargs):
        time.sleep(REDRAW_S)
        return slow(*args, **kwargs)

    monkeypatch.setattr(overview, "leaderboard_html", slow_redraw)
    ctx = AppContext(store=store)
    start_demo(ctx, BootstrapSteps(import_sample=import_sample, run_probes=run_probes, score=score))
    demo = build_app(ctx)
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    seen = []
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            start = time.monotonic()
            while time.monotonic() - start < 240:
                banner = page.locator("#hs-banner").inner_text() if page.locator("#hs-banner").is_visible() else ""
                board = page.locator("#overview-leaderboard").inner_text()
                seen.append((banner, "Partial runs" in board))
                if banner.startswith("Done"):
                    break
                time.sleep(0.25)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "first-start-done.png"), full_page=True)
            final = page.locator("#overview-leaderboard").inner_text()
            browser.close()
    finally:
        demo.close()
        store.close()
    assert any(partial for _, partial in seen), "the page should have shown partial runs while scoring"
    assert any(b.startswith("Working") for b, _ in seen)
    assert seen[-1][0].startswith("Done: the offline demo is ready: all 24 responses scored"), seen[-3:]
    assert not any(b.startswith("Done") and partial for b, partial in seen), "done beside a partial Overview"
    assert "Partial runs" not in final and "of 12 scored" not in final
    assert any(b.startswith("Almost done") for b, _ in seen), "the banner waited for the Overview"
