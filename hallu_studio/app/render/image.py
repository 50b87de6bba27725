"""The sample's image as an inline ``<img>`` (a data URI: no file, no request elsewhere)."""

from __future__ import annotations

import base64

from .palette import empty_note, esc

_SAFE_MIMES = {"image/jpeg", "image/png", "image/gif", "image/webp"}


def image_html(data: bytes | None, mime: str | None, alt: str = "", missing_reason: str | None = None) -> str:
    """An ``<img>`` with the bytes inlined, or a note saying why there is no image.

    >>> image_html(None, None, missing_reason="not in the archive")
    '<div class="hs-empty" style="color:#777;font-style:italic">no image: not in the archive</div>'
    """
    if not data:
        return empty_note(f"no image: {missing_reason or 'the sample has none stored'}")
    # Only known raster types: an SVG data URI could carry script.
    if mime not in _SAFE_MIMES:
        return empty_note(f"image of type {mime!r} is not shown (only {sorted(_SAFE_MIMES)})")
    encoded = base64.b64encode(data).decode("ascii")
    return (f'<img class="hs-image" alt="{esc(alt)}" src="data:{mime};base64,{encoded}" '
            f'style="max-width:100%;max-height:420px;object-fit:contain"/>')
