"""Tri-HE: judges with exact fake embeddings, Hallu_Q / Hallu_I on hand-computed examples."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hallu_studio.judges import EmbeddingSimilarityJudge, JudgeReference, TripletJudgement
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.trihe import TriHEMetric, image_group, reference_for, response_claims
from hallu_studio.model import AttributeConcept, ConceptSet, RelationConcept, Sample, SceneGraph


class BagOfWordsEncoder:
    """Each word is its own axis, so cosines are exact: |shared words| / sqrt(|a| |b|)."""

    model_name = "bag-of-words"

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        rows = []
        for t in texts:
            vec = np.zeros(20000)
            for w in re.findall(r"[a-z]+", t.lower()):
                vec[self.vocab.setdefault(w, len(self.vocab))] += 1
            rows.append(vec)
        return np.array(rows).reshape(len(texts), 20000)


REF = JudgeReference(triplets=[("cat", "on", "sofa"), ("dog", "near", "table")],
                     objects=["cat", "sofa", "dog", "table"])


def test_embedding_judge_verdicts_follow_the_thresholds():
    judge = EmbeddingSimilarityJudge(BagOfWordsEncoder(), support_threshold=0.75)
    claims = [("cat", "on", "sofa"),           # cosine 1 to "cat on sofa": supported
              ("bird", "flying over", "lake"),  # shares nothing: bird is not in the image
              ("cat", "under", "table"),        # 1/3 to each reference -> top-3 premise; "under" unknown
              ("cat", "near", "sofa")]          # max(2/3, 3/sqrt(18) to the top 3) < 0.75; ends and "near" in the graph
    verdicts = judge.judge(claims, REF)
    assert [v.verdict for v in verdicts] == ["supported", "object", "relation", "prediction_error"]
    assert verdicts[0].score == pytest.approx(1.0)
    assert verdicts[3].score == pytest.approx(3 / np.sqrt(18))
    # No reference above 0.5: the premise is the top-3 references concatenated.
    assert "cat on sofa. dog near table" in verdicts[2].reason
    assert verdicts[2].score == pytest.approx(2 / np.sqrt(3 * 6))
    assert "subject 'bird'" in verdicts[1].reason


def test_embedding_judge_default_threshold_supports_two_thirds():
    judge = EmbeddingSimilarityJudge(BagOfWordsEncoder())  # released thresholds 0.5 / 0.6
    [v] = judge.judge([("cat", "near", "sofa")], REF)
    assert v.verdict == "supported"  # 2/3 > 0.6
    assert judge.config()["support_threshold"] == 0.6 and judge.config()["reference_threshold"] == 0.5


def test_top_k_keeps_three_most_similar_when_none_passes():
    ref = JudgeReference(triplets=[("a", "x", "b"), ("c", "y", "d"), ("e", "z", "f"), ("g", "w", "h")])
    judge = EmbeddingSimilarityJudge(BagOfWordsEncoder(), top_k=3)
    [v] = judge.judge([("q", "r", "s")], ref)
    assert "to the top 3: a x b. c y d. e z f.)" in v.reason


def graph_sample(sid="tri/1", image="img1", gold=()):
    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat", "attributes": ["grey"]},
                                              {"id": "2", "name": "sofa"}],
                                  "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
    return Sample(id=sid, benchmark="tri", image_key=image, task="vqa", scene_graph=graph,
                  question="Where is the cat?", answer="On the sofa.", gold_triplets=list(gold))


def test_reference_and_claims_include_attributes_as_is_triplets():
    ref = reference_for(graph_sample(gold=[("cat", "sleeping on", "sofa")]))
    assert ref.triplets == [("cat", "on", "sofa"), ("cat", "is", "grey"), ("cat", "sleeping on", "sofa")]
    cs = ConceptSet(relations=[RelationConcept("cat", "on", "sofa", (0, 10))],
                    attributes=[AttributeConcept("cat", "grey", (4, 8)), AttributeConcept("cat", "grey")])
    assert response_claims(cs) == [(("cat", "on", "sofa"), (0, 10)), (("cat", "is", "grey"), (4, 8))]


class ScriptedJudge:
    """Returns the verdicts it is given, in order: isolates the metric's arithmetic."""

    name = "scripted"

    def __init__(self, verdicts):
        self.verdicts = list(verdicts)

    def config(self):
        return {"judge": self.name}

    def judge(self, claims, reference):
        out = [TripletJudgement(tuple(c), self.verdicts.pop(0)) for c in claims]
        return out


