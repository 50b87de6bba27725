"""VISCON EMD pinned on hand-computed examples with a fake embedder of fixed vectors."""

import math

import numpy as np
import pytest

from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.emd import EMDMetric, concept_phrases, emd_between
from hallu_studio.model import ConceptSet, Sample, SceneGraph


class FakeEmbedder:
    """Fixed vectors by phrase; counts encode calls and phrases asked for."""

    model_name = "fake"

    def __init__(self, vectors):
        self.vectors = vectors
        self.calls = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)


def test_two_by_two_hand_example():
    # cost [[0.2, 1.0], [0.4, 0.0]]; the plan matches diagonally: 0.5*0.2 + 0.5*0 = 0.1
    r = emd_between(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.8, 0.6], [0.0, 1.0]]))
    assert r.cost == pytest.approx(np.array([[0.2, 1.0], [0.4, 0.0]]))
    assert r.plan == pytest.approx(np.array([[0.5, 0.0], [0.0, 0.5]]))
    assert r.distance == pytest.approx(0.1)
    assert r.per_concept_cost == pytest.approx([0.2, 0.0])


def test_optimal_plan_crosses_when_cheaper():
    r = emd_between(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 2.0], [3.0, 0.0]]))  # unnormalised
    assert r.distance == pytest.approx(0.0)
    assert r.plan == pytest.approx(np.array([[0.0, 0.5], [0.5, 0.0]]))


def test_unequal_sizes_split_mass_uniformly():
    # two reference concepts (1/2 each), one response concept (mass 1): 0.5*0 + 0.5*1
    r = emd_between(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0]]))
    assert r.distance == pytest.approx(0.5)
    assert r.per_concept_cost == pytest.approx([0.5])
    assert r.plan.sum() == pytest.approx(1.0)


def test_opposite_vectors_cost_two():
    assert emd_between(np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]])).distance == pytest.approx(2.0)


def test_empty_matrix_is_an_error():
    with pytest.raises(ValueError, match="non-empty"):
        emd_between(np.zeros((0, 2)), np.ones((1, 2)))


def test_templates_are_table_11():
    p = concept_phrases(ConceptSet.from_dict({"objects": ["wall"], "attributes": [["wall", "beige"]],
                                              "relations": [["framed picture", "hangs on", "wall"]]}))
    assert p["object"].phrases == ["Object: wall"]
    assert p["attribute"].phrases == ["Attribute of wall: beige"]
    assert p["relation"].phrases == ["Relation: framed picture - hangs on - wall"]


VECS = {
    "Object: cat": [1, 0, 0], "Object: sofa": [0, 1, 0], "Object: kitten": [0.8, 0.6, 0],
    "Attribute of cat: grey": [0, 0, 1], "Attribute of kitten: grey": [0, 0.6, 0.8],
    "Relation: cat - on - sofa": [1, 0, 0], "Relation: kitten - on - sofa": [1, 0, 0],
}


