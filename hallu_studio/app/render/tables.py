"""Plain records as an escaped HTML table (leaderboards, study results)."""

from __future__ import annotations

from typing import Any, Sequence

from .palette import empty_note, esc, fmt_number


def records_table_html(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
                       empty: str = "nothing to show", css_class: str = "hs-table") -> str:
    """An HTML table of dict rows; numbers are shortened, everything is escaped.

    >>> records_table_html([{"model": "<b>", "f": 0.12345}])
    '<table class="hs-table"><thead><tr><th>model</th><th>f</th></tr></thead><tbody><tr><td>&lt;b&gt;</td><td>0.123</td></tr></tbody></table>'
    """
    if not rows:
        return empty_note(empty)
    cols = list(columns or dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{fmt_number(r.get(c))}</td>" for c in cols) + "</tr>" for r in rows)
    return f'<table class="{esc(css_class)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
