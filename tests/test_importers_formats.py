"""Importers on small hand-made files: VG, GQA, Tri-HE / Reefknot / HalFscore edge cases,
recorded responses of other toolkits, and malformed input."""

import json

import pandas as pd
import pytest

from hallu_studio.importers.halfscore import read_halfscore_annotations, read_halfscore_captions, strip_chat_template
from hallu_studio.importers.jsonl import read_jsonl_responses, read_jsonl_samples
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.importers.reefknot import read_reefknot
from hallu_studio.importers.scene_graphs import read_gqa, read_visual_genome
from hallu_studio.grounding import ReferenceGraph
from hallu_studio.importers.tri_he import build_scene_graph, read_tri_he
from hallu_studio.importers.triplets import parse_triplets

VG_SCENE_GRAPHS = [
    {"image_id": 1, "objects": [
        {"object_id": 10, "names": ["man"], "attributes": ["tall"], "x": 1, "y": 2, "w": 30, "h": 60},
        {"object_id": 11, "names": ["horse"], "x": 20, "y": 10, "w": 50, "h": 40}],
     "relationships": [
        {"relationship_id": 5, "predicate": "RIDING", "subject_id": 10, "object_id": 11},
        {"relationship_id": 6, "predicate": "wears", "subject": {"object_id": 10, "names": ["man"]},
         "object": {"object_id": 12, "name": "hat", "x": 3, "y": 1, "w": 5, "h": 4}},
        {"relationship_id": 7, "predicate": "near", "subject_id": 10, "object_id": 99}]},
    {"objects": []},
]
VG_REGIONS = [{"id": 1, "regions": [{"region_id": 1, "image_id": 1, "phrase": "a man riding a horse",
                                     "x": 0, "y": 0, "width": 80, "height": 70}]}]
GQA_SCENE_GRAPHS = {
    "2370799": {"width": 500, "height": 333, "objects": {
        "1": {"name": "cat", "x": 1, "y": 2, "w": 3, "h": 4, "attributes": ["gray"],
              "relations": [{"name": "on", "object": "2"}, {"name": "near", "object": "404"}]},
        "2": {"name": "sofa", "x": 0, "y": 0, "w": 100, "h": 50, "attributes": [], "relations": []}}},
    "bad": {"objects": {"1": {"attributes": []}}},
}


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


def _jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_visual_genome_objects_relations_regions_and_problems(tmp_path):
    _write(tmp_path / "scene_graphs.json", VG_SCENE_GRAPHS)
    _write(tmp_path / "region_descriptions.json", VG_REGIONS)
    parsed = read_visual_genome(tmp_path)
    [sample] = parsed.samples
    assert (sample.id, sample.task, sample.image_key) == ("vg/1", "caption", "1")
    graph = sample.scene_graph
    assert graph.triplets() == [("man", "riding", "horse"), ("man", "wears", "hat")]  # hat added from the relation
    assert graph.attribute_pairs() == [("man", "tall")] and graph.objects[0].box == (1.0, 2.0, 30.0, 60.0)
    assert graph.regions == ["a man riding a horse"]
    reasons = {p.record: (p.reason, p.fatal) for p in parsed.problems}
    assert reasons["scene_graphs.json image 1 relationship 2"][1] is False
    assert "image_id" in reasons["scene_graphs.json record 1"][0] and reasons["scene_graphs.json record 1"][1]


def test_gqa_scene_graph(tmp_path):
    parsed = read_gqa(_write(tmp_path / "train_sceneGraphs.json", GQA_SCENE_GRAPHS))
    [sample] = parsed.samples
    assert sample.id == "gqa/2370799" and sample.meta == {"width": 500, "height": 333}
    assert sample.scene_graph.triplets() == [("cat", "on", "sofa")]
    assert sample.scene_graph.attribute_pairs() == [("cat", "gray")]
    assert [(p.record, p.fatal) for p in parsed.problems] == [
        ("train_sceneGraphs.json image 2370799 object 1 relation 1", False),
        ("train_sceneGraphs.json image bad", True),
        ("train_sceneGraphs.json", False)]  # no image folder given


def test_triplet_strings():
    assert parse_triplets("(laptop, is, black)")[0] == [("laptop", "is", "black")]
    assert parse_triplets('"(bus, is,stopped)"')[0] == [("bus", "is", "stopped")]  # stray wrapping quotes
    assert parse_triplets('(sign, displaying, "OLYMPUS")')[0] == [("sign", "displaying", '"OLYMPUS"')]
    found, notes = parse_triplets("(snow on the ground, covers, mountains, (people, wearing, winter clothing)")
    assert found == [("snow on the ground", "covers", "mountains"), ("people", "wearing", "winter clothing")]
    for bad in ("", "(a, b)", "(, , )", None):
        with pytest.raises(ValueError):
            parse_triplets(bad)


