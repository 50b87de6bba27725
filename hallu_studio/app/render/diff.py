"""The edit diff of a response and its minimal revision (VISCON Figure 9), sentence by sentence.

The edit distance is counted over words (``metrics.edit_distance``: punctuation is not a word), but a reader
needs the sentences as written. Each word of the alignment is found again in the original and revised
texts (``word_spans``), so a changed sentence is shown beside its revision with its own punctuation,
removed words struck, replacements and insertions marked, and each edit numbered as the Annotate
view's "edit of the revision" list numbers it.
"""

from __future__ import annotations

import difflib
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


def _edit_numbers(steps: list[tuple[str, list[str], list[str]]]) -> tuple[dict[int, int], dict[int, int]]:
    """The metric's edit number (Annotate's review list's) of each original and each revised word an edit touches."""
    o_edit: dict[int, int] = {}
    r_edit: dict[int, int] = {}
    oi = ri = number = 0
    for op, old, new in steps:
        if op != "equal":
            o_edit.update((oi + k, number) for k in range(len(old)))
            r_edit.update((ri + k, number) for k in range(len(new)))
            number += 1
        oi, ri = oi + len(old), ri + len(new)
    return o_edit, r_edit


def _pair_sentences(o_words: list[list[str]], r_words: list[list[str]]) -> list[tuple[int | None, int | None]]:
    """Original and revised sentences aligned in order (difflib over the sentences' lower-cased words; a replaced
    block paired sentence by sentence where they share most of their words); None: removed / added."""
    def key(words: list[str]) -> tuple[str, ...]:
        return tuple(w.lower() for w in words)

    pairs: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, [key(w) for w in o_words], [key(w) for w in r_words], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pairs += list(zip(range(i1, i2), range(j1, j2)))
            continue
        j = j1
        for i in range(i1, i2):
            ratios = [(difflib.SequenceMatcher(None, key(o_words[i]), key(r_words[k])).ratio(), k)
                      for k in range(j, j2)]
            best = max(ratios, default=(0.0, -1))
            if best[0] >= 0.5:
                pairs += [(None, k) for k in range(j, best[1])] + [(i, best[1])]
                j = best[1] + 1
            else:
                pairs.append((i, None))
        pairs += [(None, k) for k in range(j, j2)]
    return pairs


def _marked(text: str, spans: list[tuple[int, int]], marks: dict[int, str], numbers: dict[int, int],
            start: int, end: int) -> str:
    """``text[start:end]`` escaped, its marked words (word index -> style) wrapped, the words of one kind that follow
    each other as one mark, each followed by the metric's edit numbers on its words."""
    runs: list[list[Any]] = []  # [style, first char, last char, edit numbers]
    for i, (a, b) in enumerate(spans):
        if b <= start or a >= end or i not in marks:
            continue
        if runs and runs[-1][0] == marks[i] and marks.get(i - 1) == marks[i]:
            runs[-1][2] = b
        else:
            runs.append([marks[i], a, b, []])
        if i in numbers and numbers[i] not in runs[-1][3]:
            runs[-1][3].append(numbers[i])
    out, at = [], start
    for kind, a, b, edits in runs:
        said = ", ".join(map(str, edits))
        out.append(esc(text[at:a]))
        out.append(_span(kind, text[a:b], f"edit {said}: {_TITLES[kind]}" if said else _TITLES[kind]))
        out.append(f'<sup class="hs-edit-no">{esc(said)}</sup>' if said else "")
        at = b
    out.append(esc(text[at:end]))
    return "".join(out)


def _word_marks(old: list[str], new: list[str]) -> tuple[dict[int, str], dict[int, str]]:
    """Which words of two paired sentences differ (difflib over lower-cased words): removed, replaced, inserted."""
    o_marks: dict[int, str] = {}
    r_marks: dict[int, str] = {}
    matcher = difflib.SequenceMatcher(None, [w.lower() for w in old], [w.lower() for w in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("delete", "replace"):
            o_marks.update((i, "delete" if op == "delete" else "substitute_old") for i in range(i1, i2))
        if op in ("insert", "replace"):
            r_marks.update((j, "insert" if op == "insert" else "substitute_new") for j in range(j1, j2))
    return o_marks, r_marks


def _sentence_rows(original: str, revised: str,
                   steps: list[tuple[str, list[str], list[str]]]) -> list[tuple[str, str, bool]]:
    """Per sentence pair (original, revision), aligned sentence to sentence: both with what differs marked and the
    metric's edit numbers on it, and whether anything differs."""
    o_spans, r_spans = word_spans(original), word_spans(revised)
    if [w for _, old, _ in steps for w in old] != [original[a:b] for a, b in o_spans] or \
            [w for _, _, new in steps for w in new] != [revised[a:b] for a, b in r_spans]:
        raise LookupError("the alignment's words are not the texts' words")
    o_edit, r_edit = _edit_numbers(steps)

    def split(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, list[int]]]:
        sentences = sentence_spans(text) or [(0, len(text))]
        return [(s, e, [i for i, (a, _) in enumerate(spans) if s <= a < e]) for s, e in sentences]

    o_sent, r_sent = split(original, o_spans), split(revised, r_spans)
    words = lambda text, spans, ids: [text[spans[i][0]:spans[i][1]] for i in ids]  # noqa: E731
    rows = []
    for i, j in _pair_sentences([words(original, o_spans, ids) for _, _, ids in o_sent],
                                [words(revised, r_spans, ids) for _, _, ids in r_sent]):
        o_ids = o_sent[i][2] if i is not None else []
        r_ids = r_sent[j][2] if j is not None else []
        if i is not None and j is not None:
            om, rm = _word_marks(words(original, o_spans, o_ids), words(revised, r_spans, r_ids))
            o_marks, r_marks = {o_ids[k]: v for k, v in om.items()}, {r_ids[k]: v for k, v in rm.items()}
        else:
            o_marks, r_marks = dict.fromkeys(o_ids, "delete"), dict.fromkeys(r_ids, "insert")
        left = _marked(original, o_spans, o_marks, o_edit, *o_sent[i][:2]).strip() if i is not None else \
            '<span class="hs-none">(added)</span>'
        right = _marked(revised, r_spans, r_marks, r_edit, *r_sent[j][:2]).strip() if j is not None else \
            '<span class="hs-none">(removed)</span>'
        rows.append((left, right, bool(o_marks or r_marks)))
    return rows


def edit_diff_html(evidence: dict[str, Any] | None, values: dict[str, Any] | None = None) -> str:
    """Each changed sentence beside its revision, punctuation kept: removed words struck red, replaced words
    struck amber beside their replacement in yellow, inserted words green; the unchanged sentences folded away.

    >>> html = edit_diff_html({"original": "A red car. It is parked.", "revised": "A blue car. It is parked.",
    ...                        "alignment": [["equal", ["A"], ["A"]], ["substitute", ["red"], ["blue"]],
    ...                                      ["equal", ["car", "It", "is", "parked"], ["car", "It", "is", "parked"]]]})
    >>> "car.</td>" in html and ">red</span><sup" in html and ">blue</span>" in html and "1 unchanged sentence" in html
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
    return (f'<div class="hs-diff">{table}{unchanged}<p class="hs-diff-legend">{_legend()} · the small numbers are '
            f'the edits of Annotate\'s review list (the word alignment the distance counts)</p>{_stats(values)}</div>')


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
