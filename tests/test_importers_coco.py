"""The COCO importer on small COCO-format files the tests write (coco_helpers; never COCO's own data), and the
member-by-member JSON reader it streams the files with."""

import io
import json
import random

import pytest
from PIL import Image

from coco_helpers import (COCO_80_CATEGORIES, caption, image, instance, write_captions, write_instances,
                          write_synthetic_split)
from hallu_studio.cli import main
from hallu_studio.importers.coco import read_coco
from hallu_studio.importers.reading import FatalImportError, iter_json_members
from hallu_studio.pipelines.importing import import_benchmark

IMAGES = [image(9), image(42), image(7)]
CAPTIONS = [caption(1, 42, "A man riding a horse on a beach."), caption(2, 9, "Two dogs on a sofa."),
            caption(3, 42, "  A person on a brown horse near the sea. "), caption(4, 9, "Dogs resting on a couch.")]
INSTANCES = [instance(11, 42, "horse"), instance(12, 42, "person"), instance(13, 9, "dog"), instance(14, 9, "couch"),
             instance(15, 9, "dog"), instance(16, 42, "person", crowd=True), instance(17, 42, "person")]


def _split(folder, captions=CAPTIONS, instances=INSTANCES, images=IMAGES):
    folder.mkdir(exist_ok=True)
    write_captions(folder / "captions_val2014.json", images, captions)
    write_instances(folder / "instances_val2014.json", images, instances)
    return folder


def _jpeg(color):
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(buf, format="JPEG")
    return buf.getvalue()


def test_a_split_folder_gives_one_caption_sample_per_image_with_captions_objects_and_counts(tmp_path):
    [parsed] = read_coco(_split(tmp_path / "annotations"))
    assert parsed.benchmark.name == "coco-val2014"
    assert parsed.benchmark.description == "COCO val2014: captions and object instances"
    assert parsed.benchmark.meta["files"] == ["captions_val2014.json", "instances_val2014.json"]
    assert parsed.benchmark.meta["split"] == "val2014" and len(parsed.benchmark.meta["categories"]) == 80
    by_id = {s.id: s for s in parsed.samples}
    assert list(by_id) == ["coco-val2014/9", "coco-val2014/42", "coco-val2014/7"]  # the file's image order
    horse = by_id["coco-val2014/42"]
    assert (horse.task, horse.image_key) == ("caption", "COCO_val2014_000000000042.jpg")
    assert horse.reference_text == ["A man riding a horse on a beach.", "A person on a brown horse near the sea."]
    assert horse.reference_objects == ["horse", "person"] and horse.reference_vocabulary == "coco-80"
    assert horse.meta == {"instance_counts": {"horse": 1, "person": 3}, "crowd_categories": ["person"],
                          "image_source": "coco"}
    dogs = by_id["coco-val2014/9"]
    assert dogs.reference_objects == ["dog", "couch"] and dogs.meta["instance_counts"] == {"dog": 2, "couch": 1}
    assert dogs.meta["crowd_categories"] == []
    # Listed by the instances file with no annotation: none of the 80 categories is in it.
    empty = by_id["coco-val2014/7"]
    assert empty.reference_objects == [] and empty.reference_vocabulary == "coco-80"
    assert empty.reference_text is None
    assert [(str(p), p.fatal) for p in parsed.problems] == [
        ("captions_val2014.json: 1 images have no caption (7); imported without one", False),
        ("coco-val2014: no image folder given: 3 images not attached", False)]


def test_either_file_alone_and_the_file_beside_it_named(tmp_path):
    folder = _split(tmp_path)
    [captions] = read_coco(folder / "captions_val2014.json")
    horse = next(s for s in captions.samples if s.id == "coco-val2014/42")
    assert len(horse.reference_text) == 2 and horse.reference_objects is None and horse.reference_vocabulary is None
    # Captions alone: no object list, but a COCO image all the same (CHAIR reads it over COCO-80).
    assert horse.meta == {"image_source": "coco"} and captions.benchmark.description == "COCO val2014: captions"
    assert any(p.record == "captions_val2014.json" and not p.fatal and "instances_val2014.json beside it was not read"
               in p.reason for p in captions.problems)
    (folder / "captions_val2014.json").unlink()
    [instances] = read_coco(folder / "instances_val2014.json")
    horse = next(s for s in instances.samples if s.id == "coco-val2014/42")
    assert horse.reference_text is None and horse.reference_objects == ["horse", "person"]
    assert [p.fatal for p in instances.problems] == [False]  # only: no image folder given
    [folder_read] = read_coco(folder)
    assert folder_read.benchmark.meta["files"] == ["instances_val2014.json"]


