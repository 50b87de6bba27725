"""People's labels beside the judges' verdicts on one response (``studies.people_judges.PeopleBeside``), as HTML.

Three parts: the call on the whole response, each source's against each metric's (agree / disagree); the response
with the spans people labelled, each saying which metrics flag words there and which do not, and the words only a
metric flags; and what else people said (facts, ratings, comparisons, corrections). Every text is escaped.
"""

from __future__ import annotations

from typing import Sequence

from ...studies.people_judges import (ACCURATE, DISAGREE_RULE, HALLUCINATED, JudgeReading, PeopleBeside,
                                      PersonLabel, SpanCheck)
from .palette import SUPPORTED, UNCERTAIN, VERDICT_BACKGROUNDS, badge, empty_note, esc, number_html

# A person's or a judge's word for a response or span, in the one verdict palette.
_VERDICT = {HALLUCINATED: HALLUCINATED, ACCURATE: SUPPORTED}
PEOPLE_CSS = """
.hs-people table { border-collapse: collapse; margin: 4px 0 10px; font-size: 0.92em }
.hs-people th, .hs-people td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top }
.hs-people .hs-agree { color: #1f6f43 }
.hs-people .hs-disagree { color: #a12626; font-weight: 600 }
.hs-people .hs-rule { color: #555; font-size: 0.88em; margin: 2px 0 6px }
.hs-people .hs-marked { border-bottom: 2px solid #333; padding: 0 1px }
.hs-people .hs-people-text { line-height: 1.9; max-height: 260px; overflow-y: auto; border: 1px solid #eee;
  padding: 6px 8px }
.hs-people sup { font-size: 0.72em; color: #333; font-weight: 600 }
"""


def said(word: str) -> str:
    """A verdict word as a badge in the palette's colour (``""``: no call).

    >>> "hallucinated" in said("hallucinated") and "#d64545" in said("hallucinated")
    True
    """
    return badge(_VERDICT.get(word, UNCERTAIN), word or "no call")


def _agreement(agree: bool) -> str:
    return '<span class="hs-agree">✓ agree</span>' if agree else '<span class="hs-disagree">✗ disagree</span>'


def _judge_head(j: JudgeReading) -> str:
    """The metric's name and its call, said as what it flags (the call is read off its flagged words), and its
    hallucination scores."""
    if j.says is None:
        return f'{esc(j.name)}<br><span title="{esc(j.why_none)}">{said("")}</span><br><small>{esc(j.why_none)}</small>'
    if j.flagged is None:
        call = said(j.says)
    elif not j.flags_words:
        call = badge(_VERDICT[j.says], "flags the answer" if j.flagged else "flags nothing")
    else:
        n = len(j.flagged)
        call = badge(_VERDICT[j.says], f"flags {n} span{'s' if n != 1 else ''}" if n else "flags nothing")
    scores = "".join(f'<br><small>{esc(name)} {number_html(value)}</small>' for name, value in j.scores)
    return f"{esc(j.name)}<br>{call}{scores}"


def calls_html(beside: PeopleBeside) -> str:
    """The table of the whole response's calls: one column per metric (its call in the header), one row per
    source that makes a call, each cell agree or disagree."""
    judges = [j for j in beside.judges]
    if not judges:
        return empty_note("no judge has scored this response under the configuration in force yet")
    sources = list(dict.fromkeys((c.source, c.people, c.how) for c in beside.calls))
    head = "".join(f"<th>{_judge_head(j)}</th>" for j in judges)
    rows = []
    for source, people, how in sources:
        cells = []
        for j in judges:
            check = next((c for c in beside.calls if c.source == source and c.metric == j.name), None)
            cells.append(f"<td>{_agreement(check.agree) if check else '—'}</td>")
        rows.append(f"<tr><th>{esc(source)} <small>({esc(how)})</small><br>{said(people)}</th>{''.join(cells)}</tr>")
    if not rows:
        rows.append(f'<tr><td colspan="{len(judges) + 1}">{empty_note("no person made a call on the whole response")}'
                    "</td></tr>")
    return f"<table><thead><tr><th>people \\ judges</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _marked_text(text: str, checks: Sequence[SpanCheck]) -> str:
    """The response with each labelled span underlined in its label's colour and numbered (overlaps: the first)."""
    spans = sorted(((c.label.span, i) for i, c in enumerate(checks) if c.label.span), key=lambda x: x[0])
    out, at = [], 0
    for (start, end), i in spans:
        if start < at or end > len(text):
            continue
        colour = VERDICT_BACKGROUNDS[_VERDICT.get(checks[i].label.says, UNCERTAIN)]
        out.append(esc(text[at:start]))
        out.append(f'<span class="hs-marked" style="background:{colour}" data-span="{start}-{end}">'
                   f"{esc(text[start:end])}<sup>[{i + 1}]</sup></span>")
        at = end
    out.append(esc(text[at:]))
    return f'<div class="hs-people-text">{"".join(out)}</div>'


