"""Reference concepts and VISCON Table 1 density statistics."""

import pytest

from hallu_studio.metrics.reference_concepts import (concept_density, reference_concepts, reference_concepts_many,
                                                     reference_source)
from hallu_studio.model import ConceptSet, Sample, SceneGraph

GRAPH = SceneGraph.from_dict({
    "objects": [{"id": "a", "name": "dog", "attributes": ["brown", "small"]}, {"id": "b", "name": "ball"},
                {"id": "c", "name": "ball"}],
    "relations": [{"subject": "a", "predicate": "chasing", "object": "b"}]})


class CountingExtractor:
    name = "counting"

    def __init__(self):
        self.calls = []

    def config(self):
        return {}

    def extract(self, texts):
        self.calls.append(list(texts))
        return [ConceptSet.from_dict({"objects": t.lower().strip(".").split()[-1:]}) for t in texts]


def test_sources_in_order_of_preference():
    assert reference_source(Sample(id="x/1", benchmark="x", image_key="1", scene_graph=GRAPH,
                                   reference_text="A dog.")) == "scene_graph"
    assert reference_source(Sample(id="x/2", benchmark="x", image_key="2", reference_text="A dog.")) == "reference_text"
    assert reference_source(Sample(id="x/3", benchmark="x", image_key="3",
                                   gold_triplets=[("laptop", "is", "black")])) == "gold_triplets"
    assert reference_source(Sample(id="x/4", benchmark="x", image_key="4")) is None


def test_scene_graph_and_triplet_references():
    cs = reference_concepts(Sample(id="x/1", benchmark="x", image_key="1", scene_graph=GRAPH))
    assert cs.to_dict()["objects"] == ["dog", "ball", "ball"]
    cs = reference_concepts(Sample(id="x/3", benchmark="x", image_key="3",
                                   gold_triplets=[("laptop", "is", "black"), ("laptop", "on", "desk")]))
    assert cs.to_dict() == {"objects": ["laptop", "desk"], "attributes": [["laptop", "black"]],
                            "relations": [["laptop", "on", "desk"]]}


def test_dense_captions_are_extracted_in_one_batch():
    ex = CountingExtractor()
    samples = [Sample(id=f"d/{i}", benchmark="d", image_key=str(i), reference_text=f"A photo of a {w}.")
               for i, w in enumerate(["cat", "dog"])] + [Sample(id="x/1", benchmark="x", image_key="1",
                                                                scene_graph=GRAPH)]
    out = reference_concepts_many(samples, ex)
    assert ex.calls == [["A photo of a cat.", "A photo of a dog."]]
    assert [c.to_dict()["objects"] for c in out] == [["cat"], ["dog"], ["dog", "ball", "ball"]]
    with pytest.raises(ValueError, match="d/0"):
        reference_concepts_many(samples[:1], None)


def test_density_table_1_mean_and_total_per_image():
    s1 = Sample(id="x/1/q0", benchmark="x", image_key="1", scene_graph=GRAPH)
    s1b = Sample(id="x/1/q1", benchmark="x", image_key="1", scene_graph=GRAPH)  # same image: counted once
    s2 = Sample(id="x/2", benchmark="x", image_key="2")
    s3 = Sample(id="y/1", benchmark="y", image_key="1", scene_graph=GRAPH)
    d = concept_density([s1, s1b, s2])
    assert d["images"] == 2
    assert d["objects"] == {"mean": 1.5, "total": 3}
    assert d["attributes"] == {"mean": 1.0, "total": 2}
    assert d["relations"] == {"mean": 0.5, "total": 1}
    assert concept_density([s3])["objects"]["mean"] == 3.0 and concept_density([s1, s2])["images"] == 2
    assert concept_density([])["objects"] == {"mean": 0.0, "total": 0}


def test_density_of_given_concepts_must_align():
    s = Sample(id="x/1", benchmark="x", image_key="1")
    assert concept_density([s], [ConceptSet.from_dict({"objects": ["a", "b"]})])["objects"]["total"] == 2
    with pytest.raises(ValueError, match="1 samples"):
        concept_density([s], [])
