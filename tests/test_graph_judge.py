"""The scene-graph alignment judge, the grounding under it and the lexicon it reads: worked examples."""

from __future__ import annotations

import pytest

from hallu_studio.grounding import Grounder, ReferenceGraph
from hallu_studio.judges import JudgeReference, SceneGraphAlignmentJudge
from hallu_studio.lexicon import attributes
from hallu_studio.lexicon import entails, inverse, noun_phrase, parse_predicate, plural, singular
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.trihe import TriHEMetric
from hallu_studio.model import ConceptSet, Sample, SceneGraph

GRAPH = SceneGraph.from_dict({
    "objects": [{"id": "1", "name": "dog", "attributes": ["brown"]}, {"id": "2", "name": "sofa"},
                {"id": "3", "name": "man"}, {"id": "4", "name": "horse"}, {"id": "5", "name": "shirt"},
                {"id": "6", "name": "cup"}, {"id": "7", "name": "cup"}, {"id": "8", "name": "table"}],
    "relations": [{"subject": "1", "predicate": "on", "object": "2"},
                  {"subject": "3", "predicate": "riding", "object": "4"},
                  {"subject": "5", "predicate": "wearing", "object": "3"},  # written backwards, as Tri-HE does
                  {"subject": "6", "predicate": "on", "object": "8"}]})


def attributes_conflict(a: str, b: str) -> bool:
    """Whether an object cannot be both ``a`` and ``b`` (same scale, different class)."""
    ka, kb = attributes._key(a), attributes._key(b)
    if ka == kb or attributes.same_attribute(ka, kb):
        return False
    return any(s is t and i != j for _, s, i in attributes._SCALES_OF.get(ka, ()) for _, t, j in attributes._SCALES_OF.get(kb, ()))



def verdict(claim, gold=(), speculative=False):
    ref = JudgeReference(graph=GRAPH, gold=list(gold), speculative=frozenset({0}) if speculative else frozenset())
    return SceneGraphAlignmentJudge().judge([claim], ref)[0]


@pytest.mark.parametrize("claim,expected,kind", [
    (("dog", "on", "couch"), "supported", "relation"),          # synonym of the node's name
    (("dog", "under", "sofa"), "relation", "relation"),         # the edge says "on"
    (("sofa", "under", "dog"), "supported", "relation"),        # the inverse of the edge
    (("horse", "riding", "man"), "relation", "relation"),       # reversed roles
    (("horse", "ridden by", "man"), "supported", "relation"),   # passive
    (("man", "wearing", "shirt"), "supported", "relation"),     # a backwards agentive edge read the right way
    (("man", "holding", "shirt"), "relation", "relation"),      # conflicting edge
    (("man", "near", "horse"), "supported", "relation"),        # riding it is near it
    (("dog", "near", "table"), "relation", "relation"),         # no edge at all, as the paper counts it
    (("cat", "on", "sofa"), "object", "object"),                # no node
    (("dog", "is", "black"), "relation", "attribute"),          # colour conflict
    (("dog", "is", "brown"), "supported", "attribute"),
    (("dog", "is", "large"), "unverifiable", "attribute"),      # the graph is silent on size
    (("dog", "is", "calm"), "inference", "inference"),          # no visual family
    (("cup", "is", "two"), "supported", "count"),
    (("cup", "is", "three"), "object", "count"),
    (("dog", "is", "two"), "object", "count"),
])
def test_verdicts(claim, expected, kind):
    j = verdict(claim)
    assert (j.verdict, j.kind) == (expected, kind), j.reason
    assert j.reason


def test_a_less_specific_true_claim_is_supported():
    assert verdict(("animal", "on", "sofa")).verdict == "supported"


def test_inferences_against_gold_triplets():
    assert verdict(("car", "used for", "transportation")).verdict == "inference"
    gold = [("car", "used for", "transportation")]
    assert verdict(("car", "used for", "transportation"), gold).verdict == "supported"
    # A gold triplet supports a visual claim only with a predicate that entails it.
    assert verdict(("dog", "under", "ball"), [("dog", "on", "ball")]).verdict in ("object", "relation")


