"""The store queries behind Browse / Inspect / Overview, and the Inspect panels built from them."""

from __future__ import annotations

import pytest

from hallu_studio import annotation
from hallu_studio.app.columns import headline_columns, headline_keys
from hallu_studio.app.inspection import inspect_response
from synthetic_store import SYNTHETIC_CONFIG_KEY, fill_synthetic_store
from hallu_studio.app.tabs.browse import controls_from_filters, filters_from_controls, filters_from_ui
from hallu_studio.model import Score
from hallu_studio.store import StoreError

COLS = headline_keys()


@pytest.fixture
def filled(store):
    ids = fill_synthetic_store(store, n_samples=10)
    return store, ids


def test_browse_filters_by_facets_text_and_ranges(filled):
    store, ids = filled
    assert len(store.browse_response_ids({}, COLS)) == len(ids) == 20
    rows = store.browse_responses({"models": ["probe-a"], "domains": ["sketch"]}, COLS)
    assert rows and all(r["model"] == "probe-a" and r["domain"] == "sketch" for r in rows)
    assert all(r["synthetic"] for r in rows)
    high = store.browse_responses({"ranges": {"emd.total": [30, None]}}, COLS, limit=1000)
    assert high and all(r["emd.total"] >= 30 for r in high)
    assert len(high) < 20
    yes_no = store.browse_responses({"tasks": ["yes_no"]}, COLS)
    assert yes_no and all(r["reefknot.hallucinated"] is not None for r in yes_no)
    assert store.browse_responses({"text": "IN THE CORNER"}, COLS, limit=1000).__len__() == 20


def test_browse_sorts_worst_first_and_pages(filled):
    store, _ = filled
    rows = store.browse_responses({}, COLS, sort="emd.total", descending=True, limit=5)
    values = [r["emd.total"] for r in rows]
    assert values == sorted(values, reverse=True) and len(rows) == 5
    page2 = store.browse_responses({}, COLS, sort="emd.total", descending=True, limit=5, offset=5)
    assert page2[0]["emd.total"] <= values[-1]
    ids = store.browse_response_ids({}, COLS, sort="emd.total", descending=True)
    assert ids[:5] == [r["id"] for r in rows]


def test_browse_annotated_and_disagreement_filters(filled):
    store, ids = filled
    target = ids[0]
    assert not store.browse_responses({"annotated": True}, COLS)
    annotation.rate(store, "ann", target, 3)
    assert [r["id"] for r in store.browse_responses({"annotated": True}, COLS)] == [target]
    assert target not in store.browse_response_ids({"annotated": False}, COLS)

    # a second judge that disagrees on the hallucination count
    base = store.get_scores(ids[1], "trihe")[0]
    values = dict(base.values, hallucinated=base.values["hallucinated"] + 1)
    store.put_scores([Score(ids[1], "trihe", "other-judge", values, base.evidence)])
    assert store.browse_response_ids({"disagreement": "judges"}, COLS) == [ids[1]]

    # a human correction that differs from the judge's verdict on triplet 1 ("object")
    annotation.correct_triplet(store, "ann", ids[2], 1, "supported", "it is there")
    assert store.browse_response_ids({"disagreement": "judge_human"}, COLS) == [ids[2]]
    # agreeing with the judge is not a disagreement
    annotation.correct_triplet(store, "bob", ids[3], 1, "object")
    assert ids[3] not in store.browse_response_ids({"disagreement": "judge_human"}, COLS)
    # an undone correction no longer counts
    annotation.undo_last(store, "ann")
    assert store.browse_response_ids({"disagreement": "judge_human"}, COLS) == []


def test_browse_refuses_unknown_columns_and_sorts(filled):
    store, _ = filled
    with pytest.raises(StoreError, match="metric column"):
        store.browse_responses({}, ["emd.total; DROP TABLE scores"])
    with pytest.raises(StoreError, match="cannot sort"):
        store.browse_responses({}, COLS, sort="id; --")
    with pytest.raises(StoreError, match="cannot filter"):
        store.browse_responses({"ranges": {"bleu.score": [0, 1]}}, COLS)


