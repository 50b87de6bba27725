"""Inspect's list for a session with no Browse filter: read by position from the store, never listed."""

from __future__ import annotations

from hallu_studio.app.context import AppContext
from hallu_studio.app.id_lists import StoreOrder
from synthetic_store import fill_synthetic_store


def test_store_order_is_the_browse_order_of_everything(store):
    fill_synthetic_store(store, n_samples=7)
    listed = store.browse_response_ids({})
    order = StoreOrder(store)
    assert len(order) == len(listed) and [order[i] for i in range(len(order))] == listed
    assert order[-1] == listed[-1] and all(order.index(rid) == i for i, rid in enumerate(listed))
    assert "nope" not in order and listed[3] in order
    fresh = StoreOrder(store)  # no positions known: neighbours of a known one come by keyset, both ways
    assert fresh[4] == listed[4] and fresh[5] == listed[5] and fresh[3] == listed[3]
    assert store.response_id_beside(listed[-1]) is None and store.response_id_beside(listed[0], backwards=True) is None


def test_a_fresh_session_steps_without_listing_every_id(store, monkeypatch):
    from hallu_studio.app.tabs import inspect

    fill_synthetic_store(store, n_samples=5)
    listed = store.browse_response_ids({})
    monkeypatch.setattr(type(store), "browse_response_ids", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("the first next listed every id")))
    ctx = AppContext(store=store)
    out = inspect.step(ctx, {}, +1)
    nav = out[0]
    assert out[1] == listed[1] and nav["index"] == 1 and f"2 of {len(listed)}" in out[2]
    out = inspect.step(ctx, nav, -1)
    assert out[1] == listed[0]
    assert inspect.step(ctx, out[0], -1)[1] == listed[-1]  # wraps around
