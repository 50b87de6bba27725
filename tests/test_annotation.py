import threading

import pytest

from hallu_studio import annotation as ann
from hallu_studio.model import Benchmark, HumanEvent, Response, Run, Sample, Score, ValidationError


def _seed(store, n: int = 4) -> list[str]:
    store.add_samples(Benchmark("b"), [Sample(id=f"b/{i}", benchmark="b", image_key=str(i), task="vqa")
                                       for i in range(n)])
    store.add_run(Run(id="r", benchmark="b", model="m", backend="probe"))
    responses = [Response("r", f"b/{i}", f"text {i}") for i in range(n)]
    store.add_responses(responses)
    return [r.id for r in responses]


def test_guideline_covers_the_five_point_scale():
    assert sorted(ann.RATING_GUIDELINE) == [1, 2, 3, 4, 5]
    assert "no hallucination" in ann.RATING_GUIDELINE[5]


def test_rating_is_append_only_and_undo_is_an_event(store):
    rid = _seed(store, 1)[0]
    ann.rate(store, "alice", rid, 2)
    second = ann.rate(store, "alice", rid, 4)
    assert ann.current_ratings(store.list_events()) == {(rid, "alice"): 4}
    undo = ann.undo_last(store, "alice", rid)
    events = store.list_events()
    assert [e.kind for e in events] == ["rating", "rating", "undo"]
    assert events[-1].id == undo and events[-1].undoes == second
    assert ann.current_ratings(events) == {(rid, "alice"): 2}
    ann.undo_last(store, "alice")
    assert ann.current_ratings(store.list_events()) == {}
    assert ann.undo_last(store, "alice") is None  # nothing left: no event written
    assert len(store.list_events()) == 4


def test_annotators_are_isolated(store):
    rid = _seed(store, 1)[0]
    ann.rate(store, "alice", rid, 5)
    ann.rate(store, "bob", rid, 1)
    assert ann.undo_last(store, "carol", rid) is None
    ann.undo_last(store, "bob")
    assert ann.current_ratings(store.list_events()) == {(rid, "alice"): 5}


def test_bad_input_is_refused_with_a_reason(store):
    rid = _seed(store, 1)[0]
    with pytest.raises(ValidationError, match="1-5"):
        ann.rate(store, "alice", rid, 7)
    with pytest.raises(ValidationError, match="verdict"):
        ann.correct_triplet(store, "alice", rid, 0, "maybe")
    with pytest.raises(ValidationError, match="annotator"):
        ann.rate(store, "  ", rid, 3)
    with pytest.raises(ValidationError, match="winner"):
        ann.prefer(store, "alice", "x", "y", "z")
    assert store.list_events() == []


def test_corrections_reviews_notes_and_preferences_derive_from_the_log(store):
    a, b = _seed(store, 2)
    ann.correct_triplet(store, "alice", a, 1, "relation", "not touching", triplet=("cat", "on", "mat"))
    ann.correct_triplet(store, "alice", a, 1, "supported")
    ann.review_edit(store, "alice", a, 0, True)
    ann.review_edit(store, "bob", a, 0, False)
    ann.add_note(store, "bob", a, "blurry image")
    ann.prefer(store, "alice", a, b, b, aspect="precision")
    ann.prefer(store, "alice", b, a, "tie", aspect="precision")  # same pair, other order: replaces
    events = store.list_events()
    assert ann.current_corrections(events)[(a, "alice", 1)]["verdict"] == "supported"
    assert ann.current_edit_reviews(events) == {(a, "alice", 0): True, (a, "bob", 0): False}
    assert [n.value["text"] for n in ann.current_notes(events)] == ["blurry image"]
    assert ann.preferences(events) == [ann.Preference("alice", b, a, "tie", "precision")]


def test_undo_chains_resolve():
    events = [HumanEvent("a", "rating", "r", 3, id=1), HumanEvent("a", "undo", "r", None, undoes=1, id=2),
              HumanEvent("a", "undo", "r", None, undoes=2, id=3)]
    assert ann.current_ratings(events) == {("r", "a"): 3}


def test_concurrent_ratings_and_undos_lose_nothing_and_double_nothing(store):
    ids = _seed(store, 5)

    def work(worker: int) -> None:
        for rid in ids:
            ann.rate(store, f"ann{worker}", rid, 1 + worker % 5)
        ann.undo_last(store, f"ann{worker}")
        ann.undo_last(store, f"ann{worker}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = store.list_events()
    assert len(events) == 6 * 7
    undone = [e.undoes for e in events if e.kind == "undo"]
    assert len(undone) == len(set(undone)) == 12
    ratings = ann.current_ratings(events)
    assert len(ratings) == 6 * 3
    assert all(ratings[(rid, f"ann{w}")] == 1 + w % 5 for w in range(6) for rid in ids[:3])


def test_unrated_queue_puts_least_rated_first_and_skips_mine(store):
    ids = _seed(store, 4)
    ann.rate(store, "bob", ids[0], 3)
    ann.rate(store, "alice", ids[1], 3)
    queue = ann.annotation_queue(store, "alice", ratings_per_item=2)
    assert set(queue[:2]) == {ids[2], ids[3]} and queue[2:] == [ids[0]]  # unrated by anyone first, in her order
    assert ann.annotation_queue(store, "alice", ratings_per_item=1) == queue[:2]
    assert ann.annotation_queue(store, "alice", limit=1) == queue[:1]


def test_disagreement_queue_ranks_judge_and_human_disagreement(store):
    ids = _seed(store, 3)

    def trihe(rid: str, judge: str, verdicts: list[str]) -> Score:
        triplets = [{"triplet": ["cat", "on", f"thing{i}"], "verdict": v} for i, v in enumerate(verdicts)]
        return Score(rid, "trihe", judge, {"n_triplets": len(verdicts)}, {"judge": judge, "triplets": triplets})

    store.put_scores([trihe(ids[0], "nli", ["supported", "object"]), trihe(ids[0], "llm", ["supported", "object"]),
                      trihe(ids[1], "nli", ["supported", "object"]), trihe(ids[1], "llm", ["relation", "supported"]),
                      trihe(ids[2], "nli", ["supported"])])
    ann.correct_triplet(store, "bob", ids[2], 0, "object")
    assert ann.annotation_queue(store, "alice", mode="disagreement") == [ids[1], ids[2]]
    assert ann.annotation_queue(store, "bob", mode="disagreement") == [ids[1]]
    with pytest.raises(ValidationError, match="queue mode"):
        ann.annotation_queue(store, "alice", mode="random")
