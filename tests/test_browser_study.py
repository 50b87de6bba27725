"""In headless Chromium: a blind study rated as a user would, the Study view's per-study agreement and sources,
and Inspect's graphs (each attribute its own verdict's colour, nothing overlapping, every attribute shown).

Screenshots go to ``test-artifacts/`` (gitignored).
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import pytest
from reliability_helpers import free_port
from test_browser import show_in_inspect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
MODELS = ("vlm-alpha", "vlm-beta", "vlm-gamma")
VERDICT_RGB = ("rgb(46, 157, 91)", "rgb(214, 69, 69)", "rgb(224, 162, 27)")
VERDICT_HEX = ("#2e9d5b", "#d64545", "#e0a21b")
TEXT = "A flag is burgundy and blue. The flag is near a pole, and a cat sits on the mat."


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from hallu_studio import annotation
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from synthetic_store import SYNTHETIC_CONFIG_KEY, fill_synthetic_store
    from hallu_studio.model import HumanEvent, Response, Sample, SceneGraph, Score
    from hallu_studio.store import Store
    from hallu_studio.annotation.design import StudyDesign

    store = Store(tmp_path_factory.mktemp("study") / "study.duckdb")
    ids = fill_synthetic_store(store, n_samples=24, models=MODELS)
    runs = tuple(r["id"] for r in store.list_runs())
    annotation.create_study(store, StudyDesign("pilot", runs, images=20, ratings_per_item=2, seed=3))
    annotation.create_study(store, StudyDesign("rated", runs[:2], images=12, ratings_per_item=2, seed=4))
    rng = random.Random(0)
    for who in ("ann", "bob"):  # the second study fully rated by two people
        for rid in annotation.study_queue(store, who, "rated", limit=1000):
            annotation.rate(store, who, rid, rng.randint(2, 5), mode="blind", study="rated")
    store.append_events([HumanEvent("rater-1", "rating", rid, 3, source="outside-study") for rid in ids[:5]])

    # a response whose attributes the judge found right (blue) and wrong (burgundy), on a flag with four colours
    sample = Sample(id="synthetic-ui/flag", benchmark="synthetic-ui", image_key="flag", task="caption",
                    scene_graph=SceneGraph.from_dict({
                        "objects": [{"id": "f", "name": "flag", "attributes": ["american", "red", "white", "blue"]},
                                    {"id": "p", "name": "pole", "attributes": ["metal", "tall"]},
                                    {"id": "c", "name": "cat", "attributes": ["grey"]},
                                    {"id": "m", "name": "mat", "attributes": []}],
                        "relations": [{"subject": "f", "predicate": "near", "object": "p"},
                                      {"subject": "c", "predicate": "on", "object": "m"}]}))
    store.add_samples(store.get_benchmark("synthetic-ui"), [sample], [])
    flag = Response(runs[0], sample.id, TEXT)
    store.add_responses([flag])
    concepts = {"objects": ["flag", "pole", "cat", "mat"], "attributes": [["flag", "burgundy"], ["flag", "blue"]],
                "relations": [["flag", "near", "pole"], ["cat", "on", "mat"]]}
    triplets = [{"triplet": ["flag", "is", "burgundy"], "verdict": "relation", "kind": "attribute", "span": [12, 20],
                 "reason": "the graph says the flag is american, red, white, blue"},
                {"triplet": ["flag", "is", "blue"], "verdict": "supported", "kind": "attribute", "span": [25, 29],
                 "reason": "the flag is blue"},
                {"triplet": ["flag", "near", "pole"], "verdict": "supported", "kind": "relation", "span": [35, 51],
                 "reason": "edge (flag, near, pole)"},
                {"triplet": ["cat", "on", "mat"], "verdict": "supported", "kind": "relation", "span": [59, 78],
                 "reason": "edge (cat, on, mat)"}]
    store.put_scores([Score(flag.id, "concepts", SYNTHETIC_CONFIG_KEY, {"objects": 4},
                            {"extractor": "test", "concepts": concepts}),
                      Score(flag.id, "trihe", SYNTHETIC_CONFIG_KEY, {"n_triplets": 4, "hallucinated": 1},
                            {"judge": "graph", "triplets": triplets})])
    demo = build_app(AppContext(store=store))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield store, url, flag.id
    demo.close()
    store.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        yield b
        b.close()


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    page.wait_for_timeout(500)


def _value(page, elem_id: str) -> str:
    return page.locator(f"#{elem_id} textarea, #{elem_id} input").first.input_value()


def _annotate_area(page) -> str:
    return page.evaluate("['#ann-item', '#ann-image', '#ann-verdicts', '#ann-status'].map("
                         "s => document.querySelector(s)?.innerHTML || '').join('\\n')")


def test_rating_a_blind_study_shows_no_verdict_score_or_model_and_records_the_mode(app, browser):
    store, url, _ = app
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.wait_for_selector("#overview-leaderboard", state="attached", timeout=180_000)
    _tab(page, "Annotate")
    page.locator("#annotator-name textarea, #annotator-name input").first.fill("cleo")
    page.locator("#ann-study input").first.click()
    page.get_by_role("option", name="pilot (blind, 60 responses)").click()
    page.click("#ann-start")
    page.wait_for_function("document.querySelector('#ann-response-id textarea, #ann-response-id input')"
                           "?.value.startsWith('resp-')", timeout=90_000)
    rid = _value(page, "ann-response-id")
    area = _annotate_area(page)
    text = page.locator("#tab-annotate").inner_text()
    for model in MODELS:
        assert model not in text and model not in area, f"the model {model} is named while rating blind"
    for marker in ("hs-badge", "<mark", "hs-verdicts", "hs-diff", "hs-span"):
        assert marker not in area, f"{marker} is on the page while rating blind"
    for colour in VERDICT_HEX:
        assert colour not in area.lower()
    colours = page.evaluate("[...document.querySelectorAll('#ann-item *, #ann-image *, #ann-verdicts *')].flatMap("
                            "e => { const s = getComputedStyle(e); return [s.backgroundColor, s.color, "
                            "s.borderBottomColor]; })")
    assert not set(colours) & set(VERDICT_RGB), "a verdict colour is on the page while rating blind"
    from hallu_studio.app.inspection import BLIND_NOTE

    item_text = page.locator("#ann-item").inner_text()
    assert BLIND_NOTE in item_text
    item_text = item_text.replace(BLIND_NOTE, "")
    for word in ("supported", "hallucinated", "EMD", "HalFscore", "edit distance", "score"):
        assert word not in item_text, f"{word!r} shown while rating blind"
    assert page.locator("#ann-triplet").count() == 0 or not page.locator("#ann-triplet").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "annotate-blind.png"), full_page=True)

    page.locator("#hs-title").click()
    page.keyboard.press("4")  # rates, and moves on to the next item of the study
    page.wait_for_function(f"document.querySelector('#ann-response-id textarea, #ann-response-id input')"
                           f"?.value !== '{rid}'", timeout=90_000)
    rating = [e for e in store.list_events(annotator="cleo", kind="rating")]
    assert [(e.response_id, e.value, e.meta) for e in rating] == [(rid, 4, {"mode": "blind", "study": "pilot"})]
    exported = [r for r in store.export_rows("judgments") if r["annotator"] == "cleo"]
    assert exported[0]["meta"] == {"mode": "blind", "study": "pilot"}
    status = page.locator("#ann-status").inner_text()
    assert "study pilot (blind): you rated 1; the study has 1 of 120 ratings" in status

    # the name and the place survive a reload
    second = _value(page, "ann-response-id")
    page.reload()
    page.wait_for_selector("#overview-leaderboard", state="attached", timeout=180_000)
    _tab(page, "Annotate")
    page.wait_for_function(f"document.querySelector('#ann-response-id textarea, #ann-response-id input')"
                           f"?.value === '{second}'", timeout=90_000)
    assert _value(page, "annotator-name") == "cleo"
    assert "pilot" in page.locator("#ann-study input").first.input_value()
    page.locator("#hs-title").click()
    page.keyboard.press("k")  # the history came back too
    page.wait_for_selector("#ann-item .hs-your-rating[data-rating='4']", timeout=90_000)
    assert _value(page, "ann-response-id") == rid

    # correcting shows the verdicts, and a rating after that is recorded as unblinded
    page.locator("#ann-task label", has_text="correct the judges").click()
    page.wait_for_selector("#ann-verdicts .hs-verdicts", timeout=90_000)
    page.locator("#ann-task label", has_text="rate 1–5").click()
    page.wait_for_function("!document.querySelector('#ann-verdicts .hs-verdicts')", timeout=90_000)
    page.locator("#hs-title").click()
    page.keyboard.press("2")
    page.wait_for_function("document.querySelector('#ann-status')?.innerText.includes('rated 2')", timeout=90_000)
    latest = store.list_events(annotator="cleo", kind="rating")[-1]
    assert (latest.value, latest.meta) == (2, {"mode": "unblinded", "study": "pilot"})
    page.close()


def test_study_view_shows_each_studys_agreement_and_progress_and_the_sources(app, browser):
    from hallu_studio.studies import collect

    store, url, _ = app
    alpha = collect.annotator_agreement(store, study="rated")["alpha"]
    assert not math.isnan(alpha)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.wait_for_selector("#overview-leaderboard", state="attached", timeout=180_000)
    _tab(page, "Study")
    page.wait_for_selector("#study-studies table", timeout=120_000)
    studies = page.locator("#study-studies").inner_text()
    assert "pilot" in studies and "rated" in studies and "Krippendorff's α" in studies
    assert f"{alpha:.3g}"[:4] in studies.replace("−", "-")
    assert "48 of 48 (24 of 24 responses complete)" in studies
    correlations = page.locator("#study-correlations").inner_text()
    assert "left out, and why" in correlations and "agrees with people when" in correlations
    assert "reefknot does not score caption samples" in correlations  # what each row left out, and why
    assert "↑ = more hallucination" in correlations
    assert "rest on fewer than 10 images" in correlations  # reefknot: the few yes/no images rated
    probes = page.locator("#study-probes").inner_text()
    assert "agrees with the probes when" in probes or "no probe runs" in probes
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "study-studies.png"), full_page=True)

    page.locator("#study-which input").first.click()
    page.get_by_role("option", name="rated", exact=True).click()
    page.wait_for_function("document.querySelector('#study-agreement')?.innerText.includes('study rated')",
                           timeout=180_000)
    assert "24" in page.locator("#study-agreement").inner_text()

    page.locator("#study-source input").first.click()
    page.get_by_role("option", name="imported: outside-study (5 judgements)").click()
    page.wait_for_function("document.querySelector('#study-coverage')?.innerText.includes('Imported from')",
                           timeout=180_000)
    assert "rating (5) → correlations and agreement" in page.locator("#study-coverage").inner_text()
    page.close()


GRAPH_CHECK = """() => {
  const nodes = network.body.data.nodes.get();
  const boxes = nodes.map(n => ({id: n.id, label: n.label, colour: (n.color && n.color.background) || n.color,
                                 box: network.getBoundingBox(n.id)}));
  const labels = Object.values(network.body.edges).filter(e => e.options.label)
    .map(e => ({label: e.options.label, box: e.labelModule.size, from: e.fromId, to: e.toId}));
  return {boxes, labels, scale: network.getScale()};
}"""


def _overlap(a, b) -> bool:
    return a["left"] < b["right"] - 1 and b["left"] < a["right"] - 1 and a["top"] < b["bottom"] - 1 and \
        b["top"] < a["bottom"] - 1


def _label_box(size) -> dict:
    return {"left": size["left"], "top": size["top"], "right": size["left"] + size["width"],
            "bottom": size["top"] + size["height"]}


def test_inspect_graphs_colour_each_attribute_by_its_verdict_and_overlap_nowhere(app, browser):
    store, url, flag_id = app
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.wait_for_selector("#overview-leaderboard", state="attached", timeout=180_000)
    _tab(page, "Inspect")
    show_in_inspect(page, flag_id)
    frames = {}
    for graph in ("#inspect-ref-graph", "#inspect-resp-graph"):
        page.frame_locator(f"{graph} iframe").locator("canvas").first.wait_for(timeout=90_000)
    page.wait_for_timeout(1000)
    for frame in page.frames:
        if frame is page.main_frame:
            continue
        got = frame.evaluate(GRAPH_CHECK)
        frames["response" if any(str(b["id"]).startswith("c:") for b in got["boxes"]) else "reference"] = got
    assert set(frames) == {"reference", "response"}
    response = {b["label"]: b for b in frames["response"]["boxes"]}
    assert response["burgundy"]["colour"] == "#d64545", "a wrong attribute is red"
    assert response["blue"]["colour"] == "#2e9d5b", "a right attribute is green"
    assert response["flag"]["colour"] == "#2e9d5b", "the flag itself is there"
    reference = {b["label"].split("\n")[0]: b["label"] for b in frames["reference"]["boxes"]}
    assert all(a in reference["flag"] for a in ("american", "red", "white", "blue")), "every attribute is shown"
    for name, got in frames.items():
        boxes = [b["box"] for b in got["boxes"]]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not _overlap(a, b), f"two nodes overlap in the {name} graph"
        for label in got["labels"]:
            for node in got["boxes"]:
                assert not _overlap(_label_box(label["box"]), node["box"]), \
                    f"node {node['label']!r} covers the edge label {label['label']!r} in the {name} graph"
        assert got["scale"] >= 0.45, f"the {name} graph is drawn too small to read"
    rows = page.locator('#inspect-evidence section[data-metric="trihe"] tr', has_text="burgundy").inner_text()
    assert "hallucinated (attribute)" in rows and "(relation)" not in rows, "an attribute error is not a relation"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "inspect-attributes.png"), full_page=True)
    page.close()
