"""HTML injection: every HTML the views render from a store whose every label is markup.

Each page is parsed with ``html.parser``; no element or event-handler attribute may come from the
payload (``reliability_helpers.find_payload``), including inside the graphs' ``srcdoc`` pages.
The browser half (every tab in Chromium, ``window.__xss`` never set) is
``test_reliability_browser.py``.
"""

from __future__ import annotations

import pytest
from reliability_helpers import REMOTE, XSS, XSS_NO_SLASH, fill_hostile_store, find_payload

from hallu_studio.app import AppContext, render
from hallu_studio.app.inspection import inspect_response
from hallu_studio.store import Store


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("xss") / "xss.duckdb")
    ids = fill_hostile_store(store)
    yield AppContext(store=store), ids
    store.close()


def _clean(name: str, page: str) -> None:
    assert isinstance(page, str), name
    found = find_payload(page)
    assert not found, f"{name}: payload became markup: {found[:3]}"


def test_the_checker_itself_sees_unescaped_payload():
    # Guards the guard: a renderer that forgot html.escape must fail these tests.
    assert find_payload(f"<p>{XSS}</p>")
    assert find_payload(f'<iframe srcdoc="{XSS.replace(chr(34), "&quot;")}"></iframe>')
    assert find_payload("<script>window.__xss=2</script>")
    import html
    assert not find_payload(f"<p title=\"{html.escape(XSS)}\">{html.escape(XSS)}</p>")


def test_every_inspect_panel_of_a_hostile_response_is_inert(hostile):
    ctx, ids = hostile
    panels = inspect_response(ctx.store, ids["response"])
    for name in ("header", "image", "reference_graph", "response_graph", "response_text", "evidence",
                 "disagreements"):
        _clean(name, getattr(panels, name))
    for kind, drawing in panels.drawings.items():
        _clean(kind, drawing)
    assert "&lt;script&gt;" in panels.response_text  # shown as text, not dropped
    # and every synthetic response of the hostile model and benchmark
    for rid in ctx.store.response_ids():
        p = inspect_response(ctx.store, rid, with_graphs=False)
        for name in ("header", "response_text", "evidence", "disagreements"):
            _clean(f"{rid} {name}", getattr(p, name))
        for kind, drawing in p.drawings.items():
            _clean(f"{rid} {kind}", drawing)


def test_renderers_called_directly_with_hostile_evidence():
    _clean("records_table_html", render.records_table_html([{XSS: XSS, "n": 1}], css_class=XSS, empty=XSS))
    _clean("records_table empty", render.records_table_html([], empty=XSS))
    _clean("image_html", render.image_html(None, None, alt=XSS, missing_reason=XSS))
    _clean("image_html svg", render.image_html(b"<svg onload=window.__xss=3>", "image/svg+xml", alt=XSS))
    _clean("graph_iframe empty", render.graph_iframe(None, title=XSS, empty=XSS))
    with pytest.raises(ValueError, match="unknown op"):  # a clear error, not a page
        render.edit_diff_html({"alignment": [[XSS, [XSS], []]]})
    _clean("edit_diff_html", render.edit_diff_html({"alignment": [["substitute", [XSS], [XSS]], ["delete", [XSS], []]],
                                                    "original": XSS, "revised": XSS, "reviser": XSS},
                                                   {"distance": XSS, "per_word": XSS}))
    _clean("transport_heatmaps_html", render.transport_heatmaps_html(
        {"model": XSS, "types": {XSS: {"reference": [XSS], "response": [XSS], "cost": [[0.5]], "plan": [[1.0]],
                                       "per_concept_cost": [0.5]}}}, {XSS: XSS}))
    _clean("halfscore_html", render.halfscore_html({"matcher": XSS, "hallucinated": [[XSS, XSS]], "omitted": [XSS],
                                                    "matched": [[[XSS], [XSS], XSS]]}, {XSS: XSS}))
    _clean("reefknot_html", render.reefknot_html({"task": XSS, "entropy": XSS}, {"parsed_answer": XSS, "label": XSS,
                                                                                 "method": XSS}, {XSS: XSS}))
    _clean("triplet_verdicts_html", render.triplet_verdicts_html(
        [(XSS, {"judge": XSS, "triplets": [{"triplet": [XSS, XSS, XSS], "verdict": XSS, "reason": XSS,
                                            "score": XSS}]})], {0: XSS}))
    _clean("logit_lens_svg", render.logit_lens_svg({"layers": [{"layer": XSS, "tokens": [XSS], "probs": [0.5]}]}))
    _clean("highlight_spans_html", render.highlight_spans_html(XSS, render.response_spans(
        {"objects": [XSS], "object_spans": [[0, 5]]}, None)))
    _clean("scene_graph_html", render.graph_iframe(render.scene_graph_html(__import__(
        "hallu_studio.model", fromlist=["SceneGraph"]).SceneGraph.from_dict(
        {"objects": [{"id": XSS, "name": XSS, "attributes": [XSS]}],
         "relations": [{"subject": XSS, "predicate": XSS, "object": XSS}]}))))


def test_tab_tables_with_hostile_models_benchmarks_judges_and_annotators(hostile):
    from hallu_studio.app.tabs import overview, run, settings, study_compute

    ctx, _ = hostile
    _clean("leaderboard", overview.leaderboard_html(ctx, None, False))
    _clean("leaderboard by domain", overview.leaderboard_html(ctx, None, True))
    _clean("settings", settings.settings_html(ctx))
    _clean("configs", settings.configs_html(ctx))
    _clean("jobs", run.jobs_table(ctx))
    for key, page in study_compute.all_tables_html(ctx).items():
        _clean(f"study {key}", page)


def test_markdown_status_lines_with_hostile_names(hostile):
    # What reaches gr.Markdown, rendered by a CommonMark renderer with raw HTML on (as permissive as Gradio's):
    # the names show as text, no image or element forms (the browser half: test_reliability_browser.py).
    markdown_it = pytest.importorskip("markdown_it")
    from hallu_studio.app.tabs import annotate, browse

    ctx, _ = hostile
    render = markdown_it.MarkdownIt("commonmark", {"html": True}).render
    lines = {"annotate progress": annotate._status(ctx, XSS, "rated"),
             "?view= a stored hostile name": browse.load_view_or_default(ctx, XSS_NO_SLASH)[-1],
             "?view= a markdown image": browse.load_view_or_default(ctx, REMOTE)[-1]}
    for name, line in lines.items():
        page = render(line)
        _clean(name, page)
        assert "<img" not in page and "<a " not in page, (name, page)
    assert "![x](http://evil.example/md.png)" in __import__("html").unescape(render(lines["annotate progress"]))
