"""HalFscore: concept matching, absorption of dependent concepts, micro vs macro P/R/F."""

from __future__ import annotations

import json

import pytest

from hallu_studio.components import Components
from hallu_studio.config import LLMSettings
from hallu_studio.llm import LLMClient, LLMError
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.concepts import Concept, concept_graph, graph_concepts
from hallu_studio.metrics.halfscore import (
    EmbeddingConceptMatcher,
    HalFscoreMetric,
    LLMConceptMatcher,
    parse_serials,
    reference_concepts,
)
from hallu_studio.model import ConceptSet, Sample, SceneGraph
from test_llm_fake_server import FakeChatServer
from test_trihe import BagOfWordsEncoder

GRAPH = SceneGraph.from_dict({
    "objects": [{"id": "1", "name": "cat", "attributes": ["grey"]}, {"id": "2", "name": "sofa"},
                {"id": "3", "name": "lamp"}],
    "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
SAMPLE = Sample(id="d/1", benchmark="d", image_key="1", task="caption", scene_graph=GRAPH)


def concepts(objects=(), attributes=(), relations=()):
    return ConceptSet.from_dict({"objects": list(objects), "attributes": [list(a) for a in attributes],
                                 "relations": [list(r) for r in relations]})


def test_concept_graph_collects_relation_ends_and_deduplicates():
    cs = concepts(objects=["Cat", "cat"], attributes=[("cat", "grey"), ("cat", "Grey")],
                  relations=[("cat", "on", "sofa"), ("cat", "on", "sofa")])
    assert [c.to_list() for c in graph_concepts(concept_graph(cs))] == [
        ["object", "cat"], ["object", "sofa"], ["attribute", "cat", "grey"], ["relation", "cat", "on", "sofa"]]


def test_embedding_matcher_counts_and_absorbs_concepts_of_hallucinated_objects():
    metric = HalFscoreMetric(EmbeddingConceptMatcher(BagOfWordsEncoder(), threshold=0.99))
    # Response: cat (ok), sofa (ok), dog (hallucinated), grey cat (ok), brown dog (absorbed by dog),
    # cat on sofa (ok), dog near cat (absorbed by dog), cat under sofa (relation hallucination).
    cs = concepts(objects=["cat", "sofa", "dog"], attributes=[("cat", "grey"), ("dog", "brown")],
                  relations=[("cat", "on", "sofa"), ("dog", "near", "cat"), ("cat", "under", "sofa")])
    r = metric.update(ScoringItem("r1", "text", SAMPLE, mentioned=cs))
    assert r.undefined_reason is None
    assert r.values["hallucinated"] == 2  # dog, (cat under sofa)
    assert r.values["omitted"] == 1  # lamp
    assert r.values["matched"] == 4
    assert r.values["precision"] == pytest.approx(1 - 2 / 8)
    assert r.values["recall"] == pytest.approx(1 - 1 / 5)
    p, rec = 0.75, 0.8
    assert r.values["f"] == pytest.approx(2 * p * rec / (p + rec))
    assert ["object", "dog"] in r.evidence["hallucinated"]
    assert r.evidence["omitted"] == [["object", "lamp"]]
    assert r.stats["hallucinated_relation"] == 1 and r.stats["generated_relation"] == 3


def stats_for(gen, hall, ref, omit):
    s = {f"{k}_{kind}": 0.0 for k in ("generated", "reference", "hallucinated", "omitted")
         for kind in ("object", "attribute", "relation")}
    s.update(generated_object=gen, hallucinated_object=hall, reference_object=ref, omitted_object=omit)
    return s


def test_micro_and_macro_worked_example():
    """The module docstring: A (4 gen, 1 hall; 5 ref, 2 omit), B (1 gen, 1 hall; 5 ref, 5 omit)."""
    out = HalFscoreMetric(EmbeddingConceptMatcher(BagOfWordsEncoder())).compute(
        [stats_for(4, 1, 5, 2), stats_for(1, 1, 5, 5)])
    assert out["precision"] == pytest.approx(0.6)
    assert out["recall"] == pytest.approx(0.3)
    assert out["f"] == pytest.approx(0.4)
    assert out["precision_macro"] == pytest.approx(0.375)
    assert out["recall_macro"] == pytest.approx(0.3)
    assert out["f_macro"] == pytest.approx((2 * 0.75 * 0.6 / 1.35 + 0.0) / 2)
    assert out["hallucination_ratio_object"] == pytest.approx(2 / 5)


@pytest.mark.parametrize("text", ["", "...!!!", "Ein Hund sitzt.", "a " * 30000])
def test_empty_response_concepts_make_precision_undefined_and_recall_zero(text):
    metric = HalFscoreMetric(EmbeddingConceptMatcher(BagOfWordsEncoder()))
    r = metric.update(ScoringItem("r", text, SAMPLE, mentioned=ConceptSet()))
    assert r.values["precision"] is None and r.values["recall"] == 0.0
    assert "no concepts" in r.undefined_reason
    out = metric.compute([r.stats])
    assert out["recall"] == 0.0 and "precision" not in out


def test_no_reference_is_undefined_and_caption_needs_an_extractor():
    metric = HalFscoreMetric(EmbeddingConceptMatcher(BagOfWordsEncoder()))
    bare = Sample(id="x/1", benchmark="x", image_key="1", task="caption")
    r = metric.update(ScoringItem("r", "a cat", bare, mentioned=concepts(objects=["cat"])))
    assert "no reference concepts" in r.undefined_reason
    captioned = Sample(id="x/2", benchmark="x", image_key="2", task="caption", reference_text="A grey cat.")
    with pytest.raises(ValueError, match="needs an extractor"):
        reference_concepts(captioned)
    got = reference_concepts(captioned, lambda text: concepts(objects=["cat"], attributes=[("cat", "grey")]))
    assert got.to_dict()["attributes"] == [["cat", "grey"]]


def test_parse_serials():
    assert parse_serials("Analysis...\nIncorrect Serial Numbers: 5, 2, 2", 6) == [2, 5]
    assert parse_serials("Incorrect Serial Numbers: none", 3) == []
    with pytest.raises(ValueError):
        parse_serials("I found two problems", 3)
    with pytest.raises(ValueError):
        parse_serials("Incorrect Serial Numbers: 9", 3)


def test_llm_matcher_uses_a8_lists(store):
    def answer(prompt: str) -> str:
        vlm = prompt.split("VLM List:\n")[1]
        if "DOG" in vlm:  # the response checked against the reference
            return "Incorrect Serial Numbers: 2"
        return "Analysis: lamp is missing.\nIncorrect Serial Numbers: 3"

    with FakeChatServer([("by_content", answer)], plain_text_only=True) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01)
        metric = HalFscoreMetric(LLMConceptMatcher(client))
        r = metric.update(ScoringItem("r", "t", SAMPLE, mentioned=concepts(objects=["cat", "dog"])))
        assert r.evidence["hallucinated"] == [["object", "dog"]]
        assert r.evidence["omitted"] == [["object", "lamp"]]
        assert r.values["precision"] == 0.5 and r.values["recall"] == pytest.approx(1 - 1 / 5)
        assert '("NODE":DOG)' in server.requests[0]["messages"][0]["content"]


def test_llm_matcher_unusable_answer_is_a_typed_error():
    with FakeChatServer([("ok", "I am not sure.")], plain_text_only=True) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake"), None, backoff_s=0.01)
        with pytest.raises(LLMError, match="not usable"):
            LLMConceptMatcher(client).match([Concept("object", ("cat",))], [Concept("object", ("cat",))])


def test_llm_matcher_caps_its_answer_by_the_list_and_a_cut_answer_is_not_cached(store):
    from hallu_studio.llm import LLMAnswerError
    from hallu_studio.llm.dispatch import list_answer_tokens

    response = [Concept("object", ("cat",)), Concept("object", ("dog",))]
    reference = [Concept("object", ("cat",)), Concept("object", ("sofa",)), Concept("object", ("lamp",))]
    cut = {"on": True}

    def answer(prompt: str):
        if "DOG" in prompt.split("VLM List:\n")[1]:  # the response's concepts checked
            if cut["on"]:
                return "Incorrect Serial Numbers: 2, 2, 2, 2, 2", "length"
            return "Incorrect Serial Numbers: 2"
        return "Incorrect Serial Numbers: 2, 3"  # the reference's, for omissions

    with FakeChatServer([("by_content", answer)], plain_text_only=True) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01)
        matcher = LLMConceptMatcher(client)
        with pytest.raises(LLMAnswerError, match="cut at max_tokens") as info:
            matcher.match(response, reference)  # the cut answer reads as [2], but it is not used
        assert info.value.truncated
        assert client.dispatcher.stats.parse_failures["halfscore.hallucinated"] == 1
        plain = [r for r in server.requests if "response_format" not in r]
        # Both questions were asked; the cap follows the list checked: the response's 2 concepts, the reference's 3.
        assert sorted(r["max_tokens"] for r in plain) == [list_answer_tokens(2), list_answer_tokens(3)]
        cut["on"] = False
        matcher = LLMConceptMatcher(LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache,
                                              backoff_s=0.01))  # the next pass
        out = matcher.match(response, reference)  # the cut one asked again; the other answer was cached
        assert out.hallucinated == [Concept("object", ("dog",))]
        assert out.omitted == [Concept("object", ("sofa",)), Concept("object", ("lamp",))]
        assert len([r for r in server.requests if "response_format" not in r]) == 3
        assert list_answer_tokens(2) < list_answer_tokens(3)


