"""The drawings a metric's spec asks for by kind (``MetricSpec.panel``), beside its evidence rows.

``PANELS`` maps a kind to a function ``(values, evidence, context) -> HTML``; a metric names a kind on its spec and
Inspect draws it, with no change here unless the kind is new. A kind this version does not draw gets its rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .diff import edit_diff_html
from .heatmap import transport_heatmaps_html
from .verdicts import logit_lens_svg, triplet_verdicts_html


@dataclass(frozen=True)
class PanelContext:
    """What a drawing may need besides its score: the response's recorded signals, people's corrections of its
    claims, and the metric's other configurations' evidence (``(label, evidence)``, the one in force first)."""

    signals: Mapping[str, Any] = field(default_factory=dict)
    corrections: Mapping[int, str] = field(default_factory=dict)
    configurations: Sequence[tuple[str, Mapping[str, Any]]] = ()


def _claims(values: Mapping[str, Any], evidence: Mapping[str, Any], ctx: PanelContext) -> str:
    # The rows list the claims of the configuration in force; this table adds what they do not: other
    # configurations' verdicts beside them, and people's corrections.
    if len(ctx.configurations) < 2 and not ctx.corrections:
        return ""
    return triplet_verdicts_html(list(ctx.configurations) or [("", evidence)], dict(ctx.corrections))  # type: ignore


def _lens(values: Mapping[str, Any], evidence: Mapping[str, Any], ctx: PanelContext) -> str:
    lens = (ctx.signals or {}).get("logit_lens")
    return logit_lens_svg(lens) if lens is not None else ""


PANELS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], PanelContext], str]] = {
    "transport_plan": lambda values, evidence, ctx: transport_heatmaps_html(dict(evidence), dict(values)),
    "edit_diff": lambda values, evidence, ctx: edit_diff_html(dict(evidence), dict(values)),
    "claims": _claims,
    "logit_lens": _lens,
}


def draw_panel(kind: str | None, values: Mapping[str, Any], evidence: Mapping[str, Any],
               ctx: PanelContext | None = None) -> str:
    """The drawing of ``kind`` ("" for none, or a kind no drawing is registered for).

    >>> "hs-diff" in draw_panel("edit_diff", {}, {"original": "A cat.", "revised": "A dog.",
    ...                         "alignment": [["equal", ["A"], ["A"]], ["substitute", ["cat"], ["dog"]]]})
    True
    >>> draw_panel("no such drawing", {}, {}), draw_panel(None, {}, {})
    ('', '')
    """
    draw = PANELS.get(kind or "")
    return draw(values, evidence, ctx or PanelContext()) if draw is not None else ""
