"""A name a person typed, checked against the names that exist: one error message that says which
name is unknown, suggests the closest one and lists them all.

>>> unknown_name("metric", "emdd", ["emd", "edit", "trihe"], listing="known metrics")
"unknown metric 'emdd' (did you mean 'emd'?); known metrics: emd, edit, trihe"
>>> unknown_name("benchmark", "x", [], listing="the store holds")
"unknown benchmark 'x'; the store holds: none"
"""

from __future__ import annotations

import difflib
from typing import Iterable


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name`` (a typo's likely intent), or None when none is close."""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_name(kind: str, name: str, known: Iterable[str], *, listing: str) -> str:
    """``unknown <kind> '<name>' (did you mean '<closest>'?); <listing>: <known, comma-separated>``."""
    known = list(known)
    guess = closest_name(name, known)
    hint = f" (did you mean {guess!r}?)" if guess else ""
    return f"unknown {kind} {name!r}{hint}; {listing}: {', '.join(known) or 'none'}"
