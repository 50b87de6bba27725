"""Take the documentation screenshots of the views at 1,400 px, in Debian's Chromium.

    python scripts/screenshots.py --db demo.duckdb [--out docs/screenshots] [--views browse,inspect]

The store should hold the offline demo (start the app once on it and let the first start finish),
and may hold a study (the documentation's has one, rated by scripted stand-ins); the script serves it
on a free local port, opens each view as a user would (Inspect on a dense description, Annotate in the
first study after a rating) and writes ``<view>.png``. Nothing is fetched from outside the machine.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
VIEWS = ("overview", "browse", "inspect", "annotate", "study", "run", "settings")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name.capitalize()).click()
    page.wait_for_timeout(600)


def _dense_response(store) -> str | None:
    """The first described image (in store order) that every side-by-side drawing of Inspect has a score for."""
    from hallu_studio.app.inspection import SIDE_BY_SIDE
    from hallu_studio.metrics.registry import metric_specs

    wanted = {s.name for s in metric_specs() if s.panel in SIDE_BY_SIDE}
    for rid in store.browse_response_ids({"tasks": ["caption"]}, [])[:200]:
        if wanted <= {s.metric for s in store.get_scores(rid)}:
            return rid
    return None


def shoot(page, view: str, out: Path, inspect_id: str | None = None) -> None:
    _tab(page, view)
    if view == "overview":
        page.wait_for_selector("#overview-leaderboard table.hs-rank", timeout=120_000)
        page.wait_for_timeout(1000)
    elif view == "browse":
        page.wait_for_selector("#browse-table .body-cell", timeout=30_000)
    elif view == "inspect":
        page.wait_for_function("document.querySelector('#inspect-position')?.innerText.includes('of')",
                               timeout=30_000)
        if inspect_id:  # a dense description: every panel side by side has something to show
            box = page.locator("#inspect-response-id textarea, #inspect-response-id input").first
            box.fill(inspect_id)
            box.press("Enter")
            page.wait_for_function(f"document.querySelector('#inspect-header')?.innerText.includes('{inspect_id}')",
                                   timeout=30_000)
        page.frame_locator("#inspect-resp-graph iframe").locator("canvas").first.wait_for(timeout=30_000)
        page.wait_for_timeout(2500)  # the graphs settle and fit
    elif view == "annotate":
        page.locator("#annotator-name textarea, #annotator-name input").first.fill("demo-annotator")
        # the first study, where the store has one (rated blind); else every response
        page.locator("#ann-study input").first.click()
        options = page.get_by_role("option")
        options.nth(1 if options.count() > 1 else 0).click()
        page.click("#ann-start")
        page.wait_for_function("document.querySelector('#ann-response-id textarea, #ann-response-id input')"
                               "?.value.length > 0", timeout=30_000)
        page.click("#rate-4")
        page.wait_for_selector("#ann-item .hs-your-rating[data-rating='4']", timeout=30_000)
    elif view == "study":
        page.wait_for_selector("#study-correlations table, #study-correlations .hs-empty", timeout=120_000)
        page.wait_for_timeout(1500)
    elif view == "run":
        page.wait_for_selector("#run-runs table", timeout=30_000)
    elif view == "settings":
        page.wait_for_selector("#settings-table table", timeout=30_000)
    page.screenshot(path=str(out / f"{view}.png"), full_page=True)
    print(f"wrote {out / f'{view}.png'}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--db", required=True, help="a store holding the offline demo")
    p.add_argument("--out", default="docs/screenshots")
    p.add_argument("--views", default=",".join(VIEWS))
    args = p.parse_args(argv)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from playwright.sync_api import sync_playwright

    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from hallu_studio.config import load_settings
    from hallu_studio.store import Store

    if not Path(args.db).exists():
        print(f"error: {args.db} does not exist", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = Store(args.db)
    demo = build_app(AppContext(store=store, settings=load_settings()))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=_free_port(),
                            quiet=True, footer_links=[], **launch_kwargs())
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            page.wait_for_timeout(3000)
            dense = _dense_response(store)
            for view in [v.strip() for v in args.views.split(",") if v.strip()]:
                shoot(page, view, out, dense)
            browser.close()
    finally:
        demo.close()
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