def test_real_llava_captions_against_dci_reference_word_concepts():
    """Real captions vs their own reference beat captions vs another image's reference (bag of words)."""
    from conftest import shared_dataset

    refs = {r["image"]: r["caption"] for r in json.loads(shared_dataset("halfscore", "annotation.json").read_text())}
    rows = [json.loads(line) for line in shared_dataset("halfscore", "llava-1.5-7b_captions.jsonl")
            .read_text().splitlines()[:12]]
    rows = [r for r in rows if r["image"] in refs and isinstance(r["caption"], str)]

    def words(text: str) -> ConceptSet:  # a crude stand-in extractor: content words as objects, once each
        import re
        stop = {"the", "a", "an", "and", "of", "in", "on", "is", "are", "with", "to", "there", "this", "it", "its",
                "at", "as", "by", "be", "for", "from", "that", "which", "image", "some", "has", "can", "also"}
        # Once each, as extractors report a concept (a name listed twice would be a count of two).
        return concepts(objects=list(dict.fromkeys(w for w in re.findall(r"[a-z]+", text.lower())
                                                   if w not in stop and len(w) > 2)))

    metric = HalFscoreMetric(EmbeddingConceptMatcher(BagOfWordsEncoder(), threshold=0.99),
                             reference=lambda s: words(s.reference_text))
    own, other = [], []
    for i, row in enumerate(rows):
        for tag, bucket, ref_text in (("own", own, refs[row["image"]]),
                                      ("other", other, refs[rows[(i + 1) % len(rows)]["image"]])):
            sample = Sample(id=f"h/{i}/{tag}", benchmark="h", image_key=row["image"], task="caption",
                            reference_text=ref_text)
            bucket.append(metric.update(ScoringItem("r", row["caption"], sample, words(row["caption"]))).stats)
    assert len(own) >= 8
    assert metric.compute(own)["f"] > metric.compute(other)["f"] + 0.05


