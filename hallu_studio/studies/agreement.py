"""Agreement between annotators: Krippendorff's alpha (the ``krippendorff`` package).

Worked example (two annotators, four items; they disagree only on r4: 3 vs 1).
Pairable values: 1 x3, 2 x2, 3 x3 (n = 8). Ordinal distances
delta(c, k) = (sum of n_g for g from c to k - (n_c + n_k) / 2) ** 2:
delta(1,2) = delta(2,3) = 6.25, delta(1,3) = 25. Observed disagreement
D_o = 2 * 25 / 8 = 6.25; expected D_e = 2 * (6 * 6.25 + 9 * 25 + 6 * 6.25) / (8 * 7) = 10.714;
alpha = 1 - D_o / D_e = 0.417.

>>> ratings = {("r1", "a"): 1, ("r1", "b"): 1, ("r2", "a"): 2, ("r2", "b"): 2,
...            ("r3", "a"): 3, ("r3", "b"): 3, ("r4", "a"): 3, ("r4", "b"): 1}
>>> round(krippendorff_alpha(ratings), 3)
0.417
"""

from __future__ import annotations

import math
from typing import Hashable, Mapping

import krippendorff
import numpy as np

LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


def reliability_matrix(ratings: Mapping[tuple[Hashable, str], float]) -> tuple[np.ndarray, list[str], list[Hashable]]:
    """Annotators x items, NaN where an annotator did not rate an item."""
    annotators = sorted({a for _, a in ratings})
    items = sorted({i for i, _ in ratings}, key=str)
    col = {item: j for j, item in enumerate(items)}
    row = {a: i for i, a in enumerate(annotators)}
    matrix = np.full((len(annotators), len(items)), np.nan)
    for (item, annotator), value in ratings.items():
        matrix[row[annotator], col[item]] = float(value)
    return matrix, annotators, items


def krippendorff_alpha(ratings: Mapping[tuple[Hashable, str], float], level: str = "ordinal",
                       value_domain: tuple[float, ...] = (1, 2, 3, 4, 5)) -> float:
    """Krippendorff's alpha of ``{(item, annotator): value}``; NaN when nothing is rated twice.

    ``value_domain`` lists the possible values (the 1-5 scale by default), which the
    ordinal level needs to weigh distances between categories.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    matrix, annotators, _ = reliability_matrix(ratings)
    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2).sum() if matrix.size else 0
    if len(annotators) < 2 or pairable == 0:
        return math.nan
    observed = set(np.unique(matrix[~np.isnan(matrix)]).tolist())
    domain = sorted(set(value_domain) | observed) if value_domain else sorted(observed)
    if len(domain) < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level,
                                    value_domain=np.asarray(domain, dtype=float)))
