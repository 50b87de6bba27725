"""Evaluate-by-Edit: the scene-graph database, the rule reviser, the LLM reviser and the metric."""

import json

import pytest

from hallu_studio.extraction import ParserExtractor
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.evaluate_by_edit import EvaluateByEditMetric, graph_from_concepts
from hallu_studio.model import ConceptSet, Sample, SceneGraph
from hallu_studio.revision import KEEP, NONE, SceneGraphDatabase, SceneGraphRuleReviser
from hallu_studio.llm.dispatch import revise_caption_tokens, revise_queries_tokens
from hallu_studio.revision.llm_reviser import LLMReviser

GRAPH = SceneGraph.from_dict({
    "objects": [{"id": "1", "name": "car", "attributes": ["blue"]}, {"id": "2", "name": "street"},
                {"id": "3", "name": "man"}, {"id": "4", "name": "trees", "attributes": ["green"]},
                {"id": "5", "name": "table", "attributes": ["wooden"]}],
    "relations": [{"subject": "1", "predicate": "parked on", "object": "2"}],
})


@pytest.fixture(scope="module")
def reviser():
    return SceneGraphRuleReviser(ParserExtractor())


def test_database_answers_none_keep_or_what_it_knows():
    db = SceneGraphDatabase(GRAPH)
    assert db.get_description("dog") == NONE
    assert db.get_description("Cars") == "blue car"
    assert db.get_attributes("car") == json.dumps(["blue"])
    assert db.get_attributes("street") == KEEP
    assert db.get_attributes("dog") == NONE
    assert db.get_relation("car", "street") == "parked on"
    assert db.get_relation("man", "street") == KEEP  # both exist, relation not annotated
    assert db.get_relation("man", "dog") == NONE
    assert db.get_description("coffee table") == "wooden table"  # same head noun
    assert db.get_description("automobile") == "blue car"  # a synonym
    assert db.seen_objects() == ["car_0", "street_0", "man_0", "trees_0", "table_0"]


def test_database_executes_llm_calls():
    db = SceneGraphDatabase(GRAPH)
    calls = db.execute_all("[BEGIN API]\nGetDescription(<object car_0>)\nGetRelation(⟨object man₀⟩, street_1)\n"
                           "GetAttributes(\"dog\")\n[END API]")
    # calls keep the ids the LLM wrote; matching ignores them
    assert [(q.call, q.result) for q in calls] == [("GetDescription(car_0)", "blue car"),
                                                  ("GetRelation(man₀, street_1)", KEEP),
                                                  ("GetAttributes(dog)", NONE)]
    with pytest.raises(ValueError, match="takes 2"):
        db.execute("GetRelation(car)")


@pytest.mark.parametrize("original,revised", [
    ("A red car is parked on the street next to a dog.", "A blue car is parked on the street."),
    ("A man holding a phone stands near the trees.", "A man stands near the trees."),
    ("A cat sits on the table. The car is red.", "The car is blue."),
    ("There are a man, a dog and a table.", "There are a man and a table."),
    ("A plastic table with a vase on it.", "A wooden table."),
    ("The man stands on the street, and a woman walks her dog.", "The man stands on the street."),
    ("A blue car, a man and green trees.", "A blue car, a man and green trees."),  # all KEEP
    # Grounded through the lexicon: a synonym ("automobile") and a kind ("vehicle") of the car are kept.
    ("A blue automobile near a man.", "A blue automobile near a man."),
    ("A red vehicle and a dog.", "A blue vehicle."),
])
def test_rule_reviser_removes_none_fixes_conflicts_keeps_the_rest(reviser, original, revised):
    assert reviser.revise(original, GRAPH).revised == revised


def test_rule_reviser_records_its_queries(reviser):
    rev = reviser.revise("A red car is parked on the street next to a dog.", GRAPH)
    calls = {q["call"]: q["result"] for q in rev.queries}
    assert calls["GetDescription(dog)"] == NONE
    assert calls["GetAttributes(car)"] == '["blue"]'
    assert calls["GetRelation(car, street)"] == "parked on"
    assert rev.reviser == "scene-graph-rule"


class FakeLLM:
    name = "fake"

    def __init__(self):
        self.calls = []
        self.params = []

    def complete_checked(self, messages, *, namespace, prompt_version, check, json_schema=None, lenient=None,
                         **params):
        """A server without structured output: plain-text answers, read leniently."""
        self.calls.append((namespace, messages))
        self.params.append(params)
        if namespace == "edit-queries":
            return lenient("[BEGIN API]\nGetDescription(<object car_0>)\nGetDescription(<object dog_0>)\n[END API]")
        return lenient("[Caption]: A blue car is parked on the street.")


class StructuredFakeLLM(FakeLLM):
    """A server with structured output: JSON answers, read strictly."""

    def complete_checked(self, messages, *, namespace, prompt_version, check, json_schema=None, lenient=None,
                         **params):
        self.calls.append((namespace, messages))
        self.params.append(params)
        if namespace == "edit-queries":
            return check({"api_calls": ["GetDescription(<object car_0>)", "GetDescription(<object dog_0>)"]})
        return check({"caption": "A blue car is parked on the street."})


def test_llm_reviser_reads_structured_answers():
    llm = StructuredFakeLLM()
    rev = LLMReviser(llm).revise("A red car is parked on the street next to a dog.", GRAPH)
    assert rev.revised == "A blue car is parked on the street."
    assert [q["call"] for q in rev.queries] == ["GetDescription(car_0)", "GetDescription(dog_0)"]
    assert llm.calls[1][1][2]["content"].startswith("[BEGIN API]\nGetDescription(<object car_0>)")


