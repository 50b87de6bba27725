"""How well hallucination scores agree with people's judgements of real outputs: pure functions.

Every score here is oriented so that **higher means more hallucination** (each metric's spec says how its
``hallucination_scores`` read its stored values; ``hallucination_scores()`` gathers them); the human side says
what it means in each table.

- ``binary_agreement``: AUROC and average precision (AP) of a score for "people say it hallucinates"
  (0.5 AUROC is chance; AP's chance level is the share of hallucinated responses, ``prevalence``);
- ``span_agreement``: precision and recall of the spans a metric flags against the spans people marked
  (a flagged span is right when it overlaps a marked one; a marked span is found when a flagged one
  overlaps it);
- ``fact_agreement``: a judge's verdicts on labelled atomic facts: balanced accuracy on the facts it
  settles, and its coverage (the share it settles); a fact the judge cannot settle is not an error;
- ``group_means``: a score's mean per group of responses (accurate vs hallucinated, human vs machine).

Rank correlation with ratings is ``correlation.correlate``. Every interval is a 95 % percentile interval
of a bootstrap that resamples whole images (``metrics.aggregate.bootstrap_intervals``).

Worked example (AUROC = the share of (hallucinated, clean) pairs in which the hallucinated response scores
higher, a tie counting half): scores 0.1, 0.4, 0.35, 0.8 for responses labelled clean, hallucinated, clean,
hallucinated. The hallucinated one scores higher in all 4 pairs (0.4 > 0.1, 0.4 > 0.35, 0.8 > 0.1,
0.8 > 0.35): AUROC = 1.0, and both hallucinated responses rank first, so AP = 1.0 as well.

>>> r = binary_agreement([0.1, 0.4, 0.35, 0.8], [False, True, False, True], n_boot=50)
>>> r.auroc.value, r.ap.value, r.n, r.positives
(1.0, 1.0, 4, 2)
>>> r = binary_agreement([0.1, 0.4, 0.5, 0.8], [False, True, False, True], n_boot=50)
>>> r.auroc.value  # pairs won: 0.4 > 0.1, 0.8 > 0.1, 0.8 > 0.5; lost: 0.4 < 0.5
0.75
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np
from ..metrics.aggregate import Interval, bootstrap_intervals
from .correlation import replicate_weights
from ..metrics.spec import FACT_VERDICTS, NOT_SETTLED
from .probe_detection import overlaps

Span = tuple[int, int]


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _value(key: str) -> Callable[[Mapping[str, Any]], float | None]:
    return lambda values: _num(values.get(key))


@dataclass(frozen=True)
class HallucinationScore:
    """One per-response number read from a metric's stored values, and which way it points."""

    name: str  # what tables call it
    metric: str  # the metric whose stored values it reads
    read: Callable[[Mapping[str, Any]], float | None] = field(compare=False)
    higher_means: str = "more hallucination"
    description: str = ""


def hallucination_scores() -> tuple[HallucinationScore, ...]:
    """Every registered metric's hallucination scores (its spec's ``hallucination_scores``), in the registry's
    order: all read so that higher means more hallucination.

    >>> [s.name for s in hallucination_scores()][:3]
    ['trihe share', 'emd object', 'emd total']
    """
    from ..metrics.registry import METRIC_NAMES, metric_spec

    out = []
    for metric in METRIC_NAMES:
        for number in metric_spec(metric).hallucination_scores:
            if not number.lower_is_better:
                raise ValueError(f"{metric}: hallucination score {number.name!r} must grow with hallucination")
            out.append(HallucinationScore(number.name, metric, number.of, description=number.meaning))
    return tuple(out)


NAIVE_SCORE = HallucinationScore("naive 1-cosine", "naive", _value("naive"),
                                 description="baseline: 1 - mean MiniLM cosine between the response and its "
                                             "reference texts (captions, or the object list as one text)")


# --------------------------------------------------------------------------- binary labels


@dataclass(frozen=True)
class BinaryAgreement:
    auroc: Interval
    ap: Interval
    n: int
    positives: int  # responses people call hallucinated
    clusters: int

    @property
    def prevalence(self) -> float:
        """AP's chance level: the share of hallucinated responses."""
        return self.positives / self.n if self.n else math.nan


