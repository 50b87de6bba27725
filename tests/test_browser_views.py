"""The views as a user meets them, in headless Chromium (issue 11): Browse's order, rounding, reasons and
ranges; Inspect's fitted graphs, heatmaps, closed panels and A/B panel; Annotate's toasts and current
rating; Study computed on opening; Run's states and cancel buttons; Settings saved to the file."""

from __future__ import annotations

import json

import os
import re
import threading

import pytest
from reliability_helpers import free_port
from test_browser import CHROMIUM, browser, show_in_inspect  # noqa: F401 - the shared Chromium fixture

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HEX_KEY = re.compile(r"\b[0-9a-f]{16}\b")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from hallu_studio import annotation
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from synthetic_store import fill_synthetic_store
    from hallu_studio.store import Store

    folder = tmp_path_factory.mktemp("views")
    config = folder / "hallu-studio.toml"
    config.write_text("# the team's settings\n[decoding]\ndtc_alpha = 0.2\n", encoding="utf-8")
    old = os.environ.get("HALLU_STUDIO_CONFIG")
    os.environ["HALLU_STUDIO_CONFIG"] = str(config)
    store = Store(folder / "views.duckdb")
    ids = fill_synthetic_store(store, n_samples=8)
    for who, shift in (("rater-a", 0), ("rater-b", 1)):
        for n, rid in enumerate(ids[:10]):  # the rest stays in the annotation queue
            annotation.rate(store, who, rid, 1 + (n + shift) % 5)
    ctx = AppContext(store=store)
    demo = build_app(ctx)
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield ctx, ids, url, config
    demo.close()
    store.close()
    if old is None:
        os.environ.pop("HALLU_STUDIO_CONFIG", None)
    else:
        os.environ["HALLU_STUDIO_CONFIG"] = old


def _page(browser, url: str, tab: str):  # noqa: F811 - the fixture's value
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.get_by_role("tab", name=tab).wait_for(timeout=90_000)
    page.get_by_role("tab", name=tab).click()
    page.wait_for_timeout(400)
    return page


def _value(page, elem_id: str) -> str:
    return page.locator(f"#{elem_id} textarea, #{elem_id} input").first.input_value()


def _fill(page, elem_id: str, text: str) -> None:
    box = page.locator(f"#{elem_id} textarea, #{elem_id} input").first
    box.fill(text)
    box.press("Tab")  # leave the field, as a person does before clicking: the value is committed


def _no_error_badges(page) -> None:
    assert page.get_by_text("Error", exact=True).count() == 0


def test_browse_opens_on_hallucinated_claims_rounded_with_reasons_and_several_ranges(app, browser):  # noqa: F811
    ctx, ids, url, _ = app
    page = _page(browser, url, "Browse")
    page.wait_for_selector("#browse-table .body-cell", timeout=90_000)
    assert "sorted by Tri-HE hallucinated claims ↓ (claims)" in page.locator("#browse-status").inner_text()
    cells = page.locator("#browse-table .body-cell").all_inner_texts()
    assert cells and not [c for c in cells if re.fullmatch(r"-?\d+\.\d{4,}", c.strip())]  # no 96.39007275803542
    # Reefknot applies to a few tasks only: its empty cells say so on hover
    titles = [page.locator("#browse-table .hs-missing").nth(i).get_attribute("title")
              for i in range(min(3, page.locator("#browse-table .hs-missing").count()))]
    assert titles and all(t.startswith(("not applicable to this task", "not scored yet", "failed", "undefined"))
                          for t in titles)
    assert page.locator("#browse-table .hs-num").first.get_attribute("title")  # the exact number on hover

    page.locator("#browse-ranges").get_by_text("metric ranges").click()
    # Typed as a person types, each field left with Tab before the click: a value set by fill() and
    # clicked away within the same millisecond can miss the click's payload on a loaded machine.
    for field, value in (("browse-min-emd-total", "30"), ("browse-max-trihe-hallucinated", "1")):
        box = page.locator(f"#{field} input").first
        box.click()
        box.press_sequentially(value, delay=30)
        box.press("Tab")
    page.wait_for_timeout(300)
    page.click("#browse-apply")
    rows = ctx.store.browse_responses({}, ["emd.total", "trihe.hallucinated"], limit=1000)
    expected = sum(1 for r in rows if r["emd.total"] is not None and r["emd.total"] >= 30
                   and r["trihe.hallucinated"] is not None and r["trihe.hallucinated"] <= 1)
    assert 0 < expected < len(rows)
    # a loaded machine (CI beside other work) can take well over 15 s for one event: wait, then say what showed
    try:
        page.wait_for_function(
            f"document.querySelector('#browse-status')?.innerText.startsWith('{expected} responses')", timeout=180_000)
    except Exception:  # noqa: BLE001 - the assertion says what the page showed instead
        pass
    status = page.locator("#browse-status").inner_text()
    assert status.startswith(f"{expected} responses"), (expected, status)
    page.close()


