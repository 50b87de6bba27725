"""Readers of human judgements made elsewhere (importers.human), on tiny examples written here."""

import json

import pytest

from hallu_studio.importers.human import detect_study, read_human_judgements
from hallu_studio.importers.human.faithscore import label_direction, read_faithscore
from hallu_studio.importers.human.haelm import read_haelm
from hallu_studio.importers.human.iiw400 import read_iiw400, side_by_side_score
from hallu_studio.importers.human.mhaldetect import read_mhaldetect
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.model import HumanEvent, ValidationError, check_judgement_value


def _jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _haelm_line(ref, caption, output):
    return {"instruction": f"reference captions:\n{ref}\nour caption:\n{caption} Is our caption accurate?\n",
            "output": output}


# --------------------------------------------------------------------------- data model


@pytest.mark.parametrize("kind, value, target, message", [
    ("label", {"label": "wrong"}, "", "label must be one of"),
    ("label", {"label": "accurate"}, "span:1-2", "target must be empty"),
    ("span_label", {"start": 3, "end": 3, "label": "hallucinated"}, "span:3-3", "0 <= start < end"),
    ("span_label", {"start": 1, "end": 4, "label": "hallucinated"}, "span:1-5", "target must be 'span:1-4'"),
    ("span_label", {"start": "1", "end": 4, "label": "hallucinated"}, "span:1-4", "integer start and end"),
    ("fact_label", {"fact": " ", "label": "accurate"}, "fact:0", "the fact's text"),
    ("fact_label", {"fact": "A dog.", "label": "accurate"}, "fact:x", "fact:<index>"),
    ("comparison", {"other": "human", "aspect": "hallucination", "score": 3}, "vs:human:hallucination", "-2..2"),
    ("comparison", {"other": "", "aspect": "hallucination", "score": 1}, "vs::hallucination", "'other'"),
    ("label", "hallucinated", "", "must be an object"),
])
def test_outside_study_judgements_are_validated_with_the_reason(kind, value, target, message):
    with pytest.raises(ValidationError, match=message):
        check_judgement_value(kind, value, target)
    with pytest.raises(ValidationError):
        HumanEvent("study", kind, "r1", value, target=target, source="study")


def test_valid_outside_study_judgements_make_events():
    events = [HumanEvent("s", "label", "r", {"label": "unsure"}, source="s"),
              HumanEvent("s", "span_label", "r", {"start": 0, "end": 4, "label": "hallucinated", "text": "A ca"},
                         target="span:0-4", source="s"),
              HumanEvent("s", "fact_label", "r", {"fact": "There is a cat.", "label": "accurate"}, target="fact:2",
                         source="s"),
              HumanEvent("s", "comparison", "r", {"other": "human", "aspect": "hallucination", "score": -2},
                         target="vs:human:hallucination", source="s")]
    assert [e.kind for e in events] == ["label", "span_label", "fact_label", "comparison"]


# --------------------------------------------------------------------------- HaELM


def test_haelm_groups_the_lines_of_a_caption_and_numbers_each_images_captions(tmp_path):
    rows = [_haelm_line("A dog on grass.", "A dog runs on the grass.", "yes"),
            _haelm_line("A brown dog outside.", "A dog runs on the grass.", "yes"),
            _haelm_line("A dog on grass.", "A cat sleeps on a sofa.", "no"),
            _haelm_line("A brown dog outside.", "A cat sleeps on a sofa.", "no"),
            _haelm_line("A red bus.", "A bus with people.", "no"),
            "{not json",
            _haelm_line("A red bus.", "A bus parked near a tree.", "maybe")]
    study = read_haelm(_jsonl(tmp_path / "eval_data.jsonl", rows))
    assert study.source == "haelm"
    by_id = {s.id: s for s in study.benchmark.samples}
    assert len(by_id) == 2
    dog = next(s for s in by_id.values() if "A dog on grass." in s.reference_text)
    assert dog.reference_text == ["A dog on grass.", "A brown dog outside."] and dog.task == "caption"
    models = {r.id: r.model for r in study.responses.runs}
    texts = {r.text: models[r.run_id] for r in study.responses.responses}
    assert texts == {"A dog runs on the grass.": "haelm-lvlm-1", "A cat sleeps on a sofa.": "haelm-lvlm-2",
                     "A bus with people.": "haelm-lvlm-1"}
    labels = {e.response_id: e.value["label"] for e in study.events}
    by_text = {r.text: labels[r.id] for r in study.responses.responses}
    assert by_text == {"A dog runs on the grass.": "accurate", "A cat sleeps on a sofa.": "hallucinated",
                       "A bus with people.": "hallucinated"}
    assert all(e.source == "haelm" and e.kind == "label" for e in study.events)
    problems = [str(p) for p in study.problems]
    assert problems == ["eval_data.jsonl line 6: not valid JSON at column 2: expecting property name enclosed in double "
                        "quotes; found 'n' in '{not json'",
                        "eval_data.jsonl line 7: output must be 'yes' or 'no', got 'maybe'"]


