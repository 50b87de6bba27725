"""``--format mme-eval-tool``: MME's eval-tool answer files in, MME's published numbers out."""

from __future__ import annotations

import pytest

from conftest import shared_dataset
from hallu_studio.cli import main
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.pipelines.importing import import_format
from test_vlmevalkit import _leaderboard


def _write(folder, name, lines):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("".join("\t".join(line) + "\n" for line in lines), encoding="utf-8")


def test_lines_become_questions_two_per_image_and_a_changed_question_is_refused(store, tmp_path):
    folder = tmp_path / "llava-v1.5-7b"
    _write(folder, "existence.txt", [("1.jpg", "Is there a dog?", "Yes", "Yes"), ("1.jpg", "Is there a cat?", "No", "No"),
                                     ("2.jpg", "Is there a car?", "Yes", "No")])
    _write(folder, "OCR.txt", [("1.jpg", "Does it say stop?", "Maybe", "Yes")])
    reports = import_format(store, "mme-eval-tool", ImportRequest(folder))
    assert [r.added for r in reports] == [3, 3] and [str(p) for p in reports[0].problems] == [
        "OCR.txt line 1: gold answer 'Maybe' is not Yes or No"]
    s = store.get_samples(["mme-eval-tool/existence/1.jpg/1"])["mme-eval-tool/existence/1.jpg/1"]
    assert (s.image_key, s.meta, s.answer) == ("existence/1.jpg", {"category": "existence", "questions_of_image": 2},
                                               "no")
    assert store.list_runs()[0]["model"] == "llava-v1.5-7b"
    _write(folder, "existence.txt", [("1.jpg", "Is there a  dog?", "Yes", "No"), ("1.jpg", "Is there a cow?", "No", "No")])
    (folder / "OCR.txt").unlink()
    reports = import_format(store, "mme-eval-tool", ImportRequest(folder, model="other"))
    assert [str(p) for p in reports[0].problems] == [
        "existence.txt line 2: refused: its question 'Is there a cow?' differs from stored sample "
        "mme-eval-tool/existence/1.jpg/1's 'Is there a cat?'"]
    assert reports[0].added == 1  # the whitespace-only difference is the same question
    with pytest.raises(FatalImportError, match="no MME eval-tool file"):
        list(import_format(store, "mme-eval-tool", ImportRequest(tmp_path)))


@pytest.mark.slow
def test_llava_answers_reproduce_mme_perception_and_cognition(tmp_path, capsys):
    folder = shared_dataset("toolkits", "haoming-vlm-benchmarks", "mme_eval_tool_llava-v1.5-7b")
    db = tmp_path / "s.duckdb"
    assert main(["import", "--format", "mme-eval-tool", str(folder), "--model", "llava-hf/llava-1.5-7b-hf",
                 "--db", str(db)]) == 0
    assert main(["score", "--metrics", "mme", "--db", str(db)]) == 0
    board = _leaderboard(db, capsys)
    model = "llava-hf/llava-1.5-7b-hf"
    assert round(board[(model, "mme", "perception")], 2) == 1508.67
    assert round(board[(model, "mme", "cognition")], 2) == 355.71
    assert round(board[(model, "mme", "score.landmark")], 2) == 162.81  # MME_results.txt: 162.8140703517588