def test_facets_views_and_configs(filled):
    store, ids = filled
    facets = store.browse_facets()
    assert facets["models"] == ["probe-a", "probe-b"] and "yes_no" in facets["tasks"]
    f = filters_from_controls(["probe-a"], [], ["oil"], [], {"halfscore.f": [None, 0.9], "emd.total": [1, None]},
                              "no", "judges", " cat ", "halfscore.f", True)
    assert f["descending"] is False  # lower F is worse
    columns = [c.key for c in headline_columns()]  # a (min, max) pair per Browse column, in the registry's order
    bounds: list[float | None] = [None] * (2 * len(columns))
    bounds[2 * columns.index("emd.total")], bounds[2 * columns.index("halfscore.f") + 1] = 1.0, 0.9
    assert controls_from_filters(f) == [["probe-a"], [], ["oil"], [], *bounds, "no", "judges", "cat", "halfscore.f",
                                        True]
    assert filters_from_ui(controls_from_filters(f)) == f
    store.save_view("bad oil", f, "ann")
    assert store.get_view("bad oil") == f
    configs = store.score_configs()
    assert {c["metric"] for c in configs} >= {"emd", "trihe"} and configs[0]["config_key"] == SYNTHETIC_CONFIG_KEY
    sample = store.get_response(ids[0]).sample_id
    assert {r["model"] for r in store.responses_to_sample(sample)} == {"probe-a", "probe-b"}


def test_inspect_panels_for_one_response(filled):
    store, ids = filled
    yes_no = store.browse_response_ids({"tasks": ["yes_no"]}, COLS)[0]
    annotation.correct_triplet(store, "ann", yes_no, 0, "prediction_error", "hedged")
    p = inspect_response(store, yes_no)
    assert "[synthetic]" in p.header and "Is the dog on the table?" in p.header
    assert p.image.startswith("<img") and 'sandbox="allow-scripts"' in p.reference_graph
    assert "<mark" in p.response_text and "hs-heatmap" in p.drawings["transport_plan"]
    assert "hs-diff" in p.drawings["edit_diff"]
    # the claims drawing sets people's correction beside the judge's verdict; the logit lens is Reefknot's drawing
    assert "wrong (prediction error)" in p.evidence and "<svg" in p.evidence
    assert len(p.triplet_choices) == 2 and p.edit_choices
    with pytest.raises(KeyError, match="not in the store"):
        inspect_response(store, "resp-nope")


def test_inspect_steps_follow_the_list_and_enter_it_from_outside(filled):
    from hallu_studio.app import AppContext
    from hallu_studio.app.tabs import inspect as inspect_tab

    store, ids = filled
    ctx = AppContext(store=store)
    nav = {"ids": ids[:3], "index": 0}
    out = inspect_tab.step(ctx, nav, +1)
    assert out[0]["index"] == 1 and out[1] == ids[1]
    out = inspect_tab.step(ctx, {"ids": ids[:3], "index": 0}, -1)
    assert out[1] == ids[2]  # wraps around
    outside = inspect_tab.show(ctx, {"ids": ids[:3], "index": 0}, ids[10])
    assert outside[0]["index"] == -1 and "outside the filter" in outside[2]
    assert inspect_tab.step(ctx, outside[0], +1)[1] == ids[0]


def test_browse_pages_share_one_id_list(filled, monkeypatch):
    from hallu_studio.app import AppContext
    from hallu_studio.app.tabs import browse

    store, ids = filled
    monkeypatch.setattr(browse, "PAGE_SIZE", 8)
    f = browse.default_filters()
    first, all_ids, status = browse.query(AppContext(store=store), f, 1)
    third, same_ids, status3 = browse.query(AppContext(store=store), f, 3)
    assert all_ids == same_ids and len(all_ids) == 20
    assert list(first["id"]) == all_ids[:8] and list(third["id"]) == all_ids[16:]
    assert "showing 1–8 (page 1)" in status and "showing 17–20 (page 3)" in status3