def item(sample, relations=(), attributes=(), text="x"):
    cs = ConceptSet(relations=[RelationConcept(*r) for r in relations],
                    attributes=[AttributeConcept(*a) for a in attributes])
    return ScoringItem(response_id=f"r-{sample.id}", response=text, sample=sample, mentioned=cs)


def test_hallu_q_and_hallu_i_worked_example():
    """The module docstring's example: image A (2/4, skipped), image B (0/2)."""
    q1, q2, q3 = graph_sample("tri/q1", "A"), graph_sample("tri/q2", "A"), graph_sample("tri/q3", "B")
    metric = TriHEMetric(ScriptedJudge(["object", "relation", "supported", "unparseable", "supported", "supported"]))
    r1 = metric.update(item(q1, relations=[("a", "b", "c"), ("d", "e", "f"), ("g", "h", "i"), ("j", "k", "l")]))
    r2 = metric.update(item(q2, text=""))
    r3 = metric.update(item(q3, relations=[("a", "b", "c")], attributes=[("cat", "grey")]))
    assert r1.values == {"n_triplets": 4, "hallucinated": 2, "object": 1, "relation": 1,
                         "prediction_error": 0, "unparseable": 1, "unverifiable": 0, "inference": 0}
    assert r2.undefined_reason and "skips" in r2.undefined_reason
    assert [t["verdict"] for t in r1.evidence["triplets"]] == ["object", "relation", "supported", "unparseable"]
    out = metric.compute([r1.stats, r2.stats, r3.stats])
    assert out["hallu_q"] == pytest.approx(25.0)
    assert out["hallu_i"] == pytest.approx(25.0)
    assert out["hallu_q_object"] == pytest.approx(12.5)
    assert out["hallu_q_relation"] == pytest.approx(12.5)
    assert out["questions"] == 2 and out["questions_skipped"] == 1 and out["images"] == 2
    assert out["unparseable_share"] == pytest.approx(100 / 6)


def test_hallu_i_weights_images_not_questions():
    # Image A: two questions 1/1 and 0/1 -> 0.5; image B: one question 0/2 -> 0.
    a = image_group(graph_sample(image="A"))
    b = image_group(graph_sample(image="B"))
    stats = [{"n_triplets": 1, "hallucinated": 1, "object": 1, "relation": 0, "prediction_error": 0,
              "unparseable": 0, "image": a},
             {"n_triplets": 1, "hallucinated": 0, "object": 0, "relation": 0, "prediction_error": 0,
              "unparseable": 0, "image": a},
             {"n_triplets": 2, "hallucinated": 0, "object": 0, "relation": 0, "prediction_error": 0,
              "unparseable": 0, "image": b}]
    out = TriHEMetric(ScriptedJudge([])).compute(stats)
    assert out["hallu_q"] == pytest.approx(100 / 3)
    assert out["hallu_i"] == pytest.approx(25.0)


@pytest.mark.parametrize("text", ["", "!!! ??? ...", "这是一只猫", "word " * 20000])
def test_bad_responses_score_without_crashing(text):
    metric = TriHEMetric(EmbeddingSimilarityJudge(BagOfWordsEncoder()))
    result = metric.update(ScoringItem("r", text, graph_sample(), mentioned=ConceptSet()))
    assert result.undefined_reason and result.stats["n_triplets"] == 0


