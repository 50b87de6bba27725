"""Probe models: exact injection records, rate 0 is clean, determinism with the seed."""

import random

import pytest

from hallu_studio.backends import make_backend
from hallu_studio.backends.base import GenerationRequest
from hallu_studio.backends.probe import ProbeBackend, ProbeOptions, describe
from tiny_models import tiny_benchmark
from hallu_studio.model import ConceptSet


@pytest.fixture(scope="module")
def samples():
    return tiny_benchmark(n_images=3)[1]


def _run(samples, spec):
    backend = make_backend(spec)
    return backend.generate([GenerationRequest(s.id, "Describe the image in detail.", sample=s) for s in samples])


def test_rate_zero_injects_nothing_and_states_only_true_concepts(samples):
    for s, r in zip(samples, _run(samples, "probe:rate=0,seed=3")):
        assert r.ok, r.error
        assert r.signals["injected"] == []
        truth = ConceptSet.from_scene_graph(s.scene_graph).to_dict()
        for rec in r.signals["stated"]:
            a, b = rec["span"]
            assert r.text[a:b], rec  # every stated concept points at real text
            if rec["type"] == "object" and s.task == "caption":
                assert rec["concept"][0] in truth["objects"]
            if rec["type"] == "attribute":
                assert rec["concept"] in truth["attributes"]
            if rec["type"] == "relation" and s.task == "caption":
                assert rec["concept"] in truth["relations"]
        if s.task == "yes_no":
            assert r.text.lower() == s.answer
        if s.task == "mcq":
            assert r.text == s.answer


def test_rate_one_records_every_injection_exactly(samples):
    caption = next(s for s in samples if s.task == "caption")
    text, sig = describe(caption, ProbeOptions(rate=1.0, seed=0), random.Random(1))
    truth = ConceptSet.from_scene_graph(caption.scene_graph).to_dict()
    kinds = {rec["type"] for rec in sig["injected"]}
    assert kinds == {"object", "attribute", "relation", "count"}
    for rec in sig["injected"]:
        a, b = rec["span"]
        said = text[a:b]
        if rec["type"] == "object":
            assert said == rec["concept"][0] and rec["concept"][0] not in truth["objects"]
        elif rec["type"] == "attribute":
            assert said == rec["concept"][1] and rec["concept"] not in truth["attributes"]
            assert rec["truth"] in truth["attributes"]
        elif rec["type"] == "relation":
            s, p, o = rec["concept"]
            assert said == f"{s} is {p} the {o}" and rec["concept"] not in truth["relations"]
            assert rec["truth"] in truth["relations"]
        else:
            name, n = rec["concept"]
            assert name in said and n != rec["truth"][1]
    # every relation slot was corrupted, so no true relation is stated
    assert not [r for r in sig["stated"] if r["type"] == "relation"]


def test_mix_restricts_injection_types(samples):
    for r in _run(samples, "probe:rate=1,mix=relation,seed=2"):
        assert {rec["type"] for rec in r.signals["injected"]} <= {"relation", "answer"}


def test_same_seed_same_output_other_seed_differs(samples):
    a = [(r.text, r.signals) for r in _run(samples, "probe:rate=0.5,seed=7")]
    b = [(r.text, r.signals) for r in _run(list(reversed(samples)), "probe:rate=0.5,seed=7")][::-1]
    c = [(r.text, r.signals) for r in _run(samples, "probe:rate=0.5,seed=8")]
    assert a == b  # order of requests does not matter
    assert a != c


def test_injection_rate_is_roughly_the_requested_rate(samples):
    backend = ProbeBackend(ProbeOptions(rate=0.3, mix=("attribute", "relation"), seed=0))
    injected = stated = 0
    for seed_prompt in range(40):
        for s in samples:
            if s.task != "caption":
                continue
            r = backend.generate([GenerationRequest(s.id, f"prompt {seed_prompt}", sample=s)])[0]
            injected += sum(x["type"] in ("attribute", "relation") for x in r.signals["injected"])
            stated += sum(x["type"] in ("attribute", "relation") for x in r.signals["stated"])
    assert 0.2 < injected / (injected + stated) < 0.4


