import pytest

from hallu_studio.cli import main
from hallu_studio.components import Components
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
    from hallu_studio.metrics.keys import current_config_keys

    a, b = Settings(), Settings()
    a.scoring.trihe_judge = b.scoring.trihe_judge = "embedding"  # the judge that reads the support threshold
    b.scoring.trihe_support_threshold = 0.7
    assert current_config_keys(a).get("trihe") != current_config_keys(b).get("trihe")
    b.scoring.trihe_support_threshold, b.scoring.batch_size = 0.6, 7
    assert current_config_keys(a).keys == current_config_keys(b).keys, "batch size only splits work"


def test_the_cli_says_when_it_picked_up_a_settings_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HALLU_STUDIO_CONFIG", raising=False)
    (tmp_path / "hallu-studio.toml").write_text("[scoring]\nnli_threshold = 0.7\n")
    Store(tmp_path / "s.duckdb").close()
    assert main(["info", "--db", str(tmp_path / "s.duckdb")]) == 0
    assert "using settings from hallu-studio.toml" in capsys.readouterr().err


# ---------------------------------------------------------------- every documented choice, validated

import dataclasses  # noqa: E402
import doctest  # noqa: E402
from pathlib import Path  # noqa: E402

import hallu_studio.config as config_module  # noqa: E402
from hallu_studio.config_edit import describe_settings, write_settings  # noqa: E402
from hallu_studio.metrics.registry import metrics_depending_on  # noqa: E402

CHOICES = {  # setting -> (environment variable, a non-default allowed value)
    "trihe_judge": ("HALLU_STUDIO_TRIHE_JUDGE", "embedding"),
    "trihe_extraction": ("HALLU_STUDIO_TRIHE_EXTRACTION", "llm-trihe"),
    "unverifiable": ("HALLU_STUDIO_UNVERIFIABLE", "ignore"),
    "halfscore_matcher": ("HALLU_STUDIO_HALFSCORE_MATCHER", "llm"),
    "emd_empty_side": ("HALLU_STUDIO_EMD_EMPTY_SIDE", "undefined"),
    "emd_ground_cost": ("HALLU_STUDIO_EMD_GROUND_COST", "cosine"),
    "extractor": ("HALLU_STUDIO_EXTRACTOR", "llm"),
    "reviser": ("HALLU_STUDIO_REVISER", "llm"),
}


def test_config_doctests():
    assert doctest.testmod(config_module).failed == 0


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_each_choice_reaches_settings_from_the_file_and_the_environment(tmp_path, name):
    var, value = CHOICES[name]
    toml = tmp_path / "hs.toml"
    toml.write_text(f'[scoring]\n{name} = "{value}"\n')
    assert getattr(load_settings(toml, env={}).scoring, name) == value
    assert getattr(load_settings(tmp_path / "hs.toml", env={var: value}).scoring, name) == value
    assert getattr(load_settings(env={"HALLU_STUDIO_CONFIG": str(tmp_path / "absent.toml"), var: value}).scoring,
                   name) == value
    assert metrics_depending_on(f"scoring.{name}"), f"{name} must enter some metric's config key"


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_a_bad_choice_is_refused_naming_setting_file_and_allowed_values(tmp_path, name):
    var, _ = CHOICES[name]
    toml = tmp_path / "hs.toml"
    toml.write_text(f'[scoring]\n{name} = "bogus"\n')
    allowed = [f.metadata["choices"] for f in dataclasses.fields(config_module.ScoringSettings) if f.name == name][0]
    with pytest.raises(ValueError) as raised:
        load_settings(toml, env={})
    message = str(raised.value)
    assert str(toml) in message and f"scoring.{name} = 'bogus'" in message
    assert all(choice in message for choice in allowed)
    with pytest.raises(ValueError, match=f"environment variable {var}: scoring.{name} = 'bogus'"):
        load_settings(env={"HALLU_STUDIO_CONFIG": str(tmp_path / "absent.toml"), var: "bogus"})


