"""HalFscore's precision side settled by the image judge (``judges.vlm_judge``), where the reference cannot settle it.

Two cases (``scoring.vlm_judge_model`` set, ``scoring.vlm_judge_unsettled = "image"``):

- a reference that leaves some response concepts unverifiable (open-world captions, an object list): each such
  concept is asked of the image; "yes" makes it matched (by the image, no reference partner), "no" hallucinated;
- no reference at all (the user's own images): every response concept is asked; precision is 1 − hallucinated /
  generated, and recall is undefined (nothing says what the image holds that the response omits).

A concept is asked as the claim Tri-HE would make of it (``concept_claim``), so a concept both metrics read is
one cached question. The evidence lists what the image decided (``image_verdicts``: concept, verdict, the model's
answer as the reason, its yes-probability, the judge).

>>> concept_claim(Concept("object", ("dog",))), concept_claim(Concept("count", ("dog", "2")))
(('dog', 'is in', 'the image'), ('dog', 'is', 'two'))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..concepts import Concept, MatchOutcome
from ..judges.base import EXISTENCE_OBJECT, EXISTENCE_PREDICATE, JudgeReference, Triplet, TripletJudgement

if TYPE_CHECKING:
    from ..judges.vlm_judge import VLMJudge

NO_REFERENCE_RECALL = ("no reference: the image judge settled precision; recall is undefined (nothing says what "
                       "the image holds that the response leaves out)")


def concept_claim(c: Concept) -> Triplet:
    """The claim a concept makes, as Tri-HE writes it: existence, ``(o, is, a)``, ``(o, is, two)``, ``(s, p, o)``."""
    if c.kind == "object":
        return (c.parts[0], EXISTENCE_PREDICATE, EXISTENCE_OBJECT)
    if c.kind == "attribute":
        return (c.parts[0], "is", c.parts[1])
    if c.kind == "count":
        return (c.parts[0], "is", c.number_word())
    return (c.parts[0], c.parts[1], c.parts[2])


def image_reference(image: bytes, sha256: str | None) -> JudgeReference:
    return JudgeReference(source="none", image=image, image_sha256=sha256)


def ask_image(judge: "VLMJudge", concepts: Sequence[Concept], image: bytes, sha256: str | None
              ) -> list[TripletJudgement]:
    """The image judge's verdict on each concept (``ImageJudgeError`` when an answer is unusable)."""
    claims = list(dict.fromkeys(concept_claim(c) for c in concepts))
    verdicts = dict(zip(claims, judge.judge(claims, image_reference(image, sha256))))
    return [verdicts[concept_claim(c)] for c in concepts]


def evidence_rows(concepts: Sequence[Concept], verdicts: Sequence[TripletJudgement]) -> list[dict[str, Any]]:
    return [{"concept": c.to_list(), "verdict": "supported" if j.verdict == "supported" else "hallucinated",
             "reason": j.reason, "probability": j.probability, "judge": j.judge} for c, j in zip(concepts, verdicts)]


def settle_unverifiable(judge: "VLMJudge", outcome: MatchOutcome, image: bytes, sha256: str | None
                        ) -> list[dict[str, Any]]:
    """Ask the image about ``outcome.unverifiable`` and move each to matched or hallucinated (in place)."""
    asked = list(outcome.unverifiable)
    if not asked:
        return []
    verdicts = ask_image(judge, asked, image, sha256)
    outcome.unverifiable = []
    for c, j in zip(asked, verdicts):
        outcome.reasons[c] = f"the reference leaves it open; the image settles it: {j.reason}"
        if j.verdict == "supported":
            outcome.matched.append((c, None, j.probability))
        else:
            outcome.hallucinated.append(c)
    return evidence_rows(asked, verdicts)


def image_only(judge: "VLMJudge", response: list[Concept], image: bytes, sha256: str | None
               ) -> tuple[MatchOutcome, list[dict[str, Any]]]:
    """Every response concept judged by the image alone (no reference): the outcome and the evidence rows."""
    verdicts = ask_image(judge, response, image, sha256)
    outcome = MatchOutcome()
    for c, j in zip(response, verdicts):
        outcome.reasons[c] = f"no reference; {j.reason}"
        if j.verdict == "supported":
            outcome.matched.append((c, None, j.probability))
        else:
            outcome.hallucinated.append(c)
    return outcome, evidence_rows(response, verdicts)
