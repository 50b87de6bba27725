"""Reefknot: answer parsing, Halr / R_score, yes-ratio, entropy, and real benchmark rows."""

from __future__ import annotations

import itertools
import json
import math

import re

import pytest

from hallu_studio.judges.nli import NLIModel
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.reefknot import (
    BidirectionalEntailment,
    ReefknotMetric,
    RelationPhraseMatch,
    candidate_entropy,
    parse_choice,
    parse_vqa_prompt,
    parse_yes_no,
    signal_entropy,
)
from hallu_studio.model import Sample

_ids = itertools.count()

VQA_PROMPT = ("What is the relation with man and stair railing in this photo? Please answer in the following "
              "format:man is <relation> stair railing.")
# A Reefknot MCQ prompt's options (what a test writes answers with; the metric reads only the letter).
_MCQ_OPTION = re.compile(r"\b([A-D])\.\s*(.+?)(?=\s+[A-D]\.\s|,\s*please|\s*$)", re.IGNORECASE)


def parse_mcq_options(prompt: str) -> dict[str, str]:
    """``{"A": "behind", ...}`` out of "... A. behind B. onto C. on D. into, please choose."."""
    return {m.group(1).upper(): m.group(2).strip() for m in _MCQ_OPTION.finditer(prompt)}


MCQ_PROMPT = "What is the relation with knife and apple in this photo? A. behind B. onto C. on D. into, please choose."


def sample(task, label, question="q", category="perception"):
    return Sample(id=f"reef/{next(_ids)}", benchmark="reef", image_key="1", task=task, question=question,
                  answer=label, relation_category=category)


def score(metric, s, response, signals=None):
    return metric.update(ScoringItem("r", response, s, signals=signals or {}))


@pytest.mark.parametrize("text,expected", [("Yes, it is.", "yes"), ("yes", "yes"), ("No.", "no"),
                                           ("Yesterday it was", "no"), ("I think so", "no"), ("", "no")])
def test_yes_no_parsing_is_the_word_yes(text, expected):
    assert parse_yes_no(text) == expected


def test_prompt_parsers_on_reefknot_templates():
    assert parse_vqa_prompt(VQA_PROMPT) == ("man", "stair railing")
    assert parse_mcq_options(MCQ_PROMPT) == {"A": "behind", "B": "onto", "C": "on", "D": "into"}
    assert parse_choice(" d. into") == "D" and parse_choice("") is None


def test_relation_phrase_match():
    m = RelationPhraseMatch()
    assert m.correct("man is on stair railing.", "The man is on the stair railing.", VQA_PROMPT)[0]
    assert m.correct("man is sitting on stair railing.", "man is sits on stair railing", VQA_PROMPT)[0]
    assert not m.correct("man is on stair railing.", "man is under stair railing.", VQA_PROMPT)[0]
    bottle = "What is the relation with bottle and water in this photo? ... format:bottle is <relation> water."
    assert m.correct("bottle is of water.", "bottle is of water.", bottle)[0]  # "of" is a relation too
    assert not m.correct("bottle is of water.", "bottle is in water.", bottle)[0]


def test_halr_and_r_score_worked_example():
    metric = ReefknotMetric()
    results = [score(metric, sample("yes_no", "yes"), "Yes"), score(metric, sample("yes_no", "no"), "No"),
               score(metric, sample("yes_no", "no"), "No, it is not"),
               score(metric, sample("yes_no", "no", category="cognition"), "Yes it is"),
               score(metric, sample("mcq", "C"), "C. on"), score(metric, sample("mcq", "D"), "A"),
               score(metric, sample("vqa", "man is on stair railing.", VQA_PROMPT), "man is on stair railing."),
               score(metric, sample("vqa", "man is on stair railing.", VQA_PROMPT), "Man is ON the stair railing"),
               score(metric, sample("vqa", "man is on stair railing.", VQA_PROMPT), "man is below stair railing."),
               score(metric, sample("vqa", "man is on stair railing.", VQA_PROMPT), "")]
    out = metric.compute([r.stats for r in results])
    assert out["halr.yes_no"] == 25.0 and out["halr.mcq"] == 50.0 and out["halr.vqa"] == 50.0
    assert out["r_score"] == pytest.approx((75 + 50 + 50) / 3)
    assert out["halr.yes_no.cognition"] == 100.0 and out["halr.yes_no.perception"] == 0.0
    assert out["yes_ratio"] == 0.5
    assert (out["yes_no.tp"], out["yes_no.fp"], out["yes_no.tn"], out["yes_no.fn"]) == (1, 1, 2, 0)
    assert out["mcq.confusion.D>A"] == 1 and out["mcq.confusion.C>C"] == 1
    assert "empty answer" in results[-1].evidence["method"]


def test_r_score_needs_all_three_tasks():
    metric = ReefknotMetric()
    out = metric.compute([score(metric, sample("yes_no", "yes"), "yes").stats])
    assert "r_score" not in out and out["halr.yes_no"] == 0.0