def test_values_of_the_wrong_type_are_refused(tmp_path):
    toml = tmp_path / "hs.toml"
    toml.write_text('[scoring]\ntrihe_top_k = "three"\n')
    with pytest.raises(ValueError, match=r"hs.toml: scoring.trihe_top_k must be an integer, got 'three'"):
        load_settings(toml, env={})
    toml.write_text("[llm]\ntimeout_s = 30\n")  # an integer where a number is wanted is fine
    assert load_settings(toml, env={}).llm.timeout_s == 30.0
    toml.write_text("[scoring]\nnli_threshold = true\n")
    with pytest.raises(ValueError, match="scoring.nli_threshold must be a number"):
        load_settings(toml, env={})
    toml.write_text("[scoring\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_settings(toml, env={})


def test_describe_settings_says_value_allowed_values_and_where_each_came_from(tmp_path):
    toml = tmp_path / "hs.toml"
    toml.write_text('[scoring]\nhalfscore_matcher = "llm"\ntrihe_judge = "nli"\n')
    rows = {r.name: r for r in describe_settings(toml, env={"HALLU_STUDIO_TRIHE_JUDGE": "graph"})}
    every_field = {f"{section}.{f.name}" for section in ("llm", "scoring", "decoding")
                   for f in dataclasses.fields(getattr(Settings(), section))} | {"db"}
    assert set(rows) == every_field
    judge, matcher, side = rows["scoring.trihe_judge"], rows["scoring.halfscore_matcher"], rows["scoring.emd_empty_side"]
    assert (judge.value, judge.source, judge.origin) == ("graph", "env", "HALLU_STUDIO_TRIHE_JUDGE")
    assert (matcher.value, matcher.source, matcher.origin) == ("llm", "file", str(toml))
    assert (side.value, side.source, side.default, side.choices) == ("unit_cost", "default", "unit_cost",
                                                                      ("undefined", "unit_cost"))
    assert "HALLU_STUDIO_EMD_EMPTY_SIDE" in side.env_vars and side.help
    assert rows["scoring.nli_model"].optional and rows["scoring.trihe_top_k"].kind == "integer"
    assert all(r.help for r in rows.values())
    assert rows["scoring.trihe_judge"].to_dict()["choices"] == ("graph", "embedding", "nli", "llm", "vlm")


def test_write_settings_validates_then_edits_the_file_keeping_the_rest(tmp_path):
    toml = tmp_path / "hs.toml"
    original = '# my settings\n[llm]\nmodel = "m"  # the served name\n\n[scoring]\nnli_threshold = 0.7\n'
    toml.write_text(original)
    settings = write_settings(toml, {"scoring.trihe_judge": "graph", "scoring.trihe_top_k": "5",
                                     "scoring.emd_empty_side": "undefined", "db": "/tmp/x.duckdb"}, env={})
    text = toml.read_text()
    assert "# my settings" in text and 'model = "m"  # the served name' in text and "nli_threshold = 0.7" in text
    assert settings.scoring.trihe_judge == "graph" and settings.scoring.trihe_top_k == 5
    assert settings.db == "/tmp/x.duckdb" and settings.scoring.emd_empty_side == "undefined"
    assert load_settings(toml, env={}).to_dict() == settings.to_dict()
    before = toml.read_text()
    with pytest.raises(ValueError, match="scoring.halfscore_matcher = 'bogus' is not allowed; choose graph"):
        write_settings(toml, {"scoring.trihe_judge": "llm", "scoring.halfscore_matcher": "bogus"}, env={})
    with pytest.raises(ValueError, match="unknown setting 'scoring.judge'"):
        write_settings(toml, {"scoring.judge": "llm"}, env={})
    with pytest.raises(ValueError, match="scoring.trihe_top_k must be an integer"):
        write_settings(toml, {"scoring.trihe_top_k": "many"}, env={})
    assert toml.read_text() == before, "a refused change writes nothing"
    assert write_settings(toml, {"llm.model": None}, env={}).llm.model is None  # unset: the key leaves the file
    assert "model" not in toml.read_text().split("[scoring]")[0]
    assert [p.name for p in tmp_path.iterdir()] == ["hs.toml"], "no temporary file left behind"


def test_write_settings_creates_a_file_and_the_environment_still_wins(tmp_path):
    toml = tmp_path / "new" / "hallu-studio.toml"
    got = write_settings(toml, {"scoring.halfscore_matcher": "llm"}, env={"HALLU_STUDIO_HALFSCORE_MATCHER": "graph"})
    assert got.scoring.halfscore_matcher == "graph"
    assert load_settings(toml, env={}).scoring.halfscore_matcher == "llm"


def test_the_docs_name_every_setting_and_environment_variable():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "guide" / "settings.md").read_text()
    for info in describe_settings(env={"HALLU_STUDIO_CONFIG": "/nonexistent/hs.toml"}):
        assert f"`{info.name.rpartition('.')[2]}`" in doc, info.name
        for var in info.env_vars:
            assert var in doc, var
        for choice in info.choices or ():
            assert f"`{choice}`" in doc, (info.name, choice)


# ---------------------------------------------------------------- the settings reach the metrics


class _FixedExtractor:
    name = "fixed"

    def __init__(self, concepts):
        self.concepts, self.texts = concepts, []

    def config(self):
        return {"extractor": self.name}

    def extract(self, texts):
        self.texts += list(texts)
        return [self.concepts for _ in texts]


def test_emd_and_halfscore_are_built_as_the_settings_say():
    from hallu_studio.metrics.halfscore import HalFscoreMetric, LLMConceptMatcher
    from hallu_studio.metrics.registry import make_metrics

    settings = Settings()
    settings.scoring.emd_empty_side = "undefined"
    settings.scoring.emd_ground_cost = "cosine"
    [emd] = make_metrics("emd", settings, extractor=_FixedExtractor(None))
    assert emd.empty_side == "undefined" and emd.config()["empty_side"] == "undefined"
    assert emd.ground_cost == "cosine" and "ground_cost" not in emd.config()  # VISCON's config key, as before
    settings.scoring.halfscore_matcher = "llm"
    client = type("Client", (), {"name": "fake-llm"})()
    given = Components(settings, llm_client=client, encoder=object())
    assert isinstance(HalFscoreMetric.from_settings(settings, components=given).matcher, LLMConceptMatcher)
    assert HalFscoreMetric.from_settings(settings, matcher="embedding", components=given).matcher.name != "llm"


