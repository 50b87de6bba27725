"""CHAIR_s / CHAIR_i over the scene graph's vocabulary with synonyms."""

from __future__ import annotations

import numpy as np
import pytest

from hallu_studio.metrics.base import ScoringItem
from hallu_studio.lexicon.forms import singular
from hallu_studio.metrics.chair import ChairMetric, canonical_forms
from hallu_studio.model import ConceptSet, Sample, SceneGraph

GRAPH = SceneGraph.from_dict({"objects": [{"id": "1", "name": "man"}, {"id": "2", "name": "dog"},
                                          {"id": "3", "name": "frisbee"}]})


def item(mentions, graph=GRAPH, sid="c/1"):
    s = Sample(id=sid, benchmark="c", image_key="1", task="caption", scene_graph=graph)
    return ScoringItem("r", " ".join(mentions), s, mentioned=ConceptSet.from_dict({"objects": list(mentions)}))


@pytest.mark.parametrize("word,expected", [("men", "man"), ("puppies", "puppy"), ("benches", "bench"),
                                           ("cars", "car"), ("bus", "bus"), ("glass", "glass"), ("knives", "knife")])
def test_singular(word, expected):
    assert singular(word) == expected


def test_canonical_forms_use_head_noun_and_synonyms():
    assert canonical_forms("Two red Cars") == ["red car", "car"]
    assert canonical_forms("the puppy") == ["dog"]
    assert canonical_forms("a woman") == ["person"]
    assert canonical_forms("the") == []


def test_worked_example():
    metric = ChairMetric()
    r1 = metric.update(item(["men", "puppy", "cat"]))
    r2 = metric.update(item(["frisbee", "the image"]))
    assert r1.evidence["hallucinated"] == ["cat"] and r1.values["chair_i_item"] == pytest.approx(100 / 3)
    assert r2.evidence["ignored"] == ["the image"] and r2.values["mentioned_objects"] == 1
    out = metric.compute([r1.stats, r2.stats])
    assert out["chair_i"] == pytest.approx(25.0)
    assert out["chair_s"] == pytest.approx(50.0)


def test_synonym_class_matches_both_ways():
    # The graph says "person"; the response says "woman": same canonical class.
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "person"}, {"id": "2", "name": "sofa"}]})
    r = ChairMetric().update(item(["woman", "couch"], graph))
    assert r.values["hallucinated_objects"] == 0


class TableEncoder:
    model_name = "table"
    VECS = {"frisbee": [1, 0, 0], "flying disc": [0.9, 0.1, 0], "cat": [0, 0, 1], "man": [0, 1, 0],
            "dog": [0, 0.2, 0.9]}

    def encode(self, texts):
        return np.array([self.VECS[t] for t in texts], dtype=float)


def test_embedding_fallback_with_threshold():
    strict = ChairMetric(TableEncoder(), threshold=0.999).update(item(["flying disc"]))
    loose = ChairMetric(TableEncoder(), threshold=0.9).update(item(["flying disc"]))
    assert strict.values["hallucinated_objects"] == 1  # cosine 0.994 < 0.999
    assert loose.values["hallucinated_objects"] == 0


@pytest.mark.parametrize("mentions", [[], ["!!!"], ["the image", "background"]])
def test_no_mentions_counts_in_chair_s_only(mentions):
    metric = ChairMetric()
    r = metric.update(item(mentions))
    assert r.values["chair_i_item"] is None and "mentions no objects" in r.undefined_reason
    out = metric.compute([r.stats])
    assert out["chair_s"] == 0.0 and "chair_i" not in out


def test_no_scene_graph_is_undefined():
    r = ChairMetric().update(item(["cat"], SceneGraph()))
    assert "no vocabulary" in r.undefined_reason and r.stats["responses"] == 0


def test_grounding_counts_wordnet_synonyms_and_less_specific_words_as_present():
    """ "animal" for a dog is true, only less specific; "lounge" is a WordNet synonym of sofa; a cat is not there."""
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "dog"}, {"id": "2", "name": "sofa"}]})
    r = ChairMetric().update(item(["animal", "lounge", "cat"], graph))
    assert r.evidence["hallucinated"] == ["cat"]
    assert r.evidence["grounded"] == [["animal", "dog", "hypernym"], ["lounge", "sofa", "synonym"]]
