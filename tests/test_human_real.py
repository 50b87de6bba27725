"""The four published human studies in ../shared/datasets/human, read as their READMEs describe them
(skipped when ../shared is not here)."""

from collections import Counter

import pytest

from conftest import shared_dataset
from hallu_studio.importers.human import read_human_judgements
from hallu_studio.pipelines.importing import import_human_study


def _study(name):
    return read_human_judgements(shared_dataset("human", name))


def _fatal(study):
    return [str(p) for p in study.problems + study.benchmark.problems + study.responses.problems if p.fatal]


def test_haelm_300_captions_108_accurate_on_100_images():
    study = _study("haelm")
    assert _fatal(study) == []
    assert len(study.responses.responses) == 300 and len(study.benchmark.samples) == 100
    assert Counter(e.value["label"] for e in study.events) == {"accurate": 108, "hallucinated": 192}
    assert {len(s.reference_text) for s in study.benchmark.samples} == {5}
    assert sorted(r.model for r in study.responses.runs) == ["haelm-lvlm-1", "haelm-lvlm-2", "haelm-lvlm-3"]


def test_mhaldetect_363_descriptions_313_with_spans_on_292_images():
    study = _study("mhaldetect")
    assert _fatal(study) == []
    assert len(study.responses.responses) == 363
    assert len({s.image_key for s in study.benchmark.samples}) == 292
    labels = Counter(e.value["label"] for e in study.events if e.kind == "label")
    assert labels == {"hallucinated": 313, "accurate": 50}
    # 1,120 spans over the 500 resampled rows; each description once: 759.
    assert sum(e.kind == "span_label" for e in study.events) == 759
    # Two images hold no COCO object at all: an empty list, complete within COCO-80, still settles absences.
    assert all(s.reference_vocabulary == "coco-80" and s.reference_objects is not None for s in study.benchmark.samples)
    assert sum(not s.reference_objects for s in study.benchmark.samples) == 2


def test_faithscore_180_answers_1380_facts_and_1_means_correct():
    study = _study("faithscore")
    assert _fatal(study) == []
    assert len(study.responses.responses) == 180 and len(study.benchmark.samples) == 90
    facts = [e for e in study.events if e.kind == "fact_label"]
    assert len(facts) == 1380
    assert Counter(e.meta["raw_label"] for e in facts) == {1: 1114, 0: 266}
    # The data, not its README, says what 1 means: "There is a <COCO object>." facts agree with the object sets.
    assert {e.value["label"] for e in facts if e.meta["raw_label"] == 1} == {"accurate"}
    direction = next(p for p in study.problems if not p.fatal)
    assert "stage-2 label 1 read as 'correct'" in str(direction)


def test_iiw400_100_rated_descriptions_of_400_images():
    study = _study("iiw400")
    assert _fatal(study) == []
    assert len(study.benchmark.samples) == 400 and len(study.responses.responses) == 100
    hallucination = Counter(e.value["score"] for e in study.events if e.value["aspect"] == "hallucination")
    assert hallucination == {-2: 46, -1: 33, 0: 17, 1: 4}
    assert sum(e.kind == "comparison" for e in study.events) == 500


def test_importing_a_set_twice_adds_nothing(store):
    study = _study("haelm")
    first = import_human_study(store, study)
    again = import_human_study(store, _study("haelm"))
    assert [r.added for r in first] == [100, 300, 300]
    assert [r.added for r in again] == [0, 0, 0]
    assert store.event_sources() == [{"source": "haelm", "events": 300, "responses": 300, "annotators": 1,
                                      "kinds": {"label": 300}}]


@pytest.mark.parametrize("name", ["haelm", "mhaldetect", "faithscore", "iiw400"])
def test_every_judgement_names_its_study(name):
    study = _study(name)
    assert {e.source for e in study.events} == {name}
    known = {r.id for r in study.responses.responses}
    assert all(e.response_id in known for e in study.events)
