"""LLM extraction: VISCON's three steps and Tri-HE triplets through a fake chat client."""

import json

import pytest

from hallu_studio.extraction import LLMExtractor
from hallu_studio.extraction.llm import parse_attributes, parse_list, parse_relations, parse_triplets
from hallu_studio.llm.dispatch import EXTRACT_ANSWER_TOKENS


class FakeLLM:
    """Answers by step; records every call so tests can check prompts and caching keys.

    ``structured``: answers are JSON read by the strict reader, as from a server with structured
    output; otherwise plain text read leniently, as from one without.
    """

    name = "fake"

    def __init__(self, answers, structured=False):
        self.answers = answers
        self.structured = structured
        self.calls = []

    def complete_checked(self, messages, *, namespace, prompt_version, check, json_schema=None, lenient=None,
                         **params):
        self.calls.append({"messages": messages, "namespace": namespace, "prompt_version": prompt_version,
                           "json_schema": json_schema, "params": params})
        answer = self.answers[namespace]
        return check(json.loads(answer)) if self.structured else lenient(answer)


TEXT = "An antique clock hangs on a stone wall."


def test_viscon_three_steps_in_order_with_objects_passed_on():
    llm = FakeLLM({"extract-objects": "Objects: clock, wall",
                   "extract-attributes": "clock:antique; wall:stone",
                   "extract-relations": "```\nclock, hangs on, wall\n```"})
    cs = LLMExtractor(llm).extract_one(TEXT)
    assert [c["namespace"] for c in llm.calls] == ["extract-objects", "extract-attributes", "extract-relations"]
    # every answer is capped: a model repeating itself must not hold a one-slot server until its context is full
    assert all(c["params"] == {"max_tokens": EXTRACT_ANSWER_TOKENS} for c in llm.calls)
    assert "Objects: clock, wall; Attributes:" in llm.calls[1]["messages"][-1]["content"]
    assert llm.calls[0]["messages"][0]["role"] == "system"
    assert cs.to_dict() == {"objects": ["clock", "wall"], "attributes": [["clock", "antique"], ["wall", "stone"]],
                            "relations": [["clock", "hangs on", "wall"]]}
    assert TEXT[slice(*cs.objects[0].span)] == "clock"
    assert TEXT[slice(*cs.attributes[1].span)] == "stone wall"
    assert TEXT[slice(*cs.relations[0].span)] == "clock hangs on a stone wall"


def test_viscon_structured_answers_are_read_strictly():
    llm = FakeLLM({"extract-objects": '{"objects": ["clock", "wall"]}',
                   "extract-attributes": '{"attributes": [{"object": "clock", "attributes": ["antique"]}, '
                                         '{"object": "wall", "attributes": ["stone"]}]}',
                   "extract-relations": '{"relations": [{"subject": "clock", "predicate": "hangs on", '
                                        '"object": "wall"}]}'}, structured=True)
    cs = LLMExtractor(llm).extract_one(TEXT)
    assert [c["json_schema"]["required"] for c in llm.calls] == [["objects"], ["attributes"], ["relations"]]
    assert cs.to_dict() == {"objects": ["clock", "wall"], "attributes": [["clock", "antique"], ["wall", "stone"]],
                            "relations": [["clock", "hangs on", "wall"]]}
    # A structured answer of the wrong shape is an error (the client counts it and does not cache it).
    with pytest.raises(ValueError, match="objects"):
        LLMExtractor(FakeLLM({"extract-objects": '["clock"]'}, structured=True)).extract_one(TEXT)


def test_batch_extraction_goes_step_by_step_over_all_texts():
    llm = FakeLLM({"extract-objects": "cat", "extract-attributes": "cat:grey", "extract-relations": "NONE"})
    out = LLMExtractor(llm).extract(["A grey cat.", "", "A grey cat sits."])
    assert [c["namespace"] for c in llm.calls] == ["extract-objects"] * 2 + ["extract-attributes"] * 2 + [
        "extract-relations"] * 2
    assert len(out) == 3 and len(out[1]) == 0 and out[2].to_dict()["attributes"] == [["cat", "grey"]]


def test_no_objects_stops_after_the_first_step():
    llm = FakeLLM({"extract-objects": "NONE"})
    assert len(LLMExtractor(llm).extract_one("Hello there.")) == 0
    assert len(llm.calls) == 1


def test_trihe_triplets_with_schema_and_attributes():
    llm = FakeLLM({"extract-triplets": 'Sure:\n```json\n{"triplets": [["laptop", "is", "black"], '
                                       '["laptop", "on", "desk"], ["bad"]]}\n```'})
    cs = LLMExtractor(llm, style="trihe").extract_one("A black laptop on a desk.")
    assert llm.calls[0]["json_schema"]["required"] == ["triplets"]
    assert cs.to_dict() == {"objects": ["laptop", "desk"], "attributes": [["laptop", "black"]],
                            "relations": [["laptop", "on", "desk"]]}


def test_concept_not_in_text_has_no_span():
    llm = FakeLLM({"extract-objects": "dog", "extract-attributes": "dog:", "extract-relations": "NONE"})
    cs = LLMExtractor(llm).extract_one("A cat.")
    assert cs.objects[0].name == "dog" and cs.objects[0].span is None


@pytest.mark.parametrize("answer,expected", [
    ("apple, desk", ["apple", "desk"]), ("none", []), ('["apple", "desk"]', ["apple", "desk"]),
    ("```\napple,\ndesk\n```", ["apple", "desk"]),
])
def test_parse_list(answer, expected):
    assert parse_list(answer) == expected


def test_parse_attributes_and_relations_tolerate_junk():
    assert parse_attributes("clock:antique, gold; wall:stone; floor:; junk") == [
        ("clock", "antique"), ("clock", "gold"), ("wall", "stone")]
    assert parse_relations("(cat, on, rug)\ncat, in front of, fireplace\nthis is prose") == [
        ("cat", "on", "rug"), ("cat", "in front of", "fireplace")]
    assert parse_relations("NONE") == []
    assert parse_triplets("(man, riding, horse)") == [("man", "riding", "horse")]


def test_unknown_style_is_refused():
    with pytest.raises(ValueError, match="style"):
        LLMExtractor(FakeLLM({}), style="gpt")