_FITTED = """() => {
  const c = document.querySelector('#mynetwork canvas');
  const w = c.clientWidth, h = c.clientHeight;
  const inside = network.body.nodeIndices.every(id => {
    const bb = network.getBoundingBox(id);
    const a = network.canvasToDOM({x: bb.left, y: bb.top}), b = network.canvasToDOM({x: bb.right, y: bb.bottom});
    return a.x >= -2 && a.y >= -2 && b.x <= w + 2 && b.y <= h + 2;
  });
  return {inside, scale: network.getScale(), nodes: network.body.nodeIndices.length};
}"""


def test_inspect_fits_graphs_closes_panels_and_shows_ab_only_when_comparing(app, browser):  # noqa: F811
    page = _page(browser, app[2], "Inspect")
    page.wait_for_function("document.querySelector('#inspect-position')?.innerText.includes('of')", timeout=180_000)
    for graph in ("#inspect-ref-graph", "#inspect-resp-graph"):
        frame = page.locator(f"{graph} iframe").element_handle().content_frame()
        frame.wait_for_function("typeof network !== 'undefined' && network.body.nodeIndices.length > 0",
                                timeout=45_000)
        # the layout settles, then the view fits: wait for that (under load it takes longer than a fixed pause)
        try:
            frame.wait_for_function(f"({_FITTED})().inside", timeout=45_000, polling=250)
        except Exception:  # noqa: BLE001 - the assertion below says what was seen
            pass
        fit = frame.evaluate(_FITTED)
        assert fit["inside"] and fit["scale"] >= 0.5, fit
    # side by side, nothing to open: the transport plan and the edit diff show beside the graphs; no A/B buttons
    # without a comparison
    assert not page.locator("#prefer-left").is_visible()
    for panel in ("#inspect-transport-plan", "#inspect-edit-diff", "#inspect-evidence"):
        assert page.locator(panel).is_visible()
    if page.locator("#inspect-transport-plan .hs-heatmap-legend").count():
        assert "mass moved: the share" in page.locator("#inspect-transport-plan").inner_text()
        box = page.locator("#inspect-transport-plan .hs-scroll:visible").first
        assert box.evaluate("e => getComputedStyle(e).maxHeight") == "none"  # no tiny box of its own
        panel = page.locator("#inspect-transport-plan").bounding_box()
        inner = box.bounding_box()
        assert inner["x"] + inner["width"] <= panel["x"] + panel["width"] + 1  # never spills out
        # one concept type at a time; a tab shows another (no script: radio buttons and CSS)
        tabs = page.locator("#inspect-transport-plan label.hs-emd-tab")
        if tabs.count() > 1:
            shown = page.locator("#inspect-transport-plan .hs-emd-pane:visible")
            assert shown.count() == 1
            before = shown.first.get_attribute("data-type")
            other = next(i for i in range(tabs.count()) if not tabs.nth(i).inner_text().startswith(before))
            tabs.nth(other).click()
            page.wait_for_timeout(200)
            assert shown.count() == 1 and shown.first.get_attribute("data-type") != before
    page.locator("#inspect-compare-choice input").first.click()
    page.locator("ul[role=listbox] li").first.click()
    page.wait_for_selector("#prefer-left", state="visible", timeout=45_000)
    assert page.locator("#inspect-compare").is_visible()
    page.click("#inspect-next")  # a new response: nothing compared, the A/B panel goes
    page.wait_for_selector("#prefer-left", state="hidden", timeout=45_000)
    page.close()


