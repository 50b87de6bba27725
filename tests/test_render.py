"""The pure renderers: escaping, span highlighting, graphs, heatmaps, diffs, verdicts, plots."""

from __future__ import annotations

import re

import pytest

from hallu_studio.app import render
from hallu_studio.studies.ranking import pivot_leaderboard
from hallu_studio.app.render.graphs import concept_verdicts
from hallu_studio.app.render.plots import (edit_vs_length_figure, emd_by_domain_figure, figure_png, fit_alpha,
                                           halr_figure, object_relation_figure)
from hallu_studio.app.render.text import SpanMark
from hallu_studio.model import SceneGraph

XSS = '<img src=x onerror=window.__xss=1><script>window.__xss=2</script>'


def test_highlight_escapes_text_and_marks_each_span_with_its_verdict():
    text = f"A cat {XSS} on a mat"
    marks = [SpanMark(2, 5, "object", "cat", "hallucinated"), SpanMark(len(text) - 3, len(text), "object", "mat",
                                                                        "supported")]
    html = render.highlight_spans_html(text, marks)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;window.__xss=2&lt;/script&gt;" in html
    assert re.search(r'class="hs-span v-hallucinated"[^>]*>cat</mark>', html)
    assert re.search(r'class="hs-span v-supported"[^>]*>mat</mark>', html)


def test_overlapping_spans_are_split_and_take_the_worst_verdict():
    text = "a red cat sat"
    marks = [SpanMark(2, 9, "attribute", "cat red", "supported"), SpanMark(6, 9, "object", "cat", "hallucinated")]
    html = render.highlight_spans_html(text, marks)
    assert re.search(r'v-supported"[^>]*>red </mark>', html)
    assert re.search(r'v-hallucinated"[^>]*>cat</mark>', html)
    assert html.count("<mark") == 2


def test_spans_outside_the_text_are_ignored_not_crashing():
    html = render.highlight_spans_html("short", [SpanMark(3, 50, "object", "x"), SpanMark(4, 2, "object", "y")])
    assert "<mark" not in html and "short" in html


def test_response_spans_combine_concepts_trihe_and_halfscore():
    concepts = {"objects": ["dog", "frisbee"], "object_spans": [[2, 5], [12, 19]], "attributes": [],
                "relations": [["dog", "catching", "frisbee"]], "relation_spans": [None]}
    trihe = {"triplets": [{"triplet": ["dog", "catching", "frisbee"], "span": [2, 19], "verdict": "relation"}]}
    marks = render.response_spans(concepts, trihe, {"frisbee"})
    by_label = {(m.kind, m.label): m.verdict for m in marks}
    assert by_label[("object", "frisbee")] == "hallucinated"
    assert by_label[("object", "dog")] == ""
    assert by_label[("triplet", "dog catching frisbee")] == "hallucinated"


def test_scene_graph_page_is_offline_and_inlines_vis():
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": XSS, "attributes": ["<b>bold</b>"]},
                                              {"id": "2", "name": "sofa"}],
                                  "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
    page = render.scene_graph_html(graph)
    assert "vis.Network" in page and "Content-Security-Policy" in page
    assert not re.search(r'(src|href)="https?://', page), "a remote resource would not load offline"
    assert "<script>window.__xss" not in page and "<img src=x" not in page


def test_concept_graph_colours_nodes_and_edges_by_verdict():
    concepts = {"objects": ["dog", "frisbee", "cat"], "attributes": [["dog", "brown"]], "relations": []}
    trihe = {"triplets": [{"triplet": ["dog", "catching", "frisbee"], "verdict": "relation"},
                          {"triplet": ["cat", "on", "grass"], "verdict": "object"}]}
    nodes, edges = concept_verdicts(concepts, trihe, {"hallucinated": [], "matched": []})
    assert edges[("dog", "catching", "frisbee")] == "hallucinated"
    assert nodes["dog"] == "supported" and nodes["cat"] == "hallucinated"
    page = render.concept_graph_html(concepts, trihe)
    assert '"label": "catching"' in page
    assert "#d64545" in page and "#2e9d5b" in page


def test_halfscore_entries_in_the_metrics_list_shape():
    ev = {"hallucinated": [["object", "kite"], ["attribute", "tree", "blue"]], "omitted": [["relation", "dog", "on", "grass"]],
          "matched": [[["object", "tree"], ["object", "tree"], 0.98], [["object", "pole"], None, 0.4]]}
    nodes, _ = concept_verdicts({"objects": ["kite", "tree"]}, None, ev)
    assert nodes == {"kite": "hallucinated", "tree": "supported"}
    html = render.halfscore_html(ev)
    assert ">kite</span>" in html and ">blue tree</span>" in html and ">dog on grass</span>" in html
    assert "<td>pole</td><td>—</td>" in html


