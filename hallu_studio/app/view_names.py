"""What a saved view may be called: it is shown to every colleague and travels in ``?view=`` links.

Checked when a view is saved and when a name arrives in a link, so that neither a stored name nor a
crafted link carries markup; the views escape it as well (``render.palette.md``).
"""

from __future__ import annotations

import re

from ..model import ValidationError

MAX_VIEW_NAME = 64
VIEW_NAME_RULE = f"1–{MAX_VIEW_NAME} letters, digits, spaces and - _ . , ( )"
_ALLOWED = re.compile(r"[\w .,()\-]")


def check_view_name(name: str | None) -> str:
    """The name, stripped, or a ``ValidationError`` saying what is wrong with it.

    >>> check_view_name("  worst sketch (EMD)  ")
    'worst sketch (EMD)'
    >>> check_view_name("![x](http://evil.example/a.png)")
    Traceback (most recent call last):
    ...
    hallu_studio.model.base.ValidationError: a saved view's name is 1–64 letters, digits, spaces and - _ . , ( ); '!' is not allowed
    """
    text = (name or "").strip()
    if not text:
        raise ValidationError("give the view a name")
    if len(text) > MAX_VIEW_NAME:
        raise ValidationError(f"a saved view's name is {VIEW_NAME_RULE}; this one has {len(text)} characters")
    bad = next((c for c in text if not _ALLOWED.fullmatch(c)), None)
    if bad is not None:
        raise ValidationError(f"a saved view's name is {VIEW_NAME_RULE}; {bad!r} is not allowed")
    return text
