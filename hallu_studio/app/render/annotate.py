"""The Annotate view's words: the annotator's rating of the item on screen, their progress, and what an undo took
back. Plain data in, escaped HTML or inert Markdown out.

>>> rating_line(None)
'<p class="hs-your-rating hs-unrated">you have not rated this response yet</p>'
>>> undo_line("your rating 4", "the caption on image 12", elsewhere=True)
'undid **your rating 4** of the caption on image 12 — **an earlier item**, not the one on screen'
"""

from __future__ import annotations

from typing import Any, Mapping

from ...annotation import RATING_GUIDELINE
from .palette import esc, md


def rating_line(rating: int | None) -> str:
    """The annotator's own rating of the item on screen, with the guideline's words for it."""
    if rating is None:
        return '<p class="hs-your-rating hs-unrated">you have not rated this response yet</p>'
    return (f'<p class="hs-your-rating" data-rating="{int(rating)}">your rating: <b>{int(rating)}</b> — '
            f'{esc(RATING_GUIDELINE[int(rating)])}</p>')


def progress_md(annotator: str, message: str, prog: Mapping[str, Any], study: str | None = None) -> str:
    """The message of the last action (already Markdown-safe), then how far the annotator (and the study) is."""
    if study:
        return (f"{message}\n\n**{md(annotator)}** in study **{md(study)}** ({md(prog['mode'])}): you rated "
                f"{int(prog['rated'])}; the study has {int(prog['done'])} of {int(prog['needed'])} ratings "
                f"({int(prog['complete'])} of {int(prog['items'])} responses complete)")
    return f"{message}\n\n**{md(annotator)}**: {int(prog['rated'])} rated of {int(prog['total'])} responses"


def undo_line(what: str, item: str, elsewhere: bool) -> str:
    """What an undo took back and of which item, saying so when that item is not the one on screen (Markdown)."""
    where = " — **an earlier item**, not the one on screen" if elsewhere else ""
    return f"undid **{md(what)}** of {md(item)}{where}"


def rated_line(value: int, item: str, moved_on: bool) -> str:
    """What a rating did (Markdown): the value, the item, and whether the view moved on to the next."""
    return f"rated **{int(value)}**: {md(item)}" + (" · next item" if moved_on else "")
