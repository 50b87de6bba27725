"""Judge verdicts: Tri-HE triplets with reasons, HalFscore's concept lists, Reefknot answers."""

from __future__ import annotations

from typing import Any, Sequence

from .concepts import concept_text
from .palette import TRIHE_TO_VERDICT, UNCERTAIN, badge, claim_words, empty_note, esc, number_html


def triplet_verdicts_html(evidences: Sequence[tuple[str, dict[str, Any]]],
                          corrections: dict[int, str] | None = None) -> str:
    """One table row per triplet and judge: the triplet, each judge's verdict, score and reason.

    ``evidences`` are ``(judge label, trihe evidence)`` pairs (several judges may have scored
    the same response); ``corrections`` maps a triplet index to the current human verdict.

    >>> html = triplet_verdicts_html([("embedding", {"triplets": [{"triplet": ["cat", "on", "mat"],
    ...                               "verdict": "object", "score": 0.2, "reason": "no cat"}]})])
    >>> "no cat" in html and "hallucinated (object)" in html
    True
    """
    if not evidences or not any((ev or {}).get("triplets") for _, ev in evidences):
        return empty_note("no Tri-HE triplets for this response")
    rows = []
    for judge, ev in evidences:
        for i, t in enumerate((ev or {}).get("triplets") or []):
            label = str(t.get("verdict"))
            kind = str(t.get("kind") or "")
            human = (corrections or {}).get(i)
            human_cell = badge(TRIHE_TO_VERDICT.get(human, UNCERTAIN), claim_words(human, kind)) if human else ""
            rows.append(
                f'<tr><td>{i}</td><td>{esc(" | ".join(str(x) for x in t.get("triplet") or []))}</td>'
                f'<td>{esc(kind or "—")}</td><td>{esc(judge)}</td><td>{_verdict_badge(label, kind)}</td>'
                f'<td>{number_html(t.get("score"))}</td><td class="hs-reason">{esc(t.get("reason"))}</td>'
                f'<td>{human_cell}</td></tr>')
    return ('<table class="hs-verdicts"><thead><tr><th>#</th><th>claim</th><th>about</th><th>judge</th>'
            '<th>verdict</th><th>score</th><th>reason</th><th>human</th></tr></thead><tbody>' + "".join(rows)
            + "</tbody></table>")


def _verdict_badge(label: str, kind: str = "") -> str:
    """A judge's verdict as a badge, named for what the claim is about (an attribute conflict is "attribute",
    not Tri-HE's "relation"); a kind this version does not know (from a newer judge) is shown by its own name,
    amber, and says so on hover rather than failing.

    >>> "title=" in _verdict_badge("speculation") and "speculation" in _verdict_badge("speculation")
    True
    >>> ">hallucinated (attribute)<" in _verdict_badge("relation", "attribute")
    True
    """
    if label in TRIHE_TO_VERDICT:
        return badge(TRIHE_TO_VERDICT[label], claim_words(label, kind))
    note = f"verdict kind {label!r}: not one this view colours, shown as uncertain; the reason says more"
    return f'<span title="{esc(note)}">{badge(UNCERTAIN, label)}</span>'


def _chips(items: Sequence[Any], verdict: str) -> str:
    if not items:
        return empty_note("none")
    return " ".join(badge(verdict, concept_text(x)) for x in items)


def halfscore_html(evidence: dict[str, Any] | None, values: dict[str, Any] | None = None) -> str:
    """HalFscore's hallucinated (in the response, not the reference) and omitted concepts.

    >>> "pizza" in halfscore_html({"hallucinated": ["pizza"], "omitted": [], "matched": []})
    True
    """
    if not evidence:
        return empty_note("no HalFscore for this response")
    head = ""
    if values:
        head = (f'<p>precision {number_html(values.get("precision"))} · recall {number_html(values.get("recall"))}'
                f' · F {number_html(values.get("f"))}</p>')
    matched = evidence.get("matched") or []
    rows = "".join(f"<tr><td>{esc(concept_text(m[0]))}</td><td>{esc(concept_text(m[1]) if m[1] else '—')}</td>"
                   f"<td>{number_html(m[2] if len(m) > 2 else None)}"
                   "</td></tr>" for m in matched if isinstance(m, (list, tuple)) and len(m) >= 2)
    table = (f'<details><summary>{len(matched)} matched</summary><table class="hs-matched"><tr><th>response</th>'
             f'<th>reference</th><th>similarity</th></tr>{rows}</table></details>') if matched else ""
    return (f'<div class="hs-halfscore">{head}<p><b>hallucinated</b> {_chips(evidence.get("hallucinated") or [], "hallucinated")}'
            f'</p><p><b>omitted</b> {_chips(evidence.get("omitted") or [], "uncertain")}</p>{table}</div>')