def test_a_guess_the_graph_cannot_check_is_an_inference_but_a_contradicted_guess_is_not():
    assert verdict(("man", "near", "market"), speculative=True).verdict == "inference"
    assert verdict(("dog", "under", "sofa"), speculative=True).verdict == "relation"


def test_an_edge_that_only_joins_two_things_contradicts_no_relation_between_them():
    # "(person with helmet, ...)" read as person -with-> helmet: "with" says they go together, not how.
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "person"}, {"id": "2", "name": "helmet"}],
                                  "relations": [{"subject": "1", "predicate": "with", "object": "2"}]})
    judge = SceneGraphAlignmentJudge()
    plain = judge.judge([("person", "wearing", "helmet")], JudgeReference(graph=graph))[0]
    assert plain.verdict == "relation" and plain.reason.startswith("no edge") and "only has" in plain.reason
    guess = judge.judge([("person", "wearing", "helmet")], JudgeReference(graph=graph, speculative=frozenset({0})))
    assert guess[0].verdict == "inference"
    assert judge.judge([("person", "with", "helmet")], JudgeReference(graph=graph))[0].verdict == "supported"


def test_unverifiable_policy_decides_what_counts():
    counting = TriHEMetric(SceneGraphAlignmentJudge())
    ignoring = TriHEMetric(SceneGraphAlignmentJudge(unverifiable="ignore"))
    sample = Sample(id="s/1", benchmark="s", image_key="1", task="caption", scene_graph=GRAPH)
    concepts = ConceptSet.from_dict({"attributes": [["dog", "large"], ["dog", "brown"]]})
    item = ScoringItem("r", "The dog is large and brown.", sample, mentioned=concepts)
    assert counting.update(item).stats["hallucinated"] == 1
    assert ignoring.update(item).stats["hallucinated"] == 0
    assert counting.update(item).evidence["triplets"][0]["hallucinated"] is True


def test_reference_graph_merges_names_and_keeps_multiplicity():
    g = ReferenceGraph.from_scene_graph(GRAPH)
    cup = next(n for n in g.nodes if n.name == "cup")
    assert cup.multiplicity == 2
    assert [m.how for m in Grounder().ground("cups", g)] == ["lemma"]
    placed = ReferenceGraph.from_triplets(["food in pan", "vegetables and meat"], [])
    assert Grounder().ground("food", placed) and Grounder().ground("meat", placed)


def test_lexicon_forms_and_predicates():
    assert [singular(w) for w in ("petals", "leaves", "glasses", "bus", "women")] == [
        "petal", "leaf", "glasses", "bus", "woman"]
    assert plural("woman") == "women" and noun_phrase(1, "umbrella") == "an umbrella"
    assert noun_phrase(2, "glasses") == "two pairs of glasses" and noun_phrase(1, "grass") == "grass"
    assert entails(parse_predicate("sitting on"), parse_predicate("on"))
    assert not entails(parse_predicate("on"), parse_predicate("under"))
    assert entails(parse_predicate("sitting on"), parse_predicate("next to"))  # touching is near
    assert not entails(parse_predicate("are"), parse_predicate("next to"))  # "(lambs, are, small sheep)" places nothing
    assert inverse(parse_predicate("to the left of")) == parse_predicate("right of")
    assert attributes_conflict("red", "blue") and not attributes_conflict("tall", "wide")


def test_an_object_named_outside_every_relation_is_claimed_to_be_there_for_the_graph_judge_only():
    from hallu_studio.judges import EmbeddingSimilarityJudge

    class Unit:  # every phrase the same vector: the released check's claims are all that matter here
        def encode(self, texts):
            import numpy as np
            return np.ones((len(texts), 2))

    sample = Sample(id="s/1", benchmark="s", image_key="1", task="caption", scene_graph=GRAPH)
    concepts = ConceptSet.from_dict({"objects": ["giraffe", "dog", "sofa"], "relations": [["dog", "on", "sofa"]]})
    item = ScoringItem("r", "A dog on a sofa, and a giraffe.", sample, mentioned=concepts)
    graph = TriHEMetric(SceneGraphAlignmentJudge()).update(item)
    assert [(t["triplet"], t["verdict"]) for t in graph.evidence["triplets"]] == [
        (["dog", "on", "sofa"], "supported"), (["giraffe", "is in", "the image"], "object")]
    released = TriHEMetric(EmbeddingSimilarityJudge(Unit())).update(item)
    assert [t["triplet"] for t in released.evidence["triplets"]] == [["dog", "on", "sofa"]]