def test_tri_he_bad_records_are_problems_and_good_ones_go_through(tmp_path):
    data = {
        "1": {"instance": [{"question": "What is on the desk?", "answer": "A laptop.", "triplet": ["(laptop, on, desk)"]},
                           {"answer": "no question"},
                           {"question": "Broken?", "triplet": ["(only, two)"]}],
              "triplets": ["(laptop, on, desk)", "(laptop, is, grey)"], "all_object": ["laptop", "desk"], "object": []},
        "2": {"triplets": []},
        "3": {"instance": [], "all_object": "laptop"},
    }
    parsed = read_tri_he(_write(tmp_path / "tri-he.json", data), tmp_path)  # empty image folder
    assert [s.id for s in parsed.samples] == ["tri-he/1/q0", "tri-he/1/q2"]
    assert parsed.samples[1].gold_triplets == []
    fatal = {p.record for p in parsed.problems if p.fatal}
    assert fatal == {"tri-he.json image 1 question 1", "tri-he.json image 2", "tri-he.json image 3"}
    warnings = [str(p) for p in parsed.problems if not p.fatal]
    assert any("question 2 triplet 0" in w for w in warnings)
    assert any("image 1" in w and "not in" in w for w in warnings)  # missing image: non-fatal
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(FatalImportError, match="not valid JSON"):
        read_tri_he(tmp_path / "x.json")


def test_tri_he_ends_are_the_listed_objects_and_their_numbers_the_annotators_counts():
    # Visual Genome lists two giraffe boxes; the triplets call them "giraffes", "two giraffes", "one giraffe": one
    # thing named four ways, not four more giraffes (a count claim of two was judged wrong against six).
    graph, added = build_scene_graph(["giraffe", "tree", "giraffe"], [
        ("Giraffes", "near", "tree"), ("two giraffes", "in", "proximity"), ("one giraffe", "is smaller than",
                                                                           "another giraffe")])
    assert [o.name for o in graph.objects] == ["giraffe", "tree", "giraffe", "proximity"] and added == ["proximity"]
    assert ReferenceGraph.from_scene_graph(graph).nodes[0].multiplicity == 2
    # A number larger than the list holds is the annotators' count: the missing ones are added, without it.
    graph, added = build_scene_graph(["umbrella"], [("Two people", "sharing", "one umbrella")])
    assert [o.name for o in graph.objects] == ["umbrella", "people", "people"] and added == ["people"]
    assert graph.triplets() == [("people", "sharing", "umbrella")]


def test_tri_he_ends_naming_several_things_are_read_as_the_annotators_meant_them():
    graph, added = build_scene_graph(["book", "magazine", "table", "snow", "mountain", "person", "hat", "chair"], [
        ("books and magazines", "on", "table"), ("snow on the ground", "covers", "mountains"),
        ("people wearing hat", "sit on", "chair"), ("Pedestrian crossing signal", "displays", "WAIT"),
        ("team sports and solo activities", "for", "person")])
    assert graph.triplets() == [
        ("book", "on", "table"), ("magazine", "on", "table"), ("snow", "on", "ground"),
        ("snow", "covers", "mountain"), ("person", "wearing", "hat"), ("person", "sit on", "chair"),
        ("Pedestrian crossing signal", "displays", "WAIT"), ("team sports and solo activities", "for", "person")]
    assert added == ["ground", "Pedestrian crossing signal", "WAIT", "team sports and solo activities"]


def test_reefknot_malformed_lines_missing_fields_and_recorded_responses(tmp_path):
    yn = [{"image_id": "5", "query_prompt": "Is the cat on sofa in this photo? Please answer yes or no.",
           "label": "yes", "type": "Yes/No", "mllm_name": "llava", "response": "Yes.", "relation_type": "perception"},
          {"image_id": "5", "query_prompt": "Is the cat under the sofa in this photo? Please answer yes or no.",
           "label": "no", "type": "Yes/No", "mllm_name": "", "response": "", "relation_type": "perception"},
          "{broken json",
          {"image_id": "6", "query_prompt": "", "label": "yes"},
          {"image_id": "7", "query_prompt": "Is the dog on grass in this photo? Please answer yes or no.",
           "label": "maybe", "relation_type": "cognitive"}]
    _jsonl(tmp_path / "YESNO.jsonl", yn)
    _jsonl(tmp_path / "Multichoice.jsonl", [
        {"image_id": "5", "query_prompt": "What is the relation with cat and sofa in this photo? A. on B. under "
         "C. beside D. behind, please choose.", "label": "E", "relation_type": "perception"}])
    parsed, recorded = read_reefknot(tmp_path)
    assert [s.id for s in parsed.samples] == ["reefknot/yes_no/0", "reefknot/yes_no/1"]
    assert parsed.samples[1].gold_triplets == [("cat", "on", "sofa")]
    fatal = sorted(str(p) for p in parsed.problems if p.fatal)
    assert any("VQA.jsonl" in f and "not found" in f for f in fatal)
    assert any("YESNO.jsonl line 3" in f and "not valid JSON" in f for f in fatal)
    assert any("YESNO.jsonl line 4" in f and "query_prompt" in f for f in fatal)
    assert any("line 5" in f and "'maybe'" in f for f in fatal)
    assert any("Multichoice.jsonl line 1" in f and "not one of A-D" in f for f in fatal)
    assert [(r.sample_id, r.text) for r in recorded.responses] == [("reefknot/yes_no/0", "Yes.")]
    assert [(r.model, r.backend) for r in recorded.runs] == [("llava", "recorded")]