def lens_series(lens: Any, n_tokens: int = 3) -> dict[str, list[float | None]]:
    """Per token of the last layer's top-k, its probability at each layer (None: not in that layer's top-k).

    ``lens`` is the backends' ``logit_lens`` signal: ``{"layers": [{"layer", "tokens", "probs"}, ...]}``.

    >>> lens_series({"layers": [{"layer": 1, "tokens": ["no"], "probs": [0.6]},
    ...                         {"layer": 2, "tokens": ["yes", "no"], "probs": [0.7, 0.2]}]})
    {'yes': [None, 0.7], 'no': [0.6, 0.2]}
    """
    layers = (lens or {}).get("layers") if isinstance(lens, dict) else None
    if not layers:
        return {}
    last = layers[-1]
    series: dict[str, list[float | None]] = {str(t): [] for t in list(last.get("tokens") or [])[:n_tokens]}
    for layer in layers:
        probs = dict(zip((str(t) for t in layer.get("tokens") or []), layer.get("probs") or []))
        for token, values in series.items():
            values.append(float(probs[token]) if token in probs else None)
    return series


def logit_lens_svg(lens: Any, width: int = 360, height: int = 140) -> str:
    """A line per top answer token of its probability across layers, as inline SVG (gaps where the
    token is outside a layer's top-k)."""
    series = lens_series(lens)
    if not series:
        return empty_note("no logit-lens record (expected {'layers': [{'layer', 'tokens', 'probs'}, ...]})")
    colours = ["#d64545", "#2e6bd6", "#2e9d5b", "#e0a21b", "#8a4fd6"]
    n = max(len(v) for v in series.values())
    pad = 24
    lines, legend = [], []
    for k, (token, values) in enumerate(series.items()):
        colour = colours[k % len(colours)]
        segments: list[list[str]] = [[]]
        for i, v in enumerate(values):
            if v is None:
                segments.append([])
                continue
            x = pad + i * (width - 2 * pad) / max(1, n - 1)
            y = height - pad - max(0.0, min(1.0, v)) * (height - 2 * pad)
            segments[-1].append(f"{x:.1f},{y:.1f}")
        for seg in segments:
            if len(seg) == 1:
                x, y = seg[0].split(",")
                lines.append(f'<circle cx="{x}" cy="{y}" r="2" fill="{colour}"/>')
            elif seg:
                lines.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(seg)}"/>')
        legend.append(f'<text x="{width - pad}" y="{14 + 12 * k}" text-anchor="end" font-size="11" '
                      f'fill="{colour}">{esc(token)}</text>')
    axis = (f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#999"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#999"/>'
            f'<text x="{width / 2}" y="{height - 6}" font-size="11" text-anchor="middle">layer (1–{n})</text>'
            f'<text x="4" y="{pad}" font-size="10">1</text><text x="4" y="{height - pad}" font-size="10">0</text>')
    return (f'<svg class="hs-logit-lens" width="{width}" height="{height}" role="img" '
            f'aria-label="logit lens">{axis}{"".join(lines)}{"".join(legend)}</svg>')


def reefknot_html(values: dict[str, Any] | None, evidence: dict[str, Any] | None,
                  signals: dict[str, Any] | None = None) -> str:
    """The parsed answer against the label, its entropy, and the logit-lens chart when recorded."""
    if not values and not evidence:
        return empty_note("not a Reefknot item")
    v, ev = values or {}, evidence or {}
    verdict = "supported" if v.get("correct") else ("hallucinated" if v.get("hallucinated") else "uncertain")
    lens = (signals or {}).get("logit_lens")
    return (f'<div class="hs-reefknot"><p>task <b>{esc(v.get("task"))}</b> · answer <b>{esc(ev.get("parsed_answer"))}</b>'
            f' · label <b>{esc(ev.get("label"))}</b> · {badge(verdict, "correct" if v.get("correct") else "wrong")}'
            f' · entropy {number_html(v.get("entropy"))} · method {esc(ev.get("method"))}</p>'
            f'{logit_lens_svg(lens) if lens is not None else ""}</div>')
