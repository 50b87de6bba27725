"""Relation hallucination on each model's most frequent object pairs (Tri-HE §5.3, Table 4).

For one model, every judged triplet ``(subject, predicate, object)`` of its responses
gives an object pair ``(group(subject), group(object))``; pairs are ranked by how
often they occur, and the relation hallucination rate (triplets judged ``relation``
over all judged triplets, unparseable ones included as in Tri-HE's released code) is
compared between the top ``share`` (20%) of distinct pairs and all pairs.

Worked example (groups: singular lower-case), five triplets in three pairs:

    (cat, sofa) relation, (cat, sofa) supported, (cats, sofa) supported -> pair (cat, sofa) x3
    (dog, ball) relation, (man, hat) relation                           -> one each
    top 20% of 3 pairs -> ceil(0.6) = 1 pair: (cat, sofa): 1 relation of 3 = 0.333
    all pairs: 3 relation of 5 = 0.6

>>> from .grouping import simple_lemma
>>> r = frequent_pair_rates([("cat", "sofa", "relation"), ("cat", "sofa", "supported"),
...     ("cats", "sofa", "supported"), ("dog", "ball", "relation"), ("man", "hat", "relation")], simple_lemma)
>>> r.pairs, r.top_pairs, round(r.rate_top, 3), r.rate_all
(3, 1, 0.333, 0.6)
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ...config import Settings
from ...metrics.trihe_evidence import ATTRIBUTE_PREDICATE
from .common import run_labels, select_runs
from .grouping import object_grouper
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "frequent-pairs"
TITLE = "Relation hallucination on each model's most frequent object pairs (Tri-HE Table 4)"
COLUMNS = ["model", "triplets", "pairs", "top_pairs", "top_triplets", "rate_all", "rate_top", "difference"]


@dataclass(frozen=True)
class PairRates:
    triplets: int
    pairs: int  # distinct grouped pairs
    top_pairs: int
    top_triplets: int
    rate_all: float
    rate_top: float
    most_frequent: list[tuple[tuple[str, str], int]]


def frequent_pair_rates(triplets: Sequence[tuple[str, str, str]], group: Callable[[str], str],
                        share: float = 0.2) -> PairRates:
    """``triplets`` are ``(subject, object, verdict)``; see the module docstring."""
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share}")
    keyed = [((group(s), group(o)), verdict) for s, o, verdict in triplets]
    counts = Counter(pair for pair, _ in keyed)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    n_top = max(1, math.ceil(share * len(ranked))) if ranked else 0
    top = {pair for pair, _ in ranked[:n_top]}

    def rate(items: list[str]) -> float:
        return sum(v == "relation" for v in items) / len(items) if items else math.nan

    top_verdicts = [v for pair, v in keyed if pair in top]
    return PairRates(len(keyed), len(ranked), n_top, len(top_verdicts), rate([v for _, v in keyed]),
                     rate(top_verdicts), ranked[:5])


def _judged_triplets(store: "Store", run_id: str,
                     config_key: str | None) -> tuple[list[tuple[str, str, str]], set[str]]:
    """(subject, object, verdict) of a run's judged relation triplets, and the judge configs seen."""
    out, keys = [], set()
    for _, score in store.iter_scores("trihe", run_id=run_id, with_evidence=True):
        keys.add(score.config_key)
        if config_key is not None and score.config_key != config_key:
            continue
        for t in score.evidence.get("triplets") or []:
            parts = t.get("triplet") or []
            # Attribute claims (object, "is", attribute) name one object, not a pair.
            if len(parts) == 3 and parts[1] != ATTRIBUTE_PREDICATE:
                out.append((str(parts[0]), str(parts[2]), str(t.get("verdict"))))
    return out, keys


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            share: float = 0.2, config_key: str | None = None, **_: Any) -> AnalysisResult:
    group, how = object_grouper()
    notes = [how, ("rates are triplet-level: triplets judged 'relation' over all judged relation triplets of the "
                   "pairs; attribute claims (object, is, attribute) are left out")]
    selected = select_runs(store, benchmark, runs)
    labels = run_labels(selected)
    rows: list[dict[str, Any]] = []
    for run in selected:
        triplets, keys = _judged_triplets(store, run["id"], config_key)
        if config_key is None and len(keys) > 1:
            chosen = min(keys)
            notes.append(f"{labels[run['id']]}: Tri-HE scores under {len(keys)} judge configurations; "
                         f"using {chosen} (pass config_key to choose)")
            triplets, _ = _judged_triplets(store, run["id"], chosen)
        if not triplets:
            continue
        r = frequent_pair_rates(triplets, group, share)
        rows.append({"model": labels[run["id"]], "run_id": run["id"], "triplets": r.triplets, "pairs": r.pairs,
                     "top_pairs": r.top_pairs, "top_triplets": r.top_triplets, "rate_all": r.rate_all,
                     "rate_top": r.rate_top, "difference": r.rate_top - r.rate_all,
                     "most_frequent": "; ".join(f"{a}/{b} x{n}" for (a, b), n in r.most_frequent)})
    if not rows:
        return empty_result(NAME, TITLE, COLUMNS, "no Tri-HE triplet verdicts in the selected runs: "
                            "score them with `hallu-studio score --metrics trihe`", notes)
    fig, (ax,) = figure(1, width=max(4.5, 1.2 * len(rows)))
    x = list(range(len(rows)))
    ax.bar([i - 0.2 for i in x], [r["rate_all"] for r in rows], 0.4, label="all pairs")
    ax.bar([i + 0.2 for i in x], [r["rate_top"] for r in rows], 0.4, label=f"top {share:.0%} pairs")
    ax.set_xticks(x, [r["model"] for r in rows], rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("relation hallucination rate")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return AnalysisResult(NAME, TITLE, COLUMNS + ["most_frequent"], rows, fig, notes)