def test_bad_records_are_named_and_the_good_ones_go_through(tmp_path):
    images = IMAGES + [{"id": 5}, {"file_name": "x.jpg"}, image(9), "image"]
    captions = CAPTIONS + [caption(20, 404, "An orphan caption."), {"id": 21, "image_id": 42},
                           {"id": 22, "image_id": 42, "caption": ["a", "list"]}, 7, caption(23, 5, "No file.")]
    instances = INSTANCES + [instance(30, 42, 999), instance(31, 404, "dog"), {"id": 32, "image_id": 42},
                             dict(instance(33, 9, "cat"), iscrowd="yes")]
    [parsed] = read_coco(_split(tmp_path, captions, instances, images))
    fatal = {p.record: p.reason for p in parsed.problems if p.fatal}
    assert fatal == {
        "captions_val2014.json image 5": "missing field 'file_name'",
        "captions_val2014.json images record 4": "missing field 'id' (an integer)",
        "captions_val2014.json image 9": "listed twice; the first kept",
        "captions_val2014.json images record 6": "expected an object, got str",
        "captions_val2014.json annotation 4 (id 20)": "image 404 is not among the file's images",
        "captions_val2014.json annotation 5 (id 21)": "missing field 'caption'",
        "captions_val2014.json annotation 6 (id 22)": "'caption' must be a string, got list",
        "captions_val2014.json annotation 7": "expected an object, got int",
        "captions_val2014.json annotation 8 (id 23)": "its image 5 was left out (see that image's error)",
        "instances_val2014.json image 5": "missing field 'file_name'",
        "instances_val2014.json images record 4": "missing field 'id' (an integer)",
        "instances_val2014.json image 9": "listed twice; the first kept",
        "instances_val2014.json images record 6": "expected an object, got str",
        "instances_val2014.json annotation 7 (id 30)": "category id 999 is not among the file's categories",
        "instances_val2014.json annotation 8 (id 31)": "image 404 is not among the file's images",
        "instances_val2014.json annotation 9 (id 32)": "missing field 'category_id'",
        "instances_val2014.json annotation 10 (id 33)": "'iscrowd' must be 0 or 1, got 'yes'",
    }
    assert [s.id for s in parsed.samples] == ["coco-val2014/9", "coco-val2014/42", "coco-val2014/7"]
    horse = parsed.samples[1]
    assert len(horse.reference_text) == 2 and horse.meta["instance_counts"] == {"horse": 1, "person": 3}


def test_an_image_the_two_files_name_differently_is_left_out(tmp_path):
    folder = tmp_path
    write_captions(folder / "captions_val2014.json", IMAGES, CAPTIONS)
    write_instances(folder / "instances_val2014.json", [image(9), dict(image(42), file_name="other.jpg")], INSTANCES)
    [parsed] = read_coco(folder)
    assert [s.id for s in parsed.samples] == ["coco-val2014/9", "coco-val2014/7"]
    assert [str(p) for p in parsed.problems if p.fatal] == [
        "instances_val2014.json image 42: file_name 'other.jpg' here but 'COCO_val2014_000000000042.jpg' in "
        "captions_val2014.json; image left out"]
    # Image 7 is only in the captions file: the instances file says nothing about it.
    assert parsed.samples[1].reference_objects is None and parsed.samples[1].reference_vocabulary is None


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "captions_val2014.json: expected a COCO annotation file (a JSON object with 'images' and "
               "'annotations' lists), got a list"),
    ('{"2374892": {"instance": []}, "9": {}}', "captions_val2014.json: not a COCO annotation file (a JSON object "
     "with 'images' and 'annotations' lists): no 'images' or 'annotations' (its keys: '2374892', '9')"),
    ('{"images": {}, "annotations": []}', "'images' is a dict, not a list"),
    ('{"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [{"id": 1, "image_id": 1, "caption": "A',
     "captions_val2014.json: not valid JSON (Unterminated string starting at: line 1 column 99)"),
    ('{"images": [],\n "annotations": [{"id": 1}, {"id": 2} {"id": 3}]}',
     "captions_val2014.json: not valid JSON (Expecting ',' delimiter: line 2 column 39)"),
])
def test_a_file_not_in_coco_format_is_one_clear_error(tmp_path, content, message):
    (tmp_path / "captions_val2014.json").write_text(content)
    with pytest.raises(FatalImportError) as exc:
        read_coco(tmp_path / "captions_val2014.json")
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_instances_need_their_categories(tmp_path):
    path = tmp_path / "instances_val2014.json"
    path.write_text(json.dumps({"images": IMAGES, "annotations": INSTANCES}))
    with pytest.raises(FatalImportError, match="'categories' list; got none"):
        read_coco(path)
    write_instances(path, IMAGES, INSTANCES, categories=[{"id": 1}])
    with pytest.raises(FatalImportError, match="names no category"):
        read_coco(path)