def test_update_many_matches_update():
    metric = HalFscoreMetric(EmbeddingConceptMatcher(BagOfWordsEncoder(), threshold=0.99))
    items = [ScoringItem("r1", "t", SAMPLE, mentioned=concepts(objects=["cat", "dog"])),
             ScoringItem("r2", "t", SAMPLE, mentioned=None),
             ScoringItem("r3", "t", Sample(id="x/9", benchmark="x", image_key="9", task="caption",
                                           reference_text="only a caption"), mentioned=concepts(objects=["cat"]))]
    with pytest.raises(ValueError):
        metric.update(items[2])
    many = metric.update_many(items[:2])
    assert [(r.stats, r.values) for r in many] == [(r.stats, r.values) for r in map(metric.update, items[:2])]


# --------------------------------------------------------------------------- the graph matcher

DOGS = Sample(id="d/2", benchmark="d", image_key="2", task="caption", scene_graph=SceneGraph.from_dict({
    "objects": [{"id": "1", "name": "dog", "attributes": ["brown"]}, {"id": "2", "name": "dog"},
                {"id": "3", "name": "sofa"}, {"id": "4", "name": "external tank"}],
    "relations": [{"subject": "1", "predicate": "on", "object": "3"}]}))


def with_counts(cs: ConceptSet, *counts: tuple[str, int, tuple[int, int] | None]) -> ConceptSet:
    """Counts as the parser gives them (``ConceptSet.counts``), whether or not the model has the field yet."""
    from types import SimpleNamespace

    cs.counts = [SimpleNamespace(object=o, count=n, span=sp) for o, n, sp in counts]
    return cs