def test_annotate_toasts_mistakes_and_marks_your_current_rating(app, browser, capfd):  # noqa: F811
    ctx, _, url, _ = app
    page = _page(browser, url, "Annotate")
    page.click("#ann-start")  # no name yet
    toast = page.locator("[data-testid='toast-body']")
    toast.first.wait_for(timeout=90_000)
    page.wait_for_timeout(500)
    assert toast.count() == 1 and "annotator name first (the app runs without sign-in)" in toast.first.inner_text()
    _no_error_badges(page)
    assert _value(page, "ann-response-id") == ""  # nothing was read or written

    _fill(page, "annotator-name", "lee")
    page.click("#ann-start")
    page.wait_for_function("document.querySelector('#ann-response-id textarea, #ann-response-id input')"
                           "?.value.startsWith('resp-')", timeout=45_000)
    rid = _value(page, "ann-response-id")
    assert page.locator("#ann-item .hs-unrated").count() == 1
    page.locator("#ann-advance input").uncheck()  # stay on the item after rating it, to rate it again
    page.locator("#hs-title").click()
    page.keyboard.press("4")
    page.wait_for_selector("#ann-item .hs-your-rating[data-rating='4']", timeout=45_000)
    assert "primary" in page.locator("#rate-4").get_attribute("class")
    page.keyboard.press("2")
    page.wait_for_selector("#ann-item .hs-your-rating[data-rating='2']", timeout=45_000)
    page.keyboard.press("u")  # the 2 is undone: the 4 is the rating in force again
    page.wait_for_selector("#ann-item .hs-your-rating[data-rating='4']", timeout=45_000)
    page.keyboard.press("j")
    page.wait_for_function(f"document.querySelector('#ann-response-id textarea, #ann-response-id input')"
                           f"?.value !== '{rid}'", timeout=45_000)
    page.keyboard.press("k")  # back: your rating of it is shown again
    page.wait_for_selector("#ann-item .hs-your-rating[data-rating='4']", timeout=45_000)
    assert "primary" in page.locator("#rate-4").get_attribute("class")
    assert "primary" not in page.locator("#rate-2").get_attribute("class")

    # a mistake of the right kind: one toast, no traceback in the terminal
    page.locator("#ann-task label", has_text="correct the judges").click()
    page.wait_for_selector("#ann-correct", state="visible", timeout=45_000)
    page.click("#ann-correct")  # no triplet chosen
    page.wait_for_function("[...document.querySelectorAll(\"[data-testid='toast-body']\")]"
                           ".some(t => t.innerText.includes('choose a triplet'))", timeout=90_000)
    _no_error_badges(page)

    page.locator("#tab-annotate").get_by_text("export the ratings").click()
    page.click("#ann-export")
    page.wait_for_function("['ratings_resolved', 'judgments_event_log'].every(name => document.querySelector("
                           "'#ann-export-files')?.innerText.includes(name))", timeout=45_000)
    from hallu_studio.app.tabs.annotate import export_ratings

    import csv

    with open(export_ratings(ctx)[0], encoding="utf-8", newline="") as fh:
        resolved = list(csv.DictReader(fh))
    assert [r["rating"] for r in resolved if r["response_id"] == rid and r["annotator"] == "lee"] == ["4"]
    assert "Traceback" not in capfd.readouterr().err
    page.close()


def test_study_is_computed_on_opening_and_reads_as_tables_for_people(app, browser):  # noqa: F811
    page = _page(browser, app[2], "Study")
    page.wait_for_selector("#study-correlations table", timeout=180_000)  # no button pressed
    page.wait_for_selector("#study-agreement table", timeout=180_000)
    text = page.locator("#study-correlations").inner_text() + page.locator("#study-agreement").inner_text()
    assert "settings" in text and "Pearson (95% CI)" in text and "Krippendorff" in text
    assert "nan" not in text.split() and "{" not in text and not HEX_KEY.search(text)
    for cell in page.locator("#study-correlations td").all_inner_texts():
        assert not re.search(r"\d\.\d{5,}|[1-9]\.\d{3,}|[1-9]\d\.\d{2,}", cell), cell  # 3 significant digits
    page.close()


def test_run_shows_true_states_and_a_cancel_button_per_job(app, browser):  # noqa: F811
    ctx = app[0]
    release = threading.Event()

    def slow(cancel, progress):
        progress(3, 10)
        release.wait(30)
        progress(5, 10, "scoring")
        return "done"

    first = ctx.jobs.submit("slow stand-in run", slow)
    second = ctx.jobs.submit("waiting stand-in run", lambda cancel, progress: "ran")
    page = _page(browser, app[2], "Run")
    try:
        page.wait_for_selector(f"#run-cancel-{first.id}", timeout=45_000)
        page.wait_for_selector(f"#run-cancel-{second.id}", timeout=45_000)
        jobs = page.locator("#run-jobs").inner_text()
        assert "running" in jobs and "queued" in jobs and "3/10 generated" in jobs
        page.click(f"#run-cancel-{second.id}")
        page.wait_for_function("document.querySelector('#run-jobs')?.innerText.includes('cancelled')",
                               timeout=45_000)
        page.wait_for_selector(f"#run-cancel-{second.id}", state="detached", timeout=45_000)
        release.set()
        assert ctx.jobs.wait(first.id, 15).status == "completed"
        assert ctx.jobs.wait(second.id, 1).status == "cancelled"
        page.wait_for_selector(f"#run-cancel-{first.id}", state="detached", timeout=45_000)
    finally:
        release.set()
        page.close()


