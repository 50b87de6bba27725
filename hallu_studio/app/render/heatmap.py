"""EMD transport plans as HTML heatmaps, one per concept type, with per-concept costs.

Evidence shape (``emd``): ``{"types": {type: {"reference": [...], "response": [...],
"cost": [[...]], "plan": [[...]], "per_concept_cost": [...]}}}``. The metric stores
matrices with reference rows and response columns (``metrics.emd.EMDResult``); the heatmap
shows one row per response concept, beside its per-concept cost.
"""

from __future__ import annotations

import hashlib
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
    head = "".join(f'<th class="hs-col" title="{esc(c)}"><div>{esc(_short(c))}</div></th>' for c in cut_cols)
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
        body.append(f'<tr><th class="hs-row" title="{esc(r)}">{esc(_short(r))}{badge}</th>{"".join(cells)}'
                    f'<td class="hs-cost">{number_html(own, 3)}</td></tr>')
    note = ""
    if len(rows) > _MAX_SIDE or len(cols) > _MAX_SIDE:
        note = empty_note(f"showing {len(cut_rows)} of {len(rows)} response and {len(cut_cols)} of {len(cols)} "
                          "reference concepts")
    # No box of its own: the plan grows with its concepts (a wide one scrolls sideways with the panel), and stays
    # readable because a cell is a coloured square with a short number.
    return (f'<h4>{esc(name)}</h4>{_legend(peak)}'
            f'<p class="hs-heatmap-axes">rows: concepts of the response · columns: concepts of the reference · '
            f'cell text: ground cost{_COST_SCALE if grounding else ""}</p>'
            f'<div class="hs-scroll" style="overflow-x:auto;max-width:100%">'
            f'<table class="hs-heatmap"><thead><tr><th class="hs-corner">response ↓ · reference →</th>{head}'
            f'<th>concept cost</th></tr></thead><tbody>{"".join(body)}</tbody></table></div>{note}')

def _short(label: str, most: int = 22) -> str:
    """A long concept (a relation with its ends) cut to ``most`` characters, so that a plan's cells keep the room; the
    whole label is on hover.

    >>> _short("space shuttle model - behind - helmet"), _short("dog")
    ('space shuttle model -…', 'dog')
    """
    return label if len(label) <= most else label[:most - 1].rstrip() + "…"


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
    """The colour scale, said in words: white (no mass moved) to full blue (the plan's largest mass)."""
    return ('<div class="hs-heatmap-legend" style="display:flex;align-items:center;gap:6px;font-size:0.8em;'
            'margin:2px 0 0">mass moved <span>0</span><span style="display:inline-block;width:110px;'
            'height:10px;border:1px solid #ccc;background:linear-gradient(to right,rgba(40,90,200,0),'
            f'rgba(40,90,200,1))"></span><span>{number_html(peak, 3)}</span></div>'
            '<p class="hs-heatmap-axes">mass moved: the share of the response\'s concept weight (1 in all) the '
            'cheapest '
            'plan carries onto each reference concept; the darker, the more</p>')


# What a transport plan is, in one line (the panel's heading says it).
PLAN_LINE = ("EMD moves each response concept onto the reference's concepts of its type at the least total cost; the "
             "distance is that cost. Pick a type:")


def transport_heatmaps_html(evidence: dict[str, Any] | None, values: dict[str, Any] | None = None) -> str:
    """One heatmap per concept type, one shown at a time (the type whose EMD is highest first; tabs pick another):
    cell colour is transported mass, cell text the ground cost.

    >>> page = transport_heatmaps_html({"types": {"object": {"reference": ["cat"], "response": ["dog"],
    ...                                 "cost": [[0.4]], "plan": [[1.0]], "per_concept_cost": [0.4]}}})
    >>> "dog" in page and "0.4" in page and 'type="radio"' in page
    True
    """
    types = (evidence or {}).get("types") or {}
    if not types:
        return empty_note("no EMD evidence for this response")
    names = list(types)
    worst = max(names, key=lambda n: (_value((values or {}).get(n)), -names.index(n)))
    # Radio groups are page-wide: a name of this evidence's own keeps two drawn plans apart.
    group = "hs-emd-" + hashlib.sha1(repr((sorted((values or {}).items()), evidence)).encode()).hexdigest()[:10]
    inputs, labels, panes = [], [], []
    for k, name in enumerate(names):
        total = (values or {}).get(name)
        title = f"{name} — EMD {number_html(total, 3)}" if values and name in values else str(name)
        tab_id = f"{group}-{k}"
        inputs.append(f'<input type="radio" name="{group}" id="{tab_id}"{" checked" if name == worst else ""}>')
        labels.append(f'<label for="{tab_id}" class="hs-emd-tab">{esc(title)}</label>')
        panes.append(f'<div class="hs-emd-pane" data-type="{esc(name)}">{_one_type(title, types[name] or {})}</div>')
    return ('<div class="hs-heatmaps hs-emd-tabs">' + "".join(inputs) + "".join(labels) + "".join(panes) + "</div>")


def _value(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else -1.0