def test_entropy_and_detection():
    assert candidate_entropy({"yes": math.log(0.5), "no": math.log(0.5)}) == pytest.approx(1.0)
    # Renormalised over the candidates: (0.2, 0.2) is the same as (0.5, 0.5).
    assert candidate_entropy({"yes": math.log(0.2), "no": math.log(0.2)}) == pytest.approx(1.0)
    h = -(0.9 * math.log2(0.9) + 0.1 * math.log2(0.1))
    assert candidate_entropy([0.9, 0.1], are_probs=True) == pytest.approx(h)
    assert candidate_entropy([0.25] * 4, are_probs=True) == pytest.approx(2.0)
    assert candidate_entropy([1.0, 0.0], are_probs=True) == pytest.approx(0.0)
    assert candidate_entropy({"yes": -0.1}) is None and candidate_entropy({"yes": "x", "no": 1}) is None
    # The backends' shape: signals["answer"] with probs (or logits, None for a candidate with p = 0).
    assert signal_entropy({"answer": {"candidates": ["yes", "no"], "probs": [0.5, 0.5]}}) == pytest.approx(1.0)
    assert signal_entropy({"answer": {"logits": [0.0, None]}}) == pytest.approx(0.0)
    assert signal_entropy({}) is None
    metric = ReefknotMetric(entropy_threshold=0.9)
    sure = {"yes": math.log(0.99), "no": math.log(0.01)}
    unsure = {"yes": math.log(0.5), "no": math.log(0.5)}
    rs = [score(metric, sample("yes_no", "no"), "yes", {"answer_logprobs": unsure}),   # wrong, flagged
          score(metric, sample("yes_no", "yes"), "yes", {"answer_logprobs": unsure}),  # right, flagged
          score(metric, sample("yes_no", "no"), "yes", {"answer_logprobs": sure}),     # wrong, not flagged
          score(metric, sample("yes_no", "yes"), "yes")]                               # no signal
    out = metric.compute([r.stats for r in rs])
    assert out["entropy.detection_precision"] == 0.5 and out["entropy.detection_recall"] == 0.5
    assert rs[0].values["entropy"] == pytest.approx(1.0) and rs[3].values["entropy"] is None


def test_not_a_reefknot_task_or_no_label_is_explained():
    metric = ReefknotMetric()
    assert "not a Reefknot task" in score(metric, sample("caption", None), "text").undefined_reason
    assert "no gold label" in score(metric, sample("yes_no", None), "yes").undefined_reason


def test_bidirectional_entailment_with_tiny_nli(tmp_path):
    from test_trihe_judges import build_tiny_nli

    yes = BidirectionalEntailment(NLIModel(build_tiny_nli(tmp_path / "y", "entailment")))
    no = BidirectionalEntailment(NLIModel(build_tiny_nli(tmp_path / "n", "neutral")))
    s = sample("vqa", "man is on stair railing.", VQA_PROMPT)
    assert score(ReefknotMetric(yes), s, "anything").values["correct"] is True
    assert score(ReefknotMetric(no), s, "man is on stair railing.").values["correct"] is False
    assert ReefknotMetric(yes).config()["vqa"] == "bidirectional-entailment"


def wrong_letter(letter: str) -> str:
    return "A" if letter != "A" else "B"


def test_real_reefknot_rows_with_synthetic_answers():
    """Every other answer is made wrong on purpose: Halr must come out at exactly that share."""
    from conftest import shared_dataset

    metric = ReefknotMetric()
    stats, expected_wrong = [], {"yes_no": 0, "mcq": 0, "vqa": 0}
    files = {"yes_no": "YESNO.jsonl", "mcq": "Multichoice.jsonl", "vqa": "VQA.jsonl"}
    for task, name in files.items():
        lines = shared_dataset("reefknot", name).read_text().splitlines()[:60]
        for i, line in enumerate(lines):
            row = json.loads(line)
            category = {"cognitive": "cognition"}.get(row["relation_type"], row["relation_type"])
            s = sample(task, row["label"], row["query_prompt"], category)
            wrong = i % 3 == 0
            if task == "yes_no":
                answer = ("No." if row["label"] == "yes" else "Yes.") if wrong else row["label"].capitalize() + "."
            elif task == "mcq":
                options = parse_mcq_options(row["query_prompt"])
                assert row["label"] in options, row
                answer = wrong_letter(row["label"]) if wrong else f"{row['label']}. {options[row['label']]}"
            else:
                assert parse_vqa_prompt(row["query_prompt"]) is not None, row
                subject, obj = parse_vqa_prompt(row["query_prompt"])
                answer = f"{subject} is inside-out-of {obj}." if wrong else row["label"]
            expected_wrong[task] += wrong
            stats.append(score(metric, s, answer).stats)
    out = metric.compute(stats)
    for task in files:
        assert out[f"halr.{task}"] == pytest.approx(100.0 * expected_wrong[task] / 60), task
    assert 0 < out["r_score"] < 100


def test_relation_phrase_match_uses_the_lexicon_before_embeddings():
    prompt = "What is the relation with man and horse in this photo?"
    m = RelationPhraseMatch()
    assert m.correct("man is on top of horse", "man is on horse", prompt)[0]
    assert m.correct("man is holding horse", "man is grasping horse", prompt)[0]
    ok, why = m.correct("man is on horse", "man is under horse", prompt)
    assert not ok and "lexicon" in why