def test_settings_are_validated_and_saved_to_the_file(app, browser):  # noqa: F811
    ctx, _, url, config = app
    page = _page(browser, url, "Settings")
    field = "setting-scoring-trihe_support_threshold"
    _fill(page, field, "3")
    page.click("#settings-save")
    page.wait_for_function("[...document.querySelectorAll(\"[data-testid='toast-body']\")]"
                           ".some(t => t.innerText.includes('between 0 and 1'))", timeout=45_000)
    _no_error_badges(page)
    assert "trihe_support_threshold" not in config.read_text(encoding="utf-8")

    _fill(page, field, "0.65")
    page.click("#settings-save")
    page.wait_for_function("document.querySelector('#settings-saved')?.innerText.includes('saved to')",
                           timeout=180_000)
    text = config.read_text(encoding="utf-8")
    assert "trihe_support_threshold = 0.65" in text and "# the team's settings" in text and "dtc_alpha = 0.2" in text
    assert ctx.settings.scoring.trihe_support_threshold == 0.65
    assert "0.65" in page.locator("#settings-table").inner_text()
    assert page.get_by_text("mark the configurations these settings produce").count() == 0
    page.close()


_HEADERS = """() => [...document.querySelectorAll('#browse-table thead th')].map(e => {
  const r = e.getBoundingClientRect(); return {text: e.innerText.trim(), left: r.left, right: r.right};
})"""


def test_browse_people_and_judges_disagree_on_screen_and_in_inspect(app, browser):  # noqa: F811
    from hallu_studio.app.tabs.browse import PEOPLE
    from hallu_studio.studies.people_judges import disagreeing_responses

    ctx, _, url, _ = app
    expected = disagreeing_responses(ctx.store, ctx.in_force())  # the fixture's ratings against the judges
    assert expected
    page = _page(browser, url, "Browse")
    page.set_viewport_size({"width": 1400, "height": 900})
    page.wait_for_selector("#browse-table .body-cell", timeout=90_000)
    assert "people and judges disagree:" in page.locator("#browse-people-rule").inner_text()  # the rule, said
    page.locator("#browse-differs").get_by_text("people and judges disagree").click()
    page.click("#browse-apply")
    try:
        page.wait_for_function(
            f"document.querySelector('#browse-status')?.innerText.startsWith('{len(expected)} responses')",
            timeout=180_000)
    except Exception:  # noqa: BLE001 - the assertion says what the page showed instead
        pass
    assert page.locator("#browse-status").inner_text().startswith(f"{len(expected)} responses")
    # The column filtered on and the one sorted on sit on screen at 1,400 px, right after the response (the status
    # line can come before the table has redrawn on a busy machine: wait for the new column).
    page.wait_for_function(f"[...document.querySelectorAll('#browse-table th')].some(h => h.innerText.includes("
                           f"{json.dumps(PEOPLE)}))", timeout=90_000)
    page.wait_for_function("[...document.querySelectorAll('#browse-table .body-cell')].some(c => "
                           "c.innerText.includes('disagree ('))", timeout=90_000)
    heads = page.evaluate(_HEADERS)
    on_screen = [h["text"] for h in heads if h["right"] <= 1400 and h["left"] >= 0]
    assert PEOPLE in on_screen and any(h.startswith("Tri-HE") for h in on_screen), heads
    assert "disagree (" in " ".join(page.locator("#browse-table .body-cell").all_inner_texts())
    # Inspect, stepping through the filter, shows people's ratings beside the judges' calls.
    page.get_by_role("tab", name="Inspect").click()
    page.wait_for_function("document.querySelector('#inspect-position')?.innerText.includes('of')", timeout=90_000)
    rid = sorted(expected)[0]
    show_in_inspect(page, rid)
    assert rid in page.locator("#inspect-header").inner_text()
    assert "people: app" in page.locator("#inspect-header").inner_text()
    panel = page.locator("#inspect-people").inner_text()
    assert "disagree" in panel and "rating" in panel and expected[rid][0] in panel
    page.close()
