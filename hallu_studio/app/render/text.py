"""The response text with each concept's span highlighted, coloured by verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .palette import (HALLUCINATED, SUPPORTED, TRIHE_TO_VERDICT, UNCERTAIN, VERDICT_BACKGROUNDS, VERDICT_COLOURS,
                      claim_words, esc)

# When spans overlap, the segment shows the most alarming verdict.
_SEVERITY = {HALLUCINATED: 3, UNCERTAIN: 2, SUPPORTED: 1, "": 0}


@dataclass(frozen=True)
class SpanMark:
    """A character span ``[start, end)`` of the response, what concept it mentions and its verdict."""

    start: int
    end: int
    kind: str  # object | attribute | relation | count | triplet (a claim of unknown kind)
    label: str
    verdict: str = ""  # supported | hallucinated | uncertain | "" (no judge said)
    said: str = ""  # the judge's own label, named for what the claim is about (``palette.claim_label``)


def _label(kind: str, parts: Any) -> str:
    return " ".join(str(p) for p in parts) if isinstance(parts, (list, tuple)) else str(parts)


def response_spans(concepts: dict[str, Any] | None, trihe: dict[str, Any] | None = None,
                   hallucinated_names: set[str] | frozenset[str] = frozenset(),
                   supported_names: set[str] | frozenset[str] = frozenset(), *,
                   object_verdicts: dict[str, str] | None = None) -> list[SpanMark]:
    """Span marks from the ``concepts`` evidence and the ``trihe`` triplet verdicts.

    An object takes its verdict from ``object_verdicts`` (lower-cased name -> verdict: the concept graph's, so that
    text and graph agree) where given; else one named in ``hallucinated_names`` (HalFscore's hallucinated list, lower
    case) is marked hallucinated, one in ``supported_names`` (its matched list) supported; Tri-HE triplets carry
    their own verdict.

    >>> marks = response_spans({"objects": ["cat"], "object_spans": [[4, 7]]}, None, {"cat"})
    >>> (marks[0].label, marks[0].verdict)
    ('cat', 'hallucinated')
    """
    marks: list[SpanMark] = []
    for kind, key in (("object", "objects"), ("attribute", "attributes"), ("relation", "relations")):
        items = (concepts or {}).get(key) or []
        spans = (concepts or {}).get(f"{kind}_spans") or []
        for i, item in enumerate(items):
            span = spans[i] if i < len(spans) else None
            if not span:
                continue
            label = _label(kind, item)
            verdict = ""
            if kind == "object" and object_verdicts is not None:
                verdict = object_verdicts.get(label.lower(), "")
            elif kind == "object" and label.lower() in hallucinated_names:
                verdict = HALLUCINATED
            elif kind == "object" and label.lower() in supported_names:
                verdict = SUPPORTED
            marks.append(SpanMark(int(span[0]), int(span[1]), kind, label, verdict))
    for t in (trihe or {}).get("triplets") or []:
        span = t.get("span")
        if span:
            # named for what the claim is about: an attribute conflict reads "attribute", not Tri-HE's "relation"
            kind = str(t.get("kind") or "triplet")
            marks.append(SpanMark(int(span[0]), int(span[1]), kind, _label("triplet", t.get("triplet") or []),
                                  TRIHE_TO_VERDICT.get(str(t.get("verdict")), UNCERTAIN),
                                  claim_words(str(t.get("verdict")), kind)))
    return marks


def highlight_spans_html(text: str, marks: list[SpanMark]) -> str:
    """Escaped ``text`` with every marked span wrapped in a ``<mark>``; overlaps are split.

    >>> highlight_spans_html("a <b> cat", [SpanMark(6, 9, "object", "cat", "supported")])[:60]
    '<div class="hs-response">a &lt;b&gt; <mark class="hs-span v-'
    """
    n = len(text)
    valid = [m for m in marks if 0 <= m.start < m.end <= n]
    cuts = sorted({0, n, *(m.start for m in valid), *(m.end for m in valid)})
    out = ['<div class="hs-response">']
    for a, b in zip(cuts, cuts[1:]):
        segment = esc(text[a:b])
        covering = [m for m in valid if m.start <= a and b <= m.end]
        if not covering:
            out.append(segment)
            continue
        # The innermost mark with a verdict decides (an object inside a relation claim keeps its own colour, the one
        # the concept graph gives it); among marks of one length, the most alarming.
        judged = [m for m in covering if m.verdict] or covering
        inner = min(m.end - m.start for m in judged)
        verdict = max((m.verdict for m in judged if m.end - m.start == inner), key=lambda v: _SEVERITY.get(v, 0))
        background = VERDICT_BACKGROUNDS.get(verdict, "#e3ecfb")
        border = VERDICT_COLOURS.get(verdict, "#6b8fd6")
        tip = "; ".join(f"{m.kind}: {m.label}" + (f" ({m.said or m.verdict})" if m.verdict else "") for m in covering)
        out.append(f'<mark class="hs-span v-{esc(verdict or "none")}" title="{esc(tip)}" '
                   f'style="background:{background};border-bottom:2px solid {border};padding:0 1px">{segment}</mark>')
    out.append("</div>")
    return "".join(out)
