"""Inspect's and the report's graphs: laid out with nothing overlapping, every attribute shown and coloured by its
own verdict; the edit diff per sentence with its punctuation; verdicts named for what a claim is about."""

from __future__ import annotations

import json
import random
import re

from hallu_studio.app import render
from hallu_studio.app.render.graphs import attribute_verdicts, concept_verdicts
from hallu_studio.app.render.layout import Box, Link, layout, overlaps
from hallu_studio.app.render.palette import VERDICT_COLOURS, claim_label
from hallu_studio.model import SceneGraph


def _nodes(page: str) -> dict[str, dict]:
    found = re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.S)
    return {n["label"]: n for n in json.loads(found.group(1))}


def _random_graph(seed: int) -> tuple[list[Box], list[Link]]:
    rng = random.Random(seed)
    objects = [f"object {i}" for i in range(rng.randint(1, 24))]
    boxes, links, pairs = [Box(o, o) for o in objects], [], set()
    for _ in range(rng.randint(0, 24)):
        if len(objects) < 2:
            break
        a, b = rng.sample(objects, 2)
        if frozenset((a, b)) not in pairs:
            pairs.add(frozenset((a, b)))
            links.append(Link(a, b, rng.choice(["left of", "near", "in front of", "holding\nwearing (←)"])))
    for k in range(rng.randint(0, 40)):
        owner = rng.choice(objects)
        boxes.append(Box(f"attr {k}", rng.choice(["red", "wooden", "small", "very glossy"]), 15, 5, anchor=owner))
        links.append(Link(owner, f"attr {k}"))
    return boxes, links


def test_no_box_overlaps_another_or_an_edge_label_and_the_layout_is_repeatable():
    for seed in range(25):
        boxes, links = _random_graph(seed)
        positions = layout(boxes, links)
        assert overlaps(boxes, links, positions) == [], f"graph {seed}"
        assert positions == layout(boxes, links)


def test_the_overlap_check_finds_what_overlaps():
    boxes = [Box("a", "cat"), Box("b", "sofa")]
    assert overlaps(boxes, [], {"a": (0.0, 0.0), "b": (5.0, 0.0)}) == ["box a over box b"]
    assert overlaps(boxes + [Box("c", "x")], [Link("a", "b", "sitting on")],
                    {"a": (0.0, 0.0), "b": (300.0, 0.0), "c": (150.0, 0.0)}) == [
        "box c over the label 'sitting on' of a → b"]


FLAG_CONCEPTS = {"objects": ["flag", "pole"], "attributes": [["flag", "burgundy"], ["flag", "blue"], ["pole", "tall"]],
                 "relations": [["flag", "near", "pole"], ["flag", "is", "blue"]]}
FLAG_TRIHE = {"triplets": [
    {"triplet": ["flag", "is", "burgundy"], "verdict": "relation", "kind": "attribute", "reason": "the flag is red"},
    {"triplet": ["flag", "is", "blue"], "verdict": "supported", "kind": "attribute"},
    {"triplet": ["flag", "is", "two"], "verdict": "object", "kind": "count"},
    {"triplet": ["pole", "is", "one"], "verdict": "supported", "kind": "count"},
    {"triplet": ["flag", "near", "pole"], "verdict": "supported", "kind": "relation"}]}


def test_each_attribute_is_its_own_node_in_its_own_verdicts_colour():
    nodes = _nodes(render.concept_graph_html(FLAG_CONCEPTS, FLAG_TRIHE))
    assert nodes["burgundy"]["color"] == VERDICT_COLOURS["hallucinated"]  # wrong attribute: red, not green
    assert nodes["blue"]["color"] == VERDICT_COLOURS["supported"]
    assert nodes["two"]["color"] == VERDICT_COLOURS["hallucinated"]  # a wrong count, on its own node
    assert nodes["flag"]["color"] == VERDICT_COLOURS["supported"]  # the flag is there; its colour is wrong
    assert nodes["tall"]["color"] != VERDICT_COLOURS["supported"] and "not judged" in nodes["tall"]["title"]
    assert "one" not in nodes and "count: one (supported)" in nodes["pole"]["title"]  # a confirmed "a pole"
    assert "attribute: attribute" in nodes["burgundy"]["title"]  # the judge's verdict, named for what it is about
    _, edges = concept_verdicts(FLAG_CONCEPTS, FLAG_TRIHE, None)
    assert ("flag", "is", "burgundy") not in edges and edges[("flag", "near", "pole")] == "supported"
    assert [(q.value, q.verdict) for q in attribute_verdicts(FLAG_CONCEPTS, FLAG_TRIHE)][:3] == [
        ("burgundy", "hallucinated"), ("blue", "supported"), ("two", "hallucinated")]


def test_attribute_claims_without_a_kind_are_read_from_the_concepts():
    trihe = {"triplets": [{"triplet": ["flag", "is", "burgundy"], "verdict": "relation"}]}
    nodes = _nodes(render.concept_graph_html(FLAG_CONCEPTS, trihe))
    assert nodes["burgundy"]["color"] == VERDICT_COLOURS["hallucinated"] and "flag" in nodes