def test_yes_no_answer_signal_is_less_confident_when_injected(samples):
    yn = [s for s in samples if s.task == "yes_no"]
    for r in _run(yn * 1, "probe:rate=1,seed=0"):
        assert r.signals["injected"][0]["type"] == "answer"
        assert r.signals["answer"]["entropy"] > 0.85  # top prob <= 0.7
    for r in _run(yn, "probe:rate=0,seed=0"):
        assert r.signals["answer"]["entropy"] < 0.62  # top prob >= 0.85


def test_options_parse_and_errors():
    assert ProbeOptions.parse("rate=0.3,mix=object+count,seed=1,delay_ms=5").delay_ms == 5
    assert "[synthetic]" in ProbeOptions.parse("").label()
    with pytest.raises(ValueError, match="mix"):
        ProbeOptions.parse("mix=colour")
    with pytest.raises(ValueError, match="within"):
        ProbeOptions.parse("rate=2")
    with pytest.raises(ValueError, match="unknown probe option"):
        ProbeOptions.parse("temperature=1")
    with pytest.raises(ValueError, match="not a valid value"):
        ProbeOptions.parse("rate=lots")


def test_sample_without_graph_or_answer_is_a_clear_error(samples):
    from dataclasses import replace

    from hallu_studio.model import SceneGraph

    empty = replace(samples[0], scene_graph=SceneGraph())
    r = make_backend("probe:").generate([GenerationRequest(empty.id, "p", sample=empty)])[0]
    assert not r.ok and empty.id in r.error and "scene graph" in r.error
    bad = replace(next(s for s in samples if s.task == "yes_no"), answer="maybe")
    r = make_backend("probe:").generate([GenerationRequest(bad.id, "p", sample=bad)])[0]
    assert not r.ok and "yes/no" in r.error


def test_vqa_answer_that_spells_the_triplet_is_corrupted_in_place():
    from hallu_studio.model import Sample

    s = Sample(id="r/1", benchmark="r", image_key="1", task="vqa", question="What is the relation with bag and ground?",
               answer="bag is on ground.", gold_triplets=[("bag", "on", "ground")])
    seen = set()
    for seed in range(30):
        text, sig = describe(s, ProbeOptions(rate=0.5, mix=("relation", "object"), seed=seed), random.Random(seed))
        recs = sig["injected"] + sig["stated"]
        assert len(recs) == 1 and text.count(".") == 1  # one statement, no duplicate sentence
        rec = recs[0]
        a, b = rec["span"]
        seen.add(rec["type"] + ("-injected" if sig["injected"] else ""))
        if rec["type"] == "relation":
            subj, pred, obj = rec["concept"]
            assert text[a:b] == f"{subj} is {pred} {obj}"
        else:
            assert text[a:b] == rec["concept"][0] != "ground"
    assert seen == {"relation", "relation-injected", "object-injected"}


def _two_cubes_graph():
    from hallu_studio.model import SceneGraph

    return SceneGraph.from_dict({"objects": [
        {"id": "a", "name": "cube", "attributes": ["red", "small", "metal"]},
        {"id": "b", "name": "cube", "attributes": ["blue", "small", "metal"]},
        {"id": "c", "name": "sphere", "attributes": ["gray"]}],
        "relations": [{"subject": "a", "predicate": "left of", "object": "b"},
                      {"subject": "b", "predicate": "left of", "object": "c"},
                      {"subject": "a", "predicate": "left of", "object": "c"}]})


def test_relation_sentences_say_which_of_two_objects_of_one_name_they_mean():
    from hallu_studio.model import Sample

    g = _two_cubes_graph()
    s = Sample(id="x/1", benchmark="x", image_key="1", task="caption", scene_graph=g)
    text, signals = describe(s, ProbeOptions.parse("rate=0"), random.Random(0))
    assert "The red cube is left of the blue cube." in text
    assert "The blue cube is left of the sphere." in text  # the sphere's name is its own: no adjective
    rec = next(r for r in signals["stated"] if r["type"] == "relation" and r["concept"] == ["cube", "left of", "cube"])
    a, b = rec["span"]
    assert text[a:b] == "red cube is left of the blue cube"
    assert rec["qualifiers"] == [["red"], ["blue"]]


