"""HallusionBench's three accuracies, as VLMEvalKit computes them.

HallusionBench groups its yes/no questions two ways: by figure (the questions asked about one image of a set)
and by question (one question asked about each figure of a set, the original and its edited versions).

- ``aAcc``: the share of questions answered right, ×100;
- ``fAcc``: the share of figures all of whose questions are right, ×100;
- ``qAcc``: the share of questions right on every figure they are asked about, ×100;

overall, per ``category`` (``VD`` visual dependent, ``VS`` visual supplement) and per ``l2-category``
(``VD_illusion``, ``VS_chart`` …), keyed ``aAcc``, ``VD.aAcc``, ``VS_chart.fAcc`` and so on (the leaderboard's
``hallusionbench fAcc`` rows with split ``VS_chart``). An answer is read
with VLMEvalKit's yes/no rule (``vlmevalkit_reading``; both or neither counts wrong).

The groups are VLMEvalKit's: a figure is ``(l2-category, set_id, figure_id)``, a question ``(l2-category,
set_id, question_id)``, the three ids being parts of its row ``index`` (``VD_illusion_1_0_0_1``: set 1, figure 0,
question 1), which ``importers.vlmevalkit`` stores in ``meta`` with each group's size (``figure_questions``,
``question_figures``). Each question carries ``1 / size`` of its groups, so statistics add up and a group counts
once (twice when a bootstrap replicate draws it twice).

>>> from hallu_studio.model import Sample
>>> m = HallusionBenchMetric()
>>> def item(fig, q, answer, said):
...     meta = {"category": "VD", "l2-category": "VD_math", "set_id": "1", "figure_id": fig, "question_id": q,
...             "figure_questions": 2, "question_figures": 2}
...     s = Sample(id=f"h/{fig}{q}", benchmark="h", image_key=fig, task="yes_no", question="?", answer=answer,
...                meta=meta)
...     return m.update(ScoringItem("r", said, s)).stats
>>> out = m.compute([item("0", "0", "yes", "Yes"), item("0", "1", "no", "No"),
...                  item("1", "0", "no", "No"), item("1", "1", "no", "Yes")])
>>> out["aAcc"], out["fAcc"], out["qAcc"], out["VD_math.fAcc"]
(75.0, 50.0, 50.0, 50.0)
"""

from __future__ import annotations

from typing import Any, Sequence

from ..model import Sample
from .base import ItemResult, ScoringItem
from .mme import add_up, all_right_shares
from .spec import ANSWER_METRIC, Breakdown, MetricSpec, Number
from .vlmevalkit_reading import READING, vlmevalkit_yes_no

CATEGORIES: tuple[str, ...] = ("VD", "VS")
L2_CATEGORIES: tuple[str, ...] = ("VD_figure", "VD_illusion", "VD_math", "VD_ocr", "VD_video", "VS_chart",
                                  "VS_map", "VS_ocr", "VS_table")
SPLITS: tuple[str, ...] = CATEGORIES + L2_CATEGORIES
NUMBERS: tuple[str, ...] = ("aAcc", "fAcc", "qAcc")
_META = ("category", "l2-category", "set_id", "figure_id", "question_id")


def _needs(sample: Sample) -> str | None:
    missing = [k for k in _META if not str(sample.meta.get(k) or "")]
    if missing:
        return f"not a HallusionBench question (no {', '.join(missing)} in its meta)"
    return None


class HallusionBenchMetric:
    spec = MetricSpec(
        "hallusionbench", "HallusionBench", tasks=("yes_no",),
        headline=Number("aAcc", "aAcc", "% of questions", lower_is_better=False,
                        plain="% of questions answered right",
                        meaning="HallusionBench's all-question accuracy ×100 (yes/no read by VLMEvalKit's rule).",
                        misleads="a model that answers every question the same way gets about half; fAcc and qAcc "
                                 "(all of a figure's, all of a question's answers right) show consistency."),
        summary=("fAcc", "qAcc"),
        breakdown=Breakdown(NUMBERS, order=SPLITS),
        **ANSWER_METRIC,
        settings=(), needs=_needs)
    name = spec.name

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "answer": READING}

    def update(self, item: ScoringItem) -> ItemResult:
        sample, meta = item.sample, item.sample.meta
        label = (sample.answer or "").strip().lower()
        values: dict[str, Any] = {"correct": None, "answered": None}
        reason = _needs(sample) or (None if label in ("yes", "no") else f"sample {sample.id} has no yes/no label")
        if reason is not None or sample.task != "yes_no":
            return ItemResult({}, values, {}, reason or f"sample {sample.id} is not a yes/no question")
        said = vlmevalkit_yes_no(item.response or "")
        right = float(said == label)
        category, l2 = str(meta["category"]), str(meta["l2-category"])
        where = f"{category}|{l2}|{meta['set_id']}"
        stats: dict[str, float] = {"n": 1.0, "right": right}
        for split in (category, l2):
            stats[f"{split}.n"], stats[f"{split}.right"] = 1.0, right
        for kind, group, size in (("f", meta["figure_id"], meta.get("figure_questions")),
                                  ("q", meta["question_id"], meta.get("question_figures"))):
            key = f"{kind}|{where}|{group}"
            stats[f"{key}.w"], stats[f"{key}.wrong"] = 1.0 / max(1, int(size or 1)), 1.0 - right
        values.update(correct=bool(right), answered=said)
        return ItemResult(stats, values, {"parsed_answer": said, "label": label, "method": READING})

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        totals = add_up(stats)
        # A group key is "kind|category|l2-category|set|id": it counts overall ("f" / "q"), in its category and in
        # its l2-category ("f.VD", "q.VD_math").
        shares = all_right_shares(totals, _buckets)
        out: dict[str, float] = {}
        if totals.get("n"):
            out["aAcc"] = 100 * totals["right"] / totals["n"]
            out.update({name: shares[name[0]] for name in ("fAcc", "qAcc") if name[0] in shares})
        for split in sorted({k.rsplit(".", 1)[0] for k in totals if k.endswith(".n") and "|" not in k}):
            out[f"{split}.aAcc"] = 100 * totals.get(f"{split}.right", 0.0) / totals[f"{split}.n"]
            out.update({f"{split}.{name}": shares[f"{name[0]}.{split}"] for name in ("fAcc", "qAcc")
                        if f"{name[0]}.{split}" in shares})
        out["questions"] = totals.get("n", 0.0)
        return out


def _buckets(group: str) -> tuple[str, ...]:
    """``f|VD|VD_math|1|0`` counts in ``f``, ``f.VD`` and ``f.VD_math``."""
    kind, category, l2 = group.split("|")[:3]
    return kind, f"{kind}.{category}", f"{kind}.{l2}"
