"""What HalFscore's evidence says of each concept of one response, as ``EvidenceRow`` (its spec's
``evidence_rows``): the response's hallucinated, unsettled and matched concepts, the reference's omitted ones."""

from __future__ import annotations

from typing import Any, Mapping

from ..concepts import KINDS, Concept
from ..lexicon.forms import number_word
from .evidence import HALLUCINATED, NOT_SETTLED, OMITTED, SUPPORTED, EvidenceRow, concept_key, span_of
from .spec import as_number


def _concept(item: Any) -> tuple[str, str, str]:
    """(kind, phrase, ``concept_key``) of a stored concept list ``[kind, *parts]``; a count's number as a word."""
    parts = [str(p) for p in (item if isinstance(item, (list, tuple)) else ["object", item])]
    kind, rest = (parts[0], parts[1:]) if parts and parts[0] in KINDS else ("object", parts)
    if kind == "count" and len(rest) == 2 and rest[1].isdigit():
        rest = [rest[0], number_word(int(rest[1]))]
    arity = {"object": 1, "attribute": 2, "count": 2, "relation": 3}.get(kind)
    text = Concept(kind, tuple(rest)).text() if len(rest) == arity else " ".join(rest)
    return kind, text, concept_key(kind, *rest)


def evidence_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """One row per concept of the concept graphs: the response's hallucinated, unsettled and matched ones (with the
    similarity of the match), then the reference's omitted ones.

    >>> rows = evidence_rows({}, {"hallucinated": [["object", "lamp"]], "hallucinated_spans": [[10, 14]],
    ...     "reasons": {"hallucinated": ["no lamp in the graph"]}, "omitted": [["attribute", "car", "red"]],
    ...     "matched": [[["count", "pagoda", "1"], ["count", "pagoda", "1"], 1.0]]}, "")
    >>> [(r.text, r.verdict_words, r.concept, r.span) for r in rows]  # doctest: +NORMALIZE_WHITESPACE
    [('lamp', 'hallucinated (object)', 'object:lamp', (10, 14)),
     ('one pagoda', 'supported', 'count:pagoda|one', None), ('red car', 'omitted', 'attribute:car|red', None)]
    """
    reasons = evidence.get("reasons") or {}
    rows = []
    for group, verdict in (("hallucinated", HALLUCINATED), ("unverifiable", NOT_SETTLED)):
        spans, why = evidence.get(f"{group}_spans") or [], reasons.get(group) or []
        for i, item in enumerate(evidence.get(group) or []):
            kind, phrase, key = _concept(item)
            reason = str(why[i] or "") if i < len(why) else ""
            rows.append(EvidenceRow(phrase, verdict, kind=kind, concept=key,
                                    span=span_of(spans[i]) if i < len(spans) else None,
                                    reason=reason or ("in no form in the reference's concept graph"
                                                      if verdict == HALLUCINATED else "the reference cannot settle it")))
    for match in evidence.get("matched") or []:
        if not isinstance(match, (list, tuple)) or len(match) < 2:
            continue
        kind, phrase, key = _concept(match[0])
        ref = _concept(match[1])[1] if match[1] else ""
        rows.append(EvidenceRow(phrase, SUPPORTED, kind=kind, concept=key, reason=f"matched to \"{ref}\"" if ref
                                else "matched", score=as_number(match[2]) if len(match) > 2 else None,
                                score_name="similarity of the match"))
    for i, item in enumerate(evidence.get("omitted") or []):
        kind, phrase, key = _concept(item)
        why = reasons.get("omitted") or []
        rows.append(EvidenceRow(phrase, OMITTED, kind=kind, concept=key,
                                reason=str(why[i] or "") if i < len(why) and why[i] else
                                "in the reference, said in no form by the response (recall)"))
    return rows
