import pytest

from hallu_studio.cli import main
from hallu_studio.config import Settings, load_settings


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
    assert main(["info", "--db", str(tmp_path / "s.duckdb")]) == 0
    assert "using settings from hallu-studio.toml" in capsys.readouterr().err


def test_write_settings_changes_only_the_named_keys_and_keeps_comments(tmp_path):
    from hallu_studio.config import load_settings, write_settings

    path = tmp_path / "hallu-studio.toml"
    path.write_text('# my settings\ndb = "mine.duckdb"\n\n[scoring]\n# keep this comment\nextractor = "parser"\n'
                    'nli_model = "old-nli"\n\n[decoding]\ndtc_alpha = 0.2\n', encoding="utf-8")
    write_settings(path, {"scoring": {"trihe_judge": "nli", "nli_model": None, "trihe_top_k": 5},
                          "llm": {"base_url": "http://localhost:8000/v1", "model": "qwen"}})
    text = path.read_text(encoding="utf-8")
    assert "# my settings" in text and "# keep this comment" in text and "dtc_alpha = 0.2" in text
    s = load_settings(path, env={})
    assert (s.db, s.scoring.trihe_judge, s.scoring.nli_model, s.scoring.trihe_top_k) == ("mine.duckdb", "nli", None, 5)
    assert (s.llm.base_url, s.llm.model, s.decoding.dtc_alpha) == ("http://localhost:8000/v1", "qwen", 0.2)
    with pytest.raises(ValueError, match="unknown setting"):
        write_settings(path, {"scoring": {"trihe_jugde": "nli"}})


def test_settings_problems_name_each_bad_value():
    from hallu_studio.config import Settings, settings_problems

    s = Settings()
    assert settings_problems(s) == []
    s.scoring.reviser, s.scoring.trihe_top_k, s.scoring.extractor = "magic", 0, "llm"
    problems = settings_problems(s)
    assert any("scoring.reviser" in p for p in problems) and any("trihe_top_k" in p for p in problems)
    assert any("needs the LLM endpoint" in p for p in problems)


def test_halfscore_matcher_choice_keeps_the_other_metrics_keys():
    from hallu_studio.config import Settings

    a, b = Settings(), Settings()
    b.scoring.halfscore_matcher = "llm"  # HalFscore's own config names the matcher
    assert a.scoring_key("emd") == b.scoring_key("emd")
