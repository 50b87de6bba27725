"""Each metric's spec is its one identity, and its scores' config key depends on the settings its spec lists.

The key is the metric's own configuration plus the concept extractor's (``metrics.keys``): a setting a spec does
not list never moves that metric's key, and every setting a spec lists moves it under some settings.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import re
from pathlib import Path

import pytest

from hallu_studio.config import Settings
from hallu_studio.metrics.keys import CONCEPTS, current_config_keys
from hallu_studio.metrics.registry import (EXTRACTOR_SETTINGS, METRIC_NAMES, metric_class, metric_spec,
                                           metrics_depending_on)

ROOT = Path(__file__).resolve().parents[1]
LLM = {"llm.base_url": "http://127.0.0.1:9/v1", "llm.model": "m"}  # nothing listens there: no call is made

# Settings under which a setting can matter: the defaults, every LLM step, the NLI judge, the embedding judge.
BASES: dict[str, dict[str, object]] = {
    "defaults": {},
    "llm": {**LLM, "scoring.trihe_judge": "llm", "scoring.halfscore_matcher": "llm", "scoring.reviser": "llm",
            "scoring.extractor": "llm", "scoring.trihe_extraction": "llm-trihe"},
    "nli": {"scoring.trihe_judge": "nli", "scoring.nli_model": "some/nli-model",
            "scoring.halfscore_matcher": "embedding"},
    "embedding": {"scoring.trihe_judge": "embedding"},
    # an image judge for what the reference leaves open (nothing listens there: no call is made)
    "vlm": {"scoring.vlm_judge_model": "openai:judge-vl@http://127.0.0.1:9/v1"},
}
# Another value for each setting (the first that differs from the base's).
OTHER: dict[str, tuple[object, ...]] = {
    "scoring.embedding_model": ("other-encoder",),
    "scoring.nli_model": ("other/nli-model", None),
    "scoring.extractor": ("parser", "llm"),
    "scoring.reviser": ("rule",),
    "scoring.trihe_judge": ("graph", "embedding"),
    "scoring.trihe_extraction": ("parser",),
    "scoring.unverifiable": ("ignore",),
    "scoring.unverifiable_weight": (0.5,),
    "scoring.graph_grounding_threshold": (0.7,),
    "scoring.trihe_reference_threshold": (0.4,),
    "scoring.trihe_support_threshold": (0.7,),
    "scoring.trihe_top_k": (5,),
    "scoring.nli_threshold": (0.7,),
    "scoring.halfscore_matcher": ("graph", "embedding"),
    "scoring.halfscore_match_threshold": (0.8,),
    "scoring.emd_empty_side": ("undefined",),
    "scoring.emd_ground_cost": ("cosine",),
    "scoring.pope_reading": ("released",),
    "scoring.accuracy_reading": ("studio", "vlmevalkit"),
    "scoring.reefknot_reading": ("released",),
    "scoring.chair_reading": ("released",),
    "scoring.chair_vocabulary": ("coco-80",),
    "scoring.amber_similarity": ("en_core_web_lg",),
    "scoring.amber_tagger": ("spacy",),
    "scoring.chair_ground_truth": ("objects",),
    "scoring.batch_size": (7,),
    "scoring.workers": (2,),
    "scoring.vlm_judge_model": ("openai:other-vl@http://127.0.0.1:9/v1",),
    "scoring.vlm_judge_template": ("tri-he",),
    "scoring.vlm_judge_unsettled": ("reference",),
    "scoring.vlm_judge_concurrency": (2,),
    "decoding.dtc_alpha": (0.2,),
    "decoding.dtc_lambda": (3,),
    "decoding.dtc_gamma": (0.8,),
    "decoding.entropy_reading": ("released",),
    "llm.model": ("other-model",),
    "llm.base_url": ("http://127.0.0.1:10/v1", ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]),
    "llm.api_key_env": ("OTHER_KEY",),
    "llm.timeout_s": (5.0,),
    "llm.timeout_per_token_s": (0.1,),
    "llm.expected_output_tokens": (64,),
    "llm.max_retries": (1,),
    "llm.concurrency": (2,),
    "llm.temperature": (0.7,),  # in the LLM cache's key, in no score's (as before): see docs/studies.md
    "db": ("/tmp/other.duckdb",),
}


def _set(settings: Settings, name: str, value: object) -> None:
    section, _, key = name.rpartition(".")
    setattr(getattr(settings, section) if section else settings, key, value)


def _get(settings: Settings, name: str) -> object:
    section, _, key = name.rpartition(".")
    return getattr(getattr(settings, section) if section else settings, key)


def _settings(base: str) -> Settings:
    s = Settings()
    for name, value in BASES[base].items():
        _set(s, name, value)
    return s


def _perturbed(base: str, name: str) -> Settings | None:
    s = _settings(base)
    value = next((v for v in OTHER[name] if v != _get(s, name)), None)
    if value is None:
        return None
    changed = copy.deepcopy(s)
    _set(changed, name, value)
    return changed


def test_every_setting_has_another_value_to_try():
    every = {f"{section}.{f.name}" if section else f.name for section, cls in
             (("llm", type(Settings().llm)), ("scoring", type(Settings().scoring)),
              ("decoding", type(Settings().decoding)), ("", Settings)) for f in dataclasses.fields(cls)
             if "help" in f.metadata}
    assert every == set(OTHER)


@pytest.mark.parametrize("base", sorted(BASES))
def test_a_setting_a_spec_does_not_list_never_moves_that_metrics_key(base):
    before = current_config_keys(_settings(base))
    assert not before.problems, before.problems
    for name in OTHER:
        changed = _perturbed(base, name)
        if changed is None:
            continue
        after = current_config_keys(changed)
        for metric in METRIC_NAMES:
            if name in metric_spec(metric).settings or name in EXTRACTOR_SETTINGS or metric in after.problems:
                continue
            assert after.get(metric) == before.get(metric), f"{name} moves {metric}'s key but its spec does not list it"
        if name not in EXTRACTOR_SETTINGS:
            assert after.get(CONCEPTS) == before.get(CONCEPTS), f"{name} moves the concepts' key"


def test_every_setting_a_spec_lists_moves_that_metrics_key_under_some_settings():
    for metric in METRIC_NAMES:
        for name in metric_spec(metric).settings:
            moved = []
            for base in BASES:
                changed = _perturbed(base, name)
                if changed is not None:
                    moved.append(current_config_keys(changed).get(metric) != current_config_keys(_settings(base)).get(metric))
            assert any(moved), f"{metric}'s spec lists {name}, which never changes its key"


def test_one_metrics_setting_keys_that_metric_alone():
    base = current_config_keys(Settings())
    changed = Settings()
    changed.scoring.emd_ground_cost = "cosine"
    after = current_config_keys(changed)
    assert [m for m in METRIC_NAMES if after.get(m) != base.get(m)] == ["emd"]
    assert metrics_depending_on("scoring.emd_ground_cost") == ["emd"]


def test_batch_size_workers_and_the_llm_s_address_are_in_no_key():
    one, other = Settings(), Settings()
    for s, url in ((one, "http://127.0.0.1:9/v1"), (other, ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"])):
        s.llm.base_url, s.llm.model, s.scoring.trihe_judge = url, "m", "llm"
    other.scoring.batch_size, other.scoring.workers = 3, 4
    assert current_config_keys(one).keys == current_config_keys(other).keys


def test_each_metric_class_carries_its_spec_and_the_spec_names_the_class():
    for name in METRIC_NAMES:
        cls = metric_class(name)
        assert cls.spec is metric_spec(name) and cls.name == cls.spec.name == name
        spec = cls.spec
        assert spec.display_name and spec.tasks and spec.headline.unit and spec.headline.meaning
        for setting in spec.settings:
            assert setting in OTHER, f"{name} lists {setting}, which is not a setting"


# Where a metric's direction, unit and display name may be written: its own module's spec, nowhere else.
_DIRECTION = re.compile(r"\b(?:lower_is_better|higher_is_worse)\s*[=:]\s*(?:True|False)\b")
_OWN = {"emd", "evaluate_by_edit", "trihe", "halfscore", "reefknot", "chair", "pope", "answer_accuracy", "mme",
        "hallusionbench", "amber", "spec"}
# A metric whose display name is its toolkit's name, defined where that toolkit's files are read (a layer below the
# metrics, which import it from there): module -> the metric whose names it may hold.
_NAME_FROM_IMPORTER = {"importers/amber.py": "amber"}


def _identity_strings() -> dict[str, str]:
    """Each metric's display name, family, headline name and unit, and Browse column's name: string -> metric."""
    out = {}
    for name in METRIC_NAMES:
        spec = metric_spec(name)
        texts = [spec.display_name, spec.family, spec.headline.name, spec.headline.unit]
        texts += [spec.item.name] if spec.item is not None else []
        out.update({t: name for t in texts if len(t) >= 3})  # "F", "%": too short to tell a restatement
    return out


def test_grepping_the_package_finds_each_metrics_direction_unit_and_name_in_one_place():
    package = ROOT / "hallu_studio"
    identity = _identity_strings()
    offenders = []
    for path in package.rglob("*.py"):
        rel = path.relative_to(package).as_posix()
        if rel.startswith("metrics/") and rel[len("metrics/"):-3] in _OWN:
            continue
        text = path.read_text(encoding="utf-8")
        if _DIRECTION.search(text):
            offenders.append(f"{rel}: a direction")
        for node in ast.walk(ast.parse(text)):  # a string literal that is exactly a metric's name or unit
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in identity \
                    and _NAME_FROM_IMPORTER.get(rel) != identity[node.value]:
                offenders.append(f"{rel}:{node.lineno}: {node.value!r} ({identity[node.value]}'s spec)")
    assert not offenders, offenders


def test_the_docs_table_of_metrics_is_the_specs():
    import importlib.util

    loader = importlib.util.spec_from_file_location("metric_tables", ROOT / "scripts" / "metric_tables.py")
    tables = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(tables)  # type: ignore[union-attr]
    text = tables.DOC.read_text(encoding="utf-8")
    assert tables.with_table(text, tables.specs_markdown()) == text, "run python scripts/metric_tables.py --write"
