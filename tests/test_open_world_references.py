"""What a reference can settle (``reference_scope.Scope``), read the same way by every scorer: a scene graph is
complete; one dense caption names what is there; several captions and an object list settle only what they
state or contradict, the list complete within its vocabulary."""

from __future__ import annotations

import pytest

from hallu_studio.extraction import ParserExtractor
from hallu_studio.reference_scope import Scope
from hallu_studio.judges.graph_judge import SceneGraphAlignmentJudge
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.halfscore import HalFscoreMetric, reference_concepts
from hallu_studio.concept_matching import GraphConceptMatcher
from hallu_studio.metrics.trihe import TriHEMetric, reference_from_concepts, reference_for
from hallu_studio.model import (AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept, Sample,
                                SceneGraph)
from hallu_studio.revision.database import KEEP, NONE, SceneGraphDatabase
from hallu_studio.revision.rule_reviser import SceneGraphRuleReviser

CAPTIONS = ["A boy sitting on top of a briefcase.", "Two dogs sleep under a red sofa."]
# What a parser reads from those captions (given here so that no extractor decides the test).
CAPTION_CONCEPTS = ConceptSet(
    objects=[ObjectConcept("boy"), ObjectConcept("briefcase"), ObjectConcept("dog"), ObjectConcept("sofa")],
    attributes=[AttributeConcept("sofa", "red")],
    relations=[RelationConcept("boy", "sitting on top of", "briefcase"), RelationConcept("dog", "under", "sofa")],
    counts=[CountConcept("dog", 2)])


def coco_sample(objects: list[str] | None = None, captions: list[str] | str | None = None,
                kind: str = "captions") -> Sample:
    return Sample(id="coco/1", benchmark="coco", image_key="1", reference_text=captions, reference_kind=kind,
                  reference_objects=objects, reference_vocabulary="coco-80" if objects is not None else None)


def test_each_kind_of_reference_has_its_scope():
    graph = Sample(id="g/1", benchmark="g", image_key="1", scene_graph=SceneGraph.from_dict(
        {"objects": [{"id": "1", "name": "dog"}]}))
    assert Scope.of_sample(graph).closed
    dense = Scope.of_sample(coco_sample(captions="A long dense description.", kind="dense"))
    assert (dense.objects, dense.details) == (True, False)
    several = Scope.of_sample(coco_sample(["dog"], CAPTIONS))
    assert (several.objects, several.details, several.present) == (False, False, frozenset({"dog"}))
    assert several.absence("cat") and several.absence("puppy") is None and several.absence("tree") is None


def judge(claims, sample: Sample, concepts: ConceptSet = CAPTION_CONCEPTS):
    return SceneGraphAlignmentJudge().judge(claims, reference_from_concepts(concepts, sample))


def test_several_captions_leave_what_they_do_not_mention_unverifiable_and_flag_what_they_contradict():
    sample = coco_sample(captions=CAPTIONS)
    verdicts = judge([("tree", "is in", "the image"),  # never mentioned: the captions cannot say it is not there
                      ("dog", "in front of", "sofa"),  # another relation than theirs, no contrary: unverifiable
                      ("dog", "on", "sofa"),  # the contrary place of their "under"
                      ("sofa", "is", "blue"),  # another colour than the one they give
                      ("sofa", "is", "leather"),  # a material they do not give
                      ("dog", "is", "three"),  # another number than the one they state
                      ("boy", "sitting on", "box")],  # a box where they put a briefcase the response never names
                     sample)
    assert [(j.verdict, j.kind) for j in verdicts] == [
        ("unverifiable", "object"), ("unverifiable", "relation"), ("relation", "relation"),
        ("relation", "attribute"), ("unverifiable", "attribute"), ("object", "count"), ("object", "object")]
    assert "takes the place of 'briefcase'" in verdicts[-1].reason
    # Silence is left out of the hallucinated share against open references; the papers' count keeps it.
    assert not SceneGraphAlignmentJudge().counts_as_hallucination("unverifiable", closed=False)
    assert SceneGraphAlignmentJudge(unverifiable="hallucination").counts_as_hallucination("unverifiable", False)


def test_a_place_the_response_also_names_or_a_relation_of_many_things_is_no_substitution():
    sample = coco_sample(captions=CAPTIONS)
    # The response names the briefcase too: the box is something else, beside it.
    assert judge([("boy", "sitting on", "box"), ("briefcase", "is in", "the image")], sample)[0].verdict == \
        "unverifiable"
    # "in", "with", "holding": a subject has many at once.
    concepts = ConceptSet(objects=[ObjectConcept("man"), ObjectConcept("umbrella")],
                          relations=[RelationConcept("man", "holding", "umbrella")])
    assert judge([("man", "holding", "phone")], sample, concepts)[0].verdict == "unverifiable"


