"""Annotation studies: a seeded stratified sample, balanced queues, per-study agreement and progress, blind
ratings recorded as such, and only this studio's judgements in the in-app queues and agreement."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Mapping, Sequence

import pytest

from hallu_studio import annotation
from synthetic_store import fill_synthetic_store
from hallu_studio.model import HumanEvent, ValidationError
from hallu_studio.store import Store
from hallu_studio.studies import collect
from hallu_studio.annotation.design import Item, StudyDesign, draw_sample, queue_order

MODELS = ("model-a", "model-b", "model-c")


@pytest.fixture()
def store():
    st = Store(":memory:")
    fill_synthetic_store(st, n_samples=30, models=MODELS)
    yield st
    st.close()


def max_excess(sequence: Sequence[str], shares: Mapping[str, float]) -> float:
    """The largest amount by which any key's count in a prefix of ``sequence`` exceeds its share of that prefix
    (what these tests measure a queue's balance by)."""
    counts: Counter[str] = Counter()
    worst = 0.0
    for t, key in enumerate(sequence, start=1):
        counts[key] += 1
        worst = max(worst, max(counts[k] - shares.get(k, 0.0) * t for k in counts))
    return worst



def _runs(store: Store) -> tuple[str, ...]:
    return tuple(r["id"] for r in store.list_runs())


def _models_of(store: Store) -> dict[str, str]:
    return {r["response_id"]: r["run_id"] for r in store.study_candidates(_runs(store))}


def test_the_sample_is_stratified_seeded_and_one_response_per_model_per_image(store):
    design = StudyDesign("pilot", _runs(store), images=20, ratings_per_item=2, seed=7)
    drawn = draw_sample(design, store.study_candidates(_runs(store)))
    again = draw_sample(design, store.study_candidates(_runs(store)))
    other = draw_sample(StudyDesign("pilot", _runs(store), images=20, seed=8), store.study_candidates(_runs(store)))
    assert [i.response_id for i in drawn.items] == [i.response_id for i in again.items]  # the seed fixes the draw
    assert [i.response_id for i in drawn.items] != [i.response_id for i in other.items]
    assert len(drawn.items) == 60 and Counter(i.model for i in drawn.items) == Counter({r: 20 for r in _runs(store)})
    per_image = Counter(i.image for i in drawn.items)
    assert len(per_image) == 20 and set(per_image.values()) == {3}  # every image once per model
    # both tasks of the synthetic benchmark are drawn, in turn
    assert set(drawn.strata) == {"synthetic-ui / caption", "synthetic-ui / yes_no"}
    assert min(drawn.strata.values()) >= 5


def test_the_sample_says_what_it_left_out(store):
    runs = _runs(store)
    rows = [r for r in store.study_candidates(runs) if not (r["run_id"] == runs[0] and r["sample_id"].endswith("1"))]
    drawn = draw_sample(StudyDesign("s", runs, images=40), rows)
    assert drawn.left_out["samples not answered by every chosen model"] == 3
    assert any(why.startswith("images short of the 40 asked for") for why in drawn.left_out)
    assert "left out: 3 samples not answered by every chosen model" in drawn.summary()


def test_a_study_of_3_models_20_images_2_ratings_queues_no_model_above_its_share_plus_one(store):
    """Done when: no model has more than its share + 1 at any point of a queue, for each annotator."""
    drawn = annotation.create_study(store, StudyDesign("three-models", _runs(store), images=20, ratings_per_item=2,
                                                       seed=1))
    model_of = _models_of(store)
    shares = {r: 1 / 3 for r in _runs(store)}
    image_of = {i.response_id: i.image for i in drawn.items}
    image_shares = {i.image: 1 / 20 for i in drawn.items}
    first_queue = annotation.study_queue(store, "ann", "three-models", limit=1000)
    assert len(first_queue) == 60
    assert max_excess([model_of[r] for r in first_queue], shares) <= 1
    assert max_excess([image_of[r] for r in first_queue], image_shares) <= 1

    # two annotators rate in turn, each drawing their next response from their own queue
    rng = random.Random(3)
    sequences: dict[str, list[str]] = {"ann": [], "bob": []}
    while True:
        progressed = False
        for who in rng.sample(list(sequences), 2):
            queue = annotation.study_queue(store, who, "three-models", limit=1)
            if queue:
                annotation.rate(store, who, queue[0], rng.randint(1, 5), mode="blind", study="three-models")
                sequences[who].append(queue[0])
                progressed = True
        if not progressed:
            break
    for who, seq in sequences.items():
        assert len(seq) == 60, who
        assert max_excess([model_of[r] for r in seq], shares) <= 1, who
        assert max_excess([image_of[r] for r in seq], image_shares) <= 1, who
    progress = annotation.study_progress(store, "three-models")
    assert (progress["done"], progress["needed"], progress["complete"]) == (120, 120, 60)
    assert progress["annotators"] == {"ann": 60, "bob": 60} and progress["mode"] == "blind"
    agreement = collect.annotator_agreement(store, study="three-models")
    assert agreement["items_rated_twice"] == 60 and not math.isnan(agreement["alpha"])


def test_queue_order_alternates_models_even_with_a_history():
    items = [Item(f"{m}-{k}", m, f"img{k}") for k in range(6) for m in "AB"]
    order = queue_order(items, {}, ["A-0", "A-1"], ratings_per_item=1)
    assert [items[k].model for k in order[:4]] == ["B", "B", "A", "B"]  # B catches up first, then they alternate


def test_study_rules_refuse_outsiders_foreign_responses_and_a_reused_name(store):
    runs = _runs(store)
    annotation.create_study(store, StudyDesign("closed", runs[:2], images=4, annotators=("ann",)))
    with pytest.raises(ValidationError, match="not an annotator of study 'closed'"):
        annotation.study_queue(store, "eve", "closed")
    outside = next(r for r in store.response_ids() if r not in store.get_study("closed")["items"])
    with pytest.raises(ValidationError, match="not an item of study 'closed'"):
        annotation.rate(store, "ann", outside, 3, mode="blind", study="closed")
    with pytest.raises(ValidationError, match="already exists"):
        annotation.create_study(store, StudyDesign("closed", runs, images=2))
    with pytest.raises(ValidationError, match="no study named 'nope'"):
        annotation.study_queue(store, "ann", "nope")
    with pytest.raises(ValidationError, match="study name"):
        StudyDesign("a/b", runs, images=2)


def test_ratings_record_how_they_were_made_and_the_export_keeps_it(store):
    annotation.create_study(store, StudyDesign("pilot", _runs(store), images=3))
    rid = annotation.study_queue(store, "ann", "pilot")[0]
    annotation.rate(store, "ann", rid, 4, mode="blind", study="pilot")
    annotation.rate(store, "ann", rid, 2, mode="unblinded")  # outside the study, after seeing the judges
    rows = store.export_rows("judgments")
    assert [(r["value"], r["meta"], r["source"]) for r in rows] == [
        (4, {"mode": "blind", "study": "pilot"}, "app"), (2, {"mode": "unblinded"}, "app")]
    # the study's rating in force is the one made in it
    assert annotation.study_progress(store, "pilot")["done"] == 1
    assert collect.mean_human_ratings(store, study="pilot") == {rid: 4.0}
    with pytest.raises(ValidationError, match="annotation mode"):
        annotation.rate(store, "ann", rid, 3, mode="peeked")


def test_imported_judgements_stay_out_of_the_studios_queues_agreement_and_progress(store):
    ids = store.response_ids()
    store.append_events([HumanEvent("ann", "rating", rid, 5, source="outside-study") for rid in ids[:10]]
                        + [HumanEvent("bob", "rating", rid, 1, source="outside-study") for rid in ids[:10]])
    # not rated here yet: the queue is still the whole of ann's own order
    assert annotation.annotation_queue(store, "ann", "unrated", limit=5) == annotation.mixed_queue(store, "ann")[:5]
    assert collect.annotator_agreement(store)["items"] == 0
    outside = collect.annotator_agreement(store, source="outside-study")
    assert outside["items_rated_twice"] == 10 and outside["annotators"] == 2
    assert collect.mean_human_ratings(store) == {}
    assert collect.mean_human_ratings(store, source="outside-study")[ids[0]] == 3.0
    assert [s["source"] for s in store.event_sources()] == ["outside-study"]
    assert annotation.undo_last(store, "ann") is None  # an imported judgement is not the annotator's to undo


def test_the_correction_queue_offers_every_judged_response_disagreements_first(store):
    queue = annotation.annotation_queue(store, "ann", "uncorrected", limit=1000)
    judged = {r.id for r, s in store.iter_scores("trihe", with_evidence=True) if s.evidence.get("triplets")}
    assert set(queue) == judged
    annotation.correct_triplet(store, "ann", queue[0], 0, "supported", "seen", ["a", "b", "c"])
    assert queue[0] not in annotation.annotation_queue(store, "ann", "uncorrected", limit=1000)
    assert queue[0] in annotation.annotation_queue(store, "bob", "uncorrected", limit=1000)