def test_an_injected_relation_is_false_of_every_pair_the_sentence_can_mean():
    from hallu_studio.backends.probe_scene import SceneTruth, wrong_predicate
    from hallu_studio.model import Sample, SceneGraph

    # Two identical towers, one left and one right of the rocket: "the tower is right of the rocket" is true.
    g = SceneGraph.from_dict({"objects": [
        {"id": "l", "name": "tower", "attributes": ["steel"]}, {"id": "r", "name": "tower", "attributes": ["steel"]},
        {"id": "k", "name": "rocket"}, {"id": "m", "name": "man"}, {"id": "c", "name": "camera"}],
        "relations": [{"subject": "l", "predicate": "left of", "object": "k"},
                      {"subject": "r", "predicate": "right of", "object": "k"},
                      {"subject": "m", "predicate": "looking through", "object": "c"},
                      {"subject": "m", "predicate": "holding", "object": "c"}]})
    s = Sample(id="x/2", benchmark="x", image_key="2", task="caption", scene_graph=g)
    truth = SceneTruth(s)
    assert truth.holds("tower", "right of", "rocket") and not truth.holds("tower", "under", "rocket")
    assert truth.holds("rocket", "left of", "tower")  # read the other way round
    rng = random.Random(0)
    assert wrong_predicate("left of", rng, lambda p: truth.holds("tower", p, "rocket")) not in ("left of", "right of")
    assert wrong_predicate("wearing", rng, lambda p: truth.holds("man", p, "camera")) != "holding"
    for seed in range(20):
        text, signals = describe(s, ProbeOptions.parse("rate=1,mix=relation"), random.Random(seed))
        for rec in signals["injected"]:
            subj, pred, obj = rec["concept"]
            assert not truth.holds(subj, pred, obj, *(rec.get("qualifiers") or ((), ()))), (rec, text)


def test_two_cubes_a_swap_is_checked_against_the_pair_the_adjectives_name():
    from hallu_studio.backends.probe_scene import SceneTruth

    from hallu_studio.model import Sample

    truth = SceneTruth(Sample(id="x/3", benchmark="x", image_key="3", task="caption", scene_graph=_two_cubes_graph()))
    # The red cube is left of the blue one: "right of" is false of that pair, true of the pair read backwards.
    assert not truth.holds("cube", "right of", "cube", ["red"], ["blue"])
    assert truth.holds("cube", "right of", "cube", ["blue"], ["red"])
    assert truth.holds("cube", "right of", "cube")  # "the cube is right of the cube" can mean the blue one