def test_counts_are_settled_only_by_numbers_the_captions_state():
    sample = coco_sample(captions=CAPTIONS)
    concepts = ConceptSet(objects=[ObjectConcept("cat"), ObjectConcept("player")], counts=[CountConcept("player", 4)])
    verdicts = judge([("cat", "is", "two"), ("player", "is", "one"), ("player", "is", "four")], sample, concepts)
    assert [j.verdict for j in verdicts] == ["unverifiable", "unverifiable", "supported"]


def test_an_object_list_settles_its_vocabulary_and_nothing_else():
    sample = coco_sample(objects=["person", "dog"])
    reference = reference_for(sample)
    assert reference.source == "object list" and reference.listed == ["person", "dog"]
    verdicts = SceneGraphAlignmentJudge().judge([("cat", "is in", "the image"), ("man", "is in", "the image"),
                                                 ("tree", "is in", "the image"), ("dog", "is", "two"),
                                                 ("dog", "is", "brown")], reference)
    assert [j.verdict for j in verdicts] == ["object", "supported", "unverifiable", "unverifiable", "unverifiable"]
    assert "'cat' is a coco-80 category the image's object list does not hold" in verdicts[0].reason
    # An empty list is a reference too: nothing of the vocabulary is there.
    empty = reference_for(coco_sample(objects=[]))
    assert SceneGraphAlignmentJudge().judge([("cat", "is in", "the image")], empty)[0].verdict == "object"


def test_a_dense_caption_still_names_what_is_there():
    sample = coco_sample(captions="Two dogs sleep under a red sofa.", kind="dense")
    concepts = ConceptSet(objects=[ObjectConcept("dog"), ObjectConcept("sofa")], counts=[CountConcept("dog", 2)])
    verdicts = judge([("cat", "is in", "the image"), ("sofa", "is", "leather")], sample, concepts)
    assert [j.verdict for j in verdicts] == ["object", "unverifiable"]


def test_tri_he_share_halfscore_and_emd_read_the_scope():
    sample = coco_sample(objects=["person", "dog"], captions=CAPTIONS)
    said = ConceptSet(objects=[ObjectConcept("dog"), ObjectConcept("cat"), ObjectConcept("tree")],
                      attributes=[AttributeConcept("dog", "brown")])
    item = ScoringItem("r", "A dog, a cat and a tree; the dog is brown.", sample, said)
    trihe = TriHEMetric(SceneGraphAlignmentJudge(), reference_extract=lambda text: CAPTION_CONCEPTS).update(item)
    verdicts = {tuple(t["triplet"]): t["verdict"] for t in trihe.evidence["triplets"]}
    assert verdicts[("cat", "is in", "the image")] == "object" and verdicts[("dog", "is", "brown")] == "unverifiable"
    # The cat whole; the tree and the brown dog, which the references cannot settle, a tenth each (the default
    # scoring.unverifiable_weight); each claim's evidence says so.
    assert trihe.values["hallucinated"] == pytest.approx(1.2) and trihe.values["n_triplets"] == 3
    assert trihe.evidence["reference"] == "reference captions + object list"
    assert [t.get("weight") for t in trihe.evidence["triplets"] if t["verdict"] == "unverifiable"] == [0.1, 0.1]
    halfscore = HalFscoreMetric(GraphConceptMatcher(), reference=lambda s: reference_concepts(
        s, lambda text: CAPTION_CONCEPTS)).update(item)
    assert halfscore.evidence["hallucinated"] == [["object", "cat"]]
    assert sorted(halfscore.evidence["unverifiable"]) == [["attribute", "dog", "brown"], ["object", "tree"]]
    assert halfscore.values["precision"] == pytest.approx(1 - (1 + 0.1 * 2) / 4)  # dog, cat, tree, (dog, brown)
    whole = HalFscoreMetric(GraphConceptMatcher(), reference=lambda s: reference_concepts(
        s, lambda text: CAPTION_CONCEPTS), unverifiable_weight=0.0).update(item)
    assert whole.values["precision"] == pytest.approx(1 - 1 / 4)
    assert TriHEMetric(SceneGraphAlignmentJudge(unverifiable_weight=0.0), reference_extract=lambda text:
                       CAPTION_CONCEPTS).update(item).values["hallucinated"] == 1


def test_the_revisers_database_removes_only_what_the_reference_settles():
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "dog"}]})
    scope = Scope.of_sample(coco_sample(objects=["dog"], captions=CAPTIONS))
    db = SceneGraphDatabase(graph, scope=scope)
    assert db.get_description("tree") == KEEP and db.get_description("cat") == NONE
    assert db.get_relation("dog", "tree") == KEEP and db.get_relation("dog", "cat") == NONE
    revised = SceneGraphRuleReviser(ParserExtractor()).revise("A dog sits under a tree next to a cat.", graph, scope).revised
    assert "tree" in revised and "cat" not in revised
