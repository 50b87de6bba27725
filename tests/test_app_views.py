"""The views' logic without a browser: Settings saving, Browse's cells and order, Study's tables."""

from __future__ import annotations

import pytest

from hallu_studio.app import AppContext
from synthetic_store import fill_synthetic_store
from hallu_studio.config import load_settings
from hallu_studio.metrics.keys import current_config_keys


@pytest.fixture
def ctx(store):
    fill_synthetic_store(store, n_samples=4)
    return AppContext(store=store)


def test_settings_save_validates_writes_the_file_and_adopts_the_settings(ctx, tmp_path, monkeypatch):
    from hallu_studio.app.tabs import settings as view
    from hallu_studio.app.toasts import Mistake

    path = tmp_path / "hallu-studio.toml"
    path.write_text("# kept\n[decoding]\ndtc_alpha = 0.3\n", encoding="utf-8")
    monkeypatch.setenv("HALLU_STUDIO_CONFIG", str(path))
    for var in ("HALLU_STUDIO_TRIHE_JUDGE", "HALLU_STUDIO_EXTRACTOR", "OPENAI_BASE_URL", "HALLU_STUDIO_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    values = view.form_values(ctx.settings)
    keys = [name.rpartition(".")[2] for name in view.EDITABLE]
    before = current_config_keys(ctx.settings)

    bad = list(values)
    bad[keys.index("nli_threshold")] = 2.0
    with pytest.raises(Mistake, match="nli_threshold must be between 0 and 1"):
        view.save(ctx, bad)
    bad = list(values)
    bad[keys.index("trihe_judge")] = "nli"  # without an NLI model: refused before anything is written
    with pytest.raises(Mistake, match="needs scoring.nli_model"):
        view.save(ctx, bad)
    assert "trihe" not in path.read_text(encoding="utf-8")

    good = list(values)
    good[keys.index("trihe_support_threshold")] = 0.65
    good[keys.index("base_url")] = "http://127.0.0.1:9/v1"
    good[keys.index("model")] = "tiny"
    good[keys.index("emd_ground_cost")] = "cosine"  # VISCON's cost, as published
    message = view.save(ctx, good)
    # the embedding judge's threshold keys nothing under the graph judge; VISCON's cost keys EMD alone
    assert "saved to" in message and "The scores of EMD now carry a new configuration" in message
    assert ctx.settings.scoring.trihe_support_threshold == 0.65 and ctx.settings.llm.model == "tiny"
    after = current_config_keys(ctx.settings)
    assert [m for m in after.keys if after.get(m) != before.get(m)] == ["emd"]
    text = path.read_text(encoding="utf-8")
    assert "# kept" in text and "dtc_alpha = 0.3" in text
    assert load_settings(path, env={}).scoring.trihe_support_threshold == 0.65
    assert load_settings(path, env={}).scoring.emd_ground_cost == "cosine"


def test_browse_rounds_numbers_orders_by_hallucinated_claims_and_explains_empty_cells(ctx):
    from hallu_studio.app.tabs import browse
    from hallu_studio.model import Score

    store = ctx.store
    f = browse.default_filters()
    assert f["sort"] == "trihe.hallucinated" and f["descending"] is True
    frame, ids, status = browse.query(ctx, f)
    counts = [r["trihe.hallucinated"] for r in store.browse_responses({}, ["trihe.hallucinated"],
                                                                      sort="trihe.hallucinated", limit=1000)]
    assert counts == sorted(counts, key=lambda v: (v is None, -(v or 0)))
    assert "sorted by Tri-HE hallucinated claims ↓ (claims)" in status
    # one response: an exact EMD with many digits, a CHAIR value left undefined
    rid = ids[0]
    config = store.get_scores(rid, "emd")[0].config_key
    store.put_scores([Score(rid, "emd", config, {"total": 96.39007275803542}, {}),
                      Score(rid, "chair", config, {"chair_i_item": None}, {}, "no object of the vocabulary")])
    frame, ids, _ = browse.query(ctx, browse.filters_from_controls([], [], [], [], {}, "any", "any", "", "emd.total",
                                                                   True))
    row = frame[frame["id"] == rid].iloc[0]
    assert ">96.4<" in row["VISCON EMD ↓ (×100)"] and 'title="96.39007275803542"' in row["VISCON EMD ↓ (×100)"]
    assert "undefined: no object of the vocabulary" in row["CHAIR CHAIRi ↓ (% of objects)"]
    others = frame[frame["id"] != rid]["CHAIR CHAIRi ↓ (% of objects)"]
    assert all("not scored yet" in cell or "not applicable" in cell for cell in others)


def test_browse_takes_several_metric_ranges_at_once(ctx):
    from hallu_studio.app.columns import headline_columns
    from hallu_studio.app.tabs import browse
    from hallu_studio.app.toasts import Mistake

    bounds = [None] * (2 * len(headline_columns()))  # a (min, max) pair per Browse column
    bounds[2], bounds[1] = 0.0, 1.0  # EMD >= 0 and Tri-HE hallucinated claims <= 1 (Tri-HE's column comes first)
    values = [[], [], [], [], *bounds, "any", "any", "", "emd.total", True]
    f = browse.filters_from_ui(values)
    assert f["ranges"] == {"emd.total": [0.0, None], "trihe.hallucinated": [None, 1.0]}
    _, ids, _ = browse.query(ctx, f)
    rows = ctx.store.browse_responses({}, ["emd.total", "trihe.hallucinated"], limit=1000)
    expected = {r["id"] for r in rows if r["emd.total"] is not None and r["emd.total"] >= 0
                and r["trihe.hallucinated"] is not None and r["trihe.hallucinated"] <= 1}
    assert set(ids) == expected and 0 < len(expected) < len(rows)
    with pytest.raises(Mistake, match="minimum 3 is above the maximum 1"):
        browse.filters_from_controls([], [], [], [], {"emd.total": [3, 1]}, "any", "any", "", None, True)