def test_no_swap_is_injected_that_an_inverse_or_a_backwards_agentive_edge_makes_true():
    from hallu_studio.backends.probe_scene import SceneTruth, false_predicate
    from hallu_studio.model import Sample, SceneGraph

    # GQA-style "(bag, holding, man)" is the man holding the bag; "(cup, on, table)" is the table under the cup.
    g = SceneGraph.from_dict({"objects": [{"id": "m", "name": "man"}, {"id": "b", "name": "bag"},
                                          {"id": "c", "name": "cup"}, {"id": "t", "name": "table"}],
                              "relations": [{"subject": "m", "predicate": "wearing", "object": "b"},
                                            {"subject": "b", "predicate": "holding", "object": "m"},
                                            {"subject": "c", "predicate": "on", "object": "t"},
                                            {"subject": "t", "predicate": "beside", "object": "c"}]})
    s = Sample(id="x/4", benchmark="x", image_key="4", task="caption", scene_graph=g)
    truth = SceneTruth(s)
    assert truth.holds("man", "holding", "bag") and truth.holds("table", "under", "cup")
    assert not truth.holds("bag", "holding", "man") and not truth.holds("table", "on", "cup")
    for seed in range(30):
        rng = random.Random(seed)
        # "beside" has no contrary in the swap table: of the fallbacks, "under" and "next to" are true.
        assert false_predicate("beside", lambda p: truth.holds("table", p, "cup"), rng) not in ("under", "next to")
        assert false_predicate("wearing", lambda p: truth.holds("man", p, "bag"), rng) != "holding"
        # Captions: "The man is wearing the bag" has the swap "holding", which is true; "the table is beside the
        # cup" must not fall back to "under".
        text, signals = describe(s, ProbeOptions.parse("rate=1,mix=relation"), random.Random(seed))
        said = {(r["concept"][0], r["concept"][2]): r["concept"][1] for r in signals["injected"]}
        assert said[("man", "bag")] != "holding" and said[("table", "cup")] not in ("under", "next to"), text
        for (a, b), p in said.items():
            assert not truth.holds(a, p, b), (a, p, b, text)
    # Answers: the same graph with gold triplets; no relation error the graph makes true.
    q = Sample(id="x/5", benchmark="x", image_key="5", task="vqa", question="Where is the table?",
               answer="Beside the cup.", gold_triplets=[("table", "beside", "cup"), ("man", "wearing", "bag")],
               scene_graph=g)
    for seed in range(30):
        text, sig = describe(q, ProbeOptions(rate=1.0, mix=("relation",), seed=seed), random.Random(seed))
        for r in sig["injected"]:
            assert tuple(r["concept"]) not in {("table", "under", "cup"), ("table", "next to", "cup"),
                                               ("man", "holding", "bag")}, text


def test_probe_captions_have_no_broken_plurals_or_disagreeing_articles():
    import re

    from hallu_studio.sample.build import build_sample_benchmark

    samples = [s for s in build_sample_benchmark(with_variants=False).samples if s.task == "caption"]
    modifier = r"(?:(?!and\b)\w+ )?"
    bad = re.compile(rf"\b(?:a|an) {modifier}(?:petals|leaves|whiskers|gloves|trees|clouds|boats|eaves)\b|\w+(?:ses|ss)\b"
                     rf"|\b(?:two|three|four|five|six) {modifier}(?:woman|man|petal|eave|crema|background)\b"
                     rf"|\bThe {modifier}(?:petals|leaves|eaves|glasses|clouds) is\b")
    allowed = {"glasses", "dress", "grass", "class", "boss", "moss", "glass", "cross", "press", "process", "less"}
    for seed in range(3):
        spec = f"rate=0.5,mix=object+attribute+relation+count,seed={seed}"
        for s in samples:
            text, _ = describe(s, ProbeOptions.parse(spec), random.Random(f"{spec}/{s.id}"))
            for m in bad.finditer(text):
                assert m.group(0).lower() in allowed or m.group(0).lower().endswith(tuple(allowed)), (m.group(0), text)


def test_vqa_relation_swap_is_never_one_the_graph_supports():
    from hallu_studio.backends.probe_scene import SceneTruth, false_predicate
    from hallu_studio.model import Sample, SceneGraph

    # "piled on" has no contrary in the swap table; the fallback "on" (and "next to") would still be true.
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "crate"}, {"id": "2", "name": "shelf"}],
                                  "relations": [{"subject": "1", "predicate": "piled on", "object": "2"}]})
    truth = SceneTruth(Sample(id="r/1", benchmark="r", image_key="1", task="vqa", scene_graph=graph))
    for seed in range(40):
        said = false_predicate("piled on", lambda p: truth.holds("crates", p, "shelf"), random.Random(seed))
        assert said not in (None, "on", "next to")

    def gold_only(*triplets):
        return SceneTruth(Sample(id="r/0", benchmark="r", image_key="0", task="vqa", gold_triplets=list(triplets)))

    # Written the other way round: "(shelf, under, crate)" supports "on"; a GQA verb written backwards supports itself.
    shelf = gold_only(("shelf", "under", "crate"))
    assert false_predicate("on", lambda p: shelf.holds("crate", p, "shelf"), random.Random(0)) != "on"
    kite = gold_only(("kite", "holding", "boy"))
    for seed in range(20):
        assert false_predicate("near", lambda p: kite.holds("boy", p, "kite"), random.Random(seed)) != "holding"
    s = Sample(id="r/2", benchmark="r", image_key="2", task="vqa", question="Where are the crates?",
               answer="They are stacked up.", gold_triplets=[("crates", "piled on", "shelf")], scene_graph=graph)
    for seed in range(30):
        text, sig = describe(s, ProbeOptions(rate=1.0, mix=("relation",), seed=seed), random.Random(seed))
        assert [r["type"] for r in sig["injected"]] == ["relation"]
        assert sig["injected"][0]["concept"][1] not in ("on", "next to", "piled on")


