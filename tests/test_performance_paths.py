"""The fast paths the benchmarks rely on give the same answers as the slow ones."""

from __future__ import annotations

import numpy as np

from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.reefknot import ReefknotMetric, RelationPhraseMatch
from hallu_studio.model import HumanEvent, Sample


class CountingEncoder:
    """Deterministic bag-of-letters vectors; counts encoder calls."""

    model_name = "letters"

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return out


def _vqa(i: int, gold: str, said: str) -> ScoringItem:
    prompt = ("What is the relation with man and stair railing in this photo? Please answer in the following "
              "format:man is <relation> stair railing.")
    sample = Sample(id=f"reef/{i}", benchmark="reef", image_key=str(i), task="vqa", question=prompt,
                    answer=f"man is {gold} stair railing.", relation_category="perception")
    return ScoringItem(f"r{i}", f"man is {said} stair railing.", sample)


def test_reefknot_update_many_encodes_once_and_matches_update():
    pairs = [("on", "on"), ("sitting on", "standing on"), ("under", "beneath"), ("near", "next to"),
             ("holding", "holds"), ("on", "")]
    items = [_vqa(i, g, s) for i, (g, s) in enumerate(pairs)]
    one_by_one_encoder, batched_encoder = CountingEncoder(), CountingEncoder()
    one_by_one = [ReefknotMetric(RelationPhraseMatch(one_by_one_encoder, threshold=0.7)).update(i) for i in items]
    batched = ReefknotMetric(RelationPhraseMatch(batched_encoder, threshold=0.7)).update_many(items)
    assert [r.values for r in batched] == [r.values for r in one_by_one]
    assert [r.evidence for r in batched] == [r.evidence for r in one_by_one]
    assert batched_encoder.calls == 1 < one_by_one_encoder.calls


def test_append_events_keeps_order_and_values(store):
    events = [HumanEvent("ann", "rating", f"resp-{i}", 1 + i % 5) for i in range(50)]
    events.append(HumanEvent("ann", "note", "resp-0", {"text": "a <b> note"}))
    assert store.append_events(events) == 51
    got = store.list_events(annotator="ann")
    assert [(e.kind, e.response_id, e.value) for e in got] == [(e.kind, e.response_id, e.value) for e in events]
    assert [e.id for e in got] == sorted(e.id for e in got)
    assert store.append_events([]) == 0


def test_weighted_bootstrap_replicates_equal_scipy_on_the_expanded_resample():
    from hallu_studio.metrics.aggregate import cluster_resamples
    from hallu_studio.studies.correlation import _coefficients, _WeightedReplicates

    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(60):
        n = int(rng.integers(2, 40))
        # few levels on both sides: ties everywhere, and constant replicates now and then
        x = rng.integers(0, int(rng.integers(1, 6)), n).astype(float) if trial % 2 else rng.random(n).round(1)
        y = rng.integers(1, 6, n).astype(float)
        clusters = [int(c) for c in rng.integers(0, max(1, n // 3), n)]
        fast, slow_kendall = _WeightedReplicates(x, y), _WeightedReplicates(x, y)
        slow_kendall.kendall_fast = False
        for idx in cluster_resamples(clusters, n, 4, trial):
            w = np.bincount(idx, minlength=n).astype(float)
            expected = np.array(_coefficients(x[idx], y[idx]))
            for got in (np.array(fast.coefficients(w)), np.array(slow_kendall.coefficients(w))):
                assert (np.isnan(got) == np.isnan(expected)).all(), (got, expected)
                assert np.allclose(got[~np.isnan(got)], expected[~np.isnan(expected)], atol=1e-12)
            checked += int(not np.isnan(expected).all())
    assert checked > 100  # most replicates were defined, so the comparison was not vacuous


def test_chair_update_many_encodes_once_and_matches_update():
    from hallu_studio.metrics.chair import ChairMetric
    from hallu_studio.model import ConceptSet, ObjectConcept, SceneGraph

    graph = SceneGraph.from_dict({"objects": [{"id": "0", "name": "dog"}, {"id": "1", "name": "sofa"},
                                              {"id": "2", "name": "lamp"}], "relations": []})
    said = [["dog", "couch"], ["puppy", "table"], ["scene", "lamp"], ["sofas", "bicycle"], []]
    items = [ScoringItem(f"r{i}", " ".join(names), Sample(id=f"s/{i}", benchmark="s", image_key=str(i),
                                                         scene_graph=graph),
                         mentioned=ConceptSet(objects=[ObjectConcept(n) for n in names]))
             for i, names in enumerate(said)]
    one_by_one_encoder, batched_encoder = CountingEncoder(), CountingEncoder()
    one_by_one = [ChairMetric(one_by_one_encoder, threshold=0.7).update(i) for i in items]
    batched = ChairMetric(batched_encoder, threshold=0.7).update_many(items)
    assert [(r.values, r.evidence, r.undefined_reason) for r in batched] == \
        [(r.values, r.evidence, r.undefined_reason) for r in one_by_one]
    assert batched_encoder.calls == 1 < one_by_one_encoder.calls
