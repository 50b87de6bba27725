"""The views' logic without a browser: Settings saving, Browse's cells and order, Study's tables."""

from __future__ import annotations

import pytest

from hallu_studio.app import AppContext
from hallu_studio.app.synthetic_store import fill_synthetic_store
from hallu_studio.config import load_settings


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
    keys = [key for _, key, _ in view.EDITABLE]
    before = ctx.settings.scoring_key()

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
    message = view.save(ctx, good)
    assert "saved to" in message and "apart" in message
    assert ctx.settings.scoring.trihe_support_threshold == 0.65 and ctx.settings.llm.model == "tiny"
    assert ctx.settings.scoring_key() != before  # new scores land under a new key, the old ones stay apart
    text = path.read_text(encoding="utf-8")
    assert "# kept" in text and "dtc_alpha = 0.3" in text
    assert load_settings(path, env={}).scoring.trihe_support_threshold == 0.65
