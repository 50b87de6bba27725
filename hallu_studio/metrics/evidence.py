"""What a metric's evidence says about the parts of one response, as rows every view can draw alike.

A metric's spec names a reader, ``MetricSpec.evidence_rows(values, evidence, text) -> [EvidenceRow]``: one row per
thing it judged (a claim, a concept, a mentioned object, an edit, the whole answer), each with a verdict from one
shared vocabulary, what it is about, the reason and, where there is one, the number behind it and the judge. Inspect
draws every registered metric's rows the same way (one verdict, one colour), and compares rows of different metrics
that judge the same concept (``EvidenceRow.concept``). Data only: no HTML here.

>>> row = EvidenceRow("dog on sofa", HALLUCINATED, kind="relation", reason="the graph has the dog beside the sofa",
...                   concept=concept_key("relation", "Dog", "on", "sofa"))
>>> row.verdict_words, row.concept
('hallucinated (relation)', 'relation:dog|on|sofa')
>>> verdict_group(WRONG), verdict_group(CORRECT), verdict_group(NOT_SETTLED)
('bad', 'good', 'open')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

# The one verdict vocabulary: what a metric says of one thing it judged.
HALLUCINATED, SUPPORTED, NOT_SETTLED = "hallucinated", "supported", "not settled"
CORRECT, WRONG = "correct", "wrong"
OMITTED = "omitted"  # in the reference, not said by the response (recall's side, no hallucination)
NOT_JUDGED = "not judged"
VERDICTS: tuple[str, ...] = (HALLUCINATED, WRONG, NOT_SETTLED, OMITTED, SUPPORTED, CORRECT, NOT_JUDGED)
# Which verdicts agree: a hallucination and a wrong answer are one finding, as are supported and correct.
_GROUPS = {HALLUCINATED: "bad", WRONG: "bad", SUPPORTED: "good", CORRECT: "good", NOT_SETTLED: "open",
           OMITTED: "open", NOT_JUDGED: "none"}


def verdict_group(verdict: str) -> str:
    """"bad" (hallucinated, wrong), "good" (supported, correct), "open" (not settled, omitted) or "none"."""
    return _GROUPS.get(verdict, "open")


def concept_key(kind: str, *parts: Any) -> str:
    """A comparable name for one concept, whichever metric judged it: "count:pagoda|one".

    >>> concept_key("attribute", " Red ", "CAR"), concept_key("object", "the dining  table")
    ('attribute:red|car', 'object:the dining table')
    """
    return f"{kind}:" + "|".join(re.sub(r"\s+", " ", str(p).strip().lower()) for p in parts)


@dataclass(frozen=True)
class EvidenceRow:
    """One thing a metric judged in one response.

    ``text``: what is judged, as a reader says it (a claim, a concept, an object, an edit, the answer); ``span``: where
    the response says it (characters), if known; ``verdict``: a word of ``VERDICTS``; ``kind``: what it is about
    (object, attribute, count, relation, answer, edit); ``reason``: why, in the metric's or judge's words;
    ``score`` and ``score_name``: the number behind the verdict (a cost, a similarity, a probability) and what it is;
    ``judge``: who decided, where the metric has several (an NLI model, "vlm:<model>"); ``probability``: the judge's
    yes-probability where known; ``concept``: ``concept_key`` of the concept, so that rows of two metrics on one
    concept are set side by side; ``weight``: how much the row counts in the metric's number, where not 0 or 1.
    """

    text: str
    verdict: str
    kind: str = ""
    reason: str = ""
    span: tuple[int, int] | None = None
    score: float | None = None
    score_name: str = ""
    judge: str = ""
    probability: float | None = None
    concept: str = ""
    weight: float | None = None

    @property
    def verdict_words(self) -> str:
        """The verdict named for what it is about: "hallucinated (object)", "wrong (answer)", "supported"."""
        if self.kind and verdict_group(self.verdict) == "bad":
            return f"{self.verdict} ({self.kind})"
        return self.verdict


def span_of(value: Any) -> tuple[int, int] | None:
    """A stored ``[start, end]`` as a pair, else None.

    >>> span_of([2, 5]), span_of(None), span_of(["a", 1])
    ((2, 5), None, None)
    """
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return int(value[0]), int(value[1])
    return None


def answer_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """One row for a short answer read against its gold label (yes/no, multiple choice, a short answer).

    >>> r = answer_rows({"correct": False}, {"parsed_answer": "yes", "label": "no", "method": "first word"}, "Yes.")[0]
    >>> r.verdict_words, r.reason, r.span
    ('wrong (answer)', 'read as "yes" (first word); the gold answer is "no"', (0, 4))
    >>> answer_rows({"correct": None}, {}, "")
    []
    """
    correct = values.get("correct")
    if correct is None:
        return []
    said = evidence.get("parsed_answer")
    how = f" ({evidence['method']})" if evidence.get("method") else ""
    reason = (f'read as "{said}"{how}' if said is not None else f"no answer could be read{how}") + \
        (f'; the gold answer is "{evidence["label"]}"' if evidence.get("label") is not None else "")
    return [EvidenceRow(text.strip() or "(empty answer)", CORRECT if correct else WRONG, kind="answer", reason=reason,
                        span=(0, len(text)) if text else None)]
