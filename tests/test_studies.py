import math

import numpy as np
import pytest
from scipy import stats as st

from hallu_studio import annotation as ann
from hallu_studio.model import Benchmark, Response, Run, Sample, Score
from hallu_studio.studies import bradley_terry, correlate, judge_accuracy, krippendorff_alpha
from hallu_studio.studies.collect import (
    annotator_agreement, correlation_table, judge_accuracy_table, preference_strengths, probe_detection_table,
)
from hallu_studio.studies.leaderboard import leaderboard
from hallu_studio.studies.probe_detection import detection_counts, flagged_spans


# --------------------------------------------------------------------------- pure functions


def test_correlations_match_hand_computation_and_scipy():
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    r = correlate(x, y, n_boot=200)
    # Pearson by hand: deviations (-2,-1,0,1,2) and (-1,-2,1,0,2): sum of products 8, sums of squares 10 and 10.
    assert r.pearson.value == pytest.approx(0.8)
    # Kendall: 10 pairs, 2 discordant ((1,2) and (3,4)) -> (8 - 2) / 10.
    assert r.kendall.value == pytest.approx(0.6)
    assert r.spearman.value == pytest.approx(st.spearmanr(x, y).statistic)
    assert r.n == 5 and r.clusters == 5


def test_correlation_interval_is_deterministic_and_contains_the_estimate():
    rng = np.random.default_rng(0)
    x = rng.normal(size=120)
    y = x + rng.normal(scale=1.0, size=120)
    clusters = [i // 3 for i in range(120)]
    a = correlate(x, y, clusters, n_boot=300, seed=5)
    assert a == correlate(x, y, clusters, n_boot=300, seed=5)
    for iv in (a.pearson, a.spearman, a.kendall):
        assert iv.low < iv.value < iv.high
    assert a.clusters == 40
    with pytest.raises(ValueError, match="paired"):
        correlate([1, 2], [1, 2, 3])
    assert math.isnan(correlate([1, 1, 1], [1, 2, 3], n_boot=10).pearson.value)


def test_krippendorff_alpha_tiny_table():
    ratings = {("r1", "a"): 1, ("r1", "b"): 1, ("r2", "a"): 2, ("r2", "b"): 2,
               ("r3", "a"): 3, ("r3", "b"): 3, ("r4", "a"): 3, ("r4", "b"): 1}
    assert krippendorff_alpha(ratings) == pytest.approx(1 - 6.25 / (600 / 56))  # hand-computed, see docstring
    perfect = {(f"r{i}", a): 1 + i % 5 for i in range(10) for a in ("a", "b")}
    assert krippendorff_alpha(perfect) == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha({("r1", "a"): 3, ("r2", "b"): 4}))  # nothing rated twice


def test_bradley_terry_orders_systems_and_fits_win_rates():
    wins = [("A", "B")] * 9 + [("B", "A")] * 3 + [("B", "C")] * 9 + [("C", "B")] * 3 + [("A", "C")] * 10 + [
        ("C", "A")] * 2
    result = bradley_terry(wins, alpha=0.0001)
    assert result["A"].strength > result["B"].strength > result["C"].strength
    assert sum(s.strength for s in result.values()) == pytest.approx(1.0)
    a, b = result["A"].strength, result["B"].strength
    assert 0.6 < a / (a + b) < 0.85  # P(A beats B) under the fitted model
    assert result["A"].wins == 19 and result["A"].comparisons == 24
    tied = bradley_terry([], ties=[("X", "Y")] * 4)
    assert tied["X"].strength == pytest.approx(tied["Y"].strength)
    with pytest.raises(ValueError, match="itself"):
        bradley_terry([("A", "A")])


def test_judge_accuracy_and_confusion():
    human = {("r", 0): "supported", ("r", 1): "object", ("r", 2): "relation", ("s", 0): "supported"}
    judges = {"emb": {("r", 0): "supported", ("r", 1): "relation", ("r", 2): "relation", ("x", 9): "object"},
              "none": {}}
    acc = judge_accuracy(judges, human)
    assert acc["emb"].n == 3 and acc["emb"].accuracy == pytest.approx(2 / 3) and acc["emb"].binary_accuracy == 1.0
    assert acc["emb"].confusion_dict()["object"]["relation"] == 1
    assert acc["none"].n == 0 and math.isnan(acc["none"].accuracy)
    with pytest.raises(ValueError, match="unknown verdict"):
        judge_accuracy({"j": {("r", 0): "maybe"}}, human)


