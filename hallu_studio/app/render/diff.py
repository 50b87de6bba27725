"""The edit diff of a response and its minimal revision (VISCON Figure 9), sentence by sentence.

The edit distance is counted over words (``metrics.edit_distance``: punctuation is not a word), but a reader
needs the sentences as written. Each word of the alignment is found again in the original and revised
texts (``word_spans``), so a changed sentence is shown beside its revision with its own punctuation,
removed words struck, replacements and insertions marked, and each edit numbered as the Annotate
view's "edit of the revision" list numbers it.
"""

from __future__ import annotations

from typing import Any

from ...extraction.spans import sentence_spans
from ...metrics.edit_distance import word_spans
from .palette import empty_note, esc, number_html

# Distinct colours for the three kinds of edit; equal words stay plain.
EDIT_STYLES = {
    "delete": "background:#fbdada;color:#a02020;text-decoration:line-through",
    "substitute_old": "background:#fde7c8;color:#8a5a00;text-decoration:line-through",
    "substitute_new": "background:#fff3b0;color:#5c4a00;font-weight:600",
    "insert": "background:#d9f2e3;color:#1d6b3c;font-weight:600",
}
_TITLES = {"delete": "removed", "substitute_old": "replaced", "substitute_new": "replacement", "insert": "inserted"}


def _words(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(w) for w in value] if isinstance(value, (list, tuple)) else str(value).split()


def _span(kind: str, text: str, title: str) -> str:
    return f'<span class="hs-edit hs-{kind}" title="{esc(title)}" style="{EDIT_STYLES[kind]}">{esc(text)}</span>'


def _steps(alignment: list[Any]) -> list[tuple[str, list[str], list[str]]]:
    out = []
    for n, step in enumerate(alignment):
        if not isinstance(step, (list, tuple)) or len(step) != 3:
            raise ValueError(f"edit evidence: alignment step {n} is not [op, original_words, revised_words]: {step!r}")
        op = str(step[0])
        if op not in ("equal", "delete", "insert", "substitute"):
            raise ValueError(f"edit evidence: alignment step {n} has unknown op {op!r}")
        out.append((op, _words(step[1]), _words(step[2])))
    return out


def _legend() -> str:
    return " ".join(_span(k, label, label) for k, label in _TITLES.items())


def _stats(values: dict[str, Any] | None) -> str:
    if not values:
        return ""
    return (f'<p class="hs-diff-stats">edit distance {number_html(values.get("distance"))} over '
            f'{number_html(values.get("words"))} words ({number_html(values.get("per_word"))} per word); '
            'punctuation is shown but not counted</p>')


def _marked(text: str, spans: list[tuple[int, int]], marks: dict[int, tuple[str, int]], start: int, end: int) -> str:
    """``text[start:end]`` escaped, its marked words (word index -> (style, edit number)) wrapped; the words of one
    edit that follow each other are one mark, with what stands between them."""
    runs: list[list[Any]] = []  # [style, number, first char, last char]
    for i, (a, b) in enumerate(spans):
        if b <= start or a >= end or i not in marks:
            continue
        kind, number = marks[i]
        if runs and runs[-1][:2] == [kind, number] and marks.get(i - 1) == (kind, number):
            runs[-1][3] = b
        else:
            runs.append([kind, number, a, b])
    out, at = [], start
    for kind, number, a, b in runs:
        out.append(esc(text[at:a]))
        out.append(_span(kind, text[a:b], f"edit {number}: {_TITLES[kind]}"))
        at = b
    out.append(esc(text[at:end]))
    return "".join(out)


