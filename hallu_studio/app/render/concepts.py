"""HalFscore's concept entries, in either shape: a plain string, or ``[kind, *parts]``
(``["object", "cat"]``, ``["attribute", "cat", "grey"]``, ``["relation", "cat", "on", "sofa"]``)."""

from __future__ import annotations

from typing import Any, Iterable

KINDS = ("object", "attribute", "relation")


def concept_text(item: Any) -> str:
    """A readable phrase for one entry.

    >>> concept_text(["attribute", "cat", "grey"]), concept_text(["relation", "cat", "on", "sofa"]), concept_text("dog")
    ('grey cat', 'cat on sofa', 'dog')
    """
    if isinstance(item, (list, tuple)) and item and item[0] in KINDS:
        kind, parts = item[0], [str(p) for p in item[1:]]
        if kind == "attribute" and len(parts) == 2:
            return f"{parts[1]} {parts[0]}"
        return " ".join(parts)
    if isinstance(item, (list, tuple)):
        return " ".join(str(p) for p in item)
    return str(item)


def object_names(items: Iterable[Any]) -> set[str]:
    """Lower-cased object names among the entries (strings count as object names).

    >>> sorted(object_names([["object", "Cat"], ["relation", "cat", "on", "sofa"], "dog"]))
    ['cat', 'dog']
    """
    out: set[str] = set()
    for item in items or []:
        if isinstance(item, (list, tuple)):
            if len(item) >= 2 and item[0] == "object":
                out.add(str(item[1]).lower())
        elif item is not None:
            out.add(str(item).lower())
    return out
