"""VISCON-QA / POPE question generation and scoring."""

from __future__ import annotations

import pytest

from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.pope import (
    CorpusStatistics,
    PopeMetric,
    existence_questions,
    existence_samples,
    pope_answer,
)
from hallu_studio.model import Sample, SceneGraph


def graph(objects, relations=()):
    return SceneGraph.from_dict({
        "objects": [{"id": n, "name": n, "attributes": list(attrs)} for n, attrs in objects],
        "relations": [{"subject": s, "predicate": p, "object": o} for s, p, o in relations]})


CORPUS = [graph([("cat", ["grey"]), ("sofa", ["red"])], [("cat", "on", "sofa")]),
          graph([("dog", ["brown"]), ("frisbee", [])], [("dog", "catching", "frisbee")]),
          graph([("dog", []), ("cat", ["black"]), ("puppy", [])], [("dog", "near", "cat")]),
          graph([("dog", []), ("leash", [])]),
          graph([("car", []), ("road", [])])]


def test_positive_and_negative_questions_per_kind():
    stats = CorpusStatistics.from_graphs(CORPUS)
    qs = existence_questions(CORPUS[0], stats, strategy="popular", seed=1)
    positives = [q for q in qs if q.answer == "yes"]
    assert [q.question for q in positives] == ["Is there a cat in the image?", "Is there a sofa in the image?",
                                               "Is the cat grey?", "Is the sofa red?", "Is the cat on the sofa?"]
    negatives = [q for q in qs if q.answer == "no"]
    assert len(negatives) == len(positives)
    objects = [q.concept[0] for q in negatives if q.kind == "object"]
    assert objects[0] == "dog"  # the most popular absent object (3 images)
    # No negative is true in the image.
    present = {"cat", "sofa"}
    for q in negatives:
        if q.kind == "object":
            assert q.concept[0] not in present
        if q.kind == "attribute" and q.replaced == "attribute":
            assert q.concept not in {("cat", "grey"), ("sofa", "red")}


def test_adversarial_prefers_cooccurring_objects_and_skips_synonyms():
    stats = CorpusStatistics.from_graphs(CORPUS)
    g = graph([("cat", [])])
    qs = existence_questions(g, stats, strategy="adversarial", kinds=["object"])
    # dog co-occurs with cat (1 image) and is popular; never "kitten"-like synonyms of present objects.
    assert [q.concept[0] for q in qs if q.answer == "no"] == ["dog"]
    g2 = graph([("dog", [])])
    negs = [q.concept[0] for q in existence_questions(g2, stats, strategy="popular", kinds=["object"])
            if q.answer == "no"]
    assert "puppy" not in negs  # a synonym of the present dog is not absent


def test_random_strategy_is_deterministic_per_seed():
    stats = CorpusStatistics.from_graphs(CORPUS)
    a = existence_questions(CORPUS[0], stats, strategy="random", seed=3)
    b = existence_questions(CORPUS[0], stats, strategy="random", seed=3)
    assert a == b
    with pytest.raises(ValueError, match="strategy"):
        existence_questions(CORPUS[0], stats, strategy="nearest")


def test_existence_samples_are_stable_yes_no_samples():
    srcs = [Sample(id=f"b/{i}", benchmark="b", image_key=str(i), task="caption", scene_graph=g)
            for i, g in enumerate(CORPUS)]
    out = existence_samples(srcs, benchmark="b-qa", strategy="adversarial")
    assert all(s.task == "yes_no" and s.answer in ("yes", "no") for s in out)
    assert len({s.id for s in out}) == len(out)
    assert out == existence_samples(srcs, benchmark="b-qa", strategy="adversarial")
    assert out[0].id == "b-qa/0/adversarial/0" and out[0].meta["kind"] == "object"


@pytest.mark.parametrize("text,expected", [("Yes, there is.", "yes"), ("No, there is not.", "no"),
                                           ("There is not a cat.", "no"), ("Yes. But no dog.", "yes"),
                                           ("", "yes")])
def test_pope_answer_rule(text, expected):
    assert pope_answer(text) == expected