def test_a_sentence_s_attributes_describe_one_object_of_a_name():
    spheres = SceneGraph.from_dict({"objects": [{"id": "1", "name": "sphere", "attributes": ["large", "red"]},
                                                {"id": "2", "name": "sphere", "attributes": ["small", "blue"]}]})
    sample = Sample(id="s/2", benchmark="s", image_key="2", task="caption", scene_graph=spheres)
    text = "The sphere is large and blue. The sphere is small."
    concepts = ConceptSet.from_dict({"attributes": [["sphere", "large"], ["sphere", "blue"], ["sphere", "small"]],
                                     "attribute_spans": [[14, 19], [24, 28], [44, 49]]})
    out = TriHEMetric(SceneGraphAlignmentJudge()).update(ScoringItem("r", text, sample, mentioned=concepts))
    verdicts = [(t["triplet"][2], t["verdict"]) for t in out.evidence["triplets"]]
    # "large" picks the red sphere, which is not blue; "small" alone fits the other sphere
    assert ("large", "supported") in verdicts and ("small", "supported") in verdicts
    assert ("blue", "relation") in verdicts


def test_relation_between_two_objects_of_one_name_is_checked_on_the_ones_its_adjectives_mean():
    g = SceneGraph.from_dict({"objects": [
        {"id": "a", "name": "cube", "attributes": ["red", "small"]},
        {"id": "b", "name": "cube", "attributes": ["blue", "large"]},
        {"id": "c", "name": "sphere", "attributes": ["gray"]}],
        "relations": [{"subject": "a", "predicate": "left of", "object": "b"},
                      {"subject": "c", "predicate": "behind", "object": "a"}]})
    judge = SceneGraphAlignmentJudge()
    claims = [("cube", "left of", "cube"), ("cube", "left of", "cube"), ("sphere", "behind", "cube"),
              ("sphere", "behind", "cube"), ("cube", "right of", "cube")]
    quals = ((("red",), ("blue",)), (("blue",), ("red",)), ((), ("small",)), ((), ("blue",)), ((), ()))
    ref = JudgeReference(graph=g, objects=g.object_names(), qualifiers=quals)
    got = [j.verdict for j in judge.judge(claims, ref)]
    # Names alone cannot tell: "the cube is right of the cube" is true of the pair read the other way round.
    assert got == ["supported", "relation", "supported", "relation", "supported"]
    assert "the blue one" in judge.judge(claims, ref)[1].reason


def test_adjectives_naming_a_relations_ends_are_not_read_as_one_objects_attributes():
    g = SceneGraph.from_dict({"objects": [
        {"id": "a", "name": "cube", "attributes": ["red"]}, {"id": "b", "name": "cube", "attributes": ["blue"]}],
        "relations": [{"subject": "a", "predicate": "left of", "object": "b"}]})
    metric = TriHEMetric(SceneGraphAlignmentJudge())
    from hallu_studio.extraction import ParserExtractor

    text = "The red cube is left of the blue cube."
    sample = Sample(id="x/1", benchmark="x", image_key="1", task="caption", scene_graph=g)
    result = metric.update(ScoringItem("r", text, sample, mentioned=ParserExtractor().extract([text])[0]))
    assert [t["verdict"] for t in result.evidence["triplets"]] == ["supported"] * 3, result.evidence["triplets"]


def _judged(claim, *, question=None, gold=()):
    ref = JudgeReference(graph=GRAPH, gold=list(gold), question=question)
    return SceneGraphAlignmentJudge().judge([claim], ref)[0]


def test_a_count_the_question_states_is_its_premise_not_a_hallucination():
    # The graph has two cups; the question (and so the answer) says three.
    j = _judged(("cup", "is", "three"), question="Why are the three cups on the table?")
    assert j.verdict == "supported" and "question itself says 3" in j.reason and "the graph has 2" in j.reason
    # A number the question does not state, or states of another thing, is still checked against the graph.
    assert _judged(("cup", "is", "three"), question="What is on the table?").verdict == "object"
    assert _judged(("cup", "is", "three"), question="Why are three men near the cups?").verdict == "object"


