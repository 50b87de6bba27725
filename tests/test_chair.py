"""CHAIR_s / CHAIR_i: the image vocabulary, fixed vocabularies (COCO-80, a benchmark's names) and both readings."""

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
    VECS = {"frisbee": [1, 0, 0], "flying saucer": [0.9, 0.1, 0], "cat": [0, 0, 1], "man": [0, 1, 0],
            "dog": [0, 0.2, 0.9]}

    def encode(self, texts):
        return np.array([self.VECS[t] for t in texts], dtype=float)


def test_embedding_fallback_with_threshold():
    strict = ChairMetric(TableEncoder(), threshold=0.999).update(item(["flying saucer"]))
    loose = ChairMetric(TableEncoder(), threshold=0.9).update(item(["flying saucer"]))
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
    assert "nothing to check names against" in r.undefined_reason and r.stats["responses"] == 0


def test_grounding_counts_wordnet_synonyms_and_less_specific_words_as_present():
    """ "animal" for a dog is true, only less specific; "lounge" is a WordNet synonym of sofa; a cat is not there."""
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "dog"}, {"id": "2", "name": "sofa"}]})
    r = ChairMetric().update(item(["animal", "lounge", "cat"], graph))
    assert r.evidence["hallucinated"] == ["cat"]
    assert r.evidence["grounded"] == [["animal", "dog", "hypernym"], ["lounge", "sofa", "synonym"]]


# --------------------------------------------------------------------------- issue 20: the released code's outputs

def graph_of(*names):
    return SceneGraph.from_dict({"objects": [{"id": str(i), "name": n} for i, n in enumerate(names)]})


def both(text, mentions, graph, **kwargs):
    """(studio, released) results for one response: the studio reading takes the extractor's ``mentions``, the
    released one reads ``text`` word by word."""
    it = ScoringItem("r", text, Sample(id="c/1", benchmark="c", image_key="1", task="caption", scene_graph=graph,
                                       **kwargs), mentioned=ConceptSet.from_dict({"objects": list(mentions)}))
    return ChairMetric().update(it), ChairMetric(reading="released").update(it)


def test_a_missing_object_is_not_present_because_a_two_word_object_ends_with_its_name():
    """{teddy bear, sink, toilet} + "A bear ..." → the released CHAIR flags bear; so does the studio reading now."""
    studio, released = both("A bear is standing near a sink and a toilet.", ["bear", "sink", "toilet"],
                            graph_of("teddy bear", "sink", "toilet"))
    assert released.evidence["hallucinated"] == ["bear"] and released.values["mentioned_objects"] == 3
    assert studio.evidence["hallucinated"] == ["bear"] and studio.values["mentioned_objects"] == 3
    assert canonical_forms("teddy bears") == ["teddy bear"] and canonical_forms("hot dog") == ["hot dog"]


def test_hot_dog_wine_glass_stop_sign():
    """The released CHAIR flags "dog" beside a hot dog, and ignores "glass" and "sign" (not in its vocabulary).
    The studio reading of the image's objects flags the dog too, and counts the glass and the sign as present:
    a wine glass is a glass and a stop sign a sign (WordNet; the lexicon's head noun)."""
    studio, released = both("A dog sniffs at the food.", ["dog", "food"], graph_of("hot dog"))
    assert released.evidence["hallucinated"] == ["dog"] and studio.evidence["hallucinated"] == ["dog", "food"]
    studio, released = both("A glass on the table.", ["glass"], graph_of("wine glass", "table"))
    assert released.values["mentioned_objects"] == 1 and released.evidence["mentioned"] == ["table"]
    assert released.values["hallucinated_objects"] == 0
    assert studio.values["hallucinated_objects"] == 0 and studio.evidence["mentioned"] == ["glass"]
    studio, released = both("A sign by the road.", ["sign", "road"], graph_of("stop sign", "road"))
    assert released.values["mentioned_objects"] == 0 and released.values["chair_i_item"] is None
    assert studio.values["hallucinated_objects"] == 0


def test_each_mention_counts_in_the_released_reading():
    """"A cat watches the dog and the cat jumps." against {dog}: released 2/3, studio (cat, dog once each) 1/2."""
    studio, released = both("A cat watches the dog and the cat jumps.", ["cat", "dog"], graph_of("dog"))
    assert released.values["chair_i_item"] == pytest.approx(100 * 2 / 3)
    assert released.evidence["hallucinated"] == ["cat", "cat"]
    assert studio.values["chair_i_item"] == pytest.approx(50.0)


