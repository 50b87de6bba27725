"""How Tri-HE's stored evidence reads to the views and the studies: each judged claim as an evidence row, a fact's
verdict from its claims' verdicts, the claims people correct in Annotate.

The metric (``metrics.trihe``) writes the evidence; this module only reads it, so a view or a study never has to know
the metric's internals.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..judges.base import EXISTENCE_PREDICATE, HALLUCINATION_VERDICTS
from .evidence import HALLUCINATED, NOT_SETTLED, SUPPORTED, WRONG, EvidenceRow, concept_key, span_of
from .spec import FACT_ACCURATE, FACT_HALLUCINATED, FactReading, as_number

# The predicate of an attribute claim ("flag is blue") in the response's claims.
ATTRIBUTE_PREDICATE = "is"

# Claim verdicts that make a fact false as stated: a hallucination, or a claim stated in no form by the reference.
FALSE_AS_STATED: tuple[str, ...] = (*HALLUCINATION_VERDICTS, "prediction_error")


def fact_verdict(claim_verdicts: Sequence[str]) -> str:
    """A fact's verdict from its claims' verdicts: hallucinated when any claim is false as stated, accurate when
    every claim is supported, else not settled (unverifiable, inference, unparseable, or no claim at all).

    >>> fact_verdict(["supported", "object"]), fact_verdict(["supported"]), fact_verdict(["supported", "unverifiable"])
    ('hallucinated', 'accurate', 'not settled')
    >>> fact_verdict([])
    'not settled'
    """
    if any(v in FALSE_AS_STATED for v in claim_verdicts):
        return FACT_HALLUCINATED
    if claim_verdicts and all(v == "supported" for v in claim_verdicts):
        return FACT_ACCURATE
    return NOT_SETTLED


def fact_reading(values: Mapping[str, Any], evidence: Mapping[str, Any], undefined: str | None) -> FactReading:
    """One atomic fact judged as a response is (FaithScore's stage 2), read off its claims' verdicts."""
    triplets = tuple(evidence.get("triplets") or [])
    reason = undefined or "; ".join(f"{' '.join(map(str, t.get('triplet') or []))}: {t.get('verdict')}"
                                    for t in triplets)
    return FactReading(fact_verdict([str(t.get("verdict")) for t in triplets]), reason, triplets)


def claim_about(claim: Mapping[str, Any]) -> str:
    """What a stored claim is about, as a reader names it: the judge's ``kind`` where it gave one, else its verdict's
    (Tri-HE files an attribute conflict under "relation" and a wrong count under "object").

    >>> claim_about({"verdict": "relation", "kind": "attribute"}), claim_about({"verdict": "object"})
    ('attribute', 'object')
    """
    kind = str(claim.get("kind") or "")
    verdict = str(claim.get("verdict"))
    return kind or (verdict if verdict in HALLUCINATION_VERDICTS else "claim")


def _claim_concept(parts: list[str], about: str) -> str:
    if len(parts) != 3:
        return ""
    s, p, o = parts
    if p == EXISTENCE_PREDICATE:
        return concept_key("object", s)
    if about in ("attribute", "count") and p == ATTRIBUTE_PREDICATE:
        return concept_key(about, s, o)
    return concept_key("relation", s, p, o)


def evidence_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """One row per judged claim: hallucinated where it counts as one (an unverifiable claim counted at a weight
    says so), a prediction error as wrong, unverifiable / inference / unparseable as not settled.

    >>> rows = evidence_rows({}, {"judge": "graph", "triplets": [
    ...     {"triplet": ["flag", "is", "pink"], "verdict": "relation", "kind": "attribute", "reason": "it is blue"},
    ...     {"triplet": ["sky", "is", "hazy"], "verdict": "unverifiable", "kind": "attribute", "weight": 0.5}]}, "")
    >>> [(r.verdict_words, r.concept, r.weight) for r in rows]
    [('hallucinated (attribute)', 'attribute:flag|pink', None), ('not settled', 'attribute:sky|hazy', 0.5)]
    """
    rows = []
    for t in evidence.get("triplets") or []:
        parts = [str(x) for x in t.get("triplet") or []]
        verdict, about = str(t.get("verdict")), claim_about(t)
        weight = as_number(t.get("weight"))
        if t.get("hallucinated", verdict in HALLUCINATION_VERDICTS):
            said = HALLUCINATED
        elif verdict == "supported":
            said = SUPPORTED
        elif verdict == "prediction_error":
            said, about = WRONG, "triplet, its parts are in the reference"
        else:
            said = NOT_SETTLED
        reason = str(t.get("reason") or "")
        if verdict not in ("supported", *HALLUCINATION_VERDICTS):
            reason = f"{verdict}: {reason}" if reason else verdict
        if weight:
            reason += f" (counts {weight:g} of a hallucinated claim: scoring.unverifiable_weight)"
        rows.append(EvidenceRow(" ".join(parts), said, kind=about, reason=reason, span=span_of(t.get("span")),
                                score=as_number(t.get("score")), score_name="judge's support score",
                                judge=str(t.get("judge") or evidence.get("judge") or ""),
                                probability=as_number(t.get("probability")), concept=_claim_concept(parts, about),
                                weight=weight))
    return rows


def corrected_claims(evidence: Mapping[str, Any]) -> list[tuple[tuple[str, str, str] | None, str]]:
    """Each judged claim of a Tri-HE evidence as people correct it in Annotate: its triplet and the judge's verdict.

    >>> corrected_claims({"triplets": [{"triplet": ["cat", "on", "mat"], "verdict": "relation"},
    ...                                {"verdict": "object"}]})
    [(('cat', 'on', 'mat'), 'relation'), (None, 'object')]
    """
    out = []
    for t in evidence.get("triplets") or []:
        triplet = tuple(str(x) for x in t["triplet"]) if t.get("triplet") else None
        out.append((triplet, str(t.get("verdict"))))
    return out  # type: ignore[return-value]