def _sentence_rows(original: str, revised: str,
                   steps: list[tuple[str, list[str], list[str]]]) -> list[tuple[str, str, bool]]:
    """Per sentence of the original: (original with its edits marked, its revision, changed?)."""
    o_spans, r_spans = word_spans(original), word_spans(revised)
    if [w for _, old, _ in steps for w in old] != [original[a:b] for a, b in o_spans] or \
            [w for _, _, new in steps for w in new] != [revised[a:b] for a, b in r_spans]:
        raise LookupError("the alignment's words are not the texts' words")
    o_marks: dict[int, tuple[str, int]] = {}
    r_marks: dict[int, tuple[str, int]] = {}
    r_anchor: list[int] = []  # revised word -> the original word it stands beside
    oi = ri = number = 0
    for op, old, new in steps:
        if op != "equal":
            for k in range(len(old)):
                o_marks[oi + k] = ("delete" if op == "delete" else "substitute_old", number)
            for k in range(len(new)):
                r_marks[ri + k] = ("insert" if op == "insert" else "substitute_new", number)
        for k in range(len(new)):
            # an equal or replaced word stands beside its original; an insertion beside the word before it
            r_anchor.append(oi + min(k, len(old) - 1) if old else max(oi - 1, 0))
        oi, ri = oi + len(old), ri + len(new)
        number += op != "equal"
    sentences = sentence_spans(original) or [(0, len(original))]
    sentence_of = [next((k for k, (s, e) in enumerate(sentences) if s <= a < e), len(sentences) - 1)
                   for a, _ in o_spans]
    # Each sentence of the revision goes beside the original sentence most of its words stand beside.
    beside: dict[int, list[tuple[int, int]]] = {}
    for s, e in sentence_spans(revised) or [(0, len(revised))]:
        inside = [r for r, (a, _) in enumerate(r_spans) if s <= a < e]
        if not inside or not sentence_of:
            continue
        votes = [sentence_of[r_anchor[r]] for r in inside]
        beside.setdefault(max(set(votes), key=lambda k: (votes.count(k), -k)), []).append((s, e))
    rows = []
    for k, (s, e) in enumerate(sentences):
        left = _marked(original, o_spans, o_marks, s, e).strip()
        parts = beside.get(k, [])
        right = " ".join(_marked(revised, r_spans, r_marks, a, b).strip() for a, b in parts) or \
            '<span class="hs-none">(removed)</span>'
        changed = any(sentence_of[i] == k for i in o_marks) or any(
            a <= r_spans[r][0] < b for r in r_marks for a, b in parts)
        if left or parts:
            rows.append((left, right, changed))
    return rows


def edit_diff_html(evidence: dict[str, Any] | None, values: dict[str, Any] | None = None) -> str:
    """Each changed sentence beside its revision, punctuation kept: removed words struck red, replaced words
    struck amber beside their replacement in yellow, inserted words green; the unchanged sentences folded away.

    >>> html = edit_diff_html({"original": "A red car. It is parked.", "revised": "A blue car. It is parked.",
    ...                        "alignment": [["equal", ["A"], ["A"]], ["substitute", ["red"], ["blue"]],
    ...                                      ["equal", ["car", "It", "is", "parked"], ["car", "It", "is", "parked"]]]})
    >>> "car.</td>" in html and ">red</span>" in html and ">blue</span>" in html and "1 unchanged sentence" in html
    True
    """
    alignment = (evidence or {}).get("alignment") or []
    if not alignment:
        return empty_note("no revision recorded for this response")
    steps = _steps(alignment)
    original, revised = (evidence or {}).get("original"), (evidence or {}).get("revised")
    try:
        if not isinstance(original, str) or not isinstance(revised, str):
            raise LookupError("the texts are not in the evidence")
        rows = _sentence_rows(original, revised, steps)
    except LookupError:
        return _word_diff_html(steps, evidence, values)
    changed = [(a, b) for a, b, c in rows if c]
    same = [a for a, _, c in rows if not c]
    table = ('<table class="hs-diff-table"><thead><tr><th>response</th><th>revision</th></tr></thead><tbody>'
             + "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in changed) + "</tbody></table>"
             if changed else '<p class="hs-none">the revision changes nothing</p>')
    unchanged = (f'<details class="hs-diff-same"><summary>{len(same)} unchanged sentence{"s" if len(same) != 1 else ""}'
                 f'</summary><p>{" ".join(same)}</p></details>' if same else "")
    return (f'<div class="hs-diff">{table}{unchanged}<p class="hs-diff-legend">{_legend()} · edits are numbered '
            f'as in Annotate\'s list (hover a word)</p>{_stats(values)}</div>')


def _word_diff_html(steps: list[tuple[str, list[str], list[str]]], evidence: dict[str, Any] | None,
                    values: dict[str, Any] | None) -> str:
    """Word by word, for evidence whose texts are missing or do not match its alignment (punctuation unknown)."""
    out = []
    number = 0
    for op, old, new in steps:
        if op == "equal":
            out.append(esc(" ".join(old)))
            continue
        title = f"edit {number}"
        if op == "delete":
            out.append(_span("delete", " ".join(old), f"{title}: removed"))
        elif op == "insert":
            out.append(_span("insert", " ".join(new), f"{title}: inserted"))
        else:
            out.append(_span("substitute_old", " ".join(old), f"{title}: replaced") + " "
                       + _span("substitute_new", " ".join(new), f"{title}: replacement"))
        number += 1
    revised = (evidence or {}).get("revised")
    revised_html = f'<p class="hs-diff-revised"><b>revision:</b> {esc(revised)}</p>' if revised else ""
    return (f'<div class="hs-diff"><p class="hs-diff-line">{" ".join(x for x in out if x)}</p>{revised_html}'
            f'<p class="hs-diff-legend">{_legend()}</p>{_stats(values)}</div>')
