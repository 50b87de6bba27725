"""Bradley-Terry strengths from pairwise preferences (PerturboLLaVA, Appendix A.7).

The model says system i beats system j with probability theta_i / (theta_i + theta_j);
the strengths are fitted by maximum likelihood with ``choix`` (iterative Luce
spectral ranking). A small ``alpha`` regularises the fit so that a system that never
lost (or never won) still gets a finite strength. A tie counts as one win each way.

Worked example: A beats B 3 times of 4, B beats C 3 of 4, A beats C 4 of 4, so the
fitted order is A > B > C and P(A beats B) comes out near 3/4.

>>> wins = [("A", "B")] * 3 + [("B", "A")] + [("B", "C")] * 3 + [("C", "B")] + [("A", "C")] * 4
>>> result = bradley_terry(wins)
>>> sorted(result, key=lambda s: -result[s].strength)
['A', 'B', 'C']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence

import choix
import numpy as np


@dataclass(frozen=True)
class Strength:
    strength: float  # theta, normalised so that all systems sum to 1
    log_strength: float  # choix's parameter (centred: mean 0)
    wins: float
    losses: float
    comparisons: int


def bradley_terry(outcomes: Iterable[tuple[Hashable, Hashable]], ties: Iterable[tuple[Hashable, Hashable]] = (),
                  alpha: float = 0.01) -> dict[Hashable, Strength]:
    """Strengths of every system in ``outcomes`` (``(winner, loser)`` pairs) and ``ties``."""
    outcomes, ties = list(outcomes), list(ties)
    for a, b in [*outcomes, *ties]:
        if a == b:
            raise ValueError(f"a comparison needs two different systems, got {a!r} against itself")
    systems: Sequence[Hashable] = sorted({s for pair in [*outcomes, *ties] for s in pair}, key=str)
    if len(systems) < 2:
        raise ValueError("Bradley-Terry needs comparisons between at least two systems")
    index = {s: i for i, s in enumerate(systems)}
    data = [(index[w], index[l]) for w, l in outcomes]
    for a, b in ties:
        data += [(index[a], index[b]), (index[b], index[a])]
    params = np.asarray(choix.ilsr_pairwise(len(systems), data, alpha=alpha), dtype=float)
    theta = np.exp(params - params.max())
    theta = theta / theta.sum()
    wins: Counter[Hashable] = Counter()
    losses: Counter[Hashable] = Counter()
    count: Counter[Hashable] = Counter()
    for w, l in outcomes:
        wins[w] += 1
        losses[l] += 1
        count[w] += 1
        count[l] += 1
    for a, b in ties:
        for s in (a, b):
            wins[s] += 0.5
            losses[s] += 0.5
            count[s] += 1
    return {s: Strength(float(theta[i]), float(params[i] - params.mean()), float(wins[s]), float(losses[s]),
                        int(count[s])) for s, i in index.items()}