def test_accuracy_precision_recall_f1_yes_ratio_worked_example():
    metric = PopeMetric()
    s = lambda label, kind: Sample(id=f"p/{label}", benchmark="p", image_key="1", task="yes_no",  # noqa: E731
                                   question="q", answer=label, meta={"kind": kind})
    answers = [("yes", "Yes"), ("yes", "yes"), ("yes", "Yes."), ("yes", "No"),
               ("no", "Yes"), ("no", "yes"), ("no", "No"), ("no", "no")]
    rs = [metric.update(ScoringItem("r", a, s(label, "object"))) for label, a in answers]
    out = metric.compute([r.stats for r in rs])
    assert out["accuracy"] == pytest.approx(0.625)
    assert out["precision"] == pytest.approx(0.6)
    assert out["recall"] == pytest.approx(0.75)
    assert out["f1"] == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert out["yes_ratio"] == pytest.approx(0.625)
    assert out["object.accuracy"] == pytest.approx(0.625) and out["questions"] == 8


def test_non_yes_no_sample_is_explained():
    r = PopeMetric().update(ScoringItem("r", "yes", Sample(id="x/1", benchmark="x", image_key="1", task="caption")))
    assert "not a yes/no question" in r.undefined_reason


def test_questions_from_real_trihe_scene_graphs():
    """Real GQA-derived graphs: balanced positives/negatives, and no negative object is in its image."""
    from test_trihe import trihe_items

    pairs = trihe_items(12)
    samples = {a.sample.image_key: a.sample for a, _ in pairs}
    for strategy in ("random", "popular", "adversarial"):
        out = existence_samples(list(samples.values()), benchmark="tri-he-pope", strategy=strategy, seed=7)
        yes = [s for s in out if s.answer == "yes"]
        no = [s for s in out if s.answer == "no"]
        assert yes and abs(len(yes) - len(no)) <= len(yes) // 10
        for s in no:
            if s.meta["kind"] == "object":
                names = {n.lower() for n in samples[s.image_key].scene_graph.object_names()}
                assert s.meta["concept"][0] not in names
        scored = PopeMetric()
        always_yes = scored.compute([scored.update(ScoringItem("r", "Yes", s)).stats for s in out])
        assert always_yes["yes_ratio"] == 1.0 and always_yes["recall"] == 1.0
        assert always_yes["accuracy"] == pytest.approx(len(yes) / len(out))


def test_negatives_skip_kinds_and_sub_kinds_of_present_objects():
    """With a dog in the image, neither "animal" (its kind) nor "poodle" (a kind of dog) is absent."""
    corpus = [graph([("animal", [])]), graph([("poodle", [])]), graph([("animal", []), ("car", [])])]
    stats = CorpusStatistics.from_graphs(corpus)
    negs = [q.concept[0] for q in existence_questions(graph([("dog", [])]), stats, strategy="popular",
                                                      kinds=["object"]) if q.answer == "no"]
    assert negs == ["car"]


# The examples: each reads yes in POPE's released evaluate.py and no in the studio reading.
POPE_EXAMPLES = ["NO", "Not really.", "No,there isn't.", "No\nThere is only a dog.", "Yes\tno"]


@pytest.mark.parametrize("answer", POPE_EXAMPLES)
def test_pope_readings_on_the_released_codes_examples(answer):
    assert pope_answer(answer, "released") == "yes"
    assert pope_answer(answer) == "no"
    s = Sample(id="p/1", benchmark="p", image_key="1", task="yes_no", question="Is there a cat?", answer="no")
    assert PopeMetric(reading="released").update(ScoringItem("r", answer, s)).values["correct"] is False
    assert PopeMetric().update(ScoringItem("r", answer, s)).values["correct"] is True


@pytest.mark.parametrize("answer,expected", [("No, there is no cat.", "no"), ("There is not a cat", "no"),
                                             ("Yes, there is.", "yes"), ("no", "no"), ("", "yes")])
def test_pope_readings_agree_on_plain_answers(answer, expected):
    assert pope_answer(answer, "released") == pope_answer(answer) == expected


def test_pope_reading_comes_from_the_settings():
    from hallu_studio.config import Settings

    settings = Settings()
    settings.scoring.pope_reading = "released"
    metric = PopeMetric.from_settings(settings)
    assert metric.reading == "released" and metric.config()["reading"] == "released"
    with pytest.raises(ValueError, match="unknown POPE reading"):
        PopeMetric(reading="strict")