def test_a_node_the_judges_disagree_on_is_uncertain():
    trihe = {"triplets": [{"triplet": ["flag", "left of", "woman"], "verdict": "supported"}]}
    nodes, _ = concept_verdicts(None, trihe, {"hallucinated": [["object", "woman"]], "matched": []})
    assert nodes == {"flag": "supported", "woman": "uncertain"}


def test_halfscore_lists_decide_objects_trihe_did_not_judge():
    nodes, _ = concept_verdicts({"objects": ["kite", "tree"]}, None,
                                {"hallucinated": ["kite"], "matched": [["tree", "tree", 0.99]]})
    assert nodes == {"kite": "hallucinated", "tree": "supported"}


def test_graph_iframe_is_sandboxed_without_same_origin_and_escapes_srcdoc():
    frame = render.graph_iframe('<html><script>alert("x")</script></html>')
    assert 'sandbox="allow-scripts"' in frame and "allow-same-origin" not in frame
    assert "<script>" not in frame and "&lt;script&gt;" in frame
    assert "no graph" in render.graph_iframe(None)


# as metrics.emd stores them: reference rows, response columns
EMD_EVIDENCE = {"types": {"object": {"reference": ["cat", "mat"], "response": ["dog", "mat", XSS],
                                     "cost": [[0.4, 0.8, 1.0], [0.9, 0.0, 1.0]],
                                     "plan": [[0.33, 0.0, 0.0], [0.0, 0.33, 0.34]],
                                     "per_concept_cost": [0.4, 0.0, 1.0]}}}


def test_heatmap_has_a_row_per_response_concept_with_its_cost():
    html = render.transport_heatmaps_html(EMD_EVIDENCE, {"object": 46.7})
    assert "object — EMD 46.7" in html
    assert html.count('<th class="hs-row" ') == 3
    assert "<img" not in html and "&lt;img" in html
    assert "rgba(40,90,200,1.00)" in html  # the largest mass is the darkest cell


def test_heatmap_says_what_the_grounding_decided_for_each_response_concept():
    ev = {"types": {"attribute": {"reference": ["sofa: red"], "response": ["sofa: <b>green</b>", "sofa: soft"],
                                  "cost": [[2.0, 0.4]], "plan": [[0.5, 0.5]], "per_concept_cost": [200.0, 40.0],
                                  "response_grounding": ["contradicted", "embedding"]}}}
    html = render.transport_heatmaps_html(ev)
    assert html.count('class="hs-grounding"') == 2 and ">contradicted</span>" in html and ">embedding</span>" in html
    assert "2 the reference contradicts it" in html  # the cost scale, where grounded costs are shown
    assert "<b>green" not in html and "&lt;b&gt;green" in html
    assert 'class="hs-grounding"' not in render.transport_heatmaps_html(EMD_EVIDENCE)  # VISCON's cosine: no badges


def test_heatmap_rows_are_response_concepts_and_a_bad_shape_is_named():
    ev = {"types": {"relation": {"reference": ["a", "b"], "response": ["c"], "cost": [[0.1], [0.2]],
                                 "plan": [[0.5], [0.5]]}}}
    html = render.transport_heatmaps_html(ev)
    assert html.count('<th class="hs-row" ') == 1 and ">0.1</td><td" in html and ">0.2</td>" in html
    square = {"types": {"object": {"reference": ["a", "b"], "response": ["x", "y"], "cost": [[0.1, 0.9], [0.2, 0.3]],
                                   "plan": [[0.5, 0], [0, 0.5]]}}}
    # response x's row holds the reference column of the matrix: costs 0.1 (to a), 0.2 (to b)
    assert '<th class="hs-row" title="x">x</th><td title="mass 0.5, cost 0.1"' in render.transport_heatmaps_html(square)
    bad = {"types": {"attribute": {"reference": ["a", "b"], "response": ["c"], "cost": [[0.1, 0.2, 0.3]],
                                   "plan": [[1, 0, 0]]}}}
    with pytest.raises(ValueError, match="attribute"):
        render.transport_heatmaps_html(bad)


def test_edit_diff_marks_each_operation_in_its_own_colour():
    ev = {"alignment": [["equal", ["a", "dog"], ["a", "dog"]], ["substitute", ["red"], ["brown"]],
                        ["delete", ["<b>ball</b>"], []], ["insert", [], ["outside"]]], "revised": "a dog brown outside"}
    html = render.edit_diff_html(ev, {"distance": 3, "per_word": 0.75, "words": 4})
    assert re.search(r'hs-substitute_old"[^>]*>red</span>', html)
    assert re.search(r'hs-substitute_new"[^>]*>brown</span>', html)
    assert re.search(r'hs-delete"[^>]*>&lt;b&gt;ball&lt;/b&gt;</span>', html)
    assert re.search(r'hs-insert"[^>]*>outside</span>', html)
    assert "edit distance 3 over 4 words" in html
    with pytest.raises(ValueError, match="unknown op 'swap'"):
        render.edit_diff_html({"alignment": [["swap", ["a"], ["b"]]]})