def spans_html(beside: PeopleBeside, text: str) -> str:
    """The response with people's spans, one row per span (which metrics agree there), and the words only a
    metric flags."""
    parts = []
    if beside.spans:
        parts.append(_marked_text(text, beside.spans))
        rows = "".join(
            f"<tr><td>[{i + 1}]</td><td>{esc(c.label.source)}</td><td>{esc(c.label.kind)}</td>"
            f"<td>{said(c.label.says)}</td><td>{esc(c.label.text)}</td>"
            f'<td class="hs-agree">{esc(", ".join(c.agree) or "—")}</td>'
            f'<td class="hs-disagree">{esc(", ".join(c.disagree) or "—")}</td></tr>'
            for i, c in enumerate(beside.spans))
        parts.append("<table><thead><tr><th>#</th><th>source</th><th>what</th><th>people say</th><th>words</th>"
                     "<th>judges agreeing</th><th>judges disagreeing</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    if beside.judge_only:
        groups: dict[tuple[str, str], list[str]] = {}
        for o in beside.judge_only:
            groups.setdefault((o.metric, o.against), []).append(o.text)
        rows = "".join(f'<tr><td>{esc(metric)}</td><td class="hs-disagree">{esc(against)}</td>'
                       f"<td>{_words(words)}</td></tr>" for (metric, against), words in groups.items())
        parts.append("<p><b>Words only a judge flags</b> (no person marked them hallucinated)</p><table><thead><tr>"
                     f"<th>judge</th><th>people</th><th>words</th></tr></thead><tbody>{rows}</tbody></table>")
    return "".join(parts)


def _words(words: Sequence[str], most: int = 20) -> str:
    """Distinct words, the first ``most`` of them, and how many more.

    >>> _words(["a", "b", "a", "c"], most=2)
    'a · b … and 1 more'
    """
    distinct = list(dict.fromkeys(words))
    more = f" … and {len(distinct) - most} more" if len(distinct) > most else ""
    return esc(" · ".join(distinct[:most]) + more)


def _other_row(p: PersonLabel) -> str:
    what = p.text or p.detail
    extra = p.detail if p.text and p.detail else ""
    return (f"<tr><td>{esc(p.source)} · {esc(p.annotator)}</td><td>{esc(p.kind)}</td><td>{said(p.says)}</td>"
            f"<td>{esc(what)}</td><td>{esc(extra)}</td></tr>")


def others_html(labels: Sequence[PersonLabel]) -> str:
    """What people said besides spans: facts, whole-response labels, ratings, comparisons, unplaced corrections."""
    rest = [p for p in labels if p.span is None]
    if not rest:
        return ""
    note = ("<p class=\"hs-rule\">A fact is judged against the image's reference by the Study view's facts table; "
            "here it counts toward its source's call on the response.</p>" if any(p.kind == "fact" for p in rest)
            else "")
    return ("<p><b>What else people said</b></p><table><thead><tr><th>source · who</th><th>what</th>"
            "<th>says</th><th>about</th><th>detail</th></tr></thead><tbody>" + "".join(map(_other_row, rest))
            + f"</tbody></table>{note}")


def people_line(beside: PeopleBeside) -> str:
    """One line for the top of Inspect: who judged the response, how many spans they marked, which metrics they
    disagree with ("" when no person judged it).

    >>> from hallu_studio.studies.people_judges import PersonLabel
    >>> people_line(PeopleBeside([PersonLabel("<s>", "a", "span", "hallucinated", "dog", (2, 5))]))
    '<p class="hs-people-line"><b>people:</b> &lt;s&gt; · 1 span marked · no judge has a call yet · details under “people beside the judges”</p>'
    """
    if not beside.labels:
        return ""
    sources = ", ".join(dict.fromkeys(p.source for p in beside.labels))
    spans = sum(1 for p in beside.labels if p.kind == "span")
    marked = f" · {spans} span{'s' if spans != 1 else ''} marked" if spans else ""
    if not beside.calls:
        verdict = "no judge has a call yet"
    elif beside.disagreeing:
        verdict = f"disagree with {', '.join(beside.disagreeing)}"
    else:
        verdict = "no judge contradicts them"
    return (f'<p class="hs-people-line"><b>people:</b> {esc(sources)}{esc(marked)} · {esc(verdict)} · details under '
            "“people beside the judges”</p>")


def people_cell(beside: PeopleBeside | None) -> str:
    """Browse's "people vs judges" cell: how many metrics people's call contradicts and which (all on hover).

    >>> people_cell(None), people_cell(PeopleBeside())
    ('', '')
    """
    if beside is None or not beside.calls:
        return ""
    if not beside.disagreeing:
        return '<span class="hs-agree" title="no judge contradicts people\'s call on the response">agree</span>'
    names = ", ".join(beside.disagreeing)
    return (f'<span class="hs-disagree" title="{esc("people and these judges disagree: " + names)}">'
            f"disagree ({len(beside.disagreeing)}): {esc(names)}</span>")


def people_html(beside: PeopleBeside, text: str) -> str:
    """The whole panel; a note when no person judged the response."""
    if not beside.labels:
        return (f'<div class="hs-people"><style>{PEOPLE_CSS}</style>'
                + empty_note("no person has judged this response (no imported label, no rating or correction here)")
                + "</div>")
    disagree = beside.disagreeing
    summary = (f'<span class="hs-disagree">people and {esc(", ".join(disagree))} disagree on the response</span>'
               if disagree else '<span class="hs-agree">no judge contradicts people\'s call on the response</span>')
    return (f'<div class="hs-people"><style>{PEOPLE_CSS}</style><p>{summary}</p>'
            f'<p class="hs-rule">{esc(DISAGREE_RULE)}.</p>{calls_html(beside)}{spans_html(beside, text)}'
            f"{others_html(beside.labels)}</div>")