def test_trihe_extraction_picks_tri_he_own_triplet_prompt_or_the_parser():
    from hallu_studio.extraction.llm import LLMExtractor
    from hallu_studio.metrics.trihe import TriHEMetric

    settings = Settings()
    assert Components(settings).trihe_extractor() is None, "parser + parser: the pipeline's concepts serve"
    settings.scoring.extractor = "llm"
    assert Components(settings).trihe_extractor().name == "parser"
    settings.scoring.trihe_extraction = "llm-trihe"
    with pytest.raises(ValueError, match="trihe_extraction = llm-trihe needs an LLM"):
        TriHEMetric.from_settings(settings)
    settings.llm.base_url, settings.llm.model = "http://127.0.0.1:9/v1", "m"
    own = TriHEMetric.from_settings(settings).extractor
    assert isinstance(own, LLMExtractor) and own.config()["style"] == "trihe"


def test_trihe_judges_its_own_extraction_when_it_has_one():
    from hallu_studio.judges.base import TripletJudgement
    from hallu_studio.metrics.base import ScoringItem
    from hallu_studio.metrics.trihe import TriHEMetric
    from hallu_studio.model import ConceptSet, RelationConcept, Sample, SceneGraph

    class Judge:
        name = "recording"

        def config(self):
            return {"judge": self.name}

        def judge(self, triplets, reference):
            return [TripletJudgement(t, "supported", 1.0, "") for t in triplets]

    own = ConceptSet(relations=[RelationConcept("dog", "on", "sofa")])
    pipeline = ConceptSet(relations=[RelationConcept("cat", "on", "mat"), RelationConcept("cat", "near", "dog")])
    sample = Sample(id="s", benchmark="b", task="caption", image_key="i",
                    scene_graph=SceneGraph.from_dict({"objects": [{"name": "dog"}, {"name": "sofa"}]}))
    item = ScoringItem("r", "A dog on a sofa.", sample, pipeline)
    extractor = _FixedExtractor(own)
    metric = TriHEMetric(Judge(), extractor)
    [many] = metric.update_many([item])
    one = metric.update(item)
    assert many.stats["n_triplets"] == one.stats["n_triplets"] == 1.0
    assert many.evidence["triplets"][0]["triplet"] == ["dog", "on", "sofa"]
    assert extractor.texts == ["A dog on a sofa.", "A dog on a sofa."]
    assert metric.config()["claims_extractor"] == {"extractor": "fixed"}
    assert TriHEMetric(Judge()).update(item).stats["n_triplets"] == 2.0, "no own extractor: the pipeline's concepts"


def test_write_settings_changes_only_the_named_keys_and_keeps_comments(tmp_path):
    from hallu_studio.config import load_settings
    from hallu_studio.config_edit import write_settings

    path = tmp_path / "hallu-studio.toml"
    path.write_text('# my settings\ndb = "mine.duckdb"\n\n[scoring]\n# keep this comment\nextractor = "parser"\n'
                    'nli_model = "old-nli"\n\n[decoding]\ndtc_alpha = 0.2\n', encoding="utf-8")
    write_settings(path, {"scoring.trihe_judge": "nli", "scoring.nli_model": None, "scoring.trihe_top_k": 5,
                          "llm.base_url": "http://localhost:8000/v1", "llm.model": "qwen"}, env={})
    text = path.read_text(encoding="utf-8")
    assert "# my settings" in text and "# keep this comment" in text and "dtc_alpha = 0.2" in text
    s = load_settings(path, env={})
    assert (s.db, s.scoring.trihe_judge, s.scoring.nli_model, s.scoring.trihe_top_k) == ("mine.duckdb", "nli", None, 5)
    assert (s.llm.base_url, s.llm.model, s.decoding.dtc_alpha) == ("http://localhost:8000/v1", "qwen", 0.2)
    with pytest.raises(ValueError, match="unknown setting"):
        write_settings(path, {"scoring.trihe_jugde": "nli"}, env={})


def test_settings_problems_name_each_bad_value():
    from hallu_studio.config import Settings
    from hallu_studio.config_edit import settings_problems

    s = Settings()
    assert settings_problems(s) == []
    s.scoring.reviser, s.scoring.trihe_top_k, s.scoring.extractor = "magic", 0, "llm"
    problems = settings_problems(s)
    assert any("scoring.reviser" in p for p in problems) and any("trihe_top_k" in p for p in problems)
    assert any("needs the LLM endpoint" in p for p in problems)
