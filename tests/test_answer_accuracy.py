"""The answer-accuracy metric: option letters read as lmms-eval / VLMEvalKit read them, exact match as lmms-eval's
exact_match with ignore_case and ignore_punctuation, and what it leaves to Reefknot, Tri-HE and POPE."""

import pytest

from hallu_studio.metrics.answer_accuracy import AnswerAccuracyMetric, choice
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.registry import make_metric, metric_spec, not_applicable_reason
from hallu_studio.config import Settings
from hallu_studio.model import Sample

MCQ = Sample(id="b/1", benchmark="b", image_key="1", task="mcq", question="Which animal has fur?",
             options=["snake", "rabbit", "frog"], answer="B")


@pytest.mark.parametrize("response, letter", [
    ("B", "B"), (" b ", "B"), ("(B)", "B"), ("[B]", "B"), ("B.", "B"), ("B)", "B"), ("B: rabbit", "B"),
    ("B. rabbit", "B"), ("The answer is B.", "B"), ("Answer: (B)", "B"), ("A rabbit has fur.", "B"),
    ("rabbit", "B"), ("It is the Rabbit!", "B"), ("A", "A"), ("A. snake", "A"), ("B or C", None),
    ("D", None), ("I am not sure.", None), ("", None), ("snake or rabbit", None)])
def test_the_option_an_answer_chooses(response, letter):
    assert choice(response, "ABC", MCQ.options)[0] == letter


def test_mcq_scores_count_an_unread_answer_wrong_and_apart():
    metric = AnswerAccuracyMetric()
    results = [metric.update(ScoringItem(str(i), text, MCQ)) for i, text in enumerate(["B", "C", "no idea"])]
    assert [r.values["correct"] for r in results] == [True, False, False]
    assert results[2].evidence["method"] == "letter match: no option letter or option text found"
    assert metric.compute([r.stats for r in results]) == {"accuracy": 1 / 3, "unread": 1 / 3, "questions": 3.0}


def test_a_gold_written_as_the_options_text_is_its_letter():
    sample = Sample(id="b/2", benchmark="b", image_key="1", task="mcq", options=["snake", "rabbit"], answer="rabbit")
    assert AnswerAccuracyMetric().update(ScoringItem("r", "(B)", sample)).values["correct"] is True
    odd = Sample(id="b/3", benchmark="b", image_key="1", task="mcq", options=["snake", "rabbit"], answer="cat")
    result = AnswerAccuracyMetric().update(ScoringItem("r", "A", odd))
    assert result.undefined_reason == "the gold answer 'cat' is no option letter of A, B"


@pytest.mark.parametrize("response, gold, right", [
    ("Red", "red", True), ("red.", "Red", True), ("  RED ", "red", True), ("dark red", "red", False),
    ("the red one", "red", False),  # lmms-eval's exact_match keeps articles
    ("2", "two", False), ("Mr. Smith", "mr smith", True), ("rock-n-roll", "rocknroll", True)])
def test_short_answers_match_as_lmms_evals_exact_match(response, gold, right):
    sample = Sample(id="b/v", benchmark="b", image_key="1", task="vqa", question="q", answer=gold)
    assert AnswerAccuracyMetric().update(ScoringItem("r", response, sample)).values["correct"] is right


def test_any_listed_answer_counts():
    sample = Sample(id="b/v", benchmark="b", image_key="1", task="vqa", answer="2", meta={"answers": ["2", "two"]})
    assert AnswerAccuracyMetric().update(ScoringItem("r", "Two.", sample)).values["correct"] is True


def test_reefknot_tri_he_yes_no_and_ungolded_questions_are_not_its_own():
    reefknot = Sample(id="r/1", benchmark="r", image_key="1", task="mcq", answer="A", relation_category="perception")
    tri_he = Sample(id="t/1", benchmark="t", image_key="1", task="vqa", answer="a cat on a sofa",
                    gold_triplets=[("cat", "on", "sofa")])
    yes_no = Sample(id="p/1", benchmark="p", image_key="1", task="yes_no", answer="yes")
    open_ = Sample(id="o/1", benchmark="o", image_key="1", task="vqa", question="q")
    assert not_applicable_reason("accuracy", reefknot).startswith("a Reefknot relation question")
    assert not_applicable_reason("accuracy", tri_he).startswith("a Tri-HE open question")
    assert not_applicable_reason("accuracy", yes_no) == "accuracy does not score yes_no samples"
    assert not_applicable_reason("accuracy", open_) == "the question has no gold answer"


def test_registered_with_a_full_spec():
    spec = metric_spec("accuracy")
    assert spec.tasks == ("mcq", "vqa") and spec.headline.key == "accuracy" and not spec.headline.lower_is_better
    assert make_metric("accuracy", Settings()).config()["metric"] == "accuracy"
