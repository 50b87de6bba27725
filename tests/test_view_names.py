"""Saved-view names: checked when saved (Browse) and when read from a ``?view=`` link."""

from __future__ import annotations

import pytest

from hallu_studio.app import AppContext
from synthetic_store import fill_synthetic_store
from hallu_studio.app.tabs import browse
from hallu_studio.app.view_names import MAX_VIEW_NAME, check_view_name
from hallu_studio.model import ValidationError

HOSTILE = ["![x](http://evil.example/a.png)", '<img src="http://evil.example/b.png">', "a\nb",
           "x" * (MAX_VIEW_NAME + 1), "worst*", "`code`", "[link](x)", "a/b"]


@pytest.mark.parametrize("name", ["worst-sketch", "worst sketch (EMD), v2.1", "schlechteste_Skizze", "最差",
                                  "x" * MAX_VIEW_NAME])
def test_good_names_pass(name):
    assert check_view_name(f"  {name} ") == name


@pytest.mark.parametrize("name", HOSTILE + ["", "   ", None])
def test_bad_names_get_a_clear_reason(name):
    with pytest.raises(ValidationError, match="name"):
        check_view_name(name)


def test_a_link_with_a_bad_name_shows_everything_and_says_why(store):
    fill_synthetic_store(store, n_samples=2)
    ctx = AppContext(store=store)
    everything = browse.load_view_or_default(ctx, None)
    for name in HOSTILE:
        values = browse.load_view_or_default(ctx, name)
        status = values[-1]
        assert status.startswith("the link's view name was refused"), status
        assert "evil.example/" not in status and "<img" not in status and "](" not in status
        assert values[-3] == everything[-3]  # the same rows as no view at all
    store.save_view("worst-sketch", {"domains": ["sketch"]}, "test")
    assert browse.load_view_or_default(ctx, "worst-sketch")[-1].startswith("view **worst\\-sketch**")
