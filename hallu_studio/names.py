"""A name a person typed, checked against the names that exist: one error message that says which
name is unknown, suggests the closest one and lists them all.

>>> unknown_name("metric", "emdd", ["emd", "edit", "trihe"], listing="known metrics")
"unknown metric 'emdd' (did you mean 'emd'?); known metrics: emd, edit, trihe"
>>> unknown_name("benchmark", "x", [], listing="the store holds")
"unknown benchmark 'x'; the store holds: none"
>>> misspelt_name("refrence_text", ["id", "reference_text"]), misspelt_name("expect", ["id", "reference_text"])
('reference_text', None)
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


def misspelt_name(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` is most likely a misspelling of: the nearest within two edits (insertions, deletions
    or substitutions), or within one edit of a known name of four letters or fewer (two edits make "url" of "id");
    else None. A known name is never a misspelling. Where both names have the same underscore-separated parts,
    each part must be a misspelling of its own, not another word: "source_id" is a column of its own, not
    "source_kind" (two edits, but "id" is no "kind"), while "refrence_text" and "reference_txt" are misspellings.

    >>> [misspelt_name(n, ["reference_text", "source_kind"]) for n in ("refrence_text", "reference_txt", "source_id")]
    ['reference_text', 'reference_text', None]
    """
    from rapidfuzz.distance import Levenshtein

    best: tuple[int, str] | None = None
    for candidate in known:
        if candidate == name:
            return None
        allowed = 1 if len(candidate) <= 4 else 2
        distance = Levenshtein.distance(name, candidate, score_cutoff=allowed)
        if distance <= allowed and _parts_misspelt(name, candidate) and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None


def _parts_misspelt(name: str, candidate: str) -> bool:
    """Each underscore-separated part of ``name`` is its ``candidate`` part or a misspelling of it (at most one edit
    in three letters, and one in any part); True where the parts do not line up (one word for two: "imagepath")."""
    from rapidfuzz.distance import Levenshtein

    ours, theirs = name.split("_"), candidate.split("_")
    if len(ours) != len(theirs):
        return True
    return all(Levenshtein.distance(a, b) <= max(1, len(b) // 3) for a, b in zip(ours, theirs))
