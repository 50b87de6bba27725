"""VLMEvalKit's multiple-choice accuracies reproduced: its exact-matching reading (``can_infer``) as the answer-accuracy
metric's ``vlmevalkit`` reading, its recorded verdicts where its judge settled a row, and its per-category numbers.

The real files are VLMEvalKit's own (``git show c03bc048:assets/benchmarks/vila_8b/<file>`` of
open-compass/VLMEvalKit: vila_8b_ScienceQA_VAL.xlsx, its _openai_result.xlsx and _acc.csv, vila_8b_MMStar.xlsx and
_acc.csv) in ``$HALLU_STUDIO_VLMEVALKIT_ASSETS`` (default /tmp/vlmevalkit-assets); the tests skip without them.
"""

from __future__ import annotations

import csv
import io
import os
import string
from pathlib import Path

import pandas as pd
import pytest

from hallu_studio.cli import main
from hallu_studio.config import Settings
from hallu_studio.metrics.answer_accuracy import AnswerAccuracyMetric
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.registry import make_metric
from hallu_studio.metrics.vlmevalkit_reading import vlmevalkit_choice
from hallu_studio.model import Sample

ASSETS = Path(os.environ.get("HALLU_STUDIO_VLMEVALKIT_ASSETS", "/tmp/vlmevalkit-assets"))
VILA_8B = "Efficient-Large-Model/Llama-3-VILA1.5-8b"


def _asset(name: str) -> Path:
    path = ASSETS / name
    if not path.is_file():
        pytest.skip(f"{path} is not available (VLMEvalKit @ c03bc048, assets/benchmarks/vila_8b/)")
    return path


STATES = {"A": "a liquid", "B": "a gas", "C": "a solid"}


@pytest.mark.parametrize("answer, expected", [
    ("B", "B"), ("(C)", "C"), ("B. a gas", "B"), ("[A]: a liquid", "A"),
    ("It is a gas.", "B"),  # no letter: the one option text in the answer
    ("A gas. The answer: B.", "B"),  # letters A and B: no letter; then the text, "a gas" only
    ("A gas or a solid, B", None),  # two letters, two texts
    ("The answer is b.", None),  # "b" is no letter (case as written), and no option's text is there
    ("Maybe.", None), ("", None),
    ("Z", "Z"), ("Cannot determine the answer", "Z"),  # VLMEvalKit's "no option"
])
def test_vlmevalkit_choice_on_hand_written_answers(answer, expected):
    assert vlmevalkit_choice(answer, STATES) == expected


def test_vlmevalkit_choice_matches_option_text_inside_words_and_skips_lost_options():
    # "c" is in "carbon": option A's text "C" is found inside a word, as VLMEvalKit finds it.
    assert vlmevalkit_choice("It is carbon.", {"A": "C", "B": "C2", "C": "CCl4"}) == "A"
    # A lost option (empty cell) is no option: its empty text would be in every answer.
    assert vlmevalkit_choice("Two", {"A": "", "B": "Two", "C": "One"}) == "B"
    assert vlmevalkit_choice("E", {"A": "x", "B": "y"}) is None  # a letter of no option


def _mcq(**meta) -> Sample:
    return Sample(id="s/1", benchmark="s", image_key="1", task="mcq", question="Which?",
                  options=["a liquid", "a gas", "a solid"], answer="B", meta=meta)


def test_the_toolkit_reading_is_vlmevalkits_on_its_tables_only():
    metric = make_metric("accuracy", Settings())
    assert metric.config()["reading"] == "toolkit"
    answer = "A balloon holds air. The answer: B."
    ours = metric.update(ScoringItem("r", answer, _mcq()))
    theirs = metric.update(ScoringItem("r", answer, _mcq(vlmevalkit_dataset="ScienceQA_VAL")))
    assert ours.values["correct"] is True  # the article "A" is no choice for the studio
    assert theirs.values["correct"] is False and theirs.evidence["parsed_answer"] is None
    assert "can_infer" in theirs.evidence["method"]
    assert AnswerAccuracyMetric("studio").update(ScoringItem("r", answer, _mcq(vlmevalkit_dataset="x"))).values[
        "correct"] is True
    with pytest.raises(ValueError, match="unknown answer-accuracy reading"):
        AnswerAccuracyMetric("lenient")