def test_chairs_own_synonyms_file_goat_under_sheep():
    studio, released = both("A goat grazes.", ["goat"], graph_of("sheep"))
    assert released.values["hallucinated_objects"] == 0 and released.evidence["categories"] == {"goat": "sheep"}
    assert studio.evidence["hallucinated"] == ["goat"]  # a goat is no sheep
    coco = ChairMetric().update(ScoringItem("r", "A goat grazes.", coco_sample(["sheep"]),
                                            mentioned=ConceptSet.from_dict({"objects": ["goat"]})))
    assert coco.evidence["ignored"] == ["goat"]  # outside COCO-80 as this project reads it


# --------------------------------------------------------------------------- fixed vocabularies (1b)

def coco_sample(objects, captions=None, sid="coco/1"):
    return Sample(id=sid, benchmark="coco", image_key="1", task="caption", reference_objects=list(objects),
                  reference_vocabulary="coco-80", reference_text=captions)


def test_a_coco_based_sample_counts_only_coco_80_mentions():
    s = coco_sample(["dog", "person"])
    r = ChairMetric().update(ScoringItem("r", "", s, mentioned=ConceptSet.from_dict(
        {"objects": ["dog", "tree", "man", "frisbee", "grass"]})))
    assert r.evidence["vocabulary"] == "coco-80" and r.evidence["reading"] == "studio"
    assert r.evidence["mentioned"] == ["dog", "man", "frisbee"] and r.evidence["ignored"] == ["tree", "grass"]
    assert r.evidence["hallucinated"] == ["frisbee"] and r.evidence["categories"]["man"] == "person"
    text = "A man and his dog play with a frisbee on the grass by a tree."
    released = ChairMetric(reading="released").update(ScoringItem("r", text, s))
    assert released.evidence["vocabulary"] == "coco-80 (CHAIR's synonym table)"
    assert released.evidence["mentioned"] == ["man", "dog", "frisbee"]
    assert released.evidence["hallucinated"] == ["frisbee"]


def test_reference_captions_add_the_vocabularys_objects_they_mention():
    s = coco_sample(["dog"], ["A man throws a frisbee to his dog.", "A dog catches a disc."])
    mentioned = ConceptSet.from_dict({"objects": ["man", "frisbee", "dog"]})
    studio = ChairMetric().update(ScoringItem("r", "", s, mentioned=mentioned))
    released = ChairMetric(reading="released").update(ScoringItem("r", "A man, a frisbee and a dog.", s))
    assert studio.values["hallucinated_objects"] == 0 and released.values["hallucinated_objects"] == 0
    assert set(studio.evidence["ground_truth"]) == {"dog", "person", "frisbee"}
    # Captions alone are a ground truth too, within a fixed vocabulary.
    alone = Sample(id="c/2", benchmark="c", image_key="2", task="caption", reference_text=["Two cats on a bed."])
    r = ChairMetric(vocabulary="coco-80").update(ScoringItem("r", "", alone, mentioned=ConceptSet.from_dict(
        {"objects": ["cat", "dog"]})))
    assert r.evidence["hallucinated"] == ["dog"]


def test_a_vocabulary_the_user_names():
    s = Sample(id="u/1", benchmark="u", image_key="1", task="caption", reference_objects=["cube"],
               reference_vocabulary=["cube", "sphere", "cylinder"])
    r = ChairMetric().update(ScoringItem("r", "", s, mentioned=ConceptSet.from_dict(
        {"objects": ["cube", "sphere", "table"]})))
    assert r.evidence["vocabulary"] == "custom (3 names)" and r.evidence["hallucinated"] == ["sphere"]
    assert r.evidence["ignored"] == ["table"]
    released = ChairMetric(reading="released").update(ScoringItem("r", "Two cubes, a sphere and a table.", s))
    assert released.evidence["mentioned"] == ["cube", "sphere"] and released.evidence["hallucinated"] == ["sphere"]


def test_the_benchmark_vocabulary_is_the_union_of_its_object_names():
    samples = [Sample(id=f"b/{i}", benchmark="b", image_key=str(i), task="caption", scene_graph=graph_of(*names))
               for i, names in enumerate((["man", "puppy"], ["cat", "sofa", "dog"]))]
    metric = ChairMetric(vocabulary="benchmark")
    with pytest.raises(ValueError, match="not observed"):
        metric.update(ScoringItem("r", "", samples[0], mentioned=ConceptSet()))
    assert metric.needs_benchmark and not ChairMetric().needs_benchmark
    metric.observe_benchmark("b", samples)
    r = metric.update(ScoringItem("r", "", samples[0], mentioned=ConceptSet.from_dict(
        {"objects": ["man", "cat", "tree", "dog"]})))
    assert r.evidence["vocabulary"] == "benchmark b (5 names)"
    assert r.evidence["hallucinated"] == ["cat"] and r.evidence["ignored"] == ["tree"]
    assert r.evidence["grounded"] == [["dog", "puppy", "hypernym"]]  # a puppy is a dog


