"""The app's panels on evidence from the real metrics (probe runs scored offline), not hand-made."""

from __future__ import annotations

import pytest

from hallu_studio.app import AppContext
from hallu_studio.app.bootstrap import score_everything
from hallu_studio.app.inspection import inspect_response
from synthetic_store import fill_synthetic_store
from hallu_studio.app.tabs.settings import configs_html
from hallu_studio.config import Settings


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    from hallu_studio.pipelines.running import run_probe_suite
    from hallu_studio.store import Store

    store = Store(tmp_path_factory.mktemp("real") / "real.duckdb")
    fill_synthetic_store(store, n_samples=4, models=())  # samples and images only
    run_probe_suite(store, "synthetic-ui", rates=(0.0, 0.6))
    score_everything(store, Settings(), ("emd", "edit", "trihe", "halfscore", "reefknot"))
    yield store
    store.close()


def test_every_response_renders_from_real_evidence(scored):
    rendered = [inspect_response(scored, rid) for rid in scored.response_ids()]
    assert len(rendered) == 8
    captions = [p for p in rendered if "hs-heatmap" in p.drawings.get("transport_plan", "")]
    assert captions, "EMD heatmaps are drawn from the metric's own evidence"
    assert any("v-hallucinated" in p.response_text for p in rendered)  # the 0.6 probe injects hallucinations
    assert all("[synthetic]" in p.header for p in rendered)
    assert any("hs-diff" in p.drawings.get("edit_diff", "") for p in captions)
    # every scoring metric's rows, read by its spec from its real evidence
    for p in captions:
        assert {v.spec.name for v in p.metrics} >= {"emd", "edit", "trihe", "halfscore"}
        assert all(v.rows for v in p.metrics if v.spec.name in ("emd", "trihe", "halfscore"))
    assert any("hallucinated (" in p.evidence for p in captions)


def test_settings_marks_the_configurations_in_force(scored):
    html = configs_html(AppContext(store=scored))
    assert html.count("<td>yes</td>") >= 4 and "<td>no</td>" not in html