def _item(rid, mentioned, graph=None):
    graph = graph or SceneGraph.from_dict({
        "objects": [{"id": "1", "name": "cat", "attributes": ["grey"]}, {"id": "2", "name": "sofa"}],
        "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
    return ScoringItem(response_id=rid, response="(not parsed)", sample=Sample(id=f"t/{rid}", benchmark="t",
                       image_key=rid, scene_graph=graph), mentioned=ConceptSet.from_dict(mentioned))


def test_metric_values_per_type_and_total_on_x100_scale():
    emb = FakeEmbedder(VECS)
    res = EMDMetric(emb, ground_cost="cosine").update(_item("a", {"objects": ["kitten", "sofa", "kitten"],
                                            "attributes": [["kitten", "grey"]],
                                            "relations": [["kitten", "on", "sofa"]]}))
    # objects: the doc's 2x2 example, 10; attributes: 1 - 0.8 = 0.2 -> 20; relations identical vectors -> 0
    assert res.values["object"] == pytest.approx(10.0)
    assert res.values["attribute"] == pytest.approx(20.0)
    assert res.values["relation"] == pytest.approx(0.0)
    assert res.values["total"] == pytest.approx(30.0)  # VISCON eq. 1: the sum over types
    assert res.undefined_reason is None
    ev = res.evidence["types"]["object"]
    assert ev["reference"] == ["cat", "sofa"] and ev["response"] == ["kitten", "sofa"]  # deduplicated
    assert ev["plan"] == [[0.5, 0.0], [0.0, 0.5]]
    assert ev["per_concept_cost"] == pytest.approx([20.0, 0.0])
    assert res.evidence["model"] == "fake"


def test_empty_sides():
    emb = FakeEmbedder(VECS)
    no_rel_graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat"}]})
    res = EMDMetric(emb).update(_item("b", {"objects": ["cat"]}, no_rel_graph))
    assert res.values["object"] == 0.0 and res.values["attribute"] == 0.0 and res.values["relation"] == 0.0
    assert res.values["total"] == 0.0  # both sides empty: nothing to transport

    res = EMDMetric(emb, empty_side="undefined").update(_item("c", {"objects": ["cat"]}))
    assert res.values["attribute"] is None and res.values["relation"] is None and res.values["total"] is None
    assert res.undefined_reason == ("attribute: the response mentions no attributes; "
                                    "relation: the response mentions no relations")
    assert res.stats["attribute_defined"] == 0.0 and "attribute" not in res.stats

    unit = EMDMetric(emb, empty_side="unit_cost", ground_cost="cosine").update(_item("d", {"objects": ["cat"]}))
    # objects: cat->cat 0, sofa->cat 1, half the mass each: 50; attribute and relation empty: 100 each
    assert unit.values["attribute"] == 100.0 and unit.values["total"] == pytest.approx(250.0)

    assert EMDMetric(emb).update(_item("d", {"objects": ["cat"]})).values["attribute"] == 100.0  # the default
    empty_ref = EMDMetric(emb, empty_side="undefined").update(_item("e", {"objects": ["cat"]}, SceneGraph()))
    assert empty_ref.values["object"] is None
    assert "object: the reference has no objects" in empty_ref.undefined_reason


def test_update_many_encodes_each_distinct_phrase_once_per_batch():
    emb = FakeEmbedder(VECS)
    m = EMDMetric(emb, ground_cost="cosine")
    items = [_item(str(i), {"objects": ["kitten", "sofa"], "attributes": [["kitten", "grey"]],
                            "relations": [["kitten", "on", "sofa"]]}) for i in range(5)]
    results = m.update_many(items)
    assert len(emb.calls) == 1
    assert sorted(emb.calls[0]) == sorted(set(emb.calls[0]))
    assert len(emb.calls[0]) == 7
    assert [r.values for r in results] == [m.update(items[0]).values] * 5


def test_compute_means_over_defined_items():
    m = EMDMetric(FakeEmbedder(VECS))
    stats = [{"object": 10.0, "object_defined": 1.0, "attribute_defined": 0.0, "relation": 4.0,
              "relation_defined": 1.0, "total_defined": 0.0},
             {"object": 20.0, "object_defined": 1.0, "attribute": 6.0, "attribute_defined": 1.0, "relation": 2.0,
              "relation_defined": 1.0, "total": 28.0, "total_defined": 1.0}]
    out = m.compute(stats)
    assert out["object"] == 15.0 and out["attribute"] == 6.0 and out["relation"] == 3.0 and out["total"] == 28.0
    assert out["n_object"] == 2 and out["n_attribute"] == 1 and out["n_items"] == 2
    assert math.isnan(m.compute([])["total"])


def test_missing_extraction_without_extractor_names_the_response():
    item = ScoringItem(response_id="r9", response="A cat.", sample=_item("x", {}).sample, mentioned=None)
    with pytest.raises(ValueError, match="r9"):
        EMDMetric(FakeEmbedder(VECS)).update(item)


def test_caption_reference_needs_an_extractor():
    sample = Sample(id="d/1", benchmark="d", image_key="1", reference_text="A cat on a sofa.")
    item = ScoringItem(response_id="r1", response="A cat.", sample=sample, mentioned=ConceptSet.from_dict(
        {"objects": ["cat"]}))
    with pytest.raises(ValueError, match="d/1"):
        EMDMetric(FakeEmbedder(VECS)).update(item)


def test_bad_policy_is_refused():
    with pytest.raises(ValueError, match="empty_side"):
        EMDMetric(FakeEmbedder(VECS), empty_side="zero")


# ---------------------------------------------------------------- the grounded ground cost (the default)

class AnyEmbedder(FakeEmbedder):
    """VECS where it has the phrase, else a fixed vector per text (the grounding's own name look-ups)."""

    def encode(self, texts):
        self.calls.append(list(texts))
        rng = lambda t: np.random.default_rng(sum(map(ord, t))).normal(size=3)  # noqa: E731
        return np.array([self.vectors.get(t, rng(t)) for t in texts], dtype=np.float32)


DOG_ON_SOFA = SceneGraph.from_dict({
    "objects": [{"id": "1", "name": "dog", "attributes": ["brown"]}, {"id": "2", "name": "sofa"}],
    "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})


def test_grounded_cost_zero_for_what_the_graph_states():
    # a puppy is a kind of dog (hyponym), a couch is a sofa (synonym), brown is the dog's colour, the edge says on
    said = {"objects": ["puppy", "couch"], "attributes": [["puppy", "brown"]], "relations": [["puppy", "on", "couch"]]}
    grounded = EMDMetric(AnyEmbedder(VECS)).update(_item("a", said, DOG_ON_SOFA))
    cosine = EMDMetric(AnyEmbedder(VECS), ground_cost="cosine").update(_item("a", said, DOG_ON_SOFA))
    assert grounded.values["total"] == pytest.approx(0.0) and cosine.values["total"] > 10.0
    assert grounded.evidence["types"]["object"]["cost"] == [[0.0, cosine.evidence["types"]["object"]["cost"][0][1]],
                                                            [cosine.evidence["types"]["object"]["cost"][1][0], 0.0]]


def test_grounded_cost_two_for_what_the_graph_contradicts_and_cosine_for_what_it_is_silent_on():
    said = {"objects": ["cat", "sofa"], "attributes": [["cat", "black"], ["cat", "fluffy"]],
            "relations": [["cat", "under", "sofa"]]}
    res = EMDMetric(AnyEmbedder(VECS)).update(_item("b", said))
    attr = res.evidence["types"]["attribute"]
    assert attr["response"] == ["cat: black", "cat: fluffy"]
    assert attr["cost"][0][0] == 2.0  # black against the graph's grey: contradicted, the far end of the scale
    assert attr["cost"][0][1] < 2.0  # fluffy: the graph says nothing of it, the embedding prices it
    assert res.values["relation"] == pytest.approx(200.0)  # the edge says on, not under
    assert res.evidence["types"]["relation"]["per_concept_cost"] == [200.0]


def test_grounded_counts_are_attributes_checked_against_multiplicity():
    two_cats = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat"}, {"id": "2", "name": "cat"}]})
    right = EMDMetric(AnyEmbedder(VECS)).update(_item("c", {"objects": ["cat"], "counts": [["cat", 2]]}, two_cats))
    wrong = EMDMetric(AnyEmbedder(VECS)).update(_item("d", {"objects": ["cat"], "counts": [["cat", 3]]}, two_cats))
    assert right.evidence["types"]["attribute"]["reference"] == ["cat: two"]
    assert right.values["attribute"] == pytest.approx(0.0) and wrong.values["attribute"] == pytest.approx(200.0)


def test_grounded_emd_rises_with_each_contradicted_concept_added_to_a_shorter_response():
    # A dense reference (four objects) and a short response: with uniform masses and 0/1 costs the object EMD
    # would be 1 - k/N whatever is added; a contradicted concept's 2 makes every addition cost.
    graph = SceneGraph.from_dict({"objects": [{"id": str(i), "name": n} for i, n in
                                              enumerate(["cat", "sofa", "lamp", "rug"])]})
    metric = EMDMetric(AnyEmbedder(VECS))
    values = [metric.update(_item(f"e{k}", {"objects": ["cat", *extra]}, graph)).values["object"]
              for k, extra in enumerate([[], ["giraffe"], ["giraffe", "zebra"]])]
    assert values[0] < values[1] < values[2]


def test_bad_ground_cost_is_refused():
    with pytest.raises(ValueError, match="ground_cost"):
        EMDMetric(FakeEmbedder(VECS), ground_cost="lexical")
