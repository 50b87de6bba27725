"""MME's scores, as MME's eval tool and VLMEvalKit compute them.

MME asks two yes/no questions about each image (one answered yes, one no), in 14 subtasks. Per subtask:

- ``acc``: the share of questions answered right, ×100;
- ``acc+`` (``acc_plus``): the share of images whose two questions are both right, ×100;
- the subtask's ``score``: ``acc + acc+`` (0–200);

keyed ``<subtask>.acc``, ``<subtask>.acc_plus``, ``<subtask>.score`` (the leaderboard's ``mme score`` rows, split
``OCR`` …).

``perception`` is the sum of the 10 perception subtasks' scores (0–2000), ``cognition`` (VLMEvalKit's
"reasoning") the sum of the 4 cognition subtasks' (0–800); each is reported only when every one of its
subtasks has answers. An answer is read with VLMEvalKit's yes/no rule (``vlmevalkit_reading``): an answer that
says both yes and no, or neither, counts wrong.

A sample is an MME question when it is a yes/no question whose ``meta["category"]`` is one of the 14 subtasks
(``importers.vlmevalkit`` and the MME eval-tool reader write it); the image's two questions are those of one
``image_key``, and ``meta["questions_of_image"]`` (2 in MME) says how many there are. Each question carries
``1 / questions_of_image`` of its image, so the per-item statistics add up (bootstrap replicates that draw an
image twice count it twice) and ``acc+`` is the mean over images of "all its questions right", as in MME's tool.

Worked example: in "existence", image a's two questions both right, image b's one right of two: acc = 3/4 → 75,
acc+ = 1/2 → 50, score 125.

>>> from hallu_studio.model import Sample
>>> m = MMEMetric()
>>> def item(img, answer, said):
...     s = Sample(id=f"MME/{img}{answer}", benchmark="MME", image_key=img, task="yes_no", question="?",
...                answer=answer, meta={"category": "existence", "questions_of_image": 2})
...     return m.update(ScoringItem("r", said, s)).stats
>>> stats = [item("a", "yes", "Yes."), item("a", "no", "No."), item("b", "yes", "Yes"), item("b", "no", "yes")]
>>> out = m.compute(stats)
>>> out["existence.acc"], out["existence.acc_plus"], out["existence.score"]
(75.0, 50.0, 125.0)
>>> "perception" in out  # nine perception subtasks have no answers
False
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Sequence

from ..model import Sample
from .base import ItemResult, ScoringItem
from .spec import ANSWER_METRIC, Breakdown, MetricSpec, Number
from .vlmevalkit_reading import READING, vlmevalkit_yes_no

PERCEPTION: tuple[str, ...] = ("existence", "count", "position", "color", "posters", "celebrity", "scene",
                               "landmark", "artwork", "OCR")
COGNITION: tuple[str, ...] = ("commonsense_reasoning", "numerical_calculation", "text_translation",
                              "code_reasoning")
SUBTASKS: tuple[str, ...] = PERCEPTION + COGNITION


def _needs(sample: Sample) -> str | None:
    if sample.meta.get("category") not in SUBTASKS:
        return "not an MME question (its category is none of MME's 14 subtasks)"
    return None


def add_up(stats: Sequence[dict[str, float]]) -> dict[str, float]:
    """Every numeric statistic summed over the items (the totals ``compute`` reads)."""
    if len(stats) == 1:  # the bootstrap's replicates come summed already
        return {k: float(v) for k, v in stats[0].items() if isinstance(v, (int, float))}
    totals: dict[str, float] = defaultdict(float)
    for s in stats:
        for key, value in s.items():
            if isinstance(value, (int, float)):
                totals[key] += float(value)
    return totals


def all_right_shares(totals: dict[str, float], buckets: Callable[[str], tuple[str, ...]]) -> dict[str, float]:
    """Per bucket, the weighted share of groups with no wrong answer, ×100, in one pass over the totals.

    A group's statistics are ``<group>.w`` (its weight: 1 per draw of the group) and ``<group>.wrong``;
    ``buckets(group)`` names the buckets the group counts in (MME: its subtask); it is asked once per group and
    process, since a bootstrap asks for the same groups a thousand times."""
    named = _bucket_cache.setdefault(buckets, {})
    weight: dict[str, float] = defaultdict(float)
    right: dict[str, float] = defaultdict(float)
    for key, w in totals.items():
        if not key.endswith(".w") or "|" not in key:
            continue
        group = key[:-2]
        found = named.get(group)
        if found is None:
            found = named[group] = buckets(group)
        ok = not totals.get(group + ".wrong")
        for bucket in found:
            weight[bucket] += w
            if ok:
                right[bucket] += w
    return {b: 100 * right[b] / w for b, w in weight.items() if w}


_bucket_cache: dict[Callable[[str], tuple[str, ...]], dict[str, tuple[str, ...]]] = {}


def _subtask(group: str) -> tuple[str, ...]:
    return (group.split("|", 1)[0],)


class MMEMetric:
    spec = MetricSpec(
        "mme", "MME", tasks=("yes_no",),
        headline=Number("perception", "Perception", "points (0–2000)", lower_is_better=False,
                        plain="points out of 2,000 for answering perception questions right",
                        meaning="MME perception: over its 10 perception subtasks, the sum of accuracy + accuracy+ "
                                "(both questions of an image right), each ×100, as MME's eval tool and VLMEvalKit "
                                "compute it.",
                        misleads="yes/no read by VLMEvalKit's word rule (an answer saying both or neither counts "
                                 "wrong); two questions per image, so a few images move it a lot."),
        summary=("cognition",),
        breakdown=Breakdown(("score", "acc", "acc_plus"), order=SUBTASKS),
        **ANSWER_METRIC,
        settings=(), needs=_needs)
    name = spec.name

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "answer": READING}

    def update(self, item: ScoringItem) -> ItemResult:
        sample = item.sample
        label = (sample.answer or "").strip().lower()
        subtask = sample.meta.get("category")
        values: dict[str, Any] = {"correct": None, "answered": None, "subtask": subtask}
        reason = _needs(sample) or (None if label in ("yes", "no") else f"sample {sample.id} has no yes/no label")
        if reason is not None or sample.task != "yes_no":
            return ItemResult({}, values, {}, reason or f"sample {sample.id} is not a yes/no question")
        said = vlmevalkit_yes_no(item.response or "")
        right = said == label
        share = 1.0 / max(1, int(sample.meta.get("questions_of_image") or 2))
        group = f"{subtask}|{sample.image_key}"
        stats = {f"{subtask}.n": 1.0, f"{subtask}.right": float(right), f"{group}.w": share,
                 f"{group}.wrong": float(not right)}
        values.update(correct=right, answered=said)
        return ItemResult(stats, values, {"parsed_answer": said, "label": label, "method": READING})

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        totals = add_up(stats)
        out: dict[str, float] = {}
        plus = all_right_shares(totals, _subtask)
        for subtask in SUBTASKS:
            n = totals.get(f"{subtask}.n", 0.0)
            if not n or subtask not in plus:
                continue
            out[f"{subtask}.acc"] = 100 * totals.get(f"{subtask}.right", 0.0) / n
            out[f"{subtask}.acc_plus"] = plus[subtask]
            out[f"{subtask}.score"] = out[f"{subtask}.acc"] + plus[subtask]
        for total, members in (("perception", PERCEPTION), ("cognition", COGNITION)):
            if all(f"{m}.score" in out for m in members):
                out[total] = sum(out[f"{m}.score"] for m in members)
        out["questions"] = sum(totals.get(f"{s}.n", 0.0) for s in SUBTASKS)
        return out
