"""Pure functions over logits: answer-candidate entropy, Detect-then-Calibrate, logit-lens top-k.

Entropies are in **bits** (log base 2): for the yes/no candidates the range is
[0, 1], which is the scale Reefknot's threshold gamma = 0.9 is meaningful on.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

LN2 = math.log(2.0)


def entropy_bits(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy over the last axis, in bits; 0 * log 0 counts as 0.

    >>> round(float(entropy_bits(torch.tensor([0.5, 0.5]))), 6)
    1.0
    """
    p = probs.clamp_min(0)
    logp = torch.where(p > 0, torch.log(p), torch.zeros_like(p))
    return -(p * logp).sum(-1) / LN2


def candidate_logits(logits: torch.Tensor, candidate_groups: Sequence[Sequence[int]]) -> torch.Tensor:
    """One logit per answer candidate: logsumexp over the token ids that spell it ("yes", "Yes", " yes").

    >>> candidate_logits(torch.tensor([0.0, 1.0, 1.0, 5.0]), [[1, 2], [0]]).tolist()
    [1.6931471824645996, 0.0]
    """
    cols = [torch.logsumexp(logits.float().index_select(-1, torch.tensor(list(g), dtype=torch.long,
                                                                              device=logits.device)), dim=-1)
            for g in candidate_groups]
    return torch.stack(cols, dim=-1)


def candidate_distribution(logits: torch.Tensor, candidate_groups: Sequence[Sequence[int]]
                           ) -> tuple[list[float], list[float], float]:
    """Reefknot eq. 2: softmax over the candidates' logits only, and its entropy in bits.

    ``logits`` is one position's vocabulary logits (1-D); each candidate is a group of token ids.

    >>> lg = torch.tensor([0.0, 2.0, 2.0, -1.0])
    >>> cand, probs, h = candidate_distribution(lg, [[1], [2]])
    >>> probs, round(h, 6)
    ([0.5, 0.5], 1.0)
    """
    picked = candidate_logits(logits, candidate_groups)
    probs = torch.softmax(picked, dim=-1)
    return picked.tolist(), probs.tolist(), float(entropy_bits(probs))


def candidate_raw_probs(logits: torch.Tensor, candidate_groups: Sequence[Sequence[int]]) -> torch.Tensor:
    """Each candidate's probability under the softmax over the whole vocabulary, not renormalised over the
    candidates: what Reefknot's released code takes the answer entropy over (``[..., V]`` -> ``[..., k]``).

    >>> [round(p, 4) for p in candidate_raw_probs(torch.tensor([0.0, 2.0, 2.0, -1.0]), [[1], [2]]).tolist()]
    [0.4576, 0.4576]
    """
    return torch.exp(candidate_logits(logits, candidate_groups) - torch.logsumexp(logits.float(), dim=-1,
                                                                                   keepdim=True))


def released_entropy_bits(probs: torch.Tensor) -> torch.Tensor:
    """Entropy as Reefknot's released Detect-then-Calibrate takes it over raw candidate probabilities: -Σ p log2 p,
    and 0 when a candidate has probability 0.

    >>> round(float(released_entropy_bits(torch.tensor([0.6, 0.2]))), 3), float(released_entropy_bits(torch.tensor([0.7, 0.0])))
    (0.907, 0.0)
    """
    return torch.where((probs > 0).all(-1), entropy_bits(probs), torch.zeros_like(probs[..., 0]))


def dtc_contrast(final_logits: torch.Tensor, early_logits: torch.Tensor, alpha: float) -> torch.Tensor:
    """Reefknot eq. 5 / Algorithm 1 line 5: log((1+a) softmax(final) / (a softmax(early))).

    >>> f, e = torch.tensor([2.0, 1.0]), torch.tensor([0.0, 3.0])
    >>> h = dtc_contrast(f, e, 0.1)
    >>> bool(torch.allclose(h, torch.log(1.1 * torch.softmax(f, -1) / (0.1 * torch.softmax(e, -1)))))
    True
    """
    if alpha <= 0:
        raise ValueError(f"Detect-then-Calibrate needs alpha > 0, got {alpha}")
    log_final = torch.log_softmax(final_logits.float(), dim=-1)
    log_early = torch.log_softmax(early_logits.float(), dim=-1)
    return math.log(1.0 + alpha) + log_final - math.log(alpha) - log_early


def dtc_choose(final_logits: torch.Tensor, early_logits: torch.Tensor, *, alpha: float, gamma: float,
               candidate_groups: Sequence[Sequence[int]] | None = None, raw: bool = False
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One decoding step of Detect-then-Calibrate for a batch of positions ``[B, V]``.

    Entropy is taken over ``candidate_groups`` when given (the answer set), else over
    the whole vocabulary: renormalised over the candidates, or with ``raw`` their raw probabilities as the
    released code takes them (``released_entropy_bits``). Rows with entropy >= gamma get the contrasted
    scores; the others keep the final layer's log-softmax. Returns (scores, entropies, calibrated mask).
    """
    probs = torch.softmax(final_logits.float(), dim=-1)
    if candidate_groups is not None and raw:
        h = released_entropy_bits(candidate_raw_probs(final_logits, candidate_groups))
    else:
        probs_for_entropy = (torch.softmax(candidate_logits(final_logits, candidate_groups), dim=-1)
                             if candidate_groups is not None else probs)
        h = entropy_bits(probs_for_entropy)
    calibrate = h >= gamma
    contrasted = dtc_contrast(final_logits, early_logits, alpha)
    plain = torch.log_softmax(final_logits.float(), dim=-1)
    scores = torch.where(calibrate.unsqueeze(-1), contrasted, plain)
    return scores, h, calibrate


def top_k_tokens(logits: torch.Tensor, k: int) -> tuple[list[int], list[float]]:
    """The k most probable token ids of one position and their probabilities."""
    probs = torch.softmax(logits.float(), dim=-1)
    top = torch.topk(probs, min(k, probs.shape[-1]))
    return top.indices.tolist(), top.values.tolist()
