"""EMD transport plans as HTML heatmaps, one per concept type, with per-concept costs.

Evidence shape (``emd``): ``{"types": {type: {"reference": [...], "response": [...],
"cost": [[...]], "plan": [[...]], "per_concept_cost": [...]}}}``. The metric stores
matrices with reference rows and response columns (``metrics.emd.EMDResult``); the heatmap
shows one row per response concept, beside its per-concept cost.
"""

from __future__ import annotations

from typing import Any

from .palette import empty_note, esc, number_html

_MAX_SIDE = 40  # larger matrices are cut, with a note: a 200 x 200 table helps nobody


def _orient(matrix: list[list[float]], rows: list[str], cols: list[str], name: str) -> list[list[float]]:
    """``matrix`` (reference rows = ``cols`` x response columns = ``rows``) as response rows x reference columns."""
    shape = (len(matrix), len(matrix[0]) if matrix else 0)
    if shape == (len(cols), len(rows)):
        return [list(col) for col in zip(*matrix)] if matrix else []
    raise ValueError(f"EMD evidence for {name}: matrix is {shape[0]}x{shape[1]} but there are "
                     f"{len(rows)} response and {len(cols)} reference concepts")


def _one_type(name: str, data: dict[str, Any]) -> str:
    rows = [str(x) for x in data.get("response") or []]
    cols = [str(x) for x in data.get("reference") or []]
    note_text = data.get("undefined_reason") or data.get("note")
    if not rows or not cols:
        return f"<h4>{esc(name)}</h4>" + empty_note(note_text or "no concepts on one side: the distance is undefined")
    plan = _orient(data.get("plan") or [], rows, cols, name) if data.get("plan") else None
    cost = _orient(data.get("cost") or [], rows, cols, name) if data.get("cost") else None
    per_concept = list(data.get("per_concept_cost") or [])
    grounding = [str(g) for g in data.get("response_grounding") or []]
    peak = max((v for row in plan or [] for v in row), default=0.0) or 1.0
    cut_rows, cut_cols = rows[:_MAX_SIDE], cols[:_MAX_SIDE]
    head = "".join(f'<th class="hs-col" title="{esc(c)}"><div>{esc(c)}</div></th>' for c in cut_cols)
    body = []
    for i, r in enumerate(cut_rows):
        cells = []
        for j, _ in enumerate(cut_cols):
            mass = plan[i][j] if plan else 0.0
            c = cost[i][j] if cost else None
            alpha = max(0.0, min(1.0, mass / peak))
            cells.append(f'<td title="mass {mass:.3g}, cost {number_html(c)}" '
                         f'style="background:rgba(40,90,200,{alpha:.2f});color:{"#fff" if alpha > .55 else "#222"}">'
                         f'{number_html(c, 2) if c is not None else ""}</td>')
        own = per_concept[i] if i < len(per_concept) else None
        badge = _grounding_badge(grounding[i]) if i < len(grounding) else ""
        body.append(f'<tr><th class="hs-row">{esc(r)}{badge}</th>{"".join(cells)}'
                    f'<td class="hs-cost">{number_html(own, 3)}</td></tr>')
    note = ""
    if len(rows) > _MAX_SIDE or len(cols) > _MAX_SIDE:
        note = empty_note(f"showing {len(cut_rows)} of {len(rows)} response and {len(cut_cols)} of {len(cols)} "
                          "reference concepts")
    # The table scrolls inside its own box (both ways), so a wide plan never spills out of the panel.
    return (f'<h4>{esc(name)}</h4>{_legend(peak)}'
            f'<p class="hs-heatmap-axes">rows: concepts of the response · columns: concepts of the reference · '
            f'cell text: ground cost{_COST_SCALE if grounding else ""}</p>'
            f'<div class="hs-scroll" style="overflow:auto;max-width:100%;max-height:420px">'
            f'<table class="hs-heatmap"><thead><tr><th class="hs-corner">response ↓ · reference →</th>{head}'
            f'<th>concept cost</th></tr></thead><tbody>{"".join(body)}</tbody></table></div>{note}')


# The grounded ground cost's scale (``metrics.emd_ground_cost``), said where its numbers are shown.
_COST_SCALE = " (0 the reference states it, 1 unrelated, 2 the reference contradicts it; between: the embedding's)"
_GROUNDING = {"matched": ("matched", "#1b7f3b", "the scene-graph grounding matched it: cost 0 to what it matches"),
              "contradicted": ("contradicted", "#b3261e", "the reference contradicts it: cost 2 to every concept"),
              "embedding": ("embedding", "#666", "the grounding cannot tell: the embedding's 1 - cosine")}


def _grounding_badge(status: str) -> str:
    text, colour, why = _GROUNDING.get(status, (status, "#666", ""))
    return (f' <span class="hs-grounding" title="{esc(why)}" style="font-size:0.75em;font-weight:normal;'
            f'color:{colour};border:1px solid {colour};border-radius:3px;padding:0 3px">{esc(text)}</span>')


def _legend(peak: float) -> str:
    """The colour scale: white (no mass moved) to full blue (the plan's largest mass)."""
    return ('<div class="hs-heatmap-legend" style="display:flex;align-items:center;gap:6px;font-size:0.8em;'
            'margin:2px 0 4px">mass moved <span>0</span><span style="display:inline-block;width:140px;height:10px;'
            'border:1px solid #ccc;background:linear-gradient(to right,rgba(40,90,200,0),rgba(40,90,200,1))">'
            f'</span><span>{number_html(peak, 3)}</span></div>')


def transport_heatmaps_html(evidence: dict[str, Any] | None, values: dict[str, Any] | None = None) -> str:
    """One heatmap per concept type: cell colour is transported mass, cell text the ground cost.

    >>> page = transport_heatmaps_html({"types": {"object": {"reference": ["cat"], "response": ["dog"],
    ...                                 "cost": [[0.4]], "plan": [[1.0]], "per_concept_cost": [0.4]}}})
    >>> "dog" in page and "0.4" in page
    True
    """
    types = (evidence or {}).get("types") or {}
    if not types:
        return empty_note("no EMD evidence for this response")
    parts = []
    for name, data in types.items():
        total = (values or {}).get(name)
        title = f"{name} — EMD {number_html(total, 3)}" if values and name in values else str(name)
        parts.append(_one_type(title, data or {}))
    return '<div class="hs-heatmaps">' + "".join(parts) + "</div>"
