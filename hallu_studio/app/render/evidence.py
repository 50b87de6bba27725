"""Every metric's evidence rows (``MetricSpec.evidence_rows``) drawn one way, and where two metrics disagree.

A metric's section: its per-response numbers (a count as a count, a share as a share, a weighted count said to be
one), then one row per thing it judged, the verdict as a coloured badge in words ("hallucinated (object)"), the
number behind it, the judge and the reason. Nothing here knows a metric by name: the spec says everything.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

from ...metrics.evidence import OMITTED, EvidenceRow, verdict_group
from ...metrics.spec import MetricSpec
from .palette import badge, empty_note, esc, number_html

_MAX_ROWS = 60  # a dense caption's 60 claims are still read; past that, a note says how many more


def _number_line(spec: MetricSpec, values: Mapping[str, Any], rows: Sequence[EvidenceRow]) -> str:
    """The per-response numbers: Browse's (``item``) and, where it is another, the one set beside people's ratings
    (``agreement``, often the share the count is of), each with its unit; a count some rows enter at a weight says
    so."""
    parts = []
    for number in dict.fromkeys(n for n in (spec.item, spec.agreement) if n is not None):
        value = number.of(values)
        if value is None:
            continue
        parts.append(f'<span title="{esc(number.meaning)}">{esc(number.name)} <b>{number_html(value)}</b> '
                     f'<span class="hs-unit">({esc(number.unit)})</span></span>')
    weighted = [r for r in rows if r.weight]
    if weighted and parts:
        weights = ", ".join(sorted({f"{r.weight:g}" for r in weighted if r.weight is not None}))
        parts[0] += (f' <span class="hs-weighted">a weighted count: {len(weighted)} of the {len(rows)} rows '
                     f'count {esc(weights)} each</span>')
    return f'<p class="hs-metric-numbers">{" · ".join(parts)}</p>' if parts else ""


def rows_table_html(rows: Sequence[EvidenceRow]) -> str:
    """One line per judged thing: what, verdict (in words, in its colour), the number behind it, judge, reason.

    >>> html = rows_table_html([EvidenceRow("lamp", "hallucinated", kind="object", reason="<none>", score=0.2,
    ...                                      score_name="cost")])
    >>> "hallucinated (object)" in html and "&lt;none&gt;" in html and "cost 0.2" in html
    True
    """
    if not rows:
        return empty_note("nothing judged in this response")
    judges = any(r.judge for r in rows)
    body = []
    for k, r in enumerate(rows[:_MAX_ROWS]):
        number = f"{esc(r.score_name)} {number_html(r.score)}" if r.score is not None else ""
        if r.probability is not None:
            number += f"{' · ' if number else ''}p(yes) {number_html(r.probability)}"
        judge = f"<td>{esc(r.judge)}</td>" if judges else ""
        body.append(f'<tr class="hs-row-{esc(verdict_group(r.verdict))}"><td>{k}</td><td>{esc(r.text)}</td>'
                    f'<td>{badge(r.verdict, r.verdict_words)}</td><td class="hs-num">{number}</td>{judge}'
                    f'<td class="hs-reason">{esc(r.reason)}</td></tr>')
    more = (f'<tr><td colspan="6">{esc(f"… and {len(rows) - _MAX_ROWS} more")}</td></tr>'
            if len(rows) > _MAX_ROWS else "")
    return ('<table class="hs-verdicts hs-evidence"><thead><tr><th>#</th><th>judged</th><th>verdict</th>'
            f'<th>number</th>{"<th>judge</th>" if judges else ""}<th>reason</th></tr></thead><tbody>'
            + "".join(body) + more + "</tbody></table>")


def metric_section_html(spec: MetricSpec, values: Mapping[str, Any], rows: Sequence[EvidenceRow],
                        drawing: str = "", note: str = "") -> str:
    """One metric's section: its name and headline meaning, its numbers, its own drawing (if any) and its rows."""
    title = _name(spec)
    counts = defaultdict(int)
    for r in rows:
        counts[r.verdict] += 1
    tally = " · ".join(f"{n} {esc(v)}" for v, n in counts.items())
    return (f'<section class="hs-metric" data-metric="{esc(spec.name)}"><h4>{esc(title)} '
            f'<span class="hs-tally">{tally}</span></h4>'
            f'<p class="hs-metric-meaning">{esc(spec.headline.meaning)}</p>'
            f'{_number_line(spec, values, rows)}{f"<p class=hs-config-note>{esc(note)}</p>" if note else ""}'
            f'{drawing}{rows_table_html(rows)}</section>')


def _name(spec: MetricSpec) -> str:
    """How people call the metric: its family and its name, once where they are one ("VISCON EMD", "Tri-HE")."""
    return " ".join(dict.fromkeys((spec.family, spec.display_name)))


def _said(spec: MetricSpec, row: EvidenceRow) -> str:
    number = f", {row.score_name} {number_html(row.score)}" if row.score is not None and row.score_name else ""
    reason = f" — {esc(row.reason)}" if row.reason else ""
    return f"{esc(_name(spec))} {badge(row.verdict, row.verdict_words)}{number}{reason}"


def disagreements_html(sections: Sequence[tuple[MetricSpec, Sequence[EvidenceRow]]], limit: int = 12) -> str:
    """Where metrics give one concept different verdicts, a line per concept with each one's verdict and reason,
    and once what each metric measures (its spec's headline meaning): they differ because they measure different
    things.

    >>> from hallu_studio.metrics.spec import MetricSpec, Number
    >>> a = MetricSpec("a", "A", ("caption",), Number("x", "x", "", True, meaning="claims checked on the graph"), ())
    >>> b = MetricSpec("b", "B", ("caption",), Number("y", "y", "", True, meaning="distance to the reference"), ())
    >>> html = disagreements_html([(a, [EvidenceRow("pagoda: one", "supported", concept="count:pagoda|one")]),
    ...     (b, [EvidenceRow("one pagoda", "not settled", concept="count:pagoda|one", score=46.1, score_name="cost")])])
    >>> "pagoda: one" in html and "cost 46.1" in html and "distance to the reference" in html
    True
    """
    by_concept: dict[str, list[tuple[MetricSpec, EvidenceRow]]] = defaultdict(list)
    for spec, rows in sections:
        for row in rows:
            if row.concept and row.verdict != OMITTED:
                by_concept[row.concept].append((spec, row))
    lines, involved = [], {}
    for said in by_concept.values():
        metrics = {spec.name for spec, _ in said}
        groups = {verdict_group(r.verdict) for _, r in said} - {"none"}
        if len(metrics) < 2 or len(groups) < 2:
            continue
        first = {}
        for spec, row in said:  # one row per metric: the worst it says of the concept
            if spec.name not in first or verdict_group(row.verdict) == "bad":
                first[spec.name] = (spec, row)
        involved.update((spec.name, spec) for spec, _ in first.values())
        what = said[0][1].text
        lines.append(f'<li><b>{esc(what)}</b>: ' + "; ".join(_said(s, r) for s, r in first.values()) + "</li>")
    if not lines:
        return ""
    why = " · ".join(f"<b>{esc(_name(s))}</b> measures {esc(s.headline.meaning or s.headline.name)}"
                     for s in involved.values())
    more = f"<li>… and {len(lines) - limit} more</li>" if len(lines) > limit else ""
    return (f'<div class="hs-disagree"><h4>Where the metrics disagree ({len(lines)})</h4>'
            f'<p class="hs-disagree-why">They measure different things: {why}</p>'
            f'<ul>{"".join(lines[:limit])}{more}</ul></div>')