def test_triplet_table_shows_every_judge_and_the_human_correction_escaped():
    evidences = [("embedding", {"triplets": [{"triplet": ["cat", "on", "mat"], "verdict": "supported", "score": .8,
                                              "reason": XSS}]}),
                 ("llm", {"triplets": [{"triplet": ["cat", "on", "mat"], "verdict": "relation", "score": None,
                                        "reason": "the cat is under the mat"}]})]
    html = render.triplet_verdicts_html(evidences, {0: "object"})
    assert html.count("<tr>") == 3 and "embedding" in html and "llm" in html  # header + one row per judge
    assert "the cat is under the mat" in html and "<script>" not in html
    assert ">hallucinated (object)</span>" in html


def test_halfscore_reefknot_and_logit_lens_panels():
    html = render.halfscore_html({"hallucinated": ["pizza"], "omitted": ["fork"], "matched": [["plate", "dish", .9]]},
                                 {"precision": 0.5, "recall": 0.5, "f": 0.5})
    assert "pizza" in html and "fork" in html and "dish" in html
    reef = render.reefknot_html({"task": "yes_no", "correct": False, "hallucinated": True, "entropy": 0.69},
                                {"parsed_answer": "no", "label": "yes", "method": "first word"},
                                {"logit_lens": {"layers": [{"layer": 1, "tokens": ["no", "a"], "probs": [0.9, 0.1]},
                                                           {"layer": 2, "tokens": ["no", "yes"], "probs": [.6, .4]},
                                                           {"layer": 3, "tokens": ["yes", "no"], "probs": [.9, .1]}]}})
    assert "entropy 0.69" in reef and "<svg" in reef
    assert reef.count("<polyline") == 2  # "yes" (layers 2-3) and "no" (1-3)
    assert "no logit-lens" in render.logit_lens_svg({"yes": [0.1, 0.2]})


def test_image_html_inlines_raster_images_and_refuses_svg():
    assert render.image_html(b"\x89PNG...", "image/png").startswith('<img class="hs-image"')
    assert "not shown" in render.image_html(b"<svg onload=alert(1)>", "image/svg+xml")
    assert "no image: lost" in render.image_html(None, None, missing_reason="lost")


def test_records_table_escapes_cells():
    html = render.records_table_html([{"model": XSS, "score": 0.123456}])
    assert "<script>" not in html and "0.123" in html


def test_overview_numbers_and_plots():
    board = pivot_leaderboard([
        {"model": "m", "run_id": "r1", "synthetic": False, "benchmark": "b", "metric": "emd", "config_key": "k1",
         "key": "total", "value": 12.0, "low": 10.0, "high": 14.0, "n": 5, "aggregation": "metric"},
        {"model": "m", "run_id": "r1", "synthetic": False, "benchmark": "b", "metric": "trihe", "config_key": "k2",
         "key": "hallu_i", "value": 0.5, "low": 0.4, "high": 0.6, "n": 5, "aggregation": "metric"},
        {"model": "m", "run_id": "r1", "synthetic": False, "benchmark": "b", "metric": "trihe", "config_key": "k3",
         "key": "hallu_i", "value": 0.3, "low": None, "high": None, "n": 5, "aggregation": "mean of values"}])
    assert board == [{"model": "m", "benchmark": "b", "scored": 5, "emd.total": "12 [10, 14]",
                      "trihe.hallu_i@k2": "0.5 [0.4, 0.6]", "trihe.hallu_i@k3": "0.3 (mean)"}]
    rows = [{"model": "m", "synthetic": True, "sample_id": f"s{i}", "domain": d, "task": "yes_no",
             "relation_category": "perception", "emd.total": 10.0 + i, "edit.distance": i + 1,
             "edit.words": 10 * (i + 1), "trihe.n_triplets": 2, "trihe.object": 1, "trihe.relation": 0,
             "reefknot.hallucinated": i % 2} for i, d in enumerate(["original", "sketch"] * 3)]
    assert fit_alpha([10, 20, 40], [1, 2, 4]) == pytest.approx(0.1)  # linear slope, as VISCON Table 3
    for make in (emd_by_domain_figure, edit_vs_length_figure, object_relation_figure, halr_figure):
        fig = make(rows)
        assert fig.axes and fig.axes[0].has_data()
        assert figure_png(fig).startswith(b"\x89PNG")
        assert not make([]).axes[0].has_data()  # "no scores yet", not an empty chart pretending