# --------------------------------------------------------------------------- released readings (issue 20)

def test_yes_no_readings_on_the_released_codes_examples():
    """The released code reads yes wherever the letters "yes" appear; the studio reading needs the word."""
    s = sample("yes_no", "yes")
    released = ReefknotMetric(reading="released")
    assert score(released, s, "Yesterday it was.").values["correct"] is True
    assert score(ReefknotMetric(), s, "Yesterday it was.").values["correct"] is False
    # An empty answer reads no in the released code (right for a "no" label); the studio reading counts it wrong.
    assert score(released, sample("yes_no", "no"), "").values["correct"] is True
    assert score(ReefknotMetric(), sample("yes_no", "no"), "").values["correct"] is False


@pytest.mark.parametrize("answer", [" A", "\nA"])
def test_mcq_readings_on_the_released_codes_examples(answer):
    """The released code compares the answer's first character as it stands; the studio reading strips first."""
    s = sample("mcq", "A", question=MCQ_PROMPT)
    assert score(ReefknotMetric(), s, answer).values["correct"] is True
    got = score(ReefknotMetric(reading="released"), s, answer)
    assert got.values["correct"] is False and got.evidence["parsed_answer"] == answer[0]
    assert "mcq.confusion.A>?" in got.stats  # a blank first character is no letter


def test_entropy_readings_raw_against_renormalised():
    """At raw (0.6, 0.2): released 0.907 bits, flagged at DTC's 0.9; renormalised (0.75, 0.25): 0.811, not."""
    signals = {"answer": {"candidates": ["yes", "no"], "probs": [0.75, 0.25], "raw_probs": [0.6, 0.2]}}
    assert signal_entropy(signals) == pytest.approx(0.8113, abs=1e-4)
    assert signal_entropy(signals, "released") == pytest.approx(0.9066, abs=1e-4)
    recorded = {"answer_logprobs": {"yes": math.log(0.6), "no": math.log(0.2)}}
    assert signal_entropy(recorded) == pytest.approx(0.8113, abs=1e-4)
    assert signal_entropy(recorded, "released") == pytest.approx(0.9066, abs=1e-4)
    s = sample("yes_no", "yes")
    studio = score(ReefknotMetric(entropy_threshold=0.9), s, "Yes", signals)
    released = score(ReefknotMetric(entropy_threshold=0.9, entropy_reading="released"), s, "Yes", signals)
    assert studio.stats["entropy.flagged"] == 0.0 and released.stats["entropy.flagged"] == 1.0
    # DTC flags at the threshold itself, the studio reading above it.
    at = {"answer": {"candidates": ["yes", "no"], "probs": [0.5, 0.5], "raw_probs": [0.5, 0.5]}}
    assert score(ReefknotMetric(entropy_threshold=1.0, entropy_reading="released"), s, "Yes", at).stats[
        "entropy.flagged"] == 1.0
    assert score(ReefknotMetric(entropy_threshold=1.0), s, "Yes", at).stats["entropy.flagged"] == 0.0
    # A run that did not record raw probabilities has no released entropy, rather than a renormalised one.
    assert signal_entropy({"answer": {"candidates": ["yes", "no"], "probs": [0.75, 0.25]}}, "released") is None


def test_detect_then_calibrate_reads_the_entropy_as_set():
    import torch

    from hallu_studio.backends.base import DetectThenCalibrate
    from hallu_studio.backends.signals import candidate_raw_probs, dtc_choose

    # A vocabulary of three tokens: "yes" 0.6, "no" 0.2, something else 0.2.
    final = torch.log(torch.tensor([[0.6, 0.2, 0.2]]))
    early = torch.zeros_like(final)
    groups = [[0], [1]]
    assert candidate_raw_probs(final[0], groups).tolist() == pytest.approx([0.6, 0.2])
    _, h_raw, raw = dtc_choose(final, early, alpha=0.1, gamma=0.9, candidate_groups=groups, raw=True)
    _, h, renorm = dtc_choose(final, early, alpha=0.1, gamma=0.9, candidate_groups=groups)
    assert float(h_raw[0]) == pytest.approx(0.9066, abs=1e-4) and bool(raw[0])
    assert float(h[0]) == pytest.approx(0.8113, abs=1e-4) and not bool(renorm[0])
    # The run id of a studio DTC run stays what it was before the choice existed.
    assert DetectThenCalibrate().to_dict() == {"alpha": 0.1, "lambda": 2, "gamma": 0.9}
    assert DetectThenCalibrate(entropy="released").to_dict()["entropy"] == "released"


def test_readings_are_part_of_the_config():
    from hallu_studio.config import Settings

    settings = Settings()
    plain = ReefknotMetric.from_settings(settings).config()
    settings.scoring.reefknot_reading = "released"
    settings.decoding.entropy_reading = "released"
    released = ReefknotMetric.from_settings(settings)
    assert released.reading == "released" and released.entropy_reading == "released"
    assert released.config() != plain
    with pytest.raises(ValueError, match="unknown Reefknot reading"):
        ReefknotMetric(reading="paper")