def test_llm_reviser_runs_figure_12_two_steps():
    llm = FakeLLM()
    rev = LLMReviser(llm).revise("A red car is parked on the street next to a dog.", GRAPH)
    assert [n for n, _ in llm.calls] == ["edit-queries", "edit-revise"]
    first = llm.calls[0][1][1]["content"]
    assert "[Seen Objects]: car_0, street_0, man_0, trees_0, table_0" in first and "a real-world photo" in first
    second = llm.calls[1][1]
    assert second[2]["role"] == "assistant" and "GetDescription(dog_0) -> NONE" in second[3]["content"]
    assert rev.revised == "A blue car is parked on the street."
    assert rev.queries == [{"call": "GetDescription(car_0)", "result": "blue car"},
                           {"call": "GetDescription(dog_0)", "result": NONE}]
    # Each answer is capped to what it holds: the calls, then the caption revised; both grow with the caption.
    text = "A red car is parked on the street next to a dog."
    assert llm.params == [{"max_tokens": revise_queries_tokens(text)}, {"max_tokens": revise_caption_tokens(text)}]
    LLMReviser(llm).revise(text + " A man sits under green trees.", GRAPH)
    assert llm.params[2]["max_tokens"] > llm.params[0]["max_tokens"]
    assert llm.params[3]["max_tokens"] > llm.params[1]["max_tokens"]


def test_llm_reviser_sends_its_cap_and_a_cut_answer_is_not_cached(store):
    from hallu_studio.config import LLMSettings
    from hallu_studio.llm import LLMAnswerError, LLMClient
    from test_llm_fake_server import FakeChatServer

    text = "A red car is parked on the street next to a dog."
    calls = '{"api_calls": ["GetDescription(<object car_0>)"]}'
    looping = '{"caption": "A blue car is parked on the street' + " on the street" * 30
    with FakeChatServer([("ok", calls), ("length", looping), ("ok", '{"caption": "A blue car."}')]) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01)
        with pytest.raises(LLMAnswerError, match="cut at max_tokens") as info:
            LLMReviser(client).revise(text, GRAPH)
        assert info.value.truncated
        assert client.dispatcher.stats.parse_failures["edit-revise"] == 1
        assert [r["max_tokens"] for r in server.requests] == [revise_queries_tokens(text), revise_caption_tokens(text)]
        # The queries' answer was cached; the cut revision was not, so the next pass's client asks again.
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01)
        assert LLMReviser(client).revise(text, GRAPH).revised == "A blue car."
        assert len(server.requests) == 3


def _item(rid, text, **sample):
    return ScoringItem(response_id=rid, response=text,
                       sample=Sample(id=f"t/{rid}", benchmark="t", image_key=rid, **sample))


def test_metric_values_and_evidence(reviser):
    m = EvaluateByEditMetric(reviser, reviser.extractor)
    res = m.update(_item("1", "A red car is parked on the street next to a dog.", scene_graph=GRAPH))
    assert res.values == {"distance": 5, "per_word": pytest.approx(5 / 12), "words": 12}
    ev = res.evidence
    assert ev["reviser"] == "scene-graph-rule" and ev["revised"] == "A blue car is parked on the street."
    assert ["substitute", ["red"], ["blue"]] in ev["alignment"]
    assert ev["alignment"][-1] == ["delete", ["next", "to", "a", "dog"], []]


def test_metric_without_reference_is_undefined_and_triplets_make_a_graph(reviser):
    m = EvaluateByEditMetric(reviser, reviser.extractor)
    res = m.update(_item("2", "A dog."))
    assert res.values["distance"] is None and "t/2" in res.undefined_reason
    res = m.update(_item("3", "A dog sits on a mat next to a cat.", gold_triplets=[("dog", "on", "mat")]))
    assert res.evidence["revised"] == "A dog sits on a mat."


def test_metric_compute_means_and_alpha(reviser):
    m = EvaluateByEditMetric(reviser)
    stats = [{"distance": 2.0, "words": 10.0, "per_word": 0.2}, {"distance": 12.0, "words": 20.0, "per_word": 0.6},
             {}]
    out = m.compute(stats)
    assert out["distance"] == 7.0 and out["per_word"] == pytest.approx(0.4) and out["n"] == 2
    assert out["alpha"] == pytest.approx(1.0)


def test_graph_from_concepts():
    g = graph_from_concepts(ConceptSet.from_dict({"objects": ["dog"], "attributes": [["dog", "brown"]],
                                                  "relations": [["dog", "on", "mat"]]}))
    assert g.triplets() == [("dog", "on", "mat")] and g.attribute_pairs() == [("dog", "brown")]


def test_rule_reviser_only_removes_or_substitutes_on_any_text(reviser):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from hallu_studio.metrics.edit_distance import word_edit_distance, words_of

    words = st.sampled_from(["a", "the", "red", "car", "dog", "is", "on", "street", ",", ".", "and", "with",
                             "man", "holding", "phone", "next", "to", "which", "plastic", "table", "trees"])

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(words, max_size=25))
    def check(tokens):
        text = " ".join(tokens)
        revised = reviser.revise(text, GRAPH).revised
        assert len(words_of(revised)) <= len(words_of(text))
        assert word_edit_distance(text, revised).distance <= len(words_of(text))

    check()
