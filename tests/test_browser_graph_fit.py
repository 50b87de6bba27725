"""In headless Chromium at 1,400 x 900: Inspect's two graphs of a dense response fit their panels.

A reference scene graph of many objects with long attribute lists and a response naming as many objects, attributes
and relations: once drawn, every node's bounding box lies within its frame's canvas (nothing cut at an edge) and
the drawing is not shrunk past legibility (a
dense graph gets a taller frame). Screenshot: ``test-artifacts/inspect-dense-graphs.png``.
"""

from __future__ import annotations

import os

import pytest
from reliability_helpers import free_port
from test_browser import ARTIFACTS, CHROMIUM, browser  # noqa: F401  (browser: fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OBJECTS = [("sky", ["blue", "clear", "cloudless"]), ("roof", ["orange", "tiled", "sloped", "old"]),
           ("house", ["white", "two-storey", "wooden"]), ("tree", ["green", "tall", "leafy"]),
           ("car", ["red", "parked", "small"]), ("fence", ["white", "picket", "long"]), ("dog", ["brown", "small"]),
           ("person", ["walking", "young"]), ("window", ["square", "open"]), ("door", ["red", "closed"]),
           ("chimney", ["brick", "narrow"]), ("road", ["grey", "wet"]), ("bicycle", ["blue", "leaning"]),
           ("mailbox", ["black", "metal"]), ("garden", ["flowering", "lush"]), ("bird", ["black", "flying"])]
RELATIONS = [("roof", "on top of", "house"), ("tree", "next to", "house"), ("car", "parked on", "road"),
             ("fence", "in front of", "house"), ("dog", "behind", "fence"), ("person", "walking on", "road"),
             ("window", "part of", "house"), ("door", "part of", "house"), ("chimney", "on", "roof"),
             ("bicycle", "leaning on", "fence"), ("mailbox", "next to", "road"), ("garden", "in front of", "house"),
             ("bird", "above", "tree"), ("sky", "above", "roof"), ("person", "holding", "dog")]
TEXT = ("A white two-storey wooden house with an orange tiled roof stands under a clear blue sky. A red car is parked "
        "on the wet road; a young person walks a brown dog behind a long white picket fence, where a blue bicycle "
        "leans. A tall green tree, a black mailbox, a lush flowering garden and a brick chimney complete the scene.")

FITTED = """() => {
  const c = document.querySelector('#mynetwork canvas');
  const w = c.clientWidth, h = c.clientHeight;
  const out = network.body.nodeIndices.filter(id => {
    const bb = network.getBoundingBox(id);
    const a = network.canvasToDOM({x: bb.left, y: bb.top}), b = network.canvasToDOM({x: bb.right, y: bb.bottom});
    return !(a.x >= -1 && a.y >= -1 && b.x <= w + 1 && b.y <= h + 1);
  });
  const fonts = network.body.nodeIndices.map(id => network.body.nodes[id].options.font.size);
  return {outside: out, scale: network.getScale(), nodes: network.body.nodeIndices.length, width: w, height: h,
          smallest_font_px: Math.min(...fonts) * network.getScale()};
}"""


@pytest.fixture(scope="module")
def dense_app(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from hallu_studio.model import Benchmark, Response, Run, Sample, SceneGraph, Score
    from hallu_studio.store import Store

    store = Store(tmp_path_factory.mktemp("dense") / "dense.duckdb")
    ids = {name: f"o{i}" for i, (name, _) in enumerate(OBJECTS)}
    graph = SceneGraph.from_dict({
        "objects": [{"id": ids[n], "name": n, "attributes": a} for n, a in OBJECTS],
        "relations": [{"subject": ids[s], "predicate": p, "object": ids[o]} for s, p, o in RELATIONS]})
    sample = Sample(id="dense/house", benchmark="dense", image_key="house", task="caption", scene_graph=graph)
    store.add_samples(Benchmark("dense", "a dense scene", "tests/test_browser_graph_fit.py"), [sample], [])
    run = Run(id="run-dense", benchmark="dense", model="m1", backend="recorded")
    store.add_run(run)
    response = Response(run.id, sample.id, TEXT)
    store.add_responses([response])
    concepts = {"objects": [n for n, _ in OBJECTS], "attributes": [[n, a] for n, attrs in OBJECTS for a in attrs[:2]],
                "relations": [list(r) for r in RELATIONS]}
    triplets = [{"triplet": list(r), "verdict": "supported" if i % 3 else "relation", "kind": "relation"}
                for i, r in enumerate(RELATIONS)]
    store.put_scores([Score(response.id, "concepts", "k", {"objects": len(OBJECTS)}, {"extractor": "test",
                                                                                     "concepts": concepts}),
                      Score(response.id, "trihe", "k", {"n_triplets": len(triplets)},
                            {"judge": "graph", "triplets": triplets})])
    demo = build_app(AppContext(store=store))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield url, response.id
    demo.close()
    store.close()


def test_dense_graphs_fit_their_panels_at_1400_by_900(dense_app, browser):
    url, response_id = dense_app
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    page.wait_for_selector("#overview-leaderboard", state="attached", timeout=180_000)
    page.get_by_role("tab", name="Inspect").click()
    box = page.locator("#inspect-response-id textarea, #inspect-response-id input").first
    box.fill(response_id)
    box.press("Enter")
    page.wait_for_function(f"document.querySelector('#inspect-header')?.innerText.includes('{response_id}')",
                           timeout=90_000)
    seen = {}
    for graph in ("#inspect-ref-graph", "#inspect-resp-graph"):
        frame = page.locator(f"{graph} iframe").element_handle().content_frame()
        frame.wait_for_function("typeof network !== 'undefined' && network.body.nodeIndices.length > 0",
                                timeout=90_000)
        try:  # drawn, then fitted: under load that takes longer than a fixed pause
            frame.wait_for_function(f"({FITTED})().outside.length === 0", timeout=45_000, polling=250)
        except Exception:  # noqa: BLE001 - the assertions below say what was seen
            pass
        seen[graph] = frame.evaluate(FITTED)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#inspect-ref-graph").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "inspect-dense-graphs.png"))
    for graph, got in seen.items():
        assert got["nodes"] >= len(OBJECTS), got
        assert not got["outside"], f"{graph}: nodes cut at the canvas's edge: {got}"
        # object labels (20 px) drawn at 8 px or more, attribute ovals' (16 px) at 6.4 or more: small, still legible
        assert got["scale"] >= 0.4, f"{graph}: labels drawn too small to read: {got}"
    page.close()
