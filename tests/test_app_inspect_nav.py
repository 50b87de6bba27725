"""Inspect's previous / next: the session state is small and the list follows the Browse filter."""

from __future__ import annotations

import json

import pytest

from hallu_studio.app import AppContext
from synthetic_store import fill_synthetic_store
from hallu_studio.app.tabs import browse
from hallu_studio.app.tabs import inspect as inspect_tab


@pytest.fixture
def ctx(store):
    fill_synthetic_store(store, n_samples=10)
    return AppContext(store=store)


def _filtered(ctx: AppContext) -> tuple[dict, list[str]]:
    f = browse.filters_from_controls(["probe-a"], [], [], [], {}, "any", "any", "", "emd.total", True)
    _, ids, _ = browse.query(ctx, f)
    return f, ids


def test_state_holds_the_filter_and_position_not_the_ids(ctx):
    f, ids = _filtered(ctx)
    assert 1 < len(ids) < 20
    out = inspect_tab.step(ctx, inspect_tab.nav_for(ctx, f, ids, 0, ids[0]), +1)
    nav = out[0]
    assert out[1] == ids[1] and out[2] == f"**2 of {len(ids)}**"
    assert nav["index"] == 1 and nav["id"] == ids[1] and nav["count"] == len(ids) and nav["filters"] == f
    assert not any(i in json.dumps(nav) for i in ids[2:])  # no list inside the state
    assert inspect_tab.step(ctx, nav, -1)[1] == ids[0]
    assert inspect_tab.step(ctx, inspect_tab.nav_for(ctx, f, ids, 0), -1)[1] == ids[-1]  # wraps around


def test_a_dropped_list_is_read_again_from_the_filter(ctx):
    import dataclasses

    from hallu_studio.app.id_lists import IdLists

    f, ids = _filtered(ctx)
    nav = inspect_tab.step(ctx, inspect_tab.nav_for(ctx, f, ids, 0), +1)[0]
    restarted = dataclasses.replace(ctx, id_lists=IdLists())  # the lists are gone, as after a restart
    out = inspect_tab.step(restarted, nav, +1)
    assert out[1] == ids[2] and out[2] == f"**3 of {len(ids)}**"


def test_a_response_outside_the_filter_then_next_enters_it(ctx):
    f, ids = _filtered(ctx)
    everything = ctx.store.browse_response_ids({}, ())
    outside = next(i for i in everything if i not in ids)
    out = inspect_tab.show(ctx, inspect_tab.nav_for(ctx, f, ids, 0), outside)
    assert out[0]["index"] == -1 and out[0]["id"] == outside and "outside the filter" in out[2]
    assert inspect_tab.step(ctx, out[0], +1)[1] == ids[0]
    assert inspect_tab.step(ctx, out[0], -1)[1] == ids[-1]


def test_an_empty_session_lists_everything(ctx):
    out = inspect_tab.step(ctx, {}, +1)
    assert out[2] == "**2 of 20**" and out[0]["count"] == 20


def test_back_on_the_tab_the_response_is_drawn_again_only_when_scores_landed(ctx):
    from hallu_studio.model import Score

    first = inspect_tab.show(ctx, None)
    nav, rid = first[0], first[1]
    n = len(first)
    skip = inspect_tab.gr.skip()
    assert inspect_tab.refresh(ctx, nav, n) == [skip] * n  # nothing landed: nothing moves
    ctx.store.put_scores([Score(rid, "chair", "a-new-configuration", {"chair_i": 0.0})])  # a metric it lacked
    again = inspect_tab.refresh(ctx, nav, n)
    assert again[1] == rid and again[0]["drawn"] != nav["drawn"]  # the same response, drawn anew
    assert inspect_tab.refresh(ctx, again[0], n) == [skip] * n
