import pytest

from hallu_studio.cli import main
from hallu_studio.config import Settings, load_settings
from hallu_studio.store import Store


def test_defaults_then_file_then_environment(tmp_path):
    toml = tmp_path / "hs.toml"
    toml.write_text('[scoring]\nnli_threshold = 0.7\nembedding_model = "from-file"\n[llm]\nmodel = "m"\n')
    s = load_settings(toml, env={"HALLU_STUDIO_EMBEDDING_MODEL": "from-env"})
    assert s.scoring.nli_threshold == 0.7 and s.scoring.embedding_model == "from-env" and s.llm.model == "m"
    assert s.source == str(toml) and not s.llm.configured
    assert load_settings(env={"HALLU_STUDIO_CONFIG": str(tmp_path / "absent.toml")}).source is None


def test_unknown_settings_are_refused_with_their_name(tmp_path):
    toml = tmp_path / "hs.toml"
    toml.write_text("[scoring]\nnli_treshold = 0.7\n")
    with pytest.raises(ValueError, match="nli_treshold"):
        load_settings(toml)


def test_scores_under_other_settings_get_another_key():
    a, b = Settings(), Settings()
    b.scoring.trihe_support_threshold = 0.7
    assert a.scoring_key("trihe") != b.scoring_key("trihe")
    b.scoring.trihe_support_threshold, b.scoring.batch_size = 0.6, 7
    assert a.scoring_key("trihe") == b.scoring_key("trihe"), "batch size only splits work"


def test_the_cli_says_when_it_picked_up_a_settings_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HALLU_STUDIO_CONFIG", raising=False)
    (tmp_path / "hallu-studio.toml").write_text("[scoring]\nnli_threshold = 0.7\n")
    Store(tmp_path / "s.duckdb").close()
    assert main(["info", "--db", str(tmp_path / "s.duckdb")]) == 0
    assert "using settings from hallu-studio.toml" in capsys.readouterr().err