def test_haelm_lines_of_one_caption_that_disagree_are_a_problem_and_later_captions_keep_their_model(tmp_path):
    rows = [_haelm_line("A dog.", "A dog sits.", "yes"), _haelm_line("A puppy.", "A dog sits.", "no"),
            _haelm_line("A dog.", "A dog with a ball.", "yes"), _haelm_line("A puppy.", "A dog with a ball.", "yes"),
            {"instruction": "describe it", "output": "yes"}]
    study = read_haelm(_jsonl(tmp_path / "eval_data.jsonl", rows))
    assert [str(p) for p in study.problems] == [
        "eval_data.jsonl line 5: instruction does not start 'reference captions:' ... 'our caption:'",
        "eval_data.jsonl lines 1-2: the lines of one caption disagree on the label (yes, no)"]
    assert [r.model for r in study.responses.runs] == ["haelm-lvlm-2"]


# --------------------------------------------------------------------------- M-HalDetect


def _mhal_row(rid, image, text, spans):
    return {"id": rid, "image_path": f"COCO_val2014_{image:012d}.jpg", "prompt": "<image>\nDescribe the image.",
            "test_solution": text, "original_solution": None, "hallucinated_solution": None,
            "hallucination_spans": spans}


def test_mhaldetect_spans_are_checked_against_the_text_and_repeats_add_nothing(tmp_path):
    text = "A man rides a horse. A dog barks at him."
    rows = [_mhal_row("m1", 42, text, [{"start": 21, "end": 40, "text": "A dog barks at him."}]),
            _mhal_row("m1", 42, text, [{"start": 21, "end": 40, "text": "A dog barks at him."}]),
            _mhal_row("m2", 42, "Two horses stand.", []),
            _mhal_row("m3", 7, "A kite in the sky.", [{"start": 2, "end": 6, "text": "kite"},
                                                      {"start": 5, "end": 99},
                                                      {"start": 0, "end": 1, "text": "B"}]),
            _mhal_row("m2", 42, "Two horses stand!", [])]
    (tmp_path / "processed_mhal_dataset.json").write_text(json.dumps(rows))
    (tmp_path / "coco_objects_for_these_images.json").write_text(json.dumps({"42": ["person", "horse"]}))
    study = read_mhaldetect(tmp_path)
    samples = {s.id: s for s in study.benchmark.samples}
    assert sorted(samples) == ["mhaldetect/m1", "mhaldetect/m2", "mhaldetect/m3"]
    assert samples["mhaldetect/m1"].reference_objects == ["person", "horse"]
    assert samples["mhaldetect/m1"].reference_vocabulary == "coco-80"
    assert samples["mhaldetect/m1"].question == "Describe the image." and samples["mhaldetect/m1"].image_key == "42"
    assert samples["mhaldetect/m3"].reference_objects is None  # image 7 is not in the object file: a warning
    assert [r.model for r in study.responses.runs] == ["InstructBLIP"]
    spans = sorted((e.value["start"], e.value["end"], e.value["text"]) for e in study.events if e.kind == "span_label")
    assert spans == [(2, 6, "kite"), (21, 40, "A dog barks at him.")]
    by_response = {r.id: r.sample_id for r in study.responses.responses}
    labels = {by_response[e.response_id]: e.value["label"] for e in study.events if e.kind == "label"}
    assert labels == {"mhaldetect/m1": "hallucinated", "mhaldetect/m2": "accurate", "mhaldetect/m3": "hallucinated"}
    problems = [str(p) for p in study.problems]
    assert "processed_mhal_dataset.json row 3 (m3) span 1: offsets 5-99 fall outside the description (18 characters)" \
        in problems
    assert any("row 3 (m3) span 2: its text 'B' differs from the description at 0-1" in p for p in problems)
    assert "processed_mhal_dataset.json row 4 (m2): id m2 appears again with different content" in problems
    warnings = [str(p) for p in study.benchmark.problems if not p.fatal]
    assert warnings == ["processed_mhal_dataset.json row 3 (m3): COCO image 7 is not in "
                        "coco_objects_for_these_images.json: no reference objects"]


