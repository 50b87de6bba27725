"""Pure signal functions and the OOM back-off, on CPU with fake errors."""

import math

import pytest
import torch

from hallu_studio.backends.batching import is_cuda_oom, run_with_oom_backoff
from hallu_studio.backends.signals import (
    candidate_distribution, candidate_logits, dtc_choose, dtc_contrast, entropy_bits, top_k_tokens,
)
from hallu_studio.prompts import answer_candidates, generation_preset, render_prompt, resolve_prompt


class FakeOOM(RuntimeError):
    pass


def _oom_over(limit, calls):
    def work(chunk):
        calls.append(list(chunk))
        if len(chunk) > limit:
            raise FakeOOM("CUDA out of memory. Tried to allocate 20.00 GiB")
        return [x * 2 for x in chunk]
    return work


def test_backoff_halves_until_it_fits_and_keeps_order():
    calls = []
    out = run_with_oom_backoff(list(range(11)), 8, _oom_over(3, calls))
    assert out.results == [x * 2 for x in range(11)]
    assert out.final_batch_size == 2 and out.halvings == 2
    assert [len(c) for c in calls[:3]] == [8, 4, 2]
    assert sum(len(c) for c in calls if len(c) <= 3) == 11  # every item done exactly once


def test_single_item_oom_becomes_that_items_error():
    out = run_with_oom_backoff([1, 2], 2, _oom_over(0, []))
    assert all(isinstance(r, FakeOOM) for r in out.results) and out.final_batch_size == 1


def test_other_errors_fail_the_chunk_without_backing_off():
    def work(chunk):
        if 3 in chunk:
            raise ValueError("bad item")
        return chunk
    out = run_with_oom_backoff([1, 2, 3, 4, 5], 2, work)
    assert out.results[:2] == [1, 2] and all(isinstance(r, ValueError) for r in out.results[2:4])
    assert out.results[4] == 5 and out.halvings == 0


def test_oom_recognition_and_bad_batch_size():
    assert is_cuda_oom(torch.OutOfMemoryError("x")) and is_cuda_oom(RuntimeError("CUDA out of memory"))
    assert not is_cuda_oom(ValueError("shape mismatch"))
    with pytest.raises(ValueError):
        run_with_oom_backoff([1], 0, lambda c: c)


def test_entropy_and_candidates():
    assert float(entropy_bits(torch.tensor([1.0, 0.0]))) == 0.0
    assert float(entropy_bits(torch.tensor([0.25] * 4))) == pytest.approx(2.0)
    logits = torch.tensor([0.0, 1.0, 1.0, 3.0, -2.0])
    assert candidate_logits(logits, [[1, 2], [4]]).tolist() == pytest.approx([1 + math.log(2), -2.0])
    _, probs, h = candidate_distribution(logits, [[3], [4]])
    p = math.exp(3) / (math.exp(3) + math.exp(-2))
    assert probs == pytest.approx([p, 1 - p]) and h == pytest.approx(-(p * math.log2(p) + (1 - p) * math.log2(1 - p)))
    ids, ps = top_k_tokens(logits, 2)
    assert ids[0] == 3 and len(ps) == 2


def test_dtc_contrast_is_the_formula_and_gates_on_entropy():
    torch.manual_seed(0)
    final, early = torch.randn(3, 11), torch.randn(3, 11)
    final[0] = torch.tensor([9.0] + [0.0] * 10)  # confident row: entropy below gamma
    expected = torch.log((1 + 0.1) * torch.softmax(final, -1) / (0.1 * torch.softmax(early, -1)))
    assert torch.allclose(dtc_contrast(final, early, 0.1), expected, atol=1e-5)
    scores, h, calibrated = dtc_choose(final, early, alpha=0.1, gamma=0.9)
    assert calibrated.tolist() == [False, True, True]
    assert torch.allclose(scores[0], torch.log_softmax(final[0], -1))
    assert torch.allclose(scores[1:], expected[1:], atol=1e-5)
    assert h[1] == pytest.approx(float(entropy_bits(torch.softmax(final[1], -1))))
    # over the answer set: two equal candidates have entropy exactly 1 bit >= 0.9
    tied = torch.zeros(1, 11)
    _, h2, cal2 = dtc_choose(tied, early[:1], alpha=0.1, gamma=0.9, candidate_groups=[[0], [1]])
    assert float(h2[0]) == pytest.approx(1.0) and bool(cal2[0])
    with pytest.raises(ValueError):
        dtc_contrast(final, early, 0.0)


def test_prompts_and_presets():
    assert generation_preset("nucleus") | {} == {"strategy": "nucleus", "do_sample": True, "num_beams": 1,
                                                 "temperature": 0.9, "top_p": 0.9, "top_k": 50,
                                                 "max_new_tokens": 512}
    assert generation_preset("greedy", 20)["max_new_tokens"] == 20
    with pytest.raises(ValueError):
        generation_preset("contrastive")
    assert resolve_prompt(None, "caption") == "Describe the image in detail."
    assert render_prompt("halfscore", question=None) == "Please describe this image in detail."
    assert render_prompt(None, question="Is it red?", task="yes_no") == "Is it red?"
    assert render_prompt("Say {question} twice", question="hi") == "Say hi twice"
    with pytest.raises(ValueError, match="needs a question"):
        render_prompt("question", question=None)
    assert answer_candidates("mcq") == ("A", "B", "C", "D") and answer_candidates("caption") is None
