"""``import --format image-folder``: a folder of real photographs (scikit-image ships them) as a benchmark with no
reference, with responses from a JSONL or CSV file matched to the images by name."""

from __future__ import annotations

import hashlib
import json

import pytest

from hallu_studio.cli import main
from hallu_studio.importers import registry
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.metrics.registry import not_applicable_reason
from hallu_studio.pipelines.importing import import_format
from hallu_studio.reference_scope import Scope
from hallu_studio.store import Store

data = pytest.importorskip("skimage.data")
Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def photos(tmp_path):
    """Three real photographs (one in a subfolder, one a second copy under another name) and a broken file."""
    folder = tmp_path / "My Photos"
    (folder / "pets").mkdir(parents=True)
    Image.fromarray(data.astronaut()).save(folder / "astronaut.jpg")
    Image.fromarray(data.coffee()).save(folder / "coffee.png")
    Image.fromarray(data.chelsea()).save(folder / "pets" / "chelsea.jpg")
    (folder / "copy.png").write_bytes((folder / "coffee.png").read_bytes())
    (folder / "broken.jpg").write_bytes(b"not an image at all")
    (folder / "notes.txt").write_text("not an image file name")
    return folder


def test_a_folder_of_photographs_becomes_a_benchmark_with_no_reference(photos, tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    assert main(["import", "--db", str(db), "--format", "image-folder", str(photos)]) == 1  # the broken file
    err = capsys.readouterr().err
    assert "error: My Photos/broken.jpg: not a readable image" in err
    with Store(db) as store:
        samples = {s.image_key: s for s in store.iter_samples("my-photos")}
        assert sorted(samples) == ["astronaut.jpg", "coffee.png", "copy.png", "pets/chelsea.jpg"]
        cat = samples["pets/chelsea.jpg"]
        assert cat.id == "my-photos/pets/chelsea.jpg" and cat.task == "caption"
        assert cat.image_sha256 == hashlib.sha256((photos / "pets" / "chelsea.jpg").read_bytes()).hexdigest()
        assert samples["copy.png"].image_sha256 == samples["coffee.png"].image_sha256  # stored once, by sha256
        assert store.get_image(cat.image_sha256) is not None
        assert Scope.of_sample(cat).none and Scope.of_sample(cat).summary() == "reference: none"
        assert not_applicable_reason("emd", cat).startswith("emd needs a scene graph")
        assert not_applicable_reason("trihe", cat).startswith("trihe needs a scene graph")
        assert not_applicable_reason("pope", cat) == "pope does not score caption samples"
    # a second import adds nothing twice
    assert main(["import", "--db", str(db), "--format", "image-folder", str(photos)]) == 1
    assert "0 added, 4 already present" in capsys.readouterr().out


def test_responses_are_matched_to_the_images_and_bad_rows_are_named(photos, tmp_path, capsys):
    answers = tmp_path / "answers.jsonl"
    rows = [{"image": "astronaut.jpg", "response": "An astronaut holds a helmet.", "model": "llava"},
            {"image": "chelsea.jpg", "response": "A cat sits on a sofa."},  # by file name; the model from --model
            {"image": "pets/chelsea.jpg", "response": "A second answer."},  # the same (model, image) again
            {"image": "dog.jpg", "response": "A dog.", "model": "llava"},
            {"image": "coffee.png", "model": "llava"},
            {"image": "broken.jpg", "response": "A broken file.", "model": "llava"}]
    answers.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n", encoding="utf-8")
    with Store(tmp_path / "s.duckdb") as store:
        reports = import_format(store, "image-folder", ImportRequest(path=photos, benchmark="mine", model="qwen",
                                                                     responses=answers))
        problems = {str(p) for r in reports for p in r.problems}
        assert {"answers.jsonl line 3: a second response of qwen to 'pets/chelsea.jpg' (the first: answers.jsonl "
                "line 2)",
                "answers.jsonl line 4: image 'dog.jpg' is not an image of the folder",
                "answers.jsonl line 5: missing field 'response' (a string)",
                "answers.jsonl line 6: image 'broken.jpg' is not an image of the folder"} <= problems, problems
        assert any(p.startswith("answers.jsonl line 7: not valid JSON") for p in problems)
        by_model = {}
        for run in store.list_runs():
            by_model[run["model"]] = {r.sample_id: r.text for r in store.iter_responses(run["id"])}
        assert by_model == {"llava": {"mine/astronaut.jpg": "An astronaut holds a helmet."},
                            "qwen": {"mine/pets/chelsea.jpg": "A cat sits on a sofa."}}


def test_a_csv_of_responses_and_its_refusals(photos, tmp_path):
    answers = tmp_path / "answers.csv"
    answers.write_text("image,response,model\nastronaut.jpg,An astronaut.,m\ncoffee.png,A cup of coffee.,\n",
                       encoding="utf-8")
    with Store(tmp_path / "s.duckdb") as store:
        [images, responses] = import_format(store, "image-folder", ImportRequest(path=photos, responses=answers))
        assert responses.added == 1 and [str(p) for p in responses.problems] == [
            "answers.csv row 2: no model: give a 'model' field or --model"]
        bad = tmp_path / "bad.csv"
        bad.write_text("file,text\na.jpg,x\n", encoding="utf-8")
        with pytest.raises(ValueError, match="bad.csv: the CSV has no image or response column"):
            import_format(store, "image-folder", ImportRequest(path=photos, responses=bad))
        with pytest.raises(ValueError, match="--model names the model of --responses FILE"):
            import_format(store, "image-folder", ImportRequest(path=photos, model="m"))
        with pytest.raises(ValueError, match="does not take --images"):
            import_format(store, "image-folder", ImportRequest(path=photos, images=photos))
    empty = tmp_path / "empty"
    empty.mkdir()
    with Store(tmp_path / "t.duckdb") as store, pytest.raises(ValueError, match="no image files"):
        import_format(store, "image-folder", ImportRequest(path=empty))


def test_the_format_is_registered_with_its_options():
    fmt = registry.import_format("image-folder")
    assert fmt.options == ("path", "benchmark", "model", "responses")
