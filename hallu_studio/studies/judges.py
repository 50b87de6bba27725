"""Each Tri-HE judge's accuracy against people's triplet corrections.

Triplets are keyed by ``(response_id, triplet_index)``. Besides the exact-verdict
accuracy (supported / object / relation / prediction_error), the binary accuracy
asks only "hallucinated or not" (object or relation vs anything else), and Cohen's
kappa corrects the exact accuracy for chance (scikit-learn).

>>> human = {("r", 0): "supported", ("r", 1): "object", ("r", 2): "relation"}
>>> acc = judge_accuracy({"nli": {("r", 0): "supported", ("r", 1): "relation", ("r", 2): "relation"}}, human)
>>> acc["nli"].n, round(acc["nli"].accuracy, 3), acc["nli"].binary_accuracy
(3, 0.667, 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Hashable, Mapping

from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix

HALLUCINATED = ("object", "relation")
# Every verdict a judge gives (``judges.base.VERDICTS``): the scene-graph judge's unverifiable and inference too.
LABELS: tuple[str, ...] = ("supported", "object", "relation", "prediction_error", "unparseable", "unverifiable",
                           "inference")


@dataclass(frozen=True)
class JudgeAccuracy:
    judge: str
    n: int  # triplets both the judge and a person labelled
    accuracy: float
    binary_accuracy: float
    kappa: float
    labels: tuple[str, ...] = LABELS
    confusion: list[list[int]] = field(default_factory=list)  # rows: human label, columns: judge label

    def confusion_dict(self) -> dict[str, dict[str, int]]:
        return {h: {j: self.confusion[a][b] for b, j in enumerate(self.labels)} for a, h in enumerate(self.labels)}


def judge_accuracy(judge_verdicts: Mapping[str, Mapping[Hashable, str]],
                   human_verdicts: Mapping[Hashable, str]) -> dict[str, JudgeAccuracy]:
    """Per judge, agreement with the human verdicts on the triplets both labelled."""
    out = {}
    for judge, verdicts in judge_verdicts.items():
        keys = [k for k in verdicts if k in human_verdicts]
        for k in keys:
            for label in (verdicts[k], human_verdicts[k]):
                if label not in LABELS:
                    raise ValueError(f"triplet {k!r}: unknown verdict {label!r}; known: {LABELS}")
        if not keys:
            out[judge] = JudgeAccuracy(judge, 0, math.nan, math.nan, math.nan, LABELS,
                                       [[0] * len(LABELS) for _ in LABELS])
            continue
        truth = [human_verdicts[k] for k in keys]
        said = [verdicts[k] for k in keys]
        binary_truth = [t in HALLUCINATED for t in truth]
        binary_said = [s in HALLUCINATED for s in said]
        kappa = float(cohen_kappa_score(truth, said, labels=list(LABELS))) if len(set(truth) | set(said)) > 1 \
            else math.nan
        matrix = confusion_matrix(truth, said, labels=list(LABELS)).tolist()
        out[judge] = JudgeAccuracy(judge, len(keys), float(accuracy_score(truth, said)),
                                   float(accuracy_score(binary_truth, binary_said)), kappa, LABELS, matrix)
    return out
