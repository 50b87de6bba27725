"""The edit diff of a response and its minimal revision, word by word (VISCON Figure 9)."""

from __future__ import annotations

from typing import Any

from .palette import empty_note, esc, fmt_number

# Distinct colours for the three kinds of edit; equal words stay plain.
EDIT_STYLES = {
    "delete": "background:#fbdada;color:#a02020;text-decoration:line-through",
    "substitute_old": "background:#fde7c8;color:#8a5a00;text-decoration:line-through",
    "substitute_new": "background:#fff3b0;color:#5c4a00;font-weight:600",
    "insert": "background:#d9f2e3;color:#1d6b3c;font-weight:600",
}


def _words(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(w) for w in value] if isinstance(value, (list, tuple)) else str(value).split()


def _span(kind: str, words: list[str], title: str) -> str:
    return f'<span class="hs-edit hs-{kind}" title="{esc(title)}" style="{EDIT_STYLES[kind]}">{esc(" ".join(words))}</span>'


def edit_diff_html(evidence: dict[str, Any] | None, values: dict[str, Any] | None = None) -> str:
    """Inline diff: removed words struck red, substituted words struck amber followed by their
    replacement in yellow, inserted words green.

    >>> edit_diff_html({"alignment": [["equal", ["a"], ["a"]], ["substitute", ["cat"], ["dog"]]]})[:40]
    '<div class="hs-diff"><p class="hs-diff-l'
    """
    alignment = (evidence or {}).get("alignment") or []
    if not alignment:
        return empty_note("no revision recorded for this response")
    out = []
    for n, step in enumerate(alignment):
        if not isinstance(step, (list, tuple)) or len(step) != 3:
            raise ValueError(f"edit evidence: alignment step {n} is not [op, original_words, revised_words]: {step!r}")
        op, old, new = step[0], _words(step[1]), _words(step[2])
        if op == "equal":
            out.append(esc(" ".join(old)))
        elif op == "delete":
            out.append(_span("delete", old, "removed"))
        elif op == "insert":
            out.append(_span("insert", new, "inserted"))
        elif op == "substitute":
            out.append(_span("substitute_old", old, "substituted") + " " + _span("substitute_new", new, "replacement"))
        else:
            raise ValueError(f"edit evidence: alignment step {n} has unknown op {op!r}")
    legend = " ".join(_span(k, [label], label) for k, label in (
        ("delete", "removed"), ("substitute_old", "substituted"), ("substitute_new", "replacement"),
        ("insert", "inserted")))
    stats = ""
    if values:
        stats = (f'<p class="hs-diff-stats">edit distance {fmt_number(values.get("distance"))} over '
                 f'{fmt_number(values.get("words"))} words ({fmt_number(values.get("per_word"))} per word)</p>')
    revised = (evidence or {}).get("revised")
    revised_html = f'<p class="hs-diff-revised"><b>revision:</b> {esc(revised)}</p>' if revised else ""
    return (f'<div class="hs-diff"><p class="hs-diff-line">{" ".join(x for x in out if x)}</p>{revised_html}'
            f'<p class="hs-diff-legend">{legend}</p>{stats}</div>')