# --------------------------------------------------------------------------- FaithScore


def _faith_rows():
    # Image 1 holds a dog and a person; image 2 a cat. Label 1 = correct in this data, as in FaithScore's.
    rows = []
    for image, present, absent in (("000000000001", "dog", "cat"), ("000000000002", "cat", "dog")):
        for k in range(3):
            facts = {f"There is a {present}.": 1, f"There is a {absent}.": 0, "The sky is blue.": 1,
                     f"A {present} is sleeping {k}.": 0}
            rows.append({"id": image, "answer": f"A {present} and a {absent}, answer {k}.", "stage 1": {}, "stage 2": facts})
    return rows * 2  # a second pass: a second model answering the same three questions


def test_faithscore_label_direction_is_read_off_the_data():
    facts = [("1", "There is a dog.", 1), ("1", "There is a cat.", 0)] * 10
    assert label_direction(facts, {"1": ["dog"]}).correct_value == 1
    flipped = [(i, f, 1 - label) for i, f, label in facts]
    direction = label_direction(flipped, {"1": ["dog"]})
    assert (direction.correct_value, direction.agreeing, direction.facts) == (0, 20, 20)
    with pytest.raises(FatalImportError, match="cannot tell what FaithScore's labels mean"):
        label_direction(facts[:6], {"1": ["dog"]})  # too little evidence
    with pytest.raises(FatalImportError, match="10 of 20"):
        label_direction([("1", "There is a dog.", k % 2) for k in range(20)], {"1": ["dog"]})  # no direction


def test_faithscore_answers_become_two_models_three_questions_and_fact_labels(tmp_path):
    _jsonl(tmp_path / "annotation.jsonl", _faith_rows() + [{"id": "3", "answer": "x", "stage 2": {"A": 2}}])
    (tmp_path / "coco_objects_for_these_images.json").write_text(json.dumps({"1": ["dog", "person"], "2": ["cat"]}))
    study = read_faithscore(tmp_path)
    assert sorted(s.id for s in study.benchmark.samples) == [f"faithscore/{i}/q{k}" for i in (1, 2) for k in range(3)]
    assert {r.model for r in study.responses.runs} == {"faithscore-lvlm-1", "faithscore-lvlm-2"}
    assert len(study.responses.responses) == 12
    facts = [e for e in study.events if e.kind == "fact_label"]
    assert len(facts) == 48 and all(e.target.startswith("fact:") for e in facts)
    cat_on_1 = {e.value["label"] for e in facts if e.value["fact"] == "There is a cat." and e.meta["raw_label"] == 0}
    assert cat_on_1 == {"hallucinated"}
    assert {e.value["label"] for e in facts if e.value["fact"] == "The sky is blue."} == {"accurate"}
    assert study.benchmark.samples[0].reference_vocabulary == "coco-80"
    assert [str(p) for p in study.problems if p.fatal] == [
        "annotation.jsonl line 13: 'stage 2' must map each atomic fact to 0 or 1"]
    assert "stage-2 label 1 read as 'correct': on 24 of 24" in str(next(p for p in study.problems if not p.fatal))


