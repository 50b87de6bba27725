"""One JSONL sample reader (issue 28): ``import --format jsonl`` and stateless ``score --input`` read a line's
sample with ``importers.jsonl.sample_from_record``, so the same file gets the same samples and the same errors,
each naming its line and the reason."""

from __future__ import annotations

import json

import pytest

from hallu_studio.cli import main
from hallu_studio.importers.jsonl import SCORING_KEYS, read_jsonl_samples, sample_from_record
from hallu_studio.model import ValidationError
from hallu_studio.store import Store

LINES = [
    '{"id": "own/1", "benchmark": "own", "image_key": "1", "reference_text": "A grey cat on a mat.", '
    '"response": "A grey cat on a red mat."}',
    '{"id": "own/2", "benchmark": "own", "reference_txt": "A dog.", "response": "A dog."}',  # a misspelt field
    '{"id": "own/3", "benchmark": "own", "reference_objects": ["dog"], "response": "A dog on grass."}',
    'not json',
    '{"benchmark": "own", "response": "No id."}',
    '{"id": "own/6", "benchmark": "own", "reference_kind": "long", "reference_text": "x", "response": "y"}',
    '{"id": "own/7", "benchmark": "own", "reference_objects": ["cat"], "response": "A cat.", "expect": 0, '
    '"source": {"row": 7}}',  # the user's own columns
]
# What both readers say of the bad lines (line number: reason).
BAD = {2: "sample 'own/2': unknown field 'reference_txt' (did you mean `reference_text`?)",
       4: "not valid JSON at column 1: expecting value; found 'n' in 'not json'",
       5: "missing field 'id'",
       6: "sample own/6: reference_kind must be one of"}


@pytest.fixture
def lines_file(tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def _reason(line: int, text: str) -> bool:
    return text.startswith(BAD[line])


def test_import_and_stateless_scoring_read_the_same_samples_and_refuse_the_same_lines(lines_file, tmp_path, capsys):
    [parsed] = read_jsonl_samples(lines_file)
    imported = {s.id: s for s in parsed.samples}
    assert sorted(imported) == ["own/1", "own/3", "own/7"]
    assert imported["own/7"].meta == {"expect": 0, "source": {"row": 7}} and imported["own/1"].meta == {}
    [warning] = [p for p in parsed.problems if not p.fatal]  # one warning for the file, naming the fields
    assert warning.reason == "fields no sample reads, kept in each sample's meta: ['expect', 'source']"
    problems = {int(p.record.rsplit(" ", 1)[1]): p.reason for p in parsed.problems if p.fatal}
    assert set(problems) == set(BAD) and all(_reason(n, m) for n, m in problems.items()), problems

    out = tmp_path / "out.jsonl"
    assert main(["score", "--input", str(lines_file), "--output", str(out), "--metrics", "chair,emd",
                 "--no-progress"]) == 1  # not every line went through
    records = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    errors = {r["line"]: r["error"] for r in records if "error" in r}
    assert set(errors) == set(BAD) and all(_reason(n, m) for n, m in errors.items()), errors
    err = capsys.readouterr().err
    assert "line 2 (id 'own/2'): sample 'own/2': unknown field 'reference_txt' (did you mean `reference_text`?)" \
        in err and "line 5: missing" in err
    assert err.count("passed through to the output lines as they are: ['expect', 'source']") == 1
    scored = {r["id"]: r for r in records if "error" not in r}
    assert sorted(scored) == ["own/1", "own/3", "own/7"]
    assert (scored["own/7"]["expect"], scored["own/7"]["source"]) == (0, {"row": 7})  # given back as they came
    assert "expect" not in scored["own/1"] and "errors" not in scored["own/7"] and "chair" in scored["own/7"]
    # the same sample fields: an object list alone, read as such by both
    assert imported["own/3"].reference_objects == ["dog"] and "undefined_reason" not in scored["own/3"]["emd"]
    assert scored["own/1"]["evidence"]["chair"]["hallucinated"] == []

    db = tmp_path / "s.duckdb"
    assert main(["import", "--db", str(db), "--format", "jsonl", str(lines_file)]) == 1  # problems: not all in
    err = capsys.readouterr().err
    assert "lines.jsonl line 2: sample 'own/2': unknown field 'reference_txt' (did you mean `reference_text`?)" in err
    store = Store(db, read_only=True)
    assert sorted(s.id for s in store.iter_samples()) == ["own/1", "own/3", "own/7"]
    assert {s.id: s.meta for s in store.iter_samples()}["own/7"] == {"expect": 0, "source": {"row": 7}}
    store.close()


def test_a_line_with_no_reference_is_read_and_the_metrics_that_need_one_say_so(tmp_path):
    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    path.write_text('{"id": "mine", "image": "cat.jpg", "response": "A cat on a sofa."}\n', encoding="utf-8")
    assert main(["score", "--input", str(path), "--output", str(out), "--metrics", "emd,trihe", "--no-progress"]) == 0
    [record] = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert record["emd"] == {"undefined_reason": "emd needs a scene graph, reference triplets, reference captions "
                                                 "or an object list"}
    assert record["trihe"]["undefined_reason"].startswith("trihe needs a scene graph")


def test_the_reader_defaults_and_refusals():
    sample = sample_from_record({"id": "7", "response": "x", "image": "a/b.jpg"}, benchmark="jsonl",
                                also=SCORING_KEYS)
    assert (sample.benchmark, sample.image_key, sample.task) == ("jsonl", "a/b.jpg", "caption")
    assert sample_from_record({"id": "b/1", "benchmark": "b"}).image_key == "b/1"
    with pytest.raises(ValidationError, match="missing field 'benchmark'"):
        sample_from_record({"id": "b/1"})
    # a field the caller does not read is the user's own: kept in meta (import reads no response from a samples line)
    assert sample_from_record({"id": "b/1", "benchmark": "b", "response": "x"}).meta == {"response": "x"}
    with pytest.raises(ValidationError, match="unknown field 'imagekey' \\(did you mean `image_key`\\?\\)"):
        sample_from_record({"id": "b/1", "benchmark": "b", "imagekey": "x"})
    with pytest.raises(ValidationError, match=r"fields \['note'\] are in 'meta' too"):
        sample_from_record({"id": "b/1", "benchmark": "b", "note": 1, "meta": {"note": 2}})
    with pytest.raises(ValidationError, match="expected a JSON object, got list"):
        sample_from_record([1])
    with pytest.raises(ValidationError, match="sample 'b/1': malformed field"):
        sample_from_record({"id": "b/1", "benchmark": "b", "scene_graph": {"objects": 3}})


def test_a_passed_through_field_named_as_an_output_field_is_that_lines_error(tmp_path):
    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    path.write_text('{"id": "a", "reference_objects": ["cat"], "response": "A cat.", "evidence": 1}\n'
                    '{"id": "b", "reference_objects": ["cat"], "response": "A cat.", "chair": 1}\n'
                    '{"id": "c", "reference_objects": ["cat"], "response": "A cat.", "note": "kept"}\n',
                    encoding="utf-8")
    assert main(["score", "--input", str(path), "--output", str(out), "--metrics", "chair", "--no-progress"]) == 1
    records = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert records["a"]["error"].startswith("fields ['evidence'] are names the output line uses")
    assert records["b"]["error"].startswith("fields ['chair'] are names the output line uses")
    assert records["c"]["note"] == "kept" and "error" not in records["c"]