def test_vqa_relation_error_only_between_two_objects():
    from hallu_studio.model import Sample

    # "(tower, size, tall)" relates no two things: there is no relation to get wrong, so none is injected.
    s = Sample(id="r/3", benchmark="r", image_key="3", task="vqa", question="How tall is the tower?",
               answer="Very tall.", gold_triplets=[("tower", "size", "tall"), ("tower", "on", "hill")])
    for seed in range(20):
        text, sig = describe(s, ProbeOptions(rate=1.0, mix=("relation",), seed=seed), random.Random(seed))
        assert [r["concept"][0::2] for r in sig["injected"]] == [["tower", "hill"]]
        assert [r["concept"] for r in sig["stated"]] == [["tower", "size", "tall"]]


def test_gold_triplet_sentences_say_the_only_before_a_thing():
    from hallu_studio.model import Sample

    # "(sky, is, clear)" written "The sky is the clear." was read as a thing called "clear" that the graph lacks:
    # one false object hallucination per such gold answer.
    s = Sample(id="r/4", benchmark="r", image_key="4", task="vqa", question="What is the weather like?",
               answer="Sunny.", gold_triplets=[("sky", "is", "clear"), ("man", "is", "shirtless"),
                                               ("hydrant", "has", "no water flowing"), ("cup", "on", "table"),
                                               ("field", "is", "well-maintained")])
    text, _ = describe(s, ProbeOptions(rate=0.0), random.Random(0))
    assert text == ("Sunny. The sky is clear. The man is shirtless. The hydrant has no water flowing. "
                    "The cup is on the table. The field is well-maintained.")


def test_vqa_object_errors_replace_things_with_things_the_judges_do_not_find():
    from hallu_studio.model import Sample, SceneGraph

    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "documents"}, {"id": "2", "name": "trees"},
                                              {"id": "3", "name": "person"}]})
    # "(documents, indicating, work or study)" names no thing to replace: no object error is injected there.
    s = Sample(id="r/5", benchmark="r", image_key="5", task="vqa", question="What is the person doing?",
               answer="Working.", scene_graph=graph,
               gold_triplets=[("documents", "indicating", "work or study"), ("person", "near", "trees")])
    for seed in range(30):
        text, sig = describe(s, ProbeOptions(rate=1.0, mix=("object",), seed=seed), random.Random(seed))
        assert [r["truth"] for r in sig["injected"]] == [["trees"]]
        # "plant" is absent by name, but the judges ground it to the trees (a kind they belong to).
        assert sig["injected"][0]["concept"][0] not in ("plant", "tree")


def test_vqa_a_guessing_answer_is_not_corrupted_in_place_and_is_written_once():
    from hallu_studio.model import Sample

    answer = "They were likely taken out recently, as they are still on the oven rack."
    s = Sample(id="r/6", benchmark="r", image_key="6", task="vqa", question="When were the pizzas baked?",
               answer=answer, gold_triplets=[("pizzas", "on", "oven rack"), ("pizzas", "on", "oven rack")])
    for seed in range(10):
        text, sig = describe(s, ProbeOptions(rate=1.0, mix=("relation",), seed=seed), random.Random(seed))
        assert text.startswith(answer) and text.count("likely") == 1
        for r in sig["injected"]:
            a, b = r["span"]
            assert a > len(answer) and r["concept"][1] in text[a:b]