def test_faithscore_needs_its_object_sets(tmp_path):
    _jsonl(tmp_path / "annotation.jsonl", _faith_rows())
    with pytest.raises(FatalImportError, match="COCO object sets are needed"):
        read_faithscore(tmp_path)


# --------------------------------------------------------------------------- IIW-400


def test_iiw400_comparisons_and_references(tmp_path):
    ratings = {"metrics/Hallucination": "IIW-Human is substantially better", "metrics/Human Like": "Neutral",
               "metrics/Specificity": "IIW-P5B is marginally better", "metrics/Odd": "Both are fine"}
    rows = [{"image/key": "k1", "IIW": "A red kite over a beach.", "IIW-P5B": "A kite and two dogs on sand.",
             "iiw-human-sxs-iiw-p5b": ratings, "iiw-human-sxs-gpt4v": {"metrics/Hallucination": "Neutral"},
             "objects": [{"label": "Kite", "description": "A red kite with a long tail.",
                          "normalized_coords": ["1", "2", "300", "400"]}]},
            {"image/key": "k2", "IIW": "A quiet street.", "objects": []},
            {"IIW": "no key"}]
    study = read_iiw400(_jsonl(tmp_path / "data.jsonl", rows))
    samples = {s.id: s for s in study.benchmark.samples}
    assert samples["iiw400/k1"].reference_text == "A red kite over a beach.\n\nKite. A red kite with a long tail."
    assert samples["iiw400/k1"].meta["objects"][0]["label"] == "Kite" and "iiw400/k2" in samples
    assert [r.model for r in study.responses.runs] == ["IIW-P5B"]
    scores = {e.value["aspect"]: (e.value["score"], e.target) for e in study.events}
    assert scores == {"hallucination": (-2, "vs:IIW-Human:hallucination"), "human like": (0, "vs:IIW-Human:human like"),
                      "specificity": (1, "vs:IIW-Human:specificity")}
    problems = [str(p) for p in study.problems + study.benchmark.problems]
    assert any("metrics/Odd: unknown side-by-side rating 'Both are fine'" in p for p in problems)
    assert "data.jsonl line 3: missing 'image/key'" in problems
    assert "data.jsonl: 1 iiw-human-sxs-gpt4v ratings left out: the GPT-4V descriptions they compare are not in " \
           "the file" in problems
    assert side_by_side_score("IIW-P5B is substantially better") == 2


# --------------------------------------------------------------------------- generic JSONL


def test_generic_jsonl_good_lines_go_through_and_a_bad_line_adds_nothing(tmp_path):
    base = {"source": "pilot", "sample_id": "img-1", "reference_objects": ["dog"], "reference_vocabulary": "coco-80",
            "model": "m1", "response": "A dog and a cat."}
    rows = [{**base, "annotator": "ann", "label": "hallucinated", "rating": 2,
             "spans": [{"start": 12, "end": 15, "label": "hallucinated"}],
             "facts": [{"fact": "There is a cat.", "label": "hallucinated"}],
             "comparisons": [{"other": "human", "aspect": "hallucination", "score": -1}]},
            {**base, "annotator": "bob", "label": "accurate",
             "spans": [{"start": 12, "end": 40, "label": "hallucinated"}]},
            {**base, "sample_id": "img-2", "response": "Two dogs.", "annotator": "bob", "rating": 9},
            {**base, "reference_objects": ["cat"], "annotator": "cy", "label": "accurate"},
            {**base, "source": "other", "label": "accurate"},
            {"source": "pilot", "response_id": "resp-123", "label": "accurate"},
            {"source": "pilot", "response_id": "resp-123", "model": "m1", "label": "accurate"},
            {**base, "sample_id": "img-3"}]
    study = read_human_judgements(_jsonl(tmp_path / "pilot.jsonl", rows))
    assert study.source == "pilot"
    assert [s.id for s in study.benchmark.samples] == ["pilot/img-1"]  # img-2's only line failed: nothing of it
    kinds = sorted((e.annotator, e.kind) for e in study.events)
    assert kinds == [("ann", "comparison"), ("ann", "fact_label"), ("ann", "label"), ("ann", "rating"),
                     ("ann", "span_label"), ("pilot", "label")]
    span = next(e for e in study.events if e.kind == "span_label")
    assert span.value == {"start": 12, "end": 15, "label": "hallucinated", "text": "cat"}
    assert next(e for e in study.events if e.annotator == "pilot").response_id == "resp-123"
    problems = [str(p) for p in study.problems]
    assert problems == [
        "pilot.jsonl line 2: spans[0] ends at 40, after the response's 16 characters",
        "pilot.jsonl line 3: a rating must be an integer 1-5, got 9",
        "pilot.jsonl line 4: sample pilot/img-1 appears again with different content",
        "pilot.jsonl line 5: source 'other' differs from the first line's ('pilot'); one file holds one study",
        "pilot.jsonl line 7: give either response_id (a stored response) or the sample and response (model), not both",
        "pilot.jsonl line 8: no judgement: give at least one of label, rating, spans, facts, comparisons"]