def test_other_categories_than_cocos_80_are_the_vocabulary_and_a_plain_name_reads_by_content(tmp_path):
    categories = [{"id": 1, "name": "person"}, {"id": 2, "name": "bicycle"}, {"id": 5, "name": "traffic cone"}]
    path = write_instances(tmp_path / "my_boxes.json", IMAGES, [instance(1, 42, 5), instance(2, 42, 1)], categories)
    [parsed] = read_coco(path, benchmark="cones")
    sample = next(s for s in parsed.samples if s.id == "cones/42")
    assert sample.reference_objects == ["traffic cone", "person"]
    assert sample.reference_vocabulary == ["person", "bicycle", "traffic cone"]
    assert "image_source" not in sample.meta  # its own categories: not COCO's images, nor COCO-80
    [plain] = read_coco(path)
    assert plain.benchmark.name == "coco" and plain.samples[0].id == "coco/9"
    assert "split" not in plain.benchmark.meta


def test_a_folder_of_two_splits_gives_two_benchmarks_and_one_name_is_refused(tmp_path):
    _split(tmp_path)
    write_captions(tmp_path / "captions_val2017.json", [{"id": 42, "file_name": "000000000042.jpg"}],
                   [caption(1, 42, "A horse.")])
    (tmp_path / "person_keypoints_val2017.json").write_text("{}")  # not read
    val2014, val2017 = read_coco(tmp_path)
    assert (val2014.benchmark.name, val2017.benchmark.name) == ("coco-val2014", "coco-val2017")
    assert [(s.id, s.image_key) for s in val2017.samples] == [("coco-val2017/42", "000000000042.jpg")]
    with pytest.raises(FatalImportError, match=r"holds 2 splits \(val2014, val2017\)"):
        read_coco(tmp_path, benchmark="mine")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FatalImportError, match="no captions_<split>.json or instances_<split>.json"):
        read_coco(tmp_path / "empty")


def test_images_by_file_name_and_missing_ones_recorded(tmp_path):
    folder = _split(tmp_path / "annotations")
    images = tmp_path / "images" / "val2014"  # COCO's layout: the split's folder inside the one given
    images.mkdir(parents=True)
    (images / "COCO_val2014_000000000042.jpg").write_bytes(_jpeg("red"))
    (images / "COCO_val2014_000000000009.jpg").write_bytes(b"not a jpeg")
    [parsed] = read_coco(folder, tmp_path / "images")
    found = {s.id: s.image_sha256 for s in parsed.samples}
    assert found["coco-val2014/42"] and not found["coco-val2014/9"] and not found["coco-val2014/7"]
    warnings = [str(p) for p in parsed.problems if not p.fatal]
    assert any("image COCO_val2014_000000000009.jpg" in w and "not a readable image" in w for w in warnings)
    assert any("image COCO_val2014_000000000007.jpg" in w and "is not in" in w for w in warnings)


def test_stored_samples_keep_the_references_and_reimport_adds_nothing(store, tmp_path):
    [parsed] = read_coco(_split(tmp_path))
    assert import_benchmark(store, parsed).added == 3
    assert import_benchmark(store, parsed).added == 0
    horse = store.get_samples(["coco-val2014/42"])["coco-val2014/42"]
    assert horse.reference_text == parsed.samples[1].reference_text
    assert (horse.reference_objects, horse.reference_vocabulary) == (["horse", "person"], "coco-80")
    assert horse.meta["instance_counts"] == {"horse": 1, "person": 3}


