"""AMBER: the importer (data folder and AMBER-format responses) and the metric's bookkeeping, on small files written
here in AMBER's shapes. The comparison with AMBER's released evaluator and its recorded numbers is in
``test_amber_real.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hallu_studio.importers.amber import read_amber, read_amber_responses
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.metrics.amber import AmberMetric, read_caption
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.model import Sample

RELATION = {"dog": ["puppy"], "grass": ["ground"], "cat": [], "forest": ["tree", "bush"], "tree": ["forest"],
            "car": ["vehicle"], "sky": []}
ANNOTATIONS = [
    {"id": 1, "type": "generative", "truth": ["dog", "grass", "forest", "tree"], "hallu": ["cat", "car"]},
    {"id": 2, "type": "generative", "truth": ["sky"], "hallu": ["dog"]},
    {"id": 3, "type": "discriminative-hallucination", "truth": "no"},
    {"id": 4, "type": "discriminative-attribute-number", "truth": "yes"},
    {"id": 5, "type": "relation", "truth": "no"},
    {"id": 6, "type": "discriminative-relation", "truth": "yes"},
]
QUERIES = [{"id": 1, "image": "AMBER_1.jpg", "query": "Describe this image."},
           {"id": 2, "image": "AMBER_2.jpg", "query": "Describe this image."},
           {"id": 3, "image": "AMBER_1.jpg", "query": "Is there a cat in this image?"},
           {"id": 4, "image": "AMBER_1.jpg", "query": "Is there one dog in this image?"},
           {"id": 5, "image": "AMBER_1.jpg", "query": "Is there direct contact between the dog and car?"},
           {"id": 6, "image": "AMBER_2.jpg", "query": "Is there direct contact between the dog and sky?"}]


def write_amber(root: Path, annotations=ANNOTATIONS, queries=QUERIES) -> Path:
    data = root / "data"
    (data / "query").mkdir(parents=True)
    (data / "annotations.json").write_text(json.dumps(annotations))
    (data / "relation.json").write_text(json.dumps(RELATION))
    (data / "safe_words.txt").write_text("bush\nline\n")
    (data / "query" / "query_all.json").write_text(json.dumps(queries))
    return data


def words_of(text: str) -> list[list[str]]:
    """A noun reader for these tests: every word, lower case (no tagger needed)."""
    return [w.strip(".,").lower() for w in text.split()]


def nouns(texts):
    return [words_of(t) for t in texts]


def test_the_data_folder_becomes_captions_with_complete_object_lists_and_yes_no_questions(tmp_path):
    parsed = read_amber(write_amber(tmp_path).parent)  # the repository root finds data/ below it
    by_id = {s.id: s for s in parsed.samples}
    assert sorted(by_id) == [f"amber/{i}" for i in range(1, 7)]
    cap = by_id["amber/1"]
    assert (cap.task, cap.image_key, cap.question) == ("caption", "AMBER_1.jpg", "Describe this image.")
    assert cap.reference_objects == ["dog", "grass", "forest", "tree"]
    assert cap.reference_vocabulary == sorted(RELATION)
    assert cap.meta["amber"]["association"]["forest"] == ["tree", "bush"]
    assert cap.meta["amber"]["words"] == sorted({"dog", "puppy", "grass", "ground", "cat", "forest", "tree", "bush",
                                                 "car", "vehicle", "sky"})
    assert [(by_id[f"amber/{i}"].task, by_id[f"amber/{i}"].answer, by_id[f"amber/{i}"].meta["amber"]["dimension"])
            for i in (3, 4, 5, 6)] == [("yes_no", "no", "existence"), ("yes_no", "yes", "attribute"),
                                       ("yes_no", "no", "relation"), ("yes_no", "yes", "relation")]
    assert by_id["amber/4"].meta["amber"]["attribute"] == "number"
    assert parsed.benchmark.name == "amber" and parsed.benchmark.meta["toolkit"] == "AMBER"
    assert [p.fatal for p in parsed.problems] == [False]  # no image folder given: a warning only


def test_images_are_attached_by_ambers_file_names(tmp_path):
    from PIL import Image

    images = tmp_path / "images"
    images.mkdir()
    Image.new("RGB", (32, 24), "red").save(images / "AMBER_1.jpg")
    parsed = read_amber(write_amber(tmp_path), images)
    found = {s.id: s.image_sha256 for s in parsed.samples}
    assert found["amber/1"] and found["amber/3"] == found["amber/1"]  # the yes/no questions on the same image
    assert found["amber/2"] is None
    assert [str(p) for p in parsed.problems] == [f"amber image AMBER_2.jpg: image 'AMBER_2.jpg' is not in {images}"]


def test_bad_records_are_named_and_the_good_ones_still_go_in(tmp_path):
    annotations = ANNOTATIONS + [{"id": 7, "type": "discriminative-hallucination", "truth": "maybe"},
                                 {"id": 8, "type": "generative", "truth": ["unicorn"], "hallu": []}]
    queries = QUERIES + [{"id": 7, "image": "AMBER_3.jpg", "query": "Is there a cat?"},
                         {"id": 8, "image": "AMBER_3.jpg", "query": "Describe this image."},
                         {"id": 9, "image": "AMBER_3.jpg", "query": "Is there a dog?"}]
    parsed = read_amber(write_amber(tmp_path, annotations, queries) / "annotations.json")
    assert len(parsed.samples) == 6
    reasons = [str(p) for p in parsed.problems if p.fatal]
    assert reasons == ["annotations.json record 7 (id 7): truth 'maybe' is not yes or no",
                       "annotations.json record 8 (id 8): objects not in relation.json: ['unicorn']",
                       "query id 9: no annotation with this id"]
    with pytest.raises(FileNotFoundError, match="not AMBER's data"):
        read_amber(tmp_path / "nowhere")
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"question_id": 1, "text": "A dog."}\n')
    with pytest.raises(FileNotFoundError, match="read by --format llava --benchmark amber"):
        read_amber(answers)


def test_responses_in_ambers_format_match_the_stored_samples_by_id(tmp_path):
    known = {s.id for s in read_amber(write_amber(tmp_path)).samples}
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([{"id": 1, "response": "A dog."}, {"id": 3, "response": "No"},
                                {"id": 99, "response": "Yes"}, {"id": 3, "response": "Yes"}, {"id": 4}]))
    got = read_amber_responses(path, known, model="my-model")
    assert [(r.sample_id, r.text) for r in got.responses] == [("amber/1", "A dog."), ("amber/3", "No")]
    assert [r.model for r in got.runs] == ["my-model"] and got.runs[0].meta["toolkit"] == "AMBER"
    assert [str(p) for p in got.problems] == [
        "answers.json record 3: no stored sample of benchmark amber matches '99'",
        "answers.json record 4: a second response to amber/3",
        'answers.json record 5: needs "id" and a text "response"']
    assert read_amber_responses(path, known).runs[0].model == "answers"  # no --model: the file's name
    with pytest.raises(FatalImportError, match="import AMBER's data folder first"):
        read_amber_responses(path, {"pope/1"})


def _caption(sample_id: str, tmp_path: Path) -> Sample:
    return {s.id: s for s in read_amber(write_amber(tmp_path)).samples}[sample_id]


def test_the_first_related_word_in_ambers_order_marks_the_object_it_belongs_to(tmp_path):
    annotation = _caption("amber/1", tmp_path).meta["amber"]
    # "tree" is a truth object and also related to "forest", listed first: AMBER marks forest, not tree.
    read = read_caption(["tree", "puppy", "bush", "vehicle", "cat", "cat", "sky", "sofa"], annotation)
    assert read["covered"] == ["dog", "forest"]
    assert read["counted"] == ["tree", "puppy", "bush", "vehicle", "cat", "cat", "sky"]  # sofa: not AMBER's word
    assert read["hallucinated"] == ["vehicle", "cat", "cat", "sky"]  # bush: a safe word, counted, never hallucinated
    assert read["marked"] == ["cat", "car"]


def test_generative_numbers_are_ambers_sums_over_all_descriptions(tmp_path):
    samples = {s.id: s for s in read_amber(write_amber(tmp_path)).samples}
    metric = AmberMetric(nouns=nouns)
    results = metric.update_many([ScoringItem("r1", "A puppy on the grass near a cat.", samples["amber/1"]),
                                  ScoringItem("r2", "blue sky", samples["amber/2"])])
    assert results[0].values["hallucinated"] == ["cat"] and results[1].values["hallucinated"] == []
    out = metric.compute([r.stats for r in results])
    assert out["chair"] == pytest.approx(100 * 1 / 4)  # puppy, grass, cat, sky counted; cat hallucinated
    assert out["cover"] == pytest.approx(100 * 3 / 5)  # dog (by puppy), grass and sky of 4 + 1 truth objects
    assert out["hal"] == 50.0 and out["cog"] == pytest.approx(100 * 1 / 3) and out["responses"] == 2


def test_yes_no_answers_count_only_when_exactly_yes_or_no_and_f1_is_taken_from_rounded_rates(tmp_path):
    samples = {s.id: s for s in read_amber(write_amber(tmp_path)).samples}
    metric = AmberMetric(nouns=nouns)
    answers = {"amber/3": "No", "amber/4": "yes", "amber/5": "No", "amber/6": "No"}
    results = [metric.update(ScoringItem(f"r{i}", text, samples[sid])) for i, (sid, text) in enumerate(answers.items())]
    assert [r.values["correct"] for r in results] == [True, False, True, False]  # "yes" is not AMBER's "Yes"
    out = metric.compute([r.stats for r in results])
    assert (out["accuracy"], out["precision"], out["recall"]) == (50.0, pytest.approx(100 * 2 / 3), 100.0)
    p, r = round(100 * 2 / 3, 1) / 100, 1.0
    assert out["f1"] == pytest.approx(100 * 2 * p * r / (p + r + 0.0001))
    assert out["existence.accuracy"] == 100.0 and out["existence.f1"] == pytest.approx(100 * 2 / (2 + 0.001))
    assert out["number.accuracy"] == 0.0 and "number.precision" not in out  # no "No" said: no precision
    assert out["relation.accuracy"] == 50.0 and out["questions"] == 4
    assert "chair" not in out


def test_samples_without_ambers_annotation_are_not_scored():
    metric = AmberMetric(nouns=nouns)
    plain = Sample(id="coco/1", benchmark="coco", image_key="1")
    assert metric.spec.not_applicable(plain).startswith("amber scores AMBER's samples")
    assert metric.spec.reads_concepts is False


def test_nouns_are_lemmatized_as_nltks_wordnet_lemmatizer_reads_them():
    from hallu_studio.lexicon.wordnet import load_wordnet

    wn = load_wordnet()
    if wn is None:
        pytest.skip("WordNet is not installed")
    # NLTK keeps the shortest form WordNet knows, the first of equal length, and keeps case.
    assert [wn.morphy_shortest(w) for w in ("leaves", "glasses", "men", "Dogs", "dogs", "geese", "buses", "xyzs")] == \
        ["leaf", "glass", "men", "Dogs", "dog", "goose", "bus", "xyzs"]


def test_import_score_and_leaderboard_show_ambers_numbers_per_dimension(tmp_path, capsys):
    from hallu_studio.cli import main

    db = str(tmp_path / "s.duckdb")
    data = write_amber(tmp_path)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"id": 1, "response": "A dog sits on the grass beside a cat."},
                                   {"id": 2, "response": "The sky."}, {"id": 3, "response": "No"},
                                   {"id": 4, "response": "Yes"}, {"id": 5, "response": "Yes"},
                                   {"id": 6, "response": "No"}]))
    assert main(["import", "--db", db, "--format", "amber", str(data)]) == 0
    assert main(["import", "--db", db, "--format", "amber", str(answers), "--model", "m"]) == 0
    assert main(["score", "--db", db, "--metrics", "amber", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--format", "jsonl", "--n-boot", "20"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    board = {f"{r['split']}.{r['key']}" if r.get("split") else r["key"]: r["value"] for r in rows}
    # dog, grass, cat, sky counted; cat hallucinated and marks cat; dog, grass, sky covered of 4 + 1
    assert (board["chair"], board["cover"], board["hal"], board["cog"]) == (25.0, 60.0, 50.0, pytest.approx(100 / 3))
    assert board["accuracy"] == 50.0 and board["existence.f1"] == pytest.approx(100 * 2 / 2.001)
    assert board["relation.f1"] == 0.0 and board["attribute.accuracy"] == 100.0
    assert "attribute.f1" not in board  # no "No" answered: precision undefined (AMBER's 0.001 start prints 0.0)
    assert [r["n"] for r in rows if r.get("split") == "relation" and r["key"] == "f1"] == [2]  # that dimension's


def test_the_metrics_worked_example_runs():
    import doctest

    import hallu_studio.metrics.amber as module

    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_words_judged_alike_cover_truth_objects_and_mark_hallu_objects_as_ambers_vector_check_does(tmp_path):
    annotation = _caption("amber/1", tmp_path).meta["amber"]
    alike = {frozenset(p) for p in (("sky", "dog"), ("vehicle", "cat"), ("sky", "car"))}

    def similar(a: str, b: str) -> bool:
        return a == b or frozenset((a, b)) in alike

    # sky: no truth word of this image, but alike to car (a hallu object): marks car; and alike to dog (a truth
    # object): covers dog, and is no hallucination. vehicle: car's related word, exactly: marks car; it is alike to
    # cat too, but the first hallu word alike to it in AMBER's order is itself (car's words come before the
    # objects), so cat stays unmarked; hallucinated.
    read = read_caption(["sky", "vehicle"], annotation, similar)
    assert (read["covered"], read["hallucinated"], read["marked"]) == (["dog"], ["vehicle"], ["car"])
    assert read_caption(["sky", "vehicle"], annotation)["hallucinated"] == ["sky", "vehicle"]


def test_ambers_similarity_reads_a_spacy_models_word_vectors(tmp_path):
    import numpy as np
    import spacy

    from hallu_studio.metrics.amber_nouns import word_similarity

    nlp = spacy.blank("en")
    for word, vector in (("dog", [1.0, 0.0]), ("puppy", [0.9, 0.1]), ("cat", [0.0, 1.0])):
        nlp.vocab.set_vector(word, np.asarray(vector, dtype="float32"))
    nlp.to_disk(tmp_path / "vectors")
    similar = word_similarity(str(tmp_path / "vectors"))
    assert [similar("dog", "puppy"), similar("dog", "cat"), similar("unicorn", "unicorn"), similar("unicorn", "dog")] \
        == [True, False, True, False]
    assert word_similarity("same-word") is None
    with pytest.raises(RuntimeError, match="en_core_web_lg, which is not installed here"):
        word_similarity("en_core_web_lg")


@pytest.mark.slow
def test_ambers_object_lists_feed_tri_he_halfscore_emd_and_chair(tmp_path):
    from hallu_studio.config import Settings
    from hallu_studio.importers.registry import ImportRequest
    from hallu_studio.pipelines.importing import import_format
    from hallu_studio.pipelines.scoring import score_store
    from hallu_studio.store import Store

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"id": 1, "response": "A dog lies on the grass next to a cat and a car."}]))
    store = Store(tmp_path / "s.duckdb")
    try:
        import_format(store, "amber", ImportRequest(path=write_amber(tmp_path)))
        import_format(store, "amber", ImportRequest(path=answers, model="m"))
        score_store(store, Settings(), ["trihe", "halfscore", "emd", "chair"], progress=False)
        scores = {m: [score for _, score in store.iter_scores(m, with_evidence=True)]
                  for m in ("trihe", "halfscore", "emd", "chair")}
    finally:
        store.close()
    assert all(len(scores[m]) == 1 and scores[m][0].undefined_reason is None for m in scores), scores
    assert "an object list complete within custom (7 names)" in scores["trihe"][0].evidence["scope"]
    assert sorted(scores["chair"][0].evidence["hallucinated"]) == ["car", "cat"]


def test_the_shipped_tagger_model_is_nltks_english_model_unchanged():
    """The model ships in the package (lexicon/perceptron_tagger_eng/README.md gives the digests and their source),
    so AMBER's reading needs no NLTK download."""
    import gzip
    import hashlib

    from hallu_studio.metrics.amber_nouns import TAGGER_DIR

    readme = (TAGGER_DIR / "README.md").read_text()
    for part in ("weights", "tagdict", "classes"):
        name = f"averaged_perceptron_tagger_eng.{part}.json"
        digest = hashlib.sha256(gzip.decompress((TAGGER_DIR / f"{name}.gz").read_bytes())).hexdigest()
        assert f"{digest}  {name}" in readme
    assert "Apache License" in (TAGGER_DIR / "LICENSE").read_text()


def test_nouns_are_tagged_by_nltks_perceptron_tagger_with_the_shipped_model():
    from hallu_studio.metrics.amber_nouns import tagged_words

    assert tagged_words(["A dog sits on the grass near a red car. Two men walk."]) == [[
        ("A", "DT"), ("dog", "NN"), ("sits", "VBZ"), ("on", "IN"), ("the", "DT"), ("grass", "NN"), ("near", "IN"),
        ("a", "DT"), ("red", "JJ"), ("car", "NN"), (".", "."), ("Two", "CD"), ("men", "NNS"), ("walk", "VBP"),
        (".", ".")]]


def test_the_tagger_is_a_setting_and_its_name_enters_the_config_key():
    from hallu_studio.config import Settings

    settings = Settings()
    assert settings.scoring.amber_tagger == "nltk"
    assert AmberMetric.from_settings(settings).config()["nouns"] == "nltk"
    assert AmberMetric(tagger="spacy").config()["nouns"] == "spacy"
    with pytest.raises(ValueError, match="unknown AMBER noun tagger 'flair'"):
        AmberMetric(tagger="flair")