def _auroc_ap(scores: np.ndarray, hallucinated: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AUROC and AP of each row of item multiplicities ``weights`` (replicates x items), NaN where a row has
    one class only.

    With the items grouped by distinct score (ties together, as scikit-learn groups them): AUROC is the
    weighted share of (hallucinated, clean) pairs ordered right, a tie counting half; AP sums, over the
    distinct scores from the highest down, the precision at that threshold times the recall it adds.
    """
    levels, index = np.unique(scores, return_inverse=True)
    onehot = np.zeros((scores.size, levels.size))
    onehot[np.arange(scores.size), index] = 1.0
    pos = weights @ (onehot * hallucinated[:, None])  # replicates x levels, ascending score
    neg = weights @ (onehot * ~hallucinated[:, None])
    total_pos, total_neg = pos.sum(axis=1), neg.sum(axis=1)
    valid = (total_pos > 0) & (total_neg > 0)
    below = np.cumsum(neg, axis=1) - neg
    with np.errstate(invalid="ignore", divide="ignore"):
        auroc = (pos * (below + neg / 2)).sum(axis=1) / (total_pos * total_neg)
        true_pos = np.cumsum(pos[:, ::-1], axis=1)  # descending score
        predicted = np.cumsum((pos + neg)[:, ::-1], axis=1)
        precision = np.where(predicted > 0, true_pos / np.where(predicted > 0, predicted, 1), 0.0)
        ap = (precision * pos[:, ::-1]).sum(axis=1) / total_pos
    return np.where(valid, auroc, np.nan), np.where(valid, ap, np.nan)


def binary_agreement(scores: Sequence[float], hallucinated: Sequence[bool],
                     clusters: Sequence[Hashable] | None = None, n_boot: int = 1000,
                     seed: int = 0, alpha: float = 0.05) -> BinaryAgreement:
    """AUROC and AP of ``scores`` (higher = more hallucination) for the people's ``hallucinated`` labels.

    Every replicate draws whole clusters (images) with replacement, as ``correlation.correlate`` does; it is
    computed from the items' multiplicities, in one matrix product for all replicates.
    """
    if len(scores) != len(hallucinated):
        raise ValueError(f"{len(scores)} scores for {len(hallucinated)} labels")
    x = np.asarray(scores, dtype=float)
    if np.isnan(x).any():
        raise ValueError("scores must not hold missing values; leave unscored responses out first")
    y = np.asarray([bool(h) for h in hallucinated], dtype=bool)
    n = int(x.size)
    k = len(set(clusters)) if clusters is not None else n
    if not n:
        empty = Interval(math.nan, math.nan, math.nan, 0, 0)
        return BinaryAgreement(empty, empty, 0, 0, 0)
    point_auroc, point_ap = (float(v[0]) for v in _auroc_ap(x, y, np.ones((1, n))))
    weights = np.array(list(replicate_weights(clusters, n, n_boot, seed)))
    reps = _auroc_ap(x, y, weights)
    intervals = []
    for point, column in zip((point_auroc, point_ap), reps):
        column = column[~np.isnan(column)]
        if math.isnan(point) or not column.size:
            low = high = math.nan
        else:
            low, high = (float(v) for v in np.quantile(column, [alpha / 2, 1 - alpha / 2]))
        intervals.append(Interval(point, low, high, n, k))
    return BinaryAgreement(intervals[0], intervals[1], n, int(y.sum()), k)


# --------------------------------------------------------------------------- spans


def span_counts(flagged: Sequence[Sequence[int]], marked: Sequence[Sequence[int]]) -> dict[str, float]:
    """One response's counts: flagged spans, those overlapping a marked span, marked spans, those found.

    >>> span_counts([(0, 5), (10, 14)], [(12, 20), (30, 40)])
    {'flagged': 2.0, 'flagged_right': 1.0, 'marked': 2.0, 'marked_found': 1.0}
    """
    return {"flagged": float(len(flagged)), "flagged_right": float(sum(any(overlaps(f, m) for m in marked)
                                                                       for f in flagged)),
            "marked": float(len(marked)), "marked_found": float(sum(any(overlaps(m, f) for f in flagged)
                                                                    for m in marked))}


def _precision_recall(stats: Sequence[Mapping[str, float]]) -> dict[str, float]:
    total = {k: sum(s[k] for s in stats) for k in ("flagged", "flagged_right", "marked", "marked_found")}
    return {"precision": total["flagged_right"] / total["flagged"] if total["flagged"] else math.nan,
            "recall": total["marked_found"] / total["marked"] if total["marked"] else math.nan}


@dataclass(frozen=True)
class SpanAgreement:
    precision: Interval
    recall: Interval
    responses: int
    flagged: int
    flagged_right: int
    marked: int
    marked_found: int


def span_agreement(flagged: Sequence[Sequence[Span]], marked: Sequence[Sequence[Span]],
                   clusters: Sequence[Hashable] | None = None, n_boot: int = 1000, seed: int = 0) -> SpanAgreement:
    """Micro-averaged span precision and recall over responses (``flagged[i]`` and ``marked[i]`` are one
    response's spans; a response without marked spans still counts its flagged ones as wrong).

    >>> r = span_agreement([[(0, 5), (10, 14)], [(3, 4)]], [[(12, 20)], []], n_boot=20)
    >>> r.precision.value, r.recall.value  # 1 of 3 flagged overlaps a marked span; 1 of 1 marked found
    (0.3333333333333333, 1.0)
    """
    if len(flagged) != len(marked):
        raise ValueError(f"{len(flagged)} flagged lists for {len(marked)} marked lists")
    stats = [span_counts(f, m) for f, m in zip(flagged, marked)]
    total = {k: int(sum(s[k] for s in stats)) for k in ("flagged", "flagged_right", "marked", "marked_found")}
    if not stats:
        empty = Interval(math.nan, math.nan, math.nan, 0, 0)
        return SpanAgreement(empty, empty, 0, 0, 0, 0, 0)
    got = bootstrap_intervals(stats, _precision_recall, clusters, n_boot=n_boot, seed=seed)
    return SpanAgreement(got["precision"], got["recall"], len(stats), **total)


# --------------------------------------------------------------------------- facts


def _fact_rates(items: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Balanced accuracy on settled facts, and coverage, from per-fact indicator stats."""
    total = {k: sum(i[k] for i in items) for k in ("facts", "settled", "h", "h_right", "a", "a_right")}
    recalls = [total["h_right"] / total["h"] if total["h"] else math.nan,
               total["a_right"] / total["a"] if total["a"] else math.nan]
    return {"balanced_accuracy": float(np.mean(recalls)) if not any(math.isnan(r) for r in recalls) else math.nan,
            "coverage": total["settled"] / total["facts"] if total["facts"] else math.nan,
            "accuracy": (total["h_right"] + total["a_right"]) / total["settled"] if total["settled"] else math.nan,
            "hallucinated_recall": recalls[0], "accurate_recall": recalls[1]}


@dataclass(frozen=True)
class FactAgreement:
    balanced_accuracy: Interval  # mean of the recall on hallucinated and on accurate facts, among settled ones
    coverage: Interval  # settled facts / facts
    accuracy: float  # plain accuracy on settled facts
    hallucinated_recall: float
    accurate_recall: float
    facts: int
    settled: int
    confusion: dict[str, dict[str, int]]  # human label -> judge verdict -> facts


def fact_agreement(judged: Mapping[Hashable, str], human: Mapping[Hashable, str],
                   clusters: Mapping[Hashable, Hashable] | None = None, n_boot: int = 1000,
                   seed: int = 0) -> FactAgreement:
    """A judge's verdicts (``FACT_VERDICTS``) against people's labels (accurate / hallucinated) on the facts
    both have; ``clusters`` maps a fact to its image.

    Worked example: 4 facts, people say h, h, a, a; the judge says h, not settled, a, h. Settled: 3 of 4
    (coverage 0.75); on them, hallucinated recall 1/1, accurate recall 1/2: balanced accuracy 0.75.

    >>> human = {1: "hallucinated", 2: "hallucinated", 3: "accurate", 4: "accurate"}
    >>> judged = {1: "hallucinated", 2: "not settled", 3: "accurate", 4: "hallucinated"}
    >>> r = fact_agreement(judged, human, n_boot=20); r.coverage.value, r.balanced_accuracy.value, r.settled
    (0.75, 0.75, 3)
    """
    keys = [k for k in judged if human.get(k) in ("accurate", "hallucinated")]
    for k in keys:
        if judged[k] not in FACT_VERDICTS:
            raise ValueError(f"fact {k!r}: unknown verdict {judged[k]!r}; known: {FACT_VERDICTS}")
    items = []
    confusion = {h: {v: 0 for v in FACT_VERDICTS} for h in ("accurate", "hallucinated")}
    for k in keys:
        truth, said = human[k], judged[k]
        confusion[truth][said] += 1
        settled = said != NOT_SETTLED
        items.append({"facts": 1.0, "settled": float(settled),
                      "h": float(settled and truth == "hallucinated"),
                      "h_right": float(settled and truth == "hallucinated" and said == "hallucinated"),
                      "a": float(settled and truth == "accurate"),
                      "a_right": float(settled and truth == "accurate" and said == "accurate")})
    if not items:
        empty = Interval(math.nan, math.nan, math.nan, 0, 0)
        return FactAgreement(empty, empty, math.nan, math.nan, math.nan, 0, 0, confusion)
    groups = [clusters.get(k, k) for k in keys] if clusters is not None else None
    got = bootstrap_intervals(items, _fact_rates, groups, n_boot=n_boot, seed=seed,
                              keys=["balanced_accuracy", "coverage"])
    point = _fact_rates(items)
    return FactAgreement(got["balanced_accuracy"], got["coverage"], point["accuracy"], point["hallucinated_recall"],
                         point["accurate_recall"], len(items), int(sum(i["settled"] for i in items)), confusion)


# --------------------------------------------------------------------------- groups


def group_means(scores: Sequence[float], groups: Sequence[str], clusters: Sequence[Hashable] | None = None,
                n_boot: int = 1000, seed: int = 0) -> dict[str, Interval]:
    """The mean score of each group of responses, with its interval (resampling images within the group).

    >>> {g: iv.value for g, iv in group_means([0.2, 0.4, 0.9], ["accurate", "accurate", "hallucinated"],
    ...                                      n_boot=10).items()}
    {'accurate': 0.30000000000000004, 'hallucinated': 0.9}
    """
    out: dict[str, Interval] = {}
    for group in dict.fromkeys(groups):
        members = [i for i, g in enumerate(groups) if g == group]
        stats = [{"sum": float(scores[i]), "n": 1.0} for i in members]
        out[group] = bootstrap_intervals(
            stats, lambda s: sum(x["sum"] for x in s) / sum(x["n"] for x in s),
            [clusters[i] for i in members] if clusters is not None else None, n_boot=n_boot, seed=seed)["value"]
    return out