def test_cli_import_says_which_files_were_read_and_exits_by_the_records(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    folder = _split(tmp_path / "annotations")
    assert main(["import", "--format", "coco", str(folder), "--db", db]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == ("coco-val2014 (captions_val2014.json + instances_val2014.json): 3 images (0 found), "
                               "3 questions; 3 added, 0 already present; 0 problems (+2 warnings)")
    write_captions(folder / "captions_val2014.json", IMAGES, CAPTIONS + [caption(20, 404, "An orphan caption.")])
    assert main(["import", "--format", "coco", str(folder / "captions_val2014.json"), "--benchmark", "c2",
                 "--db", db]) == 1
    out = capsys.readouterr()
    assert "error: captions_val2014.json annotation 4 (id 20): image 404 is not among the file's images" in out.err
    assert "c2 (captions_val2014.json): 3 images (0 found), 3 questions; 3 added" in out.out
    (tmp_path / "bad.json").write_text("[]")
    assert main(["import", "--format", "coco", str(tmp_path / "bad.json"), "--db", db]) == 2
    assert capsys.readouterr().err.strip() == ("error: bad.json: expected a COCO annotation file (a JSON object with "
                                               "'images' and 'annotations' lists), got a list")
    assert main(["import", "--format", "coco", str(folder), "--model", "m", "--db", db]) == 2
    assert "--format coco does not take --model" in capsys.readouterr().err


def test_a_synthetic_split_streams_through_with_every_record(tmp_path):
    captions_path, instances_path = write_synthetic_split(tmp_path, images=1_500, captions=7_500, instances=11_000,
                                                          seed=3)
    assert instances_path.stat().st_size > 3 * (1 << 20)  # several of the reader's 1 MB chunks
    [parsed] = read_coco(tmp_path)
    assert len(parsed.samples) == 1_500 and parsed.records_failed == 0
    assert sum(len(s.reference_text or ()) for s in parsed.samples) == 7_500
    assert sum(sum(s.meta["instance_counts"].values()) for s in parsed.samples) == 11_000
    data = json.loads(instances_path.read_text())
    crowd = {(a["image_id"], a["category_id"]) for a in data["annotations"] if a["iscrowd"]}
    names = {c["id"]: c["name"] for c in COCO_80_CATEGORIES}
    got = {(int(s.id.split("/")[1]), c) for s in parsed.samples for c in s.meta["crowd_categories"]}
    assert got == {(i, names[c]) for i, c in crowd}


# --------------------------------------------------------------------------- the member-by-member reader


def _random_value(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.35:
        return rng.choice([rng.randint(-10**12, 10**12), rng.random() * 1e5, -2.5e-7, "s\u00e9\n\"x\\" * rng.randint(0, 4),
                           True, False, None, 12345678901234567890])
    if r < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"k{i}": _random_value(rng, depth + 1) for i in range(rng.randint(0, 4))}


def test_member_reader_gives_what_json_load_gives_across_any_chunk_boundary(tmp_path):
    rng = random.Random(5)
    path = tmp_path / "doc.json"
    for _ in range(150):
        doc = {f"key{i}": _random_value(rng) for i in range(rng.randint(0, 4))}
        doc["items"] = [_random_value(rng) for _ in range(rng.randint(0, 6))]
        text = json.dumps(doc, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5)
        path.write_text(text, encoding="utf-8")
        for chunk in (1, 2, 5, 64):
            got: dict = {"items": []}
            for key, index, value in iter_json_members(path, arrays={"items"}, chunk_chars=chunk):
                if index is None:
                    got[key] = value
                else:
                    assert index == len(got["items"])
                    got["items"].append(value)
            assert got == doc, (chunk, text)


def test_member_reader_refuses_every_truncation_and_names_the_place(tmp_path):
    text = json.dumps({"a": [1, 22.5, {"b": "c"}, 333], "d": -45e2})
    path = tmp_path / "doc.json"
    for cut in range(len(text)):
        path.write_text(text[:cut])
        with pytest.raises(FatalImportError):
            list(iter_json_members(path, arrays={"a"}, chunk_chars=2))
    path.write_text('{"a": [1,\n 2,,\n 3]}')
    with pytest.raises(FatalImportError, match=r"doc.json: not valid JSON \(Expecting value: line 2 column 4\)"):
        list(iter_json_members(path, arrays={"a"}, chunk_chars=3))
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(FatalImportError, match="not UTF-8"):
        list(iter_json_members(path))
