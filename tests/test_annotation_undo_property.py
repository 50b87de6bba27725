"""Undo semantics against a plain reference model, on random sequences of ratings and undos."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hallu_studio import annotation as ann
from hallu_studio.model import Benchmark, HumanEvent, Response, Run, Sample
from hallu_studio.store import Store

ANNOTATORS = ("alice", "bob")
RESPONSES = ("r1", "r2")
operation = st.one_of(
    st.tuples(st.just("rate"), st.sampled_from(ANNOTATORS), st.sampled_from(RESPONSES), st.integers(1, 5)),
    st.tuples(st.just("undo"), st.sampled_from(ANNOTATORS), st.sampled_from((None, *RESPONSES)), st.none()),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, max_size=14))
def test_current_ratings_follow_a_stack_per_annotator(ops):
    # Reference: each annotator's ratings in force, oldest first; an undo removes the latest
    # (on the named response, if any).
    live: dict[str, list[tuple[str, int]]] = {a: [] for a in ANNOTATORS}
    with Store(":memory:") as store:
        for kind, annotator, response, value in ops:
            if kind == "rate":
                ann.rate(store, annotator, response, value)
                live[annotator].append((response, value))
                continue
            undone = ann.undo_last(store, annotator, response)
            candidates = [i for i, (r, _) in enumerate(live[annotator]) if response is None or r == response]
            assert (undone is None) == (not candidates)
            if candidates:
                live[annotator].pop(candidates[-1])
        expected = {}
        for annotator, ratings in live.items():
            for response, value in ratings:
                expected[(response, annotator)] = value
        events = store.list_events()
        assert ann.current_ratings(events) == expected
        assert len(events) == sum(1 for op in ops if op[0] == "rate") + sum(1 for e in events if e.kind == "undo")


# Any event of one's own may be undone, an undo included (a redo), so undo chains branch: a rating undone,
# redone, then undone again by ``undo_last``.
chain_operation = st.one_of(
    st.tuples(st.just("rate"), st.sampled_from(ANNOTATORS), st.sampled_from(RESPONSES), st.integers(1, 5)),
    st.tuples(st.just("undo_last"), st.sampled_from(ANNOTATORS), st.sampled_from((None, *RESPONSES)), st.none()),
    st.tuples(st.just("undo_any"), st.sampled_from(ANNOTATORS), st.none(), st.integers(0, 30)),
)


def _store_with_responses() -> Store:
    store = Store(":memory:")
    store.add_samples(Benchmark("b"), [Sample(id=r, benchmark="b", image_key=r, task="caption") for r in RESPONSES])
    store.add_run(Run(id="run", benchmark="b", model="m", backend="probe"))
    store.add_responses([Response("run", r, "a cat", id=r) for r in RESPONSES])
    return store


def test_the_store_and_active_events_agree_on_rate_undo_redo_chains():
    # rate 1; undo it (2); redo: undo the undo (3); undo_last undoes the rating again (4); redo once more (5).
    with _store_with_responses() as store:
        rating = ann.rate(store, "alice", "r1", 4)
        first_undo = ann.undo_last(store, "alice", "r1")
        redo = store.append_event(HumanEvent("alice", "undo", "r1", None, undoes=first_undo))
        assert [e.id for e in ann.active_events(store.list_events())] == [rating]
        assert _annotated(store) == {"r1"}
        second_undo = ann.undo_last(store, "alice")  # the rating is in force again: it is what undo_last undoes
        assert store.list_events()[-1].undoes == rating
        assert ann.active_events(store.list_events()) == [] and _annotated(store) == set()
        store.append_event(HumanEvent("alice", "undo", "r1", None, undoes=second_undo))
        assert ann.current_ratings(store.list_events()) == {("r1", "alice"): 4} and _annotated(store) == {"r1"}
        assert redo < second_undo


def _annotated(store: Store) -> set[str]:
    return {r["id"] for r in store.browse_responses({}, limit=100) if r["annotated"]}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(chain_operation, max_size=16))
def test_the_store_and_active_events_agree_on_random_undo_chains(ops):
    with _store_with_responses() as store:
        for kind, annotator, response, value in ops:
            if kind == "rate":
                ann.rate(store, annotator, response, value)
            elif kind == "undo_last":
                before = [e for e in ann.active_events(store.list_events()) if e.annotator == annotator
                          and (response is None or e.response_id == response)]
                undo = ann.undo_last(store, annotator, response)
                # undo_last (SQL) undoes what active_events (Python) says is the latest in force
                assert (undo is None) == (not before)
                if before:
                    assert store.list_events()[-1].undoes == before[-1].id
            else:
                own = store.list_events(annotator=annotator)
                if own:
                    target = own[value % len(own)]
                    store.append_event(HumanEvent(annotator, "undo", target.response_id, None, undoes=target.id))
            events = store.list_events()
            rated = {e.response_id for e in ann.active_events(events) if e.kind == "rating"}
            assert _annotated(store) == rated
        in_force = store._dicts(store.EVENTS_IN_FORCE + " ORDER BY id", [store._undone_ids()])
        assert [r["id"] for r in in_force] == [e.id for e in ann.active_events(store.list_events())]
