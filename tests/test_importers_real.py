"""The importers on the real benchmark files in ../shared/datasets (skipped when absent)."""

import pytest

from conftest import shared_dataset
from hallu_studio.importers.halfscore import read_halfscore_annotations, read_halfscore_captions
from hallu_studio.importers.reefknot import read_reefknot
from hallu_studio.importers.tri_he import read_tri_he
from hallu_studio.pipelines.importing import import_benchmark, import_responses


@pytest.fixture(scope="module")
def tri_he():
    return read_tri_he(shared_dataset("tri-he"))


@pytest.fixture(scope="module")
def reefknot():
    return read_reefknot(shared_dataset("reefknot"), shared_dataset("tri-he", "usage_figures"))


def test_tri_he_counts_images_and_graphs(tri_he):
    assert len(tri_he.samples) == 1226
    assert len({s.image_key for s in tri_he.samples}) == 300
    assert all(s.image_sha256 for s in tri_he.samples) and len(tri_he.images) == 300
    assert tri_he.records_failed == 0
    first = next(s for s in tri_he.samples if s.id == "tri-he/2374892/q0")
    assert first.task == "vqa" and first.question == "Why is the room possibly illuminated?"
    assert first.gold_triplets == [("Lamp", "turned on", "illuminating room")]
    graph = first.scene_graph
    assert ("laptop", "black") in graph.attribute_pairs()  # "(laptop, is, black)" became an attribute
    assert ("shirt", "wearing", "man") in graph.triplets()
    assert graph.object_names().count("wall") == 2  # duplicates in all_object stay separate objects
    assert "illuminating room" in first.meta["added_objects"]


def test_tri_he_messy_triplets_are_repaired_and_reported(tri_he):
    notes = [str(p) for p in tri_he.problems]
    assert any("run together" in n for n in notes) and any("4 parts" in n for n in notes)
    assert all(not p.fatal for p in tri_he.problems)
    merged = next(s for s in tri_he.samples if s.id == "tri-he/2353731/q0")
    assert len(merged.gold_triplets) == 2


def test_reefknot_counts_tasks_and_images_found_with_tri_he_folder(reefknot):
    bench, recorded = reefknot
    tasks = {}
    for s in bench.samples:
        tasks[s.task] = tasks.get(s.task, 0) + 1
    assert tasks == {"yes_no": 9740, "mcq": 6950, "vqa": 4870}
    assert len({s.image_key for s in bench.samples}) == 11084
    assert len({s.image_key for s in bench.samples if s.image_sha256}) == 67
    assert bench.records_failed == 0 and not recorded.responses  # the released files hold no responses
    assert {s.relation_category for s in bench.samples} == {"perception", "cognition"}


def test_reefknot_triplets_come_out_of_the_prompts(reefknot):
    by_id = {s.id: s for s in reefknot[0].samples}
    mcq = by_id["reefknot/mcq/0"]  # "...with knife and apple ... A. behind B. onto C. on D. into", label D
    assert mcq.options == ["behind", "onto", "on", "into"] and mcq.answer == "D"
    assert mcq.gold_triplets == [("knife", "into", "apple")]
    vqa = by_id["reefknot/vqa/0"]
    assert vqa.gold_triplets == [("bag", "on", "ground")] and vqa.meta["relation"] == "on"
    yes, no = by_id["reefknot/yes_no/0"], by_id["reefknot/yes_no/1"]  # bus driver on bus / off the bus
    assert (yes.answer, no.answer) == ("yes", "no")
    assert (yes.meta["subject"], yes.meta["relation"], yes.meta["object"]) == ("bus driver", "on", "bus")
    assert no.meta["relation"] == "off" and no.gold_triplets == yes.gold_triplets == [("bus driver", "on", "bus")]
    parsed = sum(1 for s in reefknot[0].samples if s.gold_triplets)
    assert parsed / len(reefknot[0].samples) > 0.95


def test_halfscore_annotations_and_recorded_captions(store):
    bench = read_halfscore_annotations(shared_dataset("halfscore", "annotation.json"))
    assert len(bench.samples) == 1000 and all(s.reference_text for s in bench.samples)
    assert bench.samples[0].id == "halfscore/sa_1554167"
    assert [p.fatal for p in bench.problems] == [False]  # the images are not here: one warning
    report = import_benchmark(store, bench)
    assert (report.added, report.images, report.images_found) == (1000, 1000, 0)
    captions = read_halfscore_captions(shared_dataset("halfscore", "llava-1.5-7b_captions.jsonl"),
                                       store.sample_ids("halfscore"))
    assert len(captions.responses) == 1000 and not captions.problems
    assert [r.model for r in captions.runs] == ["llava-1.5-7b"] and captions.runs[0].backend == "recorded"
    assert import_responses(store, captions).added == 1000
    assert import_responses(store, captions).added == 0