def test_the_reference_graph_shows_every_attribute():
    graph = SceneGraph.from_dict({"objects": [
        {"id": "f", "name": "flag", "attributes": ["american", "red", "white", "blue", "striped", "large"]},
        {"id": "p", "name": "pole", "attributes": []}], "relations": [{"subject": "f", "predicate": "on",
                                                                         "object": "p"}]})
    label = next(k for k in _nodes(render.scene_graph_html(graph)) if k.startswith("flag"))
    assert all(a in label for a in ("american", "red", "white", "blue", "striped", "large"))


def test_verdicts_are_named_for_what_the_claim_is_about():
    assert (claim_label("relation", "attribute"), claim_label("object", "count")) == ("attribute", "count")
    html = render.triplet_verdicts_html([("graph", FLAG_TRIHE)])
    row = next(r for r in html.split("<tr>") if "burgundy" in r)
    assert ">hallucinated (attribute)<" in row and "(relation)" not in row


def test_the_edit_diff_keeps_punctuation_and_goes_sentence_by_sentence():
    original = "There is a cat, grey and small. The flag is burgundy, red and blue! A pole stands."
    revised = "The flag is white, red and blue! A pole stands."
    alignment = [["delete", ["There", "is", "a", "cat", "grey", "and", "small"], []],
                 ["equal", ["The", "flag", "is"], ["The", "flag", "is"]],
                 ["substitute", ["burgundy"], ["white"]],
                 ["equal", ["red", "and", "blue", "A", "pole", "stands"], ["red", "and", "blue", "A", "pole", "stands"]]]
    html = render.edit_diff_html({"original": original, "revised": revised, "alignment": alignment})
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", re.sub(r"<sup[^>]*>.*?</sup>", "", html))
    text = [(re.sub(r"<[^>]+>", "", a), re.sub(r"<[^>]+>", "", b)) for a, b in rows]
    assert text == [("There is a cat, grey and small.", "(removed)"),
                    ("The flag is burgundy, red and blue!", "The flag is white, red and blue!")]
    assert 'title="edit 0: removed"' in html and 'title="edit 1: replaced"' in html
    assert '<sup class="hs-edit-no">0</sup>' in html and '<sup class="hs-edit-no">1</sup>' in html
    assert "1 unchanged sentence" in html and "A pole stands." in html
    # evidence whose texts do not match its words falls back to the word diff
    assert "hs-diff-line" in render.edit_diff_html({"original": "x", "revised": "y", "alignment": alignment})


def test_the_edit_diff_pairs_sentences_where_the_word_alignment_crosses_them():
    # The word alignment (what the distance counts) matches the removed sentence's "the" to the next sentence's
    # "The"; the diff still sets the removed sentence against nothing and the next one against itself.
    original = ("The image shows a pagoda and a lake. There is also a lamp near the lake. The pagoda is tall and "
                "multi-tiered. The eaves are white, blue and painted.")
    revised = "The image shows a pagoda and a lake. The pagoda is tall and multi-tiered. The eaves are green, blue and painted."
    alignment = [["equal", ["The", "image", "shows", "a", "pagoda", "and", "a", "lake"],
                  ["The", "image", "shows", "a", "pagoda", "and", "a", "lake"]],
                 ["delete", ["There", "is", "also", "a", "lamp", "near"], []], ["equal", ["the"], ["The"]],
                 ["delete", ["lake", "The"], []],
                 ["equal", ["pagoda", "is", "tall", "and", "multi", "tiered", "The", "eaves", "are"],
                  ["pagoda", "is", "tall", "and", "multi", "tiered", "The", "eaves", "are"]],
                 ["substitute", ["white"], ["green"]], ["equal", ["blue", "and", "painted"], ["blue", "and", "painted"]]]
    html = render.edit_diff_html({"original": original, "revised": revised, "alignment": alignment})
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", html)
    plain = [tuple(re.sub(r"<[^>]+>", "", re.sub(r"<sup[^>]*>.*?</sup>", "", cell)) for cell in row) for row in rows]
    assert plain == [("There is also a lamp near the lake.", "(removed)"),
                     ("The eaves are white, blue and painted.", "The eaves are green, blue and painted.")]
    assert rows[0][0].count("hs-delete") == 1 and '<sup class="hs-edit-no">0, 1</sup>' in rows[0][0]
    assert '<sup class="hs-edit-no">2</sup>' in rows[1][0] and ">white</span>" in rows[1][0]
    assert "2 unchanged sentences" in html  # the pagoda's sentence is not "changed" into itself


def test_objects_of_one_name_described_apart_are_drawn_apart():
    concepts = {"objects": ["sphere", "cube"], "attributes": [["sphere", "red"], ["sphere", "blue"], ["sphere", "green"]],
                "counts": [["sphere", 3]], "relations": [["cube", "behind", "sphere"]]}
    text = "There are three spheres and a cube. The sphere is red. The sphere is blue. The sphere is green."
    page = render.concept_graph_html(concepts, None, None, text=text)
    nodes = _nodes(page)
    assert {"sphere 1", "sphere 2", "sphere 3"} <= set(nodes) and "sphere" not in nodes
    # each sphere carries its own colour, not the three: one attribute node per instance
    assert sorted(k for k in nodes if k in ("red", "blue", "green")) == ["blue", "green", "red"]
    assert "named in no relation" not in page.split("sphere 1")[0]  # the cube relates to a sphere
    # without the text (or with one description), one node as before
    assert "sphere" in _nodes(render.concept_graph_html(concepts, None, None))
