"""References as real benchmarks have them: several captions, an object list complete within a vocabulary;
and where a human judgement comes from. Stored, exported and read back without loss."""

from __future__ import annotations

import json

import pytest

from hallu_studio.model import APP_SOURCE, Benchmark, ConceptSet, HumanEvent, Response, Run, Sample, ValidationError
from hallu_studio.pipelines.exporting import export_table
from hallu_studio.store import Store
from hallu_studio.importers.jsonl import read_jsonl_judgments, read_jsonl_samples
from hallu_studio.metrics.reference_concepts import reference_concepts_many, reference_source
from hallu_studio.extraction.parser import ParserExtractor


def _coco_sample(i: int = 1) -> Sample:
    return Sample(id=f"coco/{i}", benchmark="coco", image_key=str(i),
                  reference_text=["A man rides a moped on a dirt road.", "  ", "Two dogs sleep on a sofa."],
                  reference_objects=["person", "motorcycle", "dog"], reference_vocabulary="coco-80")


def test_reference_fields_are_checked():
    s = _coco_sample()
    assert s.reference_text == ["A man rides a moped on a dirt road.", "Two dogs sleep on a sofa."]
    assert s.reference_captions == s.reference_text
    assert Sample(id="x/1", benchmark="x", image_key="1", reference_text="One caption.").reference_captions == [
        "One caption."]
    with pytest.raises(ValidationError, match="x/2.*reference_vocabulary.*unknown object vocabulary 'coco-81'"):
        Sample(id="x/2", benchmark="x", image_key="2", reference_objects=["dog"], reference_vocabulary="coco-81")
    with pytest.raises(ValidationError, match="x/3.*there is no reference_objects"):
        Sample(id="x/3", benchmark="x", image_key="3", reference_vocabulary="coco-80")
    with pytest.raises(ValidationError, match="x/4.*list of strings"):
        Sample(id="x/4", benchmark="x", image_key="4", reference_text=["fine", 3])  # type: ignore[list-item]


def test_references_and_event_provenance_survive_store_and_export(tmp_path):
    samples = [_coco_sample(1), Sample(id="coco/2", benchmark="coco", image_key="2", reference_text="Only one.",
                                       reference_objects=["cat"], reference_vocabulary=["cat", "dog"])]
    run = Run(id="run-1", benchmark="coco", model="m", backend="recorded")
    with Store(tmp_path / "s.duckdb") as st:
        st.add_samples(Benchmark("coco"), samples)
        st.add_run(run)
        st.add_responses([Response("run-1", "coco/1", "A man on a motorbike.")])
        rid = Response.make_id("run-1", "coco/1")
        st.append_event(HumanEvent("crowd-1", "note", rid, "flagged", source="haelm", meta={"mode": "imported"}))
        st.append_event(HumanEvent("ann", "rating", rid, 4))
        got = st.get_samples(["coco/1", "coco/2"])
        assert got["coco/1"] == samples[0] and got["coco/2"] == samples[1]
        events = st.list_events(response_id=rid)
        assert [(e.source, e.meta) for e in events] == [("haelm", {"mode": "imported"}), (APP_SOURCE, {})]
        export_table(st, "samples", "jsonl", tmp_path / "samples.jsonl")
        export_table(st, "judgments", "jsonl", tmp_path / "judgments.jsonl")
    parsed = read_jsonl_samples(tmp_path / "samples.jsonl")
    assert {s.id: s for s in parsed[0].samples}["coco/1"] == samples[0]
    read, problems = read_jsonl_judgments(tmp_path / "judgments.jsonl")
    assert not problems and [(e.source, e.meta) for e in read] == [("haelm", {"mode": "imported"}), (APP_SOURCE, {})]


def test_a_store_of_schema_two_keeps_its_rows_and_gains_the_columns(tmp_path):
    path = tmp_path / "old.duckdb"
    with Store(path, migrate_to=2) as st:  # as the landed code wrote it
        st._write(lambda cur: cur.execute(
            "INSERT INTO samples (id, benchmark, image_key, task, domain, source_kind, reference_text) "
            "VALUES ('b/1', 'b', '1', 'caption', 'original', 'real', 'A cat.')"))
        st._write(lambda cur: cur.execute("INSERT INTO events (annotator, kind, response_id, target, value) "
                                          "VALUES ('ann', 'rating', 'r1', '', '3')"))
    with Store(path) as st:
        assert st.get_sample("b/1").reference_text == "A cat."
        (event,) = st.list_events()
        assert (event.annotator, event.value, event.source, event.meta) == ("ann", 3, APP_SOURCE, {})


def test_several_captions_give_the_union_of_their_concepts():
    sample = Sample(id="c/1", benchmark="c", image_key="1",
                    reference_text=["A man rides a moped.", "A man on a moped near a tree."])
    assert reference_source(sample) == "reference_text"
    (concepts,) = reference_concepts_many([sample], ParserExtractor())
    assert sorted(o.name for o in concepts.objects) == ["man", "moped", "tree"]
    objects_only = Sample(id="c/2", benchmark="c", image_key="2", reference_objects=["dog", "dog", "frisbee"],
                          reference_vocabulary="coco-80")
    assert reference_source(objects_only) == "reference_objects"
    assert reference_concepts_many([objects_only])[0] == ConceptSet.from_dict({"objects": ["dog", "frisbee"]})


def test_stateless_lines_take_caption_lists_and_object_lists(tmp_path):
    from hallu_studio.config import Settings
    from hallu_studio.pipelines.scoring_jsonl import score_jsonl

    lines = [{"id": "a", "response": "A man rides a moped.", "reference_text": ["A man on a moped.", "A moped."]},
             {"id": "b", "response": "A dog.", "reference_objects": ["dog"], "reference_vocabulary": "coco-80"},
             {"id": "c", "response": "A dog.", "reference_objects": ["dog"], "reference_vocabulary": "imagenet"}]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = score_jsonl(src, out, Settings(), ["emd"])
    assert report.lines == 3 and report.scored == 2
    assert len(report.errors) == 1 and "line 3" in report.errors[0] and "imagenet" in report.errors[0]