def test_generic_jsonl_refuses_the_app_as_source(tmp_path):
    with pytest.raises(FatalImportError, match="'source' must name the study"):
        read_human_judgements(_jsonl(tmp_path / "x.jsonl", [{"source": "app", "response_id": "r", "label": "accurate"}]))


# --------------------------------------------------------------------------- detection


def test_detect_study_by_its_files(tmp_path):
    for name, file in (("haelm", "eval_data.jsonl"), ("iiw400", "data.jsonl"), ("faithscore", "annotation.jsonl")):
        (tmp_path / name).mkdir()
    _jsonl(tmp_path / "haelm" / "eval_data.jsonl", [_haelm_line("A.", "B.", "yes")])
    _jsonl(tmp_path / "iiw400" / "data.jsonl", [{"image/key": "k", "IIW": "text", "objects": []}])
    _jsonl(tmp_path / "faithscore" / "annotation.jsonl", _faith_rows()[:1])
    assert detect_study(tmp_path / "haelm")[0] == "haelm"
    assert detect_study(tmp_path / "iiw400")[0] == "iiw400"
    assert detect_study(tmp_path / "faithscore" / "annotation.jsonl")[0] == "faithscore"
    _jsonl(tmp_path / "study.jsonl", [{"source": "s", "response_id": "r", "label": "accurate"}])
    assert detect_study(tmp_path / "study.jsonl")[0] == "generic"
    with pytest.raises(FatalImportError, match="no human-judgement data file found"):
        detect_study(tmp_path)
    _jsonl(tmp_path / "other.jsonl", [{"a": 1}])
    with pytest.raises(FatalImportError, match="not a known human study"):
        detect_study(tmp_path / "other.jsonl")
    with pytest.raises(FileNotFoundError):
        detect_study(tmp_path / "missing")


def test_generic_jsonl_marks_human_written_outputs(tmp_path):
    base = {"source": "caps", "sample_id": "img-1", "reference_text": "A dog.", "label": "accurate"}
    rows = [{**base, "model": "people", "written_by": "human", "response": "A dog sits."},
            {**base, "model": "llava", "response": "A dog and a cat."},
            {**base, "sample_id": "img-2", "model": "people", "response": "Grass.", "written_by": "model"},
            {**base, "sample_id": "img-3", "model": "x", "response": "Y.", "written_by": "robot"}]
    study = read_human_judgements(_jsonl(tmp_path / "caps.jsonl", rows))
    assert {r.model: r.meta for r in study.responses.runs} == {"people": {"written_by": "human"}, "llava": {}}
    assert [str(p) for p in study.problems] == [
        "caps.jsonl line 3: written_by of 'people' differs from an earlier line's ('human')",
        "caps.jsonl line 4: written_by must be 'human' or 'model', got 'robot'"]