def test_chat_template_is_stripped_and_caption_lists_joined(tmp_path):
    assert strip_chat_template("<s>[INST] <image>\nDescribe. [/INST] A cat. </s>") == "A cat."
    assert strip_chat_template("A plain caption.") == "A plain caption."
    _write(tmp_path / "annotation.json", [{"image": "sa_1.jpg", "caption": "Gold."}, {"image": "sa_2.jpg"}])
    bench = read_halfscore_annotations(tmp_path)
    assert [s.id for s in bench.samples] == ["halfscore/sa_1"]
    assert any(p.fatal and "record 1" in p.record and "caption" in p.reason for p in bench.problems)
    captions = _jsonl(tmp_path / "qwen-vl_captions.jsonl", [
        {"image": "sa_1.jpg", "caption": ["USER: <image>\nDescribe ASSISTANT: First part.", "Second part.</s>"]},
        {"image": "sa_9.jpg", "caption": "unknown image"}])
    parsed = read_halfscore_captions(captions, {"halfscore/sa_1"})
    assert [r.text for r in parsed.responses] == ["First part.\n\nSecond part."]
    assert parsed.runs[0].model == "qwen-vl"
    assert [p.record for p in parsed.problems] == ["qwen-vl_captions.jsonl line 2"]
    with pytest.raises(FatalImportError, match="--model"):
        read_halfscore_captions(_jsonl(tmp_path / "out.jsonl", []), set())


KNOWN = {"tri-he/1/q0", "tri-he/1/q1", "reefknot/vqa/0", "reefknot/mcq/0"}




def test_generic_jsonl_responses_and_samples_problems(tmp_path):
    path = _jsonl(tmp_path / "r.jsonl", [{"sample_id": "tri-he/1/q0", "model": "m", "response": "yes"},
                                         {"sample_id": "1/q1", "response": "no"},
                                         {"sample_id": "tri-he/7/q0", "model": "m", "response": "?"},
                                         {"sample_id": "tri-he/1/q1", "model": "m"}])
    parsed = read_jsonl_responses(path, KNOWN, benchmark="tri-he", model="fallback")
    assert [(r.sample_id, r.text) for r in parsed.responses] == [("tri-he/1/q0", "yes"), ("tri-he/1/q1", "no")]
    assert sorted(r.model for r in parsed.runs) == ["fallback", "m"]
    assert [p.record for p in parsed.problems] == ["r.jsonl line 3", "r.jsonl line 4"]
    samples = _jsonl(tmp_path / "s.jsonl", [
        {"id": "b/1", "benchmark": "b", "image_key": "1", "task": "caption", "image": "../../etc/passwd"},
        {"id": "b/2", "benchmark": "b", "image_key": "2", "task": "dance"},
        {"id": "b/3", "benchmark": "b", "image_key": "3", "colour": "red"},  # a column of the user's: kept in meta
        {"id": "b/4", "benchmark": "b", "image_key": "4", "tsk": "caption"}])  # a misspelt field: refused
    [bench] = read_jsonl_samples(samples)
    assert [s.id for s in bench.samples] == ["b/1", "b/3"] and bench.samples[0].image_sha256 is None
    assert bench.samples[1].meta == {"colour": "red"}
    reasons = [(p.record, p.fatal) for p in bench.problems]
    assert reasons == [("s.jsonl line 2", True), ("s.jsonl line 4", True), ("s.jsonl", False),
                       ("s.jsonl line 1", False)]
    assert bench.problems[1].reason == "sample 'b/4': unknown field 'tsk' (did you mean `task`?)"
    assert "escapes" in bench.problems[-1].reason


def test_a_file_of_the_wrong_shape_is_refused_naming_what_was_expected(tmp_path):
    from hallu_studio.importers.reading import FatalImportError
    from hallu_studio.importers.scene_graphs import read_gqa
    from hallu_studio.importers.tri_he import read_tri_he

    f = tmp_path / "tri-he.json"
    f.write_text("[1, 2]")
    with pytest.raises(FatalImportError, match="tri-he.json: expected a JSON object keyed by image id, got list"):
        read_tri_he(f)
    with pytest.raises(FatalImportError, match="expected an object keyed by image id, got list"):
        read_gqa(f)
