"""Undo semantics against a plain reference model, on random sequences of ratings and undos."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hallu_studio import annotation as ann
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