def test_a_verdict_vlmevalkits_judge_recorded_settles_a_row_its_rule_cannot():
    metric = AnswerAccuracyMetric("vlmevalkit")
    unread = "Neither liquid nor solid, I think."
    judged = metric.update(ScoringItem("r", unread, _mcq(), signals={"vlmevalkit": {"hit": "1", "log": "B"}}))
    assert judged.values["correct"] is True and "recorded verdict" in judged.evidence["method"]
    assert "not HalluStudio's" in judged.evidence["method"]
    failed = metric.update(ScoringItem("r", unread, _mcq(), signals={"vlmevalkit": {
        "hit": "1", "log": "Match Log: Failed in Prefetch, no GPT-based answer matching"}}))
    assert failed.values["correct"] is False  # exact matching found nothing: never a judge's verdict
    # Where the rule reads the answer, the rule decides, whatever the row records.
    read = metric.update(ScoringItem("r", "C", _mcq(), signals={"vlmevalkit": {"hit": "1", "log": "x"}}))
    assert read.values["correct"] is False and read.evidence["parsed_answer"] == "C"


def test_accuracy_breaks_down_by_category_and_l2_category():
    metric = AnswerAccuracyMetric()
    stats = [metric.update(ScoringItem(str(i), said, _mcq(category=c, **{"l2-category": l2}))).stats
             for i, (said, c, l2) in enumerate([("B", "math", "algebra"), ("A", "math", "geometry"),
                                                ("B", "art", "geometry")])]
    out = metric.compute(stats)
    assert out["accuracy"] == pytest.approx(2 / 3) and out["math.accuracy"] == 0.5 and out["art.accuracy"] == 1.0
    assert out["geometry.accuracy"] == 0.5 and out["geometry.questions"] == 2.0 and out["algebra.accuracy"] == 1.0
    assert metric.spec.breakdown.parts(out) == ["algebra", "art", "geometry", "math"]


def test_the_reading_is_vlmevalkits_row_for_row_on_its_recorded_scienceqa_verdicts():
    frame = pd.read_excel(_asset("vila_8b_ScienceQA_VAL_openai_result.xlsx"))
    ours = []
    for _, row in frame.iterrows():
        options = {c: str(row[c]) for c in string.ascii_uppercase if c in frame and not pd.isna(row[c])}
        ours.append(int(vlmevalkit_choice("" if pd.isna(row["prediction"]) else str(row["prediction"]), options)
                        == row["answer"]))
    assert ours == list(frame["hit"])  # 2,097 verdicts (the studio's reading differs on 23)


def _board(tmp_path: Path, file: Path, capsys) -> dict[tuple[str, str], float]:
    db = tmp_path / "s.duckdb"
    assert main(["import", "--format", "vlmevalkit", str(file), "--db", str(db)]) == 0
    assert main(["score", "--metrics", "accuracy", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--format", "csv", "--n-boot", "20"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["model"] for r in rows} == {VILA_8B}
    return {(r["key"], r.get("split") or ""): float(r["value"]) for r in rows if r["metric"] == "accuracy"}


@pytest.mark.slow
@pytest.mark.parametrize("dataset, overall", [("ScienceQA_VAL", 0.7086), ("MMStar", 0.4167)])
def test_vlmevalkits_recorded_accuracies_overall_and_per_category(tmp_path, capsys, dataset, overall):
    recorded = list(csv.DictReader(_asset(f"vila_8b_{dataset}_acc.csv").open(encoding="utf-8")))
    board = _board(tmp_path, _asset(f"vila_8b_{dataset}.xlsx"), capsys)
    assert board[("accuracy", "")] == pytest.approx(overall, abs=0.0001)
    [row] = recorded
    for column, value in row.items():
        if column == "split":
            continue
        ours = board[("accuracy", "" if column == "Overall" else column)]
        assert ours == pytest.approx(float(value), abs=0.0001), column
    assert len(row) - 2 == sum(1 for key, part in board if key == "accuracy" and part)  # every category, no other


def test_vlmevalkits_no_option_counts_wrong_and_unread():
    result = AnswerAccuracyMetric("vlmevalkit").update(ScoringItem("r", "Cannot determine the answer.", _mcq()))
    assert result.values["correct"] is False and result.evidence["parsed_answer"] == "Z"
    assert result.stats["unread"] == 1.0