def test_readings_and_vocabularies_come_from_the_settings_and_shape_the_config():
    from hallu_studio.config import Settings

    settings = Settings()
    plain = ChairMetric.from_settings(settings)
    settings.scoring.chair_reading, settings.scoring.chair_vocabulary = "released", "coco-80"
    released = ChairMetric.from_settings(settings, encoder=TableEncoder())
    assert (released.reading, released.vocabulary, released.encoder) == ("released", "coco-80", None)
    assert released.config() != plain.config()
    with pytest.raises(ValueError, match="unknown CHAIR vocabulary"):
        ChairMetric(vocabulary="wordnet")


def test_score_input_reads_a_coco_based_line_as_the_store_does(tmp_path):
    """``score --input``: a line with COCO-80 objects is scored against COCO-80, named in the evidence; with
    ``chair_vocabulary = "benchmark"`` the file's lines are the benchmark."""
    import json

    from hallu_studio.config import Settings
    from hallu_studio.pipelines.scoring_jsonl import score_jsonl

    lines = [{"id": "a", "response": "A dog and a tree.", "reference_objects": ["dog"],
              "reference_vocabulary": "coco-80", "mentioned": {"objects": ["dog", "tree"]}},
             {"id": "b", "response": "A cat.", "scene_graph": {"objects": [{"id": "1", "name": "cat"}]},
              "mentioned": {"objects": ["cat", "lamp"]}},
             {"id": "c", "response": "A lamp.", "scene_graph": {"objects": [{"id": "1", "name": "lamp"}]},
              "mentioned": {"objects": ["lamp", "dog", "rug"]}}]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    settings = Settings()
    settings.scoring.chair_vocabulary = "benchmark"
    score_jsonl(src, out, settings, ["chair"])
    got = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert got["a"]["evidence"]["chair"]["vocabulary"] == "coco-80"
    assert got["a"]["chair"]["mentioned_objects"] == 1 and got["a"]["chair"]["hallucinated_objects"] == 0
    assert got["b"]["evidence"]["chair"]["vocabulary"] == "benchmark jsonl (3 names)"  # cat, dog, lamp
    assert got["b"]["evidence"]["chair"]["hallucinated"] == ["lamp"]
    assert got["c"]["evidence"]["chair"]["hallucinated"] == ["dog"] and got["c"]["evidence"]["chair"]["ignored"] == ["rug"]


def test_the_store_observes_each_benchmark_before_scoring_it(store):
    from hallu_studio.config import Settings
    from hallu_studio.model import Benchmark, Response, Run
    from hallu_studio.pipelines.scoring import score_store

    class Words:
        name = "words"

        def config(self):
            return {}

        def extract(self, texts):
            return [ConceptSet.from_dict({"objects": t.split()}) for t in texts]

    samples = [Sample(id=f"b/{i}", benchmark="b", image_key=str(i), task="caption", scene_graph=graph_of(name))
               for i, name in enumerate(("cat", "dog"))]
    store.add_samples(Benchmark("b"), samples)
    store.add_run(Run(id="r", benchmark="b", model="m", backend="probe"))
    responses = [Response("r", "b/0", "cat dog tree")]
    store.add_responses(responses)
    settings = Settings()
    settings.scoring.chair_vocabulary = "benchmark"
    report = score_store(store, settings, ["chair"], progress=False, extractor=Words())
    assert report.scored["chair"] == 1, report.failures
    [score] = store.get_scores(responses[0].id, "chair")
    assert score.evidence["vocabulary"] == "benchmark b (2 names)"
    assert score.evidence["hallucinated"] == ["dog"] and score.evidence["ignored"] == ["tree"]


def test_head_kind_keeps_compounds_that_are_no_kind_of_their_last_word():
    from hallu_studio.lexicon.nouns import head_kind, relation

    assert [head_kind(n) for n in ("teddy bear", "hot dogs", "red sports car", "polar bear")] == \
        ["teddy bear", "hot dog", "car", "bear"]
    assert relation("bear", "teddy bear") is None and relation("dog", "hot dog") is None
    assert relation("bear", "polar bear") == "general"
