"""How often each metric catches the hallucinations a probe model injected on purpose.

A probe response records, with character spans, the concepts it injected
(``signals["injected"]``) and the ones it stated truthfully (``signals["stated"]``);
see ``hallu_studio/backends/probe.py``. A metric *flags* parts of the response
through its evidence (``flagged_spans``). Then

- detection rate = injected concepts whose span overlaps a flagged span / injected concepts;
- false-alarm rate = stated (clean) concepts whose span overlaps a flagged span / stated concepts;

and, across responses, the Spearman correlation of the metric's per-response value
with the response's injected share ``injected / (injected + stated)`` (scipy).

``detection_records`` splits the detection rate by hallucination type (object,
attribute, relation, count, answer) and gives every rate a 95 % bootstrap interval
that resamples responses grouped by image. False alarms have no type (a clean concept
flagged is not an injected one), so each type's row repeats its metric's false alarms.

How each metric flags is its own (its spec's ``flagged_spans``, defined in its module beside its evidence):
a claim's span, an object's mention, the words a revision deletes, a whole short answer judged wrong.

Worked example: injected "dog" at 10-13, stated "cat" at 2-5; a metric flagging
10-13 detects 1 of 1 and raises 0 false alarms of 1.

>>> detection_counts([{"type": "object", "span": [10, 13]}], [{"type": "object", "span": [2, 5]}], [(10, 13)])
{'injected': 1, 'detected': 1, 'stated': 1, 'false_alarms': 0}
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, Mapping, Sequence

from scipy import stats as st

from ..backends.probe import INJECTION_TYPES
from ..metrics.aggregate import bootstrap_intervals

Span = tuple[int, int]
# What a probe injects: concepts of these types in free text, and flipped answers to yes/no and MCQ questions.
HALLUCINATION_TYPES: tuple[str, ...] = (*INJECTION_TYPES, "answer")
ALL_TYPES = "all"  # the row of a metric that counts every type together


def overlaps(a: Sequence[int], b: Sequence[int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def flagged_spans(metric: str, values: Mapping[str, Any], evidence: Mapping[str, Any], text: str,
                  concepts: Mapping[str, Any] | None = None) -> list[Span] | None:
    """Character spans of ``text`` that ``metric``'s evidence marks as hallucinated (its spec's ``flagged_spans``).

    ``concepts`` is the response's stored concept set (``ConceptSet.to_dict(with_spans=True)``).
    Returns None when the metric cannot point at parts of a response (or is not registered).
    """
    from ..metrics.registry import METRIC_NAMES, metric_spec

    spec = metric_spec(metric) if metric in METRIC_NAMES else None
    if spec is None or spec.flagged_spans is None:
        return None
    return spec.flagged_spans(values, evidence, text, concepts)


def detection_counts(injected: Iterable[Mapping[str, Any]], stated: Iterable[Mapping[str, Any]],
                     flagged: Sequence[Span]) -> dict[str, int]:
    """Injected concepts caught and clean concepts wrongly flagged in one response."""
    inj = [c for c in injected if c.get("span")]
    clean = [c for c in stated if c.get("span")]
    return {"injected": len(inj), "detected": sum(any(overlaps(c["span"], f) for f in flagged) for c in inj),
            "stated": len(clean), "false_alarms": sum(any(overlaps(c["span"], f) for f in flagged) for c in clean)}


@dataclass(frozen=True)
class DetectionRow:
    metric: str
    responses: int
    injected: int
    detected: int
    stated: int
    false_alarms: int
    spearman_with_injected_share: float
    by_type: dict[str, tuple[int, int]]  # injection type -> (injected, detected)
    config_key: str = ""

    @property
    def detection_rate(self) -> float:
        return self.detected / self.injected if self.injected else math.nan

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.stated if self.stated else math.nan


@dataclass(frozen=True)
class ProbeItem:
    """One probe response scored by one metric."""

    text: str
    injected: list[dict[str, Any]]
    stated: list[dict[str, Any]]
    values: dict[str, Any]
    evidence: dict[str, Any]
    item_value: float | None  # the metric's per-response number used for the rank correlation
    concepts: dict[str, Any] | None = None
    image: Hashable | None = None  # the response's image, for bootstrap intervals; None: unknown


def _flagged_items(metric: str, items: Sequence[ProbeItem]) -> list[tuple[ProbeItem, list[Span]]]:
    """The items ``metric`` can point into, each with the spans it flags."""
    out = []
    for item in items:
        flagged = flagged_spans(metric, item.values, item.evidence, item.text, item.concepts)
        if flagged is not None:
            out.append((item, flagged))
    return out


def _injected_share_spearman(items: Sequence[ProbeItem]) -> float:
    """Spearman of the metric's per-response value with the response's injected share; NaN when undefined."""
    share, value = [], []
    for item in items:
        n = len(item.injected) + len(item.stated)
        if item.item_value is not None and n and not math.isnan(item.item_value):
            share.append(len(item.injected) / n)
            value.append(float(item.item_value))
    if len(share) < 3 or len(set(share)) < 2 or len(set(value)) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(st.spearmanr(value, share).statistic)


def detection_row(metric: str, items: Sequence[ProbeItem], config_key: str = "") -> DetectionRow:
    totals = {"injected": 0, "detected": 0, "stated": 0, "false_alarms": 0}
    by_type: dict[str, list[int]] = {}
    flagged_items = _flagged_items(metric, items)
    for item, flagged in flagged_items:
        counts = detection_counts(item.injected, item.stated, flagged)
        for k in totals:
            totals[k] += counts[k]
        for c in item.injected:
            if c.get("span"):
                got = by_type.setdefault(str(c.get("type")), [0, 0])
                got[0] += 1
                got[1] += any(overlaps(c["span"], f) for f in flagged)
    rho = _injected_share_spearman([item for item, _ in flagged_items])
    return DetectionRow(metric, len(flagged_items), totals["injected"], totals["detected"], totals["stated"],
                        totals["false_alarms"], rho, {k: (v[0], v[1]) for k, v in sorted(by_type.items())},
                        config_key)


DETECTION_COLUMNS: list[str] = [
    "metric", "config_key", "type", "responses", "images", "injected", "detected", "detection_rate",
    "detection_rate_low", "detection_rate_high", "stated", "false_alarms", "false_alarm_rate",
    "false_alarm_rate_low", "false_alarm_rate_high", "spearman_vs_injected_share"]


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def detection_records(metric: str, items: Sequence[ProbeItem], config_key: str = "",
                      types: Sequence[str] = HALLUCINATION_TYPES, n_boot: int = 1000,
                      seed: int = 0) -> list[dict[str, Any]]:
    """One row for all types together, then one per type in ``types``: counts and rates with 95 % intervals.

    Intervals resample responses, whole images at a time where ``ProbeItem.image`` is known
    (``metrics.aggregate.bootstrap_intervals``, as every other interval here). False alarms
    are the metric's, repeated on each type's row; the ``all`` row also carries the Spearman
    correlation of the metric's value with the injected share (``detection_row``'s).

    >>> item = ProbeItem("a dog and a red cat", [{"type": "object", "span": [2, 5]}],
    ...                  [{"type": "object", "span": [16, 19]}], {}, {"hallucinated": ["dog"]}, None, image="i1")
    >>> [(r["type"], r["injected"], r["detected"], r["detection_rate"], r["false_alarms"])
    ...  for r in detection_records("chair", [item], types=("object", "count"), n_boot=10)]
    [('all', 1, 1, 1.0, 0), ('object', 1, 1, 1.0, 0), ('count', 0, 0, nan, 0)]
    """
    flagged_items = _flagged_items(metric, items)
    stats: list[dict[str, float]] = []
    for item, flagged in flagged_items:
        counts = detection_counts(item.injected, item.stated, flagged)
        row = {"stated": float(counts["stated"]), "false_alarms": float(counts["false_alarms"]),
               f"injected_{ALL_TYPES}": float(counts["injected"]), f"detected_{ALL_TYPES}": float(counts["detected"])}
        for kind in types:
            row[f"injected_{kind}"] = row[f"detected_{kind}"] = 0.0
        for c in item.injected:
            kind = str(c.get("type"))
            if c.get("span") and kind in types:
                row[f"injected_{kind}"] += 1
                row[f"detected_{kind}"] += any(overlaps(c["span"], f) for f in flagged)
        stats.append(row)
    kinds = [ALL_TYPES, *types]

    def rates(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
        out = {"false_alarm_rate": _ratio(sum(r["false_alarms"] for r in rows), sum(r["stated"] for r in rows))}
        for kind in kinds:
            out[f"detection_rate_{kind}"] = _ratio(sum(r[f"detected_{kind}"] for r in rows),
                                                   sum(r[f"injected_{kind}"] for r in rows))
        return out

    images = [item.image if item.image is not None else ("response", i) for i, (item, _) in enumerate(flagged_items)]
    intervals = bootstrap_intervals(stats, rates, images, n_boot=n_boot, seed=seed) if stats else {}
    nan_interval = (math.nan, math.nan, math.nan)
    false_alarm = intervals["false_alarm_rate"].as_tuple() if intervals else nan_interval
    common = {"metric": metric, "config_key": config_key, "responses": len(stats), "images": len(set(images)),
              "stated": int(sum(r["stated"] for r in stats)), "false_alarms": int(sum(r["false_alarms"] for r in stats)),
              "false_alarm_rate": false_alarm[0], "false_alarm_rate_low": false_alarm[1],
              "false_alarm_rate_high": false_alarm[2]}
    spearman = _injected_share_spearman([item for item, _ in flagged_items])
    out = []
    for kind in kinds:
        detection = intervals[f"detection_rate_{kind}"].as_tuple() if intervals else nan_interval
        out.append({**common, "type": kind, "injected": int(sum(r[f"injected_{kind}"] for r in stats)),
                    "detected": int(sum(r[f"detected_{kind}"] for r in stats)), "detection_rate": detection[0],
                    "detection_rate_low": detection[1], "detection_rate_high": detection[2],
                    "spearman_vs_injected_share": spearman if kind == ALL_TYPES else math.nan})
    return [{c: r[c] for c in DETECTION_COLUMNS} for r in out]