def test_an_attribute_a_gold_triplet_states_in_its_predicate_or_object_is_supported():
    j = _judged(("sofa", "is", "empty"), gold=[("sofa", "mostly empty", "room")])
    assert j.verdict == "supported" and "mostly empty" in j.reason
    assert _judged(("sofa", "is", "soft"), gold=[("sofa", "is", "wide and soft")]).verdict == "supported"
    assert _judged(("dog", "is", "small"), gold=[("puppy", "is", "small dog")]).verdict == "supported"
    # Under a negation the gold triplet denies it; another attribute it does not say.
    assert _judged(("sofa", "is", "empty"), gold=[("sofa", "not empty", "room")]).verdict != "supported"
    assert _judged(("sofa", "is", "large"), gold=[("sofa", "mostly empty", "room")]).verdict != "supported"


def test_a_relation_a_gold_triplet_spells_out_in_its_own_words_is_supported():
    # Tri-HE's gold triplets fold the object into the predicate: (man, wearing a blue cap, sunny day).
    gold = [("man", "wearing blue cap", "sunny day")]
    j = _judged(("man", "wearing", "blue cap"), gold=gold)
    assert j.verdict == "supported" and "own words" in j.reason
    assert _judged(("man", "holding", "blue cap"), gold=gold).verdict == "object"  # not what it says
    assert _judged(("man", "wearing", "scarf"), gold=gold).verdict == "object"
    assert _judged(("man", "wearing", "blue cap"), gold=[("man", "not wearing blue cap", "sunny day")]).verdict \
        == "object"
    # Between two nodes with no edge: a gold triplet with the same words still says it.
    assert _judged(("dog", "sleeping on", "table"), gold=[("dog", "sleeping on table near", "sofa")]).verdict \
        == "supported"
    assert _judged(("dog", "sleeping on", "table")).verdict == "relation"


def test_a_predicate_that_gives_a_reason_is_an_inference():
    j = _judged(("horse", "sweating because", "man"))
    assert j.verdict == "inference", j.reason


def test_a_count_over_names_of_one_kind_takes_the_largest_over_distinct_kinds_the_sum():
    judge = SceneGraphAlignmentJudge()
    # "two individuals ... the person in front": person names one of the two again.
    same = JudgeReference(objects=["individual", "person"], counts={"individual": 2})
    assert [j.verdict for j in judge.judge([("man", "is", "two"), ("man", "is", "three")], same)] == [
        "supported", "object"]
    # "two women ... a man": three people.
    apart = JudgeReference(objects=["woman", "man"], counts={"woman": 2})
    assert [j.verdict for j in judge.judge([("person", "is", "three"), ("person", "is", "two")], apart)] == [
        "supported", "object"]


def test_a_thing_given_a_colour_is_seen_even_when_its_noun_is_first_a_notion():
    ref = JudgeReference(objects=["sign", "logo"], triplets=[("sign", "is", "blue")])
    got = SceneGraphAlignmentJudge().judge([("sign", "is", "gray"), ("sign", "is", "blue"), ("logo", "is", "red")], ref)
    assert [j.verdict for j in got] == ["relation", "supported", "unverifiable"]


def test_a_noun_the_reference_holds_is_a_thing_in_the_picture():
    # WordNet's first senses of "word" and "sign" are abstract; the reference names them as things in the picture.
    ref = JudgeReference(triplets=[("word", "on", "sweatshirt"), ("sign", "on", "wall")],
                         objects=["word", "sweatshirt", "sign", "wall", "man"])
    judge = SceneGraphAlignmentJudge()
    swapped, sign, abstract, kind_of = judge.judge([("word", "under", "sweatshirt"), ("sign", "under", "wall"),
                                                    ("man", "enjoying", "quality"), ("man", "enjoying", "symbol")], ref)
    assert (swapped.verdict, sign.verdict) == ("relation", "relation") and "conflicting edge" in swapped.reason
    assert abstract.verdict == "inference"  # a noun no one sees, which the reference does not hold
    assert kind_of.verdict == "inference"  # a kind the held "sign" belongs to is not the sign itself