def test_flagged_spans_per_metric_and_detection_counts():
    text = "A grey cat sits on a red mat near a dog."
    dog, red = (text.index("dog"), text.index("dog") + 3), (text.index("red"), text.index("red") + 3)
    cat = (text.index("cat"), text.index("cat") + 3)
    assert flagged_spans("chair", {}, {"hallucinated": ["dog"]}, text) == [dog]
    assert flagged_spans("halfscore", {}, {"hallucinated": [["attribute", "mat", "red"]]}, text) == [red]
    trihe = {"triplets": [{"triplet": ["cat", "near", "dog"], "span": None, "verdict": "object"},
                          {"triplet": ["cat", "on", "mat"], "span": [7, 22], "verdict": "supported"}]}
    assert flagged_spans("trihe", {}, trihe, text) == [dog]
    emd = {"types": {"object": {"response": ["cat", "dog"], "response_spans": [list(cat), list(dog)],
                                "per_concept_cost": [10.0, 70.0]}}}
    assert flagged_spans("emd", {}, emd, text) == [dog]
    words = ["A", "grey", "cat", "sits", "on", "a", "red", "mat", "near", "a", "dog"]
    edit = {"alignment": [["equal", words[:6], words[:6]], ["substitute", ["red"], ["blue"]],
                          ["equal", ["mat"], ["mat"]], ["delete", ["near", "a", "dog"], []]]}
    assert flagged_spans("edit", {}, edit, text)[0] == red and len(flagged_spans("edit", {}, edit, text)) == 4
    assert flagged_spans("reefknot", {"hallucinated": 1}, {}, "Yes") == [(0, 3)]
    assert flagged_spans("unknown", {}, {}, text) is None
    counts = detection_counts([{"span": list(dog)}, {"span": list(red)}], [{"span": list(cat)}], [dog])
    assert counts == {"injected": 2, "detected": 1, "stated": 1, "false_alarms": 0}


# --------------------------------------------------------------------------- from a store


def _store_with_two_models(store, n: int = 6):
    store.add_samples(Benchmark("b"), [Sample(id=f"b/{i}", benchmark="b", image_key=f"img{i // 2}", task="caption",
                                              domain="original" if i % 2 else "sketch") for i in range(n)])
    ids = {}
    for model in ("good", "bad"):
        store.add_run(Run(id=f"run-{model}", benchmark="b", model=model, backend="probe", synthetic=True))
        responses = [Response(f"run-{model}", f"b/{i}", f"{model} text {i}",
                              signals={"injected": [{"type": "object", "concept": ["dog"], "span": [0, 3]}]
                                       if model == "bad" else [],
                                       "stated": [{"type": "object", "concept": ["cat"], "span": [5, 8]}]})
                     for i in range(n)]
        store.add_responses(responses)
        ids[model] = [r.id for r in responses]
    return ids


def _chair_score(rid: str, hallucinated: int, mentioned: int, flagged: list[str]) -> Score:
    return Score(rid, "chair", "k1", {"hallucinated_objects": hallucinated, "mentioned_objects": mentioned,
                                      "chair_i_item": hallucinated / mentioned},
                 {"hallucinated": flagged, "mentioned": []})


def _chair_compute(stats):
    return {"chair_i": sum(s["hallucinated_objects"] for s in stats) / sum(s["mentioned_objects"] for s in stats)}


