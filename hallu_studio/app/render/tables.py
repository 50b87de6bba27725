"""Plain records as an escaped HTML table (leaderboards, study results), numbers rounded for people."""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from ...presentation import UNDEFINED, number
from .palette import empty_note, esc

# What the hover says on a number that is not defined (``presentation.UNDEFINED``).
UNDEFINED_NOTE = "not defined here: too few items, or no variation to compare"


# A WordNet synset as the analyses name it ("dog.n.02084071"): shown as its head word.
_SYNSET = re.compile(r"\b([A-Za-z][\w'-]*)\.[nvasr]\.\d{2,8}\b")


def readable_text(text: str) -> str:
    """Text with WordNet synset ids shown as their words.

    >>> readable_text("hot_dog.n.07697537 + table.n.04379243")
    'hot dog + table'
    """
    return _SYNSET.sub(lambda m: m.group(1).replace("_", " "), text)


def _is_undefined(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def cell_text(value: Any) -> str:
    """Any value as plain text for a person: numbers rounded, mappings as ``key: value`` pairs, lists joined.

    >>> cell_text({"object": (3, 2), "relation": 0.5}), cell_text(None), cell_text(["a", 1.23456])
    ('object: 3 / 2 · relation: 0.5', '—', 'a, 1.23')
    """
    if value is None or isinstance(value, (bool, int, float)):
        return number(value)
    if isinstance(value, dict):
        return " · ".join(f"{readable_text(str(k))}: {cell_text(v)}" for k, v in value.items()) or UNDEFINED
    if isinstance(value, tuple):
        return " / ".join(cell_text(v) for v in value)
    if isinstance(value, (list, set, frozenset)):
        return ", ".join(cell_text(v) for v in value) or UNDEFINED
    return readable_text(str(value))


def cell_html(value: Any, undefined_note: str = UNDEFINED_NOTE) -> str:
    """One escaped cell; an undefined number says why on hover."""
    if _is_undefined(value):
        return f'<span class="hs-undefined" title="{esc(undefined_note)}">{UNDEFINED}</span>'
    return esc(cell_text(value))


def records_table_html(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
                       empty: str = "nothing to show", css_class: str = "hs-table",
                       undefined_note: str = UNDEFINED_NOTE) -> str:
    """An HTML table of dict rows; numbers are rounded, everything is escaped.

    >>> records_table_html([{"model": "<b>", "f": 0.12345}])
    '<table class="hs-table"><thead><tr><th>model</th><th>f</th></tr></thead><tbody><tr><td>&lt;b&gt;</td><td>0.123</td></tr></tbody></table>'
    """
    if not rows:
        return empty_note(empty)
    cols = list(columns or dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{cell_html(r.get(c), undefined_note)}</td>" for c in cols) + "</tr>"
                   for r in rows)
    return f'<table class="{esc(css_class)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