def test_graph_matcher_worked_example():
    """The concept_matching docstring: hypernym and synonym ground; conflicts, wrong edges and counts are caught."""
    from hallu_studio.concept_matching import GraphConceptMatcher

    metric = HalFscoreMetric(GraphConceptMatcher())
    cs = with_counts(concepts(objects=["animal", "couch", "dog", "tank"],
                              attributes=[("dog", "brown"), ("dog", "black"), ("tank", "external")],
                              relations=[("dog", "under", "sofa")]), ("dog", 3, None))
    r = metric.update(ScoringItem("r", "t", DOGS, mentioned=cs))
    assert sorted(r.evidence["hallucinated"]) == [["attribute", "dog", "black"], ["count", "dog", "3"],
                                                  ["relation", "dog", "under", "sofa"]]
    reasons = dict(zip(map(tuple, r.evidence["hallucinated"]), r.evidence["reasons"]["hallucinated"]))
    assert "is brown" in reasons[("attribute", "dog", "black")]
    assert "'on'" in reasons[("relation", "dog", "under", "sofa")]
    assert "has 2" in reasons[("count", "dog", "3")]
    # Omitted: the count (dog, 2) and the edge (dog, on, sofa); every object was matched.
    assert sorted(r.evidence["omitted"]) == [["count", "dog", "2"], ["relation", "dog", "on", "sofa"]]
    assert r.stats["generated_count"] == 1 and r.stats["reference_count"] == 1
    # Generated: 5 objects (sofa is the relation's end), 3 attributes, 1 relation, 1 count.
    assert r.values["precision"] == pytest.approx(1 - 3 / 10)


def test_graph_matcher_inverse_edges_silent_attributes_and_absorption():
    from hallu_studio.concept_matching import GraphConceptMatcher

    metric = HalFscoreMetric(GraphConceptMatcher())
    # (sofa, under, dog) is the edge read the other way; "fluffy" the graph is silent on counts (A.8);
    # the cat is hallucinated and its attribute and relation are absorbed.
    cs = concepts(objects=["dog", "sofa", "cat"], attributes=[("dog", "fluffy"), ("cat", "white")],
                  relations=[("sofa", "under", "dog"), ("cat", "on", "sofa")])
    r = metric.update(ScoringItem("r", "t", DOGS, mentioned=cs))
    assert sorted(r.evidence["hallucinated"]) == [["attribute", "dog", "fluffy"], ["object", "cat"]]
    assert "does not say" in r.evidence["reasons"]["hallucinated"][r.evidence["hallucinated"].index(
        ["attribute", "dog", "fluffy"])]
    assert ["relation", "dog", "on", "sofa"] not in r.evidence["omitted"]


def test_graph_matcher_ignores_colour_words_taken_for_objects_and_reads_dense_references():
    from hallu_studio.concept_matching import GraphConceptMatcher

    caption = Sample(id="x/3", benchmark="x", image_key="3", task="caption", reference_text="Two grey cats on a sofa.")
    extracted = with_counts(concepts(objects=["cat", "sofa"], attributes=[("cat", "grey")],
                                     relations=[("cat", "on", "sofa")]), ("cat", 2, None))
    metric = HalFscoreMetric(GraphConceptMatcher(), reference=lambda s: reference_concepts(s, lambda t: extracted))
    response = with_counts(concepts(objects=["cats", "gold", "couch"], attributes=[("cat", "gray"), ("sofa", "gold")],
                                    relations=[("cat", "sitting on", "couch")]), ("cat", 2, None))
    r = metric.update(ScoringItem("r", "t", caption, mentioned=response))
    assert r.evidence["ignored"] == [["object", "gold"]]
    # A dense caption does not give every colour: the sofa's is unverifiable, not hallucinated (scoring.unverifiable).
    assert r.evidence["hallucinated"] == [] and r.evidence["unverifiable"] == [["attribute", "sofa", "gold"]]
    assert r.evidence["omitted"] == []
    assert r.stats["generated_object"] == 4  # cats, couch, and the attributes' owners cat and sofa; not "gold"
    as_a8 = HalFscoreMetric(GraphConceptMatcher(), reference=lambda s: reference_concepts(s, lambda t: extracted),
                            unverifiable="hallucination").update(ScoringItem("r", "t", caption, mentioned=response))
    assert as_a8.evidence["hallucinated"] == [["attribute", "sofa", "gold"]]


