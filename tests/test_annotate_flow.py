"""The Annotate view's actions without a browser: a rating moves on (or stays, by choice), an undo says what it
took back and where, offers to go back there, and writes a new event (nothing a person entered is lost)."""

from __future__ import annotations

import pytest

from hallu_studio import annotation
from hallu_studio.annotation.rating import describe_item, recorded_mode
from hallu_studio.app import annotate_flow as flow
from hallu_studio.app import annotate_place as places
from hallu_studio.app.context import AppContext
from hallu_studio.model import Benchmark, Response, Run, Sample, ValidationError


@pytest.fixture
def ctx(store):
    samples = [Sample(id=f"b/img{i}/{t}", benchmark="b", image_key=f"img{i}", task=t,
                      question="Is there a cat?" if t == "yes_no" else None)
               for i in range(6) for t in ("caption", "yes_no")]
    store.add_samples(Benchmark("b"), samples, [])
    for model in ("model-a", "model-b"):
        store.add_run(Run(id=f"run-{model}", benchmark="b", model=model, backend="probe"))
        store.add_responses([Response(f"run-{model}", s.id, f"{model} says {s.id}") for s in samples])
    return AppContext(store=store)


def _start(ctx, who="ann", **choices):
    place = places.fresh()
    place.update(name=who, **choices)
    first = flow.step(ctx, place, who)
    assert first.response_id
    return place, first.response_id


def test_pressing_a_rating_ten_times_rates_ten_items(ctx):
    place, rid = _start(ctx)
    shown = []
    for k in range(10):
        shown.append(rid)
        outcome = flow.rate(ctx, place, "ann", rid, 1 + k % 5)
        assert outcome.response_id not in (None, rid) and "rated" in outcome.message
        rid = outcome.response_id
    ratings = annotation.current_ratings(ctx.store.list_events())
    assert sorted(r for r, a in ratings) == sorted(shown) and len(set(shown)) == 10
    assert place["history"][:10] == shown and places.current(place) == rid  # k goes back through them


def test_staying_after_a_rating_is_a_setting(ctx):
    place, rid = _start(ctx, advance=False)
    outcome = flow.rate(ctx, place, "ann", rid, 3)
    assert outcome.response_id == rid and "next item" not in outcome.message
    assert flow.rate(ctx, place, "ann", rid, 4).response_id == rid
    assert annotation.current_ratings(ctx.store.list_events()) == {(rid, "ann"): 4}


def test_undo_on_the_next_unrated_item_says_which_item_and_rating_and_offers_to_go_back(ctx):
    place, first = _start(ctx)
    second = flow.rate(ctx, place, "ann", first, 4).response_id
    outcome = flow.undo(ctx, place, "ann", second)
    assert outcome.response_id == second  # the screen stays where the annotator is
    assert outcome.back_to == first
    assert "your rating 4" in outcome.message and "not the one on screen" in outcome.message
    sample = ctx.store.get_sample(ctx.store.get_response(first).sample_id)
    assert sample.image_key in outcome.message.replace("\\", "")
    assert "model-" not in outcome.message  # rating blind: the undo does not name the model either
    events = ctx.store.list_events(annotator="ann")
    assert [e.kind for e in events] == ["rating", "undo"] and events[1].undoes == events[0].id  # appended only
    back = flow.back_to(ctx, place, outcome.back_to)
    assert back.response_id == first and places.current(place) == first
    assert flow.rate(ctx, place, "ann", first, 2).response_id == second  # rated again, on to where it was


def test_undo_on_the_item_itself_and_with_nothing_left(ctx):
    place, rid = _start(ctx, advance=False)
    assert flow.undo(ctx, place, "ann", rid).message == "nothing of yours to undo"
    flow.rate(ctx, place, "ann", rid, 5)
    outcome = flow.undo(ctx, place, "ann", rid)
    assert outcome.back_to is None and "your rating 5" in outcome.message and "not the one" not in outcome.message
    assert annotation.current_ratings(ctx.store.list_events()) == {}
    with pytest.raises(ValidationError, match="nothing was undone"):
        flow.back_to(ctx, place, None)


def test_ratings_are_refused_while_correcting_and_without_an_item(ctx):
    place, rid = _start(ctx)
    with pytest.raises(ValidationError, match="no response on screen"):
        flow.rate(ctx, place, "ann", None, 3)
    place["task"] = "correct"
    with pytest.raises(ValidationError, match="rating task"):
        flow.rate(ctx, place, "ann", rid, 3)
    assert ctx.store.list_events() == []


def test_an_item_is_named_without_its_model_while_blind(ctx):
    rid = next(r for r in ctx.store.response_ids() if r and ctx.store.get_response(r).sample_id.endswith("yes_no"))
    assert describe_item(ctx.store, rid) == "“Is there a cat?” on image img0"
    assert describe_item(ctx.store, rid, blind=False).endswith(", by model-a")
    assert recorded_mode(ctx.store, "rate", None) == "blind"
    assert recorded_mode(ctx.store, "rate", None, revealed=True) == "unblinded"
    assert recorded_mode(ctx.store, "correct", None) == "unblinded"


def test_a_stored_place_is_read_defensively_and_settled_after_a_reload():
    assert places.clean({"index": "x", "history": None, "advance": "no"})["index"] == -1
    assert places.clean({"advance": False})["advance"] is False and places.clean(None)["advance"] is True
    place = places.clean({"study": "gone", "history": ["a", "b"], "index": 1})
    assert places.settle(place, {""}, lambda r: True)["history"] == []
    place = places.clean({"history": ["a", "b", "c"], "index": 2})
    places.settle(place, {""}, lambda r: r != "c")
    assert place["history"] == ["a", "b"] and places.current(place) == "b"


def _is_skip(update) -> bool:
    return isinstance(update, dict) and set(update) == {"__type__"}


def test_a_page_load_answered_late_restores_what_was_stored_and_blanks_nothing_typed_meanwhile(ctx):
    """On a busy server the page-load handler's answer can come after the person typed their name and started: a
    fresh page restores nothing (no blank name, no blank item, no fresh place over the one just started); a stored
    place still comes back whole."""
    import gradio as gr

    from hallu_studio.app.tabs import annotate

    with gr.Blocks():
        tab = annotate.build(ctx)
    outputs = dict(zip(map(id, tab.restore_outputs), tab.restore(places.fresh(), None)))
    by_id = {c.elem_id: outputs[id(c)] for c in tab.restore_outputs if getattr(c, "elem_id", None)}
    assert _is_skip(outputs[id(tab.name)]) and _is_skip(outputs[id(tab.current)]) and _is_skip(outputs[id(tab.session)])
    assert _is_skip(by_id["ann-task"]) and outputs[id(tab.study)].get("choices")  # new studies still show

    place, rid = _start(ctx, who="ria")
    back = dict(zip(map(id, tab.restore_outputs), tab.restore(place, None)))
    assert back[id(tab.name)]["value"] == "ria" and back[id(tab.current)] == rid
    stale = places.clean({**place, "history": ["gone-response"], "index": 0})
    settled = dict(zip(map(id, tab.restore_outputs), tab.restore(stale, None)))
    assert settled[id(tab.session)]["history"] == [] and settled[id(tab.name)]["value"] == "ria"