def test_missing_extraction_and_empty_reference_are_explained():
    metric = TriHEMetric(EmbeddingSimilarityJudge(BagOfWordsEncoder()))
    no_concepts = metric.update(ScoringItem("r", "a cat", graph_sample(), mentioned=None))
    assert "extraction" in no_concepts.undefined_reason
    bare = Sample(id="x/1", benchmark="x", image_key="1", task="caption")
    no_ref = metric.update(item(bare, relations=[("cat", "on", "sofa")]))
    assert "no scene graph" in no_ref.undefined_reason


def trihe_items(n_images):
    """(own-gold item, other-image-gold item or None) pairs built from the real Tri-HE file."""
    import json

    from conftest import shared_dataset

    data = json.loads(shared_dataset("tri-he", "tri-he.json").read_text())
    pattern = re.compile(r"^\(\s*(.*?)\s*,\s*(.*?)\s*,\s*(.*?)\s*\)$")

    def parse(t):
        m = pattern.match(t.strip())
        return tuple(m.groups()) if m else None

    ids = list(data)[:n_images]
    pairs = []
    for n, image_id in enumerate(ids):
        entry = data[image_id]
        other = data[ids[(n + 1) % len(ids)]]  # a different image's gold answers: the negative control
        graph_triplets = [p for p in map(parse, entry["triplets"]) if p]
        objects = {x for s, _, o in graph_triplets for x in (s, o)}
        graph = SceneGraph.from_dict({"objects": [{"id": x, "name": x} for x in sorted(objects)],
                                      "relations": [{"subject": s, "predicate": p, "object": o}
                                                    for s, p, o in graph_triplets]})
        for k, inst in enumerate(entry["instance"]):
            gold = [p for p in map(parse, inst["triplet"]) if p]
            sample = Sample(id=f"tri-he/{image_id}/{k}", benchmark="tri-he", image_key=image_id, task="vqa",
                            scene_graph=graph, question=inst["question"], answer=inst["answer"])
            wrong = None
            if k < len(other["instance"]):
                wrong = item(sample, relations=[p for p in map(parse, other["instance"][k]["triplet"]) if p])
            pairs.append((item(sample, relations=gold, text=inst["answer"]), wrong))
    return pairs


def run_trihe(metric, pairs):
    own = [r.stats for r in metric.update_many([a for a, _ in pairs])]
    control = [r.stats for r in metric.update_many([b for _, b in pairs if b is not None])]
    return metric.compute(own), metric.compute(control)


def test_end_to_end_on_real_trihe_gold_answers():
    """Gold triplets judged against their own image's graph (which holds them) vs another image's."""
    own, control = run_trihe(TriHEMetric(EmbeddingSimilarityJudge(BagOfWordsEncoder())), trihe_items(15))
    assert own["questions"] > 20
    assert own["hallu_q"] < 5.0 and own["hallu_i"] < 5.0
    assert control["hallu_q"] > 50.0


@pytest.mark.slow
def test_end_to_end_with_the_real_embedding_model():
    """The configured MiniLM model and the released thresholds, through ``from_settings``."""
    from hallu_studio.config import Settings

    pairs = trihe_items(2)
    metric = TriHEMetric.from_settings(Settings())
    own, control = run_trihe(metric, pairs)
    assert own["hallu_q"] < 10.0
    assert control["hallu_q"] > own["hallu_q"] + 30.0


def test_update_many_gives_the_same_results_as_update():
    metric = TriHEMetric(EmbeddingSimilarityJudge(BagOfWordsEncoder(), support_threshold=0.7))
    items = [item(graph_sample("tri/a"), relations=[("cat", "on", "sofa"), ("cat", "under", "sofa")]),
             item(graph_sample("tri/b", "img2"), relations=[("bird", "near", "lake")], attributes=[("cat", "grey")]),
             ScoringItem("r", "", graph_sample("tri/c"), mentioned=None)]
    many = metric.update_many(items)
    one = [metric.update(i) for i in items]
    assert [(r.stats, r.evidence, r.undefined_reason) for r in many] == \
        [(r.stats, r.evidence, r.undefined_reason) for r in one]