def test_halfscore_evidence_points_probe_detection_at_the_distinctive_words():
    from hallu_studio.concept_matching import GraphConceptMatcher
    from hallu_studio.model import AttributeConcept, ObjectConcept, RelationConcept
    from hallu_studio.studies.probe_detection import flagged_spans

    text = "The image shows three dogs and a sofa. The dog is brown and black. The dog is under the sofa."
    at = text.index
    cs = ConceptSet(
        objects=[ObjectConcept("dog", (at("dogs"), at("dogs") + 4)), ObjectConcept("sofa", (at("sofa"), at("sofa") + 4))],
        attributes=[AttributeConcept("dog", "brown", (at("dog is brown"), at(" brown") + 6)),
                    AttributeConcept("dog", "black", (at("dog is brown"), at(" black") + 6))],
        relations=[RelationConcept("dog", "under", "sofa", (at("dog is under"), len(text) - 1))])
    with_counts(cs, ("dog", 3, (at("three"), at("three") + 5)))
    r = HalFscoreMetric(GraphConceptMatcher()).update(ScoringItem("r", text, DOGS, mentioned=cs))
    flagged = sorted(text[a:b] for a, b in flagged_spans("halfscore", r.values, r.evidence, text))
    assert flagged == ["black", "three", "under"]


def test_matcher_choice_defaults_to_graph_and_names_the_choices():
    from hallu_studio.config import Settings

    encoder = BagOfWordsEncoder()
    assert HalFscoreMetric.from_settings(Settings(), components=Components(encoder=encoder)).matcher.name == "graph"
    assert HalFscoreMetric.from_settings(Settings(), matcher="embedding", components=Components(encoder=encoder)).matcher.name == "embedding"
    with pytest.raises(ValueError, match="graph, embedding, llm"):
        HalFscoreMetric.from_settings(Settings(), matcher="fuzzy", components=Components(encoder=encoder))


def test_a_sample_with_a_scene_graph_is_compared_with_the_graph_not_its_caption():
    g = SceneGraph.from_dict({"objects": [{"id": "a", "name": "patch"}, {"id": "b", "name": "spacesuit"}],
                              "relations": [{"subject": "a", "predicate": "on", "object": "b"}]})
    both = Sample(id="x/4", benchmark="x", image_key="4", task="caption", scene_graph=g,
                  reference_text="An astronaut in a suit.")
    got = reference_concepts(both, lambda text: concepts(objects=["astronaut", "suit"]))
    assert got.to_dict()["relations"] == [["patch", "on", "spacesuit"]]


def test_graph_matcher_checks_a_relation_on_the_objects_its_adjectives_mean():
    from hallu_studio.concept_matching import GraphConceptMatcher
    from hallu_studio.model import ObjectConcept, RelationConcept

    g = SceneGraph.from_dict({"objects": [
        {"id": "a", "name": "cube", "attributes": ["red"]}, {"id": "b", "name": "cube", "attributes": ["blue"]}],
        "relations": [{"subject": "a", "predicate": "left of", "object": "b"}]})
    sample = Sample(id="x/5", benchmark="x", image_key="5", task="caption", scene_graph=g)
    metric = HalFscoreMetric(GraphConceptMatcher())
    said = ConceptSet(objects=[ObjectConcept("cube", (4, 8))], relations=[
        RelationConcept("cube", "left of", "cube", (4, 30), ("red",), ("blue",)),
        RelationConcept("cube", "left of", "cube", (40, 66), ("blue",), ("red",))])
    r = metric.update(ScoringItem("r", "x" * 70, sample, mentioned=said))
    # Two concepts, though their names are one triplet; the second is true of no pair its adjectives mean.
    assert r.values["hallucinated"] == 1
    assert r.evidence["hallucinated_spans"] == [[40, 66]]