def test_leaderboard_aggregates_per_model_with_intervals(store):
    ids = _store_with_two_models(store)
    scores, stats = [], []
    for model, h in (("good", 0), ("bad", 1)):
        for i, rid in enumerate(ids[model]):
            hh = h if i % 3 else 0
            scores.append(_chair_score(rid, hh, 2, ["good"] if hh else []))
            stats.append({"hallucinated_objects": hh, "mentioned_objects": 2})
    store.put_score_batch(scores, stats)
    rows = leaderboard(store, computes={"chair": _chair_compute}, n_boot=100)
    by_model = {r["model"]: r for r in rows}
    assert set(by_model) == {"good", "bad"} and all(r["key"] == "chair_i" for r in rows)
    assert by_model["good"]["value"] == 0.0 and by_model["bad"]["value"] == pytest.approx(4 / 12)
    assert by_model["bad"]["low"] <= by_model["bad"]["value"] <= by_model["bad"]["high"]
    assert by_model["bad"]["images"] == 3 and by_model["bad"]["aggregation"] == "metric"
    assert by_model["bad"]["synthetic"] is True
    per_domain = leaderboard(store, by_domain=True, computes={"chair": _chair_compute}, n_boot=20)
    assert {(r["model"], r["domain"]) for r in per_domain} == {(m, d) for m in ("good", "bad")
                                                               for d in ("original", "sketch")}
    # A split (the questions a method was tuned on, the rest): only those samples' responses count.
    split = leaderboard(store, computes={"chair": _chair_compute}, n_boot=20, sample_ids={"b/1", "b/2"})
    by_model = {r["model"]: r for r in split}
    assert by_model["bad"]["n"] == 2 and by_model["bad"]["value"] == pytest.approx(2 / 4)
    assert by_model["bad"]["images"] == 2
    # Without statistics (imported scores), the row says it averaged values instead.
    store.put_scores([Score(ids["good"][0], "pope", "k", {"hallucinated": 1})])
    pope = [r for r in leaderboard(store, metrics=["pope"], computes={}, n_boot=10)]
    assert pope[0]["aggregation"] == "mean of values" and pope[0]["value"] == 1.0


def test_correlation_agreement_judges_preferences_and_probe_detection_from_a_store(store):
    ids = _store_with_two_models(store)
    scores = []
    for model, h in (("good", 0), ("bad", 1)):
        for i, rid in enumerate(ids[model]):
            scores.append(_chair_score(rid, h * (i % 3), 3, ["bad"] if h * (i % 3) else []))
    store.put_score_batch(scores, [None] * len(scores))
    for model in ("good", "bad"):
        for i, rid in enumerate(ids[model]):
            ann.rate(store, "alice", rid, 5 - (1 if model == "bad" else 0) * (i % 3))
            ann.rate(store, "bob", rid, 5 - (1 if model == "bad" else 0) * (i % 3) - (i == 0))
    table = correlation_table(store, n_boot=100)
    assert len(table) == 1 and table[0]["metric"] == "chair" and table[0]["n"] == 12
    assert table[0]["pearson"] < -0.9 and table[0]["clusters"] == 3
    counts = correlation_table(store, value_keys={"chair": "hallucinated_objects"}, n_boot=20)
    assert counts[0]["value"] == "hallucinated_objects" and counts[0]["pearson"] == pytest.approx(table[0]["pearson"])

    agreement = annotator_agreement(store)
    assert agreement["annotators"] == 2 and agreement["items_rated_twice"] == 12 and 0.5 < agreement["alpha"] <= 1

    rid = ids["bad"][1]
    store.put_scores([Score(rid, "trihe", "kj", {"n_triplets": 2}, {"judge": "embedding-similarity", "triplets": [
        {"triplet": ["a", "on", "b"], "verdict": "supported"}, {"triplet": ["a", "near", "c"], "verdict": "object"}]})])
    ann.correct_triplet(store, "alice", rid, 0, "supported")
    ann.correct_triplet(store, "alice", rid, 1, "relation")
    acc = judge_accuracy_table(store)
    assert acc["embedding-similarity@kj"].n == 2 and acc["embedding-similarity@kj"].accuracy == 0.5

    for i in range(4):
        ann.prefer(store, "alice", ids["good"][i], ids["bad"][i], ids["good"][i], aspect="precision")
    ann.prefer(store, "alice", ids["good"][4], ids["bad"][4], ids["bad"][4], aspect="precision")
    strengths = preference_strengths(store, aspect="precision")
    assert strengths["good"].strength > strengths["bad"].strength and strengths["good"].wins == 4

    rows = {r.metric: r for r in probe_detection_table(store)}
    chair = rows["chair"]
    # "bad" responses inject "dog" at 0-3 ("bad text ..."); CHAIR flags the word "bad" there on 4 of 6.
    assert chair.injected == 6 and chair.detected == 4 and chair.false_alarms == 0 and chair.stated == 12
    assert chair.detection_rate == pytest.approx(4 / 6) and chair.false_alarm_rate == 0
    assert chair.spearman_with_injected_share > 0
    split = {r.metric: r for r in probe_detection_table(store, sample_ids={"b/1", "b/2"})}["chair"]
    assert split.injected == 2 and split.detected == 2 and split.stated == 4
